// A Mandelbrot view in a PNG's text fields: saving and reopening the PNG restores the view exactly,
// at any depth (the centre with every digit, the width as typed), and its colouring.
#pragma once

#include <map>
#include <string>

#include "gpulab/core/image.hpp"
#include "gpulab/mandelbrot/palette.hpp"
#include "gpulab/mandelbrot/view.hpp"

namespace gpulab {

/// An RGBA u8 image whose every alpha is 255 as RGB (what gpulab writes to PNG: a quarter fewer bytes
/// to compress, files about 15% smaller); any other image unchanged.
Image opaqueToRgb(const Image& rgba);

/// PNG tEXt fields that describe a render ("gpulab.center" = "x,y" with every digit of the view,
/// "gpulab.width" as typed, the precision used, the colouring).
std::map<std::string, std::string> pngTextFromView(const MandelbrotView& view, const Colouring& colouring,
                                                   const PrecisionChoice& used);
/// The view stored by pngTextFromView. Throws std::invalid_argument with one sentence when a field is
/// missing or malformed ("the PNG has no gpulab Mandelbrot view (field gpulab.center is missing)").
MandelbrotView viewFromPngText(const std::map<std::string, std::string>& text);
/// Its colouring; fields that are missing keep their defaults.
Colouring colouringFromPngText(const std::map<std::string, std::string>& text);

}  // namespace gpulab
