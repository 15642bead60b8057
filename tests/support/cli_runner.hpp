// Runs the real gpulab-cli binary for the CLI tests: exit code, stdout and stderr, as a user sees them.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace gpulab::test {

struct Outcome {
  int exitCode = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs gpulab-cli (GPULAB_CLI_PATH) with `args`, stdout and stderr going to files (no pipe can
/// fill up and block), stdin from /dev/null.
inline Outcome runCli(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
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

inline std::string describe(const Outcome& o) {
  return "exit " + std::to_string(o.exitCode) + "\n--- stdout\n" + o.out + "--- stderr\n" + o.err;
}

/// Exactly one non-empty line, newline-terminated.
inline bool isOneLine(const std::string& s) {
  return s.size() > 1 && s.back() == '\n' && std::count(s.begin(), s.end(), '\n') == 1;
}

}  // namespace gpulab::test
