#include "lab/lab_tab.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPixmap>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "gpulab/lab/lab.hpp"
#include "lab/course_panels.hpp"
#include "lab/custom_kernel_panel.hpp"
#include "lab/lab_plot.hpp"
#include "widgets/control_builders.hpp"

namespace gpulab::gui {

/// Records measured so far by the running sweep: the worker appends, the GUI thread takes.
struct LabTab::Partial {
  std::mutex mutex;
  std::vector<lab::Record> records;
};

namespace {

constexpr lab::Experiment kExperiments[] = {lab::Experiment::Matmul, lab::Experiment::Transpose,
                                            lab::Experiment::Transfer, lab::Experiment::Elementwise,
                                            lab::Experiment::Reduce};

QString experimentTitle(lab::Experiment e) {
  switch (e) {
    case lab::Experiment::Matmul:
      return LabTab::tr("Matrix product");
    case lab::Experiment::Transpose:
      return LabTab::tr("Transpose");
    case lab::Experiment::Transfer:
      return LabTab::tr("Transfers");
    case lab::Experiment::Elementwise:
      return LabTab::tr("Elementwise");
    case lab::Experiment::Reduce:
      return LabTab::tr("Reduction");
  }
  return {};
}

QString defaultSizesText(lab::Experiment e) {
  switch (e) {
    case lab::Experiment::Matmul:
      return QStringLiteral("32..4096");
    case lab::Experiment::Transpose:
      return QStringLiteral("256..8192");
    case lab::Experiment::Transfer:
      return QStringLiteral("4K..256M");
    case lab::Experiment::Elementwise:
    case lab::Experiment::Reduce:
      return QStringLiteral("1K..64M");
  }
  return {};
}

QString sizesText(const std::vector<std::int64_t>& sizes) {
  QStringList parts;
  for (std::int64_t s : sizes) parts << QString::number(s);
  return parts.join(QLatin1Char('x'));
}

QString number(double v) { return QString::number(v, 'g', 4); }

void checkAll(QListWidget* list, const std::function<bool(const QString&)>& checked) {
  for (int i = 0; i < list->count(); ++i) {
    QListWidgetItem* item = list->item(i);
    item->setCheckState(checked(item->text()) && (item->flags() & Qt::ItemIsEnabled) ? Qt::Checked : Qt::Unchecked);
  }
}

QStringList checkedNames(const QListWidget* list) {
  QStringList names;
  for (int i = 0; i < list->count(); ++i)
    if (list->item(i)->checkState() == Qt::Checked) names << list->item(i)->text();
  return names;
}

}  // namespace

LabTab::LabTab(TabServices& services, QWidget* parent) : QWidget(parent), services_(services) {
  buildUi();
  experimentChanged();
  // Whether the worker has a GPU decides which implementations can be picked.
  services_.engine.submit(
      this,
      [](WorkerContext& ctx) {
        return std::make_pair(ctx.devices().available(), QString::fromStdString(ctx.devices().status));
      },
      [this](std::pair<bool, QString> device) {
        deviceKnown_ = true;
        hasGpu_ = device.first;
        deviceStatus_ = device.second;
        updateImplAvailability();
        if (std::exchange(runPending_, false)) run();
      });
}

LabTab::~LabTab() { job_.cancel(); }

// ---------------------------------------------------------------------------------------------
// Layout

void LabTab::buildUi() {
  experiment_ = named(new QComboBox, "labExperiment");
  for (lab::Experiment e : kExperiments) experiment_->addItem(experimentTitle(e), static_cast<int>(e));
  sizes_ = named(new QLineEdit, "labSizes",
                 tr("Sizes of the sweep: 32,64,100 or 32..4096 (doubling); 64K, 1M, 1G;\n"
                    "matmul MxNxK, transpose RxC. Transfers in bytes, elementwise and reductions in elements."));
  dtype_ = new QComboBox;
  addItems<lab::DType>(dtype_,
                       {{QStringLiteral("float32"), lab::DType::F32}, {QStringLiteral("float64"), lab::DType::F64}});
  impls_ = named(new QListWidget, "labImpls");
  impls_->setMaximumHeight(130);
  variantsLabel_ = new QLabel(tr("Variants"));
  variants_ = new QListWidget;
  variants_->setMaximumHeight(110);
  withCopies_ = new QCheckBox(tr("Also time upload + compute + download as one"));
  check_ = new QCheckBox(tr("Check accuracy against float64 (slow when large)"));
  reps_ = new QSpinBox;
  reps_->setRange(1, 1000);
  reps_->setValue(10);
  reps_->setToolTip(tr("Timed runs per measurement after 2 warm-up runs; the median is shown"));
  run_ = named(new QPushButton(tr("Run")), "labRun");
  run_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setTextVisible(false);
  status_ = named(new QLabel, "labStatus");
  status_->setWordWrap(true);

  auto* form = new QFormLayout;
  form->addRow(tr("Experiment"), experiment_);
  form->addRow(tr("Sizes"), sizes_);
  form->addRow(tr("Type"), dtype_);
  form->addRow(tr("Repetitions"), reps_);
  auto* controls = new QWidget;
  auto* controlsLayout = new QVBoxLayout(controls);
  controlsLayout->addLayout(form);
  controlsLayout->addWidget(new QLabel(tr("Implementations")));
  controlsLayout->addWidget(impls_);
  controlsLayout->addWidget(variantsLabel_);
  controlsLayout->addWidget(variants_);
  controlsLayout->addWidget(withCopies_);
  controlsLayout->addWidget(check_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  controlsLayout->addLayout(buttons);
  controlsLayout->addWidget(progress_);
  controlsLayout->addWidget(status_);
  controlsLayout->addStretch(1);
  controls->setMaximumWidth(360);

  plotVariant_ = named(new QComboBox, "labPlotVariant", tr("The variant both plots show"));
  plotVariant_->setVisible(false);
  exportCsv_ = new QPushButton(tr("Export CSV..."));
  savePlot_ = new QPushButton(tr("Save plots PNG..."));
  plotVariantLabel_ = new QLabel(tr("Plotted variant"));
  plotVariantLabel_->setVisible(false);
  auto* plotBar = new QHBoxLayout;
  plotBar->addWidget(plotVariantLabel_);
  plotBar->addWidget(plotVariant_);
  plotBar->addStretch(1);
  plotBar->addWidget(savePlot_);
  plotBar->addWidget(exportCsv_);
  plot_ = new LabPlot;
  plot_->setMode(LabPlot::Mode::Time);
  ratePlot_ = new LabPlot;
  ratePlot_->setObjectName(QStringLiteral("labRatePlot"));
  ratePlot_->setMode(LabPlot::Mode::Rate);
  plots_ = new QWidget;
  auto* plotsLayout = new QHBoxLayout(plots_);
  plotsLayout->setContentsMargins(0, 0, 0, 0);
  plotsLayout->setSpacing(4);
  plotsLayout->addWidget(plot_, 1);
  plotsLayout->addWidget(ratePlot_, 1);
  crossoverLabel_ = new QLabel;
  crossoverLabel_->setObjectName(QStringLiteral("labCrossovers"));
  crossoverLabel_->setWordWrap(true);
  crossoverLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* plotPane = new QWidget;
  auto* plotLayout = new QVBoxLayout(plotPane);
  plotLayout->setContentsMargins(0, 0, 0, 0);
  plotLayout->addLayout(plotBar);
  plotLayout->addWidget(plots_, 1);
  plotLayout->addWidget(crossoverLabel_);

  table_ = new QTableWidget;
  table_->setObjectName(QStringLiteral("labTable"));
  const QStringList headers = {
      tr("Variant"), tr("Implementation"), tr("Type"),        tr("Size"),          tr("Median ms"), tr("Min ms"),
      tr("Max ms"),  tr("Upload ms"),      tr("Download ms"), tr("End to end ms"), tr("Rate"),      tr("% of ceiling"),
      tr("Note"),    tr("Ceiling"),        tr("Rel. error"),  tr("Parameters"),    tr("Device")};
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // Room for a sweep's rows: about eight lines with the header.
  table_->setMinimumHeight(table_->verticalHeader()->defaultSectionSize() * 8 +
                           table_->horizontalHeader()->sizeHint().height());

  auto* results = new QSplitter(Qt::Vertical);
  results->addWidget(plotPane);
  results->addWidget(table_);
  results->setStretchFactor(0, 3);
  results->setStretchFactor(1, 2);
  results->setSizes({600, 400});
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(controls);
  split->addWidget(results);
  split->setStretchFactor(1, 1);
  // The sweeps, then the single experiments of the course (custom kernels, memory pool, timing).
  auto* pages = named(new QTabWidget, "labPages");
  pages->addTab(split, tr("Sweeps"));
  pages->addTab(named(new CustomKernelPanel(services_), "labCustomKernel"), tr("Custom kernel"));
  pages->addTab(named(new PoolPanel(services_), "labPool"), tr("Memory pool"));
  pages->addTab(named(new TimingPanel(services_), "labTiming"), tr("Timing pitfalls"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(pages);

  connect(experiment_, &QComboBox::currentIndexChanged, this, &LabTab::experimentChanged);
  connect(run_, &QPushButton::clicked, this, &LabTab::run);
  connect(cancel_, &QPushButton::clicked, this, &LabTab::cancel);
  connect(plotVariant_, &QComboBox::currentTextChanged, this, [this](const QString& v) {
    if (v.isEmpty()) return;
    plot_->setVariant(v);
    ratePlot_->setVariant(v);
    showCrossovers();
  });
  connect(exportCsv_, &QPushButton::clicked, this, [this] {
    saveWithDialog(tr("Export measurements"), QStringLiteral("lab.csv"), tr("CSV (*.csv)"), &LabTab::exportCsv);
  });
  connect(savePlot_, &QPushButton::clicked, this, [this] {
    saveWithDialog(tr("Save plots"), QStringLiteral("lab.png"), tr("PNG image (*.png)"), &LabTab::savePlot);
  });
}

// ---------------------------------------------------------------------------------------------
// Controls

void LabTab::experimentChanged() {
  const lab::Experiment e = experiment();
  sizes_->setText(defaultSizesText(e));
  impls_->clear();
  for (const std::string& name : lab::implNames(e)) {
    auto* item = new QListWidgetItem(QString::fromStdString(name), impls_);
    item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
    item->setCheckState(Qt::Checked);
  }
  variants_->clear();
  for (const std::string& name : lab::variantNames(e)) {
    auto* item = new QListWidgetItem(QString::fromStdString(name), variants_);
    item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
    item->setCheckState(Qt::Checked);
  }
  variantsLabel_->setVisible(variants_->count() > 0);
  variants_->setVisible(variants_->count() > 0);
  check_->setVisible(e == lab::Experiment::Matmul);
  withCopies_->setVisible(e != lab::Experiment::Transfer);
  updateImplAvailability();
}

void LabTab::updateImplAvailability() {
  if (!deviceKnown_) return;
  const lab::Experiment e = experiment();
  for (int i = 0; i < impls_->count(); ++i) {
    QListWidgetItem* item = impls_->item(i);
    const bool usable = hasGpu_ || !lab::isGpuImpl(e, item->text().toStdString());
    item->setFlags(usable ? (Qt::ItemIsUserCheckable | Qt::ItemIsEnabled) : Qt::ItemIsUserCheckable);
    if (!usable) item->setCheckState(Qt::Unchecked);
  }
  if (!hasGpu_ && !running())
    setStatus(e == lab::Experiment::Transfer ? tr("%1; transfers need a CUDA device.").arg(deviceStatus_)
                                             : tr("%1; the CPU implementations run alone.").arg(deviceStatus_),
              false);
}

void LabTab::setExperiment(lab::Experiment e) {
  experiment_->setCurrentIndex(experiment_->findData(static_cast<int>(e)));
}

lab::Experiment LabTab::experiment() const { return static_cast<lab::Experiment>(experiment_->currentData().toInt()); }

void LabTab::setSizesText(const QString& sizes) { sizes_->setText(sizes); }

void LabTab::setDType(lab::DType dtype) { dtype_->setCurrentIndex(dtype_->findData(static_cast<int>(dtype))); }

void LabTab::setReps(int reps) { reps_->setValue(reps); }

void LabTab::setWithCopies(bool on) { withCopies_->setChecked(on); }

void LabTab::setSelectedImpls(const QStringList& impls) {
  checkAll(impls_, [&](const QString& name) { return impls.contains(name); });
}

QStringList LabTab::selectedImpls() const { return checkedNames(impls_); }

void LabTab::setSelectedVariants(const QStringList& variants) {
  checkAll(variants_, [&](const QString& name) { return variants.contains(name); });
}

void LabTab::setPlotVariant(const QString& variant) {
  if (plotVariant_->findText(variant) >= 0) plotVariant_->setCurrentText(variant);
}

// ---------------------------------------------------------------------------------------------
// Running

void LabTab::run() {
  lab::LabRequest request;
  request.experiment = experiment();
  try {
    const QString text = sizes_->text().trimmed();
    if (!text.isEmpty()) request.points = lab::parseSizeList(text.toStdString());
  } catch (const std::invalid_argument& e) {
    refuse(QString::fromStdString(e.what()));
    return;
  }
  for (const QString& impl : selectedImpls()) request.impls.push_back(impl.toStdString());
  if (request.impls.empty()) {
    const bool nothingRunsHere = deviceKnown_ && !hasGpu_ && request.experiment == lab::Experiment::Transfer;
    refuse(nothingRunsHere ? tr("Transfers need a CUDA device: %1.").arg(deviceStatus_)
                           : tr("Choose at least one implementation."));
    return;
  }
  if (variants_->count() > 0) {
    for (const QString& v : checkedNames(variants_)) request.variants.push_back(v.toStdString());
    if (request.variants.empty()) {
      refuse(tr("Choose at least one variant."));
      return;
    }
  }
  request.dtype = static_cast<lab::DType>(dtype_->currentData().toInt());
  // isHidden, not isVisible: the options count whether or not the window is on screen yet.
  request.withCopies = !withCopies_->isHidden() && withCopies_->isChecked();
  request.check = !check_->isHidden() && check_->isChecked();
  request.reps = reps_->value();

  job_.cancel();
  lastRunFailed_ = false;
  records_.clear();
  crossovers_.clear();
  showRecords();
  auto partial = std::make_shared<Partial>();
  partial_ = partial;
  progress_->setValue(0);
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  setStatus(tr("Running %1...").arg(experimentTitle(request.experiment).toLower()), false);

  // Every callback checks that it belongs to the latest run: a run replaced by a newer one reports
  // its cancellation after the newer one started.
  auto current = [this, partial] { return partial_ == partial; };
  job_ = services_.engine.submit(
      this,
      [request, partial](WorkerContext& ctx) {
        return lab::runLab(request, ctx.cpuControl(), [partial](const lab::Record& r) {
          const std::lock_guard<std::mutex> lock(partial->mutex);
          partial->records.push_back(r);
        });
      },
      [this, current](std::vector<lab::Record> records) {
        if (!current()) return;
        records_ = std::move(records);
        {
          const std::lock_guard<std::mutex> lock(partial_->mutex);
          partial_->records.clear();
        }
        showRecords();
        finish(tr("Done: %1 measurements.").arg(records_.size()), false);
      },
      {.coalesceKey = QStringLiteral("lab"),
       .failed =
           [this, current](const QString& why) {
             if (!current()) return;
             takePartial();
             finish(why, true);
           },
       .cancelled =
           [this, current] {
             if (!current()) return;
             takePartial();
             finish(tr("Cancelled; the %1 measurements taken are kept.").arg(records_.size()), false);
           },
       .progress =
           [this, current](double fraction) {
             if (!current()) return;
             progress_->setValue(static_cast<int>(fraction * 1000));
             takePartial();
           }});
}

void LabTab::runWhenReady() {
  if (deviceKnown_)
    run();
  else
    runPending_ = true;
}

void LabTab::cancel() {
  if (running()) setStatus(tr("Cancelling after the current measurement..."), false);
  job_.cancel();
}

void LabTab::takePartial() {
  if (!partial_) return;
  std::vector<lab::Record> fresh;
  {
    const std::lock_guard<std::mutex> lock(partial_->mutex);
    fresh.swap(partial_->records);
  }
  if (fresh.empty()) return;
  records_.insert(records_.end(), fresh.begin(), fresh.end());
  showRecords();
}

void LabTab::refuse(const QString& message) {
  lastRunFailed_ = true;
  setStatus(message, true);
  emit runFinished();
}

void LabTab::finish(const QString& message, bool isError) {
  lastRunFailed_ = isError;
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  if (!isError) progress_->setValue(progress_->maximum());
  setStatus(message, isError);
  if (isError) services_.showError(message);
  emit runFinished();
}

void LabTab::setStatus(const QString& message, bool isError) {
  status_->setText(message);
  status_->setStyleSheet(isError ? QStringLiteral("color: #c0392b;") : QString());
  if (!isError && services_.showMessage) services_.showMessage(message);
}

QString LabTab::statusText() const { return status_->text(); }

// ---------------------------------------------------------------------------------------------
// Results

void LabTab::showRecords() {
  crossovers_ = lab::findCrossovers(records_);
  plot_->setData(records_, crossovers_);
  ratePlot_->setData(records_, crossovers_);
  ratePlot_->setVariant(plot_->variant());

  const QStringList variants = plot_->variants();
  {
    const QSignalBlocker block(plotVariant_);
    plotVariant_->clear();
    plotVariant_->addItems(variants);
    plotVariant_->setCurrentText(plot_->variant());
  }
  plotVariant_->setVisible(!variants.isEmpty());
  plotVariantLabel_->setVisible(!variants.isEmpty());
  table_->setColumnHidden(0, variants.isEmpty());
  showCrossovers();

  table_->setRowCount(static_cast<int>(records_.size()));
  for (int row = 0; row < static_cast<int>(records_.size()); ++row) {
    const lab::Record& r = records_[static_cast<std::size_t>(row)];
    const bool parts = r.gpu && !r.withCopies && (r.uploadMs > 0 || r.downloadMs > 0);
    const QString impl =
        QString::fromStdString(r.impl) + (r.withCopies && r.experiment != "transfer" ? tr(" + copies") : QString());
    const QStringList cells = {
        QString::fromStdString(r.variant),
        impl,
        QString::fromStdString(r.dtype),
        sizesText(r.sizes),
        number(r.medianMs),
        number(r.minMs),
        number(r.maxMs),
        parts ? number(r.uploadMs) : QString(),
        parts ? number(r.downloadMs) : QString(),
        parts ? number(r.endToEndMs()) : QString(),
        r.rate() > 0 ? number(r.rate()) + QLatin1Char(' ') + QLatin1String(r.rateUnit()) : QString(),
        r.ceiling > 0 ? QString::number(r.percentOfCeiling(), 'f', 0) + QLatin1Char('%') : QString(),
        QString::fromStdString(r.note),
        r.ceiling > 0 ? number(r.ceiling) + QLatin1Char(' ') + QString::fromStdString(r.ceilingName) : QString(),
        r.relativeError >= 0 ? QString::number(r.relativeError, 'g', 3) : QString(),
        QString::fromStdString(r.params),
        QString::fromStdString(r.device)};
    for (int col = 0; col < static_cast<int>(cells.size()); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if ((col >= 4 && col <= 11) || col == 14) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, col, item);
    }
    if (!r.ceilingHow.empty()) table_->item(row, 13)->setToolTip(QString::fromStdString(r.ceilingHow));
    if (r.note == lab::kInL2Note)
      table_->item(row, 12)->setToolTip(
          tr("The arrays of this size fit in the L2 cache together: the timed runs after the first read them from "
             "L2, so the rate can pass the DRAM ceiling."));
  }
  // Columns no record fills (copies when none were timed apart, accuracy when not checked) are hidden,
  // so the rate and its share of the ceiling stay in view.
  for (int col : {7, 8, 9, 11, 13, 14}) {
    bool any = false;
    for (int row = 0; row < table_->rowCount() && !any; ++row)
      any = table_->item(row, col) != nullptr && !table_->item(row, col)->text().isEmpty();
    table_->setColumnHidden(col, !any && !records_.empty());
  }
  if (!records_.empty()) table_->scrollToBottom();
}

void LabTab::showCrossovers() {
  // The sentences of the plotted variant; matmul and transpose have one group.
  QStringList sentences;
  for (const lab::Crossover& c : crossovers_)
    if (QString::fromStdString(c.variant) == plot_->variant()) sentences << QString::fromStdString(c.sentence());
  crossoverLabel_->setText(sentences.join(QLatin1Char('\n')));
  crossoverLabel_->setVisible(!sentences.isEmpty());
}

QString LabTab::crossoverText() const { return crossoverLabel_->text(); }

bool LabTab::exportCsv(const QString& path, QString* error) const {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  QByteArray text = QByteArray::fromStdString(lab::csvHeader()) + '\n';
  for (const lab::Record& r : records_) text += QByteArray::fromStdString(lab::toCsvRow(r)) + '\n';
  if (file.write(text) != text.size()) {
    if (error) *error = tr("Writing %1 failed: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

bool LabTab::savePlot(const QString& path, QString* error) const {
  const QPixmap pixmap = plots_->grab();
  if (pixmap.isNull() || !pixmap.save(path, "PNG")) {
    if (error) *error = tr("Cannot save the plot to %1").arg(path);
    return false;
  }
  return true;
}

void LabTab::saveWithDialog(const QString& title, const QString& suggested, const QString& filter,
                            bool (LabTab::*save)(const QString& path, QString* error) const) {
  const QString path = QFileDialog::getSaveFileName(this, title, suggested, filter);
  if (path.isEmpty()) return;
  QString error;
  if ((this->*save)(path, &error))
    setStatus(tr("Saved %1").arg(path), false);
  else
    services_.showError(error);
}

}  // namespace gpulab::gui
