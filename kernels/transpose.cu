#include <cstddef>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/plane.cuh"
#include "gpulab/kernels/transpose.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernels. A block of 32x8 threads moves one 32x32 tile, each thread four elements 8 rows apart:
// enough independent loads in flight per thread to cover memory latency.

constexpr int kTileDim = 32;
constexpr int kBlockRows = 8;

template <class T>
__global__ void __launch_bounds__(kTileDim* kBlockRows)
    transposeNaiveKernel(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  const int x = blockIdx.x * kTileDim + threadIdx.x;  // column of `in`
  const int y = blockIdx.y * kTileDim + threadIdx.y;  // row of `in`
  if (x >= cols) return;
#pragma unroll
  for (int j = 0; j < kTileDim; j += kBlockRows)
    if (y + j < rows)
      out[static_cast<std::size_t>(x) * rows + (y + j)] = in[static_cast<std::size_t>(y + j) * cols + x];
}

template <class T, int Pad>
__global__ void __launch_bounds__(kTileDim* kBlockRows)
    transposeTiledKernel(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[kTileDim][kTileDim + Pad];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;

  int x = blockIdx.x * kTileDim + tx;  // column of `in`
  int y = blockIdx.y * kTileDim + ty;  // row of `in`
#pragma unroll
  for (int j = 0; j < kTileDim; j += kBlockRows)
    if (x < cols && y + j < rows) tile[ty + j][tx] = in[static_cast<std::size_t>(y + j) * cols + x];
  __syncthreads();

  x = blockIdx.y * kTileDim + tx;  // column of `out` = row of `in`
  y = blockIdx.x * kTileDim + ty;  // row of `out` = column of `in`
#pragma unroll
  for (int j = 0; j < kTileDim; j += kBlockRows)
    if (x < rows && y + j < cols) out[static_cast<std::size_t>(y + j) * rows + x] = tile[tx][ty + j];
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launcher

template <class T>
void launchTranspose(TransposeVariant variant, const T* in, T* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(kTileDim, kBlockRows);
  const dim3 grid(divUp(cols, kTileDim), divUp(rows, kTileDim));
  switch (variant) {
    case TransposeVariant::Naive:
      transposeNaiveKernel<T><<<grid, block, 0, stream>>>(in, out, rows, cols);
      GPULAB_CHECK_LAUNCH("transposeNaive");
      break;
    case TransposeVariant::Tiled:
      transposeTiledKernel<T, 0><<<grid, block, 0, stream>>>(in, out, rows, cols);
      GPULAB_CHECK_LAUNCH("transposeTiled");
      break;
    case TransposeVariant::TiledPadded:
      transposeTiledKernel<T, 1><<<grid, block, 0, stream>>>(in, out, rows, cols);
      GPULAB_CHECK_LAUNCH("transposeTiledPadded");
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchTranspose<float>(TransposeVariant, const float*, float*, int, int, cudaStream_t);
template void launchTranspose<double>(TransposeVariant, const double*, double*, int, int, cudaStream_t);

}  // namespace gpulab::kernels
