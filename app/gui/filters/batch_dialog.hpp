// "Apply to folder...": the Filters tab's current filter over every image of a folder through the
// engine's batch pipeline (gpulab/pipeline/batch.hpp), with progress, an ETA, Cancel and the
// summary (images/s, time per stage, GPU busy, the files that failed and why). The batch runs on
// a thread of its own (the pipeline then starts its decode, GPU and encode threads); the GUI thread
// only receives progress and the summary, queued.
#pragma once

#include <QDialog>
#include <QString>
#include <atomic>
#include <memory>
#include <thread>

#include "gpulab/core/operation.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/pipeline/batch.hpp"
#include "widgets/gpu_checklist.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace gpulab::gui {

class BatchDialog : public QDialog {
  Q_OBJECT

 public:
  /// For `info` with `params` (what the Filters tab's controls hold) on the machine's `gpus` (none: the
  /// CPU runs the batch). With several GPUs, the checked ones each run a pipeline fed from the same
  /// decode and encode threads.
  BatchDialog(const gpulab::OperationInfo& info, gpulab::ParamValues params, const GpuChoices& gpus,
              QWidget* parent = nullptr);
  /// Cancels a batch still running and waits for the images in flight (a few).
  ~BatchDialog() override;

  void setFolders(const QString& input, const QString& output);
  /// "same", "png", "jpg" or "tiff".
  void setFormat(const QString& format);
  void setUseGpu(bool gpu);
  /// Starts the batch (problems found before it starts are shown at once and finished() comes).
  void start();
  void cancel();
  bool running() const noexcept { return running_; }
  QString summaryText() const;
  QString statusText() const;

 signals:
  /// The batch ended (done, failed or cancelled) or could not start.
  void finished();

 private:
  void chooseFolder(QLineEdit* edit, const QString& title);
  void showProgress(const gpulab::BatchProgress& progress);
  void showSummary(const gpulab::BatchSummary& summary);
  void showProblem(const QString& text);
  void setRunning(bool running);
  void join();

  const gpulab::OperationInfo& info_;
  gpulab::ParamValues params_;
  bool gpu_;
  GpuCheckList* gpus_ = nullptr;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
  bool running_ = false;

  QLineEdit* input_ = nullptr;
  QLineEdit* output_ = nullptr;
  QComboBox* format_ = nullptr;
  QComboBox* device_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QPlainTextEdit* summary_ = nullptr;
};

/// Opens the dialog for the Filters tab (modeless, deleted when closed).
void openBatchDialog(QWidget* parent, const gpulab::OperationInfo& info, const gpulab::ParamValues& params,
                     const GpuChoices& gpus);

}  // namespace gpulab::gui
