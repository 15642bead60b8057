// The oracle of the deep-zoom tests: one point iterated directly in MPFR (slow and obvious), with the
// renderers' conventions (escape radius 2^8; z_0 .. z_{maxIterations-1} are tested).
//
//   gpulab::OracleEscape e = gpulab::bruteForceEscape(cx, cy, 20000, 400);   // e.count, e.modulus2
//   float raw = gpulab::bruteForcePixel(view, i, j, true);                   // as the renderers store it
//
// Blocking: a few microseconds an iteration at 1,000 bits. Throws std::invalid_argument for iterations
// outside 1..2^24 or precision outside 64..400,000 bits.
#pragma once

#include "gpulab/mandelbrot/deep_number.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"

namespace gpulab {

struct OracleEscape {
  int count = -1;       ///< the first n < maxIterations with |z_n|^2 > 2^16; -1 when there is none
  double modulus2 = 0;  ///< |z_count|^2 (rounded), for the smooth count
};

/// z_{n+1} = z_n^2 + c from z_0 = 0 for c = (cx, cy), every operation rounded to precisionBits.
OracleEscape bruteForceEscape(const DecimalNumber& cx, const DecimalNumber& cy, int maxIterations, int precisionBits);

/// Pixel (i, j) of the view, c = centre + ((i + 0.5 - W/2) h, -(j + 0.5 - H/2) h) with h = width / W
/// formed in MPFR, as a raw value: nu (smooth) or n, -1 for the interior. precisionBits 0 takes
/// referencePrecisionBits(view).
float bruteForcePixel(const DeepView& view, int i, int j, bool smooth, int precisionBits = 0);

}  // namespace gpulab
