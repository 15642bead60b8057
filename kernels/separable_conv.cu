#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/separable_conv.cuh"
#include "vector_loads.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Plan. A block of kThreads threads computes a tile of TW x TH output pixels (TW * C samples a
// row) of one plane, in four phases separated by barriers:
//   1. load: input rows [y0 - ay, y0 - ay + TH + kh - 1), pixels [x0 - ax, x0 - ax + TW + kw - 1),
//      border-mapped, into the shared tile as float (consecutive threads on consecutive samples);
//   2. rows (per term): every tile row, TW outputs along x, kRowOutputs per thread: consecutive
//      threads take consecutive tile rows (an odd row stride makes that free of bank conflicts),
//      each streams its window once and feeds each sample to every output that uses it;
//   3. columns (per term): TH outputs down each of the TW * C sample columns, M per thread,
//      consecutive threads on consecutive columns, summed into registers across the terms;
//   4. store: rounded (u8) and written once, consecutive threads on consecutive samples.
// The loops run over KB taps (8 .. 128, a compile-time bucket), so they unroll and every weight is
// an immediate operand; the taps beyond kw (kh) have weight 0, and the tile columns and rows only
// they reach are zero. A tile that holds an inf or NaN (0 * inf = NaN) takes exact loops instead
// (rowPassExact, colPassExact: kw and kh taps, the same sums in the same order), as found while
// loading. The phases are plain functions of the thread index, for host and device, so
// runSeparableConvTilesOnHost can run them on a CPU.

constexpr int kThreads = 256;
constexpr int kTileHeight = 64;
constexpr int kRowOutputs = 8;

template <int KB>
struct Weights {
  float row[kSeparableMaxRank][KB];
  float col[kSeparableMaxRank][KB];
};

/// What a launch passes besides the planes and the weights.
struct Launch {
  int kw = 1;
  int kh = 1;
  int ax = 0;
  int ay = 0;
  int rank = 1;
  BorderMode border = BorderMode::Reflect101;
  float fill = 0.f;
  int inHeight = 0;  // of one plane in the stacks
  int outHeight = 0;
  bool vectorLoads = false;  // every input row starts 4 * sizeof(T)-byte aligned
};

/// The launch's by-value parameter: one struct (the host stub copies it whole).
template <int KB>
struct Params {
  Launch g;
  Weights<KB> w;
};

template <int C, int KB>
struct Layout {
  static constexpr int TW = C == 1 ? 64 : 16;  // pixels
  static constexpr int TH = kTileHeight;
  static constexpr int rows = TH + KB - 1;  // rows of both shared tiles
  static constexpr int inWidth = (TW + KB - 1) * C;
  static constexpr int inStride = inWidth | 1;  // odd: threads on consecutive rows hit distinct banks
  static constexpr int outWidth = TW * C;
  static constexpr int tmpStride = outWidth | 1;
  static constexpr int M = KB >= 64 ? 8 : 16;  // column outputs per thread
  static constexpr int colItems = outWidth * (TH / M);
  static constexpr int colItemsPerThread = (colItems + kThreads - 1) / kThreads;
  static constexpr std::size_t bytes =
      sizeof(float) * (static_cast<std::size_t>(rows) * inStride + static_cast<std::size_t>(rows) * tmpStride);
  static_assert(TW % kRowOutputs == 0 && TH % M == 0);
};

template <class T>
GPULAB_HD float loadSample(const T* p) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(__ldg(p));
#else
  return static_cast<float>(*p);
#endif
}

/// Rounds to nearest (ties to even) and saturates for u8, as launchConv2D; floats pass through.
template <class T>
GPULAB_HD T toSample(float v) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
#if defined(__CUDA_ARCH__)
    const int r = __float2int_rn(v);
#else
    const float n = std::nearbyint(v);
    const int r = n < 0.f ? -1 : n > 255.f ? 256 : static_cast<int>(n);
#endif
    return static_cast<std::uint8_t>(r < 0 ? 0 : r > 255 ? 255 : r);
  } else {
    return static_cast<T>(v);
  }
}

