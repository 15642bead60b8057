// What the three convolutions (Conv2D, ConvMethodFilter, FftConvolver) share: how they describe
// themselves and their parameters, the output offsets of the modes, and rounding to a sample type.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "gpulab/filters/filter.hpp"

namespace gpulab {

/// A value as a sample of type T: u8 rounded (ties to even) and saturated, floats cast.
template <class T>
T toSample(double v) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    const double r = std::nearbyint(v);
    return static_cast<std::uint8_t>(r <= 0.0 ? 0.0 : r >= 255.0 ? 255.0 : r);
  } else {
    return static_cast<T>(v);
  }
}

/// Where output (0, 0) sits in scipy's 'full' output, per axis: 0 for full, (k - 1) / 2 for same,
/// k - 1 for valid.
inline int fullOffset(ConvMode mode, int kernelSize) {
  switch (mode) {
    case ConvMode::Full:
      return 0;
    case ConvMode::Same:
      return (kernelSize - 1) / 2;
    case ConvMode::Valid:
      return kernelSize - 1;
  }
  return 0;
}

/// "15x9".
inline std::string sizeText(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

/// "conv 15x15 same reflect101", "conv 3x5 correlate valid constant(2)", then " fft" / " auto" for
/// a method other than direct.
inline std::string describeConvolution(const Kernel2D& kernel, bool correlate, ConvMode mode, const Border& border,
                                       ConvMethod method) {
  std::string text = "conv ";
  text += sizeText(kernel.width, kernel.height);
  text += correlate ? " correlate " : " ";
  text += toString(mode);
  text += ' ';
  text += describe(border);
  if (method != ConvMethod::Direct) {
    text += ' ';
    text += toString(method);
  }
  return text;
}

/// The parameters of a convolution: kernel (its size), correlate, mode, method, border.
inline ParamValues convolutionParams(const Kernel2D& kernel, bool correlate, ConvMode mode, const Border& border,
                                     ConvMethod method) {
  ParamValues values{{"kernel", sizeText(kernel.width, kernel.height)},
                     {"correlate", correlate ? "true" : "false"},
                     {"mode", std::string(toString(mode))},
                     {"method", std::string(toString(method))}};
  addBorderParams(values, border);
  return values;
}

}  // namespace gpulab
