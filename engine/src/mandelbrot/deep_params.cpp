#include "internal/deep_params.hpp"

#include "gpulab/kernels/floatexp.cuh"

namespace gpulab {

kernels::PerturbationParams perturbationParams(const DeepView& view, const CentreOffset& offset,
                                               const DeepOptions& options) {
  validate(view);
  kernels::PerturbationParams p;
  p.width = view.imageWidth;
  p.height = view.imageHeight;
  p.maxIterations = view.maxIterations;
  p.format = chooseDeltaFormat(view) == DeepDeltaFormat::Double ? kernels::DeltaFormat::Double
                                                                : kernels::DeltaFormat::FloatExp;
  p.smooth = options.smooth;
  p.bla = options.bla;
  const ExtendedReal h = pixelSpacing(view);
  p.spacingExp = {h.mantissa, h.exponent};
  p.offsetXExp = {offset.x.mantissa, offset.x.exponent};
  p.offsetYExp = {offset.y.mantissa, offset.y.exponent};
  p.spacing = toDouble(h);
  p.offsetX = toDouble(offset.x);
  p.offsetY = toDouble(offset.y);
  return p;
}

kernels::PerturbationParams perturbationParams(const DeepView& view, const ReferenceOrbit& orbit,
                                               const DeepOptions& options) {
  return perturbationParams(view, centreOffset(view, orbit), options);
}

kernels::ReferenceView referenceView(const ReferenceOrbit& orbit) {
  kernels::ReferenceView v;
  v.z = reinterpret_cast<const double2*>(orbit.doubles().data());
  v.zExp = reinterpret_cast<const kernels::ComplexExp*>(orbit.extended().data());
  v.length = orbit.length();
  return v;
}

kernels::BlaView blaView(const BlaTable* table) {
  kernels::BlaView v;
  if (table == nullptr || table->levels() == 0) return v;
  v.r2 = table->radii2().data();
  v.a = reinterpret_cast<const double2*>(table->a().data());
  v.b = reinterpret_cast<const double2*>(table->b().data());
  v.r2Exp = reinterpret_cast<const kernels::FloatExp*>(table->radii2Extended().data());
  v.aExp = reinterpret_cast<const kernels::ComplexExp*>(table->aExtended().data());
  v.bExp = reinterpret_cast<const kernels::ComplexExp*>(table->bExtended().data());
  v.levels = table->levels();
  v.capacity = table->capacity();
  v.r2Level1Max = table->radius2Level1Max();
  return v;
}

kernels::ReferenceView withDevicePointers(kernels::ReferenceView view, const DeepDevicePointers& device) {
  view.z = static_cast<const double2*>(device.doubles);
  view.zExp = static_cast<const kernels::ComplexExp*>(device.extended);
  return view;
}

kernels::BlaView withDevicePointers(kernels::BlaView view, const DeepDevicePointers& device) {
  if (view.levels == 0) return view;
  view.r2 = static_cast<const double*>(device.radii2);
  view.a = static_cast<const double2*>(device.a);
  view.b = static_cast<const double2*>(device.b);
  view.r2Exp = static_cast<const kernels::FloatExp*>(device.radii2Extended);
  view.aExp = static_cast<const kernels::ComplexExp*>(device.aExtended);
  view.bExp = static_cast<const kernels::ComplexExp*>(device.bExtended);
  return view;
}

}  // namespace gpulab
