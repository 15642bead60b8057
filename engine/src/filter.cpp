// The shared filter plumbing: building a filter from its spec, shapes, threads, bytes moved.
#include "gpulab/filter.hpp"

#include <array>
#include <cmath>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <utility>

#include "gpulab/box_blur.hpp"
#include "gpulab/conv2d.hpp"
#include "gpulab/conv_method.hpp"
#include "gpulab/sobel.hpp"

namespace gpulab {

namespace {

constexpr std::array<std::pair<ConvMethod, std::string_view>, 3> kMethodNames{{
    {ConvMethod::Direct, "direct"},
    {ConvMethod::Fft, "fft"},
    {ConvMethod::Auto, "auto"},
}};

std::unique_ptr<Filter> makeConvolution(const FilterSpec& spec) {
  switch (spec.method) {
    case ConvMethod::Direct: {
      const int kw = spec.kernel.width, kh = spec.kernel.height;
      if (kw > Conv2D::kMaxKernelSize || kh > Conv2D::kMaxKernelSize)
        throw std::invalid_argument("the direct method takes kernels up to " + std::to_string(Conv2D::kMaxKernelSize) +
                                    "x" + std::to_string(Conv2D::kMaxKernelSize) + ", not " + std::to_string(kw) + "x" +
                                    std::to_string(kh) + "; use the fft or auto method (--method fft|auto), up to " +
                                    std::to_string(kMaxFftKernelSide) + "x" + std::to_string(kMaxFftKernelSide));
      return makeConv2D(spec);
    }
    case ConvMethod::Fft:
    case ConvMethod::Auto:
      return std::make_unique<ConvMethodFilter>(spec);
  }
  throw std::invalid_argument("unknown convolution method; use " + convMethodNames());
}

}  // namespace

std::string_view toString(ConvMethod method) noexcept {
  for (const auto& [m, name] : kMethodNames)
    if (m == method) return name;
  return "?";
}

std::optional<ConvMethod> parseConvMethod(std::string_view name) noexcept {
  for (const auto& [m, n] : kMethodNames)
    if (n == name) return m;
  return std::nullopt;
}

std::string convMethodNames() {
  std::string names;
  for (const auto& [m, name] : kMethodNames) {
    if (!names.empty()) names += '|';
    names += name;
  }
  return names;
}

std::unique_ptr<Filter> makeFilter(const FilterSpec& spec) {
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

double Filter::prepareGpu(GpuContext&, const DeviceImage&, DeviceImage&) { return 0.0; }

double Filter::prepareCpu(const ImageShape&) { return 0.0; }

int cpuThreads() { return cv::getNumThreads(); }

ImageShape shapeOf(const Image& image) { return {image.width(), image.height(), image.channels(), image.type()}; }

ImageShape shapeOf(const DeviceImage& image) { return {image.width(), image.height(), image.channels(), image.type()}; }

std::size_t Filter::minimumBytesRead(const ImageShape& in) const {
  return static_cast<std::size_t>(in.width) * in.height * in.channels * bytesPerSample(in.type);
}

std::size_t Filter::minimumBytesMoved(const ImageShape& in) const {
  const ImageShape out = outputShape(in);
  return minimumBytesRead(in) +
         static_cast<std::size_t>(out.width) * out.height * out.channels * bytesPerSample(out.type);
}

}  // namespace gpulab
