// The kernel parameters of a Mandelbrot view and colouring, shared by the GPU renderer and the CPU
// baseline (engine-private: the public API speaks in MandelbrotView and Colouring).
#pragma once

#include "gpulab/kernels/mandelbrot.cuh"
#include "gpulab/mandelbrot/renderer.hpp"

namespace gpulab {

static_assert(kMandelbrotInterior == kernels::kMandelbrotInterior);
static_assert(kMaxMandelbrotIterations == kernels::kMaxEscapeIterations);

kernels::EscapeParams escapeParams(const MandelbrotView& view, const MandelbrotOptions& options);
kernels::ColourParams colourParams(const Colouring& colouring, int supersample);

}  // namespace gpulab
