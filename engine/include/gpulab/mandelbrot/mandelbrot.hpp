// The Mandelbrot module in one include: views at any depth (view.hpp), colouring (palette.hpp), the
// renderers (renderer.hpp; perturbation in deep_renderer.hpp), PNG fields (png_view.hpp), measuring
// (measure.hpp), and the deep-zoom tools (Newton zoom, reference orbits, the MPFR oracle) in their
// own headers.
#pragma once

#include "gpulab/mandelbrot/measure.hpp"
#include "gpulab/mandelbrot/palette.hpp"
#include "gpulab/mandelbrot/png_view.hpp"
#include "gpulab/mandelbrot/renderer.hpp"
#include "gpulab/mandelbrot/view.hpp"
