#include "filters/filters_tab.hpp"

#include <QAction>
#include <QButtonGroup>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "filters/filters_summary.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "shell/photo_document.hpp"
#include "widgets/before_after_view.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/segmented_buttons.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui {

namespace {

constexpr int kProgressSteps = 1000;

std::optional<PixelType> pixelTypeNamed(const QString& name) {
  return gpulab::parseEnum<PixelType>(name.toStdString());
}

struct DeviceAnswer {
  bool gpu = false;
  QString name;
  QString why;  // why there is no GPU
  int cpuThreads = 0;
};

}  // namespace

bool FiltersTab::showsGpuResult() const { return run_ && run_->gpu && (showGpu_->isChecked() || !run_->cpu); }

// ---------------------------------------------------------------------------------------------
// Construction

FiltersTab::FiltersTab(TabServices& services, QWidget* parent)
    : QWidget(parent), services_(services), state_(std::make_shared<FiltersWorkerState>()) {
  buildUi();
  createActions();
  connect(&services_.photo, &PhotoDocument::changed, this, &FiltersTab::photoChanged);
  operationChanged();
  photoChanged();
  queryDevice();
}

FiltersTab::~FiltersTab() = default;

void FiltersTab::buildUi() {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(buildControls());
  layout->addWidget(buildViewPane(), 1);
}

QWidget* FiltersTab::buildViewPane() {
  auto* split = makeToggle(tr("Split"), tr("Original left of the line, result right of it; drag the line to compare"));
  auto* original = makeToggle(tr("Original"), tr("The photo before the filter (Space toggles)"));
  auto* result = makeToggle(tr("Result"), tr("The filter's result alone"));
  split->setChecked(true);
  compareGroup_ = new QButtonGroup(this);
  compareGroup_->setExclusive(true);
  compareGroup_->addButton(split, static_cast<int>(BeforeAfterView::Mode::Split));
  compareGroup_->addButton(original, static_cast<int>(BeforeAfterView::Mode::Before));
  compareGroup_->addButton(result, static_cast<int>(BeforeAfterView::Mode::After));

  viewInfo_ = new QLabel;
  viewInfo_->setObjectName(QStringLiteral("filterViewInfo"));
  viewInfo_->setEnabled(false);
  viewInfo_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  viewInfo_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the window

  auto* barWidget = new QWidget;
  barWidget->setObjectName(QStringLiteral("filtersViewBar"));
  QHBoxLayout* bar = layOutSegmented(barWidget, tr("Compare"), {split, original, result});
  bar->addSpacing(12);
  bar->addWidget(viewInfo_, 1);

  view_ = new BeforeAfterView;
  view_->setObjectName(QStringLiteral("filtersView"));
  view_->setPlaceholderText(tr("No photo\n\nOpen one with File > Open (Ctrl+O), or drop an image file here."));

  auto* pane = new QWidget;
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(barWidget);
  layout->addWidget(view_, 1);

  connect(compareGroup_, &QButtonGroup::idClicked, this,
          [this](int id) { view_->setMode(static_cast<BeforeAfterView::Mode>(id)); });
  connect(view_, &BeforeAfterView::modeChanged, this, [this](BeforeAfterView::Mode mode) {
    if (QAbstractButton* b = compareGroup_->button(static_cast<int>(mode))) b->setChecked(true);
  });
  return pane;
}

void FiltersTab::createActions() {
  applyAction_ = new QAction(tr("Apply filter"), this);
  applyAction_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
  connect(applyAction_, &QAction::triggered, this, &FiltersTab::apply);
  keepAction_ = new QAction(tr("Keep result"), this);
  keepAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  connect(keepAction_, &QAction::triggered, this, &FiltersTab::keepResult);
  undoAction_ = new QAction(tr("Undo keep"), this);
  undoAction_->setShortcut(QKeySequence::Undo);
  connect(undoAction_, &QAction::triggered, this, &FiltersTab::undo);
  // Window shortcuts of this tab: live only while the tab is shown.
  addActions({applyAction_, keepAction_, undoAction_});
}

void FiltersTab::queryDevice() {
  services_.engine.submit(
      this,
      [](WorkerContext& ctx) {
        DeviceAnswer a;
        a.gpu = ctx.hasGpu();
        if (a.gpu && !ctx.devices().devices.empty()) a.name = QString::fromStdString(ctx.devices().devices[0].name);
        if (!a.gpu) a.why = ctx.gpuError();
        a.cpuThreads = gpulab::cpuThreads();
        return a;
      },
      [this](DeviceAnswer a) {
        deviceKnown_ = true;
        gpuAvailable_ = a.gpu;
        cpu_->setText(tr("CPU (OpenCV, %n threads)", nullptr, a.cpuThreads));
        if (a.gpu) {
          gpu_->setEnabled(true);
          gpu_->setToolTip(tr("Run on %1; the photo stays on the GPU between runs").arg(a.name));
        } else {
          gpu_->setChecked(false);
          gpu_->setEnabled(false);
          gpu_->setToolTip(a.why.isEmpty() ? tr("no CUDA device: CPU only")
                                           : tr("no CUDA device: CPU only (%1)").arg(a.why));
        }
        updateActions();
      });
}

