#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
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
  int segmentRows = 1;       // the stream kernel's output rows a block (a multiple of KB)
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
// Stream kernel: rank-1 kernels of one channel whose longer side has 9 to 32 taps (the KB = 16 and
// 32 buckets).
//
// The tile kernel runs its row pass over the TH + KB - 1 rows of every 64-row tile (1.5 times the
// rows at 31 taps) and reads each output's column taps from shared memory. Here a block of
// kStreamThreads threads walks down a strip of kStreamWidth output columns through a segment of
// rows, kStreamBatch input rows between barriers:
//   1. put: the batch's samples, loaded during the batch before (a warp a row, border-mapped
//      columns worked out once a lane), go to shared memory as float through the probe;
//   2. row pass: each input row once, kRowOutputs outputs a thread from 16-byte shared reads;
//   3. column pass: a thread a column keeps KB running sums in registers. The row pass's value h of
//      input row i adds col[p] * h to output row i - p for every p; output i - KB + 1 is then whole
//      and is stored, and its register starts output i + 1. The register of output j is j % KB,
//      and a period of KB rows (KB / kStreamBatch batches) is unrolled, so every index is static.
//      The outputs go down the column by the pitch from the batch's first.
// Each output sums its row taps and then its column taps in tap order, as the tile kernel does: the
// same bits. A batch holding an inf or NaN (the taps beyond kw and kh have weight 0, and 0 * inf is
// NaN) sends the whole block to exact loops over its region (kw x kh taps, the same sums in the same
// order), which rewrite every output it stored. The phases are functions of the thread index and
// the program that orders them takes the barriers as arguments, so the host runs the same code.

constexpr int kStreamThreads = 128;
constexpr int kStreamWidth = kStreamThreads;  // output columns a strip: a thread a column
constexpr int kStreamBatch = 8;               // input rows between barriers
constexpr int kStreamWarps = kStreamThreads / 32;

template <int KB>
struct StreamLayout {
  static constexpr int slots = (kStreamWidth + KB - 1 + 31) / 32;  // samples a lane loads a row
  static constexpr int span = slots * 32;                          // samples a row, >= kStreamWidth + KB - 1
  // 4 (mod 32) words: the 8 lanes of a 16-byte shared access, on 8 consecutive rows, meet 32 banks.
  static constexpr int inPitch = span + 4;
  static constexpr int sumPitch = kStreamWidth + 4;
  static constexpr int rowsPerWarp = kStreamBatch / kStreamWarps;
  static constexpr int vectors = (kRowOutputs + KB - 1 + 3) / 4;  // 16-byte reads a row-pass item
  static constexpr int words = kStreamBatch * (inPitch + sumPitch);
  static_assert(inPitch % 32 == 4 && sumPitch % 32 == 4);
  static_assert(kStreamWidth / kRowOutputs * kStreamBatch == kStreamThreads, "a row-pass item a thread");
  static_assert(kRowOutputs * (kStreamWidth / kRowOutputs - 1) + 4 * vectors <= span);
  static_assert(KB % kStreamBatch == 0 && kStreamBatch % kStreamWarps == 0);
};

/// What a thread keeps across the barriers (registers on the GPU).
template <int KB>
struct StreamState {
  float acc[KB];                                                        // acc[j % KB]: output row j's column sum so far
  float ahead[StreamLayout<KB>::rowsPerWarp][StreamLayout<KB>::slots];  // the next batch's samples
  int column[StreamLayout<KB>::slots];  // the plane column of each sample the lane loads, -1: fill
  float probe;                          // NaN once an inf or NaN went through put
};

/// One block: strip bx, segment by of one plane.
template <class T, int KB>
struct StreamBlock {
  using L = StreamLayout<KB>;
  using State = StreamState<KB>;
  static constexpr int kTaps = KB;
  Plane<const T> in;
  Plane<T> out;
  const Launch& g;
  const Weights<KB>& w;
  float* inRows;  // kStreamBatch rows of L::inPitch: the batch's samples
  float* sums;    // kStreamBatch rows of L::sumPitch: their row pass
  int x0;         // the strip's first output column
  int y0;         // the segment's first output row
  int outputs;    // output rows in the segment
  int rows;       // input rows it reads: outputs + KB - 1

  GPULAB_HD StreamBlock(Plane<const T> in_, Plane<T> out_, const Launch& g_, const Weights<KB>& w_, float* shared,
                        int bx, int by)
      : in(in_),
        out(out_),
        g(g_),
        w(w_),
        inRows(shared),
        sums(shared + kStreamBatch * L::inPitch),
        x0(bx * kStreamWidth),
        y0(by * g_.segmentRows),
        outputs(g_.segmentRows < out_.height - by * g_.segmentRows ? g_.segmentRows
                                                                   : out_.height - by * g_.segmentRows),
        rows(outputs + KB - 1) {}

