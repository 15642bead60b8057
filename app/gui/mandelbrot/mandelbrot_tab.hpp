// The "Mandelbrot" tab: an interactive escape-time zoomer on the GPU (the CPU when there is none).
//
// The canvas: the wheel zooms about the cursor, a drag pans, Shift+drag (or Ctrl+drag) draws a box to
// zoom into, a double-click recentres; keys +, -, arrows, Home; J (or the context menu) shows the Julia
// set of the point under the cursor. While the view moves, the last frame is stretched and shifted at once and a
// half-resolution frame is requested; when it rests (250 ms), the full-resolution frame, then the
// supersampled one when asked for. Requests coalesce: at most one frame is on the worker, the newest
// view is rendered next, and the GUI thread never waits. Changing the palette, its offset or its density
// recolours the raw plane kept on the GPU without recomputing it.
//
// Around it: back and forward through the view history, bookmarks (well-known places and the user's
// own, kept in QSettings), centre, width, zoom depth, iterations and precision, the GPU frame time and
// frames per second, a "CPU render" of the current view with progress and cancel beside the GPU time
// (also sent to the Timings panel), "Save PNG" at any size (the view stored in the PNG's text fields),
// and "Open PNG" that restores a view saved so.
#pragma once

#include <QElapsedTimer>
#include <QImage>
#include <QObject>
#include <QPointF>
#include <QRectF>
#include <QWidget>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QRubberBand;
class QSlider;
class QSpinBox;
class QTimer;

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// View arithmetic (pure). Pixels are image pixels of `view` (imageWidth x imageHeight), continuous:
// pixel (i, j) covers [i, i+1) x [j, j+1), its centre at (i + 0.5, j + 0.5).

/// The point of the complex plane at `pixel`.
QPointF planePoint(const gpulab::MandelbrotView& view, QPointF pixel);
/// Zoomed by `factor` (> 1 zooms in) keeping the point under `pixel` in place.
gpulab::MandelbrotView zoomedAbout(const gpulab::MandelbrotView& view, QPointF pixel, double factor);
/// Moved so that the content follows the mouse by `deltaPixels`.
gpulab::MandelbrotView panned(const gpulab::MandelbrotView& view, QPointF deltaPixels);
/// Zoomed into `pixels` (a box on the image), keeping the image's aspect ratio: the box's longer side
/// (relative to the image) fills the view.
gpulab::MandelbrotView zoomedToRect(const gpulab::MandelbrotView& view, const QRectF& pixels);
/// Centred on the point at `pixel`.
gpulab::MandelbrotView recentred(const gpulab::MandelbrotView& view, QPointF pixel);
/// Where an image rendered for `frame` lies in the pixels of `view` (to show a stale frame at once).
QRectF frameRectIn(const gpulab::MandelbrotView& view, const gpulab::MandelbrotView& frame);

/// The well-known places: the whole set, seahorse valley, elephant valley, a mini-brot, a spiral.
struct MandelbrotBookmark {
  QString name;
  gpulab::MandelbrotView view;  ///< centre, width, iterations (0: automatic), Julia mode and constant
};
std::vector<MandelbrotBookmark> builtInBookmarks();

/// Worker time (compute, colour, download, conversion) a frame may take while the view moves and still
/// be drawn at full resolution: 12 ms leaves the GUI thread room for 60 frames per second.
inline constexpr double kInteractiveFrameBudgetMs = 12.0;

/// One frame the canvas has painted.
struct MandelbrotFrameInfo {
  gpulab::MandelbrotView view;  ///< what was rendered (image size reduced for a reduced frame)
  int width = 0;                ///< of the rendered samples (before any supersampling is averaged)
  int height = 0;
  int divisor = 1;                  ///< 1: the canvas's resolution (or supersampled); 2, 4: reduced
  std::optional<double> computeMs;  ///< escape-time pass (GPU events, CPU wall time); empty: recoloured
  double workerMs = 0;              ///< the whole job on the worker: compute, colour, download, conversion
  double latencyMs = 0;             ///< from handing the request to the worker until the paint that showed it
  bool onGpu = false;
};

// ---------------------------------------------------------------------------------------------
// The canvas

class MandelbrotCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit MandelbrotCanvas(QWidget* parent = nullptr);

  /// The view shown now; its imageWidth/imageHeight are ignored (the canvas's device pixels rule).
  void setView(const gpulab::MandelbrotView& view);
  /// A rendered image and the view it shows (maybe older, smaller or larger than the current view).
  void setFrame(const QImage& image, const gpulab::MandelbrotView& frameView);
  /// Text drawn over the canvas (the precision limit); empty to clear.
  void setMessage(const QString& message);
  const QString& message() const noexcept { return message_; }
  /// Image size in device pixels.
  QSize pixelSize() const;
  const QImage& frame() const noexcept { return frame_; }
  /// Counts setFrame calls; framePresented reports the serial painted.
  quint64 frameSerial() const noexcept { return frameSerial_; }

 signals:
  /// The user moved the view (wheel, drag, box, double-click, keys).
  void viewRequested(const gpulab::MandelbrotView& view);
  void homeRequested();
  /// Show the Julia set of this point (Mandelbrot mode), or go back to the Mandelbrot set.
  void juliaRequested(QPointF c);
  void mandelbrotRequested();
  void resized();
  /// A paint drew the frame of setFrame call `serial` for the first time.
  void framePresented(quint64 serial);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  QPointF toPixels(QPointF widgetPoint) const;
  gpulab::MandelbrotView sized(gpulab::MandelbrotView view) const;

  gpulab::MandelbrotView view_;
  gpulab::MandelbrotView frameView_;
  QImage frame_;
  quint64 frameSerial_ = 0;
  quint64 presentedSerial_ = 0;
  QString message_;
  QRubberBand* band_ = nullptr;
  QPointF bandStart_;
  bool dragging_ = false;
  QPointF dragLast_;
  QPointF mouse_{-1, -1};
};

// ---------------------------------------------------------------------------------------------
// The tab

class MandelbrotTab : public QWidget {
  Q_OBJECT

 public:
  explicit MandelbrotTab(TabServices& services, QWidget* parent = nullptr);
  ~MandelbrotTab() override;

  /// The current view (image size = the canvas's device pixels).
  const gpulab::MandelbrotView& view() const noexcept { return view_; }
  gpulab::Colouring colouring() const;
  /// Navigates to `view` (its size is replaced by the canvas's). False, with the reason on screen,
  /// when the view cannot be rendered (beyond float64, invalid).
  bool navigate(gpulab::MandelbrotView view);
  /// Stores the current view as a bookmark `name` (QSettings) and lists it.
  void addBookmark(const QString& name);
  /// The well-known places, then the user's own, as the bookmark box lists them.
  const std::vector<MandelbrotBookmark>& bookmarks() const noexcept { return bookmarks_; }
  void back();
  void forward();
  void home();
  /// Renders the current view on the CPU (with progress and cancel) and the GPU, and compares.
  void renderOnCpu();
  /// Renders the current view at `size` (supersampled `supersample` times) and saves it with its view
  /// in the PNG's text fields. Runs on the worker; the status bar says when it is done.
  void savePng(const QString& path, QSize size, int supersample);
  /// Restores the view and colouring stored in a PNG written by savePng or gpulab-cli.
  void openPng(const QString& path);
  MandelbrotCanvas& canvas() noexcept { return *canvas_; }
  /// The full-resolution frame of the current view and colouring is painted, the view rests and no
  /// frame is on the worker.
  bool showsCurrentView() const;

  /// Worker-side state: the renderer (GPU buffers) and the last CPU raw plane; touched by jobs only.
  struct WorkerState;

 signals:
  /// A frame arrived from the worker and went to the canvas (for tests and screenshots): whether it
  /// has the canvas's full resolution.
  void frameShown(bool full);
  /// The canvas painted a new frame (frames replaced before a paint are never reported).
  void framePresented(const gpulab::gui::MandelbrotFrameInfo& info);
  void cpuRenderFinished();
  void pngSaved(const QString& path);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  enum class Quality { Preview, Full, Super };
  struct FrameKey {
    gpulab::MandelbrotView view;
    gpulab::Colouring colouring;
    bool operator==(const FrameKey&) const = default;
  };

  void buildUi();
  void viewEdited(const gpulab::MandelbrotView& view);
  bool accept(gpulab::MandelbrotView& view, QString* why) const;
  void setViewInternal(const gpulab::MandelbrotView& view, bool interactive);
  void commitHistory();
  void colouringChanged();
  void iterationsChanged();
  void precisionChanged();
  void canvasResized();
  void toJulia(QPointF c);
  void toMandelbrot();
  void updateInfo();
  void updateHistoryButtons();
  gpulab::MandelbrotView renderView(Quality quality, int divisor = 2) const;
  int previewDivisor() const;
  void scheduleRender();
  void submitFrame(const FrameKey& key, bool recolourOnly);
  void frameDone(const QImage& image, const FrameKey& key, std::optional<double> computeMs, double workerMs,
                 bool onGpu);
  void canvasPresented(quint64 serial);
  void addBookmarkWithDialog();
  void bookmarkChosen(int index);
  void loadBookmarks();
  void saveWithDialog();
  void openWithDialog();

  TabServices& services_;
  std::shared_ptr<WorkerState> state_;

  gpulab::MandelbrotView view_;
  gpulab::MandelbrotView mandelbrotView_;  // where to return from Julia mode
  std::vector<gpulab::MandelbrotView> history_;
  int historyIndex_ = -1;
  std::vector<MandelbrotBookmark> bookmarks_;

