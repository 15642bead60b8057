#include "widgets/timings_panel.hpp"

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "widgets/timing_bars.hpp"
#include "widgets/timing_history.hpp"

namespace gpulab::gui {

TimingsPanel::TimingsPanel(QWidget* parent)
    : QWidget(parent),
      bars_(new TimingBars),
      model_(new TimingHistoryModel(this)),
      table_(new QTableView),
      splitter_(new QSplitter(Qt::Horizontal)),
      exportButton_(new QPushButton(tr("Export CSV..."))),
      clearButton_(new QPushButton(tr("Clear"))) {
  table_->setModel(model_);
  table_->setObjectName(QStringLiteral("timingHistory"));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  const int digits = table_->fontMetrics().horizontalAdvance(QStringLiteral("000.00 ms")) + 10;
  table_->setColumnWidth(TimingHistoryModel::Time,
                         table_->fontMetrics().horizontalAdvance(QStringLiteral("00:00:00")) + 16);
  table_->setColumnWidth(TimingHistoryModel::Operation, 130);
  table_->setColumnWidth(TimingHistoryModel::Image, 112);
  for (int c : {TimingHistoryModel::CpuMs, TimingHistoryModel::UploadMs, TimingHistoryModel::ComputeMs,
                TimingHistoryModel::DownloadMs, TimingHistoryModel::GpuTotalMs}) {
    const QString header = model_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    table_->setColumnWidth(c, std::max(digits, table_->fontMetrics().horizontalAdvance(header) + 14));
  }
  table_->setColumnWidth(TimingHistoryModel::CpuThreads, table_->fontMetrics().horizontalAdvance(tr("Threads")) + 14);
  table_->setColumnWidth(TimingHistoryModel::Speedup, table_->fontMetrics().horizontalAdvance(tr("Speedup")) + 14);
  table_->setColumnHidden(TimingHistoryModel::Rate, true);  // until a run has a GPU rate

  exportButton_->setObjectName(QStringLiteral("exportCsv"));
  exportButton_->setEnabled(false);
  clearButton_->setEnabled(false);
  exportButton_->setToolTip(tr("Save every run in this table as a CSV file"));

  auto* historyBox = new QWidget;
  auto* historyLayout = new QVBoxLayout(historyBox);
  historyLayout->setContentsMargins(0, 0, 0, 0);
  historyLayout->setSpacing(6);
  auto* buttons = new QHBoxLayout;
  auto* caption = new QLabel(tr("History"));
  QFont captionFont = caption->font();
  captionFont.setBold(true);
  caption->setFont(captionFont);
  buttons->addWidget(caption);
  buttons->addStretch();
  buttons->addWidget(clearButton_);
  buttons->addWidget(exportButton_);
  historyLayout->addLayout(buttons);
  historyLayout->addWidget(table_);

  splitter_->addWidget(bars_);
  splitter_->addWidget(historyBox);
  splitter_->setChildrenCollapsible(false);
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 3);
  splitter_->setSizes({440, 960});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 6);
  layout->addWidget(splitter_);

  connect(exportButton_, &QPushButton::clicked, this, &TimingsPanel::exportWithDialog);
  connect(clearButton_, &QPushButton::clicked, this, &TimingsPanel::clear);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (current.isValid()) bars_->setRun(model_->runs()[static_cast<std::size_t>(current.row())]);
  });
}

void TimingsPanel::addRun(const RunTiming& run) {
  RunTiming stamped = run;
  if (!stamped.when.isValid()) stamped.when = QDateTime::currentDateTime();
  model_->append(stamped);
  if (stamped.measurement.gpuRate()) table_->setColumnHidden(TimingHistoryModel::Rate, false);
  bars_->setRun(stamped);
  table_->scrollToBottom();
  exportButton_->setEnabled(true);
  clearButton_->setEnabled(true);
  emit runAdded(stamped);
}

void TimingsPanel::clear() {
  model_->clear();
  bars_->clear();
  table_->setColumnHidden(TimingHistoryModel::Rate, true);
  exportButton_->setEnabled(false);
  clearButton_->setEnabled(false);
}

bool TimingsPanel::exportCsv(const QString& path, QString* error) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = tr("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  file.write(model_->toCsv().toUtf8());
  if (!file.commit()) {
    if (error) *error = tr("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

void TimingsPanel::setOrientation(Qt::Orientation orientation) { splitter_->setOrientation(orientation); }

void TimingsPanel::exportWithDialog() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export timings"), dir + QStringLiteral("/gpulab-timings.csv"), tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportCsv(path, &error))
    QMessageBox::warning(this, tr("Export timings"), tr("Could not export: %1.").arg(error));
}

}  // namespace gpulab::gui
