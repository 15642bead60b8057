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
// panel. Keep result (Ctrl+K) makes the result the current photo so filters chain; Undo (Ctrl+Z) goes
// back to the photo before. Bad parameters are reported in one sentence under the controls and in the
// status bar.
#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "filters/filters_worker.hpp"
#include "gpulab/filters/registry.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QAction;
class QButtonGroup;
class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QToolButton;
class QVBoxLayout;

namespace gpulab::gui {

class BeforeAfterView;
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

  bool running() const noexcept { return job_.running(); }
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

 signals:
  /// An Apply ended: shown, failed, rejected or cancelled.
  void runFinished();
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
  void showResultSource();
  void updateActions();
  void setRunning(bool running);
  /// Shows one sentence as the problem (red, under the controls) and in the status bar.
  void reportProblem(const QString& text);
  void setStatus(const QString& html);
  /// A Keep or an Undo came back from the worker: Undo can go back `undoDepth` photos; `problem` is
  /// why it failed (empty when it worked).
  void finishPhotoEdit(int undoDepth, const QString& problem);
  const OperationControls& current() const;
  /// The result shown is the GPU's: there is one, and the GPU is picked or the CPU did not run.
  bool showsGpuResult() const;

  TabServices& services_;
  std::shared_ptr<FiltersWorkerState> state_;
  JobHandle job_;
  std::optional<FilterRun> run_;
  int undoDepth_ = 0;
  bool photoEditPending_ = false;
  bool deviceKnown_ = false;
  bool gpuAvailable_ = false;

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
  BeforeAfterView* view_ = nullptr;

  QAction* applyAction_ = nullptr;
  QAction* keepAction_ = nullptr;
  QAction* undoAction_ = nullptr;
};

}  // namespace gpulab::gui
