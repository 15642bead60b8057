// A Mandelbrot still split over several GPUs (multi_gpu.hpp): the band plan, the shared queue and its
// failure handling, and bit-identity with the unsplit render. Without a GPU the split runs with CPU
// workers (a simulated device count: 1, 2, 3 and 5 workers) and must give exactly renderRawCpu's
// plane; on a GPU it runs on every device, and with one device as two workers on device 0, and must
// give exactly the one-GPU renderer's raw plane and colours. The failure hook makes one worker throw
// mid-run: the other workers finish its bands and the image stays identical. The CLI's --gpus refuses
// a GPU that does not exist with one sentence (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "gpulab/mandelbrot/multi_gpu.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;

namespace {

/// Bit-identical images, naming the first differing sample.
::testing::AssertionResult sameBits(const Image& expected, const Image& actual) {
  if (expected.width() != actual.width() || expected.height() != actual.height() ||
      expected.channels() != actual.channels() || expected.type() != actual.type())
    return ::testing::AssertionFailure() << "shapes differ: " << expected.describe() << " vs " << actual.describe();
  if (std::memcmp(expected.data(), actual.data(), expected.sizeBytes()) == 0) return ::testing::AssertionSuccess();
  const std::size_t sample = bytesPerSample(expected.type());
  for (std::size_t i = 0; i < expected.sizeBytes(); i += sample)
    if (std::memcmp(expected.data() + i, actual.data() + i, sample) != 0) {
      const std::size_t index = i / sample / static_cast<std::size_t>(expected.channels());
      return ::testing::AssertionFailure()
             << "first difference at pixel (" << index % static_cast<std::size_t>(expected.width()) << ", "
             << index / static_cast<std::size_t>(expected.width()) << ")";
    }
  return ::testing::AssertionFailure() << "the bytes differ";
}

struct ViewCase {
  const char* name;
  MandelbrotView view;
  MandelbrotOptions options;
};

MandelbrotView sized(MandelbrotView v, int width, int height, int supersample = 1) {
  v.imageWidth = width;
  v.imageHeight = height;
  v.supersample = supersample;
  return v;
}

/// Views of every path: f32 and f64 escape time, both variants, a Julia set, supersampling, and
/// perturbation (double and floatexp deltas, with and without BLA), at odd and prime sizes.
std::vector<ViewCase> viewCases() {
  std::vector<ViewCase> cases;
  MandelbrotView whole = sized(wholeSetView(), 97, 61);
  whole.precision = Precision::F32;
  cases.push_back({"whole_f32", whole, {}});
  MandelbrotView seahorse = sized(seahorseValleyView(), 53, 41);
  seahorse.precision = Precision::F64;
  cases.push_back({"seahorse_f64", seahorse, {}});
  MandelbrotOptions plain;
  plain.variant = MandelbrotVariant::Plain;
  cases.push_back({"seahorse_plain", seahorse, plain});
  MandelbrotView julia = sized(wholeSetView(), 31, 29, 2);
  julia.julia = true;
  julia.juliaX = -0.8;
  julia.juliaY = 0.156;
  cases.push_back({"julia_supersampled", julia, {}});
  MandelbrotView deep;
  deep.centerX = DecimalNumber::parse("-0.009433196399017599506077512077418787543894175668132768467315543513676489081");
  deep.centerY = DecimalNumber::parse("1.0062751913365390747669951099160250678923746998302193364765178691256309355");
  deep.width = DeepWidth::parse("1e-30");
  deep.maxIterations = 3000;
  deep = sized(deep, 29, 23);
  cases.push_back({"deep_1e_30", deep, {}});
  MandelbrotOptions noBla;
  noBla.bla = false;
  cases.push_back({"deep_1e_30_no_bla", deep, noBla});
  MandelbrotView extended;
  extended.centerX = DecimalNumber::parse("3.1e-321");
  extended.centerY = DecimalNumber::parse("1." + std::string(320, '0') + "17");
  extended.width = DeepWidth::parse("1e-320");
  extended.maxIterations = 5000;
  cases.push_back({"deep_1e_320_floatexp", sized(extended, 19, 17), {}});
  return cases;
}

std::string joined(const std::vector<RowBand>& bands) {
  std::string s;
  for (const RowBand& b : bands) s += std::to_string(b.first) + "+" + std::to_string(b.count) + " ";
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The plan

TEST(SplitPlan, BandsCoverEveryRowOnceInOrder) {
  struct Case {
    int rows, workers, align, bandRows;
  };
  for (const Case c :
       {Case{1, 1, 1, 0}, Case{7, 3, 1, 2}, Case{61, 2, 1, 0}, Case{97, 5, 1, 13}, Case{8640, 2, 1, 0},
        Case{8640, 1, 1, 0}, Case{62, 3, 2, 4}, Case{2160 * 3, 8, 3, 0}, Case{16, 2, 4, 0}, Case{1000, 1, 1, 1}}) {
    SCOPED_TRACE(std::to_string(c.rows) + " rows, " + std::to_string(c.workers) + " workers, align " +
                 std::to_string(c.align) + ", band " + std::to_string(c.bandRows));
    const std::vector<RowBand> bands = planBands(c.rows, c.workers, c.align, c.bandRows);
    ASSERT_FALSE(bands.empty());
    int next = 0;
    for (std::size_t i = 0; i < bands.size(); ++i) {
      EXPECT_EQ(bands[i].index, static_cast<int>(i));
      EXPECT_EQ(bands[i].first, next) << joined(bands);
      EXPECT_GT(bands[i].count, 0);
      EXPECT_EQ(bands[i].first % c.align, 0);
      EXPECT_EQ(bands[i].count % c.align, 0);
      if (c.bandRows > 0) {
        EXPECT_LE(bands[i].count, c.bandRows);
      }
      next += bands[i].count;
    }
    EXPECT_EQ(next, c.rows);
  }
  // Chosen heights: enough bands for the queue to balance, none below one kernel block.
  EXPECT_GE(planBands(8640, 2).size(), 64u);
  EXPECT_GE(planBands(2160, 8).size(), 128u);
  EXPECT_GE(planBands(100, 2).front().count, 16);
  EXPECT_EQ(planBands(719, 1).size(), 45u);  // small frames: the 16-row minimum decides
  EXPECT_EQ(planBands(719, 3).size(), 45u);
}

TEST(SplitPlan, BadInputIsOneSentence) {
  for (const auto& [rows, workers, align, bandRows] :
       {std::tuple{0, 1, 1, 0}, std::tuple{10, 0, 1, 0}, std::tuple{10, 1, 3, 0}, std::tuple{12, 1, 3, 4},
        std::tuple{12, 1, 1, -2}, std::tuple{12, 1, 0, 0}}) {
    try {
      planBands(rows, workers, align, bandRows);
      ADD_FAILURE() << rows << " " << workers << " " << align << " " << bandRows << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_FALSE(what.empty());
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The queue

TEST(SplitQueue, EveryBandRendersOnceAndSharesAddUp) {
  for (int workers : {1, 2, 3, 7}) {
    const std::vector<RowBand> bands = planBands(211, workers, 1, 5);
    std::vector<std::atomic<int>> rendered(bands.size());
    std::vector<std::atomic<int>> setups(static_cast<std::size_t>(workers)),
        teardowns(static_cast<std::size_t>(workers));
    const SplitReport report = runBandQueue(
        bands, std::vector<int>(static_cast<std::size_t>(workers), -1),
        [&](int k) { ++setups[static_cast<std::size_t>(k)]; },
        [&](int, const RowBand& b) { ++rendered[static_cast<std::size_t>(b.index)]; },
        [&](int k) { ++teardowns[static_cast<std::size_t>(k)]; });
    for (std::size_t i = 0; i < bands.size(); ++i) EXPECT_EQ(rendered[i].load(), 1) << "band " << i;
    for (int k = 0; k < workers; ++k) {
      EXPECT_EQ(setups[static_cast<std::size_t>(k)].load(), 1);
      EXPECT_EQ(teardowns[static_cast<std::size_t>(k)].load(), 1);
    }
    int rows = 0, count = 0;
    for (const SplitWorker& w : report.workers) {
      rows += w.rows;
      count += w.bands;
      EXPECT_FALSE(w.failed);
    }
    EXPECT_EQ(rows, 211);
    EXPECT_EQ(count, static_cast<int>(bands.size()));
    EXPECT_EQ(report.rows, 211);
    EXPECT_FALSE(report.anyFailed());
    EXPECT_TRUE(report.failureSentence().empty());
    EXPECT_EQ(report.workers.size(), static_cast<std::size_t>(workers));
    EXPECT_NE(report.sharesText().find("CPU worker 0: "), std::string::npos) << report.sharesText();
  }
}

TEST(SplitQueue, ASlowWorkerTakesFewerBands) {
  // Worker 0 takes 20 ms a band, worker 1 none: dynamic scheduling gives worker 1 most of the bands.
  const std::vector<RowBand> bands = planBands(40, 2, 1, 1);
  const SplitReport report = runBandQueue(
      bands, {-1, -1}, [](int) {},
      [](int k, const RowBand&) {
        if (k == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      },
      [](int) {});
  EXPECT_LT(report.workers[0].bands, report.workers[1].bands) << report.sharesText();
}

TEST(SplitQueue, AFailedWorkersBandsAreFinishedByTheOthers) {
  const std::vector<RowBand> bands = planBands(120, 3, 1, 4);
  std::vector<std::atomic<int>> rendered(bands.size());
  SplitFailureHook hook;
  hook.worker = 1;
  hook.afterBands = 2;
  const SplitReport report = runBandQueue(
      bands, {-1, -1, -1}, [](int) {},
      [&](int, const RowBand& b) {
        ++rendered[static_cast<std::size_t>(b.index)];
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // about 10 bands each: worker 1 reaches its 3rd
      },
      [](int) {}, hook);
  for (std::size_t i = 0; i < bands.size(); ++i) EXPECT_EQ(rendered[i].load(), 1) << "band " << i;
  ASSERT_TRUE(report.anyFailed());
  EXPECT_TRUE(report.workers[1].failed);
  EXPECT_EQ(report.workers[1].bands, 2);
  EXPECT_NE(report.workers[1].failure.find("test hook"), std::string::npos);
  EXPECT_EQ(report.reassigned, 1);
  const std::string sentence = report.failureSentence();
  EXPECT_NE(sentence.find("CPU worker 1 failed after 2 bands"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find("the image is complete"), std::string::npos) << sentence;
  EXPECT_EQ(sentence.back(), '.');
  EXPECT_EQ(sentence.find('\n'), std::string::npos);
  EXPECT_EQ(report.workers[0].rows + report.workers[1].rows + report.workers[2].rows, 120);
}

TEST(SplitQueue, ARenderThatThrowsGivesItsBandBack) {
  // Worker 0 fails on the band it holds (as a launch that runs out of memory would); worker 1 waits
  // for that band even after the queue ran dry, and finishes it.
  const std::vector<RowBand> bands = planBands(30, 2, 1, 10);
  std::vector<std::atomic<int>> rendered(bands.size());
  const SplitReport report = runBandQueue(
      bands, {-1, -1}, [](int) {},
      [&](int k, const RowBand& b) {
        if (k == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(60));  // worker 1 has emptied the queue
          throw std::runtime_error("out of memory");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // worker 0 gets a band
        ++rendered[static_cast<std::size_t>(b.index)];
      },
      [](int) {});
  for (std::size_t i = 0; i < bands.size(); ++i) EXPECT_EQ(rendered[i].load(), 1) << "band " << i;
  EXPECT_TRUE(report.workers[0].failed);
  EXPECT_EQ(report.workers[0].failure, "out of memory");
  EXPECT_EQ(report.workers[1].bands, 3);
  EXPECT_NE(report.failureSentence().find("CPU worker 0 failed after 0 bands (out of memory); CPU worker 1 finished"),
            std::string::npos)
      << report.failureSentence();
}

TEST(SplitQueue, ASetupThatFailsLeavesTheOthersToDoEverything) {
  const std::vector<RowBand> bands = planBands(50, 2, 1, 5);
  const SplitReport report = runBandQueue(
      bands, {-1, -1},
      [](int k) {
        if (k == 1) throw std::runtime_error("cudaMalloc failed: out of memory");
      },
      [](int, const RowBand&) {}, [](int) {});
  EXPECT_TRUE(report.workers[1].failed);
  EXPECT_EQ(report.workers[0].bands, 10);
  EXPECT_EQ(report.reassigned, 0);
}

TEST(SplitQueue, EveryWorkerFailingThrowsOneSentence) {
  const std::vector<RowBand> bands = planBands(50, 2, 1, 5);
  try {
    runBandQueue(
        bands, {-1, -1}, [](int) {}, [](int, const RowBand&) { throw std::runtime_error("out of memory"); },
        [](int) {});
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("every worker of the split failed"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(SplitQueue, CancelStopsEveryWorker) {
  const std::vector<RowBand> bands = planBands(100, 2, 1, 1);
  std::atomic<bool> cancel{false};
  std::atomic<int> rendered{0};
  EXPECT_THROW(runBandQueue(
                   bands, {-1, -1}, [](int) {},
                   [&](int, const RowBand&) {
                     if (++rendered == 5) cancel = true;
                   },
                   [](int) {}, {}, &cancel),
               OperationCancelled);
  EXPECT_LT(rendered.load(), 100);
}

// ---------------------------------------------------------------------------------------------
// Stills with CPU workers: the same plane as the unsplit CPU render

TEST(SplitStillCpu, EqualsTheUnsplitRenderForEveryWorkerCount) {
  for (const ViewCase& c : viewCases()) {
    SCOPED_TRACE(c.name);
    const Image unsplit = renderRawCpu(c.view, c.options);
    for (int workers : {1, 2, 3, 5}) {
      SCOPED_TRACE(std::to_string(workers) + " workers");
      StillSplitOptions split;
      split.bandRows = c.view.supersample * 3;  // many odd bands
      const SplitStill still = renderStillSplitCpu(workers, c.view, c.options, split);
      EXPECT_TRUE(sameBits(unsplit, still.raw));
      EXPECT_EQ(still.report.rows, c.view.rawHeight());
      EXPECT_EQ(still.reference.has_value(), still.precision.used == Precision::Perturbation);
    }
  }
}

TEST(SplitStillCpu, AFailedWorkerLeavesTheImageIdentical) {
  for (const ViewCase& c : viewCases()) {
    SCOPED_TRACE(c.name);
    StillSplitOptions split;
    split.bandRows = c.view.supersample;  // 17 to 61 bands: worker 1 reaches its second
    split.failure.worker = 1;
    split.failure.afterBands = 1;
    const SplitStill still = renderStillSplitCpu(3, c.view, c.options, split);
    EXPECT_TRUE(sameBits(renderRawCpu(c.view, c.options), still.raw));
    EXPECT_TRUE(still.report.workers[1].failed);
    EXPECT_NE(still.report.failureSentence().find("CPU worker 1 failed after 1 band"), std::string::npos)
        << still.report.failureSentence();
  }
}

TEST(SplitStillCpu, ColoursEqualTheUnsplitColouring) {
  MandelbrotView v = sized(seahorseValleyView(), 41, 23, 3);
  Colouring colouring;
  colouring.palette = Palette::named("fire");
  colouring.density = 1.7;
  StillSplitOptions split;
  split.colouring = colouring;
  split.wantRaw = false;
  split.bandRows = 6;
  const SplitStill still = renderStillSplitCpu(4, v, {}, split);
  EXPECT_TRUE(still.raw.empty());
  EXPECT_TRUE(sameBits(colourRaw(renderRawCpu(v), colouring, 3), still.rgba));
  split.order = ChannelOrder::Bgra;
  const SplitStill bgra = renderStillSplitCpu(2, v, {}, split);
  EXPECT_EQ(bgra.rgba.at<std::uint8_t>(5, 7, 0), still.rgba.at<std::uint8_t>(5, 7, 2));
  EXPECT_EQ(bgra.rgba.at<std::uint8_t>(5, 7, 2), still.rgba.at<std::uint8_t>(5, 7, 0));
}

TEST(SplitStillCpu, AKeptReferenceIsComputedOnceAndReused) {
  const ViewCase deep = viewCases()[4];
  ASSERT_STREQ(deep.name, "deep_1e_30");
  DeepReference reference;
  StillSplitOptions split;
  split.reference = &reference;
  const SplitStill first = renderStillSplitCpu(2, deep.view, deep.options, split);
  ASSERT_TRUE(first.reference);
  EXPECT_TRUE(first.reference->orbitComputed);
  const SplitStill second = renderStillSplitCpu(3, deep.view, deep.options, split);
  ASSERT_TRUE(second.reference);
  EXPECT_FALSE(second.reference->orbitComputed);
  EXPECT_TRUE(sameBits(first.raw, second.raw));
}

TEST(SplitStillCpu, BadInputIsRefused) {
  MandelbrotView v = sized(wholeSetView(), 16, 8);
  EXPECT_THROW(renderStillSplitCpu(0, v), std::invalid_argument);
  StillSplitOptions split;
  split.bandRows = -1;
  EXPECT_THROW(renderStillSplitCpu(2, v, {}, split), std::invalid_argument);
  v.imageWidth = 0;
  EXPECT_THROW(renderStillSplitCpu(2, v), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Stills on GPUs: the same bits as the one-GPU renderer

namespace {

/// Every device once, or two workers on device 0 when there is one: the split's code path either way.
std::vector<std::vector<int>> deviceSets() {
  const int count = static_cast<int>(queryDevices().devices.size());
  std::vector<std::vector<int>> sets = {{0, 0}};
  if (count > 1) sets.push_back(parseGpuList("all", count));
  if (count > 1) sets.push_back({1, 0, 1});
  return sets;
}

}  // namespace

TEST(SplitStillGpu, EqualsTheOneGpuRenderBitForBit) {
  GPULAB_REQUIRE_GPU();
  Colouring colouring;
  colouring.palette = Palette::named("ice");
  for (const ViewCase& c : viewCases()) {
    SCOPED_TRACE(c.name);
    GpuContext gpu(0);
    MandelbrotRenderer renderer;
    renderer.compute(gpu, c.view, c.options);
    renderer.colour(gpu, colouring);
    const Image raw = renderer.downloadRaw(gpu);
    const Image rgba = renderer.downloadRgba(gpu);
    for (const std::vector<int>& devices : deviceSets()) {
      SCOPED_TRACE(deviceLabels(devices) + " (" + std::to_string(devices.size()) + " workers)");
      StillSplitOptions split;
      split.colouring = colouring;
      split.bandRows = c.view.supersample * 2;
      const SplitStill still = renderStillOnGpus(devices, c.view, c.options, split);
      EXPECT_TRUE(sameBits(raw, still.raw));
      EXPECT_TRUE(sameBits(rgba, still.rgba));
      EXPECT_FALSE(still.report.anyFailed()) << still.report.failureSentence();
      int rows = 0;
      for (const SplitWorker& w : still.report.workers) rows += w.rows;
      EXPECT_EQ(rows, c.view.rawHeight());
    }
  }
}

TEST(SplitStillGpu, AutoBandsOfALargerStillAndBgra) {
  GPULAB_REQUIRE_GPU();
  const MandelbrotView v = sized(seahorseValleyView(), 1283, 719);
  GpuContext gpu(0);
  MandelbrotRenderer renderer;
  renderer.compute(gpu, v);
  renderer.colour(gpu, {}, ChannelOrder::Bgra);
  const Image rgba = renderer.downloadRgba(gpu);
  for (const std::vector<int>& devices : deviceSets()) {
    StillSplitOptions split;
    split.colouring = Colouring{};
    split.order = ChannelOrder::Bgra;
    split.wantRaw = false;
    const SplitStill still = renderStillOnGpus(devices, v, {}, split);
    EXPECT_TRUE(still.raw.empty());
    EXPECT_TRUE(sameBits(rgba, still.rgba)) << deviceLabels(devices);
    // 719 rows: the 16-row minimum band sets the plan (ceil(719 / 16) = 45 bands), whatever the workers.
    EXPECT_EQ(still.report.bandCount, static_cast<int>(planBands(719, static_cast<int>(devices.size())).size()));
    EXPECT_EQ(still.report.bandCount, 45);
  }
}

TEST(SplitStillGpu, AFailedGpuLeavesTheImageIdentical) {
  GPULAB_REQUIRE_GPU();
  for (const ViewCase& c : {viewCases()[0], viewCases()[4]}) {
    SCOPED_TRACE(c.name);
    const Image expected = [&] {
      GpuContext gpu(0);
      MandelbrotRenderer renderer;
      renderer.compute(gpu, c.view, c.options);
      return renderer.downloadRaw(gpu);
    }();
    for (const std::vector<int>& devices : deviceSets()) {
      StillSplitOptions split;
      split.bandRows = 1;  // 23 or 61 bands; every worker is set up before the first is taken
      split.failure.worker = 1;
      split.failure.afterBands = 2;
      const SplitStill still = renderStillOnGpus(devices, c.view, c.options, split);
      EXPECT_TRUE(sameBits(expected, still.raw)) << deviceLabels(devices);
      EXPECT_TRUE(still.report.workers[1].failed);
      EXPECT_NE(still.report.failureSentence().find("failed after 2 bands"), std::string::npos)
          << still.report.failureSentence();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The CLI

TEST(SplitCli, AGpuThatDoesNotExistIsOneSentence) {
  const std::string out = (std::filesystem::temp_directory_path() / "gpulab-split-cli.png").string();
  for (const char* gpus : {"7", "0,9", "banana", "0,0"}) {
    const Outcome o = runCli({"mandelbrot", "--size", "16x8", "--gpus", gpus, "--out", out});
    EXPECT_EQ(o.exitCode, 2) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_NE(o.err.find("--gpus"), std::string::npos) << describe(o);
  }
  const Outcome cpu = runCli({"mandelbrot", "--size", "16x8", "--device", "cpu", "--gpus", "all", "--out", out});
  EXPECT_EQ(cpu.exitCode, 2) << describe(cpu);
  EXPECT_TRUE(isOneLine(cpu.err)) << describe(cpu);
  const Outcome bench = runCli({"mandelbrot", "--bench-gpus", "--gpus", "5"});
  EXPECT_EQ(bench.exitCode, 2) << describe(bench);
  EXPECT_TRUE(isOneLine(bench.err)) << describe(bench);
  EXPECT_NE(bench.err.find("--gpus 5"), std::string::npos) << describe(bench);
  if (!cudaAvailable()) {  // no GPU is a state: the bench says why in one sentence
    const Outcome none = runCli({"mandelbrot", "--bench-gpus"});
    EXPECT_EQ(none.exitCode, 2) << describe(none);
    EXPECT_TRUE(isOneLine(none.err)) << describe(none);
  }
}

TEST(SplitCli, SplitStillEqualsTheOneGpuStill) {
  GPULAB_REQUIRE_GPU();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpulab-split-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> view = {
      "mandelbrot", "--center", "-0.743643887037151,0.13182590420533", "--width", "0.005", "--size", "301x173"};
  std::vector<std::string> one = view, split = view;
  one.insert(one.end(), {"--out", (dir / "one.png").string(), "--raw", (dir / "one.npy").string()});
  split.insert(split.end(),
               {"--gpus", "all", "--out", (dir / "split.png").string(), "--raw", (dir / "split.npy").string()});
  const Outcome a = runCli(one);
  ASSERT_EQ(a.exitCode, 0) << describe(a);
  const Outcome b = runCli(split);
  ASSERT_EQ(b.exitCode, 0) << describe(b);
  EXPECT_NE(b.out.find("rows"), std::string::npos) << describe(b);
  EXPECT_NE(b.out.find("GPU 0"), std::string::npos) << describe(b);
  EXPECT_TRUE(sameBits(loadImage((dir / "one.npy").string()), loadImage((dir / "split.npy").string())));
  EXPECT_TRUE(sameBits(loadImage((dir / "one.png").string()), loadImage((dir / "split.png").string())));
  fs::remove_all(dir);
}
