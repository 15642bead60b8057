#include "gpulab/fft/fft_filter.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_conv.cuh"
#include "gpulab/kernels/fft_filter.cuh"
#include "gpulab/kernels/fft_fused.cuh"
#include "internal/cv_interop.hpp"
#include "internal/fft_filter_mask.hpp"
#include "internal/fft_range.hpp"
#include "internal/fft_support.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Names and validation

namespace {

bool isBand(FreqBand band) { return band == FreqBand::Bandpass || band == FreqBand::Bandstop; }

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

kernels::FreqMask maskOf(const FftFilterSpec& s) {
  static_assert(static_cast<int>(FreqBand::Bandstop) == static_cast<int>(kernels::FreqBand::Bandstop) &&
                static_cast<int>(FreqShape::Butterworth) == static_cast<int>(kernels::FreqShape::Butterworth));
  return {static_cast<kernels::FreqBand>(s.band), static_cast<kernels::FreqShape>(s.shape), s.cutoff, s.cutoff2,
          s.order};
}

}  // namespace

void validateFftFilterSpec(const FftFilterSpec& spec) {
  if (!(spec.cutoff >= kMinFftCutoff) || !std::isfinite(spec.cutoff))
    throw std::invalid_argument("cutoff " + number(spec.cutoff) +
                                " is not allowed: use a positive fraction of Nyquist " + "from " +
                                number(kMinFftCutoff) + " (1.0 = Nyquist)");
  if (isBand(spec.band) && (!std::isfinite(spec.cutoff2) || !(spec.cutoff2 > spec.cutoff)))
    throw std::invalid_argument(std::string(toString(spec.band)) + " needs cutoff2 greater than cutoff " +
                                number(spec.cutoff) + ", got " + number(spec.cutoff2));
  if (spec.shape == FreqShape::Butterworth && (spec.order < 1 || spec.order > kMaxButterworthOrder))
    throw std::invalid_argument("Butterworth order " + std::to_string(spec.order) + " is not allowed: use 1 to " +
                                std::to_string(kMaxButterworthOrder));
  if (!parseEnum<FreqBand>(toString(spec.band)) || !parseEnum<FreqShape>(toString(spec.shape)) ||
      !parseEnum<FftPadding>(toString(spec.padding)))
    throw std::invalid_argument("unknown FFT filter band, shape or padding: use " + enumNames<FreqBand>() + ", " +
                                enumNames<FreqShape>() + " and " + enumNames<FftPadding>());
}

double fftFilterGain(const FftFilterSpec& spec, double r) { return kernels::freqGain<double>(maskOf(spec), r * r); }

double normalisedFrequency(int kx, int ky, int fftWidth, int fftHeight) {
  return std::sqrt(kernels::normalisedRadiusSquared<double>(
      kernels::signedFrequency(kx, fftWidth), kernels::signedFrequency(ky, fftHeight), fftWidth, fftHeight));
}

int fftFilteredChannels(int channels, PixelType type) noexcept {
  return type == PixelType::U8 && (channels == 2 || channels == 4) ? channels - 1 : channels;
}

kernels::FreqMask fftFilterMask(const FftFilterSpec& spec) { return maskOf(spec); }

// ---------------------------------------------------------------------------------------------
// FftFilter: GPU

namespace {

void checkInput(const DeviceImage& in) {
  if (in.empty()) throw std::invalid_argument("cannot filter an empty device image");
}

}  // namespace

FftFilter::FftFilter(const FftFilterSpec& spec) : spec_(spec) { validateFftFilterSpec(spec_); }

void FftFilter::setSpec(const FftFilterSpec& spec) {
  validateFftFilterSpec(spec);
  spec_ = spec;
}

std::string FftFilter::describe() const {
  std::string text = std::string(toString(spec_.band)) + " " + std::string(toString(spec_.shape));
  if (spec_.shape == FreqShape::Butterworth) text += " n=" + std::to_string(spec_.order);
  text += " c=" + number(spec_.cutoff);
  if (isBand(spec_.band)) text += ".." + number(spec_.cutoff2);
  return text + " pad=" + std::string(toString(spec_.padding));
}

