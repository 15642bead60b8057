// The convolution kernels behind the Filters tab's presets. Pure functions, no widgets: the kernel
// editor fills its table from them and the tests check them.
//
// Every kernel is row-major (Kernel2D::at(x, y)), at most kMaxEditorFftKernelSize a side. Smoothing
// kernels (Gaussian, motion blur, box) sum to 1; sharpen sums to 1; emboss sums to 1; Laplacian to 0.
// Bad parameters throw std::invalid_argument with one sentence saying what is allowed.
#pragma once

#include "gpulab/filters/filter.hpp"

namespace gpulab::gui {

enum class KernelPreset { Custom, Gaussian, Sharpen, Emboss, Laplacian, MotionBlur, Box };

/// The largest kernel side the editor offers for the direct and separable methods (the engine takes
/// up to Conv2D::kMaxKernelSize; 63 keeps the table and a CPU run quick).
inline constexpr int kMaxEditorKernelSize = 63;
/// The largest side it offers for the fft and auto methods (the engine takes up to kMaxFftKernelSide).
inline constexpr int kMaxEditorFftKernelSize = 255;

/// The editor's largest side for `method`: kMaxEditorKernelSize for direct and separable, else
/// kMaxEditorFftKernelSize.
constexpr int editorKernelLimit(gpulab::ConvMethod method) noexcept {
  return method == gpulab::ConvMethod::Direct || method == gpulab::ConvMethod::Separable ? kMaxEditorKernelSize
                                                                                         : kMaxEditorFftKernelSize;
}

/// size x size samples of exp(-(dx^2 + dy^2) / (2 sigma^2)) about the kernel's centre (between two
/// samples for an even size), normalised to sum 1. sigma > 0 (finite), size 1..255.
gpulab::Kernel2D gaussianKernel(double sigma, int size);
/// The smallest odd size that holds +-3 sigma, at most maxSide (1..255).
int gaussianSizeFor(double sigma, int maxSide = kMaxEditorKernelSize);

gpulab::Kernel2D sharpenKernel();    ///< [0 -1 0; -1 5 -1; 0 -1 0]
gpulab::Kernel2D embossKernel();     ///< [-2 -1 0; -1 1 1; 0 1 2]
gpulab::Kernel2D laplacianKernel();  ///< [0 1 0; 1 -4 1; 0 1 0]

/// A straight streak `length` pixels long through the centre, at `angleDegrees` counter-clockwise
/// from the x axis as seen on screen (y points down in the image), anti-aliased and normalised to
/// sum 1. The kernel is square, `length` rounded up to odd so the streak is centred. length 1..255.
gpulab::Kernel2D motionBlurKernel(int length, double angleDegrees);

/// width x height coefficients of 1 / (width * height); each side 1..255.
gpulab::Kernel2D boxKernel(int width, int height);

}  // namespace gpulab::gui
