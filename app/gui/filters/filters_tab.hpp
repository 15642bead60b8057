// The "Filters" tab: box blur, Sobel and 2D convolution on the current photo, on the GPU and the
// CPU side by side.
//
// Convolution has a Method: Direct (kernels up to 63x63 in the editor), FFT or Auto (up to 255x255);
// Auto's choice on each side (GPU, CPU) is shown with the timings, and its one-time calibration
// (and FFT plans) is done before timing and shown apart.
//
// Apply (Ctrl+Return) runs the filter on the engine's worker: on the GPU from the photo already
// resident there (uploaded once, when the photo was set), compute timed with CUDA events after
// warm-up runs, plus the download; on the CPU with the OpenCV baseline on all cores, with progress
// and Cancel. The result is shown over the original with a split line (Space shows the original
// alone); the CPU and GPU results can each be shown, and their largest difference is stated.
// Every run goes to the Timings panel. Keep result (Ctrl+K) makes the result the current photo so
// filters chain; Undo (Ctrl+Z) goes back to the photo before. Bad parameters are reported in one
// sentence under the controls and in the status bar.
#pragma once

#include <QImage>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "gpulab/core/image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/filters/filter.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QAction;
class QButtonGroup;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QToolButton;

namespace gpulab::gui {

class BeforeAfterView;
class KernelEditor;

/// One Apply, as the worker hands it back to the GUI thread.
struct FilterRun {
  quint64 generation = 0;  ///< the photo it was computed from
  QString operation;       ///< Filter::describe()
  QString input;           ///< "600x400 RGB u8"
  QString output;          ///< the result's shape
  QPoint beforeOffset;     ///< the original's top-left in the result's pixels ('full' / 'valid')
  /// Convolution only (empty otherwise): the method asked for ("direct", "fft", "auto") and what
  /// each side took (auto decides per device; fft and direct take themselves).
  QString method;
  std::optional<gpulab::ConvAlgorithm> gpuChoice;
  std::optional<gpulab::ConvAlgorithm> cpuChoice;
  double gpuPrepareMs = 0;  ///< one-time work before the GPU timing (calibration, plans): Filter::prepareGpu
  double cpuPrepareMs = 0;  ///< the same before the CPU timing (the CPU cost model)

  std::shared_ptr<const gpulab::Image> gpu;  ///< the GPU's result, when the GPU ran
  QImage gpuDisplay;
  std::optional<gpulab::Stats> gpuCompute;  ///< CUDA events around the kernels, after warm-up
  int gpuWarmups = 0;
  std::optional<double> downloadMs;
  QString gpuNote;  ///< why the GPU did not run although it was asked to

  std::shared_ptr<const gpulab::Image> cpu;  ///< the CPU baseline's result, when it ran
  QImage cpuDisplay;
  std::optional<gpulab::Stats> cpuTime;  ///< steady clock around runCpu
  int cpuThreads = 0;

  QString displayNote;               ///< how float results are shown; empty for u8
  std::optional<double> maxAbsDiff;  ///< largest |CPU - GPU| over all samples, when both ran
};

class FiltersTab : public QWidget {
  Q_OBJECT

 public:
  explicit FiltersTab(TabServices& services, QWidget* parent = nullptr);
  ~FiltersTab() override;

  // --- the controls, for scripting and tests (the widgets do the same) ------------------------
  /// The filter the controls describe (validated by the engine when applied).
  gpulab::FilterSpec spec() const;
  void setOperation(gpulab::FilterOp op);
  void setRadius(int radius);
  void setSobelComponent(gpulab::SobelComponent component);
  void setBorder(gpulab::Border border);
  /// Convolution's method; FFT and Auto let the kernel editor go up to kMaxEditorFftKernelSize.
  void setConvMethod(gpulab::ConvMethod method);
  gpulab::ConvMethod convMethod() const;
  /// Which implementations Apply runs; the GPU only where there is one.
  void setRunOn(bool cpu, bool gpu);
  KernelEditor& kernelEditor() noexcept { return *kernelEditor_; }
  BeforeAfterView& view() noexcept { return *view_; }

