// The FFT filter out of core (row R2C, column C2C + mask + C2C, row C2R, in chunks under a forced
// tiny budget) against the same filter on the whole image on the GPU: odd, prime and tiny sizes,
// every band and shape, both paddings, u8 (alpha passed through), f32 and f64. Tolerances: f32
// within 1e-5 x the input's range, f64 within 1e-12 x the range, u8 within 1 (float rounding of the
// two factorisations of the same DFT). Skipped with a reason without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/tiling/fft_out_of_core.hpp"
#include "gpulab/tiling/tiled_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using gpulab::test::filterTestImage;

namespace {

struct OocCase {
  int width, height;
  FreqBand band;
  FreqShape shape;
  FftPadding padding;
  PixelType type;
  int channels;
  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) + "_" + std::string(toString(band)) + "_" +
           std::string(toString(shape)) + "_" + std::string(toString(padding)) + "_" + std::string(toString(type)) +
           "c" + std::to_string(channels);
  }
  FftFilterSpec spec() const {
    FftFilterSpec s;
    s.band = band;
    s.shape = shape;
    s.padding = padding;
    s.cutoff = 0.3;
    s.cutoff2 = 0.7;
    s.order = 3;
    return s;
  }
};

std::vector<OocCase> cases() {
  const std::vector<std::pair<int, int>> sizes = {{61, 59}, {37, 23}, {1, 29}, {31, 1}, {2, 3}, {128, 96}, {1, 1}};
  std::vector<OocCase> all;
  for (const auto& [w, h] : sizes) {
    for (FreqBand band : {FreqBand::Lowpass, FreqBand::Highpass, FreqBand::Bandpass, FreqBand::Bandstop})
      for (FreqShape shape : {FreqShape::Ideal, FreqShape::Gaussian, FreqShape::Butterworth})
        for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
          all.push_back({w, h, band, shape, padding, PixelType::F32, 1});
    for (const auto& [type, channels] : std::vector<std::pair<PixelType, int>>{
             {PixelType::U8, 1}, {PixelType::U8, 4}, {PixelType::U8, 2}, {PixelType::F32, 3}, {PixelType::F64, 2}})
      for (FftPadding padding : {FftPadding::None, FftPadding::Mirror})
        all.push_back({w, h, FreqBand::Bandstop, FreqShape::Butterworth, padding, type, channels});
  }
  return all;
}

double rangeOf(const Image& img) {
  double lo = 1e300, hi = -1e300;
  for (std::size_t i = 0; i < img.pixelCount() * img.channels(); ++i) {
    lo = std::min(lo, test::sampleAt(img, i));
    hi = std::max(hi, test::sampleAt(img, i));
  }
  return hi - lo;
}

/// The budget of two rows and two columns: every transform taller or wider than that runs in chunks.
std::size_t tinyBudget(const FftFilter& filter, const ImageShape& shape) {
  return std::max(fftRowChunkBytes(filter, shape, 2), fftColumnChunkBytes(filter, shape, 2));
}

Image wholeOnGpu(GpuContext& gpu, FftFilter& filter, const Image& input) {
  DeviceImage dIn = gpu.upload(input), dOut;
  filter.runGpu(gpu, dIn, dOut);
  return gpu.download(dOut);
}

class FftOutOfCoreGpu : public ::testing::TestWithParam<OocCase> {};

