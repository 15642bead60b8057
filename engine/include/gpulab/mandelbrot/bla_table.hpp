// The bivariate linear approximation (BLA) table of a reference orbit: entries that skip 2^l
// iterations at once while the pixel's delta is small (shared/design/deep-zoom.md, section 3).
//
//   gpulab::BlaTable table(orbit, gpulab::maxPixelOffset(view, orbit));
//   table.setDcMax(gpulab::maxPixelOffset(pannedView, orbit));   // radii only: O(N), about 1 ms per 100k
//
// A single step at reference index m is dz -> A dz + B dc with A = 2 Z_m, B = 1, valid while
// |dz| < epsilon |A| (the dropped dz^2 is then at most epsilon of the kept term). Two valid steps x then y
// merge into A = A_y A_x, B = A_y B_x + B_y, valid for |dz| < max(0, min(r_x, (r_y - |B_x| dcMax) / |A_x|)).
// Level l (1 .. levels()) merges pairs of level l-1 and holds the entries starting at m = 1 + k 2^l that
// end at or before N - 1; level 0 (single steps) is not stored, a full step is exact. Everything is
// computed in extended range; the double copies are 0 where a value leaves the double range (such an
// entry is never taken in double).
//
// Blocking; not thread-safe while setDcMax runs. Throws std::invalid_argument for epsilon outside
// (0, 1) or a negative dcMax.
#pragma once

#include <span>
#include <vector>

#include "gpulab/mandelbrot/deep_number.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"

namespace gpulab {

class BlaTable {
 public:
  static constexpr double kDefaultEpsilon = 0x1p-53;

  BlaTable(const ReferenceOrbit& orbit, ExtendedReal dcMax, double epsilon = kDefaultEpsilon);

  /// Recomputes the radii for a new largest |dc| (A and B depend on the orbit alone).
  void setDcMax(ExtendedReal dcMax);

  int levels() const noexcept { return levels_; }
  /// A power of two >= N - 2; level l occupies capacity >> l slots from capacity - (capacity >> (l - 1)).
  int capacity() const noexcept { return capacity_; }
  ExtendedReal dcMax() const noexcept { return dcMax_; }
  double epsilon() const noexcept { return epsilon_; }
  /// Time of the constructor (coefficients and radii) and of the last radius computation.
  double buildMilliseconds() const noexcept { return buildMs_; }
  double radiiMilliseconds() const noexcept { return radiiMs_; }
  /// Slots whose entry exists (ends at or before N - 1).

  /// The arrays the kernels read (capacity slots each; a and b hold x, y pairs), as they are uploaded.
  std::span<const double> radii2() const noexcept { return r2_; }
  std::span<const double> a() const noexcept { return a_; }
  std::span<const double> b() const noexcept { return b_; }
  std::span<const ExtendedReal> radii2Extended() const noexcept { return r2Ext_; }
  std::span<const ExtendedComplex> aExtended() const noexcept { return aExt_; }
  std::span<const ExtendedComplex> bExtended() const noexcept { return bExt_; }
  /// The largest level-1 radius^2 in double: a delta at least this large takes no entry.
  double radius2Level1Max() const noexcept { return r2Level1Max_; }

 private:
  int length_ = 0;  // N
  int levels_ = 0;
  int capacity_ = 0;
  double epsilon_ = kDefaultEpsilon;
  ExtendedReal dcMax_;
  double buildMs_ = 0;
  double radiiMs_ = 0;
  double r2Level1Max_ = -1;
  // Level 0 (single steps at m = 0 .. N - 2): |A| = 2 |Z_m|, radius epsilon |A|.
  std::vector<ExtendedReal> step0Abs_;
  // Levels >= 1, one slot layout for all arrays: |A|, |B| and radius feed the radius recomputation.
  std::vector<ExtendedReal> absA_;
  std::vector<ExtendedReal> absB_;
  std::vector<ExtendedReal> radius_;
  std::vector<double> r2_;
  std::vector<double> a_;
  std::vector<double> b_;
  std::vector<ExtendedReal> r2Ext_;
  std::vector<ExtendedComplex> aExt_;
  std::vector<ExtendedComplex> bExt_;
};

}  // namespace gpulab
