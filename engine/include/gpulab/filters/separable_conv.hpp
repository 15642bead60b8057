// Separable convolution: a kernel of rank 1 (an outer product, e.g. a Gaussian) or of low rank (2
// or 3: a sum of outer products) convolved as 1-D passes along rows and columns, with exactly
// Conv2D's semantics (conv2d.hpp: modes, correlate, borders, types, u8 rounding).
//
//   gpulab::SeparableTerms t = gpulab::separableTerms(spec.kernel);  // rank 1 for a Gaussian
//   gpulab::SeparableConv conv(spec);      // std::invalid_argument when the rank is above 3
//   conv.runGpu(gpu, in, out);             // async on gpu.stream(): one fused kernel
//   gpulab::Image cpu = conv.runCpu(in);   // cv::sepFilter2D per term, row strips on all cores
//
// Detection: the kernel K (kh rows, kw columns) goes through an SVD in double (cv::SVD);
// the rank is the fewest leading terms sum_t s_t u_t v_t^T whose largest deviation from K is at
// most kSeparableTolerance times K's largest |coefficient| (so rank-1 with 1e-9 noise counts as
// rank 1). Each term is split as col_t = sqrt(s_t) u_t (kh), row_t = sqrt(s_t) v_t (kw).
//
// GPU: launchSeparableConv (kernels/separable_conv.cuh): rank-1 kernels of 9 to 32 taps stream
// down strips of columns (each input row's row pass once, the column sums in registers); the
// others load a tile with the halo, run the row pass into shared memory and the column pass from
// it, summing the terms. Each writes once. u8 and f32 with Conv2D's channel rules (u8 RGBA in
// 'same' mode passes alpha through); the sums are float, so the result equals the direct one
// within float rounding (f32 ~1e-6 relative to the result's peak, u8 +-1 where a sum lands next to
// .5). f64 images take Conv2D's direct double kernel on the GPU (gpuTakes() says false). Kernels
// up to kSeparableMaxTaps a side.
// CPU: cv::sepFilter2D per term over the border-padded plane (copyMakeBorder), row strips on
// OpenCV's threads, summed in float (double for f64), then rounded to the sample type.
#pragma once

#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab {

/// The most outer products a separable convolution sums.
inline constexpr int kMaxSeparableRank = 3;
/// The largest side of a kernel the separable method takes (the fused kernel's taps).
inline constexpr int kMaxSeparableTaps = 127;
/// Largest deviation, relative to the largest |coefficient|, that still counts as that rank.
inline constexpr double kSeparableTolerance = 1e-6;

struct SeparableTerms {
  /// The fewest terms within the tolerance, 1..kernel side; 0 only for an empty kernel.
  int rank = 0;
  std::vector<double> singularValues;     ///< all of them, descending
  std::vector<std::vector<double>> cols;  ///< rank vectors of kh: K ~ sum_t cols[t] rows[t]^T
  std::vector<std::vector<double>> rows;  ///< rank vectors of kw
  double relativeError = 0;               ///< max |K - sum| / max |K| with `rank` terms
  /// Whether the separable method takes it: rank 1..kMaxSeparableRank.
  bool separable() const noexcept { return rank >= 1 && rank <= kMaxSeparableRank; }
};

/// The decomposition above (terms kept up to kMaxSeparableRank; `rank` is the true count even when
/// larger, and then cols / rows are empty). Blocking, O(kw kh min(kw, kh)).
SeparableTerms separableTerms(const Kernel2D& kernel, double tolerance = kSeparableTolerance);

class SeparableConv {
 public:
  /// Validates as Conv2D does, then decomposes the kernel; std::invalid_argument with one sentence
  /// when its rank is above kMaxSeparableRank ("the kernel is not separable ...").
  explicit SeparableConv(const FilterSpec& spec);

  const SeparableTerms& terms() const noexcept { return terms_; }
  int rank() const noexcept { return terms_.rank; }
  const Conv2D& direct() const noexcept { return direct_; }
  ImageShape outputShape(const ImageShape& in) const { return direct_.outputShape(in); }

  /// Whether runGpu runs the separable kernel for this sample type (u8, f32) rather than Conv2D.
  static bool gpuTakes(PixelType type) noexcept { return type == PixelType::U8 || type == PixelType::F32; }
  /// Asynchronous on gpu.stream(); `out` reallocated unless it has the output shape; not in place.
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);
  /// Thread-safe and blocking.
  Image runCpu(const Image& in, const CpuControl& control = {}) const;
  /// What runGpu computes for a u8 or f32 image, with the GPU's very tile code run on the host
  /// block by block (kernels::runSeparableConvTilesOnHost). Slow; for tests without a GPU.
  Image runTilesOnHost(const Image& in) const;

 private:
  FilterSpec spec_;
  Conv2D direct_;  // validation, shapes, anchors, the f64 GPU path and the reference
  SeparableTerms terms_;
};

}  // namespace gpulab
