// CUDA failures as exceptions (gpulab/core/errors.hpp): the checks kernels/ and engine/ wrap around
// every CUDA call and launch. Private to the engine: front ends see the error types only.
//
//   GPULAB_CUDA_CHECK(cudaMemcpyAsync(...));   // throws gpulab::CudaError naming the call
//   kernel<<<grid, block, 0, stream>>>(...);
//   GPULAB_CHECK_LAUNCH("boxBlurRows");         // cudaGetLastError(), and a sync under GPULAB_DEBUG_SYNC
//
// A sticky error (a kernel's illegal address, a launch failure, ...) throws GpuFaultError instead:
// the context is lost, and gpulab::recoverDevice() (core/device.hpp) resets the device.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gpulab/core/errors.hpp"

namespace gpulab {

namespace detail {

/// True for the errors that poison the CUDA context (every later call fails the same way until
/// cudaDeviceReset): faults of a running kernel and uncorrectable hardware errors.
inline bool isStickyCudaError(cudaError_t code) noexcept {
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throwCudaError(const char* call, const char* file, int line, cudaError_t code) {
  // Clear a sticky-free error so the next call does not report it again (a sticky one stays).
  cudaGetLastError();
  std::string message = std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
  if (isStickyCudaError(code))
    throw GpuFaultError(call, file, line, static_cast<int>(code), message, cudaGetErrorString(code));
  throw CudaError(call, file, line, static_cast<int>(code), message);
}

/// After a library call (cuFFT, cuBLAS) failed: when the context holds a sticky fault, throws
/// GpuFaultError naming `call`; else returns and the caller throws its library's error. Waits for
/// the device (only on this error path) so that a fault still in flight is seen.
inline void throwIfContextFaulted(const char* call, const char* file, int line) {
  cudaError_t code = cudaPeekAtLastError();
  if (!isStickyCudaError(code)) code = cudaDeviceSynchronize();
  if (isStickyCudaError(code)) throwCudaError(call, file, line, code);
  if (code != cudaSuccess) cudaGetLastError();
}

}  // namespace detail

}  // namespace gpulab

#define GPULAB_CUDA_CHECK(call)                                                                                     \
  do {                                                                                                              \
    const cudaError_t gpulab_status_ = (call);                                                                      \
    if (gpulab_status_ != cudaSuccess) ::gpulab::detail::throwCudaError(#call, __FILE__, __LINE__, gpulab_status_); \
  } while (0)

#if defined(GPULAB_DEBUG_SYNC)
#define GPULAB_CHECK_LAUNCH(name)               \
  do {                                          \
    GPULAB_CUDA_CHECK(cudaPeekAtLastError());   \
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize()); \
    (void)(name);                               \
  } while (0)
#else
#define GPULAB_CHECK_LAUNCH(name)             \
  do {                                        \
    GPULAB_CUDA_CHECK(cudaPeekAtLastError()); \
    (void)(name);                             \
  } while (0)
#endif
