// Deep zoom: floatexp arithmetic against long double and MPFR, decimal and width parsing, the MPFR
// reference orbit against an independent MPFR loop, Newton's method, and the perturbation renderer
// (rebasing, BLA, both delta formats) against the MPFR brute force at widths 1e-30, 1e-150 and 1e-320;
// on a GPU the kernel against the CPU path.
//
// Tolerances (shared/design/deep-zoom.md, section 6): the perturbation and the brute force must agree
// on interior/exterior for >= 99.5% of the pixels, and their counts must lie within 2 iterations of a
// constant offset (the median difference) for >= 99.5%: f64 deltas and a reference rounded to f64 miss a
// few chaotic pixels, a glitch moves a whole patch. The same criterion for BLA on against off. The GPU
// and the CPU run the same steps in the same order and must give identical integer counts. A loose BLA
// epsilon (2^-10) must fail the criterion, which shows the comparison can fail.
//
// The views: nuclei found with this code's Newton zoom (a chain of "half-way" zooms from near c = i,
// offset a little so the view shows the minibrot's surroundings), and the Misiurewicz point c = i itself
// at 1e-320, which lies on the boundary at every depth.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/floatexp.cuh"
#include "gpulab/kernels/mandelbrot_deep.cuh"
#include "gpulab/mandelbrot/bla_table.hpp"
#include "gpulab/mandelbrot/deep_oracle.hpp"
#include "gpulab/mandelbrot/deep_render_cpu.hpp"
#include "gpulab/mandelbrot/newton_zoom.hpp"
#include "gpulab/mandelbrot/renderer.hpp"
#include "internal/deep_params.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
namespace k = gpulab::kernels;

