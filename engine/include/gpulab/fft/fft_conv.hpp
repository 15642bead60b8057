// 2D convolution through the FFT, with exactly the semantics of direct convolution (Conv2D), and
// the cost model that picks direct or FFT for `--method auto`.
//
//   gpulab::FftConvolver conv(spec);           // spec.kernel, .correlate, .mode, .border (FilterSpec)
//   conv.runGpu(gpu, in, out);                 // async on gpu.stream(); out sized outputShape(in)
//   gpulab::Image cpu = conv.runCpu(photo);    // OpenCV cv::dft / mulSpectrums / idft, all cores
//
// Definition (the same formula as direct convolution). With k the kernel (kh rows, kw columns),
// ext the image extended by the border mode (borderIndex; Constant gives the border value), and
// true convolution:
//   out(y, x) = sum_{i<kh, j<kw} k(i, j) * ext(y + oy - i, x + ox - j)
// Correlation (spec.correlate, OpenCV filter2D with the anchor at the kernel's centre) is the same
// with k flipped in both axes. Output sizes and offsets match scipy.signal.convolve2d:
//   same   H x W                      oy = (kh-1)/2, ox = (kw-1)/2   (integer division)
//   full   (H+kh-1) x (W+kw-1)        oy = 0,        ox = 0
//   valid  (H-kh+1) x (W-kw+1)        oy = kh-1,     ox = kw-1      (the kernel must fit the image)
// so e.g. scipy's boundary='symm' is reflect, 'wrap' is wrap and 'fill' is constant.
//
// Method on the GPU, one of two:
// - Padded: P(u, v) = ext(u + oy - (kh-1), v + ox - (kw-1)) for u < Ho+kh-1, v < Wo+kw-1, zero
//   beyond, in an FFT-friendly Hp x Wp plane (Hp >= Ho+kh-1, Wp >= Wo+kw-1, sizes 2^a 3^b 5^c 7^d);
//   then out(y, x) = (P (*) k)(y + kh-1, x + kw-1), where the circular product never wraps.
// - Circular, when W and H are themselves such sizes (4096, 1920x1080, 6000x4000, ...) in 'same'
//   and 'valid' mode: the transforms run on the image itself (W x H, no padding; f32 and f64 planes
//   are read, and in 'same' mode written, in place in their pitched images, with no copy), with the
//   kernel placed on the W x H torus shifted by (ox, oy), so out(y, x) = (img (*) k')(y, x). That
//   is exact wherever the kernel's footprint stays inside the image: everywhere in 'valid' mode and
//   with the wrap border; otherwise the border strips where it would wrap (kh-1-oy rows at the top,
//   oy at the bottom, likewise columns) are recomputed by the padded method on those bands alone
//   (top and bottom batched in one transform, left and right in another: small planes, whatever
//   the kernel size). It is taken when the strips cover at most half the image, and not in place
//   in 'same' mode (the bands need the input) unless the border is wrap. It moves about half the
//   bytes of the padded method (no pad and crop passes, and a plane of W*H rather than Hp*Wp).
// The kernel's spectrum is computed once per transform size, shift and precision and kept. The
// multiply folds in the inverse's 1/(Hp*Wp).
//
// Types and borders as Conv2D: u8 with 1, 3 or 4 channels (u8 RGBA in 'same' mode passes alpha
// through unchanged; in 'full' and 'valid' every channel is convolved; results rounded to nearest
// even and saturated), f32 and f64 with 1..4 channels (transforms in float, resp. double). The
// constant border value is converted to the sample type first (u8: rounded and saturated).
// Kernels 1x1 up to 1024x1024, larger than the image too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/fft/fft.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab {

/// The largest kernel side FftConvolver accepts.
inline constexpr int kMaxFftKernelSide = 1024;

/// Which transform sizes count as fast: cuFFT's radices 2, 3, 5, 7, or OpenCV's cv::dft (2, 3, 5).
enum class FftSizeRule : std::uint8_t { Cufft, OpenCv };

/// The smallest size >= n (n >= 1) of the form 2^a 3^b 5^c 7^d (Cufft) or 2^a 3^b 5^c (OpenCv).
int nextFftSize(int n, FftSizeRule rule = FftSizeRule::Cufft);

struct FftConvGeometry {
  int outWidth = 0;
  int outHeight = 0;
  int originX = 0;       ///< ox in out(y, x) = sum k(i, j) ext(y + oy - i, x + ox - j)
  int originY = 0;       ///< oy
  int neededWidth = 0;   ///< Wo + kw - 1: the part of the padded plane the result depends on
  int neededHeight = 0;  ///< Ho + kh - 1
  int paddedWidth = 0;   ///< the FFT size, >= neededWidth (the image's width when circular)
  int paddedHeight = 0;
  bool circular = false;  ///< FftConvolver's circular method (see above); set by FftConvolver::geometry only
};

