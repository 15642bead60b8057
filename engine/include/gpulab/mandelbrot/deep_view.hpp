// A deep-zoom Mandelbrot view (centre as decimal text of any length, width down to 1e-100000) and the
// choices that follow from it: the delta format, the reference's precision, the largest pixel offset.
//
//   gpulab::DeepView view;
//   view.centerX = gpulab::DecimalNumber::parse("-1.74006238257933990522089655706");
//   view.width = gpulab::DeepWidth::parse("1e-30");
//   gpulab::validate(view);                               // std::invalid_argument with one sentence
//   int bits = gpulab::referencePrecisionBits(view);      // -log2(pixel spacing) + 64
//
// Pixel (i, j) lies at centre + ((i + 0.5 - W/2) h, -(j + 0.5 - H/2) h), h = width / W, row 0 on top:
// the escape-time renderer's convention. Raw values: nu = n + 5 - log2(log2 |z_n|^2) (escape radius
// 2^8), the integer count n when smooth is off, -1 for pixels that reach maxIterations; the escape count
// n is the first n < maxIterations with |z_n| > 2^8 (z_0 .. z_{maxIterations-1} are tested).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/mandelbrot/deep_number.hpp"

namespace gpulab {

inline constexpr int kMaxDeepIterations = 1 << 24;  ///< float32 raw values hold every count up to 2^24
inline constexpr int kMaxDeepImageSide = 16384;
inline constexpr double kMaxDeepCoordinate = 10.0;  ///< |centre| per axis

struct DeepView {
  DecimalNumber centerX = DecimalNumber::fromDouble(-0.75);
  DecimalNumber centerY;
  DeepWidth width;  ///< of the image in the complex plane
  int imageWidth = 1920;
  int imageHeight = 1080;
  int maxIterations = 20000;
  friend bool operator==(const DeepView&, const DeepView&) = default;
};

/// Throws std::invalid_argument with one sentence: a centre beyond +-10, an image side outside
/// 1..16384, iterations outside 1..2^24.
void validate(const DeepView& view);

/// The arithmetic of the deltas (the kernels' DeltaFormat): Double down to a pixel spacing of 2^-450
/// (about 3.5e-136), then FloatExp (floatexp while the delta is tiny, double once it has grown).
enum class DeepDeltaFormat : std::uint8_t { Double, FloatExp };
constexpr EnumText enumText(DeepDeltaFormat) { return {"delta format", "double|floatexp"}; }
DeepDeltaFormat chooseDeltaFormat(const DeepView& view);
/// The same from the pixel spacing h.
DeepDeltaFormat chooseDeltaFormat(ExtendedReal spacing);

/// h = width / imageWidth.
ExtendedReal pixelSpacing(const DeepWidth& width, int imageWidth);
ExtendedReal pixelSpacing(const DeepView& view);
/// MPFR precision of the reference orbit (and of the brute force): ceil(-log2 h) + 64 bits, at least 64.
int referencePrecisionBits(const DeepView& view);

/// What a deep render may change.
struct DeepOptions {
  bool bla = true;              ///< skip iterations with the BLA table
  double blaEpsilon = 0x1p-53;  ///< a single step is linear while |dz| < epsilon |2 Z_m|
  bool smooth = true;           ///< raw nu; false: integer counts n
  int cpuThreads = 0;           ///< CPU path: 0 = every hardware thread
  friend bool operator==(const DeepOptions&, const DeepOptions&) = default;
};

}  // namespace gpulab
