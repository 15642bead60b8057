// Lab: three ways to time a kernel, and the cold start.
#include "gpulab/lab/timing_pitfalls.hpp"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gpulab/core/buffers.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/timing_pitfalls.cuh"
#include "internal/lab_detail.hpp"

extern char** environ;

namespace gpulab::lab {

void validate(const TimingRequest& r) {
  if (r.work.empty() || r.work.size() > 16)
    throw std::invalid_argument("give 1 to 16 work sizes, got " + std::to_string(r.work.size()));
  for (int w : r.work)
    if (w < 1 || w > 10000000)
      throw std::invalid_argument("work sizes are 1 to 10000000 multiply-adds per element, got " + std::to_string(w));
  if (r.elements < 1 || r.elements > (std::size_t{1} << 28))
    throw std::invalid_argument("the element count must be 1 to 268435456, got " + std::to_string(r.elements));
  if (r.reps < 1 || r.reps > 10000)
    throw std::invalid_argument("repetitions must be 1 to 10000, got " + std::to_string(r.reps));
  if (r.warmup < 0 || r.warmup > 1000)
    throw std::invalid_argument("warm-up runs must be 0 to 1000, got " + std::to_string(r.warmup));
}

// ---------------------------------------------------------------------------------------------
// Cold start

namespace {
std::atomic<bool> probeLaunched{false};  // host-only: whether this process launched the probe already

std::string moduleLoadingMode() {
  const char* mode = std::getenv("CUDA_MODULE_LOADING");
  return mode && *mode ? std::string(mode) : std::string("LAZY (default)");
}
}  // namespace

ColdStart measureColdStart(bool freshProcess, int laterLaunches) {
  ColdStart cold;
  cold.freshProcess = freshProcess;
  cold.moduleLoading = moduleLoadingMode();
  {
    const Stopwatch watch;
    GPULAB_CUDA_CHECK(cudaFree(nullptr));
    cold.contextMs = watch.elapsedMs();
  }
  DeviceBuffer buffer(32 * sizeof(float));
  const Stream stream;
  auto launchAndWait = [&] {
    kernels::launchColdStartProbe(buffer.as<float>(), stream);
    stream.synchronize();
  };
  const bool first = !probeLaunched.exchange(true);
  if (first) {
    const Stopwatch watch;
    launchAndWait();
    cold.firstLaunchMs = watch.elapsedMs();
  }
  cold.later = timeHost(launchAndWait, TimingOptions{first ? 0 : 1, std::max(1, laterLaunches)});
  cold.where = freshProcess
                   ? "a fresh process: cudaFree(0) was its first CUDA call and created the context; the probe "
                     "kernel's first launch loaded its module"
                   : "this process, which used CUDA before: the context existed, so cudaFree(0) shows no creation "
                     "cost";
  if (!first) cold.where += "; the probe kernel was launched here before, so its first launch is not seen again";
  cold.measured = true;
  return cold;
}

std::string toJson(const ColdStart& c) {
  const nlohmann::json j = {{"measured", c.measured},
                            {"fresh_process", c.freshProcess},
                            {"where", c.where},
                            {"context_ms", c.contextMs},
                            {"first_launch_ms", c.firstLaunchMs},
                            {"later_median_ms", c.later.medianMs},
                            {"later_min_ms", c.later.minMs},
                            {"later_max_ms", c.later.maxMs},
                            {"later_reps", c.later.reps},
                            {"module_loading", c.moduleLoading},
                            {"error", c.error}};
  return j.dump();
}

ColdStart coldStartFromJson(std::string_view text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    ColdStart c;
    c.measured = j.at("measured").get<bool>();
    c.freshProcess = j.at("fresh_process").get<bool>();
    c.where = j.at("where").get<std::string>();
    c.contextMs = j.at("context_ms").get<double>();
    c.firstLaunchMs = j.at("first_launch_ms").get<double>();
    c.later.medianMs = j.at("later_median_ms").get<double>();
    c.later.minMs = j.at("later_min_ms").get<double>();
    c.later.maxMs = j.at("later_max_ms").get<double>();
    c.later.reps = j.at("later_reps").get<int>();
    c.moduleLoading = j.at("module_loading").get<std::string>();
    c.error = j.value("error", std::string());
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("not a cold-start record: ") + e.what());
  }
}

