#include "filters/filters_tab.hpp"

#include <QAction>
#include <QButtonGroup>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "filters/filters_summary.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "shell/photo_document.hpp"
#include "shell/theme.hpp"
#include "widgets/before_after_view.hpp"
#include "widgets/histogram_panel.hpp"
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
  GpuChoices gpus;  // every device, for Apply to folder
};

}  // namespace

bool FiltersTab::showsGpuResult() const { return run_ && run_->gpu && (showGpu_->isChecked() || !run_->cpu); }

// ---------------------------------------------------------------------------------------------
// Construction

FiltersTab::FiltersTab(TabServices& services, QWidget* parent)
    : QWidget(parent),
      services_(services),
      state_(std::make_shared<FiltersWorkerState>()),
      analysisState_(std::make_shared<AnalysisWorkerState>()) {
  restTimer_ = new QTimer(this);
  restTimer_->setSingleShot(true);
  restTimer_->setInterval(kRestMs);
  connect(restTimer_, &QTimer::timeout, this, &FiltersTab::apply);
  histogram_ = new HistogramPanel;  // the main window docks it; owned by this tab until then
  histogram_->setParent(this, Qt::Window);
  histogram_->hide();
  connect(histogram_, &HistogramPanel::autoLevelsRequested, this, &FiltersTab::autoLevels);
  suppressChanges_ = true;  // building the controls is no change of settings
  buildUi();
  createActions();
  connect(&services_.photo, &PhotoDocument::changed, this, &FiltersTab::photoChanged);
  operationChanged();
  suppressChanges_ = false;
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

  regionTool_ = makeToggle(tr("Region"), tr("Draw a rectangle on the photo: the filter changes only its pixels "
                                            "(R, or Shift+drag; Esc clears it)"));
  regionTool_->setObjectName(QStringLiteral("filterRegionTool"));
  lineTool_ = makeToggle(tr("Line"), tr("Draw a line on the photo: the Histogram panel plots its profile (L, or "
                                        "Ctrl+drag)"));
  lineTool_->setObjectName(QStringLiteral("filterLineTool"));
  live_ = new QCheckBox(tr("Live"));
  live_->setObjectName(QStringLiteral("filterLive"));
  live_->setChecked(true);
  live_->setToolTip(
      tr("Live preview: with a GPU the result follows the controls as they move; the CPU baseline "
         "runs once they rest"));

  auto* barWidget = new QWidget;
  barWidget->setObjectName(QStringLiteral("filtersViewBar"));
  QHBoxLayout* bar = layOutSegmented(barWidget, tr("Compare"), {split, original, result});
  bar->addSpacing(12);
  bar->addWidget(regionTool_);
  bar->addWidget(lineTool_);
  bar->addSpacing(8);
  bar->addWidget(live_);
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
  connect(regionTool_, &QToolButton::toggled, this, [this](bool on) {
    if (on) lineTool_->setChecked(false);
    view_->setTool(on ? BeforeAfterView::Tool::Region
                      : (lineTool_->isChecked() ? BeforeAfterView::Tool::Line : BeforeAfterView::Tool::Navigate));
  });
  connect(lineTool_, &QToolButton::toggled, this, [this](bool on) {
    if (on) regionTool_->setChecked(false);
    view_->setTool(on ? BeforeAfterView::Tool::Line
                      : (regionTool_->isChecked() ? BeforeAfterView::Tool::Region : BeforeAfterView::Tool::Navigate));
  });
  connect(view_, &BeforeAfterView::toolChanged, this, [this](BeforeAfterView::Tool tool) {
    regionTool_->setChecked(tool == BeforeAfterView::Tool::Region);
    lineTool_->setChecked(tool == BeforeAfterView::Tool::Line);
  });
  connect(view_, &BeforeAfterView::regionChanged, this, &FiltersTab::settingsChanged);
  connect(view_, &BeforeAfterView::profileLineChanged, this, [this] { requestAnalysis(false); });
  connect(live_, &QCheckBox::toggled, this, [this](bool on) {
    if (!on) restTimer_->stop();
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
  undoAction_ = new QAction(makeIcon(IconKind::Undo), tr("&Undo Keep"), this);
  undoAction_->setObjectName(QStringLiteral("undoKeepAction"));
  undoAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Z));
  undoAction_->setToolTip(tr("Back to the photo before the last Keep result (Ctrl+Z)"));
  connect(undoAction_, &QAction::triggered, this, &FiltersTab::undo);
  redoAction_ = new QAction(makeIcon(IconKind::Redo), tr("&Redo Keep"), this);
  redoAction_->setObjectName(QStringLiteral("redoKeepAction"));
  redoAction_->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
  redoAction_->setToolTip(tr("Forward to the photo the last Undo left (Ctrl+Shift+Z)"));
  connect(redoAction_, &QAction::triggered, this, &FiltersTab::redo);
  regionAction_ = new QAction(tr("Region tool"), this);
  regionAction_->setShortcut(QKeySequence(Qt::Key_R));
  connect(regionAction_, &QAction::triggered, this, [this] { regionTool_->toggle(); });
  lineAction_ = new QAction(tr("Line tool"), this);
  lineAction_->setShortcut(QKeySequence(Qt::Key_L));
  connect(lineAction_, &QAction::triggered, this, [this] { lineTool_->toggle(); });
  // Window shortcuts of this tab: live only while the tab is shown. Undo and Redo act on the photo
  // every tab shares: the main window puts them in its Edit menu and tool bar.
  // Esc stops a running filter (as Cancel does); with nothing running it clears the region.
  auto* clearRegion = new QAction(tr("Cancel, or clear region"), this);
  clearRegion->setShortcut(QKeySequence(Qt::Key_Escape));
  connect(clearRegion, &QAction::triggered, this, [this] {
    if (running()) {
      cancel();
      return;
    }
    view_->setRegion(std::nullopt);
    view_->setTool(BeforeAfterView::Tool::Navigate);
  });
  for (QAction* a : {regionAction_, lineAction_, clearRegion}) a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  addActions({applyAction_, keepAction_, regionAction_, lineAction_, clearRegion});
}

