// The Mandelbrot tab's canvas: shows the last frame stretched and shifted to the current view at once
// (the screen follows the mouse while the next frame is computed, however deep) and turns the wheel,
// drags, a rubber band (Shift or Ctrl+drag), double-clicks and keys into view requests. It renders nothing itself. A
// line in its top-left corner says the arithmetic, the width and what the reference orbit did (setOverlay).
#pragma once

#include <QImage>
#include <QPointF>
#include <QString>

#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "widgets/pan_zoom_surface.hpp"

class QRubberBand;

namespace gpulab::gui {

class MandelbrotCanvas : public PanZoomSurface {
  Q_OBJECT

 public:
  explicit MandelbrotCanvas(QWidget* parent = nullptr);

  /// The view shown now; its imageWidth/imageHeight are ignored (the canvas's device pixels rule).
  void setView(const gpulab::MandelbrotView& view);
  /// A rendered image and the view it shows (maybe older, smaller or larger than the current view).
  void setFrame(const QImage& image, const gpulab::MandelbrotView& frameView);
  /// Text drawn over the canvas (a view that cannot be shown); empty to clear.
  void setMessage(const QString& message);
  const QString& message() const noexcept { return message_; }
  /// The small line in the top-left corner ("perturbation floatexp   width 1e-300   reference reused").
  void setOverlay(const QString& overlay);
  const QString& overlay() const noexcept { return overlay_; }
  /// Image size in device pixels.
  QSize pixelSize() const;
  const QImage& frame() const noexcept { return frame_; }
  /// Counts setFrame calls; framePresented reports the serial painted.
  quint64 frameSerial() const noexcept { return frameSerial_; }

 signals:
  /// The user moved the view (wheel, drag, box, double-click, keys).
  void viewRequested(const gpulab::MandelbrotView& view);
  /// A move that cannot be made (a width beyond 1e-100000 or 100): one sentence.
  void requestRejected(const QString& why);
  /// Zoom to the minibrot nearest this pixel (N, or the context menu).
  void newtonRequested(QPointF pixel);
  void homeRequested();
  /// Show the Julia set of this point (Mandelbrot mode), or go back to the Mandelbrot set.
  void juliaRequested(QPointF c);
  void mandelbrotRequested();
  void resized();
  /// A paint drew the frame of setFrame call `serial` for the first time.
  void framePresented(quint64 serial);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  // The wheel zooms about the cursor, a drag pans, a double-click recentres: all as view requests.
  void zoomAbout(QPointF anchor, double factor) override;
  void panBy(QPointF delta) override;
  void doubleClickedAt(QPointF point) override;
  // Shift or Ctrl+drag draws a box to zoom into.
  bool takesDrag(QPointF point, Qt::KeyboardModifiers modifiers) override;
  void dragTo(QPointF point) override;
  void dragEnded(QPointF point) override;

 private:
  QPointF toPixels(QPointF widgetPoint) const;
  gpulab::MandelbrotView sized(gpulab::MandelbrotView view) const;
  /// Emits viewRequested(make()), or requestRejected when make() throws std::invalid_argument.
  template <class Make>
  void request(Make&& make);
  /// The pixel under the mouse, or the centre when the mouse is not over the canvas.
  QPointF pixelUnderMouse() const;

  gpulab::MandelbrotView view_;
  gpulab::MandelbrotView frameView_;
  QImage frame_;
  quint64 frameSerial_ = 0;
  quint64 presentedSerial_ = 0;
  QString message_;
  QString overlay_;
  QRubberBand* band_ = nullptr;
  QPointF bandStart_;
};

}  // namespace gpulab::gui
