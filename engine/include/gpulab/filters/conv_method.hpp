// 2D convolution by method: the Operation that makeFilter builds for a FilterSpec with op Conv and
// method Fft, Auto or Separable (method Direct is a Conv2D).
//
//   FilterSpec spec{.op = FilterOp::Conv, ..., .method = ConvMethod::Auto};
//   gpulab::ConvMethodFilter conv(spec);       // validates; std::invalid_argument with one sentence
//   conv.prepareGpu(gpu, in, out);             // calibration and plans now, outside any timing
//   conv.runGpu(gpu, in, out);                 // async on gpu.stream()
//   conv.lastGpuChoice();                      // ConvAlgorithm::Fft: "auto -> fft"
//
// Semantics, types and borders are Conv2D's (conv2d.hpp) for every method, so the result is the
// direct one up to rounding: float32 about 1e-4 relative to the result's peak, u8 +-1.
// - Fft: FftConvolver (fft_conv.hpp), kernels 1x1 to 1024x1024. runGpu may run in place in 'same'
//   mode, as FftConvolver does.
// - Auto: per run, the cheaper of Conv2D and FftConvolver according to a ConvCostModel: on the GPU
//   the process-wide model of that device (gpuConvCostModel), on the CPU the CPU's
//   (cpuConvCostModel), or a model pinned to this filter. A kernel above Conv2D::kMaxKernelSize a
//   side always goes to the FFT (and needs no model). Never in place (the direct method cannot).
//   A kernel of rank 1 to 3 (separable_conv.hpp) up to 127 a side is a third candidate, priced by
//   the model's separable line (on the GPU only for u8 and f32 images).
// - Separable: SeparableConv (separable_conv.hpp): kernels of rank 1 to 3, up to 127 a side; any
//   other kernel throws std::invalid_argument ("the 15x15 kernel is not separable: ..."). On the
//   GPU f64 images take the direct method (the separable kernel sums in float), and say so.
//   The first run that needs a model calibrates it (blocking; `gpulab-cli bench` reports how long
//   as prepare_ms); prepareGpu / prepareCpu do that up front, so timed runs never include it.
// runCpu is thread-safe and blocking; runReference is the naive definition in double (Conv2D's for
// kernels up to 127, the same formula here for larger ones).
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/separable_conv.hpp"

namespace gpulab {

/// The cost model behind ConvMethod::Auto on gpu's device: ConvCostModel::calibrateGpu with the
/// direct timings of Conv2D::runGpu (f32, CUDA events around the kernels, median of 5 after 2
/// warm-ups), and its separable line from SeparableConv::runGpu timed the same way (rank 1 and 3,
/// 3x3 to 31x31, 2048^2 and 4096^2), calibrated on the first call for each device and kept for the process.
/// Thread-safe: concurrent first callers wait for one calibration. Blocking. A failed calibration throws and caches
/// nothing.
ConvCostModel gpuConvCostModel(GpuContext& gpu);
/// The same for the CPU: ConvCostModel::calibrateCpu with Conv2D::runCpu wall times (median of 3
/// after 1 warm-up), and the separable line from SeparableConv::runCpu, once per process.
ConvCostModel cpuConvCostModel();
/// The kept models, without calibrating: std::nullopt until the first call above.
std::optional<ConvCostModel> cachedGpuConvCostModel(int device);
std::optional<ConvCostModel> cachedCpuConvCostModel();

class ConvMethodFilter final : public Operation {
 public:
  /// spec.op is not consulted; spec.method must be Fft, Auto or Separable (Direct: use Conv2D).
  /// Validates the kernel, border and mode as FftConvolver does (kernels up to kMaxFftKernelSide a
  /// side); Separable also that the kernel is separable (rank 1 to 3, up to 127 a side).
  explicit ConvMethodFilter(const FilterSpec& spec);

  ConvMethod convMethod() const noexcept { return spec_.method; }
  const FilterSpec& spec() const noexcept { return spec_; }

