// Canny: the non-maximum suppression rule and the gray conversion by hand, then OpenCV's cv::Canny
// and the GPU against the naive reference (flood-fill hysteresis) to the pixel: on structured
// images (waves, a bright box and noise) over sizes 1x1 to 640x480, gray / RGB / RGBA, L1 and L2,
// low and high thresholds; and on the project's sample photos. Every comparison is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpulab/filters/canny.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/kernels/canny.cuh"
#include "support/planewise_test.hpp"

using namespace gpulab;

namespace {

/// Waves, a bright box and noise: long edges, junctions and weak runs for the hysteresis.
Image structuredImage(int width, int height, int channels, unsigned seed) {
  Image img(width, height, channels, PixelType::U8);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(-18, 18);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        double v = 120 + 60 * std::sin(x * 0.31 + y * 0.11 + c) + 45 * std::cos(y * 0.23 - x * 0.07 + 2 * c);
        if (x > width / 4 && x < width / 2 && y > height / 3 && y < 2 * height / 3) v += 70;
        v += noise(rng);
        img.at<std::uint8_t>(x, y, c) = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
      }
  return img;
}

struct CannyCase {
  int width, height, channels;
  double low, high;
  CannyGradient gradient;

  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) + "c" + std::to_string(channels) + "_" +
           std::to_string(static_cast<int>(low)) + "_" + std::to_string(static_cast<int>(high)) + "_" +
           std::string(toString(gradient));
  }
  Image input() const { return structuredImage(width, height, channels, unsigned(width * 31 + height)); }
  Canny op() const { return Canny(low, high, gradient); }
};

std::vector<CannyCase> cannyCases() {
  std::vector<CannyCase> cases;
  for (test::Size2 s : test::tableSizes())
    for (int channels : {1, 3, 4})
      for (CannyGradient g : {CannyGradient::L1, CannyGradient::L2})
        for (auto [low, high] : {std::pair{20.0, 60.0}, std::pair{50.0, 150.0}, std::pair{90.5, 90.5}})
          cases.push_back({s.w, s.h, channels, low, high, g});
  for (CannyGradient g : {CannyGradient::L1, CannyGradient::L2}) cases.push_back({640, 480, 1, 30, 100, g});
  return cases;
}

const Image& referenceFor(const CannyCase& c) {
  return test::cachedReference(c, [](const CannyCase& k) { return k.op().runReference(k.input()); });
}

std::size_t edgeCount(const Image& img) {
  return static_cast<std::size_t>(
      std::count(img.samples<std::uint8_t>().begin(), img.samples<std::uint8_t>().end(), std::uint8_t{255}));
}

