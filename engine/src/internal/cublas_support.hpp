// Engine-private: cuBLAS behind RAII for the lab's matrix products (matmul.cpp, matmul_multi.cpp).
// Failures become CudaError naming the call and cuBLAS's own words.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <string>
#include <utility>

#include "gpulab/core/device.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/lab/matmul.hpp"

namespace gpulab::lab::detail {

[[noreturn]] inline void throwCublasError(const char* call, const char* file, int line, cublasStatus_t status) {
  gpulab::detail::throwIfContextFaulted(call, file, line);  // a sticky fault seen through cuBLAS is a GpuFaultError
  throw CudaError(call, file, line, static_cast<int>(status),
                  std::string(cublasGetStatusName(status)) + ": " + cublasGetStatusString(status));
}

#define GPULAB_CUBLAS_CHECK(call)                                                                \
  do {                                                                                           \
    const cublasStatus_t gpulab_cublas_status_ = (call);                                         \
    if (gpulab_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::gpulab::lab::detail::throwCublasError(#call, __FILE__, __LINE__, gpulab_cublas_status_); \
  } while (0)

/// One cuBLAS handle bound to one stream. Math mode CUBLAS_DEFAULT_MATH: float32 products are
/// computed in float32 (no TF32, no BF16x9 emulation) and float64 in float64, like our kernels.
class CublasHandle {
 public:
  CublasHandle() = default;
  explicit CublasHandle(cudaStream_t stream) {
    GPULAB_CUBLAS_CHECK(cublasCreate(&handle_));
    try {
      GPULAB_CUBLAS_CHECK(cublasSetStream(handle_, stream));
      GPULAB_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    } catch (...) {
      cublasDestroy(handle_);
      throw;
    }
  }
  ~CublasHandle() { destroy(); }
  CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)), epoch_(other.epoch_) {}
  CublasHandle& operator=(CublasHandle&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, nullptr);
      epoch_ = other.epoch_;
    }
    return *this;
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasHandle_t get() const noexcept { return handle_; }
  /// Made before a device reset (recoverDevice): its stream and workspace are gone; make a new one.
  bool stale() const noexcept { return handle_ != nullptr && epoch_ != deviceEpoch(); }

 private:
  void destroy() noexcept {
    // Errors while the runtime unloads are fine here; a handle from before a device reset is left
    // alone (its GPU memory went with the old context, and freeing it could free the new one's).
    if (handle_ != nullptr && epoch_ == deviceEpoch()) cublasDestroy(handle_);
    handle_ = nullptr;
  }

  cublasHandle_t handle_ = nullptr;
  std::uint64_t epoch_ = deviceEpoch();
};

// Row-major C = A B is column-major C^T = B^T A^T: the row-major buffers already are the
// column-major B^T (n x k, ld n) and A^T (k x m, ld k), so swap the operands, no transposes.
inline void cublasGemm(cublasHandle_t handle, const float* a, const float* b, float* c, const MatmulShape& s) {
  const float one = 1.0f;
  const float zero = 0.0f;
  GPULAB_CUBLAS_CHECK(
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b, s.n, a, s.k, &zero, c, s.n));
}
inline void cublasGemm(cublasHandle_t handle, const double* a, const double* b, double* c, const MatmulShape& s) {
  const double one = 1.0;
  const double zero = 0.0;
  GPULAB_CUBLAS_CHECK(
      cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b, s.n, a, s.k, &zero, c, s.n));
}

}  // namespace gpulab::lab::detail
