#include "op_options.hpp"

#include <set>

#include "gpulab/filters/kernel_file.hpp"

namespace gpulab::cli {

namespace {

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

/// "--op box" or "--op box|sobel": the operations that take a parameter, for error messages.
std::string opsTaking(const std::string& param) {
  std::string ops;
  for (const OperationInfo& info : imageOperations())
    if (info.param(param) != nullptr) ops += (ops.empty() ? "" : "|") + info.name;
  return ops;
}

}  // namespace

void OperationOptions::addTo(CLI::App& cmd) {
  std::set<std::string> seen;
  for (const OperationInfo& info : imageOperations())
    for (const ParamInfo& p : info.params) {
      if (!seen.insert(p.name).second) continue;
      const std::string help = "(" + opsTaking(p.name) + ") " + p.help;
      if (p.kind == ParamInfo::Kind::Flag)
        options_[p.name] = cmd.add_flag("--" + p.name, flags_[p.name], help);
      else
        options_[p.name] = cmd.add_option("--" + p.name, text_[p.name], help);
    }
}

ParamValues OperationOptions::collect(const OperationInfo& info) const {
  for (const auto& [name, option] : options_)
    if (given(option) && info.param(name) == nullptr)
      throw UsageError("--" + name + " applies to --op " + opsTaking(name) + " only");
  ParamValues values;
  for (const ParamInfo& p : info.params) {
    const CLI::Option* option = options_.at(p.name);
    if (!given(option)) {
      if (p.defaultValue.empty()) throw UsageError("--op " + info.name + " needs --" + p.name + " (" + p.help + ")");
      continue;
    }
    if (p.kind == ParamInfo::Kind::Flag)
      values[p.name] = flags_.at(p.name) ? "true" : "false";
    else if (p.kind == ParamInfo::Kind::Kernel)
      values[p.name] = formatKernelText(loadKernelFile(text_.at(p.name)));  // a bad file: exit 1
    else
      values[p.name] = text_.at(p.name);
  }
  for (const ParamInfo& p : info.params) {
    if (p.onlyWith.empty() || !values.contains(p.name)) continue;
    const auto [other, wanted] = p.condition();
    if (info.withDefaults(values)[other] != wanted)
      throw UsageError("--" + p.name + " applies to --" + other + " " + wanted + " only");
  }
  return values;
}

}  // namespace gpulab::cli