void FiltersTab::updateActions() {
  const bool busy = running() || photoEditPending_;
  const bool photo = services_.photo.hasPhoto();
  const bool somewhere = cpu_->isChecked() || (gpu_->isChecked() && gpu_->isEnabled());
  applyButton_->setEnabled(photo && somewhere);
  applyAction_->setEnabled(photo);
  keepButton_->setEnabled(hasResult() && !busy);
  keepAction_->setEnabled(hasResult() && !busy);
  undoButton_->setEnabled(undoDepth_ > 0 && !busy);
  undoAction_->setEnabled(undoDepth_ > 0 && !busy);
  undoButton_->setText(undoDepth_ > 0 ? tr("Undo (%1)").arg(undoDepth_) : tr("Undo"));
}

void FiltersTab::reportProblem(const QString& text) {
  error_->setText(text);
  error_->setVisible(!text.isEmpty());
  if (!text.isEmpty()) services_.showMessage(text);
}

void FiltersTab::setStatus(const QString& html) {
  status_->setText(html);
  status_->setToolTip({});
}
QString FiltersTab::statusText() const { return status_->text(); }
QString FiltersTab::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

void FiltersTab::setRunning(bool running) {
  cancelButton_->setEnabled(running);
  progress_->setVisible(running);
  progressLabel_->setVisible(running);
  if (running) {
    progress_->setRange(0, 0);  // busy until the CPU baseline reports progress
    progress_->setValue(0);
  }
  updateActions();
}

// ---------------------------------------------------------------------------------------------
// Apply and cancel

void FiltersTab::apply() {
  reportProblem({});
  if (!services_.photo.hasPhoto()) {
    reportProblem(tr("There is no photo to filter: open one with File > Open."));
    emit runFinished();
    return;
  }
  FilterRequest request;
  request.operation = operation().toStdString();
  request.params = paramValues();
  request.wantGpu = gpu_->isChecked() && (gpuAvailable_ || !deviceKnown_);
  request.wantCpu = cpu_->isChecked();
  if (!request.wantGpu && !request.wantCpu) {
    reportProblem(tr("Choose where to run: tick CPU, GPU or both."));
    emit runFinished();
    return;
  }
  // The same checks the worker makes, now: a bad parameter is reported without a round trip.
  const PhotoUpdate& photo = services_.photo.current();
  try {
    const std::unique_ptr<gpulab::Operation> op = current().info->make(request.params);
    if (const auto type = pixelTypeNamed(photo.sampleType))
      gpulab::filterResultShape(*op, {photo.width, photo.height, photo.channels, *type});
  } catch (const std::exception& e) {
    reportProblem(sentence(QString::fromStdString(e.what())));
    emit runFinished();
    return;
  }

  const std::shared_ptr<FiltersWorkerState> state = state_;
  QStringList where;
  if (request.wantGpu) where << tr("the GPU");
  if (request.wantCpu) where << tr("the CPU");
  progressLabel_->setText(tr("Running on %1...").arg(where.join(tr(" and "))));
  job_ = services_.engine.submit(
      this, [state, request](WorkerContext& ctx) { return runFilter(*state, ctx, request); },
      [this](FilterRun run) {
        setRunning(false);
        showRun(std::move(run));
        emit runFinished();
      },
      {.coalesceKey = QStringLiteral("filters"),
       .failed =
           [this](const QString& why) {
             setRunning(false);
             reportProblem(sentence(why));
             emit runFinished();
           },
       .cancelled =
           [this] {
             // A newer Apply cancelled this one: that one reports.
             if (running()) return;
             setRunning(false);
             emit runFinished();
           },
       .progress =
           [this](double f) {
             // The CPU baseline's first run reports progress; the timed runs follow it.
             if (progress_->maximum() == 0) progress_->setRange(0, kProgressSteps);
             progress_->setValue(static_cast<int>(std::lround(f * kProgressSteps)));
             if (f >= 1.0) progressLabel_->setText(tr("Timing the CPU baseline (up to 5 runs, about 2 s)..."));
           }});
  setRunning(true);
}

void FiltersTab::cancel() {
  if (!running()) return;
  job_.cancel();  // `done` will not run now; the worker stops at its next check
  setRunning(false);
  reportProblem({});
  setStatus(tr("<b>Cancelled</b>: the photo and the last result are unchanged."));
  services_.showMessage(tr("Filter cancelled"));
}

// ---------------------------------------------------------------------------------------------
// Showing a run

