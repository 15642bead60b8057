// Histograms and line profiles: hand-worked cases, then the CPU baseline (calcHist) and the GPU
// (skipped without one) against the naive reference over a table of odd, prime and tiny sizes and
// every sample type and channel count.
//
// Tolerances: u8 and u16 (integer bins over the channel's range) exact everywhere. float: the GPU exact (the same
// binning in double); the CPU baseline bins in single precision (calcHist), so a sample on a bin edge may land in the
// next bin: the same total per channel and at most 1% of the samples moved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "gpulab/analysis/histogram.hpp"
#include "gpulab/core/device_image.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace gpulab {
// Readable failures: each channel's range and its non-zero bins (the first 12).
void PrintTo(const Histogram& h, std::ostream* os) {
  *os << h.channels << " channels x " << h.bins << " bins";
  for (int c = 0; c < h.channels; ++c) {
    *os << "; c" << c << " [" << h.lo[c] << ", " << h.hi[c] << "] total " << h.total(c) << ":";
    int shown = 0;
    for (int b = 0; b < h.bins && shown < 12; ++b)
      if (h.at(c, b) != 0) {
        *os << " " << b << "=" << h.at(c, b);
        ++shown;
      }
  }
}
}  // namespace gpulab

namespace {

struct HistCase {
  int width, height, channels;
  PixelType type;
  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) + "_c" + std::to_string(channels) + "_" +
           std::string(toString(type));
  }
  Image input() const {
    Image img = test::randomImage(width, height, channels, type, 7919u + width * 31 + height, 3.5);
    // u16 with an odd channel count: 12-bit camera data (100..4195), fewer values than 8192 bins would
    // need; even counts keep the full 0..65535.
    if (type == PixelType::U16 && channels % 2 == 1)
      for (auto& v : img.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(100 + (v >> 4));
    return img;
  }
};

std::vector<HistCase> cases() {
  std::vector<HistCase> out;
  for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {13, 12}, {257, 131}, {640, 480}})
    for (PixelType t : {PixelType::U8, PixelType::F32, PixelType::F64, PixelType::U16})
      for (int c : {1, 2, 3, 4}) out.push_back({w, h, c, t});
  return out;
}

// The sum over bins of |a - b| for one channel.
std::uint64_t moved(const Histogram& a, const Histogram& b, int c) {
  std::uint64_t d = 0;
  for (int i = 0; i < a.bins; ++i) d += a.at(c, i) > b.at(c, i) ? a.at(c, i) - b.at(c, i) : b.at(c, i) - a.at(c, i);
  return d;
}

}  // namespace

TEST(Histogram, HandWorkedU8) {
  Image img(3, 2, 1, PixelType::U8);
  const std::uint8_t v[] = {0, 5, 5, 255, 5, 0};
  for (int i = 0; i < 6; ++i) img.samples<std::uint8_t>()[i] = v[i];
  const Histogram h = histogramReference(img);
  EXPECT_EQ(h.bins, 256);
  EXPECT_EQ(h.at(0, 0), 2u);
  EXPECT_EQ(h.at(0, 5), 3u);
  EXPECT_EQ(h.at(0, 255), 1u);
  EXPECT_EQ(h.total(0), 6u);
  EXPECT_EQ(h.peak(), 3u);
  EXPECT_EQ(histogramCpu(img), h);
}

TEST(Histogram, HandWorkedFloatSkipsNonFiniteAndPutsTheMaximumInTheLastBin) {
  Image img(5, 1, 1, PixelType::F32);
  const float v[] = {0.f, 1.f, 0.49f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 5; ++i) img.samples<float>()[i] = v[i];
  const Histogram h = histogramReference(img, 2);
  EXPECT_EQ(h.lo[0], 0.0);
  EXPECT_EQ(h.hi[0], 1.0);
  EXPECT_EQ(h.at(0, 0), 2u);  // 0 and 0.49
  EXPECT_EQ(h.at(0, 1), 1u);  // 1, the maximum
  EXPECT_EQ(h.total(0), 3u);
  EXPECT_EQ(histogramCpu(img, 2), h);
}

