// Gaussian blur, separable (a pass along rows, then one along columns), any sigma, every border
// mode, as OpenCV's cv::GaussianBlur defines it:
//   - the kernel is getGaussianKernel's: w[i] = exp(-(i - r)^2 / (2 sigma^2)), normalised to sum 1;
//   - ksize 0 derives the size from sigma as GaussianBlur does: round(6 sigma + 1) | 1 for u8
//     images, round(8 sigma + 1) | 1 for f32 (3 and 4 sigma each side);
//   - sigma 0 with an odd ksize takes getGaussianKernel's default, 0.3 ((ksize - 1) / 2 - 1) + 0.8.
//
//   gpulab::GaussianBlur blur(2.0);                 // sigma 2, size from sigma, reflect101
//   blur.runGpu(gpu, in, out);                      // async on gpu.stream(); not in place
//   gpulab::Image cpu = blur.runCpu(photo);         // cv::GaussianBlur, strips on all cores
//   gpulab::Image ref = blur.runReference(photo);   // separable loops in double
//
// Types: u8 and f32 with 1..4 channels, per channel; a 4-channel u8 image is RGBA and its alpha
// passes through. The GPU sums in float (the row pass keeps float, never rounding in between); u8
// results are rounded to nearest and saturated: within 1 of the reference (and of OpenCV, whose u8
// path is fixed point), f32 within 1e-5 relative. Constant border: the value in sample units (u8:
// rounded and saturated). Windows up to 63 run on the GPU as one fused pass (separable_conv.cuh:
// the row sums stay in shared memory; the same float taps in the same order); larger ones as two
// passes, with the weights in device memory (uploaded once per type and device) and the row-pass
// plane in gpu.scratch().
#pragma once

#include <string>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab {

inline constexpr double kMaxGaussianSigma = 100.0;
inline constexpr int kMaxGaussianSize = 1023;  ///< ksize, odd; radius 511
/// Windows up to this side run on the GPU as one fused pass (kernels/separable_conv.cuh); larger
/// ones as the two passes of kernels/gaussian.cu (a row pass into a float plane, a column pass).
inline constexpr int kGaussianFusedMaxSize = 63;

/// The window side for `sigma` on images of `type` when none is given (see above).
int gaussianSizeFor(double sigma, PixelType type);
/// The sigma a window of `ksize` takes when sigma is 0 (see above).
double gaussianDefaultSigma(int ksize);
/// getGaussianKernel(ksize, sigma) in double: ksize weights summing to 1.
std::vector<double> gaussianWeights(int ksize, double sigma);

class GaussianBlur final : public Operation {
 public:
  /// sigma in [0, kMaxGaussianSigma], ksize 0 or odd in [1, kMaxGaussianSize], not both 0.
  /// std::invalid_argument with one sentence otherwise.
  explicit GaussianBlur(double sigma, int ksize = 0, Border border = {});
  ~GaussianBlur() override;
  GaussianBlur(GaussianBlur&&) noexcept;
  GaussianBlur& operator=(GaussianBlur&&) noexcept;

  /// The window side and sigma used on images of `type`.
  int sizeFor(PixelType type) const;
  double sigmaFor(PixelType type) const;
  const Border& border() const noexcept { return border_; }
  /// The GPU path for windows up to kGaussianFusedMaxSize: the fused pass (default, true) or the two
  /// passes larger windows take (false: for comparisons, e.g. `gpulab-cli bench --ops gaussian15-two-pass`).
  void setFusedGpu(bool fused) noexcept { fused_ = fused; }
  bool fusedGpu(PixelType type) const noexcept { return fused_ && sizeFor(type) <= kGaussianFusedMaxSize; }

  std::string name() const override { return "gaussian"; }
  /// The larger of the u8 and f32 windows' radii (the image type is not known here); -1 with wrap.
  int reach() const override;
  std::string describe() const override;
  ParamValues params() const override;
  ImageShape outputShape(const ImageShape& in) const override;
  /// Interleaved for an RGB image the fused pass takes on its interleaved rows (windows up to
  /// kernels::kSeparableMaxInterleavedTaps): the photo is filtered in its own layout. Planar otherwise.
  /// runGpu takes planar images too (then the output is planar).
  DeviceLayout gpuLayout(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

 private:
  double sigma_;
  int ksize_;
  Border border_;
  bool fused_ = true;
  DeviceBuffer weights_;  // the float weights for weightsType_ on weightsDevice_
  std::vector<float> hostWeights_;
  PixelType weightsType_ = PixelType::F64;
  int weightsDevice_ = -1;
};

struct OperationInfo;
/// Gaussian blur as the registry lists it: sigma, ksize, border, border-value.
OperationInfo gaussianInfo();

}  // namespace gpulab
