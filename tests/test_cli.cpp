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

/// Runs gpulab-cli with `args`, stdout and stderr going to files (no pipe can fill up and block).
Outcome runCli(const std::vector<std::string>& args) {
  static std::atomic<int> counter{0};
  const fs::path base =
      fs::temp_directory_path() / ("gpulab-test-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  const std::string outPath = base.string() + ".out", errPath = base.string() + ".err";

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

/// Exactly one non-empty line, newline-terminated.
bool isOneLine(const std::string& s) {
  return s.size() > 1 && s.back() == '\n' && std::count(s.begin(), s.end(), '\n') == 1;
}

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