/// Output size, offsets and FFT size of a width x height image convolved with a kw x kh kernel.
/// Throws std::invalid_argument for 'valid' when the kernel does not fit inside the image.
FftConvGeometry fftConvGeometry(int width, int height, int kw, int kh, ConvMode mode,
                                FftSizeRule rule = FftSizeRule::Cufft);

/// Throws std::invalid_argument with one sentence when spec cannot be convolved through the FFT:
/// an empty or ragged kernel (values.size() != width * height), a side beyond kMaxFftKernelSide,
/// a coefficient or border value that is not finite.
void validateFftConvSpec(const FilterSpec& spec);

class FftConvolver {
 public:
  /// Takes spec.kernel, spec.correlate, spec.mode and spec.border (spec.op is not consulted).
  explicit FftConvolver(const FilterSpec& spec);
  ~FftConvolver();
  FftConvolver(FftConvolver&&) noexcept;
  FftConvolver& operator=(FftConvolver&&) noexcept;

  /// "conv 31x31 same reflect101 fft" (and "correlate" when set).
  std::string describe() const;
  /// Throws std::invalid_argument for an empty image, a channel count Conv2D does not take, or a
  /// 'valid' output that would be empty.
  ImageShape outputShape(const ImageShape& in) const;
  /// The GPU's geometry for a width x height image, out of place (in place, 'same' mode with a
  /// border other than wrap takes the padded method).
  FftConvGeometry geometry(int width, int height) const;

  /// Creates plans, the kernel spectrum and buffers for this input now (out is sized too), so a
  /// timed run pays for none of them. Returns the plan creation ms. Blocking.
  double prepare(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);
  /// Convolves `in` into `out`, reallocated when it is not outputShape(in). Asynchronous on
  /// gpu.stream(). `out` may be `in` only in 'same' mode.
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);
  double takePlanCreationMs() noexcept { return plans_.takeCreationMs(); }
  const FftPlanCache& plans() const noexcept { return plans_; }

  /// CPU baseline: OpenCV cv::dft (CCS spectra, optimal sizes), cv::mulSpectrums, cv::idft, the
  /// kernel's spectrum cached per padded size. Thread-safe; blocking.
  Image runCpu(const Image& in, const CpuControl& control = {}) const;

  /// Each stage of runGpu timed alone (FftStageTimes); `out` is correct afterwards.
  /// pad: border padding, or conversion to the transform's type (the circular method on f32 / f64
  /// has none: 0); crop: crop and conversion, and the circular method's border bands (each a whole
  /// padded convolution of its own).
  FftStageTimes profileGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, TimingOptions options = {});
  /// Bytes the GPU path must move at least with one-pass transforms: pad (image in, plane out),
  /// forward, multiply (both spectra in, one out), inverse, crop (result in, output out).
  std::size_t pipelineBytesMoved(const ImageShape& in) const;

 private:
  template <class T, class Real>
  void enqueue(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, int stages);
  template <class T, class Real>
  void enqueuePadded(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, std::span<const PixelRect> windows,
                     int stages);
  template <class T>
  void copyAlpha(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);
  template <class T, class Real>
  void enqueueCircular(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, const FftConvGeometry& g, int stages);
  template <class Real>
  const void* kernelSpectrum(GpuContext& gpu, int width, int height, int shiftX, int shiftY);
  bool circularFits(int width, int height) const;

  FilterSpec spec_;
  std::vector<double> taps_;  // the kernel as convolved: flipped for correlation; kh rows of kw
  FftPlanCache plans_;
  DeviceBuffer real_;
  DeviceBuffer spectrum_;
  DeviceBuffer deviceTaps_;
  DeviceBuffer rangeBits_;         // the input's largest finite |sample|, for range scaling
  DeviceImage scaledInput_;        // the input times 2^-e, only for extreme ranges (internal/fft_range.hpp)
  std::vector<float> tapsSingle_;  // host source of deviceTaps_ for float transforms
  // (width, height, shiftX, shiftY, precision) -> the kernel's half spectrum
  std::map<std::tuple<int, int, int, int, FftPrecision>, DeviceBuffer> kernelSpectra_;
  struct CpuCache;
  std::unique_ptr<CpuCache> cpu_;
};

// ---------------------------------------------------------------------------------------------
// Cost model for `--method auto`

enum class ConvAlgorithm : std::uint8_t { Direct, Fft, Separable };
constexpr EnumText enumText(ConvAlgorithm) { return {"convolution algorithm", "direct|fft|separable"}; }

