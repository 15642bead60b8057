// gpulab::Image -> QImage for the screen. Runs on any thread (QImage is reentrant), so the worker
// converts and the GUI thread only paints.
//
//   u8,  1 channel  -> Format_Grayscale8
//   u8,  2 channels -> Format_RGBA8888 (gray + alpha)
//   u8,  3 channels -> Format_RGB888
//   u8,  4 channels -> Format_RGBA8888 (straight alpha, as stored)
//   f32 / f64       -> the same layouts in 8 bits, colour channels normalised together from their
//                      finite min..max to 0..255 (NaN and infinities shown as 0); alpha is not shown.
//                      A constant image shows as 0.
#pragma once

#include <QImage>

#include "gpulab/core/image.hpp"

namespace gpulab::gui {

/// How a float image was mapped to 8 bits for display.
struct DisplayRange {
  bool normalised = false;  ///< false for u8 images (shown as stored)
  double min = 0;           ///< shown as 0
  double max = 0;           ///< shown as 255
};

/// A deep copy of `image` as a QImage (null QImage for an empty image). `range` receives how float
/// samples were normalised.
QImage toQImage(const gpulab::Image& image, DisplayRange* range = nullptr);

/// "f32 shown normalised from -1.25 to 3.5"; empty for u8.
QString describeRange(const gpulab::Image& image, const DisplayRange& range);

}  // namespace gpulab::gui
