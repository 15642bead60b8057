// Canny edges, as OpenCV's cv::Canny with aperture 3 decides them, to the pixel: a 3x3 Sobel with
// the replicated border, the L1 (|dx| + |dy|, OpenCV's default) or L2 (sqrt(dx^2 + dy^2)) gradient
// magnitude, non-maximum suppression along the gradient quantised to 0/45/90/135 degrees (OpenCV's
// fixed-point test and its tie rules), the double threshold (weak above `low`, strong above
// `high`), and hysteresis: a weak pixel is an edge when 8-connected weak pixels join it to a strong
// one (exact connectivity, like OpenCV's stack). See gpulab/kernels/canny.cuh for the steps.
//
//   gpulab::Canny canny(50, 150);
//   canny.runGpu(gpu, in, out);          // on gpu.stream(); BLOCKS: hysteresis reads a flag back
//                                        // once per propagation round
//   gpulab::Image cpu = canny.runCpu(photo);        // cv::Canny (OpenCV's own threads)
//   gpulab::Image ref = canny.runReference(photo);  // plain loops and a flood fill
//
// Input: u8 gray, RGB or RGBA (alpha ignored); colour goes to gray first as cv::cvtColor(RGB2GRAY)
// does (fixed point, the same in all three). f32 is refused (cv::Canny takes 8-bit images; convert
// first). Output: one u8 plane, 255 on edges, 0 elsewhere. Thresholds as cv::Canny: for L2 they
// are squared (at most 32767 first) and both floored to integers.
#pragma once

#include <string>

#include "gpulab/core/buffers.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab {

enum class CannyGradient { L1, L2 };
constexpr EnumText enumText(CannyGradient) { return {"Canny gradient", "l1|l2"}; }

inline constexpr double kMaxCannyThreshold = 100000.0;

class Canny final : public Operation {
 public:
  /// Thresholds in [0, kMaxCannyThreshold] (std::invalid_argument with one sentence otherwise); a
  /// low above high is swapped, as cv::Canny does (two independent sliders may cross).
  Canny(double low, double high, CannyGradient gradient = CannyGradient::L1);
  ~Canny() override;
  Canny(Canny&&) noexcept;
  Canny& operator=(Canny&&) noexcept;

  double low() const noexcept { return low_; }
  double high() const noexcept { return high_; }
  /// The integer thresholds the magnitude is compared with (squared for L2), as cv::Canny's.
  int lowLevel() const noexcept;
  int highLevel() const noexcept;

  std::string name() const override { return "canny"; }
  std::string describe() const override;
  ParamValues params() const override;
  ImageShape outputShape(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

 protected:
  std::size_t minimumBytesRead(const ImageShape& in) const override;

 private:
  double low_, high_;
  CannyGradient gradient_;
  PinnedBuffer flag_;
};

struct OperationInfo;
/// Canny as the registry lists it: low, high, gradient.
OperationInfo cannyInfo();

}  // namespace gpulab
