#include "gpulab/core/version.hpp"

namespace gpulab {

std::string_view gpulabVersion() noexcept { return GPULAB_VERSION; }

}  // namespace gpulab
