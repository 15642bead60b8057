// What the subcommands share: choosing the device, turning the engine's argument errors into usage
// errors, and printing a Measurement the same way everywhere.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab::cli {

/// --device gpu|cpu|"" (not given: the GPU when there is one). "gpu" without a device throws
/// std::runtime_error (exit 1) naming why; anything else is a UsageError.
bool useGpu(const std::string& device);

/// A GPU context on device 0 when `gpu`, else none.
std::unique_ptr<GpuContext> gpuContextIf(bool gpu);

/// Runs `f`, turning the engine's std::invalid_argument into a UsageError (exit code 2).
template <class F>
auto asUsage(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

/// ".npy" for "out/Result.NPY".
std::string lowerExtension(const std::string& path);

/// "0.0345", "1.23", "123": milliseconds for tables.
std::string formatMs(double ms);

/// The timing line of one side:
///   gpu (NVIDIA H200): upload 1.234 ms, compute 0.045 ms, download 1.100 ms (median of 10)
///   cpu (OpenCV, 16 threads): 12.3 ms (median of 3)
void printTimings(const Measurement& m);

/// "method: fft", "method: auto -> direct (cost model: ...; ready in 85.2 ms)" for an operation with
/// a method other than direct; nothing otherwise. The note is the side's methodNote.
void printMethodLine(const Measurement& m);

}  // namespace gpulab::cli
