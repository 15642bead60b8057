// The one interface every neighbourhood filter implements (box blur, Sobel, 2D convolution), in
// three implementations: the GPU kernels, the CPU baseline (OpenCV on all cores: what a user would
// otherwise pick), and a naive CPU reference that the tests use as the oracle.
//
//   auto filter = gpulab::makeFilter(spec);             // validates; throws std::invalid_argument
//   filter->runGpu(gpu, deviceIn, deviceOut);            // async on gpu.stream(); no allocation when
//                                                        // deviceOut already has outputShape(in)
//   gpulab::Image cpu = filter->runCpu(photo);           // blocking, all cores
//   gpulab::Image ref = filter->runReference(photo);     // blocking, one core, slow and obvious
//
// Types: u8 with 1, 3 or 4 channels (per channel; alpha passes through unchanged; results rounded
// and saturated), f32 with 1..4 channels, and f64 where the filter says so (convolution).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/border.hpp"
#include "gpulab/device_image.hpp"
#include "gpulab/image.hpp"

namespace gpulab {

enum class FilterOp { Box, Sobel, Conv };
enum class SobelComponent { Magnitude, X, Y, Direction };
enum class ConvMode { Same, Full, Valid };  ///< output size, as scipy.signal.convolve2d
/// How a convolution is computed: direct (Conv2D, kernels up to 127x127), through the FFT
/// (FftConvolver, up to 1024x1024), or auto: per run, whichever a cost model calibrated on the
/// running GPU (or the CPU, for runCpu) expects to be faster; kernels above 127 always go to the FFT.
enum class ConvMethod { Direct, Fft, Auto };

/// "direct", "fft", "auto".
std::string_view toString(ConvMethod method) noexcept;
/// Parses the names above; std::nullopt for anything else.
std::optional<ConvMethod> parseConvMethod(std::string_view name) noexcept;
/// "direct|fft|auto", for help texts and error messages.
std::string convMethodNames();

/// A 2D kernel of coefficients, row-major, kernel.size() == width * height.
struct Kernel2D {
  int width = 0;
  int height = 0;
  std::vector<double> values;
  double at(int x, int y) const { return values[static_cast<std::size_t>(y) * width + x]; }
};

/// Everything that selects and parameterises a filter; the CLI, the GUI and the benchmark fill it.
struct FilterSpec {
  FilterOp op = FilterOp::Box;
  Border border;                                         ///< all ops
  int radius = 1;                                        ///< Box: window (2r+1)^2
  SobelComponent component = SobelComponent::Magnitude;  ///< Sobel
  Kernel2D kernel;                                       ///< Conv
  bool correlate = false;                                ///< Conv: false = true convolution (flipped)
  ConvMode mode = ConvMode::Same;                        ///< Conv
  ConvMethod method = ConvMethod::Direct;                ///< Conv (the other ops take Direct only)
};

/// Lets a long CPU run report progress (0..1) and stop early. Checked between slices of work
/// (channels, strips); a cancelled run throws OperationCancelled.
struct CpuControl {
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(double)> progress;
};

class OperationCancelled : public std::runtime_error {
 public:
  OperationCancelled() : std::runtime_error("cancelled") {}
};

struct ImageShape {
  int width = 0;
  int height = 0;
  int channels = 0;
  PixelType type = PixelType::U8;
};

class Filter {
 public:
  virtual ~Filter() = default;

  /// "box r=7 reflect101", "sobel mag", "conv 15x15 same": for tables, logs and the GUI.
  virtual std::string describe() const = 0;
  /// Throws std::invalid_argument with one sentence if this filter cannot take `in`
  /// (type not supported, a 'valid' output that would be empty, ...).
  virtual ImageShape outputShape(const ImageShape& in) const = 0;

  /// Does now, blocking, the one-time work a first runGpu(gpu, in, out) would otherwise do inside
  /// a timed run (cost model calibration, FFT plans, kernel spectra; `out` sized), and returns its
  /// milliseconds. The default does nothing and returns 0: warm-up runs cover such filters.
  virtual double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);
  /// The same for runCpu on images of shape `in`. Default: nothing, 0.
  virtual double prepareCpu(const ImageShape& in);

  virtual void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) = 0;
  virtual Image runCpu(const Image& in, const CpuControl& control = {}) const = 0;
  virtual Image runReference(const Image& in) const = 0;

  /// Bytes the GPU must at least move for `in` (each input sample read once, each output written
  /// once): the benchmark divides this by the compute time for achieved bandwidth.
  std::size_t minimumBytesMoved(const ImageShape& in) const;

 protected:
  /// The input bytes minimumBytesMoved counts: every sample by default; a filter that ignores some
  /// channels (Sobel reads no alpha) says so here.
  virtual std::size_t minimumBytesRead(const ImageShape& in) const;
};

/// Builds the filter for `spec`, validating it first (negative radius, empty or oversized kernel,
/// unknown combination): std::invalid_argument with one sentence saying what is allowed.
/// Conv: spec.method Direct gives a Conv2D (a kernel above 127 a side throws, naming the fft and
/// auto methods); Fft and Auto give a ConvMethodFilter (conv_method.hpp). The other ops take
/// spec.method Direct only.
std::unique_ptr<Filter> makeFilter(const FilterSpec& spec);

/// Threads OpenCV uses for the CPU baselines (all cores unless the user limited it).
int cpuThreads();

ImageShape shapeOf(const Image& image);
ImageShape shapeOf(const DeviceImage& image);

/// A kernel file that cannot be used: missing, empty, ragged, not a number, not 2-D.
class KernelFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads convolution coefficients from a file. Text: one kernel row per line, numbers separated by
/// spaces, tabs or commas, '#' starts a comment, blank lines are skipped. .npy (by content): a 2-D
/// float32 or float64 array (HxW, or HxWx1). Throws KernelFileError with one sentence naming the
/// file (and the line, for text) when it is missing, empty, ragged, holds something that is not a
/// finite number, or has more than kMaxImageDimension coefficients a side.
Kernel2D loadKernelFile(const std::filesystem::path& path);
/// The text format of loadKernelFile, from memory; `nameForErrors` names the source in messages.
Kernel2D parseKernelText(const std::string& text, const std::string& nameForErrors = "the kernel text");

}  // namespace gpulab
