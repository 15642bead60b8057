// Recovery from sticky GPU faults (core/errors.hpp GpuFaultError, core/device.hpp recoverDevice):
// which CUDA errors count as sticky, the sentence a fault gives, and on a GPU the whole round: run an
// operation, fault the device on purpose (core/fault_injection.hpp, test only), see GpuFaultError,
// reset, and run the same operation again with the same result, through the engine's rebuilt
// resources (GpuContext's stream and staging, cuFFT plans, a cuBLAS handle, a lab's stream) while
// objects made before the reset free nothing.
//
// The GPU suite is GpuFaultRecovery: these tests fault the device deliberately, so compute-sanitizer
// must not run them (scripts/gpu-check.sh excludes *GpuFaultRecovery* from its sanitizer passes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/core/fault_injection.hpp"
#include "gpulab/fft/fft.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/lab/custom_kernel.hpp"
#include "gpulab/lab/matmul.hpp"
#include "gpulab/mandelbrot/renderer.hpp"
#include "support/gpu_test.hpp"

namespace gpulab {
namespace {

using lab::CustomKernelLab;
using lab::KernelFault;
using lab::KernelRun;
using lab::MatmulImpl;
using lab::MatmulLab;
using lab::MatmulShape;
using lab::parseKernelArg;
using lab::RawKernelRequest;
using testing::GpuFault;

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

bool sameBytes(const Image& a, const Image& b) {
  return a.width() == b.width() && a.height() == b.height() && a.channels() == b.channels() && a.type() == b.type() &&
         std::memcmp(a.data(), b.data(), a.sizeBytes()) == 0;
}

// ---------------------------------------------------------------------------------------------
// Without a GPU: the classification and the sentence.

TEST(GpuFaultClassification, StickyErrorsThrowGpuFaultErrorOthersCudaError) {
  for (const cudaError_t sticky :
       {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorMisalignedAddress, cudaErrorIllegalInstruction,
        cudaErrorHardwareStackError, cudaErrorAssert, cudaErrorInvalidPc, cudaErrorInvalidAddressSpace}) {
    EXPECT_TRUE(detail::isStickyCudaError(sticky)) << cudaGetErrorName(sticky);
    try {
      detail::throwCudaError("cudaStreamSynchronize(stream)", "file.cpp", 7, sticky);
      ADD_FAILURE() << "no exception";
    } catch (const GpuFaultError& e) {
      EXPECT_EQ(e.code(), static_cast<int>(sticky));
      EXPECT_EQ(e.reason(), cudaGetErrorString(sticky));
      EXPECT_TRUE(has(e.what(), "cudaStreamSynchronize(stream) failed at file.cpp:7")) << e.what();
      EXPECT_TRUE(has(e.what(), "the CUDA context is lost until the device is reset")) << e.what();
      EXPECT_EQ(describeGpuFault(e),
                std::string("the GPU faulted (") + cudaGetErrorString(sticky) + ", seen by cudaStreamSynchronize)");
    }
  }
  for (const cudaError_t plain : {cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorLaunchOutOfResources,
                                  cudaErrorInvalidConfiguration, cudaErrorNoDevice}) {
    EXPECT_FALSE(detail::isStickyCudaError(plain)) << cudaGetErrorName(plain);
    try {
      detail::throwCudaError("cudaMalloc(&p, n)", "file.cpp", 9, plain);
      ADD_FAILURE() << "no exception";
    } catch (const GpuFaultError& e) {
      ADD_FAILURE() << cudaGetErrorName(plain) << " is not sticky: " << e.what();
    } catch (const CudaError& e) {
      EXPECT_EQ(e.code(), static_cast<int>(plain));
      EXPECT_FALSE(has(e.what(), "context is lost")) << e.what();
    }
  }
}

TEST(GpuFaultClassification, RecoveryWithoutAGpuSaysSo) {
  if (cudaAvailable()) GTEST_SKIP() << "there is a GPU here: the no-GPU refusal is tested on machines without one";
  EXPECT_FALSE(stickyGpuFault().has_value());
  try {
    recoverDevice();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "there is no GPU to reset: gpulab runs CPU only here");
  }
}

// ---------------------------------------------------------------------------------------------
// On a GPU: fault, see it, recover, run again.

/// Set when recoverDevice() was refused by the driver (cudaErrorDevicesUnavailable: no new CUDA
/// context for this process after a fault, whatever the wait): the machine's limit, not a result of
/// this code; the GPU tests after it skip with this reason.
std::string gRefusal;

#define GPULAB_REQUIRE_RECOVERABLE_GPU()             \
  do {                                               \
    GPULAB_REQUIRE_GPU();                            \
    if (!gRefusal.empty()) GTEST_SKIP() << gRefusal; \
  } while (0)

#define GPULAB_FAULT_AND_RECOVER(gpu, fault, code)   \
  do {                                               \
    faultAndRecover(gpu, fault, code);               \
    if (::testing::Test::HasFatalFailure()) return;  \
    if (!gRefusal.empty()) GTEST_SKIP() << gRefusal; \
  } while (0)

/// recoverDevice(), noting a refusal by the driver in gRefusal.
void recoverOrNote() {
  try {
    recoverDevice();
  } catch (const CudaError& e) {
    if (e.code() != static_cast<int>(cudaErrorDevicesUnavailable)) throw;
    // Such drivers want the process relaunched: gpulab restarts itself there (suite GpuFaultRelaunch).
    gRefusal = std::string(
                   "the driver refused a new CUDA context in this process after the fault (gpulab restarts "
                   "the process there instead: suite GpuFaultRelaunch): ") +
               e.what();
  }
}

/// Faults the device through `gpu` and expects the next wait to throw GpuFaultError with `code`;
/// checks that the context stays poisoned (another call fails too) until recoverDevice(), which
/// starts a new epoch with a healthy context.
void faultAndRecover(GpuContext& gpu, GpuFault fault, cudaError_t code) {
  const std::uint64_t epoch = deviceEpoch();
  testing::injectGpuFault(gpu, fault);
  try {
    gpu.synchronize();
    ADD_FAILURE() << "the " << testing::toString(fault) << " fault was not seen";
  } catch (const GpuFaultError& e) {
    EXPECT_EQ(e.code(), static_cast<int>(code)) << e.what();
    code = static_cast<cudaError_t>(e.code());  // what the probe below must see too
    EXPECT_TRUE(has(e.what(), "cudaStreamSynchronize")) << e.what();
    EXPECT_TRUE(has(e.what(), "the CUDA context is lost")) << e.what();
    EXPECT_EQ(describeGpuFault(e), "the GPU faulted (" + e.reason() + ", seen by cudaStreamSynchronize)");
  }
  // Sticky: the next call fails the same way, and the probe sees it.
  EXPECT_THROW(gpu.synchronize(), GpuFaultError);
  const std::optional<std::string> pending = stickyGpuFault();
  ASSERT_TRUE(pending.has_value());
  EXPECT_EQ(*pending, cudaGetErrorString(code));

  recoverOrNote();
  if (!gRefusal.empty()) return;
  EXPECT_EQ(deviceEpoch(), epoch + 1);
  EXPECT_FALSE(stickyGpuFault().has_value());
  EXPECT_NE(gpu.epoch(), deviceEpoch());  // renewed on its next use
  gpu.synchronize();
  EXPECT_EQ(gpu.epoch(), deviceEpoch());
}

TEST(GpuFaultRecovery, BoxBlurRunsAgainWithTheSameResultAfterAnIllegalAddress) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  const Image photo = test::randomImage(97, 61, 3, PixelType::U8, 19);
  GpuContext gpu;
  BoxBlur blur(4, Border{BorderMode::Reflect101});
  DeviceImage in = gpu.upload(photo);
  DeviceImage out;
  blur.runGpu(gpu, in, out);
  const Image before = gpu.download(out);
  ASSERT_EQ(before.width(), photo.width());

