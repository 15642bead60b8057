#include "gpulab/fft/fft.hpp"

#include <cmath>
#include <numbers>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <utility>

#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_filter.cuh"
#include "internal/cufft_check.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Errors

std::string cufftResultName(int result) {
  // Numeric cases: CUDA 12 and 13 headers do not declare the same enumerators.
  switch (result) {
    case 0x0:
      return "CUFFT_SUCCESS";
    case 0x1:
      return "CUFFT_INVALID_PLAN";
    case 0x2:
      return "CUFFT_ALLOC_FAILED";
    case 0x3:
      return "CUFFT_INVALID_TYPE";
    case 0x4:
      return "CUFFT_INVALID_VALUE";
    case 0x5:
      return "CUFFT_INTERNAL_ERROR";
    case 0x6:
      return "CUFFT_EXEC_FAILED";
    case 0x7:
      return "CUFFT_SETUP_FAILED";
    case 0x8:
      return "CUFFT_INVALID_SIZE";
    case 0x9:
      return "CUFFT_UNALIGNED_DATA";
    case 0xA:
      return "CUFFT_INCOMPLETE_PARAMETER_LIST";
    case 0xB:
      return "CUFFT_INVALID_DEVICE";
    case 0xC:
      return "CUFFT_PARSE_ERROR";
    case 0xD:
      return "CUFFT_NO_WORKSPACE";
    case 0xE:
      return "CUFFT_NOT_IMPLEMENTED";
    case 0xF:
      return "CUFFT_LICENSE_ERROR";
    case 0x10:
      return "CUFFT_NOT_SUPPORTED";
    case 0x11:
      return "CUFFT_MISSING_DEPENDENCY";
    case 0x12:
      return "CUFFT_NVRTC_FAILURE";
    case 0x13:
      return "CUFFT_NVJITLINK_FAILURE";
    case 0x14:
      return "CUFFT_NVSHMEM_FAILURE";
    default:
      return "cufftResult " + std::to_string(result);
  }
}

