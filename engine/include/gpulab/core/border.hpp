// Border handling as the engine's users see it: a mode and, for Constant, the value.
#pragma once

#include <string>
#include <string_view>

#include "gpulab/core/enum_names.hpp"

namespace gpulab {

/// How samples outside the image are made up, for every neighbourhood operation, at any distance:
///   reflect101  dcb|abcd|cba   OpenCV's BORDER_REFLECT_101 (default)
///   reflect     cba|abcd|dcb   OpenCV's BORDER_REFLECT, SciPy's 'symm'
///   replicate   aaa|abcd|ddd   OpenCV's BORDER_REPLICATE
///   wrap        bcd|abcd|abc   OpenCV's BORDER_WRAP, SciPy's 'wrap'
///   constant    vvv|abcd|vvv   OpenCV's BORDER_CONSTANT, SciPy's 'fill' with fillvalue v
enum class BorderMode : int { Reflect101 = 0, Reflect = 1, Replicate = 2, Wrap = 3, Constant = 4 };

struct Border {
  BorderMode mode = BorderMode::Reflect101;
  double value = 0.0;  ///< used by BorderMode::Constant only
};

constexpr EnumText enumText(BorderMode) { return {"border mode", "reflect101|reflect|replicate|wrap|constant"}; }

/// "reflect101", "constant(0.5)": the mode, and the value of a constant border.
std::string describe(const Border& border);

}  // namespace gpulab