  GPULAB_HD void start(int tid, State& s) const {
    const int lane = tid % 32;
    GPULAB_UNROLL
    for (int k = 0; k < L::slots; ++k) s.column[k] = borderIndex(x0 - g.ax + lane + 32 * k, in.width, g.border);
    s.probe = 0.f;
  }

  /// The samples of input rows [i, i + kStreamBatch) of the segment into s.ahead: rows warp and
  /// warp + kStreamWarps, lane + 32 k of each.
  GPULAB_HD void load(int tid, State& s, int i) const {
    const int warp = tid / 32;
    GPULAB_UNROLL
    for (int u = 0; u < L::rowsPerWarp; ++u) {
      const int y = borderIndex(y0 - g.ay + i + warp + kStreamWarps * u, in.height, g.border);
      const T* src = in.row(y < 0 ? 0 : y);
      GPULAB_UNROLL
      for (int k = 0; k < L::slots; ++k)
        s.ahead[u][k] = y < 0 || s.column[k] < 0 ? g.fill : loadSample(src + s.column[k]);
    }
  }

  /// Phase 1: s.ahead to shared memory; whether this thread has met an inf or NaN so far.
  GPULAB_HD bool put(int tid, State& s) const {
    const int warp = tid / 32, lane = tid % 32;
    GPULAB_UNROLL
    for (int u = 0; u < L::rowsPerWarp; ++u) {
      float* dst = inRows + (warp + kStreamWarps * u) * L::inPitch + lane;
      GPULAB_UNROLL
      for (int k = 0; k < L::slots; ++k) {
        dst[32 * k] = s.ahead[u][k];
        if constexpr (std::is_same_v<T, float>) s.probe = fmaf(s.ahead[u][k], 0.f, s.probe);
      }
    }
    return s.probe != s.probe;
  }

  /// Phase 2: row r = tid % kStreamBatch, outputs [n0, n0 + kRowOutputs) of it, n0 = kRowOutputs *
  /// (tid / kStreamBatch); sample k serves output n through tap k - n, as rowPass.
  GPULAB_HD void rowPass(int tid) const {
    constexpr int N = kRowOutputs;
    const int r = tid % kStreamBatch;
    const int n0 = N * (tid / kStreamBatch);
    const float* src = inRows + r * L::inPitch + n0;
    float acc[N];
    GPULAB_UNROLL
    for (int n = 0; n < N; ++n) acc[n] = 0.f;
    GPULAB_UNROLL
    for (int m = 0; m < L::vectors; ++m) {
      float v[4];
      loadShared16(src + 4 * m, v);
      GPULAB_UNROLL
      for (int e = 0; e < 4; ++e) {
        GPULAB_UNROLL
        for (int n = 0; n < N; ++n) {
          const int tap = 4 * m + e - n;
          if (tap >= 0 && tap < KB) acc[n] = fmaf(w.row[0][tap], v[e], acc[n]);  // weight 0 beyond kw
        }
      }
    }
    float* dst = sums + r * L::sumPitch + n0;
    GPULAB_UNROLL
    for (int n = 0; n < N; n += 4) storeShared16(dst + n, acc + n);
  }

