// Shared by the test suites: skip GPU tests with a reason on machines without a CUDA device, and
// compare images naming the first differing pixel.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/border.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"

#define GPULAB_REQUIRE_GPU()                                                                               \
  do {                                                                                                     \
    if (!::gpulab::cudaAvailable()) GTEST_SKIP() << "no CUDA device: " << ::gpulab::queryDevices().status; \
  } while (0)

namespace gpulab::test {

/// True under scripts/gpu-check.sh's compute-sanitizer steps (GPULAB_UNDER_SANITIZER=1). The tools slow
/// kernels 10-100x, and unevenly, so what a test asserts about timing (one method faster than another,
/// a cost model's pick, a rate against a ceiling) means nothing there. Such a test still does all its
/// GPU work (that is what the tools check) and skips only the timing assertion.
inline bool underComputeSanitizer() {
  const char* v = std::getenv("GPULAB_UNDER_SANITIZER");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

/// Which of gpu-check.sh's sanitizer steps runs the test: "sanitize" (memcheck), "racecheck",
/// "synccheck" or "initcheck" (GPULAB_UNDER_SANITIZER=<step>); empty outside them.
inline std::string_view computeSanitizerStep() {
  const char* v = std::getenv("GPULAB_UNDER_SANITIZER");
  return underComputeSanitizer() ? std::string_view(v) : std::string_view();
}

/// Seeded random image: u8 uniform 0..255, u16 uniform 0..65535, floats uniform in [-1, 1) scaled by `scale`.
inline Image randomImage(int width, int height, int channels, PixelType type, unsigned seed, double scale = 1.0) {
  Image img(width, height, channels, type);
  std::mt19937 rng(seed);
  switch (type) {
    case PixelType::U8: {
      std::uniform_int_distribution<int> d(0, 255);
      for (auto& v : img.samples<std::uint8_t>()) v = static_cast<std::uint8_t>(d(rng));
      break;
    }
    case PixelType::F32: {
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      for (auto& v : img.samples<float>()) v = static_cast<float>(d(rng) * scale);
      break;
    }
    case PixelType::F64: {
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      for (auto& v : img.samples<double>()) v = d(rng) * scale;
      break;
    }
    case PixelType::U16: {
      std::uniform_int_distribution<int> d(0, 65535);
      for (auto& v : img.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(d(rng));
      break;
    }
  }
  return img;
}

/// The reference image of a table case, computed once per case name and shared by the suites that
/// compare against it (references are slow). Thread-safe.
template <class Case, class Compute>
const Image& cachedReference(const Case& c, Compute&& compute) {
  static std::mutex mutex;
  static std::map<std::string, Image> cache;
  const std::lock_guard lock(mutex);
  auto it = cache.find(c.name());
  if (it == cache.end()) it = cache.emplace(c.name(), compute(c)).first;
  return it->second;
}

/// Sample i of all of them (interleaved order) as a double.
inline double sampleAt(const Image& img, std::size_t i) {
  switch (img.type()) {
    case PixelType::U8:
      return img.samples<std::uint8_t>()[i];
    case PixelType::F32:
      return img.samples<float>()[i];
    case PixelType::F64:
      return img.samples<double>()[i];
    case PixelType::U16:
      return img.samples<std::uint16_t>()[i];
  }
  return 0;
}

/// The largest |sample|.
inline double maxAbsSample(const Image& img) {
  double m = 0;
  for (std::size_t i = 0; i < img.pixelCount() * img.channels(); ++i) m = std::max(m, std::abs(sampleAt(img, i)));
  return m;
}

/// A filter table's input: seeded random samples, f32 spread over [-1, 7) (means far from 0 next to
/// means near it).
inline Image filterTestImage(int width, int height, int channels, PixelType type, unsigned seed) {
  Image img = randomImage(width, height, channels, type, seed);
  if (type == PixelType::F32)
    for (float& v : img.samples<float>()) v = v * 4.f + 3.f;
  return img;
}

/// "reflect101", "constant0", "constantV": a border in a case name, with whether its value is non-zero.
inline std::string borderCaseName(BorderMode mode, bool nonzeroValue) {
  std::string name(toString(mode));
  if (mode == BorderMode::Constant) name += nonzeroValue ? "V" : "0";
  return name;
}

/// What every filter's test table varies besides the filter's own parameters: the image (size,
/// type, channels) and the border (its mode and, for constant, a zero or a non-zero value).
struct FilterCaseImage {
  int width, height;
  BorderMode mode;
  bool nonzeroValue;
  PixelType type;
  int channels;

  /// The border, its constant value `u8Value` or `floatValue` by the type where non-zero.
  Border border(double u8Value, double floatValue) const {
    return {mode, nonzeroValue ? (type == PixelType::U8 ? u8Value : floatValue) : 0.0};
  }
  /// "13x7_constantV_u8c3": the start of a case's name.
  std::string imageName() const {
    return std::to_string(width) + "x" + std::to_string(height) + "_" + borderCaseName(mode, nonzeroValue) + "_" +
           std::string(toString(type)) + "c" + std::to_string(channels);
  }
  /// filterTestImage seeded by the size and channels (each suite its own multipliers).
  Image input(unsigned widthFactor, unsigned heightFactor) const {
    return filterTestImage(width, height, channels, type,
                           unsigned(width) * widthFactor + unsigned(height) * heightFactor + unsigned(channels));
  }
};

/// Runs op.runCpu(img) reporting progress and returns every fraction it reported; then checks that
/// a run whose cancel flag is already set throws OperationCancelled. `op`: an Operation or any type
/// with its runCpu (FftConvolver).
template <class Op>
std::vector<double> cpuProgressAndCancel(const Op& op, const Image& img) {
  std::vector<double> seen;
  CpuControl control;
  control.progress = [&](double fraction) { seen.push_back(fraction); };
  (void)op.runCpu(img, control);
  std::atomic<bool> cancel{true};
  CpuControl stop;
  stop.cancel = &cancel;
  EXPECT_THROW((void)op.runCpu(img, stop), OperationCancelled);
  return seen;
}

/// Passes when every sample of `actual` is within `absTol + relTol * |expected|` of `expected`;
/// otherwise names the first differing pixel with both values and how many differ.
inline ::testing::AssertionResult imagesNear(const Image& expected, const Image& actual, double absTol,
                                             double relTol = 0.0) {
  if (expected.width() != actual.width() || expected.height() != actual.height() ||
      expected.channels() != actual.channels() || expected.type() != actual.type())
    return ::testing::AssertionFailure() << "shape differs: expected " << expected.describe() << ", got "
                                         << actual.describe();
  auto value = [](const Image& img, std::size_t i) { return sampleAt(img, i); };
  const std::size_t n = expected.pixelCount() * expected.channels();
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = value(expected, i), a = value(actual, i);
    const bool ok = std::abs(e - a) <= absTol + relTol * std::abs(e) || (std::isnan(e) && std::isnan(a));
    if (!ok) {
      if (first == n) first = i;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  const std::size_t px = first / expected.channels();
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << n << " samples differ; first at x=" << px % expected.width() << " y=" << px / expected.width()
     << " c=" << first % expected.channels() << ": expected " << value(expected, first) << ", got "
     << value(actual, first) << " (tolerance " << absTol << " + " << relTol << " relative)";
  return ::testing::AssertionFailure() << os.str();
}

}  // namespace gpulab::test