/// Estimates both methods from throughputs measured on the running machine:
///   direct ms ~ a * (W * H * kw * kh * channels) + b
///   fft ms    ~ c * (channels * Np * log2 Np) + d,   Np = Wp * Hp of the 'same' geometry
/// and picks the cheaper. calibrate*() measure a, b, c, d once (blocking; `gpulab-cli bench`
/// reports the time as the first auto row's prepare_ms); the owner keeps the model. The direct timings come from the
/// direct implementation through a callback, so the model measures the kernels it will choose between.
class ConvCostModel {
 public:
  struct Line {
    double msPerUnit = 0;
    double fixedMs = 0;
    double at(double units) const noexcept { return msPerUnit * units + fixedMs; }
  };
  /// Returns the median milliseconds of one direct convolution of a width x height f32 image with a
  /// kw x kh kernel (GPU compute only for calibrateGpu; wall time for calibrateCpu).
  using DirectTimer = std::function<double(int width, int height, int kw, int kh)>;

  ConvCostModel() = default;  ///< uncalibrated: choose() throws
  ConvCostModel(Line direct, Line fft, FftSizeRule rule = FftSizeRule::Cufft);

  bool calibrated() const noexcept { return calibrated_; }
  const Line& direct() const noexcept { return direct_; }
  const Line& fft() const noexcept { return fft_; }

  /// The separable method (separable_conv.hpp), fitted by its owner from the separable kernel's own
  /// timings (conv_method.cpp) over separableUnits:
  ///   separable ms ~ e * (W * H * channels * (rank * (kw + kh) + kSeparablePixelTaps)) + f
  /// (each pixel's load and store count as kSeparablePixelTaps taps). Without it, choose() never
  /// picks Separable.
  static constexpr int kSeparablePixelTaps = 8;
  void setSeparable(Line separable) noexcept {
    separable_ = separable;
    hasSeparable_ = true;
  }
  bool hasSeparable() const noexcept { return hasSeparable_; }
  const Line& separable() const noexcept { return separable_; }
  static double separableUnits(int width, int height, int kw, int kh, int rank, int channels = 1);
  double separableMs(int width, int height, int kw, int kh, int rank, int channels = 1) const;

  /// The input that calibration times: width x height float32 noise in [-1, 1), the same on every
  /// call (a hash of the sample index, about 1 ns a sample: the timings do not depend on the values,
  /// and std::mt19937 took longer than the measurements themselves on 4096^2).
  static Image calibrationImage(int width, int height);

  static double directUnits(int width, int height, int kw, int kh, int channels = 1);
  static double fftUnits(int width, int height, int kw, int kh, int channels = 1,
                         FftSizeRule rule = FftSizeRule::Cufft);
  double directMs(int width, int height, int kw, int kh, int channels = 1) const;
  double fftMs(int width, int height, int kw, int kh, int channels = 1) const;
  /// Direct or Fft, whichever the model expects to be faster (Direct on a tie); with separableRank
  /// 1..3 (the kernel's, when the separable method can take it) and a separable line, Separable
  /// too when it is the cheapest of the three. Throws std::logic_error when the model is not
  /// calibrated.
  ConvAlgorithm choose(int width, int height, int kw, int kh, int channels = 1, int separableRank = 0) const;
  /// "direct 1.2e-09 ms/MAC + 0.004 ms, fft 3.4e-08 ms/unit + 0.02 ms" (", separable ..." when set).
  std::string describe() const;

  /// Least-squares line through (units, ms) points; the intercept is clamped at 0 (and the slope
  /// refitted through the origin) and the slope at >= 0. Throws std::invalid_argument with fewer
  /// than two distinct unit values.
  static Line fit(std::span<const std::pair<double, double>> unitsAndMs);

  /// Measures FFT convolution on this GPU (FftConvolver, f32, 15x15 and 31x31 kernels on 1024^2 to
  /// 4096^2 images) and direct convolution through `directMs` (9x9 to 21x21 kernels, 1024^2 to
  /// 4096^2), and fits both lines. The largest images exceed the L2 cache, so the lines hold for
  /// large photos. Blocking; the first auto row of `gpulab-cli bench` reports its time as prepare_ms.
  static ConvCostModel calibrateGpu(GpuContext& gpu, const DirectTimer& directMs);
  /// The same on the CPU (FftConvolver::runCpu, wall time, 256^2 to 1024^2).
  static ConvCostModel calibrateCpu(const DirectTimer& directMs);

 private:
  Line direct_;
  Line fft_;
  Line separable_;
  FftSizeRule rule_ = FftSizeRule::Cufft;
  bool calibrated_ = false;
  bool hasSeparable_ = false;
};

}  // namespace gpulab
