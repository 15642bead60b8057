// Auto-levels: hand-worked levels and stretches, then the CPU baseline and the GPU (skipped without
// one) against the naive reference (which sorts the samples) over odd, prime and tiny sizes, every
// type and channel count, and several percentile pairs.
//
// Tolerances: u8 and u16 exact (integer arithmetic in all three). float: GPU exact; the CPU's float levels
// come from calcHist's single-precision bins and may be one bin (1/4096 of the range) off, so its
// samples are within 2 / 4096 of the [0, 1] output scale, over the stretch's gain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/auto_levels.hpp"
#include "gpulab/filters/registry.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

struct LevelsCase {
  int width, height, channels;
  PixelType type;
  double low, high;
  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) + "_c" + std::to_string(channels) + "_" +
           std::string(toString(type)) + "_p" + std::to_string(static_cast<int>(low * 10)) + "_" +
           std::to_string(static_cast<int>(high * 10));
  }
  // Values in a narrow band, so the stretch has something to do.
  Image input() const {
    Image img = test::randomImage(width, height, channels, type, 4099u + width * 7 + height * 13 + channels, 0.3);
    if (type == PixelType::U8)
      for (auto& v : img.samples<std::uint8_t>()) v = static_cast<std::uint8_t>(60 + v / 3);
    // u16: 3 channels span 2000 values (fewer than the 4096 bins: the levels are samples); 1 and 4
    // channels span 8192 (two values a bin: the levels are bin edges).
    if (type == PixelType::U16)
      for (auto& v : img.samples<std::uint16_t>())
        v = static_cast<std::uint16_t>(channels == 3 ? 1000 + v % 2000 : 3000 + v / 8);
    return img;
  }
};

std::vector<LevelsCase> cases() {
  std::vector<LevelsCase> out;
  for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {13, 12}, {257, 131}, {640, 480}})
    for (PixelType t : {PixelType::U8, PixelType::F32, PixelType::F64, PixelType::U16})
      for (int c : {1, 3, 4})
        for (auto [lo, hi] : std::vector<std::pair<double, double>>{{0.5, 99.5}, {0, 100}, {10, 60}})
          out.push_back({w, h, c, t, lo, hi});
  return out;
}

}  // namespace

TEST(AutoLevels, HandWorkedU8) {
  // Values 50, 60, ..., 140 (ten samples): 0..100% picks 50 and 140.
  Image img(10, 1, 1, PixelType::U8);
  for (int x = 0; x < 10; ++x) img.at<std::uint8_t>(x, 0) = static_cast<std::uint8_t>(50 + 10 * x);
  const AutoLevels all(0, 100);
  const auto levels = all.levelsReference(img);
  EXPECT_EQ(levels[0].first, 50);
  EXPECT_EQ(levels[0].second, 140);
  EXPECT_EQ(all.levelsCpu(img), levels);
  const Image out = all.runReference(img);
  EXPECT_EQ(out.at<std::uint8_t>(0, 0), 0);
  EXPECT_EQ(out.at<std::uint8_t>(9, 0), 255);
  EXPECT_EQ(out.at<std::uint8_t>(1, 0), 28);  // 10 * 255 / 90 = 28.33
  EXPECT_EQ(all.runCpu(img), out);
  // 10%..90%: ranks floor(1) = 1 and ceil(9) - 1 = 8: values 60 and 130.
  const auto inner = AutoLevels(10, 90).levelsReference(img);
  EXPECT_EQ(inner[0].first, 60);
  EXPECT_EQ(inner[0].second, 130);
}

TEST(AutoLevels, ConstantChannelAndAlphaStayUnchanged) {
  Image img(4, 4, 4, PixelType::U8);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      img.at<std::uint8_t>(x, y, 0) = 77;  // constant
      img.at<std::uint8_t>(x, y, 1) = static_cast<std::uint8_t>(100 + x);
      img.at<std::uint8_t>(x, y, 2) = static_cast<std::uint8_t>(100 + y);
      img.at<std::uint8_t>(x, y, 3) = static_cast<std::uint8_t>(10 * x + y);  // alpha
    }
  const Image out = AutoLevels(0, 100).runReference(img);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      EXPECT_EQ(out.at<std::uint8_t>(x, y, 0), 77);
      EXPECT_EQ(out.at<std::uint8_t>(x, y, 1), x * 85);
      EXPECT_EQ(out.at<std::uint8_t>(x, y, 3), 10 * x + y);
    }
  EXPECT_EQ(AutoLevels(0, 100).runCpu(img), out);
}

