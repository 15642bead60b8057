#include "gpulab/filters/conv2d.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "gpulab/kernels/conv2d.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/conv_support.hpp"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {

static_assert(Conv2D::kMaxKernelSize == kernels::kConv2DMaxKernelSize);

// ---------------------------------------------------------------------------------------------
// Construction and shapes

Conv2D::Conv2D(const FilterSpec& spec)
    : kernel_(spec.kernel), correlate_(spec.correlate), mode_(spec.mode), border_(spec.border) {
  const int kw = kernel_.width, kh = kernel_.height;
  if (kw <= 0 || kh <= 0 || kernel_.values.empty())
    throw std::invalid_argument("the convolution kernel is empty; give at least one coefficient");
  if (kernel_.values.size() != static_cast<std::size_t>(kw) * static_cast<std::size_t>(kh))
    throw std::invalid_argument("the convolution kernel has " + std::to_string(kernel_.values.size()) +
                                " values but its size " + sizeText(kw, kh) + " needs " +
                                std::to_string(static_cast<std::size_t>(kw) * static_cast<std::size_t>(kh)));
  if (kw > kMaxKernelSize || kh > kMaxKernelSize)
    throw std::invalid_argument("the convolution kernel " + sizeText(kw, kh) +
                                " is larger than the largest supported, " + sizeText(kMaxKernelSize, kMaxKernelSize));
  for (int y = 0; y < kh; ++y)
    for (int x = 0; x < kw; ++x)
      if (!std::isfinite(kernel_.at(x, y))) {
        std::ostringstream os;
        os << "the convolution kernel has a non-finite coefficient (" << kernel_.at(x, y) << ") at row " << y
           << ", column " << x << "; every coefficient must be a finite number";
        throw std::invalid_argument(os.str());
      }
  if (mode_ != ConvMode::Same && mode_ != ConvMode::Full && mode_ != ConvMode::Valid)
    throw std::invalid_argument("unknown convolution output mode; use same, full or valid");
  switch (border_.mode) {
    case BorderMode::Reflect101:
    case BorderMode::Reflect:
    case BorderMode::Replicate:
    case BorderMode::Wrap:
      break;
    case BorderMode::Constant:
      if (!std::isfinite(border_.value))
        throw std::invalid_argument("the constant border value must be a finite number");
      break;
    default:
      throw std::invalid_argument("unknown border mode; use one of " + enumNames<BorderMode>());
  }

  // Correlation form: out(x, y) = sum w(q, p) * in(x - anchorX + q, y - anchorY + p).
  weights_.resize(kernel_.values.size());
  for (int p = 0; p < kh; ++p)
    for (int q = 0; q < kw; ++q)
      weights_[static_cast<std::size_t>(p) * kw + q] =
          correlate_ ? kernel_.at(q, p) : kernel_.at(kw - 1 - q, kh - 1 - p);
  weightsFloat_.assign(weights_.begin(), weights_.end());
}

int Conv2D::anchorX() const noexcept { return kernel_.width - 1 - fullOffset(mode_, kernel_.width); }
int Conv2D::anchorY() const noexcept { return kernel_.height - 1 - fullOffset(mode_, kernel_.height); }

std::string Conv2D::describe() const {
  return describeConvolution(kernel_, correlate_, mode_, border_, ConvMethod::Direct);
}

ParamValues Conv2D::params() const {
  return convolutionParams(kernel_, correlate_, mode_, border_, ConvMethod::Direct);
}

