// Coalescing for work that follows a control as it moves (a slider's live preview): at most one job
// runs and at most one waits. A newer request replaces the waiting one and asks the running one to
// stop; the running one's result, once back, is stale and is dropped, and the waiting request starts.
// Only the latest request's outcome is ever shown.
//
//   quint64 t = latest_.request([this](quint64 ticket) {
//     return services_.engine.submit(this, work, [this, ticket](R r) {
//       if (latest_.finish(ticket)) show(r);          // false: a newer request superseded it
//     }, {.failed = ..., .cancelled = [this, ticket] { latest_.finish(ticket); }});
//   });
//
// Every outcome of a started job (done, failed, cancelled) must call finish(ticket) exactly once.
// GUI thread only.
#pragma once

#include <QtGlobal>
#include <functional>
#include <optional>
#include <utility>

#include "shell/engine.hpp"

namespace gpulab::gui {

class LatestJob {
 public:
  using Start = std::function<JobHandle(quint64 ticket)>;

  /// Asks for a run: started now when nothing runs; otherwise it waits (replacing any waiting one)
  /// and the running job is asked to stop. Returns the request's ticket.
  quint64 request(Start start) {
    const quint64 ticket = ++latest_;
    if (!running_) {
      launch(ticket, std::move(start));
    } else {
      if (waiting_) ++superseded_;
      waiting_.emplace(ticket, std::move(start));
      handle_.cancel();
    }
    return ticket;
  }

  /// A started job's outcome arrived. True when it is the latest request (show it); false when it is
  /// stale (drop it). Starts the waiting request, if any.
  bool finish(quint64 ticket) {
    if (!running_ || ticket != runningTicket_) return false;
    running_ = false;
    handle_ = {};
    const bool current = ticket == latest_;
    if (!current) ++stale_;
    if (waiting_) {
      auto [next, start] = std::move(*waiting_);
      waiting_.reset();
      launch(next, std::move(start));
    }
    return current;
  }

  /// Drops the waiting request and asks the running job to stop (its outcome still calls finish).
  void cancel() {
    if (waiting_) ++superseded_;
    waiting_.reset();
    ++latest_;  // whatever is running is stale now
    handle_.cancel();
  }

  bool busy() const noexcept { return running_; }
  bool waiting() const noexcept { return waiting_.has_value(); }
  quint64 latest() const noexcept { return latest_; }
  /// Jobs started, results dropped as stale, and requests replaced before they started.
  int started() const noexcept { return started_; }
  int stale() const noexcept { return stale_; }
  int superseded() const noexcept { return superseded_; }

 private:
  void launch(quint64 ticket, Start start) {
    running_ = true;
    runningTicket_ = ticket;
    ++started_;
    handle_ = start(ticket);
  }

  quint64 latest_ = 0;
  bool running_ = false;
  quint64 runningTicket_ = 0;
  JobHandle handle_;
  std::optional<std::pair<quint64, Start>> waiting_;
  int started_ = 0;
  int stale_ = 0;
  int superseded_ = 0;
};

}  // namespace gpulab::gui
