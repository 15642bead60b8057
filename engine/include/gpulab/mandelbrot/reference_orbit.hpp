// The reference orbit of a deep-zoom view: Z_0 = 0, Z_{m+1} = Z_m^2 + C, computed once in MPFR and
// kept rounded, for the perturbation of every pixel c = C + dc.
//
//   auto orbit = gpulab::ReferenceOrbit::compute(view.centerX, view.centerY, view.maxIterations,
//                                                gpulab::referencePrecisionBits(view));
//   orbit.length();        // N: Z_0 .. Z_{N-1}, the last the first escaped point or Z at the cap
//   orbit.milliseconds();  // measured around the MPFR loop
//
// Blocking, on the calling thread (run it on a worker: 100,000 iterations at 1,100 bits take about
// 0.1 s); checks `cancel` every 1024 iterations and throws OperationCancelled once it is set.
#pragma once

#include <atomic>
#include <complex>
#include <span>
#include <vector>

#include "gpulab/mandelbrot/deep_number.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"

namespace gpulab {

class ReferenceOrbit {
 public:
  static constexpr int kMinPrecisionBits = 64;
  static constexpr int kMaxPrecisionBits = 400'000;  ///< a 1e-100000 view at 16384 pixels needs 332,300

  /// Iterates C = (cx, cy) at `precisionBits` until |Z_m|^2 > 2^16 (that Z_m is kept as the last
  /// point) or until m = max(maxIterations - 1, 1). Throws std::invalid_argument for maxIterations outside
  /// 1..2^24, precision outside 64..400,000 bits, or C beyond +-10; OperationCancelled on cancel.
  static ReferenceOrbit compute(const DecimalNumber& cx, const DecimalNumber& cy, int maxIterations, int precisionBits,
                                const std::atomic<bool>* cancel = nullptr);

  /// N >= 2 (Z_1 = C is kept even when maxIterations is 1).
  int length() const noexcept { return static_cast<int>(extended_.size()); }
  /// Z_{N-1} escaped (|Z|^2 > 2^16); false: the orbit reached the iteration cap.
  bool escaped() const noexcept { return escaped_; }
  int precisionBits() const noexcept { return precisionBits_; }
  int maxIterations() const noexcept { return maxIterations_; }
  double milliseconds() const noexcept { return milliseconds_; }
  const DecimalNumber& centerX() const noexcept { return cx_; }
  const DecimalNumber& centerY() const noexcept { return cy_; }

  /// Z_m rounded to double (0 or subnormal where |Z_m| is below the double range).
  std::complex<double> point(int m) const { return {doubles_[2 * m], doubles_[2 * m + 1]}; }
  /// Z_m with a 53-bit mantissa and an unbounded exponent.
  const ExtendedComplex& pointExtended(int m) const { return extended_[m]; }

  /// The arrays the kernels read, as they are uploaded: x0, y0, x1, y1, ... (a double2 array) and the
  /// floatexp copy.
  std::span<const double> doubles() const noexcept { return doubles_; }
  std::span<const ExtendedComplex> extended() const noexcept { return extended_; }

 private:
  DecimalNumber cx_;
  DecimalNumber cy_;
  std::vector<double> doubles_;
  std::vector<ExtendedComplex> extended_;
  int precisionBits_ = 0;
  int maxIterations_ = 0;
  bool escaped_ = false;
  double milliseconds_ = 0;
};

/// Where a view's centre sits against an orbit's point C: centre - C computed exactly in MPFR at the
/// orbit's precision, each part rounded once, and |centre - C| rounded up. Zero, without MPFR, when the
/// orbit was computed at that centre.
struct CentreOffset {
  ExtendedReal x;
  ExtendedReal y;
  ExtendedReal length;
};
CentreOffset centreOffset(const DeepView& view, const ReferenceOrbit& orbit);

/// The largest |dc| of the view against this reference: |view centre - C| + h sqrt(W^2 + H^2) / 2
/// (rounded up a little), what the BLA radii are computed for.
ExtendedReal maxPixelOffset(const DeepView& view, const CentreOffset& offset);
ExtendedReal maxPixelOffset(const DeepView& view, const ReferenceOrbit& orbit);

}  // namespace gpulab