ImageShape Conv2D::outputShape(const ImageShape& in) const {
  if (in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("convolution needs a non-empty image, got " + sizeText(in.width, in.height));
  if (in.type == PixelType::U16)
    throw std::invalid_argument("convolution takes u8, f32 and f64 images, not u16: convert the image to f32 first");
  if (in.type == PixelType::U8) {
    if (in.channels != 1 && in.channels != 3 && in.channels != 4)
      throw std::invalid_argument("convolution takes u8 images with 1, 3 or 4 channels, not " +
                                  std::to_string(in.channels));
  } else if (in.channels < 1 || in.channels > kMaxChannels) {
    throw std::invalid_argument("convolution takes f32 and f64 images with 1 to 4 channels, not " +
                                std::to_string(in.channels));
  }
  checkKernelFitsType(kernel_, in.type);
  const int kw = kernel_.width, kh = kernel_.height;
  ImageShape out = in;
  switch (mode_) {
    case ConvMode::Same:
      break;
    case ConvMode::Full:
      out.width = in.width + kw - 1;
      out.height = in.height + kh - 1;
      break;
    case ConvMode::Valid:
      if (kw > in.width || kh > in.height)
        throw std::invalid_argument("a 'valid' convolution of a " + sizeText(in.width, in.height) + " image with a " +
                                    sizeText(kw, kh) +
                                    " kernel would be empty; the kernel must not be larger than the image");
      out.width = in.width - kw + 1;
      out.height = in.height - kh + 1;
      break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// GPU

void Conv2D::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty device image");
  if (&in == &out) throw std::invalid_argument("convolution cannot run in place; give it a separate output image");
  const ImageShape os = outputShape(shapeOf(in));
  if (out.empty() || out.width() != os.width || out.height() != os.height || out.channels() != os.channels ||
      out.type() != os.type)
    out = DeviceImage(os.width, os.height, os.channels, os.type);
  visitPixelType(in.type(), [&](auto sample) { runGpuTyped<decltype(sample)>(gpu, in, out); });
}

template <class T>
void Conv2D::runGpuTyped(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  using Acc = kernels::Conv2DAccumulator<T>;
  constexpr bool kDouble = std::is_same_v<Acc, double>;
  const Acc* hostWeights = nullptr;
  if constexpr (kDouble)
    hostWeights = weights_.data();
  else
    hostWeights = weightsFloat_.data();

  const Acc* deviceWeights = nullptr;
  if (weights_.size() > static_cast<std::size_t>(kernels::kConv2DMaxLaunchCoefficients)) {
    DeviceBuffer& buffer = kDouble ? deviceWeightsDouble_ : deviceWeightsFloat_;
    int& owner = kDouble ? deviceWeightsDoubleDevice_ : deviceWeightsFloatDevice_;
    if (buffer.empty() || owner != gpu.device()) {
      // Once per device: later runs reuse it (stream-ordered before the first kernel that reads it).
      const std::size_t bytes = weights_.size() * sizeof(Acc);
      buffer = DeviceBuffer(bytes);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), hostWeights, bytes, cudaMemcpyHostToDevice, gpu.stream()));
      owner = gpu.device();
    }
    deviceWeights = buffer.as<Acc>();
  }

  kernels::Conv2DGeometry geometry;
  geometry.kernelWidth = kernel_.width;
  geometry.kernelHeight = kernel_.height;
  geometry.anchorX = anchorX();
  geometry.anchorY = anchorY();
  geometry.border = toKernel(border_.mode);

  const bool alpha = convolvedChannels(shapeOf(in), mode_) < in.channels();
  const int planes = alpha ? 3 : in.channels();
  const kernels::Plane<const T> inStack{planeOf<T>(in, 0).data, in.width(), in.height(), in.pitch()};
  kernels::launchConv2D<T>(inStack, stackOf<T>(out), planes, geometry, hostWeights, deviceWeights,
                           toSample<T>(border_.value), gpu.stream());
  if (alpha)
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planeOf<T>(out, 3).data, out.pitch(), planeOf<T>(in, 3).data, in.pitch(),
                                        static_cast<std::size_t>(in.width()) * sizeof(T), in.height(),
                                        cudaMemcpyDeviceToDevice, gpu.stream()));
}

// ---------------------------------------------------------------------------------------------
// CPU baseline: OpenCV filter2D on all cores, one channel at a time

