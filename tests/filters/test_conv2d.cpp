// General 2D convolution (issue 3): scipy.signal.convolve2d semantics, the naive reference, the
// OpenCV baseline, the GPU tile code run on the host, and the GPU kernels.
//
// Oracles, strongest first: numbers computed with scipy 1.17.1 (written out below; the test needs
// no Python), the naive reference (the literal definition), OpenCV filter2D. Tolerances: u8 +-1,
// f32 1e-5 and f64 1e-12 of the result's value range (max - min, or max |v| if larger).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/kernels/conv2d.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/kernel_views.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

// ---------------------------------------------------------------------------------------------
// Helpers

constexpr std::size_t kHopperSharedBytes = 227 * 1024;  // per block, opt-in, on H100 / H200

Kernel2D kernelOf(int width, int height, std::vector<double> values) { return {width, height, std::move(values)}; }

/// Seeded coefficients. `photo`: mostly positive and summing to 1 (outputs stay mostly in 0..255,
/// with some saturation); otherwise uniform in [-1, 1).
Kernel2D randomKernel(int width, int height, unsigned seed, bool photo) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(photo ? -0.3 : -1.0, 1.0);
  Kernel2D k{width, height, std::vector<double>(static_cast<std::size_t>(width) * height)};
  for (double& v : k.values) v = d(rng);
  if (photo) {
    double sum = 0;
    for (double v : k.values) sum += v;
    if (std::abs(sum) < 1e-3) sum = 1e-3;
    for (double& v : k.values) v /= sum;
  }
  return k;
}

FilterSpec convSpec(Kernel2D kernel, ConvMode mode, Border border, bool correlate) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel = std::move(kernel);
  spec.mode = mode;
  spec.border = border;
  spec.correlate = correlate;
  return spec;
}

Image imageFrom(int width, int height, std::span<const double> values, PixelType type) {
  Image img(width, height, 1, PixelType::F64);
  std::copy(values.begin(), values.end(), img.samples<double>().begin());
  return type == PixelType::F64 ? img : img.convertedTo(type);
}

/// `actual` within the per-type tolerance of `expected` (see the file comment).
::testing::AssertionResult matches(const Image& expected, const Image& actual, double relative = -1.0) {
  if (expected.type() == PixelType::U8) return test::imagesNear(expected, actual, 1.0);
  if (relative < 0) relative = expected.type() == PixelType::F32 ? 1e-5 : 1e-12;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, mag = 0;
  for (std::size_t i = 0; i < expected.pixelCount() * static_cast<std::size_t>(expected.channels()); ++i) {
    const double v = test::sampleAt(expected, i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    mag = std::max(mag, std::abs(v));
  }
  const double scale = std::max({hi - lo, mag, 1e-300});
  return test::imagesNear(expected, actual, relative * scale);
}

Image randomInput(int width, int height, int channels, PixelType type, unsigned seed) {
  return test::randomImage(width, height, channels, type, seed);
}

// ---------------------------------------------------------------------------------------------
// The GPU tile code, run on the host over pitched planar buffers laid out like a DeviceImage.

template <class T>
class HostPlanes {
 public:
  /// `pitch` 0: the row bytes rounded up to 64 (16-byte aligned rows, as cudaMallocPitch gives).
  /// `misalign` shifts the data by that many bytes (rows no longer 16-byte aligned).
  HostPlanes(int width, int height, int planes, std::size_t pitch = 0, std::size_t misalign = 0)
      : width_(width), height_(height), pitch_(pitch != 0 ? pitch : (width * sizeof(T) + 63) / 64 * 64) {
    storage_.resize(pitch_ * static_cast<std::size_t>(height) * planes + 128 + misalign);
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    base_ = storage_.data() + ((64 - address % 64) % 64) + misalign;
  }
  kernels::Plane<T> stack() { return {reinterpret_cast<T*>(base_), width_, height_, pitch_}; }
  T& at(int x, int y, int plane) { return stack().row(plane * height_ + y)[x]; }

 private:
  int width_, height_;
  std::size_t pitch_;
  std::vector<std::byte> storage_;
  std::byte* base_ = nullptr;
};

/// What Conv2D::runGpu does, with runConv2DTilesOnHost in place of the launch.
template <class T>
Image runTilesOnHostTyped(const Conv2D& conv, const Image& in, std::size_t sharedLimit, std::size_t misalign) {
  using Acc = kernels::Conv2DAccumulator<T>;
  const ImageShape os = conv.outputShape(shapeOf(in));
  const bool alpha = in.type() == PixelType::U8 && in.channels() == 4 && conv.mode() == ConvMode::Same;
  const int planes = alpha ? 3 : in.channels();
  const std::size_t inPitch = misalign != 0 ? in.width() * sizeof(T) + sizeof(T) : 0;
  const std::size_t outPitch = misalign != 0 ? os.width * sizeof(T) + sizeof(T) : 0;
  HostPlanes<T> src(in.width(), in.height(), in.channels(), inPitch, misalign);
  HostPlanes<T> dst(os.width, os.height, os.channels, outPitch, misalign);
  for (int c = 0; c < in.channels(); ++c)
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) src.at(x, y, c) = in.at<T>(x, y, c);

  std::vector<Acc> weights(conv.correlationWeights().begin(), conv.correlationWeights().end());
  kernels::Conv2DGeometry g;
  g.kernelWidth = conv.kernel().width;
  g.kernelHeight = conv.kernel().height;
  g.anchorX = conv.anchorX();
  g.anchorY = conv.anchorY();
  g.border = toKernel(conv.border().mode);
  T fill{};
  if constexpr (std::is_same_v<T, std::uint8_t>)
    fill = static_cast<T>(std::clamp(std::nearbyint(conv.border().value), 0.0, 255.0));
  else
    fill = static_cast<T>(conv.border().value);
  const auto srcStack = src.stack();
  const kernels::Plane<const T> inStack{srcStack.data, srcStack.width, srcStack.height, srcStack.pitch};
  kernels::runConv2DTilesOnHost<T>(inStack, dst.stack(), planes, g, weights.data(), fill, sharedLimit);

  Image out(os.width, os.height, os.channels, os.type);
  for (int c = 0; c < os.channels; ++c)
    for (int y = 0; y < os.height; ++y)
      for (int x = 0; x < os.width; ++x) out.at<T>(x, y, c) = alpha && c == 3 ? in.at<T>(x, y, c) : dst.at(x, y, c);
  return out;
}

