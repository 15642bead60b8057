// The timing harness every operation uses. Warm-up runs are excluded; GPU work is timed with CUDA
// events on the operation's stream (never a host clock around asynchronous work); CPU work with a
// steady clock; results are the median, min and max of N runs.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "gpulab/core/cuda_types.hpp"

namespace gpulab {

struct Stats {
  double medianMs = 0;
  double minMs = 0;
  double maxMs = 0;
  int reps = 0;

  /// Summary of raw samples (milliseconds). Throws std::invalid_argument on an empty list.
  static Stats of(std::vector<double> samples);
  /// "1.234 ms (min 1.200, max 1.300, n=10)".
  std::string describe() const;
};

struct TimingOptions {
  int warmup = 2;
  int reps = 10;
};

/// Runs `work` warmup + reps times on the calling thread; each rep timed with std::chrono::steady_clock.
Stats timeHost(const std::function<void()>& work, TimingOptions options = {});

/// `enqueue` puts asynchronous work on `stream`; each rep is bracketed by events recorded on that
/// stream, so only the device time of that work counts.
Stats timeStream(cudaStream_t stream, const std::function<void()>& enqueue, TimingOptions options = {});

/// The same with a cancel flag that is answered while the work runs: the runs are queued in batches
/// of about kCancelSliceMs of GPU work (sized by the first run, or by `perRunMs` when the caller
/// knows it), each awaited with the flag checked every 0.2 ms; each batch has its own start mark, so
/// the samples are the same device times as above. Once the flag is set, what is queued finishes
/// (it uses the caller's buffers) and OperationCancelled is thrown. A null `cancel`: timeStream above.
/// A single run is not interrupted: work that takes long in one launch must be split by its owner.
Stats timeStream(cudaStream_t stream, const std::function<void()>& enqueue, TimingOptions options,
                 const std::atomic<bool>* cancel, double perRunMs = 0);
/// GPU work queued at once while a cancel flag listens (timeStream above).
inline constexpr double kCancelSliceMs = 50;

/// Host-side stopwatch for one region (steady clock).
class Stopwatch {
 public:
  Stopwatch();
  double elapsedMs() const;

 private:
  long long startNs_;
};

}  // namespace gpulab
