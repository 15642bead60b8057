// Vector loads shared by the streaming kernels (conv2d, separable_conv, box_blur_direct). Private to
// the kernels library.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// 4 samples from an address aligned to 4 samples (16 bytes for f32, 4 for u8, 32 for f64), as
/// Acc: one vector load through the read-only cache on the GPU (two for f64), sample by sample on
/// the host.
template <class T, class Acc>
GPULAB_HD void loadFour(const T* p, Acc (&v)[4]) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    const uchar4 q = __ldg(reinterpret_cast<const uchar4*>(p));
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else if constexpr (std::is_same_v<T, float>) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    const double2 a = __ldg(reinterpret_cast<const double2*>(p));
    const double2 b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    v[0] = a.x;
    v[1] = a.y;
    v[2] = b.x;
    v[3] = b.y;
  }
#else
  for (int i = 0; i < 4; ++i) v[i] = static_cast<Acc>(p[i]);
#endif
}

}  // namespace gpulab::kernels
