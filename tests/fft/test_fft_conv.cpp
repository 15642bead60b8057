// FFT convolution: FFT sizes and geometry, scipy.signal.convolve2d's own outputs on tiny cases,
// the CPU (OpenCV) and GPU paths against a naive direct convolution in double for every border,
// output mode, odd/even/non-square kernels, kernels larger than the image, correlation against
// cv::filter2D, and the cost model.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/kernels/border.cuh"
#include "internal/kernel_views.hpp"
#include "support/conv_reference.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;

namespace {

/// f32: 1e-4 relative to the result's peak; f64: 1e-10; u8: +-1 (float vs double before rounding).

Image fromRows(int w, int h, std::initializer_list<double> values) {
  Image img(w, h, 1, PixelType::F64);
  std::copy(values.begin(), values.end(), img.samples<double>().begin());
  return img;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sizes and geometry

TEST(FftConvSizes, NextFftSizeIsTheSmallestSmoothSize) {
  EXPECT_EQ(nextFftSize(1), 1);
  EXPECT_EQ(nextFftSize(7), 7);
  EXPECT_EQ(nextFftSize(11), 12);
  EXPECT_EQ(nextFftSize(13), 14);
  EXPECT_EQ(nextFftSize(97), 98);
  EXPECT_EQ(nextFftSize(4126), 4200);
  EXPECT_EQ(nextFftSize(7, FftSizeRule::OpenCv), 8);
  auto smooth = [](int n, bool seven) {
    for (int p : {2, 3, 5, 7}) {
      if (p == 7 && !seven) break;
      while (n % p == 0) n /= p;
    }
    return n == 1;
  };
  for (int n = 1; n <= 3000; ++n)
    for (bool seven : {true, false}) {
      const int m = nextFftSize(n, seven ? FftSizeRule::Cufft : FftSizeRule::OpenCv);
      ASSERT_GE(m, n);
      ASSERT_TRUE(smooth(m, seven)) << n << " -> " << m;
      for (int k = n; k < m; ++k) ASSERT_FALSE(smooth(k, seven)) << n << " -> " << m << " skips " << k;
    }
  EXPECT_THROW(nextFftSize(0), std::invalid_argument);
}

TEST(FftConvSizes, GeometryFollowsScipy) {
  FftConvGeometry g = fftConvGeometry(100, 60, 4, 5, ConvMode::Same);
  EXPECT_EQ(std::tie(g.outWidth, g.outHeight, g.originX, g.originY), std::make_tuple(100, 60, 1, 2));
  EXPECT_EQ(std::tie(g.neededWidth, g.neededHeight), std::make_tuple(103, 64));
  EXPECT_EQ(std::tie(g.paddedWidth, g.paddedHeight), std::make_tuple(105, 64));
  g = fftConvGeometry(100, 60, 4, 5, ConvMode::Full);
  EXPECT_EQ(std::tie(g.outWidth, g.outHeight, g.originX, g.originY), std::make_tuple(103, 64, 0, 0));
  EXPECT_EQ(std::tie(g.neededWidth, g.neededHeight), std::make_tuple(106, 68));
  g = fftConvGeometry(100, 60, 4, 5, ConvMode::Valid);
  EXPECT_EQ(std::tie(g.outWidth, g.outHeight, g.originX, g.originY), std::make_tuple(97, 56, 3, 4));
  EXPECT_EQ(std::tie(g.neededWidth, g.neededHeight), std::make_tuple(100, 60));
  EXPECT_THROW(fftConvGeometry(10, 10, 11, 3, ConvMode::Valid), std::invalid_argument);
  EXPECT_THROW(fftConvGeometry(10, 10, 3, 0, ConvMode::Same), std::invalid_argument);
  g = fftConvGeometry(3, 2, 255, 255, ConvMode::Same);  // kernels larger than the image
  EXPECT_EQ(std::tie(g.outWidth, g.outHeight, g.neededWidth), std::make_tuple(3, 2, 257));
}

// ---------------------------------------------------------------------------------------------
// scipy.signal.convolve2d's outputs (scipy 1.17: boundary 'fill' = constant, 'wrap', 'symm' = reflect)

namespace {

struct ScipyCase {
  BorderMode border;
  double fill;
  ConvMode mode;
  int ow, oh;
  std::vector<double> expected;
};

// img [[-3,4,0,7],[3,-1,6,2],[-2,5,1,-3]] (3 rows x 4), kernel [[1,2,-1],[0.5,3,4]] (2 rows x 3).
const Image kScipyImage = fromRows(4, 3, {-3, 4, 0, 7, 3, -1, 6, 2, -2, 5, 1, -3});
const Kernel2D kScipyKernel{3, 2, {1, 2, -1, 0.5, 3, 4}};
const std::vector<ScipyCase> kScipyCases = {
    {BorderMode::Constant, 0.0, ConvMode::Same, 4, 3, {-2, 11, 3, 14, -2, 1, 34.5, 19, 9.5, 25, 9, 23}},
    {BorderMode::Constant, 0.0, ConvMode::Full, 6, 4, {-3,   -2,  11, 3, 14, -7, 1.5, -2,   1,   34.5, 19, 26,
                                                       -0.5, 9.5, 25, 9, 23, 11, -1,  -3.5, 7.5, 21.5, -5, -12}},
    {BorderMode::Constant, 0.0, ConvMode::Valid, 2, 2, {1, 34.5, 25, 9}},
    {BorderMode::Constant,
     2.5,
     ConvMode::Same,
     4,
     3,
     {14.25, 29.75, 21.75, 35.25, 5.5, 1, 34.5, 22.75, 17, 25, 9, 26.75}},
    {BorderMode::Constant, 2.5, ConvMode::Full, 6, 4, {18.25, 14.25, 29.75, 21.75, 35.25, 19.25, 21.5, 5.5,
                                                       1,     34.5,  22.75, 42.25, 19.5,  17,    25,   9,
                                                       26.75, 27.25, 21.5,  11.5,  12.5,  26.5,  1.25, 1.75}},
    {BorderMode::Wrap, 0.0, ConvMode::Same, 4, 3, {-24.5, 18.5, 24.5, 5, 24, 1, 34.5, 20.5, 20.5, 25, 9, 22.5}},
    {BorderMode::Wrap, 0.0, ConvMode::Full, 6, 4, {5,    -24.5, 18.5, 24.5,  5,    -24.5, 20.5, 24,
                                                   1,    34.5,  20.5, 24,    22.5, 20.5,  25,   9,
                                                   22.5, 20.5,  5,    -24.5, 18.5, 24.5,  5,    -24.5}},
    {BorderMode::Reflect, 0.0, ConvMode::Same, 4, 3, {-18, 11, 22.5, 45.5, -17, 1, 34.5, 24.5, 23.5, 25, 9, 21}},
    {BorderMode::Reflect, 0.0, ConvMode::Full, 6, 4, {-7.5, -18,  11,   22.5, 45.5, 56,   15.5,  -17,
                                                      1,    34.5, 24.5, 57,   -4.5, 23.5, 25,    9,
                                                      21,   15,   2,    -8.5, 20.5, 15.5, -16.5, -22.5}},
};

// A kernel larger than the image: img [[2,-1,4],[0.5,3,-2]] (2 x 3), kernel 5 rows x 4.
const Image kSmallImage = fromRows(3, 2, {2, -1, 4, 0.5, 3, -2});
const Kernel2D kLargeKernel{4, 5, {1, 0, 2, -1, 3, 1, 0, 2, -2, 1, 1, 0, 0, 4, -1, 1, 1, 1, 2, -3}};
const std::vector<ScipyCase> kScipyLargeKernelCases = {
    {BorderMode::Constant, 1.5, ConvMode::Same, 3, 2, {28.5, 3.5, 14, 17.5, 16.5, 30.5}},
    {BorderMode::Constant, 1.5, ConvMode::Full, 6, 6, {20,   17,   23,   14, 27, 17,   20,   14,   19,   27,   6,  28,
                                                       15.5, 28.5, 3.5,  14, 25, 12.5, 21.5, 17.5, 16.5, 30.5, 11, 22,
                                                       20,   13.5, 27.5, -1, 37, 8.5,  18.5, 20,   15.5, 22,   8,  30}},
    {BorderMode::Wrap, 0.0, ConvMode::Same, 3, 2, {50.5, -5.5, -15, -21, 33.5, 42}},
    {BorderMode::Reflect, 0.0, ConvMode::Same, 3, 2, {23, -14, 11, 27.5, 8.5, 17}},
    {BorderMode::Reflect, 0.0, ConvMode::Full, 6, 6, {1.5,  8.5, 41.5, 14.5, 8,  28,   31.5, 4,    19,  8.5, -10, 28,
                                                      29.5, 23,  -14,  11,   18, -0.5, -0.5, 27.5, 8.5, 17,  36,  -0.5,
                                                      1.5,  8.5, 41.5, 14.5, 8,  28,   31.5, 4,    19,  8.5, -10, 28}},
};

template <class Run>
void checkScipy(const Image& img, const Kernel2D& kernel, const std::vector<ScipyCase>& cases, Run&& run) {
  for (const ScipyCase& sc : cases) {
    const FilterSpec spec = convSpec(kernel, sc.border, sc.mode, false, ConvMethod::Direct, sc.fill);
    Image expected(sc.ow, sc.oh, 1, PixelType::F64);
    std::copy(sc.expected.begin(), sc.expected.end(), expected.samples<double>().begin());
    EXPECT_TRUE(test::imagesNear(expected, naiveConv(img, spec), 1e-12)) << "reference " << caseName(spec);
    EXPECT_TRUE(test::imagesNear(expected, run(img, spec), 1e-10)) << caseName(spec);
  }
}

}  // namespace

TEST(FftConvScipy, CpuAndReferenceReproduceScipy) {
  auto cpu = [](const Image& img, const FilterSpec& spec) { return FftConvolver(spec).runCpu(img); };
  checkScipy(kScipyImage, kScipyKernel, kScipyCases, cpu);
  checkScipy(kSmallImage, kLargeKernel, kScipyLargeKernelCases, cpu);
}

TEST(FftConvScipy, GpuReproducesScipy) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  auto run = [&](const Image& img, const FilterSpec& spec) {
    FftConvolver conv(spec);
    DeviceImage out;
    conv.runGpu(gpu, gpu.upload(img), out);
    return gpu.download(out);
  };
  checkScipy(kScipyImage, kScipyKernel, kScipyCases, run);
  checkScipy(kSmallImage, kLargeKernel, kScipyLargeKernelCases, run);
}

// ---------------------------------------------------------------------------------------------
// Every border, output mode and direction against the naive definition

using ConvTableParam = std::tuple<std::tuple<int, int>, std::tuple<int, int>>;

class FftConvTable : public ::testing::TestWithParam<ConvTableParam> {
 protected:
  /// Calls check(spec) for every border (constant with a non-zero value too), mode and direction.
  template <class Check>
  void forEachCase(Check&& check) {
    const auto& [size, ksize] = GetParam();
    const auto [w, h] = size;
    const auto [kw, kh] = ksize;
    const Kernel2D k = randomKernel(kw, kh, 1000u + kw * 31u + kh);
    for (BorderMode border : kBorders)
      for (ConvMode mode : kModes)
        for (bool correlate : {false, true}) {
          const FilterSpec spec =
              convSpec(k, border, mode, correlate, ConvMethod::Direct, border == BorderMode::Constant ? 0.75 : 0.0);
          if (!fits(mode, w, h, kw, kh)) {
            EXPECT_THROW(FftConvolver(spec).outputShape({w, h, 1, PixelType::F32}), std::invalid_argument);
            continue;
          }
          check(spec);
        }
  }
};

namespace {}  // namespace

TEST_P(FftConvTable, CpuMatchesDirectDefinition) {
  const auto [w, h] = std::get<0>(GetParam());
  const Image f32 = test::randomImage(w, h, 1, PixelType::F32, 7u + w * h);
  const Image f64 = test::randomImage(w, h, 2, PixelType::F64, 8u + w * h);
  const Image rgba = test::randomImage(w, h, 4, PixelType::U8, 9u + w * h);
  forEachCase([&](const FilterSpec& spec) {
    const FftConvolver conv(spec);
    EXPECT_TRUE(convNear(naiveConv(f32, spec), conv.runCpu(f32))) << caseName(spec) << " f32";
    EXPECT_TRUE(convNear(naiveConv(f64, spec), conv.runCpu(f64))) << caseName(spec) << " f64";
    FilterSpec u8 = spec;
    u8.kernel.values =
        std::vector<double>(spec.kernel.values.size(), 1.0 / static_cast<double>(spec.kernel.values.size()));  // a mean
    u8.border.value = 199.6;  // 200 once converted to u8
    EXPECT_TRUE(convNear(naiveConv(rgba, u8), FftConvolver(u8).runCpu(rgba))) << caseName(spec) << " rgba";
  });
}

TEST_P(FftConvTable, GpuMatchesDirectDefinition) {
  GPULAB_REQUIRE_GPU();
  const auto [w, h] = std::get<0>(GetParam());
  GpuContext gpu;
  const Image f32 = test::randomImage(w, h, 3, PixelType::F32, 17u + w * h);
  const Image f64 = test::randomImage(w, h, 1, PixelType::F64, 18u + w * h);
  const Image rgba = test::randomImage(w, h, 4, PixelType::U8, 19u + w * h);
  const DeviceImage d32 = gpu.upload(f32), d64 = gpu.upload(f64), drgba = gpu.upload(rgba);
  forEachCase([&](const FilterSpec& spec) {
    FftConvolver conv(spec);
    DeviceImage out;
    conv.runGpu(gpu, d32, out);
    EXPECT_TRUE(convNear(naiveConv(f32, spec), gpu.download(out))) << caseName(spec) << " f32";
    conv.runGpu(gpu, d64, out);
    EXPECT_TRUE(convNear(naiveConv(f64, spec), gpu.download(out))) << caseName(spec) << " f64";
    FilterSpec u8 = spec;
    u8.kernel.values =
        std::vector<double>(spec.kernel.values.size(), 1.0 / static_cast<double>(spec.kernel.values.size()));
    u8.border.value = 199.6;
    FftConvolver mean(u8);
    mean.runGpu(gpu, drgba, out);
    EXPECT_TRUE(convNear(naiveConv(rgba, u8), gpu.download(out))) << caseName(spec) << " rgba";
  });
}

// Sides of the form 2^a 3^b 5^c 7^d take the circular method where its strips fit, the padded one
// where they do not (a 9x11 kernel on 12x10): both, with every border and mode, on the same table.
INSTANTIATE_TEST_SUITE_P(
    SmoothShapes, FftConvTable,
    ::testing::Combine(::testing::Values(std::make_tuple(12, 10), std::make_tuple(36, 35), std::make_tuple(64, 48)),
                       ::testing::Values(std::make_tuple(1, 1), std::make_tuple(4, 2), std::make_tuple(6, 5),
                                         std::make_tuple(9, 11), std::make_tuple(15, 15))),
    convTableName<::testing::TestParamInfo<ConvTableParam>>);

INSTANTIATE_TEST_SUITE_P(Shapes, FftConvTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3),
                                                              std::make_tuple(13, 12), std::make_tuple(31, 17)),
                                            ::testing::Values(std::make_tuple(1, 1), std::make_tuple(3, 3),
                                                              std::make_tuple(4, 2), std::make_tuple(6, 5),
                                                              std::make_tuple(9, 11), std::make_tuple(40, 3))),
                         convTableName<::testing::TestParamInfo<ConvTableParam>>);

