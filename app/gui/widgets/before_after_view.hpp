// An ImageView that compares a filter's result with the original: a split line across the picture
// (original on the left, result on the right; drag the line or its handle), or either image alone.
// Space toggles between the original alone and the previous view. Zoom and pan are ImageView's and
// act on both images together; without a result it shows the original like an ImageView.
// Two tools draw on the photo: a region (the Region tool, or a drag with Shift) that the Filters tab
// limits its filter to, and a line (the Line tool, or a drag with Ctrl) whose profile the Histogram
// panel plots. Esc clears the region and goes back to panning.
#pragma once

#include <QImage>
#include <QLineF>
#include <QPoint>
#include <QRect>
#include <optional>

#include "widgets/image_view.hpp"

namespace gpulab::gui {

class BeforeAfterView : public ImageView {
  Q_OBJECT

 public:
  enum class Mode { Split, Before, After };
  Q_ENUM(Mode)
  /// What a plain left-button drag does: pan (Navigate), draw a region, or draw a profile line.
  enum class Tool { Navigate, Region, Line };
  Q_ENUM(Tool)

  explicit BeforeAfterView(QWidget* parent = nullptr);

  /// The original. Without a result it is what the view shows.
  void setBefore(const QImage& before);
  /// The result beside the original. `beforeOffset` is where the original's top-left pixel lies in
  /// the result's pixels: (0, 0) when they have the same size, positive for a larger ('full')
  /// result, negative for a smaller ('valid') one. `label` names it on screen ("Result (GPU)").
  void setResult(const QImage& after, QPoint beforeOffset = {}, const QString& label = {});
  /// Back to the original alone.
  void clearResult();
  bool hasResult() const noexcept { return !after_.isNull(); }
  const QImage& before() const noexcept { return before_; }
  const QImage& after() const noexcept { return after_; }

  Mode mode() const noexcept { return mode_; }
  void setMode(Mode mode);
  /// Space: the original alone, or back to the view before it.
  void toggleOriginal();
  /// Where the split line is, as a fraction of the widget's width (0..1).
  double splitFraction() const noexcept { return split_; }
  void setSplitFraction(double fraction);

  Tool tool() const noexcept { return tool_; }
  void setTool(Tool tool);
  /// The region in photo pixels (inside the photo, at least 1x1), if one is drawn.
  std::optional<QRect> region() const noexcept { return region_; }
  /// Sets (clipped to the photo; nothing left: cleared) or clears the region.
  void setRegion(std::optional<QRect> region);
  /// The profile line in photo coordinates (pixel (i, j) covers [i, i + 1) x [j, j + 1)), if drawn.
  std::optional<QLineF> profileLine() const noexcept { return line_; }
  void setProfileLine(std::optional<QLineF> line);

 signals:
  void modeChanged(gpulab::gui::BeforeAfterView::Mode mode);
  void toolChanged(gpulab::gui::BeforeAfterView::Tool tool);
  /// The region was drawn (when the drag ends), set or cleared.
  void regionChanged();
  /// The profile line moved (while dragging too), was set or cleared.
  void profileLineChanged();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  // A drag that starts on the split line moves it; the cursor says so over the line.
  bool takesDrag(QPointF point, Qt::KeyboardModifiers modifiers) override;
  void dragTo(QPointF point) override;
  void dragEnded(QPointF point) override;
  void hovered(std::optional<QPointF> point) override;

 private:
  bool nearSplit(QPointF point) const;
  int splitX() const;
  /// Paints the original where the result is shown, clipped to `clip` (widget coordinates).
  void paintBefore(QPainter& painter, const QRect& clip);
  void paintLabel(QPainter& painter, const QString& text, bool right);
  void paintSplit(QPainter& painter);
  void paintOverlays(QPainter& painter);
  /// Photo coordinates of a widget point, and back.
  QPointF photoPoint(QPointF widgetPoint) const;
  QPointF widgetPoint(QPointF photoPoint) const;
  QSize photoSize() const;
  QRect regionBetween(QPointF a, QPointF b) const;

  QImage before_;
  QImage after_;
  QImage beforeScaled_;  // before_ resampled for the current zoom when below 100 %
  double beforeScaledZoom_ = 0;
  QPoint beforeOffset_;
  QString afterLabel_;
  Mode mode_ = Mode::Split;
  Mode modeBeforeToggle_ = Mode::Split;
  double split_ = 0.5;

  enum class Drawing { None, Split, Region, Line };
  Tool tool_ = Tool::Navigate;
  Drawing drawing_ = Drawing::None;
  QPointF drawStart_;  // photo coordinates
  std::optional<QRect> region_;
  std::optional<QRect> draft_;  // the region while it is being drawn
  std::optional<QLineF> line_;
};

}  // namespace gpulab::gui
