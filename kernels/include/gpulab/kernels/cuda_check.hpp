// CUDA failures as exceptions (gpulab/core/errors.hpp): the checks kernels/ and engine/ wrap around
// every CUDA call and launch. Private to the engine: front ends see the error types only.
//
//   GPULAB_CUDA_CHECK(cudaMemcpyAsync(...));   // throws gpulab::CudaError naming the call
//   kernel<<<grid, block, 0, stream>>>(...);
//   GPULAB_CHECK_LAUNCH("boxBlurRows");         // cudaGetLastError(), and a sync under GPULAB_DEBUG_SYNC
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gpulab/core/errors.hpp"

namespace gpulab {

namespace detail {
[[noreturn]] inline void throwCudaError(const char* call, const char* file, int line, cudaError_t code) {
  // Clear a sticky-free error so the next call does not report it again.
  cudaGetLastError();
  std::string message = std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
  throw CudaError(call, file, line, static_cast<int>(code), message);
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
