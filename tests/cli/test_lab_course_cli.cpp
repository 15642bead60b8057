// gpulab-cli lab custom|pool|timing as a user runs them: exit code 2 with one clear message for bad
// input (an expression's syntax error with its column, a compile error with the compiler's line
// and column, bad arguments, unsafe launches), 0 with the figures for good input, 1 for a failed
// verification or a faulting kernel (its process loses the GPU context: said, never a crash), and
// `lab --help` listing the labs. Without a GPU: the expression runs on the CPU alone and says so,
// --compile-only --arch compiles with NVRTC, and the GPU-only labs exit 1 naming why.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gpulab/core/device.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab::test;

namespace {

namespace fs = std::filesystem;

fs::path tempPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("gpulab-test-lab-course-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + suffix);
}

fs::path writeFile(const std::string& text, const std::string& suffix = ".cu") {
  const fs::path path = tempPath(suffix);
  std::ofstream(path) << text;
  return path;
}

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

constexpr const char* kSaxpy = R"(extern "C" __global__ void saxpy(const float* x, float* y, float a, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + 1.0f;
}
)";

TEST(LabCourseCli, HelpListsTheNewLabs) {
  const Outcome o = runCli({"lab", "--help"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  for (const char* piece : {"custom", "pool", "timing", "--expr", "--source", "--kernel", "--allocations", "--work"})
    EXPECT_TRUE(has(o.out, piece)) << piece;
  EXPECT_FALSE(has(o.out, "--cold-probe")) << "internal option shown";
}

struct BadInput {
  std::vector<std::string> args;
  const char* says;
};

class LabCourseCliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(LabCourseCliBadInput, ExitsTwoWithOneClearMessage) {
  const Outcome o = runCli(GetParam().args);
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(has(o.err, GetParam().says)) << describe(o);
}

INSTANTIATE_TEST_SUITE_P(
    Table, LabCourseCliBadInput,
    ::testing::Values(
        BadInput{{"lab", "custom", "--expr", "y = sin(x"}, "column 10: expected ',' or ')'"},
        BadInput{{"lab", "custom", "--expr", "y = 2x + 1"}, "column 6: a name cannot start right after the number"},
        BadInput{{"lab", "custom", "--expr", "y = foo(x)"}, "column 5: unknown function 'foo'"},
        BadInput{{"lab", "custom"}, "needs --expr"},
        BadInput{{"lab", "custom", "--expr", "y = x", "--source", "k.cu"}, "one of the two"},
        BadInput{{"lab", "custom", "--source", "k.cu"}, "--source needs --kernel"},
        BadInput{{"lab", "custom", "--source", "/nonexistent/k.cu", "--kernel", "k"}, "cannot read the kernel source"},
        BadInput{{"lab", "custom", "--expr", "y = x", "--size", "0"}, "--size '0'"},
        BadInput{{"lab", "custom", "--expr", "y = x", "--input", "q=linspace"}, "which the expression does not read"},
        BadInput{{"lab", "custom", "--expr", "y = x", "--input", "x=zeros"}, "linspace or random"},
        BadInput{{"lab", "custom", "--expr", "y = x", "--dtype", "f16"}, "--dtype"},
        BadInput{{"lab", "pool", "--allocations", "0"}, "allocation count"},
        BadInput{{"lab", "pool", "--min-bytes", "1M", "--max-bytes", "1K"}, "below the smallest"},
        BadInput{{"lab", "pool", "--live", "20", "--allocations", "10"}, "alive at once"},
        BadInput{{"lab", "timing", "--work", "0"}, "work sizes"}, BadInput{{"lab", "nosuch"}, "nosuch"}));

TEST(LabCourseCli, CompileOnlyReportsNvrtcErrorsWithLineAndColumn) {
  const fs::path bad = writeFile("extern \"C\" __global__ void k(float* y) {\n  y[0] = undefined_thing;\n}\n");
  const Outcome o =
      runCli({"lab", "custom", "--source", bad.string(), "--kernel", "k", "--compile-only", "--arch", "90"});
  fs::remove(bad);
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(has(o.err, "NVRTC could not compile")) << describe(o);
  EXPECT_TRUE(has(o.err, "line 2, column 10: error: identifier \"undefined_thing\" is undefined")) << describe(o);
}

TEST(LabCourseCli, CompileOnlyCompilesAndCachesOnDisk) {
  const fs::path cache = tempPath("-cache");
  ::setenv("GPULAB_KERNEL_CACHE", cache.c_str(), 1);
  const std::string expr = "y = sin(x)*2 + sqrt(abs(x)) + " + std::to_string(::getpid());
  const Outcome first = runCli({"lab", "custom", "--expr", expr, "--compile-only", "--arch", "90", "--print-source"});
  const Outcome second = runCli({"lab", "custom", "--expr", expr, "--compile-only", "--arch", "90"});
  ::unsetenv("GPULAB_KERNEL_CACHE");
  fs::remove_all(cache);
  ASSERT_EQ(first.exitCode, 0) << describe(first);
  EXPECT_TRUE(has(first.out, "extern \"C\" __global__ void gpulab_elementwise")) << describe(first);
  EXPECT_TRUE(has(first.out, "elementwise.cu: compiled for sm_90")) << describe(first);
  ASSERT_EQ(second.exitCode, 0) << describe(second);
  EXPECT_TRUE(has(second.out, "elementwise.cu: cached on disk for sm_90")) << describe(second);
}

TEST(LabCourseCli, ExpressionWithoutAGpuRunsOnTheCpuAndSaysSo) {
  if (gpulab::cudaAvailable()) GTEST_SKIP() << "a GPU is present: the GPU tests below cover this command";
  const fs::path json = tempPath(".json");
  const Outcome o = runCli({"lab", "custom", "--expr", "y = sin(x)*2 + sqrt(abs(x))", "--size", "1000", "--reps", "2",
                            "--json", json.string()});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.out, "no CUDA device")) << describe(o);
  EXPECT_TRUE(has(o.out, "cpu (")) << describe(o);
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  EXPECT_EQ(doc["gpu_ran"], false);
  ASSERT_EQ(doc["records"].size(), 1u);
  EXPECT_EQ(doc["records"][0]["impl"], "cpu");
}

