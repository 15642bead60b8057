// What the three convolutions (Conv2D, ConvMethodFilter, FftConvolver) share: how they describe
// themselves and their parameters, the output offsets of the modes, rounding to a sample type, which
// channels they convolve, and the reference: scipy's definition, literally, in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpulab/core/image.hpp"
#include "gpulab/filters/filter.hpp"
#include "internal/kernel_views.hpp"  // borderIndex

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

/// The constant border value as a sample of `type` (u8: rounded and saturated), back in double.
inline double borderSample(PixelType type, double value) {
  double sample = value;
  visitPixelType(type, [&](auto s) { sample = static_cast<double>(toSample<decltype(s)>(value)); });
  return sample;
}

/// Channels a convolution computes: all but alpha of u8 RGBA in 'same' mode, which passes through.
inline int convolvedChannels(const ImageShape& in, ConvMode mode) {
  return in.type == PixelType::U8 && in.channels == 4 && mode == ConvMode::Same ? 3 : in.channels;
}

/// "15x9".
inline std::string sizeText(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

/// Kernel coefficients must be finite in the type they are applied in: float for u8 and f32 images
/// (|value| <= FLT_MAX), double for f64. A coefficient of 1e308 is finite as a double but inf as a
/// float, and would make every output inf. One sentence naming the first bad coefficient.
inline void checkKernelFitsType(const Kernel2D& k, PixelType type) {
  if (type == PixelType::F64) return;  // finite doubles are checked where the kernel is made
  for (int y = 0; y < k.height; ++y)
    for (int x = 0; x < k.width; ++x) {
      const double v = k.at(x, y);
      if (std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max()) continue;
      char text[320];  // the longest message is about 210 bytes
      std::snprintf(text, sizeof text,
                    "kernel coefficient %g at row %d, column %d is not finite in float32, the type %s image is "
                    "convolved in (|value| <= %g): scale the kernel down or convert the image to f64",
                    v, y, x,
                    type == PixelType::U8    ? "a u8"
                    : type == PixelType::U16 ? "a u16"
                                             : "an f32",
                    static_cast<double>(std::numeric_limits<float>::max()));
      throw std::invalid_argument(text);
    }
}

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

/// The reference of every convolution, into an image of shape `os`: for each computed channel
/// full(i, j) = sum_{m, n} k(m, n) * in(i - m, j - n) at i = y + offsetY, j = x + offsetX (the mode's
/// offsets), the border read as `border` says; correlation is the convolution with the kernel flipped
/// in both axes; the channels not convolved are copied.
template <class T>
Image convolutionReference(const Image& in, const ImageShape& os, const Kernel2D& k, bool correlate, ConvMode mode,
                           const Border& border) {
  Image out(os.width, os.height, os.channels, os.type);
  const int kw = k.width, kh = k.height, w = in.width(), h = in.height();
  const int startX = fullOffset(mode, kw), startY = fullOffset(mode, kh);
  const double fill = static_cast<double>(toSample<T>(border.value));
  auto coefficient = [&](int n, int m) { return correlate ? k.at(kw - 1 - n, kh - 1 - m) : k.at(n, m); };
  const int planes = convolvedChannels(shapeOf(in), mode);
  for (int c = 0; c < in.channels(); ++c)
    for (int y = 0; y < os.height; ++y)
      for (int x = 0; x < os.width; ++x) {
        if (c >= planes) {
          out.at<T>(x, y, c) = in.at<T>(x, y, c);
          continue;
        }
        double sum = 0.0;
        for (int m = 0; m < kh; ++m) {
          const int yi = borderIndex(y + startY - m, h, border.mode);
          for (int n = 0; n < kw; ++n) {
            const int xi = borderIndex(x + startX - n, w, border.mode);
            const double v = yi < 0 || xi < 0 ? fill : static_cast<double>(in.at<T>(xi, yi, c));
            sum += coefficient(n, m) * v;
          }
        }
        out.at<T>(x, y, c) = toSample<T>(sum);
      }
  return out;
}

/// convolutionReference for the image's sample type (not empty).
inline Image convolutionReference(const Image& in, const ImageShape& os, const Kernel2D& k, bool correlate,
                                  ConvMode mode, const Border& border) {
  Image out;
  visitPixelType(in.type(), [&](auto sample) {
    out = convolutionReference<decltype(sample)>(in, os, k, correlate, mode, border);
  });
  return out;
}

}  // namespace gpulab