ParamValues FftFilter::params() const {
  ParamValues values{{"filter", std::string(toString(spec_.band))},
                     {"shape", std::string(toString(spec_.shape))},
                     {"cutoff", number(spec_.cutoff)},
                     {"padding", std::string(toString(spec_.padding))}};
  if (isBand(spec_.band)) values["cutoff2"] = number(spec_.cutoff2);
  if (spec_.shape == FreqShape::Butterworth) values["order"] = std::to_string(spec_.order);
  return values;
}

ImageShape FftFilter::outputShape(const ImageShape& in) const {
  validateImageShape(in.width, in.height, in.channels);
  return in;
}

std::pair<int, int> FftFilter::fftSize(int width, int height) const noexcept {
  if (spec_.padding == FftPadding::Mirror) return {2 * width, 2 * height};
  return {width, height};
}

template <class T, class Real>
void FftFilter::enqueue(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, int stages) {
  const int width = in.width(), height = in.height();
  const int planes = fftFilteredChannels(in.channels(), in.type());
  const auto [fw, fh] = fftSize(width, height);
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  // f32/f64 without padding go straight from and into the pitched planes: no copies at all.
  const bool inPlace = spec_.padding == FftPadding::None && std::is_same_v<T, Real>;
  cudaStream_t stream = gpu.stream();

  const FftPlanKey forwardPacked = FftPlanKey::packed(fw, fh, planes, precision, FftDirection::Forward);
  growDeviceBuffer(spectrum_, forwardPacked.complexPlaneSize() * planes * complexBytes(precision), stream);
  FftPlanKey forwardKey = forwardPacked;
  FftPlanKey inverseKey = FftPlanKey::packed(fw, fh, planes, precision, FftDirection::Inverse);
  const void* forwardIn = nullptr;
  void* inverseOut = nullptr;
  if (inPlace) {
    forwardKey.realRowStride = static_cast<std::int64_t>(in.pitch() / sizeof(Real));
    forwardKey.realPlaneStride = forwardKey.realRowStride * height;
    inverseKey.realRowStride = static_cast<std::int64_t>(out.pitch() / sizeof(Real));
    inverseKey.realPlaneStride = inverseKey.realRowStride * height;
    forwardIn = planeOf<std::byte>(in, 0).data;
    inverseOut = planeOf<std::byte>(out, 0).data;
  } else {
    growDeviceBuffer(real_, static_cast<std::size_t>(fw) * fh * planes * sizeof(Real), stream);
    forwardIn = real_.data();
    inverseOut = real_.data();
  }

  const bool fused = takesFusedPath(shapeOf(in));  // f32 and u8 images: Real is float
  if (fused && twiddles_.size() == 0) {
    growDeviceBuffer(twiddles_, kernels::kFftTwiddleCount * sizeof(float2), stream);
    kernels::launchFftTwiddles(twiddles_.as<float2>(), stream);
  }
  if (stages == 0) {  // prepare(): plans (or the fused path's twiddles) only
    if (!fused) {
      plans_.plan(forwardKey, stream);
      plans_.plan(inverseKey, stream);
    }
    return;
  }
  if (!inPlace && (stages & kPad)) {
    kernels::PadRegion region;
    region.dstWidth = region.fillWidth = fw;
    region.dstHeight = region.fillHeight = fh;
    region.mode = kernels::BorderMode::Reflect;  // mirror padding; without padding no index leaves the image
    kernels::launchBorderPad<T, Real>(planeOf<T>(in, 0), planes, real_.as<Real>(), region, stream);
  }
  const Real scale = Real(1) / (static_cast<Real>(fw) * static_cast<Real>(fh));
  if (fused) {
    // Rows forward, columns forward + gain + inverse, rows inverse (gpulab/kernels/fft_fused.cuh).
    const std::size_t inPitch = inPlace ? in.pitch() : fw * sizeof(float);
    const std::size_t outPitch = inPlace ? out.pitch() : fw * sizeof(float);
    const kernels::Plane<const float> stackIn{static_cast<const float*>(forwardIn), fw, fh * planes, inPitch};
    const kernels::Plane<float> stackOut{static_cast<float*>(inverseOut), fw, fh * planes, outPitch};
    const auto* twiddles = twiddles_.as<float2>();
    // f32 input: its largest finite |sample|, from which the row passes pick the range scaling on
    // the GPU (internal/fft_range.hpp), so nothing waits for the host. u8 needs none.
    const unsigned long long* maxBits = nullptr;
    if constexpr (std::is_same_v<T, float>) {
      growDeviceBuffer(rangeBits_, sizeof(unsigned long long), stream);
      maxBits = rangeBits_.as<unsigned long long>();
      if (stages & kForward) {
        GPULAB_CUDA_CHECK(cudaMemsetAsync(rangeBits_.data(), 0, sizeof(unsigned long long), stream));
        kernels::launchMaxFiniteAbs<float>(planesOf<float>(in, planes), rangeBits_.as<unsigned long long>(), stream);
      }
    }
    if (stages & kForward)
      kernels::launchFusedRowsForward(stackIn, planes, spectrum_.as<float2>(), twiddles, maxBits, stream);
    if (stages & kMultiply)
      kernels::launchFusedColumnsFilter(spectrum_.as<float2>(), fw, fh, planes, maskOf(spec_),
                                        static_cast<float>(scale), twiddles, stream);
    if (stages & kInverse)
      kernels::launchFusedRowsInverse(spectrum_.as<float2>(), stackOut, planes, twiddles, maxBits, stream);
  } else {
    if (stages & kForward) plans_.execute(forwardKey, forwardIn, spectrum_.data(), stream);
    if (stages & kMultiply)
      kernels::launchApplyFreqMask<Real>(spectrum_.as<kernels::Complex<Real>>(), fw, fh, planes, maskOf(spec_), scale,
                                         stream);
    if (stages & kInverse) plans_.execute(inverseKey, spectrum_.data(), inverseOut, stream);
  }
  if (stages & kCrop) {
    if (!inPlace)
      kernels::launchCropConvert<Real, T>(real_.as<Real>(), fw, fh, 0, 0, planes, stackOf<T>(out), out.height(),
                                          stream);
    if (planes < in.channels() && planeOf<T>(in, planes).data != planeOf<T>(out, planes).data)
      GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planeOf<T>(out, planes).data, out.pitch(), planeOf<T>(in, planes).data,
                                          in.pitch(), static_cast<std::size_t>(width) * sizeof(T), height,
                                          cudaMemcpyDeviceToDevice, stream));
  }
}

