// The Numba lab's matrix-product table (course text 004): for each N and each of float32 and
// float64, the naive kernel, the shared-memory tiled kernel, cuBLAS and the CPU (OpenBLAS, the
// library numpy.dot calls), each timed with the copies excluded and included, its speedup against
// the CPU, the float64/float32 time ratio, its relative error against the cuBLAS product of the
// same precision and numpy's allclose verdict on the same comparison.
//
//   gpulab::lab::MatmulTableOptions options;            // sizes 5120, 10240, 20480; f32 and f64
//   auto rows = gpulab::lab::runMatmulTable(options);   // blocking; each row to the sink as it comes
//
// Inputs are seeded uniform values in [0, 1), as np.random.random gives the course. GPU times are
// medians of CUDA-event timings after warm-up; "with copies" is upload of A and B + compute +
// download of C, each part timed apart on the stream (pinned host memory). The CPU is timed once per
// point when a run is long (the note says how many runs) and is skipped where one run would take
// longer than options.cpuLimitMs, estimated from the rate of the largest CPU run measured before
// in the same precision (or a 1024 calibration run): the row then carries the estimate and says so.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

/// numpy.allclose's defaults.
constexpr double kAllcloseRtol = 1e-5;
constexpr double kAllcloseAtol = 1e-8;

struct MatmulTableOptions {
  std::vector<int> sizes{5120, 10240, 20480};
  std::vector<DType> dtypes{DType::F32, DType::F64};
  int reps = 3;               ///< GPU timed runs (median); the CPU takes fewer on long points
  int warmup = 1;             ///< GPU untimed runs first
  double cpuLimitMs = 60000;  ///< skip the CPU where one run is estimated to take longer
  bool useGpu = true;         ///< false: the CPU alone (also what happens without a device)
};

struct MatmulTableRow {
  int n = 0;
  DType dtype = DType::F32;
  std::string impl;    ///< "gpu_naive", "gpu_tiled", "cublas", "cpu_blas"
  std::string device;  ///< "GPU 0 (NVIDIA H100 80GB HBM3)", "CPU (16 threads)"
  bool gpu = false;
  bool measured = false;    ///< false: the CPU was skipped (note says why; estimatedMs holds the estimate)
  double computeMs = 0;     ///< median, copies excluded (the CPU: its run)
  double uploadMs = 0;      ///< GPU: A and B host->device
  double downloadMs = 0;    ///< GPU: C device->host
  double withCopiesMs = 0;  ///< GPU: upload + compute + download; the CPU: computeMs
  double estimatedMs = 0;   ///< CPU: one run estimated from a measured rate (also set when measured)
  double gflops = 0;        ///< 2 N^3 / computeMs
  int reps = 0;
  std::string note;

  // Filled by compareProducts / finishMatmulTable:
  double speedupCompute = 0;      ///< CPU time / computeMs; 0 when there is no CPU time
  double speedupWithCopies = 0;   ///< CPU time / withCopiesMs
  bool speedupEstimated = false;  ///< the CPU time in the speedups is an estimate (the CPU was skipped)
  double f64OverF32 = 0;          ///< float64 rows: withCopiesMs / the same impl's float32 withCopiesMs
  double relativeError = -1;      ///< ||C - Cref||_F / ||Cref||_F against cuBLAS of the same precision; -1: none
  double maxAbsDifference = -1;
  int allclose = -1;         ///< numpy.allclose(C, Cref): 1 true, 0 false, -1 not compared
  bool isReference = false;  ///< the row the others are compared with
};

/// How two products compare: the Frobenius relative error, the largest |c - ref| and numpy.allclose
/// (|c - ref| <= atol + rtol |ref| everywhere, NaN never close).
struct ProductComparison {
  double relativeError = 0;
  double maxAbsDifference = 0;
  bool allclose = false;
};
template <class T>
ProductComparison compareProducts(const T* c, const T* ref, std::size_t count, double rtol = kAllcloseRtol,
                                  double atol = kAllcloseAtol);

/// One run of a 2 n^3 product at the rate of a measured one: measuredMs * (n / measuredN)^3.
double estimateCubicMs(int measuredN, double measuredMs, int n);

/// The derived columns: speedups against the CPU row of the same n and type (its estimate when it
/// was skipped, marked speedupEstimated), and the float64/float32 ratio of each implementation.
void finishMatmulTable(std::vector<MatmulTableRow>& rows);

/// Throws std::invalid_argument for sizes outside 1..kMaxMatmulDim, no sizes or types, bad reps.
void validate(const MatmulTableOptions& options);

using MatmulTableSink = std::function<void(const MatmulTableRow&)>;

/// Runs the table (blocking): per type, per size (ascending as given), cuBLAS first (the
/// reference), then the naive and tiled kernels, then the CPU. Rows go to `sink` as measured (their
/// derived columns are filled in the returned list). Cancellation through `control` between rows.
std::vector<MatmulTableRow> runMatmulTable(const MatmulTableOptions& options, const CpuControl& control = {},
                                           const MatmulTableSink& sink = {});

}  // namespace gpulab::lab
