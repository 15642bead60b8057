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
#include <QPointF>
#include <QRectF>
#include <QWidget>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "engine.hpp"
#include "gpulab/mandelbrot.hpp"
#include "tab_services.hpp"

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
  /// Image size in device pixels.
  QSize pixelSize() const;
  const QImage& frame() const noexcept { return frame_; }

 signals:
  /// The user moved the view (wheel, drag, box, double-click, keys).
  void viewRequested(const gpulab::MandelbrotView& view);
  void homeRequested();
  /// Show the Julia set of this point (Mandelbrot mode), or go back to the Mandelbrot set.
  void juliaRequested(QPointF c);
  void mandelbrotRequested();
  void resized();

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

  /// Worker-side state: the renderer (GPU buffers) and the last CPU raw plane; touched by jobs only.
  struct WorkerState;

 signals:
  /// A frame was shown (for tests and screenshots): its view and whether it was the full resolution.
  void frameShown(bool full);
  void cpuRenderFinished();

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
  gpulab::MandelbrotView renderView(Quality quality) const;
  void scheduleRender();
  void submitFrame(const FrameKey& key, bool recolourOnly);
  void frameDone(const QImage& image, const FrameKey& key, std::optional<double> computeMs, bool onGpu);
  void addBookmark();
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

}  // namespace gpulab::gui
