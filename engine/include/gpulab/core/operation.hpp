// The one interface every image operation implements (box blur, Sobel, convolution by any method,
// the FFT filter, FFT convolution), and the vocabulary around it: image shapes, CPU progress and
// cancellation, and parameters as text. Each operation has three implementations: the GPU kernels,
// the CPU baseline (OpenCV on all cores: what a user would otherwise pick), and a naive CPU reference
// that the tests use as the oracle.
//
//   std::unique_ptr<gpulab::Operation> op = gpulab::makeOperation("box", {{"radius", "7"}});
//   op->prepareGpu(gpu, in, out);        // plans, calibration: never inside a timed run
//   op->runGpu(gpu, in, out);            // async on gpu.stream(); no allocation when out fits
//   op->methodUsed(gpulab::Side::Gpu);   // "fft" after an auto convolution took the FFT
//   gpulab::Image cpu = op->runCpu(photo);
//
// Measuring is not the operation's business: gpulab/measure/harness.hpp times any operation on both
// sides with the project's policy and returns one record.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/image.hpp"

namespace gpulab {

struct ImageShape {
  int width = 0;
  int height = 0;
  int channels = 0;
  PixelType type = PixelType::U8;
  friend bool operator==(const ImageShape&, const ImageShape&) = default;
};

ImageShape shapeOf(const Image& image);
ImageShape shapeOf(const DeviceImage& image);
/// "600x400 RGB u8", as Image::describe().
std::string describe(const ImageShape& shape);

class OperationCancelled : public std::runtime_error {
 public:
  OperationCancelled() : std::runtime_error("cancelled") {}
};

/// Whether a cancel flag (none: never) has been set; the one test every cancel check makes.
inline bool cancelRequested(const std::atomic<bool>* flag) noexcept {
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

/// Lets a long CPU run report progress (0..1) and stop early. Checked between slices of work
/// (channels, strips, rows); a cancelled run throws OperationCancelled.
struct CpuControl {
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(double)> progress;

  bool cancelled() const noexcept { return cancelRequested(cancel); }
  /// The check between slices: throws OperationCancelled once the cancel flag is set.
  void throwIfCancelled() const {
    if (cancelled()) throw OperationCancelled();
  }
  /// Reports `fraction` done, clamped to 0..1, when someone listens.
  void report(double fraction) const {
    if (progress) progress(std::clamp(fraction, 0.0, 1.0));
  }
};

/// Threads OpenCV uses for the CPU baselines (all cores unless the user limited it).
int cpuThreads();

enum class Side { Gpu, Cpu };
constexpr EnumText enumText(Side) { return {"side", "gpu|cpu"}; }

/// An operation's parameters as text, by name ("radius" -> "7"): what the CLI parsed, what the GUI's
/// controls hold, what a record and its JSON carry. Ordered by name.
using ParamValues = std::map<std::string, std::string>;

class Operation {
 public:
  virtual ~Operation() = default;

  /// The registered name: "box", "sobel", "conv", "fft-filter", "fft-conv".
  virtual std::string name() const = 0;
  /// "box r=7 reflect101", "sobel mag", "conv 15x15 same reflect101 auto": for tables, logs and the GUI.
  virtual std::string describe() const = 0;
  /// Every parameter that selects this operation, as text (kernels as their size, not their values).
  virtual ParamValues params() const = 0;
  /// The method asked for: "direct" unless the operation has several ("fft", "auto").
  virtual std::string method() const { return "direct"; }
  /// The method the last run on `side` took ("auto" resolves to "direct" or "fft"); method() before.
  virtual std::string methodUsed(Side side) const {
    (void)side;
    return method();
  }
  /// Why methodUsed(side) is what it is ("cost model: direct 1.2e-09 ms/MAC + ..."); empty when the
  /// method was not a choice.
  virtual std::string methodNote(Side side) const {
    (void)side;
    return {};
  }

  /// How far from an output pixel the input pixels it reads may lie, in pixels (a 3x3 filter: 1), so
  /// that a region can be filtered with its surroundings as borders (core/roi.hpp); -1 when an output
  /// pixel may depend on the whole image (FFT filters, auto-levels, a wrapping border), the default.
  virtual int reach() const { return -1; }

  /// Throws std::invalid_argument with one sentence if this operation cannot take `in`
  /// (type not supported, a 'valid' output that would be empty, ...).
  virtual ImageShape outputShape(const ImageShape& in) const = 0;

  /// Does now, blocking, the one-time work a first runGpu(gpu, in, out) would otherwise do inside
  /// a timed run (cost model calibration, FFT plans, kernel spectra; `out` sized), and returns its
  /// milliseconds. The default does nothing and returns 0: warm-up runs cover such operations.
  virtual double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out);
  /// The same for runCpu on images of shape `in`. Default: nothing, 0.
  virtual double prepareCpu(const ImageShape& in);

  /// The device layout runGpu prefers for images of shape `in`: Planar by default; Interleaved for
  /// an operation that filters photos in their own layout (no (de)interleave pass on the GPU).
  /// runGpu takes planar images always, interleaved ones where this says so (std::logic_error
  /// otherwise), and gives its output in the input's layout. Front ends upload in this layout, or
  /// convert a resident image with GpuContext::inLayout.
  virtual DeviceLayout gpuLayout(const ImageShape& in) const {
    (void)in;
    return DeviceLayout::Planar;
  }
  virtual void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) = 0;
  virtual Image runCpu(const Image& in, const CpuControl& control = {}) const = 0;
  virtual Image runReference(const Image& in) const = 0;

  /// Bytes the GPU must at least move for `in` (each input sample read once, each output written
  /// once): achieved bandwidth is this over the compute time.
  virtual std::size_t minimumBytesMoved(const ImageShape& in) const;

 protected:
  /// The input bytes minimumBytesMoved counts: every sample by default; an operation that ignores
  /// some channels (Sobel reads no alpha) says so here.
  virtual std::size_t minimumBytesRead(const ImageShape& in) const;
};

}  // namespace gpulab
