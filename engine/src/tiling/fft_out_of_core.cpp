// The FFT filter out of core: rows, columns, rows (see fft_out_of_core.hpp).
#include "gpulab/tiling/fft_out_of_core.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/fft/fft.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_conv.cuh"
#include "gpulab/kernels/fft_out_of_core.cuh"
#include "gpulab/tiling/tiled_runner.hpp"
#include "internal/cufft_check.hpp"
#include "internal/fft_filter_mask.hpp"
#include "internal/fft_range.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Planning

namespace {

std::size_t realBytesOf(PixelType type) { return type == PixelType::F64 ? 8 : 4; }

/// Whether cuFFT transforms n points by its radices (2, 3, 5, 7) rather than Bluestein's method.
bool smooth(int n) {
  for (int p : {2, 3, 5, 7})
    while (n % p == 0) n /= p;
  return n == 1;
}

/// cuFFT's workspace for batched 1D transforms of n points, in units of the data they transform:
/// about one copy for radix sizes, up to four (Bluestein pads to a power of two >= 2n - 1) for others.
std::size_t workspaceFactor(int n) { return n <= 1 ? 0 : (smooth(n) ? 1 : 4); }

void checkShape(const ImageShape& in) {
  validateImageShape(in.width, in.height, in.channels);
  if (in.type == PixelType::U16)
    throw std::invalid_argument("the FFT filter takes u8, f32 or f64 images, not u16: convert to f32 first");
}

std::size_t withSlack(std::size_t bytes) { return bytes + bytes / 8; }  // plans, granularity, small buffers

std::string chunks(int count, int size, int total) {
  if (count == 1) return "1 chunk of " + std::to_string(total);
  return std::to_string(count) + " chunks of " + std::to_string(size);
}

}  // namespace

std::size_t fftRowChunkBytes(const FftFilter& filter, const ImageShape& in, int rows) {
  const auto [fw, fh] = filter.fftSize(in.width, in.height);
  const std::size_t real = realBytesOf(in.type), r = static_cast<std::size_t>(std::max(rows, 0));
  const std::size_t realRows = r * static_cast<std::size_t>(fw) * real;
  const std::size_t halfRows = r * (static_cast<std::size_t>(fw) / 2 + 1) * 2 * real;
  const std::size_t samples = r * static_cast<std::size_t>(in.width) * bytesPerSample(in.type);
  return withSlack(realRows + halfRows + samples + workspaceFactor(fw) * halfRows);
}

std::size_t fftColumnChunkBytes(const FftFilter& filter, const ImageShape& in, int columns) {
  const auto [fw, fh] = filter.fftSize(in.width, in.height);
  const std::size_t block =
      static_cast<std::size_t>(std::max(columns, 0)) * static_cast<std::size_t>(fh) * 2 * realBytesOf(in.type);
  return withSlack(block + workspaceFactor(fh) * block);
}

std::string FftPassPlan::describe() const {
  return "3 passes over the " + std::to_string(fftWidth) + "x" + std::to_string(fftHeight) + " transform: rows " +
         chunks(forwardRowChunks(), rowChunk, fftHeight) + " (R2C); columns " +
         chunks(columnChunks(), columnChunk, complexWidth()) + " (C2C, mask, C2C); rows " +
         chunks(inverseRowChunks(), rowChunk, imageHeight) + " (C2R)";
}

