#include "widgets/image_view.hpp"

#include <QPainter>
#include <QTimer>
#include <algorithm>
#include <array>
#include <cmath>

namespace gpulab::gui {
namespace {

constexpr double kWheelStep = 1.2;  // zoom per wheel notch

// The steps of Ctrl+= and Ctrl+-, as image viewers offer them.
constexpr std::array<double, 23> kZoomSteps = {
    1.0 / 64, 1.0 / 32, 1.0 / 16, 1.0 / 12, 1.0 / 8, 1.0 / 6, 1.0 / 4, 1.0 / 3, 1.0 / 2, 2.0 / 3, 1.0, 1.5,
    2.0,      3.0,      4.0,      6.0,      8.0,     12.0,    16.0,    24.0,    32.0,    48.0,    64.0};

void paintCheckerboard(QPainter& p, const QRectF& area) {
  const int cell = 8;
  p.save();
  p.setClipRect(area);
  p.fillRect(area, QColor(0xCC, 0xCC, 0xCC));
  for (int y = static_cast<int>(area.top()); y < area.bottom(); y += cell)
    for (int x = static_cast<int>(area.left()) + ((y - static_cast<int>(area.top())) / cell % 2) * cell;
         x < area.right(); x += 2 * cell)
      p.fillRect(x, y, cell, cell, QColor(0xEE, 0xEE, 0xEE));
  p.restore();
}

}  // namespace

ImageView::ImageView(QWidget* parent) : PanZoomSurface(kWheelStep, parent), rescaleTimer_(new QTimer(this)) {
  rescaleTimer_->setSingleShot(true);
  rescaleTimer_->setInterval(120);
  connect(rescaleTimer_, &QTimer::timeout, this, [this] {
    rebuildScaled();
    update();
  });
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  placeholder_ = tr("No photo");
}

void ImageView::setImage(const QImage& image) {
  const bool sameSize = !image_.isNull() && image.size() == image_.size();
  image_ = image;
  scaled_ = {};
  scaledZoom_ = 0;
  if (!sameSize) {
    fit_ = true;
    applyFit();
  }
  update();
}

void ImageView::clearImage() {
  image_ = {};
  scaled_ = {};
  update();
}

void ImageView::setPlaceholderText(const QString& text) {
  placeholder_ = text;
  update();
}

QPointF ImageView::imagePointAt(QPointF widgetPoint) const { return (widgetPoint - offset_) / zoom_; }

double ImageView::fitZoom() const {
  if (image_.isNull() || width() <= 0 || height() <= 0) return 1.0;
  const double margin = 16;  // a frame of background around a fitted photo
  const double zx = std::max(1.0, width() - margin) / image_.width();
  const double zy = std::max(1.0, height() - margin) / image_.height();
  return std::clamp(std::min(zx, zy), kMinZoom, kMaxZoom);
}

void ImageView::applyFit() {
  const double previous = zoom_;
  zoom_ = fitZoom();
  offset_ = {(width() - image_.width() * zoom_) / 2, (height() - image_.height() * zoom_) / 2};
  constrainOffset();
  if (zoom_ != previous || !image_.isNull()) emit zoomChanged(zoom_);
}

void ImageView::constrainOffset() {
  if (image_.isNull()) return;
  const double w = image_.width() * zoom_, h = image_.height() * zoom_;
  offset_.setX(w <= width() ? (width() - w) / 2 : std::clamp(offset_.x(), width() - w, 0.0));
  offset_.setY(h <= height() ? (height() - h) / 2 : std::clamp(offset_.y(), height() - h, 0.0));
}

void ImageView::setZoomInternal(double zoom, QPointF anchor, bool fit) {
  if (image_.isNull()) return;
  zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
  const QPointF imagePoint = imagePointAt(anchor);
  zoom_ = zoom;
  fit_ = fit;
  offset_ = anchor - imagePoint * zoom_;
  constrainOffset();
  update();
  emit zoomChanged(zoom_);
}

void ImageView::setZoom(double zoom, QPointF anchor) { setZoomInternal(zoom, anchor, false); }

void ImageView::zoomIn() {
  const auto next = std::upper_bound(kZoomSteps.begin(), kZoomSteps.end(), zoom_ * 1.001);
  setZoom(next != kZoomSteps.end() ? *next : kMaxZoom, QPointF(width() / 2.0, height() / 2.0));
}

void ImageView::zoomOut() {
  auto below = std::lower_bound(kZoomSteps.begin(), kZoomSteps.end(), zoom_ / 1.001);
  setZoom(below != kZoomSteps.begin() ? *std::prev(below) : kMinZoom, QPointF(width() / 2.0, height() / 2.0));
}

void ImageView::fitToWindow() {
  fit_ = true;
  applyFit();
  update();
}

void ImageView::actualSize() { setZoom(1.0, QPointF(width() / 2.0, height() / 2.0)); }

void ImageView::rebuildScaled() {
  if (image_.isNull() || zoom_ >= 1.0) return;
  const QSize size(std::max(1, static_cast<int>(std::lround(image_.width() * zoom_))),
                   std::max(1, static_cast<int>(std::lround(image_.height() * zoom_))));
  scaled_ = image_.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  scaledZoom_ = zoom_;
}

const QImage* ImageView::scaledForPaint() {
  if (!scaled_.isNull() && scaledZoom_ == zoom_) return &scaled_;
  // Resampling a photo of a few megapixels takes a few milliseconds: do it now. Larger ones wait
  // until the zoom rests, so the wheel stays fluid.
  constexpr qint64 kImmediatePixels = 4'000'000;
  if (static_cast<qint64>(image_.width()) * image_.height() <= kImmediatePixels) {
    rebuildScaled();
    return &scaled_;
  }
  rescaleTimer_->start();
  return nullptr;
}

void ImageView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QColor background =
      palette().color(QPalette::Base).lightness() > 128 ? QColor(0x5A, 0x5D, 0x61) : QColor(0x1E, 0x1F, 0x22);
  p.fillRect(rect(), background);
  if (image_.isNull()) {
    p.setPen(QColor(0xB8, 0xBB, 0xBF));
    p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, placeholder_);
    return;
  }
  const QRectF target(offset_, QSizeF(image_.width() * zoom_, image_.height() * zoom_));
  const QImage* scaled = zoom_ < 1.0 ? scaledForPaint() : nullptr;
  // Pre-resampled: drawn 1:1 at a whole-pixel position to keep it sharp.
  const QPointF scaledAt(std::round(offset_.x()), std::round(offset_.y()));
  // The checkerboard under transparency covers exactly what is drawn (the resampled image has whole
  // rows and columns; the fractional target would show a stripe of checkerboard beyond its edge).
  const QRectF drawnArea = scaled != nullptr ? QRectF(scaledAt, QSizeF(scaled->size())) : target;
  if (image_.hasAlphaChannel()) paintCheckerboard(p, drawnArea.intersected(QRectF(rect())));
  if (scaled != nullptr) {
    p.drawImage(scaledAt, *scaled);
  } else if (zoom_ < 1.0) {
    p.setRenderHint(QPainter::SmoothPixmapTransform, true);  // quick, until the smooth one is ready
    p.drawImage(target, image_);
  } else {
    // Slightly enlarged (a small photo fitted to the window): interpolated. From 2x on: nearest
    // neighbour, so a person sees the actual pixels.
    p.setRenderHint(QPainter::SmoothPixmapTransform, zoom_ < 2.0);
    const QRectF visible = target.intersected(QRectF(rect()));
    const QRectF source((visible.topLeft() - offset_) / zoom_, visible.size() / zoom_);
    // Whole source pixels, so each one stays a square of zoom x zoom screen pixels.
    const QRect sourcePixels = source.toAlignedRect().intersected(image_.rect());
    const QRectF drawn(offset_ + QPointF(sourcePixels.topLeft()) * zoom_, QSizeF(sourcePixels.size()) * zoom_);
    p.drawImage(drawn, image_, sourcePixels);
  }
}

void ImageView::resizeEvent(QResizeEvent*) {
  if (fit_)
    applyFit();
  else
    constrainOffset();
}

void ImageView::zoomAbout(QPointF anchor, double factor) { setZoom(zoom_ * factor, anchor); }

void ImageView::panBy(QPointF delta) {
  offset_ += delta;
  constrainOffset();
  update();
}

void ImageView::doubleClickedAt(QPointF point) {
  if (fit_ || std::abs(zoom_ - 1.0) > 1e-9)
    setZoom(1.0, point);
  else
    fitToWindow();
}

void ImageView::hovered(std::optional<QPointF> point) {
  if (!point) {
    emit pixelHovered(QPoint(-1, -1));
    return;
  }
  if (image_.isNull()) return;
  const QPointF pt = imagePointAt(*point);
  const QPoint pixel(static_cast<int>(std::floor(pt.x())), static_cast<int>(std::floor(pt.y())));
  emit pixelHovered(image_.rect().contains(pixel) ? pixel : QPoint(-1, -1));
}

}  // namespace gpulab::gui
