// The shared filter plumbing: building a filter from its spec, shapes, threads, bytes moved.
#include "gpulab/filter.hpp"

#include <cmath>
#include <opencv2/core.hpp>
#include <stdexcept>

#include "gpulab/box_blur.hpp"
#include "gpulab/conv2d.hpp"
#include "gpulab/sobel.hpp"

namespace gpulab {

std::unique_ptr<Filter> makeFilter(const FilterSpec& spec) {
  if (!std::isfinite(spec.border.value)) throw std::invalid_argument("the border value must be a finite number");
  switch (spec.op) {
    case FilterOp::Box:
      return std::make_unique<BoxBlur>(spec.radius, spec.border);
    case FilterOp::Sobel:
      return std::make_unique<Sobel>(spec.component, spec.border);
    case FilterOp::Conv:
      return makeConv2D(spec);
  }
  throw std::invalid_argument("unknown filter operation " + std::to_string(static_cast<int>(spec.op)));
}

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
