#include "gpulab/filters/unsharp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/gaussian.cuh"
#include "gpulab/kernels/unsharp.cuh"
#include "internal/cv_interop.hpp"
#include "internal/gaussian_support.hpp"
#include "internal/kernel_views.hpp"
#include "internal/planewise.hpp"

namespace gpulab {

using namespace cv_interop;

namespace {

double fillOf(const Border& border, PixelType type) {
  return type == PixelType::U8 ? planewise::borderU8(border.value)
                               : static_cast<double>(static_cast<float>(border.value));
}

}  // namespace

UnsharpMask::UnsharpMask(double amount, double sigma, double threshold, int ksize, Border border)
    : amount_(amount), threshold_(threshold), blur_(sigma, ksize, border) {
  if (!std::isfinite(amount) || amount < 0 || amount > kMaxUnsharpAmount)
    throw std::invalid_argument("unsharp amount " + std::to_string(amount) + " is not allowed: use 0 to " +
                                std::to_string(static_cast<int>(kMaxUnsharpAmount)));
  if (!std::isfinite(threshold) || threshold < 0)
    throw std::invalid_argument("unsharp threshold " + std::to_string(threshold) +
                                " is not allowed: use 0 or more (sample units)");
}

OperationInfo unsharpInfo() {
  OperationInfo info;
  info.name = "unsharp";
  info.title = "Unsharp mask";
  info.summary = "in + amount * (in - Gaussian) where the difference reaches the threshold";
  const ParamInfo amount =
      ParamInfo::number("amount", "strength: 1 adds the full difference", 0, kMaxUnsharpAmount, "1");
  const ParamInfo sigma =
      ParamInfo::number("sigma", "the Gaussian's standard deviation in pixels (the radius)", 0, kMaxGaussianSigma, "2");
  const ParamInfo threshold = ParamInfo::number(
      "threshold", "sharpen only where |in - Gaussian| >= this (sample units; 0: everywhere)", 0, 1e30, "0");
  const ParamInfo ksize =
      ParamInfo::integer("ksize", "odd Gaussian window side; 0 (default): from sigma", 0, kMaxGaussianSize, "0");
  info.params = {amount, sigma, threshold, ksize};
  for (ParamInfo& p : borderParamInfos()) info.params.push_back(std::move(p));
  info.make = [amount, sigma, threshold, ksize](const ParamValues& values) -> std::unique_ptr<Operation> {
    return std::make_unique<UnsharpMask>(numberParam(values, amount), numberParam(values, sigma),
                                         numberParam(values, threshold), intParam(values, ksize),
                                         borderFromParams(values));
  };
  return info;
}

std::string UnsharpMask::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, "unsharp amount=%g threshold=%g ", amount_, threshold_);
  std::string blur = blur_.describe();  // "gaussian sigma=.. ksize=.. border"
  return text + blur.substr(blur.find(' ') + 1);
}

ParamValues UnsharpMask::params() const {
  ParamValues values = blur_.params();
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", amount_);
  values["amount"] = text;
  std::snprintf(text, sizeof text, "%.17g", threshold_);
  values["threshold"] = text;
  return values;
}

ImageShape UnsharpMask::outputShape(const ImageShape& in) const {
  planewise::checkU8OrF32(in, "the unsharp mask");
  return in;
}

