// Per-channel histograms of pitched planes, and the auto-levels stretch built on them.
//
// Binning (the one definition the engine's CPU baseline and reference follow):
//   u8:    256 bins, the bin is the value.
//   u16:   `bins` bins over [lo, hi], the plane's smallest and largest samples, in integers:
//          bin = (v - lo) * bins / (hi - lo + 1), so bin b holds the values lo + ceil(b * span / bins) ..
//          lo + ceil((b + 1) * span / bins) - 1 (span = hi - lo + 1; one value a bin when span <= bins).
//   float: `bins` bins over [lo, hi], the plane's smallest and largest finite samples:
//          bin = min(bins - 1, int((double(v) - lo) * (bins / (hi - lo)))), every bin 0 when hi == lo;
//          NaN and infinities are not counted.
// The range is found on the GPU first (launchPlaneRange) and read by the histogram kernel from device
// memory, so nothing waits on the host between the two. Counts are 32-bit (an image has at most
// kMaxImagePixels = 2^28 pixels). Each block counts into shared memory (privatised bins) and adds its
// non-zero bins to the global counts once.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// The most bins a float histogram may have (its shared-memory copy is 4 bytes a bin).
inline constexpr int kMaxHistogramBins = 8192;

/// A plane's finite range as the kernels keep it: two order-preserving 64-bit codes of doubles, so
/// that atomicMin / atomicMax on integers find the smallest and largest sample.
struct RangeCode {
  unsigned long long lo;
  unsigned long long hi;
};

GPULAB_HD unsigned long long encodeOrdered(double v) {
  unsigned long long u = 0;
#if defined(__CUDA_ARCH__)
  u = static_cast<unsigned long long>(__double_as_longlong(v));
#else
  static_assert(sizeof(double) == sizeof(unsigned long long));
  __builtin_memcpy(&u, &v, sizeof u);
#endif
  return (u >> 63) != 0 ? ~u : (u | 0x8000000000000000ull);
}

GPULAB_HD double decodeOrdered(unsigned long long u) {
  u = (u >> 63) != 0 ? (u & 0x7fffffffffffffffull) : ~u;
  double v = 0;
#if defined(__CUDA_ARCH__)
  v = __longlong_as_double(static_cast<long long>(u));
#else
  __builtin_memcpy(&v, &u, sizeof v);
#endif
  return v;
}

/// The float bin of v in [lo, hi] with scale = bins / (hi - lo) (0 when hi == lo); v finite, in range.
GPULAB_HD int histogramBin(double v, double lo, double scale, int bins) {
  const int b = static_cast<int>((v - lo) * scale);
  return b < 0 ? 0 : (b >= bins ? bins - 1 : b);
}

/// The u16 bin of v in [lo, hi] (integer arithmetic, exact everywhere).
GPULAB_HD int histogramBinU16(int v, int lo, int hi, int bins) {
  return static_cast<int>(static_cast<long long>(v - lo) * bins / (static_cast<long long>(hi) - lo + 1));
}

/// The smallest u16 value of bin b of `bins` over [lo, hi] (b == bins: one past the largest, hi + 1).
GPULAB_HD int firstValueOfBinU16(int b, int lo, int hi, int bins) {
  const long long span = static_cast<long long>(hi) - lo + 1;
  return lo + static_cast<int>((static_cast<long long>(b) * span + bins - 1) / bins);
}

/// The samples a histogram's levels are taken from (levelsFromHistogram, launchLevels).
enum class LevelSamples : int { U8, U16, Float };

/// Order statistics of a histogram: the bins holding the samples of rank floor(low * n) and
/// ceil(high * n) - 1 (0-based, clamped to [0, n - 1]) among its n counted samples; low and high are
/// fractions (0.005, 0.995). Returns false when the histogram is empty.
GPULAB_HD bool percentileBins(const unsigned* counts, int bins, double low, double high, int& lowBin, int& highBin) {
  unsigned long long n = 0;
  for (int b = 0; b < bins; ++b) n += counts[b];
  if (n == 0) return false;
  auto clampRank = [n](double r) {
    if (!(r > 0)) return 0ull;
    const auto k = static_cast<unsigned long long>(r);
    return k >= n ? n - 1 : k;
  };
  const unsigned long long kLow = clampRank(::floor(low * static_cast<double>(n)));
  const double up = ::ceil(high * static_cast<double>(n)) - 1;
  const unsigned long long kHigh = clampRank(up);
  lowBin = highBin = -1;
  unsigned long long seen = 0;
  for (int b = 0; b < bins; ++b) {
    seen += counts[b];
    if (lowBin < 0 && seen > kLow) lowBin = b;
    if (highBin < 0 && seen > kHigh) {
      highBin = b;
      break;
    }
  }
  return true;
}

