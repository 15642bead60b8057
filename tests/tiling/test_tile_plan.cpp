// The GPU memory limit's syntax and the tile planner, on the CPU: every pixel in exactly one tile,
// every window holding its tile and halo (clipped only at the image's edge, or wrapped), every
// window within the budget, the fewest tiles a search finds; odd, prime and tiny sizes, halos larger
// than the tiles, budgets too small. Which operations tile, with the halo they need.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/tiling/fft_out_of_core.hpp"
#include "gpulab/tiling/tiled_runner.hpp"

using namespace gpulab;

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

TEST(GpuMemoryLimit, ParsesBytesAndSuffixes) {
  const std::vector<std::pair<std::string, std::size_t>> good = {{"0", 0},
                                                                 {"1", 1},
                                                                 {"4096", 4096},
                                                                 {"64k", 64 * KiB},
                                                                 {"64K", 64 * KiB},
                                                                 {"64KiB", 64 * KiB},
                                                                 {"64kb", 64 * KiB},
                                                                 {"512M", 512 * MiB},
                                                                 {"512MiB", 512 * MiB},
                                                                 {"512 MiB", 512 * MiB},
                                                                 {"1.5G", GiB + GiB / 2},
                                                                 {" 2g ", 2 * GiB},
                                                                 {"1T", 1024 * GiB},
                                                                 {"100B", 100},
                                                                 {"0.5K", 512}};
  for (const auto& [text, bytes] : good) EXPECT_EQ(parseByteSize(text), bytes) << "'" << text << "'";
}

