// Real 2D FFTs through cuFFT: RAII plans, a plan cache that times plan creation apart from
// execution, and host DFTs (OpenCV baseline, naive reference).
//
//   gpulab::RealFft fft;                        // owns its plan cache and cuFFT workspace
//   fft.forward(gpu, image, spectrum);          // every channel: R2C (f32) or D2Z (f64), async
//   fft.inverse(gpu, spectrum, image);          // C2R / Z2D, normalised by 1/(W*H), async
//   fft.plans().records();                      // which plans were created, and how long each took
//
// Conventions. Forward: F(kx, ky) = sum_{x,y} f(x, y) exp(-2 pi i (kx x / W + ky y / H)), not
// scaled. Inverse: f(x, y) = 1/(W*H) sum F(kx, ky) exp(+2 pi i (...)), so inverse(forward(f)) = f.
// A half spectrum holds bins kx = 0..W/2 of every row ky = 0..H-1: H rows of W/2+1 complex values,
// rows and planes packed (cuFFT's R2C layout); the other bins are conjugates,
// F(W-kx, H-ky) = conj(F(kx, ky)). Any size from 1x1 up works, primes and odd sizes included.
//
// Plans are bound to the GpuContext's stream at every call (cufftSetStream) and share one workspace
// per cache (cufftSetWorkArea), grown when a new plan needs more. Creating a plan blocks the host
// (and waits for the stream when the workspace grows); executing one is asynchronous.
#pragma once

#include <compare>
#include <complex>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/timing.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Errors

/// "CUFFT_INVALID_SIZE" for CUFFT_INVALID_SIZE; "cufftResult 99" for codes this build does not know.
std::string cufftResultName(int result);

/// A failed cuFFT call: CudaError with the call, file, line and the cufftResult name.
class CufftError : public CudaError {
 public:
  using CudaError::CudaError;
};

// ---------------------------------------------------------------------------------------------
// Plans

enum class FftPrecision : std::uint8_t { Single, Double };  ///< R2C/C2R float, D2Z/Z2D double
enum class FftDirection : std::uint8_t { Forward, Inverse };

/// Bytes of one complex value.
constexpr std::size_t complexBytes(FftPrecision p) noexcept { return p == FftPrecision::Single ? 8 : 16; }
constexpr std::size_t realBytes(FftPrecision p) noexcept { return p == FftPrecision::Single ? 4 : 8; }

/// What a plan transforms: `batch` real planes of width x height, rows `realRowStride` elements apart
/// and planes `realPlaneStride` elements apart (a pitched DeviceImage, or a packed buffer), to or from
/// `batch` packed half spectra.
struct FftPlanKey {
  int width = 0;
  int height = 0;
  int batch = 1;
  std::int64_t realRowStride = 0;    ///< elements; >= width
  std::int64_t realPlaneStride = 0;  ///< elements; >= realRowStride * height
  FftPrecision precision = FftPrecision::Single;
  FftDirection direction = FftDirection::Forward;

  /// Packed planes: row stride = width, plane stride = width * height.
  static FftPlanKey packed(int width, int height, int batch, FftPrecision precision, FftDirection direction);
  /// Complex values in one half-spectrum plane: height * (width/2 + 1).
  std::size_t complexPlaneSize() const noexcept {
    return static_cast<std::size_t>(height) * static_cast<std::size_t>(width / 2 + 1);
  }
  /// "4096x4096 x1 R2C" for logs and reports.
  std::string describe() const;
  auto operator<=>(const FftPlanKey&) const = default;
};

/// One cuFFT plan (move-only RAII). Sizes whose transform cuFFT does not take directly are handled
/// here: 1x1 by a copy kernel, Wx1 rows as 1D transforms, 1xH columns as 1D transforms completed
/// by Hermitian symmetry. Throws std::invalid_argument for a bad key, CufftError when cuFFT fails.
class FftPlan {
 public:
  explicit FftPlan(const FftPlanKey& key);
  ~FftPlan();
  FftPlan(FftPlan&& other) noexcept;
  FftPlan& operator=(FftPlan&& other) noexcept;
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;

  const FftPlanKey& key() const noexcept { return key_; }
  /// Workspace bytes this plan needs during execution (it allocates none itself).
  std::size_t workspaceBytes() const noexcept { return workspaceBytes_; }
  /// Enqueues the transform on `stream`: forward reads real planes and writes half spectra;
  /// inverse reads half spectra (and overwrites them, as cuFFT's C2R does) and writes real planes,
  /// unnormalised. `workspace` must hold workspaceBytes().
  void execute(const void* in, void* out, cudaStream_t stream, void* workspace);

 private:
  enum class Kind : std::uint8_t { Cufft2D, Rows, Column, Single };
  void release() noexcept;