  /// Phase 3 for batch b of the period that starts at input row i0 (a multiple of KB): column tid,
  /// input rows i0 + b * kStreamBatch + r.
  template <int b>
  GPULAB_HD void columnPass(int tid, State& s, int i0) const {
    // Row r completes output row j0 + r; those in [0, outputs) are stored, r in [lo, hi), down
    // the column by the pitch from the first.
    const int j0 = i0 + b * kStreamBatch - (KB - 1);
    const int lo = j0 < 0 ? -j0 : 0;
    const int hi = outputs - j0 < kStreamBatch ? outputs - j0 : kStreamBatch;
    const int x = x0 + tid;
    const bool column = x < out.width && lo < hi;
    T* dst = out.row(column ? y0 + j0 + lo : 0) + (column ? x : 0);
    GPULAB_UNROLL
    for (int r = 0; r < kStreamBatch; ++r) {
      const int i = b * kStreamBatch + r;  // the input row mod KB
      const float h = sums[r * L::sumPitch + tid];
      GPULAB_UNROLL
      for (int p = KB - 1; p >= 1; --p) {
        float& a = s.acc[(i - p + KB) % KB];
        a = fmaf(w.col[0][p], h, a);  // weight 0 beyond kh
      }
      if (column && r >= lo && r < hi) {
        *dst = toSample<T>(s.acc[(i + 1) % KB]);
        dst = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(dst) + out.pitch);
      }
      s.acc[i % KB] = fmaf(w.col[0][0], h, 0.f);
    }
  }

  /// The block's region by exact loops, for a block whose input holds an inf or NaN.
  GPULAB_HD void exact(int tid) const {
    const int x = x0 + tid;
    if (x >= out.width) return;
    for (int j = 0; j < outputs; ++j) {
      float acc = 0.f;
      for (int p = 0; p < g.kh; ++p) {
        const int y = borderIndex(y0 + j - g.ay + p, in.height, g.border);
        float h = 0.f;
        for (int q = 0; q < g.kw; ++q) {
          const int xs = borderIndex(x - g.ax + q, in.width, g.border);
          const float v = y < 0 || xs < 0 ? g.fill : loadSample(in.row(y) + xs);
          h = fmaf(w.row[0][q], v, h);
        }
        acc = fmaf(w.col[0][p], h, acc);
      }
      out.row(y0 + j)[x] = toSample<T>(acc);
    }
  }
};

/// Batch b of the period at input row i0: put (barrier, and whether any thread met an inf or NaN),
/// the next batch's loads and the row pass (barrier), the column pass. False: go exact.
template <int b, class Block, class Each, class Any, class Sync>
GPULAB_HD bool streamBatch(const Block& block, Each& each, Any& any, Sync& sync, int i0) {
  using State = typename Block::State;
  const int i = i0 + b * kStreamBatch;
  if (i >= block.rows) return true;
  if (any([&](int tid, State& s) { return block.put(tid, s); })) return false;
  each([&](int tid, State& s) {
    if (i + kStreamBatch < block.rows) block.load(tid, s, i + kStreamBatch);  // in flight through the row pass
    block.rowPass(tid);
  });
  sync();
  each([&](int tid, State& s) { block.template columnPass<b>(tid, s, i0); });
  return true;
}

template <class Block, class Each, class Any, class Sync, int... Bs>
GPULAB_HD bool streamPeriod(const Block& block, Each& each, Any& any, Sync& sync, int i0,
                            std::integer_sequence<int, Bs...>) {
  return (streamBatch<Bs>(block, each, any, sync, i0) && ...);
}

/// The block's program. each(f) runs f(tid, state) for every thread, any(f) does so and returns
/// whether f was true for any (a barrier), sync() is a barrier.
template <class Block, class Each, class Any, class Sync>
GPULAB_HD void streamProgram(const Block& block, Each&& each, Any&& any, Sync&& sync) {
  using State = typename Block::State;
  constexpr int KB = Block::kTaps;
  each([&](int tid, State& s) {
    block.start(tid, s);
    block.load(tid, s, 0);
  });
  for (int i0 = 0; i0 < block.rows; i0 += KB) {
    if (!streamPeriod(block, each, any, sync, i0, std::make_integer_sequence<int, KB / kStreamBatch>{})) {
      each([&](int tid, State&) { block.exact(tid); });
      return;
    }
  }
}