void FiltersTab::queryDevice() {
  services_.engine.submit(
      this,
      [](WorkerContext& ctx) {
        DeviceAnswer a;
        a.gpu = ctx.hasGpu();
        if (a.gpu) a.name = QString::fromStdString(ctx.devices().devices.at(ctx.gpu().device()).name);
        if (!a.gpu) a.why = ctx.gpuError();
        a.cpuThreads = gpulab::cpuThreads();
        for (const gpulab::DeviceInfo& d : ctx.devices().devices)
          a.gpus.labels << QStringLiteral("GPU %1 (%2)").arg(d.index).arg(QString::fromStdString(d.name));
        a.gpus.selected = gpulab::selectedDevice();
        return a;
      },
      [this](DeviceAnswer a) {
        deviceKnown_ = true;
        gpuAvailable_ = a.gpu;
        gpuChoices_ = a.gpu ? a.gpus : GpuChoices{};
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
  undoButton_->setEnabled(undoDepth_ > 0 && !photoEditPending_);
  undoAction_->setEnabled(undoDepth_ > 0 && !photoEditPending_);
  redoAction_->setEnabled(redoDepth_ > 0 && !photoEditPending_);
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

bool FiltersTab::buildRequest(FilterRequest& request, bool preview) {
  if (!services_.photo.hasPhoto()) {
    reportProblem(tr("There is no photo to filter: open one with File > Open."));
    return false;
  }
  request.operation = operation().toStdString();
  request.params = paramValues();
  request.preview = preview;
  request.wantGpu = preview || (gpu_->isChecked() && (gpuAvailable_ || !deviceKnown_));
  request.wantCpu = !preview && cpu_->isChecked();
  if (!request.wantGpu && !request.wantCpu) {
    reportProblem(tr("Choose where to run: tick CPU, GPU or both."));
    return false;
  }
  if (const std::optional<QRect> r = region()) request.roi = gpulab::PixelRect{r->x(), r->y(), r->width(), r->height()};
  // The same checks the worker makes, now: a bad parameter is reported without a round trip.
  const PhotoUpdate& photo = services_.photo.current();
  try {
    const std::unique_ptr<gpulab::Operation> op = current().info->make(request.params);
    if (const auto type = pixelTypeNamed(photo.sampleType)) {
      const gpulab::ImageShape shape{photo.width, photo.height, photo.channels, *type};
      const gpulab::ImageShape out = gpulab::filterResultShape(*op, shape);
      if (request.roi && !(out == shape))
        throw std::invalid_argument(op->describe() + " turns the " + gpulab::describe(shape) + " photo into " +
                                    gpulab::describe(out) +
                                    ", so it cannot be limited to a region: clear the region (Esc) to filter the "
                                    "whole photo");
    }
  } catch (const std::exception& e) {
    reportProblem(sentence(QString::fromStdString(e.what())));
    return false;
  }
  return true;
}

void FiltersTab::apply() {
  restTimer_->stop();
  reportProblem({});
  FilterRequest request;
  if (!buildRequest(request, false)) {
    emit runFinished();
    return;
  }
  startRun(request);
}

void FiltersTab::settingsChanged() {
  if (suppressChanges_ || !live_->isChecked() || !services_.photo.hasPhoto()) return;
  if (deviceKnown_ && gpuAvailable_ && gpu_->isChecked() && services_.photo.current().onGpu) {
    FilterRequest request;
    if (buildRequest(request, true)) {
      reportProblem({});
      startRun(request);
    } else {
      return;  // the problem is shown; the run at rest would say the same
    }
  }
  restTimer_->start();
}

bool FiltersTab::restPending() const noexcept { return restTimer_->isActive(); }

void FiltersTab::setLivePreview(bool on) { live_->setChecked(on); }
bool FiltersTab::livePreview() const noexcept { return live_->isChecked(); }

std::optional<QRect> FiltersTab::region() const { return view_->region(); }
void FiltersTab::setRegion(std::optional<QRect> region) { view_->setRegion(region); }
void FiltersTab::setProfileLine(std::optional<QLineF> line) { view_->setProfileLine(line); }

void FiltersTab::startRun(const FilterRequest& request) {
  cancelRequested_ = false;
  const std::shared_ptr<FiltersWorkerState> state = state_;
  QStringList where;
  if (request.wantGpu) where << tr("the GPU");
  if (request.wantCpu) where << tr("the CPU");
  progressLabel_->setText(request.preview ? tr("Preview on the GPU...")
                                          : tr("Running on %1...").arg(where.join(tr(" and "))));
  runs_.request([this, state, request](quint64 ticket) {
    return services_.engine.submit(
        this, [state, request](WorkerContext& ctx) { return runFilter(*state, ctx, request); },
        [this, ticket](FilterRun run) {
          if (!runs_.finish(ticket)) return;  // a newer setting superseded it: never shown
          setRunning(runs_.busy());
          const bool preview = run.preview;
          showRun(std::move(run));
          if (preview)
            emit previewShown();
          else
            emit runFinished();
        },
        {.failed =
             [this, ticket, preview = request.preview](const QString& why) {
               if (!runs_.finish(ticket)) return;
               setRunning(runs_.busy());
               reportProblem(sentence(why));
               if (!preview) emit runFinished();
             },
         .cancelled =
             [this, ticket] {
               runs_.finish(ticket);
               if (runs_.busy()) return;  // the newer run reports
               setRunning(false);
               if (std::exchange(cancelRequested_, false)) emit runFinished();
             },
         .progress =
             [this](double f) {
               // The CPU baseline's first run reports progress; the timed runs follow it.
               if (progress_->maximum() == 0) progress_->setRange(0, kProgressSteps);
               progress_->setValue(static_cast<int>(std::lround(f * kProgressSteps)));
               if (f >= 1.0) progressLabel_->setText(tr("Timing the CPU baseline (up to 5 runs, about 2 s)..."));
             }});
  });
  setRunning(true);
}

void FiltersTab::cancel() {
  restTimer_->stop();
  if (!running()) return;
  cancelRequested_ = true;
  runs_.cancel();  // the running job's result is stale now and is dropped; it stops at its next check
  setRunning(false);
  reportProblem({});
  setStatus(tr("<b>Cancelled</b>: the photo and the last result are unchanged."));
  services_.showMessage(tr("Filter cancelled"));
}

void FiltersTab::autoLevels() {
  if (!setOperation(QStringLiteral("auto-levels"))) return;
  apply();
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
  ++resultsShown_;
  if (r.preview) {
    ++previewsShown_;
    QString line = tr("<b>Preview</b> (GPU, one run): %1")
                       .arg(r.record.gpu ? formatMs(r.record.gpu->compute.medianMs) : QString());
    if (r.roi) line += tr(" · ROI %1x%2").arg(r.roi->width).arg(r.roi->height);
    setStatus(line + tr("<br>The measured GPU and CPU runs follow when the controls rest."));
  } else {
    setStatus(runSummaryHtml(r, options));
    status_->setToolTip(runDetailsText(r));
    services_.timings.addRun(r.record);
    services_.showMessage(runStatusLine(r));
  }
  updateActions();
  requestAnalysis(false);
}

void FiltersTab::showResultSource() {
  if (!run_) {
    view_->clearResult();
    viewInfo_->clear();
    return;
  }
  const bool gpu = showsGpuResult();
  const QImage& image = gpu ? run_->gpuDisplay : run_->cpuDisplay;
  view_->setResult(image, run_->beforeOffset,
                   run_->preview ? tr("Preview (GPU)")
                   : gpu         ? tr("Result (GPU)")
                                 : tr("Result (CPU)"));
  QString info = QString::fromStdString(gpulab::describe(run_->record.output));
  if (run_->roi)
    info = tr("ROI %1x%2 (window %3x%4)")
               .arg(run_->roi->width)
               .arg(run_->roi->height)
               .arg(run_->window->width)
               .arg(run_->window->height);
  viewInfo_->setText(info);
}

// ---------------------------------------------------------------------------------------------
// The photo, Keep and Undo

void FiltersTab::photoChanged() {
  if (!photoEditPending_) undoDepth_ = redoDepth_ = 0;  // replaced from elsewhere: nothing to undo
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
    // A region or line that no longer fits the photo goes.
    if (const std::optional<QRect> r = view_->region(); r && !QRect(0, 0, p.width, p.height).contains(*r))
      view_->setRegion(std::nullopt);
  }
  updateActions();
  requestAnalysis(true);
}

void FiltersTab::keepResult() {
  if (!run_) {
    reportProblem(tr("There is no result to keep: apply a filter first."));
    return;
  }
  if (running() || photoEditPending_) return;
  restTimer_->stop();
  const bool gpu = showsGpuResult();
  const std::shared_ptr<const gpulab::Image> image = gpu ? run_->gpu : run_->cpu;
  const quint64 generation = run_->generation;
  QString operation = QString::fromStdString(run_->record.description);
  const QString previousSource = services_.photo.current().source;
  const QString source = QStringLiteral("%1, %2").arg(services_.photo.displayName(), operation);
  const std::shared_ptr<FiltersWorkerState> state = state_;
  photoEditPending_ = true;
  updateActions();
  services_.engine.submit(
      this,
      [state, image, generation, previousSource, source](WorkerContext& ctx) {
        return keepAsPhoto(*state, ctx, image, generation, previousSource, source);
      },
      [this, operation](HistoryDepth depth) {
        setStatus(tr("<b>Kept</b> %1: it is now the photo, and the next filter works on it. Ctrl+Z goes back.")
                      .arg(operation.toHtmlEscaped()));
        finishPhotoEdit(depth, {});
      },
      {.failed = [this](const QString& why) {
        finishPhotoEdit({undoDepth_, redoDepth_}, sentence(why));
      }});
}

void FiltersTab::undo() { editPhoto(false); }
void FiltersTab::redo() { editPhoto(true); }

void FiltersTab::editPhoto(bool forward) {
  if ((forward ? redoDepth_ : undoDepth_) == 0 || photoEditPending_) return;
  restTimer_->stop();
  if (running()) runs_.cancel();  // a result of the photo being left would be stale
  const std::shared_ptr<FiltersWorkerState> state = state_;
  const QString currentSource = services_.photo.current().source;
  photoEditPending_ = true;
  updateActions();
  services_.engine.submit(
      this,
      [state, forward, currentSource](WorkerContext& ctx) {
        return forward ? redoKeep(*state, ctx, currentSource) : undoKeep(*state, ctx, currentSource);
      },
      [this, forward](HistoryDepth depth) {
        setStatus(forward ? tr("<b>Redone</b>: forward to the photo the last Undo left. Ctrl+Z goes back.")
                          : tr("<b>Undone</b>: back to the photo before the last Keep. Ctrl+Shift+Z goes forward."));
        finishPhotoEdit(depth, {});
      },
      {.failed = [this](const QString& why) { finishPhotoEdit({}, sentence(why)); }});
}

void FiltersTab::finishPhotoEdit(HistoryDepth depth, const QString& problem) {
  photoEditPending_ = false;
  undoDepth_ = depth.undo;
  redoDepth_ = depth.redo;
  reportProblem(problem);
  updateActions();
  emit photoEditFinished();
}

// ---------------------------------------------------------------------------------------------
// The Histogram panel

void FiltersTab::requestAnalysis(bool photoToo) {
  if (!services_.photo.hasPhoto()) {
    histogram_->setPhoto(std::nullopt);
    histogram_->setResult(std::nullopt);
    histogram_->setProfiles(std::nullopt, std::nullopt);
    return;
  }
  AnalysisRequest request;
  request.generation = services_.photo.current().generation;
  request.photo = photoToo || histogram_->photoPlot().empty();
  if (run_ && run_->generation == request.generation) request.result = showsGpuResult() ? run_->gpu : run_->cpu;
  request.line = view_->profileLine();
  request.cpuBaseline = !(run_ && run_->preview);
  const std::shared_ptr<AnalysisWorkerState> state = analysisState_;
  analysisPending_ = false;
  analysis_.request([this, state, request](quint64 ticket) {
    return services_.engine.submit(
        this, [state, request](WorkerContext& ctx) { return analyse(*state, ctx, request); },
        [this, ticket](AnalysisRun run) {
          if (analysis_.finish(ticket)) showAnalysis(std::move(run));
        },
        {.failed =
             [this, ticket](const QString& why) {
               if (analysis_.finish(ticket)) services_.showMessage(tr("Histogram: %1").arg(why));
             },
         .cancelled = [this, ticket] { analysis_.finish(ticket); }});
  });
}

void FiltersTab::showAnalysis(AnalysisRun run) {
  auto entry = [](const ImageAnalysis& a) {
    return HistogramPanel::Entry{a.histogram, a.gpuMs, a.cpuMs, a.cpuThreads, a.gpuNote};
  };
  if (run.photo) histogram_->setPhoto(entry(*run.photo));
  histogram_->setResult(run.result ? std::optional(entry(*run.result)) : std::nullopt);
  histogram_->setProfiles(run.photoProfile, run.resultProfile);
  emit analysisShown();
}

}  // namespace gpulab::gui