// ---------------------------------------------------------------------------------------------
// Correlation is OpenCV's filter2D (anchor at the centre), odd and even kernels

TEST(FftConvCpu, CorrelationMatchesFilter2D) {
  const Image img = test::randomImage(45, 38, 1, PixelType::F32, 77);
  const cv::Mat src(img.height(), img.width(), CV_32F, const_cast<std::byte*>(img.data()));
  const std::pair<BorderMode, int> borders[] = {{BorderMode::Reflect101, cv::BORDER_REFLECT_101},
                                                {BorderMode::Reflect, cv::BORDER_REFLECT},
                                                {BorderMode::Replicate, cv::BORDER_REPLICATE},
                                                {BorderMode::Constant, cv::BORDER_CONSTANT}};
  for (auto [kw, kh] : {std::pair{3, 3}, std::pair{4, 4}, std::pair{5, 2}, std::pair{8, 7}, std::pair{15, 15}})
    for (auto [mode, cvBorder] : borders) {
      const Kernel2D k = randomKernel(kw, kh, 88u + kw);
      cv::Mat kernel(kh, kw, CV_64F, const_cast<double*>(k.values.data()));
      cv::Mat kernel32;
      kernel.convertTo(kernel32, CV_32F);
      cv::Mat expected;
      cv::filter2D(src, expected, CV_32F, kernel32, cv::Point(-1, -1), 0, cvBorder);
      Image ref(img.width(), img.height(), 1, PixelType::F32);
      expected.copyTo(cv::Mat(ref.height(), ref.width(), CV_32F, ref.data()));
      const Image got = FftConvolver(convSpec(k, mode, ConvMode::Same, true)).runCpu(img);
      EXPECT_TRUE(convNear(ref, got)) << kw << "x" << kh << " " << toString(mode);
    }
}

