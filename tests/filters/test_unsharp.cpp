// Unsharp mask: hand-worked values of the formula, then the OpenCV-based baseline and the GPU
// against the naive reference (double) over the shared table (sizes 1x1 to 257x131, u8 gray/RGB/
// RGBA, f32 gray/RGB, every border), with and without a threshold.
//
// Tolerances: u8 within 1 (rounding a float against a double); f32 1e-5 relative plus 1e-5 x
// (1 + 2 amount) of the range absolute. The thresholds are chosen off the sample grid (9.5 for u8)
// so |in - blur| sitting within float rounding of one is as unlikely as it can be made.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/filters/unsharp.hpp"
#include "gpulab/kernels/unsharp.cuh"
#include "support/planewise_test.hpp"

using namespace gpulab;

namespace {

constexpr double kAmount = 1.5;

struct UnsharpCase : test::FilterCaseImage {
  double sigma;
  bool thresholded;

  Border border() const { return FilterCaseImage::border(99.6, 2.25); }
  double threshold() const { return thresholded ? (type == PixelType::U8 ? 9.5 : 0.3) : 0.0; }
  std::string name() const {
    return imageName() + "_s" + std::to_string(static_cast<int>(sigma * 10)) + (thresholded ? "_t" : "");
  }
  Image input() const { return FilterCaseImage::input(4099, 7); }
  UnsharpMask op() const { return UnsharpMask(kAmount, sigma, threshold(), 0, border()); }
};

std::vector<UnsharpCase> unsharpCases() {
  std::vector<UnsharpCase> cases;
  for (const test::FilterCaseImage& image : test::tableImages())
    for (auto [sigma, thresholded] : {std::pair{1.0, false}, std::pair{2.5, true}})
      cases.push_back({image, sigma, thresholded});
  return cases;
}

const Image& referenceFor(const UnsharpCase& c) {
  return test::cachedReference(c, [](const UnsharpCase& k) { return k.op().runReference(k.input()); });
}

::testing::AssertionResult matches(const UnsharpCase& c, const Image& expected, const Image& actual) {
  if (c.type == PixelType::U8) return test::imagesNear(expected, actual, 1.0);
  const double range = std::max(test::maxAbsSample(c.input()), std::abs(c.border().value));
  return test::imagesNear(expected, actual, 1e-5 * (1 + 2 * kAmount) * range, 1e-5);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hand-worked values and parameters

TEST(UnsharpFormula, SharpensWhereTheDifferenceReachesTheThreshold) {
  EXPECT_FLOAT_EQ(kernels::unsharpValue(100.f, 90.f, 2.f, 0.f), 120.f);
  EXPECT_FLOAT_EQ(kernels::unsharpValue(100.f, 110.f, 0.5f, 0.f), 95.f);
  EXPECT_FLOAT_EQ(kernels::unsharpValue(100.f, 95.f, 2.f, 5.f), 110.f);  // |d| = threshold: sharpened
  EXPECT_FLOAT_EQ(kernels::unsharpValue(100.f, 96.f, 2.f, 5.f), 100.f);  // below: unchanged
}

TEST(UnsharpReference, StepEdgeOvershootsAndSaturates) {
  Image step(9, 3, 1, PixelType::U8);
  for (int y = 0; y < 3; ++y)
    for (int x = 5; x < 9; ++x) step.at<std::uint8_t>(x, y) = 250;
  const Image out = UnsharpMask(3.0, 1.0, 0.0, 0, {BorderMode::Replicate}).runReference(step);
  EXPECT_EQ(out.at<std::uint8_t>(5, 1), 255);  // bright side of the edge: pushed past 255, saturated
  EXPECT_EQ(out.at<std::uint8_t>(4, 1), 0);    // dark side: pushed below 0
  EXPECT_EQ(out.at<std::uint8_t>(0, 1), 0);    // flat: unchanged
  EXPECT_EQ(out.at<std::uint8_t>(8, 1), 250);
  EXPECT_EQ(UnsharpMask(3.0, 1.0, 0.0, 0, {BorderMode::Replicate}).runCpu(step), out);
}

TEST(UnsharpApi, RejectsWhatItCannotTake) {
  EXPECT_THROW(UnsharpMask(-1.0, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(UnsharpMask(1.0, 1.0, -2.0), std::invalid_argument);
  EXPECT_THROW(UnsharpMask(1.0, 0.0, 0.0), std::invalid_argument);  // no sigma, no ksize
  EXPECT_THROW(UnsharpMask(1.0, 1.0, 0.0, 6), std::invalid_argument);
  EXPECT_THROW(UnsharpMask(1.0, 1.0, 0.0).outputShape({4, 4, 1, PixelType::F64}), std::invalid_argument);
  const auto op = findOperation("unsharp").make({{"amount", "0.5"}, {"threshold", "4"}});
  EXPECT_EQ(op->describe(), "unsharp amount=0.5 threshold=4 sigma=2 ksize=auto reflect101");
  EXPECT_EQ(op->params().at("amount"), "0.5");
}

TEST(UnsharpApi, CpuRunReportsProgressAndCanBeCancelled) {
  const std::vector<double> seen =
      test::cpuProgressAndCancel(UnsharpMask(1.0, 1.0, 0.0), test::filterTestImage(30, 20, 4, PixelType::U8, 5));
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The table

class UnsharpCaseTest : public ::testing::TestWithParam<UnsharpCase> {};

TEST_P(UnsharpCaseTest, CpuBaselineMatchesReference) {
  const UnsharpCase& c = GetParam();
  EXPECT_TRUE(matches(c, referenceFor(c), c.op().runCpu(c.input())));
}

TEST_P(UnsharpCaseTest, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const UnsharpCase& c = GetParam();
  UnsharpMask op = c.op();
  EXPECT_TRUE(matches(c, referenceFor(c), test::runOnGpu(op, c.input())));
}

INSTANTIATE_TEST_SUITE_P(Table, UnsharpCaseTest, ::testing::ValuesIn(unsharpCases()),
                         [](const ::testing::TestParamInfo<UnsharpCase>& p) { return p.param.name(); });

TEST(UnsharpGpu, LargeOddImageAgainstReference) {
  GPULAB_REQUIRE_GPU();
  const UnsharpCase c{{1031, 517, BorderMode::Reflect101, false, PixelType::U8, 3}, 3.0, false};
  UnsharpMask op = c.op();
  EXPECT_TRUE(matches(c, c.op().runReference(c.input()), test::runOnGpu(op, c.input())));
}
