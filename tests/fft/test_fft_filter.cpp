// Frequency-domain filters and the display spectrum: parameters and their errors, the gain formulas
// at DC, cutoff and Nyquist, the OpenCV baseline and the GPU against the naive-DFT reference, the
// GPU's impulse response against the formula at every bin, colour maps, and the CLI's usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/fft/fft.hpp"
#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/kernels/fft_fused.cuh"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

constexpr FreqBand kBands[] = {FreqBand::Lowpass, FreqBand::Highpass, FreqBand::Bandpass, FreqBand::Bandstop};
constexpr FreqShape kShapes[] = {FreqShape::Ideal, FreqShape::Gaussian, FreqShape::Butterworth};

FftFilterSpec makeSpec(FreqBand band, FreqShape shape, double c, double c2, int order,
                       FftPadding padding = FftPadding::None) {
  FftFilterSpec s;
  s.band = band;
  s.shape = shape;
  s.cutoff = c;
  s.cutoff2 = c2;
  s.order = order;
  s.padding = padding;
  return s;
}

/// The low-pass formulas written out independently of the engine's code.
double lowpassFormula(FreqShape shape, double r, double c, int n) {
  switch (shape) {
    case FreqShape::Ideal:
      return r <= c ? 1.0 : 0.0;
    case FreqShape::Gaussian:
      return std::exp(-r * r / (2 * c * c));
    case FreqShape::Butterworth:
      return 1.0 / (1.0 + std::pow(r / c, 2.0 * n));
  }
  return NAN;
}

double gainFormula(const FftFilterSpec& s, double r) {
  const double low = lowpassFormula(s.shape, r, s.cutoff, s.order);
  const double band = lowpassFormula(s.shape, r, s.cutoff2, s.order) * (1 - low);
  switch (s.band) {
    case FreqBand::Lowpass:
      return low;
    case FreqBand::Highpass:
      return 1 - low;
    case FreqBand::Bandpass:
      return band;
    case FreqBand::Bandstop:
      return 1 - band;
  }
  return NAN;
}

/// `want` nudged until no bin of an fw x fh transform lies within 1e-4 of it, so an ideal mask
/// evaluated in float and in double selects the same bins.
double safeCutoff(double want, int fw, int fh) {
  for (double c = want;; c += 0.0013) {
    bool clear = true;
    for (int ky = 0; ky < fh && clear; ++ky)
      for (int kx = 0; kx < fw && clear; ++kx) clear = std::abs(normalisedFrequency(kx, ky, fw, fh) - c) > 1e-4;
    if (clear) return c;
  }
}

double tolerance(PixelType type) {
  switch (type) {
    case PixelType::U8:
      return 1.0;  // rounding of values computed in float vs double
    case PixelType::F32:
      return 1e-5;
    case PixelType::F64:
      return 1e-10;
    case PixelType::U16:
      return 1.0;
  }
  return 0;
}

/// Images for the tables: floats in [-1, 1]; u8 uniform.
Image testImage(int w, int h, int channels, PixelType type, unsigned seed) {
  return test::randomImage(w, h, channels, type, seed);
}

std::string specName(const FftFilterSpec& s) {
  return std::string(toString(s.band)) + "_" + std::string(toString(s.shape)) + "_" + std::string(toString(s.padding));
}

std::vector<FftFilterSpec> allSpecs(FftPadding padding) {
  std::vector<FftFilterSpec> specs;
  for (FreqBand b : kBands)
    for (FreqShape s : kShapes) specs.push_back(makeSpec(b, s, 0.27, 0.61, 3, padding));
  return specs;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parameters

TEST(FftFilterSpec, BadParametersThrowOneSentence) {
  auto message = [](const FftFilterSpec& s) {
    try {
      validateFftFilterSpec(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.0, 1, 2)).find("cutoff 0"), std::string::npos);
  EXPECT_FALSE(message(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, -0.2, 1, 2)).empty());
  EXPECT_FALSE(message(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, NAN, 1, 2)).empty());
  EXPECT_FALSE(message(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, INFINITY, 1, 2)).empty());
  EXPECT_NE(message(makeSpec(FreqBand::Bandpass, FreqShape::Ideal, 0.3, 0.3, 2)).find("cutoff2"), std::string::npos);
  EXPECT_FALSE(message(makeSpec(FreqBand::Bandstop, FreqShape::Ideal, 0.3, 0.1, 2)).empty());
  EXPECT_FALSE(message(makeSpec(FreqBand::Bandstop, FreqShape::Ideal, 0.3, NAN, 2)).empty());
  EXPECT_NE(message(makeSpec(FreqBand::Lowpass, FreqShape::Butterworth, 0.3, 1, 0)).find("order 0"), std::string::npos);
  EXPECT_FALSE(message(makeSpec(FreqBand::Lowpass, FreqShape::Butterworth, 0.3, 1, kMaxButterworthOrder + 1)).empty());
  // What does not apply is not checked: cutoff2 for low-pass, order for non-Butterworth shapes.
  EXPECT_TRUE(message(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.3, 0.1, 0)).empty());
  EXPECT_THROW(FftFilter(makeSpec(FreqBand::Highpass, FreqShape::Butterworth, 0.3, 1, -1)), std::invalid_argument);
}

