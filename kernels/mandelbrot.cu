#include <algorithm>

#include "gpulab/cuda_error.hpp"
#include "gpulab/kernels/mandelbrot.cuh"

namespace gpulab::kernels {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;
constexpr int kTileWidth = 16;  // one queue entry: a 16x8 tile of pixels
constexpr int kTileHeight = 8;
constexpr int kTilePixels = kTileWidth * kTileHeight;
constexpr int kPersistentThreads = 128;
constexpr int kRefillLanes = 12;  // idle lanes that make a warp stop iterating and take new pixels

// ---------------------------------------------------------------------------------------------
// Device helpers

/// Tile-ordered pixel index -> pixel; false for the padding of tiles that overhang the image.
__device__ __forceinline__ bool pixelOfIndex(int index, int width, int height, int tilesX, int& i, int& j) {
  const int tile = index / kTilePixels;
  const int local = index % kTilePixels;
  i = (tile % tilesX) * kTileWidth + local % kTileWidth;
  j = (tile / tilesX) * kTileHeight + local / kTileWidth;
  return i < width && j < height;
}

/// Called once per warp at the end of a persistent kernel: the last warp zeroes the queue for the
/// next launch (every other warp has made its last fetch by then).
__device__ __forceinline__ void retireWarp(EscapeWorkQueue* queue, int lane) {
  if (lane != 0) return;
  __threadfence();
  const unsigned totalWarps = gridDim.x * (blockDim.x / kWarp);
  if (atomicAdd(&queue->warpsDone, 1u) + 1u == totalWarps) {
    atomicExch(&queue->next, 0u);
    atomicExch(&queue->warpsDone, 0u);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels

// Persistent warps with per-lane refill. A warp keeps a range of tile-ordered pixel indices; lanes
// iterate their own pixel in chunks of kEscapeUnroll steps, and once kRefillLanes of them have
// finished, the idle lanes draw the next indices from the range (a new tile from the global counter
// when it runs dry). Expensive pixels then occupy one lane, not a whole warp.
template <class T>
__global__ void __launch_bounds__(kPersistentThreads)
    balancedKernel(EscapeParams p, int tilesX, int totalIndices, Plane<float> raw, EscapeWorkQueue* queue) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const unsigned lanesBelow = (1u << lane) - 1u;
  int rangeNext = 0;  // warp-uniform: this warp's unclaimed indices [rangeNext, rangeEnd)
  int rangeEnd = 0;
  bool exhausted = false;  // warp-uniform
  bool busy = false;
  int pi = 0, pj = 0;
  Orbit<T> o{};

  for (;;) {
    // Hand out indices until every lane is busy or the image is used up. Pixels that the interior
    // tests settle are written here and their lane draws again.
    for (;;) {
      const unsigned idle = __ballot_sync(kFullMask, !busy);
      if (idle == 0 || exhausted) break;
      const int need = __popc(idle);
      const int rank = __popc(idle & lanesBelow);
      int index = rangeNext + rank;
      if (rangeNext + need > rangeEnd) {
        int base = 0;
        if (lane == 0) base = static_cast<int>(atomicAdd(&queue->next, static_cast<unsigned>(kTilePixels)));
        base = __shfl_sync(kFullMask, base, 0);
        const int left = rangeEnd - rangeNext;
        if (rank >= left) index = base + (rank - left);
        rangeNext = base + (need - left);
        rangeEnd = base + kTilePixels;
        exhausted = base >= totalIndices;
      } else {
        rangeNext += need;
      }
      if (!busy && index < totalIndices && pixelOfIndex(index, p.width, p.height, tilesX, pi, pj)) {
        const T px = static_cast<T>(pixelX(p, pi));
        const T py = static_cast<T>(pixelY(p, pj));
        if (provedInterior(p, px, py)) {
          raw(pi, pj) = kMandelbrotInterior;
        } else {
          o = startOrbit(p, px, py);
          busy = true;
        }
      }
    }
    if (__ballot_sync(kFullMask, busy) == 0) break;  // only once the image is used up

    const int refillAt = exhausted ? kWarp : kRefillLanes;
    for (;;) {
      if (busy) {
        T r = T(0);
        const OrbitStatus status = advanceChunk(o, p.maxIterations, p.periodicity, r);
        if (status != OrbitStatus::Running) {
          raw(pi, pj) =
              status == OrbitStatus::Escaped ? escapedValue(o.n, static_cast<float>(r), p.smooth) : kMandelbrotInterior;
          busy = false;
        }
      }
      if (__popc(__ballot_sync(kFullMask, !busy)) >= refillAt) break;
    }
  }
  retireWarp(queue, lane);
}

// Persistent warps, one 16x8 tile per fetch, one pixel per lane run to completion (warp-synchronous:
// a warp takes as long as its slowest pixel).
template <class T>
__global__ void __launch_bounds__(kPersistentThreads)
    tiledKernel(EscapeParams p, int tilesX, int totalIndices, Plane<float> raw, EscapeWorkQueue* queue) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  for (;;) {
    int base = 0;
    if (lane == 0) base = static_cast<int>(atomicAdd(&queue->next, static_cast<unsigned>(kTilePixels)));
    base = __shfl_sync(kFullMask, base, 0);
    if (base >= totalIndices) break;
    for (int k = lane; k < kTilePixels; k += kWarp) {
      int i = 0, j = 0;
      if (pixelOfIndex(base + k, p.width, p.height, tilesX, i, j)) raw(i, j) = escapeValue<T>(p, i, j);
    }
  }
  retireWarp(queue, lane);
}

// The textbook kernel: the benchmark's reference point.
template <class T>
__global__ void plainKernel(EscapeParams p, Plane<float> raw) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= p.width || j >= p.height) return;
  const T px = static_cast<T>(pixelX(p, i));
  const T py = static_cast<T>(pixelY(p, j));
  T x = p.julia ? px : T(0);
  T y = p.julia ? py : T(0);
  const T cx = p.julia ? static_cast<T>(p.juliaX) : px;
  const T cy = p.julia ? static_cast<T>(p.juliaY) : py;
  T r = T(0);
  int n = 0;
  for (; n < p.maxIterations; ++n)
    if (!escapeStep(x, y, cx, cy, r)) break;
  raw(i, j) = n < p.maxIterations ? escapedValue(n, static_cast<float>(r), p.smooth) : kMandelbrotInterior;
}

