// The Mandelbrot tab's work on the engine's worker thread: frames (compute, colour, download), the CPU
// render measured against the GPU, PNG files and the Newton search for minibrots. Nothing here touches
// a widget; the tab submits these through Engine::submit and shows what comes back. Every long step
// checks the job's cancel flag (the reference orbit, the CPU rows, Newton's method).
#pragma once

#include <QImage>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "gpulab/mandelbrot/newton_zoom.hpp"
#include "gpulab/measure/record.hpp"
#include "mandelbrot/mandelbrot_view.hpp"
#include "widgets/gpu_checklist.hpp"

namespace gpulab::gui {

class WorkerContext;

/// What the tab keeps on the worker: the renderers (the GPU's raw plane stays on the GPU between frames,
/// so a new palette recolours without recomputing; both keep their deep reference orbit while the view
/// stays in the region it serves) and, without a GPU, the CPU's last raw plane.
struct MandelbrotWorkerState {
  gpulab::MandelbrotRenderer renderer;
  std::optional<gpulab::MandelbrotView> gpuRawView;  // what the renderer's raw plane holds
  gpulab::MandelbrotCpuRenderer cpuRenderer;
  gpulab::Image cpuRaw;
  std::optional<gpulab::MandelbrotView> cpuRawView;
};

/// One frame, as the worker hands it back.
struct FrameResult {
  QImage image;                     ///< RGB32, the raster backing store's own layout
  std::optional<double> computeMs;  ///< the escape-time or perturbation pass; empty for a recolour
  double workerMs = 0;              ///< the whole job: reference, compute, colour, download, conversion
  bool onGpu = false;
  QString precision;                       ///< PrecisionChoice::label(): "f32" .. "perturbation floatexp"
  std::optional<ReferenceInfo> reference;  ///< perturbation frames that computed
  std::optional<FrameCounts> counts;       ///< when asked for (the raw plane read back on the GPU)
};

/// Renders `view` coloured with `colouring`: on the GPU when there is one, else on every CPU core.
/// With `recolourOnly`, a raw plane that already holds `view` is coloured again without recomputing.
/// The compute pass is timed alone and once (a frame is shown once; no warm-up) with the harness's
/// primitives, gpulab::measureStream on the GPU and gpulab::measureHost on the CPU; a deep frame's
/// reference orbit and BLA table are prepared before that and reported apart (ReferenceInfo). With
/// `wantCounts` the raw plane's counts come back too (FrameCounts, for the iteration cap).
/// Throws OperationCancelled when the job is cancelled (the previous reference stays usable).
FrameResult renderFrame(MandelbrotWorkerState& state, WorkerContext& ctx, const gpulab::MandelbrotView& view,
                        const gpulab::Colouring& colouring, bool recolourOnly, bool wantCounts = false);

/// "CPU render": `view` on every CPU core side by side with the GPU's compute pass when there is a
/// GPU, measured by gpulab::measureMandelbrot with MeasurePolicy::interactive() (warm-ups excluded,
/// medians). Leaves the renderer's raw plane holding `view`.
gpulab::Measurement measureCpuRender(MandelbrotWorkerState& state, WorkerContext& ctx,
                                     const gpulab::MandelbrotView& view);

/// What renderPng did.
struct SavedPng {
  double ms = 0;  ///< the whole job
  QString split;  ///< with several GPUs: "on GPU 0 and GPU 1 (rows: ...)", and a failed GPU's sentence
};

/// Renders `view` (any size, supersampled as it says) with its own buffers and writes it to `path` as a
/// PNG with the view in its text fields (every digit of a deep view). With two or more `gpus` the still
/// is split over them (gpulab::renderStillOnGpus: rows in bands to whichever GPU is free, a deep view's
/// reference computed once); otherwise the worker's GPU renders it, or without one every CPU core.
SavedPng renderPng(WorkerContext& ctx, const gpulab::MandelbrotView& view, const gpulab::Colouring& colouring,
                   const gpulab::PrecisionChoice& used, const QString& path, const std::vector<int>& gpus = {});

/// The view and colouring stored in a PNG written by renderPng or gpulab-cli (std::invalid_argument
/// with one sentence when the PNG holds none).
struct StoredView {
  gpulab::MandelbrotView view;
  gpulab::Colouring colouring;
};
StoredView readPngView(const QString& path);

/// The minibrot nearest `view`'s centre (gpulab::findNucleusNear, about a second at deep views).
/// Throws gpulab::NewtonError with one sentence when there is none or Newton does not converge.
gpulab::Nucleus findMinibrot(WorkerContext& ctx, const gpulab::MandelbrotView& view);

}  // namespace gpulab::gui
