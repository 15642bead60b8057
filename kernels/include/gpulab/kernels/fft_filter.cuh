// Frequency-domain filtering on half spectra (cuFFT's R2C layout), and the helpers the FFT layer
// needs around cuFFT. The gain formulas are GPULAB_HD so the GPU kernel, the OpenCV baseline and the
// naive reference evaluate the very same expressions.
//
// Half-spectrum layout: `planes` planes of fftHeight rows of (fftWidth/2 + 1) complex values, rows
// and planes packed. Element (kx, ky) holds frequency fx = kx / fftWidth, fy = sy / fftHeight
// cycles/pixel, with sy = ky for ky <= fftHeight/2 and ky - fftHeight above.
#pragma once

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cmath>
#include <cstddef>
#include <limits>

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

template <class Real>
struct ComplexOf;
template <>
struct ComplexOf<float> {
  using type = float2;
};
template <>
struct ComplexOf<double> {
  using type = double2;
};
template <class Real>
using Complex = typename ComplexOf<Real>::type;

enum class FreqBand : int { Lowpass = 0, Highpass = 1, Bandpass = 2, Bandstop = 3 };
enum class FreqShape : int { Ideal = 0, Gaussian = 1, Butterworth = 2 };

/// A validated filter (the engine checks cutoffs and order before anything is launched).
struct FreqMask {
  FreqBand band = FreqBand::Lowpass;
  FreqShape shape = FreqShape::Gaussian;
  double cutoff = 0.5;   ///< c: fraction of Nyquist
  double cutoff2 = 1.0;  ///< band filters: the upper edge, > cutoff
  int order = 2;         ///< Butterworth order n >= 1
};

/// Squared normalised radial frequency r^2 = (fx/0.5)^2 + (fy/0.5)^2 of the signed frequency
/// indices (sx, sy) of an fftWidth x fftHeight transform: r = 1 at Nyquist along either axis.
template <class Real>
GPULAB_HD Real normalisedRadiusSquared(int sx, int sy, int fftWidth, int fftHeight) {
  const Real fx = Real(2) * Real(sx) / Real(fftWidth);
  const Real fy = Real(2) * Real(sy) / Real(fftHeight);
  return fx * fx + fy * fy;
}

/// Signed frequency index of DFT bin k of an n-point transform: k for k <= n/2, k - n above.
GPULAB_HD int signedFrequency(int k, int n) { return k <= n / 2 ? k : k - n; }

/// q^n for n >= 1 by repeated squaring (exact for the small integer orders Butterworth uses).
template <class Real>
GPULAB_HD Real powInt(Real q, int n) {
  Real result = Real(1);
  while (n > 0) {
    if (n & 1) result *= q;
    q *= q;
    n >>= 1;
  }
  return result;
}

/// Low-pass gain at squared radius r2 for cutoff c:
///   ideal        1 if r <= c, else 0
///   gaussian     exp(-r^2 / (2 c^2))
///   butterworth  1 / (1 + (r / c)^(2n))
template <class Real>
GPULAB_HD Real lowpassGain(FreqShape shape, Real r2, Real c, int order) {
  const Real c2 = c * c;
  switch (shape) {
    case FreqShape::Ideal:
      return r2 <= c2 ? Real(1) : Real(0);
    case FreqShape::Gaussian: {
      const Real x = -r2 / (Real(2) * c2);
      if constexpr (sizeof(Real) == sizeof(float))
        return expf(x);
      else
        return exp(x);
    }
    case FreqShape::Butterworth:
      return Real(1) / (Real(1) + powInt(r2 / c2, order));
  }
  return Real(0);
}

/// The filter's gain at squared radius r2, with L(c) the low-pass above:
///   lowpass  L(c)           highpass  1 - L(c)
///   bandpass L(c2) (1 - L(c))          bandstop  1 - L(c2) (1 - L(c))
template <class Real>
GPULAB_HD Real freqGain(const FreqMask& m, Real r2) {
  const Real low = lowpassGain<Real>(m.shape, r2, Real(m.cutoff), m.order);
  switch (m.band) {
    case FreqBand::Lowpass:
      return low;
    case FreqBand::Highpass:
      return Real(1) - low;
    case FreqBand::Bandpass:
      return lowpassGain<Real>(m.shape, r2, Real(m.cutoff2), m.order) * (Real(1) - low);
    case FreqBand::Bandstop:
      return Real(1) - lowpassGain<Real>(m.shape, r2, Real(m.cutoff2), m.order) * (Real(1) - low);
  }
  return Real(0);
}

/// spectrum(kx, ky) *= freqGain(r2(kx, ky)) * scale for every plane (scale folds in 1/(W*H)).
/// Async on `stream`.
template <class Real>
void launchApplyFreqMask(Complex<Real>* spectrum, int fftWidth, int fftHeight, int planes, FreqMask mask, Real scale,
                         cudaStream_t stream);

/// Every value of `count` complex values per plane times `scale`.
template <class Real>
void launchScaleSpectrum(Complex<Real>* spectrum, std::size_t count, Real scale, cudaStream_t stream);

