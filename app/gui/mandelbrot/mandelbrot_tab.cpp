// The Mandelbrot tab: its controls, and navigation (history, Julia mode, iterations, precision).
#include "mandelbrot/mandelbrot_tab.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShowEvent>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <utility>

#include "mandelbrot/mandelbrot_worker.hpp"
#include "widgets/control_builders.hpp"
#include "widgets/run_timing.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

namespace {

constexpr int kRestMs = 250;       // the view rests this long before the full-resolution frame
constexpr int kSlowFrameMs = 400;  // a frame on the worker this long is said so, and can be cancelled
constexpr int kMaxHistory = 200;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction

MandelbrotTab::MandelbrotTab(TabServices& services, QWidget* parent)
    : QWidget(parent), services_(services), state_(std::make_shared<MandelbrotWorkerState>()) {
  view_ = gpulab::wholeSetView();
  mandelbrotView_ = view_;
  customPalette_ = gpulab::Palette::parseGradient(gpulab::Palette::named("classic").gradientText());
  clock_.start();
  buildUi();
  loadBookmarks();
  services_.engine.submit(
      this, [](WorkerContext&) { return listGpus(); }, [this](GpuChoices gpus) { gpuChoices_ = std::move(gpus); },
      {.coalesceKey = {}, .failed = [](const QString&) {}, .cancelled = {}, .progress = {}});
}

MandelbrotTab::~MandelbrotTab() {
  cpuJob_.cancel();
  saveJob_.cancel();
}

void MandelbrotTab::buildUi() {
  canvas_ = new MandelbrotCanvas;
  canvas_->setObjectName(QStringLiteral("mandelbrotCanvas"));
  restTimer_ = new QTimer(this);
  restTimer_->setSingleShot(true);
  restTimer_->setInterval(kRestMs);
  slowFrameTimer_ = new QTimer(this);
  slowFrameTimer_->setSingleShot(true);
  slowFrameTimer_->setInterval(kSlowFrameMs);

  backButton_ = new QPushButton(tr("Back"));
  backButton_->setObjectName(QStringLiteral("mandelbrotBack"));
  backButton_->setShortcut(QKeySequence::Back);
  forwardButton_ = new QPushButton(tr("Forward"));
  forwardButton_->setObjectName(QStringLiteral("mandelbrotForward"));
  forwardButton_->setShortcut(QKeySequence::Forward);
  auto* homeButton = new QPushButton(tr("Home"));
  auto* navigation = new QHBoxLayout;
  navigation->addWidget(backButton_);
  navigation->addWidget(forwardButton_);
  navigation->addWidget(homeButton);

  bookmarkBox_ = new QComboBox;
  bookmarkBox_->setObjectName(QStringLiteral("mandelbrotBookmarks"));
  bookmarkBox_->setToolTip(tr("Well-known places and your own bookmarks"));
  auto* addBookmarkButton = new QPushButton(tr("Add"));
  addBookmarkButton->setToolTip(tr("Bookmark the current view"));

  mode_ = new QComboBox;
  mode_->addItems({tr("Mandelbrot set"), tr("Julia set")});
  juliaC_ = new QLineEdit(QStringLiteral("-0.8, 0.156"));
  juliaC_->setToolTip(tr("The Julia constant c as X, Y (or press J over a point of the Mandelbrot set)"));
  juliaC_->setEnabled(false);

  iterations_ = new QSpinBox;
  iterations_->setRange(1, gpulab::kMaxMandelbrotIterations);
  iterations_->setValue(gpulab::autoIterations(view_.width));
  iterations_->setEnabled(false);
  iterations_->setObjectName(QStringLiteral("mandelbrotIterations"));
  autoIterations_ = new QCheckBox(tr("auto"));
  autoIterations_->setObjectName(QStringLiteral("mandelbrotAutoIterations"));
  autoIterations_->setChecked(true);
  autoIterations_->setToolTip(
      tr("From the zoom depth: 256 (1 + log10(3 / width))^1.25; doubled (up to 16 times) when a frame at rest "
         "has its escape counts running into the cap"));

  precision_ = named(new QComboBox, "mandelbrotPrecision");
  addItems<gpulab::Precision>(precision_, {{tr("auto"), gpulab::Precision::Auto},
                                           {QStringLiteral("float32"), gpulab::Precision::F32},
                                           {QStringLiteral("float64"), gpulab::Precision::F64},
                                           {tr("perturbation"), gpulab::Precision::Perturbation}});
  precision_->setToolTip(
      tr("auto: float32 while neighbouring pixels are at least 8 float32 steps apart "
         "(pixel spacing >= 2^-20 max(|x|, |y|, 1)), then float64 down to 2^-49, then perturbation: "
         "an MPFR reference orbit and every pixel as a delta against it, f64 deltas down to a pixel "
         "spacing of 2^-450 and floatexp (a double with its own exponent) beyond"));

  palette_ = new QComboBox;
  palette_->setObjectName(QStringLiteral("mandelbrotPalette"));
  for (const std::string& name : gpulab::paletteNames()) palette_->addItem(QString::fromStdString(name));
  palette_->addItem(tr("custom gradient"));
  gradient_ = new QLineEdit(QString::fromStdString(customPalette_.gradientText()));
  gradient_->setToolTip(tr("position:#rrggbb, comma separated, positions in [0, 1), cyclic"));
  gradient_->setEnabled(false);
  offset_ = new QSlider(Qt::Horizontal);
  offset_->setObjectName(QStringLiteral("mandelbrotOffset"));
  offset_->setRange(0, kOffsetSteps - 1);
  offset_->setToolTip(tr("Shifts the palette (recolours without recomputing)"));
  density_ = decimalSpinBox(0.01, 64.0, 0.25, 2, 1.0);
  density_->setToolTip(tr("Palette cycles per 32 iterations"));
  supersample_ = new QComboBox;
  addItems<int>(supersample_,
                {{tr("off"), 1}, {QStringLiteral("2x2"), 2}, {QStringLiteral("3x3"), 3}, {QStringLiteral("4x4"), 4}});
  supersample_->setToolTip(tr("Once the view rests, render again with this many samples per pixel"));

  auto* form = new QFormLayout;
  form->addRow(tr("Set"), mode_);
  form->addRow(tr("Julia c"), juliaC_);
  form->addRow(tr("Iterations"), rowWidget({iterations_, autoIterations_}, iterations_));
  form->addRow(tr("Precision"), precision_);
  form->addRow(tr("Palette"), palette_);
  form->addRow(tr("Gradient"), gradient_);
  form->addRow(tr("Offset"), offset_);
  form->addRow(tr("Density"), density_);
  form->addRow(tr("Supersampling"), supersample_);

  info_ = new QLabel;
  info_->setObjectName(QStringLiteral("mandelbrotInfo"));
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  info_->setWordWrap(true);
  timing_ = new QLabel;
  timing_->setObjectName(QStringLiteral("mandelbrotTiming"));
  timing_->setWordWrap(true);
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("mandelbrotMessage"));
  message_->setWordWrap(true);
  message_->setStyleSheet(QStringLiteral("color: #e0a040"));
  message_->hide();

