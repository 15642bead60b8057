#include "shell/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <filesystem>

#include "fft/fft_tab.hpp"
#include "filters/filters_tab.hpp"
#include "gpulab/io/image_io.hpp"
#include "lab/course_tab.hpp"
#include "lab/lab_tab.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"
#include "photo/photo_tab.hpp"
#include "shell/gpu_memory_setting.hpp"
#include "shell/resource_paths.hpp"
#include "shell/theme.hpp"
#include "widgets/device_panel.hpp"
#include "widgets/histogram_panel.hpp"
#include "widgets/image_view.hpp"
#include "widgets/photo_info_panel.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui {
namespace {

std::filesystem::path toPath(const QString& path) { return QFile::encodeName(path).toStdString(); }

QString capitalised(QString text) {
  if (!text.isEmpty()) text[0] = text[0].toUpper();
  return text;
}

// "Images (*.png *.jpg ...)" from the engine's list of extensions.
QString imageFileFilter() {
  QStringList patterns;
  for (const QString& ext : QString::fromStdString(gpulab::supportedImageExtensions()).split(QLatin1Char(',')))
    if (!ext.trimmed().isEmpty()) patterns << QStringLiteral("*.") + ext.trimmed();
  return QObject::tr("Images and NumPy arrays (%1);;All files (*)").arg(patterns.join(QLatin1Char(' ')));
}

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent) : QMainWindow(parent), options_(options) {
  setObjectName(QStringLiteral("gpulabMainWindow"));
  setWindowTitle(QStringLiteral("gpulab"));
  setAcceptDrops(true);
  setDocumentMode(true);

  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("tabs"));
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);

  createDocks();
  services_ = std::make_unique<TabServices>(TabServices{engine_, photo_, *timings_,
                                                        [this](const QString& message) { showMessage(message); },
                                                        [this](const QString& message) { reportError(message); }});
  createActions();
  createMenusAndToolBar();
  createStatusBar();
  registerTabs();

  connect(&engine_, &Engine::photoChanged, &photo_, &PhotoDocument::set);
  connect(&photo_, &PhotoDocument::changed, this, &MainWindow::photoChanged);
  connect(&engine_, &Engine::jobFailed, this, &MainWindow::reportError);
  connect(&engine_, &Engine::gpuFaultRecovered, this, [this](const QString& message) { showMessage(message, 30000); });
  connect(&engine_, &Engine::gpuLost, this, &MainWindow::offerRestart);
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::currentTabChanged);
  connect(device_, &DevicePanel::refreshed, this, [this] {
    deviceLabel_->setText(device_->snapshot().gpu ? tr("GPU: %1").arg(device_->summary()) : tr("CPU only"));
    if (!startupDeviceDone_) {
      startupDeviceDone_ = true;
      checkStartupFinished();
    }
  });

  if (const QString problem = applyGpuMemoryLimitAtStartup(options_.persistSettings); !problem.isEmpty())
    showMessage(problem);
  if (options_.persistSettings) {
    QSettings settings;
    recent_ = settings.value(QStringLiteral("recentFiles")).toStringList();
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    settings.beginGroup(QStringLiteral("window/tabLayout"));
    for (const QString& title : settings.childKeys()) tabLayouts_.insert(title, settings.value(title).toByteArray());
    settings.endGroup();
  }
  rebuildRecentMenu();
  currentTabChanged();
  photoChanged();
}

MainWindow::~MainWindow() = default;

// ---------------------------------------------------------------------------------------------
// Tabs: the one place where they are registered.
//
// To add a tab, write a QWidget subclass whose constructor takes `TabServices&` (engine jobs,
// the current photo, the Timings panel, the status bar), include its header above, and add one
// line below; tabs appear in this order, and `gpulab --tab NAME` selects them by title. If the tab
// contains an ImageView, the View menu's zoom actions act on its first one.

// The last argument names the docks that apply to the tab (their object names); the others are hidden
// while it is shown.

