#include "mandelbrot/mandelbrot_canvas.hpp"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFontMetrics>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QRubberBand>
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "mandelbrot/mandelbrot_view.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

namespace {

constexpr double kWheelStep = 1.25;  // zoom per wheel notch
constexpr double kKeyZoom = 1.5;     // zoom per + / -
constexpr double kPageZoom = 10.0;   // PageUp / PageDown
constexpr double kBigZoom = 1000.0;  // Shift+PageUp / Shift+PageDown

}  // namespace

template <class Make>
void MandelbrotCanvas::request(Make&& make) {
  try {
    emit viewRequested(make());
  } catch (const std::invalid_argument& e) {  // a width out of range
    emit requestRejected(QString::fromUtf8(e.what()));
  }
}

QPointF MandelbrotCanvas::pixelUnderMouse() const {
  const std::optional<QPointF> mouse = mousePosition();
  if (mouse && rect().contains(mouse->toPoint())) return toPixels(*mouse);
  const QSize s = pixelSize();
  return {0.5 * s.width(), 0.5 * s.height()};
}

MandelbrotCanvas::MandelbrotCanvas(QWidget* parent) : PanZoomSurface(kWheelStep, parent) {
  setIdleCursor(Qt::CrossCursor);
  setToolTip(
      tr("Wheel: zoom   drag: pan   Shift+drag: zoom into a box   double-click: recentre\n"
         "+ / -: zoom 1.5x   PageUp / PageDown: zoom 10x   Shift+PageUp / Shift+PageDown: zoom 1000x\n"
         "arrows: pan   Home: whole set   N: zoom to the minibrot nearest the cursor\n"
         "J: Julia set of the point under the cursor   (any depth: past 1e-13 by perturbation)"));
}

QSize MandelbrotCanvas::pixelSize() const {
  const double dpr = devicePixelRatioF();
  return {std::max(1, static_cast<int>(std::lround(width() * dpr))),
          std::max(1, static_cast<int>(std::lround(height() * dpr)))};
}

QPointF MandelbrotCanvas::toPixels(QPointF widgetPoint) const { return widgetPoint * devicePixelRatioF(); }

MandelbrotView MandelbrotCanvas::sized(MandelbrotView view) const {
  const QSize s = pixelSize();
  view.imageWidth = s.width();
  view.imageHeight = s.height();
  return view;
}

void MandelbrotCanvas::setView(const MandelbrotView& view) {
  view_ = view;
  update();
}

void MandelbrotCanvas::setFrame(const QImage& image, const MandelbrotView& frameView) {
  frame_ = image;
  frameView_ = frameView;
  ++frameSerial_;
  update();
}

void MandelbrotCanvas::setMessage(const QString& message) {
  if (message == message_) return;
  message_ = message;
  update();
}

void MandelbrotCanvas::setOverlay(const QString& overlay) {
  if (overlay == overlay_) return;
  overlay_ = overlay;
  update();
}

void MandelbrotCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), Qt::black);
  const MandelbrotView now = sized(view_);
  const bool sameSet = frameView_.julia == now.julia &&
                       (!now.julia || (frameView_.juliaX == now.juliaX && frameView_.juliaY == now.juliaY));
  if (!frame_.isNull() && sameSet) {
    // A frame rendered for another view is stretched and shifted to where it belongs now: the screen
    // follows the mouse at once while the new frame is computed. Only the part on screen is drawn (a
    // frame zoomed 10^5 times has coordinates far outside any painter's range).
    const double dpr = devicePixelRatioF();
    if (const std::optional<QRectF> target = frameRectIn(now, frameView_)) {
      const QRectF visible = target->intersected(QRectF(0, 0, now.imageWidth, now.imageHeight));
      if (!visible.isEmpty()) {
        const double sx = frame_.width() / target->width(), sy = frame_.height() / target->height();
        const QRectF source((visible.left() - target->left()) * sx, (visible.top() - target->top()) * sy,
                            visible.width() * sx, visible.height() * sy);
        painter.drawImage(QRectF(visible.topLeft() / dpr, visible.size() / dpr), frame_, source);
      }
    } else {  // a jump too far to place the old frame: it stays, veiled, until the new one comes
      painter.drawImage(QRectF(QPointF(0, 0), QSizeF(now.imageWidth, now.imageHeight) / dpr), frame_);
      painter.fillRect(rect(), QColor(0, 0, 0, 110));
    }
  }
  if (!overlay_.isEmpty()) {
    const QFontMetrics metrics(painter.font());
    const QRect box = metrics.boundingRect(QRect(0, 0, width() - 16, height()), Qt::TextWordWrap, overlay_)
                          .adjusted(-6, -3, 6, 3)
                          .translated(8, 8);
    painter.fillRect(box, QColor(0, 0, 0, 150));
    painter.setPen(QColor(230, 230, 230));
    painter.drawText(box.adjusted(6, 3, -6, -3), Qt::TextWordWrap, overlay_);
  }
  const bool newFrame = !frame_.isNull() && sameSet && frameSerial_ != presentedSerial_;
  if (!message_.isEmpty()) {
    QFont font = painter.font();
    font.setPointSizeF(font.pointSizeF() * 1.2);
    painter.setFont(font);
    const QRectF box = rect().adjusted(width() / 8, height() / 3, -width() / 8, -height() / 3);
    painter.fillRect(box, QColor(0, 0, 0, 190));
    painter.setPen(QColor(255, 210, 120));
    painter.drawText(box.adjusted(12, 8, -12, -8), Qt::AlignCenter | Qt::TextWordWrap, message_);
  }
  if (newFrame) {
    presentedSerial_ = frameSerial_;
    emit framePresented(frameSerial_);
  }
}