namespace detail {
void throwCufftError(const char* call, const char* file, int line, int result) {
  throwIfContextFaulted(call, file, line);  // a sticky fault seen through cuFFT is a GpuFaultError
  throw CufftError(call, file, line, result, cufftResultName(result));
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Plan keys

FftPlanKey FftPlanKey::packed(int width, int height, int batch, FftPrecision precision, FftDirection direction) {
  FftPlanKey key;
  key.width = width;
  key.height = height;
  key.batch = batch;
  key.realRowStride = width;
  key.realPlaneStride = static_cast<std::int64_t>(width) * height;
  key.precision = precision;
  key.direction = direction;
  return key;
}

std::string FftPlanKey::describe() const {
  const bool single = precision == FftPrecision::Single;
  const char* type = direction == FftDirection::Forward ? (single ? "R2C" : "D2Z") : (single ? "C2R" : "Z2D");
  return std::to_string(width) + "x" + std::to_string(height) + " x" + std::to_string(batch) + " " + type;
}

namespace {

void validateKey(const FftPlanKey& key) {
  if (key.width < 1 || key.height < 1 || key.batch < 1)
    throw std::invalid_argument("an FFT of " + std::to_string(key.width) + "x" + std::to_string(key.height) + " x" +
                                std::to_string(key.batch) + " planes is empty: sizes and batch must be at least 1");
  if (key.realRowStride < key.width || key.realPlaneStride < key.realRowStride * (key.height - 1) + key.width)
    throw std::invalid_argument("FFT row stride " + std::to_string(key.realRowStride) + " or plane stride " +
                                std::to_string(key.realPlaneStride) + " is smaller than the " +
                                std::to_string(key.width) + "x" + std::to_string(key.height) + " plane it must hold");
}

cufftType cufftTypeOf(const FftPlanKey& key) {
  const bool forward = key.direction == FftDirection::Forward;
  if (key.precision == FftPrecision::Single) return forward ? CUFFT_R2C : CUFFT_C2R;
  return forward ? CUFFT_D2Z : CUFFT_Z2D;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FftPlan

FftPlan::FftPlan(const FftPlanKey& key) : key_(key) {
  validateKey(key);
  if (key.width == 1 && key.height == 1) {
    kind_ = Kind::Single;
    return;
  }
  // cuFFT's multi-dimensional plans are not dependable with a unit dimension: such shapes run as
  // batched 1D transforms with strides, which give the same half-spectrum layout.
  kind_ = key.height == 1 ? Kind::Rows : (key.width == 1 ? Kind::Column : Kind::Cufft2D);

  const long long complexWidth = key.width / 2 + 1;
  long long n[2] = {};
  long long realEmbed[2] = {};
  long long complexEmbed[2] = {};
  long long realStride = 1;
  long long complexStride = 1;
  long long realDist = key.realPlaneStride;
  long long complexDist = static_cast<long long>(key.complexPlaneSize());
  int rank = 1;
  bool advanced = true;
  switch (kind_) {
    case Kind::Rows:
      n[0] = key.width;
      realEmbed[0] = key.width;
      complexEmbed[0] = complexWidth;
      break;
    case Kind::Column:
      // The R2C writes bins 0..H/2 of each plane; execute() completes the column by symmetry.
      n[0] = key.height;
      realEmbed[0] = key.height;
      complexEmbed[0] = key.height;
      realStride = key.realRowStride;
      break;
    case Kind::Cufft2D:
      rank = 2;
      n[0] = key.height;
      n[1] = key.width;
      realEmbed[0] = key.height;
      realEmbed[1] = key.realRowStride;
      complexEmbed[0] = key.height;
      complexEmbed[1] = complexWidth;
      // The basic layout lets cuFFT pick its fastest kernels; pitched planes need the advanced one.
      advanced =
          key.realRowStride != key.width || key.realPlaneStride != static_cast<std::int64_t>(key.width) * key.height;
      break;
    case Kind::Single:
      break;
  }

  const bool forward = key.direction == FftDirection::Forward;
  long long* inEmbed = advanced ? (forward ? realEmbed : complexEmbed) : nullptr;
  long long* outEmbed = advanced ? (forward ? complexEmbed : realEmbed) : nullptr;
  const long long inStride = forward ? realStride : complexStride;
  const long long outStride = forward ? complexStride : realStride;
  const long long inDist = forward ? realDist : complexDist;
  const long long outDist = forward ? complexDist : realDist;

  GPULAB_CUFFT_CHECK(cufftCreate(&handle_));
  hasHandle_ = true;
  epoch_ = deviceEpoch();
  try {
    GPULAB_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
    std::size_t work = 0;
    GPULAB_CUFFT_CHECK(cufftMakePlanMany64(handle_, rank, n, inEmbed, inStride, inDist, outEmbed, outStride, outDist,
                                           cufftTypeOf(key), key.batch, &work));
    workspaceBytes_ = work;
  } catch (...) {
    release();
    throw;
  }
}

FftPlan::~FftPlan() { release(); }

FftPlan::FftPlan(FftPlan&& other) noexcept
    : key_(other.key_),
      kind_(other.kind_),
      handle_(other.handle_),
      hasHandle_(std::exchange(other.hasHandle_, false)),
      workspaceBytes_(other.workspaceBytes_),
      epoch_(other.epoch_),
      boundStream_(other.boundStream_),
      boundWorkspace_(other.boundWorkspace_),
      streamBound_(other.streamBound_) {}

FftPlan& FftPlan::operator=(FftPlan&& other) noexcept {
  if (this != &other) {
    release();
    key_ = other.key_;
    kind_ = other.kind_;
    handle_ = other.handle_;
    hasHandle_ = std::exchange(other.hasHandle_, false);
    workspaceBytes_ = other.workspaceBytes_;
    epoch_ = other.epoch_;
    boundStream_ = other.boundStream_;
    boundWorkspace_ = other.boundWorkspace_;
    streamBound_ = other.streamBound_;
  }
  return *this;
}

void FftPlan::release() noexcept {
  // cufftDestroy after the CUDA runtime unloaded returns an error we have no use for. A plan from
  // before a device reset is not destroyed: its GPU memory went with the old context, and freeing
  // it now could free memory of the new one (the plan's small host side is left behind).
  if (hasHandle_ && epoch_ == deviceEpoch()) cufftDestroy(handle_);
  hasHandle_ = false;
}

void FftPlan::execute(const void* in, void* out, cudaStream_t stream, void* workspace) {
  const bool forward = key_.direction == FftDirection::Forward;
  const bool single = key_.precision == FftPrecision::Single;
  const auto planeStride = static_cast<std::size_t>(key_.realPlaneStride);
  if (kind_ == Kind::Single) {
    if (single && forward)
      kernels::launchTrivialForward<float>(static_cast<const float*>(in), planeStride, static_cast<float2*>(out),
                                           key_.batch, stream);
    else if (single)
      kernels::launchTrivialInverse<float>(static_cast<const float2*>(in), static_cast<float*>(out), planeStride,
                                           key_.batch, stream);
    else if (forward)
      kernels::launchTrivialForward<double>(static_cast<const double*>(in), planeStride, static_cast<double2*>(out),
                                            key_.batch, stream);
    else
      kernels::launchTrivialInverse<double>(static_cast<const double2*>(in), static_cast<double*>(out), planeStride,
                                            key_.batch, stream);
    return;
  }

  // Bound on every call (the plan may serve another stream or a regrown workspace), but only
  // re-set when it changed: these are host calls on the per-frame path.
  if (!streamBound_ || stream != boundStream_) {
    GPULAB_CUFFT_CHECK(cufftSetStream(handle_, stream));
    boundStream_ = stream;
    streamBound_ = true;
  }
  if (workspaceBytes_ > 0 && workspace != boundWorkspace_) {
    GPULAB_CUFFT_CHECK(cufftSetWorkArea(handle_, workspace));
    boundWorkspace_ = workspace;
  }
  // cuFFT takes non-const input pointers; forward transforms do not write their input.
  void* input = const_cast<void*>(in);
  switch (cufftTypeOf(key_)) {
    case CUFFT_R2C:
      GPULAB_CUFFT_CHECK(cufftExecR2C(handle_, static_cast<cufftReal*>(input), static_cast<cufftComplex*>(out)));
      break;
    case CUFFT_C2R:
      GPULAB_CUFFT_CHECK(cufftExecC2R(handle_, static_cast<cufftComplex*>(input), static_cast<cufftReal*>(out)));
      break;
    case CUFFT_D2Z:
      GPULAB_CUFFT_CHECK(
          cufftExecD2Z(handle_, static_cast<cufftDoubleReal*>(input), static_cast<cufftDoubleComplex*>(out)));
      break;
    case CUFFT_Z2D:
      GPULAB_CUFFT_CHECK(
          cufftExecZ2D(handle_, static_cast<cufftDoubleComplex*>(input), static_cast<cufftDoubleReal*>(out)));
      break;
    default:
      throw std::logic_error("FftPlan holds a complex-to-complex type it never creates");
  }
  if (kind_ == Kind::Column && forward) {
    if (single)
      kernels::launchHermitianFill<float>(static_cast<float2*>(out), key_.height, key_.batch, stream);
    else
      kernels::launchHermitianFill<double>(static_cast<double2*>(out), key_.height, key_.batch, stream);
  }
}

// ---------------------------------------------------------------------------------------------
// FftPlanCache

FftPlan& FftPlanCache::plan(const FftPlanKey& key, cudaStream_t stream) {
  if (epoch_ != deviceEpoch()) {
    plans_.clear();  // stale plans free nothing (FftPlan::release)
    workspace_.reset();
    epoch_ = deviceEpoch();
  }
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  Stopwatch watch;
  FftPlan created(key);
  if (created.workspaceBytes() > workspace_.size()) {
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    workspace_.reserve(created.workspaceBytes());
  }
  const double ms = watch.elapsedMs();
  records_.push_back({key, ms, created.workspaceBytes()});
  untakenMs_ += ms;
  return plans_.emplace(key, std::move(created)).first->second;
}

void FftPlanCache::execute(const FftPlanKey& key, const void* in, void* out, cudaStream_t stream) {
  plan(key, stream).execute(in, out, stream, workspace_.data());
}

double FftPlanCache::totalCreationMs() const noexcept {
  double total = 0;
  for (const Record& r : records_) total += r.creationMs;
  return total;
}

double FftPlanCache::takeCreationMs() noexcept { return std::exchange(untakenMs_, 0.0); }

void FftPlanCache::clear() noexcept {
  plans_.clear();
  records_.clear();
  workspace_.reset();
  untakenMs_ = 0;
}

// ---------------------------------------------------------------------------------------------
// RealFft

namespace {

FftPrecision precisionOf(const DeviceImage& image, const char* what) {
  if (image.type() == PixelType::F32) return FftPrecision::Single;
  if (image.type() == PixelType::F64) return FftPrecision::Double;
  throw std::invalid_argument(std::string(what) + " takes f32 or f64 images, not " +
                              std::string(toString(image.type())) + ": convert the image first");
}

FftPlanKey keyFor(const DeviceImage& image, FftPrecision precision, FftDirection direction) {
  FftPlanKey key;
  key.width = image.width();
  key.height = image.height();
  key.batch = image.channels();
  key.realRowStride = static_cast<std::int64_t>(image.pitch() / realBytes(precision));
  key.realPlaneStride = key.realRowStride * image.height();
  key.precision = precision;
  key.direction = direction;
  return key;
}

}  // namespace

void RealFft::forward(GpuContext& gpu, const DeviceImage& in, DeviceBuffer& spectrum) {
  if (in.empty()) throw std::invalid_argument("the FFT of an empty device image is undefined");
  const FftPrecision precision = precisionOf(in, "the forward FFT");
  const FftPlanKey key = keyFor(in, precision, FftDirection::Forward);
  const std::size_t bytes = key.complexPlaneSize() * key.batch * complexBytes(precision);
  if (spectrum.size() < bytes) spectrum.reserve(bytes);
  plans_.execute(key, planeOf<std::byte>(in, 0).data, spectrum.data(), gpu.stream());
}

void RealFft::inverse(GpuContext& gpu, DeviceBuffer& spectrum, DeviceImage& out) {
  if (out.empty()) throw std::invalid_argument("the inverse FFT needs an allocated output image of the signal's shape");
  const FftPrecision precision = precisionOf(out, "the inverse FFT");
  const FftPlanKey key = keyFor(out, precision, FftDirection::Inverse);
  const std::size_t count = key.complexPlaneSize() * key.batch;
  if (spectrum.size() < count * complexBytes(precision))
    throw std::invalid_argument("the spectrum buffer holds " + std::to_string(spectrum.size()) +
                                " bytes; the spectrum of a " + std::to_string(out.width()) + "x" +
                                std::to_string(out.height()) + " image with " + std::to_string(out.channels()) +
                                " channels needs " + std::to_string(count * complexBytes(precision)));
  const double scale = 1.0 / (static_cast<double>(out.width()) * out.height());
  if (precision == FftPrecision::Single)
    kernels::launchScaleSpectrum<float>(spectrum.as<float2>(), count, static_cast<float>(scale), gpu.stream());
  else
    kernels::launchScaleSpectrum<double>(spectrum.as<double2>(), count, scale, gpu.stream());
  plans_.execute(key, spectrum.data(), planeOf<std::byte>(out, 0).data, gpu.stream());
}

std::vector<std::complex<double>> downloadSpectrum(GpuContext& gpu, const DeviceBuffer& spectrum, std::size_t count,
                                                   FftPrecision precision) {
  const std::size_t bytes = count * complexBytes(precision);
  if (spectrum.size() < bytes)
    throw std::invalid_argument("cannot download " + std::to_string(count) + " complex values from a " +
                                std::to_string(spectrum.size()) + "-byte buffer");
  std::vector<std::complex<double>> result(count);
  if (precision == FftPrecision::Double) {
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(result.data(), spectrum.data(), bytes, cudaMemcpyDeviceToHost, gpu.stream()));
    gpu.synchronize();
    return result;
  }
  std::vector<std::complex<float>> single(count);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(single.data(), spectrum.data(), bytes, cudaMemcpyDeviceToHost, gpu.stream()));
  gpu.synchronize();
  for (std::size_t i = 0; i < count; ++i) result[i] = single[i];
  return result;
}

// ---------------------------------------------------------------------------------------------
// Host DFTs

std::vector<std::complex<double>> naiveDft2d(std::span<const std::complex<double>> in, int width, int height,
                                             bool inverse) {
  if (width < 1 || height < 1 || in.size() != static_cast<std::size_t>(width) * height)
    throw std::invalid_argument("naiveDft2d needs width*height values (" + std::to_string(width) + "x" +
                                std::to_string(height) + "), got " + std::to_string(in.size()));
  if (static_cast<std::int64_t>(width) * height > kNaiveDftMaxPixels)
    throw std::invalid_argument("the naive DFT takes at most " + std::to_string(kNaiveDftMaxPixels) + " pixels; " +
                                std::to_string(width) + "x" + std::to_string(height) + " is too large");
  // Twiddles indexed by (k * n) mod N keep every angle exact to one rounding.
  const double sign = inverse ? 1.0 : -1.0;
  auto twiddles = [sign](int n) {
    std::vector<std::complex<double>> t(n);
    for (int i = 0; i < n; ++i) t[i] = std::polar(1.0, sign * 2.0 * std::numbers::pi * i / n);
    return t;
  };
  const auto tw = twiddles(width);
  const auto th = twiddles(height);
  std::vector<std::complex<double>> out(in.size());
  for (int ky = 0; ky < height; ++ky)
    for (int kx = 0; kx < width; ++kx) {
      std::complex<double> sum = 0;
      for (int y = 0; y < height; ++y) {
        const std::complex<double> wy = th[static_cast<std::size_t>(ky) * y % height];
        for (int x = 0; x < width; ++x)
          sum += in[static_cast<std::size_t>(y) * width + x] * wy * tw[static_cast<std::size_t>(kx) * x % width];
      }
      out[static_cast<std::size_t>(ky) * width + kx] = sum;
    }
  return out;
}

std::vector<std::complex<double>> cpuRealDft2d(const Image& oneChannel) {
  if (oneChannel.empty() || oneChannel.channels() != 1 ||
      (oneChannel.type() != PixelType::F32 && oneChannel.type() != PixelType::F64))
    throw std::invalid_argument("cpuRealDft2d takes a one-channel f32 or f64 image, not " +
                                (oneChannel.empty() ? std::string("an empty one") : oneChannel.describe()));
  const bool single = oneChannel.type() == PixelType::F32;
  const int w = oneChannel.width(), h = oneChannel.height();
  const cv::Mat src(h, w, single ? CV_32F : CV_64F, const_cast<std::byte*>(oneChannel.data()));
  cv::Mat full;
  cv::dft(src, full, cv::DFT_COMPLEX_OUTPUT);
  const int cw = w / 2 + 1;
  std::vector<std::complex<double>> half(static_cast<std::size_t>(h) * cw);
  for (int ky = 0; ky < h; ++ky)
    for (int kx = 0; kx < cw; ++kx) {
      std::complex<double> v;
      if (single) {
        const cv::Vec2f c = full.at<cv::Vec2f>(ky, kx);
        v = {c[0], c[1]};
      } else {
        const cv::Vec2d c = full.at<cv::Vec2d>(ky, kx);
        v = {c[0], c[1]};
      }
      half[static_cast<std::size_t>(ky) * cw + kx] = v;
    }
  return half;
}

double halfSpectrumEnergy(std::span<const std::complex<double>> half, int width, int height) {
  const int cw = width / 2 + 1;
  if (half.size() != static_cast<std::size_t>(cw) * height)
    throw std::invalid_argument("a half spectrum of " + std::to_string(width) + "x" + std::to_string(height) + " has " +
                                std::to_string(static_cast<std::size_t>(cw) * height) + " values, not " +
                                std::to_string(half.size()));
  double energy = 0;
  for (int ky = 0; ky < height; ++ky)
    for (int kx = 0; kx < cw; ++kx) {
      const bool selfMirrored = kx == 0 || (width % 2 == 0 && kx == width / 2);
      energy += (selfMirrored ? 1.0 : 2.0) * std::norm(half[static_cast<std::size_t>(ky) * cw + kx]);
    }
  return energy;
}

}  // namespace gpulab