void MainWindow::registerTabs() {
  const QString device = QStringLiteral("deviceDock"), photo = QStringLiteral("photoDock"),
                timings = QStringLiteral("timingsDock"), histogram = QStringLiteral("histogramDock");
  auto* filters = new FiltersTab(*services_);
  // clang-format off
  addTab(new PhotoTab(*services_), tr("Photo"), {device, photo, timings});
  addTab(filters, tr("Filters"), {device, photo, timings, histogram});
  addTab(new LabTab(*services_), tr("Lab"), {device});
  addTab(new CourseTab(*services_), tr("Course"), {device});
  addTab(new FftTab(*services_), tr("FFT"), {device, photo, timings});
  addTab(new MandelbrotTab(*services_), tr("Mandelbrot"), {device});
  // clang-format on
  histogramDock_->setWidget(&filters->histogramPanel());
  editMenu_->addAction(filters->undoAction());
  editMenu_->addAction(filters->redoAction());
  toolBar_->addSeparator();
  toolBar_->addAction(filters->undoAction());
  toolBar_->addAction(filters->redoAction());
}

void MainWindow::addTab(QWidget* tab, const QString& title, const QStringList& docks) {
  tabs_->addTab(tab, title);
  tabDocks_.insert(tab, docks);
}

QStringList MainWindow::docksOf(const QString& name) const {
  for (int i = 0; i < tabs_->count(); ++i)
    if (tabs_->tabText(i).remove(QLatin1Char('&')).compare(name, Qt::CaseInsensitive) == 0)
      return tabDocks_.value(tabs_->widget(i));
  return {};
}

QStringList MainWindow::visibleDocks() const {
  QStringList names;
  for (QDockWidget* dock : findChildren<QDockWidget*>())
    if (dock->toggleViewAction()->isChecked()) names << dock->objectName();  // tabbed behind another: open too
  return names;
}

void MainWindow::switchDockLayout(int index) {
  if (layoutTab_ >= 0 && layoutTab_ < tabs_->count()) {
    const QString left = tabs_->tabText(layoutTab_).remove(QLatin1Char('&'));
    tabLayouts_.insert(left, saveState());
    if (options_.persistSettings) QSettings().setValue(QStringLiteral("window/tabLayout/") + left, saveState());
  }
  layoutTab_ = index;
  if (index < 0) return;
  const QString title = tabs_->tabText(index).remove(QLatin1Char('&'));
  const QStringList docks = tabDocks_.value(tabs_->widget(index));
  const auto saved = tabLayouts_.constFind(title);
  if (saved != tabLayouts_.constEnd()) restoreState(*saved);
  for (QDockWidget* dock : findChildren<QDockWidget*>()) {
    const bool applies = docks.contains(dock->objectName());
    dock->toggleViewAction()->setEnabled(applies);
    if (!applies)
      dock->hide();
    else if (saved == tabLayouts_.constEnd())
      dock->show();  // first visit: every dock that applies
  }
  // First visit of a tab with the Histogram: it goes in front of the Photo details it is tabbed with.
  // (Later: before the window is first shown, its dock tab bar does not exist yet.)
  if (saved == tabLayouts_.constEnd() && docks.contains(histogramDock_->objectName()))
    QTimer::singleShot(0, histogramDock_, [this] {
      histogramDock_->raise();
      // Its three plots want height; the Device panel's few lines need little.
      if (auto* device = findChild<QDockWidget*>(QStringLiteral("deviceDock"));
          device != nullptr && device->isVisible())
        resizeDocks({device, histogramDock_}, {180, 2 * height()}, Qt::Vertical);
    });
}

QString MainWindow::currentTabName() const { return tabs_->tabText(tabs_->currentIndex()).remove(QLatin1Char('&')); }

bool MainWindow::selectTab(const QString& name) {
  for (int i = 0; i < tabs_->count(); ++i)
    if (tabs_->tabText(i).remove(QLatin1Char('&')).compare(name, Qt::CaseInsensitive) == 0) {
      tabs_->setCurrentIndex(i);
      return true;
    }
  return false;
}

QStringList MainWindow::tabNames() const {
  QStringList names;
  for (int i = 0; i < tabs_->count(); ++i) names << tabs_->tabText(i).remove(QLatin1Char('&'));
  return names;
}

