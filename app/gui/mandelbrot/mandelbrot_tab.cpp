#include "mandelbrot/mandelbrot_tab.hpp"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QRubberBand>
#include <QScrollArea>
#include <QSettings>
#include <QShowEvent>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "gpulab/io/image_io.hpp"
#include "gpulab/measure/harness.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

namespace {

constexpr int kRestMs = 250;         // the view rests this long before the full-resolution frame
constexpr double kWheelStep = 1.25;  // zoom per wheel notch
constexpr double kKeyZoom = 1.5;     // zoom per + / -
constexpr int kMaxHistory = 200;
constexpr int kOffsetSteps = 1000;  // offset slider steps per palette cycle
const char* const kBookmarksKey = "mandelbrot/bookmarks";

double spacingOf(const MandelbrotView& v) { return v.width / v.imageWidth; }

bool samePlace(const MandelbrotView& a, const MandelbrotView& b) {
  return a.centerX == b.centerX && a.centerY == b.centerY && a.width == b.width && a.julia == b.julia &&
         a.juliaX == b.juliaX && a.juliaY == b.juliaY;
}

QString pointText(double x, double y) { return QStringLiteral("%1, %2").arg(x, 0, 'g', 17).arg(y, 0, 'g', 17); }

std::optional<QPointF> parsePointText(const QString& text) {
  try {
    const auto p = gpulab::parsePoint(text.toStdString(), "c");
    return QPointF(p[0], p[1]);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

/// What one frame job hands back.
struct FrameResult {
  QImage image;
  std::optional<double> computeMs;  // empty for a recolour
  double workerMs = 0;
  bool onGpu = false;
};

static_assert(std::endian::native == std::endian::little, "ChannelOrder::Bgra is QImage::Format_RGB32 here");

/// The RGBA frame as the canvas draws it fastest: RGB32, the raster backing store's own layout, so a
/// paint copies (or scales) pixels without converting them. Converted here, on the worker.
QImage displayImage(const gpulab::Image& rgba) {
  const QImage wrapped(reinterpret_cast<const uchar*>(rgba.data()), rgba.width(), rgba.height(),
                       static_cast<qsizetype>(rgba.rowBytes()), QImage::Format_RGBA8888);
  return wrapped.convertToFormat(QImage::Format_RGB32);
}

/// One run, no warm-up: a frame is computed once and shown (after the first frame the module is
/// loaded), so its time is that one run's, taken by the harness's primitives (gpulab::measureStream on
/// the GPU, gpulab::measureHost on the CPU).
gpulab::MeasurePolicy oneFrame() {
  gpulab::MeasurePolicy policy;
  policy.gpuWarmup = 0;
  policy.gpuReps = 1;
  policy.gpuSlowMs = 0;
  policy.cpuWarmup = 0;
  policy.cpuReps = 1;
  policy.cpuBudgetMs = 0;
  return policy;
}

struct Opened {
  MandelbrotView view;
  gpulab::Colouring colouring;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// View arithmetic

QPointF planePoint(const MandelbrotView& v, QPointF pixel) {
  const double h = spacingOf(v);
  return {v.centerX + (pixel.x() - 0.5 * v.imageWidth) * h, v.centerY - (pixel.y() - 0.5 * v.imageHeight) * h};
}

MandelbrotView zoomedAbout(const MandelbrotView& v, QPointF pixel, double factor) {
  const QPointF p = planePoint(v, pixel);
  MandelbrotView out = v;
  out.width = v.width / factor;
  out.centerX = p.x() + (v.centerX - p.x()) / factor;
  out.centerY = p.y() + (v.centerY - p.y()) / factor;
  return out;
}

MandelbrotView panned(const MandelbrotView& v, QPointF delta) {
  const double h = spacingOf(v);
  MandelbrotView out = v;
  out.centerX = v.centerX - delta.x() * h;
  out.centerY = v.centerY + delta.y() * h;
  return out;
}

MandelbrotView zoomedToRect(const MandelbrotView& v, const QRectF& pixels) {
  const QRectF r = pixels.normalized();
  const double fraction = std::max(r.width() / v.imageWidth, r.height() / v.imageHeight);
  if (fraction <= 0) return v;
  MandelbrotView out = recentred(v, r.center());
  out.width = v.width * fraction;
  return out;
}

MandelbrotView recentred(const MandelbrotView& v, QPointF pixel) {
  const QPointF p = planePoint(v, pixel);
  MandelbrotView out = v;
  out.centerX = p.x();
  out.centerY = p.y();
  return out;
}

QRectF frameRectIn(const MandelbrotView& view, const MandelbrotView& frame) {
  const double h = spacingOf(view);
  const double frameHeight = frame.width * frame.imageHeight / frame.imageWidth;
  const double left = frame.centerX - 0.5 * frame.width, top = frame.centerY + 0.5 * frameHeight;
  return {(left - view.centerX) / h + 0.5 * view.imageWidth, 0.5 * view.imageHeight - (top - view.centerY) / h,
          frame.width / h, frameHeight / h};
}

std::vector<MandelbrotBookmark> builtInBookmarks() {
  auto place = [](const char* name, double x, double y, double width) {
    MandelbrotView v;
    v.centerX = x;
    v.centerY = y;
    v.width = width;
    v.maxIterations = 0;
    return MandelbrotBookmark{QString::fromUtf8(name), v};
  };
  MandelbrotBookmark rabbit = place(QT_TR_NOOP("Julia: Douady's rabbit"), 0.0, 0.0, 3.2);
  rabbit.view.julia = true;
  rabbit.view.juliaX = -0.123;
  rabbit.view.juliaY = 0.745;
  return {place(QT_TR_NOOP("Whole set"), -0.5, 0.0, 3.0),
          place(QT_TR_NOOP("Seahorse valley"), -0.743643887037151, 0.13182590420533, 0.005),
          place(QT_TR_NOOP("Elephant valley"), 0.2925, 0.0149, 0.02),
          place(QT_TR_NOOP("Mini-brot on the real axis"), -1.7548776662, 0.0, 0.05),
          place(QT_TR_NOOP("Spiral"), -0.761574, -0.0847596, 0.002),
          rabbit};
}

// ---------------------------------------------------------------------------------------------
// Canvas

MandelbrotCanvas::MandelbrotCanvas(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(160, 120);
  setCursor(Qt::CrossCursor);
  setToolTip(
      tr("Wheel: zoom   drag: pan   Shift+drag: zoom into a box   double-click: recentre\n"
         "+ / -: zoom   arrows: pan   Home: whole set   J: Julia set of the point under the cursor"));
}

QSize MandelbrotCanvas::pixelSize() const {
  const double dpr = devicePixelRatioF();
  return {std::max(1, static_cast<int>(std::lround(width() * dpr))),
          std::max(1, static_cast<int>(std::lround(height() * dpr)))};
}

QPointF MandelbrotCanvas::toPixels(QPointF widgetPoint) const { return widgetPoint * devicePixelRatioF(); }

MandelbrotView MandelbrotCanvas::sized(MandelbrotView view) const {
  const QSize s = pixelSize();
  view.imageWidth = s.width();
  view.imageHeight = s.height();
  return view;
}

void MandelbrotCanvas::setView(const MandelbrotView& view) {
  view_ = view;
  update();
}

void MandelbrotCanvas::setFrame(const QImage& image, const MandelbrotView& frameView) {
  frame_ = image;
  frameView_ = frameView;
  ++frameSerial_;
  update();
}

void MandelbrotCanvas::setMessage(const QString& message) {
  if (message == message_) return;
  message_ = message;
  update();
}

void MandelbrotCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), Qt::black);
  const MandelbrotView now = sized(view_);
  const bool sameSet = frameView_.julia == now.julia &&
                       (!now.julia || (frameView_.juliaX == now.juliaX && frameView_.juliaY == now.juliaY));
  if (!frame_.isNull() && sameSet) {
    // A frame rendered for another view is stretched and shifted to where it belongs now: the screen
    // follows the mouse at once while the new frame is computed.
    const QRectF target = frameRectIn(now, frameView_);
    const double dpr = devicePixelRatioF();
    painter.drawImage(QRectF(target.topLeft() / dpr, target.size() / dpr), frame_);
  }
  const bool newFrame = !frame_.isNull() && sameSet && frameSerial_ != presentedSerial_;
  if (!message_.isEmpty()) {
    QFont font = painter.font();
    font.setPointSizeF(font.pointSizeF() * 1.2);
    painter.setFont(font);
    const QRectF box = rect().adjusted(width() / 8, height() / 3, -width() / 8, -height() / 3);
    painter.fillRect(box, QColor(0, 0, 0, 190));
    painter.setPen(QColor(255, 210, 120));
    painter.drawText(box.adjusted(12, 8, -12, -8), Qt::AlignCenter | Qt::TextWordWrap, message_);
  }
  if (newFrame) {
    presentedSerial_ = frameSerial_;
    emit framePresented(frameSerial_);
  }
}

void MandelbrotCanvas::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  emit resized();
}

