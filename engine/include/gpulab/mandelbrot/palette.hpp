// Colouring the raw plane of a Mandelbrot render: cyclic gradients and how iterations map onto them.
// The raw plane holds smooth iteration counts (or -1 inside), so colouring is a separate pass: the
// same frame recoloured costs no iteration.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/image.hpp"

namespace gpulab {

struct Rgba8 {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  friend bool operator==(const Rgba8&, const Rgba8&) = default;
};

struct ColourStop {
  double position = 0;  ///< in [0, 1)
  Rgba8 colour;
  friend bool operator==(const ColourStop&, const ColourStop&) = default;
};

/// A cyclic gradient: colours interpolate linearly between stops and wrap from the last stop back to
/// the first at position 1.
class Palette {
 public:
  static constexpr int kTableSize = 1024;

  /// The built-in palettes: "classic" (Ultra Fractal's blue, white and gold), "fire", "ice",
  /// "grayscale", "rainbow". Throws std::invalid_argument naming them for any other name.
  static Palette named(std::string_view name);
  /// 1 or more stops with positions strictly increasing in [0, 1); throws std::invalid_argument.
  static Palette gradient(std::vector<ColourStop> stops, std::string name = "custom");
  /// "0:#000764,0.16:#206bcb,0.42:#edffff" (position:#rrggbb, comma separated), as gradientText().
  static Palette parseGradient(std::string_view text);

  const std::string& name() const noexcept { return name_; }
  const std::vector<ColourStop>& stops() const noexcept { return stops_; }
  std::string gradientText() const;
  /// The gradient sampled at kTableSize evenly spaced positions (entry k at k / kTableSize).
  std::array<Rgba8, kTableSize> table() const;
  Rgba8 at(double position) const;
  friend bool operator==(const Palette&, const Palette&) = default;

 private:
  std::string name_;
  std::vector<ColourStop> stops_;
};

/// "classic", "fire", "ice", "grayscale", "rainbow".
std::vector<std::string> paletteNames();
/// A built-in name, or a gradient when the text contains ':' (see Palette::parseGradient).
Palette parsePalette(std::string_view nameOrGradient);

struct Colouring {
  Palette palette = Palette::named("classic");
  double offset = 0.0;   ///< palette shift in cycles; the position is offset + density * nu / 32
  double density = 1.0;  ///< palette cycles per 32 iterations; > 0
  Rgba8 interior{0, 0, 0, 255};
  friend bool operator==(const Colouring&, const Colouring&) = default;
};

/// "#rrggbb" (alpha left out), and back; std::nullopt for anything else.
std::string hexColour(Rgba8 colour);
std::optional<Rgba8> parseHexColour(std::string_view text);

/// Throws std::invalid_argument for a density that is not positive and finite or an offset not finite.
void validate(const Colouring& colouring);

/// CPU colouring of a raw plane (1-channel f32): RGBA u8 of raw's size divided by `supersample`.
/// The same formula as the GPU pass; results agree within 1 per channel.
Image colourRaw(const Image& raw, const Colouring& colouring, int supersample = 1);

}  // namespace gpulab
