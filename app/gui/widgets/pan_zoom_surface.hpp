// A widget navigated like a map with the mouse: the wheel zooms about the cursor, a drag with the left
// button pans (with a closed hand while it lasts), a double-click acts at a point. Subclasses say what
// a zoom, a pan and a double-click do (ImageView moves a photo; MandelbrotCanvas asks for a new view),
// and may take a drag for themselves (the split line of a before/after view, a box to zoom into).
#pragma once

#include <QPointF>
#include <QWidget>
#include <optional>

namespace gpulab::gui {

class PanZoomSurface : public QWidget {
  Q_OBJECT

 public:
  /// `wheelStep`: the zoom of one notch of a classic wheel (touchpads send fractions of notches).
  explicit PanZoomSurface(double wheelStep, QWidget* parent = nullptr);

  /// Where the mouse is over the widget; nullopt once it has left.
  std::optional<QPointF> mousePosition() const noexcept { return mouse_; }

 protected:
  /// Zoom by `factor` (> 1 zooms in) keeping the point under `anchor` (widget coordinates) in place.
  virtual void zoomAbout(QPointF anchor, double factor) = 0;
  /// Move the content with the mouse by `delta` (widget coordinates).
  virtual void panBy(QPointF delta) = 0;
  /// A double-click with the left button at `point`.
  virtual void doubleClickedAt(QPointF point) = 0;
  /// Whether there is anything to zoom and pan; nothing happens while there is not.
  virtual bool navigable() const { return true; }

  /// A left-button drag starting at `point` pans unless this returns true: the drag is then the
  /// subclass's, told to it by dragTo and dragEnded.
  virtual bool takesDrag(QPointF point, Qt::KeyboardModifiers modifiers);
  virtual void dragTo(QPointF point);
  virtual void dragEnded(QPointF point);
  /// The mouse moved over the widget (dragging or not), or left it (nullopt).
  virtual void hovered(std::optional<QPointF> point);

  bool dragging() const noexcept { return drag_ != Drag::None; }
  /// The cursor shown while no drag is going on; without one, the parent's.
  void setIdleCursor(Qt::CursorShape shape);

  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  enum class Drag { None, Pan, Taken };

  void showIdleCursor();

  double wheelStep_;
  std::optional<Qt::CursorShape> idleCursor_;
  std::optional<QPointF> mouse_;
  Drag drag_ = Drag::None;
  QPointF dragLast_;
};

}  // namespace gpulab::gui