/// The levels of one channel from its histogram: u8 the bins themselves; u16 the smallest value of
/// the low bin and the largest value of the high bin (integers: exact; the samples themselves when
/// the channel spans at most `bins` values); float the lower edge of the low bin and the upper edge of
/// the high bin (lo + b * (hi - lo) / bins). {0, 0} (no stretch) for an empty histogram.
GPULAB_HD void levelsFromHistogram(const unsigned* counts, int bins, LevelSamples samples, double rangeLo,
                                   double rangeHi, double low, double high, double& levelLo, double& levelHi) {
  int lb = 0, hb = 0;
  levelLo = levelHi = 0;
  if (!percentileBins(counts, bins, low, high, lb, hb)) return;
  if (samples == LevelSamples::U8) {
    levelLo = lb;
    levelHi = hb;
    return;
  }
  if (samples == LevelSamples::U16) {
    const int lo = static_cast<int>(rangeLo), hi = static_cast<int>(rangeHi);
    levelLo = firstValueOfBinU16(lb, lo, hi, bins);
    levelHi = firstValueOfBinU16(hb + 1, lo, hi, bins) - 1;
    return;
  }
  const double width = (rangeHi - rangeLo) / bins;
  // Rounded as the host rounds it: nvcc would fuse lo + b * width into one fma, a different last bit.
  auto edge = [&](int b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(rangeLo, __dmul_rn(b, width));
#else
    return rangeLo + b * width;
#endif
  };
  levelLo = edge(lb);
  levelHi = hb + 1 >= bins ? rangeHi : edge(hb + 1);
}

/// The stretch of one u8 sample between integer levels: round-half-up of (v - lo) * 255 / (hi - lo),
/// saturated; v unchanged when hi <= lo. Integer arithmetic, exact everywhere.
GPULAB_HD std::uint8_t stretchU8(int v, int lo, int hi) {
  const int d = hi - lo;
  if (d <= 0) return static_cast<std::uint8_t>(v);
  const int t = v - lo;
  if (t <= 0) return 0;
  if (t >= d) return 255;
  return static_cast<std::uint8_t>((t * 510 + d) / (2 * d));
}

/// The stretch of one u16 sample between integer levels to 0..65535: round-half-up of
/// (v - lo) * 65535 / (hi - lo), saturated; v unchanged when hi <= lo. Integer arithmetic, exact.
GPULAB_HD std::uint16_t stretchU16(int v, int lo, int hi) {
  const long long d = static_cast<long long>(hi) - lo;
  if (d <= 0) return static_cast<std::uint16_t>(v);
  const long long t = static_cast<long long>(v) - lo;
  if (t <= 0) return 0;
  if (t >= d) return 65535;
  return static_cast<std::uint16_t>((t * 131070 + d) / (2 * d));
}

/// The stretch of one float sample to [0, 1]: (v - lo) / (hi - lo) in double, clamped (NaN stays
/// NaN); v unchanged when !(hi > lo).
GPULAB_HD double stretchFloat(double v, double lo, double hi) {
  if (!(hi > lo)) return v;
  const double r = (v - lo) / (hi - lo);
  return r < 0 ? 0.0 : (r > 1 ? 1.0 : r);
}

/// range <- the finite range of `plane` (a RangeCode in device memory; lo > hi when there is no
/// finite sample). T std::uint16_t, float or double. Asynchronous on `stream`.
template <class T>
void launchPlaneRange(Plane<const T> plane, RangeCode* range, cudaStream_t stream);

/// counts[0, bins) += the histogram of `plane` (counts zeroed by the caller). u8: bins must be 256 and
/// `range` is not read; u16 and float: `range` from launchPlaneRange. Asynchronous on `stream`.
template <class T>
void launchHistogram(Plane<const T> plane, const RangeCode* range, int bins, unsigned* counts, cudaStream_t stream);

/// levels[2c], levels[2c + 1] <- levelsFromHistogram of channel c's counts (counts + c * bins) for
/// c < channels; `ranges` as launchPlaneRange left them (not read for u8). Asynchronous on `stream`.
void launchLevels(const unsigned* counts, const RangeCode* ranges, int bins, int channels, LevelSamples samples,
                  double low, double high, double* levels, cudaStream_t stream);

/// out <- the stretch of `in` between levels[0] and levels[1] (device memory; stretchU8 / stretchU16 /
/// stretchFloat).
/// Same sizes; may be the same plane. Asynchronous on `stream`.
template <class T>
void launchStretch(Plane<const T> in, Plane<T> out, const double* levels, cudaStream_t stream);

}  // namespace gpulab::kernels
