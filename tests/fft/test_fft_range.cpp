// Finite input gives finite output on the FFT paths (internal/fft_range.hpp): FFT low-pass and FFT
// convolution of samples near FLT_MAX (whose transform sums overflow float), of denormals, and of
// both mixed, against the double reference, on the CPU and the GPU; the scaling is exact (a power
// of two), so a scaled image gives the scaled result bit for bit; and kernels must be finite in the
// type they are applied in (1e308 is a double but inf as a float).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/registry.hpp"
#include "internal/fft_range.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

enum class Range { Huge, Tiny, Mixed };

const char* name(Range r) { return r == Range::Huge ? "huge" : r == Range::Tiny ? "tiny" : "mixed"; }

/// Seeded hostile samples: huge ±(0..2e38) (f64: ±(0..1e307), whose double sums overflow too),
/// tiny denormals ±(0..1e-40) (f64: ±(0..1e-310)), or mixed (huge values with a denormal, a zero and
/// an ordinary value in every group of eight).
Image hostileImage(int w, int h, int channels, PixelType type, Range range, unsigned seed) {
  Image img(w, h, channels, type);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  const bool dbl = type == PixelType::F64;
  const double huge = dbl ? 1e307 : 2e38, tiny = dbl ? 1e-310 : 1e-40;
  std::size_t i = 0;
  auto next = [&] {
    const double u = d(rng);
    switch (range) {
      case Range::Huge:
        return u * huge;
      case Range::Tiny:
        return u * tiny;
      case Range::Mixed:
        break;
    }
    switch (i++ % 8) {
      case 1:
        return u * tiny;
      case 4:
        return 0.0;
      case 6:
        return u;
      default:
        return u * huge;
    }
  };
  if (dbl)
    for (double& v : img.samples<double>()) v = next();
  else
    for (float& v : img.samples<float>()) v = static_cast<float>(next());
  return img;
}

double maxAbs(const Image& img) {
  double m = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      for (int c = 0; c < img.channels(); ++c) m = std::max(m, std::fabs(sampleAt(img, x, y, c)));
  return m;
}

/// Every sample finite, and within `rel` x the largest |input| of the reference's.
::testing::AssertionResult finiteAndNear(const Image& reference, const Image& actual, double inputMax, double rel) {
  for (int y = 0; y < reference.height(); ++y)
    for (int x = 0; x < reference.width(); ++x)
      for (int c = 0; c < reference.channels(); ++c)
        if (!std::isfinite(sampleAt(reference, x, y, c)))
          return ::testing::AssertionFailure() << "the reference itself is not finite at (" << x << ", " << y << ")";
  for (int y = 0; y < actual.height(); ++y)
    for (int x = 0; x < actual.width(); ++x)
      for (int c = 0; c < actual.channels(); ++c) {
        const double v = sampleAt(actual, x, y, c);
        if (!std::isfinite(v))
          return ::testing::AssertionFailure() << "sample (" << x << ", " << y << ", " << c << ") is " << v;
      }
  return test::imagesNear(reference, actual, rel * inputMax);
}

FftFilterSpec lowpass(FreqShape shape, FftPadding padding) {
  FftFilterSpec s;
  s.band = FreqBand::Lowpass;
  s.shape = shape;
  s.cutoff = 0.4;
  s.order = 2;
  s.padding = padding;
  return s;
}

/// A random kernel whose |coefficients| sum to 1, so the convolution of x stays within max|x|.
Kernel2D unitKernel(int kw, int kh, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  Kernel2D k{kw, kh, {}};
  double sum = 0;
  for (int i = 0; i < kw * kh; ++i) {
    k.values.push_back(d(rng));
    sum += std::fabs(k.values.back());
  }
  for (double& v : k.values) v /= sum;
  return k;
}

FilterSpec convSpec(const Kernel2D& k, ConvMode mode, BorderMode border, double value = 0) {
  FilterSpec s;
  s.op = FilterOp::Conv;
  s.kernel = k;
  s.mode = mode;
  s.method = ConvMethod::Fft;
  s.border = {border, value};
  return s;
}

using Case = std::tuple<std::tuple<int, int>, Range>;

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  const auto& [size, range] = info.param;
  return std::to_string(std::get<0>(size)) + "x" + std::to_string(std::get<1>(size)) + "_" + name(range);
}

class FftRangeTable : public ::testing::TestWithParam<Case> {};