void MandelbrotCanvas::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (notches == 0) return;
  emit viewRequested(zoomedAbout(sized(view_), toPixels(event->position()), std::pow(kWheelStep, notches)));
  event->accept();
}

void MandelbrotCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  if (event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier)) {
    if (band_ == nullptr) band_ = new QRubberBand(QRubberBand::Rectangle, this);
    bandStart_ = event->position();
    band_->setGeometry(QRect(bandStart_.toPoint(), QSize()));
    band_->show();
  } else {
    dragging_ = true;
    dragLast_ = event->position();
    setCursor(Qt::ClosedHandCursor);
  }
}

void MandelbrotCanvas::mouseMoveEvent(QMouseEvent* event) {
  mouse_ = event->position();
  if (band_ != nullptr && band_->isVisible()) {
    band_->setGeometry(QRectF(bandStart_, event->position()).normalized().toRect());
  } else if (dragging_) {
    const QPointF delta = toPixels(event->position() - dragLast_);
    dragLast_ = event->position();
    if (!delta.isNull()) emit viewRequested(panned(sized(view_), delta));
  }
}

void MandelbrotCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
  if (band_ != nullptr && band_->isVisible()) {
    band_->hide();
    const QRectF box(toPixels(bandStart_), toPixels(event->position()));
    if (std::abs(box.width()) >= 4 && std::abs(box.height()) >= 4) emit viewRequested(zoomedToRect(sized(view_), box));
  }
  dragging_ = false;
  setCursor(Qt::CrossCursor);
}

void MandelbrotCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) emit viewRequested(recentred(sized(view_), toPixels(event->position())));
}

void MandelbrotCanvas::keyPressEvent(QKeyEvent* event) {
  const MandelbrotView v = sized(view_);
  const QPointF centre(0.5 * v.imageWidth, 0.5 * v.imageHeight);
  const QPointF step(0.1 * v.imageWidth, 0.1 * v.imageHeight);
  const QPointF under = rect().contains(mouse_.toPoint()) ? toPixels(mouse_) : centre;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      emit viewRequested(zoomedAbout(v, centre, kKeyZoom));
      break;
    case Qt::Key_Minus:
      emit viewRequested(zoomedAbout(v, centre, 1.0 / kKeyZoom));
      break;
    case Qt::Key_Left:
      emit viewRequested(panned(v, {step.x(), 0}));
      break;
    case Qt::Key_Right:
      emit viewRequested(panned(v, {-step.x(), 0}));
      break;
    case Qt::Key_Up:
      emit viewRequested(panned(v, {0, step.y()}));
      break;
    case Qt::Key_Down:
      emit viewRequested(panned(v, {0, -step.y()}));
      break;
    case Qt::Key_Home:
      emit homeRequested();
      break;
    case Qt::Key_J:
      if (v.julia)
        emit mandelbrotRequested();
      else
        emit juliaRequested(planePoint(v, under));
      break;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
  event->accept();
}