GPULAB_HD bool isNonFinite(float v) {
#if defined(__CUDA_ARCH__)
  return (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u;
#else
  return !std::isfinite(v);
#endif
}

template <class P>
GPULAB_HD P planeAt(const P& stack, int height, int index) {
  return P{stack.row(index * height), stack.width, height, stack.pitch};
}

// ---------------------------------------------------------------------------------------------
// Phases

/// A tile whose rows and columns all lie inside the plane: a warp a row, lane l taking samples
/// l, l + 32, ... of it (coalesced loads of any alignment, and stores of 32 consecutive words, free
/// of bank conflicts), kRowsInFlight rows a warp at a time; no border mapping and no division. Every
/// sample goes through a probe, fmaf(v, 0, probe), that an inf or NaN turns into NaN.
template <class T, int C, int KB>
GPULAB_HD bool loadInside(const Plane<const T>& in, float* tile, int ys, int s0, int rows, int cols, int tid) {
  using L = Layout<C, KB>;
  constexpr int kWarps = kThreads / 32;
  constexpr int kSlots = (L::inWidth + 31) / 32;  // samples a lane per row, cols <= L::inWidth
  constexpr int kRowsInFlight = 4;
  const int warp = tid / 32;
  const int lane = tid % 32;
  // Loads past the row's last sample or the tile's last row read that sample or row again (no
  // predicate on the loads; their values are not stored).
  int clamped[kSlots];
  GPULAB_UNROLL
  for (int j = 0; j < kSlots; ++j) clamped[j] = lane + 32 * j < cols ? lane + 32 * j : cols - 1;
  float probe = 0.f;
  for (int r0 = warp; r0 < rows; r0 += kRowsInFlight * kWarps) {
    float v[kRowsInFlight][kSlots];
    GPULAB_UNROLL
    for (int u = 0; u < kRowsInFlight; ++u) {
      const int r = r0 + u * kWarps;
      const T* src = in.row(ys + (r < rows ? r : rows - 1)) + s0;
      GPULAB_UNROLL
      for (int j = 0; j < kSlots; ++j) v[u][j] = loadSample(src + clamped[j]);
    }
    GPULAB_UNROLL
    for (int u = 0; u < kRowsInFlight; ++u) {
      const int r = r0 + u * kWarps;
      GPULAB_UNROLL
      for (int j = 0; j < kSlots; ++j) {
        const int c = lane + 32 * j;
        if (r >= rows || c >= cols) continue;
        tile[r * L::inStride + c] = v[u][j];
        if constexpr (std::is_same_v<T, float>) probe = fmaf(v[u][j], 0.f, probe);
      }
    }
  }
  return probe != probe;
}

/// Any other tile: in chunks of four samples from a multiple of four, kBatch chunks in flight per
/// thread; each chunk's row through borderIndex, and its samples one by one where the chunk is not
/// wholly inside an aligned row.
template <class T, int C, int KB>
GPULAB_HD bool loadAcrossBorder(const Launch& g, const Plane<const T>& in, float* tile, int xs, int ys, int rows,
                                int cols, int tid) {
  using L = Layout<C, KB>;
  bool nonFinite = false;
  const int s0 = xs * C;   // row sample of tile column 0
  const int sa = s0 & ~3;  // rounded down to a chunk (also when negative)
  const int chunks = (s0 + cols - sa + 3) / 4;
  const int rowSamples = in.width * C;
  const int total = rows * chunks;
  constexpr int kBatch = 4;
  for (int first = tid; first < total; first += kBatch * kThreads) {
    float v[kBatch][4];
    int line[kBatch], sc[kBatch];
    GPULAB_UNROLL
    for (int u = 0; u < kBatch; ++u) {
      const int i = first + u * kThreads;
      line[u] = -1;
      if (i >= total) continue;
      const int r = i / chunks;
      sc[u] = sa + 4 * (i - r * chunks);
      line[u] = r;
      const int y = borderIndex(ys + r, in.height, g.border);
      if (g.vectorLoads && y >= 0 && sc[u] >= 0 && sc[u] + 4 <= rowSamples) {
        loadFour(in.row(y) + sc[u], v[u]);
      } else {
        GPULAB_UNROLL
        for (int e = 0; e < 4; ++e) {
          const int local = sc[u] + e - s0;  // tile column, >= 0 for every kept sample
          v[u][e] = g.fill;
          if (local < 0 || local >= cols || y < 0) continue;
          const int px = local / C;
          const int x = borderIndex(xs + px, in.width, g.border);
          if (x >= 0) v[u][e] = loadSample(in.row(y) + x * C + (local - px * C));
        }
      }
    }
    GPULAB_UNROLL
    for (int u = 0; u < kBatch; ++u) {
      if (line[u] < 0) continue;
      float* dst = tile + line[u] * L::inStride;
      GPULAB_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int local = sc[u] + e - s0;
        if (local >= 0 && local < cols) {
          dst[local] = v[u][e];
          if constexpr (std::is_same_v<T, float>) nonFinite = nonFinite || isNonFinite(v[u][e]);
        }
      }
    }
  }
  return nonFinite;
}

