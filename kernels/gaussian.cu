#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/gaussian.cuh"
#include "gpulab/kernels/launch_support.hpp"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

template <class T>
__device__ __forceinline__ T fromFloat(float v) {
  if constexpr (sizeof(T) == 1) {
    const float r = rintf(v);
    return static_cast<T>(r <= 0.f ? 0.f : (r >= 255.f ? 255.f : r));
  } else {
    return v;
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels: one output per thread; a warp reads consecutive columns (coalesced in both passes), the
// window's overlap between neighbours comes from L1.

template <class T>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    gaussianRowsKernel(Plane<const T> in, Plane<float> tmp, const float* __restrict__ w, int r, BorderMode mode,
                       float fill) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const T* row = in.row(y);
  float sum = 0.f;
  if (x - r >= 0 && x + r < in.width) {
    const T* p = row + (x - r);
    for (int k = 0; k <= 2 * r; ++k) sum = fmaf(__ldg(w + k), static_cast<float>(__ldg(p + k)), sum);
  } else {
    for (int k = 0; k <= 2 * r; ++k) {
      const int xi = borderIndex(x - r + k, in.width, mode);
      sum = fmaf(__ldg(w + k), xi < 0 ? fill : static_cast<float>(__ldg(row + xi)), sum);
    }
  }
  tmp(x, y) = sum;
}

template <class T>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    gaussianColumnsKernel(Plane<const float> tmp, Plane<T> out, const float* __restrict__ w, int r, BorderMode mode,
                          float fill) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  float sum = 0.f;
  if (y - r >= 0 && y + r < out.height) {
    for (int k = 0; k <= 2 * r; ++k) sum = fmaf(__ldg(w + k), __ldg(tmp.row(y - r + k) + x), sum);
  } else {
    for (int k = 0; k <= 2 * r; ++k) {
      const int yi = borderIndex(y - r + k, out.height, mode);
      sum = fmaf(__ldg(w + k), yi < 0 ? fill : __ldg(tmp.row(yi) + x), sum);
    }
  }
  out(x, y) = fromFloat<T>(sum);
}

// ---------------------------------------------------------------------------------------------
// Host side

template <class A, class B>
void validate(const A& in, const B& out, const float* weights, int radius) {
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("the Gaussian pass needs input and output planes of one nonempty size, got " +
                                std::to_string(in.width) + "x" + std::to_string(in.height) + " and " +
                                std::to_string(out.width) + "x" + std::to_string(out.height));
  if (planesOverlap(in, out)) throw std::invalid_argument("the Gaussian pass cannot run in place");
  if (weights == nullptr || radius < 0) throw std::invalid_argument("the Gaussian pass needs 2r+1 weights, r >= 0");
}

dim3 gridFor(int width, int height) { return dim3(divUp(width, kBlockX), divUp(height, kBlockY)); }

}  // namespace

template <class T>
void launchGaussianRows(Plane<const T> in, Plane<float> tmp, const float* weights, int radius, BorderMode mode,
                        float fill, cudaStream_t stream) {
  validate(in, tmp, weights, radius);
  gaussianRowsKernel<T>
      <<<gridFor(in.width, in.height), dim3(kBlockX, kBlockY), 0, stream>>>(in, tmp, weights, radius, mode, fill);
  GPULAB_CHECK_LAUNCH("gaussianRowsKernel");
}

template <class T>
void launchGaussianColumns(Plane<const float> tmp, Plane<T> out, const float* weights, int radius, BorderMode mode,
                           float fill, cudaStream_t stream) {
  validate(tmp, out, weights, radius);
  gaussianColumnsKernel<T>
      <<<gridFor(out.width, out.height), dim3(kBlockX, kBlockY), 0, stream>>>(tmp, out, weights, radius, mode, fill);
  GPULAB_CHECK_LAUNCH("gaussianColumnsKernel");
}

// ---------------------------------------------------------------------------------------------
// Instantiations

#define GPULAB_INSTANTIATE(T)                                                                                \
  template void launchGaussianRows<T>(Plane<const T>, Plane<float>, const float*, int, BorderMode, float,    \
                                      cudaStream_t);                                                         \
  template void launchGaussianColumns<T>(Plane<const float>, Plane<T>, const float*, int, BorderMode, float, \
                                         cudaStream_t);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(float)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
