#include "filters/filters_tab.hpp"

#include <QAction>
#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "filters/kernel_editor.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "shell/photo_document.hpp"
#include "widgets/before_after_view.hpp"
#include "widgets/image_convert.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// Worker side: everything here runs on the engine's worker thread.

struct FiltersTab::WorkerState {
  std::unique_ptr<gpulab::Operation> filter;  // reused while the spec does not change
  gpulab::FilterSpec filterSpec;
  gpulab::DeviceImage gpuOut;   // the GPU result, reallocated only when its shape changes
  std::size_t stagedBytes = 0;  // the largest transfer the GPU context's staging buffers have held

  struct Saved {
    std::shared_ptr<const gpulab::Image> image;
    QString source;
  };
  std::vector<Saved> undo;
  quint64 ownGeneration = 0;  // the photo our last Keep or Undo made current
};

namespace {

constexpr int kRadiusSliderMax = 512;
constexpr int kProgressSteps = 1000;
// GPU timing: one warm-up run, one probe run that sizes the measurement, then the measured reps.
constexpr int kGpuWarmups = 2;
constexpr int kGpuRepsFast = 10;  // compute under kGpuSlowMs
constexpr int kGpuRepsSlow = 5;
constexpr double kGpuSlowMs = 20;
// CPU timing: one run with progress and cancel; a run shorter than kCpuQuickMs is repeated to
// kCpuQuickReps runs for a median that is not one noisy sample.
constexpr double kCpuQuickMs = 50;
constexpr int kCpuQuickReps = 5;

bool sameSpec(const gpulab::FilterSpec& a, const gpulab::FilterSpec& b) {
  if (a.op != b.op || a.border.mode != b.border.mode || a.border.value != b.border.value) return false;
  switch (a.op) {
    case FilterOp::Box:
      return a.radius == b.radius;
    case FilterOp::Sobel:
      return a.component == b.component;
    case FilterOp::Conv:
      return a.correlate == b.correlate && a.mode == b.mode && a.method == b.method &&
             a.kernel.width == b.kernel.width && a.kernel.height == b.kernel.height &&
             a.kernel.values == b.kernel.values;
  }
  return false;
}

/// Where the original's top-left pixel lies in the result (see BeforeAfterView::setResult): the
/// input pixel x is 'same' output x, which is 'full' x + (k - 1) / 2 and 'valid' x - k / 2.
QPoint beforeOffsetFor(const gpulab::FilterSpec& spec) {
  if (spec.op != FilterOp::Conv) return {};
  auto along = [&](int k) {
    switch (spec.mode) {
      case ConvMode::Same:
        return 0;
      case ConvMode::Full:
        return (k - 1) / 2;
      case ConvMode::Valid:
        return -(k / 2);
    }
    return 0;
  };
  return {along(spec.kernel.width), along(spec.kernel.height)};
}

template <class T>
double maxAbsDiffTyped(const gpulab::Image& a, const gpulab::Image& b) {
  const auto x = a.samples<const T>();
  const auto y = b.samples<const T>();
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = static_cast<double>(x[i]), v = static_cast<double>(y[i]);
    if (std::isnan(u) && std::isnan(v)) continue;
    if (u == v) continue;  // equal infinities too
    const double d = std::abs(u - v);
    worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
  }
  return worst;
}

/// The largest |a - b| over all samples; nullopt when the shapes differ.
std::optional<double> maxAbsDifference(const gpulab::Image& a, const gpulab::Image& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels() || a.type() != b.type())
    return std::nullopt;
  switch (a.type()) {
    case PixelType::U8:
      return maxAbsDiffTyped<std::uint8_t>(a, b);
    case PixelType::F32:
      return maxAbsDiffTyped<float>(a, b);
    case PixelType::F64:
      return maxAbsDiffTyped<double>(a, b);
  }
  return std::nullopt;
}

/// "600x400 RGB u8", as gpulab::Image::describe().
QString describeShape(const gpulab::ImageShape& s) {
  static constexpr const char* kLayouts[] = {"", "gray", "2-channel", "RGB", "RGBA"};
  return QStringLiteral("%1x%2 %3 %4")
      .arg(s.width)
      .arg(s.height)
      .arg(QString::fromLatin1(s.channels >= 1 && s.channels <= 4 ? kLayouts[s.channels] : "?"),
           QString::fromUtf8(gpulab::toString(s.type)));
}