constexpr double kRel = 2e-5;  // float transforms: a few ulps of the largest sample, summed

}  // namespace

// ---------------------------------------------------------------------------------------------
// The exponent rule

TEST(FftRange, ExponentIsZeroForOrdinaryRangesAndBringsExtremesToOne) {
  EXPECT_EQ(fftRangeExponent(0), 0);
  EXPECT_EQ(fftRangeExponent(255), 0);
  EXPECT_EQ(fftRangeExponent(1e-15), 0);
  EXPECT_EQ(fftRangeExponent(1e15), 0);
  EXPECT_EQ(fftRangeExponent(NAN), 0);
  EXPECT_EQ(fftRangeExponent(INFINITY), 0);
  EXPECT_EQ(fftRangeExponent(std::ldexp(1.0, 64)), 65);  // 2^64 = 0.5 * 2^65
  EXPECT_EQ(fftRangeExponent(std::ldexp(1.0, 64) * 0.99), 0);
  EXPECT_EQ(fftRangeExponent(FLT_MAX), 128);
  EXPECT_EQ(fftRangeExponent(1e-40), -132);
  for (double v : {3e38, 1e-40, 1e300, 1e-310}) {
    const double scaled = std::ldexp(v, -fftRangeExponent(v));
    EXPECT_GE(scaled, 0.5) << v;
    EXPECT_LT(scaled, 1.0) << v;
  }
}

// ---------------------------------------------------------------------------------------------
// FFT low-pass

TEST_P(FftRangeTable, LowpassCpuIsFiniteAndMatchesTheReference) {
  const auto& [size, range] = GetParam();
  const auto [w, h] = size;
  for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
    for (FreqShape shape : {FreqShape::Gaussian, FreqShape::Butterworth})
      for (auto [channels, type] :
           {std::pair{1, PixelType::F32}, std::pair{3, PixelType::F32}, std::pair{2, PixelType::F64}}) {
        const FftFilter filter(lowpass(shape, padding));
        const Image img = hostileImage(w, h, channels, type, range, 5 + w * h);
        EXPECT_TRUE(finiteAndNear(filter.runReference(img), filter.runCpu(img), maxAbs(img), kRel))
            << img.describe() << " " << filter.describe();
      }
}

TEST_P(FftRangeTable, LowpassGpuIsFiniteAndMatchesTheReference) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, range] = GetParam();
  const auto [w, h] = size;
  GpuContext gpu;
  for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
    for (FreqShape shape : {FreqShape::Gaussian, FreqShape::Butterworth})
      for (auto [channels, type] :
           {std::pair{1, PixelType::F32}, std::pair{3, PixelType::F32}, std::pair{2, PixelType::F64}}) {
        FftFilter filter(lowpass(shape, padding));
        const Image img = hostileImage(w, h, channels, type, range, 7 + w * h);
        DeviceImage out;
        filter.runGpu(gpu, gpu.upload(img), out);
        EXPECT_TRUE(finiteAndNear(filter.runReference(img), gpu.download(out), maxAbs(img), kRel))
            << img.describe() << " " << filter.describe();
        DeviceImage same = gpu.upload(img);  // in place: the scaled copy is taken before the output is written
        filter.runGpu(gpu, same, same);
        EXPECT_TRUE(finiteAndNear(filter.runReference(img), gpu.download(same), maxAbs(img), kRel))
            << "in place, " << img.describe();
      }
}

// ---------------------------------------------------------------------------------------------
// FFT convolution

TEST_P(FftRangeTable, ConvolutionCpuIsFiniteAndMatchesTheReference) {
  const auto& [size, range] = GetParam();
  const auto [w, h] = size;
  for (ConvMode mode : {ConvMode::Same, ConvMode::Full})
    for (auto [channels, type] : {std::pair{1, PixelType::F32}, std::pair{2, PixelType::F64}}) {
      const FilterSpec spec = convSpec(unitKernel(3, 4, 11), mode, BorderMode::Reflect101);
      const FftConvolver conv(spec);
      const Image img = hostileImage(w, h, channels, type, range, 13 + w * h);
      EXPECT_TRUE(finiteAndNear(Conv2D(spec).runReference(img), conv.runCpu(img), maxAbs(img), kRel))
          << img.describe() << " " << conv.describe();
    }
}