TEST(FftFilterSpec, SetSpecValidatesAndKeepsTheOldOneOnError) {
  FftFilter filter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.3, 1, 2));
  filter.setSpec(makeSpec(FreqBand::Highpass, FreqShape::Ideal, 0.2, 1, 2));
  EXPECT_EQ(filter.spec().band, FreqBand::Highpass);
  EXPECT_THROW(filter.setSpec(makeSpec(FreqBand::Bandpass, FreqShape::Ideal, 0.4, 0.1, 2)), std::invalid_argument);
  EXPECT_EQ(filter.spec().band, FreqBand::Highpass);
  EXPECT_EQ(filter.spec().cutoff, 0.2);
}

TEST(FftFilterSpec, NamesRoundTrip) {
  for (FreqBand b : kBands) EXPECT_EQ(parseEnum<FreqBand>(toString(b)), b);
  for (FreqShape s : kShapes) EXPECT_EQ(parseEnum<FreqShape>(toString(s)), s);
  EXPECT_EQ(parseEnum<FftPadding>("mirror"), FftPadding::Mirror);
  EXPECT_EQ(parseEnum<FftPadding>("none"), FftPadding::None);
  EXPECT_FALSE(parseEnum<FreqBand>("notch").has_value());
  EXPECT_FALSE(parseEnum<FreqShape>("Gaussian").has_value());
  EXPECT_FALSE(parseEnum<FftPadding>("zero").has_value());
  EXPECT_EQ(enumNames<FreqBand>(), "lowpass|highpass|bandpass|bandstop");
  EXPECT_EQ(FftFilter(makeSpec(FreqBand::Bandpass, FreqShape::Butterworth, 0.1, 0.3, 4, FftPadding::Mirror)).describe(),
            "bandpass butterworth n=4 c=0.1..0.3 pad=mirror");
  EXPECT_EQ(FftFilter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.25, 0.5, 2)).describe(),
            "lowpass gaussian c=0.25 pad=none");
}

TEST(FftFilterSpec, ChannelsFiltered) {
  EXPECT_EQ(fftFilteredChannels(4, PixelType::U8), 3);
  EXPECT_EQ(fftFilteredChannels(2, PixelType::U8), 1);
  EXPECT_EQ(fftFilteredChannels(3, PixelType::U8), 3);
  EXPECT_EQ(fftFilteredChannels(4, PixelType::F32), 4);
  EXPECT_EQ(fftFilteredChannels(1, PixelType::F64), 1);
}

// ---------------------------------------------------------------------------------------------
// Gains: the formula at DC, at the cutoff(s) and at Nyquist, for every band and shape

TEST(FftFilterGain, MatchesTheFormulaAtDcCutoffAndNyquist) {
  for (FreqBand b : kBands)
    for (FreqShape s : kShapes) {
      const FftFilterSpec spec = makeSpec(b, s, 0.3, 0.7, 3);
      for (double r : {0.0, 0.3, 0.7, 1.0, std::sqrt(2.0)})
        EXPECT_NEAR(fftFilterGain(spec, r), gainFormula(spec, r), 1e-15)
            << toString(b) << " " << toString(s) << " r=" << r;
    }
}

TEST(FftFilterGain, KnownValues) {
  const double c = 0.4;
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Lowpass, FreqShape::Ideal, c, 1, 1), 0.0), 1.0);
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Lowpass, FreqShape::Ideal, c, 1, 1), c), 1.0);  // r <= c passes
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Lowpass, FreqShape::Ideal, c, 1, 1), 1.0), 0.0);
  EXPECT_NEAR(fftFilterGain(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, c, 1, 1), c), std::exp(-0.5), 1e-15);
  EXPECT_NEAR(fftFilterGain(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, c, 1, 1), 1.0),
              std::exp(-1.0 / (2 * c * c)), 1e-15);
  for (int n : {1, 2, 5, 17}) {
    EXPECT_NEAR(fftFilterGain(makeSpec(FreqBand::Lowpass, FreqShape::Butterworth, c, 1, n), c), 0.5, 1e-15);
    EXPECT_NEAR(fftFilterGain(makeSpec(FreqBand::Highpass, FreqShape::Butterworth, c, 1, n), c), 0.5, 1e-15);
  }
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Highpass, FreqShape::Gaussian, c, 1, 1), 0.0), 0.0);
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Bandpass, FreqShape::Ideal, 0.2, 0.5, 1), 0.0), 0.0);
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Bandpass, FreqShape::Ideal, 0.2, 0.5, 1), 0.35), 1.0);
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Bandstop, FreqShape::Ideal, 0.2, 0.5, 1), 0.35), 0.0);
  EXPECT_EQ(fftFilterGain(makeSpec(FreqBand::Bandstop, FreqShape::Ideal, 0.2, 0.5, 1), 1.0), 1.0);
}