FilterRun runFilter(FiltersTab::WorkerState& state, WorkerContext& ctx, const gpulab::FilterSpec& spec, bool wantCpu,
                    bool wantGpu) {
  if (!ctx.hasPhoto()) throw std::runtime_error("there is no photo to filter: open one first");
  const std::shared_ptr<const gpulab::Image> photo = ctx.sharedPhoto();
  FilterRun run;
  run.generation = ctx.photoGeneration();
  if (!state.filter || !sameSpec(state.filterSpec, spec)) {
    state.filter = gpulab::makeFilter(spec);
    state.filterSpec = spec;
  }
  gpulab::Operation& filter = *state.filter;
  const gpulab::ImageShape outShape = filter.outputShape(gpulab::shapeOf(*photo));
  run.operation = QString::fromStdString(filter.describe());
  run.input = QString::fromStdString(photo->describe());
  run.output = describeShape(outShape);
  run.beforeOffset = beforeOffsetFor(spec);
  if (spec.op == FilterOp::Conv) run.method = QString::fromUtf8(gpulab::toString(spec.method));
  const auto* byMethod = dynamic_cast<const gpulab::ConvMethodFilter*>(&filter);
  state.stagedBytes = std::max(state.stagedBytes, photo->sizeBytes());  // the photo's upload staged it

  if (wantGpu) {
    if (!ctx.hasGpu()) {
      run.gpuNote = ctx.gpuError().isEmpty() ? QStringLiteral("no CUDA device") : ctx.gpuError();
    } else if (!ctx.photoOnGpu()) {
      try {
        ctx.devicePhoto();  // throws with the reason
      } catch (const std::exception& e) {
        run.gpuNote = QString::fromStdString(e.what());
      }
    } else {
      gpulab::GpuContext& gpu = ctx.gpu();
      const gpulab::DeviceImage& in = ctx.devicePhoto();  // resident since the photo was set: no upload
      // Calibration, plans and spectra now: never inside the timed runs.
      run.gpuPrepareMs = filter.prepareGpu(gpu, in, state.gpuOut);
      const auto enqueue = [&] { filter.runGpu(gpu, in, state.gpuOut); };
      const gpulab::Stats probe = gpulab::timeStream(gpu.stream(), enqueue, {.warmup = 1, .reps = 1});
      const int reps = probe.medianMs <= kGpuSlowMs ? kGpuRepsFast : kGpuRepsSlow;
      run.gpuCompute = gpulab::timeStream(gpu.stream(), enqueue, {.warmup = 0, .reps = reps});
      run.gpuWarmups = kGpuWarmups;
      gpulab::Image result;
      gpu.download(state.gpuOut, result);
      if (result.sizeBytes() > state.stagedBytes) {
        // That download grew the staging buffers; the second is the one a person would pay again.
        gpu.download(state.gpuOut, result);
        state.stagedBytes = result.sizeBytes();
      }
      run.downloadMs = gpu.lastDownload().totalMs();
      run.gpu = std::make_shared<const gpulab::Image>(std::move(result));
      if (byMethod != nullptr)
        run.gpuChoice = byMethod->lastGpuChoice();
      else if (spec.op == FilterOp::Conv)
        run.gpuChoice = gpulab::ConvAlgorithm::Direct;
    }
  }

  if (wantCpu) {
    ctx.throwIfCancelled();
    const gpulab::CpuControl control = ctx.cpuControl();
    run.cpuPrepareMs = filter.prepareCpu(gpulab::shapeOf(*photo));  // the CPU cost model: not timed
    ctx.throwIfCancelled();
    std::vector<double> samples;
    gpulab::Stopwatch watch;
    gpulab::Image cpu = filter.runCpu(*photo, control);
    samples.push_back(watch.elapsedMs());
    if (samples.front() < kCpuQuickMs) {
      const gpulab::CpuControl quiet{.cancel = control.cancel, .progress = {}};
      for (int i = 1; i < kCpuQuickReps; ++i) {
        ctx.throwIfCancelled();
        watch.restart();
        const gpulab::Image again = filter.runCpu(*photo, quiet);
        samples.push_back(watch.elapsedMs());
      }
    }
    run.cpuTime = gpulab::Stats::of(samples);
    run.cpuThreads = gpulab::cpuThreads();
    run.cpu = std::make_shared<const gpulab::Image>(std::move(cpu));
    if (byMethod != nullptr)
      run.cpuChoice = byMethod->lastCpuChoice();
    else if (spec.op == FilterOp::Conv)
      run.cpuChoice = gpulab::ConvAlgorithm::Direct;
  }
  ctx.throwIfCancelled();

  if (run.gpu && run.cpu) run.maxAbsDiff = maxAbsDifference(*run.cpu, *run.gpu);
  DisplayRange range;
  if (run.gpu) {
    run.gpuDisplay = toQImage(*run.gpu, &range);
    run.displayNote = describeRange(*run.gpu, range);
  }
  if (run.cpu) {
    run.cpuDisplay = toQImage(*run.cpu, &range);
    if (!run.gpu) run.displayNote = describeRange(*run.cpu, range);
  }
  return run;
}

/// The engine's messages are lower-case clauses; the user reads a sentence.
QString sentence(QString text) {
  text = text.trimmed();
  if (text.isEmpty()) return text;
  text[0] = text[0].toUpper();
  if (!text.endsWith(QLatin1Char('.')) && !text.endsWith(QLatin1Char('?')) && !text.endsWith(QLatin1Char('!')))
    text += QLatin1Char('.');
  return text;
}

std::optional<PixelType> pixelTypeNamed(const QString& name) {
  for (PixelType t : {PixelType::U8, PixelType::F32, PixelType::F64})
    if (name == QString::fromUtf8(gpulab::toString(t))) return t;
  return std::nullopt;
}

QString htmlEscaped(const QString& text) { return text.toHtmlEscaped(); }

QString algorithmName(gpulab::ConvAlgorithm a) { return QString::fromUtf8(gpulab::toString(a)); }

