// The GPU memory limit and the tile planner: pure arithmetic, no GPU (tests/tiling/test_tile_plan.cpp).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "gpulab/tiling/tiled_runner.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// The limit

namespace {
std::atomic<std::size_t> gLimit{0};
}  // namespace

void setGpuMemoryLimit(std::size_t bytes) noexcept { gLimit.store(bytes, std::memory_order_relaxed); }
std::size_t gpuMemoryLimit() noexcept { return gLimit.load(std::memory_order_relaxed); }

std::size_t parseByteSize(std::string_view text) {
  const std::string shown(text);
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + shown + "' is not a memory size: " + why +
                                 " (use bytes or a number with K, M, G or T, e.g. 512M, 1.5GiB; 0 = no limit)");
  };
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  text = text.substr(begin, end - begin);
  if (text.empty()) throw bad("it is empty");
  if (text.front() == '-') throw bad("it is negative");
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 || text[digits] == '.'))
    ++digits;
  if (digits == 0) throw bad("it does not start with a number");
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || ptr != text.data() + digits || !std::isfinite(value)) throw bad("the number is malformed");
  std::string suffix;
  for (char c : text.substr(digits))
    if (!std::isspace(static_cast<unsigned char>(c)))
      suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 1;
  if (!suffix.empty() && suffix != "b") {
    const char unit = suffix.front();
    const std::string rest = suffix.substr(1);
    if (rest != "" && rest != "b" && rest != "ib") throw bad("the unit '" + suffix + "' is unknown");
    switch (unit) {
      case 'k':
        scale = 1024.0;
        break;
      case 'm':
        scale = 1024.0 * 1024;
        break;
      case 'g':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 't':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        throw bad("the unit '" + suffix + "' is unknown");
    }
  }
  const double bytes = std::floor(value * scale);
  if (bytes > std::ldexp(1.0, 60)) throw bad("it is larger than any GPU");
  if (scale == 1 && value != std::floor(value)) throw bad("a number of bytes must be whole");
  return static_cast<std::size_t>(bytes);
}

