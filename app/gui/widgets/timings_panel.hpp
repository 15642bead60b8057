// The Timings dock: the latest run as bars (TimingBars) and every run in a history table that
// exports to CSV. Operations report here through addRun() with the record the engine's harness
// returned; selecting a row shows that run's bars.
//
//   gpulab::MeasureResult result = gpulab::measure(*op, photo, setup, gpulab::MeasurePolicy::interactive());
//   services.timings.addRun(result.record);     // on the GUI thread, once the job is back
#pragma once

#include <QWidget>

#include "widgets/run_timing.hpp"

class QPushButton;
class QSplitter;
class QTableView;

namespace gpulab::gui {

class TimingBars;
class TimingHistoryModel;

class TimingsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TimingsPanel(QWidget* parent = nullptr);

  /// Shows `run` as the latest and appends it to the history (stamping `when` if it is unset).
  void addRun(const RunTiming& run);
  void addRun(const gpulab::Measurement& measurement) { addRun(RunTiming{measurement, {}}); }
  void clear();

  const TimingHistoryModel& history() const noexcept { return *model_; }
  const TimingBars& bars() const noexcept { return *bars_; }
  /// Writes the history as CSV (TimingHistoryModel::toCsv). False with the reason in `error`.
  bool exportCsv(const QString& path, QString* error = nullptr) const;

  /// Bars beside the table (a wide dock at the bottom) or above it (a tall dock at the side).
  void setOrientation(Qt::Orientation orientation);

 signals:
  void runAdded(const gpulab::gui::RunTiming& run);

 private:
  void exportWithDialog();

  TimingBars* bars_;
  TimingHistoryModel* model_;
  QTableView* table_;
  QSplitter* splitter_;
  QPushButton* exportButton_;
  QPushButton* clearButton_;
};

}  // namespace gpulab::gui
