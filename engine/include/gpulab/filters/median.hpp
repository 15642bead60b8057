// Median filter: each sample becomes the median of the size x size window around it (size odd,
// 1 to 63), exact: the very sample, in the same total order everywhere (floats by their order-
// preserving bit pattern: -0 below +0, NaNs beyond the infinities; see gpulab/kernels/median.cuh).
// Every border mode; the default is replicate, as cv::medianBlur (which knows no other).
//
//   gpulab::Median median(7);
//   median.runGpu(gpu, in, out);         // async on gpu.stream(); not in place
//   gpulab::Image cpu = median.runCpu(photo);      // see "CPU baseline" below
//   gpulab::Image ref = median.runReference(photo); // sort every window; slow
//
// Types: u8 and f32 with 1..4 channels, per channel; u8 RGBA's alpha passes through. GPU, CPU
// and reference agree exactly.
// GPU (MedianSelect, auto by default): up to 7x7 forgetful selection (min/max networks in registers;
// u8 two pixels per thread in 16-bit lanes); beyond, u8 a sliding histogram per column strip with a
// running median (O(size) work per pixel) and f32 bitwise radix selection over a shared-memory tile
// (32 count passes).
// CPU baseline, on all cores (row strips of an image padded by the border first):
//   u8, any size, and f32 3x3 / 5x5: cv::medianBlur (what a user would call; for u8 above 5x5 it
//     is OpenCV's histogram method);
//   f32 from 7x7: cv::medianBlur takes f32 only up to 5x5, so the baseline is gpulab's own:
//     std::nth_element over each window's keys, row strips on every core. methodNote(Side::Cpu)
//     says which ran.
#pragma once

#include <string>

#include "gpulab/filters/filter.hpp"

namespace gpulab {

inline constexpr int kMaxMedianSize = 63;

/// The GPU's selection (see above); every one exact. Forgetful takes sizes up to 7, histogram u8.
enum class MedianSelect { Auto, Forgetful, Radix, Histogram };
constexpr EnumText enumText(MedianSelect) { return {"median selection", "auto|forgetful|radix|histogram"}; }

class Median final : public Operation {
 public:
  /// size odd in [1, kMaxMedianSize]; std::invalid_argument with one sentence otherwise.
  explicit Median(int size, Border border = {BorderMode::Replicate, 0.0});

  int size() const noexcept { return size_; }
  const Border& border() const noexcept { return border_; }
  /// std::invalid_argument for forgetful above 7x7.
  void setSelect(MedianSelect select);
  MedianSelect select() const noexcept { return select_; }

  std::string name() const override { return "median"; }
  int reach() const override { return border_.mode == BorderMode::Wrap ? -1 : size_ / 2; }
  std::string describe() const override;
  ParamValues params() const override;
  /// "auto": the method follows the size and type. methodUsed: on the GPU "forgetful", "radix" or
  /// "histogram" ("copy" for 1x1), on the CPU "medianBlur" (OpenCV) or "nth_element" (gpulab's f32 baseline
  /// from 7x7), once a run on that side has happened; methodNote says it in words.
  std::string method() const override { return "auto"; }
  std::string methodUsed(Side side) const override;
  std::string methodNote(Side side) const override;
  ImageShape outputShape(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

  /// Whether runCpu uses cv::medianBlur for images of `type` (else gpulab's nth_element baseline).
  bool cpuUsesOpenCv(PixelType type) const noexcept { return type == PixelType::U8 || size_ <= 5; }

 private:
  int size_;
  Border border_;
  MedianSelect select_ = MedianSelect::Auto;
  mutable std::string cpuUsed_;
  std::string gpuUsed_;
};

struct OperationInfo;
/// Median as the registry lists it: size, border (default replicate), border-value, select.
OperationInfo medianInfo();

}  // namespace gpulab