void MandelbrotCanvas::contextMenuEvent(QContextMenuEvent* event) {
  const MandelbrotView v = sized(view_);
  const QPointF pixel = toPixels(event->pos());
  const QPointF c = planePoint(v, pixel);
  QMenu menu(this);
  if (v.julia)
    menu.addAction(tr("Back to the Mandelbrot set"), this, [this] { emit mandelbrotRequested(); });
  else
    menu.addAction(tr("Julia set of this point (J)"), this, [this, c] { emit juliaRequested(c); });
  menu.addAction(tr("Recentre here"), this, [this, v, pixel] { emit viewRequested(recentred(v, pixel)); });
  menu.addAction(tr("Zoom in here"), this, [this, v, pixel] { emit viewRequested(zoomedAbout(v, pixel, 2.0)); });
  menu.addAction(tr("Zoom out here"), this, [this, v, pixel] { emit viewRequested(zoomedAbout(v, pixel, 0.5)); });
  menu.addSeparator();
  menu.addAction(tr("Copy coordinates %1").arg(pointText(c.x(), c.y())), this,
                 [c] { QApplication::clipboard()->setText(pointText(c.x(), c.y())); });
  menu.exec(event->globalPos());
}

// ---------------------------------------------------------------------------------------------
// Worker side

struct MandelbrotTab::WorkerState {
  gpulab::MandelbrotRenderer renderer;
  std::optional<MandelbrotView> gpuRawView;  // what the renderer's raw plane holds
  gpulab::Image cpuRaw;                      // the last CPU frame's raw plane (no GPU)
  std::optional<MandelbrotView> cpuRawView;
};

// ---------------------------------------------------------------------------------------------
// The tab: construction

MandelbrotTab::MandelbrotTab(TabServices& services, QWidget* parent)
    : QWidget(parent), services_(services), state_(std::make_shared<WorkerState>()) {
  view_ = gpulab::wholeSetView();
  mandelbrotView_ = view_;
  customPalette_ = gpulab::Palette::parseGradient(gpulab::Palette::named("classic").gradientText());
  clock_.start();
  buildUi();
  loadBookmarks();
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
  auto* bookmarkRow = new QHBoxLayout;
  bookmarkRow->addWidget(bookmarkBox_, 1);
  bookmarkRow->addWidget(addBookmarkButton);

  mode_ = new QComboBox;
  mode_->addItem(tr("Mandelbrot set"));
  mode_->addItem(tr("Julia set"));
  juliaC_ = new QLineEdit(QStringLiteral("-0.8, 0.156"));
  juliaC_->setToolTip(tr("The Julia constant c as X, Y (or press J over a point of the Mandelbrot set)"));
  juliaC_->setEnabled(false);

  iterations_ = new QSpinBox;
  iterations_->setRange(1, gpulab::kMaxMandelbrotIterations);
  iterations_->setValue(gpulab::autoIterations(view_.width));
  iterations_->setEnabled(false);
  autoIterations_ = new QCheckBox(tr("auto"));
  autoIterations_->setChecked(true);
  autoIterations_->setToolTip(tr("From the zoom depth: 256 (1 + log10(3 / width))^1.25"));
  auto* iterationRow = new QHBoxLayout;
  iterationRow->addWidget(iterations_, 1);
  iterationRow->addWidget(autoIterations_);

  precision_ = new QComboBox;
  precision_->setObjectName(QStringLiteral("mandelbrotPrecision"));
  precision_->addItem(tr("auto"), static_cast<int>(gpulab::Precision::Auto));
  precision_->addItem(QStringLiteral("float32"), static_cast<int>(gpulab::Precision::F32));
  precision_->addItem(QStringLiteral("float64"), static_cast<int>(gpulab::Precision::F64));
  precision_->setToolTip(
      tr("auto: float32 while neighbouring pixels are at least 8 float32 steps apart "
         "(pixel spacing >= 2^-20 max(|x|, |y|, 1)), then float64 down to 2^-49"));

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
  density_ = new QDoubleSpinBox;
  density_->setRange(0.01, 64.0);
  density_->setDecimals(2);
  density_->setSingleStep(0.25);
  density_->setValue(1.0);
  density_->setToolTip(tr("Palette cycles per 32 iterations"));
  supersample_ = new QComboBox;
  supersample_->addItem(tr("off"), 1);
  supersample_->addItem(QStringLiteral("2x2"), 2);
  supersample_->addItem(QStringLiteral("3x3"), 3);
  supersample_->addItem(QStringLiteral("4x4"), 4);
  supersample_->setToolTip(tr("Once the view rests, render again with this many samples per pixel"));

  auto* form = new QFormLayout;
  form->addRow(tr("Set"), mode_);
  form->addRow(tr("Julia c"), juliaC_);
  form->addRow(tr("Iterations"), iterationRow);
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
  auto* cpuRow = new QHBoxLayout;
  cpuRow->addWidget(cpuButton_, 1);
  cpuRow->addWidget(cancelButton_);
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
  layout->addLayout(bookmarkRow);
  layout->addLayout(form);
  layout->addWidget(info_);
  layout->addWidget(timing_);
  layout->addWidget(message_);
  layout->addLayout(cpuRow);
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
  connect(canvas_, &MandelbrotCanvas::homeRequested, this, &MandelbrotTab::home);
  connect(canvas_, &MandelbrotCanvas::juliaRequested, this, &MandelbrotTab::toJulia);
  connect(canvas_, &MandelbrotCanvas::mandelbrotRequested, this, &MandelbrotTab::toMandelbrot);
  connect(canvas_, &MandelbrotCanvas::resized, this, &MandelbrotTab::canvasResized);
  connect(canvas_, &MandelbrotCanvas::framePresented, this, &MandelbrotTab::canvasPresented);
  connect(restTimer_, &QTimer::timeout, this, [this] {
    commitHistory();
    scheduleRender();
  });
  connect(backButton_, &QPushButton::clicked, this, &MandelbrotTab::back);
  connect(forwardButton_, &QPushButton::clicked, this, &MandelbrotTab::forward);
  connect(homeButton, &QPushButton::clicked, this, &MandelbrotTab::home);
  connect(addBookmarkButton, &QPushButton::clicked, this, &MandelbrotTab::addBookmarkWithDialog);
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
  connect(cpuButton_, &QPushButton::clicked, this, &MandelbrotTab::renderOnCpu);
  connect(cancelButton_, &QPushButton::clicked, this, [this] {
    cpuJob_.cancel();
    saveJob_.cancel();
  });
  connect(saveButton, &QPushButton::clicked, this, &MandelbrotTab::saveWithDialog);
  connect(openButton, &QPushButton::clicked, this, &MandelbrotTab::openWithDialog);
  updateHistoryButtons();
  updateInfo();
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
    v.maxIterations = autoIterations_->isChecked() ? gpulab::autoIterations(v.width) : iterations_->value();
    gpulab::choosePrecision(v);
  } catch (const std::exception& e) {  // PrecisionLimitError, std::invalid_argument
    if (why != nullptr) *why = QString::fromUtf8(e.what());
    return false;
  }
  return true;
}

