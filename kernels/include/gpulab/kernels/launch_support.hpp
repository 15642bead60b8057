// Small host-side helpers the launchers share: how many SMs the current device has (grid sizing),
// whether a pointer or a pitched plane allows 16-byte vector access, whether two planes overlap, and
// the tuning knobs benchmarks set in the environment.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

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
/// Whether every row of a pitched plane is: the start and the pitch both.
inline bool aligned16(const void* p, std::size_t pitch) { return aligned16(p) && pitch % 16 == 0; }

/// Whether the memory of two pitched planes (data, pitch in bytes, height rows) overlaps.
template <class A, class B>
bool planesOverlap(const A& x, const B& y) {
  const auto* a = reinterpret_cast<const unsigned char*>(x.data);
  const auto* b = reinterpret_cast<const unsigned char*>(y.data);
  return a < b + y.pitch * y.height && b < a + x.pitch * x.height;
}

/// A tuning knob from the environment (segment rows and the like, for measurements: results do not
/// depend on them): the positive integer variable `name` holds, 0 when it is unset or holds none.
/// Callers read it once (a function-local static).
inline int tuningRows(const char* name) {
  const char* text = std::getenv(name);
  const int v = text != nullptr ? std::atoi(text) : 0;
  return v > 0 ? v : 0;
}

/// The text of the tuning knob `name` (a kernel's name, say), empty when it is unset.
inline std::string tuningText(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? text : "";
}

}  // namespace gpulab::kernels