void UnsharpMask::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("the unsharp mask cannot run in place: give it a separate output");
  planewise::ensureShape(out, shape);
  const int ksize = blur_.sizeFor(shape.type);
  if (weightsType_ != shape.type || weightsDevice_ != gpu.device() || weights_.empty()) {
    const std::vector<double> w = gaussianWeights(ksize, blur_.sigmaFor(shape.type));
    hostWeights_.assign(w.begin(), w.end());
    weights_ = DeviceBuffer(hostWeights_.size() * sizeof(float));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(weights_.data(), hostWeights_.data(), hostWeights_.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, gpu.stream()));
    weightsType_ = shape.type;
    weightsDevice_ = gpu.device();
  }
  const std::size_t pitch = planewise::floatPitch(shape.width);
  const std::size_t planeBytes = pitch * static_cast<std::size_t>(shape.height);
  gpu.scratch().reserve(2 * planeBytes);
  auto* base = static_cast<unsigned char*>(gpu.scratch().data());
  const kernels::Plane<float> tmp{reinterpret_cast<float*>(base), shape.width, shape.height, pitch};
  const kernels::Plane<float> blurred{reinterpret_cast<float*>(base + planeBytes), shape.width, shape.height, pitch};
  const Border& border = blur_.border();
  planewise::visitU8OrF32(shape.type, "the unsharp mask", [&](auto sample) {
    using T = decltype(sample);
    const auto fill = static_cast<float>(fillOf(border, shape.type));
    for (int c = 0; c < shape.channels; ++c) {
      if (c >= planewise::filteredChannels(shape)) {
        planewise::copyPlaneAsync(in, out, c, gpu.stream());
        continue;
      }
      kernels::launchGaussianRows<T>(planeOf<T>(in, c), tmp, weights_.as<float>(), ksize / 2, toKernel(border.mode),
                                     fill, gpu.stream());
      kernels::launchGaussianColumns<float>({tmp.data, tmp.width, tmp.height, tmp.pitch}, blurred, weights_.as<float>(),
                                            ksize / 2, toKernel(border.mode), fill, gpu.stream());
      kernels::launchUnsharpCombine<T>(planeOf<T>(in, c), {blurred.data, blurred.width, blurred.height, blurred.pitch},
                                       planeOf<T>(out, c), static_cast<float>(amount_), static_cast<float>(threshold_),
                                       gpu.stream());
    }
  });
}

Image UnsharpMask::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  // Every sample is written below: no zeroing (0.3 s of an 8192x8192 RGB f32 image, not cancellable).
  Image out = Image::uninitialized(shape.width, shape.height, shape.channels, shape.type);
  const int filtered = planewise::filteredChannels(shape);
  const auto amount = static_cast<float>(amount_), threshold = static_cast<float>(threshold_);
  try {
    cv::Mat source = asMat(in), samples, blurred;
    if (shape.type == PixelType::U8)
      source.convertTo(samples, CV_32F);
    else
      samples = source;
    control.throwIfCancelled();
    blurred.create(samples.size(), samples.type());
    gaussian_detail::blurCv(samples, blurred, blur_.sizeFor(shape.type), blur_.sigmaFor(shape.type), blur_.border(),
                            fillOf(blur_.border(), shape.type), control);
    control.throwIfCancelled();
    control.report(0.7);
    const int channels = shape.channels;
    parallelRows(shape.height, [&](int a, int b) {
      for (int y = a; y < b; ++y) {
        const float* s = samples.ptr<float>(y);
        const float* g = blurred.ptr<float>(y);
        for (int i = 0; i < shape.width * channels; ++i) {
          const int c = i % channels;
          if (shape.type == PixelType::U8) {
            auto* o = out.row<std::uint8_t>(y);
            o[i] = c < filtered ? cv::saturate_cast<std::uint8_t>(kernels::unsharpValue(s[i], g[i], amount, threshold))
                                : in.row<std::uint8_t>(y)[i];
          } else {
            out.row<float>(y)[i] = kernels::unsharpValue(s[i], g[i], amount, threshold);
          }
        }
      }
    });
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the unsharp mask baseline");
  }
  control.report(1.0);
  return out;
}

Image UnsharpMask::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, shape.channels, shape.type);
  const std::vector<double> w = gaussianWeights(blur_.sizeFor(shape.type), blur_.sigmaFor(shape.type));
  for (int c = 0; c < shape.channels; ++c) {
    if (c >= planewise::filteredChannels(shape)) {
      planewise::copyChannel(in, out, c);
      continue;
    }
    const std::vector<double> blurred =
        gaussian_detail::blurReference(in, c, w, blur_.border(), fillOf(blur_.border(), shape.type));
    for (int y = 0; y < shape.height; ++y)
      for (int x = 0; x < shape.width; ++x) {
        const double s = shape.type == PixelType::U8 ? in.at<std::uint8_t>(x, y, c) : in.at<float>(x, y, c);
        const double d = s - blurred[static_cast<std::size_t>(y) * shape.width + x];
        const double v = std::abs(d) >= threshold_ ? s + amount_ * d : s;
        if (shape.type == PixelType::U8)
          out.at<std::uint8_t>(x, y, c) = static_cast<std::uint8_t>(std::clamp(std::nearbyint(v), 0.0, 255.0));
        else
          out.at<float>(x, y, c) = static_cast<float>(v);
      }
  }
  return out;
}

}  // namespace gpulab