void MandelbrotTab::viewEdited(const MandelbrotView& requested) {
  MandelbrotView v = requested;
  QString why;
  if (!accept(v, &why)) {
    message_->setText(why);
    message_->show();
    canvas_->setMessage(why);
    return;
  }
  if (v == view_) return;
  setViewInternal(v, true);
}

bool MandelbrotTab::navigate(MandelbrotView v) {
  QString why;
  if (!accept(v, &why)) {
    message_->setText(why);
    message_->show();
    canvas_->setMessage(why);
    services_.showMessage(why);
    return false;
  }
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
    v.centerX = 0;
    v.centerY = 0;
    v.width = 3.2;
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
  v.centerX = 0;
  v.centerY = 0;
  v.width = 3.2;
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
  const double zoom = v.zoom();
  QStringList lines;
  lines << tr("centre  %1").arg(pointText(v.centerX, v.centerY));
  lines << tr("width  %1   zoom  %2x (10^%3)")
               .arg(v.width, 0, 'e', 4)
               .arg(zoom, 0, zoom < 1e6 ? 'f' : 'e', zoom < 1e6 ? 1 : 2)
               .arg(std::log10(zoom), 0, 'f', 1);
  if (v.julia) lines << tr("Julia set of c = %1").arg(pointText(v.juliaX, v.juliaY));
  lines << tr("iterations  %1%2").arg(v.maxIterations).arg(autoIterations_->isChecked() ? tr(" (auto)") : QString());
  lines << tr("precision  %1").arg(precision);
  lines << tr("image  %1x%2").arg(v.imageWidth).arg(v.imageHeight);
  info_->setText(lines.join(QLatin1Char('\n')));
}

// ---------------------------------------------------------------------------------------------
// Rendering

MandelbrotView MandelbrotTab::renderView(Quality quality, int divisor) const {
  MandelbrotView v = view_;
  if (quality == Quality::Preview) {
    v.imageWidth = std::max(1, v.imageWidth / divisor);
    v.imageHeight = std::max(1, v.imageHeight / divisor);
  } else if (quality == Quality::Super) {
    v.supersample = supersample_->currentData().toInt();
  }
  return v;
}

int MandelbrotTab::previewDivisor() const {
  if (!msPerMegapixel_) return 2;  // nothing measured yet
  const double megapixels = static_cast<double>(view_.imageWidth) * view_.imageHeight * 1e-6;
  for (int divisor : {1, 2})
    if (*msPerMegapixel_ * megapixels / (divisor * divisor) <= kInteractiveFrameBudgetMs) return divisor;
  return 4;
}

void MandelbrotTab::scheduleRender() {
  if (canvas_ == nullptr || historyIndex_ < 0) return;  // no size yet: the first resize starts it
  if (!isVisible()) {
    pending_ = true;  // the worker serves every tab: no frames for a tab nobody looks at
    return;
  }
  pending_ = false;
  if (inFlight_) return;  // frameDone asks again for the newest view
  const gpulab::Colouring c = colouring();
  const int divisor = previewDivisor();
  const FrameKey full{renderView(Quality::Full), c}, super{renderView(Quality::Super), c};
  const FrameKey preview = divisor == 1 ? full : FrameKey{renderView(Quality::Preview, divisor), c};
  const bool superWanted = supersample_->currentData().toInt() > 1;
  auto shownView = [this](const FrameKey& k) { return shown_ && shown_->view == k.view; };
  FrameKey target = full;
  if (restTimer_->isActive()) {
    if (!shownView(full) && !shownView(super))
      target = preview;  // full resolution when it fits the frame budget; never step down while moving
    else
      target = shownView(super) ? super : full;
  } else if (superWanted && (shownView(full) || shownView(super))) {
    target = super;
  } else if (!superWanted && shownView(super)) {
    target = full;
  }
  if (shown_ && *shown_ == target) return;
  if (failed_ && *failed_ == target) return;  // do not retry a frame that failed until something changes
  try {
    gpulab::choosePrecision(target.view);
  } catch (const std::exception& e) {  // e.g. a supersampled frame beyond the size limit
    failed_ = target;
    message_->setText(QString::fromUtf8(e.what()));
    message_->show();
    return;
  }
  submitFrame(target, shownView(target));
}

void MandelbrotTab::submitFrame(const FrameKey& key, bool recolourOnly) {
  inFlight_ = true;
  submittedAtMs_ = static_cast<double>(clock_.nsecsElapsed()) * 1e-6;
  const std::shared_ptr<WorkerState> state = state_;
  services_.engine.submit(
      this,
      [state, key, recolourOnly](WorkerContext& ctx) {
        FrameResult r;
        const gpulab::MandelbrotOptions options;
        // The whole job (compute, colour, download, conversion) for the frame budget; the escape-time
        // pass alone for the frame's compute time.
        r.workerMs =
            gpulab::measureHost(
                [&] {
                  if (ctx.hasGpu()) {
                    gpulab::GpuContext& gpu = ctx.gpu();
                    if (!recolourOnly || !(state->gpuRawView == key.view)) {
                      state->gpuRawView.reset();
                      r.computeMs =
                          gpulab::measureStream(
                              gpu.stream(), [&] { state->renderer.compute(gpu, key.view, options); }, oneFrame())
                              .medianMs;
                      state->gpuRawView = key.view;
                    }
                    // BGRA straight into an RGB32 image: the backing store's layout, no conversion.
                    state->renderer.colour(gpu, key.colouring, gpulab::ChannelOrder::Bgra);
                    r.image = QImage(key.view.imageWidth, key.view.imageHeight, QImage::Format_RGB32);
                    state->renderer.downloadRgba(gpu, reinterpret_cast<std::byte*>(r.image.bits()),
                                                 static_cast<std::size_t>(r.image.bytesPerLine()));
                    r.onGpu = true;
                  } else {
                    if (!recolourOnly || !(state->cpuRawView == key.view)) {
                      state->cpuRawView.reset();
                      r.computeMs =
                          gpulab::measureHost(
                              [&] { state->cpuRaw = gpulab::renderRawCpu(key.view, options, ctx.cpuControl()); },
                              oneFrame())
                              .medianMs;
                      state->cpuRawView = key.view;
                    }
                    r.image = displayImage(gpulab::colourRaw(state->cpuRaw, key.colouring, key.view.supersample));
                  }
                },
                oneFrame())
                .medianMs;
        return r;
      },
      [this, key](FrameResult r) {
        inFlight_ = false;
        frameDone(r.image, key, r.computeMs, r.workerMs, r.onGpu);
        scheduleRender();
      },
      {.coalesceKey = QStringLiteral("mandelbrot-frame"),
       .failed =
           [this, key](const QString& why) {
             inFlight_ = false;
             failed_ = key;
             message_->setText(tr("Frame failed: %1").arg(why));
             message_->show();
             services_.showError(why);
             scheduleRender();
           },
       .cancelled = [this] { inFlight_ = false; },
       .progress = {}});
}