  GPULAB_FAULT_AND_RECOVER(gpu, GpuFault::IllegalAddress, cudaErrorIllegalAddress);

  // What lived on the GPU is gone: the images read as empty, and nothing of theirs is freed.
  EXPECT_TRUE(in.stale());
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(in.width(), 0);
  EXPECT_TRUE(out.empty());
  EXPECT_THROW((void)gpu.download(in), std::invalid_argument);

  in = gpu.upload(photo);     // the host copy goes up again
  blur.runGpu(gpu, in, out);  // `out` is reallocated: a stale image has no shape to reuse
  EXPECT_FALSE(out.stale());
  const Image after = gpu.download(out);
  EXPECT_TRUE(sameBytes(before, after));
}

TEST(GpuFaultRecovery, EveryInjectedFaultKindIsStickyAndRecovered) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  const Image photo = test::randomImage(33, 17, 1, PixelType::F32, 5);
  GpuContext gpu;
  for (const auto& [fault, code] : {std::pair{GpuFault::MisalignedAddress, cudaErrorMisalignedAddress},
                                    std::pair{GpuFault::Trap, cudaErrorLaunchFailure},
                                    std::pair{GpuFault::IllegalAddress, cudaErrorIllegalAddress}}) {
    SCOPED_TRACE(std::string(testing::toString(fault)));
    GPULAB_FAULT_AND_RECOVER(gpu, fault, code);
    const Image back = gpu.download(gpu.upload(photo));
    EXPECT_TRUE(sameBytes(back, photo));
  }
}