TEST(LabCourseCli, GpuOnlyLabsWithoutAGpuExitOne) {
  if (gpulab::cudaAvailable()) GTEST_SKIP() << "a GPU is present";
  const fs::path src = writeFile(kSaxpy);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"lab", "pool", "--allocations", "100"}, std::vector<std::string>{"lab", "timing"},
        std::vector<std::string>{"lab", "custom", "--source", src.string(), "--kernel", "saxpy"}}) {
    const Outcome o = runCli(args);
    EXPECT_EQ(o.exitCode, 1) << describe(o);
    EXPECT_TRUE(has(o.err, "needs a CUDA device")) << describe(o);
  }
  fs::remove(src);
}

// ---------------------------------------------------------------------------------------------
// On a GPU (suite names without "Gpu": these run gpulab-cli in child processes, one of which faults
// on purpose, so they stay out of compute-sanitizer's *Gpu* filter)

TEST(LabCourseCliDevice, ExpressionRunsChecksCachesAndWritesJson) {
  GPULAB_REQUIRE_GPU();
  const fs::path cache = tempPath("-cache");
  ::setenv("GPULAB_KERNEL_CACHE", cache.c_str(), 1);
  const fs::path json = tempPath(".json");
  const std::string expr = "y = sin(x)*2 + sqrt(abs(x)); z = y*w - " + std::to_string(::getpid());
  const Outcome o = runCli({"lab", "custom", "--expr", expr, "--size", "100003", "--reps", "3", "--dtype", "f64",
                            "--input", "w=random:0:2", "--json", json.string()});
  const Outcome again = runCli({"lab", "custom", "--expr", expr, "--size", "100003", "--reps", "3", "--dtype", "f64",
                                "--input", "w=random:0:2"});
  ::unsetenv("GPULAB_KERNEL_CACHE");
  fs::remove_all(cache);
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.out, "compile: compiled in")) << describe(o);
  EXPECT_TRUE(has(o.out, "module load")) << describe(o);
  EXPECT_TRUE(has(o.out, "check y: max error")) << describe(o);
  EXPECT_TRUE(has(o.out, "check z: max error")) << describe(o);
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  fs::remove(json);
  EXPECT_EQ(doc["passed"], true);
  EXPECT_EQ(doc["cache"], "compiled");
  EXPECT_GT(doc["compile_ms"].get<double>(), 0);
  EXPECT_EQ(doc["records"].size(), 2u);
  EXPECT_EQ(doc["inputs"], (std::vector<std::string>{"x", "w"}));
  ASSERT_EQ(again.exitCode, 0) << describe(again);
  EXPECT_TRUE(has(again.out, "compile: cached on disk")) << describe(again);
}

