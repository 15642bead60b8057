// gpulab-cli soak, as a user runs it: many filter runs in one process with host (and GPU) memory
// watched, the figures printed and a verdict. A short run here (the CPU path, or the GPU when there
// is one); scripts/gpu-check.sh soak runs 1000 on the GPU machine.
#include <gtest/gtest.h>

#include <string>

#include "support/cli_runner.hpp"

namespace gpulab {
namespace {

using test::runCli;

TEST(CliSoak, ShortCpuSoakKeepsMemoryFlatAndReportsTheFigures) {
  const test::Outcome o = runCli({"soak", "--runs", "50", "--device", "cpu", "--size", "96x64"});
  ASSERT_EQ(o.exitCode, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("soak: 50 filter runs over"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("host RSS: start "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("peak "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("verdict: flat"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("GPU memory used"), std::string::npos) << "the CPU soak has no GPU figures: " << o.out;
}

TEST(CliSoak, OneOperationByName) {
  const test::Outcome o = runCli({"soak", "--runs", "6", "--device", "cpu", "--size", "32x24", "--ops", "box"});
  ASSERT_EQ(o.exitCode, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("over 1 operations"), std::string::npos) << o.out;
}

TEST(CliSoak, BadArgumentsAreUsageErrors) {
  for (const auto& args : {std::vector<std::string>{"soak", "--runs", "0"},
                           std::vector<std::string>{"soak", "--size", "4x4", "--device", "cpu"},
                           std::vector<std::string>{"soak", "--ops", "nosuchop", "--device", "cpu"}}) {
    const test::Outcome o = runCli(args);
    EXPECT_EQ(o.exitCode, 2) << args[1] << ": " << o.out << o.err;
    EXPECT_NE(o.err.find("gpulab-cli: "), std::string::npos) << o.err;
  }
}

TEST(CliSoak, ABoundOfZeroCanFail) {
  // The verdict is a real check: a bound of -1 MiB asks the RSS to shrink by a MiB after warm-up,
  // which it does not, so the run fails with exit 1 and says why.
  const test::Outcome o =
      runCli({"soak", "--runs", "12", "--device", "cpu", "--size", "64x48", "--max-host-growth-mib", "-1"});
  EXPECT_EQ(o.exitCode, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("verdict: GROWING"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("memory grew during the soak"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace gpulab