/// What auto took: "fft", "GPU fft, CPU direct"; empty when nothing ran.
QString autoChoice(const FilterRun& r) {
  if (r.gpuChoice && r.cpuChoice && *r.gpuChoice != *r.cpuChoice)
    return QObject::tr("GPU %1, CPU %2").arg(algorithmName(*r.gpuChoice), algorithmName(*r.cpuChoice));
  if (r.gpuChoice || r.cpuChoice) return algorithmName(r.gpuChoice ? *r.gpuChoice : *r.cpuChoice);
  return {};
}

/// "direct", "fft", "auto → fft", "auto → GPU fft, CPU direct"; empty for the other filters.
QString methodText(const FilterRun& r) {
  if (r.method != QLatin1String("auto") || autoChoice(r).isEmpty()) return r.method;
  return QStringLiteral("auto → %1").arg(autoChoice(r));
}

QString methodHintFor(gpulab::ConvMethod method) {
  switch (method) {
    case gpulab::ConvMethod::Direct:
      return QObject::tr("Tiled GPU kernel; OpenCV filter2D on the CPU. Kernels up to %1x%1 here.")
          .arg(kMaxEditorKernelSize);
    case gpulab::ConvMethod::Fft:
      return QObject::tr(
                 "cuFFT on the GPU, cv::dft on the CPU; the direct result to float rounding. Kernels up to "
                 "%1x%1.")
          .arg(kMaxEditorFftKernelSize);
    case gpulab::ConvMethod::Auto:
      return QObject::tr(
                 "Per run, the faster of the two by a cost model calibrated once per device, outside the "
                 "timings. Kernels up to %1x%1; above %2, always FFT.")
          .arg(kMaxEditorFftKernelSize)
          .arg(gpulab::Conv2D::kMaxKernelSize);
  }
  return {};
}

QToolButton* makeToggle(const QString& text, const QString& tip) {
  auto* b = new QToolButton;
  b->setText(text);
  b->setToolTip(tip);
  b->setCheckable(true);
  b->setToolButtonStyle(Qt::ToolButtonTextOnly);
  return b;
}

/// Tool buttons in a row as one segmented control: the checked segment in the highlight colour;
/// the first and last segments (property "segment") have rounded outer corners.
QString segmentedStyle() {
  return QStringLiteral(
      "QToolButton { padding: 3px 10px; border: 1px solid palette(light); border-radius: 0px;"
      "  background: palette(button); color: palette(button-text); }"
      "QToolButton:hover:!checked:enabled { background: palette(midlight); }"
      "QToolButton:checked { background: palette(highlight); border-color: palette(highlight);"
      "  color: palette(highlighted-text); }"
      "QToolButton:disabled { color: palette(placeholder-text); background: palette(window); }"
      "QToolButton[segment=\"first\"] { border-top-left-radius: 4px; border-bottom-left-radius: 4px; }"
      "QToolButton[segment=\"last\"] { border-top-right-radius: 4px; border-bottom-right-radius: 4px; }");
}

