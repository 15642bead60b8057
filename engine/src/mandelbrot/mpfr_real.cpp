#include "internal/mpfr_real.hpp"

#include <memory>
#include <stdexcept>
#include <string>

namespace gpulab {

void setDecimal(mpfr_ptr target, const DecimalNumber& value) {
  if (value.isZero()) {
    mpfr_set_zero(target, 1);
    return;
  }
  // Scientific text keeps a 1e-100000 from spelling out its zeros.
  mpfr_set_str(target, value.toScientific().c_str(), 10, MPFR_RNDN);
}

DecimalNumber toDecimal(mpfr_srcptr value, int digits) {
  if (mpfr_zero_p(value)) return {};
  mpfr_exp_t exponent = 0;
  const std::unique_ptr<char, void (*)(char*)> text(
      mpfr_get_str(nullptr, &exponent, 10, static_cast<std::size_t>(digits > 0 ? digits : 0), value, MPFR_RNDN),
      [](char* p) { mpfr_free_str(p); });
  // value = 0.ddd * 10^exponent
  std::string s(text.get());
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.erase(0, 1);
  return DecimalNumber::parse((negative ? "-0." : "0.") + s + "e" + std::to_string(exponent));
}

ExtendedReal toExtendedReal(mpfr_srcptr value) {
  if (mpfr_zero_p(value)) return {};
  long exponent = 0;
  const double d = mpfr_get_d_2exp(&exponent, value, MPFR_RNDN);  // |d| in [0.5, 1)
  return {2.0 * d, static_cast<int>(exponent - 1)};
}

void setExtended(mpfr_ptr target, ExtendedReal value) {
  mpfr_set_d(target, value.mantissa, MPFR_RNDN);
  if (value.mantissa != 0.0) mpfr_mul_2si(target, target, value.exponent, MPFR_RNDN);
}

DecimalNumber offsetBy(const DecimalNumber& value, ExtendedReal delta, int precisionBits) {
  if (precisionBits < 64 || precisionBits > 400'000)
    throw std::invalid_argument("precision " + std::to_string(precisionBits) + " bits is outside 64..400000");
  MpfrReal x(precisionBits), d(precisionBits);
  setDecimal(x, value);
  setExtended(d, delta);
  mpfr_add(x, x, d, MPFR_RNDN);
  return toDecimal(x);
}

}  // namespace gpulab
