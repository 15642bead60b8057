// Per-channel histograms and line profiles of images: what the GUI's Histogram panel plots, and
// what auto-levels (filters/auto_levels.hpp) stretches from.
//
//   gpulab::HistogramGpu gpuHist;                    // owns its device counts; reused image after image
//   gpuHist.run(gpu, devicePhoto);                   // async on gpu.stream()
//   gpulab::Histogram h = gpuHist.download(gpu);     // blocking: waits for the stream
//   gpulab::Histogram c = gpulab::histogramCpu(photo);        // cv::calcHist, strips on all cores
//   gpulab::Histogram r = gpulab::histogramReference(photo);  // plain loops: the tests' oracle
//
// Binning: u8 has 256 bins, one per value (lo 0, hi 255). u16 (16-bit photos and scientific data,
// which rarely fill 0..65535) has `bins` bins over each channel's own range, lo its smallest and hi its
// largest sample, in integers: bin = (v - lo) * bins / (hi - lo + 1), so each bin holds the same number
// of values (+-1) and a channel spanning at most `bins` values gets one value a bin; all three
// implementations agree exactly. float (f32, f64) has `bins` bins spanning
// each channel's smallest to largest finite sample: bin = min(bins - 1, int((v - lo) * bins / (hi - lo)))
// in double (every sample in bin 0 when hi == lo); NaN and infinities are not counted. The GPU and the
// reference agree exactly on every type; OpenCV's calcHist bins floats in single precision, so the CPU
// baseline may put a float sample that lies on a bin edge into the neighbouring bin.
#pragma once

#include <cstdint>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab {

/// The bins of a float or u16 histogram unless asked otherwise; u8 always has 256.
inline constexpr int kDefaultFloatBins = 256;
/// The most bins a float or u16 histogram may have.
inline constexpr int kMaxFloatBins = 8192;

struct Histogram {
  int channels = 0;
  int bins = 0;
  std::vector<std::uint32_t> counts;  ///< channels x bins, channel-major
  std::vector<double> lo;             ///< per channel: the value of bin 0's lower edge (u8: 0; u16: smallest)
  std::vector<double> hi;             ///< per channel: the largest sample (u8: 255); lo > hi: none counted

  std::uint32_t at(int channel, int bin) const { return counts[static_cast<std::size_t>(channel) * bins + bin]; }
  /// Samples counted in `channel`.
  std::uint64_t total(int channel) const;
  /// The largest count of any bin of any channel (for plotting).
  std::uint32_t peak() const;
  friend bool operator==(const Histogram&, const Histogram&) = default;
};

/// Throws std::invalid_argument when `bins` is outside 1..kMaxFloatBins, or is not 256 for u8.
int histogramBins(PixelType type, int floatBins);

/// The oracle: plain loops in double, one thread.
Histogram histogramReference(const Image& image, int floatBins = kDefaultFloatBins);
/// The CPU baseline on all cores (cpuThreads()), over row strips whose counts are summed: cv::calcHist
/// per channel for u8 and f32 (float ranges found first by a parallel scan that skips non-finite
/// samples); f64, which calcHist does not take, and u16 (whose integer bins calcHist's float range
/// would not reproduce) by the binning formula in parallel loops after the same range scan. Cancel is
/// checked between channels.
Histogram histogramCpu(const Image& image, int floatBins = kDefaultFloatBins, const CpuControl& control = {});

/// The GPU side: the range of each u16 or float plane (atomics on order-preserving codes), then a histogram
/// per plane with the bins privatised in shared memory. Owns its device and pinned buffers (grown,
/// never shrunk), so running it image after image allocates nothing.
class HistogramGpu {
 public:
  explicit HistogramGpu(int floatBins = kDefaultFloatBins);
  int floatBins() const noexcept { return floatBins_; }
  /// Queues the histogram of `image` on gpu.stream() (asynchronous; the result stays on the device).
  void run(GpuContext& gpu, const DeviceImage& image);
  /// Copies the last run's result back (blocking on gpu.stream()). std::logic_error before any run.
  Histogram download(GpuContext& gpu);

  /// The last run's device buffers, for operations that continue on the GPU (auto-levels): counts
  /// (channels x bins of unsigned) and ranges (a kernels::RangeCode per channel).
  const void* deviceCounts() const noexcept { return counts_.data(); }
  const void* deviceRanges() const noexcept { return ranges_.data(); }
  int lastBins() const noexcept { return bins_; }

 private:
  int floatBins_;
  DeviceBuffer counts_;
  DeviceBuffer ranges_;
  PinnedBuffer hostCounts_;
  PinnedBuffer hostRanges_;
  int channels_ = 0;
  int bins_ = 0;
  PixelType type_ = PixelType::U8;
};

/// Samples along a line from (x0, y0) to (x1, y1) in image coordinates (pixel (i, j) covers
/// [i, i + 1) x [j, j + 1); clipped to the image), one per
/// pixel step along the longer axis, nearest pixel: values[c][i] in the image's units.
struct LineProfile {
  int channels = 0;
  std::vector<std::vector<double>> values;  ///< per channel, the samples from the start to the end
  std::vector<int> xs, ys;                  ///< the pixel each sample came from
};
/// Throws std::invalid_argument for an empty image. A line that is a single point gives one sample.
LineProfile lineProfile(const Image& image, double x0, double y0, double x1, double y1);

}  // namespace gpulab
