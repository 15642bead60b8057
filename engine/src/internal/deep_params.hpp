// The kernel-side description of a deep view (engine-private: the public API speaks in DeepView,
// ReferenceOrbit and BlaTable). Host pointers here; a GPU caller uploads the same arrays and swaps in
// the device pointers (withDevicePointers).
#pragma once

#include "gpulab/kernels/mandelbrot_deep.cuh"
#include "gpulab/mandelbrot/bla_table.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"

namespace gpulab {

/// dc offsets (view centre - C, centreOffset), spacing and flags for the kernels.
kernels::PerturbationParams perturbationParams(const DeepView& view, const CentreOffset& offset,
                                               const DeepOptions& options);
kernels::PerturbationParams perturbationParams(const DeepView& view, const ReferenceOrbit& orbit,
                                               const DeepOptions& options);

/// The orbit's arrays as the kernels read them (host memory).
kernels::ReferenceView referenceView(const ReferenceOrbit& orbit);
/// The table's arrays as the kernels read them (host memory); an empty view when table is null.
kernels::BlaView blaView(const BlaTable* table);

/// Where a caller uploaded the same arrays (each a plain copy of the span of the same name).
struct DeepDevicePointers {
  const void* doubles = nullptr;   // ReferenceOrbit::doubles()
  const void* extended = nullptr;  // ReferenceOrbit::extended()
  const void* radii2 = nullptr;    // BlaTable::radii2()
  const void* a = nullptr;         // BlaTable::a()
  const void* b = nullptr;
  const void* radii2Extended = nullptr;
  const void* aExtended = nullptr;
  const void* bExtended = nullptr;
};
kernels::ReferenceView withDevicePointers(kernels::ReferenceView view, const DeepDevicePointers& device);
kernels::BlaView withDevicePointers(kernels::BlaView view, const DeepDevicePointers& device);

}  // namespace gpulab
