// Engine-private pieces shared by the lab experiments (engine/src/lab/*.cpp): the sweep driver, memory
// checks, seeded inputs, the CPU thread pool, the DRAM copy ceiling on records and each experiment's entry
// points for common.cpp's dispatch.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab::detail {

// ---------------------------------------------------------------------------------------------
// Sweep driver: cancel checks, progress, and records to the sink as they come.

class Sweep {
 public:
  Sweep(const CpuControl& control, const RecordSink& sink, int totalSteps)
      : control_(control), sink_(sink), totalSteps_(totalSteps > 0 ? totalSteps : 1) {}

  /// Throws OperationCancelled when the caller asked to stop.
  void checkCancel() const;
  /// Hands a record to the sink and keeps it.
  void emit(const Record& record);
  /// One measurement done: reports progress, then checks for cancellation.
  void stepDone();
  /// For experiments whose steps are not points x implementations x variants.
  void setTotalSteps(int steps) { totalSteps_ = steps > 0 ? steps : 1; }
  std::vector<Record>& records() { return records_; }

 private:
  const CpuControl& control_;
  const RecordSink& sink_;
  int totalSteps_;
  int doneSteps_ = 0;
  std::vector<Record> records_;
};

/// The implementations a request selects, in implNames() order (all runnable ones when empty).
std::vector<std::string> selectedImpls(const LabRequest& request);
/// The variants a request selects, in variantNames() order (all when empty).
std::vector<std::string> selectedVariants(const LabRequest& request);
/// request.points, or the experiment's defaults when empty.
std::vector<SizePoint> pointsOf(const LabRequest& request);

// ---------------------------------------------------------------------------------------------
// Memory: checks up front with one sentence, and host arrays that are pinned when a GPU will copy them.

/// MemAvailable of /proc/meminfo; SIZE_MAX when it cannot be read.
std::size_t availableHostMemory();
/// Throws std::runtime_error "<what> needs 12.0 GiB of host memory; 3.1 GiB is available".
void requireHostMemory(std::size_t bytes, const std::string& what);
/// Throws OutOfDeviceMemory "<what> needs 12.0 GiB of GPU memory; 3.1 GiB of 80 GiB is free".
void requireDeviceMemory(std::size_t bytes, const std::string& what);

/// Host memory for inputs and results: page-locked when `pinned` (GPU runs), plain otherwise.
class HostArray {
 public:
  void reserve(std::size_t bytes, bool pinned);
  void* data() noexcept { return pinned_ ? pinnedBuffer_.data() : plain_.data(); }
  template <class T>
  T* as() noexcept {
    return static_cast<T*>(data());
  }

 private:
  bool pinned_ = false;
  PinnedBuffer pinnedBuffer_;
  std::vector<double> plain_;  // doubles: 8-byte alignment for either element type
};

// ---------------------------------------------------------------------------------------------
// Inputs and the CPU side

/// Uniform values in [-1, 1) from a counter-based generator (fast, the same on every machine).
template <class T>
void fillRandom(T* data, std::size_t count, std::uint64_t seed);

/// Threads of the CPU implementations of transpose, elementwise and reduce (OpenCV's TBB pool).
int cpuThreadCount();
/// Calls body(begin, end) over [0, count) in stripes of at least `grain` elements, on all cores.
void parallelFor(std::size_t count, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& body);

// ---------------------------------------------------------------------------------------------
// GPU side

/// "no CUDA device: CPU only" style reason, for error messages.
std::string gpuUnavailableReason();

/// Sets a GPU record's ceiling to the DRAM copy ceiling and, for a compute-only record whose
/// working set (`workingSetBytes`: every array the kernel reads or writes) fits in L2, its note.
void applyCopyCeiling(Record& record, const CopyCeiling& ceiling, std::size_t workingSetBytes);

/// f(float{}) or f(double{}) for the element type of `dtype`.
template <class F>
auto byDType(DType dtype, F&& f) {
  return dtype == DType::F32 ? f(float{}) : f(double{});
}

/// Throws std::invalid_argument "<what> size N is out of range: 1 to MAX <unit>" unless 1 <= n <= max.
void checkSize(const char* what, std::size_t n, std::size_t max, const char* unit);

/// The start of every experiment's private state: the stream of its GPU work (none without a GPU)
/// and which seeded inputs the host arrays hold, so that repeated measurements do not refill them.
struct LabState {
  explicit LabState(bool hasGpu);

  /// Only with a GPU; made anew by requireGpu() after a device reset (recoverDevice).
  mutable std::optional<Stream> stream;

  bool gpu() const noexcept { return stream.has_value(); }

