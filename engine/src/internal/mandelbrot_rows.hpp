// Rows of a Mandelbrot raw plane on the calling thread, with the CPU renderers' own row functions (so
// the values equal theirs bit for bit): the CPU side of the split still (multi_gpu.hpp) and its tests.
#pragma once

#include "gpulab/core/image.hpp"
#include "gpulab/mandelbrot/bla_table.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"
#include "gpulab/mandelbrot/renderer.hpp"

namespace gpulab {

/// Rows [first, first + count) of an escape-time view (f32 or f64 as `precision` says) into `raw`
/// (rawWidth x rawHeight, 1 channel f32), each at its own row.
void escapeRowsCpu(const MandelbrotView& view, const MandelbrotOptions& options, Precision precision, int first,
                   int count, Image& raw);

/// Rows [first, first + count) of a deep view against `orbit` (and `table`, null without BLA) into
/// `raw` (imageWidth x imageHeight floats, rows packed), each at its own row.
void deepRowsCpu(const DeepView& view, const ReferenceOrbit& orbit, const BlaTable* table, const DeepOptions& options,
                 int first, int count, float* raw);

}  // namespace gpulab
