// gpulab-cli lab as a user runs it (the real binary, GPULAB_CLI_PATH): the table, the JSON records
// with the bench's fields, the crossover sentences and the ceilings (bus for transfers, DRAM copy
// with L2 notes for memory-bound experiments) on a GPU machine, "CPU only" without one, and one
// line on stderr with exit code 2 (usage) or 1 (cannot run) for bad input.
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

#include "gpulab/core/device.hpp"
#include "support/cli_runner.hpp"

using namespace gpulab::test;  // runCli, describe, slurp, ...

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
  EXPECT_NE(o.out.find(" note\n"), std::string::npos) << describe(o);  // the table's last column

  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  EXPECT_EQ(doc["experiment"], "matmul");
  EXPECT_EQ(doc["cuda_available"], gpulab::cudaAvailable());
  ASSERT_EQ(doc["records"].size(), 2u);
  for (const char* field : {"op", "params", "sizes", "dtype", "impl", "median_ms", "min_ms", "max_ms", "reps", "gflops",
                            "relative_error", "ceiling_how", "note"})
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

TEST(LabCli, MatmulMultiSplitsAcrossTheChosenGpusOrSaysWhyNot) {
  Outcome o = runCli({"lab", "matmul", "--sizes", "16", "--gpus", "all"});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_NE(o.err.find("--gpus applies to transfer"), std::string::npos) << describe(o);
  if (!gpulab::cudaAvailable()) {
    o = runCli({"lab", "matmul-multi", "--sizes", "64"});
    EXPECT_EQ(o.exitCode, 1) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_NE(o.err.find("needs a CUDA device"), std::string::npos) << describe(o);
    return;
  }
  o = runCli({"lab", "matmul-multi", "--gpus", "99", "--sizes", "64"});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  o = runCli({"lab", "matmul-multi", "--gpus", "all", "--sizes", "96x80x70", "--reps", "2", "--warmup", "1"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("speedup over one GPU"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("check: allclose(split, one GPU, rtol=1e-4"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(": yes"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(gpulab::deviceLabel(0)), std::string::npos) << o.out;
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

TEST(LabCli, OnAGpuTransfersAreComparedWithTheBusCeiling) {
  if (!gpulab::cudaAvailable()) GTEST_SKIP() << "no CUDA device";
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "transfer", "--sizes", "4K,64M", "--impl", "pageable,pinned", "--ops", "h2d,d2h",
                            "--reps", "3", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("bus h2d"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("fastest of 10 pinned copies of 256.0 MiB, host to device"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("GB/s and % of the bus ceiling per size"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("pageable h2d"), std::string::npos) << describe(o);
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  const auto& bus = doc["bus_ceiling"];
  EXPECT_GT(bus["h2d_gbps"].get<double>(), 0);
  EXPECT_GT(bus["d2h_gbps"].get<double>(), 0);
  EXPECT_EQ(bus["bytes"].get<std::size_t>(), std::size_t{256} << 20);
  EXPECT_EQ(bus["copies"].get<int>(), 10);
  ASSERT_EQ(doc["transfer_summary"].size(), 2u);
  for (const auto& row : doc["transfer_summary"])
    for (const char* key : {"pageable_h2d", "pinned_h2d", "pageable_d2h", "pinned_d2h"}) {
      EXPECT_GT(row[std::string(key) + "_gbps"].get<double>(), 0) << key;
      EXPECT_GT(row[std::string(key) + "_percent_of_bus"].get<double>(), 0) << key;
    }
  for (const auto& r : doc["records"]) {
    EXPECT_EQ(r["ceiling_name"], "bus " + r["variant"].get<std::string>());
    EXPECT_FALSE(r["ceiling_how"].get<std::string>().empty());
  }
}

TEST(LabCli, OnAGpuMemoryBoundRatesAreAgainstTheDramCeilingWithL2Notes) {
  if (!gpulab::cudaAvailable()) GTEST_SKIP() << "no CUDA device";
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "elementwise", "--sizes", "1M,64M", "--impl", "gpu", "--ops", "a*x+y", "--reps", "3",
                            "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("DRAM copy"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("device-to-device copies"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("in L2: the arrays of that size fit in the"), std::string::npos) << describe(o);
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  const auto& ceiling = doc["copy_ceiling"];
  EXPECT_GT(ceiling["gbps"].get<double>(), 0);
  EXPECT_GE(ceiling["buffer_bytes"].get<std::size_t>(), 4 * ceiling["l2_bytes"].get<std::size_t>());
  ASSERT_EQ(doc["records"].size(), 2u);
  // 1M floats x 3 arrays = 12 MiB fits in the L2 of any recent GPU; 64M x 3 = 768 MiB does not.
  EXPECT_EQ(doc["records"][0]["note"], "in L2");
  EXPECT_EQ(doc["records"][1]["note"], "");
  for (const auto& r : doc["records"]) EXPECT_EQ(r["ceiling"].get<double>(), ceiling["gbps"].get<double>());
}