TEST_P(FftRangeTable, ConvolutionGpuIsFiniteAndMatchesTheReference) {
  GPULAB_REQUIRE_GPU();
  const auto& [size, range] = GetParam();
  const auto [w, h] = size;
  GpuContext gpu;
  for (ConvMode mode : {ConvMode::Same, ConvMode::Full})
    for (BorderMode border : {BorderMode::Reflect101, BorderMode::Wrap})
      for (auto [channels, type] :
           {std::pair{1, PixelType::F32}, std::pair{3, PixelType::F32}, std::pair{2, PixelType::F64}}) {
        const FilterSpec spec = convSpec(unitKernel(5, 3, 17), mode, border);
        FftConvolver conv(spec);
        const Image img = hostileImage(w, h, channels, type, range, 19 + w * h);
        DeviceImage out;
        conv.runGpu(gpu, gpu.upload(img), out);
        EXPECT_TRUE(finiteAndNear(Conv2D(spec).runReference(img), gpu.download(out), maxAbs(img), kRel))
            << img.describe() << " " << conv.describe();
      }
}

INSTANTIATE_TEST_SUITE_P(Hostile, FftRangeTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3),
                                                              std::make_tuple(13, 12), std::make_tuple(17, 9),
                                                              std::make_tuple(16, 16),
                                                              std::make_tuple(32, 32)),  // f32: the fused path
                                            ::testing::Values(Range::Huge, Range::Tiny, Range::Mixed)),
                         caseName);

TEST(FftRange, HugeConstantBorderIsScaledWithTheImage) {
  const FilterSpec spec = convSpec(unitKernel(3, 3, 23), ConvMode::Same, BorderMode::Constant, 3e38);
  const Image img = test::randomImage(17, 9, 1, PixelType::F32, 29);
  const Image reference = Conv2D(spec).runReference(img);
  EXPECT_TRUE(finiteAndNear(reference, FftConvolver(spec).runCpu(img), 3e38, kRel));
  if (!cudaAvailable()) GTEST_SKIP() << "no CUDA device: the CPU path passed, the GPU path was not run";
  GpuContext gpu;
  FftConvolver conv(spec);
  DeviceImage out;
  conv.runGpu(gpu, gpu.upload(img), out);
  EXPECT_TRUE(finiteAndNear(reference, gpu.download(out), 3e38, kRel));
}

// ---------------------------------------------------------------------------------------------
// Exactness: a power-of-two scale commutes with the transforms bit for bit

namespace {

/// `img` times 2^e, sample by sample (std::ldexp, as the engine scales).
Image timesPow2(const Image& img, int e) {
  Image out = img.convertedTo(img.type());
  if (img.type() == PixelType::F32)
    for (float& v : out.samples<float>()) v = std::ldexp(v, e);
  else
    for (double& v : out.samples<double>()) v = std::ldexp(v, e);
  return out;
}

::testing::AssertionResult bitIdentical(const Image& a, const Image& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels() || a.type() != b.type())
    return ::testing::AssertionFailure() << "shapes differ";
  if (std::memcmp(a.data(), b.data(), a.height() * a.rowBytes()) != 0) {
    for (int y = 0; y < a.height(); ++y)
      for (int x = 0; x < a.width(); ++x)
        for (int c = 0; c < a.channels(); ++c)
          if (sampleAt(a, x, y, c) != sampleAt(b, x, y, c))
            return ::testing::AssertionFailure() << "first difference at (" << x << ", " << y << ", " << c
                                                 << "): " << sampleAt(a, x, y, c) << " vs " << sampleAt(b, x, y, c);
    return ::testing::AssertionFailure() << "bytes differ";
  }
  return ::testing::AssertionSuccess();
}

/// An ordinary image whose largest |sample| lies in [0.5, 1), so its own exponent is 0 and the image
/// times 2^e is transformed as exactly this image.
Image unitImage(int w, int h, int channels, PixelType type, unsigned seed) {
  Image img = test::randomImage(w, h, channels, type, seed);
  if (type == PixelType::F32)
    img.samples<float>()[0] = 0.75f;
  else
    img.samples<double>()[0] = 0.75;
  return img;
}

}  // namespace

