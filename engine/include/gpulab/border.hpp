// Border handling as the engine's users see it: a mode and, for Constant, the value.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpulab/kernels/border.cuh"

namespace gpulab {

using kernels::BorderMode;

struct Border {
  BorderMode mode = BorderMode::Reflect101;
  double value = 0.0;  ///< used by BorderMode::Constant only
};

/// "reflect101", "reflect", "replicate", "wrap", "constant".
std::string_view toString(BorderMode mode) noexcept;
/// Parses the names above; std::nullopt for anything else.
std::optional<BorderMode> parseBorderMode(std::string_view name) noexcept;
/// "reflect101|reflect|replicate|wrap|constant", for help texts and error messages.
std::string borderModeNames();

}  // namespace gpulab