ImageView* MainWindow::currentImageView() const {
  QWidget* tab = tabs_->currentWidget();
  if (tab == nullptr) return nullptr;
  if (auto* view = qobject_cast<ImageView*>(tab)) return view;
  return tab->findChild<ImageView*>();
}

// ---------------------------------------------------------------------------------------------
// Window furniture

void MainWindow::createActions() {
  openAction_ = new QAction(tr("&Open..."), this);
  openAction_->setShortcut(QKeySequence::Open);
  openAction_->setIcon(makeIcon(IconKind::Open));
  openAction_->setToolTip(tr("Open a photo or a .npy array (Ctrl+O)"));
  connect(openAction_, &QAction::triggered, this, &MainWindow::openWithDialog);

  saveAsAction_ = new QAction(tr("Save &As..."), this);
  saveAsAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  saveAsAction_->setIcon(makeIcon(IconKind::Save));
  saveAsAction_->setToolTip(tr("Save the current photo (Ctrl+Shift+S)"));
  connect(saveAsAction_, &QAction::triggered, this, &MainWindow::saveWithDialog);

  quitAction_ = new QAction(tr("&Quit"), this);
  quitAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);

  zoomInAction_ = new QAction(tr("Zoom &In"), this);
  zoomInAction_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence(Qt::CTRL | Qt::Key_Plus)});
  zoomInAction_->setIcon(makeIcon(IconKind::ZoomIn));
  zoomOutAction_ = new QAction(tr("Zoom &Out"), this);
  zoomOutAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Minus));
  zoomOutAction_->setIcon(makeIcon(IconKind::ZoomOut));
  fitAction_ = new QAction(tr("&Fit to Window"), this);
  fitAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  fitAction_->setIcon(makeIcon(IconKind::Fit));
  fitAction_->setIconText(tr("Fit"));
  actualSizeAction_ = new QAction(tr("&Actual Size (100%)"), this);
  actualSizeAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
  actualSizeAction_->setIcon(makeIcon(IconKind::ActualSize));
  actualSizeAction_->setIconText(tr("100%"));
  for (QAction* a : {zoomInAction_, zoomOutAction_, fitAction_, actualSizeAction_})
    a->setToolTip(QStringLiteral("%1 (%2)").arg(a->text().remove(QLatin1Char('&')),
                                                a->shortcut().toString(QKeySequence::NativeText)));
  connect(zoomInAction_, &QAction::triggered, this, [this] {
    if (auto* v = currentImageView()) v->zoomIn();
  });
  connect(zoomOutAction_, &QAction::triggered, this, [this] {
    if (auto* v = currentImageView()) v->zoomOut();
  });
  connect(fitAction_, &QAction::triggered, this, [this] {
    if (auto* v = currentImageView()) v->fitToWindow();
  });
  connect(actualSizeAction_, &QAction::triggered, this, [this] {
    if (auto* v = currentImageView()) v->actualSize();
  });

  aboutAction_ = new QAction(tr("&About gpulab"), this);
  aboutAction_->setMenuRole(QAction::AboutRole);
  connect(aboutAction_, &QAction::triggered, this, [this] {
    QMessageBox::about(this, tr("About gpulab"),
                       tr("<h3>gpulab %1</h3>"
                          "<p>A GPU image-processing lab: CUDA filters, FFT and a Mandelbrot zoomer, with the CPU "
                          "(OpenCV) doing the same work side by side.</p>"
                          "<p>Qt %2. The photos in resources/photos are credited in resources/CREDITS.md.</p>")
                           .arg(QStringLiteral(GPULAB_VERSION), QString::fromLatin1(qVersion())));
  });
}

