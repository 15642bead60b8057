// Each tileable operation run in tiles under a forced tiny budget against the same operation on the
// whole image on the GPU: odd and prime sizes, every border mode, u8 and f32, halos larger than the
// tiles. Tolerances:
// - box blur u8, Sobel, direct convolution: bit-identical (each output pixel reads the same samples
//   in the same order);
// - box blur f32: bit-identical on samples on a 2^-16 grid (the GPU's double running sums are then
//   exact whatever tile they start in); on arbitrary floats within 1e-6 x the input's range (one
//   float rounding; the running sums start at the tile's edge);
// - FFT convolution: within 1e-5 x max|untiled| for f32 (each tile has its own transform size), +-1
//   for u8.
// Skipped with a reason without a CUDA device.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/tiling/tiled_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using gpulab::test::filterTestImage;

namespace {

enum class Tolerance { Exact, FloatRounding, Fft };

struct TileCase {
  std::string op;  // box, box9, sobel, sobelx, conv, fftconv, fftconv31
  int width, height;
  BorderMode mode;
  PixelType type;
  int channels;
  std::string name() const {
    return op + "_" + std::to_string(width) + "x" + std::to_string(height) + "_" + std::string(toString(mode)) + "_" +
           std::string(toString(type)) + "c" + std::to_string(channels);
  }
};

std::unique_ptr<Operation> makeCaseOp(const TileCase& c) {
  const bool isU8 = c.type == PixelType::U8;
  Border border{c.mode, c.mode == BorderMode::Constant ? (isU8 ? 77.0 : 0.625) : 0.0};
  if (c.op == "box" || c.op == "box9") {
    FilterSpec spec;
    spec.op = FilterOp::Box;
    spec.radius = c.op == "box" ? 2 : 9;
    spec.border = border;
    return makeFilter(spec);
  }
  if (c.op == "sobel" || c.op == "sobelx") {
    FilterSpec spec;
    spec.op = FilterOp::Sobel;
    spec.component = c.op == "sobel" ? SobelComponent::Magnitude : SobelComponent::X;
    spec.border = border;
    return makeFilter(spec);
  }
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.border = border;
  const int kw = c.op == "conv" ? 5 : (c.op == "fftconv" ? 7 : 31);
  const int kh = c.op == "conv" ? 4 : (c.op == "fftconv" ? 6 : 31);
  spec.kernel.width = kw;
  spec.kernel.height = kh;
  for (int i = 0; i < kw * kh; ++i) spec.kernel.values.push_back(std::sin(0.7 * i + 0.3) / (kw * kh) * 3.0);
  spec.method = c.op == "conv" ? ConvMethod::Direct : ConvMethod::Fft;
  return makeFilter(spec);
}

Tolerance toleranceOf(const TileCase& c, bool gridInput) {
  if (c.op.rfind("fftconv", 0) == 0) return Tolerance::Fft;
  if ((c.op == "box" || c.op == "box9") && c.type == PixelType::F32 && !gridInput) return Tolerance::FloatRounding;
  return Tolerance::Exact;
}

/// Samples rounded to multiples of 2^-16 (f32): sums of them are exact in double.
Image onGrid(Image img) {
  if (img.type() == PixelType::F32)
    for (float& v : img.samples<float>()) v = std::round(v * 65536.f) / 65536.f;
  return img;
}

void compare(const Image& tiled, const Image& whole, Tolerance tolerance, double inputRange, const std::string& label) {
  ASSERT_EQ(tiled.width(), whole.width()) << label;
  ASSERT_EQ(tiled.height(), whole.height()) << label;
  ASSERT_EQ(tiled.channels(), whole.channels()) << label;
  ASSERT_EQ(tiled.type(), whole.type()) << label;
  double bound = 0;
  if (tolerance == Tolerance::FloatRounding) bound = 1e-6 * inputRange;
  if (tolerance == Tolerance::Fft) bound = tiled.type() == PixelType::U8 ? 1.0 : 1e-5 * test::maxAbsSample(whole);
  const std::size_t n = tiled.pixelCount() * tiled.channels();
  for (std::size_t i = 0; i < n; ++i) {
    const double a = test::sampleAt(tiled, i), b = test::sampleAt(whole, i);
    const bool same =
        tolerance == Tolerance::Exact ? (a == b || (std::isnan(a) && std::isnan(b))) : std::abs(a - b) <= bound;
    if (!same) {
      const std::size_t pixel = i / tiled.channels();
      FAIL() << label << ": first difference at (" << pixel % tiled.width() << ", " << pixel / tiled.width()
             << ") channel " << i % tiled.channels() << ": tiled " << a << ", untiled " << b << " (allowed " << bound
             << ")";
    }
  }
}

std::vector<TileCase> cases() {
  std::vector<TileCase> all;
  const std::vector<std::pair<int, int>> sizes = {{61, 59}, {37, 23}, {1, 29}, {31, 1}, {2, 3}};
  const BorderMode modes[] = {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                              BorderMode::Constant};
  for (const std::string op : {"box", "box9", "sobel", "sobelx", "conv", "fftconv", "fftconv31"})
    for (const auto& [w, h] : sizes)
      for (BorderMode mode : modes)
        for (const auto& [type, channels] :
             std::vector<std::pair<PixelType, int>>{{PixelType::U8, 3}, {PixelType::F32, 1}}) {
          if (op == "fftconv31" && (w < 30 || type == PixelType::U8)) continue;  // keep the FFT rows few
          all.push_back({op, w, h, mode, type, channels});
        }
  return all;
}

class TiledGpu : public ::testing::TestWithParam<TileCase> {};

/// The untiled run and the tiled one with windows of about 12x12 plus the halo.
void runCase(const TileCase& c, bool gridInput) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  unsigned seed = 0;
  for (char ch : c.name()) seed = seed * 31 + static_cast<unsigned char>(ch);
  Image input = filterTestImage(c.width, c.height, c.channels, c.type, seed);
  if (gridInput) input = onGrid(std::move(input));
  std::unique_ptr<Operation> op = makeCaseOp(c);
  const ImageShape shape = shapeOf(input);
  const int halo = tileHalo(*op, shape);
  ASSERT_GE(halo, 0) << c.name();

