// The gpulab version every record, JSON file and window title carries.
#pragma once

#include <string_view>

namespace gpulab {

/// "0.1.0": the project version of this build.
std::string_view gpulabVersion() noexcept;

}  // namespace gpulab