  FftPlanKey key_;
  Kind kind_ = Kind::Cufft2D;
  int handle_ = 0;  // a cufftHandle (an int in every cuFFT release)
  bool hasHandle_ = false;
  std::size_t workspaceBytes_ = 0;
  std::uint64_t epoch_ = 0;  // the device epoch the handle was made in: a reset destroyed older ones
  cudaStream_t boundStream_ = nullptr;
  void* boundWorkspace_ = nullptr;
  bool streamBound_ = false;
};

/// Plans created once per key and kept; creation timed on the host clock apart from execution.
/// One workspace serves every plan (they run one after another on one stream). Not thread-safe.
/// After a device reset (recoverDevice) the old plans are dropped and made again on next use.
class FftPlanCache {
 public:
  struct Record {
    FftPlanKey key;
    double creationMs = 0;
    std::size_t workspaceBytes = 0;
  };

  FftPlanCache() = default;
  FftPlanCache(FftPlanCache&&) noexcept = default;
  FftPlanCache& operator=(FftPlanCache&&) noexcept = default;

  /// The plan for `key`, created (and timed) the first time. When the shared workspace must grow,
  /// waits for `stream` first, since work queued on it may still use the old one.
  FftPlan& plan(const FftPlanKey& key, cudaStream_t stream);
  /// Creates (if needed) and enqueues the transform on `stream`.
  void execute(const FftPlanKey& key, const void* in, void* out, cudaStream_t stream);

  /// Every plan created so far, in creation order.
  const std::vector<Record>& records() const noexcept { return records_; }
  std::size_t size() const noexcept { return plans_.size(); }
  double totalCreationMs() const noexcept;
  /// Milliseconds spent creating plans since the last call to this function (0 when none was made):
  /// lets an operation report "plan creation" once, the first time, apart from compute.
  double takeCreationMs() noexcept;
  std::size_t workspaceBytes() const noexcept { return workspace_.size(); }
  void clear() noexcept;

 private:
  std::map<FftPlanKey, FftPlan> plans_;
  std::vector<Record> records_;
  DeviceBuffer workspace_;
  std::uint64_t epoch_ = deviceEpoch();  // plans from before a device reset are dropped and made anew
  double untakenMs_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Profiling

/// The stages of an FFT filtering pipeline (FftFilter, FftConvolver), each timed alone: a stage the
/// pipeline does not run has a zero-rep Stats.
struct FftStageTimes {
  Stats pad, forward, multiply, inverse, crop;
};

// ---------------------------------------------------------------------------------------------
// Transforms of device images

/// Forward and inverse real FFTs of every channel of f32 (R2C/C2R) or f64 (D2Z/Z2D) DeviceImages,
/// straight from and into their pitched planes. Asynchronous on gpu.stream(); one per worker thread.
class RealFft {
 public:
  /// Half spectra of all channels of `in` into `spectrum`, grown when too small (never shrunk):
  /// channels planes of height x (width/2+1) complex<float> (f32) or complex<double> (f64).
  /// Throws std::invalid_argument for u8 images.
  void forward(GpuContext& gpu, const DeviceImage& in, DeviceBuffer& spectrum);
  /// Inverse of forward, normalised by 1/(W*H), into `out`, which must already have the shape
  /// (width, height, channels, type) the spectrum belongs to. Overwrites `spectrum`.
  void inverse(GpuContext& gpu, DeviceBuffer& spectrum, DeviceImage& out);

  FftPlanCache& plans() noexcept { return plans_; }
  const FftPlanCache& plans() const noexcept { return plans_; }

 private:
  FftPlanCache plans_;
};

/// Copies `count` complex values (of `precision`) from the device to the host as complex<double>.
/// Blocking: waits for gpu.stream().
std::vector<std::complex<double>> downloadSpectrum(GpuContext& gpu, const DeviceBuffer& spectrum, std::size_t count,
                                                   FftPrecision precision);

// ---------------------------------------------------------------------------------------------
// Host DFTs

/// The largest transform naiveDft2d takes (it is O((W*H)^2)): 16384 pixels.
inline constexpr std::int64_t kNaiveDftMaxPixels = 16384;

/// The textbook 2D DFT in double, unscaled in both directions: the reference the tests trust.
/// `in` and the result are full width x height complex arrays, row-major; inverse uses exp(+i...).
/// Throws std::invalid_argument beyond kNaiveDftMaxPixels or when in.size() != width*height.
std::vector<std::complex<double>> naiveDft2d(std::span<const std::complex<double>> in, int width, int height,
                                             bool inverse = false);

/// The half spectrum (layout as RealFft) of a one-channel f32 or f64 image, with OpenCV's cv::dft
/// in the image's precision: the CPU baseline.
std::vector<std::complex<double>> cpuRealDft2d(const Image& oneChannel);

/// sum |F|^2 over the full spectrum, from a half spectrum (bins with a mirror counted twice):
/// equals W*H * sum f^2 by Parseval.
double halfSpectrumEnergy(std::span<const std::complex<double>> half, int width, int height);

}  // namespace gpulab