TEST(GpuMemoryLimit, RejectsWithOneSentence) {
  for (const std::string text :
       {"", " ", "-1", "-512M", "M", "12X", "12 Mx", "1.5", "abc", "1e3", "2000000T", "1.2.3M"}) {
    try {
      parseByteSize(text);
      ADD_FAILURE() << "'" << text << "' was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is not a memory size"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(GpuMemoryLimit, FormatsSizes) {
  EXPECT_EQ(formatByteSize(0), "0 bytes");
  EXPECT_EQ(formatByteSize(1), "1 byte");
  EXPECT_EQ(formatByteSize(1000), "1000 bytes");
  EXPECT_EQ(formatByteSize(64 * KiB), "64 KiB");
  EXPECT_EQ(formatByteSize(512 * MiB), "512 MiB");
  EXPECT_EQ(formatByteSize(GiB + GiB / 2), "1.5 GiB");
}

TEST(GpuMemoryLimit, SetAndEnvironment) {
  setGpuMemoryLimit(0);
  EXPECT_EQ(gpuMemoryLimit(), 0u);
  ::setenv(kGpuMemoryLimitVariable, "12M", 1);
  EXPECT_TRUE(applyGpuMemoryLimitFromEnvironment());
  EXPECT_EQ(gpuMemoryLimit(), 12 * MiB);
  ::setenv(kGpuMemoryLimitVariable, "12Q", 1);
  try {
    applyGpuMemoryLimitFromEnvironment();
    ADD_FAILURE() << "12Q was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(kGpuMemoryLimitVariable), std::string::npos) << e.what();
  }
  EXPECT_EQ(gpuMemoryLimit(), 12 * MiB);  // a bad value changes nothing
  ::setenv(kGpuMemoryLimitVariable, "", 1);
  EXPECT_FALSE(applyGpuMemoryLimitFromEnvironment());
  ::unsetenv(kGpuMemoryLimitVariable);
  EXPECT_FALSE(applyGpuMemoryLimitFromEnvironment());
  setGpuMemoryLimit(0);
}

// ---------------------------------------------------------------------------------------------
// The planner

/// Bytes of a window as an operation would count them: `perPixel` a pixel plus a fixed part.
WindowBytes linearBytes(std::size_t perPixel, std::size_t fixed = 0) {
  return [=](int w, int h) { return static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * perPixel + fixed; };
}

/// Checks everything a plan promises; returns the first broken promise, empty when none.
void checkPlan(const TilePlan& plan, int width, int height, int halo, bool wrap, std::size_t budget,
               const WindowBytes& bytes, const std::string& label) {
  SCOPED_TRACE(label + ": " + plan.describe());
  ASSERT_GE(plan.count(), 1);
  ASSERT_EQ(plan.imageWidth, width);
  ASSERT_EQ(plan.imageHeight, height);
  std::vector<int> covered(static_cast<std::size_t>(width) * height, 0);
  for (int i = 0; i < plan.count(); ++i) {
    const PixelRect t = plan.tile(i);
    ASSERT_GT(t.width, 0);
    ASSERT_GT(t.height, 0);
    ASSERT_GE(t.x, 0);
    ASSERT_GE(t.y, 0);
    ASSERT_LE(t.x + t.width, width);
    ASSERT_LE(t.y + t.height, height);
    for (int y = t.y; y < t.y + t.height; ++y)
      for (int x = t.x; x < t.x + t.width; ++x) ++covered[static_cast<std::size_t>(y) * width + x];
    const PixelRect w = plan.window(i);
    if (plan.tiled()) {
      EXPECT_LE(bytes(w.width, w.height), budget) << "tile " << i;
    }
    if (plan.wrap) {
      EXPECT_EQ(w.x, t.x - halo);
      EXPECT_EQ(w.y, t.y - halo);
      EXPECT_EQ(w.width, t.width + 2 * halo);
      EXPECT_EQ(w.height, t.height + 2 * halo);
    } else {
      // The halo is there on every side except where the image ends.
      EXPECT_EQ(w.x, std::max(0, t.x - halo));
      EXPECT_EQ(w.y, std::max(0, t.y - halo));
      EXPECT_EQ(w.x + w.width, std::min(width, t.x + t.width + halo));
      EXPECT_EQ(w.y + w.height, std::min(height, t.y + t.height + halo));
    }
  }
  for (std::size_t i = 0; i < covered.size(); ++i)
    ASSERT_EQ(covered[i], 1) << "pixel (" << i % width << ", " << i / width << ") is in " << covered[i] << " tiles";
  (void)wrap;
}

struct PlanCase {
  int width, height, halo;
  bool wrap;
  std::size_t budgetPixels;  // the budget in window pixels of 12 bytes
};

TEST(TilePlan, CoversEveryPixelOnceWithinTheBudget) {
  const std::vector<PlanCase> cases = {{1, 1, 0, false, 1},
                                       {1, 1, 7, false, 1},
                                       {1, 1, 7, true, 225},
                                       {1, 7, 1, false, 3},
                                       {7, 1, 1, false, 3},
                                       {2, 3, 0, false, 4},
                                       {13, 17, 1, false, 9},
                                       {13, 17, 2, true, 30},
                                       {31, 1, 3, false, 7},
                                       {1, 31, 3, true, 49},
                                       {257, 131, 7, false, 900},
                                       {257, 131, 15, true, 1000},
                                       {257, 131, 40, false, 8000},
                                       {297, 289, 60, false, 150 * 150},
                                       {97, 89, 60, true, 121 * 121},
                                       {640, 480, 0, false, 10000},
                                       {641, 479, 5, false, 641 * 479},
                                       {1000, 3, 2, false, 50}};
  const WindowBytes bytes = linearBytes(12);
  for (const PlanCase& c : cases) {
    const std::size_t budget = c.budgetPixels * 12;
    const std::string label = std::to_string(c.width) + "x" + std::to_string(c.height) + " halo " +
                              std::to_string(c.halo) + (c.wrap ? " wrap" : "") + " budget " + std::to_string(budget);
    const TilePlan plan = planTiles(c.width, c.height, c.halo, c.wrap, budget, bytes);
    checkPlan(plan, c.width, c.height, c.halo, c.wrap, budget, bytes, label);
  }
}

TEST(TilePlan, OneTileWhenTheWholeImageFits) {
  const TilePlan plan = planTiles(641, 479, 9, false, 641 * 479 * 12, linearBytes(12));
  EXPECT_FALSE(plan.tiled());
  EXPECT_EQ(plan.tileWidth, 641);
  EXPECT_EQ(plan.tileHeight, 479);
  EXPECT_EQ(plan.describe(), "1 tile (the whole 641x479 image)");
  // With wrap too: the operation wraps by itself, no gathered halo.
  const TilePlan wrap = planTiles(641, 479, 9, true, 641 * 479 * 12, linearBytes(12));
  EXPECT_FALSE(wrap.tiled());
  EXPECT_FALSE(wrap.wrap);
}

TEST(TilePlan, HaloLargerThanTheTile) {
  // Windows of at most 30x30 with a halo of 12: interiors of at most 6x6.
  const TilePlan plan = planTiles(101, 53, 12, false, 30 * 30 * 12, linearBytes(12));
  checkPlan(plan, 101, 53, 12, false, 30 * 30 * 12, linearBytes(12), "halo 12 in 30x30 windows");
  EXPECT_LE(plan.tileWidth, 7);
  EXPECT_GT(plan.count(), 100);
}

TEST(TilePlan, FewestTilesForTheBudget) {
  // 1000x1000, no halo, 250000 pixels a window: four tiles is the least possible.
  const TilePlan plan = planTiles(1000, 1000, 0, false, 250000 * 12, linearBytes(12));
  EXPECT_EQ(plan.count(), 4) << plan.describe();
  // The widest tiles among the fewest: full rows when they fit as well.
  const TilePlan rows = planTiles(1000, 100, 0, false, 50000 * 12, linearBytes(12));
  EXPECT_EQ(rows.count(), 2) << rows.describe();
  EXPECT_EQ(rows.tileWidth, 1000);
}

TEST(TilePlan, TooSmallABudgetSaysSo) {
  try {
    planTiles(100, 100, 15, false, 100, linearBytes(12));
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("too small even for a 1x1 tile with its halo of 15 pixels"), std::string::npos) << what;
    EXPECT_NE(what.find("--gpu-memory-limit"), std::string::npos) << what;
  }
  // A halo beyond the image clips every window to the whole image: one tile or nothing.
  EXPECT_THROW(planTiles(97, 89, 100, false, 97 * 89 * 12 - 1, linearBytes(12)), std::runtime_error);
  EXPECT_FALSE(planTiles(97, 89, 100, false, 97 * 89 * 12, linearBytes(12)).tiled());
  EXPECT_THROW(planTiles(0, 10, 1, false, 1000, linearBytes(12)), std::invalid_argument);
  EXPECT_THROW(planTiles(10, 10, -1, false, 1000, linearBytes(12)), std::invalid_argument);
}

TEST(TilePlan, SixteenKUnderHalfAGibibyte) {
  // The case: a 16384x16384 f32 image, box blur r=7, under 512 MiB.
  BoxBlur box(7);
  const ImageShape shape{16384, 16384, 1, PixelType::F32};
  EXPECT_GT(gpuBytesEstimate(box, shape), 512 * MiB);
  const TilePlan plan = planTiles(box, shape, 512 * MiB);
  EXPECT_TRUE(plan.tiled());
  EXPECT_EQ(plan.halo, 7);
  EXPECT_LE(plan.windowBytes, 512 * MiB);
  EXPECT_LE(plan.count(), 9) << plan.describe();
  for (int i = 0; i < plan.count(); ++i) {
    const PixelRect w = plan.window(i);
    EXPECT_LE(gpuBytesEstimate(box, {w.width, w.height, 1, PixelType::F32}), 512 * MiB);
  }
}

// ---------------------------------------------------------------------------------------------
// Which operations tile

std::unique_ptr<Operation> convolution(int kw, int kh, ConvMethod method, ConvMode mode, BorderMode border) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel.width = kw;
  spec.kernel.height = kh;
  for (int i = 0; i < kw * kh; ++i) spec.kernel.values.push_back(0.25 + 0.01 * i);
  spec.method = method;
  spec.mode = mode;
  spec.border.mode = border;
  return makeFilter(spec);
}

TEST(TileHalo, TheKernelsRadius) {
  const ImageShape gray{101, 67, 1, PixelType::F32}, rgb{101, 67, 3, PixelType::U8};
  for (BorderMode mode :
       {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap, BorderMode::Constant}) {
    SCOPED_TRACE(toString(mode));
    const ParamValues border = {{"border", std::string(toString(mode))}};
    ParamValues box = border;
    box["radius"] = "9";
    EXPECT_EQ(tileHalo(*findOperation("box").make(box), gray), 9);
    EXPECT_EQ(tileHalo(*findOperation("sobel").make(border), rgb), 1);  // RGB in, gray out: still tiles
    EXPECT_EQ(tileHalo(*convolution(5, 4, ConvMethod::Direct, ConvMode::Same, mode), gray), 2);
    EXPECT_EQ(tileHalo(*convolution(31, 8, ConvMethod::Fft, ConvMode::Same, mode), gray), 15);
    EXPECT_EQ(tileHalo(*convolution(8, 31, ConvMethod::Auto, ConvMode::Same, mode), gray), 15);
  }
}

TEST(TileHalo, RefusesWithOneSentence) {
  const ImageShape gray{101, 67, 1, PixelType::F32};
  std::string why;
  EXPECT_EQ(tileHalo(*convolution(5, 5, ConvMethod::Direct, ConvMode::Full, BorderMode::Reflect101), gray, &why), -1);
  EXPECT_NE(why.find("only operations that keep the image's size"), std::string::npos) << why;
  FftFilter lowpass({});
  EXPECT_EQ(tileHalo(lowpass, gray, &why), -1);
  EXPECT_NE(why.find("cannot run in tiles"), std::string::npos) << why;
  EXPECT_THROW(planTiles(lowpass, {16384, 16384, 1, PixelType::F32}, 512 * MiB), std::invalid_argument);
  // auto-levels reads the whole image's histogram.
  EXPECT_EQ(tileHalo(*findOperation("auto-levels").make({}), {101, 67, 3, PixelType::U8}, &why), -1);
  EXPECT_NE(why.find("cannot run in tiles"), std::string::npos) << why;
}

TEST(TileHalo, FftFilterNeedsMoreThanTheImage) {
  FftFilter lowpass({});
  const ImageShape shape{4096, 4096, 1, PixelType::F32};
  EXPECT_GT(gpuBytesEstimate(lowpass, shape), 3 * 4096ull * 4096 * 4);
}

// ---------------------------------------------------------------------------------------------
// The FFT filter out of core: chunk sizes from the budget (pure)

TEST(FftOutOfCorePlan, ChunksAreTheLargestThatFit) {
  for (const auto& [w, h] :
       std::vector<std::pair<int, int>>{{16384, 16384}, {301, 203}, {61, 59}, {1, 29}, {31, 1}, {2, 3}, {4000, 3}}) {
    for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
      for (const auto& [type, channels] :
           std::vector<std::pair<PixelType, int>>{{PixelType::F32, 1}, {PixelType::U8, 4}, {PixelType::F64, 2}}) {
        FftFilterSpec spec;
        spec.padding = padding;
        const FftFilter filter(spec);
        const ImageShape shape{w, h, channels, type};
        const std::size_t budget = std::max(fftRowChunkBytes(filter, shape, 3), fftColumnChunkBytes(filter, shape, 3));
        const FftPassPlan plan = planFftOutOfCore(filter, shape, budget);
        const std::string label = std::to_string(w) + "x" + std::to_string(h) + " " + plan.describe();
        const auto [fw, fh] = filter.fftSize(w, h);
        EXPECT_EQ(plan.fftWidth, fw) << label;
        EXPECT_EQ(plan.fftHeight, fh) << label;
        EXPECT_EQ(plan.planes, fftFilteredChannels(channels, type)) << label;
        EXPECT_LE(plan.rowBytes, budget) << label;
        EXPECT_LE(plan.columnBytes, budget) << label;
        EXPECT_EQ(plan.rowBytes, fftRowChunkBytes(filter, shape, plan.rowChunk)) << label;
        EXPECT_GE(plan.rowChunk, std::min(3, fh)) << label;
        EXPECT_GE(plan.columnChunk, std::min(3, fw / 2 + 1)) << label;
        if (plan.rowChunk < fh) {
          EXPECT_GT(fftRowChunkBytes(filter, shape, plan.rowChunk + 1), budget) << label;
        }
        if (plan.columnChunk < fw / 2 + 1) {
          EXPECT_GT(fftColumnChunkBytes(filter, shape, plan.columnChunk + 1), budget) << label;
        }
        EXPECT_LE(plan.rowChunk, fh) << label;
        EXPECT_LE(plan.columnChunk, fw / 2 + 1) << label;
        // Every row and column in exactly one chunk.
        EXPECT_GE(plan.forwardRowChunks() * plan.rowChunk, fh) << label;
        EXPECT_LT((plan.forwardRowChunks() - 1) * plan.rowChunk, fh) << label;
        EXPECT_GE(plan.columnChunks() * plan.columnChunk, fw / 2 + 1) << label;
        EXPECT_GE(plan.inverseRowChunks() * plan.rowChunk, h) << label;
        EXPECT_EQ(plan.hostBytes, static_cast<std::size_t>(fw / 2 + 1) * fh * 2 * (type == PixelType::F64 ? 8 : 4))
            << label;
      }
  }
}

TEST(FftOutOfCorePlan, SixteenKUnderHalfAGibibyte) {
  FftFilterSpec spec;
  spec.cutoff = 0.2;
  const FftFilter filter(spec);
  const ImageShape shape{16384, 16384, 1, PixelType::F32};
  EXPECT_GT(gpuBytesEstimate(filter, shape), 512 * MiB);  // the whole image does not fit
  const FftPassPlan plan = planFftOutOfCore(filter, shape, 512 * MiB);
  EXPECT_GT(plan.forwardRowChunks(), 1);
  EXPECT_GT(plan.columnChunks(), 1);
  EXPECT_EQ(plan.hostBytes, std::size_t{8193} * 16384 * 8);
  EXPECT_EQ(plan.describe().rfind("3 passes over the 16384x16384 transform: rows ", 0), 0u) << plan.describe();
}

TEST(FftOutOfCorePlan, AmpleBudgetIsOneChunkEach) {
  const FftFilter filter(FftFilterSpec{});
  const FftPassPlan plan = planFftOutOfCore(filter, {61, 59, 1, PixelType::F32}, GiB);
  EXPECT_EQ(plan.rowChunk, 59);
  EXPECT_EQ(plan.columnChunk, 31);
  EXPECT_EQ(plan.describe(),
            "3 passes over the 61x59 transform: rows 1 chunk of 59 (R2C); columns 1 chunk of 31 (C2C, mask, C2C); "
            "rows 1 chunk of 59 (C2R)");
}

TEST(FftOutOfCorePlan, RefusesInOneSentence) {
  const FftFilter filter(FftFilterSpec{});
  try {
    planFftOutOfCore(filter, {301, 203, 1, PixelType::F32}, 1024);
    ADD_FAILURE() << "a 1 KiB budget was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("not even one row of the 301x203 transform fits in 1 KiB of GPU memory", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_THROW(planFftOutOfCore(filter, {64, 64, 1, PixelType::U16}, GiB), std::invalid_argument);
  EXPECT_THROW(planFftOutOfCore(filter, {0, 64, 1, PixelType::F32}, GiB), std::invalid_argument);
  EXPECT_THROW(planFftOutOfCore(filter, {64, 64, 5, PixelType::F32}, GiB), std::invalid_argument);
}

}  // namespace