Image photo(const char* name) { return loadImage(std::string(GPULAB_SOURCE_DIR) + "/resources/photos/" + name); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hand-worked rules and parameters

TEST(CannyRules, GrayIsOpenCvsFixedPoint) {
  EXPECT_EQ(kernels::cannyGray(255, 255, 255), 255);
  EXPECT_EQ(kernels::cannyGray(0, 0, 0), 0);
  EXPECT_EQ(kernels::cannyGray(255, 0, 0), 76);   // 0.299 * 255 = 76.2
  EXPECT_EQ(kernels::cannyGray(0, 255, 0), 150);  // 0.587 * 255 = 149.7
  EXPECT_EQ(kernels::cannyGray(0, 0, 255), 29);   // 0.114 * 255 = 29.07
  // Every gray level and a million random colours against cv::cvtColor itself.
  cv::Mat rgb(1, 256 + 1000000, CV_8UC3), gray;
  std::mt19937 rng(3);
  for (int i = 0; i < rgb.cols; ++i) {
    const auto v = static_cast<std::uint8_t>(i);
    rgb.at<cv::Vec3b>(0, i) =
        i < 256 ? cv::Vec3b(v, v, v) : cv::Vec3b(std::uint8_t(rng()), std::uint8_t(rng()), std::uint8_t(rng()));
  }
  cv::cvtColor(rgb, gray, cv::COLOR_RGB2GRAY);
  for (int i = 0; i < rgb.cols; ++i) {
    const cv::Vec3b p = rgb.at<cv::Vec3b>(0, i);
    ASSERT_EQ(kernels::cannyGray(p[0], p[1], p[2]), gray.at<std::uint8_t>(0, i))
        << int(p[0]) << "," << int(p[1]) << "," << int(p[2]);
  }
}

TEST(CannyRules, SuppressionFollowsTheQuantisedDirectionAndOpenCvsTies) {
  // Horizontal gradient: compared with left (strictly) and right (or equal).
  EXPECT_EQ(kernels::cannyClass(100, 50, 0, 10, 90, 99, 100, 0, 0, 0, 0, 0, 0), 2);
  EXPECT_EQ(kernels::cannyClass(100, 50, 0, 10, 90, 100, 99, 0, 0, 0, 0, 0, 0), 0);
  EXPECT_EQ(kernels::cannyClass(100, 50, 0, 10, 100, 99, 0, 0, 0, 0, 0, 0, 0), 1);  // not above high: weak
  // Vertical gradient: up strictly, down or equal; the left/right neighbours do not matter.
  EXPECT_EQ(kernels::cannyClass(100, 0, 50, 10, 90, 500, 500, 99, 100, 0, 0, 0, 0), 2);
  EXPECT_EQ(kernels::cannyClass(100, 0, 50, 10, 90, 0, 0, 100, 0, 0, 0, 0, 0), 0);
  // Diagonal, same signs: up-left against down-right, both strict.
  EXPECT_EQ(kernels::cannyClass(100, 40, 40, 10, 90, 0, 0, 0, 0, 99, 500, 500, 99), 2);
  EXPECT_EQ(kernels::cannyClass(100, 40, 40, 10, 90, 0, 0, 0, 0, 99, 0, 0, 100), 0);
  // Opposite signs: up-right against down-left.
  EXPECT_EQ(kernels::cannyClass(100, 40, -40, 10, 90, 0, 0, 0, 0, 500, 99, 99, 500), 2);
  // At or below low: never an edge.
  EXPECT_EQ(kernels::cannyClass(10, 10, 0, 10, 90, 0, 0, 0, 0, 0, 0, 0, 0), 0);
}

TEST(CannyReference, HysteresisFollowsWeakChainsFromStrongPixels) {
  // A vertical step whose contrast fades downwards: strong at the top, weak below; the weak part
  // is kept only through the chain. A separate weak-only step stays out.
  Image img(24, 20, 1, PixelType::U8);
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 24; ++x) {
      const int contrast = y < 5 ? 80 : 20;
      img.at<std::uint8_t>(x, y) = static_cast<std::uint8_t>(x >= 6 && x < 14 ? 100 + contrast : 100);
      if (x >= 18) img.at<std::uint8_t>(x, y) = 120;  // a 20-step edge at x = 17/18, never strong
    }
  const Canny canny(50, 200);
  const Image ref = canny.runReference(img);
  EXPECT_EQ(ref.at<std::uint8_t>(5, 2), 255);   // strong part
  EXPECT_EQ(ref.at<std::uint8_t>(5, 15), 255);  // weak part, reached through the chain
  for (int y = 0; y < 20; ++y) {
    EXPECT_EQ(ref.at<std::uint8_t>(17, y), 0) << y;
    EXPECT_EQ(ref.at<std::uint8_t>(18, y), 0) << y;
  }
  EXPECT_EQ(canny.runCpu(img), ref);
}

