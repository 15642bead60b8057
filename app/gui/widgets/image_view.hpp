// A photo on screen with zoom and pan: the wheel zooms about the cursor, a drag pans, a double-click
// toggles between "fit" and 100 %. Fit mode follows the widget's size until the user zooms.
// Below 100 % the picture is resampled smoothly (and cached; for large photos the cache is rebuilt
// once the zoom rests, with a quick bilinear picture in between); from 200 % on, pixels are squares.
#pragma once

#include <QImage>
#include <QPointF>

#include "widgets/pan_zoom_surface.hpp"

class QTimer;

namespace gpulab::gui {

class ImageView : public PanZoomSurface {
  Q_OBJECT

 public:
  explicit ImageView(QWidget* parent = nullptr);

  /// Shows `image`. A first image, or one of another size, is fitted to the view; one of the same
  /// size (a filter result) keeps the current zoom and position.
  void setImage(const QImage& image);
  void clearImage();
  const QImage& image() const noexcept { return image_; }
  /// What the empty view says.
  void setPlaceholderText(const QString& text);

  double zoom() const noexcept { return zoom_; }  ///< 1.0 = 100 %
  bool fitsToWindow() const noexcept { return fit_; }
  /// The image pixel under a point of this widget (may lie outside the image).
  QPointF imagePointAt(QPointF widgetPoint) const;

  static constexpr double kMinZoom = 1.0 / 64;
  static constexpr double kMaxZoom = 64.0;

 public slots:
  void zoomIn();
  void zoomOut();
  void fitToWindow();
  void actualSize();
  /// Zooms to `zoom` (clamped) keeping the image point under `anchor` (widget coordinates) in place.
  void setZoom(double zoom, QPointF anchor);

 signals:
  void zoomChanged(double zoom);
  /// The image pixel under the mouse, or (-1, -1) when it left the image.
  void pixelHovered(QPoint pixel);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  // The wheel zooms about the cursor, a drag pans, a double-click toggles between fit and 100 %.
  void zoomAbout(QPointF anchor, double factor) override;
  void panBy(QPointF delta) override;
  void doubleClickedAt(QPointF point) override;
  bool navigable() const override { return !image_.isNull(); }
  /// Says which pixel is under the mouse (pixelHovered).
  void hovered(std::optional<QPointF> point) override;

 private:
  double fitZoom() const;
  void applyFit();
  /// Keeps the image on screen: centred along an axis where it is smaller than the view, and with
  /// no empty margin where it is larger.
  void constrainOffset();
  void setZoomInternal(double zoom, QPointF anchor, bool fit);
  /// The smooth downscaled picture for the current zoom, or nullptr while it is being deferred.
  const QImage* scaledForPaint();
  void rebuildScaled();

  QImage image_;
  QImage scaled_;  // image_ resampled for the current zoom when below 100 %
  double scaledZoom_ = 0;
  QTimer* rescaleTimer_;
  QString placeholder_;
  double zoom_ = 1.0;
  QPointF offset_;  // widget position of the image's top-left corner
  bool fit_ = true;
};

}  // namespace gpulab::gui
