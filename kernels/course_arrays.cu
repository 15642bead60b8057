#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>

#include "gpulab/kernels/course_arrays.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"

namespace gpulab::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <class T>
__device__ __forceinline__ T lowest() {
  if constexpr (sizeof(T) == 4) return -FLT_MAX;
  return -DBL_MAX;
}

/// Sum (in S) of one value per thread of a kThreads block, valid in thread 0. `slots` is kWarps
/// values of shared memory that the caller owns.
template <class S>
__device__ __forceinline__ S blockSum(S v, S* slots) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? slots[lane] : S(0);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

template <class S>
__device__ __forceinline__ S blockMax(S v, S* slots) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmax(v, __shfl_down_sync(0xffffffffu, v, offset));
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? slots[lane] : lowest<S>();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v = fmax(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  return v;
}

template <class T>
__global__ void linspaceKernel(T* __restrict__ out, std::size_t n, double start, double step, double stop) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = static_cast<T>(i + 1 == n && n > 1 ? stop : start + static_cast<double>(i) * step);
}

template <class T>
__global__ void expressionKernel(CourseExpression e, const T* __restrict__ x, const T* __restrict__ y,
                                 T* __restrict__ out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T v = x[i];
    out[i] = e == CourseExpression::SinSqrt ? T(2) * sin(v) + sqrt(fabs(v)) : exp(-v) * sin(y[i]);
  }
}

/// Pass 1 (x, n): per-block sums and maxima into partials[block], partials[kInTypeMaxPartials +
/// block]. Pass 2 (one block, the partials): the totals into result[0], result[1].
template <class T>
__global__ void __launch_bounds__(kThreads)
    sumMaxPartialKernel(const T* __restrict__ x, std::size_t n, T* __restrict__ partials) {
  __shared__ T sumSlots[kWarps];
  __shared__ T maxSlots[kWarps];
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  T sum = 0;
  T best = lowest<T>();
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    sum += x[i];
    best = fmax(best, x[i]);
  }
  sum = blockSum<T>(sum, sumSlots);
  best = blockMax<T>(best, maxSlots);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    partials[kInTypeMaxPartials + blockIdx.x] = best;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    sumMaxFinalKernel(const T* __restrict__ partials, int count, T* __restrict__ result) {
  __shared__ T sumSlots[kWarps];
  __shared__ T maxSlots[kWarps];
  T sum = 0;
  T best = lowest<T>();
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    sum += partials[i];
    best = fmax(best, partials[kInTypeMaxPartials + i]);
  }
  sum = blockSum<T>(sum, sumSlots);
  best = blockMax<T>(best, maxSlots);
  if (threadIdx.x == 0) {
    result[0] = sum;
    result[1] = best;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) rowSumsKernel(const T* __restrict__ x, int cols, T* __restrict__ out) {
  __shared__ double slots[kWarps];
  const T* row = x + static_cast<std::size_t>(blockIdx.x) * cols;
  double sum = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += static_cast<double>(row[c]);
  sum = blockSum<double>(sum, slots);
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<T>(sum);
}

template <class T>
__global__ void columnSumsKernel(const T* __restrict__ x, int rows, int cols, T* __restrict__ out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  double sum = 0;
  for (int r = 0; r < rows; ++r) sum += static_cast<double>(x[static_cast<std::size_t>(r) * cols + c]);
  out[c] = static_cast<T>(sum);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    rowNormalizeKernel(const T* __restrict__ x, int cols, bool l2, T* __restrict__ out) {
  __shared__ double slots[kWarps];
  __shared__ double scale;
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const T* row = x + offset;
  double sum = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const double v = static_cast<double>(row[c]);
    sum += l2 ? v * v : v;
  }
  sum = blockSum<double>(sum, slots);
  if (threadIdx.x == 0) scale = l2 ? sqrt(sum) : sum;
  __syncthreads();
  const double s = scale;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[offset + c] = static_cast<T>(static_cast<double>(row[c]) / s);
}

int gridFor(std::size_t items, int limit) {
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>((items + kThreads - 1) / kThreads, limit)));
}

}  // namespace

template <class T>
void launchLinspace(T* out, std::size_t n, double start, double stop, cudaStream_t stream) {
  if (n == 0) return;
  const double step = n > 1 ? (stop - start) / static_cast<double>(n - 1) : 0.0;
  linspaceKernel<T><<<gridFor(n, 32 * multiprocessors()), kThreads, 0, stream>>>(out, n, start, step, stop);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launchCourseExpression(CourseExpression e, const T* x, const T* y, T* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  expressionKernel<T><<<gridFor(n, 32 * multiprocessors()), kThreads, 0, stream>>>(e, x, y, out, n);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launchSumMaxInType(const T* x, std::size_t n, T* partials, T* result, cudaStream_t stream) {
  const int blocks = gridFor(n, std::min(kInTypeMaxPartials, 4 * multiprocessors()));
  sumMaxPartialKernel<T><<<blocks, kThreads, 0, stream>>>(x, n, partials);
  GPULAB_CUDA_CHECK(cudaGetLastError());
  sumMaxFinalKernel<T><<<1, kThreads, 0, stream>>>(partials, blocks, result);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launchRowSums(const T* x, int rows, int cols, T* out, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  rowSumsKernel<T><<<rows, kThreads, 0, stream>>>(x, cols, out);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launchColumnSums(const T* x, int rows, int cols, T* out, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  columnSumsKernel<T><<<(cols + kThreads - 1) / kThreads, kThreads, 0, stream>>>(x, rows, cols, out);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launchRowNormalize(const T* x, int rows, int cols, bool l2, T* out, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  rowNormalizeKernel<T><<<rows, kThreads, 0, stream>>>(x, cols, l2, out);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

#define GPULAB_COURSE_ARRAYS(T)                                                                                 \
  template void launchLinspace<T>(T*, std::size_t, double, double, cudaStream_t);                               \
  template void launchCourseExpression<T>(CourseExpression, const T*, const T*, T*, std::size_t, cudaStream_t); \
  template void launchSumMaxInType<T>(const T*, std::size_t, T*, T*, cudaStream_t);                             \
  template void launchRowSums<T>(const T*, int, int, T*, cudaStream_t);                                         \
  template void launchColumnSums<T>(const T*, int, int, T*, cudaStream_t);                                      \
  template void launchRowNormalize<T>(const T*, int, int, bool, T*, cudaStream_t);
GPULAB_COURSE_ARRAYS(float)
GPULAB_COURSE_ARRAYS(double)
#undef GPULAB_COURSE_ARRAYS

}  // namespace gpulab::kernels
