// Restarting after a GPU fault (gpulab/core/relaunch.hpp, app/cli/fault_restart.hpp).
//
// FaultRestart (no GPU needed): the restart counter and its limit, the argument and environment
// building, execve itself (a forked child replaced by /bin/sh: the new image sees the counter and the
// arguments, and no descriptor of the old one), an execve that fails (one sentence, the process goes
// on), which gpulab-cli commands restart, and a restarted batch skipping what was written before.
//
// GpuFaultRelaunch (a CUDA device; skipped without one): gpulab-cli with the test-only
// GPULAB_TEST_INJECT_GPU_FAULT=once faults the GPU in its first download, says so in one sentence,
// restarts itself and writes what a run without the fault writes (filter, and batch over a folder);
// =always faults every process image: after two restarts it stops with exit code 1; fft does not
// restart. These fault the device on purpose: compute-sanitizer must not run them (scripts/gpu-check.sh
// leaves out *GpuFaultRelaunch*).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fault_restart.hpp"
#include "gpulab/core/relaunch.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"
#include "support/io_test.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::describe;
using test::runCli;
using test::ScratchDir;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Sets an environment variable for the scope (runCli passes this process's environment on).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// ---------------------------------------------------------------------------------------------
// FaultRestart: no GPU

TEST(FaultRestart, CounterComesFromTheEnvironmentAndIsBounded) {
  ::unsetenv(kFaultRestartsVariable);
  EXPECT_EQ(faultRestarts(), 0);
  EXPECT_TRUE(mayRestartAfterFault());
  EXPECT_EQ(faultRestartReason(), "") << "a first start has no reason";
  {
    ScopedEnv restarts(kFaultRestartsVariable, "1");
    ScopedEnv reason(kFaultReasonVariable, "the GPU faulted (x)");
    EXPECT_EQ(faultRestarts(), 1);
    EXPECT_TRUE(mayRestartAfterFault());
    EXPECT_EQ(faultRestartReason(), "the GPU faulted (x)");
  }
  for (const char* limit : {"2", "3", "17"}) {
    ScopedEnv restarts(kFaultRestartsVariable, limit);
    EXPECT_FALSE(mayRestartAfterFault()) << limit;
  }
  for (const char* junk : {"", "x", "-1", "1x", " 1"}) {
    ScopedEnv restarts(kFaultRestartsVariable, junk);
    EXPECT_EQ(faultRestarts(), 0) << "'" << junk << "'";
  }
}

TEST(FaultRestart, AdoptedStateLeavesTheEnvironmentButCountsOn) {
  std::fflush(nullptr);
  const pid_t child = ::fork();  // adopting is once per process: not in this one
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv(kFaultRestartsVariable, "1", 1);
    ::setenv(kFaultReasonVariable, "the GPU faulted (x)", 1);
    adoptFaultRestartState();
    int failures = 0;
    failures += std::getenv(kFaultRestartsVariable) != nullptr;  // children of this process do not see it
    failures += std::getenv(kFaultReasonVariable) != nullptr;
    failures += faultRestarts() != 1;
    failures += faultRestartReason() != "the GPU faulted (x)";
    const std::vector<std::string> env = currentEnvironment();  // what a restart counts on from
    failures += environmentValue(env, kFaultRestartsVariable) != "1";
    failures += environmentValue(planFaultRestart({"x"}, env, "y").environment, kFaultRestartsVariable) != "2";
    ::_exit(failures);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "checks failed in the child";
}

TEST(FaultRestart, PlanCountsUpKeepsArgumentsAndStopsAtTheLimit) {
  const std::vector<std::string> args = {"/usr/bin/gpulab-cli", "filter", "--in", "a b.png"};
  RelaunchPlan plan = planFaultRestart(args, {"HOME=/root", "PATH=/bin"}, "the GPU faulted (boom)");
  EXPECT_EQ(plan.program, "/proc/self/exe");
  EXPECT_EQ(plan.arguments, args);
  EXPECT_EQ(environmentValue(plan.environment, kFaultRestartsVariable), "1");
  EXPECT_EQ(environmentValue(plan.environment, kFaultReasonVariable), "the GPU faulted (boom)");
  EXPECT_EQ(environmentValue(plan.environment, "HOME"), "/root");
  EXPECT_EQ(environmentValue(plan.environment, "PATH"), "/bin");

  plan = planFaultRestart(args, plan.environment, "the GPU faulted (again)");
  EXPECT_EQ(environmentValue(plan.environment, kFaultRestartsVariable), "2");
  EXPECT_EQ(environmentValue(plan.environment, kFaultReasonVariable), "the GPU faulted (again)");
  EXPECT_EQ(std::count_if(plan.environment.begin(), plan.environment.end(),
                          [](const std::string& e) { return e.rfind("GPULAB_FAULT_RESTARTS=", 0) == 0; }),
            1);

  try {
    (void)planFaultRestart(args, plan.environment, "the GPU faulted (a third time)");
    FAIL() << "a third restart was planned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "it restarted 2 times after GPU faults already, so it does not restart again");
  }
  EXPECT_THROW((void)planFaultRestart({}, {}, "x"), std::runtime_error);
}

TEST(FaultRestart, ArgumentAndEnvironmentValuesAreSetOnce) {
  std::vector<std::string> args = {"gpulab", "--restore-after-fault", "/tmp/a.json", "photo.png"};
  setArgumentValue(args, "--restore-after-fault", "/tmp/b.json");
  EXPECT_EQ(args, (std::vector<std::string>{"gpulab", "--restore-after-fault", "/tmp/b.json", "photo.png"}));
  args = {"gpulab", "--restore-after-fault=/tmp/a.json"};
  setArgumentValue(args, "--restore-after-fault", "/tmp/b.json");
  EXPECT_EQ(args, (std::vector<std::string>{"gpulab", "--restore-after-fault=/tmp/b.json"}));
  args = {"--restore-after-fault"};  // argv[0] is the program, never the option
  setArgumentValue(args, "--restore-after-fault", "/tmp/c.json");
  EXPECT_EQ(args, (std::vector<std::string>{"--restore-after-fault", "--restore-after-fault", "/tmp/c.json"}));

  std::vector<std::string> env = {"A=1", "GPULAB_X=old", "GPULAB_XY=keep", "GPULAB_X=dup"};
  setEnvironmentValue(env, "GPULAB_X", "new");
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "GPULAB_X=new", "GPULAB_XY=keep"}));
  setEnvironmentValue(env, "B", "");
  EXPECT_EQ(environmentValue(env, "B"), "");
  EXPECT_EQ(env.back(), "B=");
}