  cpuButton_ = new QPushButton(tr("CPU render"));
  cpuButton_->setObjectName(QStringLiteral("mandelbrotCpuRender"));
  cpuButton_->setToolTip(tr("Render the current view on every CPU core and compare with the GPU"));
  cancelButton_ = new QPushButton(tr("Cancel"));
  cancelButton_->setObjectName(QStringLiteral("mandelbrotCancel"));
  cancelButton_->setEnabled(false);
  cpuProgress_ = new QProgressBar;
  cpuProgress_->setRange(0, 100);
  cpuProgress_->hide();
  comparison_ = new QLabel;
  comparison_->setObjectName(QStringLiteral("mandelbrotComparison"));
  comparison_->setWordWrap(true);
  auto* saveButton = new QPushButton(tr("Save PNG..."));
  saveButton->setToolTip(tr("Render the view at any size (8K and up) and save it with its coordinates"));
  auto* openButton = new QPushButton(tr("Open PNG..."));
  openButton->setToolTip(tr("Restore the view stored in a PNG saved by gpulab"));
  auto* fileRow = new QHBoxLayout;
  fileRow->addWidget(saveButton);
  fileRow->addWidget(openButton);

  auto* controls = new QWidget;
  auto* layout = new QVBoxLayout(controls);
  layout->addLayout(navigation);
  layout->addWidget(rowWidget({bookmarkBox_, addBookmarkButton}, bookmarkBox_));
  layout->addWidget(buildLocationControls());
  layout->addWidget(message_);  // near the top: what was wrong with a typed location shows beside it
  layout->addLayout(form);
  layout->addWidget(info_);
  layout->addWidget(timing_);
  layout->addWidget(rowWidget({cpuButton_, cancelButton_}, cpuButton_));
  layout->addWidget(cpuProgress_);
  layout->addWidget(comparison_);
  layout->addLayout(fileRow);
  layout->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setMinimumWidth(300);
  scroll->setMaximumWidth(380);

