// The GUI soak: the Mandelbrot tab driven offscreen through many wheel-zoom frames in one process
// (the zoom benchmark's steps, each sent once a frame of the current view is painted: 100 notches in
// towards seahorse valley, 100 out, and again), with the host's resident set and the GPU's used
// memory sampled at every frame. Start, after warm-up, end and peak are printed; memory must be flat
// after warm-up: the growth within a bound in all, and its slope (least squares over the frames after
// warm-up) within kSlopeBoundBytes a frame plus kSlopeNoiseBytes spread over those frames (RSS moves
// in pages and in glibc's 128 KiB heap steps: a short run cannot tell a small leak from that).
// GPULAB_SOAK_FRAMES sets the frames (default 200: the CPU path here in a few seconds, which catches
// leaks of about 6 KiB a frame; scripts/gpu-check.sh soak plays 10000 on the GPU: about 0.4 KiB a
// frame), GPULAB_SOAK_CANVAS the canvas (default 320x180). GPULAB_SOAK_LEAK_BYTES leaks that many
// bytes a frame on purpose (shows that the verdict fails); GPULAB_SOAK_SERIES=path writes the
// samples (frame, host bytes, GPU bytes) for plotting.
#include <malloc.h>
#include <unistd.h>

#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gui/mandelbrot_gui_harness.hpp"
#include "mandelbrot/mandelbrot_zoom_benchmark.hpp"

namespace gpulab::gui::mandelbrot_test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kHostBoundMiB = 16;  // Qt's and the worker's caches settle during warm-up
constexpr double kGpuBoundMiB = 8;
// The benchmark keeps ~40 bytes a frame for its statistics and this test 8 (its own samples):
// the steady state is far below this, a 1 KiB-a-frame leak far above.
constexpr double kSlopeBoundBytes = 256;
constexpr double kSlopeNoiseBytes = 1024.0 * 1024.0;  // one or two heap steps, spread over the frames

double residentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

int envInt(const char* name, int fallback) {
  const QByteArray v = qgetenv(name);
  bool ok = false;
  const int n = v.toInt(&ok);
  return ok && n > 0 ? n : fallback;
}

/// Least-squares slope of samples[from..] against their index (bytes a frame); 0 for fewer than 2.
double slopePerFrame(const std::vector<double>& samples, std::size_t from) {
  const std::size_t n = samples.size() > from ? samples.size() - from : 0;
  if (n < 2) return 0;
  double meanX = 0, meanY = 0;
  for (std::size_t i = 0; i < n; ++i) {
    meanX += static_cast<double>(i);
    meanY += samples[from + i];
  }
  meanX /= static_cast<double>(n);
  meanY /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(i) - meanX;
    sxy += dx * (samples[from + i] - meanY);
    sxx += dx * dx;
  }
  return sxy / sxx;
}

/// The slope a series may have after `warmup` of its samples: kSlopeBoundBytes a frame, plus the
/// page and heap-step noise spread over the frames measured.
double slopeBound(std::size_t samples, std::size_t warmup) {
  const double measured = static_cast<double>(samples > warmup ? samples - warmup : 1);
  return kSlopeBoundBytes + kSlopeNoiseBytes / measured;
}

struct Series {
  const char* what;
  std::vector<double> samples;
  /// Prints the figures; true when the growth from the end of warm-up to the end is within `boundMiB`
  /// and its slope within slopeBound().
  bool flat(std::size_t warmup, double boundMiB, bool checkSlope = true) const {
    const double atWarmup = samples[std::min(warmup, samples.size() - 1)];
    const double growth = (samples.back() - atWarmup) / kMiB;
    const double slope = slopePerFrame(samples, warmup);
    const double slopeLimit = slopeBound(samples.size(), warmup);
    std::printf(
        "%s: start %.1f MiB, after warm-up %.1f MiB, end %.1f MiB, peak %.1f MiB; growth after warm-up "
        "%+.2f MiB (bound %.0f MiB), slope %+.0f bytes a frame over %zu frames (bound %.0f)\n",
        what, samples.front() / kMiB, atWarmup / kMiB, samples.back() / kMiB,
        *std::max_element(samples.begin(), samples.end()) / kMiB, growth, boundMiB, slope,
        samples.size() > warmup ? samples.size() - warmup : 0, slopeLimit);
    return growth <= boundMiB && (!checkSlope || slope <= slopeLimit);
  }
};

// The verdict itself, on made-up series: steps of glibc's heap and page noise pass, a 1 KiB-a-frame
// leak fails once there are as many frames as the GPU soak plays.
TEST(SoakVerdict, SlopeSeparatesHeapStepsFromALeak) {
  std::vector<double> steady, leak, stepped;
  for (int i = 0; i < 10000; ++i) {
    const double pages = 4096.0 * ((i * 7919) % 5);  // RSS moves by pages either way
    steady.push_back(300 * kMiB + pages);
    stepped.push_back(300 * kMiB + pages + (i > 5000 ? 132.0 * 1024 : 0) + (i > 8000 ? 132.0 * 1024 : 0));
    leak.push_back(300 * kMiB + pages + 1024.0 * i);
  }
  EXPECT_NEAR(slopePerFrame(leak, 1000), 1024.0, 1.0);
  EXPECT_TRUE((Series{"steady", steady}.flat(1000, kHostBoundMiB)));
  EXPECT_TRUE((Series{"two heap steps", stepped}.flat(1000, kHostBoundMiB)));
  EXPECT_FALSE((Series{"1 KiB a frame", leak}.flat(1000, kHostBoundMiB)));
  // 200 frames (the default here): only a leak of several KiB a frame stands out from the noise.
  const std::vector<double> shortLeak(leak.begin(), leak.begin() + 200);
  EXPECT_TRUE((Series{"short, 1 KiB a frame", shortLeak}.flat(20, kHostBoundMiB)));
  std::vector<double> bigLeak;
  for (int i = 0; i < 200; ++i) bigLeak.push_back(300 * kMiB + 8192.0 * i);
  EXPECT_FALSE((Series{"short, 8 KiB a frame", bigLeak}.flat(20, kHostBoundMiB)));
}

