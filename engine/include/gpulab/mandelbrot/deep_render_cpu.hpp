// The deep-zoom CPU path: the kernels' own per-pixel perturbation (gpulab/kernels/mandelbrot_deep.cuh)
// on every core, so the integer counts match the GPU's exactly.
//
//   auto orbit = gpulab::ReferenceOrbit::compute(view.centerX, view.centerY, view.maxIterations,
//                                                gpulab::referencePrecisionBits(view));
//   gpulab::BlaTable table(orbit, gpulab::maxPixelOffset(view, orbit));
//   gpulab::DeepCpuResult r = gpulab::renderDeepCpu(view, orbit, &table, {});
//
// Blocking. Rows are handed out one at a time to options.cpuThreads threads (0: every hardware thread,
// the calling thread among them); control.cancel is checked between rows (OperationCancelled), and
// control.progress (0..1) is called on the calling thread after each row it finishes. Throws
// std::invalid_argument for an invalid view. Any orbit of the neighbourhood serves: pixels that outlive
// it rebase at its end.
#pragma once

#include <vector>

#include "gpulab/core/operation.hpp"  // CpuControl, OperationCancelled
#include "gpulab/mandelbrot/bla_table.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"

namespace gpulab {

struct DeepCpuResult {
  std::vector<float> raw;  ///< imageWidth x imageHeight raw values, row 0 first
  double steps = 0;        ///< full and BLA steps of all pixels
  double milliseconds = 0;
};

/// The whole frame. `table` may be null (no BLA, as options.bla = false).
DeepCpuResult renderDeepCpu(const DeepView& view, const ReferenceOrbit& orbit, const BlaTable* table,
                            const DeepOptions& options, const CpuControl& control = {});

}  // namespace gpulab