TEST(CannyApi, RejectsWhatItCannotTake) {
  EXPECT_EQ(Canny(200, 100).describe(), "canny 100..200 l1");  // swapped, as cv::Canny
  EXPECT_THROW(Canny(-1, 100), std::invalid_argument);
  EXPECT_THROW(Canny(1, NAN), std::invalid_argument);
  EXPECT_THROW(Canny(1, 2).outputShape({4, 4, 1, PixelType::F32}), std::invalid_argument);
  EXPECT_THROW(Canny(1, 2).outputShape({4, 4, 2, PixelType::U8}), std::invalid_argument);
  const ImageShape out = Canny(1, 2).outputShape({40, 30, 4, PixelType::U8});
  EXPECT_EQ(out.channels, 1);
  EXPECT_EQ(findOperation("canny").make({})->describe(), "canny 50..150 l1");
  EXPECT_EQ(findOperation("canny").make({{"gradient", "l2"}, {"low", "3"}})->describe(), "canny 3..150 l2");
  EXPECT_THROW(findOperation("canny").make({{"low", "-3"}}), std::invalid_argument);
}

TEST(CannyApi, ThresholdLevelsAsOpenCv) {
  EXPECT_EQ(Canny(50.7, 150.2).lowLevel(), 50);
  EXPECT_EQ(Canny(50.7, 150.2).highLevel(), 150);
  EXPECT_EQ(Canny(10.5, 40000, CannyGradient::L2).lowLevel(), 110);  // floor(10.5^2)
  EXPECT_EQ(Canny(10.5, 40000, CannyGradient::L2).highLevel(), 32767 * 32767);
}

// ---------------------------------------------------------------------------------------------
// The table and the photos

class CannyCaseTest : public ::testing::TestWithParam<CannyCase> {};

TEST_P(CannyCaseTest, OpenCvMatchesReference) {
  const CannyCase& c = GetParam();
  EXPECT_TRUE(test::imagesNear(referenceFor(c), c.op().runCpu(c.input()), 0.0));
}

TEST_P(CannyCaseTest, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const CannyCase& c = GetParam();
  Canny op = c.op();
  EXPECT_TRUE(test::imagesNear(referenceFor(c), test::runOnGpu(op, c.input()), 0.0));
}

INSTANTIATE_TEST_SUITE_P(Table, CannyCaseTest, ::testing::ValuesIn(cannyCases()),
                         [](const ::testing::TestParamInfo<CannyCase>& p) { return p.param.name(); });

TEST(CannyPhotos, OpenCvAndReferenceAgreeToThePixel) {
  for (const char* name : {"coffee.png", "astronaut.png"}) {
    const Image img = photo(name);
    for (CannyGradient g : {CannyGradient::L1, CannyGradient::L2}) {
      const Canny canny(40, 120, g);
      const Image ref = canny.runReference(img);
      EXPECT_GT(edgeCount(ref), img.pixelCount() / 100) << name;  // a photo has edges
      EXPECT_TRUE(test::imagesNear(ref, canny.runCpu(img), 0.0)) << name << " " << toString(g);
    }
  }
}

TEST(CannyPhotos, GpuMatchesOpenCvToThePixel) {
  GPULAB_REQUIRE_GPU();
  for (const char* name : {"coffee.png", "astronaut.png"}) {
    const Image img = photo(name);
    for (CannyGradient g : {CannyGradient::L1, CannyGradient::L2})
      for (auto [low, high] : {std::pair{40.0, 120.0}, std::pair{10.0, 250.0}}) {
        Canny canny(low, high, g);
        EXPECT_TRUE(test::imagesNear(canny.runCpu(img), test::runOnGpu(canny, img), 0.0))
            << name << " " << canny.describe();
      }
  }
}

TEST(CannyGpu, LongChainsAcrossManyTilesConverge) {
  GPULAB_REQUIRE_GPU();
  // A spiral-free but long, meandering weak edge: the hysteresis has to carry it across many
  // 32x16 tiles, one strong pixel at its start.
  const int width = 1500, height = 700;
  Image img(width, height, 1, PixelType::U8);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int band = (y / 40) % 2 == 0 ? x : width - 1 - x;  // snake between rows of bands
      img.at<std::uint8_t>(x, y) = static_cast<std::uint8_t>((y % 40) < 20 && band > 10 ? 110 : 100);
    }
  img.at<std::uint8_t>(0, 0) = 255;
  Canny canny(15, 300);
  EXPECT_TRUE(test::imagesNear(canny.runCpu(img), test::runOnGpu(canny, img), 0.0));
}
