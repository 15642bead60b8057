// The application window: tabs in the centre (registered in main_window.cpp), the Device, Photo
// details, Timings and Histogram docks (each tab shows those that apply to it, and its dock layout is
// remembered per tab), File / Edit / View / Help menus, recent files, drag and drop, and the status bar.
// It owns the Engine (worker thread) and never calls the engine itself.
#pragma once

#include <QHash>
#include <QMainWindow>
#include <QStringList>
#include <functional>
#include <memory>

#include "gpulab/core/relaunch.hpp"
#include "shell/engine.hpp"
#include "shell/fault_restart.hpp"
#include "shell/photo_document.hpp"
#include "shell/tab_services.hpp"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QTabWidget;
class QToolBar;

namespace gpulab::gui {

class DevicePanel;
class ImageView;
class TimingsPanel;

struct MainWindowOptions {
  /// Read and write QSettings (recent files, window layout). Off for --screenshot.
  bool persistSettings = true;
  /// Show errors in a dialog as well as in the status bar. Off for --screenshot and tests.
  bool errorDialogs = true;
  /// After a GPU fault the worker could not recover from (Engine::gpuLost): restart gpulab without
  /// asking (--screenshot, GPULAB_RESTART_ON_FAULT=1) instead of offering it in a dialog.
  bool restartWithoutAsking = false;
  /// Replaces the process (tests: records the plan instead); returns only on failure, with the
  /// sentence why. Empty: gpulab::relaunch.
  std::function<std::string(const gpulab::RelaunchPlan&)> relaunch{};
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(MainWindowOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens `file`, or the bundled photo when `file` is empty, and emits startupFinished() once that
  /// photo is shown (or failed) and the Device panel has its first report.
  void startUp(const QString& file, bool remember = true);
  /// Opens a photo on the worker; on failure the current photo stays and the error is reported.
  void openFile(const QString& path);
  /// Saves the current photo (format by extension) on the worker.
  void saveTo(const QString& path);

  /// Selects the tab whose title matches `name` (case-insensitive, '&' ignored).
  bool selectTab(const QString& name);
  QStringList tabNames() const;
  QStringList recentFiles() const { return recent_; }
  /// The ImageView of the current tab (the zoom actions act on it), or nullptr.
  ImageView* currentImageView() const;
  QString lastError() const { return lastError_; }
  /// Why the photo start-up opened could not be opened; empty when it opened (or none was asked for).
  QString startupError() const { return startupError_; }
  /// The docks (object names) that apply to the tab titled `name`; the others are hidden on it.
  QStringList docksOf(const QString& name) const;
  /// The docks open now (object names), those tabbed behind another included.
  QStringList visibleDocks() const;

  Engine& engine() noexcept { return engine_; }
  PhotoDocument& photo() noexcept { return photo_; }
  TimingsPanel& timings() noexcept { return *timings_; }
  DevicePanel& devicePanel() noexcept { return *device_; }
  /// The title of the tab shown, without '&'.
  QString currentTabName() const;

  // --- restarting after a lost GPU (shell/fault_restart.hpp; main_window_restart.cpp) -----------
  /// What a restart keeps now: the tab, the Filters operation, the Mandelbrot view, the geometry and
  /// the photo's file (photoEdited says when the photo shown is not that file's: a copy is needed).
  RestoreState stateForRestart() const;
  /// Restarts gpulab as a new process with --restore-after-fault, after saving an edited photo as a
  /// lossless copy. Returns only when it cannot restart (the restart limit, a failed execve): then
  /// the status bar says why, gpulab goes on CPU only, and restartFailed is emitted.
  void restartAfterGpuFault(const QString& message);
  /// In a process restarted so: selects the tab and the Filters operation, moves the Mandelbrot view
  /// and the window where they were; once start-up (the photo: give startUp state.photo) is done,
  /// shows restoredSummary in the status bar and on stderr and emits restored.
  void restoreAfterRestart(const RestoreState& state, int restart);

  static constexpr int kMaxRecentFiles = 8;

 signals:
  void startupFinished();
  /// A photo was opened from `path` (not for photos that jobs produce).
  void fileOpened(const QString& path);
  void errorReported(const QString& message);
  /// restartAfterGpuFault could not restart: why.
  void restartFailed(const QString& why);
  /// restoreAfterRestart is done: the status line.
  void restored(const QString& summary);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void registerTabs();
  void addTab(QWidget* tab, const QString& title, const QStringList& docks);
  void createActions();
  void createMenusAndToolBar();
  void createDocks();
  void createStatusBar();

  /// `then` gets the reason when the photo could not be opened (empty when it was, or was cancelled).
  void open(const QString& path, bool remember, std::function<void(const QString&)> then);
  /// Remembers the dock layout of the tab being left and sets up the one of the tab shown.
  void switchDockLayout(int index);
  void openWithDialog();
  void saveWithDialog();
  void photoChanged();
  void currentTabChanged();
  void updateZoomLabel();
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void reportError(const QString& message);
  void showMessage(const QString& message, int timeoutMs = 5000);
  void checkStartupFinished();
  /// Engine::gpuLost: the dialog, or the restart at once (options_.restartWithoutAsking).
  void offerRestart(const QString& message);
  /// Writes `state` next to the temporary files and replaces the process.
  void relaunchWith(const RestoreState& state);

  MainWindowOptions options_;
  Engine engine_;  // first: constructed before, destroyed after, everything that submits to it
  PhotoDocument photo_;
  TimingsPanel* timings_ = nullptr;
  DevicePanel* device_ = nullptr;
  std::unique_ptr<TabServices> services_;
  QTabWidget* tabs_ = nullptr;

  QAction* openAction_ = nullptr;
  QAction* saveAsAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QAction* zoomInAction_ = nullptr;
  QAction* zoomOutAction_ = nullptr;
  QAction* fitAction_ = nullptr;
  QAction* actualSizeAction_ = nullptr;
  QAction* aboutAction_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* editMenu_ = nullptr;
  QToolBar* toolBar_ = nullptr;
  QDockWidget* histogramDock_ = nullptr;
  QHash<QWidget*, QStringList> tabDocks_;  // the docks that apply to each tab
  QHash<QString, QByteArray> tabLayouts_;  // saveState() per tab title
  int layoutTab_ = -1;                     // the tab whose layout is on screen
  QMenu* viewMenu_ = nullptr;

  QLabel* photoLabel_ = nullptr;
  QLabel* pixelLabel_ = nullptr;
  QLabel* zoomLabel_ = nullptr;
  QLabel* deviceLabel_ = nullptr;

  QStringList recent_;
  QString currentFile_;
  QString lastError_;
  QString startupError_;
  QString gpuLostMessage_;  // Engine::gpuLost's sentence, once offered a restart for
  bool startupPhotoDone_ = false;
  bool startupDeviceDone_ = false;
  bool startupReported_ = false;
  QMetaObject::Connection zoomConnection_;
  QMetaObject::Connection pixelConnection_;
};

}  // namespace gpulab::gui
