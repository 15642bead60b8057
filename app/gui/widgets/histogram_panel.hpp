// The Histogram panel: per-channel histograms of the photo and of the filter's result (one plot each,
// red/green/blue/alpha or grey curves, optionally on a log scale), the GPU and CPU times that computed
// them, the line profile of both along the line drawn on the Filters view, and an Auto levels
// button. It only draws: the Filters tab computes on the worker and hands the numbers over.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "gpulab/analysis/histogram.hpp"

class QCheckBox;
class QLabel;
class QPushButton;

namespace gpulab::gui {

/// Curves per channel over a common x axis: a histogram (filled, bars of bins) or a profile (lines).
class ChannelPlot : public QWidget {
  Q_OBJECT

 public:
  enum class Style { Histogram, Profile };
  explicit ChannelPlot(Style style, QWidget* parent = nullptr);

  /// values[c][i]: channel c at x index i. `xFrom` / `xTo` label the ends of the x axis.
  void setSeries(std::vector<std::vector<double>> values, const QString& xFrom, const QString& xTo);
  void setSecondary(std::vector<std::vector<double>> values);  ///< drawn dashed (the result's profile)
  void clear();
  void setTitle(const QString& title);
  void setLogScale(bool on);
  bool logScale() const noexcept { return log_; }
  bool empty() const noexcept { return values_.empty(); }
  const std::vector<std::vector<double>>& series() const noexcept { return values_; }
  QSize sizeHint() const override { return {300, 120}; }
  QSize minimumSizeHint() const override { return {160, 80}; }

  /// The colour of channel c of n (grey for one channel; red, green, blue, then white for alpha).
  static QColor channelColour(int c, int n);

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  Style style_;
  QString title_;
  QString xFrom_, xTo_;
  bool log_ = false;
  std::vector<std::vector<double>> values_;
  std::vector<std::vector<double>> secondary_;
};

class HistogramPanel : public QWidget {
  Q_OBJECT

 public:
  /// One image's histogram with the times it took.
  struct Entry {
    gpulab::Histogram histogram;
    std::optional<double> gpuMs;  ///< GPU compute, CUDA events, median
    std::optional<double> cpuMs;  ///< OpenCV calcHist on all cores, median
    int cpuThreads = 0;
    QString gpuNote;  ///< why there is no GPU time
  };

  explicit HistogramPanel(QWidget* parent = nullptr);

  void setPhoto(const std::optional<Entry>& entry);
  void setResult(const std::optional<Entry>& entry);
  /// The profiles along the drawn line (photo, and the result when there is one); nullopt: no line.
  void setProfiles(const std::optional<gpulab::LineProfile>& photo, const std::optional<gpulab::LineProfile>& result);

  ChannelPlot& photoPlot() noexcept { return *photoPlot_; }
  ChannelPlot& resultPlot() noexcept { return *resultPlot_; }
  ChannelPlot& profilePlot() noexcept { return *profilePlot_; }
  QString photoTimeText() const;
  QString resultTimeText() const;
  void setLogScale(bool on);
  bool logScale() const noexcept;

 signals:
  void autoLevelsRequested();

 private:
  static QString timeText(const std::optional<Entry>& entry);
  static std::vector<std::vector<double>> curves(const gpulab::Histogram& h);

  ChannelPlot* photoPlot_ = nullptr;
  ChannelPlot* resultPlot_ = nullptr;
  ChannelPlot* profilePlot_ = nullptr;
  QLabel* photoTime_ = nullptr;
  QLabel* resultTime_ = nullptr;
  QLabel* profileHint_ = nullptr;
  QCheckBox* log_ = nullptr;
  QPushButton* autoLevels_ = nullptr;
};

}  // namespace gpulab::gui
