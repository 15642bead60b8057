// The Mandelbrot and Julia sets by escape time, on the GPU and (the same algorithm, the same image) on
// all CPU cores.
//
//   gpulab::MandelbrotView view;                         // centre, width, size, iterations, precision
//   gpulab::MandelbrotRenderer renderer;                 // keeps the raw plane on the GPU across frames
//   renderer.compute(gpu, view);                         // async on gpu.stream(); throws before launch
//   renderer.colour(gpu, gpulab::Colouring{});           // async; reads the raw plane, never writes it
//   gpulab::Image rgba = renderer.downloadRgba(gpu);     // blocking
//   gpulab::Image raw = gpulab::renderRawCpu(view);      // the CPU baseline: the same raw plane
//
// Raw plane: float32, one value per pixel: the smooth iteration count nu = n + 1 - log2(ln|z_n| / ln R)
// with escape radius R = 2^8, in [n, n + 1) for a pixel that escapes at iteration n; -1
// (kMandelbrotInterior) for a pixel that does not escape within maxIterations. Integer escape counts
// instead of nu on request (MandelbrotOptions::smooth = false). Pixel (i, j) sits at
// (centerX + (i + 0.5 - W/2) h, centerY - (j + 0.5 - H/2) h), h = width / W: row 0 is the top.
//
// Precision (choosePrecision): relative spacing rho = h / max(|centerX|, |centerY|, 1). A float with a
// p-bit significand steps by at most 2^(1-p) * s near a coordinate of magnitude s; we want neighbouring
// pixels at least 8 such steps apart (3 bits below the pixel spacing). float32 (p = 24): rho >= 2^-20
// (9.5e-7); float64 (p = 53): rho >= 2^-49 (1.8e-15). Below that the view cannot be rendered by escape
// time in float64 and PrecisionLimitError says so; the ladder (precisionLadder) is where a
// perturbation renderer will plug in.
//
// Errors: bad views throw std::invalid_argument with one sentence; CUDA failures CudaError.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"  // CpuControl, OperationCancelled
#include "gpulab/core/timing.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab {

inline constexpr float kMandelbrotInterior = -1.0f;       ///< raw value of pixels that never escape
inline constexpr int kMaxMandelbrotIterations = 1 << 24;  ///< float32 holds every count up to 2^24 exactly
inline constexpr double kMandelbrotMaxCoordinate = 10.0;  ///< |centre|, |julia c| limit per axis
inline constexpr double kMandelbrotMaxWidth = 100.0;
inline constexpr int kMandelbrotMaxSupersample = 4;

// ---------------------------------------------------------------------------------------------
// Precision

/// What a view asks for (Auto, F32, F64) and what a render uses (F32, F64).
enum class Precision : std::uint8_t { Auto, F32, F64 };

constexpr EnumText enumText(Precision) { return {"precision", "auto|f32|f64"}; }

/// One rung of the precision ladder: escape time in this precision covers views whose relative
/// spacing is at least minRelativeSpacing.
struct PrecisionRung {
  Precision precision;
  double minRelativeSpacing;
};
/// Coarsest (fastest) first: f32 down to 2^-20, f64 down to 2^-49. A perturbation rung (a float64
/// reference orbit with float deltas) goes after f64, with its own case in MandelbrotRenderer::compute.
std::span<const PrecisionRung> precisionLadder() noexcept;

/// The view is deeper than the last rung of the ladder covers.
class PrecisionLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Views

struct MandelbrotView {
  double centerX = -0.5;
  double centerY = 0.0;
  double width = 3.0;  ///< of the image, in the complex plane
  int imageWidth = 1920;
  int imageHeight = 1080;
  int maxIterations = 1000;  ///< 1 .. 2^24; autoIterations(width) for a zoom-dependent default
  Precision precision = Precision::Auto;
  bool julia = false;  ///< true: the Julia set of (juliaX, juliaY); z_0 = the pixel
  double juliaX = 0.0;
  double juliaY = 0.0;
  int supersample = 1;  ///< 1..4: the raw plane is supersample^2 times larger; colouring averages

  int rawWidth() const noexcept { return imageWidth * supersample; }
  int rawHeight() const noexcept { return imageHeight * supersample; }
  /// Distance between neighbouring raw samples in the complex plane.
  double spacing() const noexcept { return width / rawWidth(); }
  /// Height of the image in the complex plane.
  double planeHeight() const noexcept { return width * imageHeight / imageWidth; }
  /// 3 / width: 1 for the whole set.
  double zoom() const noexcept { return 3.0 / width; }
  friend bool operator==(const MandelbrotView&, const MandelbrotView&) = default;
};

