// The process-wide image size limits (ImageLimits): the defaults are gpulab's hard maximum, the
// environment variables GPULAB_MAX_IMAGE_SIDE and GPULAB_MAX_IMAGE_PIXELS set the starting values,
// setImageLimits overrides them; checkShape (files.cpp) applies them to every header before a decoder
// allocates, and names the limit hit and how to raise it.

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "internal/image_files.hpp"

namespace gpulab {

namespace {

constexpr const char* kSideVariable = "GPULAB_MAX_IMAGE_SIDE";
constexpr const char* kPixelsVariable = "GPULAB_MAX_IMAGE_PIXELS";

// The limits in force; `resolved` once the environment has been read or setImageLimits has run.
std::atomic<int> gMaxSide{kMaxImageDimension};
std::atomic<std::int64_t> gMaxPixels{kMaxImagePixels};
std::atomic<bool> gResolved{false};
std::mutex gMutex;

void checkRange(std::int64_t value, std::int64_t maximum, const std::string& what) {
  if (value < 1 || value > maximum)
    throw std::invalid_argument(what + " " + std::to_string(value) + " is outside 1 to " + std::to_string(maximum) +
                                " (gpulab's largest)");
}

}  // namespace

std::int64_t parseImageLimit(const std::string& text, std::int64_t maximum, const std::string& what) {
  const auto wrong = [&] {
    return std::invalid_argument(what + " '" + text.substr(0, 40) + "' must be a whole number from 1 to " +
                                 std::to_string(maximum));
  };
  if (text.empty() || text.size() > 18) throw wrong();
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') throw wrong();
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > maximum) throw wrong();
  return value;
}

ImageLimits imageLimitsFromEnvironment() {
  ImageLimits limits;
  if (const char* side = std::getenv(kSideVariable); side != nullptr && *side != '\0')
    limits.maxSide = static_cast<int>(
        parseImageLimit(side, kMaxImageDimension, std::string("the environment variable ") + kSideVariable));
  if (const char* pixels = std::getenv(kPixelsVariable); pixels != nullptr && *pixels != '\0')
    limits.maxPixels =
        parseImageLimit(pixels, kMaxImagePixels, std::string("the environment variable ") + kPixelsVariable);
  return limits;
}

ImageLimits imageLimits() {
  if (!gResolved.load(std::memory_order_acquire)) {
    const std::lock_guard lock(gMutex);
    if (!gResolved.load(std::memory_order_relaxed)) {
      const ImageLimits fromEnvironment =
          imageLimitsFromEnvironment();  // a malformed variable throws: tried again next time
      gMaxSide.store(fromEnvironment.maxSide, std::memory_order_relaxed);
      gMaxPixels.store(fromEnvironment.maxPixels, std::memory_order_relaxed);
      gResolved.store(true, std::memory_order_release);
    }
  }
  return {gMaxSide.load(std::memory_order_relaxed), gMaxPixels.load(std::memory_order_relaxed)};
}

void setImageLimits(const ImageLimits& limits) {
  checkRange(limits.maxSide, kMaxImageDimension, "the largest image side");
  checkRange(limits.maxPixels, kMaxImagePixels, "the largest image pixel count");
  const std::lock_guard lock(gMutex);
  gMaxSide.store(limits.maxSide, std::memory_order_relaxed);
  gMaxPixels.store(limits.maxPixels, std::memory_order_relaxed);
  gResolved.store(true, std::memory_order_release);
}

}  // namespace gpulab
