// Sobel: hand-worked edges and luminance, then every implementation against the naive reference
// over a table of sizes (1x1 to 640x480), border modes (constant with a zero and a nonzero value),
// types (u8 gray/RGB/RGBA, f32 gray/RGB) and components (magnitude, x, y, direction): OpenCV, the
// GPU thread code run on the host, and the GPU itself (skipped without one).
//
// Tolerances: u8 magnitude/x/y of gray input exact for the GPU code (integer gradients), +-1
// otherwise; f32 1e-5 relative plus 1e-5 of 8 x the luminance range absolute (8 = the sum of the
// kernel's absolute weights, the largest gradient per unit of input). Directions are compared
// circularly, only where the gradient is not tiny (its angle is meaningless there): 1e-3 rad for
// f32, one code for u8.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/sobel.hpp"
#include "gpulab/kernels/sobel.cuh"
#include "internal/kernel_views.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

// ---------------------------------------------------------------------------------------------
// Helpers

struct SobelCase : test::FilterCaseImage {
  SobelComponent component;

  Border border() const { return FilterCaseImage::border(99.5, 2.25); }
  std::string name() const { return imageName() + "_" + std::string(toString(component)); }
  Image input() const { return FilterCaseImage::input(104729, 17); }
};

std::vector<SobelCase> sobelCases() {
  struct Size {
    int w, h;
  };
  struct Type {
    PixelType type;
    int channels;
  };
  std::vector<SobelCase> cases;
  // 521 (prime) is wider than a block (512 columns); 5x97 is split into many bands.
  for (Size s : {Size{1, 1}, Size{2, 3}, Size{13, 12}, Size{257, 131}, Size{640, 480}, Size{521, 37}, Size{5, 97}})
    for (Type t : {Type{PixelType::U8, 1}, Type{PixelType::U8, 3}, Type{PixelType::U8, 4}, Type{PixelType::F32, 1},
                   Type{PixelType::F32, 3}})
      for (BorderMode m :
           {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap, BorderMode::Constant})
        for (bool nonzero : {false, true}) {
          if (nonzero && m != BorderMode::Constant) continue;
          for (SobelComponent c :
               {SobelComponent::Magnitude, SobelComponent::X, SobelComponent::Y, SobelComponent::Direction})
            cases.push_back({{s.w, s.h, m, nonzero, t.type, t.channels}, c});
        }
  return cases;
}

const Image& referenceFor(const SobelCase& c) {
  return test::cachedReference(
      c, [](const SobelCase& k) { return Sobel(k.component, k.border()).runReference(k.input()); });
}

// The luminance's range (what the gradients scale with) and the border value's.
double rangeOf(const SobelCase& c) { return std::max(test::maxAbsSample(c.input()), std::abs(c.border().value)); }

::testing::AssertionResult directionsNear(const SobelCase& c, const Image& expected, const Image& actual) {
  if (expected.width() != actual.width() || expected.height() != actual.height() || expected.type() != actual.type())
    return ::testing::AssertionFailure() << "shape differs: " << expected.describe() << " vs " << actual.describe();
  // True gradient magnitudes, in double, from the f32 version of the input (same luminance).
  const Image magnitude =
      Sobel(SobelComponent::Magnitude, c.border()).runReference(c.input().convertedTo(PixelType::F32));
  const double threshold = 1e-3 * 8 * rangeOf(c);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < expected.pixelCount(); ++i) {
    if (magnitude.samples<float>()[i] <= threshold) continue;
    const double e = test::sampleAt(expected, i), a = test::sampleAt(actual, i);
    bool ok;
    if (c.type == PixelType::U8) {
      const double d = std::abs(e - a);
      ok = std::min(d, 256 - d) <= 1;
    } else {
      const double d = std::abs(std::remainder(e - a, 2 * std::numbers::pi));
      ok = d <= 1e-3;
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(9);
  os << bad << " directions differ; first at x=" << first % expected.width() << " y=" << first / expected.width()
     << ": expected " << test::sampleAt(expected, first) << ", got " << test::sampleAt(actual, first);
  return ::testing::AssertionFailure() << os.str();
}

::testing::AssertionResult matches(const SobelCase& c, const Image& expected, const Image& actual, bool gpuCode) {
  if (c.component == SobelComponent::Direction) return directionsNear(c, expected, actual);
  if (c.type == PixelType::U8) return test::imagesNear(expected, actual, gpuCode && c.channels == 1 ? 0.0 : 1.0);
  return test::imagesNear(expected, actual, 1e-5 * 8 * rangeOf(c), 1e-5);
}

// The GPU thread code, run on the host over planes laid out as on the GPU.
Image emulate(const SobelCase& c) {
  const Image in = c.input();
  Image out(c.width, c.height, 1, c.type);
  auto run = [&](auto sample) {
    using T = decltype(sample);
    const std::size_t pitch = (c.width * sizeof(T) + 63) / 64 * 64;
    std::vector<std::vector<T>> planes(3, std::vector<T>(pitch / sizeof(T) * c.height));
    std::vector<T> target(pitch / sizeof(T) * c.height);
    for (int ch = 0; ch < std::min(c.channels, 3); ++ch)
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x) planes[ch][y * pitch / sizeof(T) + x] = in.at<T>(x, y, ch);
    auto plane = [&](std::vector<T>& v) { return kernels::Plane<const T>{v.data(), c.width, c.height, pitch}; };
    const kernels::Plane<T> outPlane{target.data(), c.width, c.height, pitch};
    kernels::runSobelOnHost<T>(plane(planes[0]), plane(planes[1]), plane(planes[2]), c.channels >= 3, outPlane,
                               toKernel(c.component), toKernel(c.mode), static_cast<float>(c.border().value));
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x) out.at<T>(x, y) = outPlane(x, y);
  };
  if (c.type == PixelType::U8)
    run(std::uint8_t{});
  else
    run(float{});
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hand-worked values

