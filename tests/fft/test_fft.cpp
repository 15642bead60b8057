// Real 2D FFTs: cuFFT errors, plan keys and the plan cache, the naive DFT (checked on cases with
// known answers), the OpenCV baseline against it, and on the GPU: round trips, Parseval, spectra
// against the naive DFT (small sizes) and OpenCV in double (large sizes).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/fft/fft.hpp"
#include "internal/cufft_check.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using Spectrum = std::vector<std::complex<double>>;

namespace {

/// Passes when |actual - expected| <= tol for every value; names the first bad index otherwise.
::testing::AssertionResult spectraNear(const Spectrum& expected, const Spectrum& actual, double tol, int rowWidth) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << "sizes differ: " << expected.size() << " vs " << actual.size();
  std::size_t bad = 0, first = expected.size();
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (!(std::abs(expected[i] - actual[i]) <= tol)) {
      if (first == expected.size()) first = i;
      ++bad;
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(12);
  os << bad << " of " << expected.size() << " bins differ; first at kx=" << first % rowWidth
     << " ky=" << first / rowWidth << ": expected " << expected[first] << ", got " << actual[first] << " (tolerance "
     << tol << ")";
  return ::testing::AssertionFailure() << os.str();
}

double maxAbs(const Spectrum& s) {
  double m = 0;
  for (const auto& v : s) m = std::max(m, std::abs(v));
  return m;
}

/// The half spectrum (kx <= W/2) of a full one; for W == 1 the full column.
Spectrum halfOf(const Spectrum& full, int width, int height) {
  const int cw = width / 2 + 1;
  Spectrum half(static_cast<std::size_t>(cw) * height);
  for (int ky = 0; ky < height; ++ky)
    for (int kx = 0; kx < cw; ++kx)
      half[static_cast<std::size_t>(ky) * cw + kx] = full[static_cast<std::size_t>(ky) * width + kx];
  return half;
}

Spectrum channelAsComplex(const Image& img, int c) {
  Spectrum out(img.pixelCount());
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      out[static_cast<std::size_t>(y) * img.width() + x] =
          img.type() == PixelType::F32 ? static_cast<double>(img.at<float>(x, y, c)) : img.at<double>(x, y, c);
  return out;
}

double sumSquares(const Image& img, int c) {
  double s = 0;
  for (const auto& v : channelAsComplex(img, c)) s += std::norm(v);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// cuFFT errors (no GPU needed: the check macro takes any cufftResult)

TEST(CufftErrors, CheckThrowsNamingTheCallAndTheResult) {
  try {
    GPULAB_CUFFT_CHECK(CUFFT_INVALID_SIZE);
    FAIL() << "no exception";
  } catch (const CufftError& e) {
    EXPECT_EQ(e.call(), "CUFFT_INVALID_SIZE");
    EXPECT_EQ(e.code(), 8);
    const std::string what = e.what();
    EXPECT_NE(what.find("CUFFT_INVALID_SIZE"), std::string::npos) << what;
    EXPECT_NE(what.find("test_fft.cpp"), std::string::npos) << what;
  }
  EXPECT_EQ(cufftResultName(CUFFT_ALLOC_FAILED), "CUFFT_ALLOC_FAILED");
  EXPECT_EQ(cufftResultName(CUFFT_INTERNAL_ERROR), "CUFFT_INTERNAL_ERROR");
  EXPECT_EQ(cufftResultName(66), "cufftResult 66");
}

TEST(CufftErrors, IsACudaError) {
  EXPECT_THROW(GPULAB_CUFFT_CHECK(CUFFT_EXEC_FAILED), CudaError);
  EXPECT_NO_THROW(GPULAB_CUFFT_CHECK(CUFFT_SUCCESS));
}

// ---------------------------------------------------------------------------------------------
// Plan keys

TEST(FftPlanKey, PackedLayoutAndDescription) {
  const FftPlanKey k = FftPlanKey::packed(7, 5, 3, FftPrecision::Single, FftDirection::Forward);
  EXPECT_EQ(k.realRowStride, 7);
  EXPECT_EQ(k.realPlaneStride, 35);
  EXPECT_EQ(k.complexPlaneSize(), 5u * 4u);
  EXPECT_EQ(k.describe(), "7x5 x3 R2C");
  EXPECT_EQ(FftPlanKey::packed(8, 2, 1, FftPrecision::Double, FftDirection::Inverse).describe(), "8x2 x1 Z2D");
  EXPECT_EQ(FftPlanKey::packed(8, 2, 1, FftPrecision::Double, FftDirection::Inverse).complexPlaneSize(), 10u);
}

TEST(FftPlanKey, KeysDifferInEveryField) {
  const FftPlanKey base = FftPlanKey::packed(64, 48, 1, FftPrecision::Single, FftDirection::Forward);
  FftPlanKey other = base;
  EXPECT_EQ(base, other);
  other.direction = FftDirection::Inverse;
  EXPECT_NE(base, other);
  other = base;
  other.precision = FftPrecision::Double;
  EXPECT_NE(base, other);
  other = base;
  other.batch = 3;
  EXPECT_NE(base, other);
  other = base;
  other.realRowStride = 128;
  EXPECT_NE(base, other);
}

TEST(FftPlan, BadKeysThrowBeforeTouchingCufft) {
  EXPECT_THROW(FftPlan(FftPlanKey::packed(0, 5, 1, FftPrecision::Single, FftDirection::Forward)),
               std::invalid_argument);
  EXPECT_THROW(FftPlan(FftPlanKey::packed(5, 5, 0, FftPrecision::Single, FftDirection::Forward)),
               std::invalid_argument);
  FftPlanKey narrow = FftPlanKey::packed(16, 4, 1, FftPrecision::Single, FftDirection::Forward);
  narrow.realRowStride = 8;
  EXPECT_THROW(FftPlan{narrow}, std::invalid_argument);
  FftPlanKey shortPlanes = FftPlanKey::packed(16, 4, 2, FftPrecision::Single, FftDirection::Forward);
  shortPlanes.realPlaneStride = 40;
  EXPECT_THROW(FftPlan{shortPlanes}, std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The naive DFT on inputs with known transforms

TEST(NaiveDft, ImpulseHasAFlatSpectrum) {
  Spectrum delta(7 * 5, 0.0);
  delta[0] = 1.0;
  for (const auto& v : naiveDft2d(delta, 7, 5)) EXPECT_NEAR(std::abs(v - std::complex<double>(1.0)), 0.0, 1e-15);
}

TEST(NaiveDft, ShiftedImpulseIsAPurePhaseRamp) {
  const int w = 6, h = 5, x0 = 2, y0 = 3;
  Spectrum delta(w * h, 0.0);
  delta[y0 * w + x0] = 1.0;
  const Spectrum f = naiveDft2d(delta, w, h);
  for (int ky = 0; ky < h; ++ky)
    for (int kx = 0; kx < w; ++kx) {
      const std::complex<double> expected = std::polar(
          1.0, -2.0 * std::numbers::pi * (static_cast<double>(kx) * x0 / w + static_cast<double>(ky) * y0 / h));
      EXPECT_NEAR(std::abs(f[ky * w + kx] - expected), 0.0, 1e-14) << kx << "," << ky;
    }
}

TEST(NaiveDft, CosineHasTwoPeaks) {
  const int w = 12, h = 9, kx0 = 3, ky0 = 2;
  Spectrum signal(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      signal[y * w + x] =
          std::cos(2 * std::numbers::pi * (static_cast<double>(kx0) * x / w + static_cast<double>(ky0) * y / h));
  const Spectrum f = naiveDft2d(signal, w, h);
  for (int ky = 0; ky < h; ++ky)
    for (int kx = 0; kx < w; ++kx) {
      const bool peak = (kx == kx0 && ky == ky0) || (kx == w - kx0 && ky == h - ky0);
      EXPECT_NEAR(std::abs(f[ky * w + kx] - std::complex<double>(peak ? w * h / 2.0 : 0.0)), 0.0, 1e-11)
          << kx << "," << ky;
    }
}

TEST(NaiveDft, InverseUndoesForwardUpToN) {
  const int w = 7, h = 5;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> d(-1, 1);
  Spectrum signal(w * h);
  for (auto& v : signal) v = {d(rng), d(rng)};
  Spectrum back = naiveDft2d(naiveDft2d(signal, w, h), w, h, true);
  for (auto& v : back) v /= w * h;
  EXPECT_TRUE(spectraNear(signal, back, 1e-14, w));
}

TEST(NaiveDft, RejectsOversizedAndMismatchedInput) {
  EXPECT_THROW(naiveDft2d(Spectrum(10), 3, 3), std::invalid_argument);
  EXPECT_THROW(naiveDft2d(Spectrum(200 * 100), 200, 100), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// OpenCV baseline against the naive DFT, and Parseval on the host

class CpuDft : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CpuDft, OpenCvMatchesNaiveInDoubleAndSingle) {
  const auto [w, h] = GetParam();
  const Image img = test::randomImage(w, h, 1, PixelType::F64, 100 + w * 7 + h);
  const Spectrum naive = halfOf(naiveDft2d(channelAsComplex(img, 0), w, h), w, h);
  const double peak = std::max(maxAbs(naive), 1e-300);
  EXPECT_TRUE(spectraNear(naive, cpuRealDft2d(img), 1e-12 * peak, w / 2 + 1));

  const Image single = img.convertedTo(PixelType::F32);
  const Spectrum naiveSingle = halfOf(naiveDft2d(channelAsComplex(single, 0), w, h), w, h);
  EXPECT_TRUE(spectraNear(naiveSingle, cpuRealDft2d(single), 1e-5 * std::max(maxAbs(naiveSingle), 1e-30), w / 2 + 1));
}

TEST_P(CpuDft, ParsevalHoldsOnTheHalfSpectrum) {
  const auto [w, h] = GetParam();
  const Image img = test::randomImage(w, h, 1, PixelType::F64, 200 + w + h);
  const double energy = halfSpectrumEnergy(cpuRealDft2d(img), w, h);
  EXPECT_NEAR(energy, static_cast<double>(w) * h * sumSquares(img, 0), 1e-12 * energy);
}

INSTANTIATE_TEST_SUITE_P(Sizes, CpuDft,
                         ::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3), std::make_tuple(7, 5),
                                           std::make_tuple(13, 12), std::make_tuple(31, 17), std::make_tuple(1, 9),
                                           std::make_tuple(8, 1), std::make_tuple(64, 48)));

TEST(CpuDft, RejectsMultiChannelAndU8) {
  EXPECT_THROW(cpuRealDft2d(Image(4, 4, 3, PixelType::F32)), std::invalid_argument);
  EXPECT_THROW(cpuRealDft2d(Image(4, 4, 1, PixelType::U8)), std::invalid_argument);
  EXPECT_THROW(halfSpectrumEnergy(Spectrum(5), 4, 4), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// GPU: round trips, Parseval, spectra (sizes odd, prime, even, tiny, and unit rows/columns)

using GpuFftParam = std::tuple<std::tuple<int, int>, PixelType, int>;

class GpuFft : public ::testing::TestWithParam<GpuFftParam> {};

namespace {

std::string gpuFftName(const ::testing::TestParamInfo<GpuFftParam>& info) {
  const auto& [size, type, channels] = info.param;
  return std::to_string(std::get<0>(size)) + "x" + std::to_string(std::get<1>(size)) + "_" +
         std::string(toString(type)) + "_c" + std::to_string(channels);
}

double tolerance(PixelType type) { return type == PixelType::F32 ? 1e-5 : 1e-12; }

}  // namespace

TEST_P(GpuFft, ForwardThenInverseReturnsTheInput) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, type, channels] = GetParam();
  const auto [w, h] = size;
  const Image img = test::randomImage(w, h, channels, type, 300 + w * 31 + h);
  GpuContext gpu;
  RealFft fft;
  DeviceImage d = gpu.upload(img);
  DeviceBuffer spectrum;
  fft.forward(gpu, d, spectrum);
  DeviceImage back(w, h, channels, type);
  fft.inverse(gpu, spectrum, back);
  // Inputs lie in [-1, 1]: the tolerance is relative to that peak.
  EXPECT_TRUE(test::imagesNear(img, gpu.download(back), tolerance(type)));
}

/// The half spectrum of every channel of `img`, through RealFft on the GPU.
std::vector<Spectrum> gpuHalfSpectra(const Image& img) {
  GpuContext gpu;
  RealFft fft;
  DeviceBuffer spectrum;
  fft.forward(gpu, gpu.upload(img), spectrum);
  const std::size_t plane = static_cast<std::size_t>(img.width() / 2 + 1) * img.height();
  const FftPrecision precision = img.type() == PixelType::F32 ? FftPrecision::Single : FftPrecision::Double;
  const Spectrum all = downloadSpectrum(gpu, spectrum, plane * img.channels(), precision);
  std::vector<Spectrum> halves;
  for (int c = 0; c < img.channels(); ++c)
    halves.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(c * plane),
                        all.begin() + static_cast<std::ptrdiff_t>((c + 1) * plane));
  return halves;
}

TEST_P(GpuFft, ParsevalHolds) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, type, channels] = GetParam();
  const auto [w, h] = size;
  const Image img = test::randomImage(w, h, channels, type, 400 + w + h * 3);
  const std::vector<Spectrum> halves = gpuHalfSpectra(img);
  for (int c = 0; c < channels; ++c) {
    const Spectrum& half = halves[static_cast<std::size_t>(c)];
    const double expected = static_cast<double>(w) * h * sumSquares(img, c);
    EXPECT_NEAR(halfSpectrumEnergy(half, w, h), expected, tolerance(type) * expected) << "channel " << c;
  }
}

TEST_P(GpuFft, SpectrumMatchesTheNaiveDft) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, type, channels] = GetParam();
  const auto [w, h] = size;
  if (static_cast<std::int64_t>(w) * h > 4096) GTEST_SKIP() << "large sizes are compared with OpenCV below";
  const Image img = test::randomImage(w, h, channels, type, 500 + w * 5 + h);
  const std::vector<Spectrum> halves = gpuHalfSpectra(img);
  for (int c = 0; c < channels; ++c) {
    const Spectrum naive = halfOf(naiveDft2d(channelAsComplex(img, c), w, h), w, h);
    const Spectrum& gpuHalf = halves[static_cast<std::size_t>(c)];
    EXPECT_TRUE(spectraNear(naive, gpuHalf, tolerance(type) * std::max(maxAbs(naive), 1e-30), w / 2 + 1))
        << "channel " << c;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, GpuFft,
    ::testing::Combine(::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3), std::make_tuple(7, 5),
                                         std::make_tuple(13, 12), std::make_tuple(31, 17), std::make_tuple(64, 48),
                                         std::make_tuple(257, 131), std::make_tuple(1, 7), std::make_tuple(9, 1),
                                         std::make_tuple(2, 1), std::make_tuple(1, 2)),
                       ::testing::Values(PixelType::F32, PixelType::F64), ::testing::Values(1, 3)),
    gpuFftName);

