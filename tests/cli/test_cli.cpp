// gpulab-cli as a user runs it: the real binary (GPULAB_CLI_PATH), its exit codes (0 success,
// 2 usage error), one line on stderr for errors, and `info` in text and JSON. Passes with and
// without a GPU: `info` then reports the devices or the "CPU only" status.
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

#include "support/cli_runner.hpp"

using namespace gpulab::test;  // runCli, describe, slurp, ...

namespace {

namespace fs = std::filesystem;

TEST(Cli, InfoReportsDevicesOrCpuOnly) {
  const Outcome o = runCli({"info"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(o.err.empty()) << describe(o);
  EXPECT_NE(o.out.find("CUDA runtime"), std::string::npos) << describe(o);
  const bool hasGpuLine = o.out.find("\nGPU 0: ") != std::string::npos;
  const bool cpuOnly = o.out.find("CPU only") != std::string::npos;
  EXPECT_NE(hasGpuLine, cpuOnly) << "expected either GPU lines or the CPU-only status\n" << describe(o);
}

TEST(Cli, InfoJsonParsesAndAgreesWithItself) {
  const Outcome o = runCli({"info", "--json"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  nlohmann::json info;
  ASSERT_NO_THROW(info = nlohmann::json::parse(o.out)) << describe(o);
  ASSERT_TRUE(info.is_object());
  for (const char* key : {"cuda_available", "devices", "status"}) ASSERT_TRUE(info.contains(key)) << key;
  ASSERT_TRUE(info["cuda_available"].is_boolean());
  ASSERT_TRUE(info["devices"].is_array());
  ASSERT_TRUE(info["status"].is_string());
  if (info["cuda_available"].get<bool>()) {
    EXPECT_FALSE(info["devices"].empty());
    EXPECT_EQ(info["status"], "ok");
    for (const auto& device : info["devices"]) {
      EXPECT_FALSE(device.at("name").get<std::string>().empty());
      EXPECT_GT(device.at("multiprocessors").get<int>(), 0);
      EXPECT_GT(device.at("total_memory_bytes").get<std::uint64_t>(), 0u);
      EXPECT_LE(device.at("free_memory_bytes").get<std::uint64_t>(),
                device.at("total_memory_bytes").get<std::uint64_t>());
    }
  } else {
    EXPECT_TRUE(info["devices"].empty());
    EXPECT_NE(info["status"].get<std::string>().find("CPU only"), std::string::npos) << info["status"];
  }
}

TEST(Cli, NoSubcommandIsAUsageError) {
  const Outcome o = runCli({});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  EXPECT_EQ(o.err.rfind("gpulab-cli: ", 0), 0u) << describe(o);
}

TEST(Cli, UnknownOptionsAndSubcommandsAreUsageErrors) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", "--no-such-option"}, std::vector<std::string>{"--no-such-option"},
        std::vector<std::string>{"no-such-subcommand"}, std::vector<std::string>{"info", "surplus"}}) {
    const Outcome o = runCli(args);
    EXPECT_EQ(o.exitCode, 2) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  }
}

TEST(Cli, HelpAndVersionSucceed) {
  const Outcome help = runCli({"--help"});
  EXPECT_EQ(help.exitCode, 0) << describe(help);
  EXPECT_NE(help.out.find("info"), std::string::npos) << describe(help);
  const Outcome infoHelp = runCli({"info", "--help"});
  EXPECT_EQ(infoHelp.exitCode, 0) << describe(infoHelp);
  EXPECT_NE(infoHelp.out.find("--json"), std::string::npos) << describe(infoHelp);
  const Outcome version = runCli({"--version"});
  EXPECT_EQ(version.exitCode, 0) << describe(version);
  EXPECT_NE(version.out.find("gpulab-cli "), std::string::npos) << describe(version);
}

}  // namespace