struct DeviceAnswer {
  bool gpu = false;
  QString name;
  QString why;  // why there is no GPU
  int cpuThreads = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction

FiltersTab::FiltersTab(TabServices& services, QWidget* parent)
    : QWidget(parent), services_(services), state_(std::make_shared<WorkerState>()) {
  buildUi();
  createActions();
  connect(&services_.photo, &PhotoDocument::changed, this, &FiltersTab::photoChanged);
  operationChanged();
  borderChanged();
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

QWidget* FiltersTab::buildControls() {
  // --- the operation and its parameters ---
  operation_ = new QComboBox;
  operation_->setObjectName(QStringLiteral("filterOperation"));
  operation_->addItem(tr("Box blur"), static_cast<int>(FilterOp::Box));
  operation_->addItem(tr("Sobel"), static_cast<int>(FilterOp::Sobel));
  operation_->addItem(tr("Convolution"), static_cast<int>(FilterOp::Conv));

  radiusSlider_ = new QSlider(Qt::Horizontal);
  radiusSlider_->setObjectName(QStringLiteral("filterRadiusSlider"));
  radiusSlider_->setRange(0, kRadiusSliderMax);
  radius_ = new QSpinBox;
  radius_->setObjectName(QStringLiteral("filterRadius"));
  radius_->setRange(0, gpulab::kMaxBoxRadius);
  radius_->setToolTip(tr("0 (the photo unchanged) to %1; a window larger than the photo averages across it, "
                         "with the border mode deciding what lies beyond")
                          .arg(gpulab::kMaxBoxRadius));
  radius_->setValue(5);
  radiusSlider_->setValue(5);
  radiusHint_ = new QLabel;
  radiusHint_->setEnabled(false);
  radiusHint_->setWordWrap(true);
  auto* radiusRow = new QHBoxLayout;
  radiusRow->addWidget(radiusSlider_, 1);
  radiusRow->addWidget(radius_);
  auto* boxPage = new QWidget;
  auto* boxForm = new QFormLayout(boxPage);
  boxForm->setContentsMargins(0, 0, 0, 0);
  boxForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  boxForm->addRow(tr("Radius"), radiusRow);
  boxForm->addRow(QString(), radiusHint_);

  component_ = new QComboBox;
  component_->setObjectName(QStringLiteral("sobelComponent"));
  component_->addItem(tr("Magnitude"), static_cast<int>(SobelComponent::Magnitude));
  component_->addItem(tr("x gradient (dx)"), static_cast<int>(SobelComponent::X));
  component_->addItem(tr("y gradient (dy)"), static_cast<int>(SobelComponent::Y));
  component_->addItem(tr("Direction (atan2)"), static_cast<int>(SobelComponent::Direction));
  auto* sobelHint =
      new QLabel(tr("3x3. Colour goes to luminance first; the result has one channel. On 8-bit "
                    "photos the direction is a circular code (0 right, 64 down)."));
  sobelHint->setWordWrap(true);
  sobelHint->setEnabled(false);
  auto* sobelPage = new QWidget;
  auto* sobelForm = new QFormLayout(sobelPage);
  sobelForm->setContentsMargins(0, 0, 0, 0);
  sobelForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  sobelForm->addRow(tr("Component"), component_);
  sobelForm->addRow(sobelHint);

  kernelEditor_ = new KernelEditor;
  kernelEditor_->setObjectName(QStringLiteral("kernelEditor"));
  method_ = new QComboBox;
  method_->setObjectName(QStringLiteral("convMethod"));
  method_->addItem(tr("Direct"), static_cast<int>(ConvMethod::Direct));
  method_->addItem(tr("FFT"), static_cast<int>(ConvMethod::Fft));
  method_->addItem(tr("Auto"), static_cast<int>(ConvMethod::Auto));
  method_->setToolTip(tr("How the convolution is computed; every method gives the same result to float rounding"));
  methodHint_ = new QLabel;
  methodHint_->setObjectName(QStringLiteral("convMethodHint"));
  methodHint_->setWordWrap(true);
  methodHint_->setEnabled(false);
  auto* convPage = new QWidget;
  auto* convLayout = new QVBoxLayout(convPage);
  convLayout->setContentsMargins(0, 0, 0, 0);
  auto* methodForm = new QFormLayout;
  methodForm->setContentsMargins(0, 0, 0, 0);
  methodForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  methodForm->addRow(tr("Method"), method_);
  methodForm->addRow(methodHint_);
  convLayout->addLayout(methodForm);
  convLayout->addWidget(kernelEditor_);

  // One page per operation, in the combo's order; only the current one is shown (a QStackedWidget
  // would be as tall as its tallest page once word-wrapped labels are involved).
  params_ = new QWidget;
  auto* paramsLayout = new QVBoxLayout(params_);
  paramsLayout->setContentsMargins(0, 0, 0, 0);
  for (QWidget* page : {boxPage, sobelPage, convPage}) {
    paramsLayout->addWidget(page);
    pages_.push_back(page);
  }

  auto* filterBox = new QGroupBox(tr("Filter"));
  auto* filterLayout = new QVBoxLayout(filterBox);
  auto* opForm = new QFormLayout;
  opForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  opForm->addRow(tr("Operation"), operation_);
  filterLayout->addLayout(opForm);
  filterLayout->addWidget(params_);

  // --- borders ---
  border_ = new QComboBox;
  border_->setObjectName(QStringLiteral("filterBorder"));
  border_->addItem(tr("reflect101 (default)"), static_cast<int>(BorderMode::Reflect101));
  border_->addItem(tr("reflect (SciPy symm)"), static_cast<int>(BorderMode::Reflect));
  border_->addItem(tr("replicate"), static_cast<int>(BorderMode::Replicate));
  border_->addItem(tr("wrap"), static_cast<int>(BorderMode::Wrap));
  border_->addItem(tr("constant"), static_cast<int>(BorderMode::Constant));
  border_->setToolTip(
      tr("What the filter sees beyond the photo's edges:\n"
         "reflect101  dcb|abcd|cba\nreflect  cba|abc|cba\nreplicate  aaa|abc|ccc\n"
         "wrap  bcd|abcd|abc\nconstant  vvv|abc|vvv"));
  borderValue_ = new QDoubleSpinBox;
  borderValue_->setObjectName(QStringLiteral("filterBorderValue"));
  borderValue_->setRange(-1e6, 1e6);
  borderValue_->setDecimals(3);
  borderValue_->setToolTip(tr("The constant, in sample units (0..255 for 8-bit photos)"));
  auto* borderRow = new QHBoxLayout;
  borderRow->addWidget(border_, 1);
  borderRow->addWidget(borderValue_);
  auto* borderBox = new QGroupBox(tr("Border"));
  auto* borderLayout = new QVBoxLayout(borderBox);
  borderLayout->addLayout(borderRow);

  // --- where to run, Apply, progress ---
  gpu_ = new QCheckBox(tr("GPU (CUDA)"));
  gpu_->setObjectName(QStringLiteral("filterRunGpu"));
  gpu_->setChecked(true);
  gpu_->setEnabled(false);
  gpu_->setToolTip(tr("Looking for a CUDA device..."));
  cpu_ = new QCheckBox(tr("CPU (OpenCV)"));
  cpu_->setObjectName(QStringLiteral("filterRunCpu"));
  cpu_->setChecked(true);
  cpu_->setToolTip(tr("The OpenCV baseline on all cores: what a user would otherwise pick"));
  auto* runOnRow = new QVBoxLayout;
  runOnRow->setSpacing(2);
  runOnRow->addWidget(gpu_);
  runOnRow->addWidget(cpu_);

  applyButton_ = new QPushButton(tr("Apply"));
  applyButton_->setObjectName(QStringLiteral("filterApply"));
  applyButton_->setDefault(true);
  applyButton_->setToolTip(tr("Run the filter on the photo (Ctrl+Return)"));
  QFont bold = applyButton_->font();
  bold.setBold(true);
  applyButton_->setFont(bold);
  applyButton_->setMinimumHeight(30);
  cancelButton_ = new QPushButton(tr("Cancel"));
  cancelButton_->setObjectName(QStringLiteral("filterCancel"));
  cancelButton_->setEnabled(false);
  cancelButton_->setToolTip(tr("Stop the running filter; nothing changes"));
  auto* applyRow = new QHBoxLayout;
  applyRow->addWidget(applyButton_, 2);
  applyRow->addWidget(cancelButton_, 1);

  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("filterProgress"));
  progress_->setRange(0, kProgressSteps);
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(8);
  progressLabel_ = new QLabel;
  progressLabel_->setEnabled(false);
  auto* progressRow = new QWidget;
  auto* progressLayout = new QVBoxLayout(progressRow);
  progressLayout->setContentsMargins(0, 0, 0, 0);
  progressLayout->setSpacing(2);
  progressLayout->addWidget(progress_);
  progressLayout->addWidget(progressLabel_);
  // Keep the space so the panel does not jump when a run starts.
  QSizePolicy keep = progressRow->sizePolicy();
  keep.setRetainSizeWhenHidden(true);
  progressRow->setSizePolicy(keep);
  progress_->setVisible(false);
  progressLabel_->setVisible(false);

  auto* runBox = new QGroupBox(tr("Run on"));
  auto* runLayout = new QVBoxLayout(runBox);
  runLayout->addLayout(runOnRow);

  // --- the result ---
  keepButton_ = new QPushButton(tr("Keep result"));
  keepButton_->setObjectName(QStringLiteral("filterKeep"));
  keepButton_->setToolTip(tr("Make the shown result the photo, so the next filter works on it (Ctrl+K)"));
  undoButton_ = new QPushButton(tr("Undo"));
  undoButton_->setObjectName(QStringLiteral("filterUndo"));
  undoButton_->setToolTip(tr("Back to the photo before the last Keep (Ctrl+Z)"));
  auto* keepRow = new QHBoxLayout;
  keepRow->addWidget(keepButton_);
  keepRow->addWidget(undoButton_);

  showGpu_ = makeToggle(tr("GPU"), tr("Show what the GPU computed (Keep result keeps the one shown)"));
  showGpu_->setObjectName(QStringLiteral("filterShowGpu"));
  showCpu_ = makeToggle(tr("CPU"), tr("Show what the CPU baseline computed (Keep result keeps the one shown)"));
  showCpu_->setObjectName(QStringLiteral("filterShowCpu"));
  showGpu_->setProperty("segment", QStringLiteral("first"));
  showCpu_->setProperty("segment", QStringLiteral("last"));
  auto* sourceGroup = new QButtonGroup(this);
  sourceGroup->setExclusive(true);
  sourceGroup->addButton(showGpu_);
  sourceGroup->addButton(showCpu_);
  showGpu_->setEnabled(false);
  showCpu_->setEnabled(false);
  auto* sourceRow = new QWidget;
  sourceRow->setStyleSheet(segmentedStyle());
  auto* sourceLayout = new QHBoxLayout(sourceRow);
  sourceLayout->setContentsMargins(0, 0, 0, 0);
  sourceLayout->setSpacing(0);
  sourceLayout->addWidget(new QLabel(tr("Show the result of")));
  sourceLayout->addSpacing(8);
  sourceLayout->addWidget(showGpu_);
  sourceLayout->addWidget(showCpu_);
  sourceLayout->addStretch(1);

  error_ = new QLabel;
  error_->setObjectName(QStringLiteral("filterError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(QStringLiteral("color: #ff8a80;"));
  error_->setVisible(false);
  status_ = new QLabel;
  status_->setObjectName(QStringLiteral("filterStatus"));
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::RichText);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  auto* resultBox = new QGroupBox(tr("Result"));
  auto* resultLayout = new QVBoxLayout(resultBox);
  resultLayout->addWidget(sourceRow);
  resultLayout->addLayout(keepRow);
  resultLayout->addSpacing(4);
  resultLayout->addWidget(error_);
  resultLayout->addWidget(status_);
  // The summary is never squeezed: a tall filter page (the kernel editor) scrolls instead.
  resultBox->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);

  // The settings scroll; Apply and the result stay in view below them.
  auto* settings = new QWidget;
  auto* settingsLayout = new QVBoxLayout(settings);
  settingsLayout->setContentsMargins(0, 0, 4, 0);
  settingsLayout->addWidget(filterBox);
  settingsLayout->addWidget(borderBox);
  settingsLayout->addWidget(runBox);
  settingsLayout->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(settings);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  auto* panel = new QWidget;
  panel->setFixedWidth(330);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll, 1);
  layout->addLayout(applyRow);
  layout->addWidget(progressRow);
  layout->addWidget(resultBox);