  auto* main = new QHBoxLayout(this);
  main->addWidget(scroll);
  main->addWidget(canvas_, 1);

  connect(canvas_, &MandelbrotCanvas::viewRequested, this, &MandelbrotTab::viewEdited);
  connect(canvas_, &MandelbrotCanvas::requestRejected, this, &MandelbrotTab::requestRejected);
  connect(canvas_, &MandelbrotCanvas::newtonRequested, this,
          [this](QPointF pixel) { zoomToMinibrot(pixel, std::nullopt); });
  connect(canvas_, &MandelbrotCanvas::homeRequested, this, &MandelbrotTab::home);
  connect(canvas_, &MandelbrotCanvas::juliaRequested, this, &MandelbrotTab::toJulia);
  connect(canvas_, &MandelbrotCanvas::mandelbrotRequested, this, &MandelbrotTab::toMandelbrot);
  connect(canvas_, &MandelbrotCanvas::resized, this, &MandelbrotTab::canvasResized);
  connect(canvas_, &MandelbrotCanvas::framePresented, this, &MandelbrotTab::canvasPresented);
  connect(restTimer_, &QTimer::timeout, this, [this] {
    commitHistory();
    scheduleRender();
  });
  connect(slowFrameTimer_, &QTimer::timeout, this, [this] {
    updateOverlay();
    updateCancelButton();
  });
  connect(bookmarkBox_, &QComboBox::activated, this, &MandelbrotTab::bookmarkChosen);
  connect(mode_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index == 1) {
      const auto c = parsePointText(juliaC_->text());
      toJulia(c.value_or(QPointF(-0.8, 0.156)));
    } else {
      toMandelbrot();
    }
  });
  connect(juliaC_, &QLineEdit::editingFinished, this, [this] {
    const auto c = parsePointText(juliaC_->text());
    if (!c) {
      message_->setText(tr("Julia c '%1' is not a point: write X, Y").arg(juliaC_->text()));
      message_->show();
      return;
    }
    if (view_.julia && (c->x() != view_.juliaX || c->y() != view_.juliaY)) {
      MandelbrotView v = view_;
      v.juliaX = c->x();
      v.juliaY = c->y();
      navigate(v);
    }
  });
  connect(iterations_, &QSpinBox::valueChanged, this, &MandelbrotTab::iterationsChanged);
  connect(autoIterations_, &QCheckBox::toggled, this, [this](bool on) {
    iterations_->setEnabled(!on);
    iterationsChanged();
  });
  connect(precision_, &QComboBox::currentIndexChanged, this, &MandelbrotTab::precisionChanged);
  connect(palette_, &QComboBox::currentIndexChanged, this, [this] {
    gradient_->setEnabled(palette_->currentIndex() == palette_->count() - 1);
    colouringChanged();
  });
  connect(gradient_, &QLineEdit::editingFinished, this, [this] {
    try {
      customPalette_ = gpulab::Palette::parseGradient(gradient_->text().toStdString());
      message_->hide();
    } catch (const std::invalid_argument& e) {
      message_->setText(QString::fromUtf8(e.what()));
      message_->show();
      return;
    }
    colouringChanged();
  });
  connect(offset_, &QSlider::valueChanged, this, &MandelbrotTab::colouringChanged);
  connect(density_, &QDoubleSpinBox::valueChanged, this, &MandelbrotTab::colouringChanged);
  connect(supersample_, &QComboBox::currentIndexChanged, this, &MandelbrotTab::scheduleRender);
  const std::pair<QPushButton*, void (MandelbrotTab::*)()> buttonActions[] = {
      {backButton_, &MandelbrotTab::back},          {forwardButton_, &MandelbrotTab::forward},
      {homeButton, &MandelbrotTab::home},           {addBookmarkButton, &MandelbrotTab::addBookmarkWithDialog},
      {cpuButton_, &MandelbrotTab::renderOnCpu},    {cancelButton_, &MandelbrotTab::cancelWork},
      {saveButton, &MandelbrotTab::saveWithDialog}, {openButton, &MandelbrotTab::openWithDialog}};
  for (const auto& [button, action] : buttonActions) connect(button, &QPushButton::clicked, this, action);
  updateHistoryButtons();
  updateInfo();
  updateLocationFields();
}