FftPassPlan planFftOutOfCore(const FftFilter& filter, const ImageShape& in, std::size_t budget) {
  checkShape(in);
  FftPassPlan plan;
  plan.imageWidth = in.width;
  plan.imageHeight = in.height;
  std::tie(plan.fftWidth, plan.fftHeight) = filter.fftSize(in.width, in.height);
  plan.planes = fftFilteredChannels(in.channels, in.type);
  plan.budget = budget;
  // The largest count whose estimate fits (the estimates grow linearly, so start from the ratio).
  auto largest = [&](int most, auto bytesFor) {
    const std::size_t one = bytesFor(1);
    if (one > budget) return 0;
    int n =
        static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(most), budget / std::max<std::size_t>(one, 1)));
    while (n < most && bytesFor(n + 1) <= budget) ++n;
    while (n > 1 && bytesFor(n) > budget) --n;
    return std::max(n, 1);
  };
  plan.rowChunk = largest(plan.fftHeight, [&](int r) { return fftRowChunkBytes(filter, in, r); });
  plan.columnChunk = largest(plan.complexWidth(), [&](int c) { return fftColumnChunkBytes(filter, in, c); });
  if (plan.rowChunk == 0 || plan.columnChunk == 0)
    throw std::runtime_error(
        "not even one " + std::string(plan.rowChunk == 0 ? "row" : "column") + " of the " +
        std::to_string(plan.fftWidth) + "x" + std::to_string(plan.fftHeight) + " transform fits in " +
        formatByteSize(budget) + " of GPU memory (it needs about " +
        formatByteSize(plan.rowChunk == 0 ? fftRowChunkBytes(filter, in, 1) : fftColumnChunkBytes(filter, in, 1)) +
        ")");
  plan.rowBytes = fftRowChunkBytes(filter, in, plan.rowChunk);
  plan.columnBytes = fftColumnChunkBytes(filter, in, plan.columnChunk);
  plan.hostBytes = static_cast<std::size_t>(plan.complexWidth()) * static_cast<std::size_t>(plan.fftHeight) * 2 *
                   realBytesOf(in.type);
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Running

std::string FftOutOfCoreRun::summary() const {
  char text[768];
  std::snprintf(text, sizeof text,
                "tiled: FFT filter out of core, %s, limit %s; upload %.1f ms, compute %.2f ms, download %.1f ms "
                "(sums over the chunks), wall %.0f ms; peak GPU use %s (measured)",
                plan.describe().c_str(), limit == 0 ? "none (free memory)" : formatByteSize(limit).c_str(), uploadMs,
                computeMs, downloadMs, wallMs, formatByteSize(peakGpuBytes).c_str());
  return text;
}

namespace {

/// A batched 1D complex-to-complex cuFFT plan along the columns of a block of `columns` packed
/// columns of `length` rows (stride `columns`, distance 1), in place. Move-only RAII.
class ColumnPlan {
 public:
  ColumnPlan(int length, int columns, bool dbl) : dbl_(dbl) {
    int n[1] = {length};
    GPULAB_CUFFT_CHECK(cufftCreate(&handle_));
    std::size_t work = 0;
    const cufftResult made =
        cufftMakePlanMany(handle_, 1, n, n, columns, 1, n, columns, 1, dbl ? CUFFT_Z2Z : CUFFT_C2C, columns, &work);
    if (made != CUFFT_SUCCESS) {
      cufftDestroy(handle_);
      GPULAB_CUFFT_CHECK(made);
    }
  }
  ~ColumnPlan() { cufftDestroy(handle_); }
  ColumnPlan(const ColumnPlan&) = delete;
  ColumnPlan& operator=(const ColumnPlan&) = delete;

  void execute(void* block, bool forward, cudaStream_t stream) {
    GPULAB_CUFFT_CHECK(cufftSetStream(handle_, stream));
    const int direction = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    if (dbl_)
      GPULAB_CUFFT_CHECK(cufftExecZ2Z(handle_, static_cast<cufftDoubleComplex*>(block),
                                      static_cast<cufftDoubleComplex*>(block), direction));
    else
      GPULAB_CUFFT_CHECK(
          cufftExecC2C(handle_, static_cast<cufftComplex*>(block), static_cast<cufftComplex*>(block), direction));
  }

 private:
  cufftHandle handle_ = 0;
  bool dbl_ = false;
};

/// The run's bookkeeping: events on the stream, and the least free memory seen.
struct Meter {
  Meter(GpuContext& g, FftOutOfCoreRun& r) : gpu(g), run(r) {}
  GpuContext& gpu;
  FftOutOfCoreRun& run;
  std::size_t freeBefore = 0;
  std::size_t leastFree = 0;
  Event start, stop;