namespace {

void shapeOutput(const DeviceImage& in, DeviceImage& out) {
  if (&out != &in && !out.sameShape(in)) out = DeviceImage(in.width(), in.height(), in.channels(), in.type());
}

}  // namespace

double FftFilter::prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  checkInput(in);
  shapeOutput(in, out);
  visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, 0); });
  return plans_.takeCreationMs();
}

void FftFilter::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  checkInput(in);
  shapeOutput(in, out);
  if (takesFusedPath(shapeOf(in))) {  // it scales extreme ranges itself, on the GPU
    visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, kAllStages); });
    return;
  }
  // Extreme ranges (internal/fft_range.hpp): transform a copy scaled by 2^-e, scale the result by 2^e.
  const int e = fftRangeExponent(deviceFiniteMaxAbs(gpu, in, in.channels(), rangeBits_));
  if (e == 0) {
    visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, kAllStages); });
    return;
  }
  if (!scaledInput_.sameShape(in)) scaledInput_ = DeviceImage(in.width(), in.height(), in.channels(), in.type());
  scaleDeviceImage(gpu, in, scaledInput_, -e);
  visitTransformType(in.type(),
                     [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, scaledInput_, out, kAllStages); });
  scaleDeviceImage(gpu, out, out, e);
}

FftStageTimes FftFilter::profileGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out, TimingOptions options) {
  checkInput(in);
  shapeOutput(in, out);
  const bool inPlace = spec_.padding == FftPadding::None && in.type() != PixelType::U8;
  prepareGpu(gpu, in, out);
  const FftStageTimes times = profileFftStages(
      gpu.stream(),
      [&](int which) {
        visitTransformType(in.type(), [&](auto t, auto r) { enqueue<decltype(t), decltype(r)>(gpu, in, out, which); });
      },
      options, !inPlace);
  // The stages ran out of order (the multiply repeatedly, the inverse on its own overwritten input):
  // leave a correct result behind.
  runGpu(gpu, in, out);
  gpu.synchronize();
  return times;
}

