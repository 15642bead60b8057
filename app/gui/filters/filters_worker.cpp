#include "filters/filters_worker.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

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
  const gpulab::Image& input = convert ? state.converted->image : *photo;

  gpulab::MeasureSetup setup;
  setup.wantCpu = request.wantCpu;
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
      setup.resident = &ctx.devicePhoto();  // uploaded once, when the photo was set: no upload timed
      setup.gpuOutput = &state.gpuOutput;
    }
  }
  setup.control = ctx.cpuControl();
  gpulab::MeasureResult measured = gpulab::measure(op, input, setup, gpulab::MeasurePolicy::interactive());
  if (convert) {
    if (!measured.gpuOutput.empty())
      measured.gpuOutput = gpulab::finishFilterResult(std::move(measured.gpuOutput), *state.converted);
    if (!measured.cpuOutput.empty())
      measured.cpuOutput = gpulab::finishFilterResult(std::move(measured.cpuOutput), *state.converted);
  }
  if (!gpuSkipped.empty()) measured.record.gpuSkipped = gpuSkipped;
  if (convert) {  // the record names the photo's type, not the f32 it ran as
    measured.record.input = gpulab::shapeOf(*photo);
    measured.record.output = gpulab::filterResultShape(op, gpulab::shapeOf(*photo));
  }
  run.record = std::move(measured.record);
  if (run.record.input) run.beforeOffset = beforeOffsetFor(*run.record.input, run.record.output);
  if (run.record.gpu) run.gpuMethodNote = QString::fromStdString(op.methodNote(gpulab::Side::Gpu));
  if (run.record.cpu) run.cpuMethodNote = QString::fromStdString(op.methodNote(gpulab::Side::Cpu));

  DisplayRange range;
  if (!measured.gpuOutput.empty()) {
    run.gpu = std::make_shared<const gpulab::Image>(std::move(measured.gpuOutput));
    run.gpuDisplay = toQImage(*run.gpu, &range);
    run.displayNote = describeRange(*run.gpu, range);
  }
  if (!measured.cpuOutput.empty()) {
    run.cpu = std::make_shared<const gpulab::Image>(std::move(measured.cpuOutput));
    run.cpuDisplay = toQImage(*run.cpu, &range);
    if (!run.gpu) run.displayNote = describeRange(*run.cpu, range);
  }
  if (convert && !state.converted->note.empty())
    run.displayNote = QString::fromStdString(state.converted->note) +
                      (run.displayNote.isEmpty() ? QString() : QStringLiteral("; ") + run.displayNote);
  return run;
}

int keepAsPhoto(FiltersWorkerState& state, WorkerContext& ctx, const std::shared_ptr<const gpulab::Image>& image,
                quint64 generation, const QString& previousSource, const QString& source, int depth) {
  if (!ctx.hasPhoto() || ctx.photoGeneration() != generation)
    throw std::runtime_error("the photo changed since this result was computed; apply the filter again");
  if (state.ownGeneration != generation) state.undo.clear();  // the photo came from elsewhere
  state.undo.push_back({ctx.sharedPhoto(), previousSource});
  if (state.undo.size() > static_cast<std::size_t>(depth)) state.undo.erase(state.undo.begin());
  ctx.setPhoto(gpulab::Image(*image), source);
  state.ownGeneration = ctx.photoGeneration();
  return static_cast<int>(state.undo.size());
}

int undoKeep(FiltersWorkerState& state, WorkerContext& ctx) {
  if (state.undo.empty() || ctx.photoGeneration() != state.ownGeneration) {
    state.undo.clear();
    throw std::runtime_error("there is nothing to undo: the photo was replaced since the last Keep");
  }
  FiltersWorkerState::Saved previous = std::move(state.undo.back());
  state.undo.pop_back();
  ctx.setPhoto(gpulab::Image(*previous.image), previous.source);
  state.ownGeneration = ctx.photoGeneration();
  return static_cast<int>(state.undo.size());
}

}  // namespace gpulab::gui
