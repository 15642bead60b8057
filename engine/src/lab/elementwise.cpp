// Lab: elementwise operations on all CPU cores and on the GPU.
//
// The CPU loops must round every product and sum on their own, like the kernels' _rn intrinsics, or
// a build with -march=native would fuse x*x + 2*y into an FMA and the results would differ.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "gpulab/lab/elementwise.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/elementwise.cuh"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

namespace {

void validateCount(std::size_t n) { detail::checkSize("elementwise", n, kMaxVectorElements, "elements"); }

template <class T>
void loop(ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t begin, std::size_t end) {
  if (op == ElementwiseOp::SquarePlusTwice)
    for (std::size_t i = begin; i < end; ++i) out[i] = x[i] * x[i] + T(2) * y[i];
  else
    for (std::size_t i = begin; i < end; ++i) out[i] = a * x[i] + y[i];
}

template <class T>
void elementwiseCpu(ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n) {
  detail::parallelFor(n, std::size_t{1} << 15,
                      [&](std::size_t begin, std::size_t end) { loop(op, a, x, y, out, begin, end); });
}

kernels::ElementwiseOp kernelOp(ElementwiseOp op) {
  return op == ElementwiseOp::SquarePlusTwice ? kernels::ElementwiseOp::SquarePlusTwice : kernels::ElementwiseOp::Axpy;
}

}  // namespace

template <class T>
void elementwiseReference(ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n) {
  validateCount(n);
  loop(op, a, x, y, out, 0, n);
}
template void elementwiseReference<float>(ElementwiseOp, float, const float*, const float*, float*, std::size_t);
template void elementwiseReference<double>(ElementwiseOp, double, const double*, const double*, double*, std::size_t);

// ---------------------------------------------------------------------------------------------
// ElementwiseLab

struct ElementwiseLab::State : detail::LabState {
  using LabState::LabState;
  DeviceBuffer x, y, out;
  detail::HostArray hostX, hostY, hostOut;

  void reserveDevice(std::size_t bytes) {
    x.reserve(bytes);
    y.reserve(bytes);
    out.reserve(bytes);
  }

  template <class T>
  std::vector<Record> measure(Target target, ElementwiseOp op, DType dtype, std::size_t n,
                              const MeasureOptions& options);
};

constexpr const char* kGpuKernel = "the GPU elementwise kernel";

ElementwiseLab::ElementwiseLab() : state_(std::make_unique<State>(hasGpu())) {}

ElementwiseLab::~ElementwiseLab() = default;

template <class T>
void ElementwiseLab::run(Target target, ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n) {
  validateCount(n);
  if (target == Target::Cpu) {
    elementwiseCpu(op, a, x, y, out, n);
    return;
  }
  State& s = *state_;
  s.requireGpu(kGpuKernel);
  const std::size_t bytes = n * sizeof(T);
  s.reserveDevice(bytes);
  const cudaStream_t cuStream = s.cuStream();
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.x.data(), x, bytes, cudaMemcpyHostToDevice, cuStream));
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.y.data(), y, bytes, cudaMemcpyHostToDevice, cuStream));
  kernels::launchElementwise(kernelOp(op), a, s.x.as<T>(), s.y.as<T>(), s.out.as<T>(), n, cuStream);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, s.out.data(), bytes, cudaMemcpyDeviceToHost, cuStream));
  s.stream->synchronize();
}
template void ElementwiseLab::run<float>(Target, ElementwiseOp, float, const float*, const float*, float*, std::size_t);
template void ElementwiseLab::run<double>(Target, ElementwiseOp, double, const double*, const double*, double*,
                                          std::size_t);

template <class T>
std::vector<Record> ElementwiseLab::State::measure(Target target, ElementwiseOp op, DType dtype, std::size_t n,
                                                   const MeasureOptions& options) {
  validateCount(n);
  if (target == Target::Gpu) requireGpu(kGpuKernel);
  const std::size_t bytes = n * sizeof(T);
  hostX.reserve(bytes, gpu());
  hostY.reserve(bytes, gpu());
  hostOut.reserve(bytes, gpu());
  if (needsInputs(dtype, {static_cast<std::int64_t>(n)})) {
    detail::fillRandom(hostX.as<T>(), n, 4);
    detail::fillRandom(hostY.as<T>(), n, 5);
  }
  const T* hx = hostX.as<T>();
  const T* hy = hostY.as<T>();
  T* hout = hostOut.as<T>();
  const T a = static_cast<T>(kAxpyA);

  Record r = detail::labRecord("elementwise", target == Target::Cpu ? "cpu" : "gpu", dtype,
                               {static_cast<std::int64_t>(n)}, static_cast<double>(n), target == Target::Gpu);
  r.variant = toString(op);
  if (r.gpu) reserveDevice(bytes);
  const cudaStream_t cu = cuStream();
  const detail::GpuSteps steps{
      [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(x.data(), hx, bytes, cudaMemcpyHostToDevice, cu));
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(y.data(), hy, bytes, cudaMemcpyHostToDevice, cu));
      },
      [&] { kernels::launchElementwise(kernelOp(op), a, x.as<T>(), y.as<T>(), out.as<T>(), n, cu); },
      [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(hout, out.data(), bytes, cudaMemcpyDeviceToHost, cu)); }};
  return detail::measureSide(
      r, options, detail::cpuThreadCount(), [&] { elementwiseCpu(op, a, hx, hy, hout, n); }, cu, steps,
      3.0 * static_cast<double>(bytes));
}

std::vector<Record> ElementwiseLab::measure(Target target, ElementwiseOp op, DType dtype, std::size_t n,
                                            const MeasureOptions& options) {
  return detail::byDType(dtype, [&](auto t) { return state_->measure<decltype(t)>(target, op, dtype, n, options); });
}

}  // namespace gpulab::lab