gpulab::Colouring MandelbrotTab::colouring() const {
  gpulab::Colouring c;
  const int index = palette_->currentIndex();
  c.palette =
      index < palette_->count() - 1 ? gpulab::Palette::named(palette_->currentText().toStdString()) : customPalette_;
  c.offset = static_cast<double>(offset_->value()) / kOffsetSteps;
  c.density = density_->value();
  return c;
}

// ---------------------------------------------------------------------------------------------
// Navigation

bool MandelbrotTab::accept(MandelbrotView& v, QString* why) const {
  const QSize size = canvas_->pixelSize();
  v.imageWidth = size.width();
  v.imageHeight = size.height();
  v.supersample = 1;
  v.precision = static_cast<gpulab::Precision>(precision_->currentData().toInt());
  try {
    v.maxIterations = autoIterations_->isChecked() ? automaticIterations(v.width) : iterations_->value();
    gpulab::choosePrecision(v);
  } catch (const std::exception& e) {  // PrecisionLimitError, std::invalid_argument
    if (why != nullptr) *why = QString::fromUtf8(e.what());
    return false;
  }
  return true;
}

void MandelbrotTab::showProblem(const QString& why, bool onCanvas) {
  message_->setText(why);
  message_->show();
  if (onCanvas) canvas_->setMessage(why);
  services_.showMessage(why);
}

void MandelbrotTab::viewEdited(const MandelbrotView& requested) {
  MandelbrotView v = requested;
  QString why;
  if (!accept(v, &why)) {
    showProblem(why, true);
    return;
  }
  if (v == view_) return;
  setViewInternal(v, true);
}

void MandelbrotTab::requestRejected(const QString& why) { showProblem(why, true); }

bool MandelbrotTab::navigate(MandelbrotView v) {
  QString why;
  const double scale = iterationScale_;
  iterationScale_ = 1.0;  // a new place: the cap learned from the frames starts again
  if (!accept(v, &why)) {
    iterationScale_ = scale;
    showProblem(why, true);
    return false;
  }
  jumped_ = true;
  setViewInternal(v, false);
  commitHistory();
  return true;
}

void MandelbrotTab::setViewInternal(const MandelbrotView& v, bool interactive) {
  view_ = v;
  if (!v.julia) mandelbrotView_ = v;
  {
    const QSignalBlocker block1(mode_), block2(iterations_);
    mode_->setCurrentIndex(v.julia ? 1 : 0);
    iterations_->setValue(v.maxIterations);
  }
  juliaC_->setEnabled(v.julia);
  if (v.julia) juliaC_->setText(pointText(v.juliaX, v.juliaY));
  canvas_->setView(v);
  canvas_->setMessage({});
  message_->hide();
  updateInfo();
  updateLocationFields();
  updateOverlay();
  if (interactive)
    restTimer_->start();
  else
    restTimer_->stop();
  scheduleRender();
}

void MandelbrotTab::commitHistory() {
  if (historyIndex_ >= 0 && samePlace(history_[historyIndex_], view_)) return;
  history_.resize(historyIndex_ + 1);
  history_.push_back(view_);
  if (static_cast<int>(history_.size()) > kMaxHistory) history_.erase(history_.begin());
  historyIndex_ = static_cast<int>(history_.size()) - 1;
  updateHistoryButtons();
}

void MandelbrotTab::back() {
  if (historyIndex_ <= 0) return;
  MandelbrotView v = history_[--historyIndex_];
  if (accept(v, nullptr)) setViewInternal(v, false);
  updateHistoryButtons();
}

void MandelbrotTab::forward() {
  if (historyIndex_ + 1 >= static_cast<int>(history_.size())) return;
  MandelbrotView v = history_[++historyIndex_];
  if (accept(v, nullptr)) setViewInternal(v, false);
  updateHistoryButtons();
}

void MandelbrotTab::home() {
  MandelbrotView v = view_.julia ? view_ : gpulab::wholeSetView();
  if (view_.julia) {
    v.centerX = {};
    v.centerY = {};
    v.width = gpulab::DeepWidth::parse("3.2");
  }
  navigate(v);
}

void MandelbrotTab::updateHistoryButtons() {
  backButton_->setEnabled(historyIndex_ > 0);
  forwardButton_->setEnabled(historyIndex_ + 1 < static_cast<int>(history_.size()));
}

