// Palettes and colouring parameters (the colouring passes themselves: renderer.cpp, cpu.cpp).
#include "gpulab/mandelbrot/palette.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "internal/number_text.hpp"

namespace gpulab {

std::string hexColour(Rgba8 c) {
  char text[16];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
  return text;
}

std::optional<Rgba8> parseHexColour(std::string_view text) {
  if (text.size() != 7 || text[0] != '#') return std::nullopt;
  Rgba8 c;
  std::uint8_t* channels[] = {&c.r, &c.g, &c.b};
  for (int k = 0; k < 3; ++k) {
    unsigned value = 0;
    const char* first = text.data() + 1 + 2 * k;
    const auto [end, error] = std::from_chars(first, first + 2, value, 16);
    if (error != std::errc() || end != first + 2) return std::nullopt;
    *channels[k] = static_cast<std::uint8_t>(value);
  }
  return c;
}

namespace {

Palette builtIn(std::string_view name) {
  auto stop = [](double position, int r, int g, int b) {
    return ColourStop{
        position, Rgba8{static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g), static_cast<std::uint8_t>(b), 255}};
  };
  if (name == "classic")  // Ultra Fractal's default gradient
    return Palette::gradient({stop(0.0, 0, 7, 100), stop(0.16, 32, 107, 203), stop(0.42, 237, 255, 255),
                              stop(0.6425, 255, 170, 0), stop(0.8575, 0, 2, 0)},
                             "classic");
  if (name == "fire")
    return Palette::gradient({stop(0.0, 0, 0, 0), stop(0.2, 120, 0, 0), stop(0.45, 230, 60, 0), stop(0.65, 255, 170, 0),
                              stop(0.82, 255, 240, 120), stop(0.92, 255, 255, 255)},
                             "fire");
  if (name == "ice")
    return Palette::gradient({stop(0.0, 0, 5, 30), stop(0.3, 0, 60, 140), stop(0.55, 60, 160, 230),
                              stop(0.75, 190, 235, 255), stop(0.88, 255, 255, 255)},
                             "ice");
  if (name == "grayscale") return Palette::gradient({stop(0.0, 0, 0, 0), stop(0.5, 255, 255, 255)}, "grayscale");
  if (name == "rainbow")
    return Palette::gradient({stop(0.0, 255, 0, 0), stop(1.0 / 6, 255, 255, 0), stop(2.0 / 6, 0, 255, 0),
                              stop(3.0 / 6, 0, 255, 255), stop(4.0 / 6, 0, 0, 255), stop(5.0 / 6, 255, 0, 255)},
                             "rainbow");
  std::string names;
  for (const std::string& n : paletteNames()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown palette '" + std::string(name) + "': use " + names +
                              ", or a gradient such as 0:#000000,0.5:#ffffff");
}

}  // namespace

std::vector<std::string> paletteNames() { return {"classic", "fire", "ice", "grayscale", "rainbow"}; }

Palette Palette::named(std::string_view name) { return builtIn(name); }

Palette Palette::gradient(std::vector<ColourStop> stops, std::string name) {
  if (stops.empty()) throw std::invalid_argument("a gradient needs at least one colour stop");
  for (std::size_t k = 0; k < stops.size(); ++k) {
    const double p = stops[k].position;
    if (!std::isfinite(p) || p < 0 || p >= 1)
      throw std::invalid_argument("gradient stop position " + formatNumber(p, "%g") + " is outside [0, 1)");
    if (k > 0 && p <= stops[k - 1].position)
      throw std::invalid_argument(
          "gradient stop positions must increase: " + formatNumber(stops[k - 1].position, "%g") + " is followed by " +
          formatNumber(p, "%g"));
  }
  Palette palette;
  palette.name_ = std::move(name);
  palette.stops_ = std::move(stops);
  return palette;
}

Palette Palette::parseGradient(std::string_view text) {
  std::vector<ColourStop> stops;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const std::size_t colon = item.find(':');
    const auto position = colon == std::string_view::npos ? std::nullopt : parseDouble(item.substr(0, colon));
    const auto colour = colon == std::string_view::npos ? std::nullopt : parseHexColour(item.substr(colon + 1));
    if (!position || !colour)
      throw std::invalid_argument("gradient stop '" + std::string(item) +
                                  "' is not position:#rrggbb (e.g. 0:#000764,0.5:#ffaa00)");
    stops.push_back({*position, *colour});
    start = end + 1;
  }
  return gradient(std::move(stops), "custom");
}

std::string Palette::gradientText() const {
  std::string text;
  for (const ColourStop& s : stops_) {
    if (!text.empty()) text += ',';
    // Every digit a position needs: text with fewer reopens (from a PNG's field, the GUI's line) as
    // another gradient, or as none when two close stops print alike.
    text += formatShortest(s.position) + ":" + hexColour(s.colour);
  }
  return text;
}

Rgba8 Palette::at(double position) const {
  double t = position - std::floor(position);
  if (stops_.size() == 1) return stops_[0].colour;
  // The stop at or before t (wrapping to the last stop when t precedes the first) and the one after.
  std::size_t a = stops_.size() - 1;
  for (std::size_t k = 0; k < stops_.size(); ++k)
    if (stops_[k].position <= t) a = k;
  const std::size_t b = (a + 1) % stops_.size();
  double from = stops_[a].position, to = stops_[b].position;
  if (to <= from) to += 1.0;
  if (t < from) t += 1.0;
  const double f = (t - from) / (to - from);
  auto mix = [f](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(std::lround(x + f * (static_cast<double>(y) - x)));
  };
  const Rgba8 &ca = stops_[a].colour, &cb = stops_[b].colour;
  return {mix(ca.r, cb.r), mix(ca.g, cb.g), mix(ca.b, cb.b), mix(ca.a, cb.a)};
}

std::array<Rgba8, Palette::kTableSize> Palette::table() const {
  std::array<Rgba8, kTableSize> entries;
  for (int k = 0; k < kTableSize; ++k) entries[k] = at(static_cast<double>(k) / kTableSize);
  return entries;
}

Palette parsePalette(std::string_view nameOrGradient) {
  if (nameOrGradient.find(':') != std::string_view::npos) return Palette::parseGradient(nameOrGradient);
  return Palette::named(nameOrGradient);
}

void validate(const Colouring& colouring) {
  if (!std::isfinite(colouring.density) || colouring.density <= 0)
    throw std::invalid_argument("palette density " + formatNumber(colouring.density, "%g") +
                                " is not allowed: it must be positive (cycles per 32 iterations)");
  if (!std::isfinite(colouring.offset)) throw std::invalid_argument("palette offset must be a finite number of cycles");
}

}  // namespace gpulab
