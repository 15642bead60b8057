// Regions of interest (core/roi.hpp): the window arithmetic, crop and paste by hand, and the promise
// the GUI relies on: an operation run on a region's window and pasted back equals the full-image
// result inside the region and the input outside it, for every border mode, near every edge, on the
// CPU, the reference and the GPU (skipped without one).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/roi.hpp"
#include "gpulab/filters/registry.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

// Whether out equals expectInside inside r and expectOutside elsewhere, sample by sample.
::testing::AssertionResult insideOutside(const Image& out, const Image& inside, const Image& outside,
                                         const PixelRect& r) {
  for (int y = 0; y < out.height(); ++y)
    for (int x = 0; x < out.width(); ++x) {
      const bool in = x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height;
      const Image& e = in ? inside : outside;
      for (int c = 0; c < out.channels(); ++c) {
        const double a = test::sampleAt(out, (static_cast<std::size_t>(y) * out.width() + x) * out.channels() + c);
        const double b = test::sampleAt(e, (static_cast<std::size_t>(y) * out.width() + x) * out.channels() + c);
        if (a != b)
          return ::testing::AssertionFailure() << "at x=" << x << " y=" << y << " c=" << c << " ("
                                               << (in ? "inside" : "outside") << "): expected " << b << ", got " << a;
      }
    }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Roi, WindowGrowsByTheReachAndClipsToTheImage) {
  const ImageShape shape{100, 50, 3, PixelType::U8};
  RoiWindow w = roiWindow(shape, {10, 20, 30, 5}, 4);
  EXPECT_EQ(w.window.x, 6);
  EXPECT_EQ(w.window.y, 16);
  EXPECT_EQ(w.window.width, 38);
  EXPECT_EQ(w.window.height, 13);
  EXPECT_EQ(w.inner.x, 4);
  EXPECT_EQ(w.inner.y, 4);
  w = roiWindow(shape, {0, 45, 100, 5}, 10);  // at the corner: clipped
  EXPECT_EQ(w.window.x, 0);
  EXPECT_EQ(w.window.y, 35);
  EXPECT_EQ(w.window.width, 100);
  EXPECT_EQ(w.window.height, 15);
  EXPECT_EQ(w.inner.y, 10);
  w = roiWindow(shape, {10, 10, 5, 5}, -1);  // reach unknown: the whole image
  EXPECT_EQ(w.window.width, 100);
  EXPECT_EQ(w.window.height, 50);
  EXPECT_EQ(w.inner.x, 10);
  EXPECT_THROW(roiWindow(shape, {0, 0, 0, 5}, 1), std::invalid_argument);
  EXPECT_THROW(roiWindow(shape, {90, 0, 11, 5}, 1), std::invalid_argument);
  EXPECT_THROW(roiWindow(shape, {-1, 0, 5, 5}, 1), std::invalid_argument);
}