/// Zero: tile columns [cols, inWidth) of every row, and row-pass rows [rows, L::rows).
template <int C, int KB>
GPULAB_HD void zeroPadding(float* tile, float* tmp, int rows, int cols, int tid) {
  using L = Layout<C, KB>;
  const int extra = L::inWidth - cols;
  for (int i = tid; i < rows * extra; i += kThreads) {
    const int r = i / extra;
    tile[r * L::inStride + cols + (i - r * extra)] = 0.f;
  }
  const int zeros = (L::rows - rows) * L::outWidth;
  for (int i = tid; i < zeros; i += kThreads) {
    const int rr = i / L::outWidth;
    tmp[(rows + rr) * L::tmpStride + (i - rr * L::outWidth)] = 0.f;
  }
}

/// Phase 1 for thread `tid`: the input tile (zero in the columns only the padded taps reach) and
/// the zero rows of the row-pass tile that only the padded column taps reach. A tile inside the
/// plane loads by loadInside, one that reaches past an edge by loadAcrossBorder.
template <class T, int C, int KB>
GPULAB_HD bool loadTile(const Launch& g, const Plane<const T>& in, float* tile, float* tmp, int x0, int y0, int tid) {
  using L = Layout<C, KB>;
  const int xs = x0 - g.ax;
  const int ys = y0 - g.ay;
  const int rows = L::TH + g.kh - 1;
  const int cols = (L::TW + g.kw - 1) * C;  // samples read per row; up to L::inWidth are zero
  const int s0 = xs * C;                    // row sample of tile column 0
  const bool inside = ys >= 0 && ys + rows <= in.height && s0 >= 0 && s0 + cols <= in.width * C;
  const bool nonFinite = inside ? loadInside<T, C, KB>(in, tile, ys, s0, rows, cols, tid)
                                : loadAcrossBorder<T, C, KB>(g, in, tile, xs, ys, rows, cols, tid);
  zeroPadding<C, KB>(tile, tmp, rows, cols, tid);
  return nonFinite;
}

/// Phase 2 for a tile holding an inf or NaN: one output per item, exactly kw taps (the unrolled
/// pass runs KB taps, and 0 * inf in a padded tap would make a NaN that no window holds). The
/// same sums in the same order as rowPass.
template <int C, int KB>
GPULAB_HD void rowPassExact(const Launch& g, const Weights<KB>& w, int t, const float* tile, float* tmp, int tid) {
  using L = Layout<C, KB>;
  const int rows = L::TH + g.kh - 1;
  for (int i = tid; i < rows * L::outWidth; i += kThreads) {
    const int r = i / L::outWidth;
    const int s = i - r * L::outWidth;
    const float* src = tile + r * L::inStride + s;
    float acc = 0.f;
    for (int q = 0; q < g.kw; ++q) acc = fmaf(w.row[t][q], src[q * C], acc);
    tmp[r * L::tmpStride + s] = acc;
  }
}

