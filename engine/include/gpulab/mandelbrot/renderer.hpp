// The Mandelbrot and Julia sets on the GPU and (the same algorithm, the same image) on all CPU cores,
// at any depth: escape time in f32 or f64 while it reaches, perturbation beyond (view.hpp).
//
//   gpulab::MandelbrotRenderer renderer;                 // keeps the raw plane on the GPU across frames
//   renderer.compute(gpu, view);                         // async on gpu.stream(); throws before launch
//   renderer.colour(gpu, gpulab::Colouring{});           // async; reads the raw plane, never writes it
//   gpulab::Image rgba = renderer.downloadRgba(gpu);     // blocking
//   gpulab::Image raw = gpulab::renderRawCpu(view);      // the CPU baseline: the same raw plane
//
// Raw plane: float32, one value per pixel: the smooth iteration count nu = n + 1 - log2(ln|z_n| / ln R)
// with escape radius R = 2^8, in [n, n + 1) for a pixel that escapes at iteration n; -1
// (kMandelbrotInterior) for a pixel that does not escape within maxIterations. Integer escape counts
// instead of nu on request (MandelbrotOptions::smooth = false).
//
// Errors: bad views throw std::invalid_argument with one sentence; CUDA failures CudaError.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"  // CpuControl, OperationCancelled
#include "gpulab/mandelbrot/deep_reference.hpp"
#include "gpulab/mandelbrot/deep_renderer.hpp"
#include "gpulab/mandelbrot/palette.hpp"
#include "gpulab/mandelbrot/view.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Algorithm choices (the arithmetic of each: gpulab/kernels/mandelbrot.cuh)

enum class MandelbrotVariant : std::uint8_t {
  Optimized,  ///< four fmas a step in chunks of 8, interior tests, periodicity; warps of 8x4 pixels
  Plain,      ///< the textbook loop, one thread per pixel; no interior tests, no periodicity
};
constexpr EnumText enumText(MandelbrotVariant) { return {"Mandelbrot variant", "optimized|plain"}; }

/// GPU and CPU run the same variant the same way and give the same integer counts. The two variants
/// round differently and differ where the orbit is chaotic (see mandelbrot.cuh); the interior tests
/// change no count; periodicity (tolerance 1/64 of the pixel spacing) called interior at most 0.0035% of
/// the pixels in the views measured, all of them escaping after 1100 or more iterations.
/// The options every render shares (smooth values, CPU threads) and perturbation's (BLA) come from
/// DeepOptions (deep_view.hpp).
struct MandelbrotOptions : DeepOptions {
  MandelbrotVariant variant = MandelbrotVariant::Optimized;
  bool interiorTests = true;  ///< main cardioid and period-2 bulb (Mandelbrot mode); Optimized only
  bool periodicity = true;    ///< Brent cycle detection within 1/64 pixel; Optimized only
};

/// The perturbation options of `options`.
inline const DeepOptions& deepOptionsOf(const MandelbrotOptions& options) { return options; }

// ---------------------------------------------------------------------------------------------
// GPU renderer

/// Byte order of the coloured image: RGBA, or BGRA (a little-endian 0xAARRGGBB word: the layout of
/// QImage::Format_RGB32 and of most display surfaces, so a viewer copies it without converting).
enum class ChannelOrder : std::uint8_t { Rgba, Bgra };

/// What the last compute() did.
struct MandelbrotFrame {
  MandelbrotView view;
  MandelbrotOptions options;
  PrecisionChoice precision;
  std::optional<DeepFrame> deep;  ///< perturbation frames: the reference and its table
};

/// Keeps the raw plane, the RGBA image and the palette table on the GPU, reused from frame to frame (allocations only
/// when a frame is larger than every earlier one). Calls are asynchronous on gpu.stream() unless they say blocking. Not
/// thread-safe; one per worker thread.
class MandelbrotRenderer {
 public:
  MandelbrotRenderer(const MandelbrotRenderer&) = delete;
  MandelbrotRenderer& operator=(const MandelbrotRenderer&) = delete;

  MandelbrotRenderer();
  ~MandelbrotRenderer();

  /// Validates the view, chooses the precision and enqueues the escape-time kernel, or for a view
  /// past f64 the perturbation kernel (first making sure the reference orbit and its BLA table serve
  /// the view: computed with MPFR on this thread when the view has left the region the last reference
  /// serves, otherwise reused; `cancel` stops that work with OperationCancelled). Throws
  /// std::invalid_argument or PrecisionLimitError before anything is launched.
  const MandelbrotFrame& compute(GpuContext& gpu, const MandelbrotView& view, const MandelbrotOptions& options = {},
                                 const std::atomic<bool>* cancel = nullptr);
  /// Enqueues the kernels of the last compute() again, with nothing prepared again: what a benchmark
  /// times. Throws std::logic_error before the first compute().
  void relaunch(GpuContext& gpu);
  /// The perturbation path (null until the first deep view): its reference, table and step counter.
  DeepRenderer* deepRenderer() noexcept { return deep_.get(); }

