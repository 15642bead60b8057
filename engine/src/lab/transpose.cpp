// Lab: matrix transpose on the CPU and with three CUDA kernels, against the DRAM copy bandwidth.
#include "gpulab/lab/transpose.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/transpose.cuh"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

namespace {

std::size_t elements(const TransposeShape& s) {
  return static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
}

std::string shapeText(const TransposeShape& s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

/// 32x32 blocks keep both the rows read and the rows written in cache; block rows go to all cores.
template <class T>
void transposeCpu(const T* in, T* out, const TransposeShape& s) {
  constexpr int kBlock = 32;
  const std::size_t blockRows = static_cast<std::size_t>((s.rows + kBlock - 1) / kBlock);
  const std::size_t grain =
      std::max<std::size_t>(1, (std::size_t{1} << 16) / (static_cast<std::size_t>(s.cols) * kBlock));
  detail::parallelFor(blockRows, grain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t br = begin; br < end; ++br) {
      const int r0 = static_cast<int>(br) * kBlock;
      const int r1 = std::min(s.rows, r0 + kBlock);
      for (int c0 = 0; c0 < s.cols; c0 += kBlock) {
        const int c1 = std::min(s.cols, c0 + kBlock);
        for (int r = r0; r < r1; ++r)
          for (int c = c0; c < c1; ++c)
            out[static_cast<std::size_t>(c) * s.rows + r] = in[static_cast<std::size_t>(r) * s.cols + c];
      }
    }
  });
}

kernels::TransposeVariant variantOf(TransposeImpl impl) {
  switch (impl) {
    case TransposeImpl::GpuNaive:
      return kernels::TransposeVariant::Naive;
    case TransposeImpl::GpuTiled:
      return kernels::TransposeVariant::Tiled;
    case TransposeImpl::GpuTiledPadded:
      return kernels::TransposeVariant::TiledPadded;
    case TransposeImpl::Cpu:
      break;
  }
  throw std::logic_error("cpu is not a GPU transpose");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names, shapes, reference

bool isGpu(TransposeImpl impl) { return impl != TransposeImpl::Cpu; }

void validate(const TransposeShape& shape) {
  if (shape.rows < 1 || shape.cols < 1 || shape.rows > kMaxTransposeDim || shape.cols > kMaxTransposeDim)
    throw std::invalid_argument("transpose " + shapeText(shape) + ": rows and columns must be 1 to " +
                                std::to_string(kMaxTransposeDim));
}

TransposeShape transposeShape(const SizePoint& point) {
  if (point.size() != 1 && point.size() != 2)
    throw std::invalid_argument("transpose sizes are N (square) or RxC (rows x columns), not " +
                                std::to_string(point.size()) + " dimensions");
  for (std::int64_t d : point)
    if (d < 1 || d > kMaxTransposeDim)
      throw std::invalid_argument("transpose size " + std::to_string(d) +
                                  " is out of range: rows and columns must be 1 to " +
                                  std::to_string(kMaxTransposeDim));
  const int rows = static_cast<int>(point[0]);
  return {rows, point.size() == 2 ? static_cast<int>(point[1]) : rows};
}

template <class T>
void transposeReference(const T* in, T* out, const TransposeShape& s) {
  validate(s);
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.cols; ++c)
      out[static_cast<std::size_t>(c) * s.rows + r] = in[static_cast<std::size_t>(r) * s.cols + c];
}
template void transposeReference<float>(const float*, float*, const TransposeShape&);
template void transposeReference<double>(const double*, double*, const TransposeShape&);

// ---------------------------------------------------------------------------------------------
// TransposeLab

struct TransposeLab::State : detail::LabState {
  using LabState::LabState;
  DeviceBuffer in, out;
  detail::HostArray hostIn, hostOut;

  template <class T>
  std::vector<Record> measure(TransposeImpl impl, DType dtype, const TransposeShape& shape,
                              const MeasureOptions& options);
};

TransposeLab::TransposeLab() : state_(std::make_unique<State>(hasGpu())) {}

TransposeLab::~TransposeLab() = default;