TEST(FftRange, ScaledInputGivesTheScaledResultBitForBit) {
  const FftFilter filter(lowpass(FreqShape::Gaussian, FftPadding::Mirror));
  const FilterSpec spec = convSpec(unitKernel(4, 3, 31), ConvMode::Same, BorderMode::Reflect101);
  const FftConvolver conv(spec);
  for (PixelType type : {PixelType::F32, PixelType::F64}) {
    const Image img = unitImage(24, 20, 2, type, 37);
    ASSERT_EQ(fftRangeExponent(maxAbs(img)), 0);
    const Image plain = filter.runCpu(img), convolved = conv.runCpu(img);
    for (int e : {100, -100}) {
      EXPECT_TRUE(bitIdentical(timesPow2(plain, e), filter.runCpu(timesPow2(img, e)))) << "low-pass, 2^" << e;
      EXPECT_TRUE(bitIdentical(timesPow2(convolved, e), conv.runCpu(timesPow2(img, e)))) << "convolution, 2^" << e;
    }
  }
}

TEST(FftRange, ScaledInputGivesTheScaledResultBitForBitOnTheGpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  FftFilter filter(lowpass(FreqShape::Gaussian, FftPadding::None));
  const FilterSpec spec = convSpec(unitKernel(4, 3, 31), ConvMode::Same, BorderMode::Reflect101);
  FftConvolver conv(spec);
  for (PixelType type : {PixelType::F32, PixelType::F64})
    for (auto [w, h] : {std::pair{24, 20}, std::pair{64, 64}, std::pair{13, 11}}) {
      const Image img = unitImage(w, h, 2, type, 41);
      DeviceImage a, b;
      filter.runGpu(gpu, gpu.upload(img), a);
      const Image plain = gpu.download(a);
      conv.runGpu(gpu, gpu.upload(img), b);
      const Image convolved = gpu.download(b);
      for (int e : {100, -100}) {
        filter.runGpu(gpu, gpu.upload(timesPow2(img, e)), a);
        EXPECT_TRUE(bitIdentical(timesPow2(plain, e), gpu.download(a))) << "low-pass, 2^" << e << " " << w << "x" << h;
        conv.runGpu(gpu, gpu.upload(timesPow2(img, e)), b);
        EXPECT_TRUE(bitIdentical(timesPow2(convolved, e), gpu.download(b)))
            << "convolution, 2^" << e << " " << w << "x" << h;
      }
    }
}

