// The measuring harness: runs any operation on the GPU and on the CPU with the project's timing
// policy and returns one Measurement. No front end times anything itself.
//
//   gpulab::MeasureSetup setup;                // both sides, compared; setup.gpu = &context
//   auto result = gpulab::measure(*op, photo, setup, gpulab::MeasurePolicy::benchmark(20));
//   result.record.gpu->compute.medianMs;       // CUDA events on the operation's stream
//   result.cpuOutput;                          // the CPU baseline's image
//
// The policy, the same for both sides:
// - one-time work first, reported apart (prepareGpu / prepareCpu: plans, cost-model calibration);
// - warm-up runs excluded; then the median, min and max of N runs;
// - GPU compute timed with CUDA events recorded on the operation's stream around its kernels alone;
//   upload and download timed apart, each a median of its own (pinned images straight, pageable
//   ones through pinned staging: the record says which, with GB/s against the pinned copy ceiling);
// - a CPU run that is slow gets fewer repetitions (a budget in ms, at least one timed run after the
//   warm-up), so the default runs stay short;
// - cancellation (setup.control.cancel) is checked between runs on both sides (GPU runs are queued
//   in batches of about 50 ms of work and awaited with the flag checked), between transfers, and
//   inside the CPU baseline (between its row bands);
//   progress covers the CPU side, the slow one.
#pragma once

#include <functional>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab {

struct MeasurePolicy {
  int gpuWarmup = 2;
  int gpuReps = 10;
  double gpuSlowMs = 0;  ///< > 0: a probe run first; compute slower than this gets gpuSlowReps
  int gpuSlowReps = 5;
  int transferReps = -1;  ///< uploads and downloads timed; < 0: gpuReps
  int cpuWarmup = 1;
  int cpuReps = 3;
  double cpuBudgetMs = 0;  ///< > 0 (with a warm-up): reps = clamp(budget / warm-up ms, 1, cpuReps)

  /// gpulab-cli filter and fft: `reps` timed runs on either side (0: 10 on the GPU, 3 on the CPU),
  /// one warm-up unless a single run was asked for.
  static MeasurePolicy command(int reps);
  /// gpulab-cli bench: `reps` GPU runs after 2 warm-ups; the CPU at most min(reps, 5) runs in about
  /// 2 s after one warm-up.
  static MeasurePolicy benchmark(int reps);
  /// The GUI: 10 GPU runs (5 when one takes over 20 ms), 3 transfers; the CPU at most 5 runs in
  /// about 2 s after one warm-up.
  static MeasurePolicy interactive();
  /// One run, no warm-up, either side: a single frame or save, timed as it happens.
  static MeasurePolicy once();
};

struct MeasureSetup {
  bool wantGpu = true;
  bool wantCpu = true;
  bool compare = true;  ///< max|gpu - cpu| when both ran
  /// The GPU side's context; null: the GPU side is skipped and the record says why.
  GpuContext* gpu = nullptr;
  /// The input already on the GPU (the GUI's resident photo): no upload is timed.
  const DeviceImage* resident = nullptr;
  /// Where the GPU result stays for the caller (reused while its shape fits); null: a temporary.
  DeviceImage* gpuOutput = nullptr;
  bool download = true;  ///< time the download and return the GPU result as an Image
  /// Where the downloaded result lives: pinned by default (copied straight by the copy engine).
  HostMemory outputMemory = HostMemory::Pinned;
  bool withCeiling = true;  ///< set the DRAM and pinned host copy ceilings (measured once per process and device)
  CpuControl control;       ///< progress of the CPU side; cancel checked throughout
};

struct MeasureResult {
  Measurement record;
  Image gpuOutput;  ///< empty unless the GPU side ran and setup.download
  Image cpuOutput;  ///< empty unless the CPU side ran
};

/// Measures `op` on `input` (blocking). Throws what the operation throws (std::invalid_argument for
/// an input it cannot take, CudaError), OperationCancelled when cancelled.
MeasureResult measure(Operation& op, const Image& input, const MeasureSetup& setup, const MeasurePolicy& policy);

/// The same policy for work that is not an Operation (Mandelbrot frames, lab kernels): GPU work
/// enqueued on `stream` and timed with events, warm-ups excluded (probe and slow reps as above).
/// control.cancel, when set, is answered between runs while they run (timeStream's batches of about
/// kCancelSliceMs of GPU work): OperationCancelled.
Stats measureStream(cudaStream_t stream, const std::function<void()>& enqueue, const MeasurePolicy& policy,
                    const CpuControl& control = {});
/// Host work with the CPU side's policy (warm-up, budget); control.cancel checked between runs.
Stats measureHost(const std::function<void()>& work, const MeasurePolicy& policy, const CpuControl& control = {});

/// The largest |a - b| over all samples (NaN against NaN and equal infinities count as equal; a NaN
/// against a number is infinite); std::nullopt when the shapes differ.
std::optional<double> maxAbsDifference(const Image& a, const Image& b);

}  // namespace gpulab