TEST(Histogram, ConstantFloatChannelFallsInBinZero) {
  Image img(4, 3, 2, PixelType::F64);
  for (auto& s : img.samples<double>()) s = -2.5;
  const Histogram h = histogramReference(img, 16);
  EXPECT_EQ(h.at(0, 0), 12u);
  EXPECT_EQ(h.at(1, 0), 12u);
  EXPECT_EQ(histogramCpu(img, 16), h);
}

TEST(Histogram, AllNaNCountsNothing) {
  Image img(3, 3, 1, PixelType::F32);
  for (auto& s : img.samples<float>()) s = std::numeric_limits<float>::quiet_NaN();
  const Histogram h = histogramReference(img);
  EXPECT_EQ(h.total(0), 0u);
  EXPECT_GT(h.lo[0], h.hi[0]);
  EXPECT_EQ(histogramCpu(img).total(0), 0u);
}

TEST(Histogram, HandWorkedU16BinsTheChannelsOwnRangeInIntegers) {
  Image img(5, 1, 2, PixelType::U16);
  // Channel 0 spans 100..110 (11 values) in 4 bins: bin = (v - 100) * 4 / 11.
  // Channel 1 spans 0..65535 in 4 bins of 16384 values each.
  const std::uint16_t v[] = {100, 0, 101, 16383, 103, 16384, 110, 65535, 102, 49152};
  for (int i = 0; i < 10; ++i) img.samples<std::uint16_t>()[i] = v[i];
  const Histogram h = histogramReference(img, 4);
  EXPECT_EQ(h.bins, 4);
  EXPECT_EQ(h.lo[0], 100.0);
  EXPECT_EQ(h.hi[0], 110.0);
  EXPECT_EQ(h.at(0, 0), 3u);  // 100, 101, 102 (2 * 4 / 11 = 0)
  EXPECT_EQ(h.at(0, 1), 1u);  // 103 (12 / 11 = 1)
  EXPECT_EQ(h.at(0, 2), 0u);
  EXPECT_EQ(h.at(0, 3), 1u);  // 110, the maximum (40 / 11 = 3)
  EXPECT_EQ(h.lo[1], 0.0);
  EXPECT_EQ(h.hi[1], 65535.0);
  EXPECT_EQ(h.at(1, 0), 2u);  // 0, 16383: bin 0 is 0..16383
  EXPECT_EQ(h.at(1, 1), 1u);  // 16384
  EXPECT_EQ(h.at(1, 2), 0u);
  EXPECT_EQ(h.at(1, 3), 2u);  // 49152, 65535
  EXPECT_EQ(histogramCpu(img, 4), h);
  // Fewer values than bins: one value a bin, the bin of v is v - lo.
  const Histogram wide = histogramReference(img, 16);
  EXPECT_EQ(wide.at(0, 0) + wide.at(0, 1) + wide.at(0, 2), 3u);
  EXPECT_EQ(histogramCpu(img, 16), wide);
  // The line profile reads 16-bit samples as they are.
  EXPECT_EQ(lineProfile(img, 4.5, 0.5, 4.5, 0.5).values[1][0], 49152.0);
}

TEST(Histogram, ConstantU16ChannelFallsInBinZero) {
  Image img(3, 5, 1, PixelType::U16);
  for (auto& s : img.samples<std::uint16_t>()) s = 4242;
  const Histogram h = histogramReference(img, 7);
  EXPECT_EQ(h.at(0, 0), 15u);
  EXPECT_EQ(h.lo[0], 4242.0);
  EXPECT_EQ(h.hi[0], 4242.0);
  EXPECT_EQ(histogramCpu(img, 7), h);
}

TEST(Histogram, BadBinCountsAreOneSentence) {
  Image img(2, 2, 1, PixelType::F32);
  EXPECT_THROW(histogramReference(img, 0), std::invalid_argument);
  EXPECT_THROW(histogramCpu(img, kMaxFloatBins + 1), std::invalid_argument);
  EXPECT_THROW(histogramReference(Image{}), std::invalid_argument);
  EXPECT_EQ(histogramBins(PixelType::U8, 3), 256);  // u8 ignores the float bin count
}

class HistogramTable : public ::testing::TestWithParam<HistCase> {};

