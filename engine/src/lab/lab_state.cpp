// What the experiments share (lab_detail.hpp): the sweep driver, memory checks, seeded inputs, the
// CPU thread pool, the GPU and its stream, one measurement of either side, and the sweeps of the two
// vector experiments.
#include <algorithm>
#include <fstream>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <string>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/errors.hpp"  // OutOfDeviceMemory
#include "gpulab/lab/elementwise.hpp"
#include "gpulab/lab/reduce.hpp"
#include "internal/cv_interop.hpp"
#include "internal/lab_detail.hpp"
#include "internal/memory_format.hpp"

namespace gpulab::lab {

LabBase::LabBase() : gpu_(cudaAvailable()) {}

namespace detail {

// ---------------------------------------------------------------------------------------------
// Sweep

void Sweep::checkCancel() const { control_.throwIfCancelled(); }

void Sweep::emit(const Record& record) {
  records_.push_back(record);
  if (sink_) sink_(record);
}

void Sweep::stepDone() {
  ++doneSteps_;
  control_.report(static_cast<double>(doneSteps_) / totalSteps_);
  checkCancel();
}

// ---------------------------------------------------------------------------------------------
// Memory

std::size_t availableHostMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::numeric_limits<std::size_t>::max();
}

void requireHostMemory(std::size_t bytes, const std::string& what) {
  const std::size_t available = availableHostMemory();
  if (bytes > available)
    throw std::runtime_error(what + " needs " + formatBytes(bytes) + " of host memory; " + formatBytes(available) +
                             " is available");
}

void requireDeviceMemory(std::size_t bytes, const std::string& what) {
  const MemoryUsage usage = deviceMemory();
  if (bytes > usage.free) throw OutOfDeviceMemory(outOfMemoryMessage(what, bytes));
}

void HostArray::reserve(std::size_t bytes, bool pinned) {
  if (pinned != pinned_) {
    pinnedBuffer_.reset();
    plain_ = {};
    pinned_ = pinned;
  }
  if (pinned)
    pinnedBuffer_.reserve(bytes);
  else if (plain_.size() * sizeof(double) < bytes)
    plain_.resize((bytes + sizeof(double) - 1) / sizeof(double));
}

// ---------------------------------------------------------------------------------------------
// Inputs, CPU threads, GPU helpers

template <class T>
void fillRandom(T* data, std::size_t count, std::uint64_t seed) {
  // splitmix64 of (seed, index): independent of thread count and order.
  parallelFor(count, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      data[i] = static_cast<T>(static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0);
    }
  });
}
template void fillRandom<float>(float*, std::size_t, std::uint64_t);
template void fillRandom<double>(double*, std::size_t, std::uint64_t);

int cpuThreadCount() { return std::max(1, cv::getNumThreads()); }

void parallelFor(std::size_t count, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& body) {
  if (count == 0) return;
  const std::size_t threads = static_cast<std::size_t>(cpuThreadCount());
  std::size_t stripes = std::min(threads * 4, (count + grain - 1) / std::max<std::size_t>(grain, 1));
  if (stripes <= 1) {
    body(0, count);
    return;
  }
  const std::size_t per = (count + stripes - 1) / stripes;
  stripes = (count + per - 1) / per;
  cv_interop::parallelFor(
      cv::Range(0, static_cast<int>(stripes)),
      [&](const cv::Range& range) {
        for (int s = range.start; s < range.end; ++s) {
          const std::size_t begin = static_cast<std::size_t>(s) * per;
          body(begin, std::min(count, begin + per));
        }
      },
      static_cast<double>(stripes));
}

std::string gpuUnavailableReason() {
  const DeviceReport report = queryDevices();
  return report.available() ? std::string() : report.status;
}

void applyCopyCeiling(Record& record, const CopyCeiling& ceiling, std::size_t workingSetBytes) {
  record.ceiling = ceiling.gbps;
  record.ceilingName = "DRAM copy";
  record.ceilingHow = ceiling.how();
  if (!record.withCopies && fitsInL2(workingSetBytes, ceiling.l2Bytes)) record.note = kInL2Note;
}

