// The batch pipeline (pipeline/batch.hpp). Threads and queues:
//
//   workers (options.jobs) ──decode──▶ decoded ──▶ GPU threads (one per stream) ──▶ encodable ──▶ workers ──encode──▶
//   file
//                                               or the CPU thread (OpenCV on all cores)
//
// A worker encodes when something waits to be encoded and otherwise decodes the next input while
// fewer than `capacity` (workers + 2 x streams) images are anywhere between the start of their
// decode and the end of their encode: so memory stays flat whatever the number of files. An
// image's decoded samples go as soon as the GPU has them (or the CPU baseline has run), unless a
// 16-bit RGBA result needs its alpha back. Freed images go to a pool that decodes and downloads
// refill (Image::reshape): a batch of photos of one size allocates its buffers once, instead of
// faulting in fresh pages for every image (which cost a quarter of the CPU time on the H100 box). Each GPU thread owns
// a GpuContext (its stream and its pinned staging buffer, reused for every upload and download) and its own instance of
// the operation (plans are per instance).

#include "gpulab/pipeline/batch.hpp"

#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "gpulab/kernels/cuda_check.hpp"

namespace gpulab {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return text;
}

bool isImageExtension(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  if (ext.size() < 2) return false;
  const std::string list = ", " + supportedImageExtensions() + ",";
  return list.find(", " + ext.substr(1) + ",") != std::string::npos;
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// [start, end) in milliseconds from the batch's base event, for the GPU's busy time.
struct Interval {
  double start = 0;
  double end = 0;
};

double unionLength(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  double total = 0, start = 0, end = -1;
  for (const Interval& i : intervals) {
    if (i.start > end) {
      if (end > start) total += end - start;
      start = i.start;
      end = i.end;
    } else {
      end = std::max(end, i.end);
    }
  }
  if (end > start) total += end - start;
  return total;
}

struct Item {
  std::size_t index = 0;
  FilterInput input;  // the decoded image as the operation takes it
  Image result;       // what goes to the file
  double decodeMs = 0;
  std::uint64_t fileBytes = 0;
  int failedOn = -1;  // the pipeline whose device failed while it held this image; -1: none
};

/// Whether the decoded samples can go once the operation has them: not when finishFilterResult
/// needs them (the alpha of a 16-bit RGBA image filtered as f32; auto-levels keeps u16 itself).
bool inputNeededLater(const Item& item) {
  return item.input.original == PixelType::U16 && item.input.image.type() == PixelType::F32 &&
         item.input.image.channels() == 4;
}

/// A pipeline's device failed (a CUDA error, out of memory, the test hook): it takes no more images.
struct PipelineFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One compute pipeline: a GPU with its streams (one context and thread each), or a CPU thread.
struct Pipeline {
  int device = -1;
  std::vector<std::unique_ptr<GpuContext>> contexts;
  std::optional<Event> base;  // recorded at the start on the first stream: busy intervals count from it
  std::vector<Interval> busy;
  BatchPipeline stats;
  int retried = 0;  // its images in flight that went to another pipeline
};

class Batch {
 public:
  explicit Batch(const BatchOptions& options) : options_(options) {}

  BatchSummary run();

 private:
  void worker();
  void gpuThread(int pipeline, GpuContext& gpu);
  void cpuThread(int pipeline);
  /// The next decoded image for pipeline `p`, or nothing when there will be none for it.
  std::optional<Item> takeDecoded(int p);
  void handOver(int p, Item item);
  /// The device of pipeline `p` failed while it held `item` (or before it took one): the pipeline
  /// stops, the image goes back to the queue for another pipeline; an image that failed on one
  /// device already fails as a file (it is the likelier culprit), and so do images no pipeline is
  /// left to compute. Returns whether pipeline `p` goes on (it does when the image was the culprit).
  bool pipelineFailed(int p, std::optional<Item> item, const std::string& error);
  /// Calls the test hook; what it throws is a PipelineFault.
  void hook(int p) const;
  void decode(std::size_t index);
  void encode(Item item);
  void finish(std::size_t index, const std::string& error, std::uint64_t written = 0, std::uint64_t pixels = 0);
  void fail(std::size_t index, const std::string& error) { finish(index, error); }
  bool cancelled() const { return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed); }
  bool inputsLeft() const { return next_ < options_.inputs.size() && !cancelled() && !stranded_; }
  /// An image whose memory a decode or download may reuse (empty when the pool is).
  Image recycled();
  void recycle(Image image);
  void releaseInput(Item& item) {
    if (!inputNeededLater(item)) recycle(std::move(item.input.image));
  }

  const BatchOptions& options_;
  std::vector<fs::path> outputs_;
  std::vector<std::string> preFailures_;  // collisions found before the start
  bool filtered_ = false;
  bool gpu_ = false;
  std::size_t capacity_ = 0;
  Stopwatch clock_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;
  int decoding_ = 0;
  int computing_ = 0;
  int encoding_ = 0;
  std::deque<Item> decoded_;
  std::deque<Item> encodable_;
  std::map<std::size_t, std::string> failures_;
  BatchSummary summary_;
  std::vector<Pipeline> pipes_;  // sized before the threads start, never resized
  int alive_ = 0;                // pipelines that have not failed
  bool stranded_ = false;        // every pipeline failed: no input starts any more
  std::string lastFault_;
  int done_ = 0;
  std::mutex progressMutex_;
  std::mutex poolMutex_;
  std::vector<Image> pool_;
};