void MandelbrotTab::toJulia(QPointF c) {
  if (!view_.julia) mandelbrotView_ = view_;
  MandelbrotView v = view_;
  v.julia = true;
  v.juliaX = c.x();
  v.juliaY = c.y();
  v.centerX = {};
  v.centerY = {};
  v.width = gpulab::DeepWidth::parse("3.2");
  if (!navigate(v)) {
    const QSignalBlocker block(mode_);
    mode_->setCurrentIndex(view_.julia ? 1 : 0);
  }
}

void MandelbrotTab::toMandelbrot() {
  MandelbrotView v = mandelbrotView_;
  v.julia = false;
  navigate(v);
}

void MandelbrotTab::iterationsChanged() {
  MandelbrotView v = view_;
  if (accept(v, nullptr) && !(v == view_)) setViewInternal(v, false);
}

void MandelbrotTab::setIterations(std::optional<int> count) {
  {
    const QSignalBlocker b1(autoIterations_), b2(iterations_);
    autoIterations_->setChecked(!count.has_value());
    iterations_->setEnabled(count.has_value());
    if (count) iterations_->setValue(*count);
  }
  iterationsChanged();
}

void MandelbrotTab::precisionChanged() {
  MandelbrotView v = view_;
  QString why;
  if (!accept(v, &why)) {
    message_->setText(why);
    message_->show();
    return;
  }
  setViewInternal(v, false);
}

void MandelbrotTab::canvasResized() {
  MandelbrotView v = view_;
  if (!accept(v, nullptr)) return;
  if (historyIndex_ < 0) {  // the first size: the starting view becomes the first history entry
    setViewInternal(v, false);
    commitHistory();
    scheduleRender();
    return;
  }
  // A preview while the window is resized, the full frame once it rests; before the first frame
  // (the window settling at start-up) straight to the full frame.
  setViewInternal(v, shown_.has_value());
}

void MandelbrotTab::colouringChanged() { scheduleRender(); }

void MandelbrotTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (pending_) scheduleRender();
}

void MandelbrotTab::updateInfo() {
  const MandelbrotView& v = view_;
  QString precision;
  try {
    precision = QString::fromStdString(gpulab::choosePrecision(v).describe());
  } catch (const std::exception& e) {
    precision = QString::fromUtf8(e.what());
  }
  QStringList lines;
  lines << tr("centre  %1, %2").arg(shortDecimalText(v.centerX, 20), shortDecimalText(v.centerY, 20));
  lines << tr("width  %1   zoom  10^%2").arg(shortWidthText(v.width)).arg(v.depth(), 0, 'f', 1);
  if (v.julia) lines << tr("Julia set of c = %1").arg(pointText(v.juliaX, v.juliaY));
  QString iterationNote;
  if (autoIterations_->isChecked())
    iterationNote =
        iterationScale_ > 1.0 ? tr(" (auto, raised %1x from the counts)").arg(iterationScale_) : tr(" (auto)");
  lines << tr("iterations  %1%2").arg(v.maxIterations).arg(iterationNote);
  lines << tr("precision  %1").arg(precision);
  lines << tr("image  %1x%2").arg(v.imageWidth).arg(v.imageHeight);
  info_->setText(lines.join(QLatin1Char('\n')));
}

void MandelbrotTab::updateOverlay() {
  QString label;
  bool deep = false;
  try {
    const gpulab::PrecisionChoice choice = gpulab::choosePrecision(view_);
    label = QString::fromStdString(choice.label());
    deep = choice.used == gpulab::Precision::Perturbation;
  } catch (const std::exception&) {
    label = shownPrecision_;
  }
  QString text = tr("%1   width %2").arg(label, shortWidthText(view_.width));
  if (frameIsSlow())
    text += tr("   rendering...");
  else if (deep && lastReference_)
    text += lastReference_->reused ? tr("   reference reused")
                                   : tr("   new reference %1").arg(formatMs(lastReference_->referenceMs));
  canvas_->setOverlay(text);
}

void MandelbrotTab::updateCancelButton() {
  cancelButton_->setEnabled(cpuJob_.running() || saveJob_.running() || newtonJob_.running() || frameIsSlow());
}

bool MandelbrotTab::frameIsSlow() const { return inFlightKey_ && !slowFrameTimer_->isActive(); }

void MandelbrotTab::endFrame() {
  inFlightKey_.reset();
  slowFrameTimer_->stop();
  updateCancelButton();
}

void MandelbrotTab::cancelWork() {
  cpuJob_.cancel();
  saveJob_.cancel();
  newtonJob_.cancel();
  if (frameIsSlow()) frameJob_.cancel();
}

}  // namespace gpulab::gui
