// The GUI soak: the Mandelbrot tab driven offscreen through many wheel-zoom frames in one process
// (the zoom benchmark's steps, each sent once a frame of the current view is painted: 100 notches in
// towards seahorse valley, 100 out, and again), with the host's resident set and the GPU's used
// memory sampled at every frame. Start, after warm-up, end and peak are printed; memory must be flat
// after warm-up. GPULAB_SOAK_FRAMES sets the frames (default 200: the CPU path here in a few seconds;
// scripts/gpu-check.sh soak plays 10000 on the GPU), GPULAB_SOAK_CANVAS the canvas (default 320x180).
#include <unistd.h>

#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gui/mandelbrot_gui_harness.hpp"
#include "mandelbrot/mandelbrot_zoom_benchmark.hpp"

namespace gpulab::gui::mandelbrot_test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kHostBoundMiB = 16;  // Qt's and the worker's caches settle during warm-up
constexpr double kGpuBoundMiB = 8;

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

struct Series {
  const char* what;
  std::vector<double> samples;
  /// Prints the figures; true when the growth from the end of warm-up to the end is within `boundMiB`.
  bool flat(std::size_t warmup, double boundMiB) const {
    const double atWarmup = samples[std::min(warmup, samples.size() - 1)];
    const double growth = (samples.back() - atWarmup) / kMiB;
    std::printf(
        "%s: start %.1f MiB, after warm-up %.1f MiB, end %.1f MiB, peak %.1f MiB; growth after warm-up "
        "%+.2f MiB (bound %.0f MiB)\n",
        what, samples.front() / kMiB, atWarmup / kMiB, samples.back() / kMiB,
        *std::max_element(samples.begin(), samples.end()) / kMiB, growth, boundMiB);
    return growth <= boundMiB;
  }
};

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

  Series host{"host RSS", {}}, gpuUsed{"GPU memory used", {}};
  const auto sample = [&] {
    host.samples.push_back(residentBytes());
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
  if (gpu) {
    EXPECT_TRUE(gpuUsed.flat(warmup, kGpuBoundMiB)) << "GPU memory grew";
  }
  std::fflush(stdout);
  // After the figures, so that a run stopped by its time limit still reports what it saw.
  EXPECT_FALSE(result.timedOut) << "the soak did not finish in " << options.timeoutMs << " ms";
  EXPECT_GE(result.framesPresented, frames);
}

}  // namespace
}  // namespace gpulab::gui::mandelbrot_test
