#include "gpulab/filters/canny.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/canny.cuh"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"
#include "internal/planewise.hpp"

namespace gpulab {

using namespace cv_interop;

namespace {

void checkType(const ImageShape& in) {
  validateImageShape(in.width, in.height, in.channels);
  if (in.type != PixelType::U8)
    throw std::invalid_argument(std::string("Canny takes 8-bit images (as cv::Canny), not ") +
                                std::string(toString(in.type)) + ": convert the image to u8 first");
  if (in.channels == 2)
    throw std::invalid_argument("Canny takes gray (1 channel), RGB (3) or RGBA (4) images, not 2 channels");
}

// The 8-bit gray every implementation starts from.
Image grayOf(const Image& in) {
  if (in.channels() == 1) return in;
  Image gray(in.width(), in.height(), 1, PixelType::U8);
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x)
      gray.at<std::uint8_t>(x, y) =
          kernels::cannyGray(in.at<std::uint8_t>(x, y, 0), in.at<std::uint8_t>(x, y, 1), in.at<std::uint8_t>(x, y, 2));
  return gray;
}

int level(double threshold, bool l2) {
  if (l2) {
    threshold = std::min(32767.0, threshold);
    if (threshold > 0) threshold *= threshold;
  }
  return static_cast<int>(std::floor(threshold));
}

}  // namespace

Canny::Canny(double low, double high, CannyGradient gradient)
    : low_(std::min(low, high)), high_(std::max(low, high)), gradient_(gradient) {
  for (double t : {low, high})
    if (!std::isfinite(t) || t < 0 || t > kMaxCannyThreshold)
      throw std::invalid_argument("Canny threshold " + std::to_string(t) + " is not allowed: use 0 to " +
                                  std::to_string(static_cast<int>(kMaxCannyThreshold)));
  if (gradient != CannyGradient::L1 && gradient != CannyGradient::L2)
    throw std::invalid_argument("unknown Canny gradient");
}

Canny::~Canny() = default;
Canny::Canny(Canny&&) noexcept = default;
Canny& Canny::operator=(Canny&&) noexcept = default;

int Canny::lowLevel() const noexcept { return level(low_, gradient_ == CannyGradient::L2); }
int Canny::highLevel() const noexcept { return level(high_, gradient_ == CannyGradient::L2); }

OperationInfo cannyInfo() {
  OperationInfo info;
  info.name = "canny";
  info.title = "Canny edges";
  info.summary = "Canny edges of the 8-bit gray, as cv::Canny (aperture 3)";
  const ParamInfo low =
      ParamInfo::number("low", "hysteresis: weak edges above this gradient", 0, kMaxCannyThreshold, "50");
  const ParamInfo high =
      ParamInfo::number("high", "hysteresis: strong edges above this gradient", 0, kMaxCannyThreshold, "150");
  const ParamInfo gradient =
      ParamInfo::choice("gradient", "magnitude: l1 = |dx| + |dy| (default) | l2", enumNameList<CannyGradient>(), "l1");
  info.params = {low, high, gradient};
  info.make = [low, high, gradient](const ParamValues& values) -> std::unique_ptr<Operation> {
    return std::make_unique<Canny>(numberParam(values, low), numberParam(values, high),
                                   parseEnumOrThrow<CannyGradient>(choiceParam(values, gradient)));
  };
  return info;
}

std::string Canny::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, "canny %g..%g %s", low_, high_, std::string(toString(gradient_)).c_str());
  return text;
}

ParamValues Canny::params() const {
  char low[32], high[32];
  std::snprintf(low, sizeof low, "%.17g", low_);
  std::snprintf(high, sizeof high, "%.17g", high_);
  return {{"low", low}, {"high", high}, {"gradient", std::string(toString(gradient_))}};
}

ImageShape Canny::outputShape(const ImageShape& in) const {
  checkType(in);
  return {in.width, in.height, 1, PixelType::U8};
}

std::size_t Canny::minimumBytesRead(const ImageShape& in) const {
  return static_cast<std::size_t>(in.width) * in.height * std::min(in.channels, 3);
}

