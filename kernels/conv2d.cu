#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/kernels/conv2d.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"

#if defined(__CUDA_ARCH__)
#define GPULAB_UNROLL _Pragma("unroll")
#else
#define GPULAB_UNROLL
#endif

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
/// outputs: output row p uses coefficient row m = r - p. `line` and `w` already point at column q0.
template <int J, int OFF, int PY, class Acc>
GPULAB_HD void accumulate(Acc (&acc)[PY][kOutputsPerThreadX], const Acc* line, const Acc* w, int r, int kw, int kh) {
  Acc win[kOutputsPerThreadX + J - 1];
  loadWindow<OFF>(line, win);
  GPULAB_UNROLL
  for (int p = 0; p < PY; ++p) {
    const int m = r - p;
    if (m < 0 || m >= kh) continue;
    const Acc* wm = w + m * kw;
    GPULAB_UNROLL
    for (int j = 0; j < J; ++j) {
      const Acc c = wm[j];
      GPULAB_UNROLL
      for (int i = 0; i < kOutputsPerThreadX; ++i) acc[p][i] += c * win[i + j];
    }
  }
}

/// Computes and stores the thread's kOutputsPerThreadX x kRowsPerThread outputs. KW / KH > 0 fix
/// the kernel size at compile time (every loop unrolls, coefficients become constant operands);
/// OFF is g.off.
template <class T, int KW, int KH, int OFF, class Acc>
GPULAB_HD void convolveTile(const TileGeometry& g, const Acc* w, const Acc* tile, const Plane<T>& out, int x0, int y0,
                            int tx, int ty) {
  constexpr int PX = kOutputsPerThreadX;
  constexpr int PY = kRowsPerThread<Acc>;
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
  GPULAB_UNROLL
  for (int r = 0; r < rows; ++r) {
    const Acc* line = base + r * g.stride;
    GPULAB_UNROLL
    for (int k = 0; k < fullChunks; ++k) accumulate<4, OFF>(acc, line + 4 * k, w + 4 * k, r, kw, kh);
    switch (rest) {
      case 1:
        accumulate<1, OFF>(acc, line + q0, w + q0, r, kw, kh);
        break;
      case 2:
        accumulate<2, OFF>(acc, line + q0, w + q0, r, kw, kh);
        break;
      case 3:
        accumulate<3, OFF>(acc, line + q0, w + q0, r, kw, kh);
        break;
      default:
        break;
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
template <class T, int KW, int KH, class Acc>
GPULAB_HD void convolveTileAt(const TileGeometry& g, const Acc* w, const Acc* tile, const Plane<T>& out, int x0, int y0,
                              int tx, int ty) {
  if constexpr (kAccVector<Acc> == 4) {
    switch (g.off) {
      case 0:
        convolveTile<T, KW, KH, 0>(g, w, tile, out, x0, y0, tx, ty);
        break;
      case 1:
        convolveTile<T, KW, KH, 1>(g, w, tile, out, x0, y0, tx, ty);
        break;
      case 2:
        convolveTile<T, KW, KH, 2>(g, w, tile, out, x0, y0, tx, ty);
        break;
      default:
        convolveTile<T, KW, KH, 3>(g, w, tile, out, x0, y0, tx, ty);
        break;
    }
  } else {
    if (g.off == 0)
      convolveTile<T, KW, KH, 0>(g, w, tile, out, x0, y0, tx, ty);
    else
      convolveTile<T, KW, KH, 1>(g, w, tile, out, x0, y0, tx, ty);
  }
}

template <class T>
GPULAB_HD Plane<T> planeOf(const Plane<T>& stack, int c) {
  return {stack.row(c * stack.height), stack.width, stack.height, stack.pitch};
}

// ---------------------------------------------------------------------------------------------
// Kernel

template <class T, int KW, int KH, int N, bool kDeviceWeights>
__global__ void __launch_bounds__(kMaxThreads)
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
  loadTile<T, Acc>(g, in, fill, tile, x0, y0, tid, static_cast<int>(blockDim.x * blockDim.y));
  __syncthreads();
  const Acc* w = kDeviceWeights ? deviceWeights : weights.values;
  convolveTileAt<T, KW, KH, Acc>(g, w, tile, out, x0, y0, static_cast<int>(threadIdx.x), static_cast<int>(threadIdx.y));
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

/// Calls f with the variant for this kernel size: fixed 3x3 and 5x5, any size with the weights in the
/// launch, any size with the weights in device memory.
template <class T, class F>
void visitVariant(const Conv2DGeometry& geometry, F&& f) {
  const int kw = geometry.kernelWidth, kh = geometry.kernelHeight;
  if (kw == 3 && kh == 3)
    f.template operator()<3, 3, 9, false>();
  else if (kw == 5 && kh == 5)
    f.template operator()<5, 5, 25, false>();
  else if (kw * kh <= kConv2DMaxLaunchCoefficients)
    f.template operator()<0, 0, kConv2DMaxLaunchCoefficients, false>();
  else
    f.template operator()<0, 0, 1, true>();
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
    s.tileHeight = c[1] * kRowsPerThread<Acc>;
    s.sharedBytes = static_cast<std::size_t>(s.tileHeight + kernelHeight - 1) *
                    static_cast<std::size_t>(tileStride(s.tileWidth, kernelWidth)) * sizeof(Acc);
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

  visitVariant<T>(geometry, [&]<int KW, int KH, int N, bool kDeviceWeights>() {
    LaunchWeights<Acc, N> launchWeights{};
    if (!kDeviceWeights) std::memcpy(launchWeights.values, weights, sizeof(Acc) * static_cast<std::size_t>(count));
    auto* kernel = conv2dKernel<T, KW, KH, N, kDeviceWeights>;
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
  const TileGeometry g = tileGeometry(geometry, shape, inStack, outStack);
  std::vector<Acc> tile(shape.sharedBytes / sizeof(Acc));
  const int threads = shape.blockX * shape.blockY;
  visitVariant<T>(geometry, [&]<int KW, int KH, int N, bool kDeviceWeights>() {
    for (int z = 0; z < planes; ++z) {
      const Plane<const T> in = planeOf(inStack, z);
      const Plane<T> out = planeOf(outStack, z);
      for (int y0 = 0; y0 < out.height; y0 += shape.tileHeight) {
        for (int x0 = 0; x0 < out.width; x0 += shape.tileWidth) {
          for (int tid = 0; tid < threads; ++tid)
            loadTile<T, Acc>(g, in, borderValue, tile.data(), x0, y0, tid, threads);
          for (int ty = 0; ty < shape.blockY; ++ty)
            for (int tx = 0; tx < shape.blockX; ++tx)
              convolveTileAt<T, KW, KH, Acc>(g, weights, tile.data(), out, x0, y0, tx, ty);
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
