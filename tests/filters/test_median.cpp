// Median: the selection routines the GPU runs (forgetful selection for 3x3..7x7, bitwise radix
// selection beyond), run on the host against std::nth_element on random keys including -0, the
// infinities and NaN; then OpenCV / gpulab's f32 baseline and the GPU against the naive reference
// over the shared table (sizes 1x1 to 257x131, u8 gray/RGB/RGBA, f32 gray/RGB, every border) for
// every odd size 3x3 to 17x17 (u8: the histogram's 8-bit counts up to 15x15, 16-bit from 17x17).
// Every comparison is exact: a median picks one of the samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpulab/filters/median.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/median.cuh"
#include "support/planewise_test.hpp"

using namespace gpulab;

namespace {

struct MedianCase : test::FilterCaseImage {
  int size;

  Border border() const { return FilterCaseImage::border(99.6, 2.25); }
  std::string name() const { return imageName() + "_k" + std::to_string(size); }
  Image input() const { return FilterCaseImage::input(6007, 13); }
  Median op() const { return Median(size, border()); }
};

std::vector<MedianCase> medianCases() {
  std::vector<MedianCase> cases;
  for (const test::FilterCaseImage& image : test::tableImages())
    for (int size : {3, 5, 7, 9, 11, 13, 15, 17})
      if (size <= 7 || image.width < 200) cases.push_back({image, size});  // the reference sorts every window
  return cases;
}

const Image& referenceFor(const MedianCase& c) {
  return test::cachedReference(c, [](const MedianCase& k) { return k.op().runReference(k.input()); });
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Exact comparison, bit for bit for f32 (the median is a sample: even the sign of zero is kept).
::testing::AssertionResult identical(const Image& expected, const Image& actual) {
  if (expected.width() != actual.width() || expected.height() != actual.height() ||
      expected.channels() != actual.channels() || expected.type() != actual.type())
    return ::testing::AssertionFailure() << "shape differs: " << expected.describe() << " vs " << actual.describe();
  const std::size_t n = expected.pixelCount() * expected.channels();
  for (std::size_t i = 0; i < n; ++i) {
    const bool same = expected.type() == PixelType::U8
                          ? expected.samples<std::uint8_t>()[i] == actual.samples<std::uint8_t>()[i]
                          : sameBits(expected.samples<float>()[i], actual.samples<float>()[i]);
    if (!same) {
      const std::size_t px = i / expected.channels();
      return ::testing::AssertionFailure()
             << "first difference at x=" << px % expected.width() << " y=" << px / expected.width()
             << " c=" << i % expected.channels() << ": expected " << test::sampleAt(expected, i) << ", got "
             << test::sampleAt(actual, i);
    }
  }
  return ::testing::AssertionSuccess();
}

// A side x side window of random keys: floats from a mix of specials and values with ties.
std::vector<std::uint32_t> randomWindow(int side, bool floats, std::mt19937& rng) {
  const float specials[] = {
      0.f,     -0.f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 1.f, -1.f, 1e-38f,
      -1e-38f, 3.5f};
  std::uniform_int_distribution<int> pick(0, 12), byte(0, 255);
  std::uniform_real_distribution<float> value(-100.f, 100.f);
  std::vector<std::uint32_t> w(static_cast<std::size_t>(side * side));
  for (auto& k : w) {
    if (!floats) {
      k = kernels::medianKey(static_cast<std::uint8_t>(byte(rng) / (pick(rng) < 4 ? 64 : 1)));
      continue;
    }
    const int p = pick(rng);
    k = kernels::medianKey(p < 9 ? specials[p] : value(rng));
  }
  return w;
}

template <int R>
void checkForgetful(bool floats) {
  std::mt19937 rng(1234 + R);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::uint32_t> w = randomWindow(2 * R + 1, floats, rng);
    std::vector<std::uint32_t> sorted = w;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    ASSERT_EQ(kernels::forgetfulMedian<R>(w.data(), 2 * R + 1), sorted[sorted.size() / 2]) << "trial " << trial;
    ASSERT_EQ(kernels::radixMedian(w.data(), 2 * R + 1, 2 * R + 1, floats ? 32 : 8), sorted[sorted.size() / 2]);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The selection routines and the key order

TEST(MedianKeys, OrderIsTheFloatOrderWithSignedZerosAndNaNsOutside) {
  const float ordered[] = {-std::numeric_limits<float>::infinity(), -3.f, -1e-45f, -0.f, 0.f, 1e-45f, 2.f,
                           std::numeric_limits<float>::infinity()};
  for (std::size_t i = 0; i + 1 < std::size(ordered); ++i)
    EXPECT_LT(kernels::medianKey(ordered[i]), kernels::medianKey(ordered[i + 1])) << i;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_GT(kernels::medianKey(nan), kernels::medianKey(std::numeric_limits<float>::infinity()));
  EXPECT_LT(kernels::medianKey(-nan), kernels::medianKey(-std::numeric_limits<float>::infinity()));
  for (float v : ordered) EXPECT_TRUE(sameBits(kernels::medianValue<float>(kernels::medianKey(v)), v)) << v;
  EXPECT_EQ(kernels::medianValue<std::uint8_t>(kernels::medianKey(std::uint8_t{200})), 200);
}

TEST(MedianSelection, ForgetfulAndRadixMatchNthElement) {
  checkForgetful<1>(false);
  checkForgetful<1>(true);
  checkForgetful<2>(false);
  checkForgetful<2>(true);
  checkForgetful<3>(false);
  checkForgetful<3>(true);
}

TEST(MedianSelection, RadixOnLargeWindowsAndStrides) {
  std::mt19937 rng(99);
  for (int side : {9, 15, 31, 63})
    for (bool floats : {false, true}) {
      std::vector<std::uint32_t> w = randomWindow(side, floats, rng);
      // The same window inside a wider tile (stride side + 5), padding with extreme keys.
      const int stride = side + 5;
      std::vector<std::uint32_t> tile(static_cast<std::size_t>(stride * side), 0xffffffffu);
      for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) tile[y * stride + x] = w[y * side + x];
      std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
      EXPECT_EQ(kernels::radixMedian(tile.data(), stride, side, floats ? 32 : 8), w[w.size() / 2]) << side;
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-worked values and parameters

TEST(MedianReference, RemovesSaltAndKeepsEdges) {
  Image img(7, 5, 1, PixelType::U8);
  for (int y = 0; y < 5; ++y)
    for (int x = 4; x < 7; ++x) img.at<std::uint8_t>(x, y) = 200;
  img.at<std::uint8_t>(1, 2) = 255;  // salt in the dark half
  const Image out = Median(3).runReference(img);
  EXPECT_EQ(out.at<std::uint8_t>(1, 2), 0);
  EXPECT_EQ(out.at<std::uint8_t>(3, 2), 0);
  EXPECT_EQ(out.at<std::uint8_t>(4, 2), 200);
  EXPECT_EQ(Median(3).runCpu(img), out);
}

TEST(MedianApi, RejectsEvenAndOutOfRangeSizesInOneSentence) {
  for (int size : {0, 2, 4, 64, 65, -3}) EXPECT_THROW(Median{size}, std::invalid_argument) << size;
  try {
    Median bad(4);
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "median size 4 is even: use an odd size (1, 3, 5 ... 63)");
  }
  EXPECT_THROW(Median(3).outputShape({4, 4, 1, PixelType::F64}), std::invalid_argument);
}

TEST(MedianApi, RegistryDefaultsToReplicateAsOpenCv) {
  const auto op = findOperation("median").make({});
  EXPECT_EQ(op->describe(), "median 5x5 replicate");
  EXPECT_EQ(findOperation("median").make({{"size", "9"}, {"border", "wrap"}})->describe(), "median 9x9 wrap");
  EXPECT_THROW(findOperation("median").make({{"size", "8"}}), std::invalid_argument);
}

TEST(MedianApi, SaysWhichCpuBaselineRan) {
  const Image f = test::filterTestImage(20, 10, 1, PixelType::F32, 3);
  const Image u = test::filterTestImage(20, 10, 1, PixelType::U8, 3);
  Median small(5), large(7);
  (void)small.runCpu(f);
  EXPECT_EQ(small.methodUsed(Side::Cpu), "medianBlur");
  (void)large.runCpu(f);
  EXPECT_EQ(large.methodUsed(Side::Cpu), "nth_element");
  EXPECT_NE(large.methodNote(Side::Cpu).find("f32 up to 5x5"), std::string::npos);
  (void)large.runCpu(u);
  EXPECT_EQ(large.methodUsed(Side::Cpu), "medianBlur");
}

TEST(MedianApi, SelectionsAndWhatTheyTake) {
  Median m(9);
  EXPECT_THROW(m.setSelect(MedianSelect::Forgetful), std::invalid_argument);
  m.setSelect(MedianSelect::Histogram);
  EXPECT_THROW(m.outputShape({8, 8, 1, PixelType::F32}), std::invalid_argument);
  EXPECT_NO_THROW(m.outputShape({8, 8, 3, PixelType::U8}));
  EXPECT_EQ(m.params().at("select"), "histogram");
  EXPECT_THROW(findOperation("median").make({{"select", "forgetful"}, {"size", "9"}}), std::invalid_argument);
  EXPECT_THROW(findOperation("median").make({{"select", "bucket"}}), std::invalid_argument);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 1, true), kernels::MedianPath::Forgetful);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 2, true), kernels::MedianPath::Forgetful);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 3, true), kernels::MedianPath::Forgetful);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 4, true), kernels::MedianPath::Histogram);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 31, true), kernels::MedianPath::Histogram);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 3, false), kernels::MedianPath::Forgetful);
  EXPECT_EQ(kernels::resolveMedianPath(kernels::MedianPath::Auto, 4, false), kernels::MedianPath::Radix);
}

