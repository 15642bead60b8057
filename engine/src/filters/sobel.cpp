#include "gpulab/filters/sobel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/sobel.cuh"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {

namespace {

using namespace cv_interop;

void checkType(const ImageShape& in) {
  if (in.type == PixelType::F64 || in.type == PixelType::U16)
    throw std::invalid_argument(std::string("Sobel takes u8 and f32 images, not ") +
                                (in.type == PixelType::U16 ? "u16" : "f64") + ": convert the image to f32 first");
  validateImageShape(in.width, in.height, in.channels);
  if (in.channels == 2)
    throw std::invalid_argument("Sobel takes gray (1 channel), RGB (3) or RGBA (4) images, not 2 channels");
}

// The luminance every implementation filters: f32, one channel.
Image luminanceOf(const Image& in, bool parallel) {
  Image lum(in.width(), in.height(), 1, PixelType::F32);
  const bool colour = in.channels() >= 3;
  auto rows = [&](int a, int b) {
    for (int y = a; y < b; ++y)
      for (int x = 0; x < in.width(); ++x) {
        auto sample = [&](int c) {
          return in.type() == PixelType::U8 ? static_cast<float>(in.at<std::uint8_t>(x, y, c)) : in.at<float>(x, y, c);
        };
        lum.at<float>(x, y) = colour ? kernels::luminance(sample(0), sample(1), sample(2)) : sample(0);
      }
  };
  if (parallel)
    parallelRows(in.height(), rows);
  else
    rows(0, in.height());
  return lum;
}

double referenceValue(double dx, double dy, SobelComponent component) {
  switch (component) {
    case SobelComponent::Magnitude:
      return std::sqrt(dx * dx + dy * dy);
    case SobelComponent::X:
      return dx;
    case SobelComponent::Y:
      return dy;
    case SobelComponent::Direction:
      return std::atan2(dy, dx);
  }
  return 0;
}

std::uint8_t referenceU8(double value, SobelComponent component) {
  if (component == SobelComponent::Direction) {
    const auto code = static_cast<long>(std::nearbyint(value * 128.0 / std::numbers::pi));
    return static_cast<std::uint8_t>(((code % 256) + 256) % 256);
  }
  return static_cast<std::uint8_t>(std::clamp(std::nearbyint(std::abs(value)), 0.0, 255.0));
}

}  // namespace

Sobel::Sobel(SobelComponent component, Border border) : component_(component), border_(border) {
  if (!std::isfinite(border.value)) throw std::invalid_argument("the border value must be a finite number");
  toKernel(component);  // rejects values outside the enum
}

OperationInfo sobelInfo() {
  OperationInfo info;
  info.name = "sobel";
  info.title = "Sobel";
  info.summary = "3x3 gradient of the luminance";
  const ParamInfo component =
      ParamInfo::choice("component", "mag (default) | x | y | dir", enumNameList<SobelComponent>(), "mag");
  info.params = {component};
  for (ParamInfo& p : borderParamInfos()) info.params.push_back(std::move(p));
  info.make = [component](const ParamValues& values) -> std::unique_ptr<Operation> {
    return std::make_unique<Sobel>(parseEnumOrThrow<SobelComponent>(choiceParam(values, component)),
                                   borderFromParams(values));
  };
  return info;
}

std::string Sobel::describe() const {
  return "sobel " + std::string(toString(component_)) + " " + gpulab::describe(border_);
}

ParamValues Sobel::params() const {
  ParamValues values{{"component", std::string(toString(component_))}};
  addBorderParams(values, border_);
  return values;
}

ImageShape Sobel::outputShape(const ImageShape& in) const {
  checkType(in);
  return {in.width, in.height, 1, in.type};
}

std::size_t Sobel::minimumBytesRead(const ImageShape& in) const {
  return static_cast<std::size_t>(in.width) * in.height * std::min(in.channels, 3) * bytesPerSample(in.type);
}

void Sobel::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("Sobel cannot run in place: give it a separate output image");
  if (out.empty() || out.width() != shape.width || out.height() != shape.height || out.channels() != 1 ||
      out.type() != shape.type)
    out = DeviceImage(shape.width, shape.height, 1, shape.type);
  const bool colour = in.channels() >= 3;
  const auto fill = static_cast<float>(border_.value);
  auto launch = [&](auto sample) {
    using T = decltype(sample);
    kernels::launchSobel<T>(planeOf<T>(in, 0), planeOf<T>(in, colour ? 1 : 0), planeOf<T>(in, colour ? 2 : 0), colour,
                            planeOf<T>(out, 0), toKernel(component_), toKernel(border_.mode), fill, gpu.stream());
  };
  if (shape.type == PixelType::U8)
    launch(std::uint8_t{});
  else
    launch(float{});
}