/// After a length-n real-to-complex transform that wrote bins 0..n/2 of each plane (plane stride
/// n complex values), fills bins n/2+1..n-1 with the conjugates of bins n-1..n/2+1, so each plane
/// holds its full n-point spectrum. For fftWidth == 1 transforms, whose half spectrum is a column.
template <class Real>
void launchHermitianFill(Complex<Real>* spectrum, int n, int planes, cudaStream_t stream);

/// 1x1 transforms, which cuFFT does not take: forward writes (real, 0), inverse takes the real part.
template <class Real>
void launchTrivialForward(const Real* real, std::size_t realPlaneStride, Complex<Real>* spectrum, int planes,
                          cudaStream_t stream);
template <class Real>
void launchTrivialInverse(const Complex<Real>* spectrum, Real* real, std::size_t realPlaneStride, int planes,
                          cudaStream_t stream);

/// Range scaling around the transforms, so finite input near a type's limits (|x| ~ 3e38 in float,
/// or denormals) gives finite output: the largest finite |value| of the `stack.height` rows of
/// `stack`, as its bit pattern (float bits zero-extended), atomically maxed into *maxBits, which the
/// caller zeroes first. NaN and infinities are skipped (they carry no scale).
template <class Real>
void launchMaxFiniteAbs(Plane<const Real> stack, unsigned long long* maxBits, cudaStream_t stream);

/// Below 2^-64 or from 2^64 up, a largest |value| is brought to [0.5, 1) (internal/fft_range.hpp).
inline constexpr int kFftRangeLimitExponent = 64;

/// The exponent e to scale by 2^-e before the transform (and 2^e after) for a largest finite
/// |value| of `maxAbs`; 0 for ordinary ranges, zero and non-finite values. Host and device: the
/// fused path chooses it on the GPU, with no wait for the host.
GPULAB_HD int fftRangeExponentOf(double maxAbs) {
  if (!(maxAbs > 0) || !(maxAbs <= std::numeric_limits<double>::max())) return 0;  // zero, NaN, inf
  int e = 0;
  frexp(maxAbs, &e);  // maxAbs = m 2^e, m in [0.5, 1)
  return e > kFftRangeLimitExponent || e <= -kFftRangeLimitExponent ? e : 0;
}

/// How far beyond the largest finite Real a descaled transform result may fall and still be taken as
/// that value (descalePow2): 2^-16 relative, above the float transforms' rounding (a few ulps times
/// log2 of the size) and below their accuracy contract (2e-5 of the largest sample).
inline constexpr double kFftRangeSaturation = 1.0 / 65536;

/// x * 2^exponent, the result of a scaled transform brought back to its range (internal/fft_range.hpp):
/// exact unless the product under- or overflows. A product beyond the largest finite Real by no more
/// than kFftRangeSaturation is that largest value (of x's sign): the true result may lie within the
/// range (a low-pass of FLT_MAX everywhere is FLT_MAX) and the transform's rounding must not turn it
/// into inf; further beyond, the true value does not fit and the result is inf. NaN stays NaN.
template <class Real>
GPULAB_HD Real descalePow2(Real x, int exponent) {
#if defined(__CUDA_ARCH__)
  const Real r = ldexp(x, exponent);
  const Real limit = ldexp(std::numeric_limits<Real>::max(), -exponent);
#else
  const Real r = std::ldexp(x, exponent);
  const Real limit = std::ldexp(std::numeric_limits<Real>::max(), -exponent);
#endif
  const Real largest = std::numeric_limits<Real>::max();
  if (r <= largest && r >= -largest) return r;  // finite, or NaN below
  if (r != r) return r;
  const Real magnitude = x < 0 ? -x : x;
  if (magnitude <= limit * static_cast<Real>(1.0 + kFftRangeSaturation)) return x < 0 ? -largest : largest;
  return r;
}

/// dst(x, y) = descalePow2(src(x, y), exponent) for the `src.height` rows of src (dst may be src):
/// exact unless the product under- or overflows.
template <class Real>
void launchScalePow2(Plane<const Real> src, Plane<Real> dst, int exponent, cudaStream_t stream);

/// Luminance of a plane stack (1 channel: itself; 2: the first; 3 or 4: 0.299 R + 0.587 G + 0.114 B,
/// alpha ignored) as packed float rows of width `stack.width`.
template <class T>
void launchLuminance(Plane<const T> stack, int channels, float* dst, cudaStream_t stream);

/// out(x, y) = log(1 + |F(kx, ky)|) with the spectrum centred (numpy.fft.fftshift): output pixel
/// (x, y) shows bin kx = (x - W/2) mod W, ky = (y - H/2) mod H; bins outside the half spectrum are
/// read through Hermitian symmetry. `out` is W x H.
void launchLogMagnitudeCentred(const float2* halfSpectrum, int fftWidth, int fftHeight, Plane<float> out,
                               cudaStream_t stream);

}  // namespace gpulab::kernels
