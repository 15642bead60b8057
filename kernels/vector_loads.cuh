// Vector loads shared by the streaming kernels (conv2d, separable_conv, box_blur_direct) and 16-byte
// shared-memory accesses (box_blur, separable_conv). Private to the kernels library.
#pragma once

#include <cstdint>
#include <cstring>
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

// 16 bytes of shared memory <-> registers, as one vector access on the GPU.
GPULAB_HD void loadShared16(const float* src, float (&v)[4]) {
#if defined(__CUDA_ARCH__)
  const float4 q = *reinterpret_cast<const float4*>(src);
  v[0] = q.x;
  v[1] = q.y;
  v[2] = q.z;
  v[3] = q.w;
#else
  std::memcpy(v, src, 16);
#endif
}

GPULAB_HD void loadShared16(const std::uint8_t* src, std::uint8_t (&v)[16]) {
#if defined(__CUDA_ARCH__)
  const uint4 q = *reinterpret_cast<const uint4*>(src);
  const unsigned words[4] = {q.x, q.y, q.z, q.w};
  for (int i = 0; i < 16; ++i) v[i] = static_cast<std::uint8_t>(words[i / 4] >> (8 * (i % 4)));
#else
  std::memcpy(v, src, 16);
#endif
}

GPULAB_HD void loadShared16(const std::uint16_t* src, std::uint16_t (&v)[8]) {
#if defined(__CUDA_ARCH__)
  const uint4 q = *reinterpret_cast<const uint4*>(src);
  const unsigned words[4] = {q.x, q.y, q.z, q.w};
  for (int i = 0; i < 8; ++i) v[i] = static_cast<std::uint16_t>(words[i / 2] >> (16 * (i % 2)));
#else
  std::memcpy(v, src, 16);
#endif
}

GPULAB_HD void storeShared16(float* dst, const float* v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
#else
  std::memcpy(dst, v, 16);
#endif
}

GPULAB_HD void storeShared16(long long* dst, const long long* v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<longlong2*>(dst) = make_longlong2(v[0], v[1]);
#else
  std::memcpy(dst, v, 16);
#endif
}

GPULAB_HD void storeShared16(double* dst, const double* v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<double2*>(dst) = make_double2(v[0], v[1]);
#else
  std::memcpy(dst, v, 16);
#endif
}

GPULAB_HD void storeShared16(unsigned* dst, const unsigned* v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(dst) = make_uint4(v[0], v[1], v[2], v[3]);
#else
  std::memcpy(dst, v, 16);
#endif
}

GPULAB_HD void storeShared16(int* dst, const int* v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<int4*>(dst) = make_int4(v[0], v[1], v[2], v[3]);
#else
  std::memcpy(dst, v, 16);
#endif
}

}  // namespace gpulab::kernels