void MandelbrotCanvas::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  emit resized();
}

void MandelbrotCanvas::zoomAbout(QPointF anchor, double factor) {
  request([&] { return zoomedAbout(sized(view_), toPixels(anchor), factor); });
}

void MandelbrotCanvas::panBy(QPointF delta) {
  request([&] { return panned(sized(view_), toPixels(delta)); });
}

void MandelbrotCanvas::doubleClickedAt(QPointF point) {
  request([&] { return recentred(sized(view_), toPixels(point)); });
}

bool MandelbrotCanvas::takesDrag(QPointF point, Qt::KeyboardModifiers modifiers) {
  if (!(modifiers & (Qt::ShiftModifier | Qt::ControlModifier))) return false;
  if (band_ == nullptr) band_ = new QRubberBand(QRubberBand::Rectangle, this);
  bandStart_ = point;
  band_->setGeometry(QRect(bandStart_.toPoint(), QSize()));
  band_->show();
  return true;
}

void MandelbrotCanvas::dragTo(QPointF point) { band_->setGeometry(QRectF(bandStart_, point).normalized().toRect()); }

void MandelbrotCanvas::dragEnded(QPointF point) {
  band_->hide();
  const QRectF box(toPixels(bandStart_), toPixels(point));
  if (std::abs(box.width()) >= 4 && std::abs(box.height()) >= 4)
    request([&] { return zoomedToRect(sized(view_), box); });
}

void MandelbrotCanvas::keyPressEvent(QKeyEvent* event) {
  const MandelbrotView v = sized(view_);
  const QPointF step(0.1 * v.imageWidth, 0.1 * v.imageHeight);
  const bool shift = (event->modifiers() & Qt::ShiftModifier) != 0;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      request([&] { return zoomedBy(v, kKeyZoom); });
      break;
    case Qt::Key_Minus:
      request([&] { return zoomedBy(v, 1.0 / kKeyZoom); });
      break;
    case Qt::Key_PageUp:
      request([&] { return zoomedBy(v, shift ? kBigZoom : kPageZoom); });
      break;
    case Qt::Key_PageDown:
      request([&] { return zoomedBy(v, 1.0 / (shift ? kBigZoom : kPageZoom)); });
      break;
    case Qt::Key_Left:
      request([&] { return panned(v, {step.x(), 0}); });
      break;
    case Qt::Key_Right:
      request([&] { return panned(v, {-step.x(), 0}); });
      break;
    case Qt::Key_Up:
      request([&] { return panned(v, {0, step.y()}); });
      break;
    case Qt::Key_Down:
      request([&] { return panned(v, {0, -step.y()}); });
      break;
    case Qt::Key_Home:
      emit homeRequested();
      break;
    case Qt::Key_N:
      if (!v.julia) emit newtonRequested(pixelUnderMouse());
      break;
    case Qt::Key_J:
      if (v.julia)
        emit mandelbrotRequested();
      else
        emit juliaRequested(planePointF(v, pixelUnderMouse()));
      break;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
  event->accept();
}

void MandelbrotCanvas::contextMenuEvent(QContextMenuEvent* event) {
  const MandelbrotView v = sized(view_);
  const QPointF pixel = toPixels(event->pos());
  const QPointF c = planePointF(v, pixel);
  QMenu menu(this);
  if (v.julia) {
    menu.addAction(tr("Back to the Mandelbrot set"), this, [this] { emit mandelbrotRequested(); });
  } else {
    menu.addAction(tr("Julia set of this point (J)"), this, [this, c] { emit juliaRequested(c); });
    menu.addAction(tr("Zoom to the minibrot nearest here (N)"), this, [this, pixel] { emit newtonRequested(pixel); });
  }
  menu.addAction(tr("Recentre here"), this, [this, v, pixel] { request([&] { return recentred(v, pixel); }); });
  menu.addAction(tr("Zoom in here"), this, [this, v, pixel] { request([&] { return zoomedAbout(v, pixel, 2.0); }); });
  menu.addAction(tr("Zoom out here"), this, [this, v, pixel] { request([&] { return zoomedAbout(v, pixel, 0.5); }); });
  menu.addSeparator();
  menu.addAction(tr("Copy the coordinates of this point"), this, [v, pixel] {
    const PlanePoint p = planePoint(v, pixel);
    QApplication::clipboard()->setText(QString::fromStdString(p.x.toString() + ", " + p.y.toString()));
  });
  menu.exec(event->globalPos());
}

}  // namespace gpulab::gui