  cudaStream_t cuStream() const noexcept { return stream ? stream->get() : nullptr; }
  /// Throws std::runtime_error "<what> needs a CUDA device: <reason>" when there is no GPU. After a
  /// device reset, makes the stream anew (buffers reallocate themselves when next reserved).
  void requireGpu(const std::string& what) const;
  /// True, and remembered, when the host inputs must be filled anew for `dtype` at `sizes`.
  bool needsInputs(DType dtype, const std::vector<std::int64_t>& sizes);
  /// The host inputs must be filled anew at the next needsInputs (their contents changed).
  void forgetInputs() noexcept { filled_.reset(); }

 private:
  std::optional<std::pair<DType, std::vector<std::int64_t>>> filled_;
};

/// A record naming what ran: the experiment, the implementation and the type at `sizes`, whose
/// sweep axis is `size`; `gpu` says on which side.
Record labRecord(std::string experiment, std::string impl, DType dtype, std::vector<std::int64_t> sizes, double size,
                 bool gpu);

/// The GPU steps of one measurement, as measureSide times them.
struct GpuSteps {
  std::function<void()> upload;
  std::function<void()> compute;
  std::function<void()> download;
  std::string params = "pinned host memory";
};

/// Fills a record's timing fields from a Stats.
void setTimes(Record& record, const Stats& stats);

/// One measurement of the side `base.gpu` names: `cpuRun` timed on the host (params
/// "threads=<cpuThreads>"), or `gpu`'s steps on `stream` (only then are they called): upload,
/// compute and download each timed apart (one compute-only record carrying the copy medians) and,
/// with options.withCopies, the three as one region (an end-to-end record). Each record's GB/s
/// counts `bytesMoved`; 0 leaves the rate to the caller.
std::vector<Record> measureSide(Record base, const MeasureOptions& options, int cpuThreads,
                                const std::function<void()>& cpuRun, cudaStream_t stream, const GpuSteps& gpu,
                                double bytesMoved);

// ---------------------------------------------------------------------------------------------
// Experiments, for the dispatch in lab.cpp. validate*() checks sizes (std::invalid_argument);
// *Memory() is the need of the largest point; run*() measures every point.

void validateMatmul(const LabRequest& request);
MemoryNeed matmulMemory(const LabRequest& request);
void runMatmul(const LabRequest& request, Sweep& sweep);

void validateTranspose(const LabRequest& request);
MemoryNeed transposeMemory(const LabRequest& request);
void runTranspose(const LabRequest& request, Sweep& sweep);

void validateTransfer(const LabRequest& request);
MemoryNeed transferMemory(const LabRequest& request);
void runTransfer(const LabRequest& request, Sweep& sweep);

void runElementwise(const LabRequest& request, Sweep& sweep);

void runReduce(const LabRequest& request, Sweep& sweep);

/// Validation shared by the one-dimensional experiments: each point is {n} with 1 <= n <= limit.
std::vector<std::size_t> vectorSizes(const LabRequest& request, std::int64_t limit, const char* unit);
/// The memory of the largest point of a vector experiment whose ops touch `arrays` arrays of n
/// elements (up to kMaxVectorElements), on the host and on the device alike.
MemoryNeed vectorMemory(const LabRequest& request, std::size_t arrays);

/// The sweep both vector experiments (elementwise, reduce) run: the DRAM copy ceiling first (when a
/// GPU implementation is selected), then per size every op on every implementation, each GPU
/// record set against that ceiling. `arrays` is how many n-element arrays an op touches (its
/// working set for the L2 note); `parseOp` maps a variant name to the lab's op type.
template <class Lab, class ParseOp>
void runVectorSweep(const LabRequest& request, Sweep& sweep, Lab& lab, ParseOp parseOp, std::int64_t maxElements,
                    std::size_t arrays) {
  const std::vector<std::string> impls = selectedImpls(request);
  const std::vector<std::string> ops = selectedVariants(request);
  const bool anyGpu = std::find(impls.begin(), impls.end(), "gpu") != impls.end();
  const MeasureOptions options{request.reps, request.warmup, request.withCopies, false};
  const CopyCeiling ceiling = anyGpu ? deviceCopyCeiling() : CopyCeiling{};
  sweep.checkCancel();
  for (std::size_t n : vectorSizes(request, maxElements, "elements")) {
    for (const std::string& opName : ops) {
      for (const std::string& impl : impls) {
        const Target target = impl == "gpu" ? Target::Gpu : Target::Cpu;
        for (Record& r : lab.measure(target, parseOp(opName), request.dtype, n, options)) {
          if (r.gpu) applyCopyCeiling(r, ceiling, arrays * n * dtypeSize(request.dtype));
          sweep.emit(r);
        }
        sweep.stepDone();
      }
    }
  }
}

}  // namespace gpulab::lab::detail
