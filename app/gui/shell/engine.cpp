#include "shell/engine.hpp"

#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "gpulab/core/device.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/core/version.hpp"
#include "gpulab/tiling/tiled_runner.hpp"
#include "shell/handover.hpp"
#include "widgets/image_convert.hpp"

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// WorkerContext

WorkerContext::WorkerContext(Publish publishPhoto) : publish_(std::move(publishPhoto)) {
  try {  // a device that cannot be queried (lost after a fault) leaves the worker CPU only
    devices_ = gpulab::queryDevices();
    if (!devices_.available()) return;
    gpu_ = std::make_unique<gpulab::GpuContext>(gpulab::selectedDevice());
  } catch (const std::exception& e) {
    gpuError_ = QString::fromStdString(e.what());
  }
}

WorkerContext::~WorkerContext() = default;

void WorkerContext::selectDevice(int index) {
  gpulab::selectDevice(index);  // throws for a device that does not exist, before anything changes
  if (gpu_ && gpu_->device() == index) return;
  devicePhoto_ = {};  // the old device's memory goes back first
  gpu_.reset();
  gpuError_.clear();
  try {
    gpu_ = std::make_unique<gpulab::GpuContext>(index);
  } catch (const std::exception& e) {
    gpuError_ = QString::fromStdString(e.what());
  }
  if (photo_) setPhoto(gpulab::Image(*photo_), source_);
}

QString WorkerContext::recoverFromGpuFault(const QString& fault) {
  gpuLost_ = false;  // this fault's outcome alone
  QString sentence = fault;
  if (!sentence.isEmpty()) sentence[0] = sentence[0].toUpper();
  try {
    gpulab::recoverDevice();
  } catch (const std::exception& e) {
    // The device epoch moved on: dropping the old context and photo frees nothing of theirs.
    devicePhoto_ = {};
    gpu_.reset();
    // The CUDA words without the call's file and line ("cudaErrorDevicesUnavailable: ... (the driver
    // gives this process no new CUDA context after the fault: ...)").
    QString why = QString::fromStdString(e.what());
    if (const qsizetype at = why.indexOf(QStringLiteral(" failed at ")); at >= 0) {
      const qsizetype colon = why.indexOf(QStringLiteral(": "), at);
      if (colon >= 0) why = why.mid(colon + 2);
    }
    gpuError_ = QStringLiteral("the GPU could not be reset after a fault: ") + why;
    gpuLost_ = true;
    if (photo_) publish(source_, std::nullopt, gpuError_);
    return sentence + QStringLiteral("; the device could not be reset (") + why +
           QStringLiteral("), so gpulab runs CPU only until it is restarted");
  }
  devicePhoto_ = {};  // stale after the reset: frees nothing
  gpu_.reset();
  gpuError_.clear();
  try {
    gpu_ = std::make_unique<gpulab::GpuContext>(gpulab::selectedDevice());
  } catch (const std::exception& e) {
    gpuError_ = QString::fromStdString(e.what());
    gpuLost_ = true;
    if (photo_) publish(source_, std::nullopt, gpuError_);
    return sentence + QStringLiteral("; the device was reset but could not be opened again (") + gpuError_ +
           QStringLiteral("), so gpulab runs CPU only");
  }
  if (!photo_) return sentence + QStringLiteral("; the device was reset, so the next job runs");
  std::optional<gpulab::Measurement> upload;
  QString note;
  try {
    gpu_->upload(*photo_, devicePhoto_);
    upload = uploadRecord(*photo_, gpu_->lastUpload().totalMs());
  } catch (const std::exception& e) {
    devicePhoto_ = {};
    note = QString::fromStdString(e.what());
  }
  publish(source_, std::move(upload), note);
  if (!note.isEmpty())
    return sentence + QStringLiteral("; the device was reset, but the photo stays on the host (") + note +
           QStringLiteral(")");
  return sentence + QStringLiteral("; the device was reset and the photo re-uploaded, so the next job runs");
}

gpulab::GpuContext& WorkerContext::gpu() {
  if (!gpu_) throw std::logic_error("this job needs a GPU, and gpulab runs CPU only here");
  return *gpu_;
}

