// A still split over several GPUs (or CPU workers): the band plan, the shared queue with its failure
// handling, and the per-device work (escape time or perturbation against one shared reference).
#include "gpulab/mandelbrot/multi_gpu.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/mandelbrot/deep_renderer.hpp"
#include "internal/mandelbrot_params.hpp"
#include "internal/mandelbrot_rows.hpp"

namespace gpulab {

namespace {

/// "4,455" (counts: never negative).
std::string grouped(int n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// The queue of band indices the workers share. A worker takes the next band (a band given back by a
/// failed worker first); when none is left it waits while other workers still hold bands, since a
/// band comes back if its worker fails.
class BandQueue {
 public:
  /// `gate` >= 0: only that worker takes bands until openGate() (the failure hook: it gets its bands
  /// before the others can drain the queue, so the test hook fires whatever the timing).
  BandQueue(int count, int gate) : count_(count), gate_(gate) {}

  std::optional<int> take(int worker, const std::atomic<bool>* cancel) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (stopped_ || (cancel != nullptr && cancel->load(std::memory_order_relaxed))) {
        stopped_ = true;
        changed_.notify_all();
        return std::nullopt;
      }
      if (gate_ >= 0 && worker != gate_) {
        changed_.wait(lock);
        continue;
      }
      if (!returned_.empty()) {
        const int band = returned_.back();
        returned_.pop_back();
        ++inFlight_;
        return band;
      }
      if (next_ < count_) {
        ++inFlight_;
        return next_++;
      }
      if (inFlight_ == 0) return std::nullopt;
      changed_.wait(lock);
    }
  }
  void openGate() {
    const std::lock_guard lock(mutex_);
    gate_ = -1;
    changed_.notify_all();
  }
  void done() {
    const std::lock_guard lock(mutex_);
    --inFlight_;
    changed_.notify_all();
  }
  void giveBack(int band) {
    const std::lock_guard lock(mutex_);
    --inFlight_;
    returned_.push_back(band);
    ++givenBack_;
    changed_.notify_all();
  }
  bool stopped() const {
    const std::lock_guard lock(mutex_);
    return stopped_;
  }
  /// Bands never finished: given back with nobody left to take them, or never taken.
  int unfinished() const {
    const std::lock_guard lock(mutex_);
    return static_cast<int>(returned_.size()) + (count_ - next_);
  }
  int givenBack() const {
    const std::lock_guard lock(mutex_);
    return givenBack_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int count_;
  int gate_;
  int next_ = 0;
  int inFlight_ = 0;
  int givenBack_ = 0;
  bool stopped_ = false;
  std::vector<int> returned_;
};

std::vector<std::string> workerNames(const std::vector<int>& devices) {
  std::map<int, int> uses;
  for (int d : devices) ++uses[d];
  std::vector<std::string> names;
  for (std::size_t k = 0; k < devices.size(); ++k) {
    const int d = devices[k];
    if (d < 0)
      names.push_back("CPU worker " + std::to_string(k));
    else if (uses[d] > 1)
      names.push_back("worker " + std::to_string(k) + " (GPU " + std::to_string(d) + ")");
    else
      names.push_back("GPU " + std::to_string(d));
  }
  return names;
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Plan and queue

std::vector<RowBand> planBands(int rows, int workers, int align, int bandRows) {
  if (rows < 1) throw std::invalid_argument("a split still needs at least one row, not " + std::to_string(rows));
  if (workers < 1)
    throw std::invalid_argument("a split still needs at least one worker, not " + std::to_string(workers));
  if (align < 1 || rows % align != 0)
    throw std::invalid_argument("the " + std::to_string(rows) + " rows are not a multiple of the band alignment " +
                                std::to_string(align));
  if (bandRows < 0 || bandRows % align != 0)
    throw std::invalid_argument("a band of " + std::to_string(bandRows) + " rows is not a positive multiple of " +
                                std::to_string(align) + " rows");
  if (bandRows == 0) {
    constexpr int kMinRows = 16;  // one block of the kernels
    const int target = std::max(64, 16 * workers);
    bandRows = std::max(kMinRows, (rows + target - 1) / target);
    bandRows = (bandRows + align - 1) / align * align;
  }
  std::vector<RowBand> bands;
  for (int first = 0; first < rows; first += bandRows)
    bands.push_back({static_cast<int>(bands.size()), first, std::min(bandRows, rows - first)});
  return bands;
}

bool SplitReport::anyFailed() const noexcept {
  return std::any_of(workers.begin(), workers.end(), [](const SplitWorker& w) { return w.failed; });
}

std::string SplitReport::failureSentence() const {
  std::vector<std::string> failed, kept;
  for (const SplitWorker& w : workers) {
    if (w.failed)
      failed.push_back(w.name + " failed after " + grouped(w.bands) + (w.bands == 1 ? " band" : " bands") + " (" +
                       w.failure + ")");
    else
      kept.push_back(w.name);
  }
  if (failed.empty()) return {};
  std::string text = joinNames(failed) + "; ";
  text += joinNames(kept) + " finished " +
          (reassigned > 0 ? "the " + grouped(reassigned) + " band" + (reassigned == 1 ? "" : "s") + " given back and "
                          : "") +
          "the rest, and the bands already done were kept: the image is complete.";
  return text;
}

std::string SplitReport::sharesText() const {
  std::string text;
  for (const SplitWorker& w : workers) {
    if (!text.empty()) text += "; ";
    const int percent = rows > 0 ? static_cast<int>(100.0 * w.rows / rows + 0.5) : 0;
    text += w.name + ": " + grouped(w.bands) + (w.bands == 1 ? " band, " : " bands, ") + grouped(w.rows) + " rows (" +
            std::to_string(percent) + "%)";
    if (w.failed) text += ", failed";
  }
  return text;
}

SplitReport runBandQueue(const std::vector<RowBand>& bands, const std::vector<int>& devices,
                         const std::function<void(int)>& setup, const std::function<void(int, const RowBand&)>& render,
                         const std::function<void(int)>& teardown, const SplitFailureHook& hook,
                         const std::atomic<bool>* cancel) {
  if (devices.empty()) throw std::invalid_argument("a split needs at least one device");
  SplitReport report;
  report.bandCount = static_cast<int>(bands.size());
  for (const RowBand& b : bands) report.rows += b.count;
  const std::vector<std::string> names = workerNames(devices);
  report.workers.resize(devices.size());
  for (std::size_t k = 0; k < devices.size(); ++k) {
    report.workers[k].device = devices[k];
    report.workers[k].name = names[k];
  }
  const bool hooked = hook.worker >= 0 && hook.worker < static_cast<int>(devices.size());
  BandQueue queue(static_cast<int>(bands.size()), hooked ? hook.worker : -1);
  std::latch ready(static_cast<std::ptrdiff_t>(devices.size()));  // every setup done (or failed) before any band
  Stopwatch wall;
  auto work = [&](int k) {
    SplitWorker& w = report.workers[static_cast<std::size_t>(k)];
    int held = -1;  // the band this worker holds
    bool setUp = false;
    try {
      const Stopwatch watch;
      setup(k);
      w.setupMs = watch.elapsedMs();
      setUp = true;
    } catch (const std::exception& e) {
      w.failed = true;
      w.failure = e.what();
    } catch (...) {
      w.failed = true;
      w.failure = "an unknown exception";
    }
    ready.arrive_and_wait();
    if (k == 0) wall = Stopwatch();  // the bands' wall time starts once every worker is ready
    try {
      while (setUp) {
        const std::optional<int> next = queue.take(k, cancel);
        if (!next) break;
        held = *next;
        if (hook.worker == k && w.bands == hook.afterBands)
          throw std::runtime_error("simulated failure of worker " + std::to_string(k) + " (test hook)");
        const Stopwatch watch;
        const RowBand& band = bands[static_cast<std::size_t>(held)];
        render(k, band);
        w.busyMs += watch.elapsedMs();
        ++w.bands;
        w.rows += band.count;
        held = -1;
        queue.done();
      }
    } catch (const std::exception& e) {
      w.failed = true;
      w.failure = e.what();
    } catch (...) {
      w.failed = true;
      w.failure = "an unknown exception";
    }
    if (held >= 0) queue.giveBack(held);
    if (hooked && k == hook.worker) queue.openGate();  // failed as the hook says, or never reached it
    try {
      teardown(k);
    } catch (...) {  // freeing after a failure may fail too; nothing more to do
    }
  };
  {
    std::vector<std::jthread> threads;
    threads.reserve(devices.size());
    for (std::size_t k = 0; k < devices.size(); ++k) threads.emplace_back(work, static_cast<int>(k));
  }  // joins
  report.wallMs = wall.elapsedMs();
  report.reassigned = queue.givenBack();
  if (queue.stopped()) throw OperationCancelled();
  if (queue.unfinished() > 0) {
    std::string reasons;
    for (const SplitWorker& w : report.workers)
      if (w.failed) reasons += (reasons.empty() ? "" : "; ") + w.name + ": " + w.failure;
    throw std::runtime_error("every worker of the split failed, " + grouped(queue.unfinished()) + " of " +
                             grouped(report.bandCount) + " bands are missing (" + reasons + ")");
  }
  return report;
}

// ---------------------------------------------------------------------------------------------
// Stills

namespace {

/// Validates, prepares the shared deep reference when the view needs one, and plans the bands.
struct StillJob {
  PrecisionChoice precision;
  std::vector<RowBand> bands;
  DeepView deep;
  DeepOptions deepOptions;
  DeepReference* reference = nullptr;
  std::optional<DeepReference> ownReference;
};

void prepareJob(StillJob& job, const MandelbrotView& view, const MandelbrotOptions& options,
                const StillSplitOptions& split, int workers, SplitStill& out) {
  job.precision = choosePrecision(view);  // validates; throws before any work
  job.bands = planBands(view.rawHeight(), workers, view.supersample, split.bandRows);
  out.precision = job.precision;
  if (job.precision.used != Precision::Perturbation) return;
  job.deep = deepViewOf(view);
  job.deepOptions = deepOptionsOf(options);
  if (split.reference != nullptr) {
    job.reference = split.reference;
  } else {
    job.ownReference.emplace();
    job.reference = &*job.ownReference;
  }
  const Stopwatch watch;
  out.reference = job.reference->prepare(job.deep, job.deepOptions, split.cancel);
  out.referenceMs = watch.elapsedMs();
}

/// One GPU worker's device state; made and freed on its thread.
struct GpuWorker {
  std::unique_ptr<GpuContext> gpu;
  std::unique_ptr<DeepRenderer> deep;
  DeviceBuffer raw;    // the whole frame's raw plane
  DeviceBuffer rgba;   // one band's colours
  DeviceBuffer table;  // the palette
  PinnedBuffer staging;
};

}  // namespace

SplitStill renderStillOnGpus(const std::vector<int>& devices, const MandelbrotView& view,
                             const MandelbrotOptions& options, const StillSplitOptions& split) {
  if (devices.empty()) throw std::invalid_argument("a split still needs at least one GPU");
  if (split.colouring) validate(*split.colouring);
  SplitStill out;
  StillJob job;
  prepareJob(job, view, options, split, static_cast<int>(devices.size()), out);

  const int width = view.rawWidth(), height = view.rawHeight(), ss = view.supersample;
  const std::size_t pitch = static_cast<std::size_t>(width) * sizeof(float);
  const std::size_t rgbaPitch = static_cast<std::size_t>(view.imageWidth) * 4;
  int maxBand = 0;
  for (const RowBand& b : job.bands) maxBand = std::max(maxBand, b.count);
  if (split.wantRaw) out.raw = Image(width, height, 1, PixelType::F32);
  if (split.colouring) out.rgba = Image(view.imageWidth, view.imageHeight, 4, PixelType::U8);
  const kernels::EscapeParams escape =
      job.precision.used == Precision::Perturbation ? kernels::EscapeParams{} : escapeParams(view, options);
  const kernels::EscapeSchedule schedule =
      options.variant == MandelbrotVariant::Plain ? kernels::EscapeSchedule::Plain : kernels::EscapeSchedule::Optimized;
  std::optional<kernels::ColourParams> colour;
  if (split.colouring) {
    colour = colourParams(*split.colouring, ss);
    colour->bgra = split.order == ChannelOrder::Bgra;
  }
  const std::size_t stagingBytes =
      (split.wantRaw ? static_cast<std::size_t>(maxBand) * pitch : 0) + (colour ? maxBand / ss * rgbaPitch : 0);

  std::vector<GpuWorker> workers(devices.size());
  auto setup = [&](int k) {
    GpuWorker& w = workers[static_cast<std::size_t>(k)];
    w.gpu = std::make_unique<GpuContext>(devices[static_cast<std::size_t>(k)]);  // current on this thread
    w.raw.reserve(static_cast<std::size_t>(height) * pitch);
    if (colour) {
      w.rgba.reserve(static_cast<std::size_t>(maxBand / ss) * rgbaPitch);
      const auto table = split.colouring->palette.table();
      w.table.reserve(sizeof table);
      GPULAB_CUDA_CHECK(cudaMemcpy(w.table.data(), table.data(), sizeof table, cudaMemcpyHostToDevice));
    }
    w.staging.reserve(std::max<std::size_t>(stagingBytes, 16));
    if (job.reference != nullptr) {
      w.deep = std::make_unique<DeepRenderer>();
      w.deep->prepareShared(*w.gpu, job.deep, job.deepOptions, *job.reference);
    }
  };
  auto render = [&](int k, const RowBand& band) {
    GpuWorker& w = workers[static_cast<std::size_t>(k)];
    GpuContext& gpu = *w.gpu;
    float* raw = w.raw.as<float>();
    switch (job.precision.used) {
      case Precision::F32:
        kernels::launchEscapeTime<float>(escape, schedule, {raw, width, height, pitch}, gpu.stream(), band.first,
                                         band.count);
        break;
      case Precision::F64:
        kernels::launchEscapeTime<double>(escape, schedule, {raw, width, height, pitch}, gpu.stream(), band.first,
                                          band.count);
        break;
      case Precision::Perturbation:
        w.deep->enqueue(gpu, raw, pitch, band.first, band.count);
        break;
      case Precision::Auto:
        throw std::logic_error("choosePrecision returned no precision");
    }
    auto* staging = static_cast<std::byte*>(w.staging.data());
    const float* bandRaw = raw + static_cast<std::size_t>(band.first) * width;
    const std::size_t rawBytes = static_cast<std::size_t>(band.count) * pitch;
    const int outRows = band.count / ss;
    const std::size_t rgbaBytes = static_cast<std::size_t>(outRows) * rgbaPitch;
    std::byte* rgbaStaging = staging + (split.wantRaw ? rawBytes : 0);
    if (colour) {
      kernels::launchColourize({bandRaw, width, band.count, pitch}, w.table.as<uchar4>(), *colour,
                               {w.rgba.as<uchar4>(), view.imageWidth, outRows, rgbaPitch}, gpu.stream());
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(rgbaStaging, w.rgba.data(), rgbaBytes, cudaMemcpyDeviceToHost, gpu.stream()));
    }
    if (split.wantRaw)
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(staging, bandRaw, rawBytes, cudaMemcpyDeviceToHost, gpu.stream()));
    gpu.synchronize();
    // Rows of an Image are packed: a band is one contiguous block.
    if (split.wantRaw) std::memcpy(out.raw.row<float>(band.first), staging, rawBytes);
    if (colour) std::memcpy(out.rgba.row<std::uint8_t>(band.first / ss), rgbaStaging, rgbaBytes);
  };
  auto teardown = [&](int k) {  // on the worker's thread, its device current
    GpuWorker& w = workers[static_cast<std::size_t>(k)];
    w.deep.reset();
    w.raw.reset();
    w.rgba.reset();
    w.table.reset();
    w.staging.reset();
    w.gpu.reset();
  };
  out.report = runBandQueue(job.bands, devices, setup, render, teardown, split.failure, split.cancel);
  return out;
}

SplitStill renderStillSplitCpu(int workers, const MandelbrotView& view, const MandelbrotOptions& options,
                               const StillSplitOptions& split) {
  if (workers < 1)
    throw std::invalid_argument("a split still needs at least one worker, not " + std::to_string(workers));
  if (split.colouring) validate(*split.colouring);
  SplitStill out;
  StillJob job;
  prepareJob(job, view, options, split, workers, out);
  Image raw(view.rawWidth(), view.rawHeight(), 1, PixelType::F32);
  auto render = [&](int, const RowBand& band) {
    if (job.precision.used == Precision::Perturbation)
      deepRowsCpu(job.deep, job.reference->orbit(), job.reference->table(job.deepOptions), job.deepOptions, band.first,
                  band.count, raw.row<float>(0));
    else
      escapeRowsCpu(view, options, job.precision.used, band.first, band.count, raw);
  };
  auto nothing = [](int) {};
  out.report = runBandQueue(job.bands, std::vector<int>(static_cast<std::size_t>(workers), -1), nothing, render,
                            nothing, split.failure, split.cancel);
  if (split.colouring) {
    out.rgba = colourRaw(raw, *split.colouring, view.supersample);
    if (split.order == ChannelOrder::Bgra)
      for (int y = 0; y < out.rgba.height(); ++y) {
        std::uint8_t* p = out.rgba.row<std::uint8_t>(y);
        for (int x = 0; x < out.rgba.width(); ++x) std::swap(p[4 * x], p[4 * x + 2]);
      }
  }
  if (split.wantRaw) out.raw = std::move(raw);
  return out;
}

}  // namespace gpulab
