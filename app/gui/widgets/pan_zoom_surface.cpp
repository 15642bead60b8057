#include "widgets/pan_zoom_surface.hpp"

#include <QMouseEvent>
#include <QWheelEvent>
#include <cmath>
#include <utility>

namespace gpulab::gui {

PanZoomSurface::PanZoomSurface(double wheelStep, QWidget* parent) : QWidget(parent), wheelStep_(wheelStep) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(160, 120);
}

bool PanZoomSurface::takesDrag(QPointF, Qt::KeyboardModifiers) { return false; }
void PanZoomSurface::dragTo(QPointF) {}
void PanZoomSurface::dragEnded(QPointF) {}
void PanZoomSurface::hovered(std::optional<QPointF>) {}

void PanZoomSurface::setIdleCursor(Qt::CursorShape shape) {
  idleCursor_ = shape;
  if (!dragging()) showIdleCursor();
}

void PanZoomSurface::showIdleCursor() {
  if (idleCursor_)
    setCursor(*idleCursor_);
  else
    unsetCursor();
}

void PanZoomSurface::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;  // 120 units per notch of a classic wheel
  if (notches == 0 || !navigable()) return;
  zoomAbout(event->position(), std::pow(wheelStep_, notches));
  event->accept();
}

void PanZoomSurface::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  if (takesDrag(event->position(), event->modifiers())) {
    drag_ = Drag::Taken;
  } else if (navigable()) {
    drag_ = Drag::Pan;
    dragLast_ = event->position();
    setCursor(Qt::ClosedHandCursor);
  }
}

void PanZoomSurface::mouseMoveEvent(QMouseEvent* event) {
  const QPointF point = event->position();
  mouse_ = point;
  if (drag_ == Drag::Taken) {
    dragTo(point);
  } else if (drag_ == Drag::Pan) {
    const QPointF delta = point - dragLast_;
    dragLast_ = point;
    if (!delta.isNull()) panBy(delta);
  }
  hovered(point);
}

void PanZoomSurface::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || drag_ == Drag::None) return QWidget::mouseReleaseEvent(event);
  const Drag ended = std::exchange(drag_, Drag::None);
  showIdleCursor();
  if (ended == Drag::Taken) dragEnded(event->position());
}

void PanZoomSurface::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && navigable()) doubleClickedAt(event->position());
}

void PanZoomSurface::leaveEvent(QEvent* event) {
  mouse_.reset();
  hovered(std::nullopt);
  QWidget::leaveEvent(event);
}

}  // namespace gpulab::gui
