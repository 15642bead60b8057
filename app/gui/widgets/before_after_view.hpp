// An ImageView that compares a filter's result with the original: a split line across the picture
// (original on the left, result on the right; drag the line or its handle), or either image alone.
// Space toggles between the original alone and the previous view. Zoom and pan are ImageView's and
// act on both images together; without a result it shows the original like an ImageView.
#pragma once

#include <QImage>
#include <QPoint>

#include "widgets/image_view.hpp"

namespace gpulab::gui {

class BeforeAfterView : public ImageView {
  Q_OBJECT

 public:
  enum class Mode { Split, Before, After };
  Q_ENUM(Mode)

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

 signals:
  void modeChanged(gpulab::gui::BeforeAfterView::Mode mode);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  // A drag that starts on the split line moves it; the cursor says so over the line.
  bool takesDrag(QPointF point, Qt::KeyboardModifiers modifiers) override;
  void dragTo(QPointF point) override;
  void hovered(std::optional<QPointF> point) override;

 private:
  bool nearSplit(QPointF point) const;
  int splitX() const;
  /// Paints the original where the result is shown, clipped to `clip` (widget coordinates).
  void paintBefore(QPainter& painter, const QRect& clip);
  void paintLabel(QPainter& painter, const QString& text, bool right);

  QImage before_;
  QImage after_;
  QImage beforeScaled_;  // before_ resampled for the current zoom when below 100 %
  double beforeScaledZoom_ = 0;
  QPoint beforeOffset_;
  QString afterLabel_;
  Mode mode_ = Mode::Split;
  Mode modeBeforeToggle_ = Mode::Split;
  double split_ = 0.5;
};

}  // namespace gpulab::gui