// ---------------------------------------------------------------------------------------------
// Large kernels (up to 255x255), larger than the image

TEST(FftConvCpu, LargeKernelsMatchTheDefinition) {
  const Image img = test::randomImage(64, 40, 1, PixelType::F32, 91);
  for (auto [k, mode, border] :
       {std::tuple{255, ConvMode::Same, BorderMode::Reflect101}, std::tuple{255, ConvMode::Same, BorderMode::Wrap},
        std::tuple{128, ConvMode::Same, BorderMode::Constant}, std::tuple{63, ConvMode::Full, BorderMode::Replicate}}) {
    const Image small = mode == ConvMode::Full ? test::randomImage(20, 15, 1, PixelType::F32, 92) : img;
    const FilterSpec spec = convSpec(randomKernel(k, k, 93u + k), border, mode, false, ConvMethod::Direct, -0.5);
    EXPECT_TRUE(convNear(naiveConv(small, spec), FftConvolver(spec).runCpu(small))) << caseName(spec);
  }
}

TEST(FftConvGpu, LargeKernelsMatchTheCpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image img = test::randomImage(300, 200, 1, PixelType::F32, 95);
  const DeviceImage d = gpu.upload(img);
  for (auto [k, mode, border] :
       {std::tuple{255, ConvMode::Same, BorderMode::Reflect101}, std::tuple{127, ConvMode::Full, BorderMode::Wrap},
        std::tuple{63, ConvMode::Valid, BorderMode::Constant}, std::tuple{256, ConvMode::Same, BorderMode::Reflect}}) {
    FftConvolver conv(convSpec(randomKernel(k, k, 96u + k), border, mode, false, ConvMethod::Direct, 0.25));
    DeviceImage out;
    conv.runGpu(gpu, d, out);
    EXPECT_TRUE(convNear(conv.runCpu(img), gpu.download(out))) << conv.describe();
  }
  // The 255x255 case against the definition itself on a smaller image.
  const Image small = test::randomImage(64, 40, 1, PixelType::F32, 97);
  const FilterSpec spec = convSpec(randomKernel(255, 255, 98), BorderMode::Reflect101, ConvMode::Same, true);
  FftConvolver conv(spec);
  DeviceImage out;
  conv.runGpu(gpu, gpu.upload(small), out);
  EXPECT_TRUE(convNear(naiveConv(small, spec), gpu.download(out)));
}

