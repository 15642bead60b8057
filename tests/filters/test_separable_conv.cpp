// Separable convolution (SeparableConv, ConvMethod::Separable, the separable line of the cost
// model): rank detection (exact rank 1, rank 1 with 1e-9 noise, rank 2 and 3, random kernels,
// vectors, zero); the GPU tile code run on the host, the CPU baseline and the GPU (where there is
// one) against the naive definition for every border and output mode, convolution and
// correlation, u8 / f32 (f64 on the CPU, and through the direct method on the GPU), odd, prime and
// tiny images, kernels larger than the image and larger than a tile, even and non-square kernels,
// rank 1 to 3; interleaved channels; the method's errors and auto's choice; the Gaussian blur's
// fused path against its two-pass kernels.
//
// Tolerances (the convolution suites'): f32 1e-4 relative to the result's peak, f64 1e-10, u8 +-1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/gaussian.hpp"
#include "gpulab/filters/separable_conv.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/gaussian.cuh"
#include "gpulab/kernels/separable_conv.cuh"
#include "internal/conv_support.hpp"
#include "internal/kernel_views.hpp"
#include "support/conv_reference.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;

namespace {

/// The sum of `rank` outer products of random vectors in [-1, 1): a kw x kh kernel of that rank.
Kernel2D lowRankKernel(int kw, int kh, int rank, unsigned seed, double noise = 0.0) {
  Kernel2D k{kw, kh, std::vector<double>(static_cast<std::size_t>(kw) * kh, 0.0)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int t = 0; t < rank; ++t) {
    std::vector<double> col(static_cast<std::size_t>(kh)), row(static_cast<std::size_t>(kw));
    for (double& v : col) v = d(rng);
    for (double& v : row) v = d(rng);
    for (int p = 0; p < kh; ++p)
      for (int q = 0; q < kw; ++q)
        k.values[static_cast<std::size_t>(p) * kw + q] +=
            col[static_cast<std::size_t>(p)] * row[static_cast<std::size_t>(q)];
  }
  for (double& v : k.values) v += noise * d(rng);
  return k;
}

/// A positive rank-1 kernel summing to 1 (u8 results stay in range: +-1 is a fair tolerance).
Kernel2D smoothKernel(int kw, int kh) {
  Kernel2D k{kw, kh, {}};
  double sum = 0;
  for (int p = 0; p < kh; ++p)
    for (int q = 0; q < kw; ++q) {
      const double v = (1.0 + 0.3 * q) * (2.0 + std::sin(p));
      k.values.push_back(v);
      sum += v;
    }
  for (double& v : k.values) v /= sum;
  return k;
}

bool fitsMode(ConvMode mode, int w, int h, int kw, int kh) { return mode != ConvMode::Valid || (kw <= w && kh <= h); }

/// convNear, with the float tolerance also at least 1e-5 of what the terms can reach: a rank-2 or
/// rank-3 kernel sums terms that cancel, so float rounding scales with max |in| * sum_t |col_t|_1
/// |row_t|_1, which can be far above the result's own peak (a 1x1 image of a full-rank 3x3).
::testing::AssertionResult sepNear(const Image& expected, const Image& actual, const Image& in,
                                   const FilterSpec& spec) {
  if (in.type() != PixelType::F32) return convNear(expected, actual);
  const SeparableTerms t = separableTerms(spec.kernel);
  double reach = 0;
  for (int i = 0; i < t.rank; ++i) {
    double c = 0, r = 0;
    for (double v : t.cols[static_cast<std::size_t>(i)]) c += std::abs(v);
    for (double v : t.rows[static_cast<std::size_t>(i)]) r += std::abs(v);
    reach += c * r;
  }
  double inPeak = 0;
  for (float v : in.samples<float>()) inPeak = std::max(inPeak, static_cast<double>(std::abs(v)));
  return test::imagesNear(expected, actual, std::max(1e-4 * std::max(peak(expected), 1e-6), 1e-5 * inPeak * reach));
}

// ---------------------------------------------------------------------------------------------
// The table: image size x kernel size x rank

using TableParam = std::tuple<std::tuple<int, int>, std::tuple<int, int>, int>;

std::string tableName(const ::testing::TestParamInfo<TableParam>& info) {
  const auto [w, h] = std::get<0>(info.param);
  const auto [kw, kh] = std::get<1>(info.param);
  return "img" + std::to_string(w) + "x" + std::to_string(h) + "_k" + std::to_string(kw) + "x" + std::to_string(kh) +
         "_rank" + std::to_string(std::get<2>(info.param));
}

class SeparableTable : public ::testing::TestWithParam<TableParam> {
 protected:
  /// Every border (constant with a non-zero value) and output mode; correlation on every other case.
  template <class Check>
  void forEachCase(Check&& check) {
    const auto [w, h] = std::get<0>(GetParam());
    const auto [kw, kh] = std::get<1>(GetParam());
    const int rank = std::get<2>(GetParam());
    int n = 0;
    for (BorderMode border : kBorders)
      for (ConvMode mode : kModes) {
        if (!fitsMode(mode, w, h, kw, kh)) continue;
        FilterSpec spec = convSpec(lowRankKernel(kw, kh, rank, 41u + kw * 7u + kh + rank), border, mode, (n % 2) == 1,
                                   ConvMethod::Separable, border == BorderMode::Constant ? -2.5 : 0.0);
        FilterSpec smooth = convSpec(smoothKernel(kw, kh), border, mode, (n % 2) == 0, ConvMethod::Separable,
                                     border == BorderMode::Constant ? 199.6 : 0.0);  // 200 as u8
        ++n;
        const std::string name = caseName(spec) + " rank " + std::to_string(rank);
        check(spec, smooth, name);
      }
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Detection

TEST(SeparableDetect, ExactRankOneIsRankOne) {
  for (auto [kw, kh] : {std::pair{1, 1}, {1, 9}, {9, 1}, {15, 15}, {31, 31}, {4, 7}, {127, 127}}) {
    const Kernel2D k = lowRankKernel(kw, kh, 1, 3u + kw * kh);
    const SeparableTerms t = separableTerms(k);
    EXPECT_EQ(t.rank, 1) << kw << "x" << kh;
    EXPECT_TRUE(t.separable());
    ASSERT_EQ(t.cols.size(), 1u);
    ASSERT_EQ(t.cols[0].size(), static_cast<std::size_t>(kh));
    ASSERT_EQ(t.rows[0].size(), static_cast<std::size_t>(kw));
    // The terms give the kernel back.
    double peak = 0, worst = 0;
    for (int p = 0; p < kh; ++p)
      for (int q = 0; q < kw; ++q) {
        peak = std::max(peak, std::abs(k.at(q, p)));
        worst = std::max(worst, std::abs(k.at(q, p) - t.cols[0][p] * t.rows[0][q]));
      }
    EXPECT_LE(worst, 1e-12 * peak) << kw << "x" << kh;
    EXPECT_LE(t.relativeError, 1e-12);
  }
}

TEST(SeparableDetect, NoiseBelowTheToleranceStaysRankOne) {
  const SeparableTerms t = separableTerms(lowRankKernel(15, 15, 1, 5, 1e-9));
  EXPECT_EQ(t.rank, 1);
  EXPECT_GT(t.relativeError, 0.0);
  EXPECT_LE(t.relativeError, kSeparableTolerance);
  // Noise above it does not.
  EXPECT_GT(separableTerms(lowRankKernel(15, 15, 1, 5, 1e-3)).rank, 3);
}

TEST(SeparableDetect, LowRankAndRandomKernels) {
  EXPECT_EQ(separableTerms(lowRankKernel(9, 9, 2, 6)).rank, 2);
  EXPECT_EQ(separableTerms(lowRankKernel(31, 17, 3, 7)).rank, 3);
  const SeparableTerms four = separableTerms(lowRankKernel(9, 9, 4, 8));
  EXPECT_EQ(four.rank, 4);
  EXPECT_FALSE(four.separable());
  EXPECT_TRUE(four.cols.empty());
  const SeparableTerms random = separableTerms(randomKernel(15, 15, 9));
  EXPECT_EQ(random.rank, 15);
  EXPECT_FALSE(random.separable());
  ASSERT_EQ(random.singularValues.size(), 15u);
  EXPECT_GE(random.singularValues[0], random.singularValues[14]);
  // A Gaussian (as the bench rows use) and the box are rank 1; Sobel's x kernel too; Laplacian 3x3 is rank 2.
  EXPECT_EQ(separableTerms(smoothKernel(31, 31)).rank, 1);
  EXPECT_EQ(separableTerms(Kernel2D{3, 3, {-1, 0, 1, -2, 0, 2, -1, 0, 1}}).rank, 1);
  EXPECT_EQ(separableTerms(Kernel2D{3, 3, {0, 1, 0, 1, -4, 1, 0, 1, 0}}).rank, 2);
  const SeparableTerms zero = separableTerms(Kernel2D{3, 2, std::vector<double>(6, 0.0)});
  EXPECT_EQ(zero.rank, 1);
  EXPECT_EQ(separableTerms(Kernel2D{}).rank, 0);
}

// ---------------------------------------------------------------------------------------------
// The method: errors, names, the model

TEST(SeparableMethod, NamesAndTheFactory) {
  EXPECT_EQ(parseEnum<ConvMethod>("separable"), ConvMethod::Separable);
  EXPECT_EQ(toString(ConvAlgorithm::Separable), "separable");
  FilterSpec spec = convSpec(smoothKernel(7, 5), BorderMode::Reflect, ConvMode::Full, false, ConvMethod::Separable);
  const std::unique_ptr<Operation> f = makeFilter(spec);
  const auto* byMethod = dynamic_cast<const ConvMethodFilter*>(f.get());
  ASSERT_NE(byMethod, nullptr);
  EXPECT_TRUE(byMethod->separablePossible());
  EXPECT_EQ(byMethod->separableRank(), 1);
  EXPECT_EQ(f->describe(), "conv 7x5 full reflect separable");
  EXPECT_EQ(f->method(), "separable");
  EXPECT_EQ(f->methodNote(Side::Cpu), "kernel of rank 1 by SVD");
}

TEST(SeparableMethod, NonSeparableKernelsGetOneSentence) {
  for (const Kernel2D& k : {randomKernel(15, 15, 11), lowRankKernel(9, 9, 4, 12)}) {
    const FilterSpec spec = convSpec(k, BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Separable);
    try {
      makeFilter(spec);
      FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is not separable"), std::string::npos) << what;
      EXPECT_NE(what.find("--method direct, fft or auto"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  const FilterSpec large =
      convSpec(lowRankKernel(129, 3, 1, 13), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Separable);
  try {
    makeFilter(large);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("127x127"), std::string::npos) << e.what();
  }
  // Auto takes them all: a random kernel simply has no separable candidate.
  FilterSpec autoSpec =
      convSpec(randomKernel(15, 15, 11), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Auto);
  ConvMethodFilter autoFilter(autoSpec);
  EXPECT_FALSE(autoFilter.separablePossible());
}

TEST(SeparableMethod, CostModelPicksSeparableOnlyWithALineAndARank) {
  ConvCostModel model({1e-6, 0.0}, {1e-6, 0.0});  // direct and fft alike
  EXPECT_FALSE(model.hasSeparable());
  EXPECT_NE(model.choose(1000, 1000, 15, 15, 1, 1), ConvAlgorithm::Separable);
  model.setSeparable({1e-9, 0.0});
  EXPECT_EQ(model.choose(1000, 1000, 15, 15, 1, 1), ConvAlgorithm::Separable);
  EXPECT_EQ(model.choose(1000, 1000, 15, 15, 1, 3), ConvAlgorithm::Separable);
  EXPECT_NE(model.choose(1000, 1000, 15, 15, 1, 0), ConvAlgorithm::Separable);  // not separable
  EXPECT_NE(model.choose(1000, 1000, 15, 15, 1, 4), ConvAlgorithm::Separable);
  EXPECT_NE(model.describe().find("separable"), std::string::npos);
  // Units: each rank adds kw + kh taps a pixel, and the pixel itself kSeparablePixelTaps.
  EXPECT_DOUBLE_EQ(ConvCostModel::separableUnits(10, 20, 3, 5, 2, 3),
                   10.0 * 20 * 3 * (2 * (3 + 5) + ConvCostModel::kSeparablePixelTaps));
  ConvCostModel slow({1e-9, 0.0}, {1e-9, 0.0});
  slow.setSeparable({1.0, 0.0});
  EXPECT_NE(slow.choose(1000, 1000, 15, 15, 1, 1), ConvAlgorithm::Separable);
}

TEST(SeparableMethod, AutoRunsTheSeparableMethodWhenTheModelSaysSo) {
  const Image img = test::randomImage(67, 43, 1, PixelType::F32, 131);
  const FilterSpec spec =
      convSpec(lowRankKernel(9, 7, 2, 132), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Auto);
  ConvMethodFilter filter(spec);
  ASSERT_EQ(filter.separableRank(), 2);
  ConvCostModel model({1.0, 0.0}, {1.0, 0.0});
  model.setSeparable({0.0, 0.0});
  filter.pinCpuModel(model);
  EXPECT_EQ(filter.chooseCpu(shapeOf(img)), ConvAlgorithm::Separable);
  const Image got = filter.runCpu(img);
  EXPECT_EQ(filter.lastCpuChoice(), ConvAlgorithm::Separable);
  EXPECT_EQ(filter.methodUsed(Side::Cpu), "separable");
  EXPECT_NE(filter.methodNote(Side::Cpu).find("kernel of rank 2"), std::string::npos) << filter.methodNote(Side::Cpu);
  EXPECT_TRUE(convNear(Conv2D(spec).runReference(img), got));
  FilterSpec separableSpec = spec;
  separableSpec.method = ConvMethod::Separable;
  EXPECT_TRUE(got == SeparableConv(separableSpec).runCpu(img));  // the same code: bit for bit
}

// ---------------------------------------------------------------------------------------------
// The table: tile code on the host, the CPU baseline, the GPU, against the naive definition

TEST_P(SeparableTable, TileCodeOnTheHostMatchesTheDefinition) {
  const auto [w, h] = std::get<0>(GetParam());
  const Image f32 = test::randomImage(w, h, 2, PixelType::F32, 201u + w * h, 3.0);
  const Image rgba = test::randomImage(w, h, 4, PixelType::U8, 202u + w * h);
  forEachCase([&](const FilterSpec& spec, const FilterSpec& smooth, const std::string& name) {
    const SeparableConv conv(spec);
    EXPECT_TRUE(sepNear(naiveConv(f32, spec), conv.runTilesOnHost(f32), f32, spec)) << name << " f32";
    EXPECT_TRUE(convNear(naiveConv(rgba, smooth), SeparableConv(smooth).runTilesOnHost(rgba))) << name << " rgba";
  });
}

TEST_P(SeparableTable, CpuMatchesTheDefinition) {
  const auto [w, h] = std::get<0>(GetParam());
  const Image f32 = test::randomImage(w, h, 1, PixelType::F32, 211u + w * h, 3.0);
  const Image f64 = test::randomImage(w, h, 2, PixelType::F64, 212u + w * h);
  const Image rgb = test::randomImage(w, h, 3, PixelType::U8, 213u + w * h);
  forEachCase([&](const FilterSpec& spec, const FilterSpec& smooth, const std::string& name) {
    const auto filter = makeFilter(spec);
    EXPECT_TRUE(sepNear(naiveConv(f32, spec), filter->runCpu(f32), f32, spec)) << name << " f32";
    EXPECT_EQ(filter->methodUsed(Side::Cpu), "separable") << name;
    EXPECT_TRUE(convNear(naiveConv(f64, spec), filter->runCpu(f64))) << name << " f64";
    EXPECT_TRUE(convNear(naiveConv(rgb, smooth), makeFilter(smooth)->runCpu(rgb))) << name << " rgb";
  });
}

TEST_P(SeparableTable, GpuMatchesTheDefinition) {
  GPULAB_REQUIRE_GPU();
  const auto [w, h] = std::get<0>(GetParam());
  GpuContext gpu;
  const Image f32 = test::randomImage(w, h, 3, PixelType::F32, 221u + w * h, 3.0);
  const Image f64 = test::randomImage(w, h, 1, PixelType::F64, 222u + w * h);
  const Image rgba = test::randomImage(w, h, 4, PixelType::U8, 223u + w * h);
  const DeviceImage d32 = gpu.upload(f32), d64 = gpu.upload(f64), drgba = gpu.upload(rgba);
  forEachCase([&](const FilterSpec& spec, const FilterSpec& smooth, const std::string& name) {
    const auto filter = makeFilter(spec);
    DeviceImage out;
    filter->prepareGpu(gpu, d32, out);
    filter->runGpu(gpu, d32, out);
    EXPECT_TRUE(sepNear(naiveConv(f32, spec), gpu.download(out), f32, spec)) << name << " f32";
    EXPECT_EQ(filter->methodUsed(Side::Gpu), "separable") << name;
    filter->runGpu(gpu, d64, out);  // f64: the direct double kernel, and the note says so
    EXPECT_TRUE(convNear(naiveConv(f64, spec), gpu.download(out))) << name << " f64";
    EXPECT_EQ(filter->methodUsed(Side::Gpu), "direct") << name;
    EXPECT_NE(filter->methodNote(Side::Gpu).find("f64"), std::string::npos) << name;
    makeFilter(smooth)->runGpu(gpu, drgba, out);
    EXPECT_TRUE(convNear(naiveConv(rgba, smooth), gpu.download(out))) << name << " rgba";
  });
}

// Odd, prime and tiny images; kernels larger than the image; images larger than a 64x64 tile;
// even and non-square kernels; every bucket of taps (8, 16, 32, 64, 128).
INSTANTIATE_TEST_SUITE_P(Shapes, SeparableTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3),
                                                              std::make_tuple(13, 12), std::make_tuple(67, 131)),
                                            ::testing::Values(std::make_tuple(1, 1), std::make_tuple(3, 3),
                                                              std::make_tuple(4, 2), std::make_tuple(15, 15),
                                                              std::make_tuple(31, 17)),
                                            ::testing::Values(1, 3)),
                         tableName);

INSTANTIATE_TEST_SUITE_P(Wide, SeparableTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(131, 70)),
                                            ::testing::Values(std::make_tuple(33, 5), std::make_tuple(127, 9)),
                                            ::testing::Values(1, 2)),
                         tableName);

// Two tiles and more a side: the tiles inside the plane load by their own path (no border
// mapping), the edge tiles by the general one; rows 16-byte aligned (212 f32 a row, 848 u8 in
// four channels), so the edge tiles' vector loads run too.
INSTANTIATE_TEST_SUITE_P(InteriorTiles, SeparableTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(212, 160)),
                                            ::testing::Values(std::make_tuple(15, 15), std::make_tuple(31, 17),
                                                              std::make_tuple(127, 9), std::make_tuple(4, 6)),
                                            ::testing::Values(1, 3)),
                         tableName);

