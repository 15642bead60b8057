// What a job sees while it runs on the engine's worker thread (see engine.hpp for how jobs are
// submitted). Everything here belongs to that thread: the GPU context, the current photo on the
// host and resident on the GPU, and the running job's cancel flag and progress reporter.
#pragma once

#include <QImage>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab::gui {

namespace detail {
struct JobState;
}

/// A new current photo, as the GUI thread receives it (Engine::photoChanged).
struct PhotoUpdate {
  quint64 generation = 0;  ///< increases with every new photo
  QString source;          ///< the file it came from, or what produced it
  QString description;     ///< "400x300 RGB u8"
  int width = 0;
  int height = 0;
  int channels = 0;
  QString sampleType;    ///< "u8", "f32", "f64"
  qint64 hostBytes = 0;  ///< the host image
  bool onGpu = false;    ///< resident on the GPU (WorkerContext::devicePhoto())
  qint64 gpuBytes = 0;   ///< its GPU memory, pitched planes included
  QImage display;        ///< what the screen shows (floats normalised, see widgets/image_convert.hpp)
  QString displayNote;   ///< "f32 shown normalised from ...", empty for u8
  /// Its upload to the GPU as a record (operation "upload", a GPU upload stat alone: the second of two
  /// uploads, into buffers the first allocated, as GpuContext::lastUpload() timed it), when uploaded.
  std::optional<gpulab::Measurement> upload;
  QString gpuNote;  ///< why it is not resident on the GPU although there is one; else empty

  /// The upload's median, when there was one.
  std::optional<double> uploadMs() const {
    return upload && upload->gpu && upload->gpu->upload ? std::optional<double>(upload->gpu->upload->medianMs)
                                                        : std::nullopt;
  }
};

class WorkerContext {
 public:
  using Publish = std::function<void(PhotoUpdate)>;

  /// Created on the worker thread. Opens the selected device (0 unless chosen) when cudaAvailable(); a failure to do so
  /// is kept as gpuError() and the context runs CPU only.
  explicit WorkerContext(Publish publishPhoto);
  ~WorkerContext();
  WorkerContext(const WorkerContext&) = delete;
  WorkerContext& operator=(const WorkerContext&) = delete;

  // --- device --------------------------------------------------------------------------------
  bool hasGpu() const noexcept { return gpu_ != nullptr; }
  /// The GPU's context (stream, staging, scratch). Throws std::logic_error when hasGpu() is false.
  gpulab::GpuContext& gpu();
  /// queryDevices() as seen when the worker started.
  const gpulab::DeviceReport& devices() const noexcept { return devices_; }
  /// Why there is no GpuContext although a device was found (creation failed); empty otherwise.
  const QString& gpuError() const noexcept { return gpuError_; }
  /// Makes GPU `index` the one the engine computes on (gpulab::selectDevice: every later GpuContext
  /// and lab experiment) and reopens this context there; a current photo is uploaded to it again
  /// and published. Throws std::invalid_argument (one sentence listing the devices) for an index
  /// that does not exist; the previous device stays in use then.
  void selectDevice(int index);
  /// After a sticky GPU fault (`fault`: "the GPU faulted (...)", gpulab::describeGpuFault): resets the
  /// device (gpulab::recoverDevice), opens a new GpuContext, uploads the current photo again from its
  /// host copy and publishes it. Returns the one sentence that tells what happened ("The GPU faulted
  /// (...); the device was reset and the photo re-uploaded, so the next job runs"). Never throws: a
  /// reset that fails leaves the context CPU only, and the sentence says so.
  QString recoverFromGpuFault(const QString& fault);
  /// A fault's recovery failed: this process runs CPU only until gpulab is restarted.
  bool gpuLost() const noexcept { return gpuLost_; }

  // --- the current photo ---------------------------------------------------------------------
  bool hasPhoto() const noexcept { return photo_ != nullptr; }
  /// The current photo on the host. Throws std::logic_error when there is none.
  const gpulab::Image& photo() const;
  /// The same image, shared (cheap to keep while the photo changes).
  std::shared_ptr<const gpulab::Image> sharedPhoto() const { return photo_; }
  quint64 photoGeneration() const noexcept { return generation_; }
  /// True when the current photo is resident on the GPU (uploaded once when it was set).
  bool photoOnGpu() const noexcept { return !devicePhoto_.empty(); }
  /// The resident copy. Throws std::runtime_error with the reason when it is not on the GPU.
  const gpulab::DeviceImage& devicePhoto() const;

  /// Makes `image` the current photo: uploads it when there is a GPU (an upload that fails, e.g. for
  /// lack of memory, leaves it host-only with the reason in PhotoUpdate::gpuNote), converts it for
  /// display, and publishes it to the GUI. Throws std::invalid_argument for an empty image.
  void setPhoto(gpulab::Image image, const QString& source);
  /// The same for a result that is already on the GPU: `resident` must hold the same pixels as
  /// `image`, and becomes the resident copy without another upload.
  void setPhoto(gpulab::Image image, gpulab::DeviceImage resident, const QString& source);

  // --- the running job -----------------------------------------------------------------------
  /// True once the job's handle was cancelled (or the engine is shutting down). Long work checks it
  /// between slices and stops, ideally by throwing gpulab::OperationCancelled (throwIfCancelled()).
  bool cancelled() const noexcept;
  void throwIfCancelled() const;
  /// Progress of the running job, 0..1; delivered to JobOptions::progress on the GUI thread,
  /// at most about 20 times a second (the first and 1.0 always).
  void reportProgress(double fraction);
  /// Cancel flag and progress wired for the engine's CPU baselines (Filter::runCpu and friends).
  gpulab::CpuControl cpuControl();

 private:
  friend class EngineWorker;
  gpulab::Measurement uploadRecord(const gpulab::Image& image, double uploadMs) const;
  void publish(const QString& source, std::optional<gpulab::Measurement> upload, QString gpuNote);

  Publish publish_;
  gpulab::DeviceReport devices_;
  QString gpuError_;
  bool gpuLost_ = false;
  std::unique_ptr<gpulab::GpuContext> gpu_;
  std::shared_ptr<const gpulab::Image> photo_;
  gpulab::DeviceImage devicePhoto_;
  QString gpuNote_;
  QString source_;  // the current photo's, for publishing it again on another device
  quint64 generation_ = 0;

  // Set by EngineWorker around each job.
  detail::JobState* job_ = nullptr;
  std::function<void(double)> progressSink_;
};

}  // namespace gpulab::gui
