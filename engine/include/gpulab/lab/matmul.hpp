// Lab experiment: the matrix product C = A * B, row-major, A M x K, B K x N, any sizes from 1 up,
// float and double, in five implementations:
//   cpu_blas      OpenBLAS cblas_?gemm on all cores (what NumPy uses)
//   gpu_naive     one thread per element of C
//   gpu_tiled     32x32 shared-memory tiles
//   gpu_regblock  128x128 block tiles, 8x8 elements per thread in registers, double-buffered
//   cublas        cuBLAS ?gemm with the row-major operand swap C^T = B^T A^T (no transposes), in
//                 CUBLAS_DEFAULT_MATH: float32 stays float32 (no TF32), so every GPU path computes
//                 with the same precision and the comparison is fair
//
//   gpulab::lab::MatmulLab lab;                                 // one cuBLAS handle, reused
//   lab.multiply(MatmulImpl::GpuRegBlock, {m, n, k}, a, b, c);  // blocking, host pointers
//   auto ref = gpulab::lab::matmulReference(a, b, {m, n, k});   // float64, one core, the oracle
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

enum class MatmulImpl { CpuBlas, GpuNaive, GpuTiled, GpuRegBlock, Cublas };

constexpr EnumText enumText(MatmulImpl) {
  return {"matmul implementation", "cpu_blas|gpu_naive|gpu_tiled|gpu_regblock|cublas"};
}
bool isGpu(MatmulImpl impl);

constexpr int kMaxMatmulDim = 65536;

/// The precisions of the tensor-core study (`gpulab-cli lab tensor-cores`): what cuBLAS multiplies
/// and how it accumulates.
///   f64   cublasGemmEx, float64 in, CUBLAS_COMPUTE_64F
///   f32   cublasGemmEx, float32 in, CUBLAS_COMPUTE_32F (true float32, no TF32)
///   tf32  cublasGemmEx, float32 in, CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores round the inputs to
///         TF32, 10-bit mantissa, and accumulate in float32)
///   bf16  cublasGemmEx, bfloat16 in, float32 out, CUBLAS_COMPUTE_32F (tensor cores)
///   f16   cublasGemmEx, float16 in, float32 out, CUBLAS_COMPUTE_32F (tensor cores)
enum class GemmPrecision { F64, F32, TF32, BF16, F16 };
constexpr EnumText enumText(GemmPrecision) { return {"precision", "f64|f32|tf32|bf16|f16"}; }
/// The compute type and inputs in words: "bf16 inputs, float32 accumulate (CUBLAS_COMPUTE_32F)".
std::string precisionHow(GemmPrecision precision);

/// Where the matrix-product inputs come from: seeded uniform values in [-1, 1) (the default), or in
/// [0, 1) like the course's np.random.random (products then have no cancellation).
enum class MatmulInputs { Symmetric, Unit };

struct MatmulShape {
  int m = 0;  ///< rows of A and C
  int n = 0;  ///< columns of B and C
  int k = 0;  ///< columns of A, rows of B
  double flops() const { return 2.0 * m * n * k; }
};

/// Throws std::invalid_argument unless every dimension is in 1..kMaxMatmulDim.
void validate(const MatmulShape& shape);
/// {N} -> N x N x N; {M, N, K} -> M x K times K x N. Throws std::invalid_argument otherwise.
MatmulShape matmulShape(const SizePoint& point);

/// C = A * B accumulated in double, one core, in the obvious loop order: the tests' oracle.
template <class T>
std::vector<double> matmulReference(const T* a, const T* b, const MatmulShape& shape);

/// ||c - ref||_F / ||ref||_F over `count` elements (the absolute error when ref is all zeros).
template <class T>
double relativeError(const T* c, const double* ref, std::size_t count);

/// Owns what the implementations reuse between calls: the stream, the cuBLAS handle and the host
/// and device buffers (grown, never shrunk). Not thread-safe; one per worker.
class MatmulLab : public LabBase {
 public:
  MatmulLab();  ///< GPU resources only when a CUDA device exists
  ~MatmulLab();

  /// Threads OpenBLAS uses (openblas_get_num_threads).
  static int blasThreads();

  /// C = A * B with `impl` (blocking). Host pointers, row-major, tightly packed; GPU implementations
  /// upload A and B, multiply and download C. T is float or double. Throws std::invalid_argument
  /// for a bad shape, std::runtime_error for a GPU implementation without a GPU.
  template <class T>
  void multiply(MatmulImpl impl, const MatmulShape& shape, const T* a, const T* b, T* c);

  /// Times `impl` on seeded random inputs in [-1, 1): one compute-only record (with the upload and
  /// download medians on the GPU), plus an end-to-end one when options.withCopies on the GPU.
  std::vector<Record> measure(MatmulImpl impl, DType dtype, const MatmulShape& shape, const MeasureOptions& options);

  /// The inputs measure() fills from now on (Symmetric until set).
  void setInputs(MatmulInputs inputs);
  /// The product the last measure() left on the host (m x n of the type measured): the timed
  /// downloads' result on the GPU, OpenBLAS's on the CPU. Valid until the next call.
  template <class T>
  const T* lastProduct() const;
  /// The inputs of the last measure() (A, then B).
  template <class T>
  const T* lastInput(int which) const;

  /// The tensor-core study: the same float32 inputs (seeded, in [-1, 1)) multiplied by cuBLAS in each
  /// precision, each timed on the GPU like measure() (records: experiment "matmul", variant
  /// "precision", impl "cublas", dtype the precision's name, GFLOP/s) with its relative error
  /// (Frobenius) against cuBLAS's float64 product of those inputs, which the error therefore
  /// includes the rounding of the inputs to bf16/f16/tf32; the f64 record is that reference (error 0,
  /// Record::note "reference"). GPU only (std::runtime_error without).
  std::vector<Record> measurePrecisions(const std::vector<GemmPrecision>& precisions, const MatmulShape& shape,
                                        const MeasureOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
