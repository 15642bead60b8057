// The Lab tab's plot: time against size on log-log axes for the CPU and every GPU implementation
// (GPU compute only as solid lines, with copies dashed), or achieved GFLOP/s / GB/s against the
// measured ceiling (grey dashes), with the sizes whose working set fits in the L2 cache shaded.
// The sizes where the GPU starts to beat the CPU are marked with a dotted vertical line in the GPU
// implementation's colour. A title names what is drawn; the legend sits under the axes so it never
// hides a curve. Painted with QPainter; grab() it for a PNG.
#pragma once

#include <QColor>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "gpulab/lab/lab.hpp"

namespace gpulab::gui {

class LabPlot : public QWidget {
  Q_OBJECT

 public:
  enum class Mode {
    Time,  ///< median ms against size, log-log
    Rate   ///< GFLOP/s or GB/s against size, log-log, with the ceiling
  };

  /// One line of the plot, as drawn (public for tests and for the legend).
  struct Series {
    QString name;
    QColor colour;
    bool dashed = false;
    std::vector<QPointF> points;  ///< (size, value), sorted by size
    /// How the legend lists it: an implementation once (its with-copies line is explained by one
    /// shared "dashed: with copies" entry), a ceiling with its value when it has one.
    QString legend;
  };

  explicit LabPlot(QWidget* parent = nullptr);

  /// Replaces what is shown. Records of several variants are kept; setVariant() picks one.
  void setData(std::vector<lab::Record> records, std::vector<lab::Crossover> crossovers);
  void clear();
  void setMode(Mode mode);
  Mode mode() const noexcept { return mode_; }
  /// The variants present in the data ("sum", "h2d", ...); empty for matmul and transpose.
  QStringList variants() const;
  void setVariant(const QString& variant);
  const QString& variant() const noexcept { return variant_; }

  /// The series the current mode and variant draw (ceiling included in Rate mode).
  std::vector<Series> series() const;
  /// The crossovers the current variant marks (compute only, GPU faster from a measured size on).
  std::vector<lab::Crossover> markedCrossovers() const;
  /// Rate mode: the size up to which GPU records of the current variant are noted "in L2" (between
  /// the last such size and the next measured one, on log axes); 0 when none is.
  double inL2UpTo() const;
  /// "Time against size (log-log)" or "GB/s against the DRAM copy ceiling", for the current data.
  QString title() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QColor colourOf(const QString& impl) const;
  QString axisLabelX() const;
  QString axisLabelY() const;
  /// What the legend lists for these lines (Series::legend), in order.
  std::vector<Series> legendEntries(const std::vector<Series>& lines) const;
  /// Rows the legend needs at `width` pixels (entries flow left to right).
  int legendRows(const std::vector<Series>& entries, int width) const;

  std::vector<lab::Record> records_;
  std::vector<lab::Crossover> crossovers_;
  Mode mode_ = Mode::Time;
  QString variant_;
};

}  // namespace gpulab::gui
