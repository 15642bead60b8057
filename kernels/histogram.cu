#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/histogram.cuh"
#include "gpulab/kernels/launch_support.hpp"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ bool finiteSample(T v) {
  if constexpr (std::is_integral_v<T>)
    return true;
  else
    return isfinite(v);
}

/// Blocks for a plane: enough to fill the device a few times over, never more than rows.
int blocksFor(int height) { return std::max(1, std::min(height, multiprocessors() * 8)); }

// ---------------------------------------------------------------------------------------------
// Kernels

__global__ void initRange(RangeCode* range) {
  range->lo = ~0ull;  // above every code: no sample yet
  range->hi = 0ull;
}

template <class T>
__global__ void planeRange(Plane<const T> plane, RangeCode* range) {
  unsigned long long lo = ~0ull, hi = 0ull;
  for (int y = blockIdx.x; y < plane.height; y += gridDim.x) {
    const T* row = plane.row(y);
    for (int x = threadIdx.x; x < plane.width; x += blockDim.x) {
      const T v = row[x];
      if (!finiteSample(v)) continue;
      const unsigned long long code = encodeOrdered(static_cast<double>(v));
      lo = code < lo ? code : lo;
      hi = code > hi ? code : hi;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned long long l = __shfl_down_sync(0xffffffffu, lo, offset);
    const unsigned long long h = __shfl_down_sync(0xffffffffu, hi, offset);
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  if (threadIdx.x % 32 == 0) {
    if (lo != ~0ull) atomicMin(&range->lo, lo);
    if (hi != 0ull) atomicMax(&range->hi, hi);
  }
}

// Each block counts its rows into shared memory (atomics on shared memory are cheap and contend only
// within the block), then adds its non-zero bins to the global counts.
template <class T>
__global__ void histogram(Plane<const T> plane, const RangeCode* range, int bins, unsigned* counts) {
  extern __shared__ unsigned local[];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  constexpr bool isU8 = std::is_same_v<T, std::uint8_t>;
  constexpr bool isU16 = std::is_same_v<T, std::uint16_t>;
  double lo = 0, scale = 0;
  int intLo = 0, intHi = 0;
  bool any = true;
  if constexpr (!isU8) {
    const RangeCode r = *range;
    any = r.lo <= r.hi;
    lo = decodeOrdered(r.lo);
    const double hi = decodeOrdered(r.hi);
    scale = hi > lo ? bins / (hi - lo) : 0.0;
    if (any) {
      intLo = static_cast<int>(lo);
      intHi = static_cast<int>(hi);
    }
  }
  if (any)
    for (int y = blockIdx.x; y < plane.height; y += gridDim.x) {
      const T* row = plane.row(y);
      for (int x = threadIdx.x; x < plane.width; x += blockDim.x) {
        const T v = row[x];
        if constexpr (isU8) {
          atomicAdd(&local[v], 1u);
        } else if constexpr (isU16) {
          atomicAdd(&local[histogramBinU16(v, intLo, intHi, bins)], 1u);
        } else {
          if (!finiteSample(v)) continue;
          atomicAdd(&local[histogramBin(static_cast<double>(v), lo, scale, bins)], 1u);
        }
      }
    }
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&counts[b], local[b]);
}

__global__ void levels(const unsigned* counts, const RangeCode* ranges, int bins, int channels, LevelSamples samples,
                       double low, double high, double* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  double rangeLo = 0, rangeHi = 255;
  if (samples != LevelSamples::U8) {
    rangeLo = decodeOrdered(ranges[c].lo);
    rangeHi = decodeOrdered(ranges[c].hi);
  }
  levelsFromHistogram(counts + static_cast<std::size_t>(c) * bins, bins, samples, rangeLo, rangeHi, low, high,
                      out[2 * c], out[2 * c + 1]);
}

template <class T>
__global__ void stretch(Plane<const T> in, Plane<T> out, const double* levels) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= in.width) return;
  const double lo = levels[0], hi = levels[1];
  const T v = in(x, y);
  if constexpr (std::is_same_v<T, std::uint8_t>)
    out(x, y) = stretchU8(v, static_cast<int>(lo), static_cast<int>(hi));
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    out(x, y) = stretchU16(v, static_cast<int>(lo), static_cast<int>(hi));
  else
    out(x, y) = static_cast<T>(stretchFloat(static_cast<double>(v), lo, hi));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

