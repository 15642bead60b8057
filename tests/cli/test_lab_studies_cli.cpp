// gpulab-cli's course studies and global options as a user runs them: --gpu N (a device that does
// not exist: one sentence listing the devices, exit 2, before or after the subcommand), --cpu-threads
// 1|all|N (named in every record), lab matmul-table / tensor-cores / linspace / axis with their
// tables and JSON, on a GPU machine and without one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpulab/core/device.hpp"
#include "support/cli_runner.hpp"

using namespace gpulab::test;

namespace {

namespace fs = std::filesystem;

fs::path tempPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("gpulab-test-course-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + suffix);
}

nlohmann::json readJson(const fs::path& path) {
  const std::string text = slurp(path);
  fs::remove(path);
  return nlohmann::json::parse(text);
}

int deviceCount() { return static_cast<int>(gpulab::queryDevices().devices.size()); }

}  // namespace

TEST(GlobalOptionsCli, AGpuThatDoesNotExistIsAUsageError) {
  const std::string bad = std::to_string(deviceCount() + 3);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--gpu", bad, "info"},
                                               {"lab", "linspace", "--gpu", bad, "--sizes", "10"},
                                               {"lab", "matmul", "--sizes", "8", "--gpu", bad}}) {
    const Outcome o = runCli(args);
    EXPECT_EQ(o.exitCode, 2) << o.err;
    EXPECT_NE(o.err.find("gpulab-cli: --gpu " + bad + ": there is no GPU " + bad + ": this machine has "),
              std::string::npos)
        << o.err;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
    EXPECT_TRUE(o.out.empty()) << "nothing ran: " << o.out;
  }
}

TEST(GlobalOptionsCli, CpuThreadsMustBeOneAllOrACount) {
  for (const char* bad : {"0", "none", "-2", "1.5"}) {
    const Outcome o = runCli({"--cpu-threads", bad, "info"});
    EXPECT_EQ(o.exitCode, 2) << bad << ": " << o.err;
    EXPECT_NE(o.err.find("--cpu-threads"), std::string::npos) << o.err;
  }
  EXPECT_EQ(runCli({"--cpu-threads", "all", "info"}).exitCode, 0);
}

TEST(GlobalOptionsCli, CpuThreadsNameEveryCpuRecord) {
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "matmul", "--sizes", "16,33", "--impl", "cpu_blas", "--reps", "1", "--cpu-threads",
                            "1", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("CPU side: CPU (1 thread)"), std::string::npos) << o.out;
  const nlohmann::json doc = readJson(json);
  EXPECT_EQ(doc["cpu"], "CPU (1 thread)");
  ASSERT_EQ(doc["records"].size(), 2u);
  for (const auto& r : doc["records"]) {
    EXPECT_EQ(r["device"], "CPU (1 thread)");
    EXPECT_EQ(r["params"], "threads=1");
  }
}