  for (QComboBox* box : {operation_, component_, border_, method_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
  }
  connect(operation_, &QComboBox::currentIndexChanged, this, &FiltersTab::operationChanged);
  connect(method_, &QComboBox::currentIndexChanged, this, &FiltersTab::methodChanged);
  methodHint_->setText(methodHintFor(ConvMethod::Direct));
  connect(radiusSlider_, &QSlider::valueChanged, this, [this](int v) {
    if (radius_->value() <= kRadiusSliderMax || v < kRadiusSliderMax) radius_->setValue(v);
  });
  connect(radius_, &QSpinBox::valueChanged, this, [this](int v) {
    const QSignalBlocker block(radiusSlider_);
    radiusSlider_->setValue(std::min(v, kRadiusSliderMax));
    radiusHint_->setText(v == 0 ? tr("Window 1x1: the photo unchanged") : tr("Window %1x%1").arg(2 * v + 1));
  });
  radiusHint_->setText(tr("Window %1x%1").arg(2 * radius_->value() + 1));
  connect(border_, &QComboBox::currentIndexChanged, this, &FiltersTab::borderChanged);
  connect(kernelEditor_, &KernelEditor::message, this, &FiltersTab::reportProblem);
  connect(applyButton_, &QPushButton::clicked, this, &FiltersTab::apply);
  connect(cancelButton_, &QPushButton::clicked, this, &FiltersTab::cancel);
  connect(keepButton_, &QPushButton::clicked, this, &FiltersTab::keepResult);
  connect(undoButton_, &QPushButton::clicked, this, &FiltersTab::undo);
  connect(showGpu_, &QToolButton::clicked, this, &FiltersTab::showResultSource);
  connect(showCpu_, &QToolButton::clicked, this, &FiltersTab::showResultSource);
  connect(gpu_, &QCheckBox::toggled, this, &FiltersTab::updateActions);
  connect(cpu_, &QCheckBox::toggled, this, &FiltersTab::updateActions);
  return panel;
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

  split->setProperty("segment", QStringLiteral("first"));
  result->setProperty("segment", QStringLiteral("last"));
  auto* barWidget = new QWidget;
  barWidget->setObjectName(QStringLiteral("filtersViewBar"));
  barWidget->setStyleSheet(segmentedStyle());
  auto* bar = new QHBoxLayout(barWidget);
  bar->setContentsMargins(0, 0, 0, 0);
  bar->setSpacing(0);
  bar->addWidget(new QLabel(tr("Compare")));
  bar->addSpacing(6);
  bar->addWidget(split);
  bar->addWidget(original);
  bar->addWidget(result);
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

// ---------------------------------------------------------------------------------------------
// The controls

gpulab::FilterSpec FiltersTab::spec() const {
  gpulab::FilterSpec s;
  s.op = static_cast<FilterOp>(operation_->currentData().toInt());
  s.border.mode = static_cast<BorderMode>(border_->currentData().toInt());
  s.border.value = s.border.mode == BorderMode::Constant ? borderValue_->value() : 0.0;
  s.radius = radius_->value();
  s.component = static_cast<SobelComponent>(component_->currentData().toInt());
  if (s.op == FilterOp::Conv) {
    s.kernel = kernelEditor_->kernel();
    s.correlate = kernelEditor_->correlate();
    s.mode = kernelEditor_->mode();
    s.method = convMethod();
  }
  return s;
}

void FiltersTab::setConvMethod(gpulab::ConvMethod method) {
  method_->setCurrentIndex(method_->findData(static_cast<int>(method)));
}

gpulab::ConvMethod FiltersTab::convMethod() const { return static_cast<ConvMethod>(method_->currentData().toInt()); }

void FiltersTab::methodChanged() {
  const ConvMethod method = convMethod();
  methodHint_->setText(methodHintFor(method));
  kernelEditor_->setMaxSide(editorKernelLimit(method));
}

void FiltersTab::setOperation(gpulab::FilterOp op) {
  operation_->setCurrentIndex(operation_->findData(static_cast<int>(op)));
}
void FiltersTab::setRadius(int radius) { radius_->setValue(radius); }
void FiltersTab::setSobelComponent(gpulab::SobelComponent component) {
  component_->setCurrentIndex(component_->findData(static_cast<int>(component)));
}
void FiltersTab::setBorder(gpulab::Border border) {
  border_->setCurrentIndex(border_->findData(static_cast<int>(border.mode)));
  borderValue_->setValue(border.value);
}
void FiltersTab::setRunOn(bool cpu, bool gpu) {
  cpu_->setChecked(cpu);
  gpu_->setChecked(gpu && (gpuAvailable_ || !deviceKnown_));
}

void FiltersTab::operationChanged() {
  for (int i = 0; i < static_cast<int>(pages_.size()); ++i) pages_[i]->setVisible(i == operation_->currentIndex());
}

void FiltersTab::borderChanged() {
  borderValue_->setEnabled(static_cast<BorderMode>(border_->currentData().toInt()) == BorderMode::Constant);
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

void FiltersTab::setStatus(const QString& html) { status_->setText(html); }
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
  const gpulab::FilterSpec s = spec();
  const bool wantGpu = gpu_->isChecked() && (gpuAvailable_ || !deviceKnown_);
  const bool wantCpu = cpu_->isChecked();
  if (!wantGpu && !wantCpu) {
    reportProblem(tr("Choose where to run: tick CPU, GPU or both."));
    emit runFinished();
    return;
  }
  // The same checks the worker makes, now: a bad parameter is reported without a round trip.
  const PhotoUpdate& photo = services_.photo.current();
  try {
    const std::unique_ptr<gpulab::Operation> filter = gpulab::makeFilter(s);
    if (const auto type = pixelTypeNamed(photo.sampleType))
      filter->outputShape({photo.width, photo.height, photo.channels, *type});
  } catch (const std::exception& e) {
    reportProblem(sentence(QString::fromStdString(e.what())));
    emit runFinished();
    return;
  }

  const std::shared_ptr<WorkerState> state = state_;
  QStringList where;
  if (wantGpu) where << tr("the GPU");
  if (wantCpu) where << tr("the CPU");
  progressLabel_->setText(tr("Running on %1...").arg(where.join(tr(" and "))));
  job_ = services_.engine.submit(
      this, [state, s, wantCpu, wantGpu](WorkerContext& ctx) { return runFilter(*state, ctx, s, wantCpu, wantGpu); },
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
             if (progress_->maximum() == 0) progress_->setRange(0, kProgressSteps);
             progress_->setValue(static_cast<int>(std::lround(f * kProgressSteps)));
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
  const bool hasAny = run.gpu || run.cpu;
  if (!hasAny) {
    reportProblem(sentence(tr("the GPU could not run (%1); tick CPU to run the baseline").arg(run.gpuNote)));
    return;
  }
  run_ = std::move(run);
  const FilterRun& r = *run_;
  showGpu_->setEnabled(r.gpu != nullptr);
  showCpu_->setEnabled(r.cpu != nullptr);
  if (!r.gpu)
    showCpu_->setChecked(true);
  else if (!r.cpu || !showCpu_->isChecked())
    showGpu_->setChecked(true);
  showResultSource();

  // The summary under the controls: what ran, a table of medians, how they were taken, a check.
  const std::optional<double> uploadMs = services_.photo.current().uploadMs;
  QString html = QStringLiteral("<b>%1</b><br>%2 &rarr; %3<table cellspacing='0' cellpadding='1' width='100%'>")
                     .arg(htmlEscaped(r.operation), htmlEscaped(r.input), htmlEscaped(r.output));
  auto row = [&html](const QString& what, const QString& value) {
    html += QStringLiteral("<tr><td>%1</td><td align='right'><b>%2</b></td></tr>").arg(what, value);
  };
  QStringList notes;
  const QString method = methodText(r);
  if (!method.isEmpty()) row(tr("Method"), htmlEscaped(method));
  std::optional<double> endToEnd;
  if (r.gpuCompute) {
    row(tr("GPU compute"), formatMs(r.gpuCompute->medianMs));
    endToEnd = uploadMs.value_or(0) + r.gpuCompute->medianMs + r.downloadMs.value_or(0);
    row(tr("GPU end-to-end"), formatMs(*endToEnd));
    notes << tr("GPU: median of %1 runs after %2 warm-ups.").arg(r.gpuCompute->reps).arg(r.gpuWarmups);
    notes << (uploadMs ? tr("End-to-end: upload %1 (once per photo) + compute + download %2.")
                             .arg(formatMs(*uploadMs), formatMs(r.downloadMs.value_or(0)))
                       : tr("End-to-end: compute + download %1 (the upload was not measured).")
                             .arg(formatMs(r.downloadMs.value_or(0))));
  } else if (deviceKnown_ && !gpuAvailable_) {
    row(tr("GPU"), tr("no CUDA device"));
  }
  if (r.cpuTime) {
    row(tr("CPU (OpenCV, %n threads)", nullptr, r.cpuThreads), formatMs(r.cpuTime->medianMs));
    if (r.cpuTime->reps > 1) notes << tr("CPU: median of %1 runs.").arg(r.cpuTime->reps);
  }
  if (r.cpuTime && r.gpuCompute && r.gpuCompute->medianMs > 0 && endToEnd && *endToEnd > 0)
    row(tr("Speedup"), tr("%1 compute, %2 end-to-end")
                           .arg(formatSpeedup(r.cpuTime->medianMs / r.gpuCompute->medianMs),
                                formatSpeedup(r.cpuTime->medianMs / *endToEnd)));
  if (r.gpu && r.cpu) {
    if (!r.maxAbsDiff)
      row(tr("CPU vs GPU"), tr("different shapes"));
    else
      row(tr("max |CPU &minus; GPU|"),
          *r.maxAbsDiff == 0 ? tr("0 (identical)") : QString::number(*r.maxAbsDiff, 'g', 3));
  }
  html += QStringLiteral("</table>");
  constexpr double kShownPrepareMs = 0.05;  // below that there was nothing to prepare
  if (r.gpuCompute && r.gpuPrepareMs >= kShownPrepareMs)
    notes << tr("GPU: %1 of one-time work (cost model calibration, FFT plans) before timing, not in the numbers.")
                 .arg(formatMs(r.gpuPrepareMs));
  if (r.cpuTime && r.cpuPrepareMs >= kShownPrepareMs)
    notes << tr("CPU: cost model calibrated once, %1, before timing.").arg(formatMs(r.cpuPrepareMs));
  if (!r.gpuNote.isEmpty()) notes << tr("GPU not used: %1.").arg(htmlEscaped(r.gpuNote));
  if (!r.displayNote.isEmpty()) notes << sentence(htmlEscaped(r.displayNote));
  if (!notes.isEmpty())
    html += QStringLiteral("<p style='color:#9a9ea6'><small>%1</small></p>").arg(notes.join(QLatin1Char(' ')));
  setStatus(html);

  // The Timings panel and the status bar name what auto took: "conv 31x31 same reflect101 auto → fft".
  const QString operation = r.method == QLatin1String("auto") && !autoChoice(r).isEmpty()
                                ? QStringLiteral("%1 → %2").arg(r.operation, autoChoice(r))
                                : r.operation;
  RunTiming timing;
  timing.operation = operation;
  timing.image = r.input;
  if (r.cpuTime) {
    timing.cpuMs = r.cpuTime->medianMs;
    timing.cpuThreads = r.cpuThreads;
  }
  if (r.gpuCompute) {
    timing.uploadMs = uploadMs;  // measured once, when the photo went to the GPU
    timing.computeMs = r.gpuCompute->medianMs;
    timing.downloadMs = r.downloadMs;
  }
  services_.timings.addRun(timing);

  QStringList parts;
  if (r.gpuCompute) parts << tr("GPU %1").arg(formatMs(r.gpuCompute->medianMs));
  if (r.cpuTime) parts << tr("CPU %1").arg(formatMs(r.cpuTime->medianMs));
  services_.showMessage(QStringLiteral("%1: %2").arg(operation, parts.join(QStringLiteral(", "))));
  updateActions();
}

void FiltersTab::showResultSource() {
  if (!run_) {
    view_->clearResult();
    viewInfo_->clear();
    return;
  }
  const bool gpu = run_->gpu && (showGpu_->isChecked() || !run_->cpu);
  const QImage& image = gpu ? run_->gpuDisplay : run_->cpuDisplay;
  view_->setResult(image, run_->beforeOffset, gpu ? tr("Result (GPU)") : tr("Result (CPU)"));
  viewInfo_->setText(run_->output);
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
  const bool gpu = run_->gpu && (showGpu_->isChecked() || !run_->cpu);
  const std::shared_ptr<const gpulab::Image> image = gpu ? run_->gpu : run_->cpu;
  const quint64 generation = run_->generation;
  const QString operation = run_->operation;
  const QString previousSource = services_.photo.current().source;
  const QString source = QStringLiteral("%1, %2").arg(services_.photo.displayName(), operation);
  const std::shared_ptr<WorkerState> state = state_;
  photoEditPending_ = true;
  updateActions();
  services_.engine.submit(
      this,
      [state, image, generation, previousSource, source](WorkerContext& ctx) {
        if (!ctx.hasPhoto() || ctx.photoGeneration() != generation)
          throw std::runtime_error("the photo changed since this result was computed; apply the filter again");
        if (state->ownGeneration != generation) state->undo.clear();  // the photo came from elsewhere
        state->undo.push_back({ctx.sharedPhoto(), previousSource});
        if (state->undo.size() > static_cast<std::size_t>(kUndoDepth)) state->undo.erase(state->undo.begin());
        ctx.setPhoto(gpulab::Image(*image), source);
        state->ownGeneration = ctx.photoGeneration();
        return static_cast<int>(state->undo.size());
      },
      [this, operation](int depth) {
        photoEditPending_ = false;
        undoDepth_ = depth;
        reportProblem({});
        setStatus(tr("<b>Kept</b> %1: it is now the photo, and the next filter works on it. Ctrl+Z goes back.")
                      .arg(htmlEscaped(operation)));
        updateActions();
        emit photoEditFinished();
      },
      {.coalesceKey = {},
       .failed =
           [this](const QString& why) {
             photoEditPending_ = false;
             reportProblem(sentence(why));
             updateActions();
             emit photoEditFinished();
           },
       .cancelled = {},
       .progress = {}});
}

void FiltersTab::undo() {
  if (undoDepth_ == 0 || running() || photoEditPending_) return;
  const std::shared_ptr<WorkerState> state = state_;
  photoEditPending_ = true;
  updateActions();
  services_.engine.submit(
      this,
      [state](WorkerContext& ctx) {
        if (state->undo.empty() || ctx.photoGeneration() != state->ownGeneration) {
          state->undo.clear();
          throw std::runtime_error("there is nothing to undo: the photo was replaced since the last Keep");
        }
        WorkerState::Saved previous = std::move(state->undo.back());
        state->undo.pop_back();
        ctx.setPhoto(gpulab::Image(*previous.image), previous.source);
        state->ownGeneration = ctx.photoGeneration();
        return static_cast<int>(state->undo.size());
      },
      [this](int depth) {
        photoEditPending_ = false;
        undoDepth_ = depth;
        reportProblem({});
        setStatus(tr("<b>Undone</b>: back to the photo before the last Keep."));
        updateActions();
        emit photoEditFinished();
      },
      {.coalesceKey = {},
       .failed =
           [this](const QString& why) {
             photoEditPending_ = false;
             undoDepth_ = 0;
             reportProblem(sentence(why));
             updateActions();
             emit photoEditFinished();
           },
       .cancelled = {},
       .progress = {}});
}

}  // namespace gpulab::gui
