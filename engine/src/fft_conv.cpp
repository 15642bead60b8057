#include "gpulab/fft_conv.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <type_traits>

#include "fft_support.hpp"
#include "gpulab/cuda_error.hpp"
#include "gpulab/kernels/fft_conv.cuh"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Sizes and geometry

namespace {

bool isSmooth(int n, FftSizeRule rule) {
  for (int p : {2, 3, 5, 7}) {
    if (p == 7 && rule == FftSizeRule::OpenCv) break;
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

std::string sizeText(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

int nextFftSize(int n, FftSizeRule rule) {
  if (n < 1) throw std::invalid_argument("an FFT size must be at least 1, not " + std::to_string(n));
  if (rule == FftSizeRule::OpenCv) return cv::getOptimalDFTSize(n);
  while (!isSmooth(n, rule)) ++n;
  return n;
}

FftConvGeometry fftConvGeometry(int width, int height, int kw, int kh, ConvMode mode, FftSizeRule rule) {
  if (width < 1 || height < 1 || kw < 1 || kh < 1)
    throw std::invalid_argument("convolution needs a non-empty image and kernel, got a " + sizeText(width, height) +
                                " image and a " + sizeText(kw, kh) + " kernel");
  FftConvGeometry g;
  switch (mode) {
    case ConvMode::Same:
      g.outWidth = width;
      g.outHeight = height;
      g.originX = (kw - 1) / 2;
      g.originY = (kh - 1) / 2;
      break;
    case ConvMode::Full:
      g.outWidth = width + kw - 1;
      g.outHeight = height + kh - 1;
      break;
    case ConvMode::Valid:
      if (kw > width || kh > height)
        throw std::invalid_argument("'valid' convolution of a " + sizeText(width, height) + " image with a " +
                                    sizeText(kw, kh) + " kernel would be empty: the kernel must fit inside the image");
      g.outWidth = width - kw + 1;
      g.outHeight = height - kh + 1;
      g.originX = kw - 1;
      g.originY = kh - 1;
      break;
  }
  g.neededWidth = g.outWidth + kw - 1;
  g.neededHeight = g.outHeight + kh - 1;
  g.paddedWidth = nextFftSize(g.neededWidth, rule);
  g.paddedHeight = nextFftSize(g.neededHeight, rule);
  return g;
}

void validateFftConvSpec(const FilterSpec& spec) {
  const Kernel2D& k = spec.kernel;
  if (k.width < 1 || k.height < 1 || k.values.empty())
    throw std::invalid_argument("the convolution kernel is empty: give at least one coefficient");
  if (k.values.size() != static_cast<std::size_t>(k.width) * k.height)
    throw std::invalid_argument("the convolution kernel is ragged: " + sizeText(k.width, k.height) + " needs " +
                                std::to_string(static_cast<std::size_t>(k.width) * k.height) + " coefficients, got " +
                                std::to_string(k.values.size()));
  if (k.width > kMaxFftKernelSide || k.height > kMaxFftKernelSide)
    throw std::invalid_argument("a " + sizeText(k.width, k.height) + " kernel exceeds the FFT path's limit of " +
                                std::to_string(kMaxFftKernelSide) + " per side");
  for (std::size_t i = 0; i < k.values.size(); ++i)
    if (!std::isfinite(k.values[i]))
      throw std::invalid_argument("kernel coefficient " + std::to_string(i) + " is not a finite number");
  if (spec.border.mode == BorderMode::Constant && !std::isfinite(spec.border.value))
    throw std::invalid_argument("the constant border value must be a finite number");
  switch (spec.border.mode) {
    case BorderMode::Reflect101:
    case BorderMode::Reflect:
    case BorderMode::Replicate:
    case BorderMode::Wrap:
    case BorderMode::Constant:
      break;
    default:
      throw std::invalid_argument("unknown border mode: use " + borderModeNames());
  }
  switch (spec.mode) {
    case ConvMode::Same:
    case ConvMode::Full:
    case ConvMode::Valid:
      break;
    default:
      throw std::invalid_argument("unknown convolution output mode: use same, full or valid");
  }
}

// ---------------------------------------------------------------------------------------------
// FftConvolver

struct FftConvolver::CpuCache {
  std::mutex mutex;
  std::map<std::tuple<int, int, int>, cv::Mat> spectra;  // (Wp, Hp, depth) -> CCS spectrum of the kernel
};

namespace {

enum Stage : int { kPad = 1, kForward = 2, kMultiply = 4, kInverse = 8, kCrop = 16, kAllStages = 31 };

const char* modeName(ConvMode mode) {
  switch (mode) {
    case ConvMode::Same:
      return "same";
    case ConvMode::Full:
      return "full";
    case ConvMode::Valid:
      return "valid";
  }
  return "?";
}

template <class F>
void dispatchConvType(PixelType type, F&& f) {
  switch (type) {
    case PixelType::U8:
      f(std::uint8_t{}, float{});
      return;
    case PixelType::F32:
      f(float{}, float{});
      return;
    case PixelType::F64:
      f(double{}, double{});
      return;
  }
}

/// Conv2D's rule: u8 RGBA in 'same' mode passes alpha through; every other channel is convolved.
int convolvedChannels(const ImageShape& in, ConvMode mode) {
  return in.type == PixelType::U8 && in.channels == 4 && mode == ConvMode::Same ? 3 : in.channels;
}

/// The constant border value converted to the sample type first (u8: rounded and saturated), as Conv2D does.
double borderValueFor(PixelType type, double value) {
  switch (type) {
    case PixelType::U8:
      return std::clamp(std::nearbyint(value), 0.0, 255.0);
    case PixelType::F32:
      return static_cast<double>(static_cast<float>(value));
    case PixelType::F64:
      return value;
  }
  return value;
}

void checkChannels(const ImageShape& in) {
  if (in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("convolution needs a non-empty image, got " + sizeText(in.width, in.height));
  if (in.type == PixelType::U8 && in.channels != 1 && in.channels != 3 && in.channels != 4)
    throw std::invalid_argument("convolution takes u8 images with 1, 3 or 4 channels, not " +
                                std::to_string(in.channels));
  if (in.channels < 1 || in.channels > kMaxChannels)
    throw std::invalid_argument("convolution takes f32 and f64 images with 1 to 4 channels, not " +
                                std::to_string(in.channels));
}

}  // namespace

FftConvolver::FftConvolver(const FilterSpec& spec) : spec_(spec), cpu_(std::make_unique<CpuCache>()) {
  validateFftConvSpec(spec_);
  const Kernel2D& k = spec_.kernel;
  taps_.resize(k.values.size());
  for (int i = 0; i < k.height; ++i)
    for (int j = 0; j < k.width; ++j)
      taps_[static_cast<std::size_t>(i) * k.width + j] =
          spec_.correlate ? k.at(k.width - 1 - j, k.height - 1 - i) : k.at(j, i);
  tapsSingle_.assign(taps_.begin(), taps_.end());
}

FftConvolver::~FftConvolver() = default;
FftConvolver::FftConvolver(FftConvolver&&) noexcept = default;
FftConvolver& FftConvolver::operator=(FftConvolver&&) noexcept = default;

std::string FftConvolver::describe() const {
  return std::string(spec_.correlate ? "correlate " : "conv ") + sizeText(spec_.kernel.width, spec_.kernel.height) +
         " " + modeName(spec_.mode) + " " + std::string(toString(spec_.border.mode)) + " fft";
}

ImageShape FftConvolver::outputShape(const ImageShape& in) const {
  checkChannels(in);
  const FftConvGeometry g = geometry(in.width, in.height);
  return {g.outWidth, g.outHeight, in.channels, in.type};
}

FftConvGeometry FftConvolver::geometry(int width, int height) const {
  return fftConvGeometry(width, height, spec_.kernel.width, spec_.kernel.height, spec_.mode, FftSizeRule::Cufft);
}

template <class Real>
const void* FftConvolver::kernelSpectrum(GpuContext& gpu, int paddedWidth, int paddedHeight) {
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  const auto key = std::make_tuple(paddedWidth, paddedHeight, precision);
  if (auto it = kernelSpectra_.find(key); it != kernelSpectra_.end()) return it->second.data();

  cudaStream_t stream = gpu.stream();
  const int kw = spec_.kernel.width, kh = spec_.kernel.height;
  const std::size_t tapBytes = taps_.size() * sizeof(Real);
  growDeviceBuffer(deviceTaps_, tapBytes, stream);
  const void* source = std::is_same_v<Real, float> ? static_cast<const void*>(tapsSingle_.data())
                                                   : static_cast<const void*>(taps_.data());
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(deviceTaps_.data(), source, tapBytes, cudaMemcpyHostToDevice, stream));

  const FftPlanKey planKey = FftPlanKey::packed(paddedWidth, paddedHeight, 1, precision, FftDirection::Forward);
  const std::size_t planeBytes = static_cast<std::size_t>(paddedWidth) * paddedHeight * sizeof(Real);
  growDeviceBuffer(real_, planeBytes, stream);
  DeviceBuffer spectrum(planKey.complexPlaneSize() * complexBytes(precision));
  GPULAB_CUDA_CHECK(cudaMemsetAsync(real_.data(), 0, planeBytes, stream));
  kernels::launchPlaceKernel<Real>(deviceTaps_.as<Real>(), kw, kh, real_.as<Real>(), paddedWidth, stream);
  plans_.execute(planKey, real_.data(), spectrum.data(), stream);
  return kernelSpectra_.emplace(key, std::move(spectrum)).first->second.data();
}

template <class T, class Real>
void FftConvolver::enqueue(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, int stages) {
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  const int kw = spec_.kernel.width, kh = spec_.kernel.height;
  const FftConvGeometry g = geometry(in.width(), in.height());
  const int planes = convolvedChannels(shapeOf(in), spec_.mode);
  const int wp = g.paddedWidth, hp = g.paddedHeight;
  cudaStream_t stream = gpu.stream();

  const auto* kernelBins = static_cast<const kernels::Complex<Real>*>(kernelSpectrum<Real>(gpu, wp, hp));
  const FftPlanKey forwardKey = FftPlanKey::packed(wp, hp, planes, precision, FftDirection::Forward);
  const FftPlanKey inverseKey = FftPlanKey::packed(wp, hp, planes, precision, FftDirection::Inverse);
  growDeviceBuffer(real_, static_cast<std::size_t>(wp) * hp * planes * sizeof(Real), stream);
  growDeviceBuffer(spectrum_, forwardKey.complexPlaneSize() * planes * complexBytes(precision), stream);

  if (stages == 0) {  // prepare(): plans and buffers only
    plans_.plan(forwardKey, stream);
    plans_.plan(inverseKey, stream);
    return;
  }
  if (stages & kPad) {
    kernels::PadRegion region;
    region.dstWidth = wp;
    region.dstHeight = hp;
    region.fillWidth = g.neededWidth;
    region.fillHeight = g.neededHeight;
    region.originX = g.originX - (kw - 1);
    region.originY = g.originY - (kh - 1);
    region.mode = spec_.border.mode;
    region.value = borderValueFor(in.type(), spec_.border.value);
    kernels::launchBorderPad<T, Real>(in.plane<T>(0), planes, real_.as<Real>(), region, stream);
  }
  if (stages & kForward) plans_.execute(forwardKey, real_.data(), spectrum_.data(), stream);
  if (stages & kMultiply) {
    const Real scale = Real(1) / (static_cast<Real>(wp) * static_cast<Real>(hp));
    kernels::launchMultiplySpectra<Real>(spectrum_.as<kernels::Complex<Real>>(), kernelBins,
                                         forwardKey.complexPlaneSize(), planes, scale, stream);
  }
  if (stages & kInverse) plans_.execute(inverseKey, spectrum_.data(), real_.data(), stream);
  if (stages & kCrop) {
    kernels::launchCropConvert<Real, T>(real_.as<Real>(), wp, hp, kw - 1, kh - 1, planes, out.stack<T>(), stream);
    if (planes < in.channels() && in.plane<T>(planes).data != out.plane<T>(planes).data)  // alpha, 'same' mode
      GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.plane<T>(planes).data, out.pitch(), in.plane<T>(planes).data, in.pitch(),
                                          static_cast<std::size_t>(in.width()) * sizeof(T), in.height(),
                                          cudaMemcpyDeviceToDevice, stream));
  }
}

namespace {

void prepareOutput(const DeviceImage& in, DeviceImage& out, const ImageShape& shape) {
  if (in.empty()) throw std::invalid_argument("cannot convolve an empty device image");
  const bool fits = out.width() == shape.width && out.height() == shape.height && out.channels() == shape.channels &&
                    out.type() == shape.type && !out.empty();
  if (fits) return;
  if (&out == &in)
    throw std::invalid_argument(
        "an in-place convolution must keep the image's size: use 'same' mode or another output");
  out = DeviceImage(shape.width, shape.height, shape.channels, shape.type);
}

}  // namespace

double FftConvolver::prepare(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  prepareOutput(in, out, outputShape(shapeOf(in)));
  dispatchConvType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, 0); });
  gpu.synchronize();
  return plans_.takeCreationMs();
}

