#include <cstddef>
#include <cstdint>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/matmul.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers: four consecutive elements moved as 16-byte vectors (one float4, two double2).

template <class T>
struct Vec4Traits;
template <>
struct Vec4Traits<float> {
  __device__ __forceinline__ static void load(const float* p, float* v) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  }
  __device__ __forceinline__ static void store(float* p, const float* v) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  }
};
template <>
struct Vec4Traits<double> {
  __device__ __forceinline__ static void load(const double* p, double* v) {
    const double2 lo = reinterpret_cast<const double2*>(p)[0];
    const double2 hi = reinterpret_cast<const double2*>(p)[1];
    v[0] = lo.x, v[1] = lo.y, v[2] = hi.x, v[3] = hi.y;
  }
  __device__ __forceinline__ static void store(double* p, const double* v) {
    reinterpret_cast<double2*>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2*>(p)[1] = make_double2(v[2], v[3]);
  }
};

/// Reads `valid` (clamped to 0..4) elements from `src` and zero-fills the rest; one vector load
/// when all four are there and `vectorOk` says the address is 16-byte aligned.
template <class T>
__device__ __forceinline__ void loadQuad(const T* __restrict__ base, std::size_t offset, int valid, bool vectorOk,
                                         T* v) {
  if (valid >= 4 && vectorOk) {
    Vec4Traits<T>::load(base + offset, v);
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = i < valid ? base[offset + i] : T(0);
}

__device__ __forceinline__ int clampValid(int remaining) { return remaining < 0 ? 0 : (remaining > 4 ? 4 : remaining); }

// ---------------------------------------------------------------------------------------------
// Naive: one thread per output, every operand from global memory (the L1/L2 caches do what they can).

constexpr int kNaiveBlockX = 32;
constexpr int kNaiveBlockY = 8;

template <class T>
__global__ void __launch_bounds__(kNaiveBlockX* kNaiveBlockY)
    matmulNaiveKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k) {
  const int col = blockIdx.x * kNaiveBlockX + threadIdx.x;
  const int row = blockIdx.y * kNaiveBlockY + threadIdx.y;
  if (row >= m || col >= n) return;
  const T* aRow = a + static_cast<std::size_t>(row) * k;
  T acc = 0;
  for (int i = 0; i < k; ++i) acc += aRow[i] * b[static_cast<std::size_t>(i) * n + col];
  c[static_cast<std::size_t>(row) * n + col] = acc;
}

// ---------------------------------------------------------------------------------------------
// Tiled: 32x32 tiles of A and B in shared memory; each loaded element is used 32 times.
// as[ty][i] is a broadcast and bs[i][tx] walks consecutive banks, so no padding is needed.

constexpr int kTile = 32;