TEST(AutoLevels, HandWorkedU16GoesToTheFull16BitRange) {
  // Values 1000, 1100, ..., 1900 (ten samples, 901 values wide: one value a bin of 4096).
  Image img(10, 1, 1, PixelType::U16);
  for (int x = 0; x < 10; ++x) img.at<std::uint16_t>(x, 0) = static_cast<std::uint16_t>(1000 + 100 * x);
  const AutoLevels all(0, 100);
  const auto levels = all.levelsReference(img);
  EXPECT_EQ(levels[0].first, 1000);
  EXPECT_EQ(levels[0].second, 1900);
  EXPECT_EQ(all.levelsCpu(img), levels);
  const Image out = all.runReference(img);
  ASSERT_EQ(out.type(), PixelType::U16);
  EXPECT_EQ(out.at<std::uint16_t>(0, 0), 0);
  EXPECT_EQ(out.at<std::uint16_t>(9, 0), 65535);
  EXPECT_EQ(out.at<std::uint16_t>(1, 0), 7282);   // 100 * 65535 / 900 = 7281.67
  EXPECT_EQ(out.at<std::uint16_t>(4, 0), 29127);  // 400 * 65535 / 900 = 29126.67
  EXPECT_EQ(all.runCpu(img), out);
  // 10%..90%: ranks 1 and 8: values 1100 and 1800; below and above saturate.
  const AutoLevels inner(10, 90);
  EXPECT_EQ(inner.levelsReference(img), (std::vector<std::pair<double, double>>{{1100, 1800}}));
  const Image cut = inner.runReference(img);
  EXPECT_EQ(cut.at<std::uint16_t>(0, 0), 0);
  EXPECT_EQ(cut.at<std::uint16_t>(1, 0), 0);
  EXPECT_EQ(cut.at<std::uint16_t>(8, 0), 65535);
  EXPECT_EQ(cut.at<std::uint16_t>(9, 0), 65535);
  EXPECT_EQ(inner.runCpu(img), cut);
}

TEST(AutoLevels, U16LevelsAreBinEdgesWhenTheRangeIsWiderThanTheBins) {
  // 0..65535 in 4096 bins of 16 values: 0..100% gives the first value of bin 0 and the last of bin 4095.
  Image img(3, 1, 1, PixelType::U16);
  img.samples<std::uint16_t>()[0] = 0;
  img.samples<std::uint16_t>()[1] = 40;  // bin 2: values 32..47
  img.samples<std::uint16_t>()[2] = 65535;
  EXPECT_EQ(AutoLevels(0, 100).levelsReference(img), (std::vector<std::pair<double, double>>{{0, 65535}}));
  // 50%..100%: rank 1 (40) -> 32, the first value of its bin.
  const AutoLevels upper(50, 100);
  EXPECT_EQ(upper.levelsReference(img), (std::vector<std::pair<double, double>>{{32, 65535}}));
  EXPECT_EQ(upper.levelsCpu(img), upper.levelsReference(img));
  const Image out = upper.runReference(img);
  EXPECT_EQ(out.samples<std::uint16_t>()[1], 8);  // (40 - 32) * 65535 / 65503 = 8.004
  EXPECT_EQ(upper.runCpu(img), out);
}

TEST(AutoLevels, U16RgbaKeepsItsAlphaAndConstantChannels) {
  Image img(4, 3, 4, PixelType::U16);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) {
      img.at<std::uint16_t>(x, y, 0) = 30000;  // constant
      img.at<std::uint16_t>(x, y, 1) = static_cast<std::uint16_t>(500 + 3 * x);
      img.at<std::uint16_t>(x, y, 2) = static_cast<std::uint16_t>(9000 + y);
      img.at<std::uint16_t>(x, y, 3) = static_cast<std::uint16_t>(1000 * x + y);  // alpha
    }
  const Image out = AutoLevels(0, 100).runReference(img);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) {
      EXPECT_EQ(out.at<std::uint16_t>(x, y, 0), 30000);
      EXPECT_EQ(out.at<std::uint16_t>(x, y, 1), x * 21845);
      EXPECT_EQ(out.at<std::uint16_t>(x, y, 2), y == 0 ? 0 : (y == 1 ? 32768 : 65535));
      EXPECT_EQ(out.at<std::uint16_t>(x, y, 3), 1000 * x + y);
    }
  EXPECT_EQ(AutoLevels(0, 100).runCpu(img), out);
}