void Canny::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("Canny cannot run in place: give it a separate output image");
  planewise::ensureShape(out, shape);
  if (flag_.empty()) flag_ = PinnedBuffer(sizeof(int));
  const std::size_t bytes = kernels::cannyScratchBytes(shape.width, shape.height);
  gpu.scratch().reserve(bytes);
  const bool colour = in.channels() >= 3;
  kernels::launchCanny(planeOf<std::uint8_t>(in, 0), planeOf<std::uint8_t>(in, colour ? 1 : 0),
                       planeOf<std::uint8_t>(in, colour ? 2 : 0), colour, planeOf<std::uint8_t>(out, 0), lowLevel(),
                       highLevel(), gradient_ == CannyGradient::L2, gpu.scratch().data(), gpu.scratch().size(),
                       flag_.as<int>(), gpu.stream());
}

Image Canny::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, 1, PixelType::U8);
  control.throwIfCancelled();
  try {
    cv::Mat gray;
    if (in.channels() == 1)
      gray = asMat(in);
    else
      cv::cvtColor(asMat(in), gray, in.channels() == 3 ? cv::COLOR_RGB2GRAY : cv::COLOR_RGBA2GRAY);
    control.throwIfCancelled();
    cv::Mat target = asMat(out);
    cv::Canny(gray, target, low_, high_, 3, gradient_ == CannyGradient::L2);
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the Canny baseline");
  }
  control.report(1.0);
  return out;
}

Image Canny::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  const int width = shape.width, height = shape.height;
  const Image gray = grayOf(in);
  auto g = [&](int x, int y) {
    return static_cast<int>(gray.at<std::uint8_t>(std::clamp(x, 0, width - 1), std::clamp(y, 0, height - 1)));
  };
  const auto n = static_cast<std::size_t>(width) * height;
  std::vector<int> mag(n), dxs(n), dys(n);
  auto idx = [&](int x, int y) { return static_cast<std::size_t>(y) * width + x; };
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int dx =
          g(x + 1, y - 1) + 2 * g(x + 1, y) + g(x + 1, y + 1) - g(x - 1, y - 1) - 2 * g(x - 1, y) - g(x - 1, y + 1);
      const int dy =
          g(x - 1, y + 1) + 2 * g(x, y + 1) + g(x + 1, y + 1) - g(x - 1, y - 1) - 2 * g(x, y - 1) - g(x + 1, y - 1);
      dxs[idx(x, y)] = dx;
      dys[idx(x, y)] = dy;
      mag[idx(x, y)] = gradient_ == CannyGradient::L2 ? dx * dx + dy * dy : std::abs(dx) + std::abs(dy);
    }
  auto m = [&](int x, int y) { return x < 0 || y < 0 || x >= width || y >= height ? 0 : mag[idx(x, y)]; };
  std::vector<int> cls(n);
  const int low = lowLevel(), high = highLevel();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      cls[idx(x, y)] =
          kernels::cannyClass(m(x, y), dxs[idx(x, y)], dys[idx(x, y)], low, high, m(x - 1, y), m(x + 1, y), m(x, y - 1),
                              m(x, y + 1), m(x - 1, y - 1), m(x + 1, y - 1), m(x - 1, y + 1), m(x + 1, y + 1));
  // Hysteresis: flood from every strong pixel through weak 8-neighbours.
  Image out(width, height, 1, PixelType::U8);
  std::vector<std::pair<int, int>> stack;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      if (cls[idx(x, y)] == 2) stack.emplace_back(x, y);
  for (const auto& [x, y] : stack) out.at<std::uint8_t>(x, y) = 255;
  while (!stack.empty()) {
    const auto [x, y] = stack.back();
    stack.pop_back();
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int u = x + dx, v = y + dy;
        if (u < 0 || v < 0 || u >= width || v >= height || cls[idx(u, v)] != 1 || out.at<std::uint8_t>(u, v) != 0)
          continue;
        out.at<std::uint8_t>(u, v) = 255;
        stack.emplace_back(u, v);
      }
  }
  return out;
}

}  // namespace gpulab
