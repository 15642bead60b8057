// TEST ONLY: faults a GPU on purpose, so tests can prove that gpulab recovers from a sticky CUDA
// error (GpuFaultError, recoverDevice in core/device.hpp). Not part of gpulab's user-facing API: no
// front end offers it, and nothing but the tests (and the GUI's test hook) calls it.
//
//   gpulab::testing::injectGpuFault(gpu);                  // enqueued on gpu.stream()
//   EXPECT_THROW(gpu.download(image), gpulab::GpuFaultError);  // the next wait sees it
//   gpulab::recoverDevice();                              // reset; the context renews itself
#pragma once

#include <cstdint>
#include <string_view>

#include "gpulab/core/device_image.hpp"

namespace gpulab::testing {

enum class GpuFault : std::uint8_t {
  IllegalAddress,     ///< a write to an unmapped address: cudaErrorIllegalAddress
  MisalignedAddress,  ///< an int written one byte into an allocation: cudaErrorMisalignedAddress
  Trap,               ///< a trap instruction: cudaErrorLaunchFailure
};

/// "illegal-address", "misaligned-address", "trap".
std::string_view toString(GpuFault fault) noexcept;

/// Enqueues a one-thread kernel on gpu.stream() that faults as `fault` says. Returns at once; the
/// next call that waits for the stream (a download, a synchronize) throws GpuFaultError, and every
/// CUDA call after it fails until recoverDevice().
void injectGpuFault(GpuContext& gpu, GpuFault fault = GpuFault::IllegalAddress);

/// TEST ONLY, for tests that run gpulab's programs as child processes (the restart after a fault,
/// core/relaunch.hpp): GPULAB_TEST_INJECT_GPU_FAULT=once faults the first download of the process
/// (GpuContext::download calls this) when it is not a restart after a fault (GPULAB_FAULT_RESTARTS
/// unset or 0), so the restarted program runs clean; =always faults the first download of every
/// process image, restarts included (to test the limit on restarts). Unset (as for every user), or
/// any other value: nothing. True when it injected a fault.
inline constexpr const char* kInjectGpuFaultVariable = "GPULAB_TEST_INJECT_GPU_FAULT";
bool injectGpuFaultFromEnvironment(GpuContext& gpu);

}  // namespace gpulab::testing
