// Median filter on planes: the median of the (2r+1) x (2r+1) window, exact (the very sample, never
// an average), every border mode at any distance.
//
// Samples are compared as order-preserving 32-bit keys (medianKey): u8 as its value, float as its
// bit pattern with the sign flipped (negatives reversed), so -0 < +0 and NaNs sort beyond the
// infinities, the same total order in every implementation. Per pixel, one of:
//   forgetful (3x3 .. 7x7):  a min/max network in registers (keep (n+3)/2 samples, drop the
//                             smallest and largest, add the next) over a shared-memory tile; u8
//                             runs two pixels per thread, one per 16-bit lane of a word;
//   radix (any size):         bitwise radix selection over a shared-memory tile: the k-th smallest
//                             key built from the top bit down, each bit one count pass over the
//                             window (8 passes for u8, 32 for float);
//   histogram (u8):           a sliding histogram per column strip with a running median (below).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// The largest median radius (a 63x63 window).
inline constexpr int kMaxMedianRadius = 31;

/// Order-preserving key of a sample (see above).
GPULAB_HD std::uint32_t medianKey(std::uint8_t v) { return v; }
GPULAB_HD std::uint32_t medianKey(float v) {
  std::uint32_t bits;
#if defined(__CUDA_ARCH__)
  bits = __float_as_uint(v);
#else
  std::memcpy(&bits, &v, sizeof bits);
#endif
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}
/// The sample a key stands for.
template <class T>
GPULAB_HD T medianValue(std::uint32_t key) {
  if constexpr (sizeof(T) == 1) {
    return static_cast<T>(key);
  } else {
    const std::uint32_t bits = (key & 0x80000000u) != 0 ? key & 0x7fffffffu : ~key;
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
#endif
  }
}

GPULAB_HD std::uint32_t minKey(std::uint32_t a, std::uint32_t b) { return a < b ? a : b; }
GPULAB_HD std::uint32_t maxKey(std::uint32_t a, std::uint32_t b) { return a < b ? b : a; }

/// Forgetful selection of the median of (2R+1)^2 keys sample(0 .. n-1), with the key type's
/// lo(a, b) / hi(a, b) (a min/max network: for packed keys, every lane its own median).
template <int R, class Key, class Sample, class Lo, class Hi>
GPULAB_HD Key forgetfulSelect(const Sample& sample, const Lo& lo, const Hi& hi) {
  constexpr int kSide = 2 * R + 1;
  constexpr int kCount = kSide * kSide;
  constexpr int kKeep = kCount / 2 + 2;
  Key buf[kKeep];
  GPULAB_UNROLL
  for (int i = 0; i < kKeep; ++i) buf[i] = sample(i);
  GPULAB_UNROLL
  for (int step = 0; step < kCount - kKeep; ++step) {
    const int size = kKeep - step;
    // The smallest to buf[0], then the largest of the rest to buf[size - 1]; both leave, the next
    // sample takes buf[0] and the buffer shrinks by one.
    GPULAB_UNROLL
    for (int i = 1; i < size; ++i) {
      const Key low = lo(buf[0], buf[i]);
      buf[i] = hi(buf[0], buf[i]);
      buf[0] = low;
    }
    GPULAB_UNROLL
    for (int i = 1; i < size - 1; ++i) {
      const Key high = hi(buf[i], buf[size - 1]);
      buf[i] = lo(buf[i], buf[size - 1]);
      buf[size - 1] = high;
    }
    buf[0] = sample(kKeep + step);
  }
  // Three left: their median.
  return hi(lo(buf[0], buf[1]), lo(hi(buf[0], buf[1]), buf[2]));
}

/// The median of the (2R+1)^2 keys window[dy * stride + dx] by forgetful selection.
template <int R>
GPULAB_HD std::uint32_t forgetfulMedian(const std::uint32_t* window, int stride) {
  constexpr int kSide = 2 * R + 1;
  return forgetfulSelect<R, std::uint32_t>([&](int i) { return window[(i / kSide) * stride + i % kSide]; },
                                           [](std::uint32_t a, std::uint32_t b) { return minKey(a, b); },
                                           [](std::uint32_t a, std::uint32_t b) { return maxKey(a, b); });
}

/// The median of the side x side keys window[dy * stride + dx] (side odd) whose keys fit in `bits`
/// bits: the largest v with fewer than or exactly n/2 keys below it, decided bit by bit.
GPULAB_HD std::uint32_t radixMedian(const std::uint32_t* window, int stride, int side, int bits) {
  const int rank = side * side / 2;
  std::uint32_t prefix = 0;
  for (int b = bits - 1; b >= 0; --b) {
    const std::uint32_t candidate = prefix | (1u << b);
    int below = 0;
    for (int dy = 0; dy < side; ++dy) {
      const std::uint32_t* row = window + dy * stride;
      for (int dx = 0; dx < side; ++dx) below += row[dx] < candidate ? 1 : 0;
    }
    if (below <= rank) prefix = candidate;
  }
  return prefix;
}

/// How the GPU selects (Auto: see resolveMedianPath).
///   Forgetful  min/max network in registers, 3x3 to 7x7, any type (u8: two pixels per thread);
///   Radix      bitwise radix selection over a shared-memory tile, any size and type;
///   Histogram  u8 only: each thread slides down a strip of one column keeping the histogram of
///              its window (256 counts in shared memory: 8-bit up to 15x15, 16-bit beyond); a row
///              step adds the entering row and removes the leaving one (2 (2r + 1) updates) and
///              the running median moves from its last value to the new one (Huang's method):
///              O(r) per pixel plus the distance the median moves.
enum class MedianPath : int { Auto = 0, Forgetful = 1, Radix = 2, Histogram = 3 };

/// The path Auto takes for `radius` on u8 (`eightBit`) or float planes.
MedianPath resolveMedianPath(MedianPath path, int radius, bool eightBit);

/// out = the median filter of `in` with radius 0..kMaxMedianRadius (0 copies). Planes of one size,
/// out distinct from in. `borderValue` is used by Constant only. std::invalid_argument for a path
/// that cannot take the radius or type. Asynchronous on `stream`.
template <class T>
void launchMedian(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, MedianPath path,
                  cudaStream_t stream);

}  // namespace gpulab::kernels
