// The neighbourhood filters (box blur, Sobel, 2D convolution): the spec that selects and
// parameterises one, and the factory that builds it as an Operation (core/operation.hpp).
//
//   auto filter = gpulab::makeFilter(spec);             // validates; throws std::invalid_argument
//   filter->runGpu(gpu, deviceIn, deviceOut);            // async on gpu.stream(); no allocation when
//                                                        // deviceOut already has outputShape(in)
//   gpulab::Image cpu = filter->runCpu(photo);           // blocking, all cores
//   gpulab::Image ref = filter->runReference(photo);     // blocking, one core, slow and obvious
//
// Types: u8 with 1, 3 or 4 channels (per channel; alpha passes through unchanged; results rounded
// and saturated), f32 with 1..4 channels, and f64 where the filter says so (convolution).
// Front ends reach the filters by name through filters/registry.hpp.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "gpulab/core/border.hpp"
#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab {

enum class FilterOp { Box, Sobel, Conv };
enum class SobelComponent { Magnitude, X, Y, Direction };
enum class ConvMode { Same, Full, Valid };  ///< output size, as scipy.signal.convolve2d
/// How a convolution is computed: direct (Conv2D, kernels up to 127x127), through the FFT
/// (FftConvolver, up to 1024x1024), or auto: per run, whichever a cost model calibrated on the
/// running GPU (or the CPU, for runCpu) expects to be faster; kernels above 127 always go to the FFT;
/// or separable (SeparableConv, separable_conv.hpp: a kernel of rank 1 to 3, up to 127x127, as 1-D
/// passes; auto considers it too when the kernel's rank allows).
enum class ConvMethod { Direct, Fft, Auto, Separable };

constexpr EnumText enumText(FilterOp) { return {"filter", "box|sobel|conv"}; }
constexpr EnumText enumText(SobelComponent) { return {"Sobel component", "mag|x|y|dir"}; }
constexpr EnumText enumText(ConvMode) { return {"convolution mode", "same|full|valid"}; }
constexpr EnumText enumText(ConvMethod) { return {"convolution method", "direct|fft|auto|separable"}; }

/// A 2D kernel of coefficients, row-major, kernel.size() == width * height.
struct Kernel2D {
  int width = 0;
  int height = 0;
  std::vector<double> values;
  double at(int x, int y) const { return values[static_cast<std::size_t>(y) * width + x]; }
  friend bool operator==(const Kernel2D&, const Kernel2D&) = default;
};

/// Everything that selects and parameterises a filter; the registry, the tests and the benchmark fill it.
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

/// Builds the filter for `spec`, validating it first (negative radius, empty or oversized kernel,
/// unknown combination): std::invalid_argument with one sentence saying what is allowed.
/// Conv: spec.method Direct gives a Conv2D (a kernel above 127 a side throws, naming the fft and
/// auto methods); Fft, Auto and Separable give a ConvMethodFilter (conv_method.hpp). The other ops take
/// spec.method Direct only.
std::unique_ptr<Operation> makeFilter(const FilterSpec& spec);

/// The parameters every filter shares, as Operation::params() reports them: "border" and, for the
/// constant border, "border-value".
void addBorderParams(ParamValues& values, const Border& border);

struct ParamInfo;
/// Their descriptions for a filter's OperationInfo (filters/registry.hpp), and the Border they give.
std::vector<ParamInfo> borderParamInfos();
Border borderFromParams(const ParamValues& values);

}  // namespace gpulab
