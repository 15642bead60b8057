// Auto-levels: each channel stretched linearly so that its `low` percentile goes to black and its
// `high` percentile to white, the percentiles read from the channel's histogram
// (analysis/histogram.hpp).
//
//   gpulab::AutoLevels levels(0.5, 99.5);   // percent
//   levels.runGpu(gpu, in, out);            // histogram, levels and stretch, all async on gpu.stream()
//   gpulab::Image cpu = levels.runCpu(photo);        // calcHist + cv::LUT (u8), 65536-entry tables
//                                                    // (u16), strips on all cores
//   gpulab::Image ref = levels.runReference(photo);  // sorts the samples: the oracle
//
// The levels of a channel with n counted samples are the samples of rank floor(low% * n) and
// ceil(high% * n) - 1 (0-based): for u8 those values themselves; for u16 the first value of the
// histogram bin (4096 integer bins between the channel's min and max, analysis/histogram.hpp) holding
// the first and the last value of the bin holding the second (the values themselves when the channel
// spans at most 4096 values); for float the lower edge of the
// histogram bin (4096 bins between the channel's finite min and max) holding the first and the upper
// edge of the bin holding the second. Output, the input's type and shape:
//   u8:    round-half-up of (v - lo) * 255 / (hi - lo), saturated (integer arithmetic: all three
//          implementations agree exactly);
//   u16:   round-half-up of (v - lo) * 65535 / (hi - lo), saturated (integer arithmetic, exact
//          everywhere): a 16-bit image stays 16-bit over the full 0..65535 (front ends pass u16 to it
//          as is; filters/sample_depth.hpp converts to f32 only for operations that refuse u16);
//   float: (v - lo) / (hi - lo) in double, clamped to [0, 1]; NaN stays NaN. GPU and reference agree
//          exactly; the CPU baseline's float levels come from calcHist (single precision bins) and may
//          sit one bin away, 1/4096 of the channel's range.
// A channel whose levels meet (hi <= lo: constant) is left unchanged. RGBA u8 and u16 keep their alpha.
// In place is allowed on the GPU.
#pragma once

#include <memory>
#include <string>

#include "gpulab/analysis/histogram.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab {

/// The histogram bins auto-levels uses for float and u16 images.
inline constexpr int kAutoLevelsFloatBins = 4096;

class AutoLevels final : public Operation {
 public:
  /// Percentages, 0 <= low < high <= 100; std::invalid_argument otherwise.
  explicit AutoLevels(double lowPercent = 0.5, double highPercent = 99.5);

  double lowPercent() const noexcept { return low_; }
  double highPercent() const noexcept { return high_; }

  std::string name() const override { return "auto-levels"; }
  std::string describe() const override;
  ParamValues params() const override;
  ImageShape outputShape(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

  /// The levels {lo, hi} of each channel as runCpu / runReference find them (for tests and the GUI).
  std::vector<std::pair<double, double>> levelsCpu(const Image& in) const;
  std::vector<std::pair<double, double>> levelsReference(const Image& in) const;

 private:
  double low_;
  double high_;
  HistogramGpu histogram_{kAutoLevelsFloatBins};
  DeviceBuffer levels_;
};

struct OperationInfo;
/// Auto-levels as the registry lists it: low, high (percent).
OperationInfo autoLevelsInfo();

}  // namespace gpulab
