// Sobel gradient, 3x3: magnitude sqrt(dx^2 + dy^2) by default; dx, dy or direction atan2(dy, dx)
// selectable. dx is right minus left ([-1 0 1; -2 0 2; -1 0 1], as cv::Sobel with dx=1), dy is
// down minus up; the direction is in radians in [-pi, pi] with y pointing down.
//
//   gpulab::Sobel sobel(gpulab::SobelComponent::Magnitude);
//   sobel.runGpu(gpu, in, out);          // async on gpu.stream(); not in place
//   gpulab::Image cpu = sobel.runCpu(photo);        // cv::Sobel + cv::magnitude, strips on all cores
//   gpulab::Image ref = sobel.runReference(photo);  // loops in double
//
// Input: u8 or f32 with 1 channel (gray), 3 (RGB) or 4 (RGBA; alpha ignored). Colour goes to
// luminance first, 0.299 R + 0.587 G + 0.114 B computed in float the same way in all three
// implementations (the same formula in the kernels and the CPU code), so they filter identical luminance.
// Output: one channel of the input's type.
//   f32: the signed values (dx, dy), the magnitude, or the direction in radians. Within 1e-5
//        relative of the reference, and of 8 x the input's range where the value is near 0.
//   u8:  magnitude and |dx|, |dy| rounded to nearest and saturated to 255; the direction as a
//        circular code round(angle * 128 / pi) mod 256 (0 = right, 64 = down, 128 = left, 192 = up;
//        no jump between -pi and pi). Magnitude, x and y of gray input are exact (the gradients are
//        integers); colour input and the direction may differ from the reference by 1.
// Constant border: the value is a luminance (sample units, not rounded).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpulab/filters/filter.hpp"

namespace gpulab {

class Sobel final : public Operation {
 public:
  /// Throws std::invalid_argument for a non-finite border value.
  explicit Sobel(SobelComponent component = SobelComponent::Magnitude, Border border = {});

  SobelComponent component() const noexcept { return component_; }
  const Border& border() const noexcept { return border_; }

  std::string name() const override { return "sobel"; }
  /// A wrapping border reads the opposite edge: the whole image.
  int reach() const override { return border_.mode == BorderMode::Wrap ? -1 : 1; }
  std::string describe() const override;
  ParamValues params() const override;
  /// Throws std::invalid_argument for f64 or 2-channel input.
  ImageShape outputShape(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

 protected:
  std::size_t minimumBytesRead(const ImageShape& in) const override;

 private:
  SobelComponent component_;
  Border border_;
};

struct OperationInfo;
/// Sobel as the registry lists it (filters/registry.hpp): component, border, border-value.
OperationInfo sobelInfo();

}  // namespace gpulab
