// Lab experiment: one matrix product C = A * B split across several GPUs (`gpulab-cli lab
// matmul-multi --gpus all`). The rows of A (and so of C) go to the GPUs in contiguous blocks as
// equal as they can be, B is copied whole to each, and each GPU multiplies its block with cuBLAS
// SGEMM/DGEMM (CUBLAS_DEFAULT_MATH: float32 stays float32, no TF32) on its own stream from its own
// thread; C is gathered by each GPU downloading its rows straight into their place in the host C.
//
//   gpulab::lab::MultiGpuMatmulReport r = gpulab::lab::runMultiGpuMatmul({0, 1}, {16384, 16384, 16384},
//                                                                         DType::F32, {.reps = 5, .warmup = 1});
//   r.speedup;  // one GPU's compute time / the split's, copies excluded
//
// Timing: each GPU's work is timed with CUDA events on its own stream (events of two devices cannot
// be compared, so a repetition's time is that of the slowest GPU; all threads start together from a
// latch). Compute only: the GEMMs alone, A and B already on the GPUs. With copies: upload of A's
// rows and B, the GEMM and the download of C's rows, per GPU, all GPUs at once; the uploads' rate per
// GPU while every GPU uploads is what the bus allowed. Median of `reps` after `warmup` runs.
// Host memory is pinned. The devices may repeat ({0, 0}: two workers on one GPU), which runs the
// splitting and gathering on a machine with one GPU.
#pragma once

#include <string>
#include <vector>

#include "gpulab/lab/lab.hpp"
#include "gpulab/lab/matmul.hpp"

namespace gpulab::lab {

/// Rows of an m-row matrix for `parts` workers: contiguous blocks whose sizes differ by at most
/// one, the larger ones first; a worker gets 0 rows when m < parts. Throws std::invalid_argument
/// for m < 1 or parts < 1.
std::vector<int> splitRows(int m, int parts);

/// C = A * B (row-major, host pointers, blocking) with the rows of A split across `devices` as
/// above, cuBLAS on each. T is float or double. Throws std::invalid_argument for a bad shape, an
/// empty device list or a device that does not exist; CudaError / OutOfDeviceMemory from a GPU.
template <class T>
void multiplyAcrossGpus(const std::vector<int>& devices, const MatmulShape& shape, const T* a, const T* b, T* c);

/// One configuration (a device list) of the experiment.
struct MultiGpuMatmulRun {
  std::vector<int> devices;
  std::string label;      ///< "GPU 0 (NVIDIA H100 80GB HBM3), GPU 1 (...)"
  std::vector<int> rows;  ///< rows of A per device
  int reps = 0;
  double computeMs = 0;  ///< median of the slowest GPU's GEMM time, copies excluded
  double computeMinMs = 0;
  double computeMaxMs = 0;
  double hostComputeMs = 0;  ///< median host wall time from the start latch to the last GPU done (launch skew in)
  double withCopiesMs = 0;   ///< median of the slowest GPU's upload + GEMM + download
  double withCopiesMinMs = 0;
  double withCopiesMaxMs = 0;
  double uploadMs = 0;             ///< median of the slowest GPU's upload (A's rows and B)
  double downloadMs = 0;           ///< median of the slowest GPU's download (C's rows)
  std::vector<double> uploadGbps;  ///< per device: its upload rate while all the GPUs uploaded at once (median)
  double flops = 0;
  double tflops() const { return computeMs > 0 ? flops / (computeMs * 1e9) : 0; }
  double tflopsWithCopies() const { return withCopiesMs > 0 ? flops / (withCopiesMs * 1e9) : 0; }
};

struct MultiGpuMatmulReport {
  MatmulShape shape;
  DType dtype = DType::F32;
  MultiGpuMatmulRun one;         ///< the first device alone
  MultiGpuMatmulRun split;       ///< every device
  double speedup = 0;            ///< one.computeMs / split.computeMs
  double speedupWithCopies = 0;  ///< one.withCopiesMs / split.withCopiesMs
  double efficiency = 0;         ///< speedup / number of devices
  double efficiencyWithCopies = 0;
  // The split's C against the one-GPU C, element by element: |c - c1| <= atol + rtol * |c1|.
  double rtol = 0;
  double atol = 0;
  double maxAbsDiff = 0;
  std::size_t mismatches = 0;  ///< elements outside the tolerance
  std::size_t differing = 0;   ///< elements not bit-identical
  bool allclose = false;
  /// "allclose(split, one GPU, rtol=1e-4, atol=1e-4*sqrt(K)=0.0128)".
  std::string toleranceText() const;
  /// Lab records (experiment "matmul", variant "multi_gpu", impl "cublas"), compute-only (with the
  /// copy medians) and with copies, for each configuration; device names every GPU it ran on.
  std::vector<Record> records() const;
};

/// Runs the experiment (blocking): the first device alone, then all of them, on the same seeded
/// inputs in [-1, 1), then the check. Throws std::invalid_argument for a bad shape or device list,
/// std::runtime_error without a GPU or without the host memory (4 matrices, pinned).
MultiGpuMatmulReport runMultiGpuMatmul(const std::vector<int>& devices, const MatmulShape& shape, DType dtype,
                                       const MeasureOptions& options);

}  // namespace gpulab::lab
