// One run's timings as horizontal bars side by side: CPU, GPU upload, compute, download and total,
// on a linear axis, or a logarithmic one when the values differ by more than 30x. The speedup of the
// GPU over the CPU is stated underneath.
#pragma once

#include <QWidget>
#include <optional>

#include "widgets/run_timing.hpp"

namespace gpulab::gui {

class TimingBars : public QWidget {
  Q_OBJECT

 public:
  explicit TimingBars(QWidget* parent = nullptr);

  void setRun(const RunTiming& run);
  void clear();
  const std::optional<RunTiming>& run() const noexcept { return run_; }
  /// True when the bars of the current run use a logarithmic axis.
  bool logarithmic() const noexcept { return logarithmic_; }

  /// The ratio of the largest to the smallest value beyond which the axis turns logarithmic.
  static constexpr double kLogThreshold = 30.0;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Bar {
    QString label;
    double ms;
    QColor colour;
  };
  std::vector<Bar> bars() const;

  std::optional<RunTiming> run_;
  bool logarithmic_ = false;
};

}  // namespace gpulab::gui