TEST(SobelReference, VerticalAndHorizontalStepEdges) {
  // Left three columns 0, right three 10: dx = (1 + 2 + 1) * 10 = 40 on the two columns at the
  // step, dy = 0, the direction 0 (pointing right).
  Image step(6, 5, 1, PixelType::F32);
  for (int y = 0; y < 5; ++y)
    for (int x = 3; x < 6; ++x) step.at<float>(x, y) = 10.f;
  const Border replicate{BorderMode::Replicate};
  const Image dx = Sobel(SobelComponent::X, replicate).runReference(step);
  const Image dy = Sobel(SobelComponent::Y, replicate).runReference(step);
  const Image mag = Sobel(SobelComponent::Magnitude, replicate).runReference(step);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 6; ++x) {
      const float expected = (x == 2 || x == 3) ? 40.f : 0.f;
      EXPECT_EQ(dx.at<float>(x, y), expected) << x << "," << y;
      EXPECT_EQ(dy.at<float>(x, y), 0.f) << x << "," << y;
      EXPECT_EQ(mag.at<float>(x, y), expected) << x << "," << y;
    }
  EXPECT_EQ(Sobel(SobelComponent::Direction, replicate).runReference(step).at<float>(2, 2), 0.f);

  // Turned: bright bottom rows. dy = down minus up > 0, the direction +pi/2 (y points down).
  Image turned(5, 6, 1, PixelType::U8);
  for (int y = 3; y < 6; ++y)
    for (int x = 0; x < 5; ++x) turned.at<std::uint8_t>(x, y) = 10;
  EXPECT_EQ(Sobel(SobelComponent::Y, replicate).runReference(turned).at<std::uint8_t>(2, 2), 40);
  EXPECT_EQ(Sobel(SobelComponent::X, replicate).runReference(turned).at<std::uint8_t>(2, 2), 0);
  EXPECT_EQ(Sobel(SobelComponent::Direction, replicate).runReference(turned).at<std::uint8_t>(2, 2), 64);
  EXPECT_EQ(Sobel(SobelComponent::Direction, replicate).runCpu(turned).at<std::uint8_t>(2, 2), 64);
}

TEST(SobelReference, ColourGoesThroughLuminance) {
  // Black on the left, pure red on the right: luminance 0.299 * 255 = 76.245 on the right, so the
  // edge has dx = 4 * 76.245; as u8 that saturates to 255. Alpha is ignored.
  Image red(6, 4, 4, PixelType::U8);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x) {
      red.at<std::uint8_t>(x, y, 0) = x >= 3 ? 255 : 0;
      red.at<std::uint8_t>(x, y, 3) = static_cast<std::uint8_t>(17 * x);
    }
  const Image f = Sobel(SobelComponent::X, {BorderMode::Replicate}).runReference(red.convertedTo(PixelType::F32));
  EXPECT_NEAR(f.at<float>(3, 1), 4 * 0.299 * 255, 1e-3);
  EXPECT_EQ(Sobel(SobelComponent::Magnitude, {BorderMode::Replicate}).runReference(red).at<std::uint8_t>(3, 1), 255);
  EXPECT_EQ(kernels::luminance(255.f, 0.f, 0.f), 0.299f * 255.f);
  EXPECT_EQ(kernels::luminance(0.f, 0.f, 0.f), 0.f);
}

TEST(SobelReference, DirectionCodes) {
  using kernels::SobelPart;
  const float pi = std::numbers::pi_v<float>;
  EXPECT_EQ(kernels::sobelToU8(0.f, SobelPart::Direction), 0);
  EXPECT_EQ(kernels::sobelToU8(pi / 2, SobelPart::Direction), 64);
  EXPECT_EQ(kernels::sobelToU8(pi, SobelPart::Direction), 128);
  EXPECT_EQ(kernels::sobelToU8(-pi, SobelPart::Direction), 128);
  EXPECT_EQ(kernels::sobelToU8(-pi / 2, SobelPart::Direction), 192);
  EXPECT_EQ(kernels::sobelToU8(-300.4f, SobelPart::X), 255);
  EXPECT_EQ(kernels::sobelToU8(-3.4f, SobelPart::Y), 3);
  EXPECT_EQ(kernels::sobelToU8(2.5f, SobelPart::Magnitude), 2);  // ties to even
}