TEST(FftRange, TrueOutputBeyondFloatIsInfNotNan) {
  // A high-pass of +-2e38 noise can reach 4e38 > FLT_MAX: the true output does not fit in float, so
  // inf there is the right answer; what must not appear is NaN from an overflowed transform.
  FftFilterSpec s = lowpass(FreqShape::Gaussian, FftPadding::None);
  s.band = FreqBand::Highpass;
  const Image img = hostileImage(16, 16, 1, PixelType::F32, Range::Huge, 43);
  const Image out = FftFilter(s).runCpu(img);
  const Image reference = FftFilter(s).runReference(img);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) {
      const double v = sampleAt(out, x, y, 0), r = sampleAt(reference, x, y, 0);
      ASSERT_FALSE(std::isnan(v)) << x << ", " << y;
      if (std::isfinite(r)) {
        EXPECT_NEAR(v, r, kRel * 2e38) << x << ", " << y;
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel coefficients finite in the type they are applied in

TEST(KernelRange, CoefficientsBeyondFloatAreRefusedForFloatImagesOnly) {
  Kernel2D k{3, 1, {0.25, 1e308, 0.25}};
  for (ConvMethod method : {ConvMethod::Direct, ConvMethod::Fft}) {
    FilterSpec spec = convSpec(k, ConvMode::Same, BorderMode::Reflect101);
    spec.method = method;
    const std::unique_ptr<Operation> op = makeFilter(spec);
    for (PixelType type : {PixelType::U8, PixelType::F32}) {
      try {
        (void)op->outputShape({8, 8, 1, type});
        ADD_FAILURE() << "a 1e308 coefficient was taken for a float image";
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("1e+308"), std::string::npos) << what;
        EXPECT_NE(what.find("row 0, column 1"), std::string::npos) << what;
        EXPECT_NE(what.find("float32"), std::string::npos) << what;
        EXPECT_NE(what.find("3.40282e+38"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
      const Image img = test::randomImage(8, 8, 1, type, 47);
      EXPECT_THROW((void)op->runCpu(img, {}), std::invalid_argument) << toString(method);
    }
    // In double the coefficient is finite: f64 images take it, and give finite results where they fit.
    EXPECT_NO_THROW((void)op->outputShape({8, 8, 1, PixelType::F64}));
  }
  EXPECT_THROW((void)FftConvolver(convSpec(k, ConvMode::Same, BorderMode::Wrap))
                   .runCpu(test::randomImage(8, 8, 1, PixelType::F32, 53)),
               std::invalid_argument);
  // FLT_MAX itself is finite in float.
  const Kernel2D edge{1, 1, {static_cast<double>(FLT_MAX)}};
  EXPECT_NO_THROW(
      (void)makeFilter(convSpec(edge, ConvMode::Same, BorderMode::Reflect101))->outputShape({8, 8, 1, PixelType::F32}));
}

TEST(KernelRange, TheRegistryPathTheGuiTakesRefusesToo) {
  // The GUI builds the filter from the registry's parameter values (the kernel as text).
  const OperationInfo& info = findOperation("conv");
  for (const char* method : {"direct", "fft"}) {
    const std::unique_ptr<Operation> op = info.make({{"kernel", "1 -1e300\n0 1\n"}, {"method", method}});
    EXPECT_THROW((void)op->outputShape({4, 4, 3, PixelType::U8}), std::invalid_argument) << method;
  }
}

// ---------------------------------------------------------------------------------------------
// Extreme finite input through the whole-image filter (issue 19): +-3e38 noise, FLT_MAX, -FLT_MAX,
// +-FLT_MAX alternating, one huge pixel among ordinary ones, half the image +3e38 and half -3e38;
// the default spec and others; tiny, odd and prime sizes. No NaN anywhere, finite wherever the
// double reference is, and the GPU agrees with the CPU path. (The whole-image case left open in
// issue 19 built its input as ((v - low) / span - 0.5f) * 6e38f: the literal 6e38f is beyond float
// and is +inf, so that image held only +-inf and NaN, and NaN was the right answer; the input
// below stays within float.)

namespace {

enum class Extreme { Noise3e38, FltMax, MinusFltMax, Alternating, OneHugePixel, HalfAndHalf };

const char* extremeName(Extreme e) {
  switch (e) {
    case Extreme::Noise3e38:
      return "noise3e38";
    case Extreme::FltMax:
      return "FLT_MAX";
    case Extreme::MinusFltMax:
      return "-FLT_MAX";
    case Extreme::Alternating:
      return "alternating";
    case Extreme::OneHugePixel:
      return "one huge pixel";
    case Extreme::HalfAndHalf:
      return "half and half";
  }
  return "?";
}

Image extremeImage(int w, int h, Extreme kind, unsigned seed) {
  Image img = test::filterTestImage(w, h, 1, PixelType::F32, seed);  // ordinary samples, 3..7
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float& v = img.at<float>(x, y);
      switch (kind) {
        case Extreme::Noise3e38:
          v = 3e38f * u(rng);
          break;
        case Extreme::FltMax:
          v = FLT_MAX;
          break;
        case Extreme::MinusFltMax:
          v = -FLT_MAX;
          break;
        case Extreme::Alternating:
          v = (x + y) % 2 == 0 ? FLT_MAX : -FLT_MAX;
          break;
        case Extreme::OneHugePixel:
          if (x == w / 2 && y == h / 2) v = FLT_MAX;
          break;
        case Extreme::HalfAndHalf:
          v = (x < (w + 1) / 2 ? 3e38f : -3e38f) * (0.75f + 0.25f * u(rng));
          break;
      }
    }
  return img;
}

std::vector<std::pair<std::string, FftFilterSpec>> extremeSpecs() {
  std::vector<std::pair<std::string, FftFilterSpec>> specs = {{"default", FftFilterSpec{}}};
  FftFilterSpec s;
  s.padding = FftPadding::Mirror;
  specs.emplace_back("default, mirror", s);
  s = FftFilterSpec{};
  s.shape = FreqShape::Butterworth;
  s.cutoff = 0.4;
  specs.emplace_back("butterworth 0.4", s);
  s = FftFilterSpec{};
  s.shape = FreqShape::Ideal;
  s.padding = FftPadding::Mirror;
  specs.emplace_back("ideal, mirror", s);
  s = FftFilterSpec{};
  s.band = FreqBand::Highpass;
  specs.emplace_back("gaussian high-pass", s);
  s = FftFilterSpec{};
  s.band = FreqBand::Bandpass;
  s.cutoff = 0.1;
  s.cutoff2 = 0.6;
  specs.emplace_back("gaussian band-pass", s);
  return specs;
}

const std::pair<int, int> kExtremeSizes[] = {{1, 1}, {2, 3}, {13, 12}, {61, 59}, {97, 1}, {1, 31}, {64, 64}};
const Extreme kExtremes[] = {Extreme::Noise3e38,   Extreme::FltMax,       Extreme::MinusFltMax,
                             Extreme::Alternating, Extreme::OneHugePixel, Extreme::HalfAndHalf};

/// No NaN; where the reference is finite, finite and within kRel x FLT_MAX of it; where it is inf
/// (the true value beyond float), inf of its sign or within kRel x FLT_MAX of the largest float of
/// its sign (float rounding of a value at the edge of the range may fall either side).
::testing::AssertionResult extremeNear(const Image& reference, const Image& actual) {
  const double tolerance = kRel * FLT_MAX;
  for (int y = 0; y < reference.height(); ++y)
    for (int x = 0; x < reference.width(); ++x) {
      const double r = sampleAt(reference, x, y, 0), a = sampleAt(actual, x, y, 0);
      bool ok;
      if (std::isnan(a))
        ok = false;
      else if (std::isfinite(r))
        ok = std::isfinite(a) && std::fabs(a - r) <= tolerance;
      else
        ok = std::isnan(r) ? false
                           : (a == r || (std::isfinite(a) && std::fabs(a - std::copysign(FLT_MAX, r)) <= tolerance));
      if (!ok)
        return ::testing::AssertionFailure() << "sample (" << x << ", " << y << ") is " << a << ", expected " << r;
    }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(FftRange, ExtremeFiniteInputCpuHasNoNanAndMatchesTheReference) {
  for (const auto& [specName, spec] : extremeSpecs())
    for (auto [w, h] : kExtremeSizes)
      for (Extreme kind : kExtremes) {
        const FftFilter filter(spec);
        const Image img = extremeImage(w, h, kind, 59u + w * h);
        const auto [fw, fh] = filter.fftSize(w, h);
        const Image cpu = filter.runCpu(img);
        if (static_cast<std::int64_t>(fw) * fh <= kNaiveDftMaxPixels) {
          EXPECT_TRUE(extremeNear(filter.runReference(img), cpu))
              << specName << ", " << w << "x" << h << ", " << extremeName(kind);
        }
      }
}

TEST(FftRangeGpu, ExtremeFiniteInputWholeImageHasNoNanAndMatchesTheCpuPath) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (const auto& [specName, spec] : extremeSpecs())
    for (auto [w, h] : kExtremeSizes)
      for (Extreme kind : kExtremes) {
        SCOPED_TRACE(specName + ", " + std::to_string(w) + "x" + std::to_string(h) + ", " + extremeName(kind));
        FftFilter filter(spec);
        const Image img = extremeImage(w, h, kind, 59u + w * h);
        DeviceImage out;
        filter.runGpu(gpu, gpu.upload(img), out);
        const Image got = gpu.download(out);
        const auto [fw, fh] = filter.fftSize(w, h);
        if (static_cast<std::int64_t>(fw) * fh <= kNaiveDftMaxPixels) {
          EXPECT_TRUE(extremeNear(filter.runReference(img), got)) << "against the reference";
        }
        EXPECT_TRUE(extremeNear(filter.runCpu(img), got)) << "against the CPU path";
      }
}

TEST(FftRangeGpu, ExtremeFiniteInputOfLargerOddSizesMatchesTheCpuPath) {
  // Sizes whose transforms the naive reference cannot take: the CPU path is the comparison.
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (auto [w, h] : {std::pair{257, 131}, std::pair{521, 23}, std::pair{1031, 1}, std::pair{512, 512}})
    for (Extreme kind : kExtremes)
      for (const auto& [specName, spec] : extremeSpecs()) {
        SCOPED_TRACE(specName + ", " + std::to_string(w) + "x" + std::to_string(h) + ", " + extremeName(kind));
        FftFilter filter(spec);
        const Image img = extremeImage(w, h, kind, 61u + w * h);
        DeviceImage out;
        filter.runGpu(gpu, gpu.upload(img), out);
        EXPECT_TRUE(extremeNear(filter.runCpu(img), gpu.download(out)));
      }
}
