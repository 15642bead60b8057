// Unsharp mask: out = in + amount * (in - gaussian(in)) where |in - gaussian(in)| >= threshold,
// else in (GIMP's and the usual definition; threshold 0 sharpens everywhere). The Gaussian is
// GaussianBlur's (filters/gaussian.hpp: sigma, ksize 0 = from sigma for the image's type, every
// border mode), taken in float and never rounded before the difference.
//
//   gpulab::UnsharpMask sharpen(1.5, 2.0, 0.0);   // amount, sigma, threshold
//   sharpen.runGpu(gpu, in, out);                 // two Gaussian passes and one combine, async
//   gpulab::Image cpu = sharpen.runCpu(photo);    // f32 copy, cv::GaussianBlur, combine; all cores
//   gpulab::Image ref = sharpen.runReference(photo);  // in double
//
// Types: u8 and f32 with 1..4 channels, per channel (u8 RGBA: alpha passes through). u8 results
// are rounded to nearest and saturated as cv::saturate_cast would (within 1 of the reference where
// |in - blur| is not within float rounding of the threshold); f32 within 1e-5 relative.
// threshold is in sample units (0..255 for u8).
#pragma once

#include <string>

#include "gpulab/filters/gaussian.hpp"

namespace gpulab {

inline constexpr double kMaxUnsharpAmount = 100.0;

class UnsharpMask final : public Operation {
 public:
  /// amount in [0, kMaxUnsharpAmount], threshold >= 0, sigma and ksize as GaussianBlur's.
  UnsharpMask(double amount, double sigma, double threshold, int ksize = 0, Border border = {});

  double amount() const noexcept { return amount_; }
  double threshold() const noexcept { return threshold_; }

  std::string name() const override { return "unsharp"; }
  int reach() const override { return blur_.reach(); }
  std::string describe() const override;
  ParamValues params() const override;
  ImageShape outputShape(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

 private:
  double amount_;
  double threshold_;
  GaussianBlur blur_;  // its parameters; the weights upload as the GPU blur's own
  DeviceBuffer weights_;
  std::vector<float> hostWeights_;
  PixelType weightsType_ = PixelType::F64;
  int weightsDevice_ = -1;
};

struct OperationInfo;
/// Unsharp mask as the registry lists it: amount, sigma, threshold, ksize, border, border-value.
OperationInfo unsharpInfo();

}  // namespace gpulab
