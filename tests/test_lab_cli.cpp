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

#include "cli_runner.hpp"
#include "gpulab/device.hpp"

using gpulab::test::describe;
using gpulab::test::isOneLine;
using gpulab::test::Outcome;
using gpulab::test::runCli;
using gpulab::test::slurp;

extern char** environ;

namespace {

namespace fs = std::filesystem;

fs::path tempPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("gpulab-test-lab-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + suffix);
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