/// Throws std::invalid_argument with one sentence for a view gpulab cannot render: width not in
/// (0, 100], a centre or Julia constant outside +-10 or not finite, an image size gpulab does not
/// accept (after supersampling), iterations outside 1..2^24, supersample outside 1..4.
void validate(const MandelbrotView& view);

/// Iterations that keep detail as the view deepens:
/// round(256 * (1 + log10(max(1, 3 / width)))^1.25), at most 2^24.
/// 256 for the whole set, 1348 at width 0.005, 6611 at width 1e-12.
int autoIterations(double width);

/// The precision a render of `view` uses.
struct PrecisionChoice {
  Precision used = Precision::F32;  ///< F32 or F64
  double relativeSpacing = 0;       ///< h / max(|centerX|, |centerY|, 1)
  bool forced = false;              ///< the view asked for it (not Auto)
  bool belowLimit = false;          ///< forced to a precision too coarse for this zoom: expect blocks
  /// "f32 (auto; relative pixel spacing 2^-18.6, f32 down to 2^-20)".
  std::string describe() const;
};

/// Applies the ladder. Throws std::invalid_argument for an invalid view and PrecisionLimitError
/// ("zoom beyond float64 precision (width 1e-14): deeper zooms need perturbation rendering (not yet
/// available)") for any view deeper than float64 covers, whatever it asked for.
PrecisionChoice choosePrecision(const MandelbrotView& view);

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
struct MandelbrotOptions {
  MandelbrotVariant variant = MandelbrotVariant::Optimized;
  bool interiorTests = true;  ///< main cardioid and period-2 bulb (Mandelbrot mode); Optimized only
  bool periodicity = true;    ///< Brent cycle detection within 1/64 pixel; Optimized only
  bool smooth = true;         ///< raw values nu; false: integer escape counts n (interior still -1)
  int cpuThreads = 0;         ///< CPU baseline: 0 = every hardware thread
};

// ---------------------------------------------------------------------------------------------
// Colouring

struct Rgba8 {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  friend bool operator==(const Rgba8&, const Rgba8&) = default;
};

struct ColourStop {
  double position = 0;  ///< in [0, 1)
  Rgba8 colour;
  friend bool operator==(const ColourStop&, const ColourStop&) = default;
};

/// A cyclic gradient: colours interpolate linearly between stops and wrap from the last stop back to
/// the first at position 1.
class Palette {
 public:
  static constexpr int kTableSize = 1024;

  /// The built-in palettes: "classic" (Ultra Fractal's blue, white and gold), "fire", "ice",
  /// "grayscale", "rainbow". Throws std::invalid_argument naming them for any other name.
  static Palette named(std::string_view name);
  /// 1 or more stops with positions strictly increasing in [0, 1); throws std::invalid_argument.
  static Palette gradient(std::vector<ColourStop> stops, std::string name = "custom");
  /// "0:#000764,0.16:#206bcb,0.42:#edffff" (position:#rrggbb, comma separated), as gradientText().
  static Palette parseGradient(std::string_view text);

  const std::string& name() const noexcept { return name_; }
  const std::vector<ColourStop>& stops() const noexcept { return stops_; }
  std::string gradientText() const;
  /// The gradient sampled at kTableSize evenly spaced positions (entry k at k / kTableSize).
  std::array<Rgba8, kTableSize> table() const;
  Rgba8 at(double position) const;
  friend bool operator==(const Palette&, const Palette&) = default;

 private:
  std::string name_;
  std::vector<ColourStop> stops_;
};

/// "classic", "fire", "ice", "grayscale", "rainbow".
std::vector<std::string> paletteNames();
/// A built-in name, or a gradient when the text contains ':' (see Palette::parseGradient).
Palette parsePalette(std::string_view nameOrGradient);

struct Colouring {
  Palette palette = Palette::named("classic");
  double offset = 0.0;   ///< palette shift in cycles; the position is offset + density * nu / 32
  double density = 1.0;  ///< palette cycles per 32 iterations; > 0
  Rgba8 interior{0, 0, 0, 255};
  friend bool operator==(const Colouring&, const Colouring&) = default;
};

/// Throws std::invalid_argument for a density that is not positive and finite or an offset not finite.
void validate(const Colouring& colouring);

/// CPU colouring of a raw plane (1-channel f32): RGBA u8 of raw's size divided by `supersample`.
/// The same formula as the GPU pass; results agree within 1 per channel.
Image colourRaw(const Image& raw, const Colouring& colouring, int supersample = 1);

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
};