TEST_F(MandelbrotGui, ZoomSoakKeepsHostAndDeviceMemoryFlat) {
  const int frames = envInt("GPULAB_SOAK_FRAMES", 200);
  const QSize canvas = [] {
    const QList<QByteArray> wh =
        qEnvironmentVariable("GPULAB_SOAK_CANVAS", QStringLiteral("320x180")).toLatin1().split('x');
    return wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize(320, 180);
  }();
  const bool gpu = cudaAvailable();
  Harness h(canvas);
  ASSERT_TRUE(h.settle()) << "the first frame never came";
  h.recordPresented = false;  // the harness's own record of every frame (it was 1.3 KiB a frame with the
  h.presented.clear();        // benchmark's, the growth the first 10000-frame soak saw)
  h.presented.shrink_to_fit();

  Series host{"host RSS", {}}, gpuUsed{"GPU memory used", {}};
  // What malloc hands out (in use) and what it holds from the system (arenas and mmapped blocks):
  // RSS that grows while `inUse` stays flat is the allocator keeping freed memory, not a leak.
  Series inUse{"malloc in use", {}}, held{"malloc held", {}};
  for (Series* s : {&host, &gpuUsed, &inUse, &held})
    s->samples.reserve(4 * static_cast<std::size_t>(frames) + 64);  // no regrowth while measured
  const int leakBytes = envInt("GPULAB_SOAK_LEAK_BYTES", 0);
  std::vector<std::unique_ptr<char[]>> leaked;  // GPULAB_SOAK_LEAK_BYTES: the leak the verdict must catch
  const auto sample = [&] {
    if (leakBytes > 0) {
      leaked.push_back(std::make_unique<char[]>(static_cast<std::size_t>(leakBytes)));
      std::fill_n(leaked.back().get(), leakBytes, '\1');  // touched, so it is resident
    }
    host.samples.push_back(residentBytes());
    const struct mallinfo2 heap = mallinfo2();
    inUse.samples.push_back(static_cast<double>(heap.uordblks + heap.hblkhd));
    held.samples.push_back(static_cast<double>(heap.arena + heap.hblkhd));
    if (gpu) {
      const MemoryUsage m = deviceMemory();
      gpuUsed.samples.push_back(static_cast<double>(m.total - m.free));
    }
  };
  sample();
  QObject::connect(&h.tab, &MandelbrotTab::framePresented, [&](const MandelbrotFrameInfo&) { sample(); });

  MandelbrotZoomBenchmark::Options options;
  options.steps = frames;
  options.rateHz = 0;  // the next step once a frame of the current view is painted
  options.timeoutMs = envInt("GPULAB_SOAK_TIMEOUT_MS", 600000);
  MandelbrotZoomBenchmark soak(h.tab, options);
  bool finished = false;
  MandelbrotZoomBenchmark::Result result;
  QObject::connect(&soak, &MandelbrotZoomBenchmark::finished, [&](const MandelbrotZoomBenchmark::Result& r) {
    result = r;
    finished = true;
  });
  soak.start();
  ASSERT_TRUE(waitUntil([&] { return finished; }, options.timeoutMs + 10000));
  ASSERT_TRUE(result.error.isEmpty()) << result.error.toStdString();

  const std::size_t warmup = std::max<std::size_t>(20, host.samples.size() / 10);
  std::printf(
      "GUI soak: %d zoom steps%s, %d frames presented (%d full, %d reduced) on a %dx%d canvas, %s, in %.1f s; "
      "deepest width %.3g; warm-up %zu frames\n",
      frames, result.timedOut ? " (STOPPED by the time limit)" : "", result.framesPresented, result.fullFrames,
      result.reducedFrames, canvas.width(), canvas.height(), gpu ? selectedDeviceLabel().c_str() : "CPU (no GPU)",
      result.seconds, result.deepestWidth, warmup);
  EXPECT_TRUE(host.flat(warmup, kHostBoundMiB)) << "host memory grew";
  (void)inUse.flat(warmup, kHostBoundMiB);  // figures only: they tell a leak from the allocator's keeping
  (void)held.flat(warmup, kHostBoundMiB);
  {
    const double before = residentBytes();
    malloc_trim(0);
    std::printf("malloc_trim(0) at the end: host RSS %.2f -> %.2f MiB\n", before / kMiB, residentBytes() / kMiB);
  }
  if (gpu) {
    // The driver takes GPU memory in 2 MiB pieces: a slope in bytes a frame means little there.
    EXPECT_TRUE(gpuUsed.flat(warmup, kGpuBoundMiB, false)) << "GPU memory grew";
  }
  if (const QByteArray path = qgetenv("GPULAB_SOAK_SERIES"); !path.isEmpty()) {
    std::ofstream series(path.toStdString());
    for (std::size_t i = 0; i < host.samples.size(); ++i)
      series << i << ' ' << host.samples[i] << ' ' << (i < gpuUsed.samples.size() ? gpuUsed.samples[i] : 0.0) << ' '
             << inUse.samples[i] << ' ' << held.samples[i] << '\n';
  }
  std::fflush(stdout);
  // After the figures, so that a run stopped by its time limit still reports what it saw.
  EXPECT_FALSE(result.timedOut) << "the soak did not finish in " << options.timeoutMs << " ms";
  EXPECT_GE(result.framesPresented, frames);
}

}  // namespace
}  // namespace gpulab::gui::mandelbrot_test