TEST(FftFilterGain, NormalisedFrequencyIsOneAtNyquistOnEachAxis) {
  EXPECT_DOUBLE_EQ(normalisedFrequency(0, 0, 64, 48), 0.0);
  EXPECT_DOUBLE_EQ(normalisedFrequency(32, 0, 64, 48), 1.0);
  EXPECT_DOUBLE_EQ(normalisedFrequency(0, 24, 64, 48), 1.0);
  EXPECT_DOUBLE_EQ(normalisedFrequency(32, 24, 64, 48), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(normalisedFrequency(16, 0, 64, 48), 0.5);
  EXPECT_DOUBLE_EQ(normalisedFrequency(0, 12, 64, 48), 0.5);
  EXPECT_DOUBLE_EQ(normalisedFrequency(63, 0, 64, 48), 2.0 / 64);  // bin 63 is frequency -1
  EXPECT_DOUBLE_EQ(normalisedFrequency(0, 47, 64, 48), 2.0 / 48);
  EXPECT_DOUBLE_EQ(normalisedFrequency(3, 0, 7, 5), 6.0 / 7);  // odd sizes never reach Nyquist
  EXPECT_DOUBLE_EQ(normalisedFrequency(4, 0, 7, 5), 6.0 / 7);
}

// ---------------------------------------------------------------------------------------------
// CPU baseline against the naive reference

using FilterTableParam = std::tuple<std::tuple<int, int>, FftFilterSpec>;

class FftFilterTable : public ::testing::TestWithParam<FilterTableParam> {};

namespace {

std::string tableName(const ::testing::TestParamInfo<FilterTableParam>& info) {
  const auto& [size, spec] = info.param;
  return std::to_string(std::get<0>(size)) + "x" + std::to_string(std::get<1>(size)) + "_" + specName(spec);
}

/// The table's spec with its ideal cutoffs moved off the bins of this transform size.
FftFilterSpec tableSpec(FftFilterSpec spec, int w, int h) {
  const auto [fw, fh] = FftFilter(spec).fftSize(w, h);
  if (spec.shape == FreqShape::Ideal) {
    spec.cutoff = safeCutoff(spec.cutoff, fw, fh);
    spec.cutoff2 = safeCutoff(spec.cutoff2, fw, fh);
  }
  return spec;
}

}  // namespace

TEST_P(FftFilterTable, CpuMatchesReference) {
  const auto& [size, baseSpec] = GetParam();
  const auto [w, h] = size;
  const FftFilter filter(tableSpec(baseSpec, w, h));
  for (auto [channels, type] : {std::pair{1, PixelType::F32}, std::pair{3, PixelType::F64}, std::pair{3, PixelType::U8},
                                std::pair{4, PixelType::U8}}) {
    const Image img = testImage(w, h, channels, type, 17 + w * h);
    EXPECT_TRUE(test::imagesNear(filter.runReference(img), filter.runCpu(img), tolerance(type))) << img.describe();
  }
}

TEST_P(FftFilterTable, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, baseSpec] = GetParam();
  const auto [w, h] = size;
  FftFilter filter(tableSpec(baseSpec, w, h));
  GpuContext gpu;
  for (auto [channels, type] :
       {std::pair{1, PixelType::F32}, std::pair{3, PixelType::F32}, std::pair{2, PixelType::F64},
        std::pair{3, PixelType::U8}, std::pair{4, PixelType::U8}, std::pair{1, PixelType::U8}}) {
    const Image img = testImage(w, h, channels, type, 23 + w * h);
    DeviceImage out;
    filter.runGpu(gpu, gpu.upload(img), out);
    EXPECT_TRUE(test::imagesNear(filter.runReference(img), gpu.download(out), tolerance(type))) << img.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Small, FftFilterTable,
    ::testing::Combine(::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3), std::make_tuple(7, 5),
                                         std::make_tuple(13, 12), std::make_tuple(31, 17), std::make_tuple(1, 6),
                                         std::make_tuple(5, 1),
                                         // the fused path: without padding, mirrored, both
                                         std::make_tuple(32, 32), std::make_tuple(16, 16), std::make_tuple(64, 32)),
                       ::testing::ValuesIn([] {
                         auto specs = allSpecs(FftPadding::None);
                         for (const auto& s : allSpecs(FftPadding::Mirror)) specs.push_back(s);
                         return specs;
                       }())),
    tableName);

TEST(FftFilterCpu, AllPassReturnsTheInput) {
  for (FftPadding padding : {FftPadding::None, FftPadding::Mirror}) {
    const FftFilter allPass(makeSpec(FreqBand::Lowpass, FreqShape::Ideal, 1.5, 2, 1, padding));  // 1.5 > sqrt(2)
    const Image f32 = testImage(37, 29, 3, PixelType::F32, 5);
    EXPECT_TRUE(test::imagesNear(f32, allPass.runCpu(f32), 1e-6));
    const Image f64 = testImage(37, 29, 1, PixelType::F64, 6);
    EXPECT_TRUE(test::imagesNear(f64, allPass.runCpu(f64), 1e-12));
    const Image u8 = testImage(37, 29, 4, PixelType::U8, 7);
    EXPECT_TRUE(test::imagesNear(u8, allPass.runCpu(u8), 0));
  }
}