/// Keeps the raw plane, the RGBA image and the palette table on the GPU, reused from frame to frame (allocations only
/// when a frame is larger than every earlier one). Calls are asynchronous on gpu.stream() unless they say blocking. Not
/// thread-safe; one per worker thread.
class MandelbrotRenderer {
 public:
  MandelbrotRenderer() = default;
  MandelbrotRenderer(const MandelbrotRenderer&) = delete;
  MandelbrotRenderer& operator=(const MandelbrotRenderer&) = delete;

  /// Validates the view, chooses the precision and enqueues the escape-time kernel. Throws
  /// std::invalid_argument or PrecisionLimitError before anything is launched.
  const MandelbrotFrame& compute(GpuContext& gpu, const MandelbrotView& view, const MandelbrotOptions& options = {});
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

  bool hasFrame() const noexcept { return hasFrame_; }
  const MandelbrotFrame& frame() const;
  /// The raw plane's device memory (valid until the next compute(); rows packed, rawWidth floats each).
  const float* rawDeviceData() const noexcept { return raw_.as<float>(); }
  /// Bytes of device memory held.
  std::size_t deviceBytes() const noexcept;

 private:
  void ensureDevice(GpuContext& gpu);
  Image download(GpuContext& gpu, const void* src, int width, int height, int channels, PixelType type);

  DeviceBuffer raw_;
  DeviceBuffer rgba_;
  DeviceBuffer table_;
  PinnedBuffer staging_;
  PinnedBuffer tableStaging_;
  std::optional<Event> tableCopied_;  // the last table upload; created on first use (no GPU, no event)
  std::array<Rgba8, Palette::kTableSize> uploadedTable_{};
  bool tableUploaded_ = false;
  int device_ = -1;  // the device the buffers belong to
  bool hasFrame_ = false;
  bool hasColour_ = false;
  MandelbrotFrame frame_;
};

/// Blocking convenience: compute + colour + download.
Image renderMandelbrot(GpuContext& gpu, MandelbrotRenderer& renderer, const MandelbrotView& view,
                       const Colouring& colouring, const MandelbrotOptions& options = {});

// ---------------------------------------------------------------------------------------------
// CPU baseline

/// The raw plane on every CPU core (dynamic row scheduling), the same algorithm (options.variant) and
/// arithmetic as the GPU (explicit fma on both sides), so integer escape counts match the GPU's. Throws like
/// choosePrecision; OperationCancelled when control.cancel is set (checked between rows); reports
/// progress (0..1) on the calling thread.
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

// ---------------------------------------------------------------------------------------------
// Benchmark and PNG metadata

/// Where measureMandelbrot runs: the GPU side with `gpu` and `renderer` (both or neither), the CPU
/// side when wantCpu (all cores, or options.cpuThreads).
struct MandelbrotMeasureSetup {
  GpuContext* gpu = nullptr;
  MandelbrotRenderer* renderer = nullptr;
  bool wantCpu = true;
  CpuControl control;
};

/// One view measured with the harness's policy (measure/harness.hpp): the GPU side times
/// renderer.compute() alone (CUDA events, no colouring), the CPU side renderRawCpu. The work is the
/// plain loop's iterations (countIterations of one extra integer-count render), so rates are G
/// iterations/s. operation "mandelbrot", method the variant, params centre, width, iterations and
/// precision. Throws like choosePrecision for a view it cannot render.
Measurement measureMandelbrot(const MandelbrotView& view, const MandelbrotOptions& options,
                              const MandelbrotMeasureSetup& setup, const MeasurePolicy& policy);

/// The seahorse valley and the whole set at 1920x1080, 1000 iterations (the benchmark views).
MandelbrotView seahorseValleyView();
MandelbrotView wholeSetView();

/// An RGBA u8 image whose every alpha is 255 as RGB (what gpulab writes to PNG: a quarter fewer bytes
/// to compress, files about 15% smaller); any other image unchanged.
Image opaqueToRgb(const Image& rgba);

/// PNG tEXt fields that describe a render ("gpulab.center" = "x,y" with 17 digits, ...).
std::map<std::string, std::string> pngTextFromView(const MandelbrotView& view, const Colouring& colouring,
                                                   Precision used);
/// The view stored by pngTextFromView. Throws std::invalid_argument with one sentence when a field is
/// missing or malformed ("the PNG has no gpulab Mandelbrot view (field gpulab.center is missing)").
MandelbrotView viewFromPngText(const std::map<std::string, std::string>& text);
/// Its colouring; fields that are missing keep their defaults.
Colouring colouringFromPngText(const std::map<std::string, std::string>& text);

/// "-0.743643887037151,0.13182590420533" -> {x, y}; throws std::invalid_argument for anything else.
std::array<double, 2> parsePoint(std::string_view text, std::string_view what);

}  // namespace gpulab
