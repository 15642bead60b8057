#include "gpulab/fft/fft_conv.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <type_traits>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_conv.cuh"
#include "internal/conv_support.hpp"
#include "internal/cv_interop.hpp"
#include "internal/fft_range.hpp"
#include "internal/fft_support.hpp"
#include "internal/kernel_views.hpp"

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
      throw std::invalid_argument("unknown border mode: use " + enumNames<BorderMode>());
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

void checkChannels(const ImageShape& in) {
  if (in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("convolution needs a non-empty image, got " + sizeText(in.width, in.height));
  if (in.type == PixelType::U16)
    throw std::invalid_argument("convolution takes u8, f32 and f64 images, not u16: convert the image to f32 first");
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
  return describeConvolution(spec_.kernel, spec_.correlate, spec_.mode, spec_.border, ConvMethod::Fft);
}

ImageShape FftConvolver::outputShape(const ImageShape& in) const {
  checkChannels(in);
  checkKernelFitsType(spec_.kernel, in.type);
  const FftConvGeometry g = geometry(in.width, in.height);
  return {g.outWidth, g.outHeight, in.channels, in.type};
}

FftConvGeometry FftConvolver::geometry(int width, int height) const {
  FftConvGeometry g =
      fftConvGeometry(width, height, spec_.kernel.width, spec_.kernel.height, spec_.mode, FftSizeRule::Cufft);
  if (circularFits(width, height)) {
    g.circular = true;
    g.paddedWidth = width;
    g.paddedHeight = height;
  }
  return g;
}

namespace {

/// The border strips of a 'same' convolution whose circular product wraps around: rows
/// [0, top) and [H - bottom, H), and columns [0, left) and [W - right, W) between them.
struct WrapStrips {
  int top = 0, bottom = 0, left = 0, right = 0;
};

WrapStrips wrapStrips(int kw, int kh) {
  WrapStrips s;
  s.top = kh - 1 - (kh - 1) / 2;
  s.bottom = (kh - 1) / 2;
  s.left = kw - 1 - (kw - 1) / 2;
  s.right = (kw - 1) / 2;
  return s;
}

}  // namespace

bool FftConvolver::circularFits(int width, int height) const {
  if (width < 1 || height < 1) return false;
  if (!isSmooth(width, FftSizeRule::Cufft) || !isSmooth(height, FftSizeRule::Cufft)) return false;
  if (spec_.mode == ConvMode::Valid) return true;  // never wraps (fftConvGeometry checked that the kernel fits)
  if (spec_.mode != ConvMode::Same) return false;
  if (spec_.border.mode == BorderMode::Wrap) return true;  // the wrap border is the circular product itself
  const WrapStrips s = wrapStrips(spec_.kernel.width, spec_.kernel.height);
  if (s.top + s.bottom >= height || s.left + s.right >= width) return false;
  const double strips = static_cast<double>(width) * (s.top + s.bottom) +
                        static_cast<double>(height - s.top - s.bottom) * (s.left + s.right);
  return 2.0 * strips <= static_cast<double>(width) * height;
}

template <class Real>
const void* FftConvolver::kernelSpectrum(GpuContext& gpu, int paddedWidth, int paddedHeight, int shiftX, int shiftY) {
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  const auto key = std::make_tuple(paddedWidth, paddedHeight, shiftX, shiftY, precision);
  if (auto it = kernelSpectra_.find(key); it != kernelSpectra_.end()) {
    if (!it->second.empty()) return it->second.data();
    kernelSpectra_.erase(it);  // from before a device reset (recoverDevice): computed again
  }

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
  kernels::launchWrapKernel<Real>(deviceTaps_.as<Real>(), kw, kh, real_.as<Real>(), paddedWidth, paddedHeight, shiftX,
                                  shiftY, stream);
  plans_.execute(planKey, real_.data(), spectrum.data(), stream);
  return kernelSpectra_.emplace(key, std::move(spectrum)).first->second.data();
}

template <class T, class Real>
void FftConvolver::enqueue(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, int stages) {
  const FftConvGeometry g = geometry(in.width(), in.height());
  const bool inPlace = planeOf<T>(in, 0).data == planeOf<T>(out, 0).data;
  if (g.circular && !(inPlace && spec_.mode == ConvMode::Same && spec_.border.mode != BorderMode::Wrap)) {
    enqueueCircular<T, Real>(gpu, in, out, g, stages);
    return;
  }
  const PixelRect whole{0, 0, g.outWidth, g.outHeight};
  enqueuePadded<T, Real>(gpu, in, out, std::span<const PixelRect>(&whole, 1), stages);
  if ((stages & kCrop) && convolvedChannels(shapeOf(in), spec_.mode) < in.channels()) copyAlpha<T>(gpu, in, out);
}

template <class T>
void FftConvolver::copyAlpha(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const int alpha = in.channels() - 1;  // u8 RGBA in 'same' mode
  if (planeOf<T>(in, alpha).data == planeOf<T>(out, alpha).data) return;
  GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planeOf<T>(out, alpha).data, out.pitch(), planeOf<T>(in, alpha).data, in.pitch(),
                                      static_cast<std::size_t>(in.width()) * sizeof(T), in.height(),
                                      cudaMemcpyDeviceToDevice, gpu.stream()));
}

