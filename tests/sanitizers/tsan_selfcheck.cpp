// ThreadSanitizer self-check for scripts/sanitize.sh tsan: the hand-over annotations
// (app/gui/shell/handover.hpp, cv_interop::parallelFor) must silence only the hand-over itself,
// never a real race. Built with -fsanitize=thread and run once per case:
//   tsan_selfcheck queued-ok      a correct queued call: no report
//   tsan_selfcheck queued-race    the poster writes after posting, unsynchronised: a report
//   tsan_selfcheck strips-ok      strips write their own elements, the caller reads after: no report
//   tsan_selfcheck strips-race    every strip adds to one variable: a report
#include <QCoreApplication>
#include <QThread>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "internal/cv_interop.hpp"
#include "shell/handover.hpp"

namespace {
int shared = 0;
}

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const std::string check = argc > 1 ? argv[1] : "";
  QThread thread;
  QObject worker;
  worker.moveToThread(&thread);
  thread.start();
  if (check == "queued-ok") {
    shared = 1;
    gpulab::gui::invokeQueued(
        &worker, [] { shared = 2; }, Qt::BlockingQueuedConnection);
    shared = 3;
  } else if (check == "queued-race") {
    // The two writes meet through relaxed atomics only, which give TSan no happens-before edge, so
    // the race is there in every interleaving: the functor is already running when the poster writes
    // (else a later wake-up of the worker's event loop, an eventfd TSan sees, could order them), and
    // it writes after the poster (else the poster's drop of its reference to the functor, an
    // acquire in ~HandedOver, could).
    static std::atomic<bool> functorRuns{false};
    static std::atomic<bool> posterWrote{false};
    gpulab::gui::invokeQueued(&worker, [] {
      functorRuns.store(true, std::memory_order_relaxed);
      while (!posterWrote.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      shared = 2;
    });
    while (!functorRuns.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    shared = 3;
    posterWrote.store(true, std::memory_order_relaxed);
  } else if (check == "strips-ok") {
    std::vector<int> v(64);
    gpulab::cv_interop::parallelFor(cv::Range(0, 64), [&](const cv::Range& r) {
      for (int i = r.start; i < r.end; ++i) v[static_cast<std::size_t>(i)] = i;
    });
    shared = v[10] + v[63];
  } else if (check == "strips-race") {
    long sum = 0;
    gpulab::cv_interop::parallelFor(
        cv::Range(0, 64),
        [&](const cv::Range& r) {
          for (int i = r.start; i < r.end; ++i) {
            sum += i;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        },
        64);
    shared = static_cast<int>(sum);
  } else {
    std::fprintf(stderr, "tsan_selfcheck: queued-ok | queued-race | strips-ok | strips-race\n");
    return 2;
  }
  gpulab::gui::invokeQueued(
      &worker, [] {}, Qt::BlockingQueuedConnection);
  thread.quit();
  thread.wait();
  std::printf("tsan_selfcheck %s: ran (%d)\n", check.c_str(), shared);
  return 0;
}