Image Batch::recycled() {
  const std::lock_guard lock(poolMutex_);
  // On the GPU, decodes and downloads land in pinned memory: the copy engines move it without staging,
  // and the pool keeps it (its registration paid once per buffer, not per image).
  if (pool_.empty()) return Image(gpu_ ? HostMemory::Pinned : HostMemory::Pageable);
  Image image = std::move(pool_.back());
  pool_.pop_back();
  return image;
}

void Batch::recycle(Image image) {
  if (image.empty()) return;
  const std::lock_guard lock(poolMutex_);
  // Never more than the images in flight can use, so memory stays at the pipeline's bound.
  if (pool_.size() < capacity_) pool_.push_back(std::move(image));
}

void Batch::finish(std::size_t index, const std::string& error, std::uint64_t written, std::uint64_t pixels) {
  BatchProgress progress;
  {
    const std::lock_guard lock(mutex_);
    ++done_;
    if (!error.empty())
      failures_[index] = error;
    else {
      ++summary_.written;
      summary_.bytesWritten += written;
      summary_.pixelBytes += pixels;
    }
    progress.done = done_;
    progress.failed = static_cast<int>(failures_.size());
    progress.total = static_cast<int>(options_.inputs.size());
    progress.elapsedS = clock_.elapsedMs() / 1000.0;
    progress.etaS = progress.elapsedS / done_ * (progress.total - done_);
    progress.last = options_.inputs[index];
    progress.lastError = error;
  }
  changed_.notify_all();
  if (options_.onProgress) {
    const std::lock_guard lock(progressMutex_);
    options_.onProgress(progress);
  }
}

std::string strandedReason(bool gpu, const std::string& fault) {
  return std::string("not computed: every ") + (gpu ? "GPU" : "compute pipeline") + " of the batch failed (the last, " +
         fault + ")";
}

void Batch::decode(std::size_t index) {
  const fs::path& path = options_.inputs[index];
  Item item;
  item.index = index;
  std::string error;
  try {
    if (!preFailures_[index].empty()) throw ImageIoError(preFailures_[index]);
    Stopwatch watch;
    Image image = loadImage(path, recycled());
    std::error_code ec;
    item.fileBytes = fs::file_size(path, ec);
    if (filtered_) {
      // One instance only to ask what it takes: outputShape is const and needs no device.
      thread_local std::unique_ptr<Operation> probe;
      if (!probe) probe = options_.makeOperation();
      const ImageShape in = shapeOf(image);
      const ImageShape out = filterResultShape(*probe, in);
      checkSaveFormat(outputs_[index], out.type, out.channels);
      item.input = prepareFilterInput(*probe, std::move(image));
    } else {
      checkSaveFormat(outputs_[index], image.type(), image.channels());
      item.input.original = image.type();
      item.input.image = std::move(image);
    }
    item.decodeMs = watch.elapsedMs();
  } catch (const std::exception& e) {
    error = e.what();
  }
  {
    const std::lock_guard lock(mutex_);
    --decoding_;
    if (error.empty() && stranded_) error = strandedReason(gpu_, lastFault_);
    if (error.empty()) {
      summary_.stages.decodeMs += item.decodeMs;
      summary_.bytesRead += item.fileBytes;
      if (filtered_) {
        decoded_.push_back(std::move(item));
      } else {
        item.result = std::move(item.input.image);
        encodable_.push_back(std::move(item));
      }
    }
  }
  changed_.notify_all();
  if (!error.empty()) fail(index, error);
}