  /// Enqueues `work` between two events and adds their time to `sum` (blocking).
  template <class Work>
  void timed(double& sum, Work&& work) {
    start.record(gpu.stream());
    work();
    stop.record(gpu.stream());
    stop.synchronize();
    sum += stop.elapsedSince(start);
  }
  void sample() { leastFree = std::min(leastFree, deviceMemory(gpu.device()).free); }
};

template <class T, class Real>
void runPlane(Meter& m, const FftFilter& filter, const Image& in, int channel, const FftPassPlan& plan,
              const FftOutOfCoreOptions& options, PinnedBuffer& spectrum, Image& out, const CpuControl& control,
              int& step, int steps) {
  using Cx = kernels::Complex<Real>;
  constexpr FftPrecision precision = std::is_same_v<Real, float> ? FftPrecision::Single : FftPrecision::Double;
  cudaStream_t stream = m.gpu.stream();
  const int width = in.width(), height = in.height(), channels = in.channels();
  const int fw = plan.fftWidth, fh = plan.fftHeight, cw = plan.complexWidth();
  const auto cwz = static_cast<std::size_t>(cw), fwz = static_cast<std::size_t>(fw);
  Cx* host = spectrum.as<Cx>();
  const int exponent = options.inputExponent.value_or(0);
  const bool scaled = exponent != 0 && !std::is_same_v<T, std::uint8_t>;
  const Real down = scaled ? static_cast<Real>(std::ldexp(1.0, -exponent)) : Real(1);
  const double up = scaled ? std::ldexp(1.0, exponent) : 1.0;
  auto progress = [&] {
    control.throwIfCancelled();
    control.report(static_cast<double>(++step) / steps);
  };

  // Pass 1: rows of the (mirror-padded) plane, R2C, into the host spectrum.
  {
    FftPlanCache plans;
    DeviceBuffer dReal(static_cast<std::size_t>(plan.rowChunk) * fwz * sizeof(Real));
    DeviceBuffer dHalf(static_cast<std::size_t>(plan.rowChunk) * cwz * sizeof(Cx));
    PinnedBuffer stage(static_cast<std::size_t>(plan.rowChunk) * fwz * sizeof(Real));
    for (int y0 = 0; y0 < fh; y0 += plan.rowChunk) {
      control.throwIfCancelled();
      const int rows = std::min(plan.rowChunk, fh - y0);
      Stopwatch gather;
      Real* dst = stage.as<Real>();
      for (int r = 0; r < rows; ++r) {
        const int y = y0 + r;
        const int sy = y < height ? y : 2 * height - 1 - y;  // mirror: reflected about the bottom edge
        const T* src = in.row<T>(sy);
        Real* row = dst + static_cast<std::size_t>(r) * fwz;
        for (int x = 0; x < fw; ++x) {
          const int sx = x < width ? x : 2 * width - 1 - x;
          row[x] = static_cast<Real>(src[static_cast<std::size_t>(sx) * channels + channel]) * down;
        }
      }
      m.run.uploadMs += gather.elapsedMs();
      const std::size_t realBytes = static_cast<std::size_t>(rows) * fwz * sizeof(Real);
      m.timed(m.run.uploadMs, [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(dReal.data(), stage.data(), realBytes, cudaMemcpyHostToDevice, stream));
      });
      const FftPlanKey key = FftPlanKey::packed(fw, 1, rows, precision, FftDirection::Forward);
      plans.plan(key, stream);
      m.run.prepareMs += plans.takeCreationMs();
      m.timed(m.run.computeMs, [&] { plans.execute(key, dReal.data(), dHalf.data(), stream); });
      m.sample();
      m.timed(m.run.downloadMs, [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(host + static_cast<std::size_t>(y0) * cwz, dHalf.data(),
                                          static_cast<std::size_t>(rows) * cwz * sizeof(Cx), cudaMemcpyDeviceToHost,
                                          stream));
      });
      progress();
    }
  }

  // Pass 2: columns of the half spectrum: C2C forward, the mask (with 1/(fw*fh)), C2C inverse.
  {
    const Real scale = Real(1) / (static_cast<Real>(fw) * static_cast<Real>(fh));  // as FftFilter's multiply
    const kernels::FreqMask mask = fftFilterMask(filter.spec());
    DeviceBuffer block(static_cast<std::size_t>(plan.columnChunk) * static_cast<std::size_t>(fh) * sizeof(Cx));
    std::unique_ptr<ColumnPlan> columnPlan;
    int plannedColumns = 0;
    for (int k0 = 0; k0 < cw; k0 += plan.columnChunk) {
      control.throwIfCancelled();
      const int columns = std::min(plan.columnChunk, cw - k0);
      const std::size_t columnBytes = static_cast<std::size_t>(columns) * sizeof(Cx);
      m.timed(m.run.uploadMs, [&] {
        GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(block.data(), columnBytes, host + k0, cwz * sizeof(Cx), columnBytes,
                                            static_cast<std::size_t>(fh), cudaMemcpyHostToDevice, stream));
      });
      if (fh > 1 && columns != plannedColumns) {  // a 1-point transform is the identity
        columnPlan.reset();
        Stopwatch creation;
        columnPlan = std::make_unique<ColumnPlan>(fh, columns, std::is_same_v<Real, double>);
        m.run.prepareMs += creation.elapsedMs();
        plannedColumns = columns;
      }
      m.timed(m.run.computeMs, [&] {
        if (columnPlan) columnPlan->execute(block.data(), true, stream);
        kernels::launchApplyFreqMaskColumns<Real>(block.as<Cx>(), columns, k0, fw, fh, mask, scale, stream);
        if (columnPlan) columnPlan->execute(block.data(), false, stream);
      });
      m.sample();
      m.timed(m.run.downloadMs, [&] {
        GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(host + k0, cwz * sizeof(Cx), block.data(), columnBytes, columnBytes,
                                            static_cast<std::size_t>(fh), cudaMemcpyDeviceToHost, stream));
      });
      progress();
    }
  }

  // Pass 3: the image's rows of the spectrum, C2R, converted to the sample type, into the result.
  {
    FftPlanCache plans;
    DeviceBuffer dHalf(static_cast<std::size_t>(plan.rowChunk) * cwz * sizeof(Cx));
    DeviceBuffer dReal(static_cast<std::size_t>(plan.rowChunk) * fwz * sizeof(Real));
    const std::size_t outRow = static_cast<std::size_t>(width) * sizeof(T);
    DeviceBuffer dOut(static_cast<std::size_t>(plan.rowChunk) * outRow);
    PinnedBuffer stage(static_cast<std::size_t>(plan.rowChunk) * outRow);
    for (int y0 = 0; y0 < height; y0 += plan.rowChunk) {
      control.throwIfCancelled();
      const int rows = std::min(plan.rowChunk, height - y0);
      m.timed(m.run.uploadMs, [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(dHalf.data(), host + static_cast<std::size_t>(y0) * cwz,
                                          static_cast<std::size_t>(rows) * cwz * sizeof(Cx), cudaMemcpyHostToDevice,
                                          stream));
      });
      const FftPlanKey key = FftPlanKey::packed(fw, 1, rows, precision, FftDirection::Inverse);
      plans.plan(key, stream);
      m.run.prepareMs += plans.takeCreationMs();
      m.timed(m.run.computeMs, [&] {
        plans.execute(key, dHalf.data(), dReal.data(), stream);
        const kernels::Plane<T> target{dOut.as<T>(), width, rows, outRow};
        kernels::launchCropConvert<Real, T>(dReal.as<Real>(), fw, rows, 0, 0, 1, target, rows, stream);
      });
      m.sample();
      m.timed(m.run.downloadMs, [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(stage.data(), dOut.data(), static_cast<std::size_t>(rows) * outRow,
                                          cudaMemcpyDeviceToHost, stream));
      });
      Stopwatch paste;
      const T* src = stage.as<T>();
      for (int r = 0; r < rows; ++r) {
        T* dst = out.row<T>(y0 + r);
        const T* row = src + static_cast<std::size_t>(r) * static_cast<std::size_t>(width);
        if constexpr (std::is_floating_point_v<T>) {
          if (scaled) {  // as the whole-image filter: rounding alone never makes inf (descalePow2)
            for (int x = 0; x < width; ++x)
              dst[static_cast<std::size_t>(x) * channels + channel] = kernels::descalePow2(row[x], exponent);
            continue;
          }
        }
        if (scaled)
          for (int x = 0; x < width; ++x)
            dst[static_cast<std::size_t>(x) * channels + channel] = static_cast<T>(static_cast<double>(row[x]) * up);
        else
          for (int x = 0; x < width; ++x) dst[static_cast<std::size_t>(x) * channels + channel] = row[x];
      }
      m.run.downloadMs += paste.elapsedMs();
      progress();
    }
  }
}

}  // namespace

