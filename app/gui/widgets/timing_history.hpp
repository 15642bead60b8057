// Every run the Timings panel received, as a table model, and its CSV form.
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
    Count
  };

  using QAbstractTableModel::QAbstractTableModel;

  void append(const RunTiming& run);
  void clear();
  const std::vector<RunTiming>& runs() const noexcept { return runs_; }

  /// The CSV header line (no newline):
  /// time,operation,image,cpu_ms,cpu_threads,gpu_upload_ms,gpu_compute_ms,gpu_download_ms,gpu_total_ms,speedup_compute,speedup_end_to_end
  static QString csvHeader();
  /// Header and one line per run, oldest first, "\n"-terminated; missing values are empty fields,
  /// numbers in full precision with '.' as the decimal point, text quoted when it needs to be.
  QString toCsv() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<RunTiming> runs_;
};

}  // namespace gpulab::gui
