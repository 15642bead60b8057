// gpulab-cli's subcommands. Each lives in its own cmd_*.cpp and registers itself on the app;
// main.cpp maps outcomes to exit codes: 0 success, 2 usage error, 1 any other failure.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>

namespace gpulab::cli {

/// A usage mistake found after parsing (a bad combination of options, a value out of range):
/// exit code 2, like the parser's own errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// --gpu N and --cpu-threads 1|all|N on the app (call before registering the subcommands).
void registerGlobalOptions(CLI::App& app);
void registerInfo(CLI::App& app);
void registerMandelbrot(CLI::App& app);
void registerLab(CLI::App& app);
void registerFft(CLI::App& app);
void registerFilter(CLI::App& app);
void registerBench(CLI::App& app);
void registerBatch(CLI::App& app);
void registerSoak(CLI::App& app);

}  // namespace gpulab::cli
