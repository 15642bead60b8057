// gpulab-cli lab as a user runs it (the real binary, GPULAB_CLI_PATH): the table, the JSON records
// with the bench's fields, the crossover sentences on a GPU machine, "CPU only" without one, and
// one line on stderr with exit code 2 (usage) or 1 (cannot run) for bad input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/device.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exitCode = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path tempPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("gpulab-test-lab-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + suffix);
}

/// Runs gpulab-cli with `args`, stdout and stderr going to files (no pipe can fill up and block).
Outcome runCli(const std::vector<std::string>& args) {
  const std::string outPath = tempPath(".out").string(), errPath = tempPath(".err").string();
  std::vector<std::string> argvStrings = {GPULAB_CLI_PATH};
  argvStrings.insert(argvStrings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argvStrings) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Outcome outcome;
  if (spawned != 0) {
    outcome.err = std::string("posix_spawn failed: ") + std::strerror(spawned);
    return outcome;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  outcome.out = slurp(outPath);
  outcome.err = slurp(errPath);
  std::error_code ec;
  fs::remove(outPath, ec);
  fs::remove(errPath, ec);
  return outcome;
}

std::string describe(const Outcome& o) {
  return "exit " + std::to_string(o.exitCode) + "\n--- stdout\n" + o.out + "--- stderr\n" + o.err;
}

bool isOneLine(const std::string& s) {
  return s.size() > 1 && s.back() == '\n' && std::count(s.begin(), s.end(), '\n') == 1;
}

}  // namespace

TEST(LabCli, MatmulCpuTableAndJsonRecords) {
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "matmul", "--sizes", "8,33x100x7", "--impl", "cpu_blas", "--reps", "2", "--check",
                            "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(o.err.empty()) << describe(o);
  EXPECT_NE(o.out.find("cpu_blas"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("33x100x7"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("OpenBLAS"), std::string::npos) << describe(o);

  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  EXPECT_EQ(doc["experiment"], "matmul");
  EXPECT_EQ(doc["cuda_available"], gpulab::cudaAvailable());
  ASSERT_EQ(doc["records"].size(), 2u);
  for (const char* field :
       {"op", "params", "sizes", "dtype", "impl", "median_ms", "min_ms", "max_ms", "reps", "gflops", "relative_error"})
    EXPECT_TRUE(doc["records"][0].contains(field)) << field;
  EXPECT_EQ(doc["records"][0]["op"], "matmul");
  EXPECT_EQ(doc["records"][0]["impl"], "cpu_blas");
  EXPECT_EQ(doc["records"][0]["dtype"], "f32");
  EXPECT_EQ(doc["records"][0]["reps"], 2);
  EXPECT_EQ(doc["records"][0]["sizes"], nlohmann::json::array({8, 8, 8}));
  EXPECT_EQ(doc["records"][1]["sizes"], nlohmann::json::array({33, 100, 7}));
  EXPECT_GT(doc["records"][1]["gflops"].get<double>(), 0);
  EXPECT_LT(doc["records"][1]["relative_error"].get<double>(), 1e-6);
}

TEST(LabCli, ReduceAndElementwiseOnTheCpu) {
  const fs::path json = tempPath(".json");
  Outcome o = runCli({"lab", "reduce", "--sizes", "1,1K", "--impl", "cpu", "--ops", "sum,std", "--dtype", "f64",
                      "--reps", "1", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  ASSERT_EQ(doc["records"].size(), 4u);
  EXPECT_EQ(doc["records"][1]["variant"], "std");
  EXPECT_TRUE(doc["records"][1].contains("gbps"));
  EXPECT_EQ(doc["records"][1]["dtype"], "f64");
  o = runCli({"lab", "elementwise", "--sizes", "100", "--impl", "cpu", "--reps", "1"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("x*x+2*y"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("a*x+y"), std::string::npos) << describe(o);
}

TEST(LabCli, BadSizesAreUsageErrorsInOneLine) {
  for (const char* sizes : {"0", "-3", "abc", "3x4", "64..32", "1,,2", "70000"}) {
    const Outcome o = runCli({"lab", "matmul", "--sizes", sizes, "--impl", "cpu_blas"});
    EXPECT_EQ(o.exitCode, 2) << sizes << "\n" << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_TRUE(o.out.empty()) << describe(o);
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"lab", "fft"},
                                               {"lab", "matmul", "--dtype", "f16"},
                                               {"lab", "matmul", "--reps", "0"},
                                               {"lab", "matmul", "--impl", "gpu_magic"},
                                               {"lab", "reduce", "--ops", "median"},
                                               {"lab"}}) {
    const Outcome o = runCli(args);
    EXPECT_EQ(o.exitCode, 2) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  }
}

TEST(LabCli, TooLargeForMemoryIsAFailureInOneLine) {
  const Outcome o = runCli({"lab", "elementwise", "--sizes", "64G", "--dtype", "f64", "--impl", "cpu"});  // 1.5 TiB
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  EXPECT_NE(o.err.find("host memory"), std::string::npos) << describe(o);
}

TEST(LabCli, WithoutAGpuRunsTheCpuAndSaysSo) {
  if (gpulab::cudaAvailable()) GTEST_SKIP() << "this machine has a GPU";
  Outcome o = runCli({"lab", "matmul", "--sizes", "16", "--reps", "1"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("only the CPU implementations run"), std::string::npos) << describe(o);
  EXPECT_EQ(o.out.find("gpu_"), std::string::npos) << describe(o);
  o = runCli({"lab", "transfer"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  o = runCli({"lab", "matmul", "--sizes", "16", "--impl", "cublas"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_NE(o.err.find("needs a CUDA device"), std::string::npos) << describe(o);
}

TEST(LabCli, OnAGpuPrintsCrossoversAndWritesThem) {
  if (!gpulab::cudaAvailable()) GTEST_SKIP() << "no CUDA device";
  const fs::path json = tempPath(".json");
  const Outcome o =
      runCli({"lab", "matmul", "--sizes", "16,256", "--reps", "2", "--with-copies", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("cublas"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("+copies"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("(compute only)"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("(with copies)"), std::string::npos) << describe(o);
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  EXPECT_FALSE(doc["device"].is_null());
  EXPECT_FALSE(doc["crossovers"].empty());
  // 2 sizes x (cpu_blas + 4 GPU implementations x 2 records)
  EXPECT_EQ(doc["records"].size(), 18u);
  for (const auto& r : doc["records"])
    if (r["gpu"].get<bool>()) {
      EXPECT_GT(r["ceiling"].get<double>(), 0);
      EXPECT_EQ(r["ceiling_name"], "cuBLAS");
    }
}
