// The engine's worker thread and how the GUI gives it work.
//
// One QThread runs every engine call of the application, in submission order: the GPU context, the
// resident photo and everything a job touches live there (WorkerContext), so the GUI thread never
// calls CUDA or a CPU baseline and never waits on either. A tab hands over a job and gets exactly one
// outcome back on the GUI thread: `done(result)`, `failed(message)` or `cancelled()`.
//
//   // in a tab (GUI thread); `services.engine` is the application's Engine
//   job_ = services.engine.submit(this,
//       [spec](WorkerContext& ctx) {                  // worker thread: no widgets here
//         auto filter = gpulab::makeFilter(spec);
//         gpulab::Image cpu = filter->runCpu(ctx.photo(), ctx.cpuControl());  // progress + cancel
//         return FilterResult{...};                   // any movable type; QImage is fine
//       },
//       [this](FilterResult r) { showResult(r); },    // GUI thread
//       {.coalesceKey = "filters",                    // a newer "filters" job cancels this one
//        .failed = [this](const QString& why) { statusLabel_->setText(why); },
//        .progress = [this](double f) { progressBar_->setValue(int(f * 100)); }});
//   ...
//   job_.cancel();  // from a Cancel button: after this returns, `done` will not run
//
// Rules: submit and cancel from the GUI thread; `receiver` lives on the GUI thread, and when it is
// destroyed first its callbacks are dropped. The job's exceptions become `failed` with their
// message (default handler: Engine::jobFailed, which the main window shows in the status bar);
// gpulab::OperationCancelled, or a cancel() before delivery, becomes `cancelled`. A sticky GPU fault
// (gpulab::GpuFaultError, or any failure that left the CUDA context poisoned) is recovered on the
// worker before the next job: the device is reset, the GPU context rebuilt and the photo uploaded
// again; the job fails with the sentence that says so, and gpuFaultRecovered carries it too. Where the
// driver gives the process no new context, gpuLost follows, and the main window offers to restart
// gpulab (shell/fault_restart.hpp).
#pragma once

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "shell/worker_context.hpp"

namespace gpulab::gui {

class EngineWorker;

namespace detail {
struct JobState {
  std::atomic<bool> cancel{false};
  std::atomic<bool> finished{false};
};
}  // namespace detail

struct JobOptions {
  /// Jobs with the same non-empty key coalesce: submitting one cancels the previous (latest wins).
  QString coalesceKey{};
  /// The job threw: its message. Default: Engine::jobFailed.
  std::function<void(const QString&)> failed{};
  /// The job was cancelled (by its handle, by coalescing, or it threw gpulab::OperationCancelled).
  std::function<void()> cancelled{};
  /// WorkerContext::reportProgress, 0..1.
  std::function<void(double)> progress{};
};

/// A submitted job. Copies share it; an empty handle does nothing.
class JobHandle {
 public:
  JobHandle() = default;
  bool valid() const noexcept { return state_ != nullptr; }
  /// Asks the job to stop. Called on the GUI thread, it guarantees `done` will not run after it.
  void cancel() const noexcept {
    if (state_) state_->cancel = true;
  }
  bool cancelRequested() const noexcept { return state_ && state_->cancel; }
  /// Its outcome has been delivered (or dropped because the receiver was gone).
  bool finished() const noexcept { return state_ && state_->finished; }
  /// Submitted and its outcome not delivered yet.
  bool running() const noexcept { return valid() && !finished(); }

 private:
  friend class Engine;
  explicit JobHandle(std::shared_ptr<detail::JobState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::JobState> state_;
};

class Engine : public QObject {
  Q_OBJECT

 public:
  explicit Engine(QObject* parent = nullptr);
  /// Cancels every job, waits for the running one to return, and frees the GPU memory on the worker.
  ~Engine() override;

  /// Runs `work(WorkerContext&)` on the worker thread, then `done(result)` on the GUI thread through
  /// `receiver` (nullptr: the engine itself). `work` may return void; then `done` takes nothing.
  template <class Work, class Done>
  JobHandle submit(QObject* receiver, Work&& work, Done&& done, JobOptions options = {});

  /// Jobs submitted whose outcome has not been delivered yet.
  int pendingJobs() const noexcept { return pending_; }

 signals:
  /// The current photo changed (WorkerContext::setPhoto); emitted before the job's `done`.
  void photoChanged(const gpulab::gui::PhotoUpdate& update);
  /// A job failed and its submitter gave no `failed` handler.
  void jobFailed(const QString& message);
  /// A job hit a sticky GPU fault and the worker recovered (WorkerContext::recoverFromGpuFault): the
  /// one sentence that says so. Emitted before the job's `failed` (which carries the same sentence).
  void gpuFaultRecovered(const QString& message);
  /// After gpuFaultRecovered, when the worker could not get the GPU back (WorkerContext::gpuLost: the
  /// driver gives the process no new CUDA context): only a restart of gpulab brings the GPU back
  /// (MainWindow offers it). The same sentence.
  void gpuLost(const QString& message);

 private:
  using Deliver = std::function<void()>;
  using Body = std::function<Deliver(WorkerContext&)>;
  enum class Outcome { Done, Failed, Cancelled, GpuFault, GpuLost };

  JobHandle post(QObject* receiver, Body body, JobOptions options);
  void deliver(const std::shared_ptr<detail::JobState>& state, const QPointer<QObject>& receiver,
               const JobOptions& options, Outcome outcome, const Deliver& done, const QString& error);

  QThread thread_;
  EngineWorker* worker_ = nullptr;
  QHash<QString, JobHandle> latestByKey_;
  int pending_ = 0;
};

template <class Work, class Done>
JobHandle Engine::submit(QObject* receiver, Work&& work, Done&& done, JobOptions options) {
  using WorkFn = std::decay_t<Work>;
  using DoneFn = std::decay_t<Done>;
  using Result = std::invoke_result_t<WorkFn&, WorkerContext&>;
  // Shared so that move-only callables fit in std::function.
  auto w = std::make_shared<WorkFn>(std::forward<Work>(work));
  auto d = std::make_shared<DoneFn>(std::forward<Done>(done));
  Body body = [w, d](WorkerContext& ctx) -> Deliver {
    if constexpr (std::is_void_v<Result>) {
      (*w)(ctx);
      return [d] { (*d)(); };
    } else {
      auto result = std::make_shared<Result>((*w)(ctx));
      return [d, result] { (*d)(std::move(*result)); };
    }
  };
  return post(receiver, std::move(body), std::move(options));
}

}  // namespace gpulab::gui