void FftConvolver::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  prepareOutput(in, out, outputShape(shapeOf(in)));
  dispatchConvType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, kAllStages); });
}

FftConvolver::StageTimes FftConvolver::profileGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out,
                                                  TimingOptions options) {
  prepare(gpu, in, out);
  auto stage = [&](int which) {
    return timeStream(
        gpu.stream(),
        [&] {
          dispatchConvType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, which); });
        },
        options);
  };
  StageTimes times;
  times.pad = stage(kPad);
  times.forward = stage(kForward);
  times.multiply = stage(kMultiply);
  times.inverse = stage(kInverse);
  times.crop = stage(kCrop);
  runGpu(gpu, in, out);  // the stages ran out of order: leave a correct result behind
  gpu.synchronize();
  return times;
}

std::size_t FftConvolver::minimumBytesMoved(const ImageShape& in) const {
  const FftConvGeometry g = geometry(in.width, in.height);
  const int planes = convolvedChannels(in, spec_.mode);
  const std::size_t real = in.type == PixelType::F64 ? 8 : 4;
  const std::size_t sample = bytesPerSample(in.type);
  const std::size_t plane = static_cast<std::size_t>(g.paddedWidth) * g.paddedHeight * real;
  const std::size_t bins = static_cast<std::size_t>(g.paddedWidth / 2 + 1) * g.paddedHeight * 2 * real;
  const std::size_t image = static_cast<std::size_t>(in.width) * in.height * sample;
  const std::size_t output = static_cast<std::size_t>(g.outWidth) * g.outHeight;
  std::size_t bytes = planes * (image + plane)              // pad
                      + planes * (plane + bins)             // forward
                      + bins + 2 * planes * bins            // multiply: kernel spectrum once, the image's in and out
                      + planes * (bins + plane)             // inverse
                      + planes * output * (real + sample);  // crop
  bytes += static_cast<std::size_t>(in.channels - planes) * 2 * image;  // alpha, copied
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// CPU baseline

Image FftConvolver::runCpu(const Image& in, const CpuControl& control) const {
  if (in.empty()) throw std::invalid_argument("cannot convolve an empty image");
  checkChannels(shapeOf(in));
  const int kw = spec_.kernel.width, kh = spec_.kernel.height;
  const FftConvGeometry g = fftConvGeometry(in.width(), in.height(), kw, kh, spec_.mode, FftSizeRule::OpenCv);
  const int planes = convolvedChannels(shapeOf(in), spec_.mode);
  const int depth = in.type() == PixelType::F64 ? CV_64F : CV_32F;
  const int wp = g.paddedWidth, hp = g.paddedHeight;

  cv::Mat kernelBins;
  {
    std::lock_guard lock(cpu_->mutex);
    cv::Mat& cached = cpu_->spectra[std::make_tuple(wp, hp, depth)];
    if (cached.empty()) {
      cv::Mat padded = cv::Mat::zeros(hp, wp, depth);
      cv::Mat taps(kh, kw, CV_64F, const_cast<double*>(taps_.data()));
      taps.convertTo(padded(cv::Rect(0, 0, kw, kh)), depth);
      cv::dft(padded, cached, 0, wp > 1 ? kh : 0);
    }
    kernelBins = cached;  // shares the data; the cache never modifies an entry
  }

  // Column and row sources of the padded plane: P(u, v) = ext(u + oy0, v + ox0).
  const int ox0 = g.originX - (kw - 1), oy0 = g.originY - (kh - 1);
  std::vector<int> columns(g.neededWidth), rows(g.neededHeight);
  for (int v = 0; v < g.neededWidth; ++v) columns[v] = kernels::borderIndex(v + ox0, in.width(), spec_.border.mode);
  for (int u = 0; u < g.neededHeight; ++u) rows[u] = kernels::borderIndex(u + oy0, in.height(), spec_.border.mode);
  const double value = borderValueFor(in.type(), spec_.border.value);
  // cv::dft's nonzeroRows shortcut (skip the rows that are zero / not needed) refuses one-column planes.
  const int nonzeroRows = wp > 1 ? g.neededHeight : 0;

  Image out(g.outWidth, g.outHeight, in.channels(), in.type());
  for (int c = 0; c < planes; ++c) {
    throwIfCancelled(control);
    const cv::Mat channel = channelMat(in, c, CV_64F);
    cv::Mat padded = cv::Mat::zeros(hp, wp, depth);
    cv::parallel_for_(cv::Range(0, g.neededHeight), [&](const cv::Range& range) {
      for (int u = range.start; u < range.end; ++u) {
        const double* src = rows[u] < 0 ? nullptr : channel.ptr<double>(rows[u]);
        for (int v = 0; v < g.neededWidth; ++v) {
          const double x = (src == nullptr || columns[v] < 0) ? value : src[columns[v]];
          if (depth == CV_64F)
            padded.at<double>(u, v) = x;
          else
            padded.at<float>(u, v) = static_cast<float>(x);
        }
      }
    });
    cv::Mat bins;
    cv::dft(padded, bins, 0, nonzeroRows);
    cv::mulSpectrums(bins, kernelBins, bins, 0);
    cv::Mat result;
    cv::idft(bins, result, cv::DFT_SCALE | cv::DFT_REAL_OUTPUT, nonzeroRows);
    storeChannel(result(cv::Rect(kw - 1, kh - 1, g.outWidth, g.outHeight)), out, c);
    reportProgress(control, static_cast<double>(c + 1) / planes);
  }
  for (int c = planes; c < in.channels(); ++c)  // alpha, 'same' mode: passes through
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) out.at<std::uint8_t>(x, y, c) = in.at<std::uint8_t>(x, y, c);
  return out;
}

}  // namespace gpulab