void MainWindow::createMenusAndToolBar() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAction_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  file->addAction(saveAsAction_);
  file->addSeparator();
  QAction* gpuLimit = file->addAction(tr("&GPU Memory Limit..."));
  gpuLimit->setObjectName(QStringLiteral("gpuMemoryLimitAction"));
  gpuLimit->setToolTip(tr("What the engine may use on the GPU (as gpulab-cli --gpu-memory-limit)"));
  connect(gpuLimit, &QAction::triggered, this, [this] {
    const QString message = editGpuMemoryLimit(this, options_.persistSettings);
    if (!message.isEmpty()) showMessage(message);
  });
  file->addSeparator();
  file->addAction(quitAction_);

  editMenu_ = menuBar()->addMenu(tr("&Edit"));  // Undo and Redo: the Filters tab's (registerTabs)

  viewMenu_ = menuBar()->addMenu(tr("&View"));
  viewMenu_->addAction(zoomInAction_);
  viewMenu_->addAction(zoomOutAction_);
  viewMenu_->addAction(fitAction_);
  viewMenu_->addAction(actualSizeAction_);
  viewMenu_->addSeparator();
  for (QDockWidget* dock : findChildren<QDockWidget*>()) viewMenu_->addAction(dock->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(aboutAction_);

  QToolBar* bar = addToolBar(tr("Main"));
  toolBar_ = bar;
  bar->setObjectName(QStringLiteral("mainToolBar"));
  bar->setMovable(false);
  bar->setIconSize(QSize(20, 20));
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  bar->addAction(openAction_);
  bar->addAction(saveAsAction_);
  bar->addSeparator();
  for (QAction* a : {zoomOutAction_, zoomInAction_, fitAction_, actualSizeAction_}) bar->addAction(a);
}

void MainWindow::createDocks() {
  auto* deviceDock = new QDockWidget(tr("Device"), this);
  deviceDock->setObjectName(QStringLiteral("deviceDock"));
  device_ = new DevicePanel(engine_);
  if (options_.persistSettings) device_->persistImageLimits();
  deviceDock->setWidget(device_);
  deviceDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetClosable |
                          QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, deviceDock);

  auto* photoDock = new QDockWidget(tr("Photo details"), this);
  photoDock->setObjectName(QStringLiteral("photoDock"));
  photoDock->setWidget(new PhotoInfoPanel(photo_));
  addDockWidget(Qt::RightDockWidgetArea, photoDock);

  auto* timingsDock = new QDockWidget(tr("Timings"), this);
  timingsDock->setObjectName(QStringLiteral("timingsDock"));
  timings_ = new TimingsPanel;
  timingsDock->setWidget(timings_);
  addDockWidget(Qt::BottomDockWidgetArea, timingsDock);
  connect(timingsDock, &QDockWidget::dockLocationChanged, this, [this](Qt::DockWidgetArea area) {
    timings_->setOrientation(area == Qt::LeftDockWidgetArea || area == Qt::RightDockWidgetArea ? Qt::Vertical
                                                                                               : Qt::Horizontal);
  });
  histogramDock_ = new QDockWidget(tr("Histogram"), this);
  histogramDock_->setObjectName(QStringLiteral("histogramDock"));
  addDockWidget(Qt::RightDockWidgetArea, histogramDock_);
  tabifyDockWidget(photoDock, histogramDock_);
  resizeDocks({deviceDock}, {330}, Qt::Horizontal);
  resizeDocks({deviceDock, photoDock}, {230, 400}, Qt::Vertical);
  resizeDocks({timingsDock}, {250}, Qt::Vertical);
}

void MainWindow::createStatusBar() {
  photoLabel_ = new QLabel;
  pixelLabel_ = new QLabel;
  zoomLabel_ = new QLabel;
  deviceLabel_ = new QLabel(tr("Looking for a GPU..."));
  zoomLabel_->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("Zoom 6400%")) + 8);
  pixelLabel_->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("x 00000  y 00000")) + 8);
  for (QLabel* l : {photoLabel_, pixelLabel_, zoomLabel_, deviceLabel_}) {
    auto* separator = new QFrame;
    separator->setFrameShape(QFrame::VLine);
    separator->setFrameShadow(QFrame::Plain);
    separator->setStyleSheet(QStringLiteral("color: palette(mid);"));
    statusBar()->addPermanentWidget(separator);
    l->setContentsMargins(4, 0, 4, 0);
    statusBar()->addPermanentWidget(l);
  }
}