const gpulab::Image& WorkerContext::photo() const {
  if (!photo_) throw std::logic_error("there is no photo: open one first");
  return *photo_;
}

const gpulab::DeviceImage& WorkerContext::devicePhoto() const {
  if (devicePhoto_.empty()) {
    if (!photo_) throw std::logic_error("there is no photo: open one first");
    throw std::runtime_error(gpuNote_.isEmpty() ? std::string("the photo is not on the GPU: there is no GPU")
                                                : "the photo is not on the GPU: " + gpuNote_.toStdString());
  }
  return devicePhoto_;
}

void WorkerContext::setPhoto(gpulab::Image image, const QString& source) {
  if (image.empty()) throw std::invalid_argument("cannot show an empty image");
  std::optional<gpulab::Measurement> upload;
  QString gpuNote;
  devicePhoto_ = {};  // the previous photo's memory goes back before the new one is allocated
  const std::size_t limit = gpulab::gpuMemoryLimit();
  const gpulab::ImageShape shape = gpulab::shapeOf(image);
  if (gpu_ && limit != 0 && image.sizeBytes() > limit) {
    gpuNote = QString::fromStdString("the " + gpulab::describe(shape) + " photo (" +
                                     gpulab::formatByteSize(image.sizeBytes()) +
                                     ") is larger than the GPU memory limit of " + gpulab::formatByteSize(limit) +
                                     " (File > GPU Memory Limit): it stays on the host and runs on the CPU; "
                                     "gpulab-cli filter runs such images on the GPU in tiles");
  } else if (gpu_) {
    try {
      gpu_->upload(image, devicePhoto_);
      // The first upload pays for allocations (device image, pinned staging); the second, into the
      // same buffers, is the number a person should compare with compute times.
      gpu_->upload(image, devicePhoto_);
      upload = uploadRecord(image, gpu_->lastUpload().totalMs());
    } catch (const std::exception& e) {
      devicePhoto_ = {};
      gpuNote = QString::fromStdString(e.what());
    }
  }
  photo_ = std::make_shared<const gpulab::Image>(std::move(image));
  publish(source, std::move(upload), std::move(gpuNote));
}

gpulab::Measurement WorkerContext::uploadRecord(const gpulab::Image& image, double uploadMs) const {
  gpulab::Measurement m;
  m.version = gpulab::gpulabVersion();
  m.operation = "upload";
  m.description = "upload photo";
  m.method = "";
  m.input = gpulab::shapeOf(image);
  m.output = *m.input;
  m.work = static_cast<double>(image.sizeBytes());
  gpulab::GpuMeasurement g;
  g.device = gpu_->device();
  for (const gpulab::DeviceInfo& d : devices_.devices)
    if (d.index == g.device) g.deviceName = d.name;
  g.warmup = 1;  // the first upload allocated the buffers
  g.upload = gpulab::Stats::of({uploadMs});
  g.hostMemory = gpu_->lastUpload().hostMemory();  // called right after the upload it records
  m.gpu = std::move(g);
  m.uploadBytes = static_cast<double>(image.sizeBytes());
  m.cpuSkipped = "a transfer has no CPU side";
  return m;
}

void WorkerContext::setPhoto(gpulab::Image image, gpulab::DeviceImage resident, const QString& source) {
  if (image.empty()) throw std::invalid_argument("cannot show an empty image");
  if (resident.width() != image.width() || resident.height() != image.height() ||
      resident.channels() != image.channels() || resident.type() != image.type())
    throw std::invalid_argument("the resident GPU image does not have the shape of the host image " + image.describe());
  devicePhoto_ = std::move(resident);
  photo_ = std::make_shared<const gpulab::Image>(std::move(image));
  publish(source, std::nullopt, {});
}

