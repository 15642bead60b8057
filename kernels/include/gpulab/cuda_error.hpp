// CUDA failures as exceptions. The lowest layer of gpulab: kernels/ and engine/ both throw these.
//
//   GPULAB_CUDA_CHECK(cudaMemcpyAsync(...));   // throws gpulab::CudaError naming the call
//   kernel<<<grid, block, 0, stream>>>(...);
//   GPULAB_CHECK_LAUNCH("boxBlurRows");         // cudaGetLastError(), and a sync under GPULAB_DEBUG_SYNC
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gpulab {

/// A failed call into CUDA or one of its libraries: what was called, where, and the library's words.
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string call, std::string file, int line, int code, const std::string& message)
      : std::runtime_error(call + " failed at " + file + ":" + std::to_string(line) + ": " + message),
        call_(std::move(call)),
        file_(std::move(file)),
        line_(line),
        code_(code) {}

  const std::string& call() const noexcept { return call_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int code() const noexcept { return code_; }

 private:
  std::string call_;
  std::string file_;
  int line_;
  int code_;
};

/// The GPU lacks the memory an operation needs; the message says how much was asked and is free.
class OutOfDeviceMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