void MandelbrotTab::frameDone(const QImage& image, const FrameKey& key, std::optional<double> computeMs,
                              double workerMs, bool onGpu) {
  canvas_->setFrame(image, key.view);
  shown_ = key;
  failed_.reset();
  onGpu_ = onGpu;
  const qint64 now = clock_.elapsed();
  frameTimes_.push_back(now);
  while (!frameTimes_.empty() && frameTimes_.front() < now - 1000) frameTimes_.pop_front();
  if (computeMs) {
    lastComputeMs_ = computeMs;
    // The frame budget follows the recent frames (their iteration counts change with the view).
    const double sample = workerMs / (static_cast<double>(key.view.rawWidth()) * key.view.rawHeight() * 1e-6);
    msPerMegapixel_ = msPerMegapixel_ ? 0.5 * (*msPerMegapixel_ + sample) : sample;
  }
  const int divisor =
      std::max(1, static_cast<int>(std::lround(static_cast<double>(view_.imageWidth) / key.view.imageWidth)));
  const bool full = divisor == 1;
  MandelbrotFrameInfo info;
  info.view = key.view;
  info.width = key.view.rawWidth();
  info.height = key.view.rawHeight();
  info.divisor = divisor;
  info.computeMs = computeMs;
  info.workerMs = workerMs;
  info.latencyMs = submittedAtMs_;  // the start; canvasPresented subtracts it
  info.onGpu = onGpu;
  unpresented_ = info;
  unpresentedSerial_ = canvas_->frameSerial();
  QStringList lines;
  if (lastComputeMs_)
    lines << tr("%1 frame  %2 compute  (%3x%4%5)")
                 .arg(onGpu ? tr("GPU") : tr("CPU"), formatMs(*lastComputeMs_))
                 .arg(key.view.rawWidth())
                 .arg(key.view.rawHeight())
                 .arg(key.view.supersample > 1 ? tr(", supersampled")
                                               : (full ? QString() : tr(", preview 1/%1").arg(divisor)));
  if (!computeMs) lines << tr("recoloured without recomputing");
  if (frameTimes_.size() > 1) lines << tr("%1 frames in the last second").arg(frameTimes_.size());
  if (!onGpu) lines << tr("no GPU: frames are rendered on the CPU");
  timing_->setText(lines.join(QLatin1Char('\n')));
  emit frameShown(full);
}

bool MandelbrotTab::showsCurrentView() const {
  if (inFlight_ || unpresented_ || restTimer_->isActive() || !shown_) return false;
  const FrameKey full{renderView(Quality::Full), colouring()};
  return *shown_ == full ||
         (supersample_->currentData().toInt() > 1 && *shown_ == FrameKey{renderView(Quality::Super), full.colouring});
}

void MandelbrotTab::canvasPresented(quint64 serial) {
  if (!unpresented_ || serial != unpresentedSerial_) return;
  MandelbrotFrameInfo info = *unpresented_;
  unpresented_.reset();
  info.latencyMs = static_cast<double>(clock_.nsecsElapsed()) * 1e-6 - info.latencyMs;
  emit framePresented(info);
}

// ---------------------------------------------------------------------------------------------
// CPU render, side by side with the GPU

void MandelbrotTab::renderOnCpu() {
  const MandelbrotView v = view_;
  const std::shared_ptr<WorkerState> state = state_;
  cpuButton_->setEnabled(false);
  cancelButton_->setEnabled(true);
  cpuProgress_->setValue(0);
  cpuProgress_->show();
  comparison_->setText(tr("CPU rendering %1x%2...").arg(v.imageWidth).arg(v.imageHeight));
  auto finish = [this] {
    cpuButton_->setEnabled(true);
    cancelButton_->setEnabled(saveJob_.valid() && !saveJob_.finished());
    cpuProgress_->hide();
  };
  cpuJob_ = services_.engine.submit(
      this,
      [state, v](WorkerContext& ctx) {
        // The harness's side-by-side measurement: the GPU's compute pass (CUDA events, warm-up
        // excluded) and the CPU on every core (warm-up, then up to 5 runs in about 2 s).
        gpulab::MandelbrotMeasureSetup setup;
        if (ctx.hasGpu()) {
          setup.gpu = &ctx.gpu();
          setup.renderer = &state->renderer;
          state->gpuRawView.reset();
        }
        setup.wantCpu = true;
        setup.control = ctx.cpuControl();
        gpulab::Measurement m = gpulab::measureMandelbrot(v, {}, setup, gpulab::MeasurePolicy::interactive());
        if (setup.gpu != nullptr) state->gpuRawView = v;  // the last timed run left this view's raw plane
        return m;
      },
      [this, finish](gpulab::Measurement m) {
        finish();
        QString text;
        if (const auto cpu = cpuMs(m))
          text = tr("CPU %1 (%2 threads, median of %3)").arg(formatMs(*cpu)).arg(m.cpu->threads).arg(m.cpu->time.reps);
        if (const auto gpu = computeMs(m)) {
          text += tr("   GPU %1 (median of %2)").arg(formatMs(*gpu)).arg(m.gpu->compute.reps);
          if (const auto speedup = m.speedup()) text += tr("   %1 faster").arg(formatSpeedup(*speedup));
        }
        comparison_->setText(text);
        services_.timings.addRun(m);
        emit cpuRenderFinished();
      },
      {.coalesceKey = QStringLiteral("mandelbrot-cpu"),
       .failed =
           [this, finish](const QString& why) {
             finish();
             comparison_->setText(tr("CPU render failed: %1").arg(why));
           },
       .cancelled =
           [this, finish] {
             finish();
             comparison_->setText(tr("CPU render cancelled"));
           },
       .progress = [this](double f) { cpuProgress_->setValue(static_cast<int>(f * 100)); }});
}

