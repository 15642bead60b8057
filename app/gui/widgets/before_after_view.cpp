#include "widgets/before_after_view.hpp"

#include <QKeyEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTimer>
#include <algorithm>
#include <cmath>

namespace gpulab::gui {
namespace {

constexpr int kGrabDistance = 8;  // pixels either side of the split line that grab it
constexpr int kHandleRadius = 13;
// As ImageView: photos up to this size are resampled at once, larger ones once the zoom rests.
constexpr qint64 kImmediatePixels = 4'000'000;

QColor viewBackground(const QPalette& palette) {
  return palette.color(QPalette::Base).lightness() > 128 ? QColor(0x5A, 0x5D, 0x61) : QColor(0x1E, 0x1F, 0x22);
}

}  // namespace

BeforeAfterView::BeforeAfterView(QWidget* parent) : ImageView(parent) {}

void BeforeAfterView::setBefore(const QImage& before) {
  before_ = before;
  beforeScaled_ = {};
  beforeScaledZoom_ = 0;
  if (!hasResult())
    setImage(before_);
  else
    update();
}

void BeforeAfterView::setResult(const QImage& after, QPoint beforeOffset, const QString& label) {
  if (after.isNull()) {
    clearResult();
    return;
  }
  after_ = after;
  beforeOffset_ = beforeOffset;
  afterLabel_ = label.isEmpty() ? tr("Result") : label;
  setImage(after_);  // keeps zoom and position when the size is the photo's
  update();
}

void BeforeAfterView::clearResult() {
  if (after_.isNull()) return;
  after_ = {};
  beforeOffset_ = {};
  setImage(before_);
  update();
}

void BeforeAfterView::setMode(Mode mode) {
  if (mode == mode_) return;
  mode_ = mode;
  update();
  emit modeChanged(mode_);
}

void BeforeAfterView::toggleOriginal() {
  if (mode_ != Mode::Before) {
    modeBeforeToggle_ = mode_;
    setMode(Mode::Before);
  } else {
    setMode(modeBeforeToggle_ == Mode::Before ? Mode::Split : modeBeforeToggle_);
  }
}

void BeforeAfterView::setSplitFraction(double fraction) {
  split_ = std::clamp(fraction, 0.0, 1.0);
  update();
}

int BeforeAfterView::splitX() const { return static_cast<int>(std::lround(split_ * width())); }

bool BeforeAfterView::nearSplit(QPointF point) const {
  return hasResult() && mode_ == Mode::Split && std::abs(point.x() - splitX()) <= kGrabDistance;
}

// ---------------------------------------------------------------------------------------------
// Painting

void BeforeAfterView::paintEvent(QPaintEvent* event) {
  ImageView::paintEvent(event);  // the result (or the original alone) with zoom and pan
  if (!hasResult() || before_.isNull()) return;
  QPainter p(this);
  switch (mode_) {
    case Mode::After:
      paintLabel(p, afterLabel_, true);
      return;
    case Mode::Before:
      paintBefore(p, rect());
      paintLabel(p, tr("Original"), false);
      return;
    case Mode::Split:
      break;
  }
  const int x = splitX();
  paintBefore(p, QRect(0, 0, x, height()));

  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(0, 0, 0, 90), 3));
  p.drawLine(QPointF(x + 0.5, 0), QPointF(x + 0.5, height()));
  p.setPen(QPen(QColor(255, 255, 255, 230), 1.5));
  p.drawLine(QPointF(x + 0.5, 0), QPointF(x + 0.5, height()));
  const QPointF centre(x + 0.5, height() / 2.0);
  p.setPen(QPen(QColor(0, 0, 0, 110), 1));
  p.setBrush(QColor(255, 255, 255, 235));
  p.drawEllipse(centre, kHandleRadius, kHandleRadius);
  // Two chevrons: the line moves sideways.
  QPainterPath arrows;
  const double a = 4.5, h = 4.5;
  arrows.moveTo(centre + QPointF(-2, -h));
  arrows.lineTo(centre + QPointF(-2 - a, 0));
  arrows.lineTo(centre + QPointF(-2, h));
  arrows.moveTo(centre + QPointF(2, -h));
  arrows.lineTo(centre + QPointF(2 + a, 0));
  arrows.lineTo(centre + QPointF(2, h));
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(QColor(0x30, 0x33, 0x38), 1.8, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  p.drawPath(arrows);

  p.setClipRect(QRect(0, 0, x, height()));
  paintLabel(p, tr("Original"), false);
  p.setClipRect(QRect(x + 1, 0, width() - x - 1, height()));
  paintLabel(p, afterLabel_, true);
}

