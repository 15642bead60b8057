#include "filters/filters_worker.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "gpulab/core/nonfinite.hpp"
#include "gpulab/core/roi.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/measure/harness.hpp"
#include "shell/worker_context.hpp"
#include "widgets/image_convert.hpp"

namespace gpulab::gui {
namespace {

/// Where the original's top-left pixel lies in the result (see BeforeAfterView::setResult). A result
/// larger or smaller than its input ('full', 'valid' convolution) is centred on it: a kernel k wide
/// grows 'full' by k - 1 (input x is output x + (k - 1) / 2) and shrinks 'valid' by k - 1 (x - k / 2),
/// both floor((out - in) / 2).
QPoint beforeOffsetFor(const gpulab::ImageShape& in, const gpulab::ImageShape& out) {
  auto along = [](int grow) { return static_cast<int>(std::floor(grow / 2.0)); };
  return {along(out.width - in.width), along(out.height - in.height)};
}

}  // namespace

FilterRun runFilter(FiltersWorkerState& state, WorkerContext& ctx, const FilterRequest& request) {
  if (!ctx.hasPhoto()) throw std::runtime_error("there is no photo to filter: open one first");
  const std::shared_ptr<const gpulab::Image> photo = ctx.sharedPhoto();
  FilterRun run;
  run.generation = ctx.photoGeneration();
  run.preview = request.preview;
  if (!state.operation || state.operationName != request.operation || state.operationParams != request.params) {
    state.operation = gpulab::findOperation(request.operation).make(request.params);
    state.operationName = request.operation;
    state.operationParams = request.params;
  }
  gpulab::Operation& op = *state.operation;
  // A u16 photo (or f64 for a filter without f64) runs as f32, uploaded per run, and its results go
  // back to the photo's type: what `gpulab-cli filter` writes for it.
  const bool convert = gpulab::filterWorkingType(op, gpulab::shapeOf(*photo)) != photo->type();
  if (!convert) {
    state.converted.reset();
  } else if (!state.converted || state.convertedGeneration != run.generation ||
             state.converted->image.type() != gpulab::filterWorkingType(op, gpulab::shapeOf(*photo))) {
    state.converted = gpulab::prepareFilterInput(op, *photo);
    state.convertedGeneration = run.generation;
  }
  const gpulab::Image& converted = convert ? state.converted->image : *photo;

  // A region: the operation runs on the region and its halo (the pixels its output reads), cut out of
  // the photo on the host and, from the resident copy, on the GPU; the inner part is pasted back.
  std::optional<gpulab::RoiWindow> roi;
  gpulab::Image windowImage;
  if (request.roi) {
    const gpulab::ImageShape shape = gpulab::shapeOf(converted);
    if (!gpulab::keepsShape(op, shape))
      throw std::invalid_argument(op.describe() + " turns the " + gpulab::describe(shape) + " photo into " +
                                  gpulab::describe(op.outputShape(shape)) +
                                  ", so it cannot be limited to a region: clear the region (Esc) to filter the whole "
                                  "photo");
    roi = gpulab::roiWindow(shape, *request.roi, op.reach());
    windowImage = gpulab::crop(converted, roi->window);
    run.roi = roi->roi;
    run.window = roi->window;
  }
  const gpulab::Image& input = roi ? windowImage : converted;

  gpulab::MeasureSetup setup;
  setup.wantCpu = request.wantCpu && !request.preview;
  setup.wantGpu = false;
  std::string gpuSkipped;
  if (request.wantGpu) {
    if (!ctx.hasGpu()) {
      gpuSkipped = ctx.gpuError().isEmpty() ? std::string("no CUDA device") : ctx.gpuError().toStdString();
    } else if (convert) {
      setup.wantGpu = true;
      setup.gpu = &ctx.gpu();
      setup.gpuOutput = &state.gpuOutput;
    } else if (!ctx.photoOnGpu()) {
      try {
        ctx.devicePhoto();  // throws with the reason
      } catch (const std::exception& e) {
        gpuSkipped = e.what();
      }
    } else {
      setup.wantGpu = true;
      setup.gpu = &ctx.gpu();
      if (roi) {
        gpulab::crop(ctx.gpu(), ctx.devicePhoto(), roi->window, state.roiWindow);
        setup.resident = &state.roiWindow;
      } else {
        setup.resident = &ctx.devicePhoto();  // uploaded once, when the photo was set: no upload timed
      }
      setup.gpuOutput = &state.gpuOutput;
    }
  }
  if (request.preview && !setup.wantGpu)
    throw std::runtime_error("a live preview runs on the GPU: " + (gpuSkipped.empty() ? "none" : gpuSkipped));
  setup.control = ctx.cpuControl();
  setup.withCeiling = !request.preview;
  const gpulab::MeasurePolicy policy =
      request.preview ? gpulab::MeasurePolicy::once() : gpulab::MeasurePolicy::interactive();
  gpulab::MeasureResult measured = gpulab::measure(op, input, setup, policy);
  if (convert) {  // back to the photo's type; under a region, alpha comes from the region's window
    const gpulab::FilterInput windowInput{roi ? windowImage : gpulab::Image(), state.converted->original, {}};
    const gpulab::FilterInput& from = roi ? windowInput : *state.converted;
    if (!measured.gpuOutput.empty())
      measured.gpuOutput = gpulab::finishFilterResult(std::move(measured.gpuOutput), from);
    if (!measured.cpuOutput.empty())
      measured.cpuOutput = gpulab::finishFilterResult(std::move(measured.cpuOutput), from);
  }
  if (!gpuSkipped.empty()) measured.record.gpuSkipped = gpuSkipped;
  if (convert) {  // the record names the photo's type, not the f32 it ran as
    gpulab::ImageShape ran = roi ? gpulab::shapeOf(windowImage) : gpulab::shapeOf(*photo);
    ran.type = photo->type();
    measured.record.input = ran;
    measured.record.output = gpulab::filterResultShape(op, ran);
  }
  run.record = std::move(measured.record);
  if (roi) run.record.description += " · ROI " + std::to_string(roi->roi.width) + "x" + std::to_string(roi->roi.height);
  if (run.record.input && !roi) run.beforeOffset = beforeOffsetFor(*run.record.input, run.record.output);
  if (run.record.gpu) run.gpuMethodNote = QString::fromStdString(op.methodNote(gpulab::Side::Gpu));
  if (run.record.cpu) run.cpuMethodNote = QString::fromStdString(op.methodNote(gpulab::Side::Cpu));

  auto whole = [&](gpulab::Image result) {
    return std::make_shared<const gpulab::Image>(roi ? gpulab::pasteRoi(*photo, result, *roi) : std::move(result));
  };
  DisplayRange range;
  if (!measured.gpuOutput.empty()) {
    run.gpu = whole(std::move(measured.gpuOutput));
    run.gpuDisplay = toQImage(*run.gpu, &range);
    run.displayNote = describeRange(*run.gpu, range);
  }
  if (!measured.cpuOutput.empty()) {
    run.cpu = whole(std::move(measured.cpuOutput));
    run.cpuDisplay = toQImage(*run.cpu, &range);
    if (!run.gpu) run.displayNote = describeRange(*run.cpu, range);
  }
  if (convert && !state.converted->note.empty())
    run.displayNote = QString::fromStdString(state.converted->note) +
                      (run.displayNote.isEmpty() ? QString() : QStringLiteral("; ") + run.displayNote);
  // NaN or inf in the photo or the result is said in the status line, never silent (u8 costs nothing).
  // Compact, so the status bar shows it whole: "input 3 NaN/inf, output 31200 NaN/inf".
  const std::shared_ptr<const gpulab::Image>& shown = run.gpu ? run.gpu : run.cpu;
  const gpulab::NonFiniteCount in = gpulab::countNonFinite(input);
  const gpulab::NonFiniteCount out = shown ? gpulab::countNonFinite(*shown) : gpulab::NonFiniteCount{};
  if (in.total() + out.total() > 0)
    run.nonFiniteNote = QStringLiteral("input %1 NaN/inf, output %2 NaN/inf").arg(in.total()).arg(out.total());
  return run;
}

// ---------------------------------------------------------------------------------------------
// Histograms and profiles

namespace {

ImageAnalysis analyseImage(AnalysisWorkerState& state, WorkerContext& ctx, const gpulab::Image& image,
                           const gpulab::DeviceImage* onGpu, bool cpuBaseline) {
  ImageAnalysis a;
  gpulab::MeasurePolicy policy;
  policy.gpuWarmup = 1;
  policy.gpuReps = 5;
  policy.cpuWarmup = 1;
  policy.cpuReps = 3;
  policy.cpuBudgetMs = 300;
  if (ctx.hasGpu() && onGpu != nullptr) {
    gpulab::GpuContext& gpu = ctx.gpu();
    a.gpuMs = gpulab::measureStream(
                  gpu.stream(), [&] { state.histogram.run(gpu, *onGpu); }, policy, ctx.cpuControl())
                  .medianMs;
    a.histogram = state.histogram.download(gpu);
  } else {
    a.gpuNote = ctx.hasGpu() ? QStringLiteral("GPU: image not on the GPU") : QStringLiteral("no GPU");
  }
  ctx.throwIfCancelled();
  if (a.gpuMs && !cpuBaseline) return a;
  gpulab::Histogram cpu;
  const gpulab::CpuControl control = ctx.cpuControl();
  a.cpuMs = gpulab::measureHost([&] { cpu = gpulab::histogramCpu(image, gpulab::kDefaultFloatBins, control); }, policy,
                                control)
                .medianMs;
  a.cpuThreads = gpulab::cpuThreads();
  if (!a.gpuMs) a.histogram = std::move(cpu);
  return a;
}

std::optional<gpulab::LineProfile> profileOf(const gpulab::Image& image, const std::optional<QLineF>& line) {
  if (!line) return std::nullopt;
  return gpulab::lineProfile(image, line->x1(), line->y1(), line->x2(), line->y2());
}

}  // namespace

AnalysisRun analyse(AnalysisWorkerState& state, WorkerContext& ctx, const AnalysisRequest& request) {
  if (!ctx.hasPhoto() || ctx.photoGeneration() != request.generation)
    throw gpulab::OperationCancelled();  // a newer photo: its own request follows
  AnalysisRun run;
  run.generation = request.generation;
  const gpulab::Image& photo = ctx.photo();
  if (request.photo) run.photo = analyseImage(state, ctx, photo, ctx.photoOnGpu() ? &ctx.devicePhoto() : nullptr, true);
  run.photoProfile = profileOf(photo, request.line);
  if (request.result) {
    const gpulab::DeviceImage* onGpu = nullptr;
    if (ctx.hasGpu()) {
      ctx.gpu().upload(*request.result, state.result);  // not timed: the histogram's compute is
      onGpu = &state.result;
    }
    run.result = analyseImage(state, ctx, *request.result, onGpu, request.cpuBaseline);
    run.resultProfile = profileOf(*request.result, request.line);
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// Undo and redo

void PhotoHistory::push(Entry previous) {
  redo_.clear();
  undo_.push_back(std::move(previous));
  trim();
}

std::optional<PhotoHistory::Entry> PhotoHistory::undo(Entry current) {
  if (undo_.empty()) return std::nullopt;
  Entry back = std::move(undo_.back());
  undo_.pop_back();
  redo_.push_back(std::move(current));
  return back;
}

std::optional<PhotoHistory::Entry> PhotoHistory::redo(Entry current) {
  if (redo_.empty()) return std::nullopt;
  Entry forward = std::move(redo_.back());
  redo_.pop_back();
  undo_.push_back(std::move(current));
  trim();
  return forward;
}

void PhotoHistory::clear() {
  undo_.clear();
  redo_.clear();
}

std::size_t PhotoHistory::bytes() const noexcept {
  std::size_t n = 0;
  for (const auto* side : {&undo_, &redo_})
    for (const Entry& e : *side)
      if (e.image) n += e.image->sizeBytes();
  return n;
}

void PhotoHistory::trim() {
  // Redo steps are already bounded by the undo steps they came from; the oldest undo steps go first.
  while (undo_.size() > 1 && (static_cast<int>(undo_.size()) > maxSteps_ || bytes() > maxBytes_)) undo_.pop_front();
}

HistoryDepth keepAsPhoto(FiltersWorkerState& state, WorkerContext& ctx,
                         const std::shared_ptr<const gpulab::Image>& image, quint64 generation,
                         const QString& previousSource, const QString& source) {
  if (!ctx.hasPhoto() || ctx.photoGeneration() != generation)
    throw std::runtime_error("the photo changed since this result was computed; apply the filter again");
  if (state.ownGeneration != generation) state.history.clear();  // the photo came from elsewhere
  state.history.push({ctx.sharedPhoto(), previousSource});
  ctx.setPhoto(gpulab::Image(*image), source);
  state.ownGeneration = ctx.photoGeneration();
  return {state.history.undoDepth(), state.history.redoDepth()};
}

namespace {

HistoryDepth step(FiltersWorkerState& state, WorkerContext& ctx, const QString& currentSource, bool forward) {
  if (!ctx.hasPhoto() || ctx.photoGeneration() != state.ownGeneration) {
    state.history.clear();
    throw std::runtime_error(std::string("there is nothing to ") + (forward ? "redo" : "undo") +
                             ": the photo was replaced since the last Keep");
  }
  PhotoHistory::Entry current{ctx.sharedPhoto(), currentSource};
  std::optional<PhotoHistory::Entry> next =
      forward ? state.history.redo(std::move(current)) : state.history.undo(std::move(current));
  if (!next) throw std::runtime_error(std::string("there is nothing to ") + (forward ? "redo" : "undo"));
  ctx.setPhoto(gpulab::Image(*next->image), next->source);
  state.ownGeneration = ctx.photoGeneration();
  return {state.history.undoDepth(), state.history.redoDepth()};
}

}  // namespace

HistoryDepth undoKeep(FiltersWorkerState& state, WorkerContext& ctx, const QString& currentSource) {
  return step(state, ctx, currentSource, false);
}

HistoryDepth redoKeep(FiltersWorkerState& state, WorkerContext& ctx, const QString& currentSource) {
  return step(state, ctx, currentSource, true);
}

}  // namespace gpulab::gui