// ---------------------------------------------------------------------------------------------
// The circular method: when it is taken, and that its border strips are right at realistic sizes

TEST(FftConvCircular, TakenForSmoothSidesWhenTheStripsFit) {
  auto geometry = [](int k, ConvMode mode, BorderMode border, int w, int h) {
    return FftConvolver(convSpec(randomKernel(k, k, 120), border, mode, false)).geometry(w, h);
  };
  const FftConvGeometry g = geometry(31, ConvMode::Same, BorderMode::Reflect101, 4096, 4096);
  EXPECT_TRUE(g.circular);
  EXPECT_EQ(g.paddedWidth, 4096);
  EXPECT_EQ(g.paddedHeight, 4096);
  EXPECT_EQ(g.outWidth, 4096);
  EXPECT_TRUE(geometry(63, ConvMode::Same, BorderMode::Constant, 1920, 1080).circular);
  EXPECT_TRUE(geometry(127, ConvMode::Valid, BorderMode::Reflect, 6000, 4000).circular);
  // A side with a prime factor beyond 7, 'full' output, border bands over half the image (unless
  // the border is wrap, which needs none): padded.
  const FftConvGeometry odd = geometry(31, ConvMode::Same, BorderMode::Reflect101, 4097, 4096);
  EXPECT_FALSE(odd.circular);
  EXPECT_EQ(odd.paddedWidth, nextFftSize(4097 + 30));
  EXPECT_FALSE(geometry(31, ConvMode::Full, BorderMode::Wrap, 4096, 4096).circular);
  EXPECT_TRUE(geometry(129, ConvMode::Same, BorderMode::Reflect101, 4096, 4096).circular);
  EXPECT_TRUE(geometry(129, ConvMode::Same, BorderMode::Wrap, 4096, 4096).circular);
  EXPECT_TRUE(geometry(255, ConvMode::Same, BorderMode::Wrap, 64, 48).circular);  // the kernel wraps onto itself
  EXPECT_FALSE(geometry(31, ConvMode::Same, BorderMode::Replicate, 64, 48).circular);
  EXPECT_TRUE(geometry(15, ConvMode::Same, BorderMode::Replicate, 64, 48).circular);
}