template <class T>
void launchPlaneRange(Plane<const T> plane, RangeCode* range, cudaStream_t stream) {
  initRange<<<1, 1, 0, stream>>>(range);
  GPULAB_CHECK_LAUNCH("initRange");
  if (plane.width <= 0 || plane.height <= 0) return;
  planeRange<T><<<blocksFor(plane.height), kThreads, 0, stream>>>(plane, range);
  GPULAB_CHECK_LAUNCH("planeRange");
}

template <class T>
void launchHistogram(Plane<const T> plane, const RangeCode* range, int bins, unsigned* counts, cudaStream_t stream) {
  if (std::is_same_v<T, std::uint8_t> && bins != 256)
    throw std::invalid_argument("a u8 histogram has 256 bins, not " + std::to_string(bins));
  if (bins < 1 || bins > kMaxHistogramBins)
    throw std::invalid_argument("a histogram has 1 to " + std::to_string(kMaxHistogramBins) + " bins, not " +
                                std::to_string(bins));
  if (plane.width <= 0 || plane.height <= 0) return;
  const std::size_t shared = static_cast<std::size_t>(bins) * sizeof(unsigned);
  histogram<T><<<blocksFor(plane.height), kThreads, shared, stream>>>(plane, range, bins, counts);
  GPULAB_CHECK_LAUNCH("histogram");
}

void launchLevels(const unsigned* counts, const RangeCode* ranges, int bins, int channels, LevelSamples samples,
                  double low, double high, double* levelsOut, cudaStream_t stream) {
  if (channels <= 0) return;
  levels<<<1, 32, 0, stream>>>(counts, ranges, bins, channels, samples, low, high, levelsOut);
  GPULAB_CHECK_LAUNCH("levels");
}

template <class T>
void launchStretch(Plane<const T> in, Plane<T> out, const double* levels, cudaStream_t stream) {
  if (in.width <= 0 || in.height <= 0) return;
  const dim3 grid(divUp(in.width, kThreads), in.height);
  stretch<T><<<grid, kThreads, 0, stream>>>(in, out, levels);
  GPULAB_CHECK_LAUNCH("stretch");
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchPlaneRange<std::uint16_t>(Plane<const std::uint16_t>, RangeCode*, cudaStream_t);
template void launchPlaneRange<float>(Plane<const float>, RangeCode*, cudaStream_t);
template void launchPlaneRange<double>(Plane<const double>, RangeCode*, cudaStream_t);
template void launchHistogram<std::uint8_t>(Plane<const std::uint8_t>, const RangeCode*, int, unsigned*, cudaStream_t);
template void launchHistogram<std::uint16_t>(Plane<const std::uint16_t>, const RangeCode*, int, unsigned*,
                                             cudaStream_t);
template void launchHistogram<float>(Plane<const float>, const RangeCode*, int, unsigned*, cudaStream_t);
template void launchHistogram<double>(Plane<const double>, const RangeCode*, int, unsigned*, cudaStream_t);
template void launchStretch<std::uint8_t>(Plane<const std::uint8_t>, Plane<std::uint8_t>, const double*, cudaStream_t);
template void launchStretch<std::uint16_t>(Plane<const std::uint16_t>, Plane<std::uint16_t>, const double*,
                                           cudaStream_t);
template void launchStretch<float>(Plane<const float>, Plane<float>, const double*, cudaStream_t);
template void launchStretch<double>(Plane<const double>, Plane<double>, const double*, cudaStream_t);

}  // namespace gpulab::kernels