TEST(MedianApi, CpuRunReportsProgressAndCanBeCancelled) {
  for (PixelType type : {PixelType::U8, PixelType::F32}) {
    const std::vector<double> seen = test::cpuProgressAndCancel(Median(9), test::filterTestImage(30, 20, 3, type, 5));
    ASSERT_FALSE(seen.empty());
    EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  }
}

// ---------------------------------------------------------------------------------------------
// The table

class MedianCaseTest : public ::testing::TestWithParam<MedianCase> {};

TEST_P(MedianCaseTest, CpuBaselineMatchesReference) {
  const MedianCase& c = GetParam();
  EXPECT_TRUE(identical(referenceFor(c), c.op().runCpu(c.input())));
}

TEST_P(MedianCaseTest, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const MedianCase& c = GetParam();
  Median op = c.op();
  EXPECT_TRUE(identical(referenceFor(c), test::runOnGpu(op, c.input())));
}

INSTANTIATE_TEST_SUITE_P(Table, MedianCaseTest, ::testing::ValuesIn(medianCases()),
                         [](const ::testing::TestParamInfo<MedianCase>& p) { return p.param.name(); });

// ---------------------------------------------------------------------------------------------
// GPU specifics

TEST(MedianGpu, LargeWindowsAndALargeImage) {
  GPULAB_REQUIRE_GPU();
  for (int size : {11, 31, 63}) {
    const MedianCase c{{97, 45, BorderMode::Reflect101, false, PixelType::F32, 1}, size};
    Median op = c.op();
    EXPECT_TRUE(identical(c.op().runReference(c.input()), test::runOnGpu(op, c.input()))) << size;
  }
  const MedianCase big{{1031, 517, BorderMode::Replicate, false, PixelType::U8, 3}, 7};
  Median op = big.op();
  EXPECT_TRUE(identical(big.op().runCpu(big.input()), test::runOnGpu(op, big.input())));
}

