// Grey-level morphology: erosion (the minimum over a structuring element), dilation (the maximum),
// opening (erosion, then dilation) and closing (dilation, then erosion), with OpenCV's elements:
//   rect     the size x size square;
//   ellipse  getStructuringElement(MORPH_ELLIPSE, size x size): per row i, dy = i - size/2, the
//            columns within size/2 +- saturate(c sqrt((r^2 - dy^2) / r^2)), r = c = size/2;
// anchored at (size/2, size/2), not reflected for dilation (as cv::dilate). size 1 to 63.
//
// Border policy. `ignore` (the default) is OpenCV's morphology default
// (morphologyDefaultBorderValue): pixels outside the image never win, as if they were +inf for
// erosion and -inf for dilation (255 / 0 for u8). The project's modes also apply: reflect101,
// reflect, replicate and wrap read the mapped pixel; constant reads the value (in every step of an
// opening or closing, as cv::morphologyEx with that borderValue).
//
//   gpulab::Morphology open(gpulab::MorphOp::Open, gpulab::MorphShape::Ellipse, 9);
//   open.runGpu(gpu, in, out);                      // async on gpu.stream(); not in place
//   gpulab::Image cpu = open.runCpu(photo);         // cv::erode / cv::dilate, strips on all cores
//   gpulab::Image ref = open.runReference(photo);   // loops over the element
//
// Types: u8 and f32 with 1..4 channels, per channel (u8 RGBA: alpha passes through). GPU, CPU and
// reference agree exactly (a minimum or maximum picks a sample). GPU: the rectangle as two
// separable passes (rows, then columns), the ellipse by its rows' spans; intermediate planes in
// gpu.scratch().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab {

enum class MorphOp { Erode, Dilate, Open, Close };
enum class MorphShape { Rect, Ellipse };
constexpr EnumText enumText(MorphOp) { return {"morphology operation", "erode|dilate|open|close"}; }
constexpr EnumText enumText(MorphShape) { return {"structuring element", "rect|ellipse"}; }

inline constexpr int kMaxMorphSize = 63;

/// The element's rows as spans of columns [first, end): getStructuringElement's ones.
std::vector<std::pair<int, int>> morphSpans(MorphShape shape, int size);

class Morphology final : public Operation {
 public:
  /// size in [1, kMaxMorphSize]; border nullopt: `ignore` (see above).
  Morphology(MorphOp op, MorphShape shape, int size, std::optional<Border> border = std::nullopt);
  ~Morphology() override;
  Morphology(Morphology&&) noexcept;
  Morphology& operator=(Morphology&&) noexcept;

  MorphOp op() const noexcept { return op_; }
  MorphShape shape() const noexcept { return shape_; }
  int size() const noexcept { return size_; }

  std::string name() const override { return "morph"; }
  /// Opening and closing are two passes, so they reach twice the element's radius; -1 with wrap.
  int reach() const override;
  std::string describe() const override;
  ParamValues params() const override;
  ImageShape outputShape(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

 private:
  MorphOp op_;
  MorphShape shape_;
  int size_;
  std::optional<Border> border_;
  DeviceBuffer spans_;  // the element's spans on spansDevice_
  std::vector<int> hostSpans_;
  int spansDevice_ = -1;
};

struct OperationInfo;
/// Morphology as the registry lists it: morph, shape, size, border (ignore | the modes), border-value.
OperationInfo morphologyInfo();

}  // namespace gpulab