template <class T>
void TransposeLab::transpose(TransposeImpl impl, const TransposeShape& shape, const T* in, T* out) {
  validate(shape);
  if (!isGpu(impl)) {
    transposeCpu(in, out, shape);
    return;
  }
  State& s = *state_;
  s.requireGpu(std::string(toString(impl)));
  const std::size_t bytes = elements(shape) * sizeof(T);
  s.in.reserve(bytes);
  s.out.reserve(bytes);
  const cudaStream_t cuStream = s.cuStream();
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.in.data(), in, bytes, cudaMemcpyHostToDevice, cuStream));
  kernels::launchTranspose(variantOf(impl), s.in.as<T>(), s.out.as<T>(), shape.rows, shape.cols, cuStream);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, s.out.data(), bytes, cudaMemcpyDeviceToHost, cuStream));
  s.stream->synchronize();
}
template void TransposeLab::transpose<float>(TransposeImpl, const TransposeShape&, const float*, float*);
template void TransposeLab::transpose<double>(TransposeImpl, const TransposeShape&, const double*, double*);

template <class T>
std::vector<Record> TransposeLab::State::measure(TransposeImpl impl, DType dtype, const TransposeShape& shape,
                                                 const MeasureOptions& options) {
  validate(shape);
  if (isGpu(impl)) requireGpu(std::string(toString(impl)));
  const std::size_t count = elements(shape);
  const std::size_t bytes = count * sizeof(T);
  hostIn.reserve(bytes, gpu());
  hostOut.reserve(bytes, gpu());
  if (needsInputs(dtype, {shape.rows, shape.cols})) detail::fillRandom(hostIn.as<T>(), count, 3);
  const T* hin = hostIn.as<T>();
  T* hout = hostOut.as<T>();

  const double size = shape.rows == shape.cols ? shape.rows : std::sqrt(static_cast<double>(count));
  const Record r =
      detail::labRecord("transpose", std::string(toString(impl)), dtype, {shape.rows, shape.cols}, size, isGpu(impl));
  if (r.gpu) {
    in.reserve(bytes);
    out.reserve(bytes);
  }
  const cudaStream_t cu = cuStream();
  const kernels::TransposeVariant variant = r.gpu ? variantOf(impl) : kernels::TransposeVariant{};
  const detail::GpuSteps steps{
      [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(in.data(), hin, bytes, cudaMemcpyHostToDevice, cu)); },
      [&] { kernels::launchTranspose(variant, in.as<T>(), out.as<T>(), shape.rows, shape.cols, cu); },
      [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(hout, out.data(), bytes, cudaMemcpyDeviceToHost, cu)); }};
  return detail::measureSide(
      r, options, detail::cpuThreadCount(), [&] { transposeCpu(hin, hout, shape); }, cu, steps,
      2.0 * static_cast<double>(bytes));
}

std::vector<Record> TransposeLab::measure(TransposeImpl impl, DType dtype, const TransposeShape& shape,
                                          const MeasureOptions& options) {
  return detail::byDType(dtype, [&](auto t) { return state_->measure<decltype(t)>(impl, dtype, shape, options); });
}

// ---------------------------------------------------------------------------------------------
// Sweep

namespace detail {

void validateTranspose(const LabRequest& request) {
  for (const SizePoint& p : pointsOf(request)) transposeShape(p);
}

MemoryNeed transposeMemory(const LabRequest& request) {
  MemoryNeed need;
  for (const SizePoint& p : pointsOf(request)) {
    const std::size_t bytes = 2 * elements(transposeShape(p)) * dtypeSize(request.dtype);
    need.hostBytes = std::max(need.hostBytes, bytes);
    need.deviceBytes = std::max(need.deviceBytes, bytes);
  }
  return need;
}

void runTranspose(const LabRequest& request, Sweep& sweep) {
  const std::vector<std::string> impls = selectedImpls(request);
  bool anyGpu = false;
  for (const std::string& name : impls) anyGpu = anyGpu || isGpu(parseEnumOrThrow<TransposeImpl>(name));
  TransposeLab lab;
  const MeasureOptions options{request.reps, request.warmup, request.withCopies, false};
  const CopyCeiling ceiling = anyGpu ? deviceCopyCeiling() : CopyCeiling{};
  sweep.checkCancel();
  for (const SizePoint& point : pointsOf(request)) {
    const TransposeShape shape = transposeShape(point);
    const std::size_t workingSet = 2 * elements(shape) * dtypeSize(request.dtype);  // input and output
    for (const std::string& name : impls) {
      const TransposeImpl impl = parseEnumOrThrow<TransposeImpl>(name);
      for (Record& r : lab.measure(impl, request.dtype, shape, options)) {
        if (r.gpu) detail::applyCopyCeiling(r, ceiling, workingSet);
        sweep.emit(r);
      }
      sweep.stepDone();
    }
  }
}

}  // namespace detail
}  // namespace gpulab::lab
