#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/unsharp.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernel

template <class T>
__global__ void __launch_bounds__(256)
    unsharpKernel(Plane<const T> in, Plane<const float> blurred, Plane<T> out, float amount, float threshold) {
  const int x = blockIdx.x * 32 + threadIdx.x;
  const int y = blockIdx.y * 8 + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  const float v = unsharpValue(static_cast<float>(in(x, y)), blurred(x, y), amount, threshold);
  if constexpr (sizeof(T) == 1) {
    const float r = rintf(v);
    out(x, y) = static_cast<T>(r <= 0.f ? 0.f : (r >= 255.f ? 255.f : r));
  } else {
    out(x, y) = v;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host side

template <class T>
void launchUnsharpCombine(Plane<const T> in, Plane<const float> blurred, Plane<T> out, float amount, float threshold,
                          cudaStream_t stream) {
  if (in.width != out.width || in.height != out.height || blurred.width != out.width || blurred.height != out.height ||
      out.width <= 0 || out.height <= 0)
    throw std::invalid_argument("unsharp mask needs input, blurred and output planes of one nonempty size");
  if (planesOverlap(blurred, out)) throw std::invalid_argument("unsharp mask cannot write over its blurred plane");
  unsharpKernel<T><<<dim3(divUp(out.width, 32), divUp(out.height, 8)), dim3(32, 8), 0, stream>>>(in, blurred, out,
                                                                                                 amount, threshold);
  GPULAB_CHECK_LAUNCH("unsharpKernel");
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchUnsharpCombine<std::uint8_t>(Plane<const std::uint8_t>, Plane<const float>, Plane<std::uint8_t>,
                                                 float, float, cudaStream_t);
template void launchUnsharpCombine<float>(Plane<const float>, Plane<const float>, Plane<float>, float, float,
                                          cudaStream_t);

}  // namespace gpulab::kernels
