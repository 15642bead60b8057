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

/// target = value, rounded to target's precision.
void setDecimal(mpfr_ptr target, const DecimalNumber& value);
/// `digits` significant decimal digits of value (0: as many as its precision holds, plus 2).
DecimalNumber toDecimal(mpfr_srcptr value, int digits = 0);
/// value rounded to a 53-bit mantissa with an unbounded exponent.
ExtendedReal toExtendedReal(mpfr_srcptr value);
/// target = value (exact).
void setExtended(mpfr_ptr target, ExtendedReal value);

}  // namespace gpulab
