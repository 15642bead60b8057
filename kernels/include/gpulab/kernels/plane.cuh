// The view every kernel launcher takes: one pitched 2D plane of T in device memory.
// Plain data, usable from host and device code; it owns nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define GPULAB_HD __host__ __device__ __forceinline__
#else
#define GPULAB_HD inline
#endif

// Loops the GPU unrolls (GPULAB_UNROLL) or keeps rolled (GPULAB_NO_UNROLL); the host emulations of
// the same thread code compile them plainly.
#if defined(__CUDA_ARCH__)
#define GPULAB_UNROLL _Pragma("unroll")
#define GPULAB_NO_UNROLL _Pragma("unroll 1")
#else
#define GPULAB_UNROLL
#define GPULAB_NO_UNROLL
#endif

namespace gpulab::kernels {

template <class T>
struct Plane {
  T* data = nullptr;
  int width = 0;
  int height = 0;
  std::size_t pitch = 0;  ///< bytes between the starts of two rows

  GPULAB_HD T* row(int y) const {
    using Byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
    return reinterpret_cast<T*>(reinterpret_cast<Byte*>(data) + static_cast<std::size_t>(y) * pitch);
  }
  GPULAB_HD T& operator()(int x, int y) const { return row(y)[x]; }
};

/// Ceiling division for grid sizes.
GPULAB_HD constexpr int divUp(int a, int b) { return (a + b - 1) / b; }

}  // namespace gpulab::kernels
