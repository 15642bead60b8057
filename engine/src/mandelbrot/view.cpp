// Views at any depth: validation, the precision ladder, iterations by depth, points as text.
#include "gpulab/mandelbrot/view.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "gpulab/core/image.hpp"
#include "internal/number_text.hpp"

namespace gpulab {

namespace {

constexpr std::array<PrecisionRung, 2> kLadder{{
    {Precision::F32, -20.0},
    {Precision::F64, -49.0},
}};

bool finiteWithin(double v, double limit) { return std::isfinite(v) && std::abs(v) <= limit; }

/// h / max(|x|, |y|, 1) at any depth, normalised (mantissa in [1, 2)): the division rounds once, as
/// the escape-time kernels' own spacing does, so a rung's limit is met exactly where it should be.
ExtendedReal relativeSpacing(const MandelbrotView& view) {
  const double scale = std::max({std::abs(view.x()), std::abs(view.y()), 1.0});
  ExtendedReal r = view.spacing();
  int shift = 0;
  r.mantissa = std::frexp(r.mantissa / scale, &shift) * 2.0;
  r.exponent += shift - 1;
  return r;
}

/// r >= 2^log2Limit for a normalised r.
bool atLeast(ExtendedReal r, double log2Limit) {
  const int limit = static_cast<int>(log2Limit);
  return r.exponent > limit || (r.exponent == limit && r.mantissa >= 1.0);
}

}  // namespace

ExtendedReal MandelbrotView::spacing() const noexcept { return pixelSpacing(width, rawWidth()); }

std::span<const PrecisionRung> precisionLadder() noexcept { return kLadder; }

void validate(const MandelbrotView& v) {
  const DecimalNumber limit = DecimalNumber::fromDouble(kMandelbrotMaxCoordinate);
  if (v.centerX > limit || v.centerX < -limit || v.centerY > limit || v.centerY < -limit)
    throw std::invalid_argument("centre (" + v.centerX.toString().substr(0, 24) + ", " +
                                v.centerY.toString().substr(0, 24) +
                                ") is not allowed: both coordinates must be within +-10");
  if (toDouble(v.width.value()) > kMandelbrotMaxWidth)
    throw std::invalid_argument("width " + v.width.toString() +
                                " is not allowed: the view's width in the complex plane must be in (0, 100]");
  if (v.julia &&
      (!finiteWithin(v.juliaX, kMandelbrotMaxCoordinate) || !finiteWithin(v.juliaY, kMandelbrotMaxCoordinate)))
    throw std::invalid_argument("Julia constant (" + formatNumber(v.juliaX, "%g") + ", " +
                                formatNumber(v.juliaY, "%g") +
                                ") is not allowed: both coordinates must be finite and within +-10");
  if (v.maxIterations < 1 || v.maxIterations > kMaxMandelbrotIterations)
    throw std::invalid_argument(std::to_string(v.maxIterations) +
                                " iterations are not allowed: use 1 to 16777216 (2^24)");
  if (v.supersample < 1 || v.supersample > kMandelbrotMaxSupersample)
    throw std::invalid_argument("supersampling " + std::to_string(v.supersample) + " is not allowed: use 1 to 4");
  if (v.imageWidth <= 0 || v.imageHeight <= 0)
    throw std::invalid_argument("image size " + std::to_string(v.imageWidth) + "x" + std::to_string(v.imageHeight) +
                                " is empty: both sides must be at least 1 pixel");
  if (v.imageWidth > kMaxImageDimension / v.supersample || v.imageHeight > kMaxImageDimension / v.supersample)
    throw std::invalid_argument("image size " + std::to_string(v.imageWidth) + "x" + std::to_string(v.imageHeight) +
                                " with supersampling " + std::to_string(v.supersample) + " exceeds the limit of " +
                                std::to_string(kMaxImageDimension) + " samples a side");
  validateImageShape(v.rawWidth(), v.rawHeight(), 4);
}

int autoIterations(const DeepWidth& width) {
  const double depth = std::max(0.0, std::log10(3.0) - width.log10());
  const double n = std::round(256.0 * std::pow(1.0 + depth, 1.25));
  return static_cast<int>(std::min(n, static_cast<double>(kMaxMandelbrotIterations)));
}

std::string PrecisionChoice::label() const {
  if (used != Precision::Perturbation) return std::string(toString(used));
  return "perturbation " + std::string(deltas == DeepDeltaFormat::Double ? "f64" : "floatexp");
}

std::string PrecisionChoice::describe() const {
  char text[200];
  if (used == Precision::Perturbation) {
    std::snprintf(text, sizeof text, "perturbation, %s deltas (%s; relative pixel spacing 2^%.1f, f64 down to 2^%.0f)",
                  deltas == DeepDeltaFormat::Double ? "f64" : "floatexp", forced ? "forced" : "auto",
                  log2RelativeSpacing, kLadder.back().minLog2RelativeSpacing);
    return text;
  }
  const double limit = used == Precision::F32 ? kLadder[0].minLog2RelativeSpacing : kLadder[1].minLog2RelativeSpacing;
  std::snprintf(text, sizeof text, "%s (%s; relative pixel spacing 2^%.1f, %s down to 2^%.0f)%s",
                std::string(toString(used)).c_str(), forced ? "forced" : "auto", log2RelativeSpacing,
                std::string(toString(used)).c_str(), limit,
                belowLimit ? ": too coarse for this zoom, expect blocks" : "");
  return text;
}

PrecisionChoice choosePrecision(const MandelbrotView& view) {
  validate(view);
  PrecisionChoice choice;
  const ExtendedReal rho = relativeSpacing(view);
  choice.log2RelativeSpacing = log2Of(rho);
  const bool escapeTimeReaches = atLeast(rho, kLadder.back().minLog2RelativeSpacing);
  Precision automatic = Precision::Perturbation;
  for (const PrecisionRung& rung : kLadder)
    if (atLeast(rho, rung.minLog2RelativeSpacing)) {
      automatic = rung.precision;
      break;
    }
  if (view.julia && !escapeTimeReaches)
    throw PrecisionLimitError("Julia sets render by escape time, which stops at width " +
                              formatNumber(std::exp2(kLadder.back().minLog2RelativeSpacing) * view.rawWidth() *
                                               std::max({std::abs(view.x()), std::abs(view.y()), 1.0}),
                                           "%.2g") +
                              " here; this view's width is " + view.width.toString());
  choice.forced = view.precision != Precision::Auto;
  choice.used = choice.forced ? view.precision : automatic;
  if (choice.used != Precision::Perturbation && !escapeTimeReaches)
    throw PrecisionLimitError("f32 and f64 escape time stop at a relative pixel spacing of 2^-49; this view (width " +
                              view.width.toString() + ") needs perturbation: use precision auto or perturbation");
  if (choice.used == Precision::Perturbation && view.julia)
    throw PrecisionLimitError("Julia sets render by escape time only: use precision auto, f32 or f64");
  choice.belowLimit = choice.used == Precision::F32 && automatic != Precision::F32;
  if (choice.used == Precision::Perturbation) choice.deltas = chooseDeltaFormat(view.spacing());
  return choice;
}

DeepView deepViewOf(const MandelbrotView& view) {
  DeepView deep;
  deep.centerX = view.centerX;
  deep.centerY = view.centerY;
  deep.width = view.width;
  deep.imageWidth = view.rawWidth();
  deep.imageHeight = view.rawHeight();
  deep.maxIterations = view.maxIterations;
  return deep;
}

MandelbrotView movedBy(const MandelbrotView& view, double dx, double dy) {
  const int bits = referencePrecisionBits(deepViewOf(view)) + 64;  // the view's digits and more
  ExtendedReal x = view.width.value(), y = view.width.value();
  x.mantissa *= dx;
  y.mantissa *= dy;
  MandelbrotView moved = view;
  moved.centerX = offsetBy(view.centerX, x, bits);
  moved.centerY = offsetBy(view.centerY, y, bits);
  return moved;
}

MandelbrotView seahorseValleyView() {
  MandelbrotView v;
  v.centerX = DecimalNumber::parse("-0.743643887037151");
  v.centerY = DecimalNumber::parse("0.13182590420533");
  v.width = DeepWidth::parse("0.005");
  v.maxIterations = 1000;
  return v;
}

MandelbrotView wholeSetView() {
  MandelbrotView v;
  v.maxIterations = 1000;
  return v;
}

std::array<double, 2> parsePoint(std::string_view text, std::string_view what) {
  const std::size_t comma = text.find(',');
  if (comma != std::string_view::npos) {
    const auto x = parseDouble(text.substr(0, comma));
    const auto y = parseDouble(text.substr(comma + 1));
    if (x && y) return {*x, *y};
  }
  throw std::invalid_argument(std::string(what) + " '" + std::string(text) +
                              "' is not a point: write two finite numbers as X,Y (e.g. -0.5,0)");
}

std::array<DecimalNumber, 2> parseCenter(std::string_view text, std::string_view what) {
  const std::size_t comma = text.find(',');
  if (comma == std::string_view::npos || text.find(',', comma + 1) != std::string_view::npos)
    throw std::invalid_argument(std::string(what) + " '" + std::string(text.substr(0, 60)) +
                                "' is not a point: write two numbers as X,Y (e.g. -0.5,0), with as many digits as "
                                "the depth needs");
  return {DecimalNumber::parse(text.substr(0, comma), std::string(what) + " x"),
          DecimalNumber::parse(text.substr(comma + 1), std::string(what) + " y")};
}

}  // namespace gpulab
