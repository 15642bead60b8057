// Every run the Timings panel received, as a table model, and its CSV form (the engine's record
// columns, gpulab::csvHeader / toCsvRow, after the time each run arrived).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "widgets/run_timing.hpp"

namespace gpulab::gui {

class TimingHistoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    Time,
    Operation,
    Image,
    CpuMs,
    CpuThreads,
    UploadMs,
    ComputeMs,
    DownloadMs,
    GpuTotalMs,
    Speedup,
    Rate,
    Count
  };

  using QAbstractTableModel::QAbstractTableModel;

  void append(const RunTiming& run);
  void clear();
  const std::vector<RunTiming>& runs() const noexcept { return runs_; }

  /// The CSV header line (no newline): "time," then gpulab::csvHeader() (version, operation,
  /// description, method, ..., cpu_ms, upload_ms, compute_ms, download_ms, ..., max_abs_diff).
  static QString csvHeader();
  /// Header and one line per run, oldest first, "\n"-terminated: the ISO time, then
  /// gpulab::toCsvRow of its record (missing values empty, text quoted when it needs to be).
  QString toCsv() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<RunTiming> runs_;
};

}  // namespace gpulab::gui
