// Gaussian blur: the kernel against OpenCV's formula and hand-worked values, then OpenCV and the
// GPU against the naive reference over the shared table (sizes 1x1 to 257x131, u8 gray/RGB/RGBA,
// f32 gray/RGB, every border) for a small sigma, a large one and a size given without sigma.
//
// Tolerances: u8 within 1 (the reference rounds a double, the GPU a float sum, OpenCV's u8 path
// is fixed point); f32 1e-5 relative plus 1e-5 of the input's (and border's) range absolute (float
// sums of up to a few hundred weighted samples).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "gpulab/filters/gaussian.hpp"
#include "gpulab/filters/registry.hpp"
#include "support/planewise_test.hpp"

using namespace gpulab;

namespace {

struct GaussianCase : test::FilterCaseImage {
  double sigma;
  int ksize;

  Border border() const { return FilterCaseImage::border(99.6, 2.25); }
  std::string name() const {
    char text[64];
    std::snprintf(text, sizeof text, "_s%.1f_k%d", sigma, ksize);
    std::string n = imageName() + text;
    for (char& ch : n)
      if (ch == '.') ch = 'p';
    return n;
  }
  Image input() const { return FilterCaseImage::input(7919, 31); }
  GaussianBlur op() const { return GaussianBlur(sigma, ksize, border()); }
};

std::vector<GaussianCase> gaussianCases() {
  std::vector<GaussianCase> cases;
  for (const test::FilterCaseImage& image : test::tableImages())
    for (auto [sigma, ksize] : {std::pair{0.8, 0}, std::pair{3.0, 0}, std::pair{0.0, 7}})
      cases.push_back({image, sigma, ksize});
  return cases;
}

const Image& referenceFor(const GaussianCase& c) {
  return test::cachedReference(c, [](const GaussianCase& k) { return k.op().runReference(k.input()); });
}

::testing::AssertionResult matches(const GaussianCase& c, const Image& expected, const Image& actual) {
  if (c.type == PixelType::U8) return test::imagesNear(expected, actual, 1.0);
  const double range = std::max(test::maxAbsSample(c.input()), std::abs(c.border().value));
  return test::imagesNear(expected, actual, 1e-5 * range, 1e-5);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The kernel

TEST(GaussianKernel, SizeFromSigmaAsOpenCv) {
  // cv::GaussianBlur: cvRound(sigma * (u8 ? 3 : 4) * 2 + 1) | 1.
  EXPECT_EQ(gaussianSizeFor(1.0, PixelType::U8), 7);
  EXPECT_EQ(gaussianSizeFor(1.0, PixelType::F32), 9);
  EXPECT_EQ(gaussianSizeFor(0.8, PixelType::U8), 7);   // 5.8 -> 6 | 1
  EXPECT_EQ(gaussianSizeFor(0.8, PixelType::F32), 7);  // 7.4 -> 7
  EXPECT_EQ(gaussianSizeFor(2.0, PixelType::F32), 17);
  EXPECT_NEAR(gaussianDefaultSigma(7), 1.4, 1e-12);  // 0.3 * (3 - 1) + 0.8
  EXPECT_NEAR(gaussianDefaultSigma(3), 0.8, 1e-12);
}

TEST(GaussianKernel, WeightsAreSymmetricNormalisedAndGaussian) {
  const std::vector<double> w = gaussianWeights(5, 1.0);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(w[0], w[4]);
  EXPECT_DOUBLE_EQ(w[1], w[3]);
  EXPECT_NEAR(w[1] / w[2], std::exp(-0.5), 1e-15);
  EXPECT_NEAR(w[0] / w[2], std::exp(-2.0), 1e-15);
}

TEST(GaussianReference, ImpulseSpreadsAsTheOuterProduct) {
  Image impulse(9, 9, 1, PixelType::F32);
  impulse.at<float>(4, 4) = 1.f;
  const Image out = GaussianBlur(1.0, 5, {BorderMode::Constant}).runReference(impulse);
  const std::vector<double> w = gaussianWeights(5, 1.0);
  for (int y = 2; y <= 6; ++y)
    for (int x = 2; x <= 6; ++x) EXPECT_NEAR(out.at<float>(x, y), w[x - 2] * w[y - 2], 1e-7) << x << "," << y;
  EXPECT_EQ(out.at<float>(0, 0), 0.f);
}

// ---------------------------------------------------------------------------------------------
// Parameters

TEST(GaussianApi, RejectsWhatItCannotTake) {
  EXPECT_THROW(GaussianBlur(2.0, 4), std::invalid_argument);   // even
  EXPECT_THROW(GaussianBlur(0.0, 0), std::invalid_argument);   // neither
  EXPECT_THROW(GaussianBlur(-1.0, 0), std::invalid_argument);  // negative
  EXPECT_THROW(GaussianBlur(1.0, 2001), std::invalid_argument);
  EXPECT_THROW(GaussianBlur(NAN, 0), std::invalid_argument);
  EXPECT_THROW(GaussianBlur(1.0, 0, {BorderMode::Constant, INFINITY}), std::invalid_argument);
  EXPECT_THROW(GaussianBlur(1.0).outputShape({8, 8, 1, PixelType::F64}), std::invalid_argument);
  try {
    GaussianBlur(2.0, 4);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("even"), std::string::npos) << e.what();
  }
}

TEST(GaussianApi, RegistryDescribeAndParams) {
  const auto op = findOperation("gaussian").make({{"sigma", "1.5"}, {"border", "wrap"}});
  EXPECT_EQ(op->describe(), "gaussian sigma=1.5 ksize=auto wrap");
  EXPECT_EQ(op->params().at("ksize"), "0");
  EXPECT_EQ(op->params().at("border"), "wrap");
  EXPECT_THROW(findOperation("gaussian").make({{"ksize", "6"}}), std::invalid_argument);
  const GaussianBlur blur(1.0);
  EXPECT_EQ(blur.sizeFor(PixelType::U8), 7);
  EXPECT_EQ(blur.sizeFor(PixelType::F32), 9);
}

TEST(GaussianApi, CpuRunReportsProgressAndCanBeCancelled) {
  const std::vector<double> seen =
      test::cpuProgressAndCancel(GaussianBlur(1.0), test::filterTestImage(40, 30, 3, PixelType::U8, 5));
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

TEST(GaussianApi, AlphaPassesThrough) {
  const Image in = test::filterTestImage(20, 15, 4, PixelType::U8, 3);
  const Image cpu = GaussianBlur(2.0).runCpu(in);
  const Image ref = GaussianBlur(2.0).runReference(in);
  EXPECT_EQ(cpu.channel(3), in.channel(3));
  EXPECT_EQ(ref.channel(3), in.channel(3));
}

// ---------------------------------------------------------------------------------------------
// The table

class GaussianCaseTest : public ::testing::TestWithParam<GaussianCase> {};

TEST_P(GaussianCaseTest, OpenCvMatchesReference) {
  const GaussianCase& c = GetParam();
  EXPECT_TRUE(matches(c, referenceFor(c), c.op().runCpu(c.input())));
}

TEST_P(GaussianCaseTest, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const GaussianCase& c = GetParam();
  GaussianBlur op = c.op();
  EXPECT_TRUE(matches(c, referenceFor(c), test::runOnGpu(op, c.input())));
}

INSTANTIATE_TEST_SUITE_P(Table, GaussianCaseTest, ::testing::ValuesIn(gaussianCases()),
                         [](const ::testing::TestParamInfo<GaussianCase>& p) { return p.param.name(); });

// ---------------------------------------------------------------------------------------------
// GPU specifics

TEST(GaussianGpu, LargeOddImageAndLargeSigmaAgainstReference) {
  GPULAB_REQUIRE_GPU();
  const GaussianCase c{{1031, 517, BorderMode::Reflect, false, PixelType::F32, 1}, 9.0, 0};
  GaussianBlur op = c.op();
  EXPECT_TRUE(matches(c, c.op().runReference(c.input()), test::runOnGpu(op, c.input())));
}

TEST(GaussianGpu, WindowWiderThanTheImage) {
  GPULAB_REQUIRE_GPU();
  const GaussianCase c{{5, 3, BorderMode::Wrap, false, PixelType::U8, 3}, 0.0, 41};
  GaussianBlur op = c.op();
  EXPECT_TRUE(matches(c, c.op().runReference(c.input()), test::runOnGpu(op, c.input())));
}

// RGB photos run on their interleaved rows (what front ends upload, gpuLayout); the planar path
// stays for callers that hand planes: both give the same bits (the same float taps in the same
// order), for every border and both types, on odd sizes.
TEST(GaussianGpu, InterleavedRgbMatchesPlanarBitForBit) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (PixelType type : {PixelType::U8, PixelType::F32})
    for (auto [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{257, 131}, std::pair{641, 67}})
      for (BorderMode mode : {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                              BorderMode::Constant}) {
        SCOPED_TRACE(std::string(toString(type)) + " " + std::to_string(w) + "x" + std::to_string(h) + " " +
                     std::string(toString(mode)));
        GaussianBlur blur(2.0, 0, {mode, 17.0});
        const Image img = test::filterTestImage(w, h, 3, type, w + h);
        ASSERT_EQ(blur.gpuLayout(shapeOf(img)), DeviceLayout::Interleaved);
        DeviceImage interleavedOut, planarOut;
        const DeviceImage interleaved = gpu.upload(img, DeviceLayout::Interleaved);
        blur.runGpu(gpu, interleaved, interleavedOut);
        EXPECT_EQ(interleavedOut.layout(), DeviceLayout::Interleaved);
        const DeviceImage planar = gpu.upload(img, DeviceLayout::Planar);
        blur.runGpu(gpu, planar, planarOut);
        EXPECT_EQ(planarOut.layout(), DeviceLayout::Planar);
        const Image a = gpu.download(interleavedOut), b = gpu.download(planarOut);
        EXPECT_TRUE(a == b);
        EXPECT_TRUE(test::imagesNear(blur.runReference(img), a, type == PixelType::U8 ? 1.0 : 1e-4, 1e-5));
      }
  // Gray, RGBA and windows beyond the interleaved kernel stay planar.
  EXPECT_EQ(GaussianBlur(2.0).gpuLayout({64, 64, 1, PixelType::U8}), DeviceLayout::Planar);
  EXPECT_EQ(GaussianBlur(2.0).gpuLayout({64, 64, 4, PixelType::U8}), DeviceLayout::Planar);
  EXPECT_EQ(GaussianBlur(0.0, 41).gpuLayout({64, 64, 3, PixelType::F32}), DeviceLayout::Planar);
  GaussianBlur wide(0.0, 41);
  const DeviceImage rgb = gpu.upload(test::filterTestImage(9, 9, 3, PixelType::F32, 1), DeviceLayout::Interleaved);
  DeviceImage out;
  EXPECT_THROW(wide.runGpu(gpu, rgb, out), std::logic_error);
}

TEST(GaussianGpu, ReusesItsOutputAndSwitchesTypes) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  GaussianBlur blur(1.2);
  DeviceImage out;
  const Image u8 = test::filterTestImage(64, 40, 1, PixelType::U8, 1);
  const Image f32 = test::filterTestImage(64, 40, 1, PixelType::F32, 2);
  for (const Image* img : {&u8, &f32, &u8}) {
    const DeviceImage d = gpu.upload(*img);
    blur.runGpu(gpu, d, out);
    EXPECT_TRUE(
        test::imagesNear(blur.runReference(*img), gpu.download(out), img->type() == PixelType::U8 ? 1.0 : 1e-4, 1e-5));
  }
  const DeviceImage d = gpu.upload(u8);
  EXPECT_THROW(blur.runGpu(gpu, d, const_cast<DeviceImage&>(d)), std::invalid_argument);
}
