#include "mandelbrot/mandelbrot_zoom_benchmark.hpp"

#include <QCoreApplication>
#include <QTimer>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "mandelbrot/mandelbrot_canvas.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

MandelbrotZoomBenchmark::MandelbrotZoomBenchmark(MandelbrotTab& tab, Options options, QObject* parent)
    : QObject(parent), tab_(tab), options_(std::move(options)) {
  stepTimer_ = new QTimer(this);
  stepTimer_->setTimerType(Qt::PreciseTimer);
  timeout_ = new QTimer(this);
  timeout_->setSingleShot(true);
  connect(stepTimer_, &QTimer::timeout, this, &MandelbrotZoomBenchmark::step);
  connect(timeout_, &QTimer::timeout, this, [this] { finish(true); });
  connect(&tab_, &MandelbrotTab::framePresented, this, &MandelbrotZoomBenchmark::presented);
}

void MandelbrotZoomBenchmark::start() {
  clock_.start();
  timeout_->start(options_.timeoutMs);
  fitCanvas(0);
}

// The window is resized by what the canvas lacks; the layout settles in the event loop, so this checks
// again a few times.
void MandelbrotZoomBenchmark::fitCanvas(int attempt) {
  const QSize want = options_.canvasSize;
  const QSize have = tab_.canvas().size();
  if (!want.isValid() || want == have || attempt >= 5) {
    tab_.home();
    waitForRest();
    return;
  }
  QWidget* window = tab_.window();
  window->resize(window->size() + (want - have));
  QTimer::singleShot(50, this, [this, attempt] { fitCanvas(attempt + 1); });
}

void MandelbrotZoomBenchmark::waitForRest() {
  if (done_) return;
  if (!tab_.showsCurrentView()) {
    QTimer::singleShot(20, this, &MandelbrotZoomBenchmark::waitForRest);
    return;
  }
  const MandelbrotView& v = tab_.view();
  const double h = v.widthValue() / v.imageWidth;  // the benchmark starts from the whole set
  const QPointF pixel((options_.target.x() - v.x()) / h + 0.5 * v.imageWidth,
                      (v.y() - options_.target.y()) / h + 0.5 * v.imageHeight);
  const double dpr = tab_.canvas().devicePixelRatioF();
  cursor_ =
      QPointF(std::clamp(pixel.x(), 0.0, v.imageWidth - 1.0), std::clamp(pixel.y(), 0.0, v.imageHeight - 1.0)) / dpr;
  deepestWidth_ = v.widthValue();
  measuring_ = true;
  frames_.reserve(2 * static_cast<std::size_t>(std::max(options_.steps, 0)) + 16);  // no regrowth while measured
  startMs_ = static_cast<double>(clock_.nsecsElapsed()) * 1e-6;
  lastPresentMs_ = startMs_;
  if (options_.rateHz > 0) {
    stepTimer_->start(std::max(1, static_cast<int>(std::lround(1000.0 / options_.rateHz))));
    step();
  } else {
    step();
  }
}

