// Building a filter from its spec.
#include "gpulab/filters/filter.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/filters/sobel.hpp"

namespace gpulab {

namespace {

std::unique_ptr<Operation> makeConvolution(const FilterSpec& spec) {
  switch (spec.method) {
    case ConvMethod::Direct: {
      const int kw = spec.kernel.width, kh = spec.kernel.height;
      if (kw > Conv2D::kMaxKernelSize || kh > Conv2D::kMaxKernelSize)
        throw std::invalid_argument("the direct method takes kernels up to " + std::to_string(Conv2D::kMaxKernelSize) +
                                    "x" + std::to_string(Conv2D::kMaxKernelSize) + ", not " + std::to_string(kw) + "x" +
                                    std::to_string(kh) + "; use the fft or auto method (--method fft|auto), up to " +
                                    std::to_string(kMaxFftKernelSide) + "x" + std::to_string(kMaxFftKernelSide));
      return std::make_unique<Conv2D>(spec);
    }
    case ConvMethod::Fft:
    case ConvMethod::Auto:
    case ConvMethod::Separable:
      return std::make_unique<ConvMethodFilter>(spec);
  }
  throw std::invalid_argument("unknown convolution method; use " + enumNames<ConvMethod>());
}

}  // namespace

std::unique_ptr<Operation> makeFilter(const FilterSpec& spec) {
  if (!std::isfinite(spec.border.value)) throw std::invalid_argument("the border value must be a finite number");
  if (spec.op != FilterOp::Conv && spec.method != ConvMethod::Direct)
    throw std::invalid_argument("the " + std::string(toString(spec.method)) +
                                " method applies to convolution only; box blur and Sobel run directly");
  switch (spec.op) {
    case FilterOp::Box:
      return std::make_unique<BoxBlur>(spec.radius, spec.border);
    case FilterOp::Sobel:
      return std::make_unique<Sobel>(spec.component, spec.border);
    case FilterOp::Conv:
      return makeConvolution(spec);
  }
  throw std::invalid_argument("unknown filter operation " + std::to_string(static_cast<int>(spec.op)));
}

void addBorderParams(ParamValues& values, const Border& border) {
  values["border"] = std::string(toString(border.mode));
  if (border.mode == BorderMode::Constant) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", border.value);
    values["border-value"] = text;
  }
}

std::vector<ParamInfo> borderParamInfos() {
  ParamInfo value =
      ParamInfo::number("border-value", "value outside the image for the constant border", -1e300, 1e300, "0");
  value.onlyWith = "border=constant";
  return {ParamInfo::choice("border", "samples outside the image: " + enumNames<BorderMode>(" | "),
                            enumNameList<BorderMode>(), "reflect101"),
          value};
}

Border borderFromParams(const ParamValues& values) {
  const std::vector<ParamInfo> infos = borderParamInfos();
  Border border;
  border.mode = parseEnumOrThrow<BorderMode>(choiceParam(values, infos[0]));
  border.value = numberParam(values, infos[1]);
  return border;
}

}  // namespace gpulab