namespace {

// ---------------------------------------------------------------------------------------------
// Views

// Period-169 nucleus near c = i (size 3.2e-33), from the Newton zoom chain.
constexpr const char* kNucleus169X = "-0.009433196399017599506077512077648787543894175668132768467315543513676489081";
constexpr const char* kNucleus169Y = "1.0062751913365390747669951099157150678923746998302193364765178691256309355";

struct DeepCase {
  const char* name;
  std::string x, y, width;
  int imageWidth, imageHeight, maxIterations;
};

// Failure messages name the view, not its bytes.
void PrintTo(const DeepCase& c, std::ostream* os) { *os << c.name; }

std::string misiurewiczY() { return "1." + std::string(320, '0') + "17"; }  // 1 + 1.7e-321

std::vector<DeepCase> deepCases() {
  return {
      // Surroundings of the period-169 minibrot, 300 widths away; counts 616..949, Double format.
      {"w1e_30", "-0.009433196399017599506077512077418787543894175668132768467315543513676489081",
       "1.0062751913365390747669951099160250678923746998302193364765178691256309355", "1e-30", 32, 24, 3000},
      // The period-169 minibrot itself, 21 interior pixels at 3,000 iterations.
      {"minibrot3e_32", "-0.009433196399017599506077512077647287543894175668132768467315543513676489081",
       "1.0062751913365390747669951099157159678923746998302193364765178691256309355", "3e-32", 32, 24, 3000},
      // Next to the period-4662 nucleus (size 1e-177); counts 11324..11861, FloatExp format; the
      // reference escapes before the slowest pixels, which rebase at its end.
      {"w1e_150",
       "-0.00943319639901759950607686587478033447114342406349377262820812738311448077682854534739016679041700171629166"
       "284238524803518461663648084821878693951830836759049932656964",
       "1.00627519133653907476699536967365453828792621294036441742110885340841927537026192828081698440337871820991840"
       "5202709952572096855909757334272677730398213160350194588520558",
       "1e-150", 32, 24, 20000},
      // Beside the Misiurewicz point c = i; counts 855..879, FloatExp format with squared deltas far
      // below the double range.
      {"w1e_320", "3.1e-321", misiurewiczY(), "1e-320", 32, 24, 5000},
  };
}

DeepView viewOf(const DeepCase& c) {
  DeepView v;
  v.centerX = DecimalNumber::parse(c.x);
  v.centerY = DecimalNumber::parse(c.y);
  v.width = DeepWidth::parse(c.width);
  v.imageWidth = c.imageWidth;
  v.imageHeight = c.imageHeight;
  v.maxIterations = c.maxIterations;
  return v;
}

// The orbit and table of a view, reference at the view's centre.
struct Prepared {
  DeepView view;
  ReferenceOrbit orbit;
  BlaTable table;
};

Prepared prepare(const DeepView& view, double epsilon = BlaTable::kDefaultEpsilon) {
  ReferenceOrbit orbit =
      ReferenceOrbit::compute(view.centerX, view.centerY, view.maxIterations, referencePrecisionBits(view));
  BlaTable table(orbit, maxPixelOffset(view, orbit), epsilon);
  return {view, std::move(orbit), std::move(table)};
}

// The brute force of every pixel, on two threads (MPFR is the slow part of this suite).
std::vector<float> bruteForce(const DeepView& view, bool smooth) {
  std::vector<float> out(static_cast<std::size_t>(view.imageWidth) * view.imageHeight);
  std::atomic<int> next{0};
  auto work = [&] {
    for (int j; (j = next.fetch_add(1)) < view.imageHeight;)
      for (int i = 0; i < view.imageWidth; ++i) out[j * view.imageWidth + i] = bruteForcePixel(view, i, j, smooth);
  };
  std::thread other(work);
  work();
  other.join();
  return out;
}

// The design note's criterion: interior/exterior agreement, and counts within 2 of the median offset.
struct Agreement {
  double interiorAgreement = 0;  // fraction of pixels
  double withinOffset = 0;       // fraction of pixels: same class and (interior or |d - offset| <= 2)
  double offset = 0;
  std::string firstMiss;
};

Agreement agreement(const std::vector<float>& a, const std::vector<float>& b, int width) {
  Agreement r;
  std::vector<double> diffs;
  for (std::size_t p = 0; p < a.size(); ++p)
    if (a[p] >= 0 && b[p] >= 0) diffs.push_back(static_cast<double>(a[p]) - b[p]);
  if (!diffs.empty()) {
    std::nth_element(diffs.begin(), diffs.begin() + diffs.size() / 2, diffs.end());
    r.offset = diffs[diffs.size() / 2];
  }
  int same = 0, within = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    const bool sameClass = (a[p] < 0) == (b[p] < 0);
    same += sameClass;
    const bool ok = sameClass && (a[p] < 0 || std::fabs(a[p] - b[p] - r.offset) <= 2.0);
    within += ok;
    if (!ok && r.firstMiss.empty()) {
      std::ostringstream s;
      s << "first miss at (" << p % width << ", " << p / width << "): " << a[p] << " against " << b[p];
      r.firstMiss = s.str();
    }
  }
  r.interiorAgreement = static_cast<double>(same) / static_cast<double>(a.size());
  r.withinOffset = static_cast<double>(within) / static_cast<double>(a.size());
  return r;
}

void expectAgreement(const Agreement& r, const std::string& what) {
  EXPECT_GE(r.interiorAgreement, 0.995) << what << ": " << r.firstMiss;
  EXPECT_GE(r.withinOffset, 0.995) << what << " (offset " << r.offset << "): " << r.firstMiss;
}

// ---------------------------------------------------------------------------------------------
// Floatexp

long double valueOf(k::FloatExp a) { return std::ldexp(static_cast<long double>(a.m), a.e); }

