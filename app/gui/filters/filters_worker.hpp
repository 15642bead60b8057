// The Filters tab's work on the engine's worker thread: an Apply measured by the harness
// (gpulab/measure/harness.hpp), and the photo edits Keep result and Undo make. Nothing here touches a
// widget; the tab submits these through Engine::submit and shows what comes back.
#pragma once

#include <QImage>
#include <QLineF>
#include <QPoint>
#include <QString>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/analysis/histogram.hpp"
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
  /// A live preview while a slider moves: one GPU run (MeasurePolicy::once()), no CPU baseline.
  bool preview = false;
  /// Limit the filter to this rectangle of the photo (core/roi.hpp); none: the whole photo.
  std::optional<gpulab::PixelRect> roi;
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
  QString displayNote;                      ///< how float results are shown; empty for u8
  QString nonFiniteNote;                    ///< "input holds 3 NaN samples; output holds 12 inf samples", or empty
  bool preview = false;                     ///< a live preview (GPU once, no CPU)
  std::optional<gpulab::PixelRect> roi;     ///< the region the filter was limited to
  std::optional<gpulab::PixelRect> window;  ///< the region with its halo: what was measured
};

/// The photos Undo and Redo go back and forth between, on the worker: Keep pushes the photo it
/// replaces and forgets what Redo had; Undo and Redo move the current photo to the other side. The
/// oldest steps go once there are more than `maxSteps`, or once the photos held take more than
/// `maxBytes` (the newest step always stays).
class PhotoHistory {
 public:
  struct Entry {
    std::shared_ptr<const gpulab::Image> image;
    QString source;
  };
  static constexpr int kDefaultSteps = 20;
  static constexpr std::size_t kDefaultBytes = std::size_t{2} << 30;  // 2 GiB

  explicit PhotoHistory(int maxSteps = kDefaultSteps, std::size_t maxBytes = kDefaultBytes)
      : maxSteps_(maxSteps), maxBytes_(maxBytes) {}

  /// A Keep replaced `previous`.
  void push(Entry previous);
  /// The photo to go back to, with `current` kept for Redo; nullopt when there is none.
  std::optional<Entry> undo(Entry current);
  /// The photo Undo left, with `current` kept for Undo; nullopt when there is none.
  std::optional<Entry> redo(Entry current);
  void clear();
  int undoDepth() const noexcept { return static_cast<int>(undo_.size()); }
  int redoDepth() const noexcept { return static_cast<int>(redo_.size()); }
  /// Bytes of the photos held on both sides.
  std::size_t bytes() const noexcept;

 private:
  void trim();
  int maxSteps_;
  std::size_t maxBytes_;
  std::deque<Entry> undo_;  // oldest first
  std::deque<Entry> redo_;  // the next Redo last
};

/// How far Undo and Redo can go, as the worker hands it back.
struct HistoryDepth {
  int undo = 0;
  int redo = 0;
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

  gpulab::DeviceImage roiWindow;  // the region and its halo, cropped on the GPU

  PhotoHistory history;
  quint64 ownGeneration = 0;  // the photo our last Keep, Undo or Redo made current
};

/// What the Histogram panel shows, computed on the worker: histograms of the photo and of the shown
/// result (GPU timed with CUDA events, the CPU baseline beside it), and their line profiles.
struct AnalysisRequest {
  quint64 generation = 0;                       ///< the photo it is for
  bool photo = true;                            ///< the photo's histogram (false: it is shown already)
  std::shared_ptr<const gpulab::Image> result;  ///< the shown result, if any
  std::optional<QLineF> line;                   ///< the profile line, photo coordinates
  /// Time the CPU baseline too. Off for live previews when there is a GPU: the worker stays free for
  /// the next preview (the run at rest brings the CPU time).
  bool cpuBaseline = true;
};

struct ImageAnalysis {
  gpulab::Histogram histogram;
  std::optional<double> gpuMs;  ///< compute, median of 5 after a warm-up
  std::optional<double> cpuMs;  ///< calcHist on all cores, median of up to 3 after a warm-up
  int cpuThreads = 0;
  QString gpuNote;  ///< why there is no GPU time
};

struct AnalysisRun {
  quint64 generation = 0;
  std::optional<ImageAnalysis> photo;
  std::optional<ImageAnalysis> result;
  std::optional<gpulab::LineProfile> photoProfile;
  std::optional<gpulab::LineProfile> resultProfile;
};

struct AnalysisWorkerState {
  gpulab::HistogramGpu histogram;
  gpulab::DeviceImage result;  // the result uploaded for its histogram (buffers reused)
};

/// Throws when the photo changed since request.generation (the request is stale).
AnalysisRun analyse(AnalysisWorkerState& state, WorkerContext& ctx, const AnalysisRequest& request);

/// Builds the operation from the registry (std::invalid_argument with its sentence for a bad parameter)
/// and measures it on the current photo with MeasurePolicy::interactive(): on the GPU from the resident
/// photo (no upload timed), on the CPU with progress and cancel. A GPU that cannot run (none, or the
/// photo is not on it) is noted in record.gpuSkipped.
FilterRun runFilter(FiltersWorkerState& state, WorkerContext& ctx, const FilterRequest& request);

/// Makes `image` the current photo (what Keep result does), remembering the one it replaces. Throws
/// when the photo changed since `generation`.
HistoryDepth keepAsPhoto(FiltersWorkerState& state, WorkerContext& ctx,
                         const std::shared_ptr<const gpulab::Image>& image, quint64 generation,
                         const QString& previousSource, const QString& source);
/// Goes back to the photo before the last Keep (`currentSource` names the photo left, for Redo).
HistoryDepth undoKeep(FiltersWorkerState& state, WorkerContext& ctx, const QString& currentSource);
/// Goes forward to the photo the last Undo left.
HistoryDepth redoKeep(FiltersWorkerState& state, WorkerContext& ctx, const QString& currentSource);

}  // namespace gpulab::gui
