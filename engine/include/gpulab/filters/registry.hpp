// The image operations a front end can offer, each with its parameters described well enough that
// the CLI builds its options and the GUI its controls from them: a new filter registers one
// OperationInfo (engine/src/filters/registry.cpp, one line) and appears in `gpulab-cli filter`, the
// GUI's Filters tab and `gpulab-cli bench` with no front-end change.
//
//   const gpulab::OperationInfo& box = gpulab::findOperation("box");       // throws when unknown
//   auto op = box.make({{"radius", "7"}, {"border", "wrap"}});             // validates; one sentence
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/core/operation.hpp"

namespace gpulab {

struct ParamInfo {
  enum class Kind {
    Integer,  ///< whole number in [minimum, maximum]
    Number,   ///< finite real number in [minimum, maximum]
    Choice,   ///< one of `choices`
    Flag,     ///< "true" or "false"
    Kernel,   ///< a 2-D kernel as text rows (formatKernelText); the CLI reads it from a file
  };
  std::string name;  ///< "radius": the CLI's --radius, the GUI's label, the JSON key
  Kind kind = Kind::Number;
  std::string help;          ///< one line, for --help and tooltips
  std::string defaultValue;  ///< as text; empty: the user must give it
  double minimum = 0;
  double maximum = 0;
  std::vector<std::string> choices;
  std::string onlyWith;  ///< "border=constant": meaningful only when another parameter has that value

  /// onlyWith split: {"border", "constant"}; two empty strings when there is no condition.
  std::pair<std::string, std::string> condition() const;

  /// The usual shapes (the fields above can still be set afterwards).
  static ParamInfo integer(std::string name, std::string help, int minimum, int maximum, std::string defaultValue = {});
  static ParamInfo number(std::string name, std::string help, double minimum, double maximum,
                          std::string defaultValue = {});
  static ParamInfo choice(std::string name, std::string help, std::vector<std::string> choices,
                          std::string defaultValue);
  static ParamInfo flag(std::string name, std::string help, bool defaultValue = false);
  static ParamInfo kernel(std::string name, std::string help);
};

struct OperationInfo {
  std::string name;     ///< "box": the CLI's --op value
  std::string title;    ///< "Box blur": the GUI's label
  std::string summary;  ///< one line
  std::vector<ParamInfo> params;
  /// Builds the operation from parameter text (defaults filled in for absent ones). Throws
  /// std::invalid_argument with one sentence for a missing, malformed or out-of-range value.
  std::function<std::unique_ptr<Operation>(const ParamValues&)> make;

  const ParamInfo* param(std::string_view paramName) const noexcept;
  /// `values` with every absent parameter set to its default (required ones left absent).
  ParamValues withDefaults(ParamValues values) const;
};

/// Every registered operation, in the order front ends list them.
const std::vector<OperationInfo>& imageOperations();
/// The operation named `name`; std::invalid_argument naming the registered ones otherwise.
const OperationInfo& findOperation(std::string_view name);
/// "box|sobel|conv".
std::string operationNames();

// Typed reads of parameter text for OperationInfo::make: each throws std::invalid_argument with one
// sentence naming the parameter ("radius '-3' is not allowed: use 0 to 32767") when the value is
// missing (and has no default), malformed or out of range.
int intParam(const ParamValues& values, const ParamInfo& info);
double numberParam(const ParamValues& values, const ParamInfo& info);
bool flagParam(const ParamValues& values, const ParamInfo& info);
std::string choiceParam(const ParamValues& values, const ParamInfo& info);

}  // namespace gpulab
