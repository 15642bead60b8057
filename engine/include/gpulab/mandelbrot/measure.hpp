// Measuring Mandelbrot renders with the harness's policy (measure/harness.hpp): what `gpulab-cli
// bench`, `gpulab-cli mandelbrot --bench` and the GUI's side-by-side timing report.
#pragma once

#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/mandelbrot/renderer.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab {

/// Where measureMandelbrot runs: the GPU side with `gpu` and `renderer` (both or neither), the CPU
/// side when wantCpu (all cores, or options.cpuThreads).
struct MandelbrotMeasureSetup {
  GpuContext* gpu = nullptr;
  MandelbrotRenderer* renderer = nullptr;
  bool wantCpu = true;
  CpuControl control;
};

/// One view measured with the harness's policy (measure/harness.hpp): the GPU side times
/// renderer.compute() alone (CUDA events, no colouring), the CPU side renderRawCpu. The work is the
/// plain loop's iterations (countIterations of one extra integer-count render), so rates are G
/// iterations/s. operation "mandelbrot", method the variant, params centre, width, iterations and
/// precision. Throws like choosePrecision for a view it cannot render.
Measurement measureMandelbrot(const MandelbrotView& view, const MandelbrotOptions& options,
                              const MandelbrotMeasureSetup& setup, const MeasurePolicy& policy);

/// A deep benchmark view: where it is, and how it was found.
struct DeepBenchmarkView {
  std::string name;  ///< "deep-1e-100"
  MandelbrotView view;
  std::string how;  ///< one sentence: the location, or the minibrot Newton found and its period
  double newtonMs = 0;
};

/// The deep benchmark views at width x height: "deep-1e-100" (a boundary point of seahorse valley,
/// 20,000 iterations), "deep-1e-300" (beside the period-17009 minibrot Newton finds from a 1.2e-185 view
/// near c = i, 100,000 iterations), "deep-1e-1000" (beside the minibrot Newton finds next to the
/// Misiurewicz point c = i, 100,000 iterations). `only` picks one by name (empty: all). Blocking:
/// Newton takes about a second for each of the last two. Throws NewtonError if it does not converge.
std::vector<DeepBenchmarkView> deepBenchmarkViews(int width, int height, const std::string& only = {});

}  // namespace gpulab
