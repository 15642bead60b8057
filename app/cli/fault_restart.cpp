#include "fault_restart.hpp"

#include <cstdio>
#include <fstream>
#include <set>
#include <stdexcept>
#include <utility>

#include "gpulab/core/relaunch.hpp"

namespace gpulab::cli {

namespace {

std::vector<std::pair<std::string, std::string>>& restartEnvironment() {
  static std::vector<std::pair<std::string, std::string>> entries;
  return entries;
}

}  // namespace

void setRestartEnvironment(std::string name, std::string value) {
  restartEnvironment().emplace_back(std::move(name), std::move(value));
}

int answerGpuFault(const GpuFaultError& fault, std::string_view command) {
  const std::string sentence = describeGpuFault(fault);
  if (!restartsAfterGpuFault(command)) {
    std::fprintf(stderr, "gpulab-cli: %s: the CUDA context is lost, so gpulab-cli stops; run it again\n",
                 sentence.c_str());
    return 1;
  }
  RelaunchPlan plan;
  try {
    plan = planFaultRestart(currentArguments(), currentEnvironment(), sentence);
  } catch (const std::exception& e) {  // the limit reached, or no command line to run again
    std::fprintf(stderr, "gpulab-cli: %s: the CUDA context is lost and gpulab-cli stops: %s\n", sentence.c_str(),
                 e.what());
    return 1;
  }
  for (const auto& [name, value] : restartEnvironment()) setEnvironmentValue(plan.environment, name, value);
  std::fprintf(stderr, "gpulab-cli: %s; gpulab-cli restarts itself to get a new CUDA context (%s)\n", sentence.c_str(),
               describeRestart(faultRestarts() + 1).c_str());
  const std::string failure = relaunch(plan);  // returns only when execve failed
  std::fprintf(stderr, "gpulab-cli: %s, so it stops; run it again\n", failure.c_str());
  return 1;
}

void reportRestart() {
  const int restarts = faultRestarts();
  if (restarts == 0) return;
  const std::string reason = faultRestartReason();
  std::fprintf(stderr, "gpulab-cli: running again after a GPU fault (%s%s)\n", describeRestart(restarts).c_str(),
               reason.empty() ? "" : ("; " + reason).c_str());
}

std::vector<std::filesystem::path> withoutWritten(const std::vector<std::filesystem::path>& inputs,
                                                  const std::vector<std::filesystem::path>& written) {
  const std::set<std::filesystem::path> done(written.begin(), written.end());
  std::vector<std::filesystem::path> rest;
  for (const std::filesystem::path& input : inputs)
    if (done.count(input) == 0) rest.push_back(input);
  return rest;
}

std::vector<std::filesystem::path> readPathList(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::filesystem::path> paths;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) paths.emplace_back(line);
  return paths;
}

bool writePathList(const std::filesystem::path& file, const std::vector<std::filesystem::path>& paths) {
  std::ofstream out(file, std::ios::trunc);
  for (const std::filesystem::path& path : paths) out << path.string() << '\n';
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace gpulab::cli