// ---------------------------------------------------------------------------------------------
// PNG files

void MandelbrotTab::savePng(const QString& path, QSize size, int supersample) {
  MandelbrotView v = view_;
  v.imageWidth = size.width();
  v.imageHeight = size.height();
  v.supersample = supersample;
  gpulab::Precision used;
  try {
    used = gpulab::choosePrecision(v).used;
  } catch (const std::exception& e) {
    services_.showError(tr("Cannot save %1: %2").arg(path, QString::fromUtf8(e.what())));
    return;
  }
  const gpulab::Colouring c = colouring();
  cancelButton_->setEnabled(true);
  cpuProgress_->setValue(0);
  cpuProgress_->show();
  services_.showMessage(tr("Rendering %1x%2 for %3...").arg(size.width()).arg(size.height()).arg(path));
  auto finish = [this] {
    cancelButton_->setEnabled(cpuJob_.valid() && !cpuJob_.finished());
    if (!cancelButton_->isEnabled()) cpuProgress_->hide();
  };
  saveJob_ = services_.engine.submit(
      this,
      [v, c, used, path](WorkerContext& ctx) {
        // How long rendering and writing took, for the status bar: the whole job, once.
        return gpulab::measureHost(
                   [&] {
                     gpulab::Image rgba;
                     if (ctx.hasGpu()) {
                       gpulab::MandelbrotRenderer renderer;  // its own buffers: an 8K frame is not kept afterwards
                       rgba = gpulab::renderMandelbrot(ctx.gpu(), renderer, v, c);
                     } else {
                       rgba = gpulab::colourRaw(gpulab::renderRawCpu(v, {}, ctx.cpuControl()), c, v.supersample);
                     }
                     ctx.throwIfCancelled();
                     gpulab::savePngWithText(gpulab::opaqueToRgb(rgba), path.toStdString(),
                                             gpulab::pngTextFromView(v, c, used));
                   },
                   oneFrame())
            .medianMs;
      },
      [this, path, size, finish](double ms) {
        finish();
        services_.showMessage(
            tr("Saved %1 (%2x%3) in %4").arg(path).arg(size.width()).arg(size.height()).arg(formatMs(ms)));
        emit pngSaved(path);
      },
      {.coalesceKey = QStringLiteral("mandelbrot-save"),
       .failed =
           [this, finish](const QString& why) {
             finish();
             services_.showError(tr("Saving failed: %1").arg(why));
           },
       .cancelled =
           [this, finish] {
             finish();
             services_.showMessage(tr("Saving cancelled"));
           },
       .progress = [this](double f) { cpuProgress_->setValue(static_cast<int>(f * 100)); }});
}

void MandelbrotTab::openPng(const QString& path) {
  services_.engine.submit(
      this,
      [path](WorkerContext&) {
        const auto text = gpulab::readPngText(path.toStdString());
        return Opened{gpulab::viewFromPngText(text), gpulab::colouringFromPngText(text)};
      },
      [this, path](Opened o) {
        {
          const QSignalBlocker b1(palette_), b2(offset_), b3(density_), b4(autoIterations_), b5(iterations_),
              b6(precision_);
          const QString name = QString::fromStdString(o.colouring.palette.name());
          const int index = palette_->findText(name);
          if (index >= 0 && index < palette_->count() - 1) {
            palette_->setCurrentIndex(index);
          } else {
            customPalette_ = o.colouring.palette;
            gradient_->setText(QString::fromStdString(customPalette_.gradientText()));
            palette_->setCurrentIndex(palette_->count() - 1);
          }
          gradient_->setEnabled(palette_->currentIndex() == palette_->count() - 1);
          const double offset = o.colouring.offset - std::floor(o.colouring.offset);
          offset_->setValue(static_cast<int>(std::lround(offset * kOffsetSteps)) % kOffsetSteps);
          density_->setValue(o.colouring.density);
          autoIterations_->setChecked(false);
          iterations_->setEnabled(true);
          iterations_->setValue(o.view.maxIterations);
          precision_->setCurrentIndex(precision_->findData(static_cast<int>(o.view.precision)));
        }
        if (navigate(o.view)) services_.showMessage(tr("Restored the view of %1").arg(path));
      },
      {.coalesceKey = {},
       .failed = [this, path](const QString& why) { services_.showError(tr("Cannot open %1: %2").arg(path, why)); },
       .cancelled = {},
       .progress = {}});
}

void MandelbrotTab::saveWithDialog() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Save PNG"));
  auto* size = new QComboBox;
  const QSize window = canvas_->pixelSize();
  size->addItem(tr("Window (%1x%2)").arg(window.width()).arg(window.height()), window);
  for (const auto& [name, s] :
       {std::pair{"1920x1080 (Full HD)", QSize(1920, 1080)}, std::pair{"3840x2160 (4K)", QSize(3840, 2160)},
        std::pair{"7680x4320 (8K)", QSize(7680, 4320)}, std::pair{"15360x8640 (16K)", QSize(15360, 8640)}})
    size->addItem(QString::fromUtf8(name), s);
  auto* samples = new QComboBox;
  samples->addItem(tr("off"), 1);
  samples->addItem(QStringLiteral("2x2"), 2);
  samples->addItem(QStringLiteral("3x3"), 3);
  samples->addItem(QStringLiteral("4x4"), 4);
  samples->setCurrentIndex(1);
  auto* form = new QFormLayout(&dialog);
  form->addRow(tr("Size"), size);
  form->addRow(tr("Supersampling"), samples);
  form->addRow(new QLabel(tr("The width in the complex plane stays; the height follows the aspect ratio.")));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  if (dialog.exec() != QDialog::Accepted) return;
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save PNG"), QStringLiteral("mandelbrot.png"), tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  savePng(path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive) ? path : path + QStringLiteral(".png"),
          size->currentData().toSize(), samples->currentData().toInt());
}