void MandelbrotZoomBenchmark::step() {
  if (done_) return;
  if (sent_ >= options_.steps) {
    stepTimer_->stop();
    waitingForLast_ = true;
    return;
  }
  const bool zoomIn = (sent_ / std::max(1, options_.depthSteps)) % 2 == 0;
  MandelbrotCanvas& canvas = tab_.canvas();
  QWheelEvent wheel(cursor_, canvas.mapToGlobal(cursor_), QPoint(), QPoint(0, zoomIn ? 120 : -120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(&canvas, &wheel);
  ++sent_;
  deepestWidth_ = std::min(deepestWidth_, tab_.view().widthValue());
  if (sent_ >= options_.steps) {
    stepTimer_->stop();
    waitingForLast_ = true;
  }
}

void MandelbrotZoomBenchmark::presented(const MandelbrotFrameInfo& info) {
  if (!measuring_ || done_) return;
  frames_.push_back({info.computeMs, info.workerMs, info.latencyMs, info.divisor == 1, info.onGpu});
  lastPresentMs_ = static_cast<double>(clock_.nsecsElapsed()) * 1e-6;
  if (!samePlace(info.view, tab_.view())) return;  // a frame of an older view
  if (waitingForLast_)
    finish(false);
  else if (options_.rateHz <= 0)
    QTimer::singleShot(0, this, &MandelbrotZoomBenchmark::step);  // the pipeline's own pace
}

void MandelbrotZoomBenchmark::finish(bool timedOut) {
  if (done_) return;
  done_ = true;
  stepTimer_->stop();
  timeout_->stop();
  Result r;
  r.canvas = tab_.canvas().pixelSize();
  r.requested = options_.canvasSize;
  r.steps = sent_;
  r.timedOut = timedOut;
  r.deepestWidth = deepestWidth_;
  r.framesPresented = static_cast<int>(frames_.size());
  r.seconds = (lastPresentMs_ - startMs_) * 1e-3;
  std::vector<double> compute, worker, latency;
  for (const FrameSample& f : frames_) {
    if (!f.computeMs)
      ++r.recolouredFrames;
    else
      compute.push_back(*f.computeMs);
    (f.full ? r.fullFrames : r.reducedFrames) += 1;
    worker.push_back(f.workerMs);
    latency.push_back(f.latencyMs);
    r.onGpu = f.onGpu;
  }
  if (!measuring_)
    r.error = tr("the tab never showed its first frame");
  else if (frames_.empty())
    r.error = tr("no frame was painted");
  if (!compute.empty()) r.computeMs = gpulab::Stats::of(compute);
  if (!worker.empty()) r.workerMs = gpulab::Stats::of(worker);
  if (!latency.empty()) r.latencyMs = gpulab::Stats::of(latency);
  if (r.seconds > 0) r.framesPerSecond = r.framesPresented / r.seconds;
  emit finished(r);
}

QString MandelbrotZoomBenchmark::describe(const Result& r) {
  auto stats = [](const gpulab::Stats& s) {
    return QStringLiteral("median %1 ms (min %2, max %3)")
        .arg(s.medianMs, 0, 'f', 3)
        .arg(s.minMs, 0, 'f', 3)
        .arg(s.maxMs, 0, 'f', 3);
  };
  QStringList lines;
  lines << QStringLiteral("zoom benchmark: canvas %1x%2, %3 wheel steps (1.25x each), deepest width %4, %5")
               .arg(r.canvas.width())
               .arg(r.canvas.height())
               .arg(r.steps)
               .arg(r.deepestWidth, 0, 'g', 3)
               .arg(r.onGpu ? QStringLiteral("frames on the GPU") : QStringLiteral("frames on the CPU (no GPU)"));
  if (r.requested.isValid() && r.requested != r.canvas)
    lines << QStringLiteral("(asked for a %1x%2 canvas: the window's other widgets did not leave that size)")
                 .arg(r.requested.width())
                 .arg(r.requested.height());
  if (!r.error.isEmpty()) {
    lines << QStringLiteral("failed: %1").arg(r.error);
    return lines.join(QLatin1Char('\n'));
  }
  const double n = std::max(1, r.framesPresented);
  lines << QStringLiteral("frames painted: %1 in %2 s = %3 frames/s (display included)%4")
               .arg(r.framesPresented)
               .arg(r.seconds, 0, 'f', 3)
               .arg(r.framesPerSecond, 0, 'f', 1)
               .arg(r.timedOut ? QStringLiteral(" [timed out before the last view was painted]") : QString());
  lines << QStringLiteral("resolution: %1 full (%2%), %3 reduced (%4%), %5 recoloured only")
               .arg(r.fullFrames)
               .arg(100.0 * r.fullFrames / n, 0, 'f', 1)
               .arg(r.reducedFrames)
               .arg(100.0 * r.reducedFrames / n, 0, 'f', 1)
               .arg(r.recolouredFrames);
  if (r.computeMs.reps > 0)
    lines << QStringLiteral("%1 compute per frame: %2 over %3 frames")
                 .arg(r.onGpu ? QStringLiteral("GPU") : QStringLiteral("CPU"), stats(r.computeMs))
                 .arg(r.computeMs.reps);
  if (r.workerMs.reps > 0)
    lines << QStringLiteral("worker per frame (compute, colour, download, RGB32): %1").arg(stats(r.workerMs));
  if (r.latencyMs.reps > 0) lines << QStringLiteral("request to paint: %1").arg(stats(r.latencyMs));
  return lines.join(QLatin1Char('\n'));
}

}  // namespace gpulab::gui
