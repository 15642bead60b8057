// Deep views through the application's paths: the view type at any depth, the reference kept between
// frames and when it is rebuilt, PNG fields that restore a deep view exactly, the CLI at 1e-100 and its
// Newton zoom, and (on a GPU) the renderer's reuse of the reference across frames.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/deep_reference.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;  // runCli, describe, slurp, randomImage
namespace fs = std::filesystem;

namespace {

// A point of seahorse valley's boundary (125 digits: good to a width of about 1e-120).
const std::string kSeahorseX =
    "-0.74361188847330224914444350843275271654387781715973313695436280182213037747031080759132550809537224388507262848"
    "072074461608";
const std::string kSeahorseY =
    "0.131837002394806472849310458452438856417046191888077007404889544934349771337518486837307510297873928251456528894"
    "582019421000";

MandelbrotView seahorseAt(const std::string& width, int w = 48, int h = 27, int iterations = 4000) {
  return {.centerX = DecimalNumber::parse(kSeahorseX),
          .centerY = DecimalNumber::parse(kSeahorseY),
          .width = DeepWidth::parse(width),
          .imageWidth = w,
          .imageHeight = h,
          .maxIterations = iterations};
}

MandelbrotView panned(const MandelbrotView& view, double dx, double dy) { return movedBy(view, dx, dy); }

fs::path tempPath(const std::string& suffix) {
  return fs::temp_directory_path() / ("gpulab-test-deep-view-" + std::to_string(::getpid()) + "-" + suffix);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Numbers and views

TEST(DeepView, OffsetMovesADecimalByAnyFractionOfAPixel) {
  const DecimalNumber x = DecimalNumber::parse("0.1");
  const DecimalNumber moved = offsetBy(x, ExtendedReal{1.0, -400}, 1400);  // + 2^-400 ~ 3.9e-121
  EXPECT_GT(moved, x);
  EXPECT_EQ(moved.toString().substr(0, 12), "0.1000000000");
  const DecimalNumber back = offsetBy(moved, ExtendedReal{-1.0, -400}, 1400);  // 0.1 at 1400 bits
  EXPECT_EQ(back.toDouble(), 0.1);
  // Within 1400 bits (about 421 digits) of 0.1: 400 zeros or 400 nines after the first digit.
  const std::string digits = back.toScientific();
  EXPECT_TRUE(digits.rfind("1." + std::string(400, '0'), 0) == 0 || digits.rfind("9." + std::string(400, '9'), 0) == 0)
      << digits.substr(0, 60);
  EXPECT_THROW(offsetBy(x, ExtendedReal{1.0, 0}, 10), std::invalid_argument);
}

TEST(DeepView, ViewsKeepEveryDigitAndTheirDepth) {
  const MandelbrotView v = seahorseAt("1e-100");
  EXPECT_EQ(v.centerX.toString(), kSeahorseX);
  EXPECT_NEAR(v.depth(), 100.477, 0.001);
  EXPECT_EQ(v.widthValue(), 1e-100);
  MandelbrotView deeper = v;
  deeper.width = DeepWidth::parse("1e-5000");
  EXPECT_EQ(deeper.widthValue(), 0.0);  // beyond double: the extended value holds it
  EXPECT_NEAR(log2Of(deeper.spacing()), -5000 * std::log2(10.0) - std::log2(48.0), 1e-6);
  EXPECT_EQ(choosePrecision(deeper).label(), "perturbation floatexp");
  EXPECT_EQ(deepViewOf(deeper).imageWidth, 48);
}

// ---------------------------------------------------------------------------------------------
// The reference kept between frames

TEST(DeepReference, ReusedWhilePanningZoomingAndRebuiltOutsideItsRegion) {
  DeepReference reference;
  const DeepOptions options;
  const DeepView first = deepViewOf(seahorseAt("1e-40"));
  DeepReference::Update u = reference.prepare(first, options);
  EXPECT_TRUE(u.orbitComputed);
  EXPECT_TRUE(u.tableBuilt);
  EXPECT_GT(u.referenceMs, 0.0);
  const int bits = reference.orbit().precisionBits();
  EXPECT_GE(bits, referencePrecisionBits(first) + DeepReference::kPrecisionHeadroomBits);

  // A pan within the region: the same orbit; the table's radii follow the larger offsets.
  u = reference.prepare(deepViewOf(panned(seahorseAt("1e-40"), 1.5, -0.5)), options);
  EXPECT_FALSE(u.orbitComputed);
  EXPECT_TRUE(u.radiiChanged);
  // Zooming in 1e6 times: still within the precision's headroom.
  u = reference.prepare(deepViewOf(seahorseAt("1e-46")), options);
  EXPECT_FALSE(u.orbitComputed);
  // Past the headroom (at least 64 bits, about 19 decades): a new orbit, deeper.
  u = reference.prepare(deepViewOf(seahorseAt("1e-90")), options);
  EXPECT_TRUE(u.orbitComputed);
  EXPECT_GT(reference.orbit().precisionBits(), bits);
  // A pan past kReuseWidths widths: a new orbit at the new centre.
  u = reference.prepare(deepViewOf(panned(seahorseAt("1e-90"), 6.0, 0.0)), options);
  EXPECT_TRUE(u.orbitComputed);
  // More iterations than the orbit was computed for (when it did not escape): a new orbit.
  const MandelbrotView near = panned(seahorseAt("1e-90"), 6.0, 0.0);
  if (!reference.orbit().escaped()) {
    MandelbrotView longer = near;
    longer.maxIterations = near.maxIterations * 2;
    EXPECT_TRUE(reference.prepare(deepViewOf(longer), options).orbitComputed);
  }
  // Without BLA there is no table to give.
  DeepOptions plain;
  plain.bla = false;
  reference.prepare(deepViewOf(near), plain);
  EXPECT_EQ(reference.table(plain), nullptr);
}

TEST(DeepReference, ReusedReferenceGivesTheSameCountsAsAFreshOne) {
  // The CPU renderer keeps its reference: a panned frame against the old reference must agree with a
  // fresh render of the panned view within the perturbation criterion (a few chaotic pixels may differ).
  MandelbrotCpuRenderer kept;
  MandelbrotOptions counts;
  counts.smooth = false;
  kept.compute(seahorseAt("1e-30", 40, 24, 3000), counts);
  const MandelbrotView moved = panned(seahorseAt("1e-30", 40, 24, 3000), 0.8, 0.3);
  const Image reused = kept.compute(moved, counts);
  EXPECT_FALSE(kept.lastReferenceUpdate().orbitComputed);
  const Image fresh = renderRawCpu(moved, counts);
  int agree = 0;
  const auto a = reused.samples<float>(), b = fresh.samples<float>();
  for (std::size_t q = 0; q < a.size(); ++q) agree += (a[q] < 0) == (b[q] < 0) && std::abs(a[q] - b[q]) <= 2;
  EXPECT_GE(static_cast<double>(agree) / static_cast<double>(a.size()), 0.995);
}

// ---------------------------------------------------------------------------------------------
// PNG fields

TEST(DeepView, PngFieldsRestoreADeepViewExactly) {
  MandelbrotView v = seahorseAt("3.25e-500", 33, 17, 123456);
  v.centerX = DecimalNumber::parse("-1." + std::string(600, '7') + "1");  // 602 significant digits
  const auto text = pngTextFromView(v, Colouring{}, choosePrecision(v));
  EXPECT_EQ(text.at("gpulab.width"), "3.25e-500");
  EXPECT_EQ(text.at("gpulab.precision_used"), "perturbation floatexp");
  const fs::path path = tempPath("deep.png");
  savePngWithText(randomImage(v.imageWidth, v.imageHeight, 3, PixelType::U8, 3), path, text);
  EXPECT_EQ(viewFromPngText(readPngText(path)), v);
  fs::remove(path);

  // A damaged view is one sentence, naming the field.
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{{"gpulab.center", "-1.7x,0"},
                                                                                   {"gpulab.center", "1,2,3"},
                                                                                   {"gpulab.width", "0"},
                                                                                   {"gpulab.width", "1e-100001"},
                                                                                   {"gpulab.width", "nan"}}) {
    auto bad = text;
    bad[key] = value;
    try {
      viewFromPngText(bad);
      ADD_FAILURE() << key << " = " << value << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(key), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The CLI

TEST(DeepViewCli, RendersAt1e100OnTheCpuAndStoresTheView) {
  const fs::path png = tempPath("cli-deep.png");
  const Outcome o = runCli({"mandelbrot", "--device", "cpu", "--center", kSeahorseX + "," + kSeahorseY, "--width",
                            "1e-100", "--size", "48x27", "--iters", "20000", "--out", png.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("precision: perturbation, f64 deltas (auto"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cpu reference orbit"), std::string::npos) << o.out;
  const MandelbrotView stored = viewFromPngText(readPngText(png));
  EXPECT_EQ(stored.centerX.toString(), kSeahorseX);
  EXPECT_EQ(stored.width.toString(), "1e-100");
  EXPECT_EQ(loadImage(png).describe(), "48x27 RGB u8");
  fs::remove(png);
}

TEST(DeepViewCli, NewtonZoomFindsTheMinibrotOrSaysWhyNot) {
  const fs::path png = tempPath("cli-newton.png");
  // Near the period-3 minibrot on the real axis: half-way there from a width of 0.1.
  const Outcome o = runCli({"mandelbrot", "--device", "cpu", "--center", "-1.76,0.001", "--width", "0.1", "--size",
                            "32x18", "--newton", "onto", "--out", png.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("newton: period 3 minibrot"), std::string::npos) << o.out;
  const MandelbrotView stored = viewFromPngText(readPngText(png));
  EXPECT_NEAR(stored.x(), -1.7548776662466927, 1e-12);
  EXPECT_LT(stored.widthValue(), 0.1);
  fs::remove(png);

  // Outside the set there is nothing to find: one sentence, exit 1, nothing written.
  const Outcome none = runCli({"mandelbrot", "--device", "cpu", "--center", "2,0", "--width", "0.001", "--size", "16x8",
                               "--newton", "half", "--out", png.string()});
  EXPECT_EQ(none.exitCode, 1) << describe(none);
  EXPECT_NE(none.err.find("Newton"), std::string::npos) << describe(none);
  EXPECT_TRUE(isOneLine(none.err)) << describe(none);
  EXPECT_FALSE(fs::exists(png));
  const Outcome badFraction =
      runCli({"mandelbrot", "--device", "cpu", "--size", "16x8", "--newton", "2", "--out", png.string()});
  EXPECT_EQ(badFraction.exitCode, 2) << describe(badFraction);
}

// ---------------------------------------------------------------------------------------------
// GPU: the reference follows the view across frames

TEST(DeepViewGpu, RendererReusesTheReferenceAcrossFramesAndMatchesTheCpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;
  MandelbrotCpuRenderer cpu;
  MandelbrotOptions counts;
  counts.smooth = false;
  const std::vector<MandelbrotView> frames = {seahorseAt("1e-60", 64, 36, 6000),
                                              panned(seahorseAt("1e-60", 64, 36, 6000), 0.7, -0.4),
                                              seahorseAt("1e-63", 64, 36, 6000), seahorseAt("1e-100", 64, 36, 6000)};
  // 1e-63 keeps the 1e-60 reference (384 bits carry its 270); 1e-100 needs 402 and gets a new one.
  const bool expectReused[] = {false, true, true, false};
  for (std::size_t f = 0; f < frames.size(); ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    const MandelbrotFrame& frame = renderer.compute(gpu, frames[f], counts);
    ASSERT_TRUE(frame.deep.has_value());
    EXPECT_EQ(frame.deep->referenceReused, expectReused[f]);
    // The CPU renderer sees the same frames, so it holds the same reference: identical counts.
    EXPECT_EQ(renderer.downloadRaw(gpu), cpu.compute(frames[f], counts));
  }
}
