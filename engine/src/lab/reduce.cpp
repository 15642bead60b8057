// Lab: reductions (sum, mean, std, min, max) on all CPU cores and on the GPU.
#include "gpulab/lab/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/reduce.cuh"
#include "gpulab/lab/elementwise.hpp"  // kMaxVectorElements
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

namespace {

void validateCount(std::size_t n) { detail::checkSize("reduction", n, kMaxVectorElements, "elements"); }

enum class Fold { Sum, SquaredDeviation, Min, Max };

template <Fold F>
double combine(double a, double b) {
  if constexpr (F == Fold::Min) return std::min(a, b);
  if constexpr (F == Fold::Max) return std::max(a, b);
  return a + b;
}

template <Fold F>
constexpr double identity() {
  if constexpr (F == Fold::Min) return std::numeric_limits<double>::infinity();
  if constexpr (F == Fold::Max) return -std::numeric_limits<double>::infinity();
  return 0.0;
}

/// One stripe, four independent accumulators (a single chain would wait on the adder's latency).
template <Fold F, class T>
double foldStripe(const T* x, std::size_t begin, std::size_t end, double center) {
  auto map = [center](T v) {
    if constexpr (F == Fold::SquaredDeviation) {
      const double d = static_cast<double>(v) - center;
      return d * d;
    }
    return static_cast<double>(v);
  };
  double acc0 = identity<F>(), acc1 = identity<F>(), acc2 = identity<F>(), acc3 = identity<F>();
  std::size_t i = begin;
  for (; i + 4 <= end; i += 4) {
    acc0 = combine<F>(acc0, map(x[i]));
    acc1 = combine<F>(acc1, map(x[i + 1]));
    acc2 = combine<F>(acc2, map(x[i + 2]));
    acc3 = combine<F>(acc3, map(x[i + 3]));
  }
  for (; i < end; ++i) acc0 = combine<F>(acc0, map(x[i]));
  return combine<F>(combine<F>(acc0, acc1), combine<F>(acc2, acc3));
}

/// Stripes on all cores, their results combined in stripe order: the same answer on every run.
template <Fold F, class T>
double foldCpu(const T* x, std::size_t n, double center) {
  constexpr std::size_t kGrain = std::size_t{1} << 15;
  const std::size_t maxStripes = static_cast<std::size_t>(detail::cpuThreadCount()) * 4;
  const std::size_t stripes = std::clamp<std::size_t>((n + kGrain - 1) / kGrain, 1, maxStripes);
  const std::size_t per = (n + stripes - 1) / stripes;
  std::vector<double> partial(stripes, identity<F>());
  detail::parallelFor(stripes, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t s = first; s < last; ++s) {
      const std::size_t begin = std::min(n, s * per);
      partial[s] = foldStripe<F>(x, begin, std::min(n, begin + per), center);
    }
  });
  double acc = identity<F>();
  for (double p : partial) acc = combine<F>(acc, p);
  return acc;
}

template <class T>
double reduceCpu(ReduceOp op, const T* x, std::size_t n) {
  const double count = static_cast<double>(n);
  switch (op) {
    case ReduceOp::Sum:
      return foldCpu<Fold::Sum>(x, n, 0.0);
    case ReduceOp::Mean:
      return foldCpu<Fold::Sum>(x, n, 0.0) / count;
    case ReduceOp::Std: {
      const double mean = foldCpu<Fold::Sum>(x, n, 0.0) / count;
      return std::sqrt(foldCpu<Fold::SquaredDeviation>(x, n, mean) / count);
    }
    case ReduceOp::Min:
      return foldCpu<Fold::Min>(x, n, 0.0);
    case ReduceOp::Max:
      return foldCpu<Fold::Max>(x, n, 0.0);
  }
  return 0.0;
}

}  // namespace

template <class T>
double reduceReference(ReduceOp op, const T* x, std::size_t n) {
  validateCount(n);
  double sum = 0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (std::size_t i = 0; i < n; ++i) {
    sum += static_cast<double>(x[i]);
    lo = std::min(lo, static_cast<double>(x[i]));
    hi = std::max(hi, static_cast<double>(x[i]));
  }
  const double mean = sum / static_cast<double>(n);
  switch (op) {
    case ReduceOp::Sum:
      return sum;
    case ReduceOp::Mean:
      return mean;
    case ReduceOp::Std: {
      double squares = 0;
      for (std::size_t i = 0; i < n; ++i)
        squares += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
      return std::sqrt(squares / static_cast<double>(n));
    }
    case ReduceOp::Min:
      return lo;
    case ReduceOp::Max:
      return hi;
  }
  return 0.0;
}
template double reduceReference<float>(ReduceOp, const float*, std::size_t);
template double reduceReference<double>(ReduceOp, const double*, std::size_t);

// ---------------------------------------------------------------------------------------------
// ReduceLab

struct ReduceLab::State : detail::LabState {
  using LabState::LabState;
  DeviceBuffer x;
  DeviceBuffer partials;  // kReduceMaxPartials doubles
  DeviceBuffer results;   // [0] mean or the single result, [1] std
  PinnedBuffer hostResult;
  detail::HostArray hostX;

