#include "gpulab/core/relaunch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

extern char** environ;

namespace gpulab {

namespace {

/// "3" -> 3; anything else (empty, negative, text) -> 0.
int parseCount(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return 0;
  return value;
}

std::string getEnvironment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

/// Every descriptor above stderr close-on-exec: execve then closes them all, and a failed execve
/// leaves the process with its files (the window system's, the log's) still open.
void markDescriptorsCloseOnExec() {
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#elif defined(SYS_close_range)
  constexpr unsigned kCloseRangeCloexec = 1U << 2;  // linux/close_range.h
  if (::syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) == 0) return;
#endif
  // Older kernels: each open descriptor, as /proc/self/fd lists them.
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {  // no /proc: every possible number
    const long max = ::sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 ? max : 4096); ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    return;
  }
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    const int fd = parseCount(entry->d_name);
    if (fd >= 3 && fd != own) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  ::closedir(dir);
}

/// What adoptFaultRestartState took out of the environment (written once, before any thread).
struct Adopted {
  bool done = false;
  std::string restarts;
  std::string reason;
};

Adopted& adopted() {
  static Adopted state;
  return state;
}

std::string restartsText() { return adopted().done ? adopted().restarts : getEnvironment(kFaultRestartsVariable); }

}  // namespace

void adoptFaultRestartState() {
  Adopted& state = adopted();
  if (state.done) return;
  state.restarts = getEnvironment(kFaultRestartsVariable);
  state.reason = getEnvironment(kFaultReasonVariable);
  state.done = true;
  ::unsetenv(kFaultRestartsVariable);
  ::unsetenv(kFaultReasonVariable);
}

int faultRestarts() { return parseCount(restartsText()); }

bool mayRestartAfterFault() { return faultRestarts() < kMaxFaultRestarts; }

std::string faultRestartReason() {
  if (faultRestarts() == 0) return {};
  return adopted().done ? adopted().reason : getEnvironment(kFaultReasonVariable);
}

std::string describeRestart(int restart) {
  return "restart " + std::to_string(restart) + " of " + std::to_string(kMaxFaultRestarts);
}

std::vector<std::string> currentArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all =
      in ? std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) : std::string();
  if (all.empty()) throw std::runtime_error("cannot read this program's command line from /proc/self/cmdline");
  std::vector<std::string> arguments;
  std::size_t start = 0;
  while (start < all.size()) {
    const std::size_t end = all.find('\0', start);
    arguments.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return arguments;
}

std::vector<std::string> currentEnvironment() {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) environment.emplace_back(*entry);
  if (const Adopted& state = adopted(); state.done && !state.restarts.empty()) {
    setEnvironmentValue(environment, kFaultRestartsVariable, state.restarts);
    setEnvironmentValue(environment, kFaultReasonVariable, state.reason);
  }
  return environment;
}

void setEnvironmentValue(std::vector<std::string>& environment, std::string_view name, std::string_view value) {
  std::string entry(name);
  entry += '=';
  const std::size_t prefix = entry.size();
  entry += value;
  bool set = false;
  for (auto it = environment.begin(); it != environment.end();) {
    if (it->compare(0, prefix, entry, 0, prefix) != 0) {
      ++it;
    } else if (!set) {
      *it++ = entry;
      set = true;
    } else {
      it = environment.erase(it);  // a repeated name: one value only
    }
  }
  if (!set) environment.push_back(std::move(entry));
}

std::string environmentValue(const std::vector<std::string>& environment, std::string_view name) {
  for (const std::string& entry : environment)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  return {};
}

void setArgumentValue(std::vector<std::string>& arguments, std::string_view name, std::string_view value) {
  const std::string joined = std::string(name) + "=";
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    if (arguments[i] == name && i + 1 < arguments.size()) {
      arguments[i + 1] = value;
      return;
    }
    if (arguments[i].compare(0, joined.size(), joined) == 0) {
      arguments[i] = joined + std::string(value);
      return;
    }
  }
  arguments.emplace_back(name);
  arguments.emplace_back(value);
}

RelaunchPlan planFaultRestart(std::vector<std::string> arguments, std::vector<std::string> environment,
                              const std::string& faultSentence) {
  if (arguments.empty()) throw std::runtime_error("cannot restart: the command line is empty");
  const int restarts = parseCount(environmentValue(environment, kFaultRestartsVariable));
  if (restarts >= kMaxFaultRestarts)
    throw std::runtime_error("it restarted " + std::to_string(restarts) +
                             " times after GPU faults already, so it does not restart again");
  RelaunchPlan plan;
  plan.arguments = std::move(arguments);
  plan.environment = std::move(environment);
  setEnvironmentValue(plan.environment, kFaultRestartsVariable, std::to_string(restarts + 1));
  setEnvironmentValue(plan.environment, kFaultReasonVariable, faultSentence);
  if (environmentValue(plan.environment, kRelaunchModeVariable) == "child") plan.mode = RelaunchMode::ChildProcess;
  return plan;
}

std::string relaunch(const RelaunchPlan& plan) {
  if (plan.arguments.empty()) return "gpulab could not restart itself: the command line is empty";
  std::vector<char*> argv, envp;  // made before a fork: the child only calls execve
  for (const std::string& a : plan.arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : plan.environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::fflush(nullptr);  // what this image printed (the fault's sentence) comes before the new one's
  markDescriptorsCloseOnExec();
  const std::string failed = "gpulab could not restart itself: ";
  if (plan.mode == RelaunchMode::ReplaceProcess) {
    ::execve(plan.program.c_str(), argv.data(), envp.data());
    return failed + "execve " + plan.program + ": " + std::strerror(errno);
  }
  // A child: it reports a failed execve through a close-on-exec pipe (nothing comes when it worked).
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return failed + "pipe: " + std::strerror(errno);
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(report[0]);
    ::close(report[1]);
    return failed + "fork: " + std::strerror(error);
  }
  if (child == 0) {
    ::execve(plan.program.c_str(), argv.data(), envp.data());
    const int error = errno;
    (void)!::write(report[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(report[1]);
  int error = 0;
  ssize_t got = 0;
  while ((got = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof error)) return failed + "execve " + plan.program + ": " + std::strerror(error);
  // The child's outcome is the program's: leave at once (the faulted CUDA context goes with the process;
  // no destructor or exit handler waits on it).
  std::fflush(nullptr);
  std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

}  // namespace gpulab