TEST(FaultRestart, CurrentArgumentsAndEnvironmentAreThisProcesss) {
  const std::vector<std::string> args = currentArguments();
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(fs::path(args.front()).filename(), fs::read_symlink("/proc/self/exe").filename());
  ScopedEnv marker("GPULAB_TEST_MARKER", "a=b c");
  EXPECT_EQ(environmentValue(currentEnvironment(), "GPULAB_TEST_MARKER"), "a=b c");
}

TEST(FaultRestart, RelaunchReplacesTheImageWithoutTheOldDescriptors) {
  ScratchDir dir("gpulab-test-relaunch");
  const fs::path out = dir / "out.txt";
  std::fflush(nullptr);  // nothing buffered here is written twice by the child
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A descriptor without close-on-exec, as the CUDA driver's may be.
    const int fd = ::open("/dev/null", O_RDONLY);
    const std::string script = "printf '%s|%s|%s\\n' \"$GPULAB_FAULT_RESTARTS\" \"$GPULAB_FAULT_REASON\" \"$1\" > '" +
                               out.string() + "'; if [ -e /proc/$$/fd/" + std::to_string(fd) +
                               " ]; then echo open; else echo closed; fi >> '" + out.string() + "'";
    RelaunchPlan plan = planFaultRestart({"sh", "-c", script, "sh", "an argument"}, currentEnvironment(), "why");
    plan.program = "/bin/sh";
    (void)relaunch(plan);
    ::_exit(3);  // only when execve failed
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "3: execve failed";
  EXPECT_EQ(test::readBytes(out), "1|why|an argument\nclosed\n");
}