void WorkerContext::publish(const QString& source, std::optional<gpulab::Measurement> upload, QString gpuNote) {
  gpuNote_ = gpuNote;
  source_ = source;
  PhotoUpdate update;
  update.generation = ++generation_;
  update.source = source;
  update.description = QString::fromStdString(photo_->describe());
  update.width = photo_->width();
  update.height = photo_->height();
  update.channels = photo_->channels();
  update.sampleType = QString::fromUtf8(toString(photo_->type()));
  update.hostBytes = static_cast<qint64>(photo_->sizeBytes());
  update.onGpu = !devicePhoto_.empty();
  update.gpuBytes = static_cast<qint64>(devicePhoto_.sizeBytes());
  DisplayRange range;
  update.display = toQImage(*photo_, &range);
  update.displayNote = describeRange(*photo_, range);
  update.upload = std::move(upload);
  update.gpuNote = std::move(gpuNote);
  if (publish_) publish_(std::move(update));
}

bool WorkerContext::cancelled() const noexcept { return job_ != nullptr && job_->cancel; }

void WorkerContext::throwIfCancelled() const {
  if (cancelled()) throw gpulab::OperationCancelled();
}

void WorkerContext::reportProgress(double fraction) {
  if (progressSink_) progressSink_(std::clamp(fraction, 0.0, 1.0));
}

gpulab::CpuControl WorkerContext::cpuControl() {
  gpulab::CpuControl control;
  control.cancel = job_ != nullptr ? &job_->cancel : nullptr;
  control.progress = [this](double f) { reportProgress(f); };
  return control;
}

// ---------------------------------------------------------------------------------------------
// EngineWorker: the QObject that lives on the worker thread and runs jobs in order.

class EngineWorker : public QObject {
 public:
  void start(WorkerContext::Publish publish) { context_ = std::make_unique<WorkerContext>(std::move(publish)); }

  void stop() {
    context_.reset();  // frees the resident photo and the GPU context on this thread
  }

  /// Runs one job; `report(outcome, deliver, error)` is called on this thread with the result.
  template <class Report, class Progress>
  void run(const std::shared_ptr<detail::JobState>& state,
           const std::function<std::function<void()>(WorkerContext&)>& body, Progress progress, Report report) {
    {
      std::lock_guard lock(runningMutex_);
      running_ = state;
    }
    std::function<void()> deliver;
    QString error;
    int outcome = 2;  // 0 done, 1 failed, 2 cancelled, 3 failed by a GPU fault (recovered), 4 (GPU lost)
    if (!state->cancel && !shuttingDown_ && context_) {
      context_->job_ = state.get();
      context_->progressSink_ = std::move(progress);
      try {
        deliver = body(*context_);
        outcome = 0;
      } catch (const gpulab::OperationCancelled&) {
        outcome = 2;
      } catch (const gpulab::GpuFaultError& e) {
        error = context_->recoverFromGpuFault(QString::fromStdString(gpulab::describeGpuFault(e)));
        outcome = context_->gpuLost() ? 4 : 3;
      } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
        outcome = 1;
        // A fault that reached us as another exception (a lab KernelFault, a library's error) still
        // poisoned the context: recover before the next job.
        if (context_->hasGpu()) {
          if (const std::optional<std::string> fault = gpulab::stickyGpuFault()) {
            // Its first sentence says what ran ("the kernel 'wild' failed while running: ..."); advice
            // after it (to restart) no longer holds.
            const QString what = error.section(QStringLiteral(". "), 0, 0);
            const QString reason = QString::fromStdString(*fault);
            error = context_->recoverFromGpuFault(
                QStringLiteral("the GPU faulted (") +
                (what.contains(reason) ? what : reason + QStringLiteral(": ") + what) + QStringLiteral(")"));
            outcome = context_->gpuLost() ? 4 : 3;
          }
        }
      } catch (...) {
        error = QStringLiteral("the job failed with an unknown error");
        outcome = 1;
      }
      context_->job_ = nullptr;
      context_->progressSink_ = nullptr;
    }
    {
      std::lock_guard lock(runningMutex_);
      running_.reset();
    }
    report(outcome, std::move(deliver), error);
  }

  /// From the GUI thread: no new job starts, and the running one is asked to stop.
  void shutDown() {
    shuttingDown_ = true;
    std::lock_guard lock(runningMutex_);
    if (running_) running_->cancel = true;
  }

 private:
  std::unique_ptr<WorkerContext> context_;
  std::atomic<bool> shuttingDown_{false};
  std::mutex runningMutex_;
  std::shared_ptr<detail::JobState> running_;
};