TEST(LabCourseCliDevice, RawKernelVerifiedTimedOnlyOrFailed) {
  GPULAB_REQUIRE_GPU();
  const fs::path src = writeFile(kSaxpy);
  const std::vector<std::string> base = {
      "lab",    "custom", "--source",       src.string(), "--kernel", "saxpy",   "--arg",  "in:x=random:-1:1",
      "--arg",  "out:y",  "--arg",          "f32:a=3",    "--arg",    "i64:n=n", "--size", "5000",
      "--reps", "2",      "--no-disk-cache"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return runCli(args);
  };
  const Outcome ok = with({"--expect", "y = a*x + 1"});
  EXPECT_EQ(ok.exitCode, 0) << describe(ok);
  EXPECT_TRUE(has(ok.out, "check y: max error")) << describe(ok);
  const Outcome timed = with({});
  EXPECT_EQ(timed.exitCode, 0) << describe(timed);
  EXPECT_TRUE(has(timed.out, "timed only")) << describe(timed);
  const Outcome wrong = with({"--expect", "y = a*x"});
  EXPECT_EQ(wrong.exitCode, 1) << describe(wrong);
  EXPECT_TRUE(has(wrong.out, "FAILED")) << describe(wrong);
  EXPECT_TRUE(has(wrong.err, "verification failed: y")) << describe(wrong);
  const Outcome big = with({"--block", "2048"});
  EXPECT_EQ(big.exitCode, 2) << describe(big);
  EXPECT_TRUE(has(big.err, "2048 threads along x")) << describe(big);
  const Outcome unbound = with({"--expect", "y = a*x + b"});
  EXPECT_EQ(unbound.exitCode, 2) << describe(unbound);
  EXPECT_TRUE(has(unbound.err, "the check reads 'b', which is not an argument")) << describe(unbound);
  fs::remove(src);
}

TEST(LabCourseCliDevice, AFaultingKernelIsReportedNotACrash) {
  GPULAB_REQUIRE_GPU();
  const fs::path src = writeFile(
      "extern \"C\" __global__ void wild(float* y, long long n) {\n"
      "  float* p = (float*)0x10;\n"
      "  p[threadIdx.x * 1024] = y[0];\n"
      "}\n");
  const Outcome o = runCli({"lab", "custom", "--source", src.string(), "--kernel", "wild", "--arg", "out:y", "--arg",
                            "i64:n=n", "--size", "256", "--reps", "1", "--no-disk-cache"});
  fs::remove(src);
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(has(o.err, "the kernel 'wild' failed while running")) << describe(o);
  EXPECT_TRUE(has(o.err, "sticky")) << describe(o);
  EXPECT_TRUE(has(o.err, "restart")) << describe(o);
}

TEST(LabCourseCliDevice, PoolAndTiming) {
  GPULAB_REQUIRE_GPU();
  const fs::path poolJson = tempPath(".json");
  const Outcome pool = runCli({"lab", "pool", "--allocations", "300", "--max-bytes", "4M", "--live", "8", "--reps", "2",
                               "--json", poolJson.string()});
  ASSERT_EQ(pool.exitCode, 0) << describe(pool);
  for (const char* piece : {"cudaMalloc", "cudaMallocAsync", "after cudaMemPoolTrimTo", "us_per_pair"})
    EXPECT_TRUE(has(pool.out, piece)) << piece << "\n" << describe(pool);
  const nlohmann::json p = nlohmann::json::parse(slurp(poolJson));
  fs::remove(poolJson);
  EXPECT_EQ(p["sides"].size(), 2u);
  EXPECT_EQ(p["after_run"]["used_bytes"], 0);

  const fs::path timingJson = tempPath(".json");
  const Outcome timing = runCli({"lab", "timing", "--work", "10,20000", "--reps", "5", "--json", timingJson.string()});
  ASSERT_EQ(timing.exitCode, 0) << describe(timing);
  EXPECT_TRUE(has(timing.out, "it timed the launch, not the kernel")) << describe(timing);
  EXPECT_TRUE(has(timing.out, "cold start (a fresh process")) << describe(timing);
  const nlohmann::json t = nlohmann::json::parse(slurp(timingJson));
  fs::remove(timingJson);
  EXPECT_EQ(t["cold_start"]["measured"], true);
  EXPECT_EQ(t["cold_start"]["fresh_process"], true);
  EXPECT_EQ(t["records"].size(), 9u);  // 2 work sizes x 3 methods + context, first launch, later launches
}

}  // namespace
