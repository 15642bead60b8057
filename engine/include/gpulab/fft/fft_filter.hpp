// Frequency-domain filters (low-pass, high-pass, band-pass, band-stop; ideal, Gaussian, Butterworth)
// and the log-magnitude spectrum for display, on the GPU (cuFFT), the CPU (OpenCV cv::dft, all
// cores) and as a naive-DFT reference.
//
//   gpulab::FftFilter filter({.band = FreqBand::Lowpass, .shape = FreqShape::Gaussian, .cutoff = 0.2});
//   filter.prepareGpu(gpu, in, out);     // optional: creates the cuFFT plans now; returns their ms
//   filter.runGpu(gpu, in, out);         // async on gpu.stream()
//   gpulab::Image cpu = filter.runCpu(photo);
//
// Frequencies. Bin (kx, ky) of an N_x x N_y transform has fx = sx / N_x and fy = sy / N_y cycles per
// pixel, sx and sy the signed bin indices (k for k <= N/2, k - N above). Its normalised radius is
//   r = sqrt((fx / 0.5)^2 + (fy / 0.5)^2)
// so r = 1 at Nyquist along either axis (also on non-square images) and r = sqrt(2) in the corners.
// Cutoffs c (and c2 for band filters) are values of r: fractions of Nyquist.
//
// Gains, with L(c) the low-pass:
//   ideal        L = 1 if r <= c, else 0
//   gaussian     L = exp(-r^2 / (2 c^2))            (L(c) = 0.607)
//   butterworth  L = 1 / (1 + (r / c)^(2n))         (L(c) = 0.5)
//   lowpass L(c); highpass 1 - L(c); bandpass L(c2) * (1 - L(c)); bandstop 1 - L(c2) * (1 - L(c)),
//   with 0 < c < c2 for the band filters.
//
// Pipeline: forward real FFT, one fused kernel that computes the gain of each half-spectrum bin on
// the fly and multiplies it in together with the inverse's 1/(N_x N_y) normalisation (no mask buffer),
// inverse real FFT. f32 transforms with power-of-two sides (32..8192) take three passes of our own
// kernels instead (takesFusedPath): rows forward; each column's FFT, gain and inverse FFT at once;
// rows inverse. Padding None transforms the image as it is (periodic: opposite edges meet);
// Mirror transforms the 2W x 2H image reflected about its right and bottom edges (cba|abc), which is
// continuous across the period, so edges do not ring; the W x H top-left quarter is the result.
//
// Types: u8 (1..4 channels: each channel apart; with 2 or 4 channels the last is alpha and passes
// through unchanged; results rounded to nearest and saturated), f32 and f64 (every channel filtered;
// f32 through R2C/C2R in float, f64 through D2Z/Z2D in double). The output has the input's shape.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/fft/fft.hpp"

