// Extended-range floating point ("floatexp") for deep zooms: a double mantissa with its own int32
// exponent, real (FloatExp) and complex with one shared exponent (ComplexExp). Plain data, usable in
// host and device code, with bit-identical results on both.
//
// Contract
// - FloatExp {m, e} is m * 2^e with 1 <= |m| < 2, or zero as {0, kFloatExpZeroExponent}.
// - ComplexExp {x, y, e} is (x + iy) * 2^e with 1 <= max(|x|, |y|) < 2, or zero as {0, 0, kZero}.
//   One exponent for both parts makes the errors norm-wise, as with std::complex<double>: the smaller
//   part is accurate to 2^-53 of the larger one, and may even be subnormal. A result smaller than
//   2^-1022 of its operands counts as zero (the error bound of the operation allows it).
// - Every function takes normalised values and returns normalised values; fromDouble accepts any finite
//   double. Inputs must be finite. The int exponent is not checked for overflow: deep zoom needs
//   +-2^22 at most (1e-1000000), zero sits at -2^29 and any sum of two exponents stays inside int32.
// - Host and device agree bit for bit: only IEEE double operations rounded to nearest (+, *, fma, /,
//   sqrt), integer operations and reads/writes of the exponent field; every product that feeds a sum is
//   an explicit fma, so no compiler contraction can change a rounding.
// - Speed: normalising moves the double's exponent field into the int with integer instructions (no
//   frexp/ldexp calls, no FP64 instruction); an addition aligns by one multiplication with an exact
//   power of two made from bits, and keeps the larger operand alone when the two are more than 64
//   binades apart (the smaller is then below half an ulp and could not change the rounded sum).
#pragma once

#include <cmath>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#if defined(__CUDACC__)
#define GPULAB_FLOATEXP_HD __host__ __device__ __forceinline__
#else
#define GPULAB_FLOATEXP_HD inline __attribute__((always_inline))
#endif

namespace gpulab::kernels {

inline constexpr int kFloatExpZeroExponent = -(1 << 29);  ///< exponent of zero: below every other value

struct FloatExp {
  double m;  ///< 1 <= |m| < 2, or 0
  int e;
};

struct ComplexExp {
  double x;  ///< max(|x|, |y|) in [1, 2), or both 0
  double y;
  int e;
};

namespace floatexp_detail {

// The high 32 bits of a double: sign, 11 exponent bits, 20 fraction bits.
GPULAB_FLOATEXP_HD int highWord(double v) {
#if defined(__CUDA_ARCH__)
  return __double2hiint(v);
#else
  return static_cast<int>(static_cast<std::uint32_t>(std::bit_cast<std::uint64_t>(v) >> 32));
#endif
}

GPULAB_FLOATEXP_HD double withHighWord(double v, int high) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(high, __double2loint(v));
#else
  const std::uint64_t low = std::bit_cast<std::uint64_t>(v) & 0xffffffffu;
  return std::bit_cast<double>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(high)) << 32) | low);
#endif
}

/// The biased exponent field: 0 for zero and subnormals, 1..2046 for normal numbers.
GPULAB_FLOATEXP_HD int exponentField(double v) { return (highWord(v) >> 20) & 0x7ff; }

/// 2^k exactly, for -1022 <= k <= 1023.
GPULAB_FLOATEXP_HD double pow2(int k) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double((k + 1023) << 20, 0);
#else
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
#endif
}

/// m * 2^k rounded once, for any k (overflow gives +-inf, underflow a subnormal or +-0).
GPULAB_FLOATEXP_HD double scaleByPowerOfTwo(double m, int k) {
  if (k > 1023) return m * pow2(1023) * 2.0;
  if (k >= -1022) return m * pow2(k);
  // Two exact steps would round twice in the subnormal range: scale to just above it exactly, then
  // once into it. Below 2^-1086 a mantissa under 2 rounds to zero.
  if (k >= -1086) return (m * pow2(k + 64)) * pow2(-64);
  return m * 0.0;
}

}  // namespace floatexp_detail

// ---------------------------------------------------------------------------------------------
// Real