TEST(FftConvCircular, MinimumBytesDropThePadAndCropPasses) {
  const FilterSpec spec = convSpec(randomKernel(31, 31, 121), BorderMode::Reflect101, ConvMode::Same, false);
  const std::size_t image = std::size_t{4096} * 4096 * 4;
  const std::size_t bins = std::size_t{2049} * 4096 * 8;
  // forward (image in, bins out), multiply (kernel, bins in and out), inverse (bins in, image out)
  const std::size_t transforms = 2 * (image + bins) + 3 * bins;
  const std::size_t circular = FftConvolver(spec).pipelineBytesMoved({4096, 4096, 1, PixelType::F32});
  EXPECT_GT(circular, transforms);                   // plus the border bands
  EXPECT_LT(circular, transforms + transforms / 5);  // which are small
  FilterSpec wrap = spec;
  wrap.border.mode = BorderMode::Wrap;  // no bands at all
  EXPECT_EQ(FftConvolver(wrap).pipelineBytesMoved({4096, 4096, 1, PixelType::F32}), transforms);
  // One column more: the padded method, 4200 x 4126 planes with pad and crop passes.
  EXPECT_GT(FftConvolver(spec).pipelineBytesMoved({4097, 4096, 1, PixelType::F32}), circular + transforms / 2);
}

TEST(FftConvGpu, CircularMethodMatchesTheCpuAtPhotoSizes) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image f32 = test::randomImage(320, 240, 3, PixelType::F32, 122);
  const Image f64 = test::randomImage(210, 98, 1, PixelType::F64, 123);
  const Image rgb = test::randomImage(160, 120, 3, PixelType::U8, 124);
  const DeviceImage d32 = gpu.upload(f32), d64 = gpu.upload(f64), drgb = gpu.upload(rgb);
  for (int k : {2, 15, 31, 63})
    for (BorderMode border : kBorders)
      for (ConvMode mode : {ConvMode::Same, ConvMode::Valid}) {
        FilterSpec spec = convSpec(randomKernel(k, k, 125u + k), border, mode, k % 2 == 0, ConvMethod::Direct, -0.25);
        FftConvolver conv(spec);
        EXPECT_TRUE(conv.geometry(320, 240).circular);
        DeviceImage out;
        conv.runGpu(gpu, d32, out);
        EXPECT_TRUE(convNear(conv.runCpu(f32), gpu.download(out))) << caseName(spec) << " f32";
        conv.runGpu(gpu, d64, out);
        EXPECT_TRUE(convNear(conv.runCpu(f64), gpu.download(out))) << caseName(spec) << " f64";
        spec.kernel.values.assign(spec.kernel.values.size(), 1.0 / static_cast<double>(spec.kernel.values.size()));
        FftConvolver mean(spec);
        mean.runGpu(gpu, drgb, out);
        EXPECT_TRUE(convNear(mean.runCpu(rgb), gpu.download(out))) << caseName(spec) << " u8";
      }
}