TEST(GpuFaultRecovery, FftPlansAreMadeAgainAndGiveTheSameSpectrum) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  const Image photo = test::randomImage(120, 77, 2, PixelType::F32, 11);
  GpuContext gpu;
  RealFft fft;
  DeviceBuffer spectrum;
  const std::size_t count = 2 * static_cast<std::size_t>(77) * (120 / 2 + 1);
  DeviceImage in = gpu.upload(photo);
  fft.forward(gpu, in, spectrum);
  const auto before = downloadSpectrum(gpu, spectrum, count, FftPrecision::Single);
  const std::size_t plansBefore = fft.plans().records().size();
  ASSERT_GE(plansBefore, 1u);

  GPULAB_FAULT_AND_RECOVER(gpu, GpuFault::IllegalAddress, cudaErrorIllegalAddress);
  EXPECT_TRUE(spectrum.empty());  // stale: reads as empty, grown anew by forward()

  in = gpu.upload(photo);
  fft.forward(gpu, in, spectrum);
  const auto after = downloadSpectrum(gpu, spectrum, count, FftPrecision::Single);
  EXPECT_EQ(fft.plans().records().size(), 2 * plansBefore);  // the plans were created again
  ASSERT_EQ(after.size(), before.size());
  double worst = 0;
  for (std::size_t i = 0; i < before.size(); ++i) worst = std::max(worst, std::abs(after[i] - before[i]));
  EXPECT_EQ(worst, 0.0) << "the same plan on the same input gives the same bits";

  // And the inverse through the rebuilt plans gives the photo back.
  DeviceImage round(photo.width(), photo.height(), photo.channels(), photo.type());
  fft.inverse(gpu, spectrum, round);
  const Image back = gpu.download(round);
  double err = 0;
  for (std::size_t i = 0; i < back.samples<float>().size(); ++i)
    err = std::max(err, static_cast<double>(std::abs(back.samples<float>()[i] - photo.samples<float>()[i])));
  EXPECT_LT(err, 1e-5);
}

TEST(GpuFaultRecovery, MandelbrotRendererForgetsItsFrameAndRendersTheSameAgain) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  GpuContext gpu;
  MandelbrotRenderer renderer;  // kept across frames, as the GUI's zoom keeps it
  MandelbrotView view;
  view.centerX = DecimalNumber::fromDouble(-0.75);
  view.centerY = DecimalNumber::fromDouble(0.1);
  view.width = DeepWidth::fromDouble(0.05);
  view.imageWidth = 53;
  view.imageHeight = 29;
  view.maxIterations = 800;
  Colouring colouring;
  const Image before = renderMandelbrot(gpu, renderer, view, colouring);
  ASSERT_TRUE(renderer.hasFrame());

  GPULAB_FAULT_AND_RECOVER(gpu, GpuFault::IllegalAddress, cudaErrorIllegalAddress);
  EXPECT_FALSE(renderer.hasFrame());  // its raw plane went with the old context
  EXPECT_THROW(renderer.colour(gpu, colouring), std::logic_error);
  const Image after = renderMandelbrot(gpu, renderer, view, colouring);
  EXPECT_TRUE(sameBytes(before, after));
}

TEST(GpuFaultRecovery, CublasProductAfterRecoveryEqualsTheOneBefore) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  const MatmulShape shape{67, 45, 31};
  std::vector<float> a(static_cast<std::size_t>(shape.m) * shape.k), b(static_cast<std::size_t>(shape.k) * shape.n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 37 % 101) - 50) / 25.0f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 53 % 89) - 44) / 22.0f;
  std::vector<float> before(static_cast<std::size_t>(shape.m) * shape.n), after(before.size(), -1.0f);
  MatmulLab matmul;
  matmul.multiply(MatmulImpl::Cublas, shape, a.data(), b.data(), before.data());

  GpuContext gpu;
  testing::injectGpuFault(gpu);
  // The lab's own stream sees the lost context too: its next product throws GpuFaultError.
  EXPECT_THROW(matmul.multiply(MatmulImpl::Cublas, shape, a.data(), b.data(), after.data()), GpuFaultError);
  recoverOrNote();
  if (!gRefusal.empty()) GTEST_SKIP() << gRefusal;

  matmul.multiply(MatmulImpl::Cublas, shape, a.data(), b.data(), after.data());  // new stream, new handle
  EXPECT_EQ(after, before);
  std::vector<float> tiled(before.size());
  matmul.multiply(MatmulImpl::GpuTiled, shape, a.data(), b.data(), tiled.data());
  for (std::size_t i = 0; i < tiled.size(); ++i) EXPECT_NEAR(tiled[i], before[i], 1e-4f) << i;
}