TEST(FftFilterCpu, LowpassPlusHighpassIsTheInput) {
  const Image img = testImage(40, 33, 1, PixelType::F64, 9);
  for (FreqShape s : kShapes) {
    const Image low = FftFilter(makeSpec(FreqBand::Lowpass, s, 0.3, 1, 2)).runCpu(img);
    const Image high = FftFilter(makeSpec(FreqBand::Highpass, s, 0.3, 1, 2)).runCpu(img);
    Image sum = low;
    for (std::size_t i = 0; i < sum.samples<double>().size(); ++i)
      sum.samples<double>()[i] += high.samples<double>()[i];
    EXPECT_TRUE(test::imagesNear(img, sum, 1e-12)) << toString(s);
  }
}

TEST(FftFilterCpu, MirrorPaddingKeepsEdgesOfARampFromRinging) {
  // A ramp is discontinuous across the periodic boundary: without padding a low-pass drags each
  // edge towards the opposite one; mirrored, the edges stay close to the input.
  Image ramp(48, 40, 1, PixelType::F64);
  for (int y = 0; y < 40; ++y)
    for (int x = 0; x < 48; ++x) ramp.at<double>(x, y) = x + 0.5 * y;
  auto edgeError = [&](FftPadding padding) {
    const Image out = FftFilter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.2, 1, 2, padding)).runCpu(ramp);
    double worst = 0;
    for (int y = 0; y < 40; ++y)
      worst = std::max({worst, std::abs(out.at<double>(0, y) - ramp.at<double>(0, y)),
                        std::abs(out.at<double>(47, y) - ramp.at<double>(47, y))});
    return worst;
  };
  const double periodic = edgeError(FftPadding::None), mirrored = edgeError(FftPadding::Mirror);
  EXPECT_GT(periodic, 5.0);
  EXPECT_LT(mirrored, periodic / 5);
}

TEST(FftFilterCpu, RejectsEmptyImagesAndOversizedReferences) {
  const FftFilter filter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.3, 1, 2));
  EXPECT_THROW((void)filter.runCpu(Image()), std::invalid_argument);
  EXPECT_THROW((void)filter.runReference(Image(200, 100, 1, PixelType::F32)), std::invalid_argument);
}

TEST(FftFilterCpu, CancelAndProgress) {
  const FftFilter filter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.3, 1, 2));
  const Image img = testImage(16, 16, 3, PixelType::F32, 1);
  const std::vector<double> seen = test::cpuProgressAndCancel(filter, img);
  ASSERT_EQ(seen.size(), 3u);  // one step a channel
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The fused path (power-of-two f32 transforms): which shapes take it, and its thread code run on
// the host, so the passes are checked without a GPU

namespace {

kernels::FreqMask maskFor(const FftFilterSpec& s) {
  return {static_cast<kernels::FreqBand>(s.band), static_cast<kernels::FreqShape>(s.shape), s.cutoff, s.cutoff2,
          s.order};
}

/// The fused passes' thread code on the host, on a one-channel f32 image.
Image fusedOnHost(const FftFilterSpec& spec, const Image& img) {
  static const std::vector<float2> twiddles = [] {
    std::vector<float2> table(kernels::kFftTwiddleCount);
    kernels::fftTwiddlesOnHost(table.data());
    return table;
  }();
  Image out(img.width(), img.height(), 1, PixelType::F32);
  const kernels::Plane<const float> in{reinterpret_cast<const float*>(img.data()), img.width(), img.height(),
                                       img.rowBytes()};
  const kernels::Plane<float> result{reinterpret_cast<float*>(out.data()), out.width(), out.height(), out.rowBytes()};
  kernels::runFusedFftFilterOnHost(in, result, maskFor(spec), twiddles.data());
  return out;
}

}  // namespace

TEST(FftFilterFused, TakesPowerOfTwoF32TransformsFrom32To8192) {
  const FftFilter none(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.25, 0.5, 2, FftPadding::None));
  const FftFilter mirror(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.25, 0.5, 2, FftPadding::Mirror));
  EXPECT_TRUE(none.takesFusedPath({4096, 4096, 1, PixelType::F32}));
  EXPECT_TRUE(none.takesFusedPath({32, 8192, 3, PixelType::U8}));
  EXPECT_FALSE(none.takesFusedPath({4096, 4096, 1, PixelType::F64}));  // f64 runs on cuFFT
  EXPECT_FALSE(none.takesFusedPath({16, 4096, 1, PixelType::F32}));
  EXPECT_FALSE(none.takesFusedPath({16384, 32, 1, PixelType::F32}));
  EXPECT_FALSE(none.takesFusedPath({96, 64, 1, PixelType::F32}));
  EXPECT_TRUE(mirror.takesFusedPath({16, 4096, 1, PixelType::F32}));  // a 32 x 8192 transform
  EXPECT_FALSE(mirror.takesFusedPath({8192, 64, 1, PixelType::F32}));
}

TEST(FftFilterFused, HostThreadCodeMatchesTheReference) {
  for (auto [w, h] : {std::pair{32, 32}, std::pair{64, 32}, std::pair{32, 64}})
    for (const FftFilterSpec& base : allSpecs(FftPadding::None)) {
      const FftFilterSpec spec = tableSpec(base, w, h);
      const Image img = testImage(w, h, 1, PixelType::F32, 41 + w * h);
      EXPECT_TRUE(test::imagesNear(FftFilter(spec).runReference(img), fusedOnHost(spec, img), 1e-5))
          << w << "x" << h << " " << specName(spec);
    }
}

TEST(FftFilterFused, HostThreadCodeScalesExtremeRangesExactly) {
  // Samples near 2^127 (whose sums overflow) or 2^-120 (whose products with the gains and 1/(W H)
  // fall below the normal range) are scaled by a power of two before the passes and back after: the
  // result is the ordinary one times that power, to the bit.
  const FftFilterSpec spec = makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.25, 0.5, 2, FftPadding::None);
  const Image img = testImage(64, 32, 1, PixelType::F32, 47);
  const Image plain = fusedOnHost(spec, img);
  for (int e : {127, -120}) {
    Image scaled = img, expected = plain;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) {
        scaled.at<float>(x, y) = std::ldexp(img.at<float>(x, y), e);
        expected.at<float>(x, y) = std::ldexp(plain.at<float>(x, y), e);
      }
    const Image got = fusedOnHost(spec, scaled);
    int differ = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) differ += got.at<float>(x, y) != expected.at<float>(x, y);
    EXPECT_EQ(differ, 0) << "2^" << e;
  }
}

TEST(FftFilterFused, HostThreadCodeMatchesOpenCvAtEveryTransformLength) {
  // Row transforms of W/2 = 16..4096 points and column transforms of H = 32..8192: every pass
  // count (1 to 4) and every last radix (16, 2, 4, 8).
  for (auto [w, h] : {std::pair{32, 8192}, std::pair{8192, 32}, std::pair{64, 128}, std::pair{128, 256},
                      std::pair{256, 512}, std::pair{1024, 64}, std::pair{512, 1024}, std::pair{2048, 32},
                      std::pair{4096, 64}, std::pair{64, 2048}, std::pair{32, 4096}})
    for (const FftFilterSpec& spec :
         {makeSpec(FreqBand::Bandpass, FreqShape::Butterworth, 0.05, 0.4, 2, FftPadding::None),
          makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.25, 0.5, 2, FftPadding::None)}) {
      const Image img = testImage(w, h, 1, PixelType::F32, 43 + w + h);
      EXPECT_TRUE(test::imagesNear(FftFilter(spec).runCpu(img), fusedOnHost(spec, img), 1e-5))
          << w << "x" << h << " " << specName(spec);
    }
}

// ---------------------------------------------------------------------------------------------
// GPU: the mask itself, through the impulse response, at every bin

class FftFilterImpulse : public ::testing::TestWithParam<std::tuple<std::tuple<int, int>, PixelType>> {};

TEST_P(FftFilterImpulse, GpuResponseSpectrumIsTheGainFormula) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, type] = GetParam();
  const auto [w, h] = size;
  GpuContext gpu;
  Image delta(w, h, 1, type);
  if (type == PixelType::F32)
    delta.at<float>(0, 0) = 1.f;
  else
    delta.at<double>(0, 0) = 1.0;
  const double tol = type == PixelType::F32 ? 5e-6 : 1e-12;
  for (FreqBand b : kBands)
    for (FreqShape s : kShapes) {
      FftFilterSpec spec = makeSpec(b, s, safeCutoff(0.35, w, h), safeCutoff(0.8, w, h), 4);
      FftFilter filter(spec);
      DeviceImage out;
      filter.runGpu(gpu, gpu.upload(delta), out);
      const Image response = gpu.download(out).convertedTo(PixelType::F64);
      std::vector<std::complex<double>> signal(response.samples<double>().begin(), response.samples<double>().end());
      const auto spectrum = naiveDft2d(signal, w, h);
      int bad = 0;
      for (int ky = 0; ky < h; ++ky)
        for (int kx = 0; kx < w; ++kx) {
          const double expected = gainFormula(spec, normalisedFrequency(kx, ky, w, h));
          const std::complex<double> got = spectrum[static_cast<std::size_t>(ky) * w + kx];
          if (std::abs(got - expected) > tol && bad++ < 3)
            ADD_FAILURE() << toString(b) << " " << toString(s) << " bin (" << kx << ", " << ky
                          << ") r=" << normalisedFrequency(kx, ky, w, h) << ": gain " << got << ", formula "
                          << expected;
        }
      EXPECT_EQ(bad, 0) << toString(b) << " " << toString(s);
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, FftFilterImpulse,
                         ::testing::Combine(::testing::Values(std::make_tuple(64, 48), std::make_tuple(31, 17),
                                                              std::make_tuple(16, 1), std::make_tuple(1, 9),
                                                              std::make_tuple(64, 32)),  // fused in f32
                                            ::testing::Values(PixelType::F32, PixelType::F64)));

// ---------------------------------------------------------------------------------------------
// GPU: larger images against the CPU baseline, all-pass, alpha, in place, plans