  // Rendering: one frame on the worker at a time; the newest request is rendered next.
  bool inFlight_ = false;
  std::optional<FrameKey> shown_;   // the frame on screen (its key)
  std::optional<FrameKey> failed_;  // the last frame that failed: not retried until something changes
  QTimer* restTimer_ = nullptr;
  std::deque<qint64> frameTimes_;  // ms stamps of frames shown, for frames per second
  QElapsedTimer clock_;
  std::optional<double> lastComputeMs_;
  std::optional<double> msPerMegapixel_;            // worker time of recent computed frames, for the frame budget
  double submittedAtMs_ = 0;                        // clock_ time the frame on the worker was handed over
  std::optional<MandelbrotFrameInfo> unpresented_;  // the frame on the canvas, until a paint shows it
  quint64 unpresentedSerial_ = 0;
  bool onGpu_ = false;
  bool pending_ = false;  // a change arrived while hidden
  gpulab::Palette customPalette_;
  JobHandle cpuJob_;
  JobHandle saveJob_;

  MandelbrotCanvas* canvas_ = nullptr;
  QComboBox* mode_ = nullptr;
  QLineEdit* juliaC_ = nullptr;
  QSpinBox* iterations_ = nullptr;
  QCheckBox* autoIterations_ = nullptr;
  QComboBox* precision_ = nullptr;
  QComboBox* palette_ = nullptr;
  QLineEdit* gradient_ = nullptr;
  QSlider* offset_ = nullptr;
  QDoubleSpinBox* density_ = nullptr;
  QComboBox* supersample_ = nullptr;
  QComboBox* bookmarkBox_ = nullptr;
  QPushButton* backButton_ = nullptr;
  QPushButton* forwardButton_ = nullptr;
  QPushButton* cpuButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QProgressBar* cpuProgress_ = nullptr;
  QLabel* info_ = nullptr;
  QLabel* timing_ = nullptr;
  QLabel* comparison_ = nullptr;
  QLabel* message_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Zoom benchmark: interactive frame rate with display included

/// Plays wheel-zoom steps on a tab's canvas and measures the frames the canvas paints.
///
/// The steps zoom by one wheel notch (1.25x) about the canvas pixel that shows `target` in the whole-set
/// view: `depthSteps` in, then as many out, and so on (100 notches reach width 6e-10, float64's
/// territory; 125 would pass its limit). `rateHz` > 0 sends them at that cadence whatever the frames do
/// (a fast wheel spin: the coalescing and the progressive frames decide what is drawn); 0 sends the next
/// step once a frame of the current view has been painted (the pipeline's own pace). The result counts
/// the frames painted from the first step until the frame of the last view is painted.
class MandelbrotZoomBenchmark : public QObject {
  Q_OBJECT

 public:
  struct Options {
    int steps = 200;
    double rateHz = 120.0;
    int depthSteps = 100;
    QPointF target{-0.743643887037151, 0.13182590420533};  ///< seahorse valley
    QSize canvasSize;  ///< resize the window so the canvas has this many pixels; empty: as it is
    int timeoutMs = 120000;
  };
  struct Result {
    QSize canvas;
    QSize requested;  ///< Options::canvasSize
    int steps = 0;
    int framesPresented = 0;
    int fullFrames = 0;  ///< at the canvas's resolution
    int reducedFrames = 0;
    int recolouredFrames = 0;
    double seconds = 0;
    double framesPerSecond = 0;
    gpulab::Stats computeMs;  ///< over the presented frames that computed (reps = their number)
    gpulab::Stats workerMs;
    gpulab::Stats latencyMs;
    double deepestWidth = 0;
    bool onGpu = false;
    bool timedOut = false;
    QString error;  ///< what went wrong, when nothing could be measured
  };

  MandelbrotZoomBenchmark(MandelbrotTab& tab, Options options, QObject* parent = nullptr);
  /// Starts once the tab shows a full-resolution frame of the whole set; `finished` follows.
  void start();
  /// The report printed by `gpulab --zoom-benchmark`.
  static QString describe(const Result& result);

 signals:
  void finished(const gpulab::gui::MandelbrotZoomBenchmark::Result& result);

 private:
  void fitCanvas(int attempt);
  void waitForRest();
  void step();
  void presented(const MandelbrotFrameInfo& info);
  void finish(bool timedOut);

  MandelbrotTab& tab_;
  Options options_;
  QElapsedTimer clock_;
  QTimer* stepTimer_ = nullptr;
  QTimer* timeout_ = nullptr;
  QPointF cursor_;  // widget coordinates of the zoom centre
  int sent_ = 0;
  bool measuring_ = false;
  bool waitingForLast_ = false;
  bool done_ = false;
  double startMs_ = 0;
  double lastPresentMs_ = 0;
  std::vector<MandelbrotFrameInfo> frames_;
  double deepestWidth_ = 0;
};

}  // namespace gpulab::gui
