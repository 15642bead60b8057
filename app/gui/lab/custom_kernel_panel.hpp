// The Lab's "Custom kernel" page: CuPy's ElementwiseKernel and RawKernel in gpulab. A code editor
// with line numbers holds an elementwise expression ("y = sin(x)*2 + sqrt(abs(x))") or a CUDA source
// with an extern "C" __global__ kernel; Compile & Run sends it to the engine's worker, which parses,
// compiles with NVRTC (or takes the cached binary), loads, times and checks it against the CPU. A
// syntax or compile error comes back with its line and column: the line is tinted in the editor, the
// column underlined, and the message listed (a click on it puts the cursor there). A run shows the
// compile time apart from the run time (and whether the kernel came from the cache), the launch, and
// a table of GPU against CPU with the largest error, like the other labs.
#pragma once

#include <QWidget>
#include <optional>
#include <vector>

#include "gpulab/lab/custom_kernel.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace gpulab::gui {

class CodeEditor;

class CustomKernelPanel : public QWidget {
  Q_OBJECT

 public:
  enum class Mode { Elementwise, Raw };

  explicit CustomKernelPanel(TabServices& services, QWidget* parent = nullptr);
  ~CustomKernelPanel() override;

  // --- for scripting and tests (the widgets do the same) ---------------------------------------
  void setMode(Mode mode);
  Mode mode() const;
  CodeEditor& editor() noexcept { return *editor_; }
  void setCode(const QString& text);
  void setSizeText(const QString& size);
  void setDType(lab::DType dtype);
  void setReps(int reps);
  /// Raw mode: the kernel's name, its arguments ("in:x out:y f32:a=2.5 i64:n=n"), the check.
  void setRawKernel(const QString& name, const QString& args, const QString& expect);
  void setLaunch(const QString& grid, const QString& block, const QString& shared);

  /// Compile & Run on the worker; bad fields are refused at once (runFinished, lastRunFailed).
  void compileAndRun();
  bool running() const noexcept { return job_.running(); }
  bool lastRunFailed() const noexcept { return lastRunFailed_; }
  QString statusText() const;
  /// The last successful run, if any.
  const std::optional<lab::KernelRun>& lastRun() const noexcept { return lastRun_; }
  /// The messages listed under the editor (errors and warnings with their positions).
  QStringList diagnosticTexts() const;
  const QTableWidget& table() const noexcept { return *table_; }

 signals:
  void runFinished();

 private:
  /// What a job hands back: a run, or the error with its positions.
  struct Outcome {
    std::optional<lab::KernelRun> run;
    QString error;
    std::vector<lab::CompileDiagnostic> diagnostics;  ///< positions in the editor's text when `inEditor`
    bool inEditor = true;
  };

  void buildUi();
  void modeChanged();
  void showOutcome(const Outcome& outcome);
  void showDiagnostics(const std::vector<lab::CompileDiagnostic>& diagnostics, bool inEditor);
  void finish(const QString& message, bool isError);

  TabServices& services_;
  JobHandle job_;
  bool lastRunFailed_ = false;
  std::optional<lab::KernelRun> lastRun_;
  QString expressionText_;  // each mode keeps its own text
  QString sourceText_;

  QComboBox* mode_ = nullptr;
  CodeEditor* editor_ = nullptr;
  QWidget* elementwiseFields_ = nullptr;  // shown in Elementwise mode
  QWidget* rawFields_ = nullptr;          // shown in Raw mode
  QLineEdit* inputs_ = nullptr;
  QLineEdit* kernelName_ = nullptr;
  QLineEdit* args_ = nullptr;
  QLineEdit* expect_ = nullptr;
  QLineEdit* grid_ = nullptr;
  QLineEdit* block_ = nullptr;
  QLineEdit* shared_ = nullptr;
  QLineEdit* size_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QSpinBox* reps_ = nullptr;
  QPushButton* run_ = nullptr;
  QLabel* status_ = nullptr;
  QListWidget* diagnostics_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
};

}  // namespace gpulab::gui