TEST(FaultRestart, ChildModeRunsTheNewImageAsAChildAndLeavesWithItsExitCode) {
  EXPECT_EQ(planFaultRestart({"x"}, {}, "why").mode, RelaunchMode::ReplaceProcess);
  EXPECT_EQ(planFaultRestart({"x"}, {"GPULAB_RELAUNCH=child"}, "why").mode, RelaunchMode::ChildProcess);
  ScratchDir dir("gpulab-test-relaunch-child");
  const fs::path out = dir / "pid.txt";
  std::fflush(nullptr);
  const pid_t faulted = ::fork();  // stands for the faulted process: relaunch ends it
  ASSERT_GE(faulted, 0);
  if (faulted == 0) {
    RelaunchPlan plan =
        planFaultRestart({"sh", "-c", "echo \"$$ $GPULAB_FAULT_RESTARTS\" > '" + out.string() + "'; exit 7"},
                         {"GPULAB_RELAUNCH=child"}, "why");
    plan.program = "/bin/sh";
    (void)relaunch(plan);
    ::_exit(3);  // only when it failed
  }
  int status = 0;
  ASSERT_EQ(::waitpid(faulted, &status, 0), faulted);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7) << "the child's exit code, passed on (3: relaunch failed)";
  const std::string written = test::readBytes(out);
  EXPECT_EQ(written.substr(written.find(' ')), " 1\n");
  EXPECT_NE(std::stoi(written), faulted) << "a new process, not the faulted one";

  RelaunchPlan missing = planFaultRestart({"x"}, {"GPULAB_RELAUNCH=child"}, "why");
  missing.program = "/nonexistent/gpulab-cli";
  EXPECT_EQ(relaunch(missing),
            "gpulab could not restart itself: execve /nonexistent/gpulab-cli: No such file or directory");
}

TEST(FaultRestart, AFailedRelaunchIsOneSentenceAndTheProcessGoesOn) {
  RelaunchPlan plan = planFaultRestart({"gpulab-cli", "filter"}, {}, "why");
  plan.program = "/nonexistent/gpulab-cli";
  EXPECT_EQ(relaunch(plan),
            "gpulab could not restart itself: execve /nonexistent/gpulab-cli: No such file or directory");
  EXPECT_EQ(relaunch(RelaunchPlan{}), "gpulab could not restart itself: the command line is empty");
}

TEST(FaultRestart, OnlyCommandsThatCanRunAgainRestart) {
  EXPECT_TRUE(cli::restartsAfterGpuFault("filter"));
  EXPECT_TRUE(cli::restartsAfterGpuFault("batch"));
  for (const char* other : {"fft", "lab", "mandelbrot", "bench", "soak", "info", ""})
    EXPECT_FALSE(cli::restartsAfterGpuFault(other)) << other;
}

TEST(FaultRestart, WrittenListRoundTripsAndIsTakenOut) {
  ScratchDir dir("gpulab-test-written");
  const std::vector<fs::path> written = {dir / "in/a b.png", dir / "in/c.jpg"};
  ASSERT_TRUE(cli::writePathList(dir / "list.txt", written));
  EXPECT_EQ(cli::readPathList(dir / "list.txt"), written);
  EXPECT_TRUE(cli::readPathList(dir / "missing.txt").empty());
  const std::vector<fs::path> inputs = {dir / "in/a b.png", dir / "in/b.png", dir / "in/c.jpg", dir / "in/d.png"};
  EXPECT_EQ(cli::withoutWritten(inputs, written), (std::vector<fs::path>{dir / "in/b.png", dir / "in/d.png"}));
}