TEST_P(FftOutOfCoreGpu, MatchesTheWholeImage) {
  GPULAB_REQUIRE_GPU();
  const OocCase& c = GetParam();
  GpuContext gpu;
  unsigned seed = 0;
  for (char ch : c.name()) seed = seed * 31 + static_cast<unsigned char>(ch);
  const Image input = filterTestImage(c.width, c.height, c.channels, c.type, seed);
  FftFilter filter(c.spec());
  const Image whole = wholeOnGpu(gpu, filter, input);

  const ImageShape shape = shapeOf(input);
  const FftPassPlan plan = planFftOutOfCore(filter, shape, tinyBudget(filter, shape));
  EXPECT_LE(plan.rowChunk, std::max(2, plan.fftHeight)) << plan.describe();
  // With at least four rows and three half-spectrum columns, a budget of two of each cuts a pass
  // (a transform one or two bins wide fits its rows in the columns' budget: one chunk each).
  if (plan.fftHeight >= 4 && plan.complexWidth() >= 3) {
    EXPECT_GT(plan.forwardRowChunks() + plan.columnChunks(), 2) << plan.describe();
  }
  const FftOutOfCoreRun run = runFftOutOfCore(gpu, filter, input, plan);

  ASSERT_EQ(run.output.width(), whole.width());
  ASSERT_EQ(run.output.height(), whole.height());
  ASSERT_EQ(run.output.channels(), whole.channels());
  ASSERT_EQ(run.output.type(), whole.type());
  const double range = rangeOf(input);
  const double bound = c.type == PixelType::U8 ? 1.0 : (c.type == PixelType::F64 ? 1e-12 : 1e-5) * range;
  const int planes = fftFilteredChannels(c.channels, c.type);
  for (std::size_t i = 0; i < whole.pixelCount() * whole.channels(); ++i) {
    const double a = test::sampleAt(run.output, i), b = test::sampleAt(whole, i);
    const bool alpha = static_cast<int>(i % whole.channels()) >= planes;
    if (alpha ? a != b : !(std::abs(a - b) <= bound)) {
      const std::size_t pixel = i / whole.channels();
      FAIL() << c.name() << " (" << plan.describe() << "): first difference at (" << pixel % whole.width() << ", "
             << pixel / whole.width() << ") channel " << i % whole.channels() << ": out of core " << a << ", whole "
             << b << " (allowed " << (alpha ? 0.0 : bound) << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, FftOutOfCoreGpu, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return p.param.name(); });

TEST(FftOutOfCoreGpuRun, SummaryNamesPassesLimitAndPeak) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image input = filterTestImage(301, 203, 1, PixelType::F32, 7);
  FftFilter filter(FftFilterSpec{});
  setGpuMemoryLimit(64 * 1024);
  const FftPassPlan plan = planFftOutOfCore(filter, shapeOf(input), 64 * 1024);
  const FftOutOfCoreRun run = runFftOutOfCore(gpu, filter, input, plan);
  setGpuMemoryLimit(0);
  const std::string s = run.summary();
  EXPECT_EQ(s.rfind("tiled: FFT filter out of core, 3 passes over the 301x203 transform: rows ", 0), 0u) << s;
  EXPECT_NE(s.find(std::to_string(plan.columnChunks()) + " chunks of " + std::to_string(plan.columnChunk) +
                   " (C2C, mask, C2C)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("limit 64 KiB"), std::string::npos) << s;
  EXPECT_NE(s.find("peak GPU use"), std::string::npos) << s;
  // (run.peakGpuBytes is read from the device's free memory, which other processes move too: with
  // test binaries running side by side it can read 0, so only the summary's wording is checked.)
  EXPECT_GT(run.computeMs, 0.0);
  EXPECT_GT(run.uploadMs, 0.0);
  EXPECT_GT(run.downloadMs, 0.0);
}

TEST(FftOutOfCoreGpuRun, PowerOfTwoInputScalingIsUndone) {
  // The hook for scaling the input to keep the transforms finite: 2^-e in, 2^e out, exact.
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image input = filterTestImage(61, 59, 1, PixelType::F32, 8);
  FftFilter filter(FftFilterSpec{});
  const FftPassPlan plan = planFftOutOfCore(filter, shapeOf(input), tinyBudget(filter, shapeOf(input)));
  const FftOutOfCoreRun plain = runFftOutOfCore(gpu, filter, input, plan);
  const FftOutOfCoreRun scaled = runFftOutOfCore(gpu, filter, input, plan, {.inputExponent = 20});
  const auto a = plain.output.samples<float>(), b = scaled.output.samples<float>();
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  EXPECT_LE(worst, 1e-7 * rangeOf(input));
}

TEST(FftOutOfCoreGpuRun, HugeFiniteInputStaysFiniteAsInTheWholeImage) {
  // Values near the float32 maximum: the whole-image filter scales them by a power of two around its
  // transforms (fft_range.hpp); out of core the same exponent is chosen, so the result is finite and
  // agrees with the whole image's. (An earlier version of this test scaled by the literal 6e38f, which
  // is beyond float and is +inf: its input held no finite sample, and both paths rightly gave NaN.)
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (bool atTheLimit : {false, true}) {
    Image input = filterTestImage(61, 59, 1, PixelType::F32, 10);
    const auto [lo, hi] = std::minmax_element(input.samples<float>().begin(), input.samples<float>().end());
    const float low = *lo, span = *hi - *lo;
    for (float& v : input.samples<float>())
      v = atTheLimit ? FLT_MAX : (2.0f * (v - low) / span - 1.0f) * 3e38f;  // within +-3e38, all finite
    ASSERT_TRUE(std::all_of(input.samples<float>().begin(), input.samples<float>().end(),
                            [](float v) { return std::isfinite(v); }));
    FftFilter filter(FftFilterSpec{});
    const Image whole = wholeOnGpu(gpu, filter, input);
    const FftPassPlan plan = planFftOutOfCore(filter, shapeOf(input), tinyBudget(filter, shapeOf(input)));
    const FftOutOfCoreRun run = runFftOutOfCore(gpu, filter, input, plan);
    const auto a = whole.samples<float>(), b = run.output.samples<float>();
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_TRUE(std::isfinite(a[i]) && std::isfinite(b[i]))
          << (atTheLimit ? "FLT_MAX everywhere, " : "") << "sample " << i << ": " << a[i] << " vs " << b[i];
      worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    }
    EXPECT_LE(worst, 1e-5 * (atTheLimit ? double(FLT_MAX) : rangeOf(input)));
  }
}

TEST(FftOutOfCoreGpuRun, CancelStopsBetweenChunks) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image input = filterTestImage(64, 64, 1, PixelType::F32, 9);
  FftFilter filter(FftFilterSpec{});
  const FftPassPlan plan = planFftOutOfCore(filter, shapeOf(input), tinyBudget(filter, shapeOf(input)));
  std::atomic<bool> cancel{false};
  int reports = 0;
  CpuControl control;
  control.cancel = &cancel;
  control.progress = [&](double) {
    if (++reports == 2) cancel = true;
  };
  EXPECT_THROW(runFftOutOfCore(gpu, filter, input, plan, {}, control), OperationCancelled);
  EXPECT_EQ(reports, 2);
}