Image Sobel::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  const int width = shape.width, height = shape.height;
  Image out(width, height, 1, shape.type);
  try {
    // f32 gray is filtered as it is; everything else through the shared luminance.
    Image lumImage;
    if (in.type() != PixelType::F32 || in.channels() != 1) lumImage = luminanceOf(in, true);
    const cv::Mat lum = lumImage.empty() ? asMat(in) : asMat(lumImage);
    control.throwIfCancelled();
    control.report(0.2);

    // cv::Sobel pads with zeros for BORDER_CONSTANT and rejects BORDER_WRAP: pad by one pixel first.
    const bool pad = border_.mode == BorderMode::Wrap || (border_.mode == BorderMode::Constant && border_.value != 0.0);
    cv::Mat padded;
    if (pad)
      cv::copyMakeBorder(lum, padded, 1, 1, 1, 1, cvBorder(border_.mode),
                         cv::Scalar::all(static_cast<float>(border_.value)));
    const int cvMode = pad ? cv::BORDER_REFLECT_101 : cvBorder(border_.mode);
    auto rowsOf = [&](int a, int b) { return pad ? padded(cv::Rect(1, 1 + a, width, b - a)) : lum.rowRange(a, b); };

    const bool needX = component_ != SobelComponent::Y, needY = component_ != SobelComponent::X;
    cv::Mat dx(height, width, CV_32F), dy(height, width, CV_32F);
    parallelRows(height, [&](int a, int b) {
      if (needX) {
        cv::Mat strip = dx.rowRange(a, b);
        cv::Sobel(rowsOf(a, b), strip, CV_32F, 1, 0, 3, 1.0, 0.0, cvMode);
      }
      if (needY) {
        cv::Mat strip = dy.rowRange(a, b);
        cv::Sobel(rowsOf(a, b), strip, CV_32F, 0, 1, 3, 1.0, 0.0, cvMode);
      }
    });
    control.throwIfCancelled();
    control.report(0.7);

    cv::Mat result;
    switch (component_) {
      case SobelComponent::Magnitude:
        result.create(height, width, CV_32F);
        parallelRows(height, [&](int a, int b) {
          cv::Mat strip = result.rowRange(a, b);
          cv::magnitude(dx.rowRange(a, b), dy.rowRange(a, b), strip);
        });
        break;
      case SobelComponent::X:
        result = dx;
        break;
      case SobelComponent::Y:
        result = dy;
        break;
      case SobelComponent::Direction:
        // cv::phase is documented to about 0.3 degrees; the direction here is atan2 itself.
        result.create(height, width, CV_32F);
        parallelRows(height, [&](int a, int b) {
          for (int y = a; y < b; ++y)
            for (int x = 0; x < width; ++x) result.at<float>(y, x) = std::atan2(dy.at<float>(y, x), dx.at<float>(y, x));
        });
        break;
    }

    if (shape.type == PixelType::F32) {
      cv::Mat target = asMat(out);
      result.copyTo(target);
    } else {
      const kernels::SobelPart part = toKernel(component_);
      parallelRows(height, [&](int a, int b) {
        for (int y = a; y < b; ++y)
          for (int x = 0; x < width; ++x) out.at<std::uint8_t>(x, y) = kernels::sobelToU8(result.at<float>(y, x), part);
      });
    }
    control.report(1.0);
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the Sobel baseline");
  }
  return out;
}

Image Sobel::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  const int width = shape.width, height = shape.height;
  const Image lum = luminanceOf(in, false);
  const auto fill = static_cast<double>(static_cast<float>(border_.value));
  auto at = [&](int x, int y) -> double {
    const int xi = borderIndex(x, width, border_.mode);
    const int yi = borderIndex(y, height, border_.mode);
    return xi < 0 || yi < 0 ? fill : static_cast<double>(lum.at<float>(xi, yi));
  };
  Image out(width, height, 1, shape.type);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const double dx = (at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1)) -
                        (at(x - 1, y - 1) + 2 * at(x - 1, y) + at(x - 1, y + 1));
      const double dy = (at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1)) -
                        (at(x - 1, y - 1) + 2 * at(x, y - 1) + at(x + 1, y - 1));
      const double v = referenceValue(dx, dy, component_);
      if (shape.type == PixelType::U8)
        out.at<std::uint8_t>(x, y) = referenceU8(v, component_);
      else
        out.at<float>(x, y) = static_cast<float>(v);
    }
  return out;
}

}  // namespace gpulab