TEST(GpuFaultRecovery, AFaultingCustomKernelIsStickyAndTheLabRunsAgain) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  CustomKernelLab custom;
  RawKernelRequest wild;
  wild.source =
      "extern \"C\" __global__ void wild(float* y, long long n) {\n"
      "  float* p = (float*)0x10;\n"
      "  p[threadIdx.x * 1024] = y[0];\n"
      "}\n";
  wild.kernel = "wild";
  wild.args = {parseKernelArg("out:y"), parseKernelArg("i64:n=n")};
  wild.size = 256;
  wild.reps = 1;
  wild.warmup = 0;
  wild.useDiskCache = false;
  try {
    (void)custom.runRaw(wild);
    ADD_FAILURE() << "the wild kernel did not fault";
  } catch (const KernelFault& e) {
    EXPECT_TRUE(e.sticky()) << e.what();
  }
  ASSERT_TRUE(stickyGpuFault().has_value());
  recoverOrNote();
  if (!gRefusal.empty()) GTEST_SKIP() << gRefusal;

  RawKernelRequest saxpy;
  saxpy.source =
      "extern \"C\" __global__ void saxpy(const float* x, float* y, float a, long long n) {\n"
      "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i] + 1.0f;\n"
      "}\n";
  saxpy.kernel = "saxpy";
  saxpy.args = {parseKernelArg("in:x=random:-2:2"), parseKernelArg("out:y"), parseKernelArg("f32:a=2.5"),
                parseKernelArg("i64:n=n")};
  saxpy.size = 1000;
  saxpy.reps = 2;
  saxpy.check = "y = a*x + 1";
  saxpy.useDiskCache = false;
  const KernelRun run = custom.runRaw(saxpy);  // the same lab object: its stream is made anew
  EXPECT_TRUE(run.checked);
  EXPECT_TRUE(run.passed);
}

TEST(GpuFaultRecovery, ObjectsFromBeforeTheResetFreeNothingOfTheNewContext) {
  GPULAB_REQUIRE_RECOVERABLE_GPU();
  constexpr std::size_t kBytes = 1 << 20;
  GpuContext gpu;
  auto oldDevice = std::make_unique<DeviceBuffer>(kBytes);
  auto oldPinned = std::make_unique<PinnedBuffer>(kBytes);
  auto oldStream = std::make_unique<Stream>();
  auto oldEvent = std::make_unique<Event>();
  auto oldImage = std::make_unique<DeviceImage>(256, 256, 4, PixelType::U8);
  FftPlanCache oldPlans;
  (void)oldPlans.plan(FftPlanKey::packed(64, 64, 1, FftPrecision::Single, FftDirection::Forward), oldStream->get());

  GPULAB_FAULT_AND_RECOVER(gpu, GpuFault::IllegalAddress, cudaErrorIllegalAddress);
  EXPECT_TRUE(oldDevice->stale());
  EXPECT_TRUE(oldDevice->empty());
  EXPECT_EQ(oldDevice->size(), 0u);
  EXPECT_EQ(oldDevice->data(), nullptr);
  EXPECT_TRUE(oldPinned->empty());
  EXPECT_TRUE(oldStream->stale());
  EXPECT_TRUE(oldEvent->stale());

  // New allocations of the same sizes (the new context may hand out the old addresses), then the old
  // holders go: had they freed their handles, the new memory would be gone under us.
  DeviceBuffer fresh(kBytes);
  DeviceImage freshImage(256, 256, 4, PixelType::U8);
  Stream freshStream;
  oldDevice.reset();
  oldPinned.reset();
  oldStream.reset();
  oldEvent.reset();
  oldImage.reset();
  oldPlans.clear();
  std::vector<std::uint8_t> host(kBytes), back(kBytes, 0);
  for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<std::uint8_t>(i * 7);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(fresh.data(), host.data(), kBytes, cudaMemcpyHostToDevice, freshStream));
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(back.data(), fresh.data(), kBytes, cudaMemcpyDeviceToHost, freshStream));
  freshStream.synchronize();
  EXPECT_EQ(back, host);
  const Image photo = test::randomImage(256, 256, 4, PixelType::U8, 3);
  gpu.upload(photo, freshImage);
  EXPECT_TRUE(sameBytes(gpu.download(freshImage), photo));
}

}  // namespace
}  // namespace gpulab