  /// Enqueues the colouring of the last computed raw plane (read only) into the RGBA image (BGRA on
  /// request). Throws std::logic_error before the first compute().
  void colour(GpuContext& gpu, const Colouring& colouring, ChannelOrder order = ChannelOrder::Rgba);

  /// Blocking: the raw plane (rawWidth x rawHeight, 1 channel f32) and the coloured image
  /// (imageWidth x imageHeight RGBA u8) after the work queued so far.
  Image downloadRaw(GpuContext& gpu);
  Image downloadRgba(GpuContext& gpu);
  /// Blocking: the coloured image into caller memory, imageHeight rows of imageWidth * 4 bytes,
  /// `dstPitch` bytes apart (>= imageWidth * 4): one copy out of the pinned staging buffer.
  void downloadRgba(GpuContext& gpu, std::byte* dst, std::size_t dstPitch);

  /// A computed frame is held (false again after a device reset: recoverDevice, core/device.hpp).
  bool hasFrame() const noexcept { return hasFrame_ && epoch_ == deviceEpoch(); }
  const MandelbrotFrame& frame() const;
  /// The raw plane's device memory (valid until the next compute(); rows packed, rawWidth floats each).
  const float* rawDeviceData() const noexcept { return raw_.as<float>(); }
  /// Bytes of device memory held.
  std::size_t deviceBytes() const noexcept;

 private:
  void ensureDevice(GpuContext& gpu);
  Image download(GpuContext& gpu, const void* src, int width, int height, int channels, PixelType type);

  std::unique_ptr<DeepRenderer> deep_;  // the perturbation path, created for the first deep view
  DeviceBuffer raw_;
  DeviceBuffer rgba_;
  DeviceBuffer table_;
  PinnedBuffer staging_;
  PinnedBuffer tableStaging_;
  std::optional<Event> tableCopied_;  // the last table upload; created on first use (no GPU, no event)
  std::array<Rgba8, Palette::kTableSize> uploadedTable_{};
  bool tableUploaded_ = false;
  int device_ = -1;          // the device the buffers belong to
  std::uint64_t epoch_ = 0;  // the device epoch they belong to (a reset loses them)
  bool hasFrame_ = false;
  bool hasColour_ = false;
  MandelbrotFrame frame_;
};

/// Blocking convenience: compute + colour + download.
Image renderMandelbrot(GpuContext& gpu, MandelbrotRenderer& renderer, const MandelbrotView& view,
                       const Colouring& colouring, const MandelbrotOptions& options = {});

// ---------------------------------------------------------------------------------------------
// CPU baseline

/// The CPU baseline: the raw plane on every CPU core (dynamic row scheduling), the same algorithm
/// (options.variant, or perturbation past f64) and arithmetic as the GPU (explicit fma on both sides),
/// so integer escape counts match the GPU's. Like the GPU renderer it keeps the deep reference between
/// frames (deep_reference.hpp). Not thread-safe; one per worker thread.
class MandelbrotCpuRenderer {
 public:
  /// Blocking. Throws like choosePrecision; OperationCancelled when control.cancel is set (checked
  /// between rows and in the reference orbit); reports progress (0..1) on the calling thread.
  Image compute(const MandelbrotView& view, const MandelbrotOptions& options = {}, const CpuControl& control = {});
  /// What the last deep compute() did with the reference (reference and table times).
  const DeepReference::Update& lastReferenceUpdate() const noexcept { return update_; }

 private:
  DeepReference reference_;
  DeepReference::Update update_;
};

/// One CPU frame with a fresh renderer (the reference computed for this frame alone).
Image renderRawCpu(const MandelbrotView& view, const MandelbrotOptions& options = {}, const CpuControl& control = {});

/// Escape count of one point (Mandelbrot: z_0 = 0, c = (x, y)): the textbook loop (Plain) in float64,
/// the first n < maxIterations with |z_n| > 2^8, or -1.
int escapeCount(double x, double y, int maxIterations);
/// The interior tests the renderers use, in float64.
bool insideMainCardioid(double x, double y);
bool insidePeriod2Bulb(double x, double y);

/// Sum of escape counts of an integer-count raw plane, interior pixels counted as maxIterations:
/// the iterations a plain kernel performs, the numerator of "G iterations/s".
double countIterations(const Image& countsRaw, int maxIterations);

}  // namespace gpulab
