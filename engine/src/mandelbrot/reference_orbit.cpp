#include "gpulab/mandelbrot/reference_orbit.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gpulab/core/operation.hpp"  // OperationCancelled, cancelRequested
#include "gpulab/kernels/floatexp.cuh"
#include "internal/mpfr_real.hpp"

namespace gpulab {

namespace {

constexpr double kEscapeRadius2 = 65536.0;  // R = 2^8, as the kernels
constexpr int kCancelInterval = 1024;
// Below 2^-1000 a part of Z may round to a subnormal or to 0 in double: take the floatexp copy
// straight from MPFR there.
constexpr long kTinyExponent = -1000;

bool tiny(mpfr_srcptr v) { return !mpfr_zero_p(v) && mpfr_get_exp(v) < kTinyExponent; }

ExtendedComplex extendedPoint(mpfr_srcptr x, mpfr_srcptr y, double dx, double dy) {
  kernels::ComplexExp z;
  if (tiny(x) || tiny(y)) {
    const ExtendedReal ex = toExtendedReal(x);
    const ExtendedReal ey = toExtendedReal(y);
    z = kernels::fromParts({ex.mantissa, ex.exponent}, {ey.mantissa, ey.exponent});
  } else {
    z = kernels::fromDoubles(dx, dy);
  }
  return {z.x, z.y, z.e};
}

}  // namespace

ReferenceOrbit ReferenceOrbit::compute(const DecimalNumber& cx, const DecimalNumber& cy, int maxIterations,
                                       int precisionBits, const std::atomic<bool>* cancel) {
  if (maxIterations < 1 || maxIterations > kMaxDeepIterations)
    throw std::invalid_argument("maximum iterations " + std::to_string(maxIterations) + " is outside 1..16777216");
  if (precisionBits < kMinPrecisionBits || precisionBits > kMaxPrecisionBits)
    throw std::invalid_argument("reference precision " + std::to_string(precisionBits) + " bits is outside 64..400000");
  const DecimalNumber limit = DecimalNumber::fromDouble(kMaxDeepCoordinate);
  if (cx > limit || cx < -limit || cy > limit || cy < -limit)
    throw std::invalid_argument("the reference point lies outside -10..10");

  const auto start = std::chrono::steady_clock::now();
  ReferenceOrbit r;
  r.cx_ = cx;
  r.cy_ = cy;
  r.precisionBits_ = precisionBits;
  r.maxIterations_ = maxIterations;
  r.doubles_.reserve(2 * static_cast<std::size_t>(maxIterations));
  r.extended_.reserve(static_cast<std::size_t>(maxIterations));
  r.doubles_.insert(r.doubles_.end(), {0.0, 0.0});  // Z_0
  r.extended_.push_back(ExtendedComplex{});

  // Every number is allocated once; the loop only calls MPFR arithmetic and two roundings to double.
  MpfrOrbitPoint z(precisionBits);
  MpfrReal ccx(precisionBits), ccy(precisionBits);
  setDecimal(ccx, cx);
  setDecimal(ccy, cy);
  // Z_1 = C is kept even for maxIterations = 1, so that every orbit has the 2 points the kernels expect.
  const int end = maxIterations > 2 ? maxIterations : 2;
  for (int m = 1; m < end; ++m) {
    if (m == 1) {  // Z_1 = C
      mpfr_set(z.x, ccx, MPFR_RNDN);
      mpfr_set(z.y, ccy, MPFR_RNDN);
      z.square();
    } else {
      z.step(ccx, ccy);
    }
    const double dx = mpfr_get_d(z.x, MPFR_RNDN);
    const double dy = mpfr_get_d(z.y, MPFR_RNDN);
    r.doubles_.push_back(dx);
    r.doubles_.push_back(dy);
    r.extended_.push_back(extendedPoint(z.x, z.y, dx, dy));
    if (dx * dx + dy * dy > kEscapeRadius2) {
      r.escaped_ = true;
      break;
    }
    if (m % kCancelInterval == 0 && cancelRequested(cancel)) throw OperationCancelled();
  }
  r.doubles_.shrink_to_fit();
  r.extended_.shrink_to_fit();
  r.milliseconds_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

CentreOffset centreOffset(const DeepView& view, const ReferenceOrbit& orbit) {
  if (view.centerX == orbit.centerX() && view.centerY == orbit.centerY()) return {};
  // Both centres are given to about the orbit's precision, so the differences are exact there.
  const int bits = orbit.precisionBits();
  MpfrReal dx(bits), dy(bits), c(bits);
  setDecimal(dx, view.centerX);
  setDecimal(c, orbit.centerX());
  mpfr_sub(dx, dx, c, MPFR_RNDN);
  setDecimal(dy, view.centerY);
  setDecimal(c, orbit.centerY());
  mpfr_sub(dy, dy, c, MPFR_RNDN);
  CentreOffset offset{toExtendedReal(dx), toExtendedReal(dy), {}};
  mpfr_hypot(dx, dx, dy, MPFR_RNDU);
  offset.length = toExtendedReal(dx);
  return offset;
}

ExtendedReal maxPixelOffset(const DeepView& view, const CentreOffset& offset) {
  const ExtendedReal h = pixelSpacing(view);
  const double diagonal = 0.5 * std::hypot(static_cast<double>(view.imageWidth), static_cast<double>(view.imageHeight));
  const kernels::FloatExp hf{h.mantissa, h.exponent};
  kernels::FloatExp r = kernels::add(kernels::FloatExp{offset.length.mantissa, offset.length.exponent},
                                     kernels::mul(hf, kernels::fromDouble(diagonal)));
  r = kernels::mul(r, kernels::fromDouble(1.0 + 0x1p-20));  // rounding of the terms above
  return {r.m, r.e};
}

ExtendedReal maxPixelOffset(const DeepView& view, const ReferenceOrbit& orbit) {
  return maxPixelOffset(view, centreOffset(view, orbit));
}

}  // namespace gpulab
