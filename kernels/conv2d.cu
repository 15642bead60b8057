#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/kernels/conv2d.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "vector_loads.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Plan. A block computes a tile of tileWidth x tileHeight outputs of one plane. It first copies the
// input that tile needs (the tile plus a halo of kw-1 columns and kh-1 rows, border-mapped) into
// shared memory as Acc, 16 bytes at a time for chunks that lie inside the row (f32/f64 with
// cp.async straight into shared memory, u8 through registers to convert), which works because tile
// column 0 is the needed input column xs rounded down to a 16-byte boundary. Then every thread computes 4 adjacent
// outputs along x on kRowsPerThread rows from registers: per input row it reads its window with 16-byte shared loads
// (the window starts `off` = xs mod 4 samples into them, the same for the whole launch and a template parameter) and
// feeds each coefficient to every output row that uses it. The code is written for host and device
// so the host can run it block by block (runConv2DTilesOnHost) and tests check the tiling without
// a GPU.

constexpr int kOutputsPerThreadX = 4;
constexpr int kMaxThreads = 256;
constexpr int kLoadBatch = 4;  // u8 chunks in flight per thread while loading the tile

template <class Acc>
constexpr int kRowsPerThread = sizeof(Acc) == 8 ? 4 : 8;

/// The kernel sizes with a compile-time variant (visitVariant): every loop unrolls and every
/// coefficient is an operand of its multiply-add.
constexpr bool fixedSize(int kw, int kh) { return kw == kh && (kw == 3 || kw == 5 || kw == 15); }

/// Output rows per thread. The fixed 15x15 takes 2: its code, every row and coefficient spelled
/// out, is 4 x 2 x 225 multiply-adds a thread. With 8 rows (7200 of them, 185 KB of code) an H100's
/// warps waited for instructions 39% of the time (ncu: stall_no_inst) and ran at 128 registers.
template <class Acc>
constexpr int rowsPerThread(int kw, int kh) {
  return fixedSize(kw, kh) && kw * kh > 25 ? 2 : kRowsPerThread<Acc>;
}

template <class T>
constexpr int kChunkSamples = 16 / static_cast<int>(sizeof(T));  // samples per 16-byte global load

template <class Acc>
constexpr int kAccVector = 16 / static_cast<int>(sizeof(Acc));  // Acc per 16-byte shared access

constexpr int alignUp(int v, int a) { return (v + a - 1) / a * a; }

/// Everything about a launch that is the same for all its blocks.
struct TileGeometry {
  int kw = 1;
  int kh = 1;
  int ax = 0;
  int ay = 0;
  BorderMode border = BorderMode::Reflect101;
  int tileWidth = 0;
  int tileHeight = 0;
  int stride = 0;             // Acc between two rows of the shared tile
  int off = 0;                // tile column of input column x0 - ax (the same for every block)
  bool vectorLoads = false;   // input rows are 16-byte aligned
  bool vectorStores = false;  // output rows are 16-byte aligned
};

/// Shared tile row stride: off (< 4) + tileWidth + kw - 1 needed columns, and what the last 16-byte
/// window loads of the rightmost thread may touch beyond them (at most column tileWidth + kw + 4).
constexpr int tileStride(int tileWidth, int kw) { return alignUp(tileWidth + kw + 5, 4); }

template <class Acc, int N>
struct LaunchWeights {
  Acc values[N];
};

// ---------------------------------------------------------------------------------------------
// Device and host helpers

GPULAB_HD unsigned word(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

/// Sample e (a compile-time index after unrolling) of a 16-byte chunk of kChunkSamples<T> samples.
template <class T>
GPULAB_HD T sampleOf(const uint4& raw, int e) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    return static_cast<std::uint8_t>(word(raw, e >> 2) >> (8 * (e & 3)));
  } else if constexpr (std::is_same_v<T, float>) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(word(raw, e));
#else
    const unsigned bits = word(raw, e);
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
#endif
  } else {
    const unsigned lo = word(raw, 2 * e), hi = word(raw, 2 * e + 1);
#if defined(__CUDA_ARCH__)
    return __hiloint2double(static_cast<int>(hi), static_cast<int>(lo));
#else
    const unsigned long long bits = (static_cast<unsigned long long>(hi) << 32) | lo;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
#endif
  }
}

/// 16 bytes from a 16-byte aligned global address, through the read-only cache.
template <class T>
GPULAB_HD uint4 loadChunk(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const uint4*>(p));
#else
  uint4 raw;
  std::memcpy(&raw, p, sizeof raw);
  return raw;
#endif
}

template <class T>
GPULAB_HD T loadSample(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

/// 16 bytes from global to shared memory, both 16-byte aligned: asynchronous (cp.async, not through
/// registers) on sm_80 and newer; complete after waitForCopies().
GPULAB_HD void copy16(void* sharedDst, const void* globalSrc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(sharedDst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(globalSrc) : "memory");
#elif defined(__CUDA_ARCH__)
  *static_cast<uint4*>(sharedDst) = __ldg(static_cast<const uint4*>(globalSrc));
#else
  std::memcpy(sharedDst, globalSrc, 16);
#endif
}

GPULAB_HD void waitForCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/// kAccVector<Acc> values to a 16-byte aligned shared address with one 16-byte store.
template <class Acc>
GPULAB_HD void storeVector(Acc* dst, const Acc (&v)[kAccVector<Acc>]) {
#if defined(__CUDA_ARCH__)
  // Spelled out: left to itself the compiler splits this store into four 4-byte stores.
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (sizeof(Acc) == 4)
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(address), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
                 : "memory");
  else
    asm volatile("st.shared.v2.f64 [%0], {%1, %2};" ::"r"(address), "d"(v[0]), "d"(v[1]) : "memory");
#else
  std::memcpy(dst, v, sizeof v);
#endif
}

/// win[i] = src[OFF + i] for i < N, read with 16-byte loads from the 16-byte aligned `src`.
template <int OFF, int N, class Acc>
GPULAB_HD void loadWindow(const Acc* src, Acc (&win)[N]) {
#if defined(__CUDA_ARCH__)
  constexpr int A = kAccVector<Acc>;
  constexpr int kVectors = (OFF + N + A - 1) / A;
  Acc buf[kVectors * A];
  GPULAB_UNROLL
  for (int v = 0; v < kVectors; ++v) {
    if constexpr (sizeof(Acc) == 4) {
      const float4 t = reinterpret_cast<const float4*>(src)[v];
      buf[4 * v] = t.x;
      buf[4 * v + 1] = t.y;
      buf[4 * v + 2] = t.z;
      buf[4 * v + 3] = t.w;
    } else {
      const double2 t = reinterpret_cast<const double2*>(src)[v];
      buf[2 * v] = t.x;
      buf[2 * v + 1] = t.y;
    }
  }
  GPULAB_UNROLL
  for (int i = 0; i < N; ++i) win[i] = buf[OFF + i];
#else
  std::memcpy(win, src + OFF, sizeof win);
#endif
}

/// Rounds to nearest (ties to even) and saturates for u8; floats pass through.
template <class T, class Acc>
GPULAB_HD T toSample(Acc v) {
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

/// Writes 4 outputs to a 16-byte (u8: 4-byte) aligned global address.
template <class T, class Acc>
GPULAB_HD void storeFour(T* dst, const Acc (&v)[kOutputsPerThreadX]) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    *reinterpret_cast<uchar4*>(dst) =
        make_uchar4(toSample<T>(v[0]), toSample<T>(v[1]), toSample<T>(v[2]), toSample<T>(v[3]));
  } else if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    reinterpret_cast<double2*>(dst)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2*>(dst)[1] = make_double2(v[2], v[3]);
  }
#else
  T s[kOutputsPerThreadX];
  for (int i = 0; i < kOutputsPerThreadX; ++i) s[i] = toSample<T>(v[i]);
  std::memcpy(dst, s, sizeof s);
#endif
}

// ---------------------------------------------------------------------------------------------
// The two phases of a block: fill the shared tile, then convolve from it.

/// A chunk that crosses the plane's edge (or any chunk when rows are not 16-byte aligned): each
/// sample through borderIndex. Kept out of line: it is rare and its code would crowd the hot loop.
template <class T, class Acc>
__host__ __device__ __noinline__ void loadChunkByBorder(const TileGeometry& g, const Plane<const T>& in, T fill,
                                                        Acc* line, int srcRow, int xc, int t0, int lo, int hi) {
  const T* src = srcRow >= 0 ? in.row(srcRow) : nullptr;
  for (int e = 0; e < kChunkSamples<T>; ++e) {
    const int t = t0 + e;
    if (t < lo || t >= hi) continue;
    const int x = src != nullptr ? borderIndex(xc + e, in.width, g.border) : -1;
    line[t] = static_cast<Acc>(x >= 0 ? loadSample(src + x) : fill);
  }
}

/// Copies input columns [xs, xs + tileWidth + kw - 1), xs = x0 - ax, of rows [y0 - ay, ...) into
/// the shared tile (tile column off = xs - origin), border-mapped. Thread `tid` of `threads` takes
/// every threads-th 16-byte chunk, kLoadBatch of them in flight at once.
template <class T, class Acc>
GPULAB_HD void loadTile(const TileGeometry& g, const Plane<const T>& in, T fill, Acc* tile, int x0, int y0, int tid,
                        int threads) {
  constexpr int V = kChunkSamples<T>;
  constexpr int A = kAccVector<Acc>;
  const int xs = x0 - g.ax;
  const int ys = y0 - g.ay;
  const int origin = xs - g.off;  // input column of tile column 0, a multiple of A
  const int end = xs + g.tileWidth + g.kw - 1;
  const int rows = g.tileHeight + g.kh - 1;
  const int xa = xs & ~(V - 1);  // first chunk, rounded down (also for negative xs)
  const int chunks = (end - xa + V - 1) / V;
  const int stepRows = threads / chunks;
  const int stepChunks = threads - stepRows * chunks;
  int r = tid / chunks;
  int k = tid - r * chunks;
  auto advance = [&] {
    k += stepChunks;
    r += stepRows;
    if (k >= chunks) {
      k -= chunks;
      ++r;
    }
  };

  if constexpr (std::is_same_v<T, Acc>) {
    // f32 and f64: chunks go straight from global to shared memory, all of them in flight at once.
    for (; r < rows; advance()) {
      const int y = borderIndex(ys + r, in.height, g.border);
      const int xc = xa + k * V;
      Acc* line = tile + r * g.stride;
      if (g.vectorLoads && y >= 0 && xc >= 0 && xc + V <= in.width)
        copy16(line + (xc - origin), in.row(y) + xc);
      else
        loadChunkByBorder(g, in, fill, line, y, xc, xc - origin, g.off, g.off + end - xs);
    }
    waitForCopies();
  } else {
    // u8: through registers, converted to Acc, kLoadBatch chunks in flight per thread.
    while (r < rows) {
      uint4 raw[kLoadBatch] = {};
      int rowOf[kLoadBatch], colOf[kLoadBatch], srcRow[kLoadBatch];
      bool whole[kLoadBatch];
      GPULAB_UNROLL
      for (int u = 0; u < kLoadBatch; ++u) {
        rowOf[u] = r;
        colOf[u] = xa + k * V;
        srcRow[u] = r < rows ? borderIndex(ys + r, in.height, g.border) : -1;
        whole[u] = r < rows && g.vectorLoads && srcRow[u] >= 0 && colOf[u] >= 0 && colOf[u] + V <= in.width;
        if (whole[u]) raw[u] = loadChunk(in.row(srcRow[u]) + colOf[u]);
        advance();
      }
      GPULAB_UNROLL
      for (int u = 0; u < kLoadBatch; ++u) {
        if (rowOf[u] >= rows) break;
        Acc* line = tile + rowOf[u] * g.stride;
        const int t0 = colOf[u] - origin;  // tile column of the chunk's first sample
        if (whole[u]) {
          GPULAB_UNROLL
          for (int part = 0; part < V / A; ++part) {
            const int t = t0 + part * A;
            if (t < 0 || t + A > g.stride) continue;
            Acc v[A];
            GPULAB_UNROLL
            for (int e = 0; e < A; ++e) v[e] = static_cast<Acc>(sampleOf<T>(raw[u], part * A + e));
            storeVector(line + t, v);
          }
        } else {
          loadChunkByBorder(g, in, fill, line, srcRow[u], colOf[u], t0, g.off, g.off + end - xs);
        }
      }
    }
  }
}

/// Adds the contribution of coefficient columns [q0, q0 + J) of input tile row r to the thread's
/// outputs: output row p uses coefficient row m = r - p. `line` and `w` already point at column q0;
/// `wStride` is the distance between two coefficient rows. kSharedWeights: `w` is the padded copy in
/// shared memory (rows of alignUp(kw, 4), q0 a multiple of 4), read 4 coefficients per 16-byte
/// broadcast load instead of one load per coefficient. kAllRows: the caller knows that every output
/// row uses input row r (PY - 1 <= r < kh), and the loop has no branch.
template <int J, int OFF, bool kSharedWeights, bool kAllRows, int PY, class Acc>
GPULAB_HD void accumulate(Acc (&acc)[PY][kOutputsPerThreadX], const Acc* line, const Acc* w, int r, int wStride,
                          int kh) {
  Acc win[kOutputsPerThreadX + J - 1];
  loadWindow<OFF>(line, win);
  GPULAB_UNROLL
  for (int p = 0; p < PY; ++p) {
    const int m = r - p;
    if (!kAllRows && (m < 0 || m >= kh)) continue;
    const Acc* wm = w + m * wStride;
    Acc cw[4];
    if constexpr (kSharedWeights) {
      loadWindow<0>(wm, cw);
    } else {
      GPULAB_UNROLL
      for (int j = 0; j < J; ++j) cw[j] = wm[j];
    }
    GPULAB_UNROLL
    for (int j = 0; j < J; ++j) {
      const Acc c = cw[j];
      GPULAB_UNROLL
      for (int i = 0; i < kOutputsPerThreadX; ++i) acc[p][i] += c * win[i + j];
    }
  }
}

/// Computes and stores the thread's kOutputsPerThreadX x kRowsPerThread outputs. KW / KH > 0 fix
/// the kernel size at compile time (every loop unrolls, coefficients become constant operands);
/// OFF is g.off.
template <class T, int KW, int KH, int OFF, bool kSharedWeights, class Acc>
GPULAB_HD void convolveTile(const TileGeometry& g, const Acc* w, const Acc* tile, const Plane<T>& out, int x0, int y0,
                            int tx, int ty) {
  constexpr int PX = kOutputsPerThreadX;
  constexpr int PY = rowsPerThread<Acc>(KW, KH);
  const int kw = KW > 0 ? KW : g.kw;
  const int kh = KH > 0 ? KH : g.kh;
  Acc acc[PY][PX];
  GPULAB_UNROLL
  for (int p = 0; p < PY; ++p) {
    GPULAB_UNROLL
    for (int i = 0; i < PX; ++i) acc[p][i] = Acc(0);
  }

  const Acc* base = tile + ty * PY * g.stride + tx * PX;
  const int rows = PY + kh - 1;
  const int fullChunks = kw / 4;
  const int rest = kw - 4 * fullChunks;
  const int q0 = 4 * fullChunks;
  const int wStride = kSharedWeights ? alignUp(kw, 4) : kw;
  // Input rows PY - 1 .. kh - 1 feed every output row of the thread: that stretch runs without
  // per-row checks, so the loads of a row can be scheduled ahead of its multiply-adds.
  auto row = [&]<bool kAllRows>(int r) {
    const Acc* line = base + r * g.stride;
    GPULAB_UNROLL
    for (int k = 0; k < fullChunks; ++k)
      accumulate<4, OFF, kSharedWeights, kAllRows>(acc, line + 4 * k, w + 4 * k, r, wStride, kh);
    switch (rest) {
      case 1:
        accumulate<1, OFF, kSharedWeights, kAllRows>(acc, line + q0, w + q0, r, wStride, kh);
        break;
      case 2:
        accumulate<2, OFF, kSharedWeights, kAllRows>(acc, line + q0, w + q0, r, wStride, kh);
        break;
      case 3:
        accumulate<3, OFF, kSharedWeights, kAllRows>(acc, line + q0, w + q0, r, wStride, kh);
        break;
      default:
        break;
    }
  };
  if constexpr (KH > 0) {
    // Every row spelled out: with r a constant, so are the coefficient rows m = r - p, and every
    // coefficient is an operand of its multiply-add (the compiler would keep a loop over r and
    // load each coefficient with its own instruction: 1 load for 4 multiply-adds).
    [&]<int... R>(std::integer_sequence<int, R...>) { (row.template operator()<(R >= PY - 1 && R < KH)>(R), ...); }
    (std::make_integer_sequence<int, PY + KH - 1>{});
  } else {
    for (int r = 0; r < rows; ++r) {
      if (r >= PY - 1 && r < kh)
        row.template operator()<true>(r);
      else
        row.template operator()<false>(r);
    }
  }

  const int x = x0 + tx * PX;
  if (x >= out.width) return;
  GPULAB_UNROLL
  for (int p = 0; p < PY; ++p) {
    const int y = y0 + ty * PY + p;
    if (y >= out.height) break;
    T* dst = out.row(y) + x;
    if (g.vectorStores && x + PX <= out.width) {
      storeFour<T>(dst, acc[p]);
    } else {
      for (int i = 0; i < PX && x + i < out.width; ++i) dst[i] = toSample<T>(acc[p][i]);
    }
  }
}

/// convolveTile with g.off turned into a template argument.
template <class T, int KW, int KH, bool kSharedWeights, class Acc>
GPULAB_HD void convolveTileAt(const TileGeometry& g, const Acc* w, const Acc* tile, const Plane<T>& out, int x0, int y0,
                              int tx, int ty) {
  if constexpr (kAccVector<Acc> == 4) {
    switch (g.off) {
      case 0:
        convolveTile<T, KW, KH, 0, kSharedWeights>(g, w, tile, out, x0, y0, tx, ty);
        break;
      case 1:
        convolveTile<T, KW, KH, 1, kSharedWeights>(g, w, tile, out, x0, y0, tx, ty);
        break;
      case 2:
        convolveTile<T, KW, KH, 2, kSharedWeights>(g, w, tile, out, x0, y0, tx, ty);
        break;
      default:
        convolveTile<T, KW, KH, 3, kSharedWeights>(g, w, tile, out, x0, y0, tx, ty);
        break;
    }
  } else {
    if (g.off == 0)
      convolveTile<T, KW, KH, 0, kSharedWeights>(g, w, tile, out, x0, y0, tx, ty);
    else
      convolveTile<T, KW, KH, 1, kSharedWeights>(g, w, tile, out, x0, y0, tx, ty);
  }
}

/// Shared-memory copy of the coefficients: kh rows of alignUp(kw, 4), zero-padded, so that every
/// group of 4 coefficients the tile loop reads is one aligned vector.
constexpr int sharedWeightStride(int kw) { return alignUp(kw, 4); }

template <class Acc>
constexpr std::size_t sharedWeightBytes(int kw, int kh) {
  return static_cast<std::size_t>(kh) * static_cast<std::size_t>(sharedWeightStride(kw)) * sizeof(Acc);
}

/// Whether a kernel of this size reads its coefficients from shared memory: the sizes without a
/// compile-time variant, up to kMaxSharedWeightBytes of coefficients (63x63 f32, 44x44 f64).
constexpr std::size_t kMaxSharedWeightBytes = 16 * 1024;
template <class Acc>
constexpr bool usesSharedWeights(int kw, int kh) {
  return !fixedSize(kw, kh) && sharedWeightBytes<Acc>(kw, kh) <= kMaxSharedWeightBytes;
}

/// Thread `tid` of `threads` copies the coefficients (row-major, kw x kh) into the padded layout.
template <class Acc>
GPULAB_HD void loadSharedWeights(const Acc* w, int kw, int kh, Acc* shared, int tid, int threads) {
  const int stride = sharedWeightStride(kw);
  for (int i = tid; i < kh * stride; i += threads) {
    const int m = i / stride, q = i - m * stride;
    shared[i] = q < kw ? w[m * kw + q] : Acc(0);
  }
}

template <class T>
GPULAB_HD Plane<T> planeOf(const Plane<T>& stack, int c) {
  return {stack.row(c * stack.height), stack.width, stack.height, stack.pitch};
}

// ---------------------------------------------------------------------------------------------
// Kernel

template <class T, int KW, int KH, int N, bool kDeviceWeights, bool kSharedWeights, int kMinBlocks = 1>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks)
    conv2dKernel(Plane<const T> inStack, Plane<T> outStack, TileGeometry g, T fill,
                 const __grid_constant__ LaunchWeights<Conv2DAccumulator<T>, N> weights,
                 const Conv2DAccumulator<T>* __restrict__ deviceWeights) {
  using Acc = Conv2DAccumulator<T>;
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  Acc* tile = reinterpret_cast<Acc*>(sharedBytes);
  const Plane<const T> in = planeOf(inStack, static_cast<int>(blockIdx.z));
  const Plane<T> out = planeOf(outStack, static_cast<int>(blockIdx.z));
  const int x0 = static_cast<int>(blockIdx.x) * g.tileWidth;
  const int y0 = static_cast<int>(blockIdx.y) * g.tileHeight;
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const Acc* w = kDeviceWeights ? deviceWeights : weights.values;
  if constexpr (kSharedWeights) {
    Acc* shared = tile + (g.tileHeight + g.kh - 1) * g.stride;
    loadSharedWeights(w, g.kw, g.kh, shared, tid, threads);
    w = shared;
  }
  loadTile<T, Acc>(g, in, fill, tile, x0, y0, tid, threads);
  __syncthreads();
  convolveTileAt<T, KW, KH, kSharedWeights, Acc>(g, w, tile, out, x0, y0, static_cast<int>(threadIdx.x),
                                                 static_cast<int>(threadIdx.y));
}

// ---------------------------------------------------------------------------------------------
// Streaming variant for the fixed 3x3 kernel on 16-byte aligned rows (the common case, memory
// bound; written for any small KW x KH). No shared tile and no block barrier: each thread owns 4 adjacent output
// columns of one band of rows and walks down it. Per input row it loads its 4 columns with one vector load plus the AX
// columns to the left and KW - 1 - AX to the right from the neighbouring vectors (the same lines as the neighbour
// threads' loads: L1 hits), and adds the row into the KH output rows that use it, kept in registers as a ring of KH
// accumulators (so every input row is read once per band). Rows are loaded kStreamRowsPerStep at a time before any of
// them is used, so that each thread has several loads in flight. The grid is kStreamWaves waves: bands short enough
// that an SM whose blocks finish early takes new ones. Coefficients are compile-time indexed launch constants; the sums
// run in the same order as the tile code (coefficient row, then column), so both give the same bits.

constexpr int kStreamThreads = 128;
constexpr int kStreamColumns = kOutputsPerThreadX;  // 4
constexpr int kStreamMinBandRows = 8;
// Bands for this many waves of blocks. On an H100 (2026-11-27, 3x3): 1 / 2 / 4 waves took 0.062 /
// 0.060 / 0.055 ms on 4096^2 f32 and 0.263 / 0.223 / 0.180 ms on 6000x4000 RGB u8.
constexpr int kStreamWaves = 4;

/// Input rows loaded per step: a multiple of KH, so the accumulator ring turns an integral number
/// of times per step and every ring index is a compile-time constant. On an H100 (4096^2 f32) 3 rows
/// a step (67 registers, 7 blocks/SM) took 0.065 ms, 6 / 9 / 12 rows 0.070-0.125: the kernel is
/// latency bound and more registers cost more warps than the extra loads in flight gain.
template <int KH>
constexpr int kStreamRowsPerStep = KH;

struct StreamGeometry {
  int ax = 0;  // AX is also a template argument; ay is not
  int ay = 0;
  BorderMode border = BorderMode::Reflect101;
  int columnBlocks = 0;  // blocks across a row: divUp(outWidth, 4 * kStreamThreads)
  int bands = 0;         // blocks down a plane
  int bandRows = 0;      // output rows per band
};

/// Bands for about `targetBlocks` blocks in all (the launch asks for kStreamWaves times the blocks the
/// device holds at once).
StreamGeometry streamGeometry(const Conv2DGeometry& geometry, int outWidth, int outHeight, int planes,
                              long long targetBlocks) {
  StreamGeometry s;
  s.ax = geometry.anchorX;
  s.ay = geometry.anchorY;
  s.border = geometry.border;
  s.columnBlocks = divUp(outWidth, kStreamColumns * kStreamThreads);
  const long long perPlane = static_cast<long long>(s.columnBlocks) * planes;
  const long long wanted = targetBlocks / perPlane > 1 ? targetBlocks / perPlane : 1;
  const int minRows = outHeight < kStreamMinBandRows ? outHeight : kStreamMinBandRows;
  const long long most = outHeight / minRows;  // bands of at least minRows rows
  const int bands = static_cast<int>(wanted < most ? wanted : most);
  s.bandRows = divUp(outHeight, bands);
  s.bands = divUp(outHeight, s.bandRows);
  return s;
}

/// Input columns [x - AX, x + 4 + KW - 1 - AX) of input row y (already border-mapped; -1: the
/// constant border), border-mapped along x.
template <class T, int KW, int AX, class Acc>
GPULAB_HD void loadStreamRow(const StreamGeometry& g, const Plane<const T>& in, T fill, int x, int y,
                             Acc (&win)[kStreamColumns + KW - 1]) {
  constexpr int L = AX;
  constexpr int R = KW - 1 - AX;
  constexpr int W = kStreamColumns + KW - 1;
  if (y < 0) {
    GPULAB_UNROLL
    for (int i = 0; i < W; ++i) win[i] = static_cast<Acc>(fill);
    return;
  }
  const T* row = in.row(y);
  const int left = L > 0 ? x - 4 : x;
  const int right = R > 0 ? x + 8 : x + 4;
  if (left >= 0 && right <= in.width) {
    Acc c[4];
    loadFour(row + x, c);
    if constexpr (L > 0) {
      Acc l[4];
      loadFour(row + x - 4, l);
      GPULAB_UNROLL
      for (int i = 0; i < L; ++i) win[i] = l[4 - L + i];
    }
    GPULAB_UNROLL
    for (int i = 0; i < 4; ++i) win[L + i] = c[i];
    if constexpr (R > 0) {
      Acc r[4];
      loadFour(row + x + 4, r);
      GPULAB_UNROLL
      for (int i = 0; i < R; ++i) win[L + 4 + i] = r[i];
    }
  } else {
    GPULAB_UNROLL
    for (int i = 0; i < W; ++i) {
      const int c = borderIndex(x - L + i, in.width, g.border);
      win[i] = static_cast<Acc>(c >= 0 ? loadSample(row + c) : fill);
    }
  }
}

/// The thread's 4 columns from x of output rows [o0, o1).
template <class T, int KW, int KH, int AX, int G, class Acc>
GPULAB_HD void streamBand(const StreamGeometry& g, const Plane<const T>& in, const Plane<T>& out, T fill, const Acc* w,
                          int x, int o0, int o1) {
  static_assert(G % KH == 0, "a step is a whole number of turns of the accumulator ring");
  constexpr int W = kStreamColumns + KW - 1;
  Acc acc[KH][kStreamColumns];
  GPULAB_UNROLL
  for (int s = 0; s < KH; ++s) {
    GPULAB_UNROLL
    for (int j = 0; j < kStreamColumns; ++j) acc[s][j] = Acc(0);
  }
  const bool vectorStore = x + kStreamColumns <= out.width;
  // Input row i (i = 0 is row o0 - ay) adds into output rows o0 + i - p, p < KH; output row o0 + t
  // lives in ring slot t mod KH and is complete after input row t + KH - 1.
  const int inputs = o1 - o0 + KH - 1;
  for (int i0 = 0; i0 < inputs; i0 += G) {
    Acc win[G][W];
    GPULAB_UNROLL
    for (int u = 0; u < G; ++u) {
      if (i0 + u < inputs) {
        loadStreamRow<T, KW, AX>(g, in, fill, x, borderIndex(o0 - g.ay + i0 + u, in.height, g.border), win[u]);
      } else {
        GPULAB_UNROLL
        for (int k = 0; k < W; ++k) win[u][k] = Acc(0);
      }
    }
    GPULAB_UNROLL
    for (int u = 0; u < G; ++u) {
      GPULAB_UNROLL
      for (int p = 0; p < KH; ++p) {
        constexpr int kRing = KH;
        const int s = ((u - p) % kRing + kRing) % kRing;  // (i0 + u - p) mod KH, i0 a multiple of KH
        GPULAB_UNROLL
        for (int q = 0; q < KW; ++q) {
          const Acc c = w[p * KW + q];
          GPULAB_UNROLL
          for (int j = 0; j < kStreamColumns; ++j) acc[s][j] += c * win[u][j + q];
        }
      }
      const int t = i0 + u - (KH - 1);  // the output row this input row completes
      const int done = (u + 1) % KH;
      const int y = o0 + t;
      if (t >= 0 && y < o1) {
        T* dst = out.row(y) + x;
        if (vectorStore) {
          storeFour<T>(dst, acc[done]);
        } else {
          for (int j = 0; j < kStreamColumns && x + j < out.width; ++j) dst[j] = toSample<T>(acc[done][j]);
        }
      }
      GPULAB_UNROLL
      for (int j = 0; j < kStreamColumns; ++j) acc[done][j] = Acc(0);
    }
  }
}

template <class T, int KW, int KH, int AX, int G = kStreamRowsPerStep<KH>, int kMinBlocks = 1>
__global__ void __launch_bounds__(kStreamThreads, kMinBlocks)
    conv2dStreamKernel(Plane<const T> inStack, Plane<T> outStack, StreamGeometry g, T fill,
                       const __grid_constant__ LaunchWeights<Conv2DAccumulator<T>, KW * KH> weights) {
  const int x = (static_cast<int>(blockIdx.x) * kStreamThreads + static_cast<int>(threadIdx.x)) * kStreamColumns;
  const Plane<T> out = planeOf(outStack, static_cast<int>(blockIdx.z));
  const int o0 = static_cast<int>(blockIdx.y) * g.bandRows;
  if (x >= out.width || o0 >= out.height) return;
  const int o1 = o0 + g.bandRows < out.height ? o0 + g.bandRows : out.height;
  streamBand<T, KW, KH, AX, G>(g, planeOf(inStack, static_cast<int>(blockIdx.z)), out, fill, weights.values, x, o0, o1);
}

/// Whether the streaming variant takes this launch: 3x3, 16-byte aligned rows in and out. (5x5 ran
/// slower streamed than tiled on an H100, 0.094 against 0.081 ms at 4096^2 f32: its 80 registers
/// left too few warps per SM; it keeps the tile code.)
template <class T>
bool streams(const Conv2DGeometry& geometry, Plane<const T> in, Plane<T> out) {
  return geometry.kernelWidth == 3 && geometry.kernelHeight == 3 && aligned16(in.data, in.pitch) &&
         aligned16(out.data, out.pitch);
}

/// Calls f with <KW, KH, AX> of a streaming launch (anchorX is within [0, kw) for every output mode).
template <class F>
void visitStreamVariant(const Conv2DGeometry& geometry, F&& f) {
  switch (geometry.anchorX) {
    case 0:
      f.template operator()<3, 3, 0>();
      break;
    case 1:
      f.template operator()<3, 3, 1>();
      break;
    default:
      f.template operator()<3, 3, 2>();
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: launch shape, geometry, variant dispatch

void checkKernelSize(const Conv2DGeometry& geometry) {
  const int kw = geometry.kernelWidth, kh = geometry.kernelHeight;
  if (kw < 1 || kh < 1 || kw > kConv2DMaxKernelSize || kh > kConv2DMaxKernelSize)
    throw std::invalid_argument("convolution kernel " + std::to_string(kw) + "x" + std::to_string(kh) +
                                " is outside the supported sizes 1x1 to " + std::to_string(kConv2DMaxKernelSize) + "x" +
                                std::to_string(kConv2DMaxKernelSize));
}

template <class T>
TileGeometry tileGeometry(const Conv2DGeometry& geometry, const Conv2DLaunchShape& shape, Plane<const T> in,
                          Plane<T> out) {
  TileGeometry g;
  g.kw = geometry.kernelWidth;
  g.kh = geometry.kernelHeight;
  g.ax = geometry.anchorX;
  g.ay = geometry.anchorY;
  g.border = geometry.border;
  g.tileWidth = shape.tileWidth;
  g.tileHeight = shape.tileHeight;
  g.stride = tileStride(shape.tileWidth, g.kw);
  // Block origins x0 are multiples of tileWidth (a multiple of 4), so xs mod A is -ax mod A everywhere.
  constexpr int A = kAccVector<Conv2DAccumulator<T>>;
  g.off = ((-g.ax) % A + A) % A;
  g.vectorLoads = aligned16(in.data, in.pitch);
  g.vectorStores = aligned16(out.data, out.pitch);
  return g;
}

/// Calls f with the tile variant for this kernel size: fixed 3x3 and 5x5; any size with the weights
/// in the launch; any size with the weights in device memory. The last two copy the coefficients
/// into shared memory first unless they are too many (usesSharedWeights).
template <class T, class F>
void visitVariant(const Conv2DGeometry& geometry, F&& f) {
  using Acc = Conv2DAccumulator<T>;
  const int kw = geometry.kernelWidth, kh = geometry.kernelHeight;
  static_assert(fixedSize(3, 3) && fixedSize(5, 5) && fixedSize(15, 15));
  if (kw == 3 && kh == 3)
    f.template operator()<3, 3, 9, false, false>();
  else if (kw == 5 && kh == 5)
    f.template operator()<5, 5, 25, false, false>();
  else if (kw == 15 && kh == 15)
    f.template operator()<15, 15, 225, false, false>();
  else if (kw * kh <= kConv2DMaxLaunchCoefficients)
    f.template operator()<0, 0, kConv2DMaxLaunchCoefficients, false, true>();
  else if (usesSharedWeights<Acc>(kw, kh))
    f.template operator()<0, 0, 1, true, true>();
  else
    f.template operator()<0, 0, 1, true, false>();
}

}  // namespace

template <class T>
Conv2DLaunchShape conv2DLaunchShape(int kernelWidth, int kernelHeight, std::size_t sharedBytesLimit) {
  using Acc = Conv2DAccumulator<T>;
  constexpr int kCandidates[][2] = {{32, 8}, {32, 4}, {16, 4}, {16, 2}, {8, 2}, {8, 1}};
  for (const auto& c : kCandidates) {
    Conv2DLaunchShape s;
    s.blockX = c[0];
    s.blockY = c[1];
    s.tileWidth = c[0] * kOutputsPerThreadX;
    s.tileHeight = c[1] * rowsPerThread<Acc>(kernelWidth, kernelHeight);
    s.sharedBytes = static_cast<std::size_t>(s.tileHeight + kernelHeight - 1) *
                    static_cast<std::size_t>(tileStride(s.tileWidth, kernelWidth)) * sizeof(Acc);
    if (usesSharedWeights<Acc>(kernelWidth, kernelHeight))
      s.sharedBytes += sharedWeightBytes<Acc>(kernelWidth, kernelHeight);
    if (s.sharedBytes <= sharedBytesLimit) return s;
  }
  return {};
}

template <class T>
void launchConv2D(Plane<const T> inStack, Plane<T> outStack, int planes, const Conv2DGeometry& geometry,
                  const Conv2DAccumulator<T>* weights, const Conv2DAccumulator<T>* deviceWeights, T borderValue,
                  cudaStream_t stream) {
  using Acc = Conv2DAccumulator<T>;
  checkKernelSize(geometry);
  if (planes <= 0 || outStack.width <= 0 || outStack.height <= 0 || inStack.width <= 0 || inStack.height <= 0) return;
  const int count = geometry.kernelWidth * geometry.kernelHeight;
  if (count > kConv2DMaxLaunchCoefficients && deviceWeights == nullptr)
    throw std::invalid_argument("a convolution kernel of more than " + std::to_string(kConv2DMaxLaunchCoefficients) +
                                " coefficients needs its weights in device memory");

  int device = 0, sharedLimit = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  if (streams(geometry, inStack, outStack)) {
    int sms = 0;
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    visitStreamVariant(geometry, [&]<int KW, int KH, int AX>() {
      auto* kernel = conv2dStreamKernel<T, KW, KH, AX>;
      int perSm = 0;
      GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kStreamThreads, 0));
      const StreamGeometry g = streamGeometry(geometry, outStack.width, outStack.height, planes,
                                              kStreamWaves * static_cast<long long>(sms) * (perSm > 0 ? perSm : 1));
      LaunchWeights<Acc, KW * KH> launchWeights{};
      std::memcpy(launchWeights.values, weights, sizeof(Acc) * static_cast<std::size_t>(count));
      const dim3 grid(static_cast<unsigned>(g.columnBlocks), static_cast<unsigned>(g.bands),
                      static_cast<unsigned>(planes));
      kernel<<<grid, kStreamThreads, 0, stream>>>(inStack, outStack, g, borderValue, launchWeights);
      GPULAB_CHECK_LAUNCH("conv2d (streaming)");
    });
    return;
  }
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const Conv2DLaunchShape shape =
      conv2DLaunchShape<T>(geometry.kernelWidth, geometry.kernelHeight, static_cast<std::size_t>(sharedLimit));
  if (shape.blockX == 0)
    throw std::invalid_argument("a " + std::to_string(geometry.kernelWidth) + "x" +
                                std::to_string(geometry.kernelHeight) +
                                " convolution kernel needs more shared memory than this GPU offers per block (" +
                                std::to_string(sharedLimit / 1024) + " KiB)");
  const TileGeometry g = tileGeometry(geometry, shape, inStack, outStack);
  const dim3 grid(static_cast<unsigned>(divUp(outStack.width, shape.tileWidth)),
                  static_cast<unsigned>(divUp(outStack.height, shape.tileHeight)), static_cast<unsigned>(planes));
  const dim3 block(static_cast<unsigned>(shape.blockX), static_cast<unsigned>(shape.blockY));

  visitVariant<T>(geometry, [&]<int KW, int KH, int N, bool kDeviceWeights, bool kSharedWeights>() {
    LaunchWeights<Acc, N> launchWeights{};
    if (!kDeviceWeights) std::memcpy(launchWeights.values, weights, sizeof(Acc) * static_cast<std::size_t>(count));
    // The general float variants are issue bound: 4 blocks of 256 threads per SM (at most 64
    // registers) ran the 15x15 in 0.301 ms on an H100 against 0.340 with the compiler's 90 registers.
    constexpr int kMinBlocks = KW == 0 && std::is_same_v<Acc, float> ? 4 : 1;
    auto* kernel = conv2dKernel<T, KW, KH, N, kDeviceWeights, kSharedWeights, kMinBlocks>;
    if (shape.sharedBytes > 48 * 1024)
      GPULAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(shape.sharedBytes)));
    kernel<<<grid, block, shape.sharedBytes, stream>>>(inStack, outStack, g, borderValue, launchWeights,
                                                       kDeviceWeights ? deviceWeights : nullptr);
    GPULAB_CHECK_LAUNCH("conv2d");
  });
}

template <class T>
void runConv2DTilesOnHost(Plane<const T> inStack, Plane<T> outStack, int planes, const Conv2DGeometry& geometry,
                          const Conv2DAccumulator<T>* weights, T borderValue, std::size_t sharedBytesLimit) {
  using Acc = Conv2DAccumulator<T>;
  checkKernelSize(geometry);
  if (planes <= 0 || outStack.width <= 0 || outStack.height <= 0 || inStack.width <= 0 || inStack.height <= 0) return;
  const Conv2DLaunchShape shape = conv2DLaunchShape<T>(geometry.kernelWidth, geometry.kernelHeight, sharedBytesLimit);
  if (shape.blockX == 0)
    throw std::invalid_argument("the convolution tile does not fit in " + std::to_string(sharedBytesLimit) +
                                " bytes of shared memory");
  if (streams(geometry, inStack, outStack)) {
    // The streaming variant, thread by thread, with three bands per plane (so band edges are covered).
    visitStreamVariant(geometry, [&]<int KW, int KH, int AX>() {
      const int columnBlocks = divUp(outStack.width, kStreamColumns * kStreamThreads);
      const StreamGeometry g =
          streamGeometry(geometry, outStack.width, outStack.height, planes, 3LL * columnBlocks * planes);
      for (int z = 0; z < planes; ++z)
        for (int band = 0; band < g.bands; ++band)
          for (int x = 0; x < outStack.width; x += kStreamColumns) {
            const int o0 = band * g.bandRows;
            const int o1 = o0 + g.bandRows < outStack.height ? o0 + g.bandRows : outStack.height;
            streamBand<T, KW, KH, AX, kStreamRowsPerStep<KH>>(g, planeOf(inStack, z), planeOf(outStack, z), borderValue,
                                                              weights, x, o0, o1);
          }
    });
    return;
  }
  const TileGeometry g = tileGeometry(geometry, shape, inStack, outStack);
  std::vector<Acc> tile(shape.sharedBytes / sizeof(Acc));
  const int threads = shape.blockX * shape.blockY;
  visitVariant<T>(geometry, [&]<int KW, int KH, int N, bool kDeviceWeights, bool kSharedWeights>() {
    // The coefficients as the kernel reads them: padded in shared memory, or as given.
    std::vector<Acc> shared;
    const Acc* w = weights;
    if (kSharedWeights) {
      shared.resize(sharedWeightBytes<Acc>(geometry.kernelWidth, geometry.kernelHeight) / sizeof(Acc));
      loadSharedWeights(weights, geometry.kernelWidth, geometry.kernelHeight, shared.data(), 0, 1);
      w = shared.data();
    }
    for (int z = 0; z < planes; ++z) {
      const Plane<const T> in = planeOf(inStack, z);
      const Plane<T> out = planeOf(outStack, z);
      for (int y0 = 0; y0 < out.height; y0 += shape.tileHeight) {
        for (int x0 = 0; x0 < out.width; x0 += shape.tileWidth) {
          for (int tid = 0; tid < threads; ++tid)
            loadTile<T, Acc>(g, in, borderValue, tile.data(), x0, y0, tid, threads);
          for (int ty = 0; ty < shape.blockY; ++ty)
            for (int tx = 0; tx < shape.blockX; ++tx)
              convolveTileAt<T, KW, KH, kSharedWeights, Acc>(g, w, tile.data(), out, x0, y0, tx, ty);
        }
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Instantiations: the sample types of gpulab::PixelType.

#define GPULAB_INSTANTIATE(T)                                                                                      \
  template Conv2DLaunchShape conv2DLaunchShape<T>(int, int, std::size_t);                                          \
  template void launchConv2D<T>(Plane<const T>, Plane<T>, int, const Conv2DGeometry&, const Conv2DAccumulator<T>*, \
                                const Conv2DAccumulator<T>*, T, cudaStream_t);                                     \
  template void runConv2DTilesOnHost<T>(Plane<const T>, Plane<T>, int, const Conv2DGeometry&,                      \
                                        const Conv2DAccumulator<T>*, T, std::size_t);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(float)
GPULAB_INSTANTIATE(double)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
