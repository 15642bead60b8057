#include "fft/fft_tab.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QShowEvent>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpulab/core/device_image.hpp"
#include "gpulab/measure/harness.hpp"
#include "shell/photo_document.hpp"
#include "widgets/control_builders.hpp"
#include "widgets/image_convert.hpp"
#include "widgets/image_view.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// Worker side

struct FftTab::WorkerState {
  std::unique_ptr<gpulab::FftFilter> filter;
  gpulab::FftSpectrum spectrum;
  gpulab::DeviceImage filtered;
  gpulab::DeviceImage spectrumOnGpu;
  gpulab::Image spectrumValues;  // log(1 + |F|) of the current photo
  quint64 spectrumGeneration = 0;
  gpulab::ColorMap spectrumMap = gpulab::ColorMap::Viridis;
  gpulab::Image lastResult;  // for "Use as photo"
  QString lastOperation;
};

namespace {

/// What one run hands back to the GUI thread.
struct FftRun {
  QImage spectrum;  // colour-mapped; null when the photo and the colour map did not change
  QImage result;
  quint64 generation = 0;
  std::optional<double> spectrumPlanMs;
  bool fusedGpu = false;       // the GPU ran gpulab's own FFT passes (a power-of-two size), not cuFFT
  gpulab::Measurement record;  // the filter, measured by the harness on the GPU and/or the CPU
};

constexpr int kSliderScale = 100;  // slider steps per unit of cutoff

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction

FftTab::FftTab(TabServices& services, QWidget* parent)
    : QWidget(parent), services_(services), state_(std::make_shared<WorkerState>()) {
  buildUi();
  connect(&services_.photo, &PhotoDocument::changed, this, &FftTab::photoChanged);
  photoChanged();
}

FftTab::~FftTab() = default;

void FftTab::buildUi() {
  band_ = new QComboBox;
  addItems<FreqBand>(band_, {{tr("Low-pass"), FreqBand::Lowpass},
                             {tr("High-pass"), FreqBand::Highpass},
                             {tr("Band-pass"), FreqBand::Bandpass},
                             {tr("Band-stop"), FreqBand::Bandstop}});
  shape_ = new QComboBox;
  addItems<FreqShape>(shape_, {{tr("Ideal"), FreqShape::Ideal},
                               {tr("Gaussian"), FreqShape::Gaussian},
                               {tr("Butterworth"), FreqShape::Butterworth}});
  shape_->setCurrentIndex(1);

  // A cutoff: a slider and a spin box that follow each other.
  auto makeCutoff = [this](QDoubleSpinBox*& spin, double value) {
    auto* slider = new QSlider(Qt::Horizontal);
    slider->setRange(1, 150);
    slider->setValue(static_cast<int>(std::lround(value * kSliderScale)));
    spin = decimalSpinBox(0.01, 1.5, 0.01, 2, value);
    spin->setToolTip(tr("Fraction of Nyquist: 1.0 is Nyquist along an axis, 1.41 the corners"));
    connect(slider, &QSlider::valueChanged, this, [this, spin](int v) {
      const QSignalBlocker block(spin);
      spin->setValue(static_cast<double>(v) / kSliderScale);
      controlsChanged();
    });
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, slider](double v) {
      const QSignalBlocker block(slider);
      slider->setValue(static_cast<int>(std::lround(v * kSliderScale)));
      controlsChanged();
    });
    return rowWidget({slider, spin}, slider);
  };
  QWidget* cutoffRow = makeCutoff(cutoff_, 0.15);
  cutoff2Row_ = makeCutoff(cutoff2_, 0.5);

  order_ = new QSpinBox;
  order_->setRange(1, 20);
  order_->setValue(2);
  padding_ = new QComboBox;
  addItems<FftPadding>(
      padding_, {{tr("None (periodic)"), FftPadding::None}, {tr("Mirror (no edge ringing)"), FftPadding::Mirror}});
  colorMap_ = new QComboBox;
  addItems<ColorMap>(
      colorMap_,
      {{tr("Viridis"), ColorMap::Viridis}, {tr("Inferno"), ColorMap::Inferno}, {tr("Gray"), ColorMap::Gray}});
  gpu_ = new QCheckBox(tr("GPU"));
  gpu_->setChecked(true);
  cpu_ = new QCheckBox(tr("CPU baseline (OpenCV)"));
  cpu_->setChecked(true);
  usePhoto_ = new QPushButton(tr("Use result as photo"));
  usePhoto_->setEnabled(false);
  usePhoto_->setToolTip(tr("Make the filtered image the current photo, so other tabs work on it"));
  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setObjectName(QStringLiteral("fftStatus"));

  auto* form = new QFormLayout;
  form->addRow(tr("Filter"), band_);
  form->addRow(tr("Shape"), shape_);
  form->addRow(tr("Cutoff"), cutoffRow);
  form->addRow(tr("Cutoff 2"), cutoff2Row_);
  form->addRow(tr("Order"), order_);
  form->addRow(tr("Padding"), padding_);
  form->addRow(tr("Colour map"), colorMap_);
  auto* controls = new QGroupBox(tr("Frequency filter"));
  auto* controlsLayout = new QVBoxLayout(controls);
  controlsLayout->addLayout(form);
  controlsLayout->addWidget(gpu_);
  controlsLayout->addWidget(cpu_);
  controlsLayout->addWidget(usePhoto_);
  controlsLayout->addWidget(status_);
  controlsLayout->addStretch(1);
  controls->setMinimumWidth(280);
  controls->setMaximumWidth(360);

  spectrumView_ = new ImageView;
  spectrumView_->setObjectName(QStringLiteral("fftSpectrumView"));
  spectrumView_->setPlaceholderText(tr("Spectrum\n\nlog(1 + |F|), centred"));
  resultView_ = new ImageView;
  resultView_->setObjectName(QStringLiteral("fftResultView"));
  resultView_->setPlaceholderText(tr("No photo\n\nOpen one with File > Open."));
  auto* views = new QSplitter(Qt::Horizontal);
  views->addWidget(spectrumView_);
  views->addWidget(resultView_);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(controls);
  layout->addWidget(views, 1);

  for (QComboBox* box : {band_, shape_, padding_})
    connect(box, &QComboBox::currentIndexChanged, this, &FftTab::controlsChanged);
  connect(colorMap_, &QComboBox::currentIndexChanged, this, &FftTab::schedule);
  connect(order_, &QSpinBox::valueChanged, this, &FftTab::controlsChanged);
  connect(gpu_, &QCheckBox::toggled, this, &FftTab::schedule);
  connect(cpu_, &QCheckBox::toggled, this, &FftTab::schedule);
  connect(usePhoto_, &QPushButton::clicked, this, &FftTab::useAsPhoto);
  controlsChanged();
}

