// Small host-side helpers the launchers share: how many SMs the current device has (grid sizing) and
// whether a pointer allows 16-byte vector access.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpulab/kernels/cuda_check.hpp"

namespace gpulab::kernels {

/// Multiprocessors of the current device.
inline int multiprocessors() {
  int device = 0;
  int count = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

/// Whether p is 16-byte aligned (float4 / double2 loads).
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace gpulab::kernels
