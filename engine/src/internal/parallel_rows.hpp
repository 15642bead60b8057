// Rows of an image on every core, handed out one at a time so slow rows (deep or interior-heavy) do
// not leave threads idle: the CPU renderers' scheduler (engine-private).
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/operation.hpp"  // CpuControl, OperationCancelled

namespace gpulab {

/// Threads for `rows` rows: `requested` (0: the process's CPU thread setting, every core unless
/// setCpuThreads chose fewer), at least 1, at most rows.
inline int rowThreads(int requested, int rows) {
  return std::clamp(requested > 0 ? requested : cpuThreadSetting(), 1, std::max(rows, 1));
}

/// Calls row(j, thread) for every j in [0, rows) on `threads` threads, the calling thread (thread 0)
/// among them. control.cancel is checked between rows (OperationCancelled once every thread has
/// stopped); control.progress (0..1) is called on the calling thread after each row it finishes, and
/// with 1 at the end.
template <class Row>
void parallelRows(int rows, int threads, const CpuControl& control, Row&& row) {
  std::atomic<int> nextRow{0};
  std::atomic<int> rowsDone{0};
  std::atomic<bool> stopped{false};
  auto work = [&](int thread) {
    for (;;) {
      if (stopped.load(std::memory_order_relaxed)) return;
      if (control.cancelled()) {
        stopped.store(true, std::memory_order_relaxed);
        return;
      }
      const int j = nextRow.fetch_add(1, std::memory_order_relaxed);
      if (j >= rows) return;
      row(j, thread);
      const int done = rowsDone.fetch_add(1, std::memory_order_relaxed) + 1;
      if (thread == 0) control.report(static_cast<double>(done) / rows);
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(static_cast<std::size_t>(threads > 1 ? threads - 1 : 0));
    for (int t = 1; t < threads; ++t) helpers.emplace_back(work, t);
    work(0);
  }  // joins
  if (stopped.load()) throw OperationCancelled();
  control.report(1.0);
}

}  // namespace gpulab
