// Morphology: the structuring elements against cv::getStructuringElement, hand-worked erosion and
// dilation, then OpenCV and the GPU against the naive reference over the shared table (sizes 1x1
// to 257x131, u8 gray/RGB/RGBA, f32 gray/RGB, every border mode plus `ignore`) for erosion,
// dilation, opening and closing with rectangles and ellipses of sizes 1 to 31 (even ones too, and
// elements larger than the image). Every comparison is exact: a minimum or maximum picks a sample.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "gpulab/filters/morphology.hpp"
#include "gpulab/filters/registry.hpp"
#include "support/planewise_test.hpp"

using namespace gpulab;

namespace {

struct Element {
  MorphOp op;
  MorphShape shape;
  int size;
};

struct MorphCase : test::FilterCaseImage {
  Element element;
  bool ignore;  // the default border; mode and nonzeroValue unused then

  std::optional<Border> border() const {
    if (ignore) return std::nullopt;
    return FilterCaseImage::border(99.6, 2.25);
  }
  std::string name() const {
    const std::string image = ignore ? std::to_string(width) + "x" + std::to_string(height) + "_ignore_" +
                                           std::string(toString(type)) + "c" + std::to_string(channels)
                                     : imageName();
    return image + "_" + std::string(toString(element.op)) + "_" + std::string(toString(element.shape)) +
           std::to_string(element.size);
  }
  Image input() const { return FilterCaseImage::input(3571, 3); }
  Morphology op() const { return Morphology(element.op, element.shape, element.size, border()); }
};

std::vector<MorphCase> morphCases() {
  const Element elements[] = {{MorphOp::Erode, MorphShape::Rect, 3},     {MorphOp::Dilate, MorphShape::Rect, 4},
                              {MorphOp::Open, MorphShape::Ellipse, 7},   {MorphOp::Close, MorphShape::Ellipse, 15},
                              {MorphOp::Erode, MorphShape::Ellipse, 31}, {MorphOp::Dilate, MorphShape::Rect, 1},
                              {MorphOp::Close, MorphShape::Rect, 9},     {MorphOp::Open, MorphShape::Rect, 6}};
  std::vector<MorphCase> cases;
  for (const test::FilterCaseImage& image : test::tableImages())
    for (const Element& e : elements) {
      cases.push_back({image, e, false});
      if (image.mode == BorderMode::Reflect101) cases.push_back({image, e, true});
    }
  return cases;
}

const Image& referenceFor(const MorphCase& c) {
  return test::cachedReference(c, [](const MorphCase& k) { return k.op().runReference(k.input()); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Elements, hand-worked values, parameters

TEST(MorphElement, SpansAreOpenCvsStructuringElements) {
  for (MorphShape shape : {MorphShape::Rect, MorphShape::Ellipse})
    for (int size = 1; size <= 63; ++size) {
      const cv::Mat e =
          cv::getStructuringElement(shape == MorphShape::Rect ? cv::MORPH_RECT : cv::MORPH_ELLIPSE, {size, size});
      const auto spans = morphSpans(shape, size);
      ASSERT_EQ(static_cast<int>(spans.size()), size);
      for (int i = 0; i < size; ++i)
        for (int j = 0; j < size; ++j)
          ASSERT_EQ(e.at<std::uint8_t>(i, j) != 0, j >= spans[i].first && j < spans[i].second)
              << toString(shape) << " " << size << " row " << i << " col " << j;
    }
}

TEST(MorphReference, ErosionShrinksAndDilationGrowsABrightSquare) {
  Image img(9, 9, 1, PixelType::U8);
  for (int y = 2; y <= 6; ++y)
    for (int x = 2; x <= 6; ++x) img.at<std::uint8_t>(x, y) = 100;
  const Image eroded = Morphology(MorphOp::Erode, MorphShape::Rect, 3).runReference(img);
  const Image dilated = Morphology(MorphOp::Dilate, MorphShape::Rect, 3).runReference(img);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 9; ++x) {
      const bool inner = x >= 3 && x <= 5 && y >= 3 && y <= 5, outer = x >= 1 && x <= 7 && y >= 1 && y <= 7;
      EXPECT_EQ(eroded.at<std::uint8_t>(x, y), inner ? 100 : 0) << x << "," << y;
      EXPECT_EQ(dilated.at<std::uint8_t>(x, y), outer ? 100 : 0) << x << "," << y;
    }
  // Opening removes a one-pixel speck; closing fills a one-pixel hole.
  Image speck(7, 7, 1, PixelType::F32);
  speck.at<float>(3, 3) = 5.f;
  EXPECT_EQ(Morphology(MorphOp::Open, MorphShape::Rect, 3).runReference(speck).at<float>(3, 3), 0.f);
  EXPECT_EQ(Morphology(MorphOp::Close, MorphShape::Rect, 3).runReference(speck).at<float>(3, 3), 5.f);
}

TEST(MorphReference, IgnoredBorderNeverWinsButAConstantOneDoes) {
  Image img(4, 4, 1, PixelType::U8);
  for (auto& v : img.samples<std::uint8_t>()) v = 50;
  EXPECT_EQ(Morphology(MorphOp::Erode, MorphShape::Rect, 3).runReference(img).at<std::uint8_t>(0, 0), 50);
  EXPECT_EQ(Morphology(MorphOp::Dilate, MorphShape::Rect, 3).runReference(img).at<std::uint8_t>(0, 0), 50);
  const Border zero{BorderMode::Constant, 0.0};
  EXPECT_EQ(Morphology(MorphOp::Erode, MorphShape::Rect, 3, zero).runReference(img).at<std::uint8_t>(0, 0), 0);
  EXPECT_EQ(Morphology(MorphOp::Erode, MorphShape::Rect, 3, zero).runCpu(img).at<std::uint8_t>(0, 0), 0);
}

TEST(MorphApi, RegistryParametersAndErrors) {
  const OperationInfo& info = findOperation("morph");
  EXPECT_EQ(info.make({})->describe(), "morph erode rect 3 ignore");
  EXPECT_EQ(info.make({{"morph", "close"}, {"shape", "ellipse"}, {"size", "9"}, {"border", "wrap"}})->describe(),
            "morph close ellipse 9 wrap");
  EXPECT_EQ(info.make({{"border", "constant"}, {"border-value", "3"}})->params().at("border-value"), "3");
  EXPECT_THROW(info.make({{"size", "0"}}), std::invalid_argument);
  EXPECT_THROW(info.make({{"size", "64"}}), std::invalid_argument);
  EXPECT_THROW(info.make({{"shape", "cross"}}), std::invalid_argument);
  EXPECT_THROW(info.make({{"morph", "gradient"}}), std::invalid_argument);
  EXPECT_THROW(Morphology(MorphOp::Erode, MorphShape::Rect, 3).outputShape({4, 4, 1, PixelType::F64}),
               std::invalid_argument);
}

TEST(MorphApi, CpuRunReportsProgressAndCanBeCancelled) {
  const std::vector<double> seen = test::cpuProgressAndCancel(Morphology(MorphOp::Open, MorphShape::Ellipse, 5),
                                                              test::filterTestImage(30, 20, 3, PixelType::U8, 5));
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The table

class MorphCaseTest : public ::testing::TestWithParam<MorphCase> {};

TEST_P(MorphCaseTest, OpenCvMatchesReference) {
  const MorphCase& c = GetParam();
  EXPECT_TRUE(test::imagesNear(referenceFor(c), c.op().runCpu(c.input()), 0.0));
}

TEST_P(MorphCaseTest, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const MorphCase& c = GetParam();
  Morphology op = c.op();
  EXPECT_TRUE(test::imagesNear(referenceFor(c), test::runOnGpu(op, c.input()), 0.0));
}

INSTANTIATE_TEST_SUITE_P(Table, MorphCaseTest, ::testing::ValuesIn(morphCases()),
                         [](const ::testing::TestParamInfo<MorphCase>& p) { return p.param.name(); });

TEST(MorphGpu, LargeImageEveryOperationAgainstOpenCv) {
  GPULAB_REQUIRE_GPU();
  const Image in = test::filterTestImage(1031, 517, 3, PixelType::U8, 77);
  for (MorphOp op : {MorphOp::Erode, MorphOp::Dilate, MorphOp::Open, MorphOp::Close})
    for (MorphShape shape : {MorphShape::Rect, MorphShape::Ellipse}) {
      Morphology m(op, shape, 11);
      EXPECT_TRUE(test::imagesNear(m.runCpu(in), test::runOnGpu(m, in), 0.0)) << m.describe();
    }
}
