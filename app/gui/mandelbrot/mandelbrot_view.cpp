#include "mandelbrot/mandelbrot_view.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpulab::gui {

using gpulab::MandelbrotView;

namespace {

double spacingOf(const MandelbrotView& v) { return v.width / v.imageWidth; }

}  // namespace

bool samePlace(const MandelbrotView& a, const MandelbrotView& b) {
  return a.centerX == b.centerX && a.centerY == b.centerY && a.width == b.width && a.julia == b.julia &&
         a.juliaX == b.juliaX && a.juliaY == b.juliaY;
}

QString pointText(double x, double y) { return QStringLiteral("%1, %2").arg(x, 0, 'g', 17).arg(y, 0, 'g', 17); }

std::optional<QPointF> parsePointText(const QString& text) {
  try {
    const auto p = gpulab::parsePoint(text.toStdString(), "c");
    return QPointF(p[0], p[1]);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

QPointF planePoint(const MandelbrotView& v, QPointF pixel) {
  const double h = spacingOf(v);
  return {v.centerX + (pixel.x() - 0.5 * v.imageWidth) * h, v.centerY - (pixel.y() - 0.5 * v.imageHeight) * h};
}

MandelbrotView zoomedAbout(const MandelbrotView& v, QPointF pixel, double factor) {
  const QPointF p = planePoint(v, pixel);
  MandelbrotView out = v;
  out.width = v.width / factor;
  out.centerX = p.x() + (v.centerX - p.x()) / factor;
  out.centerY = p.y() + (v.centerY - p.y()) / factor;
  return out;
}

MandelbrotView panned(const MandelbrotView& v, QPointF delta) {
  const double h = spacingOf(v);
  MandelbrotView out = v;
  out.centerX = v.centerX - delta.x() * h;
  out.centerY = v.centerY + delta.y() * h;
  return out;
}

MandelbrotView zoomedToRect(const MandelbrotView& v, const QRectF& pixels) {
  const QRectF r = pixels.normalized();
  const double fraction = std::max(r.width() / v.imageWidth, r.height() / v.imageHeight);
  if (fraction <= 0) return v;
  MandelbrotView out = recentred(v, r.center());
  out.width = v.width * fraction;
  return out;
}

MandelbrotView recentred(const MandelbrotView& v, QPointF pixel) {
  const QPointF p = planePoint(v, pixel);
  MandelbrotView out = v;
  out.centerX = p.x();
  out.centerY = p.y();
  return out;
}

QRectF frameRectIn(const MandelbrotView& view, const MandelbrotView& frame) {
  const double h = spacingOf(view);
  const double frameHeight = frame.width * frame.imageHeight / frame.imageWidth;
  const double left = frame.centerX - 0.5 * frame.width, top = frame.centerY + 0.5 * frameHeight;
  return {(left - view.centerX) / h + 0.5 * view.imageWidth, 0.5 * view.imageHeight - (top - view.centerY) / h,
          frame.width / h, frameHeight / h};
}

std::vector<MandelbrotBookmark> builtInBookmarks() {
  auto place = [](const char* name, double x, double y, double width) {
    MandelbrotView v;
    v.centerX = x;
    v.centerY = y;
    v.width = width;
    v.maxIterations = 0;
    return MandelbrotBookmark{QString::fromUtf8(name), v};
  };
  MandelbrotBookmark rabbit = place(QT_TR_NOOP("Julia: Douady's rabbit"), 0.0, 0.0, 3.2);
  rabbit.view.julia = true;
  rabbit.view.juliaX = -0.123;
  rabbit.view.juliaY = 0.745;
  return {place(QT_TR_NOOP("Whole set"), -0.5, 0.0, 3.0),
          place(QT_TR_NOOP("Seahorse valley"), -0.743643887037151, 0.13182590420533, 0.005),
          place(QT_TR_NOOP("Elephant valley"), 0.2925, 0.0149, 0.02),
          place(QT_TR_NOOP("Mini-brot on the real axis"), -1.7548776662, 0.0, 0.05),
          place(QT_TR_NOOP("Spiral"), -0.761574, -0.0847596, 0.002),
          rabbit};
}

}  // namespace gpulab::gui