template <class T>
__global__ void __launch_bounds__(kTile* kTile)
    matmulTiledKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k) {
  __shared__ T as[kTile][kTile];
  __shared__ T bs[kTile][kTile];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  T acc = 0;
  for (int t = 0; t < k; t += kTile) {
    as[ty][tx] = (row < m && t + tx < k) ? a[static_cast<std::size_t>(row) * k + (t + tx)] : T(0);
    bs[ty][tx] = (t + ty < k && col < n) ? b[static_cast<std::size_t>(t + ty) * n + col] : T(0);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc += as[ty][i] * bs[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = acc;
}

// ---------------------------------------------------------------------------------------------
// Register-blocked. A block of 256 threads owns a 128x128 tile of C; thread (tx, ty) of a 16x16
// grid owns the 8x8 elements at rows {4ty..4ty+3, 64+4ty..64+4ty+3} x columns {4tx.., 64+4tx..}.
// That split (rather than 8 adjacent rows and columns) makes each 16-byte shared-memory read of a
// warp either a broadcast (A) or 256 contiguous bytes (B): no bank conflicts in the inner loop.
// A's slice is stored transposed (k-major) so a thread's 4 rows are one vector read; its rows are
// padded by 4 so the transposing stores of the two k-halves land in different banks.
// Slices of depth 8 are double-buffered: the next slice is fetched from global memory into
// registers while the current one is multiplied, then written to the other buffer; one barrier
// per slice suffices because a buffer is rewritten only after every thread has passed the barrier
// that ended its last use.

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 8;
constexpr int kPadA = 4;
constexpr int kRegThreads = 256;

template <class T>
__global__ void __launch_bounds__(kRegThreads, sizeof(T) == 4 ? 2 : 1)
    matmulRegBlockKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k,
                         bool aVector, bool bVector, bool cVector) {
  __shared__ __align__(16) T as[2][kBK][kBM + kPadA];
  __shared__ __align__(16) T bs[2][kBK][kBN];

  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int blockRow = blockIdx.y * kBM;
  const int blockCol = blockIdx.x * kBN;

  // Which four elements of each slice this thread fetches.
  const int aRow = tid / 2;         // 0..127, row of A within the tile
  const int aCol = (tid % 2) * 4;   // 0 or 4, k offset within the slice
  const int bRow = tid / 32;        // 0..7, k offset within the slice
  const int bCol = (tid % 32) * 4;  // 0..124, column of B within the tile
  const bool aRowValid = blockRow + aRow < m;
  const int bColsLeft = n - (blockCol + bCol);
  const std::size_t aRowOffset = static_cast<std::size_t>(aRowValid ? blockRow + aRow : 0) * k;

  T aFetch[4];
  T bFetch[4];
  auto fetch = [&](int k0) {
    const int aValid = aRowValid ? clampValid(k - (k0 + aCol)) : 0;
    loadQuad(a, aValid > 0 ? aRowOffset + (k0 + aCol) : 0, aValid, aVector, aFetch);
    const bool bRowValid = k0 + bRow < k;
    const int bValid = bRowValid ? clampValid(bColsLeft) : 0;
    loadQuad(b, bValid > 0 ? static_cast<std::size_t>(k0 + bRow) * n + (blockCol + bCol) : 0, bValid, bVector, bFetch);
  };
  auto stash = [&](int buffer) {
#pragma unroll
    for (int i = 0; i < 4; ++i) as[buffer][aCol + i][aRow] = aFetch[i];
    Vec4Traits<T>::store(&bs[buffer][bRow][bCol], bFetch);
  };

  T acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0;

  const int slices = divUp(k, kBK);
  fetch(0);
  stash(0);
  __syncthreads();

  for (int s = 0; s < slices; ++s) {
    const int current = s & 1;
    const bool more = s + 1 < slices;
    if (more) fetch((s + 1) * kBK);

#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      T ra[8];
      T rb[8];
      Vec4Traits<T>::load(&as[current][kk][4 * ty], ra);
      Vec4Traits<T>::load(&as[current][kk][64 + 4 * ty], ra + 4);
      Vec4Traits<T>::load(&bs[current][kk][4 * tx], rb);
      Vec4Traits<T>::load(&bs[current][kk][64 + 4 * tx], rb + 4);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ra[i] * rb[j];
    }

    if (more) stash(current ^ 1);
    __syncthreads();
  }

  // Epilogue: four 4x4 quadrants, each row of four as one vector store when it is whole.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = blockRow + (i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4));
    if (row >= m) continue;
    T* cRow = c + static_cast<std::size_t>(row) * n;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = blockCol + half * 64 + 4 * tx;
      // The whole-vector test compares the unclamped count: CUDA 13.0's ptxas for sm_90 folds
      // `clamp(n - col, 0, 4) == 4` into one VIMNMX.RELU whose predicate also held when n - col
      // was 0..3, so the vector store ran past the last column (found by compute-sanitizer).
      const int remaining = n - col;
      T v[4] = {acc[i][4 * half], acc[i][4 * half + 1], acc[i][4 * half + 2], acc[i][4 * half + 3]};
      if (cVector && remaining >= 4) {
        Vec4Traits<T>::store(cRow + col, v);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (j < remaining) cRow[col + j] = v[j];
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

template <class T>
void launchMatmulNaive(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const dim3 block(kNaiveBlockX, kNaiveBlockY);
  const dim3 grid(divUp(n, kNaiveBlockX), divUp(m, kNaiveBlockY));
  matmulNaiveKernel<T><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
  GPULAB_CHECK_LAUNCH("matmulNaive");
}

template <class T>
void launchMatmulTiled(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const dim3 block(kTile, kTile);
  const dim3 grid(divUp(n, kTile), divUp(m, kTile));
  matmulTiledKernel<T><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
  GPULAB_CHECK_LAUNCH("matmulTiled");
}

template <class T>
void launchMatmulRegBlock(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  // A vector of four starts at a multiple of 4 within its row; it is 16-byte aligned when every
  // row start is, i.e. when the row length is a multiple of 4 and the base pointer is aligned.
  const bool aVector = k % 4 == 0 && aligned16(a);
  const bool bVector = n % 4 == 0 && aligned16(b);
  const bool cVector = n % 4 == 0 && aligned16(c);
  const dim3 grid(divUp(n, kBN), divUp(m, kBM));
  matmulRegBlockKernel<T><<<grid, kRegThreads, 0, stream>>>(a, b, c, m, n, k, aVector, bVector, cVector);
  GPULAB_CHECK_LAUNCH("matmulRegBlock");
}

// ---------------------------------------------------------------------------------------------
// Instantiations

#define GPULAB_INSTANTIATE(T)                                                              \
  template void launchMatmulNaive<T>(const T*, const T*, T*, int, int, int, cudaStream_t); \
  template void launchMatmulTiled<T>(const T*, const T*, T*, int, int, int, cudaStream_t); \
  template void launchMatmulRegBlock<T>(const T*, const T*, T*, int, int, int, cudaStream_t);
GPULAB_INSTANTIATE(float)
GPULAB_INSTANTIATE(double)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