  DeviceImage dIn = gpu.upload(input), dOut;
  op->runGpu(gpu, dIn, dOut);
  const Image whole = gpu.download(dOut);

  // A budget of a 7x5 interior with its halo forces tiles on every size above that.
  const bool wrap = c.mode == BorderMode::Wrap;
  const int ww = wrap ? 7 + 2 * halo : std::min(c.width, 7 + 2 * halo);
  const int wh = wrap ? 5 + 2 * halo : std::min(c.height, 5 + 2 * halo);
  const std::size_t budget = gpuBytesEstimate(*op, {ww, wh, shape.channels, shape.type});
  const TilePlan plan = planTiles(*op, shape, budget);
  if (gpuBytesEstimate(*op, shape) > budget) {
    EXPECT_TRUE(plan.tiled()) << c.name() << ": " << plan.describe();
  }
  const TiledRun run = runTiled(gpu, *op, input, plan);
  EXPECT_GE(run.computeMs, 0.0);
  double lo = 1e300, hi = -1e300;
  for (std::size_t i = 0; i < input.pixelCount() * input.channels(); ++i) {
    lo = std::min(lo, test::sampleAt(input, i));
    hi = std::max(hi, test::sampleAt(input, i));
  }
  compare(run.output, whole, toleranceOf(c, gridInput), hi - lo, c.name() + " (" + plan.describe() + ")");
}

TEST_P(TiledGpu, MatchesTheWholeImage) { runCase(GetParam(), false); }

TEST_P(TiledGpu, MatchesTheWholeImageOnAGrid) {
  const TileCase& c = GetParam();
  if (c.type != PixelType::F32 || c.op.rfind("box", 0) != 0) GTEST_SKIP() << "the same as MatchesTheWholeImage";
  runCase(c, true);
}

INSTANTIATE_TEST_SUITE_P(Table, TiledGpu, ::testing::ValuesIn(cases()), [](const auto& p) { return p.param.name(); });

TEST(TiledGpuRun, SummaryNamesTilesLimitAndPeak) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image input = filterTestImage(301, 203, 1, PixelType::F32, 5);
  auto op = findOperation("box").make({{"radius", "15"}});
  setGpuMemoryLimit(512 * 1024);
  const TilePlan plan = planTiles(*op, shapeOf(input), 512 * 1024);
  const TiledRun run = runTiled(gpu, *op, input, plan);
  setGpuMemoryLimit(0);
  ASSERT_TRUE(plan.tiled()) << plan.describe();
  const std::string s = run.summary();
  EXPECT_NE(s.find("tiled: " + std::to_string(plan.count()) + " tiles of "), std::string::npos) << s;
  EXPECT_NE(s.find("+ halo 15"), std::string::npos) << s;
  EXPECT_NE(s.find("limit 512 KiB"), std::string::npos) << s;
  EXPECT_NE(s.find("peak GPU use"), std::string::npos) << s;
  EXPECT_GT(run.peakGpuBytes, 0u);
  EXPECT_GT(run.computeMs, 0.0);
  EXPECT_GT(run.uploadMs, 0.0);
  EXPECT_GT(run.downloadMs, 0.0);
}

TEST(TiledGpuRun, CancelStopsBetweenTiles) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image input = filterTestImage(64, 64, 1, PixelType::F32, 6);
  auto op = findOperation("box").make({{"radius", "1"}});
  const TilePlan plan = planTiles(*op, shapeOf(input), gpuBytesEstimate(*op, {10, 10, 1, PixelType::F32}));
  std::atomic<bool> cancel{false};
  int reports = 0;
  CpuControl control;
  control.cancel = &cancel;
  control.progress = [&](double) {
    if (++reports == 2) cancel = true;
  };
  EXPECT_THROW(runTiled(gpu, *op, input, plan, control), OperationCancelled);
  EXPECT_EQ(reports, 2);
}

