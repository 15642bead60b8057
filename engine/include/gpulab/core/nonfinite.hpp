// Counting NaN and infinite samples, so a result that holds them is never reported as if it were
// ordinary: the CLI's filter and fft summary lines, their JSON records and the GUI's timings line
// say how many the input and the output hold.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "gpulab/core/image.hpp"

namespace gpulab {

struct NonFiniteCount {
  std::size_t nan = 0;
  std::size_t inf = 0;
  std::size_t total() const noexcept { return nan + inf; }
};

/// NaN and infinite samples of a host image (u8 and u16 images hold none).
inline NonFiniteCount countNonFinite(const Image& img) {
  NonFiniteCount count;
  auto tally = [&](auto samples) {
    for (const auto v : samples) {
      if (std::isnan(v))
        ++count.nan;
      else if (std::isinf(v))
        ++count.inf;
    }
  };
  if (img.empty()) return count;
  if (img.type() == PixelType::F32) tally(img.samples<float>());
  if (img.type() == PixelType::F64) tally(img.samples<double>());
  return count;
}

/// "input holds 3 NaN and 1 inf samples; output holds 4096 NaN" (the parts that are non-zero), or
/// an empty string when neither holds any.
inline std::string describeNonFinite(const NonFiniteCount& input, const NonFiniteCount& output) {
  auto part = [](const char* what, const NonFiniteCount& c) -> std::string {
    if (c.total() == 0) return {};
    std::string text = std::string(what) + " holds ";
    if (c.nan > 0) text += std::to_string(c.nan) + " NaN";
    if (c.nan > 0 && c.inf > 0) text += " and ";
    if (c.inf > 0) text += std::to_string(c.inf) + " inf";
    return text + (c.total() == 1 ? " sample" : " samples");
  };
  const std::string in = part("input", input), out = part("output", output);
  if (in.empty() || out.empty()) return in + out;
  return in + "; " + out;
}

}  // namespace gpulab