void MandelbrotTab::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a PNG saved by gpulab"), QString(), tr("PNG images (*.png)"));
  if (!path.isEmpty()) openPng(path);
}

// ---------------------------------------------------------------------------------------------
// Bookmarks

void MandelbrotTab::loadBookmarks() {
  bookmarks_ = builtInBookmarks();
  const QStringList saved = QSettings().value(QString::fromUtf8(kBookmarksKey)).toStringList();
  for (const QString& line : saved) {
    const QStringList f = line.split(QLatin1Char('\t'));
    if (f.size() != 8) continue;
    MandelbrotView v;
    bool ok[7] = {};
    v.centerX = f[1].toDouble(&ok[0]);
    v.centerY = f[2].toDouble(&ok[1]);
    v.width = f[3].toDouble(&ok[2]);
    v.maxIterations = f[4].toInt(&ok[3]);
    v.julia = f[5].toInt(&ok[4]) != 0;
    v.juliaX = f[6].toDouble(&ok[5]);
    v.juliaY = f[7].toDouble(&ok[6]);
    if (std::all_of(std::begin(ok), std::end(ok), [](bool b) { return b; })) bookmarks_.push_back({f[0], v});
  }
  const QSignalBlocker block(bookmarkBox_);
  bookmarkBox_->clear();
  bookmarkBox_->addItem(tr("Go to..."));
  for (const MandelbrotBookmark& b : bookmarks_) bookmarkBox_->addItem(b.name);
}

void MandelbrotTab::addBookmarkWithDialog() {
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Add bookmark"), tr("Name"), QLineEdit::Normal,
                                             tr("Zoom %1x").arg(view_.zoom(), 0, 'g', 3), &ok);
  if (ok) addBookmark(name);
}

void MandelbrotTab::addBookmark(const QString& requested) {
  const QString name = requested.trimmed().replace(QLatin1Char('\t'), QLatin1Char(' '));
  if (name.isEmpty()) return;
  QSettings settings;
  QStringList saved = settings.value(QString::fromUtf8(kBookmarksKey)).toStringList();
  const int iterations = autoIterations_->isChecked() ? 0 : view_.maxIterations;
  saved << QStringList{name,
                       QString::number(view_.centerX, 'g', 17),
                       QString::number(view_.centerY, 'g', 17),
                       QString::number(view_.width, 'g', 17),
                       QString::number(iterations),
                       QString::number(view_.julia ? 1 : 0),
                       QString::number(view_.juliaX, 'g', 17),
                       QString::number(view_.juliaY, 'g', 17)}
               .join(QLatin1Char('\t'));
  settings.setValue(QString::fromUtf8(kBookmarksKey), saved);
  loadBookmarks();
  services_.showMessage(tr("Bookmarked \"%1\"").arg(name));
}

void MandelbrotTab::bookmarkChosen(int index) {
  if (index <= 0 || index > static_cast<int>(bookmarks_.size())) return;
  MandelbrotView v = bookmarks_[static_cast<std::size_t>(index - 1)].view;
  {
    const QSignalBlocker b1(autoIterations_), b2(iterations_);
    autoIterations_->setChecked(v.maxIterations == 0);
    iterations_->setEnabled(v.maxIterations != 0);
    if (v.maxIterations != 0) iterations_->setValue(v.maxIterations);
  }
  if (v.maxIterations == 0) v.maxIterations = 1;  // accept() fills in the automatic count
  if (v.julia) mandelbrotView_ = view_.julia ? mandelbrotView_ : view_;
  navigate(v);
  const QSignalBlocker block(bookmarkBox_);
  bookmarkBox_->setCurrentIndex(0);
}

// ---------------------------------------------------------------------------------------------
// Zoom benchmark

MandelbrotZoomBenchmark::MandelbrotZoomBenchmark(MandelbrotTab& tab, Options options, QObject* parent)
    : QObject(parent), tab_(tab), options_(std::move(options)) {
  stepTimer_ = new QTimer(this);
  stepTimer_->setTimerType(Qt::PreciseTimer);
  timeout_ = new QTimer(this);
  timeout_->setSingleShot(true);
  connect(stepTimer_, &QTimer::timeout, this, &MandelbrotZoomBenchmark::step);
  connect(timeout_, &QTimer::timeout, this, [this] { finish(true); });
  connect(&tab_, &MandelbrotTab::framePresented, this, &MandelbrotZoomBenchmark::presented);
}

void MandelbrotZoomBenchmark::start() {
  clock_.start();
  timeout_->start(options_.timeoutMs);
  fitCanvas(0);
}

// The window is resized by what the canvas lacks; the layout settles in the event loop, so this checks
// again a few times.
void MandelbrotZoomBenchmark::fitCanvas(int attempt) {
  const QSize want = options_.canvasSize;
  const QSize have = tab_.canvas().size();
  if (!want.isValid() || want == have || attempt >= 5) {
    tab_.home();
    waitForRest();
    return;
  }
  QWidget* window = tab_.window();
  window->resize(window->size() + (want - have));
  QTimer::singleShot(50, this, [this, attempt] { fitCanvas(attempt + 1); });
}