TEST(AutoLevels, FloatGoesToZeroOneAndKeepsNaN) {
  Image img(3, 1, 1, PixelType::F32);
  img.samples<float>()[0] = -2.f;
  img.samples<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  img.samples<float>()[2] = 6.f;
  const Image out = AutoLevels(0, 100).runReference(img);
  EXPECT_EQ(out.samples<float>()[0], 0.f);
  EXPECT_TRUE(std::isnan(out.samples<float>()[1]));
  EXPECT_EQ(out.samples<float>()[2], 1.f);
  EXPECT_TRUE(test::imagesNear(out, AutoLevels(0, 100).runCpu(img), 0));
}

TEST(AutoLevels, BadPercentagesAreOneSentence) {
  EXPECT_THROW(AutoLevels(60, 40), std::invalid_argument);
  EXPECT_THROW(AutoLevels(-1, 50), std::invalid_argument);
  EXPECT_THROW(AutoLevels(0, 101), std::invalid_argument);
  EXPECT_THROW(findOperation("auto-levels").make({{"low", "70"}}), std::invalid_argument);
  const auto op = findOperation("auto-levels").make({});
  EXPECT_EQ(op->describe(), "auto-levels 0.5%..99.5%");
  EXPECT_EQ(op->reach(), -1);
}

class AutoLevelsTable : public ::testing::TestWithParam<LevelsCase> {};

TEST_P(AutoLevelsTable, CpuMatchesReference) {
  const LevelsCase c = GetParam();
  const Image img = c.input();
  const AutoLevels op(c.low, c.high);
  const Image ref = op.runReference(img);
  if (c.type == PixelType::U8 || c.type == PixelType::U16) {
    EXPECT_EQ(op.levelsCpu(img), op.levelsReference(img));
    EXPECT_TRUE(test::imagesNear(ref, op.runCpu(img), 0));
  } else {
    // One bin of the channel's range over the levels' span, twice (either level may move).
    double tol = 0;
    const auto levels = op.levelsReference(img);
    const Histogram h = histogramReference(img, kAutoLevelsFloatBins);
    for (int ch = 0; ch < img.channels(); ++ch) {
      const double span = levels[ch].second - levels[ch].first;
      if (span > 0) tol = std::max(tol, 2.0 * (h.hi[ch] - h.lo[ch]) / kAutoLevelsFloatBins / span);
    }
    EXPECT_TRUE(test::imagesNear(ref, op.runCpu(img), tol + 1e-12));
  }
}

TEST_P(AutoLevelsTable, GpuMatchesReferenceExactly) {
  GPULAB_REQUIRE_GPU();
  const LevelsCase c = GetParam();
  const Image img = c.input();
  AutoLevels op(c.low, c.high);
  GpuContext gpu;
  const DeviceImage in = gpu.upload(img);
  DeviceImage out;
  op.runGpu(gpu, in, out);
  EXPECT_TRUE(test::imagesNear(op.runReference(img), gpu.download(out), 0));
}

INSTANTIATE_TEST_SUITE_P(Sizes, AutoLevelsTable, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return p.param.name(); });

TEST(AutoLevelsGpu, U16InPlaceAndRgba) {
  GPULAB_REQUIRE_GPU();
  Image img = test::randomImage(31, 9, 4, PixelType::U16, 6);
  for (auto& v : img.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(v / 4 + 1234);
  AutoLevels op(1, 99);
  GpuContext gpu;
  DeviceImage d = gpu.upload(img);
  op.runGpu(gpu, d, d);
  EXPECT_TRUE(test::imagesNear(op.runReference(img), gpu.download(d), 0));
}

TEST(AutoLevelsGpu, InPlace) {
  GPULAB_REQUIRE_GPU();
  const Image img = test::randomImage(33, 17, 3, PixelType::U8, 5);
  AutoLevels op(2, 98);
  GpuContext gpu;
  DeviceImage d = gpu.upload(img);
  op.runGpu(gpu, d, d);
  EXPECT_TRUE(test::imagesNear(op.runReference(img), gpu.download(d), 0));
}
