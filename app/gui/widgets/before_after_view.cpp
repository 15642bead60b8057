#include "widgets/before_after_view.hpp"

#include <QKeyEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <utility>

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
  {
    QPainter p(this);
    paintSplit(p);
  }
  QPainter p(this);
  paintOverlays(p);
}

void BeforeAfterView::paintSplit(QPainter& p) {
  if (!hasResult() || before_.isNull()) return;
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

bool BeforeAfterView::takesDrag(QPointF point, Qt::KeyboardModifiers modifiers) {
  // A modifier picks the drawing whatever the tool: Shift a region, Ctrl a line.
  Drawing want = Drawing::None;
  if (modifiers & Qt::ShiftModifier)
    want = Drawing::Region;
  else if (modifiers & Qt::ControlModifier)
    want = Drawing::Line;
  else if (tool_ == Tool::Region)
    want = Drawing::Region;
  else if (tool_ == Tool::Line)
    want = Drawing::Line;
  if (want != Drawing::None && !photoSize().isEmpty()) {
    drawing_ = want;
    drawStart_ = photoPoint(point);
    if (want == Drawing::Region) {
      draft_ = regionBetween(drawStart_, drawStart_);
      update();
    }
    setCursor(Qt::CrossCursor);
    return true;
  }
  if (!nearSplit(point)) return false;
  drawing_ = Drawing::Split;
  setCursor(Qt::SplitHCursor);
  return true;
}

void BeforeAfterView::dragTo(QPointF point) {
  switch (drawing_) {
    case Drawing::Region:
      draft_ = regionBetween(drawStart_, photoPoint(point));
      update();
      return;
    case Drawing::Line:
      setProfileLine(QLineF(drawStart_, photoPoint(point)));
      return;
    case Drawing::Split:
    case Drawing::None:
      setSplitFraction(width() > 0 ? point.x() / width() : 0.5);
      return;
  }
}

void BeforeAfterView::dragEnded(QPointF point) {
  const Drawing drawing = std::exchange(drawing_, Drawing::None);
  if (drawing == Drawing::Region) {
    const QRect r = regionBetween(drawStart_, photoPoint(point));
    draft_.reset();
    // A click without a drag clears the region instead of making a 1x1 one.
    setRegion(r.width() * r.height() > 1 ? std::optional<QRect>(r) : std::nullopt);
  }
  unsetCursor();
}

void BeforeAfterView::setTool(Tool tool) {
  if (tool == tool_) return;
  tool_ = tool;
  emit toolChanged(tool_);
}

QSize BeforeAfterView::photoSize() const { return hasResult() ? after_.size() : before_.size(); }

QPointF BeforeAfterView::photoPoint(QPointF widget) const { return imagePointAt(widget); }

QPointF BeforeAfterView::widgetPoint(QPointF photo) const { return (photo - imagePointAt(QPointF(0, 0))) * zoom(); }

QRect BeforeAfterView::regionBetween(QPointF a, QPointF b) const {
  const QSize size = photoSize();
  const int x0 = std::clamp(static_cast<int>(std::floor(std::min(a.x(), b.x()))), 0, size.width());
  const int y0 = std::clamp(static_cast<int>(std::floor(std::min(a.y(), b.y()))), 0, size.height());
  const int x1 = std::clamp(static_cast<int>(std::ceil(std::max(a.x(), b.x()))), 0, size.width());
  const int y1 = std::clamp(static_cast<int>(std::ceil(std::max(a.y(), b.y()))), 0, size.height());
  return QRect(x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0)).intersected(QRect(QPoint(0, 0), size));
}

void BeforeAfterView::setRegion(std::optional<QRect> region) {
  if (region) {
    *region = region->intersected(QRect(QPoint(0, 0), photoSize()));
    if (region->isEmpty()) region.reset();
  }
  if (region == region_) return;
  region_ = region;
  update();
  emit regionChanged();
}

void BeforeAfterView::setProfileLine(std::optional<QLineF> line) {
  if (line == line_) return;
  line_ = line;
  update();
  emit profileLineChanged();
}

void BeforeAfterView::paintOverlays(QPainter& p) {
  const std::optional<QRect> region = draft_ ? draft_ : region_;
  p.setRenderHint(QPainter::Antialiasing);
  if (region) {
    const QRectF r(widgetPoint(region->topLeft()),
                   widgetPoint(QPointF(region->x() + region->width(), region->y() + region->height())));
    QPainterPath outside;
    outside.addRect(QRectF(rect()));
    outside.addRect(r);
    p.fillPath(outside, QColor(0, 0, 0, 80));  // even-odd: everything but the region is dimmed
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(0, 0, 0, 160), 3));
    p.drawRect(r);
    p.setPen(QPen(QColor(0xFF, 0xD5, 0x4F), 1.5, Qt::DashLine));
    p.drawRect(r);
    const QString text = tr("ROI %1x%2").arg(region->width()).arg(region->height());
    const QFontMetrics metrics(p.font());
    const QRectF box(r.left(), r.top() - metrics.height() - 6 < 0 ? r.top() + 2 : r.top() - metrics.height() - 6,
                     metrics.horizontalAdvance(text) + 12, metrics.height() + 4);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0, 0, 0, 170));
    p.drawRoundedRect(box, 3, 3);
    p.setPen(QColor(0xFF, 0xD5, 0x4F));
    p.drawText(box, Qt::AlignCenter, text);
  }
  if (line_) {
    const QPointF a = widgetPoint(line_->p1()), b = widgetPoint(line_->p2());
    p.setPen(QPen(QColor(0, 0, 0, 160), 4, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(a, b);
    p.setPen(QPen(QColor(0x4D, 0xD0, 0xE1), 2, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(a, b);
    p.setBrush(QColor(0x4D, 0xD0, 0xE1));
    p.drawEllipse(a, 4, 4);
    p.setBrush(Qt::white);
    p.drawEllipse(b, 4, 4);
  }
}

void BeforeAfterView::hovered(std::optional<QPointF> point) {
  ImageView::hovered(point);
  if (dragging()) return;
  if (point && tool_ != Tool::Navigate && !photoSize().isEmpty())
    setCursor(Qt::CrossCursor);
  else if (point && nearSplit(*point))
    setCursor(Qt::SplitHCursor);
  else
    unsetCursor();
}

void BeforeAfterView::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && (region_ || tool_ != Tool::Navigate)) {
    setRegion(std::nullopt);
    setTool(Tool::Navigate);
    event->accept();
    return;
  }
  if (event->key() == Qt::Key_Space && event->modifiers() == Qt::NoModifier && hasResult()) {
    if (!event->isAutoRepeat()) toggleOriginal();
    event->accept();
    return;
  }
  ImageView::keyPressEvent(event);
}

}  // namespace gpulab::gui