bool FftFilter::takesFusedPath(const ImageShape& in) const {
  const auto [fw, fh] = fftSize(in.width, in.height);
  return !cufftOnly_ && (in.type == PixelType::F32 || in.type == PixelType::U8) &&
         kernels::fusedFftFilterSupports(fw, fh);
}

std::size_t FftFilter::pipelineBytesMoved(const ImageShape& in) const {
  const auto [fw, fh] = fftSize(in.width, in.height);
  const int planes = fftFilteredChannels(in.channels, in.type);
  const std::size_t real = in.type == PixelType::F64 ? 8 : 4;
  const std::size_t realBytes = static_cast<std::size_t>(fw) * fh * planes * real;
  const std::size_t spectrumBytes = static_cast<std::size_t>(fw / 2 + 1) * fh * planes * 2 * real;
  // forward (real in, spectrum out) + multiply (spectrum in and out) + inverse (spectrum in, real out)
  std::size_t bytes = 2 * realBytes + 4 * spectrumBytes;
  const bool inPlace = spec_.padding == FftPadding::None && in.type != PixelType::U8;
  if (!inPlace) {  // pad: the image in, the padded planes out; crop: the reverse
    const std::size_t image = static_cast<std::size_t>(in.width) * in.height * planes * bytesPerSample(in.type);
    bytes += 2 * (image + realBytes);
  }
  const int alpha = in.channels - planes;
  bytes += 2 * static_cast<std::size_t>(in.width) * in.height * alpha * bytesPerSample(in.type);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// FftFilter: CPU baseline and reference

namespace {

/// One channel of `in` as doubles (any sample type).
std::vector<double> channelAsDouble(const Image& in, int c) {
  std::vector<double> values(in.pixelCount());
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x) values[static_cast<std::size_t>(y) * in.width() + x] = sampleAt(in, x, y, c);
  return values;
}

void copyChannel(const Image& in, Image& out, int c) {
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x) storeSample(out, x, y, c, sampleAt(in, x, y, c));
}

void checkHostInput(const Image& in) {
  if (in.empty()) throw std::invalid_argument("cannot filter an empty image");
}

}  // namespace

Image FftFilter::runCpu(const Image& in, const CpuControl& control) const {
  checkHostInput(in);
  const int width = in.width(), height = in.height();
  const auto [fw, fh] = fftSize(width, height);
  const int planes = fftFilteredChannels(in.channels(), in.type());
  const bool dbl = in.type() == PixelType::F64;
  const kernels::FreqMask mask = maskOf(spec_);
  Image out(width, height, in.channels(), in.type());

  // Gains depend on fx^2 + fy^2 only: one column of fy terms and one row of fx terms.
  std::vector<double> fy2(fh), fx2(fw);
  for (int ky = 0; ky < fh; ++ky)
    fy2[ky] = kernels::normalisedRadiusSquared<double>(0, kernels::signedFrequency(ky, fh), fw, fh);
  for (int kx = 0; kx < fw; ++kx)
    fx2[kx] = kernels::normalisedRadiusSquared<double>(kernels::signedFrequency(kx, fw), 0, fw, fh);

  for (int c = 0; c < planes; ++c) {
    control.throwIfCancelled();
    cv::Mat plane = channelMat(in, c, dbl ? CV_64F : CV_32F);
    const int e = fftRangeExponent(finiteMaxAbs(plane));  // extreme ranges: internal/fft_range.hpp
    if (e != 0) scaleMatPow2(plane, -e);
    if (spec_.padding == FftPadding::Mirror) {
      cv::Mat padded;
      cv::copyMakeBorder(plane, padded, 0, height, 0, width, cv::BORDER_REFLECT);
      plane = padded;
    }
    cv::Mat spectrum;
    cv::dft(plane, spectrum, cv::DFT_COMPLEX_OUTPUT);
    cv_interop::parallelFor(cv::Range(0, fh), [&](const cv::Range& rows) {
      for (int ky = rows.start; ky < rows.end; ++ky) {
        if (dbl) {
          auto* row = spectrum.ptr<cv::Vec2d>(ky);
          for (int kx = 0; kx < fw; ++kx) row[kx] *= kernels::freqGain<double>(mask, fy2[ky] + fx2[kx]);
        } else {
          auto* row = spectrum.ptr<cv::Vec2f>(ky);
          for (int kx = 0; kx < fw; ++kx)
            row[kx] *= static_cast<float>(kernels::freqGain<double>(mask, fy2[ky] + fx2[kx]));
        }
      }
    });
    cv::Mat result;
    cv::idft(spectrum, result, cv::DFT_SCALE | cv::DFT_REAL_OUTPUT);
    if (e != 0) scaleMatPow2(result, e);
    storeChannel(result(cv::Rect(0, 0, width, height)), out, c);
    control.report(static_cast<double>(c + 1) / planes);
  }
  for (int c = planes; c < in.channels(); ++c) copyChannel(in, out, c);
  return out;
}