TEST_P(HistogramTable, CpuMatchesReference) {
  const HistCase c = GetParam();
  const Image img = c.input();
  const Histogram ref = histogramReference(img);
  const Histogram cpu = histogramCpu(img);
  ASSERT_EQ(cpu.channels, ref.channels);
  ASSERT_EQ(cpu.bins, ref.bins);
  for (int ch = 0; ch < ref.channels; ++ch) {
    EXPECT_EQ(cpu.lo[ch], ref.lo[ch]) << "channel " << ch;
    EXPECT_EQ(cpu.hi[ch], ref.hi[ch]) << "channel " << ch;
    EXPECT_EQ(cpu.total(ch), ref.total(ch)) << "channel " << ch;
    if (c.type != PixelType::F32)
      EXPECT_EQ(moved(cpu, ref, ch), 0u) << "channel " << ch;
    else
      EXPECT_LE(moved(cpu, ref, ch), 2 + ref.total(ch) / 50) << "channel " << ch;
  }
}

TEST_P(HistogramTable, GpuMatchesReferenceExactly) {
  GPULAB_REQUIRE_GPU();
  const HistCase c = GetParam();
  const Image img = c.input();
  GpuContext gpu;
  const DeviceImage d = gpu.upload(img);
  HistogramGpu hist;
  hist.run(gpu, d);
  const Histogram got = hist.download(gpu);
  EXPECT_EQ(got, histogramReference(img));
  // Run twice on the same buffers: the counts start from zero each time.
  hist.run(gpu, d);
  EXPECT_EQ(hist.download(gpu), got);
}

INSTANTIATE_TEST_SUITE_P(Sizes, HistogramTable, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return p.param.name(); });

TEST(HistogramGpu, OneBinAndManyBinsAndNonFinite) {
  GPULAB_REQUIRE_GPU();
  Image img = test::randomImage(101, 7, 3, PixelType::F32, 11, 1000.0);
  img.samples<float>()[4] = std::numeric_limits<float>::quiet_NaN();
  img.samples<float>()[9] = -std::numeric_limits<float>::infinity();
  GpuContext gpu;
  const DeviceImage d = gpu.upload(img);
  for (int bins : {1, 3, 4096, kMaxFloatBins}) {
    HistogramGpu hist(bins);
    hist.run(gpu, d);
    EXPECT_EQ(hist.download(gpu), histogramReference(img, bins)) << bins << " bins";
  }
}

TEST(HistogramGpu, U16OneBinAndManyBins) {
  GPULAB_REQUIRE_GPU();
  Image img = test::randomImage(97, 5, 2, PixelType::U16, 13);
  for (auto& v : img.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(v % 3000 + 7);  // 2999 values
  GpuContext gpu;
  const DeviceImage d = gpu.upload(img);
  for (int bins : {1, 3, 2999, 4096, kMaxFloatBins}) {
    HistogramGpu hist(bins);
    hist.run(gpu, d);
    EXPECT_EQ(hist.download(gpu), histogramReference(img, bins)) << bins << " bins";
  }
}

TEST(LineProfile, HorizontalDiagonalAndPoint) {
  Image img(5, 4, 2, PixelType::U8);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) {
      img.at<std::uint8_t>(x, y, 0) = static_cast<std::uint8_t>(10 * x + y);
      img.at<std::uint8_t>(x, y, 1) = static_cast<std::uint8_t>(200 - x);
    }
  const LineProfile row = lineProfile(img, 0.5, 1.5, 4.5, 1.5);
  ASSERT_EQ(row.values.size(), 2u);
  ASSERT_EQ(row.values[0].size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(row.values[0][i], 10 * i + 1);
    EXPECT_EQ(row.values[1][i], 200 - i);
  }
  const LineProfile diag = lineProfile(img, 0.5, 0.5, 3.5, 3.5);
  ASSERT_EQ(diag.values[0].size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(diag.values[0][i], 11 * i);
  const LineProfile point = lineProfile(img, 2.2, 2.7, 2.2, 2.7);
  ASSERT_EQ(point.values[0].size(), 1u);
  EXPECT_EQ(point.values[0][0], 22);
  // Beyond the image: clipped to its edge pixels.
  const LineProfile out = lineProfile(img, -10, 0.5, 20, 0.5);
  EXPECT_EQ(out.xs.front(), 0);
  EXPECT_EQ(out.xs.back(), 4);
  EXPECT_THROW(lineProfile(Image{}, 0, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(lineProfile(img, 0, 0, std::nan(""), 1), std::invalid_argument);
}