template <class T, class Real>
void FftConvolver::enqueuePadded(GpuContext& gpu, const DeviceImage& in, DeviceImage& out,
                                 std::span<const PixelRect> windows, int stages) {
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  const int kw = spec_.kernel.width, kh = spec_.kernel.height;
  const FftConvGeometry g = fftConvGeometry(in.width(), in.height(), kw, kh, spec_.mode, FftSizeRule::Cufft);
  const int count = static_cast<int>(windows.size());
  const int winWidth = windows.front().width, winHeight = windows.front().height;
  const int neededWidth = winWidth + kw - 1, neededHeight = winHeight + kh - 1;
  const int wp = nextFftSize(neededWidth, FftSizeRule::Cufft), hp = nextFftSize(neededHeight, FftSizeRule::Cufft);
  const int planes = convolvedChannels(shapeOf(in), spec_.mode);
  const int batch = planes * count;  // window-major: plane c of window i is plane i * planes + c
  const std::size_t planeSize = static_cast<std::size_t>(wp) * hp;
  cudaStream_t stream = gpu.stream();

  const auto* kernelBins = static_cast<const kernels::Complex<Real>*>(kernelSpectrum<Real>(gpu, wp, hp, 0, 0));
  const FftPlanKey forwardKey = FftPlanKey::packed(wp, hp, batch, precision, FftDirection::Forward);
  const FftPlanKey inverseKey = FftPlanKey::packed(wp, hp, batch, precision, FftDirection::Inverse);
  growDeviceBuffer(real_, planeSize * batch * sizeof(Real), stream);
  growDeviceBuffer(spectrum_, forwardKey.complexPlaneSize() * batch * complexBytes(precision), stream);

  if (stages == 0) {  // prepare(): plans and buffers only
    plans_.plan(forwardKey, stream);
    plans_.plan(inverseKey, stream);
    return;
  }
  if (stages & kPad)
    for (int i = 0; i < count; ++i) {
      kernels::PadRegion region;
      region.dstWidth = wp;
      region.dstHeight = hp;
      region.fillWidth = neededWidth;
      region.fillHeight = neededHeight;
      region.originX = windows[i].x + g.originX - (kw - 1);
      region.originY = windows[i].y + g.originY - (kh - 1);
      region.mode = toKernel(spec_.border.mode);
      region.value = borderSample(in.type(), spec_.border.value);
      kernels::launchBorderPad<T, Real>(planeOf<T>(in, 0), planes, real_.as<Real>() + i * planes * planeSize, region,
                                        stream);
    }
  if (stages & kForward) plans_.execute(forwardKey, real_.data(), spectrum_.data(), stream);
  if (stages & kMultiply) {
    const Real scale = Real(1) / (static_cast<Real>(wp) * static_cast<Real>(hp));
    kernels::launchMultiplySpectra<Real>(spectrum_.as<kernels::Complex<Real>>(), kernelBins,
                                         forwardKey.complexPlaneSize(), batch, scale, stream);
  }
  if (stages & kInverse) plans_.execute(inverseKey, spectrum_.data(), real_.data(), stream);
  if (stages & kCrop)
    for (int i = 0; i < count; ++i) {
      const kernels::Plane<T> whole = stackOf<T>(out);
      const kernels::Plane<T> window{whole.row(windows[i].y) + windows[i].x, winWidth, winHeight, whole.pitch};
      kernels::launchCropConvert<Real, T>(real_.as<Real>() + i * planes * planeSize, wp, hp, kw - 1, kh - 1, planes,
                                          window, out.height(), stream);
    }
}

