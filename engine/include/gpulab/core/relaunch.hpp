// Restarting gpulab after a sticky GPU fault. A CUDA context that took an illegal-address fault is
// lost, and NVIDIA's drivers give the process no new one (cudaDeviceReset succeeds, every later context
// is refused: "the process must be terminated and relaunched"). So a front end that hit a
// GpuFaultError (errors.hpp) replaces its own process image with a fresh one of the same program
// (execve of /proc/self/exe with the same arguments): the new image opens its CUDA context from
// nothing. A counter in the environment bounds the restarts, so a fault that comes back every time
// cannot loop, and the new image learns that it was restarted and why.
//
//   try { runCommand(); } catch (const gpulab::GpuFaultError& e) {
//     const std::string fault = gpulab::describeGpuFault(e);
//     if (!gpulab::mayRestartAfterFault()) return fail(fault + "; ...restarted twice already");
//     const auto plan = gpulab::planFaultRestart(gpulab::currentArguments(), gpulab::currentEnvironment(), fault);
//     return fail(gpulab::relaunch(plan));  // returns only when execve failed: one sentence
//   }
//   // in the new image:
//   if (gpulab::faultRestarts() > 0) say("restarted after " + gpulab::faultRestartReason());
//
// POSIX (Linux: /proc/self/exe, /proc/self/cmdline); no CUDA, no Qt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// How many times the process was restarted after a GPU fault: "1", "2" (unset in a first start).
inline constexpr const char* kFaultRestartsVariable = "GPULAB_FAULT_RESTARTS";
/// The sentence of the fault that caused the last restart ("the GPU faulted (...)").
inline constexpr const char* kFaultReasonVariable = "GPULAB_FAULT_REASON";
/// At most this many restarts after faults in a row; the next fault is reported and ends it.
inline constexpr int kMaxFaultRestarts = 2;
/// "child": restart as a child process (RelaunchMode::ChildProcess) instead of in place.
inline constexpr const char* kRelaunchModeVariable = "GPULAB_RELAUNCH";

/// How the new image replaces the faulted one.
enum class RelaunchMode {
  /// execve in this process (the default): same process id, nothing of the old image left.
  ReplaceProcess,
  /// fork + execve, and the faulted process waits for the child and exits with its exit code (its
  /// windows hidden first): a new process id, as NVIDIA documents the recovery, for a driver that would
  /// keep the faulted context across an execve in place. GPULAB_RELAUNCH=child selects it.
  ChildProcess,
};

/// At the start of main, before any thread: takes the restart counter and reason out of the
/// environment into this process (faultRestarts() and faultRestartReason() answer from them), so the
/// programs gpulab starts (a lab's child process) do not inherit them. Once; later calls do nothing.
void adoptFaultRestartState();
/// The restart counter of this process (kFaultRestartsVariable, or what adoptFaultRestartState took):
/// 0 when unset or not a count.
int faultRestarts();
/// faultRestarts() < kMaxFaultRestarts: a fault may still be answered by a restart.
bool mayRestartAfterFault();
/// Why the previous image restarted (kFaultReasonVariable); empty in a process not restarted.
std::string faultRestartReason();
/// "restart 1 of 2": how the programs name restart `restart` of kMaxFaultRestarts.
std::string describeRestart(int restart);

/// What replaces the process image: the program, its argv (argv[0] first) and its whole environment.
struct RelaunchPlan {
  std::string program = "/proc/self/exe";  ///< this very executable, even when argv[0] is relative
  std::vector<std::string> arguments;
  std::vector<std::string> environment;  ///< "NAME=value"
  RelaunchMode mode = RelaunchMode::ReplaceProcess;
};

/// This process's argv as it was started (/proc/self/cmdline), before any library took options out.
/// Throws std::runtime_error with one sentence when it cannot be read.
std::vector<std::string> currentArguments();
/// This process's environment as "NAME=value" strings, with what adoptFaultRestartState took out
/// put back (the restart's plan counts on from it).
std::vector<std::string> currentEnvironment();

/// Sets NAME=value in `environment`, replacing an earlier NAME.
void setEnvironmentValue(std::vector<std::string>& environment, std::string_view name, std::string_view value);
/// The value of NAME in `environment`; empty when absent.
std::string environmentValue(const std::vector<std::string>& environment, std::string_view name);
/// Sets option `name` ("--restore") to `value` in `arguments`: replaces the value that follows an
/// existing `name` (or `name=value`), else appends both. argv[0] is never taken for the option.
void setArgumentValue(std::vector<std::string>& arguments, std::string_view name, std::string_view value);

/// The restart after a fault described by `faultSentence`: the same `arguments`, `environment` with
/// the counter one higher and the reason set, the mode from kRelaunchModeVariable in `environment`. Throws
/// std::runtime_error with one sentence when the counter in `environment` has reached kMaxFaultRestarts, or `arguments`
/// is empty.
RelaunchPlan planFaultRestart(std::vector<std::string> arguments, std::vector<std::string> environment,
                              const std::string& faultSentence);

/// Replaces this process with `plan` (execve; in ChildProcess mode a child runs it, and this process
/// exits with the child's exit code once it ends): flushes stdout and stderr and marks every
/// descriptor above stderr close-on-exec first (close_range, else each of /proc/self/fd), so the new
/// image holds none of the faulted CUDA driver's files. Returns only when execve (or fork) failed: the
/// sentence why ("gpulab could not restart itself: execve /proc/self/exe: ..."); the process goes on.
std::string relaunch(const RelaunchPlan& plan);

}  // namespace gpulab