TEST(FloatExp, RealArithmeticMatchesLongDouble) {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-4000, 4000);  // long double holds +-16382
  const long double tolerance = std::ldexp(1.0L, -52);
  for (int t = 0; t < 20000; ++t) {
    const k::FloatExp a = k::normalize(mantissa(rng), exponent(rng));
    const k::FloatExp b = k::normalize(mantissa(rng), exponent(rng) / (t % 2 ? 1 : 4000));
    ASSERT_TRUE(a.m == 0 || (std::fabs(a.m) >= 1 && std::fabs(a.m) < 2));
    const long double va = valueOf(a), vb = valueOf(b);
    // One rounding each (2^-53 of the result); a sum also drops an operand 2^64 below the other.
    const long double dropped = std::ldexp(std::max(std::fabs(va), std::fabs(vb)), -63);
    const auto check = [&](k::FloatExp got, long double want, long double slack, const char* op) {
      ASSERT_TRUE(got.m == 0 || (std::fabs(got.m) >= 1 && std::fabs(got.m) < 2)) << op << " not normalised";
      EXPECT_LE(std::fabs(valueOf(got) - want), tolerance * std::fabs(want) + slack)
          << op << " of " << va << ", " << vb;
    };
    check(k::mul(a, b), va * vb, 0, "mul");
    check(k::add(a, b), va + vb, dropped, "add");
    check(k::sub(a, b), va - vb, dropped, "sub");
    check(k::sqr(a), va * va, 0, "sqr");
    if (b.m != 0) check(k::divide(a, b), va / vb, 0, "div");
    check(k::squareRoot(a), std::sqrt(std::fabs(va)), 0, "sqrt");
    EXPECT_EQ(k::absLess(a, b), std::fabs(va) < std::fabs(vb));
  }
}

TEST(FloatExp, ComplexArithmeticIsNormwiseAccurate) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> part(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-3000, 3000);
  const long double tolerance = 4 * std::ldexp(1.0L, -53);
  for (int t = 0; t < 20000; ++t) {
    const k::ComplexExp a = k::normalize(part(rng), part(rng), exponent(rng));
    const k::ComplexExp b = k::normalize(part(rng), part(rng) * std::ldexp(1.0, -(t % 80)), exponent(rng) / 50);
    const long double ax = std::ldexp(static_cast<long double>(a.x), a.e),
                      ay = std::ldexp(static_cast<long double>(a.y), a.e);
    const long double bx = std::ldexp(static_cast<long double>(b.x), b.e),
                      by = std::ldexp(static_cast<long double>(b.y), b.e);
    const auto check = [&](k::ComplexExp got, long double wx, long double wy, long double scale, const char* op) {
      const long double gx = std::ldexp(static_cast<long double>(got.x), got.e);
      const long double gy = std::ldexp(static_cast<long double>(got.y), got.e);
      EXPECT_LE(std::hypot(gx - wx, gy - wy), tolerance * scale) << op;
    };
    const long double na = std::hypot(ax, ay), nb = std::hypot(bx, by);
    check(k::mul(a, b), ax * bx - ay * by, ax * by + ay * bx, na * nb, "mul");
    check(k::add(a, b), ax + bx, ay + by, std::max(na, nb), "add");
    check(k::sqr(a), ax * ax - ay * ay, 2 * ax * ay, na * na, "sqr");
    const k::FloatExp n2 = k::norm2(a);
    EXPECT_LE(std::fabs(valueOf(n2) - na * na), tolerance * na * na) << "norm2";
  }
}