// ---------------------------------------------------------------------------------------------
// Opening and saving: the work runs on the engine's thread; this only asks and reports.

void MainWindow::startUp(const QString& file, bool remember) {
  QString path = file;
  const bool bundled = path.isEmpty();
  if (bundled) path = bundledPhoto();
  if (path.isEmpty()) {
    showMessage(tr("The bundled photo was not found (looked in %1); open one with File > Open.")
                    .arg(resourceSearchPath().join(QStringLiteral(", "))),
                0);
    startupPhotoDone_ = true;
    checkStartupFinished();
    return;
  }
  open(path, remember && !bundled, [this](const QString& error) {
    startupError_ = error;
    startupPhotoDone_ = true;
    checkStartupFinished();
  });
}

void MainWindow::openFile(const QString& path) { open(path, true, {}); }

void MainWindow::open(const QString& path, bool remember, std::function<void(const QString&)> then) {
  const QString name = QFileInfo(path).fileName();
  showMessage(tr("Opening %1...").arg(name), 0);
  engine_.submit(
      this,
      [file = toPath(path), path](WorkerContext& ctx) {
        ctx.setPhoto(gpulab::loadImage(file, gpulab::Image(gpulab::HostMemory::Pinned)), path);
      },
      [this, path, name, remember, then] {
        currentFile_ = path;
        if (remember) addRecent(path);
        showMessage(tr("Opened %1").arg(name));
        emit fileOpened(path);
        if (then) then({});
      },
      {.coalesceKey = QStringLiteral("open-photo"),
       .failed =
           [this, then, name](const QString& why) {
             // The photo on screen stays: the job threw before it replaced anything.
             const QString message = photo_.hasPhoto()
                                         ? tr("Could not open %1: %2. The current photo stays.").arg(name, why)
                                         : tr("Could not open %1: %2").arg(name, why);
             reportError(message);
             if (then) then(tr("could not open the photo %1: %2").arg(name, why));
           },
       .cancelled =
           [then] {
             if (then) then({});
           }});
}

void MainWindow::saveTo(const QString& path) {
  const QString name = QFileInfo(path).fileName();
  showMessage(tr("Saving %1...").arg(name), 0);
  engine_.submit(
      this, [file = toPath(path)](WorkerContext& ctx) { gpulab::saveImage(ctx.photo(), file); },
      [this, path, name] {
        addRecent(path);
        showMessage(tr("Saved %1").arg(name));
      },
      {.failed = [this](const QString& why) { reportError(tr("Could not save: %1").arg(why)); }});
}

void MainWindow::openWithDialog() {
  const QString dir = currentFile_.isEmpty() ? QDir::homePath() : QFileInfo(currentFile_).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open photo"), dir, imageFileFilter());
  if (!path.isEmpty()) openFile(path);
}

void MainWindow::saveWithDialog() {
  if (!photo_.hasPhoto()) return;
  const QFileInfo current(currentFile_);
  const QString suggestion =
      currentFile_.isEmpty()
          ? QDir::home().filePath(QStringLiteral("gpulab.png"))
          : current.absoluteDir().filePath(current.completeBaseName() + QStringLiteral("-gpulab.png"));
  QString path = QFileDialog::getSaveFileName(this, tr("Save photo as"), suggestion, imageFileFilter());
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".png");
  saveTo(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.front().isLocalFile()) return;
  event->acceptProposedAction();
  openFile(urls.front().toLocalFile());
  if (urls.size() > 1) showMessage(tr("Opened the first of the %1 dropped files").arg(urls.size()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (options_.persistSettings) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    if (layoutTab_ >= 0)
      settings.setValue(QStringLiteral("window/tabLayout/") + tabs_->tabText(layoutTab_).remove(QLatin1Char('&')),
                        saveState());
  }
  event->accept();
}

// ---------------------------------------------------------------------------------------------
// Reacting to the photo and the tabs

