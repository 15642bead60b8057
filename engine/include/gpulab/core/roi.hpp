// Regions of interest: an operation applied to a rectangle of an image alone, with the pixels
// around the rectangle as its borders.
//
//   gpulab::RoiWindow w = gpulab::roiWindow(gpulab::shapeOf(photo), {100, 80, 812, 431}, op->reach());
//   gpulab::Image window = gpulab::crop(photo, w.window);          // the rectangle and its halo
//   gpulab::Image filtered = op->runCpu(window);
//   gpulab::Image result = gpulab::pasteRoi(photo, filtered, w);   // only the rectangle changed
//
// The window is the rectangle grown by the operation's reach (Operation::reach(); the whole image
// when the reach is unknown) and clipped to the image, so every output pixel inside the rectangle
// reads the same input pixels as it would in the full image, and the border mode applies only where
// the full image has its border too. Operations whose output differs in shape from their input
// ('full' / 'valid' convolution, Sobel's one channel from RGB) cannot be limited to a rectangle.
#pragma once

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab {

struct RoiWindow {
  PixelRect roi;     ///< the rectangle, in image pixels
  PixelRect window;  ///< the rectangle and its halo, clipped to the image
  PixelRect inner;   ///< the rectangle in the window's pixels
};

/// The window for `roi` on an image of `shape` with a halo of `reach` pixels (negative: unknown, the
/// whole image). Throws std::invalid_argument when the rectangle is empty or not inside the image.
RoiWindow roiWindow(const ImageShape& shape, const PixelRect& roi, int reach);

/// Pixels `rect` of `image` as a new image. Throws std::invalid_argument when `rect` is not inside it.
Image crop(const Image& image, const PixelRect& rect);
/// The same on the GPU, queued on gpu.stream() (one 2-D copy per plane); `out` is reused when its
/// shape fits.
void crop(GpuContext& gpu, const DeviceImage& image, const PixelRect& rect, DeviceImage& out);

/// A copy of `image` with the rectangle w.roi replaced by pixels w.inner of `filteredWindow` (the
/// operation's output on crop(image, w.window)). Throws std::invalid_argument when `filteredWindow`
/// does not have the window's size or the image's channels and type.
Image pasteRoi(const Image& image, const Image& filteredWindow, const RoiWindow& w);

/// Whether `op` keeps `in`'s shape (width, height, channels, type): only such an operation can be
/// limited to a rectangle. std::invalid_argument when it cannot take `in` at all.
bool keepsShape(const Operation& op, const ImageShape& in);

}  // namespace gpulab