/// Three small photos in `dir`.
std::vector<fs::path> writePhotos(const fs::path& dir, int count) {
  fs::create_directories(dir);
  std::vector<fs::path> paths;
  for (int i = 0; i < count; ++i) {
    paths.push_back(dir / ("p" + std::to_string(i) + ".png"));
    saveImage(test::randomImage(37 + i, 23, 3, PixelType::U8, 50U + static_cast<unsigned>(i)), paths.back());
  }
  return paths;
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(FaultRestart, RestartedBatchSkipsWhatWasWrittenBefore) {
  ScratchDir dir("gpulab-test-batch-resume");
  const std::vector<fs::path> inputs = writePhotos(dir / "in", 3);
  const fs::path list = dir / "written.txt";
  ASSERT_TRUE(cli::writePathList(list, {inputs[1]}));
  ScopedEnv restarts(kFaultRestartsVariable, "1");
  ScopedEnv reason(kFaultReasonVariable, "the GPU faulted (test)");
  ScopedEnv written(cli::kBatchWrittenVariable, list.string());
  const test::Outcome o = runCli({"batch", "--op", "box", "--radius", "2", "--in", (dir / "in").string(), "--out",
                                  (dir / "out").string(), "--device", "cpu", "--jobs", "1"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.err, "gpulab-cli: running again after a GPU fault (restart 1 of 2; the GPU faulted (test))\n"))
      << o.err;
  EXPECT_TRUE(has(o.out, "resuming after a GPU fault: 1 of 3 images were written before it, 2 remain")) << o.out;
  EXPECT_TRUE(has(o.out, "batch: 2 of 2 images written")) << o.out;
  EXPECT_EQ(names(dir / "out"), (std::set<std::string>{"p0.png", "p2.png"})) << "p1 was written before the fault";
  EXPECT_FALSE(fs::exists(list)) << "the list is used once";
}

TEST(FaultRestart, TheTestFaultTouchesNoCpuRun) {
  ScratchDir dir("gpulab-test-inject-cpu");
  const std::vector<fs::path> inputs = writePhotos(dir / "in", 1);
  ScopedEnv inject("GPULAB_TEST_INJECT_GPU_FAULT", "always");
  const test::Outcome o = runCli({"filter", "--op", "box", "--radius", "2", "--in", inputs[0].string(), "--out",
                                  (dir / "out.png").string(), "--device", "cpu"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_EQ(o.err, "");
  EXPECT_TRUE(fs::exists(dir / "out.png"));
}

// ---------------------------------------------------------------------------------------------
// GpuFaultRelaunch: a real fault on the GPU, a real restart

void expectSameImage(const fs::path& expected, const fs::path& actual) {
  ASSERT_TRUE(fs::exists(actual)) << actual;
  const Image e = loadImage(expected), a = loadImage(actual);
  EXPECT_TRUE(test::imagesNear(e, a, 0.0)) << actual;
}

TEST(GpuFaultRelaunch, FilterRestartsAndWritesWhatARunWithoutTheFaultWrites) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-relaunch-filter");
  const std::vector<fs::path> inputs = writePhotos(dir / "in", 1);
  auto filter = [&](const fs::path& out) {
    return runCli({"filter", "--op", "box", "--radius", "3", "--in", inputs[0].string(), "--out", out.string(),
                   "--device", "gpu"});
  };
  const test::Outcome clean = filter(dir / "clean.png");
  ASSERT_EQ(clean.exitCode, 0) << describe(clean);
  ScopedEnv inject("GPULAB_TEST_INJECT_GPU_FAULT", "once");
  for (const char* mode : {"", "child"}) {  // in place (the default), and as a child process
    SCOPED_TRACE(std::string("GPULAB_RELAUNCH=") + mode);
    ScopedEnv relaunchMode(kRelaunchModeVariable, mode);
    const fs::path faulted = dir / (std::string("faulted-") + mode + ".png");
    const test::Outcome o = filter(faulted);
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_TRUE(has(o.err, "gpulab-cli: the GPU faulted (")) << o.err;
    EXPECT_TRUE(has(o.err, "; gpulab-cli restarts itself to get a new CUDA context (restart 1 of 2)\n")) << o.err;
    EXPECT_TRUE(has(o.err, "gpulab-cli: running again after a GPU fault (restart 1 of 2; the GPU faulted (")) << o.err;
    EXPECT_FALSE(has(o.err, "restart 2 of 2")) << "the restarted run is clean: " << o.err;
    EXPECT_TRUE(has(o.out, "wrote " + faulted.string())) << o.out;
    expectSameImage(dir / "clean.png", faulted);
  }
}

TEST(GpuFaultRelaunch, BatchRestartsAndLosesNoImage) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-relaunch-batch");
  const std::vector<fs::path> inputs = writePhotos(dir / "in", 5);
  auto batch = [&](const fs::path& out) {
    return runCli({"batch", "--op", "box", "--radius", "3", "--in", (dir / "in").string(), "--out", out.string(),
                   "--device", "gpu", "--jobs", "2"});
  };
  const test::Outcome clean = batch(dir / "clean");
  ASSERT_EQ(clean.exitCode, 0) << describe(clean);
  ScopedEnv inject("GPULAB_TEST_INJECT_GPU_FAULT", "once");
  for (const char* mode : {"", "child"}) {
    SCOPED_TRACE(std::string("GPULAB_RELAUNCH=") + mode);
    ScopedEnv relaunchMode(kRelaunchModeVariable, mode);
    const fs::path faulted = dir / (std::string("faulted-") + mode);
    const test::Outcome o = batch(faulted);
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_TRUE(has(o.err, "gpulab-cli: the GPU faulted (")) << o.err;
    EXPECT_TRUE(has(o.err, "; gpulab-cli restarts itself to get a new CUDA context (restart 1 of 2)\n")) << o.err;
    EXPECT_TRUE(has(o.err, "gpulab-cli: running again after a GPU fault (restart 1 of 2")) << o.err;
    EXPECT_TRUE(has(o.out, "resuming after a GPU fault: ")) << o.out;
    ASSERT_EQ(names(faulted), names(dir / "clean")) << describe(o);
    for (const std::string& name : names(dir / "clean")) expectSameImage(dir / "clean" / name, faulted / name);
  }
}

TEST(GpuFaultRelaunch, AFaultEveryTimeStopsAfterTwoRestarts) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-relaunch-limit");
  const std::vector<fs::path> inputs = writePhotos(dir / "in", 1);
  ScopedEnv inject("GPULAB_TEST_INJECT_GPU_FAULT", "always");
  const test::Outcome o = runCli({"filter", "--op", "box", "--radius", "3", "--in", inputs[0].string(), "--out",
                                  (dir / "out.png").string(), "--device", "gpu"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(has(o.err, "(restart 1 of 2)\n")) << o.err;
  EXPECT_TRUE(has(o.err, "(restart 2 of 2)\n")) << o.err;
  EXPECT_TRUE(has(o.err,
                  ": the CUDA context is lost and gpulab-cli stops: it restarted 2 times after GPU faults "
                  "already, so it does not restart again\n"))
      << o.err;
  EXPECT_FALSE(fs::exists(dir / "out.png"));
}

TEST(GpuFaultRelaunch, OtherCommandsStopWithExitCodeOne) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-relaunch-fft");
  const std::vector<fs::path> inputs = writePhotos(dir / "in", 1);
  ScopedEnv inject("GPULAB_TEST_INJECT_GPU_FAULT", "once");
  const test::Outcome o = runCli(
      {"fft", "--in", inputs[0].string(), "--cutoff", "0.2", "--out", (dir / "out.png").string(), "--device", "gpu"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(test::isOneLine(o.err)) << o.err;
  EXPECT_TRUE(has(o.err, "gpulab-cli: the GPU faulted (")) << o.err;
  EXPECT_TRUE(has(o.err, ": the CUDA context is lost, so gpulab-cli stops; run it again\n")) << o.err;
}

}  // namespace
}  // namespace gpulab
