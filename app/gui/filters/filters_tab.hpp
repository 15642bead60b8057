// The "Filters" tab: every operation the engine registers (gpulab::imageOperations(): box blur, Sobel,
// 2D convolution, and whatever is registered next) on the current photo, on the GPU and the CPU side
// by side. Its controls are generated from the registry's parameter descriptions
// (filters/param_controls.hpp), so a new operation appears here with no change to this tab.
//
// Apply (Ctrl+Return) builds the operation from the controls' values and measures it on the engine's
// worker with the harness (filters/filters_worker.hpp): on the GPU from the photo already resident
// there, on the CPU with the OpenCV baseline on all cores, with progress and Cancel. The result is
// shown over the original with a split line (Space shows the original alone); the CPU and GPU results
// can each be shown, and their largest difference is stated. Every run's record goes to the Timings
// panel. Keep result (Ctrl+K) makes the result the current photo so filters chain; Undo (Ctrl+Z) and
// Redo (Ctrl+Shift+Z) walk the kept photos (up to 20 steps or 2 GiB). Bad parameters are reported in
// one sentence under the controls and in the status bar.
//
// Live preview: with a GPU, every change of a control runs the filter once on the GPU at once (no
// CPU), and the full measured run (GPU and CPU baseline) follows when the controls rest for 300 ms;
// without a GPU only the run at rest happens. Runs coalesce (shell/latest_job.hpp): one runs, the
// newest waits, and a result that a newer setting superseded is dropped, never shown.
//
// A region drawn on the view (Region tool, R, or Shift+drag; Esc clears) limits the filter to it:
// the filter runs on the region and its halo and only the region's pixels change (core/roi.hpp);
// timings are the window's. The Histogram panel (its dock) shows the photo's and the result's
// histograms and the profile along a line drawn with the Line tool (L, or Ctrl+drag).
#pragma once

#include <QLineF>
#include <QRect>
#include <QString>
#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "filters/filters_worker.hpp"
#include "gpulab/filters/registry.hpp"
#include "shell/engine.hpp"
#include "shell/latest_job.hpp"
#include "shell/tab_services.hpp"
#include "widgets/gpu_checklist.hpp"

class QAction;
class QButtonGroup;
class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;
class QToolButton;
class QVBoxLayout;

namespace gpulab::gui {

class BeforeAfterView;
class HistogramPanel;
class KernelEditor;
class ParamControl;

class FiltersTab : public QWidget {
  Q_OBJECT

 public:
  explicit FiltersTab(TabServices& services, QWidget* parent = nullptr);
  ~FiltersTab() override;

  // --- the controls, for scripting and tests (the widgets do the same) ------------------------
  /// The registered name of the operation the controls show: "box", "sobel", "conv", ...
  QString operation() const;
  /// Shows the controls of the registered operation `name`; false when there is none.
  bool setOperation(const QString& name);
  /// The current operation's parameters as its controls hold them, as the registry reads them. A
  /// parameter that only matters with another's value ("border-value" with "border=constant") is
  /// left out when that value is not chosen, so the engine takes its default.
  gpulab::ParamValues paramValues() const;
  /// The value of parameter `name` of the current operation, as text; empty when there is none.
  QString param(const QString& name) const;
  /// Sets parameter `name` of the current operation as its control would. False, with the reason in
  /// errorText(), when there is no such parameter or the value does not fit its control.
  bool setParam(const QString& name, const QString& value);
  /// The operation the controls describe, built by the registry (throws std::invalid_argument).
  std::unique_ptr<gpulab::Operation> makeOperation() const;
  /// The control of `param` of `operation` (its widget: "filterParam_<operation>_<param>"), or nullptr.
  ParamControl* paramControl(const QString& operation, const QString& param) const;
  /// The kernel editor of `operation` (the current one by default), or nullptr when it takes no kernel.
  KernelEditor* kernelEditor(const QString& operation = {}) const;
  /// Which implementations Apply runs; the GPU only where there is one.
  void setRunOn(bool cpu, bool gpu);
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
  void redo();
  /// Auto levels on the photo (the Histogram panel's button): selects the operation and applies it.
  void autoLevels();

  /// Live preview on (the default) or off: with it off, only Apply runs the filter.
  void setLivePreview(bool on);
  bool livePreview() const noexcept;
  /// The region the filter is limited to, in photo pixels (the view's), if any.
  std::optional<QRect> region() const;
  void setRegion(std::optional<QRect> region);
  /// The line whose profile the Histogram panel shows, if any.
  void setProfileLine(std::optional<QLineF> line);

