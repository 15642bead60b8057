// The "Mandelbrot" tab: an interactive zoomer on the GPU (the CPU when there is none), at any depth:
// escape time in f32 and f64 while they reach, perturbation against a reference orbit beyond (down to
// width 1e-100000), with no seam between them.
//
// The canvas: the wheel zooms about the cursor, a drag pans, Shift+drag (or Ctrl+drag) draws a box to
// zoom into, a double-click recentres; keys +, - (1.5x), PageUp, PageDown (10x, with Shift 1000x),
// arrows, Home; N (or the context menu) zooms to the minibrot nearest the cursor; J shows the Julia
// set of the point under the cursor. While the view moves, the last frame is stretched and shifted at
// once and a reduced frame is requested when full ones do not fit the frame budget; when it rests
// (250 ms), the full-resolution frame, then the supersampled one when asked for. Requests coalesce: at
// most one frame is on the worker and the newest view is rendered next (a jump elsewhere cancels the
// frame on the worker, a new reference orbit included); the GUI thread never waits. Changing the
// palette, its offset or its density recolours the raw plane kept on the GPU without recomputing it.
// The arithmetic, the width and what the reference orbit did are said in the canvas's corner.
//
// Around it: back and forward through the view history, bookmarks (well-known places and the user's
// own, kept in QSettings), the location (centre with every digit and width, editable, copied and pasted
// as "--center X,Y --width W"), Newton zoom to the nearest minibrot (half-way or onto it) with cancel,
// iterations (automatic from the depth, doubled when a frame's counts run into the cap) and precision,
// the frame time and frames per second, a "CPU render" of the current view with progress and cancel
// beside the GPU time (also sent to the Timings panel), "Save PNG" at any size (the view stored in the
// PNG's text fields, every digit), and "Open PNG" that restores a view saved so.
//
// The pieces: mandelbrot_view (view arithmetic at any depth, bookmarks), mandelbrot_canvas (the widget
// that shows frames and turns the mouse into view requests), mandelbrot_worker (frames, the CPU render,
// PNG files and Newton on the engine's worker), and this tab: its controls and navigation
// (mandelbrot_tab.cpp), frame scheduling and the CPU render (mandelbrot_rendering.cpp), the location,
// Newton zoom and the iteration cap (mandelbrot_deep_zoom.cpp), PNG files and bookmarks
// (mandelbrot_files.cpp). The zoom benchmark plays wheel steps on it (mandelbrot_zoom_benchmark).
#pragma once

#include <QElapsedTimer>
#include <QImage>
#include <QPointF>
#include <QWidget>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "mandelbrot/mandelbrot_canvas.hpp"
#include "mandelbrot/mandelbrot_view.hpp"
#include "mandelbrot/mandelbrot_worker.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QCheckBox;
class QDialog;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;

namespace gpulab::gui {

class MandelbrotTab : public QWidget {
  Q_OBJECT

 public:
  explicit MandelbrotTab(TabServices& services, QWidget* parent = nullptr);
  ~MandelbrotTab() override;

  /// The current view (image size = the canvas's device pixels).
  const gpulab::MandelbrotView& view() const noexcept { return view_; }
  gpulab::Colouring colouring() const;
  /// Navigates to `view` (its size is replaced by the canvas's; automatic iterations follow its width).
  /// False, with the reason on screen, when the view cannot be rendered (invalid, or a forced f32 or f64
  /// or a Julia set deeper than escape time reaches).
  bool navigate(gpulab::MandelbrotView view);
  /// Goes to a location typed or pasted: "X, Y", "X, Y, WIDTH" or "--center X,Y --width W" (parseLocation).
  /// False, with one sentence on screen, for text that is not one; the view stays.
  bool goToLocation(const QString& text);
  /// Zooms the current centre to `width` ("1e-300"); false with one sentence for a bad width.
  bool zoomToWidth(const QString& width);
  /// Newton zoom: finds the minibrot nearest `pixel` (the centre when empty) on the worker and zooms
  /// towards it, `fraction` of the way in log scale (0.5 half-way, 1 onto it; the selector's choice when
  /// empty). The status says what was found, or in one sentence why nothing was; newtonFinished follows.
  void zoomToMinibrot(std::optional<QPointF> pixel = std::nullopt, std::optional<double> fraction = std::nullopt);
  /// Iterations: `count` fixed, or automatic from the depth (nullopt).
  void setIterations(std::optional<int> count);
  /// Cancels the CPU render, a PNG being saved, a Newton search and a frame that takes long.
  void cancelWork();
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
  /// in the PNG's text fields. Runs on the worker; the status bar says when it is done. With two or more
  /// `gpus` the still's rows are split over them (and the status bar says how many rows each took).
  void savePng(const QString& path, QSize size, int supersample, const std::vector<int>& gpus = {});
  /// The Save PNG dialog, not shown yet (Save PNG... runs it): the size, the supersampling and, from
  /// `gpus`, a checkbox per GPU that renders the still ("mandelbrotSaveGpu<N>"): the selected one
  /// checked; with one GPU it is checked and disabled, its tooltip says why; without a GPU a line says
  /// the CPU renders it. Interactive frames stay on one GPU whatever is checked.
  QDialog* createSaveDialog(const GpuChoices& gpus);
  /// The GPUs checked in a dialog from createSaveDialog (empty without a GPU).
  static std::vector<int> checkedGpus(const QDialog& dialog);
  /// The machine's GPUs, read on the worker when the tab was made (empty until then, and without a GPU).
  const GpuChoices& gpuChoices() const noexcept { return gpuChoices_; }
  /// Restores the view and colouring stored in a PNG written by savePng or gpulab-cli.
  void openPng(const QString& path);
  MandelbrotCanvas& canvas() noexcept { return *canvas_; }
  /// The full-resolution frame of the current view and colouring is painted, the view rests and no
  /// frame is on the worker.
  bool showsCurrentView() const;

