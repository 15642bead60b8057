// The options an image operation's parameters give a subcommand (--radius, --component, --kernel,
// ...), one per parameter name across every registered operation: `filter` and `batch` share them.
#pragma once

#include <map>
#include <string>

#include "commands.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/filters/registry.hpp"

namespace gpulab::cli {

class OperationOptions {
 public:
  /// Adds --NAME for every parameter of every registered operation to `cmd`.
  void addTo(CLI::App& cmd);
  /// The given values for `info`, checked against what it takes (a parameter of another operation,
  /// a required one missing, a condition not met: UsageError); kernel files read.
  ParamValues collect(const OperationInfo& info) const;

 private:
  std::map<std::string, CLI::Option*> options_;
  std::map<std::string, std::string> text_;
  std::map<std::string, bool> flags_;
};

}  // namespace gpulab::cli