__device__ __forceinline__ float4 toFloat4(uchar4 c) {
  return make_float4(static_cast<float>(c.x), static_cast<float>(c.y), static_cast<float>(c.z),
                     static_cast<float>(c.w));
}

__global__ void colourKernel(Plane<const float> raw, const uchar4* __restrict__ table, ColourParams c,
                             Plane<uchar4> rgba) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= rgba.width || y >= rgba.height) return;
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int b = 0; b < c.supersample; ++b) {
    const float* row = raw.row(y * c.supersample + b);
    for (int a = 0; a < c.supersample; ++a) {
      const float value = row[x * c.supersample + a];
      float4 colour;
      if (value < 0.f) {
        colour = toFloat4(c.interior);
      } else {
        const float position = palettePosition(value, c) * static_cast<float>(c.tableSize);
        const int i0 = min(static_cast<int>(position), c.tableSize - 1);
        const float f = position - static_cast<float>(i0);
        const float4 lo = toFloat4(__ldg(table + i0));
        const float4 hi = toFloat4(__ldg(table + (i0 + 1 == c.tableSize ? 0 : i0 + 1)));
        colour = make_float4(lo.x + f * (hi.x - lo.x), lo.y + f * (hi.y - lo.y), lo.z + f * (hi.z - lo.z),
                             lo.w + f * (hi.w - lo.w));
      }
      sum.x += colour.x;
      sum.y += colour.y;
      sum.z += colour.z;
      sum.w += colour.w;
    }
  }
  const float scale = 1.0f / static_cast<float>(c.supersample * c.supersample);
  rgba(x, y) = make_uchar4(static_cast<unsigned char>(fminf(sum.x * scale + 0.5f, 255.f)),
                           static_cast<unsigned char>(fminf(sum.y * scale + 0.5f, 255.f)),
                           static_cast<unsigned char>(fminf(sum.z * scale + 0.5f, 255.f)),
                           static_cast<unsigned char>(fminf(sum.w * scale + 0.5f, 255.f)));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

template <class T>
int escapeTimePersistentBlocks(EscapeSchedule schedule, int device) {
  int sms = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int perSm = 0;
  if (schedule == EscapeSchedule::Balanced)
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, balancedKernel<T>, kPersistentThreads, 0));
  else
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, tiledKernel<T>, kPersistentThreads, 0));
  return sms * (perSm > 0 ? perSm : 1);
}

template <class T>
void launchEscapeTime(const EscapeParams& p, EscapeSchedule schedule, Plane<float> raw, EscapeWorkQueue* queue,
                      int persistentBlocks, cudaStream_t stream) {
  if (p.width <= 0 || p.height <= 0) return;
  if (schedule == EscapeSchedule::Plain) {
    const dim3 block(16, 16);
    const dim3 grid(divUp(p.width, 16), divUp(p.height, 16));
    plainKernel<T><<<grid, block, 0, stream>>>(p, raw);
    GPULAB_CHECK_LAUNCH("mandelbrot plain");
    return;
  }
  const int tilesX = divUp(p.width, kTileWidth);
  const int tiles = tilesX * divUp(p.height, kTileHeight);
  const int totalIndices = tiles * kTilePixels;
  // No more warps than tiles: a tiny image does not wake the whole GPU.
  const int warpsPerBlock = kPersistentThreads / kWarp;
  const int blocks = std::max(1, std::min(persistentBlocks, divUp(tiles, warpsPerBlock)));
  if (schedule == EscapeSchedule::Balanced) {
    balancedKernel<T><<<blocks, kPersistentThreads, 0, stream>>>(p, tilesX, totalIndices, raw, queue);
    GPULAB_CHECK_LAUNCH("mandelbrot balanced");
  } else {
    tiledKernel<T><<<blocks, kPersistentThreads, 0, stream>>>(p, tilesX, totalIndices, raw, queue);
    GPULAB_CHECK_LAUNCH("mandelbrot tiled");
  }
}

void launchColourize(Plane<const float> raw, const uchar4* table, const ColourParams& c, Plane<uchar4> rgba,
                     cudaStream_t stream) {
  if (rgba.width <= 0 || rgba.height <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid(divUp(rgba.width, 32), divUp(rgba.height, 8));
  colourKernel<<<grid, block, 0, stream>>>(raw, table, c, rgba);
  GPULAB_CHECK_LAUNCH("mandelbrot colour");
}

// ---------------------------------------------------------------------------------------------
// Instantiations: float32 and float64.

#define GPULAB_INSTANTIATE(T)                                                                                 \
  template int escapeTimePersistentBlocks<T>(EscapeSchedule, int);                                            \
  template void launchEscapeTime<T>(const EscapeParams&, EscapeSchedule, Plane<float>, EscapeWorkQueue*, int, \
                                    cudaStream_t);
GPULAB_INSTANTIATE(float)
GPULAB_INSTANTIATE(double)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
