// A view in a PNG's tEXt fields and back, exactly.
#include "gpulab/mandelbrot/png_view.hpp"

#include <algorithm>
#include <stdexcept>

#include "internal/number_text.hpp"

namespace gpulab {

Image opaqueToRgb(const Image& rgba) {
  if (rgba.type() != PixelType::U8 || rgba.channels() != 4) return rgba;
  for (int y = 0; y < rgba.height(); ++y) {
    const std::uint8_t* row = rgba.row<std::uint8_t>(y);
    for (int x = 0; x < rgba.width(); ++x)
      if (row[4 * x + 3] != 255) return rgba;
  }
  Image rgb(rgba.width(), rgba.height(), 3, PixelType::U8);
  for (int y = 0; y < rgba.height(); ++y) {
    const std::uint8_t* in = rgba.row<std::uint8_t>(y);
    std::uint8_t* out = rgb.row<std::uint8_t>(y);
    for (int x = 0; x < rgba.width(); ++x) {
      out[3 * x] = in[4 * x];
      out[3 * x + 1] = in[4 * x + 1];
      out[3 * x + 2] = in[4 * x + 2];
    }
  }
  return rgb;
}

std::map<std::string, std::string> pngTextFromView(const MandelbrotView& view, const Colouring& colouring,
                                                   const PrecisionChoice& used) {
  std::map<std::string, std::string> text;
  text["Software"] = "gpulab";
  text["gpulab.kind"] = view.julia ? "julia" : "mandelbrot";
  text["gpulab.center"] = view.centerX.toString() + "," + view.centerY.toString();
  text["gpulab.width"] = view.width.toString();
  text["gpulab.iterations"] = std::to_string(view.maxIterations);
  text["gpulab.precision"] = std::string(toString(view.precision));
  text["gpulab.precision_used"] = used.label();
  text["gpulab.julia"] = view.julia ? formatNumber(view.juliaX) + "," + formatNumber(view.juliaY) : "off";
  text["gpulab.size"] = std::to_string(view.imageWidth) + "x" + std::to_string(view.imageHeight);
  text["gpulab.supersample"] = std::to_string(view.supersample);
  text["gpulab.palette"] = colouring.palette.name();
  text["gpulab.gradient"] = colouring.palette.gradientText();
  text["gpulab.offset"] = formatNumber(colouring.offset);
  text["gpulab.density"] = formatNumber(colouring.density);
  text["gpulab.interior"] = hexColour(colouring.interior);
  return text;
}

namespace {

const std::string& field(const std::map<std::string, std::string>& text, const std::string& key) {
  const auto it = text.find(key);
  if (it == text.end())
    throw std::invalid_argument("the PNG has no gpulab Mandelbrot view (field " + key + " is missing)");
  return it->second;
}

[[noreturn]] void badField(const std::string& key, const std::string& value, const std::string& expected) {
  throw std::invalid_argument("the PNG's field " + key + " = '" + value + "' is not " + expected);
}

}  // namespace

MandelbrotView viewFromPngText(const std::map<std::string, std::string>& text) {
  MandelbrotView view;
  const auto center = parseCenter(field(text, "gpulab.center"), "the PNG's field gpulab.center");
  view.centerX = center[0];
  view.centerY = center[1];
  const std::string& width = field(text, "gpulab.width");
  try {
    view.width = DeepWidth::parse(width);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("the PNG's field gpulab.width: " + std::string(e.what()));
  }
  const std::string& iterations = field(text, "gpulab.iterations");
  const auto n = parseInt(iterations);
  if (!n) badField("gpulab.iterations", iterations, "a whole number");
  view.maxIterations = *n;
  if (const auto it = text.find("gpulab.precision"); it != text.end())
    view.precision = parseEnumOrThrow<Precision>(it->second);
  if (const auto it = text.find("gpulab.julia"); it != text.end() && it->second != "off") {
    const auto c = parsePoint(it->second, "gpulab.julia");
    view.julia = true;
    view.juliaX = c[0];
    view.juliaY = c[1];
  }
  if (const auto it = text.find("gpulab.size"); it != text.end()) {
    const std::size_t x = it->second.find('x');
    const auto iw = x == std::string::npos ? std::nullopt : parseInt(std::string_view(it->second).substr(0, x));
    const auto ih = x == std::string::npos ? std::nullopt : parseInt(std::string_view(it->second).substr(x + 1));
    if (!iw || !ih) badField("gpulab.size", it->second, "WIDTHxHEIGHT");
    view.imageWidth = *iw;
    view.imageHeight = *ih;
  }
  if (const auto it = text.find("gpulab.supersample"); it != text.end()) {
    const auto s = parseInt(it->second);
    if (!s) badField("gpulab.supersample", it->second, "a whole number");
    view.supersample = *s;
  }
  validate(view);
  return view;
}

Colouring colouringFromPngText(const std::map<std::string, std::string>& text) {
  Colouring colouring;
  const auto name = text.find("gpulab.palette");
  const auto gradient = text.find("gpulab.gradient");
  if (name != text.end()) {
    const auto builtIn = paletteNames();
    if (std::find(builtIn.begin(), builtIn.end(), name->second) != builtIn.end())
      colouring.palette = Palette::named(name->second);
    else if (gradient != text.end())
      colouring.palette = Palette::parseGradient(gradient->second);
    else
      colouring.palette = Palette::named(name->second);  // throws naming the palettes
  }
  if (const auto it = text.find("gpulab.offset"); it != text.end()) {
    const auto v = parseDouble(it->second);
    if (!v) badField("gpulab.offset", it->second, "a number");
    colouring.offset = *v;
  }
  if (const auto it = text.find("gpulab.density"); it != text.end()) {
    const auto v = parseDouble(it->second);
    if (!v) badField("gpulab.density", it->second, "a number");
    colouring.density = *v;
  }
  if (const auto it = text.find("gpulab.interior"); it != text.end()) {
    const auto c = parseHexColour(it->second);
    if (!c) badField("gpulab.interior", it->second, "a colour #rrggbb");
    colouring.interior = *c;
  }
  validate(colouring);
  return colouring;
}

}  // namespace gpulab