  /// Enqueues `op` over the device copy of x; the result lands in results[resultIndex(op)].
  template <class T>
  void enqueue(ReduceOp op, std::size_t n, int maxBlocks) {
    const cudaStream_t cuStream = this->cuStream();
    const T* dx = x.as<T>();
    double* part = partials.as<double>();
    double* res = results.as<double>();
    const double inverse = 1.0 / static_cast<double>(n);
    using kernels::ReduceKind;
    switch (op) {
      case ReduceOp::Sum:
        kernels::launchReduce(dx, n, ReduceKind::Sum, nullptr, 1.0, false, part, res, cuStream, maxBlocks);
        break;
      case ReduceOp::Mean:
        kernels::launchReduce(dx, n, ReduceKind::Sum, nullptr, inverse, false, part, res, cuStream, maxBlocks);
        break;
      case ReduceOp::Std:
        kernels::launchReduce(dx, n, ReduceKind::Sum, nullptr, inverse, false, part, res, cuStream, maxBlocks);
        kernels::launchReduce(dx, n, ReduceKind::SquaredDeviationSum, res, inverse, true, part, res + 1, cuStream,
                              maxBlocks);
        break;
      case ReduceOp::Min:
        kernels::launchReduce(dx, n, ReduceKind::Min, nullptr, 1.0, false, part, res, cuStream, maxBlocks);
        break;
      case ReduceOp::Max:
        kernels::launchReduce(dx, n, ReduceKind::Max, nullptr, 1.0, false, part, res, cuStream, maxBlocks);
        break;
    }
  }
  static int resultIndex(ReduceOp op) { return op == ReduceOp::Std ? 1 : 0; }

  void reserveDevice(std::size_t bytes) {
    x.reserve(bytes);
    partials.reserve(kernels::kReduceMaxPartials * sizeof(double));
    results.reserve(2 * sizeof(double));
    hostResult.reserve(sizeof(double));
  }

  template <class T>
  std::vector<Record> measure(Target target, ReduceOp op, DType dtype, std::size_t n, const MeasureOptions& options);
};

constexpr const char* kGpuReduction = "the GPU reduction";

ReduceLab::ReduceLab() : state_(std::make_unique<State>(hasGpu())) {}

ReduceLab::~ReduceLab() = default;

template <class T>
double ReduceLab::reduce(Target target, ReduceOp op, const T* x, std::size_t n, int maxBlocks) {
  validateCount(n);
  if (target == Target::Cpu) return reduceCpu(op, x, n);
  State& s = *state_;
  s.requireGpu(kGpuReduction);
  s.reserveDevice(n * sizeof(T));
  const cudaStream_t cuStream = s.cuStream();
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.x.data(), x, n * sizeof(T), cudaMemcpyHostToDevice, cuStream));
  s.enqueue<T>(op, n, maxBlocks);
  double result = 0;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(&result, s.results.as<double>() + State::resultIndex(op), sizeof(double),
                                    cudaMemcpyDeviceToHost, cuStream));
  s.stream->synchronize();
  return result;
}
template double ReduceLab::reduce<float>(Target, ReduceOp, const float*, std::size_t, int);
template double ReduceLab::reduce<double>(Target, ReduceOp, const double*, std::size_t, int);

template <class T>
std::vector<Record> ReduceLab::State::measure(Target target, ReduceOp op, DType dtype, std::size_t n,
                                              const MeasureOptions& options) {
  validateCount(n);
  if (target == Target::Gpu) requireGpu(kGpuReduction);
  const std::size_t bytes = n * sizeof(T);
  hostX.reserve(bytes, gpu());
  if (needsInputs(dtype, {static_cast<std::int64_t>(n)})) detail::fillRandom(hostX.as<T>(), n, 6);
  const T* hx = hostX.as<T>();

  Record r = detail::labRecord("reduce", target == Target::Cpu ? "cpu" : "gpu", dtype, {static_cast<std::int64_t>(n)},
                               static_cast<double>(n), target == Target::Gpu);
  r.variant = toString(op);
  if (r.gpu) reserveDevice(bytes);
  const cudaStream_t cu = cuStream();
  double* hres = hostResult.as<double>();
  volatile double sink = 0;
  const detail::GpuSteps steps{
      [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(x.data(), hx, bytes, cudaMemcpyHostToDevice, cu)); },
      [&] { enqueue<T>(op, n, 0); },
      [&] {
        GPULAB_CUDA_CHECK(
            cudaMemcpyAsync(hres, results.as<double>() + resultIndex(op), sizeof(double), cudaMemcpyDeviceToHost, cu));
      },
      op == ReduceOp::Std ? "two passes, pinned host memory" : "pinned host memory"};
  return detail::measureSide(
      r, options, detail::cpuThreadCount(), [&] { sink = reduceCpu(op, hx, n); }, cu, steps,
      static_cast<double>(bytes));
}

std::vector<Record> ReduceLab::measure(Target target, ReduceOp op, DType dtype, std::size_t n,
                                       const MeasureOptions& options) {
  return detail::byDType(dtype, [&](auto t) { return state_->measure<decltype(t)>(target, op, dtype, n, options); });
}

}  // namespace gpulab::lab