TEST(FloatExp, ExtremeRangeAgainstMpfr) {
  // Squaring 1.1 * 2^-1000 twelve times reaches 2^-4,096,000-ish: far outside long double.
  mpfr_t x, y;
  mpfr_inits2(64, x, y, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(x, 1.1, MPFR_RNDN);
  mpfr_mul_2si(x, x, -1000, MPFR_RNDN);
  k::FloatExp f = k::normalize(1.1, -1000);
  for (int s = 0; s < 12; ++s) {
    mpfr_sqr(x, x, MPFR_RNDN);
    f = k::sqr(f);
    long e = 0;
    const double m = mpfr_get_d_2exp(&e, x, MPFR_RNDN);
    EXPECT_EQ(f.e, e - 1) << "after " << s + 1 << " squarings";
    EXPECT_NEAR(f.m, 2 * m, 1e-13);
  }
  // (x + y) with y 2^-50 below x keeps its contribution; 2^-70 below it cannot change the rounded sum.
  const k::FloatExp big = k::normalize(1.0, -2000000);
  EXPECT_EQ(k::add(big, k::normalize(1.0, -2000050)).m, 1.0 + 0x1p-50);
  EXPECT_EQ(k::add(big, k::normalize(1.0, -2000070)).m, 1.0);
  mpfr_clears(x, y, static_cast<mpfr_ptr>(nullptr));
}

TEST(FloatExp, ConversionsKeepSubnormalsZeroAndInfinity) {
  for (double v : {0.0, 1.0, -3.5, 1e-310, -4.9e-324, 2.2250738585072014e-308, 1.7e308}) {
    const k::FloatExp f = k::fromDouble(v);
    EXPECT_EQ(k::toDouble(f), v) << v;
  }
  EXPECT_EQ(k::fromDouble(0.0).e, k::kFloatExpZeroExponent);
  EXPECT_EQ(k::toDouble(k::normalize(1.5, -1080)), std::ldexp(1.5, -1080));  // rounds into the subnormals
  EXPECT_EQ(k::toDouble(k::normalize(1.0, -1100)), 0.0);
  EXPECT_TRUE(std::isinf(k::toDouble(k::normalize(1.0, 1024))));
  const k::ComplexExp c = k::fromDoubles(1e-300, 3e-320);
  EXPECT_EQ(k::toDoubleReal(c), 1e-300);
  EXPECT_EQ(k::toDoubleImag(c), 3e-320);
  EXPECT_EQ(k::mul(k::zeroExp(), k::normalize(1.0, 500000)).e, k::kFloatExpZeroExponent);
}

// ---------------------------------------------------------------------------------------------
// Numbers

TEST(DeepNumber, ParsesAndPrintsBack) {
  EXPECT_EQ(DecimalNumber::parse(" -0.00123 ").toString(), "-0.00123");
  EXPECT_EQ(DecimalNumber::parse("+.5").toString(), "0.5");
  EXPECT_EQ(DecimalNumber::parse("3.").toString(), "3");
  EXPECT_EQ(DecimalNumber::parse("1.5e-300").toString(), "1.5e-300");
  EXPECT_EQ(DecimalNumber::parse("2E+7").toString(), "20000000");
  EXPECT_EQ(DecimalNumber::parse("-0").toString(), "0");
  EXPECT_FALSE(DecimalNumber::parse("-0").negative());
  EXPECT_EQ(DecimalNumber::parse("000120.0500e2").toString(), "12005");
  const std::string longText = "-1." + std::string(200000, '3');
  const DecimalNumber longNumber = DecimalNumber::parse(longText);
  EXPECT_EQ(longNumber.digits().size(), 200001u);
  EXPECT_EQ(DecimalNumber::parse(longNumber.toString()), longNumber);
  EXPECT_DOUBLE_EQ(longNumber.toDouble(), -1.0 - 1.0 / 3.0);
  EXPECT_LT(DecimalNumber::parse("-2"), DecimalNumber::parse("-1.5"));
  EXPECT_LT(DecimalNumber::parse("1.23"), DecimalNumber::parse("1.3"));
  EXPECT_EQ(DecimalNumber::fromDouble(0.1).toString(), "0.1");
}

TEST(DeepNumber, RejectsOddInputsWithOneSentence) {
  for (const char* bad : {"", "   ", "1e", "1e+", "nan", "inf", "-", "+", ".", "1.2.3", "0x10", "1e5.5", "1 2", "--1",
                          "e5", "1e-10000000000", "1,5"}) {
    try {
      DecimalNumber::parse(bad, "centre x");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("centre x", 0), 0u) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  EXPECT_THROW(DecimalNumber::parse(std::string(DecimalNumber::kMaxLength + 1, '1')), std::invalid_argument);
}

TEST(DeepNumber, WidthParsesItsRangeAndRejectsTheRest) {
  EXPECT_EQ(DeepWidth::parse("1e-500").toString(), "1e-500");
  EXPECT_EQ(DeepWidth::parse("3.2E-1000").toString(), "3.2e-1000");
  EXPECT_EQ(DeepWidth::parse("0.005").toString(), "0.005");
  EXPECT_NEAR(DeepWidth::parse("3.2E-1000").log10(), std::log10(3.2) - 1000, 1e-9);
  EXPECT_NEAR(log2Of(DeepWidth::parse("1e-100000").value()), -100000 * std::log2(10.0), 1e-6);
  EXPECT_EQ(DeepWidth::parse("100").toString(), "100");
  EXPECT_NEAR(DeepWidth::parse("1e-300").scaled(0.5).log10(), std::log10(0.5) - 300, 1e-12);
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"0", "not positive"},  {"-0", "not positive"}, {"-1e-5", "negative"},   {"nan", "not a decimal"},
      {"1e-100001", "below"}, {"100.0001", "above"},  {"1e", "not a decimal"}, {"", "empty"}};
  for (const auto& [text, why] : bad) {
    try {
      DeepWidth::parse(text);
      ADD_FAILURE() << "accepted width \"" << text << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("width", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(DeepWidth::fromDouble(NAN), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Reference orbit

TEST(ReferenceOrbit, MatchesAnIndependentMpfrLoopStepByStep) {
  const DeepView view = viewOf(deepCases()[2]);  // 1e-150
  const int bits = referencePrecisionBits(view);
  const ReferenceOrbit orbit = ReferenceOrbit::compute(view.centerX, view.centerY, view.maxIterations, bits);
  ASSERT_TRUE(orbit.escaped());
  // The same recurrence as complex multiplication at twice the precision.
  mpfr_t x, y, cx, cy, t;
  mpfr_inits2(2 * bits, x, y, cx, cy, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_str(cx, view.centerX.toScientific().c_str(), 10, MPFR_RNDN);
  mpfr_set_str(cy, view.centerY.toScientific().c_str(), 10, MPFR_RNDN);
  mpfr_set_zero(x, 1);
  mpfr_set_zero(y, 1);
  int worst = 0;
  double worstUlps = 0;
  for (int m = 0; m < orbit.length(); ++m) {
    const double ex = mpfr_get_d(x, MPFR_RNDN), ey = mpfr_get_d(y, MPFR_RNDN);
    const std::complex<double> z = orbit.point(m);
    const double ulps =
        std::hypot(z.real() - ex, z.imag() - ey) / (std::ldexp(1.0, -52) * std::max(std::hypot(ex, ey), 1e-300));
    if (ulps > worstUlps) worstUlps = ulps, worst = m;
    const ExtendedComplex& e = orbit.pointExtended(m);
    EXPECT_NEAR(std::ldexp(e.x, e.exponent), z.real(), 1e-15 * std::abs(z) + 1e-300) << m;
    // z <- z^2 + c
    mpfr_mul(t, x, y, MPFR_RNDN);
    mpfr_sqr(x, x, MPFR_RNDN);
    mpfr_fms(x, y, y, x, MPFR_RNDN);
    mpfr_neg(x, x, MPFR_RNDN);
    mpfr_add(x, x, cx, MPFR_RNDN);
    mpfr_mul_2ui(y, t, 1, MPFR_RNDN);
    mpfr_add(y, y, cy, MPFR_RNDN);
  }
  EXPECT_LE(worstUlps, 2.0) << "at m = " << worst;
  mpfr_clears(x, y, cx, cy, t, static_cast<mpfr_ptr>(nullptr));
  // The reference escapes exactly where the brute force says C does.
  EXPECT_EQ(bruteForceEscape(view.centerX, view.centerY, view.maxIterations, bits).count, orbit.length() - 1);
}

TEST(ReferenceOrbit, RejectsBadArgumentsAndCancels) {
  const DecimalNumber zero;
  EXPECT_THROW(ReferenceOrbit::compute(zero, zero, 0, 100), std::invalid_argument);
  EXPECT_THROW(ReferenceOrbit::compute(zero, zero, 10, 10), std::invalid_argument);
  EXPECT_THROW(ReferenceOrbit::compute(DecimalNumber::parse("11"), zero, 10, 100), std::invalid_argument);
  const std::atomic<bool> cancel{true};
  EXPECT_THROW(ReferenceOrbit::compute(zero, zero, 100000, 100, &cancel), OperationCancelled);
  EXPECT_EQ(ReferenceOrbit::compute(zero, zero, 1, 100).length(), 2);
}

// ---------------------------------------------------------------------------------------------
// Newton

TEST(NewtonZoom, FindsThePeriod3Nucleus) {
  const DecimalNumber x = DecimalNumber::parse("-1.75"), y;
  const ReferenceOrbit orbit = ReferenceOrbit::compute(x, y, 100, 128);
  EXPECT_EQ(findPeriod(orbit, toExtended(0.01)), 3);
  const Nucleus n = findNucleus(x, y, 3, 200);
  EXPECT_EQ(n.period, 3);
  EXPECT_NEAR(n.x.toDouble(), -1.7548776662466927, 1e-15);
  EXPECT_EQ(n.y.toDouble(), 0.0);
  EXPECT_NEAR(toDouble(n.size), 0.019, 0.001);  // the period-3 minibrot spans about 0.019
  // Asked for period 6 from next to it, Newton lands on the same nucleus and reports its true period.
  EXPECT_EQ(findNucleus(DecimalNumber::parse("-1.7548"), y, 6, 200).period, 3);
  // Half-way from width 0.1 to it: sqrt(0.1 * 4 * 0.019).
  EXPECT_NEAR(zoomTowards(DeepWidth::parse("0.1"), n.size, 0.5).decimal().toDouble(), std::sqrt(0.1 * 4 * 0.019),
              0.003);
}

TEST(NewtonZoom, RecoversADeepNucleus) {
  // 1e-40 away from the period-169 nucleus: back to it to 60 digits.
  DeepView view;
  view.centerX = DecimalNumber::parse(std::string(kNucleus169X).substr(0, 45) + "7");
  view.centerY = DecimalNumber::parse(kNucleus169Y);
  view.width = DeepWidth::parse("1e-38");
  view.maxIterations = 2000;
  const Nucleus n = findNucleusNear(view);
  EXPECT_EQ(n.period, 169);
  EXPECT_EQ(n.x.toString().substr(0, 62), std::string(kNucleus169X).substr(0, 62));
  EXPECT_EQ(n.y.toString().substr(0, 62), std::string(kNucleus169Y).substr(0, 62));
  EXPECT_NEAR(log2Of(n.size) * std::log10(2.0), -32.5, 0.1);
}

TEST(NewtonZoom, ReportsNonConvergenceInOneSentence) {
  NewtonOptions few;
  few.maxSteps = 5;
  try {
    findNucleus(DecimalNumber::parse("0.3"), DecimalNumber::parse("0.5"), 7, 100, few);
    ADD_FAILURE() << "converged";
  } catch (const NewtonError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Newton's method found no period-7 nucleus near (0.3, 0.5): ", 0), 0u)
        << e.what();
  }
  // Far outside the set z_p overflows: an error, not a hang.
  EXPECT_THROW(findNucleus(DecimalNumber::parse("3"), DecimalNumber::parse("3"), 40, 100), NewtonError);
  // A view with no minibrot period along its centre's short orbit.
  DeepView far;
  far.centerX = DecimalNumber::parse("2");
  far.width = DeepWidth::parse("1e-3");
  far.maxIterations = 100;
  EXPECT_THROW(findNucleusNear(far), NewtonError);
  EXPECT_THROW(findNucleus(DecimalNumber(), DecimalNumber(), 0, 100), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Perturbation against the brute force

class DeepZoomCase : public ::testing::TestWithParam<DeepCase> {};

TEST_P(DeepZoomCase, PerturbationMatchesMpfrBruteForce) {
  const Prepared p = prepare(viewOf(GetParam()));
  DeepOptions options;
  options.smooth = false;
  const DeepCpuResult withBla = renderDeepCpu(p.view, p.orbit, &p.table, options);
  options.bla = false;
  const DeepCpuResult without = renderDeepCpu(p.view, p.orbit, &p.table, options);
  const std::vector<float> oracle = bruteForce(p.view, false);
  const Agreement a = agreement(withBla.raw, oracle, p.view.imageWidth);
  expectAgreement(a, "BLA against brute force");
  EXPECT_EQ(a.offset, 0.0);  // the same counting convention
  expectAgreement(agreement(without.raw, oracle, p.view.imageWidth), "no BLA against brute force");
  expectAgreement(agreement(withBla.raw, without.raw, p.view.imageWidth), "BLA against no BLA");
  EXPECT_LT(withBla.steps, without.steps);
  std::printf(
      "[ %s ] %s, reference %d points (%s) in %.1f ms at %d bits, BLA %d levels built in %.2f ms; "
      "steps per pixel %.0f with BLA, %.0f without; CPU %.1f / %.1f ms\n",
      GetParam().name, std::string(toString(chooseDeltaFormat(p.view))).c_str(), p.orbit.length(),
      p.orbit.escaped() ? "escaped" : "cap", p.orbit.milliseconds(), p.orbit.precisionBits(), p.table.levels(),
      p.table.buildMilliseconds(), withBla.steps / static_cast<double>(withBla.raw.size()),
      without.steps / static_cast<double>(without.raw.size()), withBla.milliseconds, without.milliseconds);
}

TEST_P(DeepZoomCase, SmoothCountsMatchTheBruteForce) {
  if (std::string(GetParam().name) != "w1e_30") GTEST_SKIP() << "one view suffices for nu";
  const Prepared p = prepare(viewOf(GetParam()));
  const DeepCpuResult r = renderDeepCpu(p.view, p.orbit, &p.table, {});
  expectAgreement(agreement(r.raw, bruteForce(p.view, true), p.view.imageWidth), "smooth");
}

TEST_P(DeepZoomCase, SlicedRunsMatchOneGo) {
  const Prepared p = prepare(viewOf(GetParam()));
  const k::PerturbationParams params = perturbationParams(p.view, p.orbit, {});
  const k::ReferenceView ref = referenceView(p.orbit);
  const k::BlaView bla = blaView(&p.table);
  const bool extended = params.format == k::DeltaFormat::FloatExp;
  for (int j = 0; j < p.view.imageHeight; j += 5) {
    for (int i = 0; i < p.view.imageWidth; i += 3) {
      const float whole = extended ? k::perturbationValue<true>(params, ref, bla, i, j)
                                   : k::perturbationValue<false>(params, ref, bla, i, j);
      const int slice = 1 + (i + j) % 7;
      k::DeepPixel s = extended ? k::startPixel<true>(params, i, j) : k::startPixel<false>(params, i, j);
      while (!(extended ? k::advancePixel<true>(params, ref, bla, s, slice)
                        : k::advancePixel<false>(params, ref, bla, s, slice))) {
      }
      ASSERT_EQ(s.value, whole) << "pixel (" << i << ", " << j << ") in slices of " << slice;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Views, DeepZoomCase, ::testing::ValuesIn(deepCases()),
                         [](const ::testing::TestParamInfo<DeepCase>& param) { return std::string(param.param.name); });

TEST(DeepZoom, LooseBlaEpsilonFailsTheCriterion) {
  // eps = 2^-6 keeps entries far past where the dropped dz^2 matters (20 of the 768 pixels move by more
  // than 2 iterations): the comparison must notice. (2^-16 still passes on this view.)
  const DeepView view = viewOf(deepCases()[2]);
  const Prepared loose = prepare(view, 0x1p-6);
  DeepOptions options;
  options.smooth = false;
  const DeepCpuResult r = renderDeepCpu(view, loose.orbit, &loose.table, options);
  const Prepared exact = prepare(view);
  options.bla = false;
  const Agreement a = agreement(r.raw, renderDeepCpu(view, exact.orbit, &exact.table, options).raw, view.imageWidth);
  EXPECT_LT(a.withinOffset, 0.995) << "a loose BLA should have moved many pixels";
}

TEST(DeepZoom, FloatExpFormatAgreesWithDouble) {
  // The 1e-30 view rendered through the extended path too (it is meant for deeper views).
  const Prepared p = prepare(viewOf(deepCases()[0]));
  k::PerturbationParams params = perturbationParams(p.view, p.orbit, {});
  params.smooth = false;
  const k::ReferenceView ref = referenceView(p.orbit);
  const k::BlaView bla = blaView(&p.table);
  std::vector<float> d, f;
  for (int j = 0; j < p.view.imageHeight; ++j)
    for (int i = 0; i < p.view.imageWidth; ++i) {
      d.push_back(k::perturbationValue<false>(params, ref, bla, i, j));
      f.push_back(k::perturbationValue<true>(params, ref, bla, i, j));
    }
  expectAgreement(agreement(f, d, p.view.imageWidth), "floatexp against double");
}

TEST(DeepZoom, CpuRenderReportsProgressAndCancels) {
  const Prepared p = prepare(viewOf(deepCases()[0]));
  double last = 0;
  CpuControl control;
  control.progress = [&](double f) { last = f; };
  DeepOptions one;
  one.cpuThreads = 1;
  renderDeepCpu(p.view, p.orbit, &p.table, one, control);
  EXPECT_EQ(last, 1.0);
  const std::atomic<bool> cancel{true};
  control.cancel = &cancel;
  EXPECT_THROW(renderDeepCpu(p.view, p.orbit, &p.table, {}, control), OperationCancelled);
  DeepView bad = p.view;
  bad.maxIterations = 0;
  EXPECT_THROW(renderDeepCpu(bad, p.orbit, &p.table, {}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// GPU against CPU

/// The view of a case as the renderers take it: perturbation forced (the 1e-30 case is within f64's
/// reach for escape time only at the widest grid; every case is meant for the deep path).
MandelbrotView mandelbrotViewOf(const DeepView& v) {
  return {.centerX = v.centerX,
          .centerY = v.centerY,
          .width = v.width,
          .imageWidth = v.imageWidth,
          .imageHeight = v.imageHeight,
          .maxIterations = v.maxIterations,
          .precision = Precision::Perturbation};
}

// The GPU path as the application runs it (MandelbrotRenderer: reference, table, upload, kernel):
// identical integer counts to the CPU path against the same reference, then the brute force's
// criterion, and the frame in two bands of rows equal to the whole.
TEST_P(DeepZoomCase, GpuMatchesCpuExactlyAndTheBruteForce) {
  GPULAB_REQUIRE_GPU();
  const DeepView deep = viewOf(GetParam());
  const MandelbrotView view = mandelbrotViewOf(deep);
  GpuContext gpu;
  MandelbrotRenderer renderer;
  MandelbrotOptions options;
  options.smooth = false;
  const MandelbrotFrame& frame = renderer.compute(gpu, view, options);
  ASSERT_TRUE(frame.deep.has_value());
  const Image gpuRaw = renderer.downloadRaw(gpu);
  const std::vector<float> gpuCounts(gpuRaw.samples<float>().begin(), gpuRaw.samples<float>().end());
  const DeepReference& reference = renderer.deepRenderer()->reference();
  const DeepOptions deepOptions = deepOptionsOf(options);
  const DeepCpuResult cpu = renderDeepCpu(deep, reference.orbit(), reference.table(deepOptions), deepOptions);
  for (std::size_t q = 0; q < gpuCounts.size(); ++q)
    ASSERT_EQ(gpuCounts[q], cpu.raw[q]) << "pixel (" << q % deep.imageWidth << ", " << q / deep.imageWidth << ")";
  expectAgreement(agreement(gpuCounts, bruteForce(deep, false), deep.imageWidth), "GPU against brute force");

  // Two bands of rows give the same frame (a caller keeping frames responsive renders in bands).
  // Everything on the context's stream, which does not wait for the legacy default stream.
  DeviceBuffer bands(gpuCounts.size() * sizeof(float));
  GPULAB_CUDA_CHECK(cudaMemsetAsync(bands.data(), 0xff, bands.size(), gpu.stream()));  // NaN: unwritten pixels show
  const std::size_t pitch = static_cast<std::size_t>(deep.imageWidth) * sizeof(float);
  renderer.deepRenderer()->enqueue(gpu, bands.as<float>(), pitch, 0, deep.imageHeight / 3);
  renderer.deepRenderer()->enqueue(gpu, bands.as<float>(), pitch, deep.imageHeight / 3, -1);
  std::vector<float> banded(gpuCounts.size());
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(banded.data(), bands.data(), bands.size(), cudaMemcpyDeviceToHost, gpu.stream()));
  gpu.synchronize();
  for (std::size_t q = 0; q < banded.size(); ++q) ASSERT_EQ(banded[q], gpuCounts[q]) << "pixel " << q;
  EXPECT_THROW(renderer.deepRenderer()->enqueue(gpu, bands.as<float>(), pitch, 1, deep.imageHeight),
               std::invalid_argument);
}

}  // namespace