Image FftFilter::runReference(const Image& in) const {
  checkHostInput(in);
  const int width = in.width(), height = in.height();
  const auto [fw, fh] = fftSize(width, height);
  if (static_cast<std::int64_t>(fw) * fh > kNaiveDftMaxPixels)
    throw std::invalid_argument("the naive reference takes transforms up to " + std::to_string(kNaiveDftMaxPixels) +
                                " pixels; " + std::to_string(fw) + "x" + std::to_string(fh) + " is too large");
  const int planes = fftFilteredChannels(in.channels(), in.type());
  const kernels::FreqMask mask = maskOf(spec_);
  Image out(width, height, in.channels(), in.type());
  for (int c = 0; c < planes; ++c) {
    std::vector<double> values = channelAsDouble(in, c);
    // f64 samples near DBL_MAX overflow the double sums as float ones do: the same exact scaling.
    double maxAbs = 0;
    for (double v : values)
      if (std::isfinite(v)) maxAbs = std::max(maxAbs, std::fabs(v));
    const int e = fftRangeExponent(maxAbs);
    for (double& v : values) v = std::ldexp(v, -e);
    std::vector<std::complex<double>> signal(static_cast<std::size_t>(fw) * fh);
    for (int u = 0; u < fh; ++u)
      for (int v = 0; v < fw; ++v)
        signal[static_cast<std::size_t>(u) * fw + v] =
            values[static_cast<std::size_t>(borderIndex(u, height, BorderMode::Reflect)) * width +
                   borderIndex(v, width, BorderMode::Reflect)];
    std::vector<std::complex<double>> spectrum = naiveDft2d(signal, fw, fh);
    for (int ky = 0; ky < fh; ++ky)
      for (int kx = 0; kx < fw; ++kx) {
        const double r2 = kernels::normalisedRadiusSquared<double>(kernels::signedFrequency(kx, fw),
                                                                   kernels::signedFrequency(ky, fh), fw, fh);
        spectrum[static_cast<std::size_t>(ky) * fw + kx] *= kernels::freqGain<double>(mask, r2);
      }
    const std::vector<std::complex<double>> filtered = naiveDft2d(spectrum, fw, fh, true);
    const double scale = 1.0 / (static_cast<double>(fw) * fh);
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        storeSample(out, x, y, c, std::ldexp(filtered[static_cast<std::size_t>(y) * fw + x].real() * scale, e));
  }
  for (int c = planes; c < in.channels(); ++c) copyChannel(in, out, c);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Spectrum for display

Image luminanceOf(const Image& in) {
  if (in.empty()) throw std::invalid_argument("an empty image has no luminance");
  Image out(in.width(), in.height(), 1, PixelType::F32);
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x) {
      float value;
      if (in.channels() >= 3) {
        const auto r = static_cast<float>(sampleAt(in, x, y, 0));
        const auto g = static_cast<float>(sampleAt(in, x, y, 1));
        const auto b = static_cast<float>(sampleAt(in, x, y, 2));
        value = 0.299f * r + 0.587f * g + 0.114f * b;
      } else {
        value = static_cast<float>(sampleAt(in, x, y, 0));
      }
      out.at<float>(x, y) = value;
    }
  return out;
}