void Batch::encode(Item item) {
  std::string error;
  std::uint64_t written = 0, pixels = 0;
  try {
    Stopwatch watch;
    Image stored = finishFilterResult(std::move(item.result), item.input);
    recycle(std::move(item.input.image));
    saveImage(stored, outputs_[item.index], options_.save);
    std::error_code ec;
    written = fs::file_size(outputs_[item.index], ec);
    pixels = stored.sizeBytes();
    recycle(std::move(stored));
    const double ms = watch.elapsedMs();
    const std::lock_guard lock(mutex_);
    summary_.stages.encodeMs += ms;
  } catch (const std::exception& e) {
    error = e.what();
  }
  finish(item.index, error, written, pixels);
}

void Batch::worker() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (!encodable_.empty()) {
      Item item = std::move(encodable_.front());
      encodable_.pop_front();
      ++encoding_;
      lock.unlock();
      changed_.notify_all();
      encode(std::move(item));
      lock.lock();
      --encoding_;
      changed_.notify_all();
      continue;
    }
    const std::size_t inFlight =
        decoded_.size() + encodable_.size() + static_cast<std::size_t>(decoding_ + computing_ + encoding_);
    if (inputsLeft() && inFlight < capacity_) {
      const std::size_t index = next_++;
      ++decoding_;
      lock.unlock();
      decode(index);
      lock.lock();
      continue;
    }
    if (!inputsLeft() && decoding_ == 0 && computing_ == 0 && decoded_.empty() && encodable_.empty()) break;
    changed_.wait(lock);
  }
}

std::optional<Item> Batch::takeDecoded(int p) {
  std::unique_lock lock(mutex_);
  // A pipeline waits until the others have finished too: an image of one that fails comes back.
  changed_.wait(lock, [&] {
    return pipes_[p].stats.failed || !decoded_.empty() || (!inputsLeft() && decoding_ == 0 && computing_ == 0);
  });
  if (pipes_[p].stats.failed || decoded_.empty()) return std::nullopt;
  Item item = std::move(decoded_.front());
  decoded_.pop_front();
  ++computing_;
  return item;
}

void Batch::handOver(int p, Item item) {
  {
    const std::lock_guard lock(mutex_);
    --computing_;
    ++pipes_[p].stats.images;
    encodable_.push_back(std::move(item));
  }
  changed_.notify_all();
}

void Batch::hook(int p) const {
  if (!options_.beforeCompute) return;
  try {
    options_.beforeCompute(p);
  } catch (const std::exception& e) {
    throw PipelineFault(e.what());
  }
}

bool Batch::pipelineFailed(int p, std::optional<Item> item, const std::string& error) {
  std::vector<std::pair<std::size_t, std::string>> failed;  // files that fail, reported unlocked
  bool goesOn = false;
  {
    const std::lock_guard lock(mutex_);
    Pipeline& pipe = pipes_[p];
    const bool culprit = item && item->failedOn >= 0 && item->failedOn != p;
    if (!pipe.stats.failed && !culprit) {
      pipe.stats.failed = true;
      pipe.stats.failure = error;
      --alive_;
      lastFault_ = pipe.stats.label + ": " + error;
    }
    if (item) {
      --computing_;
      if (culprit) {
        failed.emplace_back(item->index, "it failed on two GPUs: " + error);
      } else if (alive_ > 0) {
        item->failedOn = p;
        ++pipe.retried;
        ++summary_.retried;
        decoded_.push_front(std::move(*item));
      } else {
        failed.emplace_back(item->index, strandedReason(gpu_, lastFault_));
      }
    }
    if (alive_ == 0) {
      stranded_ = true;
      for (Item& waiting : decoded_) failed.emplace_back(waiting.index, strandedReason(gpu_, lastFault_));
      decoded_.clear();
    }
    goesOn = !pipe.stats.failed;
  }
  changed_.notify_all();
  for (const auto& [index, reason] : failed) fail(index, reason);
  return goesOn;
}

