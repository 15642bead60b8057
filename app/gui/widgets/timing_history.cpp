#include "widgets/timing_history.hpp"

#include <QStringList>
#include <cmath>
#include <iterator>

namespace gpulab::gui {

namespace {

QVariant msCell(std::optional<double> v) { return v ? QVariant(formatMs(*v)) : QVariant(); }

/// A column's title and, for the measured ones, what it measures.
struct ColumnText {
  const char* title;
  const char* toolTip;
};

/// In the order of TimingHistoryModel::Column.
constexpr ColumnText kColumns[] = {
    {QT_TR_NOOP("Time"), nullptr},
    {QT_TR_NOOP("Operation"), nullptr},
    {QT_TR_NOOP("Image"), nullptr},
    {QT_TR_NOOP("CPU"), QT_TR_NOOP("CPU baseline (OpenCV), median")},
    {QT_TR_NOOP("Threads"), nullptr},
    {QT_TR_NOOP("Upload"), nullptr},
    {QT_TR_NOOP("GPU compute"), QT_TR_NOOP("GPU kernels alone, median (CUDA events)")},
    {QT_TR_NOOP("Download"), nullptr},
    {QT_TR_NOOP("GPU total"), QT_TR_NOOP("GPU end to end: upload + compute + download")},
    {QT_TR_NOOP("Speedup"), QT_TR_NOOP("CPU time / GPU compute time")},
    {QT_TR_NOOP("GPU rate"), QT_TR_NOOP("GPU compute on the least work the operation must do: the share of the "
                                        "ceiling measured for it, and the rate")},
};
static_assert(std::size(kColumns) == TimingHistoryModel::Count);

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
  return QStringLiteral("time,") + QString::fromStdString(gpulab::csvHeader());
}

QString TimingHistoryModel::toCsv() const {
  QString out = csvHeader() + QLatin1Char('\n');
  for (const RunTiming& r : runs_)
    out += r.when.toString(Qt::ISODateWithMs) + QLatin1Char(',') +
           QString::fromStdString(gpulab::toCsvRow(r.measurement)) + QLatin1Char('\n');
  return out;
}

int TimingHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int TimingHistoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Count; }

QVariant TimingHistoryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RunTiming& r = runs_[static_cast<std::size_t>(index.row())];
  const gpulab::Measurement& m = r.measurement;
  if (role == Qt::TextAlignmentRole) {
    const bool text =
        index.column() == Operation || index.column() == Image || index.column() == Time || index.column() == Rate;
    return QVariant::fromValue(Qt::AlignVCenter | (text ? Qt::AlignLeft : Qt::AlignRight));
  }
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case Operation: {
        QStringList lines{QString::fromStdString(m.description)};
        for (const auto& [name, value] : m.params)
          lines << QStringLiteral("%1 = %2").arg(QString::fromStdString(name), QString::fromStdString(value));
        if (m.gpu) lines << tr("GPU: %1").arg(QString::fromStdString(m.gpu->deviceName));
        if (!m.gpuSkipped.empty()) lines << tr("GPU not measured: %1").arg(QString::fromStdString(m.gpuSkipped));
        if (m.maxAbsDiff) lines << tr("max |GPU - CPU| %1").arg(*m.maxAbsDiff, 0, 'g', 3);
        return lines.join(QLatin1Char('\n'));
      }
      case Speedup:
        if (auto e2e = m.speedupEndToEnd())
          return tr("End to end, with upload and download: %1").arg(formatSpeedup(*e2e));
        return {};
      case Rate:
        if (!m.gpuRate()) return {};
        return m.ceiling ? rateText(m) + QStringLiteral("\n") +
                               QString::fromStdString(m.ceiling->name + ": " + m.ceiling->how)
                         : rateText(m);
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Time:
      return r.when.toString(QStringLiteral("HH:mm:ss"));
    case Operation:
      return operationText(m);
    case Image:
      return imageText(m);
    case CpuMs:
      return msCell(cpuMs(m));
    case CpuThreads:
      return m.cpu ? QVariant(m.cpu->threads) : QVariant();
    case UploadMs:
      return msCell(uploadMs(m));
    case ComputeMs:
      return msCell(computeMs(m));
    case DownloadMs:
      return msCell(downloadMs(m));
    case GpuTotalMs:
      return msCell(gpuTotalMs(m));
    case Speedup: {
      const auto s = m.speedup();
      return s ? QVariant(formatSpeedup(*s)) : QVariant();
    }
    case Rate: {
      const QString rate = rateText(m, true);
      return rate.isEmpty() ? QVariant() : QVariant(rate);
    }
    default:
      return {};
  }
}

QVariant TimingHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= Count) return {};
  const ColumnText& column = kColumns[section];
  if (role == Qt::DisplayRole) return tr(column.title);
  if (role == Qt::ToolTipRole && column.toolTip != nullptr) return tr(column.toolTip);
  return {};
}

}  // namespace gpulab::gui