void setTimes(Record& record, const Stats& stats) {
  record.medianMs = stats.medianMs;
  record.minMs = stats.minMs;
  record.maxMs = stats.maxMs;
  record.reps = stats.reps;
}

// ---------------------------------------------------------------------------------------------
// Measuring either side

namespace {

std::vector<Record> measureGpu(const Record& base, cudaStream_t stream, const GpuSteps& steps,
                               const MeasureOptions& options) {
  const TimingOptions timing{options.warmup, options.reps};
  Record r = base;
  const Stats up = timeStream(stream, steps.upload, timing);
  setTimes(r, timeStream(stream, steps.compute, timing));
  const Stats down = timeStream(stream, steps.download, timing);
  r.uploadMs = up.medianMs;
  r.downloadMs = down.medianMs;
  std::vector<Record> records{r};
  if (options.withCopies) {
    Record whole = r;
    whole.withCopies = true;
    setTimes(whole, timeStream(
                        stream,
                        [&] {
                          steps.upload();
                          steps.compute();
                          steps.download();
                        },
                        timing));
    records.push_back(whole);
  }
  return records;
}

}  // namespace

void checkSize(const char* what, std::size_t n, std::size_t max, const char* unit) {
  if (n == 0 || n > max)
    throw std::invalid_argument(std::string(what) + " size " + std::to_string(n) + " is out of range: 1 to " +
                                std::to_string(max) + " " + unit);
}

LabState::LabState(bool hasGpu) {
  if (hasGpu) {
    activateSelectedDevice();  // the stream and every buffer after it live on the chosen device
    stream.emplace();
  }
}

void LabState::requireGpu(const std::string& what) const {
  if (!gpu()) throw std::runtime_error(what + " needs a CUDA device: " + gpuUnavailableReason());
  if (stream->stale()) {
    activateSelectedDevice();
    stream.emplace();  // the old handle died with the reset: replacing it frees nothing
  }
}

bool LabState::needsInputs(DType dtype, const std::vector<std::int64_t>& sizes) {
  if (filled_ && filled_->first == dtype && filled_->second == sizes) return false;
  filled_.emplace(dtype, sizes);
  return true;
}

Record labRecord(std::string experiment, std::string impl, DType dtype, std::vector<std::int64_t> sizes, double size,
                 bool gpu) {
  Record r;
  r.experiment = std::move(experiment);
  r.impl = std::move(impl);
  r.dtype = toString(dtype);
  r.sizes = std::move(sizes);
  r.size = size;
  r.gpu = gpu;
  r.device = gpu ? selectedDeviceLabel() : cpuLabel();
  return r;
}

std::vector<Record> measureSide(Record base, const MeasureOptions& options, int cpuThreads,
                                const std::function<void()>& cpuRun, cudaStream_t stream, const GpuSteps& gpu,
                                double bytesMoved) {
  std::vector<Record> records;
  if (base.gpu) {
    base.params = gpu.params;
    records = measureGpu(base, stream, gpu, options);
  } else {
    base.params = "threads=" + std::to_string(cpuThreads);
    setTimes(base, timeHost(cpuRun, TimingOptions{options.warmup, options.reps}));
    records.push_back(base);
  }
  if (bytesMoved > 0)
    for (Record& r : records) r.gbps = bytesMoved / (r.medianMs * 1e6);
  return records;
}

void runElementwise(const LabRequest& request, Sweep& sweep) {
  ElementwiseLab lab;  // x, y and out: 3 arrays in the working set
  runVectorSweep(request, sweep, lab, parseEnumOrThrow<ElementwiseOp>, static_cast<std::int64_t>(kMaxVectorElements),
                 3);
}

void runReduce(const LabRequest& request, Sweep& sweep) {
  ReduceLab lab;  // x alone
  runVectorSweep(request, sweep, lab, parseEnumOrThrow<ReduceOp>, static_cast<std::int64_t>(kMaxVectorElements), 1);
}

}  // namespace detail
}  // namespace gpulab::lab