TEST(FftFilterGpu, MatchesCpuOnLargerImages) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
    for (auto [w, h, channels, type] :
         {std::tuple{257, 131, 1, PixelType::F32}, std::tuple{640, 480, 4, PixelType::U8},
          std::tuple{333, 211, 2, PixelType::F64}, std::tuple{1024, 768, 3, PixelType::F32},
          // the fused path (mirrored: 1024 x 512, 512 x 256, 8192 x 64 and 64 x 4096 transforms)
          std::tuple{512, 256, 3, PixelType::F32}, std::tuple{256, 128, 4, PixelType::U8},
          std::tuple{4096, 32, 1, PixelType::F32}, std::tuple{32, 2048, 2, PixelType::F32}}) {
      FftFilter filter(makeSpec(FreqBand::Bandpass, FreqShape::Butterworth, 0.05, 0.4, 2, padding));
      const Image img = testImage(w, h, channels, type, 31);
      DeviceImage out;
      filter.runGpu(gpu, gpu.upload(img), out);
      EXPECT_TRUE(test::imagesNear(filter.runCpu(img), gpu.download(out), tolerance(type)))
          << img.describe() << " " << filter.describe();
    }
}

TEST(FftFilterGpu, AllPassReturnsTheInputAndAlphaPassesThrough) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (FftPadding padding : {FftPadding::None, FftPadding::Mirror}) {
    FftFilter allPass(makeSpec(FreqBand::Lowpass, FreqShape::Ideal, 1.5, 2, 1, padding));
    for (auto [channels, type, tol] : {std::tuple{1, PixelType::F32, 1e-5}, std::tuple{3, PixelType::F64, 1e-12},
                                       std::tuple{4, PixelType::U8, 0.0}}) {
      const Image img = testImage(129, 67, channels, type, 41);
      DeviceImage out;
      allPass.runGpu(gpu, gpu.upload(img), out);
      EXPECT_TRUE(test::imagesNear(img, gpu.download(out), tol)) << img.describe();
    }
  }
  // A strong low-pass changes colour but never alpha.
  FftFilter low(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.05, 1, 1));
  const Image rgba = testImage(64, 40, 4, PixelType::U8, 43);
  DeviceImage out;
  low.runGpu(gpu, gpu.upload(rgba), out);
  const Image result = gpu.download(out);
  EXPECT_TRUE(test::imagesNear(rgba.channel(3), result.channel(3), 0));
  EXPECT_FALSE(test::imagesNear(rgba.channel(0), result.channel(0), 1));
}

TEST(FftFilterGpu, InPlaceEqualsOutOfPlace) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (auto [w, h] : {std::pair{100, 75}, std::pair{128, 64}})  // cuFFT, fused
    for (auto [channels, type] : {std::pair{1, PixelType::F32}, std::pair{4, PixelType::U8}}) {
      FftFilter filter(makeSpec(FreqBand::Highpass, FreqShape::Gaussian, 0.2, 1, 1, FftPadding::None));
      const Image img = testImage(w, h, channels, type, 47);
      DeviceImage a = gpu.upload(img), b;
      filter.runGpu(gpu, a, b);
      filter.runGpu(gpu, a, a);
      EXPECT_TRUE(test::imagesNear(gpu.download(b), gpu.download(a), 0)) << img.describe();
    }
}

TEST(FftFilterGpu, PlanCreationIsReportedOnceAndApart) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  FftFilter filter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.2, 1, 1));
  DeviceImage in = gpu.upload(testImage(300, 200, 1, PixelType::F32, 53)), out;
  EXPECT_GT(filter.prepareGpu(gpu, in, out), 0.0);
  const std::size_t plans = filter.plans().size();
  EXPECT_EQ(plans, 2u);  // forward and inverse
  filter.runGpu(gpu, in, out);
  filter.runGpu(gpu, in, out);
  EXPECT_EQ(filter.takePlanCreationMs(), 0.0);
  EXPECT_EQ(filter.plans().size(), plans);
  DeviceImage other = gpu.upload(testImage(301, 200, 1, PixelType::F32, 54)), out2;
  filter.runGpu(gpu, other, out2);
  EXPECT_GT(filter.takePlanCreationMs(), 0.0);
  gpu.synchronize();
}

TEST(FftFilterGpu, ProfileTimesEachStageAndLeavesTheResult) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
    for (auto [w, h] : {std::pair{512, 384}, std::pair{256, 128}}) {  // cuFFT, fused
      FftFilter filter(makeSpec(FreqBand::Lowpass, FreqShape::Gaussian, 0.2, 1, 1, padding));
      const Image img = testImage(w, h, 1, PixelType::F32, 59);
      DeviceImage in = gpu.upload(img), out;
      const FftStageTimes t = filter.profileGpu(gpu, in, out, {1, 3});
      EXPECT_GT(t.forward.medianMs, 0.0);
      EXPECT_GT(t.multiply.medianMs, 0.0);
      EXPECT_GT(t.inverse.medianMs, 0.0);
      EXPECT_EQ(t.pad.reps, padding == FftPadding::Mirror ? 3 : 0);
      EXPECT_TRUE(test::imagesNear(filter.runCpu(img), gpu.download(out), 1e-5));
    }
}

// ---------------------------------------------------------------------------------------------
// Spectrum for display