FftFilterSpec FftTab::spec() const {
  FftFilterSpec s;
  s.band = static_cast<FreqBand>(band_->currentData().toInt());
  s.shape = static_cast<FreqShape>(shape_->currentData().toInt());
  s.cutoff = cutoff_->value();
  s.cutoff2 = cutoff2_->value();
  s.order = order_->value();
  s.padding = static_cast<FftPadding>(padding_->currentData().toInt());
  return s;
}

// ---------------------------------------------------------------------------------------------
// Reacting to the user and the photo

void FftTab::controlsChanged() {
  const FftFilterSpec s = spec();
  const bool band = s.band == FreqBand::Bandpass || s.band == FreqBand::Bandstop;
  cutoff2Row_->setEnabled(band);
  order_->setEnabled(s.shape == FreqShape::Butterworth);
  showSpectrum();  // the overlay follows the controls at once; the filtered photo follows the job
  schedule();
}

void FftTab::photoChanged() {
  if (!services_.photo.hasPhoto()) {
    spectrumView_->clearImage();
    resultView_->clearImage();
    usePhoto_->setEnabled(false);
    return;
  }
  schedule();
}

void FftTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (pending_) schedule();
}

void FftTab::schedule() {
  if (band_ == nullptr || !services_.photo.hasPhoto()) return;
  if (!isVisible()) {  // the worker serves every tab: no work for a tab nobody looks at
    pending_ = true;
    return;
  }
  pending_ = false;
  const FftFilterSpec s = spec();
  try {
    validateFftFilterSpec(s);
  } catch (const std::invalid_argument& e) {
    status_->setText(tr("Not run: %1").arg(QString::fromUtf8(e.what())));
    return;
  }
  const bool wantGpu = gpu_->isChecked(), wantCpu = cpu_->isChecked();
  const auto map = static_cast<ColorMap>(colorMap_->currentData().toInt());
  const std::shared_ptr<WorkerState> state = state_;
  status_->setText(tr("Running..."));
  awaitingResult_ = true;

  job_ = services_.engine.submit(
      this,
      [state, s, wantGpu, wantCpu, map](WorkerContext& ctx) {
        if (!ctx.hasPhoto()) throw std::runtime_error("there is no photo to filter");
        const gpulab::Image& photo = ctx.photo();
        FftRun run;
        run.generation = ctx.photoGeneration();
        if (!state->filter)
          state->filter = std::make_unique<gpulab::FftFilter>(s);
        else
          state->filter->setSpec(s);
        gpulab::FftFilter& filter = *state->filter;
        const bool gpuReady = ctx.hasGpu() && ctx.photoOnGpu();

        // The spectrum depends on the photo only: once per photo, coloured again when the map changes.
        const bool newPhoto = state->spectrumGeneration != run.generation;
        if (newPhoto) {
          if (gpuReady) {
            state->spectrum.runGpu(ctx.gpu(), ctx.devicePhoto(), state->spectrumOnGpu);
            state->spectrumValues = ctx.gpu().download(state->spectrumOnGpu);
            const double planMs = state->spectrum.takePlanCreationMs();
            if (planMs > 0) run.spectrumPlanMs = planMs;
          } else {
            state->spectrumValues = state->spectrum.runCpu(photo);
          }
          state->spectrumGeneration = run.generation;
        }
        if (newPhoto || map != state->spectrumMap) {
          run.spectrum = toQImage(gpulab::applyColorMap(state->spectrumValues, map));
          state->spectrumMap = map;
        }
        ctx.throwIfCancelled();

        // The filter through the harness: GPU from the resident photo (no upload timed), the CPU
        // baseline when asked for or when the GPU cannot give the result.
        gpulab::MeasureSetup setup;
        setup.wantGpu = wantGpu && gpuReady;
        setup.wantCpu = wantCpu || !setup.wantGpu;
        setup.gpu = gpuReady ? &ctx.gpu() : nullptr;
        setup.resident = gpuReady ? &ctx.devicePhoto() : nullptr;
        setup.gpuOutput = &state->filtered;
        setup.control = ctx.cpuControl();
        run.fusedGpu = setup.wantGpu && filter.takesFusedPath(gpulab::shapeOf(photo));
        gpulab::MeasureResult measured = gpulab::measure(filter, photo, setup, gpulab::MeasurePolicy::interactive());
        if (wantGpu && !gpuReady) measured.record.gpuSkipped = !ctx.hasGpu() ? "no GPU" : "the photo is not on the GPU";
        run.record = std::move(measured.record);
        gpulab::Image result =
            measured.gpuOutput.empty() ? std::move(measured.cpuOutput) : std::move(measured.gpuOutput);
        run.result = toQImage(result);
        state->lastResult = std::move(result);
        state->lastOperation = operationText(run.record);
        return run;
      },
      [this](FftRun run) {
        if (!run.spectrum.isNull() || run.generation != shownGeneration_) {
          if (!run.spectrum.isNull()) spectrum_ = run.spectrum;
          if (run.generation != shownGeneration_) planShown_ = false;
          shownGeneration_ = run.generation;
          showSpectrum();
        }
        resultView_->setImage(run.result);
        usePhoto_->setEnabled(true);

        gpulab::Measurement& m = run.record;
        services_.photo.addResidentUpload(m);
        QStringList lines;
        if (const auto compute = computeMs(m)) {
          lines << tr("GPU compute %1 (median of %2), %3")
                       .arg(formatMs(*compute))
                       .arg(m.gpu->compute.reps)
                       .arg(run.fusedGpu ? tr("gpulab's fused FFT passes (a power-of-two size)") : tr("cuFFT"));
          if (m.gpu->prepareMs > 0 && !planShown_) {
            lines << tr("cuFFT plan creation %1 (first run of this size, not in compute)")
                         .arg(formatMs(m.gpu->prepareMs));
            planShown_ = true;
          }
          if (run.spectrumPlanMs) lines << tr("spectrum plan creation %1").arg(formatMs(*run.spectrumPlanMs));
          if (const auto download = downloadMs(m)) lines << tr("download %1").arg(formatMs(*download));
        }
        if (!m.gpuSkipped.empty() && m.gpuSkipped != "not asked for")
          lines << tr("GPU not used: %1").arg(QString::fromStdString(m.gpuSkipped));
        if (const auto cpu = cpuMs(m))
          lines << tr("CPU (OpenCV, %1 threads) %2 (median of %3)")
                       .arg(m.cpu->threads)
                       .arg(formatMs(*cpu))
                       .arg(m.cpu->time.reps);
        if (const auto speedup = m.speedup()) lines << tr("speedup %1 (compute)").arg(formatSpeedup(*speedup));
        status_->setText(lines.join(QLatin1Char('\n')));
        services_.timings.addRun(m);
        awaitingResult_ = false;
        emit resultShown();
      },
      {.coalesceKey = QStringLiteral("fft"),
       .failed =
           [this](const QString& why) {
             awaitingResult_ = false;
             status_->setText(tr("Failed: %1").arg(why));
             services_.showError(why);
           },
       .cancelled = {},
       .progress = {}});
}