// ---------------------------------------------------------------------------------------------
// Engine

Engine::Engine(QObject* parent) : QObject(parent), worker_(new EngineWorker) {
  thread_.setObjectName(QStringLiteral("gpulab-engine"));
  worker_->moveToThread(&thread_);
  thread_.start();
  // Every call between the two threads goes through invokeQueued: shell/handover.hpp says why.
  invokeQueued(worker_, [this, worker = worker_] {
    worker->start([this](PhotoUpdate update) {
      // Runs on the worker; the signal is emitted on the GUI thread, ahead of the job's outcome.
      invokeQueued(this, [this, update = std::move(update)] { emit photoChanged(update); });
    });
  });
}

Engine::~Engine() {
  for (const JobHandle& job : std::as_const(latestByKey_)) job.cancel();
  worker_->shutDown();
  // Queued jobs behind this are skipped; the running one stops at its next cancellation check.
  invokeQueued(
      worker_, [worker = worker_] { worker->stop(); }, Qt::BlockingQueuedConnection);
  thread_.quit();
  thread_.wait();
  delete worker_;
}

JobHandle Engine::post(QObject* receiver, Body body, JobOptions options) {
  auto state = std::make_shared<detail::JobState>();
  JobHandle handle(state);
  if (!options.coalesceKey.isEmpty()) {
    if (auto it = latestByKey_.find(options.coalesceKey); it != latestByKey_.end()) it->cancel();
    latestByKey_.insert(options.coalesceKey, handle);
  }
  ++pending_;
  const QPointer<QObject> target(receiver != nullptr ? receiver : this);
  auto shared = std::make_shared<JobOptions>(std::move(options));
  auto sharedBody = std::make_shared<Body>(std::move(body));

  // Progress: throttled on the worker, delivered on the GUI thread.
  using Clock = std::chrono::steady_clock;
  auto progress = [this, state, target, shared, last = Clock::time_point{}, first = true](double f) mutable {
    if (!shared->progress) return;
    const auto now = Clock::now();
    if (!first && f < 1.0 && now - last < std::chrono::milliseconds(50)) return;
    first = false;
    last = now;
    invokeQueued(this, [state, target, shared, f] {
      if (target && !state->cancel && !state->finished) shared->progress(f);
    });
  };

  invokeQueued(worker_, [this, worker = worker_, state, target, shared, sharedBody, progress]() mutable {
    worker->run(state, *sharedBody, std::move(progress), [&](int outcome, Deliver doneFn, const QString& error) {
      invokeQueued(this, [this, state, target, shared, outcome, doneFn = std::move(doneFn), error] {
        deliver(state, target, *shared, static_cast<Outcome>(outcome), doneFn, error);
      });
    });
    sharedBody.reset();  // the job's captures are released on the worker, after it ran
  });
  return handle;
}

void Engine::deliver(const std::shared_ptr<detail::JobState>& state, const QPointer<QObject>& receiver,
                     const JobOptions& options, Outcome outcome, const Deliver& done, const QString& error) {
  --pending_;
  state->finished = true;
  if (!options.coalesceKey.isEmpty()) {
    if (auto it = latestByKey_.find(options.coalesceKey); it != latestByKey_.end() && it->state_ == state)
      latestByKey_.erase(it);
  }
  // Even when the job's receiver is gone.
  if (outcome == Outcome::GpuFault || outcome == Outcome::GpuLost) emit gpuFaultRecovered(error);
  if (outcome == Outcome::GpuLost) emit gpuLost(error);
  if (!receiver) return;
  if (state->cancel) outcome = Outcome::Cancelled;  // a cancel() on this thread wins over a late result
  switch (outcome) {
    case Outcome::Done:
      done();
      break;
    case Outcome::Failed:
    case Outcome::GpuFault:
    case Outcome::GpuLost:
      if (options.failed)
        options.failed(error);
      else
        emit jobFailed(error);
      break;
    case Outcome::Cancelled:
      if (options.cancelled) options.cancelled();
      break;
  }
}

}  // namespace gpulab::gui