void FiltersTab::showRun(FilterRun run) {
  if (run.generation != services_.photo.current().generation) {
    setStatus(tr("The photo changed while the filter ran: apply it again."));
    return;
  }
  if (!run.gpu && !run.cpu) {
    reportProblem(sentence(tr("the GPU could not run (%1); tick CPU to run the baseline")
                               .arg(QString::fromStdString(run.record.gpuSkipped))));
    return;
  }
  services_.photo.addResidentUpload(run.record);  // the photo's one upload counts in end-to-end
  run_ = std::move(run);
  const FilterRun& r = *run_;
  showGpu_->setEnabled(r.gpu != nullptr);
  showCpu_->setEnabled(r.cpu != nullptr);
  if (!r.gpu)
    showCpu_->setChecked(true);
  else if (!r.cpu || !showCpu_->isChecked())
    showGpu_->setChecked(true);
  showResultSource();

  SummaryOptions options;
  const gpulab::OperationInfo& info = gpulab::findOperation(r.record.operation);
  options.showMethod =
      info.param("method") != nullptr || methodText(r.record) != QString::fromStdString(r.record.method);
  options.noCudaDevice = deviceKnown_ && !gpuAvailable_;
  setStatus(runSummaryHtml(r, options));
  status_->setToolTip(runDetailsText(r));
  services_.timings.addRun(r.record);
  services_.showMessage(runStatusLine(r));
  updateActions();
}

void FiltersTab::showResultSource() {
  if (!run_) {
    view_->clearResult();
    viewInfo_->clear();
    return;
  }
  const bool gpu = showsGpuResult();
  const QImage& image = gpu ? run_->gpuDisplay : run_->cpuDisplay;
  view_->setResult(image, run_->beforeOffset, gpu ? tr("Result (GPU)") : tr("Result (CPU)"));
  viewInfo_->setText(QString::fromStdString(gpulab::describe(run_->record.output)));
}

// ---------------------------------------------------------------------------------------------
// The photo, Keep and Undo

void FiltersTab::photoChanged() {
  if (!photoEditPending_ && undoDepth_ != 0) undoDepth_ = 0;  // replaced from elsewhere: nothing to undo
  if (!services_.photo.hasPhoto()) {
    run_.reset();
    view_->clearResult();
    view_->setBefore({});
  } else {
    const PhotoUpdate& p = services_.photo.current();
    if (run_ && run_->generation != p.generation) run_.reset();
    view_->setBefore(p.display);
    if (!run_) {
      view_->clearResult();
      viewInfo_->setText(p.description);
      showGpu_->setEnabled(false);
      showCpu_->setEnabled(false);
    }
  }
  updateActions();
}

void FiltersTab::keepResult() {
  if (!run_) {
    reportProblem(tr("There is no result to keep: apply a filter first."));
    return;
  }
  if (running() || photoEditPending_) return;
  const bool gpu = showsGpuResult();
  const std::shared_ptr<const gpulab::Image> image = gpu ? run_->gpu : run_->cpu;
  const quint64 generation = run_->generation;
  const QString operation = QString::fromStdString(run_->record.description);
  const QString previousSource = services_.photo.current().source;
  const QString source = QStringLiteral("%1, %2").arg(services_.photo.displayName(), operation);
  const std::shared_ptr<FiltersWorkerState> state = state_;
  photoEditPending_ = true;
  updateActions();
  services_.engine.submit(
      this,
      [state, image, generation, previousSource, source](WorkerContext& ctx) {
        return keepAsPhoto(*state, ctx, image, generation, previousSource, source, kUndoDepth);
      },
      [this, operation](int depth) {
        setStatus(tr("<b>Kept</b> %1: it is now the photo, and the next filter works on it. Ctrl+Z goes back.")
                      .arg(operation.toHtmlEscaped()));
        finishPhotoEdit(depth, {});
      },
      {.failed = [this](const QString& why) { finishPhotoEdit(undoDepth_, sentence(why)); }});
}

void FiltersTab::undo() {
  if (undoDepth_ == 0 || running() || photoEditPending_) return;
  const std::shared_ptr<FiltersWorkerState> state = state_;
  photoEditPending_ = true;
  updateActions();
  services_.engine.submit(
      this, [state](WorkerContext& ctx) { return undoKeep(*state, ctx); },
      [this](int depth) {
        setStatus(tr("<b>Undone</b>: back to the photo before the last Keep."));
        finishPhotoEdit(depth, {});
      },
      {.failed = [this](const QString& why) { finishPhotoEdit(0, sentence(why)); }});
}

void FiltersTab::finishPhotoEdit(int undoDepth, const QString& problem) {
  photoEditPending_ = false;
  undoDepth_ = undoDepth;
  reportProblem(problem);
  updateActions();
  emit photoEditFinished();
}

}  // namespace gpulab::gui