template <class T, int KB>
__global__ void __launch_bounds__(kStreamThreads, 4)
    separableStreamKernel(Plane<const T> inStack, Plane<T> outStack, const __grid_constant__ Params<KB> params) {
  __shared__ __align__(16) float shared[StreamLayout<KB>::words];
  const Plane<const T> in = planeAt(inStack, params.g.inHeight, static_cast<int>(blockIdx.z));
  const Plane<T> out = planeAt(outStack, params.g.outHeight, static_cast<int>(blockIdx.z));
  const StreamBlock<T, KB> block(in, out, params.g, params.w, shared, static_cast<int>(blockIdx.x),
                                 static_cast<int>(blockIdx.y));
  const int tid = static_cast<int>(threadIdx.x);
  StreamState<KB> state;
  streamProgram(
      block, [&](auto&& f) { f(tid, state); }, [&](auto&& f) { return __syncthreads_or(f(tid, state) ? 1 : 0) != 0; },
      [] { __syncthreads(); });
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

/// GPULAB_SEPARABLE_KERNEL=tile runs the tile kernel where the stream kernel would run;
/// GPULAB_SEPARABLE_STREAM_ROWS forces the stream kernel's segment rows (rounded up to a period of
/// KB rows). For measurements; unset, the planner chooses.
const std::string& forcedKernel() {
  static const std::string kernel = tuningText("GPULAB_SEPARABLE_KERNEL");
  return kernel;
}

int forcedStreamRows() {
  static const int rows = tuningRows("GPULAB_SEPARABLE_STREAM_ROWS");
  return rows;
}

/// The taps bucket the stream kernel runs this single-channel geometry in, 0 for the tile kernel.
int streamBucket(const SeparableGeometry& g) {
  if (g.rank != 1) return 0;
  const int kb = bucketFor(g.kernelWidth, g.kernelHeight);
  if (forcedKernel() == "tile") return 0;
  return kb == 16 || kb == 32 ? kb : 0;
}

/// Segments of whole periods (KB rows) for a GPU holding `resident` blocks at once: about one wave
/// of blocks.
void planStream(Launch& g, int outWidth, int outHeight, int planes, int resident, int kb) {
  const int strips = divUp(outWidth, kStreamWidth);
  const int segments = std::max(1, divUp(resident, strips * planes));
  int rows = divUp(divUp(outHeight, segments), kb) * kb;
  if (forcedStreamRows() > 0) rows = divUp(forcedStreamRows(), kb) * kb;
  g.segmentRows = std::max(rows, kb);
}

/// The blocks runSeparableConvTilesOnHost plans the stream kernel's segments for (several segments
/// a strip on small test images, as a GPU gives).
constexpr int kHostResidentBlocks = 6;

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

template <class T, int KB>
void launchStream(Plane<const T> in, Plane<T> out, int planes, const SeparableGeometry& g, float fill,
                  cudaStream_t stream) {
  auto kernel = separableStreamKernel<T, KB>;
  int device = 0, sms = 0, perSm = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kStreamThreads, 0));
  Params<KB> params{launchOf(g, fill, in, out.height), weightsOf<KB>(g)};
  planStream(params.g, out.width, out.height, planes, std::max(1, sms * perSm), KB);
  const dim3 grid(static_cast<unsigned>(divUp(out.width, kStreamWidth)),
                  static_cast<unsigned>(divUp(out.height, params.g.segmentRows)), static_cast<unsigned>(planes));
  kernel<<<grid, kStreamThreads, 0, stream>>>(in, out, params);
  GPULAB_CHECK_LAUNCH("separableStreamKernel");
}

template <class T, int KB>
void hostStream(Plane<const T> inStack, Plane<T> outStack, int planes, const SeparableGeometry& geometry, float fill) {
  using State = StreamState<KB>;
  Params<KB> p{launchOf(geometry, fill, inStack, outStack.height), weightsOf<KB>(geometry)};
  planStream(p.g, outStack.width, outStack.height, planes, kHostResidentBlocks, KB);
  std::vector<float> shared(StreamLayout<KB>::words);
  std::vector<State> states(kStreamThreads);
  const auto each = [&](auto&& f) {
    for (int tid = 0; tid < kStreamThreads; ++tid) f(tid, states[static_cast<std::size_t>(tid)]);
  };
  const auto any = [&](auto&& f) {
    bool met = false;
    for (int tid = 0; tid < kStreamThreads; ++tid) met = f(tid, states[static_cast<std::size_t>(tid)]) || met;
    return met;
  };
  for (int z = 0; z < planes; ++z) {
    const Plane<const T> in = planeAt(inStack, inStack.height, z);
    const Plane<T> out = planeAt(outStack, outStack.height, z);
    for (int by = 0; by < divUp(out.height, p.g.segmentRows); ++by)
      for (int bx = 0; bx < divUp(out.width, kStreamWidth); ++bx) {
        // NaN in every cell and register no phase writes: a read of one would show in the results.
        std::fill(shared.begin(), shared.end(), std::nanf(""));
        for (State& s : states) std::fill(&s.acc[0], &s.acc[0] + KB, std::nanf(""));
        const StreamBlock<T, KB> block(in, out, p.g, p.w, shared.data(), bx, by);
        streamProgram(block, each, any, [] {});
      }
  }
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
  if constexpr (C == 1) {
    switch (streamBucket(geometry)) {
      case 16:
        return launchStream<T, 16>(inStack, outStack, planes, geometry, borderValue, stream);
      case 32:
        return launchStream<T, 32>(inStack, outStack, planes, geometry, borderValue, stream);
      default:
        break;
    }
  }
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
  if constexpr (C == 1) {
    switch (streamBucket(geometry)) {
      case 16:
        return hostStream<T, 16>(inStack, outStack, planes, geometry, borderValue);
      case 32:
        return hostStream<T, 32>(inStack, outStack, planes, geometry, borderValue);
      default:
        break;
    }
  }
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
