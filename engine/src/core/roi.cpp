#include "gpulab/core/roi.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"

namespace gpulab {
namespace {

std::string text(const PixelRect& r) {
  return std::to_string(r.width) + "x" + std::to_string(r.height) + " at (" + std::to_string(r.x) + ", " +
         std::to_string(r.y) + ")";
}

void checkInside(const PixelRect& r, int width, int height, const char* what) {
  if (r.width <= 0 || r.height <= 0)
    throw std::invalid_argument(std::string(what) + " " + text(r) + " is empty: draw a rectangle at least 1x1");
  if (r.x < 0 || r.y < 0 || r.x > width - r.width || r.y > height - r.height)
    throw std::invalid_argument(std::string(what) + " " + text(r) + " is not inside the " + std::to_string(width) +
                                "x" + std::to_string(height) + " image");
}

}  // namespace

RoiWindow roiWindow(const ImageShape& shape, const PixelRect& roi, int reach) {
  checkInside(roi, shape.width, shape.height, "the region");
  RoiWindow w;
  w.roi = roi;
  if (reach < 0) {
    w.window = {0, 0, shape.width, shape.height};
  } else {
    const auto x0 = std::max<long long>(0, static_cast<long long>(roi.x) - reach);
    const auto y0 = std::max<long long>(0, static_cast<long long>(roi.y) - reach);
    const auto x1 = std::min<long long>(shape.width, static_cast<long long>(roi.x) + roi.width + reach);
    const auto y1 = std::min<long long>(shape.height, static_cast<long long>(roi.y) + roi.height + reach);
    w.window = {static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)};
  }
  w.inner = {roi.x - w.window.x, roi.y - w.window.y, roi.width, roi.height};
  return w;
}

Image crop(const Image& image, const PixelRect& rect) {
  checkInside(rect, image.width(), image.height(), "the crop");
  Image out(rect.width, rect.height, image.channels(), image.type());
  const std::size_t pixelBytes = static_cast<std::size_t>(image.channels()) * bytesPerSample(image.type());
  for (int y = 0; y < rect.height; ++y)
    std::memcpy(out.row<std::byte>(y), image.row<std::byte>(rect.y + y) + rect.x * pixelBytes, out.rowBytes());
  return out;
}

void crop(GpuContext& gpu, const DeviceImage& image, const PixelRect& rect, DeviceImage& out) {
  checkInside(rect, image.width(), image.height(), "the crop");
  if (out.empty() || out.width() != rect.width || out.height() != rect.height || out.channels() != image.channels() ||
      out.type() != image.type() || out.layout() != image.layout())
    out = DeviceImage(rect.width, rect.height, image.channels(), image.type(), image.layout());
  if (image.interleaved()) {  // one plane of whole pixels
    const std::size_t pixel = bytesPerSample(image.type()) * image.channels();
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.planeData(0), out.pitch(),
                                        image.planeData(0) + rect.y * image.pitch() + rect.x * pixel, image.pitch(),
                                        rect.width * pixel, rect.height, cudaMemcpyDeviceToDevice, gpu.stream()));
    return;
  }
  const std::size_t sample = bytesPerSample(image.type());
  for (int c = 0; c < image.channels(); ++c)
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.planeData(c), out.pitch(),
                                        image.planeData(c) + rect.y * image.pitch() + rect.x * sample, image.pitch(),
                                        rect.width * sample, rect.height, cudaMemcpyDeviceToDevice, gpu.stream()));
}

Image pasteRoi(const Image& image, const Image& filteredWindow, const RoiWindow& w) {
  if (filteredWindow.width() != w.window.width || filteredWindow.height() != w.window.height ||
      filteredWindow.channels() != image.channels() || filteredWindow.type() != image.type())
    throw std::invalid_argument("the filtered window " + filteredWindow.describe() + " does not fit the " +
                                std::to_string(w.window.width) + "x" + std::to_string(w.window.height) +
                                " window of the " + image.describe() + " image");
  checkInside(w.roi, image.width(), image.height(), "the region");
  checkInside(w.inner, filteredWindow.width(), filteredWindow.height(), "the region's window part");
  Image out = image;
  const std::size_t pixelBytes = static_cast<std::size_t>(image.channels()) * bytesPerSample(image.type());
  for (int y = 0; y < w.roi.height; ++y)
    std::memcpy(out.row<std::byte>(w.roi.y + y) + w.roi.x * pixelBytes,
                filteredWindow.row<std::byte>(w.inner.y + y) + w.inner.x * pixelBytes, w.roi.width * pixelBytes);
  return out;
}

bool keepsShape(const Operation& op, const ImageShape& in) { return op.outputShape(in) == in; }

}  // namespace gpulab