void FftSpectrum::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  if (in.empty()) throw std::invalid_argument("an empty device image has no spectrum");
  if (&out == &in) throw std::invalid_argument("the spectrum cannot be written over its own image");
  const int width = in.width(), height = in.height();
  if (out.empty() || out.width() != width || out.height() != height || out.channels() != 1 ||
      out.type() != PixelType::F32)
    out = DeviceImage(width, height, 1, PixelType::F32);
  cudaStream_t stream = gpu.stream();
  const FftPlanKey key = FftPlanKey::packed(width, height, 1, FftPrecision::Single, FftDirection::Forward);
  growDeviceBuffer(luminance_, static_cast<std::size_t>(width) * height * sizeof(float), stream);
  growDeviceBuffer(spectrum_, key.complexPlaneSize() * sizeof(float2), stream);
  switch (in.type()) {
    case PixelType::U8:
      kernels::launchLuminance<std::uint8_t>(planeOf<std::uint8_t>(in, 0), in.channels(), luminance_.as<float>(),
                                             stream);
      break;
    case PixelType::F32:
      kernels::launchLuminance<float>(planeOf<float>(in, 0), in.channels(), luminance_.as<float>(), stream);
      break;
    case PixelType::F64:
      kernels::launchLuminance<double>(planeOf<double>(in, 0), in.channels(), luminance_.as<float>(), stream);
      break;
    case PixelType::U16:
      throw std::invalid_argument("the spectrum view takes u8, f32 or f64 images, not u16: convert to f32 first");
  }
  plans_.execute(key, luminance_.data(), spectrum_.data(), stream);
  kernels::launchLogMagnitudeCentred(spectrum_.as<float2>(), width, height, planeOf<float>(out, 0), stream);
}

namespace {

/// Pixel (x, y) of the centred display shows bin ((x - W/2) mod W, (y - H/2) mod H).
int uncentre(int i, int n) { return (i - n / 2 + n) % n; }

}  // namespace

ImageShape FftSpectrum::outputShape(const ImageShape& in) const {
  validateImageShape(in.width, in.height, in.channels);
  return {in.width, in.height, 1, PixelType::F32};
}

double FftSpectrum::prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  runGpu(gpu, in, out);
  gpu.synchronize();
  return takePlanCreationMs();
}

Image FftSpectrum::runCpu(const Image& in, const CpuControl&) const {
  const Image lum = luminanceOf(in);
  const int width = lum.width(), height = lum.height();
  const cv::Mat src(height, width, CV_32F, const_cast<std::byte*>(lum.data()));
  cv::Mat full;
  cv::dft(src, full, cv::DFT_COMPLEX_OUTPUT);
  Image out(width, height, 1, PixelType::F32);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const cv::Vec2f v = full.at<cv::Vec2f>(uncentre(y, height), uncentre(x, width));
      out.at<float>(x, y) = std::log1p(std::sqrt(v[0] * v[0] + v[1] * v[1]));
    }
  return out;
}

