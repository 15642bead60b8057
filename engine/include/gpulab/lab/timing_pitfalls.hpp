// Lab experiment: timing pitfalls made visible. The same kernel (busy work whose duration grows with
// `work`) timed three ways, side by side:
//   host-clock-no-sync  a steady clock around the launch alone: it returns as soon as the launch is
//                       queued, so it measures the launch (a few microseconds), not the kernel (wrong)
//   host-clock-sync     a steady clock around launch + cudaStreamSynchronize: the kernel plus launch
//                       and synchronisation latency (right for end-to-end, a little high for the kernel)
//   cuda-events         CUDA events recorded on the stream around the kernel (right: the kernel alone)
// each with warm-up runs excluded and the median of `reps`. And the cold start measured apart
// (ColdStart): creating the CUDA context (cudaFree(0) as the first CUDA call of a process), the first
// launch of a kernel (its module is loaded then, CUDA's lazy loading) and later launches of it, all
// with a host clock around launch + synchronise. Only a fresh process shows the context's creation:
// measureColdStartInChild runs `gpulab-cli lab timing --cold-probe` for that; measureColdStart in a
// process that used CUDA before says so (ColdStart::freshProcess false).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/operation.hpp"  // CpuControl
#include "gpulab/core/timing.hpp"     // Stats
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

enum class TimingMethod { HostNoSync, HostSync, Events };
constexpr EnumText enumText(TimingMethod) {
  return {"timing method", "host-clock-no-sync|host-clock-sync|cuda-events"};
}

struct TimingRequest {
  std::vector<int> work{100, 1000, 10000, 100000};  ///< dependent multiply-adds per element
  std::size_t elements = std::size_t{1} << 20;      ///< floats the kernel updates
  int reps = 20;
  int warmup = 2;
};

/// Throws std::invalid_argument: work values 1..10,000,000 (1 to 16 of them), elements 1..2^28,
/// reps 1..10000, warmup 0..1000.
void validate(const TimingRequest& request);

struct TimingRow {
  int work = 0;
  TimingMethod method = TimingMethod::Events;
  Stats stats;
};

struct ColdStart {
  bool measured = false;
  bool freshProcess = false;  ///< the context creation was the first CUDA call of the process
  std::string where;          ///< one sentence: in which process, and what that means for the figures
  double contextMs = 0;       ///< cudaFree(0)
  double firstLaunchMs = -1;  ///< first launch of the probe kernel + synchronise; -1 when it ran before
  Stats later;                ///< later launches of it + synchronise
  std::string moduleLoading;  ///< CUDA_MODULE_LOADING as set, or "LAZY (default)"
  std::string error;          ///< why it was not measured
};

/// Measures the cold start in this process. Call it first thing in a fresh process with
/// `freshProcess` true (the CLI's --cold-probe); elsewhere pass false and the figures say the
/// context existed. Throws CudaError when CUDA fails.
ColdStart measureColdStart(bool freshProcess, int laterLaunches = 20);

/// JSON of one ColdStart (one line), and back; coldStartFromJson throws std::invalid_argument.
std::string toJson(const ColdStart& cold);
ColdStart coldStartFromJson(std::string_view json);

/// Runs `argv` (argv[0] an executable path, e.g. gpulab-cli with "lab", "timing", "--cold-probe"),
/// reads the ColdStart JSON it prints as its last line. Never throws: a failure comes back as
/// measured == false with the reason in `error`.
ColdStart measureColdStartInChild(const std::vector<std::string>& argv);

struct TimingReport {
  TimingRequest request;
  std::string deviceName;
  std::vector<TimingRow> rows;
  ColdStart cold;  ///< filled by the caller (the front ends choose the process)

  const TimingRow* find(int work, TimingMethod method) const;
  /// What the rows show, in sentences: at each work the no-sync figure against the events, the
  /// synchronise overhead; the cold start against later launches.
  std::vector<std::string> lessons() const;
  /// Rows for the lab table (experiment "timing", variant = method, impl "work=N", size = work),
  /// then the cold start (variant "cold-start": context, first launch, later launches).
  std::vector<Record> records() const;
};

class TimingLab : public LabBase {
 public:
  TimingLab();
  ~TimingLab();
  /// Blocking; throws std::invalid_argument for a bad request, std::runtime_error without a GPU,
  /// OperationCancelled when asked to stop. Leaves `cold` unmeasured.
  TimingReport run(const TimingRequest& request, const CpuControl& control = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