// ---------------------------------------------------------------------------------------------
// Parameters and bookkeeping

TEST(SobelApi, RejectsWhatItCannotTake) {
  const Sobel sobel;
  EXPECT_THROW(sobel.outputShape({8, 8, 1, PixelType::F64}), std::invalid_argument);
  EXPECT_THROW(sobel.outputShape({8, 8, 2, PixelType::U8}), std::invalid_argument);
  EXPECT_THROW(sobel.runReference(Image(8, 8, 2, PixelType::F32)), std::invalid_argument);
  EXPECT_THROW(Sobel(SobelComponent::X, {BorderMode::Constant, INFINITY}), std::invalid_argument);
  EXPECT_EQ(parseEnum<SobelComponent>("dir"), SobelComponent::Direction);
  EXPECT_EQ(parseEnum<SobelComponent>("magnitude"), std::nullopt);
}

TEST(SobelApi, DescribeShapeAndBytes) {
  EXPECT_EQ(Sobel().describe(), "sobel mag reflect101");
  FilterSpec spec;
  spec.op = FilterOp::Sobel;
  spec.component = SobelComponent::Y;
  spec.border = {BorderMode::Constant, 1.5};
  EXPECT_EQ(makeFilter(spec)->describe(), "sobel y constant(1.5)");
  const ImageShape out = Sobel().outputShape({640, 480, 4, PixelType::U8});
  EXPECT_EQ(out.channels, 1);
  EXPECT_EQ(out.type, PixelType::U8);
  // RGBA: R, G and B are read, alpha is not; one plane is written.
  EXPECT_EQ(Sobel().minimumBytesMoved({640, 480, 4, PixelType::U8}), std::size_t{640} * 480 * (3 + 1));
  EXPECT_EQ(Sobel().minimumBytesMoved({4096, 4096, 1, PixelType::F32}), std::size_t{2} * 4096 * 4096 * 4);
}

TEST(SobelApi, CpuRunReportsProgressAndCanBeCancelled) {
  const Image img = test::filterTestImage(64, 48, 3, PixelType::U8, 4);
  const std::vector<double> seen = test::cpuProgressAndCancel(Sobel(), img);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The table

class SobelCaseTest : public ::testing::TestWithParam<SobelCase> {};

TEST_P(SobelCaseTest, OpenCvMatchesReference) {
  const SobelCase& c = GetParam();
  EXPECT_TRUE(matches(c, referenceFor(c), Sobel(c.component, c.border()).runCpu(c.input()), false));
}

TEST_P(SobelCaseTest, GpuThreadCodeOnHostMatchesReference) {
  const SobelCase& c = GetParam();
  EXPECT_TRUE(matches(c, referenceFor(c), emulate(c), true));
}

TEST_P(SobelCaseTest, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const SobelCase& c = GetParam();
  GpuContext gpu;
  const DeviceImage d = gpu.upload(c.input());
  DeviceImage out;
  Sobel sobel(c.component, c.border());
  sobel.runGpu(gpu, d, out);
  EXPECT_TRUE(matches(c, referenceFor(c), gpu.download(out), true));
}

INSTANTIATE_TEST_SUITE_P(Table, SobelCaseTest, ::testing::ValuesIn(sobelCases()),
                         [](const ::testing::TestParamInfo<SobelCase>& p) { return p.param.name(); });

// ---------------------------------------------------------------------------------------------
// GPU specifics

TEST(SobelGpu, LargeOddImageAgainstReference) {
  GPULAB_REQUIRE_GPU();
  const SobelCase c{2053, 1031, BorderMode::Reflect101, false, PixelType::F32, 1, SobelComponent::Magnitude};
  GpuContext gpu;
  const DeviceImage d = gpu.upload(c.input());
  DeviceImage out;
  Sobel().runGpu(gpu, d, out);
  EXPECT_TRUE(matches(c, Sobel().runReference(c.input()), gpu.download(out), true));
}

TEST(SobelGpu, ReusesTheOutputAndRefusesToRunInPlace) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  DeviceImage d = gpu.upload(test::filterTestImage(100, 60, 1, PixelType::F32, 9));
  DeviceImage out;
  Sobel sobel;
  sobel.runGpu(gpu, d, out);
  const void* first = planeOf<float>(out, 0).data;
  sobel.runGpu(gpu, d, out);
  EXPECT_EQ(planeOf<float>(out, 0).data, first);
  EXPECT_THROW(sobel.runGpu(gpu, d, d), std::invalid_argument);
}
