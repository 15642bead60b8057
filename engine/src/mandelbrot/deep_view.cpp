#include "gpulab/mandelbrot/deep_view.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/floatexp.cuh"
#include "gpulab/kernels/mandelbrot_deep.cuh"

namespace gpulab {

static_assert(static_cast<int>(DeepDeltaFormat::Double) == static_cast<int>(kernels::DeltaFormat::Double) &&
              static_cast<int>(DeepDeltaFormat::FloatExp) == static_cast<int>(kernels::DeltaFormat::FloatExp));

void validate(const DeepView& view) {
  const DecimalNumber limit = DecimalNumber::fromDouble(kMaxDeepCoordinate);
  const auto checkCoordinate = [&](const DecimalNumber& c, const char* axis) {
    if (c > limit || c < -limit)
      throw std::invalid_argument(std::string("centre ") + axis + " " + c.toString().substr(0, 40) +
                                  " is outside -10..10");
  };
  checkCoordinate(view.centerX, "x");
  checkCoordinate(view.centerY, "y");
  if (view.imageWidth < 1 || view.imageHeight < 1 || view.imageWidth > kMaxDeepImageSide ||
      view.imageHeight > kMaxDeepImageSide)
    throw std::invalid_argument("image size " + std::to_string(view.imageWidth) + "x" +
                                std::to_string(view.imageHeight) + " is outside 1..16384 a side");
  if (view.maxIterations < 1 || view.maxIterations > kMaxDeepIterations)
    throw std::invalid_argument("maximum iterations " + std::to_string(view.maxIterations) + " is outside 1..16777216");
}

ExtendedReal pixelSpacing(const DeepWidth& width, int imageWidth) {
  const kernels::FloatExp w{width.value().mantissa, width.value().exponent};
  const kernels::FloatExp h = kernels::divide(w, kernels::fromDouble(static_cast<double>(imageWidth)));
  return {h.m, h.e};
}

ExtendedReal pixelSpacing(const DeepView& view) { return pixelSpacing(view.width, view.imageWidth); }

DeepDeltaFormat chooseDeltaFormat(ExtendedReal spacing) {
  return spacing.exponent >= kernels::kDoubleMinSpacingExponent ? DeepDeltaFormat::Double : DeepDeltaFormat::FloatExp;
}

DeepDeltaFormat chooseDeltaFormat(const DeepView& view) { return chooseDeltaFormat(pixelSpacing(view)); }

int referencePrecisionBits(const DeepView& view) {
  const double bits = std::ceil(-log2Of(pixelSpacing(view))) + 64.0;
  return bits < 64.0 ? 64 : static_cast<int>(bits);
}

}  // namespace gpulab