Image Conv2D::runCpu(const Image& in, const CpuControl& control) const {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty image");
  const ImageShape os = outputShape(shapeOf(in));
  // Every channel of every output sample is written below (filtered, or the alpha copied): not
  // zeroed first, which for 8192x8192 RGB f32 took up to 2.5 s before the first cancel check.
  Image out = Image::uninitialized(os.width, os.height, os.channels, os.type);
  const cv::Mat src = cv_interop::asMat(in);
  cv::Mat dst = cv_interop::asMat(out);

  // filter2D correlates: the correlation-form weights with the anchor give the convolution.
  const int kernelDepth = in.type() == PixelType::F64 ? CV_64F : CV_32F;
  cv::Mat weights(kernel_.height, kernel_.width, CV_64F, const_cast<double*>(weights_.data()));
  cv::Mat cvKernel;
  weights.convertTo(cvKernel, kernelDepth);

  double fill = 0.0;
  visitPixelType(in.type(),
                 [&](auto sample) { fill = static_cast<double>(toSample<decltype(sample)>(border_.value)); });
  // filter2D itself only knows a zero constant and no wrap; 'full' and 'valid' need other sizes.
  // Those cases pad explicitly with copyMakeBorder and take the top-left outW x outH of a filter2D
  // anchored at (0, 0) over the padded plane. Both run in row strips on OpenCV's threads (filter2D
  // alone uses one core on some builds, and its DFT path always does).
  const bool direct = mode_ == ConvMode::Same && border_.mode != BorderMode::Wrap &&
                      (border_.mode != BorderMode::Constant || fill == 0.0);
  const int ax = anchorX(), ay = anchorY();
  const bool alpha = convolvedChannels(shapeOf(in), mode_) < in.channels();
  // filter2D over a one-row range of a taller image gets that row wrong (OpenCV 4.6): strips of at
  // least 16 rows, and no fewer rows than the kernel has.
  const int minRows = std::max(16, kernel_.height);
  const int strips = std::clamp(os.height / minRows, 1, std::max(1, cv::getNumThreads()));
  // Cancelling. filter2D takes its DFT path (from 50 taps) only for a whole image, never for a ROI
  // (OpenCV 4.6's dftFilter2D returns for any offset or size short of the parent's): a row range of
  // the plane is filtered directly, exactly, wherever it falls. So with a cancel flag the direct
  // path runs in bands that follow the machine's speed (cv_interop::parallelRows), and a band of a
  // large kernel in column pieces of about kPieceMultiplyAdds (cv_interop::columnPieces), the flag
  // checked between them: a 127x127 kernel costs 16,129 multiply-adds a pixel, so 128 rows of a
  // 16K-wide image take seconds. Results are bit-identical to the strips without a flag. One strip
  // (a small image, one thread) stays one whole-image call, by DFT from 50 taps, as before. The
  // padded path filters each strip as an isolated image (DFT from 50 taps: the strips' geometry
  // shows in the last bits), so its strips stay one per thread, as before, unless the kernel is
  // small enough to be direct.
  // Pieces no narrower than kMinPieceCols: filter2D passes over a row once per kernel tap, and a
  // narrow piece pays that pass's setup on few pixels (800-column pieces of a 63x63 kernel cost 23%
  // more than whole 2048-pixel rows here; 1024-column ones 6%).
  constexpr int kMinPieceCols = 1024;
  const double taps = static_cast<double>(kernel_.width) * kernel_.height;
  const bool isolatedByDft = taps >= 50;

  try {
    for (int c = 0; c < in.channels(); ++c) {
      control.throwIfCancelled();
      cv::Mat plane;
      if (in.channels() == 1)
        plane = src;
      else
        cv::extractChannel(src, plane, c);
      cv::Mat result;
      if (alpha && c == 3) {
        result = plane;
      } else if (direct) {
        result.create(os.height, os.width, plane.type());
        cv_interop::parallelRows(
            control, os.height,
            [&](int a, int b) {
              // A range still sees the pixels around it: pieces give the whole-image result.
              const int pieceCols = std::max(
                  {static_cast<int>(cv_interop::kPieceMultiplyAdds / (taps * (b - a))), kMinPieceCols, kernel_.width});
              cv_interop::columnPieces(control, os.width, pieceCols, [&](int x, int w) {
                cv::Mat piece = result(cv::Rect(x, a, w, b - a));
                cv::filter2D(plane(cv::Rect(x, a, w, b - a)), piece, -1, cvKernel, cv::Point(ax, ay), 0,
                             cv_interop::cvBorder(border_.mode));
              });
            },
            strips, minRows);
      } else {
        cv::Mat padded;
        cv::copyMakeBorder(plane, padded, ay, os.height + kernel_.height - 1 - in.height() - ay, ax,
                           os.width + kernel_.width - 1 - in.width() - ax, cv_interop::cvBorder(border_.mode),
                           cv::Scalar::all(fill));
        result.create(os.height, os.width, plane.type());
        cv_interop::parallelRows(
            isolatedByDft ? CpuControl{} : control, os.height,
            [&](int a, int b) {
              // Output rows [a, b) read padded rows [a, b + kh - 1): pass exactly those, so no border
              // rule of filter2D ever applies to a sample that is kept.
              cv::Mat filtered;
              cv::filter2D(padded(cv::Rect(0, a, padded.cols, b - a + kernel_.height - 1)), filtered, -1, cvKernel,
                           cv::Point(0, 0), 0, cv::BORDER_CONSTANT | cv::BORDER_ISOLATED);
              cv::Mat strip = result.rowRange(a, b);
              filtered(cv::Rect(0, 0, os.width, b - a)).copyTo(strip);
            },
            strips, minRows);
      }
      if (os.channels == 1)
        result.copyTo(dst);
      else
        cv::insertChannel(result, dst, c);
      control.report(static_cast<double>(c + 1) / in.channels());
    }
  } catch (const cv::Exception& e) {
    cv_interop::rethrowOpenCv(e, "the convolution baseline");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Naive reference: scipy.signal.convolve2d's definition, literally, in double

Image Conv2D::runReference(const Image& in) const {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty image");
  return convolutionReference(in, outputShape(shapeOf(in)), kernel_, correlate_, mode_, border_);
}

}  // namespace gpulab