/// Phase 3 for such a tile: exactly kh taps; the same sums in the same order as colPass.
template <int C, int KB>
GPULAB_HD void colPassExact(const Launch& g, const Weights<KB>& w, int t, const float* tmp,
                            float (&acc)[Layout<C, KB>::colItemsPerThread][Layout<C, KB>::M], int tid) {
  using L = Layout<C, KB>;
  for (int e = 0; e < L::colItemsPerThread; ++e) {
    const int i = tid + e * kThreads;
    if (i >= L::colItems) break;
    const int s = i % L::outWidth;
    const int m = i / L::outWidth;
    for (int n = 0; n < L::M; ++n) {
      const float* src = tmp + (m * L::M + n) * L::tmpStride + s;
      for (int p = 0; p < g.kh; ++p) acc[e][n] = fmaf(w.col[t][p], src[p * L::tmpStride], acc[e][n]);
    }
  }
}

/// Phase 2 for thread `tid`, term t: tmp(r, x) = sum_q row[t][q] * tile(r, x + q) for every tile
/// row r and output column x (per channel).
template <int C, int KB>
GPULAB_HD void rowPass(const Launch& g, const Weights<KB>& w, int t, const float* tile, float* tmp, int tid) {
  using L = Layout<C, KB>;
  constexpr int N = kRowOutputs;
  constexpr int kChunks = L::TW / N;
  const int rows = L::TH + g.kh - 1;
  const int items = rows * kChunks * C;
  for (int i = tid; i < items; i += kThreads) {
    const int r = i % rows;
    const int q = i / rows;
    const int j = q % kChunks;
    const int c = q / kChunks;
    const float* src = tile + r * L::inStride + j * N * C + c;
    float acc[N];
    GPULAB_UNROLL
    for (int n = 0; n < N; ++n) acc[n] = 0.f;
    // Sample k serves output n through tap k - n: each output sums its taps in order.
    GPULAB_UNROLL
    for (int k = 0; k < N + KB - 1; ++k) {
      const float v = src[k * C];
      GPULAB_UNROLL
      for (int n = 0; n < N; ++n) {
        const int tap = k - n;
        if (tap >= 0 && tap < KB) acc[n] = fmaf(w.row[t][tap], v, acc[n]);  // weight 0 beyond kw
      }
    }
    float* dst = tmp + r * L::tmpStride + j * N * C + c;
    GPULAB_UNROLL
    for (int n = 0; n < N; ++n) dst[n * C] = acc[n];
  }
}

/// Phase 3 for thread `tid`, term t: acc += sum_p col[t][p] * tmp(y + p, s), M rows y per item.
template <int C, int KB>
GPULAB_HD void colPass(const Weights<KB>& w, int t, const float* tmp,
                       float (&acc)[Layout<C, KB>::colItemsPerThread][Layout<C, KB>::M], int tid) {
  using L = Layout<C, KB>;
  constexpr int M = L::M;
  GPULAB_UNROLL
  for (int e = 0; e < L::colItemsPerThread; ++e) {
    const int i = tid + e * kThreads;
    if (i >= L::colItems) break;
    const int s = i % L::outWidth;
    const int m = i / L::outWidth;
    const float* src = tmp + m * M * L::tmpStride + s;
    GPULAB_UNROLL
    for (int k = 0; k < M + KB - 1; ++k) {
      const float v = src[k * L::tmpStride];
      GPULAB_UNROLL
      for (int n = 0; n < M; ++n) {
        const int tap = k - n;
        if (tap >= 0 && tap < KB) acc[e][n] = fmaf(w.col[t][tap], v, acc[e][n]);  // weight 0 beyond kh
      }
    }
  }
}

