// Deep views on the GPU by perturbation: one reference orbit (MPFR, on the calling thread), its BLA
// table, and every pixel iterated on the GPU as a delta against it (mandelbrot_deep.cuh).
//
//   gpulab::DeepRenderer deep;
//   const gpulab::DeepFrame& f = deep.prepare(gpu, deepView, options);  // blocking: orbit, table, upload
//   deep.enqueue(gpu, raw, pitch, 0, rows);                            // async on gpu.stream()
//
// The reference and its table (deep_reference.hpp: reused while the view stays in the region they
// serve) are copied to the device only when they change. Not thread-safe; one per worker thread.
#pragma once

#include <atomic>
#include <memory>

#include "gpulab/core/device_image.hpp"
#include "gpulab/mandelbrot/deep_reference.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"

namespace gpulab {

/// What the last prepare() did, for status lines, records and tests.
struct DeepFrame {
  DeepDeltaFormat deltas = DeepDeltaFormat::Double;
  bool referenceReused = false;  ///< the orbit and table served the previous frame too
  int referenceLength = 0;       ///< N: Z_0 .. Z_{N-1}
  bool referenceEscaped = false;
  int precisionBits = 0;
  int blaLevels = 0;
  double referenceMs = 0;  ///< MPFR orbit of this prepare (0 when reused)
  double blaMs = 0;        ///< table build, or radii recomputed (0 when nothing changed)
  double uploadMs = 0;     ///< host -> device copies of the orbit and the table (steady clock)
  DecimalNumber referenceX;
  DecimalNumber referenceY;
};

class DeepRenderer {
 public:
  DeepRenderer();
  ~DeepRenderer();
  DeepRenderer(const DeepRenderer&) = delete;
  DeepRenderer& operator=(const DeepRenderer&) = delete;

  /// Makes the reference, the table and their device copies serve `view` (validated), computing
  /// what cannot be reused. Blocking; throws std::invalid_argument for a bad view, OperationCancelled
  /// once `cancel` is set (the previous reference stays usable), CudaError. The view and options
  /// prepared last return at once (the frame says the reference was reused, no time spent).
  const DeepFrame& prepare(GpuContext& gpu, const DeepView& view, const DeepOptions& options,
                           const std::atomic<bool>* cancel = nullptr);
  /// Makes the device copies serve `view` from `reference`, prepared by the caller for this view and
  /// options (computed once, shared by the renderers of several GPUs: gpulab/mandelbrot/multi_gpu.hpp).
  /// Uploads the orbit and the table (blocking); `reference` must outlive the enqueues that follow. The
  /// next prepare() goes back to this renderer's own reference. Throws std::logic_error for a reference
  /// never prepared, CudaError.
  const DeepFrame& prepareShared(GpuContext& gpu, const DeepView& view, const DeepOptions& options,
                                 const DeepReference& reference);
  /// Enqueues rows [firstRow, firstRow + rowCount) of the prepared view into `raw` (view.imageWidth
  /// floats a row, rows `pitch` bytes apart, device memory). rowCount -1: to the last row.
  void enqueue(GpuContext& gpu, float* raw, std::size_t pitch, int firstRow = 0, int rowCount = -1);
  /// Counts the steps (full and BLA) of the next enqueues: for benchmarks. Blocking readout.
  void countSteps(GpuContext& gpu, bool enable);
  unsigned long long stepsCounted(GpuContext& gpu);

  const DeepFrame& frame() const noexcept;
  /// The reference and its table on the host.
  const DeepReference& reference() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab
