#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "box_blur_stream.cuh"
#include "box_blur_sweep.cuh"
#include "gpulab/kernels/box_blur.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "vector_loads.cuh"

namespace gpulab::kernels {

const char* toString(BoxBlurPath path) noexcept {
  switch (path) {
    case BoxBlurPath::Auto:
      return "auto";
    case BoxBlurPath::TiledRing:
      return "ring";
    case BoxBlurPath::TiledStream:
      return "stream";
    case BoxBlurPath::SummedArea:
      return "sat";
    case BoxBlurPath::Fused:
      return "fused";
    case BoxBlurPath::Sweep:
      return "sweep";
  }
  return "?";
}

namespace {

// ---------------------------------------------------------------------------------------------
// Types and tiling constants

template <class T>
struct BoxTypes;
template <>
struct BoxTypes<float> {
  using Acc = double;  // running sums of f32 samples: exact enough that only the final rounding shows
  using Sat = double;
};
template <>
struct BoxTypes<std::uint8_t> {
  using Acc = int;  // exact up to radius 1450; the tiled paths stop at 768
  using Sat = long long;
};
template <>
struct BoxTypes<std::uint16_t> {
  using Acc = long long;  // 65535 x (2r+1)^2 outgrows an int from radius 90; the tiled paths go to 384
  using Sat = long long;
};

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kRingDepth = 4;    // steps of rows in flight per block (cp.async groups) on the ring path
constexpr int kStreamDepth = 2;  // the same on the stream path, which loads two rows per row
constexpr std::size_t kRingSharedLimit = 100 * 1024;  // keeps at least two ring blocks per SM on Hopper
constexpr std::size_t kDefaultSharedOptin = 227 * 1024;

template <class T>
struct Tiling {
  using Acc = typename BoxTypes<T>::Acc;
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));    // samples per thread per row: one 16-byte copy
  static constexpr int kExtent = kThreads * kVec;                  // columns a block holds per row, halo included
  static constexpr int kWarpSpan = 32 * kVec;                      // columns one warp scans
  static constexpr int kPad = 16 / static_cast<int>(sizeof(Acc));  // prefix[kPad - 1] == 0 keeps rows 16-byte aligned
  static constexpr int kPrefixStride = kPad + kExtent + kWarps;    // one row's prefix sums, then its warp totals
  static constexpr int kMaxRadius = 3 * kExtent / 8;               // output tile at least a quarter of the extent
  // Rows per step: two independent scans between the same two barriers halve the barriers and
  // latency chains per row. u8 keeps one: its 16 columns per thread already fill the registers.
  static constexpr int kRows = sizeof(T) == 1 ? 1 : 2;

  // Ring: every row from the oldest leaving row of a step to the newest row in flight.
  static int slots(bool ring, int radius) {
    return ring ? 2 * radius + 1 + kRows * (kRingDepth + 1) : 2 * kRows * (kStreamDepth + 1);
  }
  static std::size_t sharedBytes(bool ring, int radius) {
    return static_cast<std::size_t>(slots(ring, radius)) * kExtent * sizeof(T) +
           static_cast<std::size_t>(kRows) * kPrefixStride * sizeof(Acc);
  }
};

template <class T>
struct TiledParams {
  using Acc = typename BoxTypes<T>::Acc;
  int radius = 0;
  int radiusUp = 0;  ///< radius rounded up to kVec: the halo each side, keeps 16-byte alignment
  int tileWidth = 0;
  int rowsPerBlock = 0;
  int slots = 0;
  BorderMode mode = BorderMode::Reflect101;
  T fill{};
  Acc area = 0;
  double invArea = 0;
};

struct TiledShape {
  int tileWidth = 0;
  int rowsPerBlock = 0;
  int tilesX = 0;
  int tilesY = 0;
  std::size_t sharedBytes = 0;
};

// Column tiles as wide as the extent allows (balanced), then row segments so that the grid fills
// the GPU once; a segment is never much shorter than the window, whose rows it reads in addition.
template <class T>
TiledShape tiledShape(int width, int height, int radius, bool ring, int residentBlocks) {
  using G = Tiling<T>;
  const int radiusUp = divUp(radius, G::kVec) * G::kVec;
  const int maxTile = G::kExtent - 2 * radiusUp;
  int tilesX = divUp(width, maxTile);
  const int tileWidth = divUp(divUp(width, tilesX), G::kVec) * G::kVec;
  tilesX = divUp(width, tileWidth);
  const int segments = std::max(1, residentBlocks / tilesX);
  const int minRows = ring ? std::max(8, 2 * radius) : std::max(16, 4 * radius);
  const int rows = std::min(height, std::max(minRows, divUp(height, segments)));
  return {tileWidth, rows, tilesX, divUp(height, rows), G::sharedBytes(ring, radius)};
}

template <class T>
TiledParams<T> tiledParams(const TiledShape& shape, int radius, bool ring, BorderMode mode, T fill) {
  TiledParams<T> p;
  p.radius = radius;
  p.radiusUp = divUp(radius, Tiling<T>::kVec) * Tiling<T>::kVec;
  p.tileWidth = shape.tileWidth;
  p.rowsPerBlock = shape.rowsPerBlock;
  p.slots = Tiling<T>::slots(ring, radius);
  p.mode = mode;
  p.fill = fill;
  const long long side = 2LL * radius + 1;
  p.area = static_cast<typename TiledParams<T>::Acc>(side * side);
  p.invArea = 1.0 / static_cast<double>(side * side);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Device helpers (host-callable too: the host emulation runs the same code)

// Global -> shared, 16 bytes, asynchronous on the GPU (cp.async on sm_80+, a plain copy before).
GPULAB_HD void copy16Async(void* sharedDst, const void* globalSrc) {
#if defined(__CUDA_ARCH__)
  __pipeline_memcpy_async(sharedDst, globalSrc, 16);
#else
  std::memcpy(sharedDst, globalSrc, 16);
#endif
}

// The recomputation of outputs a NaN or inf spoiled (box_blur.cuh, "Non-finite samples"), out of
// line: the kernels call it only where a running sum ended non-finite, and it leaves their
// registers alone. Samples k = k0, k0 + 32, ... below kEnd of rows y0 .. y0 + rows - 1 of rows of
// `channels` interleaved channels: those that came out non-finite get their window's exact result.
__host__ __device__ __noinline__ void repairNonFiniteOutputs(Plane<const float> in, Plane<float> out, int channels,
                                                             int k0, int kEnd, int y0, int rows, int radius,
                                                             BorderMode mode, float fill) {
  for (int k = k0; k < kEnd; k += 32) {
    const int px = k / channels;
    for (int r = 0; r < rows; ++r) {
      float& value = out.row(y0 + r)[k];
      if (!boxFinite(value))
        value = boxWindowMeanExact(in, channels, px, k - px * channels, y0 + r, radius, mode, fill);
    }
  }
}

template <class T>
GPULAB_HD T finishMean(typename BoxTypes<T>::Acc sum, typename BoxTypes<T>::Acc area, double invArea) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>((sum + area / 2) / area);  // sum >= 0; the area is odd, so no ties
  } else {
    return static_cast<T>(static_cast<double>(sum) * invArea);
  }
}

// One block of the tiled paths. Row steps t = 0 .. steps-1 march the vertical window down: at
// step t input row y0 - r + t enters it and row y0 - r + t - (2r+1) leaves it; from step 2r on,
// output row y0 + t - 2r is complete. A block takes kRows row steps at a time (a group); between
// barriers the work splits into the phases below, each a function of the thread index, so that
// the host emulation can run them thread by thread.
template <class T, bool kRing>
struct BoxTile {
  using G = Tiling<T>;
  using Acc = typename BoxTypes<T>::Acc;
  static constexpr int kVec = G::kVec;
  static constexpr int kRows = G::kRows;
  static constexpr int kDepth = kRing ? kRingDepth : kStreamDepth;

  Plane<const T> in;
  Plane<T> out;
  TiledParams<T> p;
  T* rows;          // slots x kExtent samples
  Acc* prefixBase;  // kRows x kPrefixStride: per row of a group, warp-local inclusive prefix sums
                    // of the row difference (after kPad, with prefix[kPad - 1] == 0), then warp totals
  int x0, xs, y0, steps, groups;

  GPULAB_HD BoxTile(Plane<const T> in_, Plane<T> out_, const TiledParams<T>& p_, unsigned char* shared, int bx, int by)
      : in(in_), out(out_), p(p_) {
    rows = reinterpret_cast<T*>(shared);
    prefixBase = reinterpret_cast<Acc*>(shared + static_cast<std::size_t>(p.slots) * G::kExtent * sizeof(T));
    x0 = bx * p.tileWidth;
    xs = x0 - p.radiusUp;
    y0 = by * p.rowsPerBlock;
    const int rowsOut = in.height - y0 < p.rowsPerBlock ? in.height - y0 : p.rowsPerBlock;
    steps = rowsOut + 2 * p.radius;
    groups = (steps + kRows - 1) / kRows;
  }

  GPULAB_HD Acc* prefix(int j) const { return prefixBase + j * G::kPrefixStride + G::kPad; }
  GPULAB_HD Acc* warpTotals(int j) const { return prefixBase + j * G::kPrefixStride + G::kPad + G::kExtent; }

  // Where a group's rows sit: the group, and the slot of its first row in the ring (ring path)
  // or in the ring of row pairs (stream path). Advanced by compare-and-subtract: no division.
  struct Cursor {
    int group = 0;
    int slot = 0;
  };
  GPULAB_HD int ringRows() const { return kRing ? p.slots : kRows * (kDepth + 1); }
  GPULAB_HD int wrap(int slot) const {  // slot in (-ringRows, 2 ringRows)
    const int n = ringRows();
    return slot >= n ? slot - n : (slot < 0 ? slot + n : slot);
  }
  GPULAB_HD Cursor advance(Cursor c) const { return {c.group + 1, wrap(c.slot + kRows)}; }

  // Row j of the group at c: the entering row, and (t >= 2r+1) the leaving row.
  GPULAB_HD T* enterRow(Cursor c, int j) const {
    const int slot = wrap(c.slot + j);
    return rows + static_cast<std::size_t>(kRing ? slot : 2 * slot) * G::kExtent;
  }
  GPULAB_HD T* leaveRow(Cursor c, int j) const {
    const int slot = kRing ? wrap(wrap(c.slot + j) - (2 * p.radius + 1)) : 2 * wrap(c.slot + j) + 1;
    return rows + static_cast<std::size_t>(slot) * G::kExtent;
  }

  // This thread's 16 bytes of input row yg (any integer) into dst, border-mapped.
  GPULAB_HD void loadChunk(T* dst, int yg, int tid) const {
    T* d = dst + tid * kVec;
    const int c = xs + tid * kVec;
    if (p.mode == BorderMode::Constant && (yg < 0 || yg >= in.height)) {
      for (int j = 0; j < kVec; ++j) d[j] = p.fill;
      return;
    }
    const T* src = in.row(borderIndex(yg, in.height, p.mode));
    if (c >= 0 && c + kVec <= in.width) {
      copy16Async(d, src + c);
      return;
    }
    for (int j = 0; j < kVec; ++j) {
      const int cm = borderIndex(c + j, in.width, p.mode);
      d[j] = cm < 0 ? p.fill : src[cm];
    }
  }

  // Phase 0: start the copies the group at c needs (nothing past the last step). The slots it
  // fills were last read kDepth + 1 groups earlier or before (ring: slots() rows apart), before a
  // barrier.
  GPULAB_HD void issue(int tid, Cursor c) const {
    for (int j = 0; j < kRows; ++j) {
      const int t = c.group * kRows + j;
      if (t >= steps) return;
      const int yEnter = y0 - p.radius + t;
      loadChunk(enterRow(c, j), yEnter, tid);
      if (!kRing && t >= 2 * p.radius + 1) loadChunk(leaveRow(c, j), yEnter - 2 * p.radius - 1, tid);
    }
  }

  // Phase 1: this thread's kVec columns of (entering row - leaving row) for row j of the group at
  // c, prefix-summed in place; returns their total. Steps past the last one contribute nothing.
  GPULAB_HD Acc delta(int tid, Cursor c, int j, Acc (&local)[kVec]) const {
    const int t = c.group * kRows + j;
    if (t >= steps) {
      for (int k = 0; k < kVec; ++k) local[k] = 0;
      return 0;
    }
    T enter[kVec];
    loadShared16(enterRow(c, j) + tid * kVec, enter);
    if (t >= 2 * p.radius + 1) {
      T leave[kVec];
      loadShared16(leaveRow(c, j) + tid * kVec, leave);
      for (int k = 0; k < kVec; ++k) local[k] = static_cast<Acc>(enter[k]) - static_cast<Acc>(leave[k]);
    } else {
      for (int k = 0; k < kVec; ++k) local[k] = static_cast<Acc>(enter[k]);
    }
    for (int k = 1; k < kVec; ++k) local[k] += local[k - 1];
    return local[kVec - 1];
  }

  // Phase 2 (after the warp scan of the totals): row j's warp-local inclusive prefix, and the
  // warp's total.
  GPULAB_HD void writePrefix(int tid, int j, const Acc (&local)[kVec], Acc warpExclusive) const {
    Acc values[kVec];
    for (int k = 0; k < kVec; ++k) values[k] = warpExclusive + local[k];
    Acc* dst = prefix(j) + tid * kVec;
    constexpr int kPerChunk = 16 / static_cast<int>(sizeof(Acc));
    for (int c = 0; c < kVec / kPerChunk; ++c) storeShared16(dst + c * kPerChunk, values + c * kPerChunk);
    if ((tid & 31) == 31) warpTotals(j)[tid >> 5] = values[kVec - 1];
  }

  // Phase 3 (after a barrier): every output column's horizontal window sum changes, at each step
  // of the group, by the sum of that step's row difference over the window; add that to the
  // column's vertical running sum and write each finished output row. Columns go to lanes in
  // stride 32, so shared reads and global writes are consecutive across the warp.
  GPULAB_HD void output(int tid, int g, Acc (&acc)[kVec]) const {
    const int lane = tid & 31;
    const int warp = tid >> 5;
    for (int k = 0; k < kVec; ++k) {
      const int o = warp * G::kWarpSpan + k * 32 + lane;
      if (o >= p.tileWidth) break;
      const int e = p.radiusUp + o;
      const int hi = e + p.radius;
      const int lo = e - p.radius - 1;  // >= -1; prefix(j)[-1] == 0
      const int warpHi = hi / G::kWarpSpan;
      const int warpLo = lo < 0 ? 0 : lo / G::kWarpSpan;
      Acc change[kRows];
      for (int j = 0; j < kRows; ++j) {
        const Acc* pre = prefix(j);
        const Acc* totals = warpTotals(j);
        change[j] = pre[hi] - pre[lo];
        for (int w = warpLo; w < warpHi; ++w) change[j] += totals[w];
      }
      const int x = x0 + o;
      for (int j = 0; j < kRows; ++j) {
        const int t = g * kRows + j;
        if (t >= steps) break;
        acc[k] += change[j];
        if (t >= 2 * p.radius && x < out.width)
          out.row(y0 + t - 2 * p.radius)[x] = finishMean<T>(acc[k], p.area, p.invArea);
      }
    }
  }

  // After the last group (f32): a column whose running sum ended non-finite met a NaN or inf, which
  // may have spoiled any of its later outputs; those left non-finite are recomputed from their
  // windows (boxWindowMeanExact: the finite ones are exact). Finite input costs the kVec tests.
  GPULAB_HD void repair(int tid, const Acc (&acc)[kVec]) const {
    if constexpr (std::is_same_v<T, float>) {
      const int lane = tid & 31;
      const int warp = tid >> 5;
      for (int k = 0; k < kVec; ++k) {
        const int o = warp * G::kWarpSpan + k * 32 + lane;
        const int x = x0 + o;
        if (o >= p.tileWidth || x >= out.width) break;
        if (!boxFinite(acc[k]))
          repairNonFiniteOutputs(in, out, 1, x, x + 1, y0, steps - 2 * p.radius, p.radius, p.mode, p.fill);
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Summed-area path, per thread (host-callable too)

template <class T>
using SatOf = typename BoxTypes<T>::Sat;

// sat[y * (width + 1) + x] = sum of in over [0, x) x [0, y); row 0 and column 0 are zero.
template <class Sat>
GPULAB_HD void satColumn(Sat* sat, int width, int height, int x) {
  const std::size_t stride = static_cast<std::size_t>(width) + 1;
  Sat run = 0;
  for (int y = 1; y <= height; ++y) {
    Sat* cell = sat + y * stride + x;
    run += *cell;
    *cell = run;
  }
}

// A NaN or inf in the table spoils every later prefix: an output that comes out non-finite is
// recomputed from its window (boxWindowMeanExact), one that comes out finite met finite samples only.
template <class T>
GPULAB_HD void boxFromSatPixel(Plane<const T> in, const SatOf<T>* sat, Plane<T> out, int x, int y, int radius,
                               BorderMode mode, T fill) {
  using Sat = SatOf<T>;
  const int width = out.width;
  const std::size_t stride = static_cast<std::size_t>(width) + 1;
  const WindowTaps tx = windowTaps(x - radius, x + radius + 1, width, mode);
  const WindowTaps ty = windowTaps(y - radius, y + radius + 1, out.height, mode);
  Sat sum = 0;
  for (int b = 0; b < WindowTaps::kCount; ++b) {
    if (ty.weight[b] == 0) continue;
    const Sat* row = sat + ty.index[b] * stride;
    Sat rowSum = 0;
    for (int a = 0; a < WindowTaps::kCount; ++a)
      if (tx.weight[a] != 0) rowSum += static_cast<Sat>(tx.weight[a]) * row[tx.index[a]];
    sum += static_cast<Sat>(ty.weight[b]) * rowSum;
  }
  const long long side = 2LL * radius + 1;
  const long long area = side * side;
  if (mode == BorderMode::Constant)
    sum += static_cast<Sat>(area - (side - tx.outside) * (side - ty.outside)) * static_cast<Sat>(fill);
  if constexpr (std::is_integral_v<T>) {
    out(x, y) = static_cast<T>((sum + area / 2) / area);
  } else {
    const T mean = static_cast<T>(static_cast<double>(sum) / static_cast<double>(area));
    out(x, y) = boxFinite(mean) ? mean : boxWindowMeanExact(in, 1, x, 0, y, radius, mode, fill);
  }
}

// ---------------------------------------------------------------------------------------------
// Fused path, per warp (host-callable too)
//
// A warp owns a strip of kExtent consecutive samples of a row (its output tile plus `halo`
// samples each side) and a segment of output rows, and walks down it. Each lane holds kPer
// consecutive samples of the strip and, for each of them, the vertical window sum V in a register:
// at each row step the entering row is added and the leaving row (read again, from L2) taken off.
// Once the window is full, each step gives one output row: the lanes prefix-sum V along the strip
// (per channel: samples of an interleaved row are C apart) through registers, warp shuffles and a
// small per-warp shared buffer, and each output is the difference of two prefixes, 2r+1 pixels
// apart. No block barrier; the rows of the next kFusedDepth steps are in flight while a step runs.

template <class T>
struct FusedTypes;
template <>
struct FusedTypes<float> {
  using Acc = double;  // V and its prefixes: sums of floats in double, as the other paths
  static constexpr int kPer = 8;
};
template <>
struct FusedTypes<std::uint8_t> {
  using Acc = unsigned;  // exact: every window sum is below 2^32 (arithmetic modulo 2^32 on the way)
  static constexpr int kPer = 16;
};
template <>
struct FusedTypes<std::uint16_t> {
  using Acc = unsigned;  // 65535 x 193^2 < 2^32 at the largest fused radius (96)
  static constexpr int kPer = 8;
};

// Rows per warp of the fused path's segments when the environment variable GPULAB_BOX_FUSED_ROWS
// sets them (a tuning knob for benchmarks; results do not depend on it); 0: planned.
inline int fusedForcedRows() {
  static const int rows = tuningRows("GPULAB_BOX_FUSED_ROWS");
  return rows;
}

constexpr int kFusedWarps = 4;      // warps per block; they do not interact
constexpr int kFusedDepth = 2;      // row steps loaded ahead of the one computed
constexpr int kFusedMinBlocks = 4;  // per SM: caps the registers at 128 a thread (16 warps an SM)

constexpr int gcdInt(int a, int b) { return b == 0 ? a : gcdInt(b, a % b); }

template <class T, int C>
struct FusedGeometry {
  using Acc = typename FusedTypes<T>::Acc;
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // samples per 16-byte load
  static constexpr int kPer = FusedTypes<T>::kPer;               // samples a lane holds per row
  static constexpr int kLoads = kPer / kVec;
  static constexpr int kExtent = 32 * kPer;                        // samples a warp holds per row, halo included
  static constexpr int kAlign = kVec / gcdInt(kVec, C) * C;        // tile starts: whole pixels and 16 bytes
  static constexpr int kGap = 16 / static_cast<int>(sizeof(Acc));  // padding after each lane's prefixes
  static constexpr int kPad = (C + kGap - 1) / kGap * kGap;        // zeros before the first prefix (>= C)
  static constexpr int kBuffer = kPad + 32 * (kPer + kGap);        // one prefix row, in Acc
  static constexpr int kMaxRadius = 3 * kExtent / 8 / C;           // output tile at least a quarter of the strip
  static_assert(kPad >= C && kPer % kVec == 0);

  static int halo(int radius) { return divUp(radius * C, kVec) * kVec; }
  // Where prefix k (k in [-C, kExtent)) sits in the buffer: lanes' runs kGap apart (no bank conflicts).
  GPULAB_HD static int slot(int k) { return kPad + k + (k >= 0 ? k / kPer : 0) * kGap; }
};

template <class T>
struct FusedParams {
  int radius = 0;
  int halo = 0;       ///< samples each side of a tile: radius x C rounded up to 16 bytes
  int tileWidth = 0;  ///< output samples per warp (a multiple of FusedGeometry::kAlign)
  int rowsPerWarp = 0;
  int tilesX = 0;
  int tilesY = 0;
  int width = 0;  ///< pixels
  int channels = 1;
  BorderMode mode = BorderMode::Reflect101;
  T fill{};
  BoxArea area;
};

template <class T, int C>
struct FusedWarp {
  using G = FusedGeometry<T, C>;
  using Acc = typename G::Acc;
  static constexpr int kPer = G::kPer;
  struct alignas(16) Chunk {
    T v[kPer];
  };

  Plane<const T> in;
  Plane<T> out;
  const FusedParams<T>& p;
  int rowElems, x0, xs, y0, steps;
  bool active;

  GPULAB_HD FusedWarp(Plane<const T> in_, Plane<T> out_, const FusedParams<T>& p_, int tile)
      : in(in_), out(out_), p(p_) {
    rowElems = in.width * C;
    const int ty = tile / p.tilesX;
    active = ty < p.tilesY;
    x0 = (tile - ty * p.tilesX) * p.tileWidth;
    xs = x0 - p.halo;
    y0 = ty * p.rowsPerWarp;
    const int rowsOut = in.height - y0 < p.rowsPerWarp ? in.height - y0 : p.rowsPerWarp;
    steps = rowsOut + 2 * p.radius;
  }

  // This lane's kPer samples of input row y (any integer), border-mapped in both directions.
  GPULAB_HD void load(Chunk& c, int y, int lane) const {
    const int ym = borderIndex(y, in.height, p.mode);
    if (ym < 0) {
      for (int j = 0; j < kPer; ++j) c.v[j] = p.fill;
      return;
    }
    const T* row = in.row(ym);
    const int k0 = xs + lane * kPer;
    if (k0 >= 0 && k0 + kPer <= rowElems) {
#if defined(__CUDA_ARCH__)
      const uint4* src = reinterpret_cast<const uint4*>(row + k0);
      uint4* dst = reinterpret_cast<uint4*>(c.v);
#pragma unroll
      for (int i = 0; i < G::kLoads; ++i) dst[i] = __ldg(src + i);
#else
      std::memcpy(c.v, row + k0, sizeof(c.v));
#endif
      return;
    }
    for (int j = 0; j < kPer; ++j) {
      const int k = k0 + j;
      const int px = floorDivide(k, C);
      const int pm = borderIndex(px, in.width, p.mode);
      c.v[j] = pm < 0 ? p.fill : row[pm * C + (k - px * C)];
    }
  }

  // Step t: the row entering the vertical window, and (t >= 2r+1) the one leaving it.
  GPULAB_HD int enterRow(int t) const { return y0 - p.radius + t; }
  GPULAB_HD bool leaves(int t) const { return t >= 2 * p.radius + 1; }
  GPULAB_HD bool outputs(int t) const { return t >= 2 * p.radius; }

  GPULAB_HD void fetch(int t, Chunk& enter, Chunk& leave, int lane) const {
    if (t >= steps) return;
    load(enter, enterRow(t), lane);
    if (leaves(t)) load(leave, enterRow(t) - 2 * p.radius - 1, lane);
  }

  GPULAB_HD static void vertical(Acc (&v)[kPer], const Chunk& enter, const Chunk& leave, bool leaving) {
    for (int j = 0; j < kPer; ++j) v[j] += static_cast<Acc>(enter.v[j]);
    if (leaving)
      for (int j = 0; j < kPer; ++j) v[j] -= static_cast<Acc>(leave.v[j]);
  }

  // The class (channel) of this lane's sample j, relative to the strip: (lane kPer + j) mod C.
  GPULAB_HD static int firstClass(int lane) { return (lane * kPer) % C; }

  // Per-channel inclusive prefix of V within the lane, and the lane's total per strip class.
  GPULAB_HD static void localPrefix(int lane, const Acc (&v)[kPer], Acc (&local)[kPer], Acc (&total)[C]) {
    for (int j = 0; j < kPer; ++j) local[j] = j >= C ? v[j] + local[j - C] : v[j];
    Acc rel[C];
    for (int j = kPer - C; j < kPer; ++j) rel[j % C] = local[j];
    const int s = firstClass(lane);
    for (int a = 0; a < C; ++a) {
      Acc pick = rel[0];
      for (int m = 1; m < C; ++m)
        if ((a - s + C) % C == m) pick = rel[m];
      total[a] = pick;
    }
  }

  // With excl[a] the sum of class a over the lanes before this one: the lane's prefixes, to the buffer.
  GPULAB_HD static void writePrefix(int lane, Acc* q, const Acc (&local)[kPer], const Acc (&excl)[C]) {
    const int s = firstClass(lane);
    Acc rel[C];
    for (int m = 0; m < C; ++m) {
      Acc pick = excl[0];
      for (int a = 1; a < C; ++a)
        if ((s + m) % C == a) pick = excl[a];
      rel[m] = pick;
    }
    alignas(16) Acc values[kPer];
    for (int j = 0; j < kPer; ++j) values[j] = local[j] + rel[j % C];
    Acc* dst = q + G::slot(lane * kPer);
    constexpr int kPerStore = 16 / static_cast<int>(sizeof(Acc));
    for (int i = 0; i < kPer / kPerStore; ++i) storeShared16(dst + i * kPerStore, values + i * kPerStore);
  }

  GPULAB_HD T finish(Acc sum) const {
    if constexpr (std::is_same_v<T, float>) {
      return static_cast<float>(sum * p.area.inv);
    } else {
      return boxRoundedMean<T>(sum, p.area.count, p.area.invF, p.area.inv);
    }
  }

  // Output row y from the prefixes in q: lanes take samples 32 apart (consecutive in the warp).
  GPULAB_HD void output(int lane, const Acc* q, int y) const {
    T* dst = out.row(y);
    const int reach = p.radius * C;
    const int end = rowElems - x0 < p.tileWidth ? rowElems - x0 : p.tileWidth;
    for (int o = lane; o < end; o += 32) {
      const int e = p.halo + o;
      dst[x0 + o] = finish(q[G::slot(e + reach)] - q[G::slot(e - reach - C)]);
    }
  }

  // After the last step (f32): whether this lane's vertical sums ended non-finite (a NaN or inf
  // entered one of its columns: the sums are absorbing, so one test at the end sees it).
  GPULAB_HD static bool spoiled(const Acc (&v)[kPer]) {
    bool any = false;
    for (int j = 0; j < kPer; ++j) any = any || !boxFinite(static_cast<double>(v[j]));
    return any;
  }

  // When any lane's sums are spoiled, the prefixes of every column to the right of it were too: each
  // lane recomputes its own outputs that came out non-finite from their windows (the finite ones
  // are exact).
  GPULAB_HD void repair(int lane) const {
    if constexpr (std::is_same_v<T, float>) {
      const int end = rowElems - x0 < p.tileWidth ? rowElems - x0 : p.tileWidth;
      repairNonFiniteOutputs(in, out, C, x0 + lane, x0 + end, y0, steps - 2 * p.radius, p.radius, p.mode, p.fill);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Kernels

template <class A>
__device__ __forceinline__ A warpInclusiveScan(A v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const A n = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += n;
  }
  return v;
}

template <class T, bool kRing>
__global__ void __launch_bounds__(kThreads) boxTiledKernel(Plane<const T> in, Plane<T> out, TiledParams<T> p) {
  using Tile = BoxTile<T, kRing>;
  using Acc = typename Tile::Acc;
  constexpr int kRows = Tile::kRows;
  constexpr int kVec = Tile::kVec;
  extern __shared__ __align__(16) unsigned char shared[];
  const Tile tile(in, out, p, shared, blockIdx.x, blockIdx.y);
  const int tid = threadIdx.x;
  if (tid < kRows) tile.prefix(tid)[-1] = 0;  // read only after the first barrier, never written again

  Acc acc[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) acc[k] = 0;

  typename Tile::Cursor load{}, group{};
  for (int g = 0; g < Tile::kDepth; ++g) {
    tile.issue(tid, load);
    __pipeline_commit();
    load = tile.advance(load);
  }
  for (; group.group < tile.groups; group = tile.advance(group)) {
    tile.issue(tid, load);  // kDepth groups ahead
    __pipeline_commit();
    load = tile.advance(load);
    __pipeline_wait_prior(Tile::kDepth);  // this thread's copies for this group have landed
    __syncthreads();                      // everyone's have; the last group's prefix sums are consumed
    Acc local[kRows][kVec];
    Acc total[kRows];
    Acc inclusive[kRows];
#pragma unroll
    for (int j = 0; j < kRows; ++j) total[j] = tile.delta(tid, group, j, local[j]);
#pragma unroll
    for (int j = 0; j < kRows; ++j) inclusive[j] = warpInclusiveScan(total[j]);
#pragma unroll
    for (int j = 0; j < kRows; ++j) tile.writePrefix(tid, j, local[j], inclusive[j] - total[j]);
    __syncthreads();
    tile.output(tid, group.group, acc);
  }
  tile.repair(tid, acc);
}

template <class A>
__device__ __forceinline__ A warpExclusiveScan(A v) {
  return warpInclusiveScan(v) - v;
}

template <class T, int C>
__global__ void __launch_bounds__(kFusedWarps * 32, kFusedMinBlocks)
    boxFusedKernel(Plane<const T> in, Plane<T> out, FusedParams<T> p) {
  using W = FusedWarp<T, C>;
  using G = typename W::G;
  using Acc = typename W::Acc;
  using Chunk = typename W::Chunk;
  constexpr int kPer = W::kPer;
  __shared__ __align__(16) Acc buffers[kFusedWarps][2][G::kBuffer];
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const W w(in, out, p, blockIdx.x * kFusedWarps + warp);
  if (!w.active) return;  // warps never wait for each other: no block barrier below
  for (int i = lane; i < G::kPad; i += 32) buffers[warp][0][i] = buffers[warp][1][i] = Acc(0);
  __syncwarp();

  Acc v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) v[j] = Acc(0);
  Chunk enter[kFusedDepth] = {}, leave[kFusedDepth] = {};
#pragma unroll
  for (int u = 0; u < kFusedDepth; ++u) w.fetch(u, enter[u], leave[u], lane);
  for (int t0 = 0; t0 < w.steps; t0 += kFusedDepth) {
#pragma unroll
    for (int u = 0; u < kFusedDepth; ++u) {
      const int t = t0 + u;  // warp-uniform
      if (t >= w.steps) break;
      const Chunk e = enter[u], l = leave[u];
      w.fetch(t + kFusedDepth, enter[u], leave[u], lane);
      W::vertical(v, e, l, w.leaves(t));
      if (!w.outputs(t)) continue;
      Acc local[kPer], total[C], excl[C];
      W::localPrefix(lane, v, local, total);
#pragma unroll
      for (int a = 0; a < C; ++a) excl[a] = warpExclusiveScan(total[a]);
      Acc* q = buffers[warp][t & 1];
      W::writePrefix(lane, q, local, excl);
      __syncwarp();  // the buffer written two steps ago was read before the last __syncwarp
      w.output(lane, q, w.y0 + t - 2 * p.radius);
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (__any_sync(0xffffffffu, W::spoiled(v))) w.repair(lane);  // NaN or inf in the strip: rare
  }
}

// One warp per row: prefix sums along the row into sat row y+1.
template <class T>
__global__ void __launch_bounds__(kThreads) satRowsKernel(Plane<const T> in, SatOf<T>* sat) {
  using Sat = SatOf<T>;
  const int lane = threadIdx.x & 31;
  const int y = blockIdx.x * kWarps + (threadIdx.x >> 5);
  if (y >= in.height) return;
  const std::size_t stride = static_cast<std::size_t>(in.width) + 1;
  if (y == 0)
    for (int x = lane; x <= in.width; x += 32) sat[x] = 0;
  Sat* row = sat + (y + 1) * stride;
  if (lane == 0) row[0] = 0;
  const T* src = in.row(y);
  Sat carry = 0;
  for (int x0 = 0; x0 < in.width; x0 += 32) {
    const int x = x0 + lane;
    Sat v = x < in.width ? static_cast<Sat>(src[x]) : Sat(0);
    v = warpInclusiveScan(v);
    if (x < in.width) row[x + 1] = carry + v;
    carry += __shfl_sync(0xffffffffu, v, 31);
  }
}

template <class Sat>
__global__ void __launch_bounds__(kThreads) satColumnsKernel(Sat* sat, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  if (x <= width) satColumn(sat, width, height, x);
}

template <class T>
__global__ void __launch_bounds__(256)
    boxFromSatKernel(Plane<const T> in, const SatOf<T>* sat, Plane<T> out, int radius, BorderMode mode, T fill) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < out.width && y < out.height) boxFromSatPixel<T>(in, sat, out, x, y, radius, mode, fill);
}

// ---------------------------------------------------------------------------------------------
// Host side: validation, path choice, launch

template <class T>
void validate(Plane<const T> in, Plane<T> out, int radius, bool tiled) {
  if (radius < 0)
    throw std::invalid_argument("box blur radius " + std::to_string(radius) + " is negative: use 0 or more");
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("box blur needs input and output planes of one nonempty size, got " +
                                std::to_string(in.width) + "x" + std::to_string(in.height) + " and " +
                                std::to_string(out.width) + "x" + std::to_string(out.height));
  if (planesOverlap(in, out))
    throw std::invalid_argument("box blur cannot run in place: give it a separate output plane");
  if (tiled && !aligned16(in.data, in.pitch))
    throw std::invalid_argument(
        "the tiled box blur needs a 16-byte aligned input plane with a pitch that is a "
        "multiple of 16 bytes (DeviceImage planes are)");
}

// Whether Auto takes the sweep path on rows of `channels` channels: wherever its radius fits. On an
// H100 (2026-11-27) it measured faster than the fused path at each radius tried (the bench's window
// sizes, `boxK` with K = 2r + 1): f32 4096^2 box15 (r=7) 0.081 ms (fused 0.162), box31 (r=15) 0.116
// (0.188); 6000x4000 RGB u8 interleaved box15 (r=7) 0.123 (0.462). Its
// largest radius is at least the fused path's for every type and channel count, so Auto takes the
// fused path only where a caller names it.
template <class T>
bool sweepIsAuto(int radius, int channels) {
  return radius >= 1 && radius <= sweep::maxRadius<T>(channels);
}

template <class T>
BoxBlurPath resolvePath(BoxBlurPath path, int radius, std::size_t sharedOptin) {
  if (path != BoxBlurPath::Auto) return path;
  if (sweepIsAuto<T>(radius, 1)) return BoxBlurPath::Sweep;
  if (radius > Tiling<T>::kMaxRadius) return BoxBlurPath::SummedArea;
  if (Tiling<T>::sharedBytes(true, radius) <= std::min(kRingSharedLimit, sharedOptin)) return BoxBlurPath::TiledRing;
  return BoxBlurPath::TiledStream;
}

template <class T>
void checkTiledRadius(int radius) {
  if (radius > Tiling<T>::kMaxRadius)
    throw std::invalid_argument("the tiled box blur takes radii up to " + std::to_string(Tiling<T>::kMaxRadius) +
                                ", not " + std::to_string(radius) + ": use the summed-area path");
}

template <class T, bool kRing>
void planTiled(BoxBlurPlan& plan, int device) {
  checkTiledRadius<T>(plan.radius);
  int optin = 0, sms = 0, perSm = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t sharedBytes = Tiling<T>::sharedBytes(kRing, plan.radius);
  if (sharedBytes > static_cast<std::size_t>(optin))
    throw std::invalid_argument("the ring box blur for radius " + std::to_string(plan.radius) + " needs " +
                                std::to_string(sharedBytes) + " bytes of shared memory per block; this GPU has " +
                                std::to_string(optin) + ": use the stream or summed-area path");
  auto kernel = boxTiledKernel<T, kRing>;
  if (sharedBytes > 48 * 1024)
    GPULAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(sharedBytes)));
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, sharedBytes));
  const TiledShape shape = tiledShape<T>(plan.width, plan.height, plan.radius, kRing, std::max(1, perSm) * sms);
  plan.tileWidth = shape.tileWidth;
  plan.rowsPerBlock = shape.rowsPerBlock;
  plan.tilesX = shape.tilesX;
  plan.tilesY = shape.tilesY;
  plan.sharedBytes = shape.sharedBytes;
}

template <class T, bool kRing>
void launchTiled(const BoxBlurPlan& plan, Plane<const T> in, Plane<T> out, BorderMode mode, T fill,
                 cudaStream_t stream) {
  const TiledShape shape{plan.tileWidth, plan.rowsPerBlock, plan.tilesX, plan.tilesY, plan.sharedBytes};
  const TiledParams<T> params = tiledParams<T>(shape, plan.radius, kRing, mode, fill);
  boxTiledKernel<T, kRing><<<dim3(shape.tilesX, shape.tilesY), kThreads, shape.sharedBytes, stream>>>(in, out, params);
  GPULAB_CHECK_LAUNCH(kRing ? "boxTiledKernel<ring>" : "boxTiledKernel<stream>");
}

// Fused path: tiles of the row as wide as the strip allows (balanced), then row segments short
// enough for about four waves of warps (at least 16 rows): measured on an H100, a warp's steps are
// latency-bound, so many short segments beat few long ones although each re-reads 2r rows.
template <class T, int C>
FusedParams<T> fusedParams(int width, int height, int radius, BorderMode mode, T fill, int residentWarps) {
  using G = FusedGeometry<T, C>;
  FusedParams<T> p;
  p.radius = radius;
  p.halo = G::halo(radius);
  p.width = width;
  p.channels = C;
  const int rowElems = width * C;
  const int maxTile = (G::kExtent - 2 * p.halo) / G::kAlign * G::kAlign;
  int tilesX = divUp(rowElems, maxTile);
  p.tileWidth = divUp(divUp(rowElems, tilesX), G::kAlign) * G::kAlign;
  p.tilesX = divUp(rowElems, p.tileWidth);
  const int segments = std::max(1, 4 * residentWarps / p.tilesX);
  const int minRows = 16;
  p.rowsPerWarp =
      std::min(height, fusedForcedRows() > 0 ? fusedForcedRows() : std::max(minRows, divUp(height, segments)));
  p.tilesY = divUp(height, p.rowsPerWarp);
  p.mode = mode;
  p.fill = fill;
  p.area = boxAreaOf(radius);
  return p;
}

template <class T>
int fusedMaxRadius(int channels) {
  switch (channels) {
    case 1:
      return FusedGeometry<T, 1>::kMaxRadius;
    case 2:
      return FusedGeometry<T, 2>::kMaxRadius;
    case 3:
      return FusedGeometry<T, 3>::kMaxRadius;
    default:
      return FusedGeometry<T, 4>::kMaxRadius;
  }
}

template <class T>
void checkFusedRadius(int radius, int channels) {
  if (radius > fusedMaxRadius<T>(channels))
    throw std::invalid_argument("the fused box blur takes radii up to " + std::to_string(fusedMaxRadius<T>(channels)) +
                                " for " + std::to_string(channels) + " interleaved channel(s), not " +
                                std::to_string(radius) + ": use the stream or summed-area path");
}

template <class T>
void checkSweepRadius(int radius, int channels) {
  if (radius > sweep::maxRadius<T>(channels))
    throw std::invalid_argument("the sweep box blur takes radii up to " +
                                std::to_string(sweep::maxRadius<T>(channels)) + " for " + std::to_string(channels) +
                                " interleaved channel(s), not " + std::to_string(radius) +
                                ": use the fused, stream or summed-area path");
}

template <class T, int C>
int fusedResidentWarps(int device) {
  int sms = 0, perSm = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, boxFusedKernel<T, C>, kFusedWarps * 32, 0));
  return std::max(1, perSm) * sms * kFusedWarps;
}

template <class T, int C>
void launchFusedWith(const FusedParams<T>& p, Plane<const T> in, Plane<T> out, cudaStream_t stream) {
  const int warps = p.tilesX * p.tilesY;
  boxFusedKernel<T, C><<<divUp(warps, kFusedWarps), kFusedWarps * 32, 0, stream>>>(in, out, p);
  GPULAB_CHECK_LAUNCH("boxFusedKernel");
}

template <class T, int C>
void launchFusedChannels(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T fill, int residentWarps,
                         cudaStream_t stream) {
  launchFusedWith<T, C>(fusedParams<T, C>(in.width, in.height, radius, mode, fill, residentWarps), in, out, stream);
}

// The fused warp code on the host, lane by lane and step by step (the shuffles as loops).
template <class T, int C>
void emulateFused(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T fill, int residentWarps) {
  using W = FusedWarp<T, C>;
  using G = typename W::G;
  using Acc = typename W::Acc;
  constexpr int kPer = W::kPer;
  const FusedParams<T> p = fusedParams<T, C>(in.width, in.height, radius, mode, fill, residentWarps);
  struct Lane {
    Acc v[kPer];
    Acc local[kPer];
    Acc total[C];
    Acc excl[C];
  };
  std::vector<Lane> lanes(32);
  std::vector<Acc> buffer(G::kBuffer);
  for (int tile = 0; tile < p.tilesX * p.tilesY; ++tile) {
    const W w(in, out, p, tile);
    if (!w.active) continue;
    // Poison the buffer (a read before a write shows), but for the zeros before the first prefix.
    std::fill(buffer.begin(), buffer.end(), static_cast<Acc>(std::is_same_v<T, float> ? 1e300 : 0xdeadbeefu));
    std::fill(buffer.begin(), buffer.begin() + G::kPad, Acc(0));
    for (Lane& l : lanes) std::fill(std::begin(l.v), std::end(l.v), Acc(0));
    for (int t = 0; t < w.steps; ++t) {
      for (int lane = 0; lane < 32; ++lane) {
        typename W::Chunk e{}, l{};
        w.fetch(t, e, l, lane);
        W::vertical(lanes[lane].v, e, l, w.leaves(t));
      }
      if (!w.outputs(t)) continue;
      for (int lane = 0; lane < 32; ++lane) W::localPrefix(lane, lanes[lane].v, lanes[lane].local, lanes[lane].total);
      for (int a = 0; a < C; ++a) {
        Acc run = 0;
        for (Lane& l : lanes) {
          l.excl[a] = run;
          run += l.total[a];
        }
      }
      for (int lane = 0; lane < 32; ++lane) W::writePrefix(lane, buffer.data(), lanes[lane].local, lanes[lane].excl);
      for (int lane = 0; lane < 32; ++lane) w.output(lane, buffer.data(), w.y0 + t - 2 * p.radius);
    }
    bool spoiled = false;
    for (const Lane& l : lanes) spoiled = spoiled || W::spoiled(l.v);
    if (spoiled)
      for (int lane = 0; lane < 32; ++lane) w.repair(lane);
  }
}

template <class T>
void dispatchChannels(int channels, auto&& f) {
  switch (channels) {
    case 1:
      f(std::integral_constant<int, 1>{});
      return;
    case 2:
      f(std::integral_constant<int, 2>{});
      return;
    case 3:
      f(std::integral_constant<int, 3>{});
      return;
    case 4:
      f(std::integral_constant<int, 4>{});
      return;
    default:
      throw std::invalid_argument("the fused box blur takes 1 to 4 interleaved channels, not " +
                                  std::to_string(channels));
  }
}

template <class T>
void launchSummedArea(const BoxBlurPlan& plan, Plane<const T> in, Plane<T> out, BorderMode mode, T fill, void* scratch,
                      std::size_t scratchBytes, cudaStream_t stream) {
  if (scratch == nullptr || scratchBytes < plan.scratchBytes)
    throw std::invalid_argument("the summed-area box blur needs " + std::to_string(plan.scratchBytes) +
                                " bytes of scratch, got " + std::to_string(scratchBytes));
  auto* sat = static_cast<SatOf<T>*>(scratch);
  satRowsKernel<T><<<divUp(in.height, kWarps), kThreads, 0, stream>>>(in, sat);
  GPULAB_CHECK_LAUNCH("satRowsKernel");
  satColumnsKernel<SatOf<T>><<<divUp(in.width, kThreads), kThreads, 0, stream>>>(sat, in.width, in.height);
  GPULAB_CHECK_LAUNCH("satColumnsKernel");
  const dim3 block(32, 8);
  boxFromSatKernel<T>
      <<<dim3(divUp(in.width, 32), divUp(in.height, 8)), block, 0, stream>>>(in, sat, out, plan.radius, mode, fill);
  GPULAB_CHECK_LAUNCH("boxFromSatKernel");
}

// ---------------------------------------------------------------------------------------------
// Host emulation

template <class T, bool kRing>
void emulateTiled(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T fill, int residentBlocks) {
  using Tile = BoxTile<T, kRing>;
  using Acc = typename Tile::Acc;
  constexpr int kVec = Tile::kVec;
  constexpr int kRows = Tile::kRows;
  checkTiledRadius<T>(radius);
  const TiledShape shape = tiledShape<T>(in.width, in.height, radius, kRing, residentBlocks);
  const TiledParams<T> params = tiledParams<T>(shape, radius, kRing, mode, fill);
  std::vector<uint4> shared(divUp(static_cast<int>(shape.sharedBytes), 16));
  struct Lane {
    Acc acc[kVec];
    Acc local[kRows][kVec];
    Acc total[kRows];
    Acc inclusive[kRows];
  };
  std::vector<Lane> lanes(kThreads);
  for (int by = 0; by < shape.tilesY; ++by)
    for (int bx = 0; bx < shape.tilesX; ++bx) {
      // Poison the shared memory so that a read before a write shows.
      std::fill(shared.begin(), shared.end(), uint4{0x7fc00000u, 0x7fc00000u, 0x7fc00000u, 0x7fc00000u});
      const Tile tile(in, out, params, reinterpret_cast<unsigned char*>(shared.data()), bx, by);
      for (int j = 0; j < kRows; ++j) tile.prefix(j)[-1] = 0;
      for (Lane& l : lanes) std::fill(std::begin(l.acc), std::end(l.acc), Acc(0));
      typename Tile::Cursor load{}, group{};
      for (int g = 0; g < Tile::kDepth; ++g) {
        for (int tid = 0; tid < kThreads; ++tid) tile.issue(tid, load);
        load = tile.advance(load);
      }
      for (; group.group < tile.groups; group = tile.advance(group)) {
        for (int tid = 0; tid < kThreads; ++tid) tile.issue(tid, load);
        load = tile.advance(load);
        for (int tid = 0; tid < kThreads; ++tid)
          for (int j = 0; j < kRows; ++j) lanes[tid].total[j] = tile.delta(tid, group, j, lanes[tid].local[j]);
        for (int w = 0; w < kWarps; ++w)
          for (int j = 0; j < kRows; ++j) {
            Acc run = 0;
            for (int l = 0; l < 32; ++l) lanes[w * 32 + l].inclusive[j] = run += lanes[w * 32 + l].total[j];
          }
        for (int tid = 0; tid < kThreads; ++tid)
          for (int j = 0; j < kRows; ++j)
            tile.writePrefix(tid, j, lanes[tid].local[j], lanes[tid].inclusive[j] - lanes[tid].total[j]);
        for (int tid = 0; tid < kThreads; ++tid) tile.output(tid, group.group, lanes[tid].acc);
      }
      for (int tid = 0; tid < kThreads; ++tid) tile.repair(tid, lanes[tid].acc);
    }
}

template <class T>
void emulateSummedArea(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T fill) {
  using Sat = SatOf<T>;
  const std::size_t stride = static_cast<std::size_t>(in.width) + 1;
  std::vector<Sat> sat(stride * (in.height + 1), Sat(0));
  for (int y = 0; y < in.height; ++y) {  // satRowsKernel: running sums along the row
    Sat run = 0;
    for (int x = 0; x < in.width; ++x) sat[(y + 1) * stride + x + 1] = run += static_cast<Sat>(in(x, y));
  }
  for (int x = 1; x <= in.width; ++x) satColumn(sat.data(), in.width, in.height, x);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) boxFromSatPixel<T>(in, sat.data(), out, x, y, radius, mode, fill);
}

void copyPlane(const void* src, std::size_t srcPitch, void* dst, std::size_t dstPitch, std::size_t rowBytes, int rows) {
  for (int y = 0; y < rows; ++y)
    std::memcpy(static_cast<unsigned char*>(dst) + y * dstPitch, static_cast<const unsigned char*>(src) + y * srcPitch,
                rowBytes);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public entry points

template <class T>
int boxBlurMaxTiledRadius() {
  return Tiling<T>::kMaxRadius;
}

template <class T>
BoxBlurPath boxBlurResolvePath(BoxBlurPath path, int radius, int device) {
  int optin = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return resolvePath<T>(path, radius, static_cast<std::size_t>(optin));
}

template <class T>
std::size_t boxBlurSharedBytes(BoxBlurPath path, int radius) {
  if (path != BoxBlurPath::TiledRing && path != BoxBlurPath::TiledStream) return 0;
  return Tiling<T>::sharedBytes(path == BoxBlurPath::TiledRing, radius);
}

template <class T>
std::size_t boxBlurScratchBytes(BoxBlurPath path, int width, int height) {
  if (path != BoxBlurPath::SummedArea) return 0;
  return (static_cast<std::size_t>(width) + 1) * (static_cast<std::size_t>(height) + 1) * sizeof(SatOf<T>);
}

template <class T>
BoxBlurPlan planBoxBlur(int width, int height, int radius, BoxBlurPath path) {
  if (radius < 0)
    throw std::invalid_argument("box blur radius " + std::to_string(radius) + " is negative: use 0 or more");
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("box blur needs a nonempty plane, not " + std::to_string(width) + "x" +
                                std::to_string(height));
  BoxBlurPlan plan;
  GPULAB_CUDA_CHECK(cudaGetDevice(&plan.device));
  plan.path = boxBlurResolvePath<T>(path, radius, plan.device);
  plan.width = width;
  plan.height = height;
  plan.radius = radius;
  if (radius == 0) return plan;  // a copy
  switch (plan.path) {
    case BoxBlurPath::TiledRing:
      planTiled<T, true>(plan, plan.device);
      break;
    case BoxBlurPath::TiledStream:
      planTiled<T, false>(plan, plan.device);
      break;
    case BoxBlurPath::Fused: {
      checkFusedRadius<T>(radius, 1);
      const FusedParams<T> p =
          fusedParams<T, 1>(width, height, radius, BorderMode::Reflect101, T{}, fusedResidentWarps<T, 1>(plan.device));
      plan.tileWidth = p.tileWidth;
      plan.rowsPerBlock = p.rowsPerWarp;
      plan.tilesX = p.tilesX;
      plan.tilesY = p.tilesY;
      break;
    }
    case BoxBlurPath::Sweep:
      checkSweepRadius<T>(radius, 1);  // tiled at launch, for the device current then
      break;
    default:
      plan.scratchBytes = boxBlurScratchBytes<T>(BoxBlurPath::SummedArea, width, height);
      break;
  }
  return plan;
}

template <class T>
void launchBoxBlur(const BoxBlurPlan& plan, Plane<const T> in, Plane<T> out, BorderMode mode, T borderValue,
                   void* scratch, std::size_t scratchBytes, cudaStream_t stream) {
  if (plan.path == BoxBlurPath::Auto) throw std::invalid_argument("launchBoxBlur needs a plan from planBoxBlur");
  if (in.width != plan.width || in.height != plan.height)
    throw std::invalid_argument("the box blur plan is for " + std::to_string(plan.width) + "x" +
                                std::to_string(plan.height) + " planes, not " + std::to_string(in.width) + "x" +
                                std::to_string(in.height));
  const bool tiled =
      plan.path == BoxBlurPath::TiledRing || plan.path == BoxBlurPath::TiledStream || plan.path == BoxBlurPath::Fused;
  validate(in, out, plan.radius, tiled && plan.radius > 0);
  if (plan.radius == 0) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, in.width * sizeof(T), in.height,
                                        cudaMemcpyDeviceToDevice, stream));
    return;
  }
  switch (plan.path) {
    case BoxBlurPath::TiledRing:
      launchTiled<T, true>(plan, in, out, mode, borderValue, stream);
      return;
    case BoxBlurPath::TiledStream:
      launchTiled<T, false>(plan, in, out, mode, borderValue, stream);
      return;
    case BoxBlurPath::Fused: {
      FusedParams<T> p = fusedParams<T, 1>(in.width, in.height, plan.radius, mode, borderValue, 1);
      p.tileWidth = plan.tileWidth;  // the plan's tiling, for its device
      p.rowsPerWarp = plan.rowsPerBlock;
      p.tilesX = plan.tilesX;
      p.tilesY = plan.tilesY;
      launchFusedWith<T, 1>(p, in, out, stream);
      return;
    }
    case BoxBlurPath::Sweep:
      if constexpr (std::is_same_v<T, float>) {
        if (boxstream::takes(plan.radius)) {
          boxstream::launch(in, out, plan.radius, mode, borderValue, stream);
          return;
        }
      }
      sweep::launch<T>(in, out, 1, plan.radius, mode, borderValue, stream);
      return;
    default:
      launchSummedArea<T>(plan, in, out, mode, borderValue, scratch, scratchBytes, stream);
      return;
  }
}

template <class T>
void launchBoxBlur(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, BoxBlurPath path,
                   void* scratch, std::size_t scratchBytes, cudaStream_t stream) {
  launchBoxBlur<T>(planBoxBlur<T>(in.width, in.height, radius, path), in, out, mode, borderValue, scratch, scratchBytes,
                   stream);
}

template <class T>
void runBoxBlurOnHost(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, BoxBlurPath path,
                      int residentBlocks) {
  path = resolvePath<T>(path, radius, kDefaultSharedOptin);
  // As launchBoxBlur: the tiled and fused paths need 16-byte aligned input rows, the others none.
  const bool tiled = path == BoxBlurPath::TiledRing || path == BoxBlurPath::TiledStream || path == BoxBlurPath::Fused;
  validate(in, out, radius, tiled && radius > 0);
  if (radius == 0) {
    copyPlane(in.data, in.pitch, out.data, out.pitch, in.width * sizeof(T), in.height);
    return;
  }
  switch (path) {
    case BoxBlurPath::TiledRing:
      emulateTiled<T, true>(in, out, radius, mode, borderValue, residentBlocks);
      return;
    case BoxBlurPath::TiledStream:
      emulateTiled<T, false>(in, out, radius, mode, borderValue, residentBlocks);
      return;
    case BoxBlurPath::Fused:
      checkFusedRadius<T>(radius, 1);
      emulateFused<T, 1>(in, out, radius, mode, borderValue, residentBlocks * kFusedWarps);
      return;
    case BoxBlurPath::Sweep:
      checkSweepRadius<T>(radius, 1);
      if constexpr (std::is_same_v<T, float>) {
        if (boxstream::takes(radius)) {
          boxstream::emulate(in, out, radius, mode, borderValue, residentBlocks);
          return;
        }
      }
      sweep::emulate<T>(in, out, 1, radius, mode, borderValue, residentBlocks);
      return;
    default:
      emulateSummedArea<T>(in, out, radius, mode, borderValue);
      return;
  }
}

template <class T>
int boxBlurMaxFusedRadius(int channels) {
  if (channels < 1 || channels > 4)
    throw std::invalid_argument("the fused box blur takes 1 to 4 interleaved channels, not " +
                                std::to_string(channels));
  return fusedMaxRadius<T>(channels);
}

template <class T>
int boxBlurMaxSweepRadius(int channels) {
  if (channels < 1 || channels > 4)
    throw std::invalid_argument("the sweep box blur takes 1 to 4 interleaved channels, not " +
                                std::to_string(channels));
  return sweep::maxRadius<T>(channels);
}

template <class T>
int boxBlurMaxInterleavedRadius(int channels, BoxBlurPath path) {
  switch (path) {
    case BoxBlurPath::Fused:
      return boxBlurMaxFusedRadius<T>(channels);
    case BoxBlurPath::Sweep:
      return boxBlurMaxSweepRadius<T>(channels);
    case BoxBlurPath::Auto:
      return std::max(boxBlurMaxFusedRadius<T>(channels), boxBlurMaxSweepRadius<T>(channels));
    default:
      throw std::invalid_argument(std::string("the box blur of interleaved rows runs the fused or sweep path, not ") +
                                  toString(path));
  }
}

template <class T>
BoxBlurPath boxBlurResolveInterleavedPath(BoxBlurPath path, int channels, int radius) {
  if (path == BoxBlurPath::Auto) return sweepIsAuto<T>(radius, channels) ? BoxBlurPath::Sweep : BoxBlurPath::Fused;
  if (path != BoxBlurPath::Fused && path != BoxBlurPath::Sweep)
    throw std::invalid_argument(std::string("the box blur of interleaved rows runs the fused or sweep path, not ") +
                                toString(path));
  return path;
}

namespace {
template <class T>
void validateInterleaved(Plane<const T> in, Plane<T> out, int channels, int radius, BoxBlurPath path) {
  if (channels < 1 || channels > 4)
    throw std::invalid_argument("the interleaved box blur takes 1 to 4 channels, not " + std::to_string(channels));
  if (path == BoxBlurPath::Sweep)
    checkSweepRadius<T>(radius, channels);
  else
    checkFusedRadius<T>(radius, channels);
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("box blur needs input and output planes of one nonempty size, got " +
                                std::to_string(in.width) + "x" + std::to_string(in.height) + " and " +
                                std::to_string(out.width) + "x" + std::to_string(out.height));
  const std::size_t rowBytes = static_cast<std::size_t>(in.width) * channels * sizeof(T);
  if (in.pitch < rowBytes || out.pitch < rowBytes)
    throw std::invalid_argument("the interleaved box blur needs pitches of at least " + std::to_string(rowBytes) +
                                " bytes (width x channels samples)");
  const Plane<const T> inWide{in.data, in.width * channels, in.height, in.pitch};
  const Plane<T> outWide{out.data, out.width * channels, out.height, out.pitch};
  validate(inWide, outWide, radius, true);
}
}  // namespace

template <class T>
void launchBoxBlurInterleaved(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T borderValue,
                              cudaStream_t stream, BoxBlurPath path) {
  path = boxBlurResolveInterleavedPath<T>(path, channels, radius);
  validateInterleaved(in, out, channels, radius, path);
  if (radius == 0) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, in.width * channels * sizeof(T),
                                        in.height, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (path == BoxBlurPath::Sweep) {
    sweep::launch<T>(in, out, channels, radius, mode, borderValue, stream);
    return;
  }
  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  dispatchChannels<T>(channels, [&](auto c) {
    constexpr int C = decltype(c)::value;
    launchFusedChannels<T, C>(in, out, radius, mode, borderValue, fusedResidentWarps<T, C>(device), stream);
  });
}

template <class T>
void runBoxBlurInterleavedOnHost(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode,
                                 T borderValue, int residentWarps, BoxBlurPath path) {
  path = boxBlurResolveInterleavedPath<T>(path, channels, radius);
  validateInterleaved(in, out, channels, radius, path);
  if (radius == 0) {
    copyPlane(in.data, in.pitch, out.data, out.pitch, in.width * channels * sizeof(T), in.height);
    return;
  }
  if (path == BoxBlurPath::Sweep) {
    sweep::emulate<T>(in, out, channels, radius, mode, borderValue, std::max(1, residentWarps / 8));
    return;
  }
  dispatchChannels<T>(channels, [&](auto c) {
    constexpr int C = decltype(c)::value;
    emulateFused<T, C>(in, out, radius, mode, borderValue, residentWarps);
  });
}

// ---------------------------------------------------------------------------------------------
// Instantiations

#define GPULAB_INSTANTIATE(T)                                                                                     \
  template int boxBlurMaxTiledRadius<T>();                                                                        \
  template BoxBlurPath boxBlurResolvePath<T>(BoxBlurPath, int, int);                                              \
  template std::size_t boxBlurSharedBytes<T>(BoxBlurPath, int);                                                   \
  template std::size_t boxBlurScratchBytes<T>(BoxBlurPath, int, int);                                             \
  template BoxBlurPlan planBoxBlur<T>(int, int, int, BoxBlurPath);                                                \
  template void launchBoxBlur<T>(const BoxBlurPlan&, Plane<const T>, Plane<T>, BorderMode, T, void*, std::size_t, \
                                 cudaStream_t);                                                                   \
  template void launchBoxBlur<T>(Plane<const T>, Plane<T>, int, BorderMode, T, BoxBlurPath, void*, std::size_t,   \
                                 cudaStream_t);                                                                   \
  template void runBoxBlurOnHost<T>(Plane<const T>, Plane<T>, int, BorderMode, T, BoxBlurPath, int);              \
  template int boxBlurMaxFusedRadius<T>(int);                                                                     \
  template int boxBlurMaxSweepRadius<T>(int);                                                                     \
  template int boxBlurMaxInterleavedRadius<T>(int, BoxBlurPath);                                                  \
  template BoxBlurPath boxBlurResolveInterleavedPath<T>(BoxBlurPath, int, int);                                   \
  template void launchBoxBlurInterleaved<T>(Plane<const T>, Plane<T>, int, int, BorderMode, T, cudaStream_t,      \
                                            BoxBlurPath);                                                         \
  template void runBoxBlurInterleavedOnHost<T>(Plane<const T>, Plane<T>, int, int, BorderMode, T, int, BoxBlurPath);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(std::uint16_t)
GPULAB_INSTANTIATE(float)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