TEST(CourseCli, LinspaceAgainstExact) {
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"--cpu-threads", "2", "lab", "linspace", "--sizes", "100003", "--reps", "1", "--warmup",
                            "0", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("exact: sum = 3N + N(2N-1)/(6(N-1))"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cpu_pairwise"), std::string::npos);
  EXPECT_NE(o.out.find("2*sin(x)+sqrt(abs(x))"), std::string::npos);
  const nlohmann::json doc = readJson(json);
  EXPECT_EQ(doc["study"], "linspace");
  EXPECT_EQ(doc["n"], 100003);
  const std::size_t perType = deviceCount() > 0 ? 5 : 3;
  ASSERT_EQ(doc["rows"].size(), 2 * perType);
  for (const auto& r : doc["rows"]) {
    EXPECT_EQ(r["max"], 5.0);
    const std::string device = r["device"];
    if (r["gpu"])
      EXPECT_EQ(device.rfind("GPU 0 (", 0), 0u) << device;
    else if (r["accumulation"] == "cpu_double")
      EXPECT_EQ(device, "CPU (2 threads)");
    else
      EXPECT_EQ(device, "CPU (1 thread)");
    EXPECT_LT(r["sum_relative_error"].get<double>(), r["dtype"] == "f64" ? 1e-13 : 1e-4);
  }
  EXPECT_EQ(doc["expressions"].size(), deviceCount() > 0 ? 8u : 4u);
}

TEST(CourseCli, AxisStudyIsChecked) {
  const fs::path json = tempPath(".json");
  const Outcome o =
      runCli({"lab", "axis", "--sizes", "13x17", "--reps", "1", "--warmup", "0", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("x / x.sum(axis=1, keepdims=True)"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("FAILED"), std::string::npos) << o.out;
  const nlohmann::json doc = readJson(json);
  EXPECT_EQ(doc["rows"].size(), deviceCount() > 0 ? 16u : 8u);
  for (const auto& r : doc["rows"]) EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(runCli({"lab", "axis", "--sizes", "0x4"}).exitCode, 2);
  EXPECT_EQ(runCli({"lab", "axis", "--sizes", "4,5"}).exitCode, 2);
}

TEST(CourseCli, MatmulTableOddSizes) {
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "matmul-table", "--sizes", "7,31", "--reps", "1", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("numpy.allclose"), std::string::npos) << o.out;
  const nlohmann::json doc = readJson(json);
  const bool gpu = deviceCount() > 0;
  ASSERT_EQ(doc["rows"].size(), gpu ? 16u : 4u);
  for (const auto& r : doc["rows"]) {
    EXPECT_TRUE(r["measured"].get<bool>());
    EXPECT_FALSE(r["device"].get<std::string>().empty());
    if (gpu && !r["reference"].get<bool>()) {
      EXPECT_EQ(r["allclose"], true) << r.dump();
    }
  }
  if (gpu) {
    EXPECT_NE(o.out.find("True"), std::string::npos);
  }
}

TEST(CourseCli, MatmulTableSkipsTheCpuPastTheLimit) {
  // 64 is measured (it calibrates); 1000 is estimated at (1000/64)^3 = 3815 times that: over 1 ms.
  const Outcome o =
      runCli({"lab", "matmul-table", "--sizes", "64,1000", "--dtype", "f64", "--reps", "1", "--cpu-limit", "0.001"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("skipped: one run estimated at"), std::string::npos) << o.out;
}

TEST(CourseCli, BadInputIsAUsageError) {
  EXPECT_EQ(runCli({"lab", "matmul-table", "--sizes", "0"}).exitCode, 2);
  EXPECT_EQ(runCli({"lab", "matmul-table", "--sizes", "8x9"}).exitCode, 2);
  EXPECT_EQ(runCli({"lab", "linspace", "--sizes", "1"}).exitCode, 2);
  EXPECT_EQ(runCli({"lab", "matmul-table", "--cpu-limit", "-1"}).exitCode, 2);
  EXPECT_EQ(runCli({"lab", "no-such-study"}).exitCode, 2);
}

TEST(CourseCli, TensorCores) {
  if (deviceCount() == 0) {
    const Outcome o = runCli({"lab", "tensor-cores", "--sizes", "64"});
    EXPECT_EQ(o.exitCode, 1);
    EXPECT_NE(o.err.find("runs on the GPU only"), std::string::npos) << o.err;
    return;
  }
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "tensor-cores", "--sizes", "256", "--reps", "2", "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  const nlohmann::json doc = readJson(json);
  ASSERT_EQ(doc["rows"].size(), 5u);
  for (const auto& r : doc["rows"]) {
    EXPECT_GT(r["tflops"].get<double>(), 0);
    EXPECT_LT(r["relative_error"].get<double>(), 1e-2);
  }
  EXPECT_EQ(runCli({"lab", "tensor-cores", "--ops", "f8"}).exitCode, 2);
}
