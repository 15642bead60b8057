#include "gpulab/mandelbrot/bla_table.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "gpulab/kernels/floatexp.cuh"
#include "gpulab/kernels/mandelbrot_deep.cuh"

namespace gpulab {

namespace {

using kernels::ComplexExp;
using kernels::FloatExp;

FloatExp fe(ExtendedReal v) { return {v.mantissa, v.exponent}; }
ExtendedReal ext(FloatExp v) { return {v.m, v.e}; }
ComplexExp ce(const ExtendedComplex& v) { return {v.x, v.y, v.exponent}; }
ExtendedComplex ext(ComplexExp v) { return {v.x, v.y, v.e}; }

int levelStart(int capacity, int level) { return capacity - (capacity >> (level - 1)); }

// Entries whose A or B reach beyond this binary exponent are not copied to double: a B dc or A dz
// product could overflow there, and such an entry only ever serves deltas far below the double range.
constexpr int kMaxDoubleExponent = 1000;

double elapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// The radius of x then y: max(0, min(r_x, (r_y - |B_x| dcMax) / |A_x|)).
FloatExp mergedRadius(FloatExp rx, FloatExp ry, FloatExp absAx, FloatExp absBx, FloatExp dcMax) {
  const FloatExp slack = kernels::sub(ry, kernels::mul(absBx, dcMax));
  if (slack.m <= 0.0 || absAx.m == 0.0) return kernels::zeroExp();
  const FloatExp r = kernels::divide(slack, absAx);
  return kernels::absLess(r, rx) ? r : rx;
}

}  // namespace

BlaTable::BlaTable(const ReferenceOrbit& orbit, ExtendedReal dcMax, double epsilon) : epsilon_(epsilon) {
  if (!(epsilon > 0.0 && epsilon < 1.0))
    throw std::invalid_argument("BLA epsilon " + std::to_string(epsilon) + " is outside (0, 1)");
  if (dcMax.mantissa < 0.0 || !std::isfinite(dcMax.mantissa))
    throw std::invalid_argument("the largest pixel offset dcMax must be a non-negative number");
  const auto start = std::chrono::steady_clock::now();
  dcMax_ = dcMax;
  length_ = orbit.length();
  if (length_ < 4) {  // the first level-1 entry runs from m = 1 to m = 3
    buildMs_ = elapsedMs(start);
    return;
  }
  const int span = length_ - 2;
  capacity_ = 2;
  while (capacity_ < span) capacity_ *= 2;
  while (levels_ < kernels::kMaxBlaLevels && (span >> (levels_ + 1)) > 0) ++levels_;

  step0Abs_.resize(static_cast<std::size_t>(length_ - 1));
  for (int m = 0; m < length_ - 1; ++m)
    step0Abs_[m] = ext(kernels::scale2(kernels::magnitude(ce(orbit.pointExtended(m))), 1));

  const auto slots = static_cast<std::size_t>(capacity_);
  aExt_.assign(slots, ext(kernels::zeroComplexExp()));
  bExt_.assign(slots, ext(kernels::zeroComplexExp()));
  absA_.assign(slots, ExtendedReal{});
  absB_.assign(slots, ExtendedReal{});
  for (int level = 1; level <= levels_; ++level) {
    const int count = span >> level;
    const int base = levelStart(capacity_, level);
    const int below = level == 1 ? 0 : levelStart(capacity_, level - 1);
    for (int k = 0; k < count; ++k) {
      ComplexExp ax, bx, ay, by;
      if (level == 1) {
        const int m = 1 + 2 * k;
        ax = kernels::scale2(ce(orbit.pointExtended(m)), 1);
        ay = kernels::scale2(ce(orbit.pointExtended(m + 1)), 1);
        bx = by = kernels::fromDoubles(1.0, 0.0);
      } else {
        ax = ce(aExt_[below + 2 * k]);
        bx = ce(bExt_[below + 2 * k]);
        ay = ce(aExt_[below + 2 * k + 1]);
        by = ce(bExt_[below + 2 * k + 1]);
      }
      const ComplexExp a = kernels::mul(ay, ax);
      const ComplexExp b = kernels::add(kernels::mul(ay, bx), by);
      aExt_[base + k] = ext(a);
      bExt_[base + k] = ext(b);
      absA_[base + k] = ext(kernels::magnitude(a));
      absB_[base + k] = ext(kernels::magnitude(b));
    }
  }

  a_.assign(2 * slots, 0.0);
  b_.assign(2 * slots, 0.0);
  for (std::size_t s = 0; s < slots; ++s) {
    const ComplexExp a = ce(aExt_[s]);
    const ComplexExp b = ce(bExt_[s]);
    if (a.e > kMaxDoubleExponent || b.e > kMaxDoubleExponent) continue;
    a_[2 * s] = kernels::toDoubleReal(a);
    a_[2 * s + 1] = kernels::toDoubleImag(a);
    b_[2 * s] = kernels::toDoubleReal(b);
    b_[2 * s + 1] = kernels::toDoubleImag(b);
  }
  setDcMax(dcMax);
  buildMs_ = elapsedMs(start);
}

void BlaTable::setDcMax(ExtendedReal dcMax) {
  if (dcMax.mantissa < 0.0 || !std::isfinite(dcMax.mantissa))
    throw std::invalid_argument("the largest pixel offset dcMax must be a non-negative number");
  const auto start = std::chrono::steady_clock::now();
  dcMax_ = dcMax;
  const auto slots = static_cast<std::size_t>(capacity_);
  radius_.assign(slots, ExtendedReal{});
  r2Ext_.assign(slots, ExtendedReal{});
  r2_.assign(slots, 0.0);
  r2Level1Max_ = -1.0;
  const FloatExp dc = fe(dcMax);
  const FloatExp eps = kernels::fromDouble(epsilon_);
  const FloatExp one = kernels::fromDouble(1.0);
  const int span = length_ - 2;
  for (int level = 1; level <= levels_; ++level) {
    const int count = span >> level;
    const int base = levelStart(capacity_, level);
    const int below = level == 1 ? 0 : levelStart(capacity_, level - 1);
    for (int k = 0; k < count; ++k) {
      FloatExp r;
      if (level == 1) {
        const int m = 1 + 2 * k;
        const FloatExp absAx = fe(step0Abs_[m]);
        r = mergedRadius(kernels::mul(eps, absAx), kernels::mul(eps, fe(step0Abs_[m + 1])), absAx, one, dc);
      } else {
        const int x = below + 2 * k;
        r = mergedRadius(fe(radius_[x]), fe(radius_[x + 1]), fe(absA_[x]), fe(absB_[x]), dc);
      }
      const FloatExp r2 = kernels::sqr(r);
      radius_[base + k] = ext(r);
      r2Ext_[base + k] = ext(r2);
      const bool inDouble =
          aExt_[base + k].exponent <= kMaxDoubleExponent && bExt_[base + k].exponent <= kMaxDoubleExponent;
      r2_[base + k] = inDouble ? kernels::toDouble(r2) : 0.0;
      if (level == 1 && r2_[base + k] > r2Level1Max_) r2Level1Max_ = r2_[base + k];
    }
  }
  radiiMs_ = elapsedMs(start);
}

}  // namespace gpulab
