// Mandelbrot / Julia escape time: known points, smooth counts, interior tests, the precision rule,
// palettes, PNG metadata, the CPU baseline, the CLI's errors; on a GPU: CPU vs GPU counts for every
// variant and precision, recolouring without recompute, buffer reuse and the self-resetting work queue.
//
// Tolerances: integer escape counts of the CPU and the GPU use the same algorithm and arithmetic
// (explicit fma on both sides), so they are expected to be equal; a view may differ in at most 0.01% of
// its pixels (boundary pixels, should a libm or compiler ever round one fma differently). Smooth counts
// nu agree within 2e-4 + 1e-6 * nu (the GPU uses the hardware log2, 2 ulp). Colours agree within 1 per
// channel. Periodicity (tolerance 1/64 pixel) may call interior at most 0.01% of a view's pixels, each
// of which escapes only after 1000 or more iterations; the interior tests change nothing. The optimized
// and the plain algorithm round differently: their counts differ at chaotic pixels, and the optimized
// one must be as close to a long-double reference as the plain one (at most 1.25x its mismatches + 0.2%).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "internal/mandelbrot_params.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab::test;  // runCli, describe, slurp, ...

using namespace gpulab;
namespace fs = std::filesystem;

namespace {

constexpr double kAllowedCountMismatch = 1e-4;         // fraction of pixels
constexpr double kAllowedPeriodicityChange = 1e-4;     // fraction of pixels
constexpr int kPeriodicityChangeMinIterations = 1000;  // a pixel periodicity calls interior escapes this late

MandelbrotView smallView(double cx, double cy, double width, int w, int h, int iterations,
                         Precision precision = Precision::Auto) {
  MandelbrotView v;
  v.centerX = DecimalNumber::fromDouble(cx);
  v.centerY = DecimalNumber::fromDouble(cy);
  v.width = DeepWidth::fromDouble(width);
  v.imageWidth = w;
  v.imageHeight = h;
  v.maxIterations = iterations;
  v.precision = precision;
  return v;
}

MandelbrotOptions countsOnly(MandelbrotVariant variant = MandelbrotVariant::Optimized) {
  MandelbrotOptions o;
  o.variant = variant;
  o.smooth = false;
  return o;
}

/// Raw planes agree: values within absTol + relTol * |expected| (exactly for counts), except at most
/// `allowedFraction` of the pixels; otherwise names the first differing pixel.
::testing::AssertionResult rawNear(const Image& expected, const Image& actual, double absTol, double relTol,
                                   double allowedFraction) {
  if (expected.width() != actual.width() || expected.height() != actual.height() || expected.type() != PixelType::F32 ||
      actual.type() != PixelType::F32)
    return ::testing::AssertionFailure() << "shape differs: " << expected.describe() << " vs " << actual.describe();
  const auto e = expected.samples<float>(), a = actual.samples<float>();
  std::size_t bad = 0, first = e.size();
  for (std::size_t i = 0; i < e.size(); ++i) {
    const bool ok = e[i] == a[i] || std::abs(static_cast<double>(e[i]) - a[i]) <= absTol + relTol * std::abs(e[i]);
    if (!ok) {
      if (first == e.size()) first = i;
      ++bad;
    }
  }
  const auto allowed = static_cast<std::size_t>(allowedFraction * static_cast<double>(e.size()));
  if (bad <= allowed) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << e.size() << " pixels differ (allowed " << allowed
     << "); first at x=" << first % expected.width() << " y=" << first / expected.width() << ": expected " << e[first]
     << ", got " << a[first];
  return ::testing::AssertionFailure() << os.str();
}

std::size_t countInterior(const Image& raw) {
  std::size_t n = 0;
  for (float v : raw.samples<float>()) n += v < 0;
  return n;
}

fs::path tempPath(const std::string& name) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("gpulab-test-mandel-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Known points (float64, no interior tests or periodicity: the definition itself)

TEST(MandelbrotPoints, KnownEscapeCounts) {
  EXPECT_EQ(escapeCount(0.0, 0.0, 100000), -1);   // z stays 0
  EXPECT_EQ(escapeCount(-1.0, 0.0, 100000), -1);  // 0, -1, 0, -1, ...
  EXPECT_EQ(escapeCount(-2.0, 0.0, 100000), -1);  // 0, -2, 2, 2, ...: the tip of the set
  // c = 1: z = 0, 1, 2, 5, 26, 677; |z_5| = 677 is the first beyond R = 256.
  EXPECT_EQ(escapeCount(1.0, 0.0, 100), 5);
  EXPECT_EQ(escapeCount(1.0, 0.0, 5), -1);   // z_5 is never tested with 5 iterations
  EXPECT_EQ(escapeCount(2.0, 0.0, 100), 4);  // 0, 2, 6, 38, 1446
  // Just outside the cusp of the cardioid, c = 1/4 + e escapes after about pi / sqrt(e) iterations.
  EXPECT_EQ(escapeCount(0.25 + 1e-2, 0.0, 100000), 32);
  EXPECT_EQ(escapeCount(0.25 + 1e-3, 0.0, 100000), 100);
  EXPECT_EQ(escapeCount(0.25 + 1e-4, 0.0, 100000), 315);
}

TEST(MandelbrotPoints, RenderersAgreeWithTheDefinitionAtSinglePixels) {
  const double nu1 = 5.0 + 1.0 - std::log2(std::log(677.0) / std::log(256.0));  // c = 1
  for (Precision p : {Precision::F32, Precision::F64})
    for (MandelbrotVariant variant : {MandelbrotVariant::Optimized, MandelbrotVariant::Plain}) {
      SCOPED_TRACE(std::string(toString(p)) + " " + std::string(toString(variant)));
      MandelbrotOptions counts = countsOnly(variant), smooth;
      smooth.variant = variant;
      EXPECT_EQ(renderRawCpu(smallView(1.0, 0.0, 1e-3, 1, 1, 100, p), counts).at<float>(0, 0), 5.f);
      EXPECT_NEAR(renderRawCpu(smallView(1.0, 0.0, 1e-3, 1, 1, 100, p), smooth).at<float>(0, 0), nu1, 1e-5);
      EXPECT_EQ(renderRawCpu(smallView(0.0, 0.0, 1e-3, 1, 1, 5000, p), smooth).at<float>(0, 0), kMandelbrotInterior);
      EXPECT_EQ(renderRawCpu(smallView(-1.0, 0.0, 1e-3, 1, 1, 5000, p), smooth).at<float>(0, 0), kMandelbrotInterior);
      EXPECT_EQ(renderRawCpu(smallView(0.2501, 0.0, 1e-9, 1, 1, 5000, Precision::F64), counts).at<float>(0, 0), 315.f);
    }
}

TEST(MandelbrotPoints, SmoothCountsAreContinuousAcrossBands) {
  // A line from x = 0.27 to 1.0 on the real axis, outside the set: escape counts fall from 23 to 5.
  MandelbrotView v = smallView(0.635, 0.0, 0.73, 4096, 1, 100000, Precision::F64);
  const Image smooth = renderRawCpu(v);
  const Image counts = renderRawCpu(v, countsOnly());
  int bands = 0;
  double maxSmoothStep = 0, maxCountStep = 0;
  for (int i = 1; i < v.imageWidth; ++i) {
    bands += counts.at<float>(i, 0) != counts.at<float>(i - 1, 0);
    maxSmoothStep = std::max<double>(maxSmoothStep, std::abs(smooth.at<float>(i, 0) - smooth.at<float>(i - 1, 0)));
    maxCountStep = std::max<double>(maxCountStep, std::abs(counts.at<float>(i, 0) - counts.at<float>(i - 1, 0)));
    // nu lies in [n, n + 1)
    ASSERT_GE(smooth.at<float>(i, 0), counts.at<float>(i, 0) - 1e-4) << "x=" << i;
    ASSERT_LT(smooth.at<float>(i, 0), counts.at<float>(i, 0) + 1.0f) << "x=" << i;
  }
  EXPECT_GE(bands, 15);
  EXPECT_EQ(maxCountStep, 1.0);   // the integer counts jump by a whole band...
  EXPECT_LT(maxSmoothStep, 0.2);  // ...nu does not (measured 0.097)
}

// ---------------------------------------------------------------------------------------------
// Interior tests

TEST(MandelbrotInterior, CardioidAndBulbTestsSeparateInsideFromOutside) {
  // Every degree but the three next to the cusp (theta = 0), where the map mu -> c folds back and
  // |mu| slightly above 1 still lands inside.
  for (int k = 2; k < 359; ++k) {
    const double theta = 2 * std::numbers::pi * k / 360.0;
    // The main cardioid is c = mu/2 - mu^2/4 for |mu| < 1 (mu: the multiplier of the fixed point).
    auto cardioid = [theta](double r) {
      const std::complex<double> mu = std::polar(r, theta);
      return mu / 2.0 - mu * mu / 4.0;
    };
    const auto in = cardioid(0.999), out = cardioid(1.001);
    EXPECT_TRUE(insideMainCardioid(in.real(), in.imag())) << "theta " << theta;
    EXPECT_FALSE(insideMainCardioid(out.real(), out.imag())) << "theta " << theta;
    EXPECT_TRUE(kernels::inMainCardioid<float>(static_cast<float>(cardioid(0.99).real()),
                                               static_cast<float>(cardioid(0.99).imag())));
    // The period-2 bulb is the disc of radius 1/4 about -1.
    const auto bin = std::polar(0.2499, theta) - 1.0, bout = std::polar(0.2501, theta) - 1.0;
    EXPECT_TRUE(insidePeriod2Bulb(bin.real(), bin.imag())) << "theta " << theta;
    EXPECT_FALSE(insidePeriod2Bulb(bout.real(), bout.imag())) << "theta " << theta;
  }
  // Points the tests call inside never escape when iterated (away from the cusp, where convergence is slow).
  for (int k = 1; k < 36; ++k) {
    const std::complex<double> c = std::polar(0.9, 2 * std::numbers::pi * k / 36.0) / 2.0 -
                                   std::polar(0.81, 4 * std::numbers::pi * k / 36.0) / 4.0;
    EXPECT_EQ(escapeCount(c.real(), c.imag(), 20000), -1) << c;
  }
  EXPECT_FALSE(insideMainCardioid(0.2501, 0.0));
  EXPECT_FALSE(insideMainCardioid(-0.7501, 0.0));  // the neck between cardioid and bulb
  EXPECT_FALSE(insidePeriod2Bulb(-0.7499, 0.0));
}

// The interior tests skip work and nothing else; periodicity (within 1/64 pixel) may call interior a
// handful of pixels that escape very late. Every test runs the optimized algorithm on the CPU.
struct ViewCase {
  const char* name;
  MandelbrotView view;
  bool hasInterior = true;  ///< false for a dendrite (no interior; there to catch false cycles)
};

/// Pixels where `with` (a shortcut on) differs from `without`: each must be interior in `with` and escape
/// at kPeriodicityChangeMinIterations or later in `without`; at most kAllowedPeriodicityChange of them.
::testing::AssertionResult onlyLateEscapersBecameInterior(const Image& without, const Image& with) {
  const auto a = without.samples<float>(), b = with.samples<float>();
  std::size_t changed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    ++changed;
    if (b[i] != kMandelbrotInterior || a[i] < kPeriodicityChangeMinIterations)
      return ::testing::AssertionFailure() << "pixel x=" << i % without.width() << " y=" << i / without.width() << ": "
                                           << a[i] << " without periodicity, " << b[i] << " with it";
  }
  const auto allowed = static_cast<std::size_t>(kAllowedPeriodicityChange * static_cast<double>(a.size()));
  if (changed > allowed)
    return ::testing::AssertionFailure() << changed << " of " << a.size() << " pixels changed (allowed " << allowed
                                         << ")";
  return ::testing::AssertionSuccess() << changed << " changed";
}

class MandelbrotShortcuts : public ::testing::TestWithParam<ViewCase> {};

TEST_P(MandelbrotShortcuts, InteriorTestsChangeNothingPeriodicityOnlyLateEscapers) {
  for (Precision p : {Precision::F32, Precision::F64}) {
    MandelbrotView v = GetParam().view;
    v.precision = p;
    SCOPED_TRACE(toString(p));
    MandelbrotOptions all = countsOnly(), noPeriodicity = countsOnly(), none = countsOnly();
    noPeriodicity.periodicity = false;
    none.periodicity = false;
    none.interiorTests = false;
    const Image a = renderRawCpu(v, all), b = renderRawCpu(v, noPeriodicity), c = renderRawCpu(v, none);
    EXPECT_TRUE(rawNear(c, b, 0, 0, 0)) << "interior tests changed counts";
    EXPECT_TRUE(onlyLateEscapersBecameInterior(b, a));
    if (GetParam().hasInterior) {
      EXPECT_GT(countInterior(a), 0u);  // the shortcuts had something to skip
    }
    EXPECT_LT(countInterior(a), a.pixelCount());  // and the view is not all interior
  }
}

/// The Julia set of (jx, jy) over [-1.6, 1.6] wide, 3000 iterations.
MandelbrotView juliaView(double jx, double jy, int width, int height) {
  MandelbrotView v = smallView(0.0, 0.0, 3.2, width, height, 3000);
  v.julia = true;
  v.juliaX = jx;
  v.juliaY = jy;
  return v;
}

MandelbrotView juliaRabbit() { return juliaView(-0.123, 0.745, 131, 67); }
MandelbrotView juliaDendrite() { return juliaView(-0.8, 0.156, 320, 180); }

// With whole_5000 and dendrite, a tolerance of 1/16 pixel already turns 6 to 10 escaping pixels interior
// (0.017%, some escaping after 266 iterations); 1/64 pixel at most 2.
INSTANTIATE_TEST_SUITE_P(Views, MandelbrotShortcuts,
                         ::testing::Values(ViewCase{"whole", smallView(-0.5, 0.0, 3.0, 131, 67, 2000)},
                                           ViewCase{"whole_5000", smallView(-0.5, 0.0, 3.0, 320, 180, 5000)},
                                           ViewCase{"minibrot", smallView(-1.7548776662, 0.0, 0.05, 320, 180, 2000)},
                                           ViewCase{"bulb3", smallView(-0.1225, 0.7449, 0.3, 97, 61, 4000)},
                                           ViewCase{"rabbit", juliaRabbit()},
                                           ViewCase{"dendrite", juliaDendrite(), false}),
                         [](const auto& param) { return std::string(param.param.name); });

namespace {

/// The textbook loop in long double from the pixel's c in precision T: a reference a few bits finer
/// than float64 (and 40 finer than float32).
template <class T>
Image longDoubleCounts(const MandelbrotView& v) {
  const kernels::EscapeParams p = escapeParams(v, countsOnly(MandelbrotVariant::Plain));
  Image out(p.width, p.height, 1, PixelType::F32);
  for (int j = 0; j < p.height; ++j)
    for (int i = 0; i < p.width; ++i) {
      const long double cx = static_cast<T>(kernels::pixelX(p, i)), cy = static_cast<T>(kernels::pixelY(p, j));
      long double x = 0, y = 0;
      int n = 0;
      for (; n < p.maxIterations; ++n) {
        if (x * x + y * y > 65536.0L) break;
        const long double nx = x * x - y * y + cx;
        y = 2 * x * y + cy;
        x = nx;
      }
      out.at<float>(i, j) = n < p.maxIterations ? static_cast<float>(n) : kMandelbrotInterior;
    }
  return out;
}

double mismatchFraction(const Image& a, const Image& b) {
  const auto x = a.samples<float>(), y = b.samples<float>();
  std::size_t n = 0;
  for (std::size_t i = 0; i < x.size(); ++i) n += x[i] != y[i];
  return static_cast<double>(n) / static_cast<double>(x.size());
}

}  // namespace

/// The optimized arithmetic one step at a time with the exact test before every step: what the chunks
/// and their replay must reproduce.
template <class T>
Image halvedStepCounts(const MandelbrotView& v) {
  const kernels::EscapeParams p = escapeParams(v, countsOnly());
  Image out(p.width, p.height, 1, PixelType::F32);
  for (int j = 0; j < p.height; ++j)
    for (int i = 0; i < p.width; ++i) {
      const T px = static_cast<T>(kernels::pixelX(p, i)), py = static_cast<T>(kernels::pixelY(p, j));
      T X = p.julia ? px + px : T(0), y = p.julia ? py : T(0);
      const T c2x = p.julia ? T(2) * static_cast<T>(p.juliaX) : px + px;
      const T cy = p.julia ? static_cast<T>(p.juliaY) : py;
      int n = 0;
      for (; n < p.maxIterations; ++n) {
        if (!(kernels::modulus2Halved(X, y) <= T(kernels::kEscapeRadius2))) break;
        kernels::escapeStepHalved(X, y, c2x, cy);
      }
      out.at<float>(i, j) = n < p.maxIterations ? static_cast<float>(n) : kMandelbrotInterior;
    }
  return out;
}

// Chunks of 8 steps tested only at their end, replayed step by step after a possible escape, and a
// step-by-step tail: the same counts as testing every step, for every iteration limit (multiples of 8
// and not), points far outside (|c| up to 2e5, beyond the escape radius) and Julia sets.
TEST(MandelbrotChunks, CountsEqualTestingEveryStep) {
  MandelbrotView tall = smallView(0.0, 0.0, 100.0, 3, 4001, 50);  // y from -2e5 to 2e5
  MandelbrotView rabbit = juliaRabbit();
  rabbit.imageWidth = 61;
  rabbit.imageHeight = 37;
  const MandelbrotView views[] = {smallView(-0.5, 0.0, 3.0, 97, 61, 1),
                                  smallView(-0.5, 0.0, 3.0, 97, 61, 7),
                                  smallView(-0.5, 0.0, 3.0, 97, 61, 9),
                                  smallView(-0.74364, 0.13183, 0.01, 61, 37, 1001),
                                  smallView(0.2925, 0.0149, 0.02, 61, 37, 1024),
                                  tall,
                                  rabbit};
  for (MandelbrotView v : views)
    for (Precision p : {Precision::F32, Precision::F64}) {
      v.precision = p;
      SCOPED_TRACE(v.centerX.toString() + " width " + v.width.toString() + " iterations " +
                   std::to_string(v.maxIterations) + " " + std::string(toString(p)));
      MandelbrotOptions chunks = countsOnly();
      chunks.periodicity = false;
      chunks.interiorTests = false;
      const Image expected = p == Precision::F32 ? halvedStepCounts<float>(v) : halvedStepCounts<double>(v);
      EXPECT_TRUE(rawNear(expected, renderRawCpu(v, chunks), 0, 0, 0));
    }
}

// The optimized algorithm's four-fma step rounds differently from the textbook step. Where the orbit is
// chaotic, any rounding changes the escape count, so both miss a long-double reference at some pixels
// (5% of the seahorse valley in float32): the optimized one must not miss more often.
TEST(MandelbrotAccuracy, OptimizedArithmeticIsAsAccurateAsTheTextbookLoop) {
  const MandelbrotView views[] = {smallView(-0.743643887037151, 0.13182590420533, 0.005, 160, 90, 1000),
                                  smallView(0.2925, 0.0149, 0.02, 160, 90, 2000),
                                  smallView(-0.5, 0.0, 3.0, 160, 90, 1000)};
  for (MandelbrotView v : views)
    for (Precision p : {Precision::F32, Precision::F64}) {
      v.precision = p;
      SCOPED_TRACE(v.centerX.toString() + " " + std::string(toString(p)));
      const Image reference = p == Precision::F32 ? longDoubleCounts<float>(v) : longDoubleCounts<double>(v);
      MandelbrotOptions optimized = countsOnly();
      optimized.periodicity = false;  // the arithmetic alone
      const double plainMiss = mismatchFraction(reference, renderRawCpu(v, countsOnly(MandelbrotVariant::Plain)));
      const double optimizedMiss = mismatchFraction(reference, renderRawCpu(v, optimized));
      EXPECT_LE(optimizedMiss, 1.25 * plainMiss + 0.002) << "plain misses " << plainMiss;
      if (p == Precision::F64) {
        EXPECT_LE(optimizedMiss, 0.01);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Precision rule

TEST(MandelbrotPrecision, LadderFollowsTheStatedRule) {
  const auto ladder = precisionLadder();
  ASSERT_EQ(ladder.size(), 2u);
  EXPECT_EQ(ladder[0].precision, Precision::F32);
  EXPECT_EQ(ladder[0].minLog2RelativeSpacing, -20.0);
  EXPECT_EQ(ladder[1].precision, Precision::F64);
  EXPECT_EQ(ladder[1].minLog2RelativeSpacing, -49.0);

  EXPECT_EQ(choosePrecision(wholeSetView()).used, Precision::F32);
  EXPECT_EQ(choosePrecision(seahorseValleyView()).used, Precision::F32);  // spacing 2.6e-6 = 2^-18.6

  // Exactly at the float32 limit (scale 1: |centre| < 1), and a hair below it.
  MandelbrotView v = smallView(0.3, 0.2, std::ldexp(1.0, -20) * 1024, 1024, 768, 500);
  EXPECT_EQ(choosePrecision(v).used, Precision::F32);
  v.width = DeepWidth::fromDouble(std::nextafter(v.widthValue(), 0.0));
  EXPECT_EQ(choosePrecision(v).used, Precision::F64);
  // The scale is max(|cx|, |cy|, 1): at centre x = -1.5 the same spacing is too fine for float32.
  v.width = DeepWidth::fromDouble(std::ldexp(1.0, -20) * 1024 * 1.25);
  EXPECT_EQ(choosePrecision(v).used, Precision::F32);
  v.centerX = DecimalNumber::fromDouble(-1.5);
  EXPECT_EQ(choosePrecision(v).used, Precision::F64);
  EXPECT_NEAR(std::exp2(choosePrecision(v).log2RelativeSpacing), std::ldexp(1.0, -20) * 1.25 / 1.5, 1e-20);
  // Supersampling refines the spacing.
  v.centerX = DecimalNumber::fromDouble(0.3);
  v.supersample = 2;
  EXPECT_EQ(choosePrecision(v).used, Precision::F64);

  // The float64 limit, then beyond it: perturbation (f64 deltas), and an error for f32 or f64 escape time.
  v = smallView(-0.75, 0.1, std::ldexp(1.0, -49) * 1000, 1000, 600, 500);
  EXPECT_EQ(choosePrecision(v).used, Precision::F64);
  v.width = DeepWidth::fromDouble(std::nextafter(v.widthValue(), 0.0));
  const PrecisionChoice deep = choosePrecision(v);
  EXPECT_EQ(deep.used, Precision::Perturbation);
  EXPECT_EQ(deep.deltas, DeepDeltaFormat::Double);
  EXPECT_EQ(deep.label(), "perturbation f64");
  EXPECT_NE(deep.describe().find("perturbation, f64 deltas (auto"), std::string::npos) << deep.describe();
  for (Precision p : {Precision::F32, Precision::F64}) {
    v.precision = p;
    try {
      choosePrecision(v);
      ADD_FAILURE() << "no PrecisionLimitError for " << toString(p);
    } catch (const PrecisionLimitError& e) {
      EXPECT_NE(std::string(e.what()).find("needs perturbation"), std::string::npos) << e.what();
    }
  }
  // Far past double's range the deltas go to floatexp; a Julia set stops where escape time does.
  v.precision = Precision::Auto;
  v.width = DeepWidth::parse("1e-1000");
  EXPECT_EQ(choosePrecision(v).deltas, DeepDeltaFormat::FloatExp);
  EXPECT_EQ(choosePrecision(v).label(), "perturbation floatexp");
  v.julia = true;
  EXPECT_THROW(choosePrecision(v), PrecisionLimitError);
  v.julia = false;

  // Forcing is honoured (within float64's reach) and says when it is too coarse.
  v = smallView(-0.75, 0.1, 1e-6, 1000, 600, 500, Precision::F32);
  const PrecisionChoice forced = choosePrecision(v);
  EXPECT_EQ(forced.used, Precision::F32);
  EXPECT_TRUE(forced.forced);
  EXPECT_TRUE(forced.belowLimit);
  EXPECT_NE(forced.describe().find("expect blocks"), std::string::npos) << forced.describe();
  v.precision = Precision::F64;
  EXPECT_FALSE(choosePrecision(wholeSetView()).belowLimit);
  EXPECT_EQ(choosePrecision(v).used, Precision::F64);
  v.width = DeepWidth::fromDouble(3);
  EXPECT_EQ(choosePrecision(v).used, Precision::F64);  // f64 where f32 would do: fine
  v.precision = Precision::Perturbation;
  EXPECT_EQ(choosePrecision(v).used, Precision::Perturbation);  // forced at any depth, for comparisons
  EXPECT_EQ(parseEnumOrThrow<Precision>("f32"), Precision::F32);
  EXPECT_THROW(parseEnumOrThrow<Precision>("f16"), std::invalid_argument);
}

TEST(MandelbrotPrecision, AutoIterationsGrowWithZoom) {
  EXPECT_EQ(autoIterations(DeepWidth::fromDouble(3.0)), 256);
  EXPECT_EQ(autoIterations(DeepWidth::fromDouble(30.0)), 256);
  EXPECT_EQ(autoIterations(DeepWidth::fromDouble(0.005)), 1348);  // round(256 * (1 + log10(600))^1.25)
  EXPECT_EQ(autoIterations(DeepWidth::fromDouble(1e-12)), 6611);
  EXPECT_EQ(autoIterations(DeepWidth::parse("3e-100")), 81967);  // round(256 * 101^1.25)
  int previous = 0;
  for (double w = 3; w > 1e-15; w /= 3) {
    const int n = autoIterations(DeepWidth::fromDouble(w));
    EXPECT_GE(n, previous);
    previous = n;
  }
  EXPECT_EQ(autoIterations(DeepWidth::parse("1e-100000")), kMaxMandelbrotIterations);
  EXPECT_THROW(DeepWidth::fromDouble(0.0), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Bad arguments

TEST(MandelbrotArguments, BadViewsThrowOneClearSentence) {
  auto message = [](MandelbrotView v) -> std::string {
    try {
      validate(v);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  // A width is valid by construction: zero, negative, NaN and out of range fail where it is made.
  for (double bad : {0.0, -1.0, std::nan(""), 1e300}) {
    try {
      (void)DeepWidth::fromDouble(bad);
      ADD_FAILURE() << "no exception for width " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("width"), std::string::npos) << e.what();
    }
  }
  MandelbrotView v;
  v.imageWidth = 0;
  EXPECT_NE(message(v).find("image size 0x1080 is empty"), std::string::npos) << message(v);
  v = {};
  v.maxIterations = 0;
  EXPECT_NE(message(v).find("0 iterations are not allowed: use 1 to 16777216"), std::string::npos) << message(v);
  v.maxIterations = kMaxMandelbrotIterations + 1;
  EXPECT_NE(message(v).find("iterations are not allowed"), std::string::npos) << message(v);
  v = {};
  v.centerX = DecimalNumber::fromDouble(11);
  EXPECT_NE(message(v).find("within +-10"), std::string::npos) << message(v);
  v = {};
  v.julia = true;
  v.juliaY = std::numeric_limits<double>::infinity();
  EXPECT_NE(message(v).find("Julia constant"), std::string::npos) << message(v);
  v = {};
  v.supersample = 5;
  EXPECT_NE(message(v).find("supersampling 5"), std::string::npos) << message(v);
  v = {};
  v.imageWidth = 16384;
  v.supersample = 4;
  EXPECT_NE(message(v).find("exceeds the limit"), std::string::npos) << message(v);
  EXPECT_EQ(message(MandelbrotView{}), "no exception");

  EXPECT_THROW(renderRawCpu(smallView(0, 0, 1, 0, 4, 10)), std::invalid_argument);
  EXPECT_THROW(renderRawCpu(smallView(0, 0, 1, 4, 4, 0)), std::invalid_argument);
}

TEST(MandelbrotArguments, PointsParseStrictly) {
  EXPECT_EQ(parsePoint("-0.743643887037151,0.13182590420533", "c")[0], -0.743643887037151);
  EXPECT_EQ(parsePoint("1e-3, -2", "c")[1], -2.0);
  EXPECT_EQ(parsePoint("+1,+0.5", "c")[0], 1.0);
  // "+-1" was read as -1 (the '+' dropped, then a sign accepted); fuzz-found class of input.
  for (const char* bad : {"", "1", "1,", ",2", "1;2", "a,b", "1,2,3", "1,nan", "inf,0", "+-1,0", "0,+-2", "++1,0"})
    EXPECT_THROW(parsePoint(bad, "--center"), std::invalid_argument) << bad;
  try {
    parsePoint("1;2", "--center");
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--center '1;2' is not a point: write two finite numbers as X,Y (e.g. -0.5,0)");
  }
}

// ---------------------------------------------------------------------------------------------
// Palettes and colouring

TEST(MandelbrotPalettes, BuiltInsGradientsAndErrors) {
  ASSERT_EQ(paletteNames().size(), 5u);
  for (const std::string& name : paletteNames()) {
    const Palette p = Palette::named(name);
    EXPECT_EQ(p.name(), name);
    const auto table = p.table();
    EXPECT_EQ(table[0], p.stops().front().colour) << name;  // entry 0 is position 0, the first stop
    // Cyclic: the last entry is close to the first (no seam at the wrap).
    for (int c = 0; c < 3; ++c) {
      const int first = (&table.front().r)[c], last = (&table.back().r)[c];
      EXPECT_LE(std::abs(first - last), 10) << name << " channel " << c;
    }
  }
  const Palette gray = Palette::named("grayscale");
  EXPECT_EQ(gray.at(0.25), (Rgba8{128, 128, 128, 255}));
  EXPECT_EQ(gray.at(0.5), (Rgba8{255, 255, 255, 255}));
  EXPECT_EQ(gray.at(1.75), (Rgba8{128, 128, 128, 255}));  // wraps
  const Palette classic = Palette::named("classic");
  EXPECT_EQ(classic.at(0.16), (Rgba8{32, 107, 203, 255}));

  const Palette custom = parsePalette("0:#000000,0.25:#ff0000,0.5:#00ff80");
  EXPECT_EQ(custom.name(), "custom");
  EXPECT_EQ(custom.stops().size(), 3u);
  EXPECT_EQ(custom.at(0.25), (Rgba8{255, 0, 0, 255}));
  EXPECT_EQ(custom.at(0.75), (Rgba8{0, 128, 64, 255}));  // halfway from the last stop back to the first
  EXPECT_EQ(Palette::parseGradient(custom.gradientText()), custom);
  EXPECT_EQ(parsePalette("fire"), Palette::named("fire"));

  EXPECT_THROW(Palette::named("plasma"), std::invalid_argument);
  for (const char* bad :
       {"0:#00000", "0:000000,0.5:#ffffff", "0.5:#000000,0.2:#ffffff", "1:#000000", "x:#000000", "0:#gg0000", ""})
    EXPECT_THROW(Palette::parseGradient(bad), std::invalid_argument) << bad;
  try {
    Palette::named("plasma");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("classic, fire, ice, grayscale, rainbow"), std::string::npos) << e.what();
  }
}

// Found by tests/fuzz/cli_numbers (regressions/gradient_position_digits): gradientText wrote positions
// with 10 digits, so a saved gradient reopened (PNG field, GUI line) as another one, or not at all when
// two stops printed alike.
TEST(MandelbrotPalettes, GradientTextKeepsEveryDigitOfThePositions) {
  const Palette odd = Palette::parseGradient("0:#000000,0.51999999441:#ffffff");
  EXPECT_EQ(Palette::parseGradient(odd.gradientText()), odd);
  const Palette close = Palette::parseGradient("0.52:#000000,0.52000000001:#ffffff,0.9:#102030");
  EXPECT_EQ(Palette::parseGradient(close.gradientText()), close);
  const Palette sixths = Palette::named("rainbow");
  EXPECT_EQ(Palette::parseGradient(sixths.gradientText()).stops(), sixths.stops());
  // Short positions stay short.
  EXPECT_EQ(Palette::parseGradient("0:#000764,0.16:#206bcb,0.5:#ffffff").gradientText(),
            "0:#000764,0.16:#206bcb,0.5:#ffffff");
}

TEST(MandelbrotPalettes, OpaqueImagesLoseTheirAlphaOnly) {
  Image rgba = test::randomImage(13, 7, 4, PixelType::U8, 3);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 13; ++x) rgba.at<std::uint8_t>(x, y, 3) = 255;
  const Image rgb = opaqueToRgb(rgba);
  ASSERT_EQ(rgb.describe(), "13x7 RGB u8");
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 13; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(rgb.at<std::uint8_t>(x, y, c), rgba.at<std::uint8_t>(x, y, c));
  rgba.at<std::uint8_t>(12, 6, 3) = 254;  // one translucent pixel keeps the alpha
  EXPECT_EQ(opaqueToRgb(rgba), rgba);
  const Image gray = test::randomImage(5, 5, 1, PixelType::F32, 4);
  EXPECT_EQ(opaqueToRgb(gray), gray);
}

TEST(MandelbrotPalettes, CpuColouringFollowsTheFormula) {
  Image raw(4, 2, 1, PixelType::F32);
  const float values[8] = {-1.f, 0.f, 8.f, 16.f, 24.f, 32.f, 4.f, -1.f};
  for (int k = 0; k < 8; ++k) raw.samples<float>()[k] = values[k];
  Colouring c;
  c.palette = Palette::named("grayscale");
  c.interior = {1, 2, 3, 255};
  const Image rgba = colourRaw(raw, c);
  ASSERT_EQ(rgba.describe(), "4x2 RGBA u8");
  EXPECT_EQ(rgba.at<std::uint8_t>(0, 0, 0), 1);  // interior colour
  EXPECT_EQ(rgba.at<std::uint8_t>(0, 0, 2), 3);
  EXPECT_EQ(rgba.at<std::uint8_t>(1, 0, 0), 0);    // nu 0: position 0, black
  EXPECT_EQ(rgba.at<std::uint8_t>(2, 0, 0), 128);  // nu 8: position 0.25
  EXPECT_EQ(rgba.at<std::uint8_t>(3, 0, 0), 255);  // nu 16: position 0.5, white
  EXPECT_EQ(rgba.at<std::uint8_t>(1, 1, 0), 0);    // nu 32: one full cycle
  c.offset = 0.25;
  EXPECT_EQ(colourRaw(raw, c).at<std::uint8_t>(1, 0, 0), 128);  // the offset shifts the palette
  c.offset = 0;
  c.density = 2;
  EXPECT_EQ(colourRaw(raw, c).at<std::uint8_t>(2, 0, 0), 255);  // density 2: nu 8 is half a cycle
  // Supersampling 2 averages 2x2 samples.
  c.density = 1;
  const Image half = colourRaw(raw, c, 2);
  ASSERT_EQ(half.describe(), "2x1 RGBA u8");
  EXPECT_EQ(half.at<std::uint8_t>(1, 0, 0), (128 + 255 + 64 + 1) / 4);  // nu 8, 16, 4 and an interior (1)
  c.density = 0;
  EXPECT_THROW(colourRaw(raw, c), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// PNG metadata

TEST(MandelbrotPng, TextFieldsRoundTripTheView) {
  MandelbrotView v =
      smallView(-0.743643887037151, 0.13182590420533, 1.2345678901234567e-9, 33, 17, 4321, Precision::F64);
  v.julia = true;
  v.juliaX = -0.8;
  v.juliaY = 0.156;
  v.supersample = 2;
  Colouring c;
  c.palette = parsePalette("0:#102030,0.4:#ffeedd");
  c.offset = 0.375;
  c.density = 2.5;
  c.interior = {9, 8, 7, 255};
  const auto text = pngTextFromView(v, c, choosePrecision(v));
  EXPECT_EQ(viewFromPngText(text), v);
  EXPECT_EQ(colouringFromPngText(text), c);

  const fs::path path = tempPath("view.png");
  const Image rgba = test::randomImage(v.imageWidth, v.imageHeight, 4, PixelType::U8, 7);
  savePngWithText(rgba, path, text);
  const auto read = readPngText(path);
  EXPECT_EQ(viewFromPngText(read), v);
  EXPECT_EQ(colouringFromPngText(read), c);
  EXPECT_EQ(loadImage(path), rgba);
  fs::remove(path);

  auto missing = text;
  missing.erase("gpulab.center");
  try {
    viewFromPngText(missing);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "the PNG has no gpulab Mandelbrot view (field gpulab.center is missing)");
  }
  auto bad = text;
  bad["gpulab.iterations"] = "many";
  EXPECT_THROW(viewFromPngText(bad), std::invalid_argument);
  bad = text;
  bad["gpulab.width"] = "0";
  EXPECT_THROW(viewFromPngText(bad), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// CPU baseline

TEST(MandelbrotCpu, ThreadCountDoesNotChangeTheImage) {
  const MandelbrotView v = smallView(-0.74364, 0.13183, 0.01, 173, 97, 1500);
  MandelbrotOptions one, many;
  one.cpuThreads = 1;
  many.cpuThreads = 7;
  const Image a = renderRawCpu(v, one), b = renderRawCpu(v, many);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.describe(), "173x97 gray f32");
}

TEST(MandelbrotCpu, ProgressAndCancel) {
  const MandelbrotView v = smallView(-0.5, 0.0, 3.0, 64, 48, 200);
  std::vector<double> reported;
  CpuControl control;
  control.progress = [&](double p) { reported.push_back(p); };
  renderRawCpu(v, {}, control);
  ASSERT_FALSE(reported.empty());
  EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end()));
  EXPECT_EQ(reported.back(), 1.0);

  std::atomic<bool> cancel{true};
  control.cancel = &cancel;
  EXPECT_THROW(renderRawCpu(v, {}, control), OperationCancelled);
}

TEST(MandelbrotCpu, SupersampledRawIsLarger) {
  MandelbrotView v = smallView(-0.5, 0.0, 3.0, 20, 10, 100);
  v.supersample = 3;
  const Image raw = renderRawCpu(v);
  EXPECT_EQ(raw.describe(), "60x30 gray f32");
  EXPECT_EQ(colourRaw(raw, Colouring{}, 3).describe(), "20x10 RGBA u8");
}

// ---------------------------------------------------------------------------------------------
// The CLI

TEST(MandelbrotCli, BadArgumentsExitWithCode2AndOneLine) {
  if (!fs::exists(GPULAB_CLI_PATH)) GTEST_SKIP() << "gpulab-cli is not built";
  const std::string out = tempPath("bad.png").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--width", "0"}, "width"},
      {{"--width", "1e-100001"}, "width"},
      {{"--width", "nan"}, "width"},
      {{"--center", "0.5x,0"}, "--center x"},
      {{"--size", "0x100"}, "image size 0x100 is empty"},
      {{"--size", "640"}, "--size '640' is not WIDTHxHEIGHT"},
      {{"--iters", "0"}, "0 iterations are not allowed"},
      {{"--iters", "ten"}, "--iters 'ten' is not a whole number or 'auto'"},
      {{"--center", "1;2"}, "--center '1;2' is not a point"},
      {{"--julia", "0.3"}, "--julia '0.3' is not a point"},
      {{"--precision", "f16"}, "unknown precision 'f16'"},
      {{"--palette", "plasma"}, "unknown palette 'plasma'"},
      {{"--width", "1e-14", "--center", "-0.75,0.1", "--precision", "f64"}, "needs perturbation"},
  };
  for (const auto& [extra, expected] : cases) {
    std::vector<std::string> args = {"mandelbrot", "--device", "cpu", "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    if (std::find(extra.begin(), extra.end(), "--size") == extra.end()) args.insert(args.end(), {"--size", "16x8"});
    const Outcome o = runCli(args);
    EXPECT_EQ(o.exitCode, 2) << describe(o);
    EXPECT_NE(o.err.find(expected), std::string::npos) << describe(o);
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << describe(o);
    EXPECT_FALSE(fs::exists(out));
  }
  const Outcome noOut = runCli({"mandelbrot", "--device", "cpu", "--size", "16x8"});
  EXPECT_EQ(noOut.exitCode, 2) << describe(noOut);
  const Outcome jpg = runCli({"mandelbrot", "--device", "cpu", "--size", "16x8", "--out", "x.jpg"});
  EXPECT_EQ(jpg.exitCode, 2) << describe(jpg);
}

TEST(MandelbrotCli, CpuRenderWritesPngWithTheViewAndRawCounts) {
  if (!fs::exists(GPULAB_CLI_PATH)) GTEST_SKIP() << "gpulab-cli is not built";
  const fs::path png = tempPath("cpu.png"), npy = tempPath("cpu.npy");
  const Outcome o =
      runCli({"mandelbrot", "--device", "cpu", "--center", "-0.75,0.1", "--width", "0.05", "--size", "41x23", "--iters",
              "700", "--palette", "ice", "--raw", npy.string(), "--out", png.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("precision: f32 (auto"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cpu compute"), std::string::npos) << o.out;
  const MandelbrotView expected = smallView(-0.75, 0.1, 0.05, 41, 23, 700);
  EXPECT_EQ(viewFromPngText(readPngText(png)), expected);
  EXPECT_EQ(colouringFromPngText(readPngText(png)).palette.name(), "ice");
  const Image raw = loadImage(npy);
  EXPECT_EQ(raw, renderRawCpu(expected));
  Colouring ice;
  ice.palette = Palette::named("ice");
  EXPECT_EQ(loadImage(png), opaqueToRgb(colourRaw(raw, ice)));  // opaque: written as RGB
  fs::remove(png);
  fs::remove(npy);
}

// The 8K still of docs/: 7680x4320 on the GPU, no supersampling unless asked for, written as RGB
// with its view. (The CPU path renders the same image; it is the GPU's memory this checks.)
TEST(MandelbrotCli, Renders8kOnTheGpu) {
  GPULAB_REQUIRE_GPU();
  if (!fs::exists(GPULAB_CLI_PATH)) GTEST_SKIP() << "gpulab-cli is not built";
  const fs::path png = tempPath("8k.png");
  const Outcome o =
      runCli({"mandelbrot", "--device", "gpu", "--size", "7680x4320", "--center", "-1.7548776662,0", "--width", "0.05",
              "--density", "0.2", "--offset", "0.55", "--reps", "1", "--out", png.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("7680x4320, 918 iterations"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("gpu compute (optimized)"), std::string::npos) << o.out;
  const MandelbrotView stored = viewFromPngText(readPngText(png));
  EXPECT_EQ(stored.imageWidth, 7680);
  EXPECT_EQ(stored.imageHeight, 4320);
  EXPECT_EQ(stored.supersample, 1);
  EXPECT_EQ(loadImage(png).describe(), "7680x4320 RGB u8");
  fs::remove(png);
}

// ---------------------------------------------------------------------------------------------
// GPU: the same counts as the CPU, for every variant, precision, mode and an odd, prime and tiny size

struct GpuCase {
  const char* name;
  MandelbrotView view;
};

class MandelbrotGpu : public ::testing::TestWithParam<GpuCase> {};

TEST_P(MandelbrotGpu, CountsAndSmoothValuesMatchTheCpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  MandelbrotOptions noPeriodicity = countsOnly(), noShortcuts = countsOnly();
  noPeriodicity.periodicity = false;
  noShortcuts.periodicity = false;
  noShortcuts.interiorTests = false;
  for (Precision p : {Precision::F32, Precision::F64}) {
    MandelbrotView v = GetParam().view;
    if (v.precision == Precision::Auto)
      v.precision = p;
    else if (p == Precision::F32)
      continue;  // the case fixes its own precision
    for (MandelbrotVariant variant : {MandelbrotVariant::Optimized, MandelbrotVariant::Plain}) {
      SCOPED_TRACE(std::string(toString(v.precision)) + " " + std::string(toString(variant)));
      renderer.compute(gpu, v, countsOnly(variant));
      EXPECT_TRUE(
          rawNear(renderRawCpu(v, countsOnly(variant)), renderer.downloadRaw(gpu), 0, 0, kAllowedCountMismatch));
      MandelbrotOptions smooth;
      smooth.variant = variant;
      renderer.compute(gpu, v, smooth);
      EXPECT_TRUE(rawNear(renderRawCpu(v, smooth), renderer.downloadRaw(gpu), 2e-4, 1e-6, kAllowedCountMismatch));
    }
    // Each shortcut switched off runs the same on both sides; on the GPU too, the interior tests change
    // nothing and periodicity turns only late escapers interior.
    SCOPED_TRACE(std::string(toString(v.precision)) + " optimized, shortcuts off");
    renderer.compute(gpu, v, noShortcuts);
    const Image none = renderer.downloadRaw(gpu);
    EXPECT_TRUE(rawNear(renderRawCpu(v, noShortcuts), none, 0, 0, kAllowedCountMismatch));
    renderer.compute(gpu, v, noPeriodicity);
    const Image interiorTestsOnly = renderer.downloadRaw(gpu);
    EXPECT_TRUE(rawNear(renderRawCpu(v, noPeriodicity), interiorTestsOnly, 0, 0, kAllowedCountMismatch));
    EXPECT_TRUE(rawNear(none, interiorTestsOnly, 0, 0, 0)) << "the interior tests changed GPU counts";
    renderer.compute(gpu, v, countsOnly());
    EXPECT_TRUE(onlyLateEscapersBecameInterior(interiorTestsOnly, renderer.downloadRaw(gpu)));
  }
}

MandelbrotView deepF64() {
  MandelbrotView v = smallView(-0.74364388703715, 0.13182590420533, 2e-7, 257, 131, 3000);
  return v;
}

INSTANTIATE_TEST_SUITE_P(
    Views, MandelbrotGpu,
    ::testing::Values(
        GpuCase{"whole_1x1", smallView(-0.5, 0.0, 3.0, 1, 1, 500)},
        GpuCase{"whole_2x3", smallView(-0.5, 0.0, 3.0, 2, 3, 500)},
        GpuCase{"whole_13x12", smallView(-0.5, 0.0, 3.0, 13, 12, 1000)},
        GpuCase{"whole_257x131", smallView(-0.5, 0.0, 3.0, 257, 131, 1000)},
        GpuCase{"seahorse_640x360", smallView(-0.743643887037151, 0.13182590420533, 0.005, 640, 360, 1000)},
        GpuCase{"bulb3_97x61", smallView(-0.1225, 0.7449, 0.3, 97, 61, 4000)}, GpuCase{"rabbit_131x67", juliaRabbit()},
        GpuCase{"deep_f64_257x131", deepF64()}, GpuCase{"dendrite_320x180", juliaDendrite()},
        GpuCase{"far_outside_3x4001", smallView(0.0, 0.0, 100.0, 3, 4001, 50)},
        GpuCase{"full_hd_whole", smallView(-0.5, 0.0, 3.0, 1920, 1080, 300)},
        GpuCase{"full_hd_seahorse", smallView(-0.743643887037151, 0.13182590420533, 0.005, 1920, 1080, 1000)}),
    [](const auto& param) { return std::string(param.param.name); });

TEST(MandelbrotGpuRenderer, RecolouringLeavesTheRawPlaneUntouched) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  const MandelbrotView v = smallView(-0.743643887037151, 0.13182590420533, 0.005, 321, 181, 1000);
  renderer.compute(gpu, v);
  const Image rawBefore = renderer.downloadRaw(gpu);
  Colouring a;
  Colouring b;
  b.palette = Palette::named("fire");
  b.offset = 0.3;
  b.density = 3;
  renderer.colour(gpu, a);
  const Image rgbaA = renderer.downloadRgba(gpu);
  renderer.colour(gpu, b);
  const Image rgbaB = renderer.downloadRgba(gpu);
  renderer.colour(gpu, a);  // back again, without a compute in between
  const Image rgbaA2 = renderer.downloadRgba(gpu);
  const Image rawAfter = renderer.downloadRaw(gpu);
  ASSERT_EQ(rawBefore.sizeBytes(), rawAfter.sizeBytes());
  EXPECT_EQ(std::memcmp(rawBefore.data(), rawAfter.data(), rawBefore.sizeBytes()), 0) << "the raw plane changed";
  EXPECT_NE(rgbaA, rgbaB);  // the recolour did something
  EXPECT_EQ(rgbaA, rgbaA2);
  EXPECT_TRUE(test::imagesNear(colourRaw(rawBefore, a), rgbaA, 1.0));
  EXPECT_TRUE(test::imagesNear(colourRaw(rawBefore, b), rgbaB, 1.0));
  EXPECT_THROW(MandelbrotRenderer().colour(gpu, a), std::logic_error);

  // BGRA into caller memory with a padded pitch: the same pixels, red and blue swapped; padding untouched.
  renderer.colour(gpu, b, ChannelOrder::Bgra);
  const std::size_t pitch = static_cast<std::size_t>(v.imageWidth) * 4 + 12;
  std::vector<std::byte> bgra(pitch * v.imageHeight, std::byte{0x5a});
  renderer.downloadRgba(gpu, bgra.data(), pitch);
  for (int y = 0; y < v.imageHeight; ++y)
    for (int x = 0; x < v.imageWidth; ++x) {
      const auto* px = reinterpret_cast<const std::uint8_t*>(bgra.data() + y * pitch + x * 4);
      ASSERT_EQ(px[0], rgbaB.at<std::uint8_t>(x, y, 2)) << x << "," << y;
      ASSERT_EQ(px[1], rgbaB.at<std::uint8_t>(x, y, 1)) << x << "," << y;
      ASSERT_EQ(px[2], rgbaB.at<std::uint8_t>(x, y, 0)) << x << "," << y;
      ASSERT_EQ(px[3], rgbaB.at<std::uint8_t>(x, y, 3)) << x << "," << y;
    }
  for (int y = 0; y < v.imageHeight; ++y)
    ASSERT_EQ(bgra[y * pitch + pitch - 1], std::byte{0x5a}) << "padding of row " << y;
  EXPECT_THROW(renderer.downloadRgba(gpu, bgra.data(), pitch - 13), std::invalid_argument);
  const Image rawLast = renderer.downloadRaw(gpu);
  EXPECT_EQ(std::memcmp(rawBefore.data(), rawLast.data(), rawBefore.sizeBytes()), 0);
}

TEST(MandelbrotGpuRenderer, SupersampledColourAveragesLikeTheCpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  MandelbrotView v = smallView(-0.75, 0.1, 0.05, 53, 29, 800);
  v.supersample = 3;
  Colouring c;
  c.palette = Palette::named("rainbow");
  const Image rgba = renderMandelbrot(gpu, renderer, v, c);
  EXPECT_EQ(rgba.describe(), "53x29 RGBA u8");
  const Image raw = renderer.downloadRaw(gpu);
  EXPECT_EQ(raw.describe(), "159x87 gray f32");
  EXPECT_TRUE(test::imagesNear(colourRaw(raw, c, 3), rgba, 1.0));
}

// Frames of different sizes and variants reuse the buffers of the largest one; alternating views (so a
// launch that skipped its work would leave the other view's values behind) catch stale results.
TEST(MandelbrotGpuRenderer, BuffersAreReusedAcrossViewsAndVariants) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  const MandelbrotView big = smallView(-0.5, 0.0, 3.0, 301, 157, 400);
  const MandelbrotView small = smallView(-0.74364, 0.13183, 0.01, 37, 19, 900);
  const MandelbrotView tiny = smallView(0.3, 0.5, 0.01, 1, 1, 900);
  renderer.compute(gpu, big, countsOnly());
  renderer.colour(gpu, Colouring{});
  gpu.synchronize();
  const std::size_t bytes = renderer.deviceBytes();
  const float* rawData = renderer.rawDeviceData();
  for (int round = 0; round < 3; ++round)
    for (MandelbrotVariant variant : {MandelbrotVariant::Optimized, MandelbrotVariant::Plain}) {
      SCOPED_TRACE("round " + std::to_string(round) + " " + std::string(toString(variant)));
      renderer.compute(gpu, small, countsOnly(variant));
      EXPECT_TRUE(rawNear(renderRawCpu(small, countsOnly(variant)), renderer.downloadRaw(gpu), 0, 0, 0));
      renderer.compute(gpu, tiny, countsOnly(variant));
      EXPECT_TRUE(rawNear(renderRawCpu(tiny, countsOnly(variant)), renderer.downloadRaw(gpu), 0, 0, 0));
      renderer.compute(gpu, big, countsOnly(variant));
      EXPECT_TRUE(
          rawNear(renderRawCpu(big, countsOnly(variant)), renderer.downloadRaw(gpu), 0, 0, kAllowedCountMismatch));
      renderer.colour(gpu, Colouring{});
    }
  EXPECT_EQ(renderer.deviceBytes(), bytes) << "a frame no larger than the first allocated again";
  EXPECT_EQ(renderer.rawDeviceData(), rawData);
}

TEST(MandelbrotGpuRenderer, BenchmarkCountsTheSameIterationsAsTheCpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  const MandelbrotView v = smallView(-0.743643887037151, 0.13182590420533, 0.005, 192, 108, 1000);
  MeasurePolicy policy;
  policy.gpuWarmup = 1;
  policy.gpuReps = 3;
  const Measurement r = measureMandelbrot(v, {}, {&gpu, &renderer, false, {}}, policy);
  ASSERT_TRUE(r.gpu.has_value());
  EXPECT_EQ(r.gpu->compute.reps, 3);
  EXPECT_GT(r.gpu->compute.minMs, 0.0);
  EXPECT_EQ(r.params.at("precision"), "f32");
  EXPECT_EQ(r.workUnit, WorkUnit::Iterations);
  EXPECT_EQ(r.work, countIterations(renderRawCpu(v, countsOnly()), v.maxIterations));
  EXPECT_GT(r.gpuRate().value_or(0), 0.0);
  EXPECT_FALSE(r.cpu.has_value());
}

// Auto goes on past float64 (perturbation, test_deep_zoom); float64 forced there is refused up front.
TEST(MandelbrotGpuRenderer, ForcedFloat64BeyondItsReachLaunchesNothing) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  EXPECT_THROW(renderer.compute(gpu, smallView(-0.75, 0.1, 1e-14, 100, 100, 100, Precision::F64)), PrecisionLimitError);
  EXPECT_FALSE(renderer.hasFrame());
  EXPECT_THROW(renderer.compute(gpu, smallView(-0.75, 0.1, 0.0, 100, 100, 100)), std::invalid_argument);
  EXPECT_EQ(renderer.deviceBytes(), 0u);
}