/// Phase 4 for thread `tid`: its outputs, rounded for u8, inside the output plane.
template <class T, int C, int KB>
GPULAB_HD void storeTile(const Plane<T>& out, const float (&acc)[Layout<C, KB>::colItemsPerThread][Layout<C, KB>::M],
                         int x0, int y0, int tid) {
  using L = Layout<C, KB>;
  GPULAB_UNROLL
  for (int e = 0; e < L::colItemsPerThread; ++e) {
    const int i = tid + e * kThreads;
    if (i >= L::colItems) break;
    const int s = i % L::outWidth;
    const int m = i / L::outWidth;
    const int xs = x0 * C + s;
    const int y = y0 + m * L::M;
    if (xs >= out.width * C || y >= out.height) continue;
    // Down the column by the pitch: one address computation, not one a row.
    const int n1 = out.height - y;
    T* dst = out.row(y) + xs;
    GPULAB_UNROLL
    for (int n = 0; n < L::M; ++n) {
      if (n >= n1) break;
      *dst = toSample<T>(acc[e][n]);
      dst = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(dst) + out.pitch);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Kernel

template <class T, int C, int KB, int RANK>
__global__ void __launch_bounds__(kThreads)
    separableConvKernel(Plane<const T> inStack, Plane<T> outStack, const Params<KB> params) {
  using L = Layout<C, KB>;
  const Launch& g = params.g;
  const Weights<KB>& w = params.w;
  extern __shared__ float4 sharedRaw[];
  float* tile = reinterpret_cast<float*>(sharedRaw);
  float* tmp = tile + L::rows * L::inStride;
  const Plane<const T> in = planeAt(inStack, g.inHeight, static_cast<int>(blockIdx.z));
  const Plane<T> out = planeAt(outStack, g.outHeight, static_cast<int>(blockIdx.z));
  const int x0 = static_cast<int>(blockIdx.x) * L::TW;
  const int y0 = static_cast<int>(blockIdx.y) * L::TH;
  const int tid = static_cast<int>(threadIdx.x);
  const bool nonFinite = loadTile<T, C, KB>(g, in, tile, tmp, x0, y0, tid);
  const bool exact = __syncthreads_or(nonFinite) != 0;  // uniform across the block
  float acc[L::colItemsPerThread][L::M];
  GPULAB_UNROLL
  for (int e = 0; e < L::colItemsPerThread; ++e) GPULAB_UNROLL
  for (int n = 0; n < L::M; ++n) acc[e][n] = 0.f;
  GPULAB_UNROLL
  for (int t = 0; t < RANK; ++t) {
    if (t >= g.rank) break;  // uniform across the block
    if (exact)
      rowPassExact<C, KB>(g, w, t, tile, tmp, tid);
    else
      rowPass<C, KB>(g, w, t, tile, tmp, tid);
    __syncthreads();
    if (exact)
      colPassExact<C, KB>(g, w, t, tmp, acc, tid);
    else
      colPass<C, KB>(w, t, tmp, acc, tid);
    __syncthreads();
  }
  storeTile<T, C, KB>(out, acc, x0, y0, tid);
}

// ---------------------------------------------------------------------------------------------
// Host side

/// The smallest bucket of taps that holds both passes.
int bucketFor(int kw, int kh) {
  const int taps = std::max(kw, kh);
  for (int kb : {8, 16, 32, 64, 128})
    if (taps <= kb) return kb;
  return 0;
}

template <int KB>
Weights<KB> weightsOf(const SeparableGeometry& g) {
  Weights<KB> w{};
  for (int t = 0; t < std::min(g.rank, kSeparableMaxRank); ++t) {
    for (int q = 0; q < std::min(g.kernelWidth, KB); ++q) w.row[t][q] = g.rowWeights[t][q];
    for (int p = 0; p < std::min(g.kernelHeight, KB); ++p) w.col[t][p] = g.colWeights[t][p];
  }
  return w;
}

template <class T>
Launch launchOf(const SeparableGeometry& g, float fill, const Plane<const T>& in, int outHeight) {
  constexpr std::size_t kChunkBytes = 4 * sizeof(T);
  const bool aligned = reinterpret_cast<std::uintptr_t>(in.data) % kChunkBytes == 0 && in.pitch % kChunkBytes == 0;
  return Launch{g.kernelWidth, g.kernelHeight, g.anchorX, g.anchorY, g.rank,
                g.border,      fill,           in.height, outHeight, aligned};
}

template <int C>
void validate(const SeparableGeometry& g) {
  if (g.kernelWidth < 1 || g.kernelHeight < 1 || g.kernelWidth > kSeparableMaxTaps ||
      g.kernelHeight > kSeparableMaxTaps)
    throw std::invalid_argument("the separable convolution takes 1 to " + std::to_string(kSeparableMaxTaps) +
                                " taps a side, got " + std::to_string(g.kernelWidth) + "x" +
                                std::to_string(g.kernelHeight));
  if (g.rank < 1 || g.rank > kSeparableMaxRank)
    throw std::invalid_argument("the separable convolution sums 1 to " + std::to_string(kSeparableMaxRank) +
                                " terms, got " + std::to_string(g.rank));
  if (C != 1 && (bucketFor(g.kernelWidth, g.kernelHeight) > kSeparableMaxInterleavedTaps || g.rank != 1))
    throw std::invalid_argument("the separable convolution of interleaved channels takes rank-1 kernels up to " +
                                std::to_string(kSeparableMaxInterleavedTaps) + " taps a side");
}

template <class T, int C, int KB, int RANK>
void launchBucket(Plane<const T> in, Plane<T> out, int planes, const SeparableGeometry& g, float fill,
                  cudaStream_t stream) {
  using L = Layout<C, KB>;
  auto kernel = separableConvKernel<T, C, KB, RANK>;
  int device = 0, optin = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (L::bytes > static_cast<std::size_t>(optin))
    throw std::invalid_argument("the separable convolution's tile needs " + std::to_string(L::bytes) +
                                " bytes of shared memory, more than this device's " + std::to_string(optin));
  if (L::bytes > 48 * 1024)
    GPULAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(L::bytes)));
  const dim3 grid(static_cast<unsigned>((out.width + L::TW - 1) / L::TW),
                  static_cast<unsigned>((out.height + L::TH - 1) / L::TH), static_cast<unsigned>(planes));
  const Params<KB> params{launchOf(g, fill, in, out.height), weightsOf<KB>(g)};
  kernel<<<grid, kThreads, L::bytes, stream>>>(in, out, params);
  GPULAB_CHECK_LAUNCH("separableConvKernel");
}