/// m * 2^e as a FloatExp; m must be zero or normal (every operation below produces such mantissas).
GPULAB_FLOATEXP_HD FloatExp normalize(double m, int e) {
  const int high = floatexp_detail::highWord(m);
  const int field = (high >> 20) & 0x7ff;
  FloatExp r;
  r.m = floatexp_detail::withHighWord(m, (high & static_cast<int>(0x800fffffu)) | (1023 << 20));
  r.e = e + field - 1023;
  if (field == 0) {
    r.m = 0.0;
    r.e = kFloatExpZeroExponent;
  }
  return r;
}

GPULAB_FLOATEXP_HD FloatExp zeroExp() { return {0.0, kFloatExpZeroExponent}; }

/// Any finite double (subnormals included).
GPULAB_FLOATEXP_HD FloatExp fromDouble(double v) {
  const int field = floatexp_detail::exponentField(v);
  if (field == 0 && v != 0.0) return normalize(v * floatexp_detail::pow2(64), -64);
  return normalize(v, 0);
}

/// Rounded once to double: +-inf above the double range, subnormal or +-0 below it.
GPULAB_FLOATEXP_HD double toDouble(FloatExp a) { return floatexp_detail::scaleByPowerOfTwo(a.m, a.e); }

GPULAB_FLOATEXP_HD FloatExp neg(FloatExp a) { return {-a.m, a.e}; }
GPULAB_FLOATEXP_HD FloatExp magnitude(FloatExp a) { return {fabs(a.m), a.e}; }
/// a * 2^k (exact).
GPULAB_FLOATEXP_HD FloatExp scale2(FloatExp a, int k) { return {a.m, a.m == 0.0 ? a.e : a.e + k}; }

GPULAB_FLOATEXP_HD FloatExp mul(FloatExp a, FloatExp b) { return normalize(a.m * b.m, a.e + b.e); }
GPULAB_FLOATEXP_HD FloatExp sqr(FloatExp a) { return normalize(a.m * a.m, a.e + a.e); }
GPULAB_FLOATEXP_HD FloatExp divide(FloatExp a, FloatExp b) { return normalize(a.m / b.m, a.e - b.e); }

/// sqrt(|a|).
GPULAB_FLOATEXP_HD FloatExp squareRoot(FloatExp a) {
  if (a.m == 0.0) return zeroExp();
  // An even exponent halves exactly; an odd one moves a factor 2 into the mantissa first.
  const int odd = a.e & 1;
  return normalize(::sqrt(fabs(a.m) * (odd ? 2.0 : 1.0)), (a.e - odd) / 2);
}

GPULAB_FLOATEXP_HD FloatExp add(FloatExp a, FloatExp b) {
  const bool aLarger = a.e >= b.e;
  const double large = aLarger ? a.m : b.m;
  const double small = aLarger ? b.m : a.m;
  const int e = aLarger ? a.e : b.e;
  const int shift = e - (aLarger ? b.e : a.e);
  // |small| >= 1 (or 0), so small * 2^-64 is still normal and the product exact.
  return normalize(large + small * floatexp_detail::pow2(-(shift < 64 ? shift : 64)), e);
}

GPULAB_FLOATEXP_HD FloatExp sub(FloatExp a, FloatExp b) { return add(a, neg(b)); }

/// |a| < |b|.
GPULAB_FLOATEXP_HD bool absLess(FloatExp a, FloatExp b) { return a.e < b.e || (a.e == b.e && fabs(a.m) < fabs(b.m)); }

// ---------------------------------------------------------------------------------------------
// Complex (one exponent)

/// (x + iy) * 2^e as a ComplexExp; x and y must be finite and max(|x|, |y|) below 2^1022.
GPULAB_FLOATEXP_HD ComplexExp normalize(double x, double y, int e) {
  const int fx = floatexp_detail::exponentField(x);
  const int fy = floatexp_detail::exponentField(y);
  const int field = fx > fy ? fx : fy;
  const double s = floatexp_detail::pow2(1023 - field);
  ComplexExp r{x * s, y * s, e + field - 1023};
  if (field == 0) r = {0.0, 0.0, kFloatExpZeroExponent};
  return r;
}

GPULAB_FLOATEXP_HD ComplexExp zeroComplexExp() { return {0.0, 0.0, kFloatExpZeroExponent}; }