Image FftSpectrum::runReference(const Image& in) const {
  const Image lum = luminanceOf(in);
  const int width = lum.width(), height = lum.height();
  std::vector<std::complex<double>> signal(lum.pixelCount());
  for (std::size_t i = 0; i < signal.size(); ++i) signal[i] = lum.samples<float>()[i];
  const auto spectrum = naiveDft2d(signal, width, height);
  Image out(width, height, 1, PixelType::F32);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      out.at<float>(x, y) = static_cast<float>(
          std::log1p(std::abs(spectrum[static_cast<std::size_t>(uncentre(y, height)) * width + uncentre(x, width)])));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Colour maps

namespace {

using Rgb = std::array<std::uint8_t, 3>;

// matplotlib's viridis and inferno (CC0, Stefan van der Walt and Nathaniel Smith): entries
// 0, 8, 16, ..., 248 and 255 of the 256-entry tables, rounded to 8 bits.
constexpr int kStops = 33;
constexpr Rgb kViridis[kStops] = {
    {68, 1, 84},    {71, 13, 96},   {72, 24, 106},  {72, 35, 116},  {71, 45, 123},  {69, 55, 129},  {66, 64, 134},
    {62, 73, 137},  {59, 82, 139},  {55, 91, 141},  {51, 99, 141},  {47, 107, 142}, {44, 114, 142}, {41, 122, 142},
    {38, 130, 142}, {35, 137, 142}, {33, 145, 140}, {31, 152, 139}, {31, 160, 136}, {34, 167, 133}, {40, 174, 128},
    {50, 182, 122}, {63, 188, 115}, {78, 195, 107}, {94, 201, 98},  {112, 207, 87}, {132, 212, 75}, {152, 216, 62},
    {173, 220, 48}, {194, 223, 35}, {216, 226, 25}, {236, 229, 27}, {253, 231, 37}};
constexpr Rgb kInferno[kStops] = {
    {0, 0, 4},      {4, 3, 18},     {11, 7, 36},     {21, 11, 55},    {33, 12, 74},   {47, 10, 91},   {61, 9, 101},
    {74, 12, 107},  {87, 16, 110},  {100, 21, 110},  {113, 25, 110},  {125, 30, 109}, {138, 34, 106}, {151, 39, 102},
    {163, 44, 97},  {176, 49, 91},  {188, 55, 84},   {199, 62, 76},   {210, 70, 68},  {219, 80, 59},  {228, 90, 49},
    {235, 102, 40}, {241, 115, 29}, {246, 128, 19},  {249, 142, 9},   {251, 157, 7},  {252, 172, 17}, {251, 188, 33},
    {249, 203, 53}, {245, 219, 76}, {242, 234, 105}, {243, 246, 138}, {252, 255, 164}};

/// Table position (0..255) of stop i.
double stopPosition(int i) { return i == kStops - 1 ? 255.0 : 8.0 * i; }

}  // namespace

std::array<std::uint8_t, 3> colorMapLookup(ColorMap map, double t) noexcept {
  if (!(t > 0)) t = 0;  // NaN too
  if (t > 1) t = 1;
  if (map == ColorMap::Gray) {
    const auto v = static_cast<std::uint8_t>(std::lround(t * 255.0));
    return {v, v, v};
  }
  const Rgb* table = map == ColorMap::Inferno ? kInferno : kViridis;
  const double position = t * 255.0;
  int i = std::min(static_cast<int>(position / 8.0), kStops - 2);
  const double a = stopPosition(i), b = stopPosition(i + 1);
  const double f = std::clamp((position - a) / (b - a), 0.0, 1.0);
  Rgb rgb;
  for (int k = 0; k < 3; ++k)
    rgb[k] = static_cast<std::uint8_t>(std::lround(table[i][k] + f * (table[i + 1][k] - table[i][k])));
  return rgb;
}

Image applyColorMap(const Image& values, ColorMap map) {
  if (values.empty() || values.channels() != 1 || values.type() == PixelType::U8)
    throw std::invalid_argument("a colour map takes a one-channel f32 or f64 image");
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int y = 0; y < values.height(); ++y)
    for (int x = 0; x < values.width(); ++x) {
      const double v = sampleAt(values, x, y, 0);
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo > hi) lo = hi = 0;  // no finite value at all
  return applyColorMap(values, map, lo, hi);
}

Image applyColorMap(const Image& values, ColorMap map, double lo, double hi) {
  if (values.empty() || values.channels() != 1 || values.type() == PixelType::U8)
    throw std::invalid_argument("a colour map takes a one-channel f32 or f64 image");
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo)
    throw std::invalid_argument("colour map range [" + number(lo) + ", " + number(hi) +
                                "] is not an interval of finite numbers");
  Image out(values.width(), values.height(), 4, PixelType::U8);
  const double span = hi - lo;
  for (int y = 0; y < values.height(); ++y)
    for (int x = 0; x < values.width(); ++x) {
      const double v = sampleAt(values, x, y, 0);
      const double t = span > 0 ? (v - lo) / span : (v > lo ? 1.0 : 0.0);
      const Rgb rgb = colorMapLookup(map, std::isnan(v) ? 0.0 : t);
      for (int k = 0; k < 3; ++k) out.at<std::uint8_t>(x, y, k) = rgb[k];
      out.at<std::uint8_t>(x, y, 3) = 255;
    }
  return out;
}

}  // namespace gpulab