template <class T, int C, int KB>
void launchRank(Plane<const T> in, Plane<T> out, int planes, const SeparableGeometry& g, float fill,
                cudaStream_t stream) {
  if (g.rank == 1)
    launchBucket<T, C, KB, 1>(in, out, planes, g, fill, stream);
  else if constexpr (C == 1)
    launchBucket<T, C, KB, kSeparableMaxRank>(in, out, planes, g, fill, stream);
}

template <class T, int C, int KB>
void hostBucket(Plane<const T> inStack, Plane<T> outStack, int planes, const SeparableGeometry& geometry, float fill) {
  using L = Layout<C, KB>;
  const Launch g = launchOf(geometry, fill, inStack, outStack.height);
  const Weights<KB> w = weightsOf<KB>(geometry);
  std::vector<float> shared(L::bytes / sizeof(float));
  struct Acc {
    float v[L::colItemsPerThread][L::M];
  };
  std::vector<Acc> accs(kThreads);
  for (int z = 0; z < planes; ++z) {
    const Plane<const T> in = planeAt(inStack, inStack.height, z);
    const Plane<T> out = planeAt(outStack, outStack.height, z);
    for (int by = 0; by < (out.height + L::TH - 1) / L::TH; ++by)
      for (int bx = 0; bx < (out.width + L::TW - 1) / L::TW; ++bx) {
        // NaN in every cell no phase writes: a read of one would show in the results.
        std::fill(shared.begin(), shared.end(), std::nanf(""));
        float* tile = shared.data();
        float* tmp = tile + L::rows * L::inStride;
        const int x0 = bx * L::TW, y0 = by * L::TH;
        bool exact = false;
        for (int tid = 0; tid < kThreads; ++tid) exact = loadTile<T, C, KB>(g, in, tile, tmp, x0, y0, tid) || exact;
        for (Acc& a : accs) std::fill(&a.v[0][0], &a.v[0][0] + L::colItemsPerThread * L::M, 0.f);
        for (int t = 0; t < g.rank; ++t) {
          for (int tid = 0; tid < kThreads; ++tid) {
            if (exact)
              rowPassExact<C, KB>(g, w, t, tile, tmp, tid);
            else
              rowPass<C, KB>(g, w, t, tile, tmp, tid);
          }
          for (int tid = 0; tid < kThreads; ++tid) {
            if (exact)
              colPassExact<C, KB>(g, w, t, tmp, accs[static_cast<std::size_t>(tid)].v, tid);
            else
              colPass<C, KB>(w, t, tmp, accs[static_cast<std::size_t>(tid)].v, tid);
          }
        }
        for (int tid = 0; tid < kThreads; ++tid)
          storeTile<T, C, KB>(out, accs[static_cast<std::size_t>(tid)].v, x0, y0, tid);
      }
  }
}

}  // namespace

