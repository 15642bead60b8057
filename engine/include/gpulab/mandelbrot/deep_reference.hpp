// The reference of deep renders, kept between frames: one MPFR reference orbit and its BLA table,
// recomputed only when a view leaves the region they serve. The GPU renderer (deep_renderer.hpp) and
// the CPU renderer (renderer.hpp) both keep one.
//
// A reference serves a view while its precision covers the view's depth (it is computed at
// least kPrecisionHeadroomBits deeper than needed, rounded up to a multiple of 64 bits, so zooming in
// keeps it for at least 19 decades), its
// iteration cap covers the view's (or it escaped before), and the view's centre is within kReuseWidths
// view widths of the reference point. Inside that region only the table's radii are recomputed, when
// the view's largest pixel offset outgrows them or shrinks below half of what they were made for
// (about 1 ms per 100,000 iterations).
#pragma once

#include <atomic>
#include <optional>

#include "gpulab/mandelbrot/bla_table.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"

namespace gpulab {

class DeepReference {
 public:
  static constexpr double kReuseWidths = 4.0;
  static constexpr int kPrecisionHeadroomBits = 64;

  /// What the last prepare() changed.
  struct Update {
    bool orbitComputed = false;  ///< a new reference orbit (and table)
    bool tableBuilt = false;     ///< a new table: every array changed
    bool radiiChanged = false;   ///< the table's radii changed (also when tableBuilt)
    double referenceMs = 0;
    double blaMs = 0;
  };

  /// Makes the reference (and, with options.bla, its table) serve `view` (validated). Blocking; throws
  /// std::invalid_argument for a bad view and OperationCancelled once `cancel` is set (a reference
  /// that was kept stays usable).
  Update prepare(const DeepView& view, const DeepOptions& options, const std::atomic<bool>* cancel = nullptr);

  bool ready() const noexcept { return orbit_.has_value(); }
  /// std::logic_error before the first prepare().
  const ReferenceOrbit& orbit() const;
  /// The table for options.bla; null without BLA.
  const BlaTable* table(const DeepOptions& options) const noexcept;
  /// The last prepared view's centre against the orbit's point.
  const CentreOffset& offset() const noexcept { return offset_; }

 private:
  std::optional<ReferenceOrbit> orbit_;
  CentreOffset offset_;
  std::optional<BlaTable> table_;
};

}  // namespace gpulab