template <class T, class Real>
void FftConvolver::enqueueCircular(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, const FftConvGeometry& g,
                                   int stages) {
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  // f32 images under float transforms and f64 under double ones are transformed where they lie.
  constexpr bool kInPlaceTypes = std::is_same_v<T, Real>;
  const bool same = spec_.mode == ConvMode::Same;
  const bool writesOut = kInPlaceTypes && same;
  const int w = in.width(), h = in.height();
  const int planes = convolvedChannels(shapeOf(in), spec_.mode);
  cudaStream_t stream = gpu.stream();

  const auto* kernelBins =
      static_cast<const kernels::Complex<Real>*>(kernelSpectrum<Real>(gpu, w, h, g.originX, g.originY));
  auto pitchedKey = [&](std::size_t pitch, FftDirection direction) {
    FftPlanKey key = FftPlanKey::packed(w, h, planes, precision, direction);
    key.realRowStride = static_cast<std::int64_t>(pitch / sizeof(T));
    key.realPlaneStride = key.realRowStride * h;
    return key;
  };
  const FftPlanKey forwardKey = kInPlaceTypes ? pitchedKey(in.pitch(), FftDirection::Forward)
                                              : FftPlanKey::packed(w, h, planes, precision, FftDirection::Forward);
  const FftPlanKey inverseKey = writesOut ? pitchedKey(out.pitch(), FftDirection::Inverse)
                                          : FftPlanKey::packed(w, h, planes, precision, FftDirection::Inverse);
  if (!writesOut) growDeviceBuffer(real_, static_cast<std::size_t>(w) * h * planes * sizeof(Real), stream);
  growDeviceBuffer(spectrum_, forwardKey.complexPlaneSize() * planes * complexBytes(precision), stream);

  // Where the circular product wrapped ('same' mode, any border but wrap): the padded method on the
  // border bands, top and bottom as one batch, left and right (between them) as another. Bands of
  // a pair have one size (the larger); rows or columns they share with the rest are recomputed
  // exactly, so overlaps are harmless.
  const WrapStrips s = wrapStrips(spec_.kernel.width, spec_.kernel.height);
  const int rows = std::max(s.top, s.bottom), columns = std::max(s.left, s.right);
  const int middle = h - s.top - s.bottom;
  const bool bands = same && spec_.border.mode != BorderMode::Wrap;
  const PixelRect horizontal[] = {{0, 0, w, rows}, {0, h - rows, w, rows}};
  const PixelRect vertical[] = {{0, s.top, columns, middle}, {w - columns, s.top, columns, middle}};
  auto enqueueBands = [&](int bandStages) {
    if (!bands) return;
    if (rows > 0) enqueuePadded<T, Real>(gpu, in, out, horizontal, bandStages);
    if (columns > 0 && middle > 0) enqueuePadded<T, Real>(gpu, in, out, vertical, bandStages);
  };

  if (stages == 0) {  // prepare(): plans and buffers only
    plans_.plan(forwardKey, stream);
    plans_.plan(inverseKey, stream);
    enqueueBands(0);
    return;
  }
  const void* forwardInput = real_.data();
  if constexpr (kInPlaceTypes) {
    forwardInput = planeOf<T>(in, 0).data;
  } else if (stages & kPad) {  // conversion only: the region is the image, so no border is consulted
    kernels::PadRegion region;
    region.dstWidth = region.fillWidth = w;
    region.dstHeight = region.fillHeight = h;
    region.mode = toKernel(spec_.border.mode);
    kernels::launchBorderPad<T, Real>(planeOf<T>(in, 0), planes, real_.as<Real>(), region, stream);
  }
  if (stages & kForward) plans_.execute(forwardKey, forwardInput, spectrum_.data(), stream);
  if (stages & kMultiply) {
    const Real scale = Real(1) / (static_cast<Real>(w) * static_cast<Real>(h));
    kernels::launchMultiplySpectra<Real>(spectrum_.as<kernels::Complex<Real>>(), kernelBins,
                                         forwardKey.complexPlaneSize(), planes, scale, stream);
  }
  if (stages & kInverse)
    plans_.execute(inverseKey, spectrum_.data(), writesOut ? static_cast<void*>(planeOf<T>(out, 0).data) : real_.data(),
                   stream);
  if (stages & kCrop) {
    if (!writesOut)
      kernels::launchCropConvert<Real, T>(real_.as<Real>(), w, h, 0, 0, planes, stackOf<T>(out), out.height(), stream);
    if (planes < in.channels()) copyAlpha<T>(gpu, in, out);
    enqueueBands(kAllStages);  // after the inverse in stream order: the bands reuse its buffers
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
  visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, 0); });
  gpu.synchronize();
  return plans_.takeCreationMs();
}