TEST(MedianGpu, SpecialFloatsKeepTheirOrder) {
  GPULAB_REQUIRE_GPU();
  Image img = test::filterTestImage(40, 30, 1, PixelType::F32, 8);
  std::mt19937 rng(4);
  const float specials[] = {-0.f, 0.f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  for (float& v : img.samples<float>())
    if (rng() % 3 == 0) v = specials[rng() % 4];
  for (int size : {3, 7, 9}) {
    Median op(size);
    EXPECT_TRUE(identical(op.runReference(img), test::runOnGpu(op, img))) << size;
  }
}

TEST(MedianGpu, EverySelectionAgreesWithTheReference) {
  GPULAB_REQUIRE_GPU();
  for (auto [mode, nonzero] : test::tableBorders())
    for (PixelType type : {PixelType::U8, PixelType::F32})
      for (int size : {3, 5, 7, 9, 11, 13, 15, 17, 31}) {
        const MedianCase c{{97, 45, mode, nonzero, type, type == PixelType::U8 ? 4 : 1}, size};
        const Image& expected = c.op().runReference(c.input());
        for (MedianSelect select : {MedianSelect::Forgetful, MedianSelect::Radix, MedianSelect::Histogram}) {
          if ((select == MedianSelect::Forgetful && size > 7) ||
              (select == MedianSelect::Histogram && type != PixelType::U8))
            continue;
          Median op = c.op();
          op.setSelect(select);
          EXPECT_TRUE(identical(expected, test::runOnGpu(op, c.input()))) << c.name() << " " << toString(select);
        }
      }
}

TEST(MedianGpu, HistogramStripsOnAPhotoShapedImage) {
  GPULAB_REQUIRE_GPU();
  // Taller and wider than many 64x64 strips, odd sizes; against OpenCV (exact).
  const Image in = test::filterTestImage(1283, 611, 3, PixelType::U8, 21);
  for (int size : {5, 15, 63}) {
    Median op(size);
    op.setSelect(MedianSelect::Histogram);
    EXPECT_TRUE(identical(op.runCpu(in), test::runOnGpu(op, in))) << size;
  }
}

TEST(MedianGpu, HistogramFollowsTheMedianAcrossWholeRangeJumps) {
  GPULAB_REQUIRE_GPU();
  // The histogram path walks its running median from one row's to the next: rows alternating 0 and
  // 255 (the median jumps across every bin at each row), then a 0/255 checkerboard, then noise;
  // every histogram instantiation (1x1 to 15x15 with 8-bit counts, 17x17 and 33x33 with 16-bit),
  // every border mode, an image narrower and shorter than one block's strip.
  Image in(45, 150, 1, PixelType::U8);
  std::mt19937 rng(77);
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x)
      in.at<std::uint8_t>(x, y, 0) = static_cast<std::uint8_t>(y < 50    ? (y % 2 == 0 ? 0 : 255)
                                                               : y < 100 ? ((x + y) % 2 == 0 ? 0 : 255)
                                                                         : static_cast<int>(rng() >> 24));
  for (auto [mode, nonzero] : test::tableBorders())
    for (int size : {1, 3, 5, 7, 9, 11, 13, 15, 17, 33}) {
      Median op(size, {mode, nonzero ? 200.0 : 0.0});
      op.setSelect(MedianSelect::Histogram);
      EXPECT_TRUE(identical(op.runReference(in), test::runOnGpu(op, in))) << size << " " << toString(mode);
    }
}