FftOutOfCoreRun runFftOutOfCore(GpuContext& gpu, const FftFilter& filter, const Image& in, const FftPassPlan& plan,
                                const FftOutOfCoreOptions& options, const CpuControl& control) {
  if (in.empty()) throw std::invalid_argument("cannot filter an empty image");
  checkShape(shapeOf(in));
  const auto [fw, fh] = filter.fftSize(in.width(), in.height());
  if (plan.imageWidth != in.width() || plan.imageHeight != in.height() || plan.fftWidth != fw || plan.fftHeight != fh ||
      plan.rowChunk < 1 || plan.columnChunk < 1)
    throw std::invalid_argument("the out-of-core FFT plan is for a " + std::to_string(plan.imageWidth) + "x" +
                                std::to_string(plan.imageHeight) + " image (" + std::to_string(plan.fftWidth) + "x" +
                                std::to_string(plan.fftHeight) + " transform), not " + in.describe() + " with " +
                                filter.describe());
  FftOutOfCoreRun run;
  run.plan = plan;
  run.limit = gpuMemoryLimit();
  Stopwatch wall;
  run.output = Image(in.width(), in.height(), in.channels(), in.type());
  gpu.synchronize();
  Meter meter(gpu, run);
  meter.freeBefore = meter.leastFree = deviceMemory(gpu.device()).free;

  const int planes = fftFilteredChannels(in.channels(), in.type());
  PinnedBuffer spectrum(plan.hostBytes > 0 ? plan.hostBytes
                                           : static_cast<std::size_t>(plan.complexWidth()) *
                                                 static_cast<std::size_t>(fh) * 2 * realBytesOf(in.type()));
  // As the whole-image path does: a largest finite |value| beyond 2^+-64 is brought near 1 by a power
  // of two before the transforms and restored after, so finite input stays finite (fft_range.hpp).
  FftOutOfCoreOptions scaled = options;
  if (!scaled.inputExponent) {
    double maxAbs = 0;
    auto scan = [&](auto tag) {
      using T = decltype(tag);
      for (const T v : in.samples<T>())
        if (std::isfinite(v)) maxAbs = std::max(maxAbs, std::fabs(static_cast<double>(v)));
    };
    if (in.type() == PixelType::F32) scan(float{});
    if (in.type() == PixelType::F64) scan(double{});
    scaled.inputExponent = fftRangeExponent(maxAbs);
  }
  int step = 0;
  const int steps = planes * (plan.forwardRowChunks() + plan.columnChunks() + plan.inverseRowChunks());
  for (int c = 0; c < planes; ++c) {
    switch (in.type()) {
      case PixelType::U8:
        runPlane<std::uint8_t, float>(meter, filter, in, c, plan, scaled, spectrum, run.output, control, step, steps);
        break;
      case PixelType::F32:
        runPlane<float, float>(meter, filter, in, c, plan, scaled, spectrum, run.output, control, step, steps);
        break;
      case PixelType::F64:
        runPlane<double, double>(meter, filter, in, c, plan, scaled, spectrum, run.output, control, step, steps);
        break;
      case PixelType::U16:
        break;  // refused by checkShape
    }
  }
  // Alpha (2- and 4-channel u8) passes through unchanged.
  const std::size_t sample = bytesPerSample(in.type());
  for (int c = planes; c < in.channels(); ++c)
    for (int y = 0; y < in.height(); ++y) {
      const std::byte* src = in.row<std::byte>(y);
      std::byte* dst = run.output.row<std::byte>(y);
      for (int x = 0; x < in.width(); ++x) {
        const std::size_t at = (static_cast<std::size_t>(x) * in.channels() + c) * sample;
        std::memcpy(dst + at, src + at, sample);
      }
    }
  run.peakGpuBytes = meter.freeBefore - meter.leastFree;
  run.wallMs = wall.elapsedMs();
  return run;
}

}  // namespace gpulab
