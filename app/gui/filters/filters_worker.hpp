// The Filters tab's work on the engine's worker thread: an Apply measured by the harness
// (gpulab/measure/harness.hpp), and the photo edits Keep result and Undo make. Nothing here touches a
// widget; the tab submits these through Engine::submit and shows what comes back.
#pragma once

#include <QImage>
#include <QPoint>
#include <QString>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab::gui {

class WorkerContext;

/// One Apply: a registered operation with its parameters as text, and where to run it.
struct FilterRequest {
  std::string operation;  ///< the registry's name: "box", "sobel", "conv", ...
  gpulab::ParamValues params;
  bool wantGpu = true;
  bool wantCpu = true;
};

/// One Apply, as the worker hands it back to the GUI thread.
struct FilterRun {
  quint64 generation = 0;      ///< the photo it was computed from
  gpulab::Measurement record;  ///< what ran, how it was measured, how long it took (the harness's record)
  QString gpuMethodNote;       ///< why the GPU took the method it took (Operation::methodNote), or empty
  QString cpuMethodNote;
  QPoint beforeOffset;  ///< the original's top-left in the result's pixels ('full' / 'valid' convolution)

  std::shared_ptr<const gpulab::Image> gpu;  ///< the GPU's result, when the GPU ran
  QImage gpuDisplay;
  std::shared_ptr<const gpulab::Image> cpu;  ///< the CPU baseline's result, when it ran
  QImage cpuDisplay;
  QString displayNote;  ///< how float results are shown; empty for u8
};

/// What the Filters tab keeps on the worker: the operation and the GPU output reused while the
/// request does not change (plans, cost models and buffers survive), and the photos Undo goes back to.
struct FiltersWorkerState {
  std::unique_ptr<gpulab::Operation> operation;
  std::string operationName;
  gpulab::ParamValues operationParams;
  gpulab::DeviceImage gpuOutput;  // reallocated only when its shape changes
  // A photo the operation does not take as it is (u16, or f64 for an f32 filter), converted once
  // per photo (filters/sample_depth.hpp); results go back to the photo's type.
  std::optional<gpulab::FilterInput> converted;
  quint64 convertedGeneration = 0;

  struct Saved {
    std::shared_ptr<const gpulab::Image> image;
    QString source;
  };
  std::vector<Saved> undo;
  quint64 ownGeneration = 0;  // the photo our last Keep or Undo made current
};

/// Builds the operation from the registry (std::invalid_argument with its sentence for a bad parameter)
/// and measures it on the current photo with MeasurePolicy::interactive(): on the GPU from the resident
/// photo (no upload timed), on the CPU with progress and cancel. A GPU that cannot run (none, or the
/// photo is not on it) is noted in record.gpuSkipped.
FilterRun runFilter(FiltersWorkerState& state, WorkerContext& ctx, const FilterRequest& request);

/// Makes `image` the current photo (what Keep result does), remembering the one it replaces; returns
/// how many photos Undo can go back to. Throws when the photo changed since `generation`.
int keepAsPhoto(FiltersWorkerState& state, WorkerContext& ctx, const std::shared_ptr<const gpulab::Image>& image,
                quint64 generation, const QString& previousSource, const QString& source, int depth);
/// Goes back to the photo before the last Keep; returns the remaining depth.
int undoKeep(FiltersWorkerState& state, WorkerContext& ctx);

}  // namespace gpulab::gui
