#include "gpulab/core/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/operation.hpp"  // OperationCancelled, cancelRequested

namespace gpulab {

Stats Stats::of(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("no timing samples to summarise");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  Stats s;
  s.medianMs = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.minMs = samples.front();
  s.maxMs = samples.back();
  s.reps = static_cast<int>(n);
  return s;
}

std::string Stats::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, "%.4g ms (min %.4g, max %.4g, n=%d)", medianMs, minMs, maxMs, reps);
  return text;
}

static void checkOptions(const TimingOptions& options) {
  if (options.reps < 1) throw std::invalid_argument("timing needs at least 1 repetition");
  if (options.warmup < 0) throw std::invalid_argument("warm-up count cannot be negative");
}

Stats timeHost(const std::function<void()>& work, TimingOptions options) {
  checkOptions(options);
  for (int i = 0; i < options.warmup; ++i) work();
  std::vector<double> samples;
  samples.reserve(options.reps);
  for (int i = 0; i < options.reps; ++i) {
    Stopwatch watch;
    work();
    samples.push_back(watch.elapsedMs());
  }
  return Stats::of(std::move(samples));
}

Stats timeStream(cudaStream_t stream, const std::function<void()>& enqueue, TimingOptions options) {
  checkOptions(options);
  for (int i = 0; i < options.warmup; ++i) enqueue();
  // One event pair per rep, all read after a single synchronisation: no host round trip between reps.
  std::vector<Event> marks(static_cast<std::size_t>(options.reps) + 1);
  marks[0].record(stream);
  for (int i = 0; i < options.reps; ++i) {
    enqueue();
    marks[i + 1].record(stream);
  }
  marks.back().synchronize();
  std::vector<double> samples;
  samples.reserve(options.reps);
  for (int i = 0; i < options.reps; ++i) samples.push_back(marks[i + 1].elapsedSince(marks[i]));
  return Stats::of(std::move(samples));
}

namespace {

/// Waits for `event` while checking the flag; once set, lets the queued work finish and throws.
void awaitOrCancel(const Event& event, const std::atomic<bool>* cancel) {
  while (!event.query()) {
    if (cancelRequested(cancel)) {
      event.synchronize();  // what is queued reads and writes the caller's buffers: never leave it behind
      throw OperationCancelled();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (cancelRequested(cancel)) throw OperationCancelled();
}

/// Runs that fit one slice of GPU work at `perRunMs` each, at most `left`; one while the cost is unknown.
int batchOf(double perRunMs, int left) {
  if (perRunMs <= 0) return 1;
  return std::clamp(static_cast<int>(kCancelSliceMs / perRunMs), 1, std::max(left, 1));
}

}  // namespace

Stats timeStream(cudaStream_t stream, const std::function<void()>& enqueue, TimingOptions options,
                 const std::atomic<bool>* cancel, double perRunMs) {
  if (cancel == nullptr) return timeStream(stream, enqueue, options);
  checkOptions(options);
  if (cancelRequested(cancel)) throw OperationCancelled();
  int warmups = options.warmup;
  if (warmups > 0 && perRunMs <= 0) {  // the first warm-up alone sizes the batches
    Event start, end;
    start.record(stream);
    enqueue();
    end.record(stream);
    awaitOrCancel(end, cancel);
    perRunMs = end.elapsedSince(start);
    --warmups;
  }
  // Warm-ups left, in awaited batches; the last batch stays queued ahead of the timed runs (the GPU
  // stays busy, as in the untimed-gap-free path above).
  while (warmups > 0) {
    const int k = batchOf(perRunMs, warmups);
    for (int i = 0; i < k; ++i) enqueue();
    warmups -= k;
    if (warmups > 0) {
      Event mark;
      mark.record(stream);
      awaitOrCancel(mark, cancel);
    }
  }
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(options.reps));
  while (static_cast<int>(samples.size()) < options.reps) {
    const int left = options.reps - static_cast<int>(samples.size());
    const int k = batchOf(perRunMs, left);
    std::vector<Event> marks(static_cast<std::size_t>(k) + 1);
    marks[0].record(stream);
    for (int i = 0; i < k; ++i) {
      enqueue();
      marks[i + 1].record(stream);
    }
    awaitOrCancel(marks.back(), cancel);
    for (int i = 0; i < k; ++i) samples.push_back(marks[i + 1].elapsedSince(marks[i]));
    if (perRunMs <= 0) perRunMs = std::max(samples.front(), 1e-3);
  }
  return Stats::of(std::move(samples));
}

static long long nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Stopwatch::Stopwatch() : startNs_(nowNs()) {}
double Stopwatch::elapsedMs() const { return static_cast<double>(nowNs() - startNs_) * 1e-6; }

}  // namespace gpulab