  // --- actions --------------------------------------------------------------------------------
  /// Runs the filter on the worker (a run still going is cancelled). Problems found before it
  /// starts (bad parameters, no photo) are reported at once; runFinished() comes either way.
  void apply();
  /// Stops the running Apply: nothing changes, the status says "cancelled".
  void cancel();
  /// Makes the shown result the current photo (uploaded to the GPU once); Undo goes back.
  void keepResult();
  void undo();

  bool running() const noexcept { return job_.valid() && !job_.finished(); }
  bool hasResult() const noexcept { return run_.has_value(); }
  /// The last run shown, if any (cleared when the photo changes).
  const std::optional<FilterRun>& lastRun() const noexcept { return run_; }
  /// Previous photos Undo can go back to.
  int undoDepth() const noexcept { return undoDepth_; }
  /// False until the worker has said whether there is a GPU.
  bool deviceKnown() const noexcept { return deviceKnown_; }
  bool gpuAvailable() const noexcept { return gpuAvailable_; }
  /// The sentence under the controls: the last run's summary, "cancelled", or what was wrong.
  QString statusText() const;
  QString errorText() const;

  /// How many photos Undo keeps.
  static constexpr int kUndoDepth = 10;

  /// Worker-side state: the filter and output buffer reused between runs, the undo photos.
  struct WorkerState;

 signals:
  /// An Apply ended: shown, failed, rejected or cancelled.
  void runFinished();
  /// Keep result or Undo changed the photo (or failed).
  void photoEditFinished();

 private:
  void buildUi();
  QWidget* buildControls();
  QWidget* buildViewPane();
  void createActions();
  void operationChanged();
  void methodChanged();
  void borderChanged();
  void photoChanged();
  void queryDevice();
  void showRun(FilterRun run);
  void showResultSource();
  void updateActions();
  void setRunning(bool running);
  /// Shows one sentence as the problem (red, under the controls) and in the status bar.
  void reportProblem(const QString& text);
  void setStatus(const QString& html);

  TabServices& services_;
  std::shared_ptr<WorkerState> state_;
  JobHandle job_;
  std::optional<FilterRun> run_;
  int undoDepth_ = 0;
  bool photoEditPending_ = false;
  bool deviceKnown_ = false;
  bool gpuAvailable_ = false;

  QComboBox* operation_ = nullptr;
  QWidget* params_ = nullptr;
  std::vector<QWidget*> pages_;
  QSlider* radiusSlider_ = nullptr;
  QSpinBox* radius_ = nullptr;
  QLabel* radiusHint_ = nullptr;
  QComboBox* component_ = nullptr;
  KernelEditor* kernelEditor_ = nullptr;
  QComboBox* method_ = nullptr;
  QLabel* methodHint_ = nullptr;
  QComboBox* border_ = nullptr;
  QDoubleSpinBox* borderValue_ = nullptr;
  QCheckBox* gpu_ = nullptr;
  QCheckBox* cpu_ = nullptr;
  QPushButton* applyButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* progressLabel_ = nullptr;
  QPushButton* keepButton_ = nullptr;
  QPushButton* undoButton_ = nullptr;
  QLabel* error_ = nullptr;
  QLabel* status_ = nullptr;

  QButtonGroup* compareGroup_ = nullptr;
  QToolButton* showGpu_ = nullptr;
  QToolButton* showCpu_ = nullptr;
  QLabel* viewInfo_ = nullptr;
  BeforeAfterView* view_ = nullptr;

  QAction* applyAction_ = nullptr;
  QAction* keepAction_ = nullptr;
  QAction* undoAction_ = nullptr;
};

}  // namespace gpulab::gui