void MainWindow::photoChanged() {
  const bool has = photo_.hasPhoto();
  saveAsAction_->setEnabled(has);
  if (!has) {
    photoLabel_->setText(tr("No photo"));
    setWindowTitle(QStringLiteral("gpulab"));
    return;
  }
  const PhotoUpdate& p = photo_.current();
  setWindowTitle(tr("%1 - gpulab").arg(photo_.displayName()));
  QString info = QStringLiteral("%1  %2").arg(photo_.displayName(), p.description);
  if (!p.displayNote.isEmpty()) info += QStringLiteral("  (%1)").arg(p.displayNote);
  photoLabel_->setText(info);
  photoLabel_->setToolTip(p.source);
  if (p.upload) timings_->addRun(*p.upload);
  if (!p.gpuNote.isEmpty()) reportError(tr("The photo stays on the CPU: %1").arg(p.gpuNote));
}

void MainWindow::currentTabChanged() {
  switchDockLayout(tabs_->currentIndex());
  disconnect(zoomConnection_);
  disconnect(pixelConnection_);
  ImageView* view = currentImageView();
  for (QAction* a : {zoomInAction_, zoomOutAction_, fitAction_, actualSizeAction_}) a->setEnabled(view != nullptr);
  if (view != nullptr) {
    zoomConnection_ = connect(view, &ImageView::zoomChanged, this, &MainWindow::updateZoomLabel);
    pixelConnection_ = connect(view, &ImageView::pixelHovered, this, [this](QPoint p) {
      pixelLabel_->setText(p.x() < 0 ? QString() : QStringLiteral("x %1  y %2").arg(p.x()).arg(p.y()));
    });
  }
  pixelLabel_->clear();
  updateZoomLabel();
}

void MainWindow::updateZoomLabel() {
  ImageView* view = currentImageView();
  if (view == nullptr || view->image().isNull()) {
    zoomLabel_->clear();
    return;
  }
  const double percent = view->zoom() * 100;
  zoomLabel_->setText(tr("Zoom %1%").arg(QString::number(percent, 'f', percent < 10 ? 1 : 0)));
}

// ---------------------------------------------------------------------------------------------
// Recent files and messages

void MainWindow::addRecent(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent_.removeAll(absolute);
  recent_.prepend(absolute);
  while (recent_.size() > kMaxRecentFiles) recent_.removeLast();
  if (options_.persistSettings) QSettings().setValue(QStringLiteral("recentFiles"), recent_);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  for (int i = 0; i < recent_.size(); ++i) {
    const QString path = recent_[i];
    QAction* a = recentMenu_->addAction(QStringLiteral("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName()));
    a->setToolTip(path);
    a->setStatusTip(path);
    connect(a, &QAction::triggered, this, [this, path] { openFile(path); });
  }
  recentMenu_->addSeparator();
  QAction* clear = recentMenu_->addAction(tr("&Clear Menu"));
  clear->setEnabled(!recent_.isEmpty());
  connect(clear, &QAction::triggered, this, [this] {
    recent_.clear();
    if (options_.persistSettings) QSettings().setValue(QStringLiteral("recentFiles"), recent_);
    rebuildRecentMenu();
  });
  recentMenu_->setEnabled(true);
}

void MainWindow::showMessage(const QString& message, int timeoutMs) { statusBar()->showMessage(message, timeoutMs); }

void MainWindow::reportError(const QString& message) {
  const QString text = capitalised(message);
  lastError_ = text;
  statusBar()->showMessage(text, 15000);
  emit errorReported(text);
  // A job's failure by a lost GPU: the restart dialog (offerRestart) says it already.
  const bool restartDialogSaysIt = !gpuLostMessage_.isEmpty() && text.contains(gpuLostMessage_);
  if (options_.errorDialogs && !restartDialogSaysIt) {
    auto* box = new QMessageBox(QMessageBox::Warning, tr("gpulab"), text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
}

void MainWindow::checkStartupFinished() {
  if (startupReported_ || !startupPhotoDone_ || !startupDeviceDone_) return;
  startupReported_ = true;
  emit startupFinished();
}

}  // namespace gpulab::gui