// ---------------------------------------------------------------------------------------------
// The case, on the GPU machine only (scripts/gpu-check.sh tiles): a 16384x16384 f32 image
// under a 512 MiB limit against the same operation uncapped, for each tileable operation; the input
// is also written to $GPULAB_TILING_16K/in16k.npy for the CLI comparison that follows in the script.

TEST(TiledGpuLarge, SixteenKUnderHalfAGibibyte) {
  GPULAB_REQUIRE_GPU();
  const char* dir = std::getenv("GPULAB_TILING_16K");
  if (dir == nullptr || *dir == '\0')
    GTEST_SKIP() << "set GPULAB_TILING_16K=DIR to run the 16384x16384 comparison (scripts/gpu-check.sh tiles)";
  constexpr int n = 16384;
  constexpr std::size_t limit = std::size_t{512} << 20;
  Image input(n, n, 1, PixelType::F32);
  {
    // A smooth gradient with hashed noise, on a 2^-16 grid (box blur's double sums stay exact).
    float* v = input.samples<float>().data();
    for (std::size_t i = 0; i < input.pixelCount(); ++i) {
      const std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;
      const double smooth =
          0.5 + 0.25 * std::sin(static_cast<double>(i % n) / 700.0) * std::cos(static_cast<double>(i / n) / 900.0);
      v[i] = std::round(static_cast<float>(smooth + ((h >> 16) & 0xffff) / 262144.0) * 65536.f) / 65536.f;
    }
  }
  saveImage(input, std::filesystem::path(dir) / "in16k.npy");
  std::printf("16384x16384 f32 input (%.0f MiB) written to %s/in16k.npy; limit %s\n",
              static_cast<double>(input.sizeBytes()) / (1 << 20), dir, formatByteSize(limit).c_str());

  struct Row {
    std::string title;
    ParamValues params;
    std::string conv;  // "", "direct" or "fft": a random kernel of that method
    int kernel = 0;
  };
  const std::vector<Row> rows = {{"box r=7", {{"radius", "7"}}, "", 0},
                                 {"sobel mag", {}, "", 0},
                                 {"conv 15x15 direct", {}, "direct", 15},
                                 {"conv 31x31 fft", {}, "fft", 31}};
  for (const Row& row : rows) {
    auto make = [&]() -> std::unique_ptr<Operation> {
      if (row.conv.empty()) return findOperation(row.title.substr(0, row.title.find(' '))).make(row.params);
      FilterSpec spec;
      spec.op = FilterOp::Conv;
      spec.kernel.width = spec.kernel.height = row.kernel;
      for (int i = 0; i < row.kernel * row.kernel; ++i)
        spec.kernel.values.push_back(std::cos(0.37 * i) / (row.kernel * row.kernel));
      spec.method = row.conv == "fft" ? ConvMethod::Fft : ConvMethod::Direct;
      return makeFilter(spec);
    };
    // Tiled first, in a context of its own, so the measured peak counts all it allocates.
    TiledRun tiled;
    {
      GpuContext gpu;
      setGpuMemoryLimit(limit);
      auto op = make();
      const std::size_t budget = gpuMemoryBudget(gpu);
      const TilePlan plan = planTiles(*op, shapeOf(input), budget);
      tiled = runTiled(gpu, *op, input, plan);
      setGpuMemoryLimit(0);
    }
    Image whole;
    double upMs = 0, computeMs = 0, downMs = 0;
    {
      GpuContext gpu;
      auto op = make();
      DeviceImage dIn = gpu.upload(input), dOut;
      upMs = gpu.lastUpload().totalMs();
      op->prepareGpu(gpu, dIn, dOut);
      Event start, stop;
      start.record(gpu.stream());
      op->runGpu(gpu, dIn, dOut);
      stop.record(gpu.stream());
      stop.synchronize();
      computeMs = stop.elapsedSince(start);
      whole = gpu.download(dOut);
      downMs = gpu.lastDownload().totalMs();
    }
    double worst = 0, peak = 0;
    const auto a = tiled.output.samples<float>(), b = whole.samples<float>();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(a[i] - b[i])));
      peak = std::max(peak, static_cast<double>(std::abs(b[i])));
    }
    std::printf("%-18s uncapped: upload %.1f ms, compute %.2f ms, download %.1f ms (one run)\n", row.title.c_str(),
                upMs, computeMs, downMs);
    std::printf("%-18s %s\n", "", tiled.summary().c_str());
    std::printf("%-18s max |tiled - uncapped| = %.3g (%s; peak |out| %.3g)\n", "", worst,
                worst == 0 ? "bit-identical" : "differs", peak);
    EXPECT_LE(tiled.peakGpuBytes, limit) << row.title;
    if (row.conv == "fft")
      EXPECT_LE(worst, 1e-5 * peak) << row.title;
    else
      EXPECT_EQ(worst, 0.0) << row.title;
  }
}

}  // namespace