void FftConvolver::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  prepareOutput(in, out, outputShape(shapeOf(in)));
  // Extreme ranges (internal/fft_range.hpp): convolve a copy scaled by 2^-e (the constant border
  // value with it), scale the result by 2^e.
  double maxAbs = deviceFiniteMaxAbs(gpu, in, in.channels(), rangeBits_);
  const double border = spec_.border.value;
  if (maxAbs > 0 && spec_.border.mode == BorderMode::Constant) maxAbs = std::max(maxAbs, std::fabs(border));
  const int e = fftRangeExponent(maxAbs);
  if (e == 0) {
    visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, kAllStages); });
    return;
  }
  if (!scaledInput_.sameShape(in)) scaledInput_ = DeviceImage(in.width(), in.height(), in.channels(), in.type());
  scaleDeviceImage(gpu, in, scaledInput_, -e);
  spec_.border.value = std::ldexp(border, -e);
  try {
    visitTransformType(in.type(),
                       [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, scaledInput_, out, kAllStages); });
  } catch (...) {
    spec_.border.value = border;
    throw;
  }
  spec_.border.value = border;
  scaleDeviceImage(gpu, out, out, e);
}

FftStageTimes FftConvolver::profileGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out,
                                       TimingOptions options) {
  prepare(gpu, in, out);
  const FftStageTimes times = profileFftStages(
      gpu.stream(),
      [&](int which) {
        visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, which); });
      },
      options, true);
  runGpu(gpu, in, out);  // the stages ran out of order: leave a correct result behind
  gpu.synchronize();
  return times;
}

