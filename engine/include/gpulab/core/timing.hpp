// The timing harness every operation uses. Warm-up runs are excluded; GPU work is timed with CUDA
// events on the operation's stream (never a host clock around asynchronous work); CPU work with a
// steady clock; results are the median, min and max of N runs.
#pragma once

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

/// Host-side stopwatch for one region (steady clock).
class Stopwatch {
 public:
  Stopwatch();
  double elapsedMs() const;

 private:
  long long startNs_;
};

}  // namespace gpulab