class GpuFftLarge : public ::testing::TestWithParam<std::tuple<std::tuple<int, int>, PixelType>> {};

TEST_P(GpuFftLarge, SpectrumMatchesOpenCvInDouble) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, type] = GetParam();
  const auto [w, h] = size;
  const Image img = test::randomImage(w, h, 1, type, 600 + w + h);
  const Spectrum expected = cpuRealDft2d(img.convertedTo(PixelType::F64));
  GpuContext gpu;
  RealFft fft;
  DeviceBuffer spectrum;
  fft.forward(gpu, gpu.upload(img), spectrum);
  const FftPrecision precision = type == PixelType::F32 ? FftPrecision::Single : FftPrecision::Double;
  const Spectrum actual = downloadSpectrum(gpu, spectrum, expected.size(), precision);
  EXPECT_TRUE(spectraNear(expected, actual, tolerance(type) * maxAbs(expected), w / 2 + 1));
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuFftLarge,
                         ::testing::Combine(::testing::Values(std::make_tuple(640, 480), std::make_tuple(1021, 769),
                                                              std::make_tuple(1024, 1), std::make_tuple(1, 999)),
                                            ::testing::Values(PixelType::F32, PixelType::F64)));

TEST(GpuFftPlans, CreatedOncePerKeyAndTimedApart) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  RealFft fft;
  const Image img = test::randomImage(96, 80, 1, PixelType::F32, 7);
  DeviceImage d = gpu.upload(img);
  DeviceBuffer spectrum;
  fft.forward(gpu, d, spectrum);
  ASSERT_EQ(fft.plans().size(), 1u);
  EXPECT_GT(fft.plans().records().front().creationMs, 0.0);
  EXPECT_GT(fft.plans().takeCreationMs(), 0.0);
  fft.forward(gpu, d, spectrum);
  EXPECT_EQ(fft.plans().size(), 1u);
  EXPECT_EQ(fft.plans().takeCreationMs(), 0.0);  // cached: nothing new to report
  DeviceImage back(96, 80, 1, PixelType::F32);
  fft.inverse(gpu, spectrum, back);
  EXPECT_EQ(fft.plans().size(), 2u);  // the inverse is its own plan
  const DeviceImage wide = gpu.upload(test::randomImage(96, 80, 3, PixelType::F64, 8));
  fft.forward(gpu, wide, spectrum);
  EXPECT_EQ(fft.plans().size(), 3u);
  std::size_t largest = 0;
  for (const auto& r : fft.plans().records()) largest = std::max(largest, r.workspaceBytes);
  EXPECT_GE(fft.plans().workspaceBytes(), largest);
  gpu.synchronize();
}

TEST(GpuFftPlans, RejectsU8AndTooSmallSpectrumBuffers) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  RealFft fft;
  DeviceBuffer spectrum;
  EXPECT_THROW(fft.forward(gpu, gpu.upload(Image(8, 8, 1, PixelType::U8)), spectrum), std::invalid_argument);
  DeviceBuffer small(16);
  DeviceImage out(8, 8, 1, PixelType::F32);
  EXPECT_THROW(fft.inverse(gpu, small, out), std::invalid_argument);
  DeviceImage empty;
  EXPECT_THROW(fft.inverse(gpu, small, empty), std::invalid_argument);
}
