// Options every subcommand takes, before or after its name: --gpu N (the device the engine computes
// on), --cpu-threads 1|all|N (the CPU baselines' threads), --max-image-side / --max-image-pixels
// (the largest image a file may hold; over GPULAB_MAX_IMAGE_SIDE / GPULAB_MAX_IMAGE_PIXELS) and
// --gpu-memory-limit BYTES (what the engine may use on the GPU; GPULAB_GPU_MEMORY_LIMIT when not given:
// images beyond it run in tiles). Applied once parsing is complete, before any subcommand runs.
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/tiling/tiled_runner.hpp"

namespace gpulab::cli {

namespace {
struct GlobalOptions {
  int gpu = -1;  // not given
  std::string cpuThreads;
  std::string maxImageSide;
  std::string maxImagePixels;
  std::string gpuMemoryLimit;
};

/// One image limit: the option's value when given, else the environment variable's, else none.
/// A malformed value is a usage error naming the option or the variable.
std::optional<std::int64_t> imageLimitFrom(const std::string& option, const char* optionName, const char* variable,
                                           std::int64_t maximum) {
  try {
    if (!option.empty()) return parseImageLimit(option, maximum, optionName);
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0')
      return parseImageLimit(value, maximum, std::string("the environment variable ") + variable);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return std::nullopt;
}

void applyImageLimits(const GlobalOptions& options) {
  ImageLimits limits;
  if (auto side = imageLimitFrom(options.maxImageSide, "--max-image-side", "GPULAB_MAX_IMAGE_SIDE", kMaxImageDimension))
    limits.maxSide = static_cast<int>(*side);
  if (auto pixels =
          imageLimitFrom(options.maxImagePixels, "--max-image-pixels", "GPULAB_MAX_IMAGE_PIXELS", kMaxImagePixels))
    limits.maxPixels = *pixels;
  setImageLimits(limits);
}
}  // namespace

void registerGlobalOptions(CLI::App& app) {
  auto options = std::make_shared<GlobalOptions>();
  app.fallthrough();  // subcommands pass these on to here (set before they are registered)
  app.add_option("--gpu", options->gpu,
                 "Index of the GPU to compute on (default 0; 'gpulab-cli info' lists them). Every GPU command "
                 "and record uses it");
  app.add_option("--cpu-threads", options->cpuThreads,
                 "Threads of the CPU baselines: 1, all (default) or a count; applied to OpenCV, OpenBLAS and the "
                 "row scheduler, and named in every record")
      ->check([](const std::string& text) {
        try {
          parseCpuThreads(text);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      });
  app.add_option("--max-image-side", options->maxImageSide,
                 "Largest image a file may hold, in pixels a side (1 to 32768, the default); overrides "
                 "GPULAB_MAX_IMAGE_SIDE");
  app.add_option("--max-image-pixels", options->maxImagePixels,
                 "Largest image a file may hold, in pixels in all (1 to 268435456 = 256 megapixels, the default); "
                 "overrides GPULAB_MAX_IMAGE_PIXELS");
  app.add_option("--gpu-memory-limit", options->gpuMemoryLimit,
                 "GPU memory the engine may use, in bytes or with K/M/G (512M, 1.5GiB; 0 = the free memory; "
                 "default: $GPULAB_GPU_MEMORY_LIMIT). Box, Sobel and convolution run larger images in tiles")
      ->check([](const std::string& text) {
        try {
          parseByteSize(text);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      });
  app.parse_complete_callback([options] {
    applyImageLimits(*options);
    try {
      applyGpuMemoryLimitFromEnvironment();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (!options->gpuMemoryLimit.empty()) setGpuMemoryLimit(parseByteSize(options->gpuMemoryLimit));
    if (!options->cpuThreads.empty()) setCpuThreads(parseCpuThreads(options->cpuThreads));
    if (options->gpu >= 0 || options->gpu < -1) {
      try {
        selectDevice(options->gpu);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--gpu ") + std::to_string(options->gpu) + ": " + e.what());
      }
    }
  });
}

}  // namespace gpulab::cli