void BeforeAfterView::paintBefore(QPainter& p, const QRect& clip) {
  p.save();
  p.setClipRect(clip);
  p.fillRect(clip, viewBackground(palette()));
  const double z = zoom();
  // The widget position of the result's pixel (0, 0), then of the original's.
  const QPointF resultOrigin = -imagePointAt(QPointF(0, 0)) * z;
  const QPointF origin = resultOrigin + QPointF(beforeOffset_) * z;
  const QRectF target(origin, QSizeF(before_.width() * z, before_.height() * z));
  if (z < 1.0) {
    if (beforeScaledZoom_ != z) {
      if (static_cast<qint64>(before_.width()) * before_.height() <= kImmediatePixels) {
        const QSize size(std::max(1, static_cast<int>(std::lround(before_.width() * z))),
                         std::max(1, static_cast<int>(std::lround(before_.height() * z))));
        beforeScaled_ = before_.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        beforeScaledZoom_ = z;
      } else {
        // Large photo while zooming: a quick picture now, the smooth one once the zoom rests.
        QTimer::singleShot(150, this, [this, z] {
          if (zoom() != z || beforeScaledZoom_ == z || before_.isNull()) return;
          const QSize size(std::max(1, static_cast<int>(std::lround(before_.width() * z))),
                           std::max(1, static_cast<int>(std::lround(before_.height() * z))));
          beforeScaled_ = before_.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
          beforeScaledZoom_ = z;
          update();
        });
      }
    }
    if (beforeScaledZoom_ == z) {
      p.drawImage(QPointF(std::round(origin.x()), std::round(origin.y())), beforeScaled_);
    } else {
      p.setRenderHint(QPainter::SmoothPixmapTransform, true);
      p.drawImage(target, before_);
    }
  } else {
    // As ImageView: interpolated when slightly enlarged, square pixels from 2x on.
    p.setRenderHint(QPainter::SmoothPixmapTransform, z < 2.0);
    const QRectF visible = target.intersected(QRectF(clip));
    if (!visible.isEmpty()) {
      const QRectF source((visible.topLeft() - origin) / z, visible.size() / z);
      const QRect pixels = source.toAlignedRect().intersected(before_.rect());
      const QRectF drawn(origin + QPointF(pixels.topLeft()) * z, QSizeF(pixels.size()) * z);
      p.drawImage(drawn, before_, pixels);
    }
  }
  p.restore();
}

void BeforeAfterView::paintLabel(QPainter& p, const QString& text, bool right) {
  QFont font = p.font();
  font.setBold(true);
  p.setFont(font);
  const QFontMetrics metrics(font);
  const int margin = 10, padX = 8, padY = 3;
  const QSize size(metrics.horizontalAdvance(text) + 2 * padX, metrics.height() + 2 * padY);
  const QRect box(right ? width() - margin - size.width() : margin, margin, size.width(), size.height());
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0, 0, 0, 150));
  p.drawRoundedRect(box, 4, 4);
  p.setPen(QColor(255, 255, 255, 235));
  p.drawText(box, Qt::AlignCenter, text);
  p.restore();
}

// ---------------------------------------------------------------------------------------------
// Mouse and keyboard

bool BeforeAfterView::takesDrag(QPointF point, Qt::KeyboardModifiers) {
  if (!nearSplit(point)) return false;
  setCursor(Qt::SplitHCursor);
  return true;
}

void BeforeAfterView::dragTo(QPointF point) { setSplitFraction(width() > 0 ? point.x() / width() : 0.5); }

void BeforeAfterView::hovered(std::optional<QPointF> point) {
  ImageView::hovered(point);
  if (dragging()) return;
  if (point && nearSplit(*point))
    setCursor(Qt::SplitHCursor);
  else
    unsetCursor();
}

void BeforeAfterView::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Space && event->modifiers() == Qt::NoModifier && hasResult()) {
    if (!event->isAutoRepeat()) toggleOriginal();
    event->accept();
    return;
  }
  ImageView::keyPressEvent(event);
}

}  // namespace gpulab::gui
