#include "gpulab/border.hpp"

#include <array>
#include <utility>

namespace gpulab {

namespace {
constexpr std::array<std::pair<BorderMode, std::string_view>, 5> kNames{{
    {BorderMode::Reflect101, "reflect101"},
    {BorderMode::Reflect, "reflect"},
    {BorderMode::Replicate, "replicate"},
    {BorderMode::Wrap, "wrap"},
    {BorderMode::Constant, "constant"},
}};
}  // namespace

std::string_view toString(BorderMode mode) noexcept {
  for (const auto& [m, name] : kNames)
    if (m == mode) return name;
  return "?";
}

std::optional<BorderMode> parseBorderMode(std::string_view name) noexcept {
  for (const auto& [m, n] : kNames)
    if (n == name) return m;
  return std::nullopt;
}

std::string borderModeNames() {
  std::string names;
  for (const auto& [m, name] : kNames) {
    if (!names.empty()) names += '|';
    names += name;
  }
  return names;
}

}  // namespace gpulab