// ---------------------------------------------------------------------------------------------
// The case, on the GPU machine only (scripts/gpu-check.sh tiles): the FFT low-pass of the
// 16384x16384 f32 image in $GPULAB_TILING_16K/in16k.npy under a 512 MiB limit against the same
// filter uncapped; then, when the script left them there, the CLI's two outputs (fft-0.npy and
// fft-512M.npy) compared.

double maxDifference(const Image& a, const Image& b) {
  const auto x = a.samples<float>(), y = b.samples<float>();
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(x[i] - y[i])));
  return worst;
}

TEST(FftOutOfCoreLarge, SixteenKLowpassUnderHalfAGibibyte) {
  GPULAB_REQUIRE_GPU();
  const char* dir = std::getenv("GPULAB_TILING_16K");
  if (dir == nullptr || *dir == '\0' || !std::filesystem::exists(std::filesystem::path(dir) / "in16k.npy"))
    GTEST_SKIP() << "set GPULAB_TILING_16K=DIR with DIR/in16k.npy to run the 16384x16384 comparison "
                    "(scripts/gpu-check.sh tiles)";
  constexpr std::size_t limit = std::size_t{512} << 20;
  const Image input = loadImage(std::filesystem::path(dir) / "in16k.npy");
  ASSERT_EQ(input.width(), 16384);
  FftFilterSpec spec;
  spec.cutoff = 0.2;
  FftFilter filter(spec);
  const double range = rangeOf(input);

  FftOutOfCoreRun ooc;
  std::size_t budget = 0;
  {
    GpuContext gpu;
    setGpuMemoryLimit(limit);
    budget = gpuMemoryBudget(gpu);
    const FftPassPlan plan = planFftOutOfCore(filter, shapeOf(input), budget);
    ooc = runFftOutOfCore(gpu, filter, input, plan);
    setGpuMemoryLimit(0);
  }
  Image whole;
  double upMs = 0, computeMs = 0, downMs = 0;
  {
    GpuContext gpu;
    DeviceImage dIn = gpu.upload(input), dOut;
    upMs = gpu.lastUpload().totalMs();
    filter.prepareGpu(gpu, dIn, dOut);
    Event start, stop;
    start.record(gpu.stream());
    filter.runGpu(gpu, dIn, dOut);
    stop.record(gpu.stream());
    stop.synchronize();
    computeMs = stop.elapsedSince(start);
    whole = gpu.download(dOut);
    downMs = gpu.lastDownload().totalMs();
  }
  const double worst = maxDifference(ooc.output, whole);
  std::printf("fft %s, 16384x16384 f32 (whole image about %s of GPU memory)\n", filter.describe().c_str(),
              formatByteSize(gpuBytesEstimate(filter, shapeOf(input))).c_str());
  std::printf("  uncapped: upload %.1f ms, compute %.2f ms, download %.1f ms (one run)\n", upMs, computeMs, downMs);
  std::printf("  %s; plan creation %.1f ms apart\n", ooc.summary().c_str(), ooc.prepareMs);
  std::printf("  max |out of core - uncapped| = %.3g (input range %.3g: %.3g relative; budget %s)\n", worst, range,
              worst / range, formatByteSize(budget).c_str());
  EXPECT_LE(ooc.peakGpuBytes, limit);
  EXPECT_LE(worst, 1e-5 * range);

  const auto cli0 = std::filesystem::path(dir) / "fft-0.npy", cli512 = std::filesystem::path(dir) / "fft-512M.npy";
  if (std::filesystem::exists(cli0) && std::filesystem::exists(cli512)) {
    const double cliWorst = maxDifference(loadImage(cli0), loadImage(cli512));
    std::printf("  gpulab-cli fft uncapped vs --gpu-memory-limit 512M: max |difference| = %.3g (%.3g relative)\n",
                cliWorst, cliWorst / range);
    EXPECT_LE(cliWorst, 1e-5 * range);
  }
}

}  // namespace