std::string formatByteSize(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  // Whole values print without decimals ("512 MiB"), others with one ("1.5 GiB").
  if (value == std::floor(value))
    std::snprintf(text, sizeof text, "%.0f %s", value, units[unit]);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

bool applyGpuMemoryLimitFromEnvironment() {
  const char* value = std::getenv(kGpuMemoryLimitVariable);
  if (value == nullptr || *value == '\0') return false;
  try {
    setGpuMemoryLimit(parseByteSize(value));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(kGpuMemoryLimitVariable) + ": " + e.what());
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Planning

namespace {

int ceilDiv(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

/// The window side a tile side reads: grown by the halo on both sides, clipped to the image unless wrap.
int windowSide(int tile, int halo, int image, bool wrap) {
  const long long side = static_cast<long long>(tile) + 2LL * halo;
  return static_cast<int>(wrap ? side : std::min<long long>(side, image));
}

}  // namespace

PixelRect TilePlan::tile(int i) const {
  if (i < 0 || i >= count())
    throw std::out_of_range("tile " + std::to_string(i) + " of " + std::to_string(count()) + " does not exist");
  const int cx = i % columns, cy = i / columns;
  const int x = cx * tileWidth, y = cy * tileHeight;
  return {x, y, std::min(tileWidth, imageWidth - x), std::min(tileHeight, imageHeight - y)};
}

PixelRect TilePlan::window(int i) const {
  const PixelRect t = tile(i);
  if (wrap) return {t.x - halo, t.y - halo, t.width + 2 * halo, t.height + 2 * halo};
  const int x0 = std::max(0, t.x - halo), y0 = std::max(0, t.y - halo);
  const int x1 = static_cast<int>(std::min<long long>(imageWidth, static_cast<long long>(t.x) + t.width + halo));
  const int y1 = static_cast<int>(std::min<long long>(imageHeight, static_cast<long long>(t.y) + t.height + halo));
  return {x0, y0, x1 - x0, y1 - y0};
}

std::string TilePlan::describe() const {
  if (!tiled())
    return "1 tile (the whole " + std::to_string(imageWidth) + "x" + std::to_string(imageHeight) + " image)";
  return std::to_string(count()) + " tiles of " + std::to_string(tileWidth) + "x" + std::to_string(tileHeight) +
         " + halo " + std::to_string(halo) + (wrap ? " (wrapped)" : "");
}

TilePlan planTiles(int width, int height, int halo, bool wrap, std::size_t budget, const WindowBytes& bytesFor) {
  if (width < 1 || height < 1)
    throw std::invalid_argument("cannot tile a " + std::to_string(width) + "x" + std::to_string(height) +
                                " image: it is empty");
  if (halo < 0) throw std::invalid_argument("a tile's halo cannot be negative (" + std::to_string(halo) + ")");
  TilePlan plan;
  plan.imageWidth = width;
  plan.imageHeight = height;
  plan.halo = halo;
  plan.wrap = wrap;
  plan.budget = budget;
  plan.wholeBytes = bytesFor(windowSide(width, 0, width, false), windowSide(height, 0, height, false));
  if (plan.wholeBytes <= budget && !wrap) {
    plan.tileWidth = width;
    plan.tileHeight = height;
    plan.windowBytes = plan.wholeBytes;
    return plan;
  }
  auto fits = [&](int tw, int th) {
    return bytesFor(windowSide(tw, halo, width, wrap), windowSide(th, halo, height, wrap)) <= budget;
  };
  // A wrapping border in one piece still needs no halo: the operation wraps by itself.
  if (wrap && plan.wholeBytes <= budget) {
    plan.tileWidth = width;
    plan.tileHeight = height;
    plan.windowBytes = plan.wholeBytes;
    plan.wrap = false;
    return plan;
  }
  if (!fits(1, 1))
    throw std::runtime_error(
        "the GPU memory budget of " + formatByteSize(budget) + " is too small even for a 1x1 tile with its halo of " +
        std::to_string(halo) + " pixels (that needs " +
        formatByteSize(bytesFor(windowSide(1, halo, width, wrap), windowSide(1, halo, height, wrap))) +
        "): raise the limit (--gpu-memory-limit)");
  // For each count of columns, the tallest tile that fits (binary search: the bytes grow with the
  // side); keep the fewest tiles, and among those the fewest columns (the widest rows).
  long long bestCount = -1;
  int bestColumns = 0, bestRows = 0, bestWidth = 0, bestHeight = 0;
  for (int columns = 1; columns <= width; ++columns) {
    const int tw = ceilDiv(width, columns);
    if (columns > 1 && ceilDiv(width, columns - 1) == tw) continue;  // the same tile width as before
    if (!fits(tw, 1)) continue;
    int lo = 1, hi = height;  // fits(tw, lo) holds
    while (lo < hi) {
      const int mid = lo + (hi - lo + 1) / 2;
      if (fits(tw, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    const int rows = ceilDiv(height, lo);
    const long long count = static_cast<long long>(columns) * rows;
    if (bestCount < 0 || count < bestCount) {
      bestCount = count;
      bestColumns = columns;
      bestRows = rows;
      bestWidth = tw;
      bestHeight = lo;
    }
    if (rows == 1) break;  // more columns cannot give fewer tiles
  }
  plan.columns = bestColumns;
  plan.rows = bestRows;
  // Even the tiles out: the same count, sides as equal as the division allows (never larger than
  // the searched ones, so they still fit).
  plan.tileWidth = ceilDiv(width, plan.columns);
  plan.tileHeight = ceilDiv(height, plan.rows);
  if (!fits(plan.tileWidth, plan.tileHeight)) {  // bytes that do not grow with the side (FFT sizes)
    plan.tileWidth = bestWidth;
    plan.tileHeight = bestHeight;
  }
  plan.columns = ceilDiv(width, plan.tileWidth);
  plan.rows = ceilDiv(height, plan.tileHeight);
  plan.windowBytes =
      bytesFor(windowSide(plan.tileWidth, halo, width, wrap), windowSide(plan.tileHeight, halo, height, wrap));
  return plan;
}

}  // namespace gpulab