std::size_t FftConvolver::pipelineBytesMoved(const ImageShape& in) const {
  const FftConvGeometry g = geometry(in.width, in.height);
  const int kw = spec_.kernel.width, kh = spec_.kernel.height;
  const std::size_t planes = static_cast<std::size_t>(convolvedChannels(in, spec_.mode));
  const std::size_t real = in.type == PixelType::F64 ? 8 : 4;
  const std::size_t sample = bytesPerSample(in.type);
  const std::size_t image = static_cast<std::size_t>(in.width) * in.height * sample;
  auto bins = [&](int w, int h) { return static_cast<std::size_t>(w / 2 + 1) * h * 2 * real; };
  // The padded method on `count` windows of w x h outputs, batched: pad (the distinct input samples
  // in, the plane out), forward, multiply (the kernel's spectrum once, the image's in and out),
  // inverse, crop (result in, output out).
  auto padded = [&](int w, int h, std::size_t count) {
    const int wp = nextFftSize(w + kw - 1), hp = nextFftSize(h + kh - 1);
    const std::size_t plane = static_cast<std::size_t>(wp) * hp * real, b = bins(wp, hp), n = planes * count;
    const std::size_t input = std::min(static_cast<std::size_t>(w + kw - 1) * (h + kh - 1) * sample, image);
    return n * (input + plane) + n * (plane + b) + b + 2 * n * b + n * (b + plane) +
           n * static_cast<std::size_t>(w) * h * (real + sample);
  };
  std::size_t bytes = 0;
  if (!g.circular) {
    bytes = padded(g.outWidth, g.outHeight, 1);
  } else {
    const std::size_t plane = static_cast<std::size_t>(in.width) * in.height * real, b = bins(in.width, in.height);
    const bool sameType = in.type != PixelType::U8;  // f32 and f64 are transformed where they lie
    const std::size_t output = static_cast<std::size_t>(g.outWidth) * g.outHeight;
    bytes = (sameType ? 0 : planes * (image + plane))                           // convert
            + planes * (plane + b) + b + 2 * planes * b + planes * (b + plane)  // forward, multiply, inverse
            + (sameType && spec_.mode == ConvMode::Same ? 0 : planes * output * (real + sample));  // crop
    if (spec_.mode == ConvMode::Same && spec_.border.mode != BorderMode::Wrap) {
      const WrapStrips s = wrapStrips(kw, kh);
      const int rows = std::max(s.top, s.bottom), columns = std::max(s.left, s.right);
      const int middle = in.height - s.top - s.bottom;
      if (rows > 0) bytes += padded(in.width, rows, 2);
      if (columns > 0 && middle > 0) bytes += padded(columns, middle, 2);
    }
  }
  bytes += (static_cast<std::size_t>(in.channels) - planes) * 2 * image;  // alpha, copied
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// CPU baseline

Image FftConvolver::runCpu(const Image& in, const CpuControl& control) const {
  if (in.empty()) throw std::invalid_argument("cannot convolve an empty image");
  checkChannels(shapeOf(in));
  checkKernelFitsType(spec_.kernel, in.type());
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
  for (int v = 0; v < g.neededWidth; ++v) columns[v] = borderIndex(v + ox0, in.width(), spec_.border.mode);
  for (int u = 0; u < g.neededHeight; ++u) rows[u] = borderIndex(u + oy0, in.height(), spec_.border.mode);
  const double value = borderSample(in.type(), spec_.border.value);
  // cv::dft's nonzeroRows shortcut (skip the rows that are zero / not needed) refuses one-column planes.
  const int nonzeroRows = wp > 1 ? g.neededHeight : 0;

  Image out(g.outWidth, g.outHeight, in.channels(), in.type());
  for (int c = 0; c < planes; ++c) {
    control.throwIfCancelled();
    const cv::Mat channel = channelMat(in, c, CV_64F);
    // Extreme ranges (internal/fft_range.hpp): the padded plane times 2^-e, the result times 2^e.
    double maxAbs = finiteMaxAbs(channel);
    if (in.type() != PixelType::U8 && maxAbs > 0 && spec_.border.mode == BorderMode::Constant)
      maxAbs = std::max(maxAbs, std::fabs(value));
    const int e = in.type() == PixelType::U8 ? 0 : fftRangeExponent(maxAbs);
    cv::Mat padded = cv::Mat::zeros(hp, wp, depth);
    cv_interop::parallelFor(cv::Range(0, g.neededHeight), [&](const cv::Range& range) {
      for (int u = range.start; u < range.end; ++u) {
        const double* src = rows[u] < 0 ? nullptr : channel.ptr<double>(rows[u]);
        for (int v = 0; v < g.neededWidth; ++v) {
          const double x = std::ldexp((src == nullptr || columns[v] < 0) ? value : src[columns[v]], -e);
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
    if (e != 0) scaleMatPow2(result, e);
    storeChannel(result(cv::Rect(kw - 1, kh - 1, g.outWidth, g.outHeight)), out, c);
    control.report(static_cast<double>(c + 1) / planes);
  }
  for (int c = planes; c < in.channels(); ++c)  // alpha, 'same' mode: passes through
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) out.at<std::uint8_t>(x, y, c) = in.at<std::uint8_t>(x, y, c);
  return out;
}

}  // namespace gpulab