Image runTilesOnHost(const Conv2D& conv, const Image& in, std::size_t sharedLimit = kHopperSharedBytes,
                     std::size_t misalign = 0) {
  switch (in.type()) {
    case PixelType::U8:
      return runTilesOnHostTyped<std::uint8_t>(conv, in, sharedLimit, misalign);
    case PixelType::F32:
      return runTilesOnHostTyped<float>(conv, in, sharedLimit, misalign);
    case PixelType::F64:
      return runTilesOnHostTyped<double>(conv, in, sharedLimit, misalign);
    case PixelType::U16:
      break;  // convolution takes no u16
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// One GPU context for all GPU tests of a suite.

class GpuSuite {
 public:
  static GpuContext& gpu() {
    if (!context()) context() = std::make_unique<GpuContext>();
    return *context();
  }
  static void release() { context().reset(); }

 private:
  static std::unique_ptr<GpuContext>& context() {
    static std::unique_ptr<GpuContext> c;
    return c;
  }
};

class GpuReleaser : public ::testing::Environment {
 public:
  void TearDown() override { GpuSuite::release(); }
};
const auto* const kGpuReleaser = ::testing::AddGlobalTestEnvironment(new GpuReleaser);

Image runOnGpu(Operation& filter, const Image& in) {
  GpuContext& gpu = GpuSuite::gpu();
  const DeviceImage d = gpu.upload(in);
  DeviceImage out;
  filter.runGpu(gpu, d, out);
  return gpu.download(out);
}

// ---------------------------------------------------------------------------------------------
// 1. scipy.signal.convolve2d, by its numbers

struct ImageData {
  int width, height;
  std::span<const double> values;
};

constexpr double kPiValues[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
constexpr double kSmallValues[] = {2, 7, 1, 8, 2, 8};
constexpr ImageData kPi{4, 3, kPiValues};
constexpr ImageData kSmall{2, 3, kSmallValues};

struct ScipyCase {
  const char* name;
  const ImageData* image;
  int kernelWidth, kernelHeight;
  std::span<const double> kernel;
  ConvMode mode;
  BorderMode border;
  double value;
  bool correlate;
  int outWidth, outHeight;
  std::span<const double> expected;
};

// Expected values: scipy 1.17.1 where scipy has the border (reflect = 'symm', wrap, constant =
// 'fill'); reflect101 and replicate through numpy.pad('reflect' / 'edge') and a 'valid'
// convolution. Correlation: convolution with the flipped kernel (scipy's correlate2d for full and
// valid; in 'same' mode our correlation is OpenCV's filter2D with anchor (kw/2, kh/2), which for
// even kernels is NOT scipy's correlate2d 'same'). Every number was also checked against a literal
// quadruple loop of scipy's definition.
constexpr double kKernel2x2[] = {1, 2, 3, 4};
constexpr double kKernel3x3[] = {1, 2, 0, 0, 1, -1, 3, 0, 2};
constexpr double kKernel4x3[] = {1, 0, 2, -1, 0, 3, 1, 0, 2, -2, 0, 1};
constexpr double kKernel5x4[] = {1, 2, 0, -1, 3, 0, 1, 4, 2, -2, 2, -1, 1, 0, 1, -3, 0, 2, 1, 1};
constexpr double kKernel1x1[] = {2};

constexpr double kCase0Expected[] = {3, 7, 6, 9, 14, 34, 36, 29, 20, 60, 53, 44};
constexpr double kCase1Expected[] = {3, 7, 6, 9, 2, 14, 34, 36, 29, 16, 20, 60, 53, 44, 40, 15, 29, 27, 44, 32};
constexpr double kCase2Expected[] = {34, 36, 29, 60, 53, 44};
constexpr double kCase3Expected[] = {56, 54, 48, 35, 36, 34, 36, 29, 62, 60, 53, 44};
constexpr double kCase4Expected[] = {66, 34, 49, 21, 14, 33, 16, 45, 66, 34, 48, 27};
constexpr double kCase5Expected[] = {28, 36, 18, 26, 22, 33, 16, 39, 50, 25, 56, 49};
constexpr double kCase6Expected[] = {35, 23, 38, 15, 35, 23, 35, 56, 27, 55, 35, 56, 32, 33, 37,
                                     30, 32, 33, 35, 23, 38, 15, 35, 23, 35, 56, 27, 55, 35, 56};
constexpr double kCase7Expected[] = {44, 21, 51, 24, 26, 37, 30, 37, 38, 46, 35, 45};
constexpr double kCase8Expected[] = {19, 22, 29, 9, 27, 51, 21, 36, 47, 15, 40, 53};
constexpr double kCase9Expected[] = {30, 24, 43, 4, 35, 46, 21, 37, 32, 15, 31, 46};
constexpr double kCase10Expected[] = {25.5, 18, 34.5, 7, 21.5, 53, 21, 33.5, 33, 7.5, 36, 36};
constexpr double kCase11Expected[] = {13, 35, 4,  26, 24, 0,  35, 35, 19, 22, 29, 9,  26, 23, 34, 27, 51, 21,
                                      36, 50, 18, 26, 47, 15, 40, 53, 42, 54, 44, 29, 30, 48, 33, 43, 42};
constexpr double kCase12Expected[] = {21};
constexpr double kCase13Expected[] = {12, 2, 5, 27, 13, 17, 51, 11, 6, 34, 17, 44};
constexpr double kCase14Expected[] = {51};
constexpr double kCase15Expected[] = {55, 75, 52, 80, 59, 77};
constexpr double kCase16Expected[] = {41, 86, 51, 80, 43, 88};
constexpr double kCase17Expected[] = {46, 85, 46, 85, 46, 85, 45, 84, 45, 84, 45, 84, 51, 81, 51, 81, 51, 81,
                                      46, 85, 46, 85, 46, 85, 45, 84, 45, 84, 45, 84, 51, 81, 51, 81, 51, 81};
constexpr double kCase18Expected[] = {56, 95, 54, 93, 51, 97};
constexpr double kCase19Expected[] = {-11, 0,   2, -17, -13, 10,  -12, 2,   24,  22, -7, -3, -5,  16,  16, 31, 3,  3,
                                      -19, -19, 6, 56,  11,  -15, -14, -26, -16, 15, 0,  4,  -23, -41, -8, 7,  -2, -5};
constexpr double kCase20Expected[] = {6, 2, 8, 2, 10, 18, 4, 12, 10, 6, 10, 16};

constexpr ScipyCase kScipyCases[] = {
    {"k2x2_same_constant0", &kPi, 2, 2, kKernel2x2, ConvMode::Same, BorderMode::Constant, 0.0, false, 4, 3,
     kCase0Expected},
    {"k2x2_full_constant0", &kPi, 2, 2, kKernel2x2, ConvMode::Full, BorderMode::Constant, 0.0, false, 5, 4,
     kCase1Expected},
    {"k2x2_valid", &kPi, 2, 2, kKernel2x2, ConvMode::Valid, BorderMode::Reflect101, 0.0, false, 3, 2, kCase2Expected},
    {"k2x2_same_reflect101", &kPi, 2, 2, kKernel2x2, ConvMode::Same, BorderMode::Reflect101, 0.0, false, 4, 3,
     kCase3Expected},
    {"k3x3_same_reflect101", &kPi, 3, 3, kKernel3x3, ConvMode::Same, BorderMode::Reflect101, 0.0, false, 4, 3,
     kCase4Expected},
    {"k3x3_same_replicate", &kPi, 3, 3, kKernel3x3, ConvMode::Same, BorderMode::Replicate, 0.0, false, 4, 3,
     kCase5Expected},
    {"k3x3_full_wrap_correlate", &kPi, 3, 3, kKernel3x3, ConvMode::Full, BorderMode::Wrap, 0.0, true, 6, 5,
     kCase6Expected},
    {"k3x3_same_reflect_correlate", &kPi, 3, 3, kKernel3x3, ConvMode::Same, BorderMode::Reflect, 0.0, true, 4, 3,
     kCase7Expected},
    {"k4x3_same_reflect", &kPi, 4, 3, kKernel4x3, ConvMode::Same, BorderMode::Reflect, 0.0, false, 4, 3,
     kCase8Expected},
    {"k4x3_same_wrap", &kPi, 4, 3, kKernel4x3, ConvMode::Same, BorderMode::Wrap, 0.0, false, 4, 3, kCase9Expected},
    {"k4x3_same_constant2p5", &kPi, 4, 3, kKernel4x3, ConvMode::Same, BorderMode::Constant, 2.5, false, 4, 3,
     kCase10Expected},
    {"k4x3_full_reflect", &kPi, 4, 3, kKernel4x3, ConvMode::Full, BorderMode::Reflect, 0.0, false, 7, 5,
     kCase11Expected},
    {"k4x3_valid", &kPi, 4, 3, kKernel4x3, ConvMode::Valid, BorderMode::Wrap, 0.0, false, 1, 1, kCase12Expected},
    {"k4x3_same_constant0_correlate", &kPi, 4, 3, kKernel4x3, ConvMode::Same, BorderMode::Constant, 0.0, true, 4, 3,
     kCase13Expected},
    {"k4x3_valid_correlate", &kPi, 4, 3, kKernel4x3, ConvMode::Valid, BorderMode::Reflect, 0.0, true, 1, 1,
     kCase14Expected},
    {"k5x4_larger_same_reflect", &kSmall, 5, 4, kKernel5x4, ConvMode::Same, BorderMode::Reflect, 0.0, false, 2, 3,
     kCase15Expected},
    {"k5x4_larger_same_reflect101", &kSmall, 5, 4, kKernel5x4, ConvMode::Same, BorderMode::Reflect101, 0.0, false, 2, 3,
     kCase16Expected},
    {"k5x4_larger_full_wrap", &kSmall, 5, 4, kKernel5x4, ConvMode::Full, BorderMode::Wrap, 0.0, false, 6, 6,
     kCase17Expected},
    {"k5x4_larger_same_replicate_correlate", &kSmall, 5, 4, kKernel5x4, ConvMode::Same, BorderMode::Replicate, 0.0,
     true, 2, 3, kCase18Expected},
    {"k5x4_larger_full_constantm1", &kSmall, 5, 4, kKernel5x4, ConvMode::Full, BorderMode::Constant, -1.0, false, 6, 6,
     kCase19Expected},
    {"k1x1_same_reflect101", &kPi, 1, 1, kKernel1x1, ConvMode::Same, BorderMode::Reflect101, 0.0, false, 4, 3,
     kCase20Expected},
};

std::string scipyName(const ::testing::TestParamInfo<std::size_t>& info) { return kScipyCases[info.param].name; }

class ScipyOracle : public ::testing::TestWithParam<std::size_t> {
 protected:
  const ScipyCase& c() const { return kScipyCases[GetParam()]; }
  Conv2D conv() const {
    const Kernel2D k{c().kernelWidth, c().kernelHeight, {c().kernel.begin(), c().kernel.end()}};
    return Conv2D(convSpec(k, c().mode, {c().border, c().value}, c().correlate));
  }
  Image expected(PixelType type) const { return imageFrom(c().outWidth, c().outHeight, c().expected, type); }
  Image input(PixelType type) const { return imageFrom(c().image->width, c().image->height, c().image->values, type); }
};

TEST_P(ScipyOracle, ReferenceMatchesScipy) {
  const Conv2D f = conv();
  const ImageShape os = f.outputShape(shapeOf(input(PixelType::F64)));
  EXPECT_EQ(os.width, c().outWidth);
  EXPECT_EQ(os.height, c().outHeight);
  EXPECT_TRUE(matches(expected(PixelType::F64), f.runReference(input(PixelType::F64))));
  EXPECT_TRUE(matches(expected(PixelType::F32), f.runReference(input(PixelType::F32))));
}

TEST_P(ScipyOracle, OpenCvMatchesScipy) {
  const Conv2D f = conv();
  EXPECT_TRUE(matches(expected(PixelType::F64), f.runCpu(input(PixelType::F64)), 1e-9));
  EXPECT_TRUE(matches(expected(PixelType::F32), f.runCpu(input(PixelType::F32))));
}

TEST_P(ScipyOracle, GpuTilesOnHostMatchScipy) {
  const Conv2D f = conv();
  EXPECT_TRUE(matches(expected(PixelType::F64), runTilesOnHost(f, input(PixelType::F64))));
  EXPECT_TRUE(matches(expected(PixelType::F32), runTilesOnHost(f, input(PixelType::F32))));
  EXPECT_TRUE(matches(expected(PixelType::F32), runTilesOnHost(f, input(PixelType::F32), kHopperSharedBytes, 4)));
}

TEST_P(ScipyOracle, GpuMatchesScipy) {
  GPULAB_REQUIRE_GPU();
  Conv2D f = conv();
  EXPECT_TRUE(matches(expected(PixelType::F64), runOnGpu(f, input(PixelType::F64))));
  EXPECT_TRUE(matches(expected(PixelType::F32), runOnGpu(f, input(PixelType::F32))));
}

INSTANTIATE_TEST_SUITE_P(Conv2D, ScipyOracle, ::testing::Range<std::size_t>(0, std::size(kScipyCases)), scipyName);

// ---------------------------------------------------------------------------------------------
// 2. Geometry: every size x kernel x mode x border x convolve/correlate, f64 one channel

struct Size2 {
  int width, height;
};
const Size2 kImageSizes[] = {{1, 1}, {2, 3}, {13, 12}, {257, 131}};
// Sizes are width x height: 1x7 is a column of seven. 21x17 is larger than every image but the
// last, 15x15 than the first three.
const Size2 kKernelSizes[] = {{1, 1}, {2, 2}, {3, 3}, {4, 3}, {5, 5}, {1, 7}, {7, 1}, {15, 15}, {21, 17}};
const Border kBorders[] = {{BorderMode::Reflect101, 0}, {BorderMode::Reflect, 0},  {BorderMode::Replicate, 0},
                           {BorderMode::Wrap, 0},       {BorderMode::Constant, 0}, {BorderMode::Constant, 0.75}};
const ConvMode kModes[] = {ConvMode::Same, ConvMode::Full, ConvMode::Valid};

using GeometryParam = std::tuple<Size2, Size2, ConvMode>;

std::string modeText(ConvMode m) { return m == ConvMode::Same ? "same" : m == ConvMode::Full ? "full" : "valid"; }

std::string borderText(const Border& b) {
  std::string s(toString(b.mode));
  if (b.mode == BorderMode::Constant) s += "(" + std::to_string(b.value) + ")";
  return s;
}

std::string caseText(const Border& b, bool correlate) {
  return borderText(b) + (correlate ? " correlate" : " convolve");
}

std::string geometryName(const ::testing::TestParamInfo<GeometryParam>& info) {
  const auto& [size, k, mode] = info.param;
  return "img" + std::to_string(size.width) + "x" + std::to_string(size.height) + "_k" + std::to_string(k.width) + "x" +
         std::to_string(k.height) + "_" + modeText(mode);
}

/// Each test covers every border mode, convolution and correlation (SCOPED_TRACE names the case).
class Geometry : public ::testing::TestWithParam<GeometryParam> {
 protected:
  Conv2D conv(const Border& border, bool correlate) const {
    const auto& [size, k, mode] = GetParam();
    return Conv2D(convSpec(randomKernel(k.width, k.height, 7u + static_cast<unsigned>(k.width * 31 + k.height), false),
                           mode, border, correlate));
  }
  Image input() const {
    const auto& size = std::get<0>(GetParam());
    return randomInput(size.width, size.height, 1, PixelType::F64,
                       static_cast<unsigned>(size.width * 131 + size.height));
  }
  bool emptyValid() const {
    const auto& [size, k, mode] = GetParam();
    return mode == ConvMode::Valid && (k.width > size.width || k.height > size.height);
  }
};

TEST_P(Geometry, OpenCvAndGpuTilesMatchReference) {
  const Image in = input();
  for (const Border& border : kBorders) {
    for (const bool correlate : {false, true}) {
      SCOPED_TRACE(caseText(border, correlate));
      const Conv2D f = conv(border, correlate);
      if (emptyValid()) {
        EXPECT_THROW(f.outputShape(shapeOf(in)), std::invalid_argument);
        EXPECT_THROW(f.runReference(in), std::invalid_argument);
        EXPECT_THROW(f.runCpu(in), std::invalid_argument);
        continue;
      }
      const Image ref = f.runReference(in);
      EXPECT_TRUE(matches(ref, f.runCpu(in))) << "OpenCV";
      EXPECT_TRUE(matches(ref, runTilesOnHost(f, in))) << "GPU tile code on the host";
    }
  }
}

TEST_P(Geometry, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const Image in = input();
  for (const Border& border : kBorders) {
    for (const bool correlate : {false, true}) {
      SCOPED_TRACE(caseText(border, correlate));
      Conv2D f = conv(border, correlate);
      if (emptyValid()) {
        const DeviceImage d = GpuSuite::gpu().upload(in);
        DeviceImage out;
        EXPECT_THROW(f.runGpu(GpuSuite::gpu(), d, out), std::invalid_argument);
        continue;
      }
      EXPECT_TRUE(matches(f.runReference(in), runOnGpu(f, in)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Conv2D, Geometry,
                         ::testing::Combine(::testing::ValuesIn(kImageSizes), ::testing::ValuesIn(kKernelSizes),
                                            ::testing::ValuesIn(kModes)),
                         geometryName);

// ---------------------------------------------------------------------------------------------
// 3. Types: u8 gray / RGB / RGBA, f32 1 / 3 / 4 channels, f64 1 / 2 channels

struct TypeCase {
  PixelType type;
  int channels;
};
const TypeCase kTypes[] = {{PixelType::U8, 1},  {PixelType::U8, 3},  {PixelType::U8, 4},  {PixelType::F32, 1},
                           {PixelType::F32, 3}, {PixelType::F32, 4}, {PixelType::F64, 1}, {PixelType::F64, 2}};
struct ShapeCase {
  Size2 image, kernel;
};
// 521 (prime) is wider than a block of the streaming 3x3 / 5x5 code (512 columns), 7x300 is split
// into many bands.
const ShapeCase kTypeShapes[] = {{{13, 12}, {4, 3}},   {{257, 131}, {5, 5}}, {{67, 45}, {3, 3}},
                                 {{40, 37}, {15, 15}}, {{521, 37}, {3, 3}},  {{7, 300}, {5, 5}}};

using TypeParam = std::tuple<TypeCase, ShapeCase, ConvMode>;

std::string typeName(const ::testing::TestParamInfo<TypeParam>& info) {
  const auto& [t, shape, mode] = info.param;
  return std::string(toString(t.type)) + "x" + std::to_string(t.channels) + "_img" + std::to_string(shape.image.width) +
         "x" + std::to_string(shape.image.height) + "_k" + std::to_string(shape.kernel.width) + "x" +
         std::to_string(shape.kernel.height) + "_" + modeText(mode);
}

class Types : public ::testing::TestWithParam<TypeParam> {
 protected:
  Conv2D conv(Border border, bool correlate) const {
    const auto& [t, shape, mode] = GetParam();
    // u8: a constant border of 300 saturates to 255 (0.75 would round to 1).
    if (t.type == PixelType::U8 && border.mode == BorderMode::Constant && border.value != 0) border.value = 300;
    return Conv2D(convSpec(randomKernel(shape.kernel.width, shape.kernel.height, 99u, t.type == PixelType::U8), mode,
                           border, correlate));
  }
  Image input() const {
    const auto& [t, shape, mode] = GetParam();
    return randomInput(shape.image.width, shape.image.height, t.channels, t.type, 1234u);
  }
  bool same() const { return std::get<2>(GetParam()) == ConvMode::Same; }
  static void expectAlphaUntouched(const Image& in, const Image& out, const char* who) {
    if (in.type() != PixelType::U8 || in.channels() != 4) return;
    EXPECT_EQ(in.channel(3), out.channel(3)) << who << " changed the alpha channel";
  }
};

TEST_P(Types, OpenCvAndGpuTilesMatchReference) {
  const Image in = input();
  for (const Border& border : kBorders) {
    for (const bool correlate : {false, true}) {
      SCOPED_TRACE(caseText(border, correlate));
      const Conv2D f = conv(border, correlate);
      const Image ref = f.runReference(in);
      ASSERT_EQ(ref.channels(), in.channels());
      const Image cpu = f.runCpu(in);
      EXPECT_TRUE(matches(ref, cpu)) << "OpenCV";
      const Image tiles = runTilesOnHost(f, in);
      EXPECT_TRUE(matches(ref, tiles)) << "GPU tile code on the host";
      if (same()) {
        expectAlphaUntouched(in, ref, "the reference");
        expectAlphaUntouched(in, cpu, "OpenCV");
        expectAlphaUntouched(in, tiles, "the tile code");
      }
    }
  }
}

TEST_P(Types, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const Image in = input();
  for (const Border& border : kBorders) {
    for (const bool correlate : {false, true}) {
      SCOPED_TRACE(caseText(border, correlate));
      Conv2D f = conv(border, correlate);
      const Image gpu = runOnGpu(f, in);
      EXPECT_TRUE(matches(f.runReference(in), gpu));
      if (same()) expectAlphaUntouched(in, gpu, "the GPU");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Conv2D, Types,
                         ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::ValuesIn(kTypeShapes),
                                            ::testing::ValuesIn(kModes)),
                         typeName);

// ---------------------------------------------------------------------------------------------
// 4. Exact cases every implementation must get bit for bit

TEST(Conv2DExact, IdentityKernelReturnsTheInput) {
  for (const TypeCase t : kTypes) {
    for (const Border& b : kBorders) {
      const Image in = randomInput(19, 7, t.channels, t.type, 5u);
      Conv2D f(convSpec(kernelOf(1, 1, {1.0}), ConvMode::Same, b, false));
      EXPECT_EQ(f.runReference(in), in) << in.describe() << " " << borderText(b);
      EXPECT_EQ(f.runCpu(in), in) << in.describe() << " " << borderText(b);
      EXPECT_EQ(runTilesOnHost(f, in), in) << in.describe() << " " << borderText(b);
      if (cudaAvailable()) {
        EXPECT_EQ(runOnGpu(f, in), in) << in.describe() << " " << borderText(b);
      }
    }
  }
}

// A single 1 at kernel (row 0, column 0) makes 'same' a shift: out(x, y) = in(x + 1, y + 1) for a
// 3x3 kernel (scipy centres 'same' at (kw-1)/2), and a correlation the opposite shift.
TEST(Conv2DExact, DeltaKernelShiftsTheWayScipyDoes) {
  const Image in = randomInput(23, 11, 3, PixelType::U8, 77u);
  const Border wrap{BorderMode::Wrap, 0};
  Conv2D conv(convSpec(kernelOf(3, 3, {1, 0, 0, 0, 0, 0, 0, 0, 0}), ConvMode::Same, wrap, false));
  Conv2D corr(convSpec(kernelOf(3, 3, {1, 0, 0, 0, 0, 0, 0, 0, 0}), ConvMode::Same, wrap, true));
  Image shiftedBack(23, 11, 3, PixelType::U8), shiftedOn(23, 11, 3, PixelType::U8);
  for (int y = 0; y < 11; ++y)
    for (int x = 0; x < 23; ++x)
      for (int c = 0; c < 3; ++c) {
        shiftedBack.at<std::uint8_t>(x, y, c) = in.at<std::uint8_t>((x + 1) % 23, (y + 1) % 11, c);
        shiftedOn.at<std::uint8_t>(x, y, c) = in.at<std::uint8_t>((x + 22) % 23, (y + 10) % 11, c);
      }
  EXPECT_EQ(conv.runReference(in), shiftedBack);
  EXPECT_EQ(conv.runCpu(in), shiftedBack);
  EXPECT_EQ(runTilesOnHost(conv, in), shiftedBack);
  EXPECT_EQ(corr.runReference(in), shiftedOn);
  EXPECT_EQ(corr.runCpu(in), shiftedOn);
  EXPECT_EQ(runTilesOnHost(corr, in), shiftedOn);
  if (cudaAvailable()) {
    EXPECT_EQ(runOnGpu(conv, in), shiftedBack);
    EXPECT_EQ(runOnGpu(corr, in), shiftedOn);
  }
}

// u8 results round to nearest and saturate: 0.5 * 3 = 1.5 -> 2 (ties to even), 0.5 * 5 = 2.5 -> 2,
// 2 * 200 = 400 -> 255, -1 * 7 -> 0.
TEST(Conv2DExact, U8RoundsAndSaturates) {
  Image in(4, 1, 1, PixelType::U8);
  const std::uint8_t values[] = {3, 5, 200, 7};
  std::copy(std::begin(values), std::end(values), in.samples<std::uint8_t>().begin());
  for (const double k : {0.5, 2.0, -1.0}) {
    Conv2D f(convSpec(kernelOf(1, 1, {k}), ConvMode::Same, {}, false));
    Image expected(4, 1, 1, PixelType::U8);
    for (int x = 0; x < 4; ++x)
      expected.at<std::uint8_t>(x, 0) =
          static_cast<std::uint8_t>(std::clamp(std::nearbyint(k * values[x]), 0.0, 255.0));
    EXPECT_EQ(f.runReference(in), expected) << "k=" << k;
    EXPECT_EQ(runTilesOnHost(f, in), expected) << "k=" << k;
    if (cudaAvailable()) {
      EXPECT_EQ(runOnGpu(f, in), expected) << "k=" << k;
    }
  }
  EXPECT_EQ(in.at<std::uint8_t>(0, 0), 3);  // (the table above relies on these inputs)
}

// ---------------------------------------------------------------------------------------------
// 5. The tile code with every block shape the launcher can fall back to, unaligned rows, and the
//    largest kernels (more coefficients than travel in the launch)

TEST(Conv2DTiles, LaunchShapeFallsBackToSmallerBlocks) {
  const auto big = kernels::conv2DLaunchShape<float>(3, 3, kHopperSharedBytes);
  EXPECT_EQ(big.blockX, 32);
  EXPECT_EQ(big.blockY, 8);
  EXPECT_EQ(big.tileWidth, 128);
  EXPECT_EQ(big.tileHeight, 64);
  EXPECT_LE(big.sharedBytes, 48u * 1024u);
  const auto maxFloat = kernels::conv2DLaunchShape<float>(127, 127, kHopperSharedBytes);
  EXPECT_GT(maxFloat.blockX, 0);
  EXPECT_LE(maxFloat.sharedBytes, kHopperSharedBytes);
  const auto maxDouble = kernels::conv2DLaunchShape<double>(127, 127, kHopperSharedBytes);
  EXPECT_GT(maxDouble.blockX, 0);
  EXPECT_LE(maxDouble.sharedBytes, kHopperSharedBytes);
  EXPECT_EQ(kernels::conv2DLaunchShape<double>(127, 127, 16 * 1024).blockX, 0);
}

/// Shared-memory limits, one per block shape the launcher picks for a kw x kh kernel of T, largest first.
template <class T>
std::vector<std::size_t> limitsForEachShape(int kw, int kh) {
  std::vector<std::size_t> limits;
  int lastX = -1, lastY = -1;
  for (std::size_t limit = kHopperSharedBytes; limit >= 1024; limit = limit * 7 / 8) {
    const auto s = kernels::conv2DLaunchShape<T>(kw, kh, limit);
    if (s.blockX == 0) break;
    if (s.blockX != lastX || s.blockY != lastY) limits.push_back(limit);
    lastX = s.blockX;
    lastY = s.blockY;
  }
  return limits;
}

TEST(Conv2DTiles, SmallerBlockShapesAndUnalignedRowsMatchReference) {
  for (const TypeCase t : {TypeCase{PixelType::U8, 3}, TypeCase{PixelType::F32, 1}, TypeCase{PixelType::F64, 1}}) {
    const std::vector<std::size_t> limits = t.type == PixelType::U8    ? limitsForEachShape<std::uint8_t>(15, 15)
                                            : t.type == PixelType::F32 ? limitsForEachShape<float>(15, 15)
                                                                       : limitsForEachShape<double>(15, 15);
    ASSERT_EQ(limits.size(), 6u) << "every block shape of the launcher, for " << toString(t.type);
    for (const Border& b :
         {Border{BorderMode::Reflect101, 0}, Border{BorderMode::Wrap, 0}, Border{BorderMode::Constant, 0.75}}) {
      for (const ConvMode mode : kModes) {
        const Image in = randomInput(53, 41, t.channels, t.type, 3u);
        Conv2D f(convSpec(randomKernel(15, 15, 11u, t.type == PixelType::U8), mode, b, mode == ConvMode::Full));
        const Image ref = f.runReference(in);
        for (const std::size_t limit : limits)
          EXPECT_TRUE(matches(ref, runTilesOnHost(f, in, limit))) << in.describe() << " limit " << limit;
        EXPECT_TRUE(matches(ref, runTilesOnHost(f, in, kHopperSharedBytes, bytesPerSample(t.type))))
            << in.describe() << " unaligned rows";
      }
    }
  }
}

TEST(Conv2DTiles, StreamingAndTileCodeGiveTheSameBits) {
  // Aligned rows take the streaming code for 3x3 and 5x5, unaligned rows the shared-memory tiles;
  // both add the products in the same order, so float results agree to the bit.
  for (const Size2 k : {Size2{3, 3}, Size2{5, 5}}) {
    for (const ConvMode mode : kModes) {
      for (const Border& b : kBorders) {
        const Image in = randomInput(523, 41, 1, PixelType::F32, 17u);
        const Conv2D f(convSpec(randomKernel(k.width, k.height, 23u, false), mode, b, false));
        const Image streamed = runTilesOnHost(f, in);
        const Image tiled = runTilesOnHost(f, in, kHopperSharedBytes, sizeof(float));
        EXPECT_TRUE(streamed == tiled) << k.width << "x" << k.height << " " << modeText(mode) << " " << borderText(b);
      }
    }
  }
}

TEST(Conv2DTiles, KernelsBeyondTheLaunchCapacityMatchReference) {
  // 51x47 = 2397 coefficients: more than kConv2DMaxLaunchCoefficients, read from device memory.
  static_assert(51 * 47 > kernels::kConv2DMaxLaunchCoefficients);
  for (const TypeCase t : {TypeCase{PixelType::U8, 1}, TypeCase{PixelType::F32, 1}, TypeCase{PixelType::F64, 1}}) {
    const Image in = randomInput(97, 83, t.channels, t.type, 21u);
    for (const ConvMode mode : kModes) {
      Conv2D f(convSpec(randomKernel(51, 47, 5u, t.type == PixelType::U8), mode, {BorderMode::Reflect, 0}, false));
      const Image ref = f.runReference(in);
      EXPECT_TRUE(matches(ref, runTilesOnHost(f, in))) << in.describe();
      EXPECT_TRUE(matches(ref, f.runCpu(in))) << in.describe() << " OpenCV";
      if (cudaAvailable()) {
        EXPECT_TRUE(matches(ref, runOnGpu(f, in))) << in.describe() << " GPU";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 6. GPU only: a photo-sized image, the largest kernel, output reuse, unaligned planes

TEST(Conv2DGpu, Photo640x480Kernel15MatchesReference) {
  GPULAB_REQUIRE_GPU();
  for (const TypeCase t : {TypeCase{PixelType::F32, 1}, TypeCase{PixelType::U8, 4}}) {
    const Image in = randomInput(640, 480, t.channels, t.type, 640u);
    Conv2D f(convSpec(randomKernel(15, 15, 15u, t.type == PixelType::U8), ConvMode::Same, {}, false));
    const Image gpu = runOnGpu(f, in);
    EXPECT_TRUE(matches(f.runReference(in), gpu)) << in.describe();
    if (t.channels == 4) {
      EXPECT_EQ(gpu.channel(3), in.channel(3));
    }
  }
}

TEST(Conv2DGpu, LargestKernelMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const Image in = randomInput(140, 130, 1, PixelType::F32, 127u);
  Conv2D f(convSpec(randomKernel(127, 127, 127u, false), ConvMode::Same, {}, false));
  EXPECT_TRUE(matches(f.runReference(in), runOnGpu(f, in)));
}

TEST(Conv2DGpu, ReusesTheOutputImageAndRepeatsExactly) {
  GPULAB_REQUIRE_GPU();
  GpuContext& gpu = GpuSuite::gpu();
  const Image in = randomInput(300, 200, 3, PixelType::F32, 9u);
  Conv2D f(convSpec(randomKernel(5, 5, 9u, false), ConvMode::Full, {BorderMode::Wrap, 0}, false));
  const DeviceImage d = gpu.upload(in);
  DeviceImage out;
  f.runGpu(gpu, d, out);
  const void* first = planeOf<float>(out, 0).data;
  const Image a = gpu.download(out);
  f.runGpu(gpu, d, out);
  EXPECT_EQ(planeOf<float>(out, 0).data, first) << "runGpu reallocated an output of the right shape";
  EXPECT_EQ(gpu.download(out), a);
  EXPECT_TRUE(matches(f.runReference(in), a));
}

TEST(Conv2DGpu, RejectsRunningInPlace) {
  GPULAB_REQUIRE_GPU();
  GpuContext& gpu = GpuSuite::gpu();
  DeviceImage d = gpu.upload(randomInput(8, 8, 1, PixelType::F32, 1u));
  Conv2D f(convSpec(kernelOf(1, 1, {1.0}), ConvMode::Same, {}, false));
  EXPECT_THROW(f.runGpu(gpu, d, d), std::invalid_argument);
}

TEST(Conv2DGpu, UnalignedPlanesTakeTheScalarPath) {
  GPULAB_REQUIRE_GPU();
  GpuContext& gpu = GpuSuite::gpu();
  const int w = 77, h = 45;
  const Image in = randomInput(w, h, 1, PixelType::F32, 45u);
  Conv2D f(convSpec(randomKernel(7, 5, 3u, false), ConvMode::Same, {BorderMode::Reflect101, 0}, false));
  const std::size_t pitch = (w + 1) * sizeof(float);  // rows 4-byte aligned only
  DeviceBuffer src(pitch * h + 16), dst(pitch * h + 16);
  float* srcData = src.as<float>() + 1;
  float* dstData = dst.as<float>() + 1;
  // On the kernel's stream: a cudaMemcpy2D from pageable memory may return before its DMA lands.
  GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(srcData, pitch, in.data(), in.rowBytes(), in.rowBytes(), h,
                                      cudaMemcpyHostToDevice, gpu.stream()));
  std::vector<float> weights(f.correlationWeights().begin(), f.correlationWeights().end());
  kernels::Conv2DGeometry g{7, 5, f.anchorX(), f.anchorY(), kernels::BorderMode::Reflect101};
  kernels::launchConv2D<float>({srcData, w, h, pitch}, {dstData, w, h, pitch}, 1, g, weights.data(), nullptr, 0.f,
                               gpu.stream());
  gpu.synchronize();
  Image out(w, h, 1, PixelType::F32);
  GPULAB_CUDA_CHECK(
      cudaMemcpy2D(out.data(), out.rowBytes(), dstData, pitch, out.rowBytes(), h, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(matches(f.runReference(in), out));
}

// ---------------------------------------------------------------------------------------------
// 7. Bad parameters: one sentence, std::invalid_argument

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(Conv2DErrors, BadKernelsAreRejectedWithOneSentence) {
  const auto make = [](Kernel2D k) { return [k] { Conv2D f(convSpec(k, ConvMode::Same, {}, false)); }; };
  EXPECT_NE(messageOf(make(Kernel2D{})).find("empty"), std::string::npos);
  EXPECT_NE(messageOf(make(kernelOf(0, 3, {}))).find("empty"), std::string::npos);
  EXPECT_NE(messageOf(make(kernelOf(2, 2, {1, 2, 3}))).find("3 values"), std::string::npos);
  EXPECT_NE(messageOf(make(kernelOf(128, 1, std::vector<double>(128, 1.0)))).find("127x127"), std::string::npos);
  EXPECT_NE(messageOf(make(kernelOf(1, 128, std::vector<double>(128, 1.0)))).find("127x127"), std::string::npos);
  const std::string nan = messageOf(make(kernelOf(2, 2, {1, 2, std::nan(""), 4})));
  EXPECT_NE(nan.find("non-finite"), std::string::npos) << nan;
  EXPECT_NE(nan.find("row 1, column 0"), std::string::npos) << nan;
  EXPECT_NE(messageOf(make(kernelOf(1, 1, {std::numeric_limits<double>::infinity()}))).find("non-finite"),
            std::string::npos);
  EXPECT_NO_THROW(Conv2D(convSpec(kernelOf(127, 127, std::vector<double>(127 * 127, 1.0)), ConvMode::Same, {}, false)));
  // Through the shared factory too.
  EXPECT_THROW(makeFilter(convSpec(Kernel2D{}, ConvMode::Same, {}, false)), std::invalid_argument);
  EXPECT_NE(dynamic_cast<Conv2D*>(makeFilter(convSpec(kernelOf(1, 1, {1}), ConvMode::Same, {}, false)).get()), nullptr);
}

TEST(Conv2DErrors, BadBordersImagesAndValidSizesAreRejected) {
  EXPECT_NE(messageOf([] {
              Conv2D f(convSpec(kernelOf(1, 1, {1}), ConvMode::Same, {BorderMode::Constant, std::nan("")}, false));
            }).find("finite"),
            std::string::npos);
  Conv2D f(convSpec(kernelOf(4, 3, std::vector<double>(12, 1.0)), ConvMode::Valid, {}, false));
  const std::string tooSmall = messageOf([&] { f.outputShape({3, 10, 1, PixelType::F32}); });
  EXPECT_NE(tooSmall.find("'valid'"), std::string::npos) << tooSmall;
  EXPECT_NE(tooSmall.find("3x10"), std::string::npos) << tooSmall;
  EXPECT_THROW(f.outputShape({10, 2, 1, PixelType::F32}), std::invalid_argument);
  EXPECT_EQ(f.outputShape({4, 3, 1, PixelType::F32}).width, 1);
  EXPECT_THROW(f.outputShape({8, 8, 2, PixelType::U8}), std::invalid_argument);
  EXPECT_THROW(f.outputShape({8, 8, 5, PixelType::F32}), std::invalid_argument);
  EXPECT_THROW(f.runCpu(Image{}), std::invalid_argument);
  EXPECT_THROW(f.runReference(Image{}), std::invalid_argument);
  EXPECT_EQ(f.outputShape({8, 8, 2, PixelType::F64}).channels, 2);
}

// ---------------------------------------------------------------------------------------------
// 8. CpuControl, describe()

TEST(Conv2DCpu, ReportsProgressPerChannelAndCancels) {
  const Image in = randomInput(64, 48, 3, PixelType::U8, 2u);
  Conv2D f(convSpec(randomKernel(5, 5, 1u, true), ConvMode::Same, {}, false));
  std::vector<double> seen;
  CpuControl control;
  control.progress = [&](double p) { seen.push_back(p); };
  const Image out = f.runCpu(in, control);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_DOUBLE_EQ(seen.front(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));

  std::atomic<bool> cancel{false};
  CpuControl cancelling;
  cancelling.cancel = &cancel;
  cancelling.progress = [&](double) { cancel = true; };  // stop after the first channel
  EXPECT_THROW(f.runCpu(in, cancelling), OperationCancelled);
  cancel = true;
  EXPECT_THROW(f.runCpu(in, cancelling), OperationCancelled);
}

TEST(Conv2DCpu, DescribeNamesSizeModeAndBorder) {
  EXPECT_EQ(Conv2D(convSpec(kernelOf(3, 3, std::vector<double>(9, 1.0)), ConvMode::Same, {}, false)).describe(),
            "conv 3x3 same reflect101");
  EXPECT_EQ(
      Conv2D(convSpec(kernelOf(4, 3, std::vector<double>(12, 1.0)), ConvMode::Full, {BorderMode::Constant, 2.5}, true))
          .describe(),
      "conv 4x3 correlate full constant(2.5)");
}

}  // namespace