// The stream kernel (rank 1, 17 to 32 taps a side, one channel a plane): three strips of 128
// columns, the last 4 wide, and segments of whole periods with a partial last one; even and
// non-square kernels, and kernels whose other side is short (its padded taps are weight 0).
INSTANTIATE_TEST_SUITE_P(Stream, SeparableTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(260, 70)),
                                            ::testing::Values(std::make_tuple(31, 31), std::make_tuple(17, 17),
                                                              std::make_tuple(32, 32), std::make_tuple(19, 26),
                                                              std::make_tuple(25, 3), std::make_tuple(2, 23)),
                                            ::testing::Values(1)),
                         tableName);

// ---------------------------------------------------------------------------------------------
// Interleaved channels: sample (x, c) at row[x * C + c], each channel on its own

template <class T>
Image interleavedOnHostOrGpu(const Image& in, const SeparableConv& conv, const FilterSpec& spec, bool gpu) {
  const ImageShape os = conv.outputShape(shapeOf(in));
  Image out(os.width, os.height, os.channels, os.type);
  kernels::SeparableGeometry g;
  const int kw = spec.kernel.width, kh = spec.kernel.height;
  g.kernelWidth = kw;
  g.kernelHeight = kh;
  g.anchorX = conv.direct().anchorX();
  g.anchorY = conv.direct().anchorY();
  g.border = toKernel(spec.border.mode);
  for (int q = 0; q < kw; ++q)
    g.rowWeights[0][q] = static_cast<float>(conv.terms().rows[0][spec.correlate ? q : kw - 1 - q]);
  for (int p = 0; p < kh; ++p)
    g.colWeights[0][p] = static_cast<float>(conv.terms().cols[0][spec.correlate ? p : kh - 1 - p]);
  const float fill = static_cast<float>(borderSample(in.type(), spec.border.value));
  const std::size_t inRow = static_cast<std::size_t>(in.width()) * 3 * sizeof(T);
  const std::size_t outRow = static_cast<std::size_t>(os.width) * 3 * sizeof(T);
  if (!gpu) {
    const kernels::Plane<const T> src{in.samples<T>().data(), in.width(), in.height(), inRow};
    kernels::runSeparableConvTilesOnHost<T, 3>(src, {out.samples<T>().data(), os.width, os.height, outRow}, 1, g, fill);
    return out;
  }
  GpuContext context;
  DeviceBuffer src(inRow * in.height()), dst(outRow * os.height);
  context.synchronize();
  GPULAB_CUDA_CHECK(cudaMemcpy(src.data(), in.samples<T>().data(), inRow * in.height(), cudaMemcpyHostToDevice));
  // cudaMemcpy from pageable memory may return before its DMA lands, and the context's stream does not
  // wait for the legacy default stream: finish the copy first, or it races with the kernel (seen on an
  // H100 beside other test binaries: 2 of 48 cases read a partly copied input).
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  kernels::launchSeparableConv<T, 3>({src.as<T>(), in.width(), in.height(), inRow},
                                     {dst.as<T>(), os.width, os.height, outRow}, 1, g, fill, context.stream());
  context.synchronize();
  GPULAB_CUDA_CHECK(cudaMemcpy(out.samples<T>().data(), dst.data(), outRow * os.height, cudaMemcpyDeviceToHost));
  return out;
}

