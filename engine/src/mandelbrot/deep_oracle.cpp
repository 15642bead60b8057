#include "gpulab/mandelbrot/deep_oracle.hpp"

#include <stdexcept>
#include <string>

#include "gpulab/kernels/mandelbrot.cuh"  // escapedValue: the renderers' smooth count
#include "internal/mpfr_real.hpp"

namespace gpulab {

namespace {

void checkArguments(int maxIterations, int precisionBits) {
  if (maxIterations < 1 || maxIterations > kMaxDeepIterations)
    throw std::invalid_argument("maximum iterations " + std::to_string(maxIterations) + " is outside 1..16777216");
  if (precisionBits < 64 || precisionBits > 400'000)
    throw std::invalid_argument("oracle precision " + std::to_string(precisionBits) + " bits is outside 64..400000");
}

// |z|^2 > 2^16 needs x^2 or y^2 >= 2^15: MPFR exponent (of 0.5 <= mantissa < 1) 16 or more.
bool mayEscape(mpfr_srcptr x2, mpfr_srcptr y2) {
  return (!mpfr_zero_p(x2) && mpfr_get_exp(x2) >= 16) || (!mpfr_zero_p(y2) && mpfr_get_exp(y2) >= 16);
}

OracleEscape iterate(mpfr_srcptr cx, mpfr_srcptr cy, int maxIterations, int precisionBits) {
  MpfrOrbitPoint z(precisionBits);  // z_n, from z_0 = 0
  for (int n = 0; n < maxIterations; ++n) {
    if (mayEscape(z.x2, z.y2)) {
      mpfr_add(z.t, z.x2, z.y2, MPFR_RNDN);
      if (mpfr_cmp_ui(z.t, 65536) > 0) return {n, mpfr_get_d(z.t, MPFR_RNDN)};
    }
    z.step(cx, cy);
  }
  return {};
}

}  // namespace

OracleEscape bruteForceEscape(const DecimalNumber& cx, const DecimalNumber& cy, int maxIterations, int precisionBits) {
  checkArguments(maxIterations, precisionBits);
  MpfrReal x(precisionBits), y(precisionBits);
  setDecimal(x, cx);
  setDecimal(y, cy);
  return iterate(x, y, maxIterations, precisionBits);
}

float bruteForcePixel(const DeepView& view, int i, int j, bool smooth, int precisionBits) {
  validate(view);
  const int bits = precisionBits > 0 ? precisionBits : referencePrecisionBits(view);
  checkArguments(view.maxIterations, bits);
  // c is formed with 64 bits more than the iteration needs, so the pixel sits where the view says.
  const int cbits = bits + 64;
  MpfrReal h(cbits), cx(cbits), cy(cbits), t(cbits);
  setDecimal(h, view.width.decimal());
  mpfr_div_ui(h, h, static_cast<unsigned long>(view.imageWidth), MPFR_RNDN);
  setDecimal(cx, view.centerX);
  setDecimal(cy, view.centerY);
  mpfr_mul_d(t, h, static_cast<double>(i) + 0.5 - 0.5 * view.imageWidth, MPFR_RNDN);
  mpfr_add(cx, cx, t, MPFR_RNDN);
  mpfr_mul_d(t, h, 0.5 * view.imageHeight - 0.5 - static_cast<double>(j), MPFR_RNDN);
  mpfr_add(cy, cy, t, MPFR_RNDN);
  MpfrReal rx(bits), ry(bits);
  mpfr_set(rx, cx, MPFR_RNDN);
  mpfr_set(ry, cy, MPFR_RNDN);
  const OracleEscape e = iterate(rx, ry, view.maxIterations, bits);
  if (e.count < 0) return kernels::kMandelbrotInterior;
  return kernels::escapedValue(e.count, static_cast<float>(e.modulus2), smooth);
}

}  // namespace gpulab