void Batch::gpuThread(int p, GpuContext& gpu) {
  std::unique_ptr<Operation> op;
  std::optional<DeviceImage> in, out;
  std::optional<Event> afterUpload, computeStart, computeEnd;
  try {
    // The current device is per thread: this thread's allocations and events go to its GPU.
    GPULAB_CUDA_CHECK(cudaSetDevice(gpu.device()));
    in.emplace();
    out.emplace();
    afterUpload.emplace();
    computeStart.emplace();
    computeEnd.emplace();
  } catch (const std::exception& e) {
    pipelineFailed(p, std::nullopt, e.what());
    return;
  }
  const Event& base = *pipes_[p].base;
  while (std::optional<Item> item = takeDecoded(p)) {
    std::string error;
    bool fault = false;
    try {
      hook(p);
      if (!op) op = options_.makeOperation();
      gpu.upload(item->input.image, *in, op->gpuLayout(shapeOf(item->input.image)));
      afterUpload->record(gpu.stream());
      computeStart->record(gpu.stream());
      op->runGpu(gpu, *in, *out);
      computeEnd->record(gpu.stream());
      item->result = recycled();
      if (item->result.width() != out->width() || item->result.height() != out->height() ||
          item->result.channels() != out->channels() || item->result.type() != out->type())
        item->result.reshape(out->width(), out->height(), out->channels(), out->type());  // download then reuses it
      gpu.download(*out, item->result);
      computeEnd->synchronize();
      // The decoded samples go only now: until the result is back, another GPU may need them.
      releaseInput(*item);
      const double up = gpu.lastUpload().totalMs(), down = gpu.lastDownload().totalMs();
      const double uploadEnd = afterUpload->elapsedSince(base);
      const double start = computeStart->elapsedSince(base), end = computeEnd->elapsedSince(base);
      const std::lock_guard lock(mutex_);
      summary_.stages.uploadMs += up;
      summary_.stages.computeMs += end - start;
      summary_.stages.downloadMs += down;
      BatchPipeline& stats = pipes_[p].stats;
      stats.uploadMs += up;
      stats.computeMs += end - start;
      stats.downloadMs += down;
      pipes_[p].busy.push_back({uploadEnd - gpu.lastUpload().deviceMs, uploadEnd});
      pipes_[p].busy.push_back({start, end + gpu.lastDownload().deviceMs});
    } catch (const PipelineFault& e) {
      error = e.what();
      fault = true;
    } catch (const CudaError& e) {
      error = e.what();
      fault = true;
    } catch (const OutOfDeviceMemory& e) {
      error = e.what();
      fault = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (fault) {
      item->result = Image();
      if (pipelineFailed(p, std::move(item), error)) continue;
      return;
    }
    if (!error.empty()) {
      {
        const std::lock_guard lock(mutex_);
        --computing_;
      }
      changed_.notify_all();
      fail(item->index, error);
      continue;
    }
    handOver(p, std::move(*item));
  }
}

void Batch::cpuThread(int p) {
  const std::unique_ptr<Operation> op = options_.makeOperation();
  while (std::optional<Item> item = takeDecoded(p)) {
    std::string error;
    try {
      Stopwatch watch;  // the test hook's time counts as compute: it stands in for a slow operation
      hook(p);
      item->result = op->runCpu(item->input.image);
      releaseInput(*item);
      const double ms = watch.elapsedMs();
      const std::lock_guard lock(mutex_);
      summary_.stages.computeMs += ms;
      pipes_[p].stats.computeMs += ms;
    } catch (const PipelineFault& e) {
      if (pipelineFailed(p, std::move(item), e.what())) continue;
      return;
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!error.empty()) {
      {
        const std::lock_guard lock(mutex_);
        --computing_;
      }
      changed_.notify_all();
      fail(item->index, error);
      continue;
    }
    handOver(p, std::move(*item));
  }
}

std::string percent(double share) { return std::to_string(static_cast<int>(std::lround(100.0 * share))) + "%"; }

BatchSummary Batch::run() {
  const BatchOptions& o = options_;
  if (o.inputs.empty()) throw std::invalid_argument("the batch has no input files");
  if (o.outDir.empty()) throw std::invalid_argument("the batch needs an output folder");
  if (o.jobs < 0) throw std::invalid_argument("--jobs " + std::to_string(o.jobs) + " is not allowed: use 1 or more");
  if (o.streams < 0)
    throw std::invalid_argument("--streams " + std::to_string(o.streams) + " is not allowed: use 1 or more");
  if (o.cpuPipelines < 0)
    throw std::invalid_argument(std::to_string(o.cpuPipelines) + " CPU pipelines are not allowed: use 1 or more");
  filtered_ = static_cast<bool>(o.makeOperation);
  gpu_ = o.useGpu && filtered_;
  if (o.useGpu && !cudaAvailable())
    throw std::invalid_argument("the batch was asked to run on the GPU and there is none (" + queryDevices().status +
                                "); use --device cpu");
  std::vector<int> devices = o.devices.empty() ? std::vector<int>{selectedDevice()} : o.devices;
  if (gpu_) {
    const DeviceReport report = queryDevices();
    for (int d : devices)
      if (d < 0 || d >= static_cast<int>(report.devices.size()))
        throw std::invalid_argument("there is no GPU " + std::to_string(d) + ": this machine has " +
                                    deviceListText(report));
  }

  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  if (ec || !fs::is_directory(o.outDir))
    throw ImageIoError("cannot make the output folder " + o.outDir.string() + ": " +
                       (ec ? ec.message() : std::string("a file of that name is in the way")));
  if (::access(o.outDir.c_str(), W_OK) != 0)
    throw ImageIoError("cannot write to the output folder " + o.outDir.string() + ": " +
                       std::generic_category().message(errno));

  // Outputs never replace an input, nor the output of an earlier input.
  std::set<fs::path> inputs;
  for (const fs::path& p : o.inputs) inputs.insert(fs::weakly_canonical(p, ec));
  std::map<fs::path, std::size_t> claimed;
  outputs_.resize(o.inputs.size());
  preFailures_.resize(o.inputs.size());
  for (std::size_t i = 0; i < o.inputs.size(); ++i) {
    outputs_[i] = batchOutputPath(o.inputs[i], o.outDir, o.format);
    const fs::path canonical = fs::weakly_canonical(outputs_[i], ec);
    if (inputs.contains(canonical))
      preFailures_[i] = "its output " + outputs_[i].string() + " would overwrite an input; choose another --out folder";
    else if (const auto [it, fresh] = claimed.emplace(canonical, i); !fresh)
      preFailures_[i] = "its output " + outputs_[i].string() + " is also the output of " +
                        o.inputs[it->second].string() + ", which keeps it";
  }

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers = o.jobs > 0 ? o.jobs : cores;
  const int streams = gpu_ ? (o.streams > 0 ? o.streams : 4) : 0;
  const int pipelineCount = gpu_ ? static_cast<int>(devices.size()) : (filtered_ ? std::max(o.cpuPipelines, 1) : 0);
  // See the top: every compute thread holds at most two images (one computing, one waiting).
  capacity_ = static_cast<std::size_t>(workers) +
              2 * static_cast<std::size_t>(std::max(streams, 1)) * static_cast<std::size_t>(std::max(pipelineCount, 1));
  summary_.total = static_cast<int>(o.inputs.size());
  summary_.onGpu = gpu_;
  summary_.filtered = filtered_;
  summary_.workers = workers;
  summary_.streams = streams;

  pipes_.resize(static_cast<std::size_t>(pipelineCount));
  alive_ = pipelineCount;
  if (gpu_) {
    std::vector<int> distinct;
    for (int p = 0; p < pipelineCount; ++p) {
      Pipeline& pipe = pipes_[p];
      pipe.device = devices[p];
      pipe.stats.device = pipe.device;
      pipe.stats.label = deviceLabel(pipe.device);
      for (int s = 0; s < streams; ++s) pipe.contexts.push_back(std::make_unique<GpuContext>(pipe.device));
      pipe.base.emplace();  // GpuContext made its device current
      if (std::find(distinct.begin(), distinct.end(), pipe.device) == distinct.end()) distinct.push_back(pipe.device);
    }
    const DeviceReport report = queryDevices();
    summary_.device = report.devices.at(devices.front()).name;
    summary_.devices = deviceLabels(distinct);
  } else {
    summary_.device = filtered_ ? "CPU (OpenCV, " + std::to_string(cpuThreads()) + " threads)" : "CPU (codecs only)";
    summary_.devices = summary_.device;
    for (int p = 0; p < pipelineCount; ++p)
      pipes_[p].stats.label = pipelineCount > 1 ? "CPU pipeline " + std::to_string(p + 1) : summary_.device;
  }

  clock_ = Stopwatch();
  for (Pipeline& pipe : pipes_)
    if (pipe.base) {
      GPULAB_CUDA_CHECK(cudaSetDevice(pipe.device));
      pipe.base->record(pipe.contexts.front()->stream());
      pipe.base->synchronize();
    }
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back([this] { worker(); });
  for (int p = 0; p < pipelineCount; ++p) {
    if (gpu_)
      for (auto& context : pipes_[p].contexts) threads.emplace_back([this, p, &context] { gpuThread(p, *context); });
    else
      threads.emplace_back([this, p] { cpuThread(p); });
  }
  for (std::thread& t : threads) t.join();
  summary_.wallS = clock_.elapsedMs() / 1000.0;
  // Each GPU's streams and buffers go with their own device current, and this thread returns to the
  // process's choice.
  if (gpu_) {
    for (Pipeline& pipe : pipes_) {
      GPULAB_CUDA_CHECK(cudaSetDevice(pipe.device));
      pipe.contexts.clear();
    }
    activateSelectedDevice();
  }
  const double wallMs = summary_.wallS * 1000.0;
  if (gpu_ && wallMs > 0) {
    double sum = 0;
    for (Pipeline& pipe : pipes_) {
      pipe.stats.busy = unionLength(pipe.busy) / wallMs;
      sum += pipe.stats.busy;
    }
    summary_.gpuBusy = sum / pipelineCount;
  }
  summary_.cancelled = next_ < o.inputs.size() && !stranded_;
  if (stranded_)  // inputs never started: say why each is missing
    for (std::size_t i = next_; i < o.inputs.size(); ++i) failures_[i] = strandedReason(gpu_, lastFault_);
  for (const auto& [index, reason] : failures_) summary_.failures.push_back({o.inputs[index], reason});
  for (Pipeline& pipe : pipes_) {
    summary_.pipelines.push_back(pipe.stats);
    if (!pipe.stats.failed) continue;
    std::string note = pipe.stats.label + " failed mid-run after " + std::to_string(pipe.stats.images) + " images (" +
                       pipe.stats.failure + ")";
    if (alive_ > 0)
      note += "; " +
              (pipe.retried > 0 ? std::to_string(pipe.retried) + " image(s) it held went to another " +
                                      std::string(gpu_ ? "GPU" : "pipeline")
                                : std::string("it held no image")) +
              " and the others went on";
    else
      note += "; no " + std::string(gpu_ ? "GPU" : "pipeline") + " was left, so the images not yet computed failed";
    summary_.notes.push_back(note);
  }

  // Which stage bounded the rate: the share of their time the decode/encode threads were busy
  // against that of the compute pipelines.
  if (wallMs > 0) {
    summary_.codecShare = (summary_.stages.decodeMs + summary_.stages.encodeMs) / (workers * wallMs);
    if (gpu_)
      summary_.computeShare = summary_.gpuBusy;
    else if (filtered_)
      summary_.computeShare = summary_.stages.computeMs / (pipelineCount * wallMs);
    const bool anything = summary_.stages.decodeMs + summary_.stages.encodeMs + summary_.stages.computeMs > 0;
    if (anything)
      summary_.limit = filtered_ && summary_.computeShare > summary_.codecShare ? BatchLimit::Compute
                       : summary_.stages.decodeMs >= summary_.stages.encodeMs   ? BatchLimit::Decode
                                                                                : BatchLimit::Encode;
  }
  return summary_;
}

}  // namespace

