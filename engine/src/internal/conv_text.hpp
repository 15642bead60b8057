// How the three convolutions (Conv2D, ConvMethodFilter, FftConvolver) describe themselves and their
// parameters, in one place so the three read the same.
#pragma once

#include <string>

#include "gpulab/filters/filter.hpp"

namespace gpulab {

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
