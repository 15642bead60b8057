#include "gpulab/filters/gaussian.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/gaussian.cuh"
#include "gpulab/kernels/separable_conv.cuh"
#include "internal/cv_interop.hpp"
#include "internal/gaussian_support.hpp"
#include "internal/kernel_views.hpp"
#include "internal/planewise.hpp"

namespace gpulab {

using namespace cv_interop;

// ---------------------------------------------------------------------------------------------
// The kernel

int gaussianSizeFor(double sigma, PixelType type) {
  const double sides = type == PixelType::U8 ? 3.0 : 4.0;
  return static_cast<int>(std::lround(sigma * sides * 2.0 + 1.0)) | 1;
}

double gaussianDefaultSigma(int ksize) { return 0.3 * ((ksize - 1) * 0.5 - 1.0) + 0.8; }

std::vector<double> gaussianWeights(int ksize, double sigma) {
  std::vector<double> w(static_cast<std::size_t>(ksize));
  const double scale = -0.5 / (sigma * sigma);
  double sum = 0;
  for (int i = 0; i < ksize; ++i) {
    const double x = i - (ksize - 1) * 0.5;
    w[static_cast<std::size_t>(i)] = std::exp(scale * x * x);
    sum += w[static_cast<std::size_t>(i)];
  }
  for (double& v : w) v /= sum;
  return w;
}

namespace gaussian_detail {

void blurCv(const cv::Mat& src, cv::Mat& dst, int ksize, double sigma, const Border& border, double fill,
            const CpuControl& control) {
  const int r = ksize / 2;
  // Each band runs the row pass over its halo again: at most half the row pass more (a quarter of the
  // whole) where one band of this height takes longer than a round's aim, nothing otherwise.
  const int minRows = std::max(16, 2 * ksize);
  const cv::Size window(ksize, ksize);
  // OpenCV's filters reject BORDER_WRAP, pad with zeros for BORDER_CONSTANT and drop the vertical
  // pass of a one-row image: pad by the radius first and filter the padded image's interior (the
  // window never reaches past the padding).
  const bool pad = border.mode == BorderMode::Wrap || border.mode == BorderMode::Constant;
  // A band of a wide window (sigma 100: 801 taps, bands of 1,602 rows) goes in column pieces of about
  // kPieceMultiplyAdds: the row pass covers the band and its halo, the column pass the band.
  auto pieceCols = [&](int rows) {
    const double perColumn = (2.0 * rows + 2.0 * r) * ksize * src.channels();
    return static_cast<int>(kPieceMultiplyAdds / std::max(perColumn, 1.0));
  };
  if (pad) {
    cv::Mat padded;
    cv::copyMakeBorder(src, padded, r, r, r, r, cvBorder(border.mode), cv::Scalar::all(fill));
    parallelRows(
        control, src.rows,
        [&](int a, int b) {
          columnPieces(control, src.cols, pieceCols(b - a), [&](int x, int w) {
            cv::Mat piece = dst(cv::Rect(x, a, w, b - a));
            cv::GaussianBlur(padded(cv::Rect(r + x, r + a, w, b - a)), piece, window, sigma, sigma,
                             cv::BORDER_REFLECT_101);
          });
        },
        0, minRows);
    return;
  }
  parallelRows(
      control, src.rows,
      [&](int a, int b) {
        columnPieces(control, src.cols, pieceCols(b - a), [&](int x, int w) {
          cv::Mat piece = dst(cv::Rect(x, a, w, b - a));
          cv::GaussianBlur(src(cv::Rect(x, a, w, b - a)), piece, window, sigma, sigma, cvBorder(border.mode));
        });
      },
      0, minRows);
}

std::vector<double> blurReference(const Image& in, int c, const std::vector<double>& weights, const Border& border,
                                  double fill) {
  const int width = in.width(), height = in.height();
  const int r = static_cast<int>(weights.size()) / 2;
  auto sample = [&](int x, int y) {
    return in.type() == PixelType::U8 ? static_cast<double>(in.at<std::uint8_t>(x, y, c))
                                      : static_cast<double>(in.at<float>(x, y, c));
  };
  std::vector<double> rows(static_cast<std::size_t>(width) * height), out(rows.size());
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int k = -r; k <= r; ++k) {
        const int xi = borderIndex(x + k, width, border.mode);
        sum += weights[static_cast<std::size_t>(k + r)] * (xi < 0 ? fill : sample(xi, y));
      }
      rows[static_cast<std::size_t>(y) * width + x] = sum;
    }
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int k = -r; k <= r; ++k) {
        const int yi = borderIndex(y + k, height, border.mode);
        sum +=
            weights[static_cast<std::size_t>(k + r)] * (yi < 0 ? fill : rows[static_cast<std::size_t>(yi) * width + x]);
      }
      out[static_cast<std::size_t>(y) * width + x] = sum;
    }
  return out;
}

}  // namespace gaussian_detail

// ---------------------------------------------------------------------------------------------
// GaussianBlur