  /// "conv 31x31 same reflect101 fft", "conv 15x15 correlate valid constant(2) auto".
  std::string name() const override { return "conv"; }
  std::string describe() const override;
  ParamValues params() const override;
  /// "fft", "auto" or "separable"; methodUsed is what the last run on that side took ("direct",
  /// "fft" or "separable"), and methodNote says why (the cost model and the kernel's rank, the
  /// kernel too large for the direct method, or f64 on the GPU under the separable method).
  std::string method() const override;
  std::string methodUsed(Side side) const override;
  std::string methodNote(Side side) const override;
  ImageShape outputShape(const ImageShape& in) const override;

  /// Calibrates the GPU model if Auto needs it, then readies the chosen method for `in` (FFT plans,
  /// kernel spectrum, buffers; or one direct run), `out` sized. Returns the ms it took. Blocking.
  double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  /// Calibrates the CPU model if Auto needs it for `in`. Returns the ms it took. Blocking.
  double prepareCpu(const ImageShape& in) override;

  /// Asynchronous on gpu.stream(), except that an Auto run needing an uncalibrated model
  /// calibrates it first (blocking). `out` is reallocated when it is not outputShape(in).
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

  /// The algorithm runGpu / runCpu take for an image of shape `in`: Fft for the Fft method and for
  /// kernels above Conv2D::kMaxKernelSize; Separable for the Separable method (Direct on the GPU for
  /// f64); otherwise the model's choice (calibrating it if needed).
  ConvAlgorithm chooseGpu(GpuContext& gpu, const ImageShape& in);
  ConvAlgorithm chooseCpu(const ImageShape& in) const;
  /// What the last runGpu / runCpu took; std::nullopt before the first.
  std::optional<ConvAlgorithm> lastGpuChoice() const noexcept;
  std::optional<ConvAlgorithm> lastCpuChoice() const noexcept;

  /// The model Auto uses on `device` / the CPU: the pinned one, else the process-wide one if it is
  /// calibrated already; std::nullopt otherwise (and always for the Fft method).
  std::optional<ConvCostModel> gpuModel(int device) const;
  std::optional<ConvCostModel> cpuModel() const;
  /// Pins a model to this filter in place of the process-wide ones (reproducible runs, tests). Not
  /// to be called while a run is in progress. Throws std::invalid_argument when it is uncalibrated.
  void pinGpuModel(const ConvCostModel& model);
  void pinCpuModel(const ConvCostModel& model);

  /// Whether the direct method can take this kernel (both sides up to Conv2D::kMaxKernelSize).
  bool directPossible() const noexcept { return direct_.has_value(); }
  /// Whether the separable method can take it (rank 1 to 3, up to 127 a side), and its terms.
  bool separablePossible() const noexcept { return separable_.has_value(); }
  int separableRank() const noexcept { return separable_ ? separable_->rank() : 0; }
  /// The FFT method, for its plan creation time and geometry.
  FftConvolver& fft() noexcept { return fft_; }

 private:
  FilterSpec spec_;
  FftConvolver fft_;
  std::optional<Conv2D> direct_;            // absent for kernels the direct method cannot take
  std::optional<SeparableConv> separable_;  // absent for kernels of rank above 3 or sides above 127
  std::optional<ConvCostModel> pinnedGpu_;
  std::optional<ConvCostModel> pinnedCpu_;
  // The last choices: -1 none yet, otherwise a ConvAlgorithm. Atomic: runCpu is const and may run
  // on several threads at once.
  std::atomic<int> lastGpu_{-1};
  std::atomic<int> lastGpuDevice_{0};
  mutable std::atomic<int> lastCpu_{-1};
};

struct OperationInfo;
/// Convolution as the registry lists it (filters/registry.hpp): kernel, correlate, mode, method,
/// border, border-value; the method picks Conv2D or ConvMethodFilter (makeFilter).
OperationInfo convolutionInfo();

}  // namespace gpulab
