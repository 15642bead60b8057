#include "shell/theme.hpp"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QPixmap>
#include <QStyleFactory>

namespace gpulab::gui {

void applyTheme(QApplication& app) {
  app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QPalette p;
  const QColor window(0x2B, 0x2D, 0x30), base(0x1E, 0x1F, 0x22), text(0xDF, 0xE1, 0xE5);
  const QColor button(0x3A, 0x3D, 0x41), highlight(0x35, 0x74, 0xF0), disabled(0x74, 0x78, 0x7F);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x25, 0x27, 0x2A));
  p.setColor(QPalette::ToolTipBase, QColor(0x3C, 0x3F, 0x43));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, button);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::white);
  p.setColor(QPalette::Light, QColor(0x4A, 0x4D, 0x52));
  p.setColor(QPalette::Midlight, QColor(0x40, 0x43, 0x47));
  p.setColor(QPalette::Mid, QColor(0x33, 0x35, 0x38));
  p.setColor(QPalette::Dark, QColor(0x1A, 0x1B, 0x1D));
  p.setColor(QPalette::Shadow, QColor(0x10, 0x10, 0x12));
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x58, 0x9D, 0xF6));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x4A, 0x4D, 0x52));
  app.setPalette(p);
}

namespace {

// Draws one icon in a 24x24 box.
void drawIcon(QPainter& p, IconKind kind, const QColor& colour) {
  QPen pen(colour, 1.8, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
  p.setPen(pen);
  p.setBrush(Qt::NoBrush);
  auto magnifier = [&] {
    p.drawEllipse(QPointF(10, 10), 6.5, 6.5);
    p.setPen(QPen(colour, 2.6, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(QPointF(15, 15), QPointF(20.5, 20.5));
    p.setPen(pen);
  };
  switch (kind) {
    case IconKind::Open: {
      QPainterPath folder;
      folder.moveTo(3, 19);
      folder.lineTo(3, 5.5);
      folder.lineTo(9, 5.5);
      folder.lineTo(11, 7.5);
      folder.lineTo(19, 7.5);
      folder.lineTo(19, 10);
      p.drawPath(folder);
      QPainterPath flap;
      flap.moveTo(3, 19);
      flap.lineTo(6.5, 11);
      flap.lineTo(21.5, 11);
      flap.lineTo(18, 19);
      flap.closeSubpath();
      p.drawPath(flap);
      break;
    }
    case IconKind::Save: {
      p.drawLine(QPointF(12, 3.5), QPointF(12, 14.5));
      p.drawPolyline(QPolygonF({QPointF(7.5, 10.5), QPointF(12, 15), QPointF(16.5, 10.5)}));
      p.drawPolyline(QPolygonF({QPointF(4, 15), QPointF(4, 20), QPointF(20, 20), QPointF(20, 15)}));
      break;
    }
    case IconKind::ZoomIn:
      magnifier();
      p.drawLine(QPointF(7, 10), QPointF(13, 10));
      p.drawLine(QPointF(10, 7), QPointF(10, 13));
      break;
    case IconKind::ZoomOut:
      magnifier();
      p.drawLine(QPointF(7, 10), QPointF(13, 10));
      break;
    case IconKind::Fit: {
      const double a = 4, b = 20, l = 5;
      p.drawPolyline(QPolygonF({QPointF(a, a + l), QPointF(a, a), QPointF(a + l, a)}));
      p.drawPolyline(QPolygonF({QPointF(b - l, a), QPointF(b, a), QPointF(b, a + l)}));
      p.drawPolyline(QPolygonF({QPointF(b, b - l), QPointF(b, b), QPointF(b - l, b)}));
      p.drawPolyline(QPolygonF({QPointF(a + l, b), QPointF(a, b), QPointF(a, b - l)}));
      p.drawRect(QRectF(8.5, 8.5, 7, 7));
      break;
    }
    case IconKind::ActualSize: {
      QFont f = p.font();
      f.setBold(true);
      f.setPixelSize(11);
      p.setFont(f);
      p.drawRoundedRect(QRectF(2.5, 4.5, 19, 15), 2.5, 2.5);
      p.drawText(QRectF(2.5, 4.5, 19, 15), Qt::AlignCenter, QStringLiteral("1:1"));
      break;
    }
    case IconKind::Undo:
    case IconKind::Redo: {
      // A curved arrow: back to the left for Undo, mirrored for Redo.
      p.save();
      if (kind == IconKind::Redo) {
        p.translate(24, 0);
        p.scale(-1, 1);
      }
      QPainterPath arc;
      arc.moveTo(5, 10);
      arc.lineTo(14, 10);
      arc.cubicTo(18.5, 10, 20, 13, 20, 15);
      arc.cubicTo(20, 17.5, 18, 19.5, 14.5, 19.5);
      arc.lineTo(10, 19.5);
      p.drawPath(arc);
      p.drawPolyline(QPolygonF({QPointF(9, 5.5), QPointF(4.5, 10), QPointF(9, 14.5)}));
      p.restore();
      break;
    }
  }
}

}  // namespace

QIcon makeIcon(IconKind kind, QColor colour) {
  if (!colour.isValid()) colour = QApplication::palette().color(QPalette::ButtonText);
  QColor disabledColour = colour;
  disabledColour.setAlphaF(0.35f);
  QIcon icon;
  for (int size : {16, 24, 32, 48}) {
    for (auto [mode, c] : {std::pair{QIcon::Normal, colour}, std::pair{QIcon::Disabled, disabledColour}}) {
      QPixmap pixmap(size, size);
      pixmap.fill(Qt::transparent);
      QPainter p(&pixmap);
      p.setRenderHint(QPainter::Antialiasing);
      p.setRenderHint(QPainter::TextAntialiasing);
      p.scale(size / 24.0, size / 24.0);
      drawIcon(p, kind, c);
      p.end();
      icon.addPixmap(pixmap, mode);
    }
  }
  return icon;
}

}  // namespace gpulab::gui
