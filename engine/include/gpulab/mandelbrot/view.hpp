// A Mandelbrot or Julia view at any depth, and how deep each arithmetic reaches.
//
//   gpulab::MandelbrotView view;                                  // the whole set, 1920x1080
//   view.centerX = gpulab::DecimalNumber::parse("-1.7400623825793399052208965570624873");
//   view.width = gpulab::DeepWidth::parse("1e-500");              // any depth down to 1e-100000
//   gpulab::PrecisionChoice how = gpulab::choosePrecision(view);  // perturbation, floatexp deltas
//
// The centre is kept as decimal text of any length and the width as an extended-range number, so a
// view is the same view however deep it is, in the GUI, the CLI and a PNG's text fields.
// Pixel (i, j) sits at (centerX + (i + 0.5 - W/2) h, centerY - (j + 0.5 - H/2) h), h = width / W: row 0
// is the top.
//
// Precision (choosePrecision): relative spacing rho = h / max(|centerX|, |centerY|, 1). A float with a
// p-bit significand steps by at most 2^(1-p) * s near a coordinate of magnitude s; we want neighbouring
// pixels at least 8 such steps apart (3 bits below the pixel spacing). Escape time in float32 (p = 24)
// covers rho >= 2^-20 (9.5e-7), in float64 (p = 53) rho >= 2^-49 (1.8e-15). Deeper views render by
// perturbation (mandelbrot/deep_renderer.hpp): an MPFR reference orbit and f64 deltas down to a pixel
// spacing of 2^-450, floatexp deltas beyond. Julia sets render by escape time only.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/mandelbrot/deep_number.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"

namespace gpulab {

inline constexpr float kMandelbrotInterior = -1.0f;       ///< raw value of pixels that never escape
inline constexpr int kMaxMandelbrotIterations = 1 << 24;  ///< float32 holds every count up to 2^24 exactly
inline constexpr double kMandelbrotMaxCoordinate = 10.0;  ///< |centre|, |julia c| limit per axis
inline constexpr double kMandelbrotMaxWidth = 100.0;
inline constexpr int kMandelbrotMaxSupersample = 4;

// ---------------------------------------------------------------------------------------------
// Precision

/// What a view asks for (Auto, or one of the others) and what a render uses (F32, F64, Perturbation).
enum class Precision : std::uint8_t { Auto, F32, F64, Perturbation };
constexpr EnumText enumText(Precision) { return {"precision", "auto|f32|f64|perturbation"}; }

/// One rung of the escape-time ladder: escape time in this precision covers views whose relative
/// spacing is at least 2^minLog2RelativeSpacing. Below the last rung, perturbation.
struct PrecisionRung {
  Precision precision;
  double minLog2RelativeSpacing;
};
/// Coarsest (fastest) first: f32 down to 2^-20, f64 down to 2^-49.
std::span<const PrecisionRung> precisionLadder() noexcept;

/// The view asks for an arithmetic that cannot render it (f32 or f64 escape time deeper than f64
/// reaches, a Julia set deeper than escape time reaches).
class PrecisionLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Views

struct MandelbrotView {
  DecimalNumber centerX = DecimalNumber::fromDouble(-0.5);
  DecimalNumber centerY;
  DeepWidth width;  ///< of the image, in the complex plane; 3 (the whole set) by default
  int imageWidth = 1920;
  int imageHeight = 1080;
  int maxIterations = 1000;  ///< 1 .. 2^24; autoIterations(width) for a zoom-dependent default
  Precision precision = Precision::Auto;
  bool julia = false;  ///< true: the Julia set of (juliaX, juliaY); z_0 = the pixel
  double juliaX = 0.0;
  double juliaY = 0.0;
  int supersample = 1;  ///< 1..4: the raw plane is supersample^2 times larger; colouring averages

  int rawWidth() const noexcept { return imageWidth * supersample; }
  int rawHeight() const noexcept { return imageHeight * supersample; }
  /// Distance between neighbouring raw samples in the complex plane, at any depth.
  ExtendedReal spacing() const noexcept;
  /// The centre and width rounded to double, for escape-time arithmetic and display (the width is 0
  /// beyond the double range).
  double x() const { return centerX.toDouble(); }
  double y() const { return centerY.toDouble(); }
  double widthValue() const { return toDouble(width.value()); }
  /// log10(3 / width): 0 for the whole set, 100 at width 3e-100.
  double depth() const noexcept { return std::log10(3.0) - width.log10(); }
  friend bool operator==(const MandelbrotView&, const MandelbrotView&) = default;
};

/// Throws std::invalid_argument with one sentence for a view gpulab cannot render: a centre or Julia
/// constant outside +-10, an image size gpulab does not accept (after supersampling), iterations
/// outside 1..2^24, supersample outside 1..4. (Widths are valid by construction: DeepWidth.)
void validate(const MandelbrotView& view);

/// Iterations that keep detail as the view deepens:
/// round(256 * (1 + log10(max(1, 3 / width)))^1.25), at most 2^24.
/// 256 for the whole set, 1348 at width 0.005, 6611 at width 1e-12, 81,971 at 1e-100.
int autoIterations(const DeepWidth& width);

/// The precision a render of `view` uses.
struct PrecisionChoice {
  Precision used = Precision::F32;                   ///< F32, F64 or Perturbation
  DeepDeltaFormat deltas = DeepDeltaFormat::Double;  ///< Perturbation: f64 or floatexp deltas
  double log2RelativeSpacing = 0;                    ///< log2(h / max(|centerX|, |centerY|, 1))
  bool forced = false;                               ///< the view asked for it (not Auto)
  bool belowLimit = false;                           ///< forced to f32 where f64 is needed: expect blocks
  /// "f32 (auto; relative pixel spacing 2^-18.6, f32 down to 2^-20)",
  /// "perturbation, floatexp deltas (auto; relative pixel spacing 2^-3320.4, f64 down to 2^-49)".
  std::string describe() const;
  /// "f32", "f64", "perturbation f64", "perturbation floatexp": for status lines and PNG fields.
  std::string label() const;
};

/// Applies the ladder. Throws std::invalid_argument for an invalid view and PrecisionLimitError for a
/// view forced to f32 or f64 deeper than f64 escape time reaches, or a Julia set that deep.
PrecisionChoice choosePrecision(const MandelbrotView& view);

/// `view` with its centre moved by (dx, dy) view widths (x right, y up), exactly at any depth.
MandelbrotView movedBy(const MandelbrotView& view, double dx, double dy);

/// The deep-render description of a view (its raw size: supersampling included).
DeepView deepViewOf(const MandelbrotView& view);

/// The seahorse valley and the whole set at 1920x1080, 1000 iterations (the benchmark views).
MandelbrotView seahorseValleyView();
MandelbrotView wholeSetView();

/// "-0.743643887037151,0.13182590420533" -> {x, y} as doubles (Julia constants); throws
/// std::invalid_argument for anything else.
std::array<double, 2> parsePoint(std::string_view text, std::string_view what);
/// The same as decimal numbers of any length (view centres).
std::array<DecimalNumber, 2> parseCenter(std::string_view text, std::string_view what);

}  // namespace gpulab