TEST(SeparableInterleaved, ThreeChannelRowsMatchTheDefinition) {
  const bool gpu = cudaAvailable();
  for (auto [w, h] : {std::pair{1, 1}, {17, 5}, {70, 67}})
    for (BorderMode border : kBorders)
      for (ConvMode mode : kModes) {
        const int kw = 7, kh = 4;
        if (!fitsMode(mode, w, h, kw, kh)) continue;
        const FilterSpec spec = convSpec(lowRankKernel(kw, kh, 1, 301), border, mode, mode == ConvMode::Full,
                                         ConvMethod::Separable, border == BorderMode::Constant ? 1.5 : 0.0);
        const FilterSpec smooth = convSpec(smoothKernel(kw, kh), border, mode, false, ConvMethod::Separable, 99.7);
        const Image f32 = test::randomImage(w, h, 3, PixelType::F32, 302u + w);
        const Image rgb = test::randomImage(w, h, 3, PixelType::U8, 303u + w);
        const std::string name = caseName(spec);
        for (bool onGpu : {false, true}) {
          if (onGpu && !gpu) continue;
          EXPECT_TRUE(
              convNear(naiveConv(f32, spec), interleavedOnHostOrGpu<float>(f32, SeparableConv(spec), spec, onGpu)))
              << name << (onGpu ? " gpu" : " host") << " f32";
          EXPECT_TRUE(convNear(naiveConv(rgb, smooth),
                               interleavedOnHostOrGpu<std::uint8_t>(rgb, SeparableConv(smooth), smooth, onGpu)))
              << name << (onGpu ? " gpu" : " host") << " u8";
        }
      }
}

