// The zoom benchmark: the interactive frame rate of the Mandelbrot tab, display included
// (`gpulab --zoom-benchmark N`). It counts frames the canvas paints against the wall clock: that
// measures the display pipeline, not an operation; each frame's compute time comes from the engine's
// harness (MandelbrotFrameInfo::computeMs).
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QPointF>
#include <QSize>
#include <QString>
#include <optional>
#include <vector>

#include "gpulab/core/timing.hpp"
#include "mandelbrot/mandelbrot_view.hpp"

class QTimer;

namespace gpulab::gui {

class MandelbrotTab;

/// Plays wheel-zoom steps on a tab's canvas and measures the frames the canvas paints.
///
/// The steps zoom by one wheel notch (1.25x) about the canvas pixel that shows `target` in the whole-set
/// view: `depthSteps` in, then as many out, and so on (100 notches reach width 6e-10, float64's
/// territory; 160 pass float64's limit into perturbation). `rateHz` > 0 sends them at that cadence whatever the frames
/// do (a fast wheel spin: the coalescing and the progressive frames decide what is drawn); 0 sends the next step once a
/// frame of the current view has been painted (the pipeline's own pace). The result counts the frames painted from the
/// first step until the frame of the last view is painted.
class MandelbrotZoomBenchmark : public QObject {
  Q_OBJECT

 public:
  struct Options {
    int steps = 200;
    double rateHz = 120.0;
    int depthSteps = 100;
    QPointF target{-0.743643887037151, 0.13182590420533};  ///< seahorse valley
    QSize canvasSize;  ///< resize the window so the canvas has this many pixels; empty: as it is
    int timeoutMs = 120000;
  };
  struct Result {
    QSize canvas;
    QSize requested;  ///< Options::canvasSize
    int steps = 0;
    int framesPresented = 0;
    int fullFrames = 0;  ///< at the canvas's resolution
    int reducedFrames = 0;
    int recolouredFrames = 0;
    double seconds = 0;
    double framesPerSecond = 0;
    gpulab::Stats computeMs;  ///< over the presented frames that computed (reps = their number)
    gpulab::Stats workerMs;
    gpulab::Stats latencyMs;
    double deepestWidth = 0;
    bool onGpu = false;
    bool timedOut = false;
    QString error;  ///< what went wrong, when nothing could be measured
  };

  MandelbrotZoomBenchmark(MandelbrotTab& tab, Options options, QObject* parent = nullptr);
  /// Starts once the tab shows a full-resolution frame of the whole set; `finished` follows.
  void start();
  /// The report printed by `gpulab --zoom-benchmark`.
  static QString describe(const Result& result);

 signals:
  void finished(const gpulab::gui::MandelbrotZoomBenchmark::Result& result);

 private:
  void fitCanvas(int attempt);
  void waitForRest();
  void step();
  void presented(const MandelbrotFrameInfo& info);
  void finish(bool timedOut);

  MandelbrotTab& tab_;
  Options options_;
  QElapsedTimer clock_;
  QTimer* stepTimer_ = nullptr;
  QTimer* timeout_ = nullptr;
  QPointF cursor_;  // widget coordinates of the zoom centre
  int sent_ = 0;
  bool measuring_ = false;
  bool waitingForLast_ = false;
  bool done_ = false;
  double startMs_ = 0;
  double lastPresentMs_ = 0;
  /// What finish() summarises of one painted frame: a few numbers, not the frame's MandelbrotFrameInfo
  /// (its view's decimal digits and labels, ~550 bytes), so that a long soak measures the tab's memory
  /// rather than the benchmark's own records (reserved when measuring starts).
  struct FrameSample {
    std::optional<double> computeMs;
    double workerMs = 0;
    double latencyMs = 0;
    bool full = false;
    bool onGpu = false;
  };
  std::vector<FrameSample> frames_;
  double deepestWidth_ = 0;
};

}  // namespace gpulab::gui