  bool running() const noexcept { return runs_.busy(); }
  /// The run coalescing: how many runs started, and how many results were dropped as stale.
  const LatestJob& runQueue() const noexcept { return runs_; }
  /// Results shown (previews and full runs), and previews among them.
  int resultsShown() const noexcept { return resultsShown_; }
  int previewsShown() const noexcept { return previewsShown_; }
  /// Whether a run at rest is scheduled (the controls changed less than kRestMs ago).
  bool restPending() const noexcept;
  bool hasResult() const noexcept { return run_.has_value(); }
  /// The last run shown, if any (cleared when the photo changes).
  const std::optional<FilterRun>& lastRun() const noexcept { return run_; }
  /// Previous photos Undo can go back to, and photos Redo can go forward to.
  int undoDepth() const noexcept { return undoDepth_; }
  int redoDepth() const noexcept { return redoDepth_; }
  QAction* undoAction() const noexcept { return undoAction_; }
  QAction* redoAction() const noexcept { return redoAction_; }
  /// The Histogram panel (the main window puts it in a dock).
  HistogramPanel& histogramPanel() noexcept { return *histogram_; }
  /// Whether the Histogram panel shows what is current (its last analysis came back).
  bool analysisCurrent() const noexcept { return !analysis_.busy() && !analysisPending_; }
  /// False until the worker has said whether there is a GPU.
  bool deviceKnown() const noexcept { return deviceKnown_; }
  bool gpuAvailable() const noexcept { return gpuAvailable_; }
  /// The sentence under the controls: the last run's summary, "cancelled", or what was wrong.
  QString statusText() const;
  QString errorText() const;

  /// How long the controls must rest before the full (GPU + CPU) run starts.
  static constexpr int kRestMs = 300;

 signals:
  /// An Apply (or the run at rest) ended: shown, failed, rejected or cancelled.
  void runFinished();
  /// A live preview was shown.
  void previewShown();
  /// The Histogram panel was updated.
  void analysisShown();
  /// Keep result or Undo changed the photo (or failed).
  void photoEditFinished();

 private:
  /// The generated controls of one registered operation: its page of parameters (in the Filter box)
  /// and of border parameters (in the Border box), and the controls by parameter name.
  struct OperationControls {
    const gpulab::OperationInfo* info = nullptr;
    QWidget* page = nullptr;
    QWidget* borderPage = nullptr;
    std::map<std::string, ParamControl*> controls;
  };

  void buildUi();
  QWidget* buildControls();
  QWidget* buildViewPane();
  OperationControls buildOperation(const gpulab::OperationInfo& info);
  void linkControls(OperationControls& op);
  void createActions();
  void operationChanged();
  void photoChanged();
  void queryDevice();
  void showRun(FilterRun run);
  /// A control changed: a GPU preview now (with a GPU), the full run once the controls rest.
  void settingsChanged();
  /// Submits `request` through the coalescing queue.
  void startRun(const FilterRequest& request);
  /// Checks and builds the request for the current controls; false (problem reported) when it cannot run.
  bool buildRequest(FilterRequest& request, bool preview);
  /// Recomputes the Histogram panel (coalesced); `photoToo` when the photo changed.
  void requestAnalysis(bool photoToo);
  void showAnalysis(AnalysisRun run);
  void showResultSource();
  void updateActions();
  void setRunning(bool running);
  /// Shows one sentence as the problem (red, under the controls) and in the status bar.
  void reportProblem(const QString& text);
  void setStatus(const QString& html);
  /// A Keep or an Undo came back from the worker: Undo can go back `undoDepth` photos; `problem` is
  /// why it failed (empty when it worked).
  void finishPhotoEdit(HistoryDepth depth, const QString& problem);
  void editPhoto(bool forward);
  const OperationControls& current() const;
  /// The result shown is the GPU's: there is one, and the GPU is picked or the CPU did not run.
  bool showsGpuResult() const;

  TabServices& services_;
  std::shared_ptr<FiltersWorkerState> state_;
  std::shared_ptr<AnalysisWorkerState> analysisState_;
  LatestJob runs_;
  LatestJob analysis_;
  bool analysisPending_ = false;
  bool cancelRequested_ = false;
  bool suppressChanges_ = false;
  int resultsShown_ = 0;
  int previewsShown_ = 0;
  QTimer* restTimer_ = nullptr;
  std::optional<FilterRun> run_;
  int undoDepth_ = 0;
  int redoDepth_ = 0;
  bool photoEditPending_ = false;
  bool deviceKnown_ = false;
  bool gpuAvailable_ = false;
  GpuChoices gpuChoices_;  ///< the devices Apply to folder offers; none without a usable GPU

  std::vector<OperationControls> operations_;  // in the registry's order, as the combo lists them
  QComboBox* operation_ = nullptr;
  QGroupBox* borderBox_ = nullptr;
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
  QCheckBox* live_ = nullptr;
  QToolButton* regionTool_ = nullptr;
  QToolButton* lineTool_ = nullptr;
  BeforeAfterView* view_ = nullptr;
  HistogramPanel* histogram_ = nullptr;

  QAction* applyAction_ = nullptr;
  QAction* keepAction_ = nullptr;
  QAction* undoAction_ = nullptr;
  QAction* redoAction_ = nullptr;
  QAction* regionAction_ = nullptr;
  QAction* lineAction_ = nullptr;
};

}  // namespace gpulab::gui