template <int C>
std::size_t separableSharedBytes(int kernelWidth, int kernelHeight) {
  switch (bucketFor(kernelWidth, kernelHeight)) {
    case 8:
      return Layout<C, 8>::bytes;
    case 16:
      return Layout<C, 16>::bytes;
    case 32:
      return Layout<C, 32>::bytes;
    default:
      break;
  }
  if constexpr (C == 1) {
    if (bucketFor(kernelWidth, kernelHeight) == 64) return Layout<C, 64>::bytes;
    if (bucketFor(kernelWidth, kernelHeight) == 128) return Layout<C, 128>::bytes;
  }
  return 0;  // interleaved channels take up to 32 taps
}

template <class T, int C>
void launchSeparableConv(Plane<const T> inStack, Plane<T> outStack, int planes, const SeparableGeometry& geometry,
                         float borderValue, cudaStream_t stream) {
  validate<C>(geometry);
  if (planes < 1 || inStack.width < 1 || inStack.height < 1 || outStack.width < 1 || outStack.height < 1)
    throw std::invalid_argument("the separable convolution needs non-empty planes");
  switch (bucketFor(geometry.kernelWidth, geometry.kernelHeight)) {
    case 8:
      return launchRank<T, C, 8>(inStack, outStack, planes, geometry, borderValue, stream);
    case 16:
      return launchRank<T, C, 16>(inStack, outStack, planes, geometry, borderValue, stream);
    case 32:
      return launchRank<T, C, 32>(inStack, outStack, planes, geometry, borderValue, stream);
    default:
      break;
  }
  if constexpr (C == 1) {
    if (bucketFor(geometry.kernelWidth, geometry.kernelHeight) == 64)
      return launchRank<T, C, 64>(inStack, outStack, planes, geometry, borderValue, stream);
    return launchRank<T, C, 128>(inStack, outStack, planes, geometry, borderValue, stream);
  }
}

template <class T, int C>
void runSeparableConvTilesOnHost(Plane<const T> inStack, Plane<T> outStack, int planes,
                                 const SeparableGeometry& geometry, float borderValue) {
  validate<C>(geometry);
  switch (bucketFor(geometry.kernelWidth, geometry.kernelHeight)) {
    case 8:
      return hostBucket<T, C, 8>(inStack, outStack, planes, geometry, borderValue);
    case 16:
      return hostBucket<T, C, 16>(inStack, outStack, planes, geometry, borderValue);
    case 32:
      return hostBucket<T, C, 32>(inStack, outStack, planes, geometry, borderValue);
    default:
      break;
  }
  if constexpr (C == 1) {
    if (bucketFor(geometry.kernelWidth, geometry.kernelHeight) == 64)
      return hostBucket<T, C, 64>(inStack, outStack, planes, geometry, borderValue);
    return hostBucket<T, C, 128>(inStack, outStack, planes, geometry, borderValue);
  }
}

#define GPULAB_INSTANTIATE(T, C)                                                                          \
  template void launchSeparableConv<T, C>(Plane<const T>, Plane<T>, int, const SeparableGeometry&, float, \
                                          cudaStream_t);                                                  \
  template void runSeparableConvTilesOnHost<T, C>(Plane<const T>, Plane<T>, int, const SeparableGeometry&, float);
GPULAB_INSTANTIATE(std::uint8_t, 1)
GPULAB_INSTANTIATE(float, 1)
GPULAB_INSTANTIATE(std::uint8_t, 3)
GPULAB_INSTANTIATE(float, 3)
#undef GPULAB_INSTANTIATE

template std::size_t separableSharedBytes<1>(int, int);
template std::size_t separableSharedBytes<3>(int, int);

}  // namespace gpulab::kernels
