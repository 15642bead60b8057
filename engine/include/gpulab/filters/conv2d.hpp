// General 2D convolution, matching scipy.signal.convolve2d: any kernel from 1x1 to 127x127 (odd,
// even, non-square), true convolution by default (the kernel flipped), correlation as an option.
//
//   convolution   full(i, j) = sum_{m, n} k(m, n) * in(i - m, j - n)           (rows i, columns j)
//   'full'        that, for 0 <= i < H + kh - 1 (and likewise along j)
//   'same'        full(i + (kh - 1) / 2, j + (kw - 1) / 2), H x W: centred as scipy centres it
//   'valid'       full(i + kh - 1, j + kw - 1), (H - kh + 1) x (W - kw + 1); throws if that is empty
//   correlation   the convolution with the kernel flipped in both axes; in 'same' mode that is
//                 OpenCV's filter2D with its default anchor (kw / 2, kh / 2), even sizes included
//
// Samples outside the image follow the border mode in every output mode: reflect = scipy's 'symm',
// wrap = 'wrap', constant(v) = 'fill' with fillvalue v (v converted to the sample type first: for
// u8 rounded and saturated), at any distance (kernels larger than the image). scipy swaps the inputs
// of a 'valid' convolution whose kernel is larger than the image; gpulab throws instead.
//
// Types: u8 with 1, 3 or 4 channels, f32 and f64 with 1..4 channels, each channel on its own. u8
// RGBA in 'same' mode passes alpha through unchanged; in 'full' and 'valid' mode (other image
// sizes) all four channels are convolved. u8 and f32 accumulate in float on the GPU, f64 in double;
// u8 results are rounded (ties to even) and saturated. runGpu is asynchronous on gpu.stream() and
// does not allocate once `out` has the output shape; it does not work in place (in != out).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab {

class Conv2D final : public Operation {
 public:
  /// The largest kernel width and height.
  static constexpr int kMaxKernelSize = 127;

  /// Validates spec.kernel (not empty, values matching its size, at most kMaxKernelSize in each
  /// dimension, every coefficient finite) and the border; std::invalid_argument with one sentence.
  explicit Conv2D(const FilterSpec& spec);

  std::string name() const override { return "conv"; }
  /// A wrapping border reads the opposite edge: the whole image.
  int reach() const override {
    return border_.mode == BorderMode::Wrap ? -1 : std::max(kernel_.width, kernel_.height) / 2;
  }
  std::string describe() const override;
  ParamValues params() const override;
  ImageShape outputShape(const ImageShape& in) const override;

  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

  const Kernel2D& kernel() const noexcept { return kernel_; }
  bool correlate() const noexcept { return correlate_; }
  ConvMode mode() const noexcept { return mode_; }
  const Border& border() const noexcept { return border_; }

  /// Output position (x, y) reads input (x - anchorX + q, y - anchorY + p) with correlation-form
  /// coefficient (q, p): the offsets of mode() and the kernel size, for the three implementations.
  int anchorX() const noexcept;
  int anchorY() const noexcept;
  /// The coefficients in correlation form (flipped unless correlate()), row-major.
  const std::vector<double>& correlationWeights() const noexcept { return weights_; }

 private:
  template <class T>
  void runGpuTyped(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);

  Kernel2D kernel_;
  bool correlate_ = false;
  ConvMode mode_ = ConvMode::Same;
  Border border_;
  std::vector<double> weights_;
  std::vector<float> weightsFloat_;
  // Device copies of the weights for kernels too large to travel in the launch, per device.
  DeviceBuffer deviceWeightsFloat_;
  DeviceBuffer deviceWeightsDouble_;
  int deviceWeightsFloatDevice_ = -1;
  int deviceWeightsDoubleDevice_ = -1;
};

}  // namespace gpulab
