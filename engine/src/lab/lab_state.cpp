// What the experiment classes share: the GPU and its stream, the seeded inputs they hold, one
// measurement of either side, and the sweeps of the two vector experiments.
#include <stdexcept>
#include <string>

#include "gpulab/core/device.hpp"
#include "gpulab/lab/elementwise.hpp"
#include "gpulab/lab/reduce.hpp"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

LabBase::LabBase() : gpu_(cudaAvailable()) {}

namespace detail {

void checkSize(const char* what, std::size_t n, std::size_t max, const char* unit) {
  if (n == 0 || n > max)
    throw std::invalid_argument(std::string(what) + " size " + std::to_string(n) + " is out of range: 1 to " +
                                std::to_string(max) + " " + unit);
}

LabState::LabState(bool hasGpu) : gpu(hasGpu) {
  if (gpu) stream.emplace();
}

void LabState::requireGpu(const std::string& what) const {
  if (!gpu) throw std::runtime_error(what + " needs a CUDA device: " + gpuUnavailableReason());
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
  return r;
}

std::vector<Record> measureSide(Record base, const MeasureOptions& options, int cpuThreads,
                                const std::function<void()>& cpuRun, cudaStream_t stream, const GpuSteps& gpu,
                                double bytesMoved) {
  std::vector<Record> records;
  if (base.gpu) {
    base.params = gpu.params;
    records = measureGpuRecords(base, stream, gpu.upload, gpu.compute, gpu.download, options);
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
