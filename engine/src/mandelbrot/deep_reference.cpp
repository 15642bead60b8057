// When a reference orbit and its table are reused, and when they are rebuilt.
#include "gpulab/mandelbrot/deep_reference.hpp"

#include <stdexcept>

#include "gpulab/kernels/floatexp.cuh"
#include "internal/deep_params.hpp"

namespace gpulab {

namespace {

/// |offset| <= limit in extended range.
bool within(const kernels::FloatExp& offset, const kernels::FloatExp& limit) {
  return offset.m == 0.0 || log2Of({offset.m, offset.e}) <= log2Of({limit.m, limit.e});
}

int roundedBits(int needed) { return (needed + DeepReference::kPrecisionHeadroomBits + 63) / 64 * 64; }

}  // namespace

const ReferenceOrbit& DeepReference::orbit() const {
  if (!orbit_) throw std::logic_error("the deep reference has no orbit yet: call prepare() first");
  return *orbit_;
}

const BlaTable* DeepReference::table(const DeepOptions& options) const noexcept {
  return options.bla && table_ ? &*table_ : nullptr;
}

DeepReference::Update DeepReference::prepare(const DeepView& view, const DeepOptions& options,
                                             const std::atomic<bool>* cancel) {
  validate(view);
  Update update;
  bool reuse = orbit_ && orbit_->precisionBits() >= referencePrecisionBits(view) &&
               (orbit_->escaped() || orbit_->maxIterations() >= view.maxIterations);
  if (reuse) {
    offset_ = centreOffset(view, *orbit_);
    const kernels::FloatExp limit = kernels::mul(
        kernels::FloatExp{view.width.value().mantissa, view.width.value().exponent}, kernels::fromDouble(kReuseWidths));
    reuse = within({offset_.x.mantissa, offset_.x.exponent}, limit) &&
            within({offset_.y.mantissa, offset_.y.exponent}, limit);
  }
  if (!reuse) {
    ReferenceOrbit orbit = ReferenceOrbit::compute(view.centerX, view.centerY, view.maxIterations,
                                                   roundedBits(referencePrecisionBits(view)), cancel);
    update.orbitComputed = true;
    update.referenceMs = orbit.milliseconds();
    orbit_ = std::move(orbit);
    table_.reset();
    offset_ = {};  // the orbit's point is the view's centre
  }
  if (options.bla) {
    const ExtendedReal dcMax = maxPixelOffset(view, offset_);
    if (!table_ || table_->epsilon() != options.blaEpsilon) {
      table_.emplace(*orbit_, dcMax, options.blaEpsilon);
      update.tableBuilt = update.radiiChanged = true;
      update.blaMs = table_->buildMilliseconds();
    } else if (log2Of(dcMax) > log2Of(table_->dcMax()) || log2Of(dcMax) < log2Of(table_->dcMax()) - 1.0) {
      table_->setDcMax(dcMax);
      update.radiiChanged = true;
      update.blaMs = table_->radiiMilliseconds();
    }
  }
  return update;
}

}  // namespace gpulab
