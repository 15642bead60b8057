// The kernel parameters of escape-time views and of colouring (internal/mandelbrot_params.hpp).
#include <cmath>

#include "internal/mandelbrot_params.hpp"

namespace gpulab {

kernels::EscapeParams escapeParams(const MandelbrotView& view, const MandelbrotOptions& options) {
  kernels::EscapeParams p;
  p.centerX = view.x();
  p.centerY = view.y();
  p.spacing = toDouble(view.spacing());
  p.juliaX = view.juliaX;
  p.juliaY = view.juliaY;
  p.width = view.rawWidth();
  p.height = view.rawHeight();
  p.periodicityTolerance = p.spacing * kernels::kPeriodicityTolerance;
  p.maxIterations = view.maxIterations;
  p.julia = view.julia;
  const bool plain = options.variant == MandelbrotVariant::Plain;
  p.interiorTests = options.interiorTests && !plain;
  p.periodicity = options.periodicity && !plain;
  p.smooth = options.smooth;
  return p;
}

kernels::ColourParams colourParams(const Colouring& colouring, int supersample) {
  kernels::ColourParams c;
  c.offset = static_cast<float>(colouring.offset - std::floor(colouring.offset));
  c.cyclesPerIteration = static_cast<float>(colouring.density / 32.0);
  c.interior = {colouring.interior.r, colouring.interior.g, colouring.interior.b, colouring.interior.a};
  c.supersample = supersample;
  c.tableSize = Palette::kTableSize;
  return c;
}

}  // namespace gpulab