GaussianBlur::GaussianBlur(double sigma, int ksize, Border border) : sigma_(sigma), ksize_(ksize), border_(border) {
  if (!std::isfinite(sigma) || sigma < 0 || sigma > kMaxGaussianSigma)
    throw std::invalid_argument("Gaussian sigma " + std::to_string(sigma) + " is not allowed: use 0 to " +
                                std::to_string(static_cast<int>(kMaxGaussianSigma)));
  if (ksize < 0 || ksize > kMaxGaussianSize)
    throw std::invalid_argument("Gaussian ksize " + std::to_string(ksize) + " is not allowed: use 0 (from sigma) or " +
                                "an odd size 1 to " + std::to_string(kMaxGaussianSize));
  if (ksize != 0 && ksize % 2 == 0)
    throw std::invalid_argument("Gaussian ksize " + std::to_string(ksize) +
                                " is even: use an odd size (1, 3, 5 ...) or 0 to derive it from sigma");
  if (ksize == 0 && sigma == 0) throw std::invalid_argument("the Gaussian needs sigma > 0 or an odd ksize");
  if (ksize == 0 && gaussianSizeFor(sigma, PixelType::F32) > kMaxGaussianSize)
    throw std::invalid_argument("Gaussian sigma " + std::to_string(sigma) + " needs a window above " +
                                std::to_string(kMaxGaussianSize));
  if (!std::isfinite(border.value)) throw std::invalid_argument("the border value must be a finite number");
}

GaussianBlur::~GaussianBlur() = default;
GaussianBlur::GaussianBlur(GaussianBlur&&) noexcept = default;
GaussianBlur& GaussianBlur::operator=(GaussianBlur&&) noexcept = default;

int GaussianBlur::sizeFor(PixelType type) const { return ksize_ > 0 ? ksize_ : gaussianSizeFor(sigma_, type); }
double GaussianBlur::sigmaFor(PixelType type) const {
  return sigma_ > 0 ? sigma_ : gaussianDefaultSigma(sizeFor(type));
}

OperationInfo gaussianInfo() {
  OperationInfo info;
  info.name = "gaussian";
  info.title = "Gaussian blur";
  info.summary = "separable Gaussian, any sigma (OpenCV's GaussianBlur)";
  const ParamInfo sigma =
      ParamInfo::number("sigma", "standard deviation in pixels (0: from ksize)", 0, kMaxGaussianSigma, "2");
  const ParamInfo ksize =
      ParamInfo::integer("ksize", "odd window side; 0 (default): round(6 sigma + 1) for u8, round(8 sigma + 1) for f32",
                         0, kMaxGaussianSize, "0");
  info.params = {sigma, ksize};
  for (ParamInfo& p : borderParamInfos()) info.params.push_back(std::move(p));
  info.make = [sigma, ksize](const ParamValues& values) -> std::unique_ptr<Operation> {
    return std::make_unique<GaussianBlur>(numberParam(values, sigma), intParam(values, ksize),
                                          borderFromParams(values));
  };
  return info;
}

int GaussianBlur::reach() const {
  if (border_.mode == BorderMode::Wrap) return -1;
  return std::max(sizeFor(PixelType::U8), sizeFor(PixelType::F32)) / 2;
}

std::string GaussianBlur::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "gaussian sigma=%g ksize=%s ", sigma_,
                ksize_ > 0 ? std::to_string(ksize_).c_str() : "auto");
  return text + gpulab::describe(border_);
}

ParamValues GaussianBlur::params() const {
  char sigma[32];
  std::snprintf(sigma, sizeof sigma, "%.17g", sigma_);
  ParamValues values{{"sigma", sigma}, {"ksize", std::to_string(ksize_)}};
  addBorderParams(values, border_);
  return values;
}

ImageShape GaussianBlur::outputShape(const ImageShape& in) const {
  planewise::checkU8OrF32(in, "the Gaussian blur");
  return in;
}

DeviceLayout GaussianBlur::gpuLayout(const ImageShape& in) const {
  const bool interleaved = in.channels == 3 && (in.type == PixelType::U8 || in.type == PixelType::F32) &&
                           fusedGpu(in.type) && sizeFor(in.type) <= kernels::kSeparableMaxInterleavedTaps;
  return interleaved ? DeviceLayout::Interleaved : DeviceLayout::Planar;
}