TEST(SeparableInterleaved, LaunchRejectsWhatItCannotTake) {
  const kernels::Plane<const float> in{};
  const kernels::Plane<float> out{};
  kernels::SeparableGeometry g;
  g.kernelWidth = 33;  // interleaved: up to 32 taps
  EXPECT_THROW((kernels::runSeparableConvTilesOnHost<float, 3>(in, out, 1, g, 0.f)), std::invalid_argument);
  g.kernelWidth = 3;
  g.rank = 4;
  EXPECT_THROW((kernels::runSeparableConvTilesOnHost<float, 1>(in, out, 1, g, 0.f)), std::invalid_argument);
  g.rank = 1;
  g.kernelHeight = 128;
  EXPECT_THROW((kernels::runSeparableConvTilesOnHost<float, 1>(in, out, 1, g, 0.f)), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The Gaussian blur's fused path against its two-pass kernels (kernels/gaussian.cu): the same
// float taps in the same order. Bit for bit except with the constant border, where the fused row
// pass sums a row of fill (sum w * fill, within an ulp or so of fill) where the two-pass column pass
// reads fill itself: 1e-5 relative there for f32, +-1 for u8.

template <class T>
Image twoPassGaussian(GpuContext& gpu, const DeviceImage& in, const GaussianBlur& blur) {
  const int ksize = blur.sizeFor(in.type());
  const std::vector<double> w = gaussianWeights(ksize, blur.sigmaFor(in.type()));
  const std::vector<float> wf(w.begin(), w.end());
  DeviceBuffer weights(wf.size() * sizeof(float));
  GPULAB_CUDA_CHECK(cudaMemcpy(weights.data(), wf.data(), wf.size() * sizeof(float), cudaMemcpyHostToDevice));
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());  // the pageable copy's DMA lands before gpu.stream() reads it
  DeviceImage tmp(in.width(), in.height(), 1, PixelType::F32);
  DeviceImage out(in.width(), in.height(), in.channels(), in.type());
  const float fill = static_cast<float>(borderSample(in.type(), blur.border().value));
  for (int c = 0; c < in.channels(); ++c) {
    kernels::launchGaussianRows<T>(planeOf<T>(in, c), planeOf<float>(tmp, 0), weights.as<float>(), ksize / 2,
                                   toKernel(blur.border().mode), fill, gpu.stream());
    kernels::launchGaussianColumns<T>(planeOf<float>(std::as_const(tmp), 0), planeOf<T>(out, c), weights.as<float>(),
                                      ksize / 2, toKernel(blur.border().mode), fill, gpu.stream());
  }
  gpu.synchronize();
  return gpu.download(out);
}

TEST(SeparableGaussian, FusedPathEqualsTheTwoPassKernels) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image f32 = test::randomImage(131, 67, 2, PixelType::F32, 401, 3.0);
  const Image u8 = test::randomImage(131, 67, 3, PixelType::U8, 402);
  const DeviceImage d32 = gpu.upload(f32), d8 = gpu.upload(u8);
  for (double sigma : {0.8, 2.0, 7.0})
    for (BorderMode border : kBorders) {
      GaussianBlur blur(sigma, 0, {border, border == BorderMode::Constant ? 0.3 : 0.0});
      const std::string name = blur.describe();
      for (const DeviceImage* in : {&d32, &d8}) {
        if (!blur.fusedGpu(in->type())) continue;  // the two-pass path itself
        DeviceImage fused;
        blur.runGpu(gpu, *in, fused);
        const Image got = gpu.download(fused);
        const Image want = in->type() == PixelType::F32 ? twoPassGaussian<float>(gpu, *in, blur)
                                                        : twoPassGaussian<std::uint8_t>(gpu, *in, blur);
        if (border != BorderMode::Constant)
          EXPECT_TRUE(got == want) << name << " " << toString(in->type());
        else
          EXPECT_TRUE(test::imagesNear(want, got, in->type() == PixelType::F32 ? 1e-5 * 3.0 : 1.0))
              << name << " " << toString(in->type());
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Non-finite samples: the taps beyond kw are zero weights in the unrolled passes, and 0 * inf is
// NaN; a tile holding an inf or NaN takes the exact loops, so only the outputs whose window holds
// the sample change (as in the direct method). 31x31 and 21x17 run the stream kernel, whose blocks
// go exact when a batch of rows holds one.

/// Whether two images agree: NaN where the other is NaN, the same inf, elsewhere within `tol`.
::testing::AssertionResult sameWithNonFinite(const Image& expected, const Image& actual, double tol) {
  const auto e = expected.samples<float>();
  const auto a = actual.samples<float>();
  if (e.size() != a.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < e.size(); ++i) {
    const bool ok = std::isnan(e[i])   ? std::isnan(a[i])
                    : std::isinf(e[i]) ? a[i] == e[i]
                                       : std::isfinite(a[i]) && std::abs(a[i] - e[i]) <= tol;
    if (!ok) return ::testing::AssertionFailure() << "sample " << i << ": " << a[i] << " vs " << e[i];
  }
  return ::testing::AssertionSuccess();
}

TEST(SeparableNonFinite, OnlyTheWindowsHoldingTheSampleChange) {
  // 150x90: every tile reaches an edge and loads by the general path. 212x200: the tiles inside
  // load by their own path, whose probe must find the infs and the NaN too.
  Image narrow = test::randomImage(150, 90, 1, PixelType::F32, 501);
  narrow.at<float>(70, 40) = std::numeric_limits<float>::infinity();
  narrow.at<float>(3, 80) = std::numeric_limits<float>::quiet_NaN();
  Image wide = test::randomImage(212, 200, 1, PixelType::F32, 502);
  wide.at<float>(100, 90) = std::numeric_limits<float>::infinity();
  wide.at<float>(140, 70) = -std::numeric_limits<float>::infinity();
  wide.at<float>(75, 130) = std::numeric_limits<float>::quiet_NaN();
  for (const Image* image : {&narrow, &wide})
    for (auto [kw, kh] : {std::pair{15, 15}, {5, 9}, {31, 31}, {21, 17}}) {
      const Image& img = *image;
      FilterSpec spec =
          convSpec(smoothKernel(kw, kh), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Separable);
      const Image want = naiveConv(img, spec);
      EXPECT_TRUE(sameWithNonFinite(want, SeparableConv(spec).runTilesOnHost(img), 1e-5)) << kw << "x" << kh << " host";
      EXPECT_TRUE(sameWithNonFinite(want, makeFilter(spec)->runCpu(img), 1e-5)) << kw << "x" << kh << " cpu";
      if (!cudaAvailable()) continue;
      GpuContext gpu;
      const DeviceImage in = gpu.upload(img);
      DeviceImage out;
      makeFilter(spec)->runGpu(gpu, in, out);
      EXPECT_TRUE(sameWithNonFinite(want, gpu.download(out), 1e-5)) << kw << "x" << kh << " gpu";
    }
}