std::vector<fs::path> listBatchInputs(const std::string& folderOrGlob) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(folderOrGlob, ec)) {
    for (const auto& entry : fs::directory_iterator(folderOrGlob, ec))
      if (entry.is_regular_file(ec) && isImageExtension(entry.path())) files.push_back(entry.path());
    if (files.empty())
      throw std::invalid_argument("the folder " + folderOrGlob + " holds no image files (" +
                                  supportedImageExtensions() + ")");
  } else if (folderOrGlob.find_first_of("*?[") != std::string::npos) {
    glob_t found{};
    const int status = ::glob(folderOrGlob.c_str(), 0, nullptr, &found);
    for (std::size_t i = 0; status == 0 && i < found.gl_pathc; ++i)
      if (fs::is_regular_file(found.gl_pathv[i], ec)) files.emplace_back(found.gl_pathv[i]);
    ::globfree(&found);
    if (files.empty()) throw std::invalid_argument("no file matches " + folderOrGlob);
  } else if (fs::is_regular_file(folderOrGlob, ec)) {
    files.emplace_back(folderOrGlob);
  } else {
    throw std::invalid_argument(folderOrGlob + " is neither a folder, a file nor a pattern that matches files");
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> shardOf(const std::vector<fs::path>& inputs, int k, int n) {
  if (n < 1 || k < 1 || k > n)
    throw std::invalid_argument("shard " + std::to_string(k) + "/" + std::to_string(n) +
                                " is not allowed: use K/N with 1 <= K <= N");
  std::vector<fs::path> part;
  for (const fs::path& p : inputs)
    if (fnv1a(p.lexically_normal().string()) % static_cast<std::uint64_t>(n) == static_cast<std::uint64_t>(k - 1))
      part.push_back(p);
  return part;
}

fs::path batchOutputPath(const fs::path& input, const fs::path& outDir, BatchFormat format) {
  fs::path name = input.filename();
  switch (format) {
    case BatchFormat::Same:
      break;
    case BatchFormat::Png:
      name.replace_extension(".png");
      break;
    case BatchFormat::Jpg:
      name.replace_extension(".jpg");
      break;
    case BatchFormat::Tiff:
      name.replace_extension(".tif");
      break;
  }
  return outDir / name;
}

BatchSummary runBatch(const BatchOptions& options) { return Batch(options).run(); }

std::string limitName(const BatchSummary& s) {
  switch (s.limit) {
    case BatchLimit::Decode:
      return "decode";
    case BatchLimit::Encode:
      return "encode";
    case BatchLimit::Compute:
      return s.onGpu ? "GPU" : "CPU compute";
    case BatchLimit::None:
      break;
  }
  return "none";
}

std::string BatchSummary::limitSentence() const {
  if (limit == BatchLimit::None) return "none: nothing was measured";
  const double wallMs = wallS * 1000.0;
  auto share = [&](double ms) { return workers > 0 && wallMs > 0 ? ms / (workers * wallMs) : 0.0; };
  const std::string codecs = "the " + std::to_string(workers) + " decode/encode threads were busy " +
                             percent(codecShare) + " of the time (decode " + percent(share(stages.decodeMs)) +
                             ", encode " + percent(share(stages.encodeMs)) + ")";
  std::string compute;
  if (onGpu) {
    const std::size_t n = pipelines.size();
    compute = (n == 1 ? std::string("the GPU was busy ") : "the " + std::to_string(n) + " GPUs were busy ") +
              percent(computeShare) + (n == 1 ? "" : " of the time on average");
    if (n == 1) compute += " of the time";
  } else if (filtered) {
    compute = "the CPU baseline computed " + percent(computeShare) + " of the time";
  }
  const std::string name = limitName(*this);
  if (limit == BatchLimit::Compute) return name + ": " + compute + "; " + codecs;
  return name + ": " + codecs + (compute.empty() ? "" : "; " + compute);
}

}  // namespace gpulab
