// What the experiment classes share: the GPU and its stream, the seeded inputs they hold, and one
// measurement of either side.
#include <stdexcept>
#include <string>

#include "gpulab/core/device.hpp"
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

}  // namespace detail
}  // namespace gpulab::lab
