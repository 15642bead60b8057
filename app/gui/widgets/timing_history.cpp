#include "widgets/timing_history.hpp"

#include <QStringList>
#include <cmath>

namespace gpulab::gui {

namespace {

QString csvNumber(std::optional<double> v) { return v ? QString::number(*v, 'g', 10) : QString(); }

QString csvText(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
    return text;
  QString quoted = text;
  quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QVariant msCell(std::optional<double> v) { return v ? QVariant(formatMs(*v)) : QVariant(); }

}  // namespace

void TimingHistoryModel::append(const RunTiming& run) {
  const int row = static_cast<int>(runs_.size());
  beginInsertRows({}, row, row);
  runs_.push_back(run);
  endInsertRows();
}

void TimingHistoryModel::clear() {
  beginResetModel();
  runs_.clear();
  endResetModel();
}

QString TimingHistoryModel::csvHeader() {
  return QStringLiteral(
      "time,operation,image,cpu_ms,cpu_threads,gpu_upload_ms,gpu_compute_ms,gpu_download_ms,gpu_total_ms,"
      "speedup_compute,speedup_end_to_end");
}

QString TimingHistoryModel::toCsv() const {
  QString out = csvHeader() + QLatin1Char('\n');
  for (const RunTiming& r : runs_) {
    const QStringList fields = {
        r.when.toString(Qt::ISODateWithMs),
        csvText(r.operation),
        csvText(r.image),
        csvNumber(r.cpuMs),
        r.cpuMs ? QString::number(r.cpuThreads) : QString(),
        csvNumber(r.uploadMs),
        csvNumber(r.computeMs),
        csvNumber(r.downloadMs),
        csvNumber(r.gpuTotalMs()),
        csvNumber(r.speedupCompute()),
        csvNumber(r.speedupEndToEnd()),
    };
    out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

int TimingHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int TimingHistoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Count; }

QVariant TimingHistoryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RunTiming& r = runs_[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) {
    const bool text = index.column() == Operation || index.column() == Image || index.column() == Time;
    return QVariant::fromValue(Qt::AlignVCenter | (text ? Qt::AlignLeft : Qt::AlignRight));
  }
  if (role == Qt::ToolTipRole && index.column() == Speedup) {
    if (auto e2e = r.speedupEndToEnd()) return tr("End to end, with upload and download: %1").arg(formatSpeedup(*e2e));
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Time:
      return r.when.toString(QStringLiteral("HH:mm:ss"));
    case Operation:
      return r.operation;
    case Image:
      return r.image;
    case CpuMs:
      return msCell(r.cpuMs);
    case CpuThreads:
      return r.cpuMs ? QVariant(r.cpuThreads) : QVariant();
    case UploadMs:
      return msCell(r.uploadMs);
    case ComputeMs:
      return msCell(r.computeMs);
    case DownloadMs:
      return msCell(r.downloadMs);
    case GpuTotalMs:
      return msCell(r.gpuTotalMs());
    case Speedup: {
      const auto s = r.speedupCompute();
      return s ? QVariant(formatSpeedup(*s)) : QVariant();
    }
    default:
      return {};
  }
}

QVariant TimingHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case CpuMs:
        return tr("CPU baseline (OpenCV), median");
      case ComputeMs:
        return tr("GPU kernels alone, median (CUDA events)");
      case GpuTotalMs:
        return tr("GPU end to end: upload + compute + download");
      case Speedup:
        return tr("CPU time / GPU compute time");
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case Time:
      return tr("Time");
    case Operation:
      return tr("Operation");
    case Image:
      return tr("Image");
    case CpuMs:
      return tr("CPU");
    case CpuThreads:
      return tr("Threads");
    case UploadMs:
      return tr("Upload");
    case ComputeMs:
      return tr("GPU compute");
    case DownloadMs:
      return tr("Download");
    case GpuTotalMs:
      return tr("GPU total");
    case Speedup:
      return tr("Speedup");
    default:
      return {};
  }
}

}  // namespace gpulab::gui