TEST(Roi, CropAndPasteByHand) {
  const Image img = test::randomImage(7, 5, 2, PixelType::F32, 3);
  const Image c = crop(img, {2, 1, 3, 2});
  ASSERT_EQ(c.width(), 3);
  ASSERT_EQ(c.height(), 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      for (int ch = 0; ch < 2; ++ch) EXPECT_EQ(c.at<float>(x, y, ch), img.at<float>(x + 2, y + 1, ch));
  EXPECT_THROW(crop(img, {5, 0, 3, 1}), std::invalid_argument);

  RoiWindow w = roiWindow(shapeOf(img), {3, 2, 2, 2}, 1);
  Image window = crop(img, w.window);
  for (auto& v : window.samples<float>()) v = 42.f;
  const Image pasted = pasteRoi(img, window, w);
  Image inside = img;
  for (auto& v : inside.samples<float>()) v = 42.f;
  EXPECT_TRUE(insideOutside(pasted, inside, img, w.roi));
  EXPECT_THROW(pasteRoi(img, crop(img, {0, 0, 2, 2}), w), std::invalid_argument);
}

struct RoiCase {
  std::string op;
  ParamValues params;
  PixelRect roi;
  PixelType type;
  int channels;
};

class RoiEqualsFullImage : public ::testing::TestWithParam<RoiCase> {};

TEST_P(RoiEqualsFullImage, InsideTheFullResultOutsideTheInput) {
  const RoiCase c = GetParam();
  const Image img = test::randomImage(61, 43, c.channels, c.type, 977);
  const auto op = findOperation(c.op).make(c.params);
  ASSERT_TRUE(keepsShape(*op, shapeOf(img)));
  const RoiWindow w = roiWindow(shapeOf(img), c.roi, op->reach());
  const Image window = crop(img, w.window);
  EXPECT_TRUE(insideOutside(pasteRoi(img, op->runReference(window), w), op->runReference(img), img, c.roi));
  EXPECT_TRUE(insideOutside(pasteRoi(img, op->runCpu(window), w), op->runCpu(img), img, c.roi));
}

TEST_P(RoiEqualsFullImage, OnTheGpu) {
  GPULAB_REQUIRE_GPU();
  const RoiCase c = GetParam();
  const Image img = test::randomImage(61, 43, c.channels, c.type, 977);
  const auto op = findOperation(c.op).make(c.params);
  GpuContext gpu;
  const DeviceImage d = gpu.upload(img);
  const RoiWindow w = roiWindow(shapeOf(img), c.roi, op->reach());
  DeviceImage window, out, full;
  crop(gpu, d, w.window, window);
  EXPECT_TRUE(test::imagesNear(crop(img, w.window), gpu.download(window), 0));
  op->runGpu(gpu, window, out);
  op->runGpu(gpu, d, full);
  EXPECT_TRUE(insideOutside(pasteRoi(img, gpu.download(out), w), gpu.download(full), img, c.roi));
}

std::vector<RoiCase> roiCases() {
  std::vector<RoiCase> out;
  const std::vector<PixelRect> rects = {
      {20, 10, 17, 9}, {0, 0, 5, 43}, {50, 30, 11, 13}, {0, 0, 61, 43}, {30, 21, 1, 1}};
  for (const char* border : {"reflect101", "reflect", "replicate", "wrap", "constant"})
    for (const PixelRect& r : rects) {
      out.push_back({"box", {{"radius", "3"}, {"border", border}, {"border-value", "7"}}, r, PixelType::U8, 3});
      out.push_back({"box", {{"radius", "5"}, {"border", border}}, r, PixelType::F32, 1});
    }
  for (const PixelRect& r : rects) out.push_back({"auto-levels", {}, r, PixelType::U8, 4});
  for (const PixelRect& r : rects) out.push_back({"auto-levels", {}, r, PixelType::U16, 4});  // 16-bit RGBA as is
  // The new filters' reach: a window too small by one pixel would change the region's edge.
  for (const PixelRect& r : rects) {
    out.push_back({"gaussian", {{"sigma", "1.5"}}, r, PixelType::F32, 1});
    out.push_back({"gaussian", {{"sigma", "1.2"}, {"border", "constant"}}, r, PixelType::U8, 3});
    out.push_back({"median", {{"size", "5"}}, r, PixelType::U8, 3});
    out.push_back({"unsharp", {{"amount", "1.5"}, {"sigma", "2"}}, r, PixelType::U8, 1});
    out.push_back({"morph", {{"morph", "open"}, {"shape", "ellipse"}, {"size", "5"}}, r, PixelType::U8, 1});
    out.push_back({"morph", {{"morph", "close"}, {"size", "4"}}, r, PixelType::F32, 1});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, RoiEqualsFullImage, ::testing::ValuesIn(roiCases()), [](const auto& p) {
  const RoiCase& c = p.param;
  std::string name = c.op + "_" + (c.params.count("border") ? c.params.at("border") : std::string("none")) + "_" +
                     std::to_string(c.roi.x) + "_" + std::to_string(c.roi.y) + "_" + std::to_string(c.roi.width) + "x" +
                     std::to_string(c.roi.height) + "_" + std::string(toString(c.type));
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

TEST(Roi, ReachOfTheRegisteredFilters) {
  EXPECT_EQ(findOperation("box").make({{"radius", "3"}})->reach(), 3);
  EXPECT_EQ(findOperation("box").make({{"radius", "3"}, {"border", "wrap"}})->reach(), -1)
      << "a wrapping border reads the opposite edge";
  EXPECT_EQ(findOperation("sobel").make({})->reach(), 1);
  EXPECT_EQ(findOperation("auto-levels").make({})->reach(), -1);
  EXPECT_EQ(findOperation("median").make({{"size", "7"}})->reach(), 3);
  EXPECT_EQ(findOperation("morph").make({{"morph", "open"}, {"size", "5"}})->reach(), 4) << "two passes";
  EXPECT_EQ(findOperation("morph").make({{"size", "5"}})->reach(), 2);
  EXPECT_EQ(findOperation("canny").make({})->reach(), -1) << "hysteresis follows edges across the image";
}