namespace gpulab {

/// Which frequencies pass: below the cutoff, above it, between the two cutoffs, or all but those.
enum class FreqBand : int { Lowpass = 0, Highpass = 1, Bandpass = 2, Bandstop = 3 };
/// How the gain falls from pass to stop (formulas above).
enum class FreqShape : int { Ideal = 0, Gaussian = 1, Butterworth = 2 };

enum class FftPadding : std::uint8_t { None, Mirror };

/// The largest Butterworth order accepted.
inline constexpr int kMaxButterworthOrder = 100;

/// The smallest cutoff accepted (a fraction of Nyquist): far below the lowest non-zero bin of any
/// transform (2 / 65536), and large enough that c^2 is a normal float, so the gain at DC is never
/// 0/0 (a cutoff of 1e-320 gave an all-NaN result).
inline constexpr double kMinFftCutoff = 1e-6;

struct FftFilterSpec {
  FreqBand band = FreqBand::Lowpass;
  FreqShape shape = FreqShape::Gaussian;
  double cutoff = 0.25;  ///< c, fraction of Nyquist; > 0
  double cutoff2 = 0.5;  ///< band filters only: c2 > c
  int order = 2;         ///< Butterworth only: 1..kMaxButterworthOrder
  FftPadding padding = FftPadding::None;
};

/// Throws std::invalid_argument with one sentence when the spec is unusable: a cutoff that is not a
/// positive finite number, cutoff2 <= cutoff for band filters, an order outside 1..100.
void validateFftFilterSpec(const FftFilterSpec& spec);

constexpr EnumText enumText(FreqBand) { return {"frequency band", "lowpass|highpass|bandpass|bandstop"}; }
constexpr EnumText enumText(FreqShape) { return {"filter shape", "ideal|gaussian|butterworth"}; }
constexpr EnumText enumText(FftPadding) { return {"padding", "none|mirror"}; }

/// The filter's gain at normalised radius r (formulas above), evaluated in double by the same code
/// the GPU kernel runs in float or double.
double fftFilterGain(const FftFilterSpec& spec, double r);
/// Normalised radius r of DFT bin (kx, ky), 0 <= kx < fftWidth, 0 <= ky < fftHeight.
double normalisedFrequency(int kx, int ky, int fftWidth, int fftHeight);
/// Channels the filter transforms: all, except alpha (the last of a 2- or 4-channel u8 image).
int fftFilteredChannels(int channels, PixelType type) noexcept;

class FftFilter final : public Operation {
 public:
  /// Validates (validateFftFilterSpec).
  explicit FftFilter(const FftFilterSpec& spec);

  const FftFilterSpec& spec() const noexcept { return spec_; }
  /// Changes the filter, keeping the plans and buffers (a live cutoff slider reuses them all).
  /// Validates first; on a bad spec throws and keeps the old one.
  void setSpec(const FftFilterSpec& spec);
  std::string name() const override { return "fft-filter"; }
  /// "lowpass gaussian c=0.25 pad=none", "bandpass butterworth n=4 c=0.1..0.3 pad=mirror".
  std::string describe() const override;
  ParamValues params() const override;
  std::string method() const override { return "fft"; }
  /// Throws std::invalid_argument for an empty image or more than 4 channels.
  ImageShape outputShape(const ImageShape& in) const override;
  /// The transform size for a width x height image: itself, or 2W x 2H with mirror padding.
  std::pair<int, int> fftSize(int width, int height) const noexcept;

  /// Creates the cuFFT plans and buffers runGpu(gpu, in, out) will use, so the first timed run
  /// does not pay for them; `out` is (re)allocated to in's shape. Returns the plan creation ms
  /// (0 when they already existed). Blocking.
  double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  /// Filters `in` into `out` (reallocated when its shape differs; `out` may be `in`). Asynchronous on
  /// gpu.stream(); creates plans on first use of a shape (see takePlanCreationMs).
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  /// Plan creation ms since the last call (0 when every plan was cached).
  double takePlanCreationMs() noexcept { return plans_.takeCreationMs(); }
  const FftPlanCache& plans() const noexcept { return plans_; }

  /// CPU baseline: OpenCV cv::dft / cv::idft (complex spectrum) per channel, the same gains. Blocking.
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  /// Naive DFT in double; transforms (after padding) up to kNaiveDftMaxPixels. Blocking, slow.
  Image runReference(const Image& in) const override;

  /// Each stage of runGpu timed alone on gpu.stream() (pad and crop are zero-rep Stats when the
  /// image is transformed in place: f32/f64 without padding). `out` holds the filtered image after.
  FftStageTimes profileGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, TimingOptions options = {});

