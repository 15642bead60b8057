// The convolution suites' shared oracle and table helpers (test_conv2d, test_conv_method,
// test_fft_conv): random kernels, specs, the naive definition in double, and the tolerance per type.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "gpulab/filters/filter.hpp"
#include "internal/kernel_views.hpp"
#include "support/gpu_test.hpp"

namespace gpulab::test {

inline constexpr BorderMode kBorders[] = {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate,
                                          BorderMode::Wrap, BorderMode::Constant};
inline constexpr ConvMode kModes[] = {ConvMode::Same, ConvMode::Full, ConvMode::Valid};

/// A kw x kh kernel of uniform values in [-1, 1), seeded.
inline Kernel2D randomKernel(int kw, int kh, unsigned seed) {
  Kernel2D k;
  k.width = kw;
  k.height = kh;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int i = 0; i < kw * kh; ++i) k.values.push_back(d(rng));
  return k;
}

inline FilterSpec convSpec(Kernel2D k, BorderMode border, ConvMode mode, bool correlate,
                           ConvMethod method = ConvMethod::Direct, double value = 0.0) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel = std::move(k);
  spec.border = {border, value};
  spec.mode = mode;
  spec.correlate = correlate;
  spec.method = method;
  return spec;
}

/// The definition, in double, with nothing shared with the engine but borderIndex:
///   out(y, x) = sum_{i,j} k(i, j) ext(y + oy - i, x + ox - j), k flipped for correlation,
/// offsets as scipy.signal.convolve2d; u8 RGBA in 'same' mode keeps its alpha (Conv2D's rule); the
/// constant border value converted to the sample type first.
inline Image naiveConv(const Image& in, const FilterSpec& spec) {
  const int kw = spec.kernel.width, kh = spec.kernel.height, w = in.width(), h = in.height();
  int ow = w, oh = h, ox = (kw - 1) / 2, oy = (kh - 1) / 2;
  if (spec.mode == ConvMode::Full) ow = w + kw - 1, oh = h + kh - 1, ox = 0, oy = 0;
  if (spec.mode == ConvMode::Valid) ow = w - kw + 1, oh = h - kh + 1, ox = kw - 1, oy = kh - 1;
  const bool alpha = in.type() == PixelType::U8 && in.channels() == 4 && spec.mode == ConvMode::Same;
  const int planes = alpha ? 3 : in.channels();
  double value = spec.border.value;
  if (in.type() == PixelType::U8) value = std::clamp(std::nearbyint(value), 0.0, 255.0);
  if (in.type() == PixelType::F32) value = static_cast<float>(value);
  auto ext = [&](int x, int y, int c) {
    const int sx = borderIndex(x, w, spec.border.mode), sy = borderIndex(y, h, spec.border.mode);
    return (sx < 0 || sy < 0) ? value : sampleAt(in, sx, sy, c);
  };
  auto tap = [&](int i, int j) {
    return spec.correlate ? spec.kernel.at(kw - 1 - j, kh - 1 - i) : spec.kernel.at(j, i);
  };
  Image out(ow, oh, in.channels(), in.type());
  for (int c = 0; c < in.channels(); ++c)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x) {
        if (c >= planes) {
          storeSample(out, x, y, c, sampleAt(in, x, y, c));
          continue;
        }
        double acc = 0;
        for (int i = 0; i < kh; ++i)
          for (int j = 0; j < kw; ++j) acc += tap(i, j) * ext(x + ox - j, y + oy - i, c);
        storeSample(out, x, y, c, acc);
      }
  return out;
}

/// The largest |sample|.
inline double peak(const Image& img) {
  double m = 0;
  for (int c = 0; c < img.channels(); ++c)
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) m = std::max(m, std::abs(sampleAt(img, x, y, c)));
  return m;
}

/// f32: 1e-4 relative to the result's peak; f64: 1e-10; u8: +-1 (float vs double before rounding).
inline ::testing::AssertionResult convNear(const Image& expected, const Image& actual) {
  switch (expected.type()) {
    case PixelType::U8:
      return imagesNear(expected, actual, 1.0);
    case PixelType::F32:
      return imagesNear(expected, actual, 1e-4 * std::max(peak(expected), 1e-6));
    case PixelType::F64:
      return imagesNear(expected, actual, 1e-10 * std::max(peak(expected), 1e-6));
    case PixelType::U16:
      return imagesNear(expected, actual, 1.0);
  }
  return ::testing::AssertionFailure();
}

/// Whether a kw x kh kernel has a 'valid' output on a w x h image (always, in the other modes).
inline bool fits(ConvMode mode, int w, int h, int kw, int kh) {
  return mode != ConvMode::Valid || (kw <= w && kh <= h);
}

/// "img13x12_k5x3": the name of a table case {image size, kernel size}.
template <class Info>
std::string convTableName(const Info& info) {
  const auto& [size, ksize] = info.param;
  return "img" + std::to_string(std::get<0>(size)) + "x" + std::to_string(std::get<1>(size)) + "_k" +
         std::to_string(std::get<0>(ksize)) + "x" + std::to_string(std::get<1>(ksize));
}

/// "auto reflect101 same convolve k5x3" for traces.
inline std::string caseName(const FilterSpec& s) {
  return std::string(toString(s.method)) + " " + std::string(toString(s.border.mode)) + " " +
         std::string(toString(s.mode)) + (s.correlate ? " correlate" : " convolve") + " k" +
         std::to_string(s.kernel.width) + "x" + std::to_string(s.kernel.height);
}

}  // namespace gpulab::test
