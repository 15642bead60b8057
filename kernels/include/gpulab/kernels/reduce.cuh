// Reduction kernels of the GPU lab: n elements of float or double in device memory to one double.
// Two launches, no atomics: every block reduces a grid-stride share (warp shuffles, then across
// warps through shared memory) into one partial; one block then reduces the partials in a fixed
// order. The result is therefore the same bit for bit on every run of the same n and grid.
// Sums accumulate in double whatever T is. Asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels {

enum class ReduceKind {
  Sum,                  ///< sum of x
  SquaredDeviationSum,  ///< sum of (x - center)^2, center read from device memory
  Min,
  Max
};

/// Size in doubles that `partials` must have.
constexpr int kReduceMaxPartials = 2048;

/// result[0] = scale * reduction (scale applies to the sums; use 1 for Min and Max), then its square
/// root when `takeSqrt`. `center` (device, one double) is read by SquaredDeviationSum only and may be
/// `result` of an earlier reduction on the same stream (mean then variance, without a host round trip).
/// maxBlocks limits the first launch's grid (0: enough blocks to fill the device); tests set it low
/// to force many grid-stride rounds. Throws std::invalid_argument when n == 0.
template <class T>
void launchReduce(const T* x, std::size_t n, ReduceKind kind, const double* center, double scale, bool takeSqrt,
                  double* partials, double* result, cudaStream_t stream, int maxBlocks = 0);

}  // namespace gpulab::kernels
