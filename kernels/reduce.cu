#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/reduce.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers: what each kind maps an element to, how two values combine, and its identity.

template <ReduceKind K>
struct Reducer {
  __device__ __forceinline__ static double identity() {
    if constexpr (K == ReduceKind::Min) return INFINITY;
    if constexpr (K == ReduceKind::Max) return -INFINITY;
    return 0.0;
  }
  __device__ __forceinline__ static double map(double x, double center) {
    if constexpr (K == ReduceKind::SquaredDeviationSum) {
      const double d = x - center;
      return d * d;
    }
    return x;
  }
  __device__ __forceinline__ static double combine(double a, double b) {
    if constexpr (K == ReduceKind::Min) return fmin(a, b);
    if constexpr (K == ReduceKind::Max) return fmax(a, b);
    return a + b;
  }
};

template <class T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

/// Reduces one value per thread of a kThreads block; the result is valid in thread 0.
/// Uses shared memory once per kernel: call it at most once per kernel.
template <ReduceKind K>
__device__ __forceinline__ double blockReduce(double v) {
  __shared__ double warpValues[kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = Reducer<K>::combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  if (lane == 0) warpValues[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warpValues[lane] : Reducer<K>::identity();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v = Reducer<K>::combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Kernels

template <class T, ReduceKind K>
__global__ void __launch_bounds__(kThreads)
    reducePartialKernel(const T* __restrict__ x, std::size_t n, const double* __restrict__ center, bool vectorOk,
                        double* __restrict__ partials) {
  const double c = K == ReduceKind::SquaredDeviationSum ? *center : 0.0;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  constexpr int kPack = Pack<T>::kSize;
  const std::size_t packs = vectorOk ? n / kPack : 0;
  double acc = Reducer<K>::identity();
  for (std::size_t p = first; p < packs; p += stride) {
    const Pack<T> xs = reinterpret_cast<const Pack<T>*>(x)[p];
#pragma unroll
    for (int e = 0; e < kPack; ++e) acc = Reducer<K>::combine(acc, Reducer<K>::map(xs.v[e], c));
  }
  for (std::size_t i = packs * kPack + first; i < n; i += stride)
    acc = Reducer<K>::combine(acc, Reducer<K>::map(x[i], c));
  acc = blockReduce<K>(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <ReduceKind K>
__global__ void __launch_bounds__(kThreads)
    reduceFinalKernel(const double* __restrict__ partials, int count, double scale, bool takeSqrt, double* result) {
  double acc = Reducer<K>::identity();
  for (int i = threadIdx.x; i < count; i += kThreads) acc = Reducer<K>::combine(acc, partials[i]);
  acc = blockReduce<K>(acc);
  if (threadIdx.x == 0) {
    double r = K == ReduceKind::Min || K == ReduceKind::Max ? acc : acc * scale;
    if (takeSqrt) r = sqrt(r);
    *result = r;
  }
}

template <class T, ReduceKind K>
void launchKind(const T* x, std::size_t n, const double* center, double scale, bool takeSqrt, double* partials,
                double* result, cudaStream_t stream, int maxBlocks) {
  const bool vectorOk = aligned16(x);
  const std::size_t items = vectorOk ? n / Pack<T>::kSize + n % Pack<T>::kSize : n;
  int limit = maxBlocks > 0 ? maxBlocks : multiprocessors() * 8;  // 8 x 256 threads: a full SM
  limit = std::min(limit, kReduceMaxPartials);
  const int blocks = static_cast<int>(std::min<std::size_t>((items + kThreads - 1) / kThreads, limit));
  reducePartialKernel<T, K><<<blocks, kThreads, 0, stream>>>(x, n, center, vectorOk, partials);
  GPULAB_CHECK_LAUNCH("reducePartial");
  reduceFinalKernel<K><<<1, kThreads, 0, stream>>>(partials, blocks, scale, takeSqrt, result);
  GPULAB_CHECK_LAUNCH("reduceFinal");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launcher and type dispatch

template <class T>
void launchReduce(const T* x, std::size_t n, ReduceKind kind, const double* center, double scale, bool takeSqrt,
                  double* partials, double* result, cudaStream_t stream, int maxBlocks) {
  if (n == 0) throw std::invalid_argument("a reduction needs at least one element");
  switch (kind) {
    case ReduceKind::Sum:
      launchKind<T, ReduceKind::Sum>(x, n, center, scale, takeSqrt, partials, result, stream, maxBlocks);
      break;
    case ReduceKind::SquaredDeviationSum:
      if (center == nullptr) throw std::invalid_argument("a squared-deviation sum needs a center");
      launchKind<T, ReduceKind::SquaredDeviationSum>(x, n, center, scale, takeSqrt, partials, result, stream,
                                                     maxBlocks);
      break;
    case ReduceKind::Min:
      launchKind<T, ReduceKind::Min>(x, n, center, scale, takeSqrt, partials, result, stream, maxBlocks);
      break;
    case ReduceKind::Max:
      launchKind<T, ReduceKind::Max>(x, n, center, scale, takeSqrt, partials, result, stream, maxBlocks);
      break;
  }
}

template void launchReduce<float>(const float*, std::size_t, ReduceKind, const double*, double, bool, double*, double*,
                                  cudaStream_t, int);
template void launchReduce<double>(const double*, std::size_t, ReduceKind, const double*, double, bool, double*,
                                   double*, cudaStream_t, int);

}  // namespace gpulab::kernels