 signals:
  /// A frame arrived from the worker and went to the canvas (for tests and screenshots): whether it
  /// has the canvas's full resolution.
  void frameShown(bool full);
  /// The canvas painted a new frame (frames replaced before a paint are never reported).
  void framePresented(const gpulab::gui::MandelbrotFrameInfo& info);
  void cpuRenderFinished();
  void pngSaved(const QString& path);
  /// A Newton zoom ended: true when it moved the view.
  void newtonFinished(bool moved);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  static constexpr int kOffsetSteps = 1000;  // offset slider steps per palette cycle

  enum class Quality { Preview, Full, Super };
  struct FrameKey {
    gpulab::MandelbrotView view;
    gpulab::Colouring colouring;
    bool operator==(const FrameKey&) const = default;
  };

  void buildUi();
  QWidget* buildLocationControls();
  void viewEdited(const gpulab::MandelbrotView& view);
  void requestRejected(const QString& why);
  void showProblem(const QString& why, bool onCanvas);
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
  void updateLocationFields();
  void updateOverlay();
  void updateHistoryButtons();
  void updateCancelButton();
  /// A frame has been on the worker longer than kSlowFrameMs (a new reference orbit, say).
  bool frameIsSlow() const;
  /// The frame on the worker is over (delivered, failed or given up).
  void endFrame();
  /// The automatic iteration cap of `width` times the scale learned from the frames.
  int automaticIterations(const gpulab::DeepWidth& width) const;
  void raiseIterations(const FrameCounts& counts, const gpulab::MandelbrotView& rendered);
  gpulab::MandelbrotView renderView(Quality quality, int divisor = 2) const;
  int previewDivisor() const;
  void scheduleRender();
  void submitFrame(const FrameKey& key, bool recolourOnly, bool wantCounts);
  void frameDone(const FrameResult& result, const FrameKey& key);
  void canvasPresented(quint64 serial);
  void addBookmarkWithDialog();
  void bookmarkChosen(int index);
  void loadBookmarks();
  void saveWithDialog();
  void openWithDialog();

  TabServices& services_;
  std::shared_ptr<MandelbrotWorkerState> state_;  // touched by this tab's jobs only, on the worker

  gpulab::MandelbrotView view_;
  gpulab::MandelbrotView mandelbrotView_;  // where to return from Julia mode
  std::vector<gpulab::MandelbrotView> history_;
  int historyIndex_ = -1;
  std::vector<MandelbrotBookmark> bookmarks_;

  // Rendering: one frame on the worker at a time; the newest request is rendered next.
  std::optional<FrameKey> inFlightKey_;  // the frame on the worker
  quint64 frameSerial_ = 0;              // of the frame on the worker: outcomes of older (cancelled) frames are ignored
  JobHandle frameJob_;
  bool jumped_ = false;             // navigate() went elsewhere: the frame on the worker is not worth waiting for
  std::optional<FrameKey> shown_;   // the frame on screen (its key)
  std::optional<FrameKey> failed_;  // the last frame that failed or was cancelled: not retried until something changes
  QTimer* restTimer_ = nullptr;
  QTimer* slowFrameTimer_ = nullptr;  // a frame on the worker for long (a new reference orbit): say so, allow cancel
  std::optional<ReferenceInfo> lastReference_;  // of the last deep frame computed
  QString shownPrecision_;                      // the label of the frame on screen
  double iterationScale_ = 1.0;                 // learned from frames whose counts ran into the cap
  // The display's wall clock: frames shown per second and request-to-paint latency. That measures
  // the display, not an operation; each frame's compute time comes from the engine's harness.
  std::deque<qint64> frameTimes_;  // ms stamps of frames shown, for frames per second
  QElapsedTimer clock_;
  std::optional<double> lastComputeMs_;
  std::optional<double> msPerMegapixel_;            // worker time of recent computed frames, for the frame budget
  double submittedAtMs_ = 0;                        // clock_ time the frame on the worker was handed over
  std::optional<MandelbrotFrameInfo> unpresented_;  // the frame on the canvas, until a paint shows it
  quint64 unpresentedSerial_ = 0;
  bool pending_ = false;  // a change arrived while hidden
  gpulab::Palette customPalette_;
  JobHandle cpuJob_;
  JobHandle saveJob_;
  JobHandle newtonJob_;
  GpuChoices gpuChoices_;

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
  QLineEdit* centreEdit_ = nullptr;
  QLineEdit* widthEdit_ = nullptr;
  QPushButton* newtonButton_ = nullptr;
  QComboBox* newtonDepth_ = nullptr;
  QLabel* newtonStatus_ = nullptr;
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

}  // namespace gpulab::gui
