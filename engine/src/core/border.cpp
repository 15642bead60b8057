#include "gpulab/core/border.hpp"

#include <cstdio>

namespace gpulab {

std::string describe(const Border& border) {
  std::string text(toString(border.mode));
  if (border.mode == BorderMode::Constant) {
    char value[32];
    std::snprintf(value, sizeof value, "(%g)", border.value);
    text += value;
  }
  return text;
}

}  // namespace gpulab