void MandelbrotZoomBenchmark::waitForRest() {
  if (done_) return;
  if (!tab_.showsCurrentView()) {
    QTimer::singleShot(20, this, &MandelbrotZoomBenchmark::waitForRest);
    return;
  }
  const MandelbrotView& v = tab_.view();
  const double h = v.width / v.imageWidth;
  const QPointF pixel((options_.target.x() - v.centerX) / h + 0.5 * v.imageWidth,
                      (v.centerY - options_.target.y()) / h + 0.5 * v.imageHeight);
  const double dpr = tab_.canvas().devicePixelRatioF();
  cursor_ =
      QPointF(std::clamp(pixel.x(), 0.0, v.imageWidth - 1.0), std::clamp(pixel.y(), 0.0, v.imageHeight - 1.0)) / dpr;
  deepestWidth_ = v.width;
  measuring_ = true;
  startMs_ = static_cast<double>(clock_.nsecsElapsed()) * 1e-6;
  lastPresentMs_ = startMs_;
  if (options_.rateHz > 0) {
    stepTimer_->start(std::max(1, static_cast<int>(std::lround(1000.0 / options_.rateHz))));
    step();
  } else {
    step();
  }
}

void MandelbrotZoomBenchmark::step() {
  if (done_) return;
  if (sent_ >= options_.steps) {
    stepTimer_->stop();
    waitingForLast_ = true;
    return;
  }
  const bool zoomIn = (sent_ / std::max(1, options_.depthSteps)) % 2 == 0;
  MandelbrotCanvas& canvas = tab_.canvas();
  QWheelEvent wheel(cursor_, canvas.mapToGlobal(cursor_), QPoint(), QPoint(0, zoomIn ? 120 : -120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(&canvas, &wheel);
  ++sent_;
  deepestWidth_ = std::min(deepestWidth_, tab_.view().width);
  if (sent_ >= options_.steps) {
    stepTimer_->stop();
    waitingForLast_ = true;
  }
}

void MandelbrotZoomBenchmark::presented(const MandelbrotFrameInfo& info) {
  if (!measuring_ || done_) return;
  frames_.push_back(info);
  lastPresentMs_ = static_cast<double>(clock_.nsecsElapsed()) * 1e-6;
  if (!samePlace(info.view, tab_.view())) return;  // a frame of an older view
  if (waitingForLast_)
    finish(false);
  else if (options_.rateHz <= 0)
    QTimer::singleShot(0, this, &MandelbrotZoomBenchmark::step);  // the pipeline's own pace
}

void MandelbrotZoomBenchmark::finish(bool timedOut) {
  if (done_) return;
  done_ = true;
  stepTimer_->stop();
  timeout_->stop();
  Result r;
  r.canvas = tab_.canvas().pixelSize();
  r.requested = options_.canvasSize;
  r.steps = sent_;
  r.timedOut = timedOut;
  r.deepestWidth = deepestWidth_;
  r.framesPresented = static_cast<int>(frames_.size());
  r.seconds = (lastPresentMs_ - startMs_) * 1e-3;
  std::vector<double> compute, worker, latency;
  for (const MandelbrotFrameInfo& f : frames_) {
    if (!f.computeMs)
      ++r.recolouredFrames;
    else
      compute.push_back(*f.computeMs);
    (f.divisor == 1 ? r.fullFrames : r.reducedFrames) += 1;
    worker.push_back(f.workerMs);
    latency.push_back(f.latencyMs);
    r.onGpu = f.onGpu;
  }
  if (!measuring_)
    r.error = tr("the tab never showed its first frame");
  else if (frames_.empty())
    r.error = tr("no frame was painted");
  if (!compute.empty()) r.computeMs = gpulab::Stats::of(compute);
  if (!worker.empty()) r.workerMs = gpulab::Stats::of(worker);
  if (!latency.empty()) r.latencyMs = gpulab::Stats::of(latency);
  if (r.seconds > 0) r.framesPerSecond = r.framesPresented / r.seconds;
  emit finished(r);
}

QString MandelbrotZoomBenchmark::describe(const Result& r) {
  auto stats = [](const gpulab::Stats& s) {
    return QStringLiteral("median %1 ms (min %2, max %3)")
        .arg(s.medianMs, 0, 'f', 3)
        .arg(s.minMs, 0, 'f', 3)
        .arg(s.maxMs, 0, 'f', 3);
  };
  QStringList lines;
  lines << QStringLiteral("zoom benchmark: canvas %1x%2, %3 wheel steps (1.25x each), deepest width %4, %5")
               .arg(r.canvas.width())
               .arg(r.canvas.height())
               .arg(r.steps)
               .arg(r.deepestWidth, 0, 'g', 3)
               .arg(r.onGpu ? QStringLiteral("frames on the GPU") : QStringLiteral("frames on the CPU (no GPU)"));
  if (r.requested.isValid() && r.requested != r.canvas)
    lines << QStringLiteral("(asked for a %1x%2 canvas: the window's other widgets did not leave that size)")
                 .arg(r.requested.width())
                 .arg(r.requested.height());
  if (!r.error.isEmpty()) {
    lines << QStringLiteral("failed: %1").arg(r.error);
    return lines.join(QLatin1Char('\n'));
  }
  const double n = std::max(1, r.framesPresented);
  lines << QStringLiteral("frames painted: %1 in %2 s = %3 frames/s (display included)%4")
               .arg(r.framesPresented)
               .arg(r.seconds, 0, 'f', 3)
               .arg(r.framesPerSecond, 0, 'f', 1)
               .arg(r.timedOut ? QStringLiteral(" [timed out before the last view was painted]") : QString());
  lines << QStringLiteral("resolution: %1 full (%2%), %3 reduced (%4%), %5 recoloured only")
               .arg(r.fullFrames)
               .arg(100.0 * r.fullFrames / n, 0, 'f', 1)
               .arg(r.reducedFrames)
               .arg(100.0 * r.reducedFrames / n, 0, 'f', 1)
               .arg(r.recolouredFrames);
  if (r.computeMs.reps > 0)
    lines << QStringLiteral("%1 compute per frame: %2 over %3 frames")
                 .arg(r.onGpu ? QStringLiteral("GPU") : QStringLiteral("CPU"), stats(r.computeMs))
                 .arg(r.computeMs.reps);
  if (r.workerMs.reps > 0)
    lines << QStringLiteral("worker per frame (compute, colour, download, RGB32): %1").arg(stats(r.workerMs));
  if (r.latencyMs.reps > 0) lines << QStringLiteral("request to paint: %1").arg(stats(r.latencyMs));
  return lines.join(QLatin1Char('\n'));
}

}  // namespace gpulab::gui
