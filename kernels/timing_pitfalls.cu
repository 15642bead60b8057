#include <algorithm>
#include <cstddef>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/timing_pitfalls.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernels

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) busyWorkKernel(float* data, std::size_t n, int iterations) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = data[i];
    for (int k = 0; k < iterations; ++k) v = fmaf(v, 0.999f, 0.001f);
    data[i] = v;
  }
}

__global__ void coldStartProbeKernel(float* data) { data[threadIdx.x] = static_cast<float>(threadIdx.x); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

void launchBusyWork(float* data, std::size_t n, int iterations, cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535);
  busyWorkKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(data, n, iterations);
  GPULAB_CHECK_LAUNCH("busyWorkKernel");
}

void launchColdStartProbe(float* data, cudaStream_t stream) {
  coldStartProbeKernel<<<1, 32, 0, stream>>>(data);
  GPULAB_CHECK_LAUNCH("coldStartProbeKernel");
}

}  // namespace gpulab::kernels