void FftTab::useAsPhoto() {
  const std::shared_ptr<WorkerState> state = state_;
  services_.engine.submit(
      this,
      [state](WorkerContext& ctx) {
        if (state->lastResult.empty()) throw std::runtime_error("nothing has been filtered yet");
        ctx.setPhoto(state->lastResult, state->lastOperation);
      },
      [this] { services_.showMessage(tr("The filtered image is now the photo")); });
}

// ---------------------------------------------------------------------------------------------
// The spectrum with the filter drawn over it

void FftTab::showSpectrum() {
  if (spectrum_.isNull()) return;
  QImage image = spectrum_.convertToFormat(QImage::Format_RGBA8888);
  const FftFilterSpec s = spec();
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  const double w = image.width(), h = image.height();
  QPen pen(QColor(255, 255, 255, 220));
  pen.setWidthF(std::max(1.0, std::min(w, h) / 300.0));
  painter.setPen(pen);
  // r = c is an ellipse in pixels: c * W/2 across, c * H/2 down, about the DC pixel (W/2, H/2).
  const QPointF dc(std::floor(w / 2) + 0.5, std::floor(h / 2) + 0.5);
  painter.drawEllipse(dc, s.cutoff * w / 2, s.cutoff * h / 2);
  if (s.band == FreqBand::Bandpass || s.band == FreqBand::Bandstop) {
    pen.setStyle(Qt::DashLine);
    painter.setPen(pen);
    painter.drawEllipse(dc, s.cutoff2 * w / 2, s.cutoff2 * h / 2);
  }
  painter.end();
  spectrumView_->setImage(image);
}

}  // namespace gpulab::gui