void GaussianBlur::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("the Gaussian blur cannot run in place: give it a separate output");
  const DeviceLayout layout = in.layout();  // planar always; interleaved where gpuLayout says so
  if (layout == DeviceLayout::Interleaved && gpuLayout(shape) != layout)
    throw std::logic_error("the Gaussian blur takes this image planar on the GPU (Operation::gpuLayout)");
  if (layout == DeviceLayout::Interleaved) {
    if (!out.sameShape(in)) out = DeviceImage(shape.width, shape.height, shape.channels, shape.type, layout);
  } else {
    planewise::ensureShape(out, shape);
  }
  const int ksize = sizeFor(shape.type);
  if (weightsType_ != shape.type || weightsDevice_ != gpu.device() || weights_.empty()) {
    const std::vector<double> w = gaussianWeights(ksize, sigmaFor(shape.type));
    hostWeights_.assign(w.begin(), w.end());
    weights_ = DeviceBuffer(hostWeights_.size() * sizeof(float));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(weights_.data(), hostWeights_.data(), hostWeights_.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, gpu.stream()));
    weightsType_ = shape.type;
    weightsDevice_ = gpu.device();
  }
  if (fusedGpu(shape.type)) {
    // One fused pass (kernels/separable_conv.cuh): the same float taps in the same order, the row
    // sums kept in shared memory instead of a float plane in DRAM.
    kernels::SeparableGeometry g;
    g.kernelWidth = g.kernelHeight = ksize;
    g.anchorX = g.anchorY = ksize / 2;
    g.border = toKernel(border_.mode);
    std::copy(hostWeights_.begin(), hostWeights_.end(), g.rowWeights[0]);
    std::copy(hostWeights_.begin(), hostWeights_.end(), g.colWeights[0]);
    planewise::visitU8OrF32(shape.type, "the Gaussian blur", [&](auto sample) {
      using T = decltype(sample);
      const auto fill = static_cast<float>(planewise::borderSample<T>(border_.value));
      if (layout == DeviceLayout::Interleaved) {  // RGB rows as they are: one launch, three channels
        kernels::launchSeparableConv<T, 3>(pixelsOf<T>(in), pixelsOf<T>(out), 1, g, fill, gpu.stream());
        return;
      }
      const int planes = planewise::filteredChannels(shape);
      const kernels::Plane<const T> inStack{planeOf<T>(in, 0).data, in.width(), in.height(), in.pitch()};
      kernels::launchSeparableConv<T>(inStack, stackOf<T>(out), planes, g,
                                      static_cast<float>(planewise::borderSample<T>(border_.value)), gpu.stream());
      for (int c = planes; c < shape.channels; ++c) planewise::copyPlaneAsync(in, out, c, gpu.stream());
    });
    return;
  }
  const std::size_t pitch = planewise::floatPitch(shape.width);
  gpu.scratch().reserve(pitch * static_cast<std::size_t>(shape.height));
  const kernels::Plane<float> tmp{gpu.scratch().as<float>(), shape.width, shape.height, pitch};
  const kernels::Plane<const float> tmpIn{tmp.data, tmp.width, tmp.height, tmp.pitch};
  planewise::visitU8OrF32(shape.type, "the Gaussian blur", [&](auto sample) {
    using T = decltype(sample);
    const auto fill = static_cast<float>(planewise::borderSample<T>(border_.value));
    for (int c = 0; c < shape.channels; ++c) {
      if (c >= planewise::filteredChannels(shape)) {
        planewise::copyPlaneAsync(in, out, c, gpu.stream());
        continue;
      }
      kernels::launchGaussianRows<T>(planeOf<T>(in, c), tmp, weights_.as<float>(), ksize / 2, toKernel(border_.mode),
                                     fill, gpu.stream());
      kernels::launchGaussianColumns<T>(tmpIn, planeOf<T>(out, c), weights_.as<float>(), ksize / 2,
                                        toKernel(border_.mode), fill, gpu.stream());
    }
  });
}

Image GaussianBlur::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  // Every sample is written below: no zeroing (0.3 s of an 8192x8192 RGB f32 image, not cancellable).
  Image out = Image::uninitialized(shape.width, shape.height, shape.channels, shape.type);
  control.throwIfCancelled();
  try {
    const double fill = shape.type == PixelType::U8 ? planewise::borderU8(border_.value)
                                                    : static_cast<double>(static_cast<float>(border_.value));
    cv::Mat target = asMat(out);
    gaussian_detail::blurCv(asMat(in), target, sizeFor(shape.type), sigmaFor(shape.type), border_, fill, control);
    if (planewise::alphaPassesThrough(shape.type, shape.channels)) planewise::copyChannel(in, out, 3);
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the Gaussian blur baseline");
  }
  control.report(1.0);
  return out;
}

Image GaussianBlur::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, shape.channels, shape.type);
  const std::vector<double> w = gaussianWeights(sizeFor(shape.type), sigmaFor(shape.type));
  const double fill = shape.type == PixelType::U8 ? planewise::borderU8(border_.value)
                                                  : static_cast<double>(static_cast<float>(border_.value));
  for (int c = 0; c < shape.channels; ++c) {
    if (c >= planewise::filteredChannels(shape)) {
      planewise::copyChannel(in, out, c);
      continue;
    }
    const std::vector<double> blurred = gaussian_detail::blurReference(in, c, w, border_, fill);
    for (int y = 0; y < shape.height; ++y)
      for (int x = 0; x < shape.width; ++x) {
        const double v = blurred[static_cast<std::size_t>(y) * shape.width + x];
        if (shape.type == PixelType::U8)
          out.at<std::uint8_t>(x, y, c) = static_cast<std::uint8_t>(std::clamp(std::nearbyint(v), 0.0, 255.0));
        else
          out.at<float>(x, y, c) = static_cast<float>(v);
      }
  }
  return out;
}

}  // namespace gpulab
