#include "mandelbrot/mandelbrot_worker.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <functional>

#include "gpulab/core/device.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/multi_gpu.hpp"
#include "gpulab/measure/harness.hpp"
#include "shell/worker_context.hpp"

namespace gpulab::gui {
namespace {

static_assert(std::endian::native == std::endian::little, "ChannelOrder::Bgra is QImage::Format_RGB32 here");

/// The RGBA frame as the canvas draws it fastest: RGB32, the raster backing store's own layout, so a
/// paint copies (or scales) pixels without converting them. Converted here, on the worker.
QImage displayImage(const gpulab::Image& rgba) {
  const QImage wrapped(reinterpret_cast<const uchar*>(rgba.data()), rgba.width(), rgba.height(),
                       static_cast<qsizetype>(rgba.rowBytes()), QImage::Format_RGBA8888);
  return wrapped.convertToFormat(QImage::Format_RGB32);
}

ReferenceInfo referenceInfo(const gpulab::DeepFrame& d) {
  return {d.referenceReused, d.referenceMs, d.blaMs, d.referenceLength, d.precisionBits};
}

}  // namespace

FrameResult renderFrame(MandelbrotWorkerState& state, WorkerContext& ctx, const gpulab::MandelbrotView& view,
                        const gpulab::Colouring& colouring, bool recolourOnly, bool wantCounts) {
  FrameResult r;
  const gpulab::MandelbrotOptions options;
  const gpulab::PrecisionChoice choice = gpulab::choosePrecision(view);
  const bool deep = choice.used == gpulab::Precision::Perturbation;
  const std::atomic<bool>* cancel = ctx.cpuControl().cancel;
  r.precision = QString::fromStdString(choice.label());
  auto gpuFrame = [&] {
    gpulab::GpuContext& gpu = ctx.gpu();
    if (!recolourOnly || !(state.gpuRawView == view) || !state.renderer.hasFrame()) {
      state.gpuRawView.reset();
      gpulab::MandelbrotRenderer& renderer = state.renderer;
      auto timed = [&](const std::function<void()>& enqueue) {
        // One run, no warm-up: a frame is computed once and shown (after the first frame the module is
        // loaded), so its time is that one run's.
        return gpulab::measureStream(gpu.stream(), enqueue, gpulab::MeasurePolicy::once(), ctx.cpuControl()).medianMs;
      };
      if (gpulab::DeepRenderer* perturbation = deep ? renderer.deepRenderer() : nullptr) {
        // The reference, its table and their upload first, untimed; compute() then finds them ready and
        // only enqueues the kernel, which is what the events time.
        r.reference =
            referenceInfo(perturbation->prepare(gpu, gpulab::deepViewOf(view), gpulab::deepOptionsOf(options), cancel));
        r.computeMs = timed([&] { renderer.compute(gpu, view, options, cancel); });
      } else if (deep) {  // the first deep frame creates the perturbation path: time a relaunch
        r.reference = referenceInfo(*renderer.compute(gpu, view, options, cancel).deep);
        r.computeMs = timed([&] { renderer.relaunch(gpu); });
      } else {
        r.computeMs = timed([&] { renderer.compute(gpu, view, options, cancel); });
      }
      state.gpuRawView = view;
      if (wantCounts) r.counts = countFrame(renderer.downloadRaw(gpu), view.maxIterations);
    }
    // BGRA straight into an RGB32 image: the backing store's layout, no conversion anywhere.
    state.renderer.colour(gpu, colouring, gpulab::ChannelOrder::Bgra);
    r.image = QImage(view.imageWidth, view.imageHeight, QImage::Format_RGB32);
    state.renderer.downloadRgba(gpu, reinterpret_cast<std::byte*>(r.image.bits()),
                                static_cast<std::size_t>(r.image.bytesPerLine()));
    r.onGpu = true;
  };
  auto cpuFrame = [&] {
    if (!recolourOnly || !(state.cpuRawView == view)) {
      state.cpuRawView.reset();
      const double ms =
          gpulab::measureHost([&] { state.cpuRaw = state.cpuRenderer.compute(view, options, ctx.cpuControl()); },
                              gpulab::MeasurePolicy::once())
              .medianMs;
      r.computeMs = ms;
      if (deep) {  // the reference and its table were prepared on this thread too: reported apart
        const gpulab::DeepReference::Update& u = state.cpuRenderer.lastReferenceUpdate();
        r.reference = ReferenceInfo{!u.orbitComputed, u.referenceMs, u.blaMs, 0, 0};
        r.computeMs = std::max(0.0, ms - u.referenceMs - u.blaMs);
      }
      state.cpuRawView = view;
      if (wantCounts) r.counts = countFrame(state.cpuRaw, view.maxIterations);
    }
    r.image = displayImage(gpulab::colourRaw(state.cpuRaw, colouring, view.supersample));
  };
  // The whole job is what the tab's frame budget weighs.
  r.workerMs = gpulab::measureHost(ctx.hasGpu() ? std::function<void()>(gpuFrame) : std::function<void()>(cpuFrame),
                                   gpulab::MeasurePolicy::once())
                   .medianMs;
  return r;
}

gpulab::Measurement measureCpuRender(MandelbrotWorkerState& state, WorkerContext& ctx,
                                     const gpulab::MandelbrotView& view) {
  gpulab::MandelbrotMeasureSetup setup;
  if (ctx.hasGpu()) {
    setup.gpu = &ctx.gpu();
    setup.renderer = &state.renderer;
    state.gpuRawView.reset();
  }
  setup.wantCpu = true;
  setup.control = ctx.cpuControl();
  gpulab::Measurement m = gpulab::measureMandelbrot(view, {}, setup, gpulab::MeasurePolicy::interactive());
  if (setup.gpu != nullptr) state.gpuRawView = view;  // the last timed run left this view's raw plane
  return m;
}

SavedPng renderPng(WorkerContext& ctx, const gpulab::MandelbrotView& view, const gpulab::Colouring& colouring,
                   const gpulab::PrecisionChoice& used, const QString& path, const std::vector<int>& gpus) {
  SavedPng saved;
  saved.ms =
      gpulab::measureHost(
          [&] {
            gpulab::Image rgba;
            if (ctx.hasGpu()) {
              // In row bands even on one GPU: a cancel is answered between bands (one launch over an 8K
              // supersampled deep still can take many seconds), and the image is bit-identical to one
              // launch over the whole frame (multi_gpu.hpp). Its own buffers: nothing kept afterwards.
              const bool several = gpus.size() > 1;
              const std::vector<int> devices = several ? gpus : std::vector<int>{ctx.gpu().device()};
              gpulab::StillSplitOptions split;
              split.colouring = colouring;
              split.wantRaw = false;
              split.cancel = ctx.cpuControl().cancel;
              gpulab::SplitStill still = gpulab::renderStillOnGpus(devices, view, {}, split);
              rgba = std::move(still.rgba);
              if (several)
                saved.split = QStringLiteral("on %1 (rows: %2)")
                                  .arg(QString::fromStdString(gpulab::deviceLabels(gpus)),
                                       QString::fromStdString(still.report.sharesText()));
              if (still.report.anyFailed())
                saved.split += QStringLiteral(". ") + QString::fromStdString(still.report.failureSentence());
            } else {
              rgba = gpulab::colourRaw(gpulab::renderRawCpu(view, {}, ctx.cpuControl()), colouring, view.supersample);
            }
            ctx.throwIfCancelled();
            gpulab::savePngWithText(gpulab::opaqueToRgb(rgba), path.toStdString(),
                                    gpulab::pngTextFromView(view, colouring, used));
          },
          gpulab::MeasurePolicy::once())
          .medianMs;
  return saved;
}

StoredView readPngView(const QString& path) {
  const auto text = gpulab::readPngText(path.toStdString());
  return {gpulab::viewFromPngText(text), gpulab::colouringFromPngText(text)};
}

gpulab::Nucleus findMinibrot(WorkerContext& ctx, const gpulab::MandelbrotView& view) {
  return gpulab::findNucleusNear(gpulab::deepViewOf(view), ctx.cpuControl().cancel);
}

}  // namespace gpulab::gui