TEST(FftConvGpu, CircularMethodInPlace) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image img = test::randomImage(96, 64, 2, PixelType::F32, 126);
  for (BorderMode border : {BorderMode::Wrap, BorderMode::Reflect101}) {
    const FilterSpec spec = convSpec(randomKernel(9, 7, 127), border, ConvMode::Same, false);
    FftConvolver conv(spec);
    DeviceImage d = gpu.upload(img);
    conv.runGpu(gpu, d, d);  // wrap: circular in place; reflect101: the padded method (strips need the input)
    EXPECT_TRUE(convNear(naiveConv(img, spec), gpu.download(d))) << caseName(spec);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors, shapes, control

TEST(FftConvErrors, BadSpecsThrowOneSentence) {
  auto message = [](const FilterSpec& spec) {
    try {
      FftConvolver conv(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(convSpec(Kernel2D{}, BorderMode::Reflect101, ConvMode::Same, false)).find("empty"),
            std::string::npos);
  EXPECT_NE(
      message(convSpec(Kernel2D{3, 3, {1, 2, 3, 4}}, BorderMode::Reflect101, ConvMode::Same, false)).find("ragged"),
      std::string::npos);
  EXPECT_NE(message(convSpec(Kernel2D{2, 1, {1, NAN}}, BorderMode::Reflect101, ConvMode::Same, false)).find("finite"),
            std::string::npos);
  EXPECT_FALSE(
      message(convSpec(Kernel2D{1, 1, {1}}, BorderMode::Constant, ConvMode::Same, false, ConvMethod::Direct, INFINITY))
          .empty());
  EXPECT_NE(message(convSpec(randomKernel(kMaxFftKernelSide + 1, 1, 1), BorderMode::Wrap, ConvMode::Same, false))
                .find("1025x1"),
            std::string::npos);
  EXPECT_TRUE(
      message(convSpec(randomKernel(kMaxFftKernelSide, 1, 1), BorderMode::Wrap, ConvMode::Same, false)).empty());
  const FftConvolver valid(convSpec(randomKernel(5, 5, 2), BorderMode::Wrap, ConvMode::Valid, false));
  EXPECT_THROW(valid.outputShape({4, 10, 1, PixelType::F32}), std::invalid_argument);
  EXPECT_THROW((void)valid.runCpu(Image(4, 10, 1, PixelType::F32)), std::invalid_argument);
  EXPECT_THROW((void)valid.runCpu(Image()), std::invalid_argument);
  const FftConvolver same(convSpec(randomKernel(3, 3, 2), BorderMode::Wrap, ConvMode::Same, false));
  EXPECT_THROW(same.outputShape({8, 8, 2, PixelType::U8}), std::invalid_argument);  // as Conv2D: u8 1, 3 or 4
  EXPECT_THROW((void)same.runCpu(Image(8, 8, 2, PixelType::U8)), std::invalid_argument);
  EXPECT_NO_THROW(same.outputShape({8, 8, 2, PixelType::F32}));
}

TEST(FftConvCpu, AlphaPassesInSameModeOnlyAndU8BordersAreRounded) {
  const Image rgba = test::randomImage(9, 7, 4, PixelType::U8, 12);
  FilterSpec spec = convSpec(Kernel2D{3, 1, {0.25, 0.5, 0.25}}, BorderMode::Constant, ConvMode::Same, false,
                             ConvMethod::Direct, 99.6);
  const Image same = FftConvolver(spec).runCpu(rgba);
  EXPECT_TRUE(test::imagesNear(rgba.channel(3), same.channel(3), 0));
  // Column 0 of the red channel reads the border value 100 (99.6 rounded) on its left.
  const double expected = 0.25 * 100 + 0.5 * rgba.at<std::uint8_t>(0, 2, 0) + 0.25 * rgba.at<std::uint8_t>(1, 2, 0);
  EXPECT_NEAR(same.at<std::uint8_t>(0, 2, 0), expected, 0.5 + 1e-9);
  spec.mode = ConvMode::Full;
  const Image full = FftConvolver(spec).runCpu(rgba);
  ASSERT_EQ(full.width(), 11);
  // Every channel is convolved in 'full' mode: alpha too (its first column blends the border in).
  const double alpha = 0.25 * rgba.at<std::uint8_t>(0, 3, 3);
  EXPECT_NEAR(full.at<std::uint8_t>(0, 3, 3), 0.5 * 100 + 0.25 * 100 + alpha, 0.5 + 1e-9);
}

TEST(FftConvCpu, ShapesDescriptionAndControl) {
  const FftConvolver full(convSpec(randomKernel(5, 3, 3), BorderMode::Reflect, ConvMode::Full, true));
  const ImageShape s = full.outputShape({20, 10, 3, PixelType::U8});
  EXPECT_EQ(std::tie(s.width, s.height, s.channels), std::make_tuple(24, 12, 3));
  EXPECT_EQ(s.type, PixelType::U8);
  EXPECT_EQ(full.describe(), "conv 5x3 correlate full reflect fft");
  const std::vector<double> seen = test::cpuProgressAndCancel(full, test::randomImage(20, 10, 3, PixelType::F32, 4));
  ASSERT_EQ(seen.size(), 3u);  // one step a channel
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// GPU: in place, the kernel-spectrum cache, plans, profiles

TEST(FftConvGpu, InPlaceSameModeAndRejectedOtherwise) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image img = test::randomImage(80, 60, 4, PixelType::U8, 101);
  FilterSpec spec = convSpec(randomKernel(7, 7, 102), BorderMode::Reflect101, ConvMode::Same, false);
  spec.kernel.values.assign(49, 1.0 / 49);
  FftConvolver conv(spec);
  DeviceImage d = gpu.upload(img);
  conv.runGpu(gpu, d, d);
  EXPECT_TRUE(convNear(naiveConv(img, spec), gpu.download(d)));
  FftConvolver full(convSpec(randomKernel(7, 7, 103), BorderMode::Wrap, ConvMode::Full, false));
  EXPECT_THROW(full.runGpu(gpu, d, d), std::invalid_argument);
}

TEST(FftConvGpu, KernelSpectrumAndPlansAreReusedAcrossRunsAndSizes) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const FilterSpec spec = convSpec(randomKernel(31, 31, 104), BorderMode::Reflect101, ConvMode::Same, false);
  FftConvolver conv(spec);
  const Image a = test::randomImage(200, 150, 1, PixelType::F32, 105);
  const Image b = test::randomImage(123, 77, 1, PixelType::F32, 106);
  DeviceImage da = gpu.upload(a), db = gpu.upload(b), out;
  EXPECT_GT(conv.prepare(gpu, da, out), 0.0);
  const std::size_t plans = conv.plans().size();
  for (int i = 0; i < 3; ++i) conv.runGpu(gpu, da, out);
  EXPECT_EQ(conv.plans().size(), plans);
  EXPECT_EQ(conv.takePlanCreationMs(), 0.0);
  EXPECT_TRUE(convNear(naiveConv(a, spec), gpu.download(out)));
  conv.runGpu(gpu, db, out);
  EXPECT_GT(conv.plans().size(), plans);
  EXPECT_TRUE(convNear(naiveConv(b, spec), gpu.download(out)));
  conv.runGpu(gpu, da, out);  // back to the first size: cached spectrum and plans still right
  EXPECT_TRUE(convNear(naiveConv(a, spec), gpu.download(out)));
}

TEST(FftConvGpu, ProfileTimesEachStageAndLeavesTheResult) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const FilterSpec spec = convSpec(randomKernel(15, 15, 107), BorderMode::Reflect101, ConvMode::Same, false);
  FftConvolver conv(spec);
  const Image img = test::randomImage(256, 200, 1, PixelType::F32, 108);
  DeviceImage d = gpu.upload(img), out;
  const FftStageTimes t = conv.profileGpu(gpu, d, out, {1, 3});
  // 256x200 f32: the circular method, transformed where it lies (no pad stage); crop = the strips.
  ASSERT_TRUE(conv.geometry(256, 200).circular);
  for (const Stats* s : {&t.forward, &t.multiply, &t.inverse, &t.crop}) EXPECT_GT(s->medianMs, 0.0);
  EXPECT_TRUE(convNear(conv.runCpu(img), gpu.download(out)));
  EXPECT_GT(conv.pipelineBytesMoved({256, 200, 1, PixelType::F32}), 2u * 256 * 200 * 4);
  // 257x200: the padded method, every stage.
  const Image odd = test::randomImage(257, 200, 1, PixelType::F32, 109);
  DeviceImage dOdd = gpu.upload(odd);
  const FftStageTimes p = conv.profileGpu(gpu, dOdd, out, {1, 3});
  for (const Stats* s : {&p.pad, &p.forward, &p.multiply, &p.inverse, &p.crop}) EXPECT_GT(s->medianMs, 0.0);
  EXPECT_TRUE(convNear(conv.runCpu(odd), gpu.download(out)));
}

// ---------------------------------------------------------------------------------------------
// Cost model

TEST(ConvCostModel, FitsLinesAndClampsNoise) {
  const std::vector<std::pair<double, double>> exact = {{1e6, 1.5}, {2e6, 2.5}, {4e6, 4.5}};
  const ConvCostModel::Line line = ConvCostModel::fit(exact);
  EXPECT_NEAR(line.msPerUnit, 1e-6, 1e-15);
  EXPECT_NEAR(line.fixedMs, 0.5, 1e-9);
  const std::vector<std::pair<double, double>> negative = {{1.0, 0.5}, {2.0, 1.9}, {3.0, 3.1}};
  const ConvCostModel::Line clamped = ConvCostModel::fit(negative);
  EXPECT_EQ(clamped.fixedMs, 0.0);
  EXPECT_NEAR(clamped.msPerUnit, (0.5 + 3.8 + 9.3) / 14.0, 1e-12);
  const std::vector<std::pair<double, double>> one = {{5.0, 1.0}, {5.0, 2.0}};
  EXPECT_THROW(ConvCostModel::fit(one), std::invalid_argument);
}

TEST(ConvCostModel, ChoosesTheCheaperMethod) {
  EXPECT_THROW(ConvCostModel().choose(100, 100, 3, 3), std::logic_error);
  const ConvCostModel model({1e-9, 0.005}, {2e-9, 0.05});
  EXPECT_TRUE(model.calibrated());
  EXPECT_DOUBLE_EQ(ConvCostModel::directUnits(100, 50, 3, 5, 2), 100.0 * 50 * 15 * 2);
  const FftConvGeometry g = fftConvGeometry(4096, 4096, 31, 31, ConvMode::Same);
  const double n = static_cast<double>(g.paddedWidth) * g.paddedHeight;
  EXPECT_DOUBLE_EQ(ConvCostModel::fftUnits(4096, 4096, 31, 31), n * std::log2(n));
  EXPECT_EQ(model.choose(4096, 4096, 3, 3), ConvAlgorithm::Direct);
  EXPECT_EQ(model.choose(4096, 4096, 63, 63), ConvAlgorithm::Fft);
  EXPECT_NEAR(model.directMs(4096, 4096, 3, 3), 1e-9 * 4096.0 * 4096 * 9 + 0.005, 1e-12);
  EXPECT_EQ(toString(ConvAlgorithm::Fft), "fft");
}

TEST(ConvCostModel, CalibrationImageIsFixedNoise) {
  const Image a = ConvCostModel::calibrationImage(97, 61);
  const Image b = ConvCostModel::calibrationImage(97, 61);
  ASSERT_EQ(a.width(), 97);
  ASSERT_EQ(a.height(), 61);
  ASSERT_EQ(a.type(), PixelType::F32);
  double sum = 0;
  std::set<float> distinct;
  for (std::size_t i = 0; i < a.samples<float>().size(); ++i) {
    const float v = a.samples<float>()[i];
    ASSERT_EQ(v, b.samples<float>()[i]);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 97u * 61u * 99 / 100);  // noise, not a pattern
  EXPECT_LT(std::abs(sum / (97.0 * 61.0)), 0.05);    // centred on 0
}

TEST(ConvCostModel, CalibratesOnTheCpu) {
  // A synthetic direct timer makes the direct line known exactly; the FFT line is measured.
  const ConvCostModel model =
      ConvCostModel::calibrateCpu([](int w, int h, int kw, int kh) { return 1e-8 * w * h * kw * kh + 0.01; });
  EXPECT_NEAR(model.direct().msPerUnit, 1e-8, 1e-14);
  EXPECT_NEAR(model.direct().fixedMs, 0.01, 1e-9);
  EXPECT_GT(model.fft().msPerUnit, 0.0);
  EXPECT_EQ(model.choose(1024, 1024, 3, 3), ConvAlgorithm::Direct);
  EXPECT_EQ(model.choose(1024, 1024, 255, 255), ConvAlgorithm::Fft);
  EXPECT_THROW(ConvCostModel::calibrateCpu({}), std::invalid_argument);
}

TEST(ConvCostModel, CalibratesOnTheGpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const ConvCostModel model =
      ConvCostModel::calibrateGpu(gpu, [](int w, int h, int kw, int kh) { return 1e-9 * w * h * kw * kh + 0.003; });
  EXPECT_NEAR(model.direct().msPerUnit, 1e-9, 1e-15);
  // The FFT line is measured: under compute-sanitizer (or beside other jobs on the GPU) its times, and
  // so the line and the picks, are the tools' (the GPU work above still ran under them).
  if (test::underComputeSanitizer()) return;
  EXPECT_GT(model.fft().msPerUnit, 0.0);
  EXPECT_EQ(model.choose(1024, 1024, 3, 3), ConvAlgorithm::Direct);
  EXPECT_EQ(model.choose(2048, 2048, 127, 127), ConvAlgorithm::Fft);
}

TEST(ConvCostModel, GpuCalibrationReachesPastTheL2Cache) {
  // Lines fitted on L2-resident images only mispredict large ones: the direct timer must be asked
  // about an image larger than this device's L2 cache, with kernels on both sides of 15x15.
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, gpu.device()), cudaSuccess);
  std::size_t largestBytes = 0;
  int smallestKernel = 1 << 20, largestKernel = 0;
  (void)ConvCostModel::calibrateGpu(gpu, [&](int w, int h, int kw, int kh) {
    largestBytes = std::max(largestBytes, static_cast<std::size_t>(w) * h * sizeof(float));
    smallestKernel = std::min(smallestKernel, kw * kh);
    largestKernel = std::max(largestKernel, kw * kh);
    return 1e-9 * w * h * kw * kh + 0.003;
  });
  EXPECT_GT(largestBytes, static_cast<std::size_t>(l2));
  EXPECT_LT(smallestKernel, 15 * 15);
  EXPECT_GT(largestKernel, 15 * 15);
}