/// Any finite pair of doubles.
GPULAB_FLOATEXP_HD ComplexExp fromDoubles(double x, double y) {
  const int fx = floatexp_detail::exponentField(x);
  const int fy = floatexp_detail::exponentField(y);
  const int field = fx > fy ? fx : fy;
  if (field == 0 && (x != 0.0 || y != 0.0)) {  // both subnormal: lift into the normal range first
    const double s = floatexp_detail::pow2(64);
    return normalize(x * s, y * s, -64);
  }
  if (field > 2000) {  // keep the normalising scale factor representable
    const double s = floatexp_detail::pow2(-64);
    return normalize(x * s, y * s, 64);
  }
  return normalize(x, y, 0);
}

/// The complex number whose parts are x and y.
GPULAB_FLOATEXP_HD ComplexExp fromParts(FloatExp x, FloatExp y) {
  const int e = x.e > y.e ? x.e : y.e;
  // The smaller part shifts right, possibly into the subnormal range or to zero (norm-wise exact).
  return normalize(floatexp_detail::scaleByPowerOfTwo(x.m, x.e - e), floatexp_detail::scaleByPowerOfTwo(y.m, y.e - e),
                   e);
}

/// Each part rounded once to double.
GPULAB_FLOATEXP_HD double toDoubleReal(ComplexExp a) { return floatexp_detail::scaleByPowerOfTwo(a.x, a.e); }
GPULAB_FLOATEXP_HD double toDoubleImag(ComplexExp a) { return floatexp_detail::scaleByPowerOfTwo(a.y, a.e); }

GPULAB_FLOATEXP_HD ComplexExp neg(ComplexExp a) { return {-a.x, -a.y, a.e}; }
/// a * 2^k (exact).
GPULAB_FLOATEXP_HD ComplexExp scale2(ComplexExp a, int k) {
  return {a.x, a.y, a.x == 0.0 && a.y == 0.0 ? a.e : a.e + k};
}

GPULAB_FLOATEXP_HD ComplexExp mul(ComplexExp a, ComplexExp b) {
  const double x = fma(a.x, b.x, -(a.y * b.y));
  const double y = fma(a.x, b.y, a.y * b.x);
  return normalize(x, y, a.e + b.e);
}

GPULAB_FLOATEXP_HD ComplexExp sqr(ComplexExp a) {
  const double x = fma(a.x, a.x, -(a.y * a.y));
  const double y = (a.x + a.x) * a.y;
  return normalize(x, y, a.e + a.e);
}

/// a times a real factor.
GPULAB_FLOATEXP_HD ComplexExp mul(ComplexExp a, FloatExp r) { return normalize(a.x * r.m, a.y * r.m, a.e + r.e); }

GPULAB_FLOATEXP_HD ComplexExp add(ComplexExp a, ComplexExp b) {
  const bool aLarger = a.e >= b.e;
  const ComplexExp& large = aLarger ? a : b;
  const ComplexExp& small = aLarger ? b : a;
  const int shift = large.e - small.e;
  const double s = floatexp_detail::pow2(-(shift < 64 ? shift : 64));
  return normalize(large.x + small.x * s, large.y + small.y * s, large.e);
}

GPULAB_FLOATEXP_HD ComplexExp sub(ComplexExp a, ComplexExp b) { return add(a, neg(b)); }

/// |a|^2 = x^2 + y^2 (no underflow: that is what it is for).
GPULAB_FLOATEXP_HD FloatExp norm2(ComplexExp a) { return normalize(fma(a.x, a.x, a.y * a.y), a.e + a.e); }

/// |a|.
GPULAB_FLOATEXP_HD FloatExp magnitude(ComplexExp a) { return squareRoot(norm2(a)); }

/// a / b (b nonzero), as a * conj(b) / |b|^2.
GPULAB_FLOATEXP_HD ComplexExp divide(ComplexExp a, ComplexExp b) {
  const double d = fma(b.x, b.x, b.y * b.y);
  const double x = fma(a.x, b.x, a.y * b.y) / d;
  const double y = fma(a.y, b.x, -(a.x * b.y)) / d;
  return normalize(x, y, a.e - b.e);
}

}  // namespace gpulab::kernels