  /// True when runGpu takes the fused path for `in`: f32 transforms (u8 and f32 images) whose
  /// sides (after padding) are powers of two from 32 to 8192. Three passes of our own FFT kernels,
  /// each one read and one write: rows forward, then every column's forward FFT, gain and inverse
  /// FFT in shared memory, then rows inverse. Other sizes and f64 run on cuFFT (forward, mask
  /// kernel, inverse). profileGpu's forward, multiply and inverse are those three passes.
  bool takesFusedPath(const ImageShape& in) const;
  /// Keeps every shape on cuFFT (default false): the comparison `fft --bench` and the bench's
  /// fft-lowpass-cufft row print.
  void setCufftOnly(bool cufftOnly) noexcept { cufftOnly_ = cufftOnly; }

  /// Bytes the GPU path must move at least when each transform is one pass (read its input once,
  /// write its output once) and the multiply one read and one write of the half spectra (on the
  /// fused path: the same bytes, with the column pass in the multiply's place).
  std::size_t pipelineBytesMoved(const ImageShape& in) const;

 private:
  template <class T, class Real>
  void enqueue(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, int stages);

  FftFilterSpec spec_;
  FftPlanCache plans_;
  DeviceBuffer real_;       // padded or converted planes (packed), when the image is not transformed in place
  DeviceBuffer spectrum_;   // half spectra of every filtered channel
  DeviceBuffer rangeBits_;  // the input's largest finite |sample|, for range scaling
  DeviceBuffer twiddles_;   // the fused path's twiddle table (kernels::kFftTwiddleCount float2)
  bool cufftOnly_ = false;
  DeviceImage scaledInput_;  // the input times 2^-e, only for extreme ranges (internal/fft_range.hpp)
};

// ---------------------------------------------------------------------------------------------
// Spectrum for display

/// log(1 + |F|) of the image's luminance (1 channel: itself; 2: the first; 3 or 4:
/// 0.299 R + 0.587 G + 0.114 B), unnormalised forward DFT, centred as numpy.fft.fftshift (DC at
/// pixel (W/2, H/2)), full W x H (the half cuFFT leaves out is read through Hermitian symmetry),
/// as a one-channel f32 image. Computed in single precision for every input type.
class FftSpectrum final : public Operation {
 public:
  std::string name() const override { return "fft-spectrum"; }
  std::string describe() const override { return "spectrum log(1+|F|) of the luminance, centred"; }
  ParamValues params() const override { return {}; }
  std::string method() const override { return "fft"; }
  /// W x H x 1 f32 for a W x H input.
  ImageShape outputShape(const ImageShape& in) const override;
  /// Creates the plans now; returns their creation ms.
  double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  /// `out` becomes W x H x 1 f32 (reallocated when its shape differs). Asynchronous on gpu.stream().
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  double takePlanCreationMs() noexcept { return plans_.takeCreationMs(); }
  /// OpenCV cv::dft on the host. Blocking.
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  /// Naive DFT in double (up to kNaiveDftMaxPixels).
  Image runReference(const Image& in) const override;

 private:
  FftPlanCache plans_;
  DeviceBuffer luminance_;
  DeviceBuffer spectrum_;
};

/// The luminance above as a one-channel f32 host image (computed in float, as on the GPU).
Image luminanceOf(const Image& in);

enum class ColorMap : std::uint8_t { Gray, Viridis, Inferno };
constexpr EnumText enumText(ColorMap) { return {"colour map", "gray|viridis|inferno"}; }

/// The colour at t in [0, 1] (clamped; NaN gives the t = 0 colour). Viridis and inferno are
/// matplotlib's maps (CC0), sampled at every 8th of their 256 entries and interpolated linearly
/// (within 2 of the full table in 8-bit).
std::array<std::uint8_t, 3> colorMapLookup(ColorMap map, double t) noexcept;
/// RGBA u8 (alpha 255) of a one-channel f32 or f64 image, mapping [lo, hi] linearly onto the map;
/// without lo/hi the image's finite minimum and maximum. Throws std::invalid_argument for other images.
Image applyColorMap(const Image& values, ColorMap map);
Image applyColorMap(const Image& values, ColorMap map, double lo, double hi);

}  // namespace gpulab