namespace {

/// Two log(1 + |F|) images agree when their magnitudes do to `relTol` of the largest magnitude (a
/// float transform's error is relative to the signal's norm, not to each bin). Names the first bad pixel.
::testing::AssertionResult spectraNear(const Image& expected, const Image& actual, double relTol) {
  if (expected.width() != actual.width() || expected.height() != actual.height() || actual.channels() != 1 ||
      actual.type() != PixelType::F32)
    return ::testing::AssertionFailure() << "shape differs: " << expected.describe() << " vs " << actual.describe();
  double peak = 0;
  for (float v : expected.samples<float>()) peak = std::max(peak, std::expm1(static_cast<double>(v)));
  const double tol = relTol * peak;
  for (int y = 0; y < expected.height(); ++y)
    for (int x = 0; x < expected.width(); ++x) {
      const double e = std::expm1(static_cast<double>(expected.at<float>(x, y)));
      const double a = std::expm1(static_cast<double>(actual.at<float>(x, y)));
      if (!(std::abs(e - a) <= tol))
        return ::testing::AssertionFailure() << "|F| differs first at x=" << x << " y=" << y << ": expected " << e
                                             << ", got " << a << " (tolerance " << tol << ")";
    }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(FftSpectrum, ConstantImageHasOnlyDcAtTheCentre) {
  Image flat(9, 6, 1, PixelType::F32);
  for (float& v : flat.samples<float>()) v = 2.f;
  const Image s = FftSpectrum().runCpu(flat);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 9; ++x)
      EXPECT_NEAR(s.at<float>(x, y), (x == 4 && y == 3) ? std::log1p(2.0 * 54) : 0.0, 1e-4) << x << "," << y;
}

TEST(FftSpectrum, CpuMatchesReferenceAndLuminanceWeights) {
  for (auto [w, h, channels, type] : {std::tuple{1, 1, 1, PixelType::F32}, std::tuple{7, 5, 3, PixelType::U8},
                                      std::tuple{16, 9, 4, PixelType::U8}, std::tuple{13, 12, 1, PixelType::F64}}) {
    const Image img = testImage(w, h, channels, type, 61);
    EXPECT_TRUE(spectraNear(FftSpectrum().runReference(img), FftSpectrum().runCpu(img), 1e-5)) << img.describe();
  }
  Image px(1, 1, 3, PixelType::U8);
  px.at<std::uint8_t>(0, 0, 0) = 100;
  px.at<std::uint8_t>(0, 0, 1) = 200;
  px.at<std::uint8_t>(0, 0, 2) = 50;
  EXPECT_NEAR(luminanceOf(px).at<float>(0, 0), 0.299 * 100 + 0.587 * 200 + 0.114 * 50, 1e-4);
}

TEST(FftSpectrum, GpuMatchesCpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  FftSpectrum spectrum;
  for (auto [w, h, channels, type] :
       {std::tuple{1, 1, 1, PixelType::F32}, std::tuple{7, 5, 3, PixelType::U8}, std::tuple{64, 48, 1, PixelType::F64},
        std::tuple{257, 131, 4, PixelType::U8}, std::tuple{640, 480, 3, PixelType::U8},
        std::tuple{1, 30, 1, PixelType::F32}, std::tuple{30, 1, 2, PixelType::F32}}) {
    const Image img = testImage(w, h, channels, type, 67);
    DeviceImage out;
    spectrum.runGpu(gpu, gpu.upload(img), out);
    EXPECT_TRUE(spectraNear(spectrum.runCpu(img), gpu.download(out), 1e-5)) << img.describe();
  }
}

// ---------------------------------------------------------------------------------------------
// Colour maps

TEST(ColorMap, EndpointsMatchTheTables) {
  using Rgb = std::array<std::uint8_t, 3>;
  EXPECT_EQ(colorMapLookup(ColorMap::Viridis, 0.0), (Rgb{68, 1, 84}));
  EXPECT_EQ(colorMapLookup(ColorMap::Viridis, 1.0), (Rgb{253, 231, 37}));
  EXPECT_EQ(colorMapLookup(ColorMap::Inferno, 0.0), (Rgb{0, 0, 4}));
  EXPECT_EQ(colorMapLookup(ColorMap::Inferno, 1.0), (Rgb{252, 255, 164}));
  EXPECT_EQ(colorMapLookup(ColorMap::Gray, 0.5), (Rgb{128, 128, 128}));
  EXPECT_EQ(colorMapLookup(ColorMap::Viridis, -3.0), colorMapLookup(ColorMap::Viridis, 0.0));
  EXPECT_EQ(colorMapLookup(ColorMap::Viridis, 7.0), colorMapLookup(ColorMap::Viridis, 1.0));
  EXPECT_EQ(colorMapLookup(ColorMap::Viridis, NAN), colorMapLookup(ColorMap::Viridis, 0.0));
  // Viridis at 0.5 lies between matplotlib's entries 127 (33, 144, 141) and 128 (33, 145, 140).
  const Rgb mid = colorMapLookup(ColorMap::Viridis, 0.5);
  EXPECT_NEAR(mid[0], 33, 2);
  EXPECT_NEAR(mid[1], 144, 2);
  EXPECT_NEAR(mid[2], 140, 2);
  EXPECT_EQ(parseEnum<ColorMap>("inferno"), ColorMap::Inferno);
  EXPECT_FALSE(parseEnum<ColorMap>("jet").has_value());
}

TEST(ColorMap, ImagesMapMinimumAndMaximumToTheEnds) {
  Image v(3, 1, 1, PixelType::F32);
  v.at<float>(0, 0) = -2.f;
  v.at<float>(1, 0) = 1.f;
  v.at<float>(2, 0) = 4.f;
  const Image rgba = applyColorMap(v, ColorMap::Inferno);
  ASSERT_EQ(rgba.channels(), 4);
  ASSERT_EQ(rgba.type(), PixelType::U8);
  EXPECT_EQ(rgba.at<std::uint8_t>(0, 0, 2), 4);
  EXPECT_EQ(rgba.at<std::uint8_t>(2, 0, 0), 252);
  EXPECT_EQ(rgba.at<std::uint8_t>(1, 0, 3), 255);
  const auto half = colorMapLookup(ColorMap::Inferno, 0.5);
  EXPECT_EQ(rgba.at<std::uint8_t>(1, 0, 1), half[1]);
  const Image clamped = applyColorMap(v, ColorMap::Gray, 0.0, 1.0);
  EXPECT_EQ(clamped.at<std::uint8_t>(0, 0, 0), 0);
  EXPECT_EQ(clamped.at<std::uint8_t>(1, 0, 0), 255);
  EXPECT_THROW(applyColorMap(Image(2, 2, 1, PixelType::U8), ColorMap::Gray), std::invalid_argument);
  EXPECT_THROW(applyColorMap(Image(2, 2, 3, PixelType::F32), ColorMap::Gray), std::invalid_argument);
  EXPECT_THROW(applyColorMap(v, ColorMap::Gray, 1.0, 0.0), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// CLI: usage errors exit 2 with one line; a CPU run writes what the engine computes

namespace {

int runCli(const std::string& args, std::string* output = nullptr) {
  // One log per test and process: ctest runs the CLI tests in parallel.
  const std::string log = ::testing::TempDir() + "fft_cli_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                          std::to_string(::getpid()) + ".txt";
  const std::string command = std::string("\"") + GPULAB_CLI_PATH + "\" " + args + " > \"" + log + "\" 2>&1";
  const int status = std::system(command.c_str());
  if (output != nullptr) {
    std::FILE* f = std::fopen(log.c_str(), "r");
    output->clear();
    if (f != nullptr) {
      char buffer[4096];
      std::size_t n;
      while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) output->append(buffer, n);
      std::fclose(f);
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(FftCli, BadArgumentsExitWithCode2AndOneLine) {
  if (!std::filesystem::exists(GPULAB_CLI_PATH)) GTEST_SKIP() << "gpulab-cli is not built";
  const std::string in = ::testing::TempDir() + "fft_cli_in.npy";
  saveImage(testImage(16, 12, 1, PixelType::F32, 71), in);
  const std::string base =
      "fft --in \"" + in + "\" --out \"" + ::testing::TempDir() + "fft_cli_out.npy\" --device cpu ";
  for (const std::string& bad :
       {std::string("--cutoff 0"), std::string("--cutoff -1"),
        std::string("--filter bandpass --cutoff 0.4 --cutoff2 0.4"), std::string("--filter bandstop --cutoff 0.4"),
        std::string("--shape butterworth --order 0 --cutoff 0.3"), std::string("--filter notch --cutoff 0.3"),
        std::string("--shape box --cutoff 0.3"), std::string("--padding zero --cutoff 0.3")}) {
    std::string output;
    EXPECT_EQ(runCli(base + bad, &output), 2) << bad << ": " << output;
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << bad << ": " << output;
  }
}

TEST(FftCli, CpuRunWritesWhatTheEngineComputes) {
  if (!std::filesystem::exists(GPULAB_CLI_PATH)) GTEST_SKIP() << "gpulab-cli is not built";
  const std::string in = ::testing::TempDir() + "fft_cli_in2.npy";
  const std::string out = ::testing::TempDir() + "fft_cli_out2.npy";
  const std::string spectrum = ::testing::TempDir() + "fft_cli_spectrum.npy";
  const Image img = testImage(40, 30, 1, PixelType::F32, 73);
  saveImage(img, in);
  std::string output;
  ASSERT_EQ(
      runCli("fft --filter highpass --shape butterworth --order 3 --cutoff 0.2 --padding mirror --device cpu --in \"" +
                 in + "\" --out \"" + out + "\" --spectrum \"" + spectrum + "\" --reps 1",
             &output),
      0)
      << output;
  const FftFilter filter(makeSpec(FreqBand::Highpass, FreqShape::Butterworth, 0.2, 0.5, 3, FftPadding::Mirror));
  EXPECT_TRUE(test::imagesNear(filter.runCpu(img), loadImage(out), 0));
  EXPECT_TRUE(test::imagesNear(FftSpectrum().runCpu(img), loadImage(spectrum), 0));
}
