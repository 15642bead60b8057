// MPFR behind the engine's deep-zoom code (engine-private: no public header names MPFR). A move-free
// RAII holder for mpfr_t and the conversions between MPFR and the public number types.
#pragma once

#include <mpfr.h>

#include "gpulab/mandelbrot/deep_number.hpp"

namespace gpulab {

/// One MPFR number of a fixed precision, zero at first. Not copyable or movable (mpfr_t is an array);
/// hold it by value where it is used, or in a std::unique_ptr.
class MpfrReal {
 public:
  explicit MpfrReal(long bits) {
    mpfr_init2(value_, static_cast<mpfr_prec_t>(bits));
    mpfr_set_zero(value_, 1);
  }
  ~MpfrReal() { mpfr_clear(value_); }
  MpfrReal(const MpfrReal&) = delete;
  MpfrReal& operator=(const MpfrReal&) = delete;

  mpfr_ptr get() noexcept { return value_; }
  mpfr_srcptr get() const noexcept { return value_; }
  operator mpfr_ptr() noexcept { return value_; }           // NOLINT(google-explicit-constructor): reads like mpfr_t
  operator mpfr_srcptr() const noexcept { return value_; }  // NOLINT(google-explicit-constructor)

 private:
  mpfr_t value_;
};

/// A point z = x + iy of a Mandelbrot orbit in MPFR with its squares x2, y2 kept (each step needs
/// them and escape tests read them), and one scratch number.
struct MpfrOrbitPoint {
  explicit MpfrOrbitPoint(long bits) : x(bits), y(bits), x2(bits), y2(bits), t(bits) {}

  /// z = z^2 + c, then the squares of the new z.
  void step(mpfr_srcptr cx, mpfr_srcptr cy) {
    mpfr_mul(t, x, y, MPFR_RNDN);
    mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
    mpfr_add(y, t, cy, MPFR_RNDN);
    mpfr_sub(x, x2, y2, MPFR_RNDN);
    mpfr_add(x, x, cx, MPFR_RNDN);
    square();
  }
  /// x2, y2 of the current z.
  void square() {
    mpfr_sqr(x2, x, MPFR_RNDN);
    mpfr_sqr(y2, y, MPFR_RNDN);
  }

  MpfrReal x, y, x2, y2, t;
};

/// target = value, rounded to target's precision.
void setDecimal(mpfr_ptr target, const DecimalNumber& value);
/// `digits` significant decimal digits of value (0: as many as its precision holds, plus 2).
DecimalNumber toDecimal(mpfr_srcptr value, int digits = 0);
/// value rounded to a 53-bit mantissa with an unbounded exponent.
ExtendedReal toExtendedReal(mpfr_srcptr value);
/// target = value (exact).
void setExtended(mpfr_ptr target, ExtendedReal value);

}  // namespace gpulab
