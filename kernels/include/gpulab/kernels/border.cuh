// Border modes shared by every neighbourhood operation (box blur, Sobel, convolution, FFT padding),
// on host and device, correct for any distance outside the image (kernels larger than the image).
//
//   reflect101  dcb|abcd|cba   OpenCV's BORDER_REFLECT_101 (default)
//   reflect     cba|abcd|dcb   OpenCV's BORDER_REFLECT, SciPy's 'symm'
//   replicate   aaa|abcd|ddd   OpenCV's BORDER_REPLICATE
//   wrap        bcd|abcd|abc   OpenCV's BORDER_WRAP, SciPy's 'wrap'
//   constant    vvv|abcd|vvv   OpenCV's BORDER_CONSTANT, SciPy's 'fill' with fillvalue v
#pragma once

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

enum class BorderMode : int { Reflect101 = 0, Reflect = 1, Replicate = 2, Wrap = 3, Constant = 4 };

/// Maps coordinate i (any int) into [0, n) for mode; -1 for Constant outside the image.
GPULAB_HD int borderIndex(int i, int n, BorderMode mode) {
  if (static_cast<unsigned>(i) < static_cast<unsigned>(n)) return i;
  switch (mode) {
    case BorderMode::Reflect101: {
      if (n == 1) return 0;
      const int period = 2 * n - 2;
      int m = i % period;
      if (m < 0) m += period;
      return m < n ? m : period - m;
    }
    case BorderMode::Reflect: {
      const int period = 2 * n;
      int m = i % period;
      if (m < 0) m += period;
      return m < n ? m : period - 1 - m;
    }
    case BorderMode::Replicate:
      return i < 0 ? 0 : n - 1;
    case BorderMode::Wrap: {
      int m = i % n;
      return m < 0 ? m + n : m;
    }
    case BorderMode::Constant:
      return -1;
  }
  return -1;
}

}  // namespace gpulab::kernels