ColdStart measureColdStartInChild(const std::vector<std::string>& argv) {
  ColdStart failed;
  if (argv.empty()) {
    failed.error = "no program to run";
    return failed;
  }
  int pipeFds[2];
  if (::pipe(pipeFds) != 0) {
    failed.error = std::string("pipe: ") + std::strerror(errno);
    return failed;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipeFds[1]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args = argv;
  std::vector<char*> pointers;
  for (std::string& a : args) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[1]);
  if (spawned != 0) {
    ::close(pipeFds[0]);
    failed.error = "cannot run " + args[0] + ": " + std::strerror(spawned);
    return failed;
  }
  std::string output;
  char chunk[4096];
  for (;;) {
    const ssize_t got = ::read(pipeFds[0], chunk, sizeof chunk);
    if (got > 0) {
      output.append(chunk, static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    break;
  }
  ::close(pipeFds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::size_t start = output.rfind("\n{");
  const std::string line = output.substr(start == std::string::npos ? 0 : start + 1);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || line.empty() || line[0] != '{') {
    failed.error = args[0] + " --cold-probe did not report a cold start (exit status " +
                   std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return failed;
  }
  try {
    return coldStartFromJson(line);
  } catch (const std::invalid_argument& e) {
    failed.error = e.what();
    return failed;
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const TimingRow* TimingReport::find(int work, TimingMethod method) const {
  for (const TimingRow& r : rows)
    if (r.work == work && r.method == method) return &r;
  return nullptr;
}

namespace {
std::string ms(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v < 0.1 ? "%.4f ms" : "%.3f ms", v);
  return text;
}
}  // namespace

std::vector<std::string> TimingReport::lessons() const {
  std::vector<std::string> lines;
  for (int w : request.work) {
    const TimingRow* noSync = find(w, TimingMethod::HostNoSync);
    const TimingRow* sync = find(w, TimingMethod::HostSync);
    const TimingRow* events = find(w, TimingMethod::Events);
    if (!noSync || !sync || !events) continue;
    const double kernel = events->stats.medianMs;
    std::string s = "work " + std::to_string(w) + ": the kernel takes " + ms(kernel) +
                    " (CUDA events); the host clock without synchronisation reads " + ms(noSync->stats.medianMs);
    if (noSync->stats.medianMs < 0.5 * kernel) {
      char ratio[48];
      std::snprintf(ratio, sizeof ratio, ", %.0fx too little", kernel / std::max(noSync->stats.medianMs, 1e-9));
      s += std::string(ratio) + ": it timed the launch, not the kernel";
    } else {
      s += ": with a kernel this short the launch itself is most of it";
    }
    s += "; with cudaStreamSynchronize it reads " + ms(sync->stats.medianMs) + " (" +
         ms(sync->stats.medianMs - kernel) + " of launch and synchronisation on top)";
    lines.push_back(s + ".");
  }
  if (cold.measured) {
    std::string s = "cold start (" + cold.where + "): cudaFree(0) " + ms(cold.contextMs);
    if (cold.firstLaunchMs >= 0) s += ", the first launch " + ms(cold.firstLaunchMs);
    s += ", later launches " + ms(cold.later.medianMs) + " (launch + synchronise, median of " +
         std::to_string(cold.later.reps) + "); module loading " + cold.moduleLoading + ".";
    lines.push_back(s);
  } else if (!cold.error.empty()) {
    lines.push_back("cold start not measured: " + cold.error + ".");
  }
  return lines;
}

std::vector<Record> TimingReport::records() const {
  std::vector<Record> out;
  for (const TimingRow& row : rows) {
    Record r;
    r.experiment = "timing";
    r.variant = std::string(toString(row.method));
    r.impl = "work=" + std::to_string(row.work);
    r.dtype = "f32";
    r.sizes = {row.work};
    r.size = row.work;
    r.params = "elements=" + std::to_string(request.elements);
    r.gpu = true;
    detail::setTimes(r, row.stats);
    if (row.method == TimingMethod::HostNoSync) r.note = "wrong: measures the launch";
    out.push_back(r);
  }
  if (cold.measured) {
    auto add = [&](const char* impl, double medianMs, const Stats* stats) {
      Record r;
      r.experiment = "timing";
      r.variant = "cold-start";
      r.impl = impl;
      r.dtype = "f32";
      r.sizes = {1};
      r.size = 1;
      r.gpu = true;
      r.params = "module_loading=" + cold.moduleLoading;
      r.note = cold.freshProcess ? "fresh process" : "CUDA used before in this process";
      if (stats) {
        detail::setTimes(r, *stats);
      } else {
        r.medianMs = r.minMs = r.maxMs = medianMs;
        r.reps = 1;
      }
      out.push_back(r);
    };
    add("context", cold.contextMs, nullptr);
    if (cold.firstLaunchMs >= 0) add("first-launch", cold.firstLaunchMs, nullptr);
    add("later-launches", 0, &cold.later);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The three ways

struct TimingLab::State : detail::LabState {
  using LabState::LabState;
  DeviceBuffer data;
};

TimingLab::TimingLab() : state_(std::make_unique<State>(hasGpu())) {}
TimingLab::~TimingLab() = default;

TimingReport TimingLab::run(const TimingRequest& request, const CpuControl& control) {
  validate(request);
  State& s = *state_;
  s.requireGpu("the timing experiment");
  TimingReport report;
  report.request = request;
  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  report.deviceName = prop.name;

  const std::size_t bytes = request.elements * sizeof(float);
  s.data.reserve(bytes);
  GPULAB_CUDA_CHECK(cudaMemset(s.data.data(), 0, bytes));
  const Stream& stream = *s.stream;
  const TimingOptions timing{request.warmup, request.reps};
  const int steps = static_cast<int>(request.work.size()) * 3;
  int done = 0;
  auto step = [&] {
    control.report(static_cast<double>(++done) / steps);
    control.throwIfCancelled();
  };

  for (int work : request.work) {
    auto launch = [&] { kernels::launchBusyWork(s.data.as<float>(), request.elements, work, stream); };

    // Wrong: the host clock stops when the launch returns, long before the kernel ends. The queue
    // is drained between samples (untimed), so each sample is one launch into an idle stream.
    stream.synchronize();
    for (int k = 0; k < request.warmup; ++k) launch();
    stream.synchronize();
    std::vector<double> samples;
    for (int k = 0; k < request.reps; ++k) {
      const Stopwatch watch;
      launch();
      samples.push_back(watch.elapsedMs());
      stream.synchronize();
    }
    report.rows.push_back({work, TimingMethod::HostNoSync, Stats::of(samples)});
    step();

    // Host clock around launch + synchronise.
    report.rows.push_back({work, TimingMethod::HostSync,
                           timeHost(
                               [&] {
                                 launch();
                                 stream.synchronize();
                               },
                               timing)});
    step();

    // CUDA events on the stream around the kernel.
    report.rows.push_back({work, TimingMethod::Events, timeStream(stream, launch, timing)});
    step();
  }
  stream.synchronize();
  return report;
}

}  // namespace gpulab::lab
