// The registered image operations, and reading their parameters from text.
#include "gpulab/filters/registry.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gpulab/filters/auto_levels.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/canny.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/gaussian.hpp"
#include "gpulab/filters/median.hpp"
#include "gpulab/filters/morphology.hpp"
#include "gpulab/filters/sobel.hpp"
#include "gpulab/filters/unsharp.hpp"

namespace gpulab {

const std::vector<OperationInfo>& imageOperations() {
  // One line per operation: a new filter adds its own here and appears in every front end.
  static const std::vector<OperationInfo> operations = {
      boxBlurInfo(), sobelInfo(),      convolutionInfo(), gaussianInfo(),   medianInfo(),
      unsharpInfo(), morphologyInfo(), cannyInfo(),       autoLevelsInfo(),
  };
  return operations;
}

const OperationInfo& findOperation(std::string_view name) {
  for (const OperationInfo& info : imageOperations())
    if (info.name == name) return info;
  throw std::invalid_argument("unknown operation '" + std::string(name) + "': use " + operationNames());
}

std::string operationNames() {
  std::string names;
  for (const OperationInfo& info : imageOperations()) names += (names.empty() ? "" : "|") + info.name;
  return names;
}

ParamInfo ParamInfo::integer(std::string name, std::string help, int minimum, int maximum, std::string defaultValue) {
  ParamInfo p = number(std::move(name), std::move(help), minimum, maximum, std::move(defaultValue));
  p.kind = Kind::Integer;
  return p;
}

ParamInfo ParamInfo::number(std::string name, std::string help, double minimum, double maximum,
                            std::string defaultValue) {
  ParamInfo p;
  p.name = std::move(name);
  p.kind = Kind::Number;
  p.help = std::move(help);
  p.defaultValue = std::move(defaultValue);
  p.minimum = minimum;
  p.maximum = maximum;
  return p;
}

ParamInfo ParamInfo::choice(std::string name, std::string help, std::vector<std::string> choices,
                            std::string defaultValue) {
  ParamInfo p;
  p.name = std::move(name);
  p.kind = Kind::Choice;
  p.help = std::move(help);
  p.defaultValue = std::move(defaultValue);
  p.choices = std::move(choices);
  return p;
}

ParamInfo ParamInfo::flag(std::string name, std::string help, bool defaultValue) {
  ParamInfo p;
  p.name = std::move(name);
  p.kind = Kind::Flag;
  p.help = std::move(help);
  p.defaultValue = defaultValue ? "true" : "false";
  return p;
}

ParamInfo ParamInfo::kernel(std::string name, std::string help) {
  ParamInfo p;
  p.name = std::move(name);
  p.kind = Kind::Kernel;
  p.help = std::move(help);
  return p;
}

std::pair<std::string, std::string> ParamInfo::condition() const {
  const std::size_t eq = onlyWith.find('=');
  if (eq == std::string::npos) return {};
  return {onlyWith.substr(0, eq), onlyWith.substr(eq + 1)};
}

const ParamInfo* OperationInfo::param(std::string_view paramName) const noexcept {
  for (const ParamInfo& p : params)
    if (p.name == paramName) return &p;
  return nullptr;
}

ParamValues OperationInfo::withDefaults(ParamValues values) const {
  for (const ParamInfo& p : params)
    if (!p.defaultValue.empty()) values.try_emplace(p.name, p.defaultValue);
  return values;
}

// ---------------------------------------------------------------------------------------------
// Typed reads

namespace {

const std::string& textOf(const ParamValues& values, const ParamInfo& info) {
  if (const auto it = values.find(info.name); it != values.end()) return it->second;
  if (!info.defaultValue.empty()) return info.defaultValue;
  throw std::invalid_argument("the " + info.name + " parameter is required: " + info.help);
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string rangeText(const ParamInfo& info) { return number(info.minimum) + " to " + number(info.maximum); }

}  // namespace

int intParam(const ParamValues& values, const ParamInfo& info) {
  const std::string& text = textOf(values, info);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument(info.name + " '" + text + "' is not a whole number");
  if (static_cast<double>(v) < info.minimum || static_cast<double>(v) > info.maximum)
    throw std::invalid_argument(info.name + " " + text + " is not allowed: use " + rangeText(info));
  return static_cast<int>(v);
}

double numberParam(const ParamValues& values, const ParamInfo& info) {
  const std::string& text = textOf(values, info);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(v))
    throw std::invalid_argument(info.name + " '" + text + "' is not a finite number");
  if (v < info.minimum || v > info.maximum)
    throw std::invalid_argument(info.name + " " + text + " is not allowed: use " + rangeText(info));
  return v;
}

bool flagParam(const ParamValues& values, const ParamInfo& info) {
  const std::string& text = textOf(values, info);
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw std::invalid_argument(info.name + " '" + text + "' is not true or false");
}

std::string choiceParam(const ParamValues& values, const ParamInfo& info) {
  const std::string& text = textOf(values, info);
  for (const std::string& c : info.choices)
    if (c == text) return text;
  std::string choices;
  for (const std::string& c : info.choices) choices += (choices.empty() ? "" : "|") + c;
  throw std::invalid_argument(info.name + " '" + text + "' is unknown: use " + choices);
}

}  // namespace gpulab
