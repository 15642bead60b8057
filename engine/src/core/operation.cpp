// The Operation defaults and the vocabulary around it.
#include "gpulab/core/operation.hpp"

#include <opencv2/core.hpp>

namespace gpulab {

ImageShape shapeOf(const Image& image) { return {image.width(), image.height(), image.channels(), image.type()}; }

ImageShape shapeOf(const DeviceImage& image) { return {image.width(), image.height(), image.channels(), image.type()}; }

std::string describe(const ImageShape& s) { return describeImage(s.width, s.height, s.channels, s.type); }

int cpuThreads() { return cv::getNumThreads(); }

double Operation::prepareGpu(GpuContext&, const DeviceImage&, DeviceImage&) { return 0.0; }

double Operation::prepareCpu(const ImageShape&) { return 0.0; }

std::size_t Operation::minimumBytesRead(const ImageShape& in) const {
  return static_cast<std::size_t>(in.width) * in.height * in.channels * bytesPerSample(in.type);
}

std::size_t Operation::minimumBytesMoved(const ImageShape& in) const {
  const ImageShape out = outputShape(in);
  return minimumBytesRead(in) +
         static_cast<std::size_t>(out.width) * out.height * out.channels * bytesPerSample(out.type);
}

}  // namespace gpulab
