// Sentences about memory sizes for error messages (engine-private).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <string>

namespace gpulab {

inline std::string formatBytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

/// "<what> needs 6.0 GiB of GPU memory; 2.1 GiB is free".
inline std::string outOfMemoryMessage(const std::string& what, std::size_t bytes) {
  std::size_t free = 0, total = 0;
  const bool known = cudaMemGetInfo(&free, &total) == cudaSuccess;
  cudaGetLastError();
  std::string message = what + " needs " + formatBytes(bytes) + " of GPU memory";
  if (known) message += "; " + formatBytes(free) + " of " + formatBytes(total) + " is free";
  return message;
}

}  // namespace gpulab
