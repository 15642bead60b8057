// Canny edges on 8-bit planes, the same decisions as OpenCV's cv::Canny (aperture 3):
//   1. dx, dy: 3x3 Sobel with the replicated border; the magnitude |dx| + |dy| (L1) or
//      dx^2 + dy^2 (L2, compared with squared thresholds), in integers; 0 outside the image;
//   2. non-maximum suppression along the gradient quantised to 0/45/90/135 degrees with OpenCV's
//      fixed-point tangent test and its tie rules (see cannyClass); pixels above `low` that survive
//      are weak, those also above `high` strong;
//   3. hysteresis: a weak pixel is an edge when a chain of 8-connected weak pixels joins it to a
//      strong one. The GPU propagates inside each 32x16 tile in shared memory until the tile is
//      stable, and repeats over the image until no pixel changes (the stream is synchronised once
//      per round to read the flag: this launcher blocks);
//   4. out = 255 on edges, 0 elsewhere.
// Colour (three planes R, G, B) goes to 8-bit gray first as cv::cvtColor(RGB2GRAY) does it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// OpenCV 4's 8-bit RGB -> gray: 0.299, 0.587, 0.114 in 15 fraction bits (9798, 19235, 3735,
/// summing to 2^15), rounded.
GPULAB_HD std::uint8_t cannyGray(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return static_cast<std::uint8_t>((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15);
}

/// The pixel's class after non-maximum suppression: 0 none, 1 weak, 2 strong. `m` is its
/// magnitude, (dx, dy) its gradient, left/right/up/down/.. its neighbours' magnitudes (0 outside).
GPULAB_HD int cannyClass(int m, int dx, int dy, int low, int high, int left, int right, int up, int down, int upLeft,
                         int upRight, int downLeft, int downRight) {
  if (m <= low) return 0;
  constexpr int kShift = 15;
  constexpr int kTan22 = 13573;  // (int)(tan(22.5 degrees) * 2^15 + 0.5)
  const int ax = dx < 0 ? -dx : dx;
  const int ay = (dy < 0 ? -dy : dy) << kShift;
  const int tg22x = ax * kTan22;
  bool peak;
  if (ay < tg22x) {
    peak = m > left && m >= right;
  } else {
    const int tg67x = tg22x + (ax << (kShift + 1));
    if (ay > tg67x) {
      peak = m > up && m >= down;
    } else if ((dx ^ dy) < 0) {  // s = -1: up-right against down-left
      peak = m > upRight && m > downLeft;
    } else {  // s = +1: up-left against down-right
      peak = m > upLeft && m > downRight;
    }
  }
  if (!peak) return 0;
  return m > high ? 2 : 1;
}

/// Scratch bytes launchCanny needs for a width x height image.
std::size_t cannyScratchBytes(int width, int height);

/// out = Canny edges (0 / 255) of `red` (gray) or of the gray of (red, green, blue) when `colour`.
/// `low` <= `high` are the integer thresholds as OpenCV derives them (squared for L2). `scratch`:
/// cannyScratchBytes of device memory; `hostFlag`: one pinned int. Blocks until done.
void launchCanny(Plane<const std::uint8_t> red, Plane<const std::uint8_t> green, Plane<const std::uint8_t> blue,
                 bool colour, Plane<std::uint8_t> out, int low, int high, bool l2, void* scratch,
                 std::size_t scratchBytes, int* hostFlag, cudaStream_t stream);

}  // namespace gpulab::kernels
