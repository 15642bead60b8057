#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/canny.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kTileX = 32;  // hysteresis tiles
constexpr int kTileY = 16;

struct CannyImage {
  Plane<const std::uint8_t> red, green, blue;
  bool colour = false;
};

__device__ __forceinline__ int grayAt(const CannyImage& img, int x, int y) {
  x = x < 0 ? 0 : (x >= img.red.width ? img.red.width - 1 : x);  // replicated border
  y = y < 0 ? 0 : (y >= img.red.height ? img.red.height - 1 : y);
  if (!img.colour) return __ldg(img.red.row(y) + x);
  return cannyGray(__ldg(img.red.row(y) + x), __ldg(img.green.row(y) + x), __ldg(img.blue.row(y) + x));
}

struct Scratch {
  Plane<int> mag;
  Plane<short> dx, dy;
  Plane<std::uint8_t> map;
  int* flag;
};

std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

Scratch carve(void* base, int width, int height) {
  auto* p = static_cast<unsigned char*>(base);
  const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height);
  Scratch s;
  s.mag = {reinterpret_cast<int*>(p), width, height, w * sizeof(int)};
  p += align256(w * h * sizeof(int));
  s.dx = {reinterpret_cast<short*>(p), width, height, w * sizeof(short)};
  p += align256(w * h * sizeof(short));
  s.dy = {reinterpret_cast<short*>(p), width, height, w * sizeof(short)};
  p += align256(w * h * sizeof(short));
  s.map = {p, width, height, w};
  p += align256(w * h);
  s.flag = reinterpret_cast<int*>(p);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Kernels

__global__ void __launch_bounds__(kBlockX* kBlockY) cannyGradientKernel(CannyImage img, Scratch s, bool l2) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= s.mag.width || y >= s.mag.height) return;
  const int a = grayAt(img, x - 1, y - 1), b = grayAt(img, x, y - 1), c = grayAt(img, x + 1, y - 1);
  const int d = grayAt(img, x - 1, y), f = grayAt(img, x + 1, y);
  const int g = grayAt(img, x - 1, y + 1), h = grayAt(img, x, y + 1), i = grayAt(img, x + 1, y + 1);
  const int dx = (c + 2 * f + i) - (a + 2 * d + g);
  const int dy = (g + 2 * h + i) - (a + 2 * b + c);
  s.dx(x, y) = static_cast<short>(dx);
  s.dy(x, y) = static_cast<short>(dy);
  s.mag(x, y) = l2 ? dx * dx + dy * dy : abs(dx) + abs(dy);
}

__device__ __forceinline__ int magAt(const Plane<int>& mag, int x, int y) {
  return x < 0 || y < 0 || x >= mag.width || y >= mag.height ? 0 : mag(x, y);
}

__global__ void __launch_bounds__(kBlockX* kBlockY) cannySuppressKernel(Scratch s, int low, int high) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= s.mag.width || y >= s.mag.height) return;
  const Plane<int>& m = s.mag;
  s.map(x, y) = static_cast<std::uint8_t>(cannyClass(m(x, y), s.dx(x, y), s.dy(x, y), low, high, magAt(m, x - 1, y),
                                                     magAt(m, x + 1, y), magAt(m, x, y - 1), magAt(m, x, y + 1),
                                                     magAt(m, x - 1, y - 1), magAt(m, x + 1, y - 1),
                                                     magAt(m, x - 1, y + 1), magAt(m, x + 1, y + 1)));
}

// One round: each tile (with a one-pixel halo read from global memory) promotes weak pixels next to
// strong ones until nothing in it changes, writes back, and raises the flag if anything changed.
// Updates only ever raise weak to strong, so reading a neighbour tile's halo mid-update is harmless.
__global__ void __launch_bounds__(kTileX* kTileY) cannyHysteresisKernel(Plane<std::uint8_t> map, int* flag) {
  __shared__ std::uint8_t tile[kTileY + 2][kTileX + 2];
  const int x0 = blockIdx.x * kTileX - 1, y0 = blockIdx.y * kTileY - 1;
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  for (int i = tid; i < (kTileX + 2) * (kTileY + 2); i += kTileX * kTileY) {
    const int ty = i / (kTileX + 2), tx = i % (kTileX + 2);
    const int gx = x0 + tx, gy = y0 + ty;
    tile[ty][tx] = gx < 0 || gy < 0 || gx >= map.width || gy >= map.height
                       ? std::uint8_t{0}
                       : *static_cast<volatile std::uint8_t*>(map.row(gy) + gx);
  }
  __syncthreads();
  const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  const int x = x0 + tx, y = y0 + ty;
  const bool inside = x < map.width && y < map.height;
  bool promoted = false;
  // Each step reads its neighbours, then (after a barrier) writes: no thread writes a cell another
  // reads in the same step, so the tile is free of shared-memory races (compute-sanitizer racecheck)
  // and reaches the same fixed point as an in-place sweep.
  for (;;) {
    bool promote = false;
    if (inside && tile[ty][tx] == 1)
      promote = tile[ty - 1][tx - 1] == 2 || tile[ty - 1][tx] == 2 || tile[ty - 1][tx + 1] == 2 ||
                tile[ty][tx - 1] == 2 || tile[ty][tx + 1] == 2 || tile[ty + 1][tx - 1] == 2 || tile[ty + 1][tx] == 2 ||
                tile[ty + 1][tx + 1] == 2;
    __syncthreads();
    if (promote) {
      tile[ty][tx] = 2;
      promoted = true;
    }
    if (!__syncthreads_or(promote)) break;
  }
  if (promoted) {
    map(x, y) = 2;
    *flag = 1;
  }
}

__global__ void __launch_bounds__(kBlockX* kBlockY)
    cannyOutputKernel(Plane<const std::uint8_t> map, Plane<std::uint8_t> out) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  out(x, y) = map(x, y) == 2 ? 255 : 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host side

std::size_t cannyScratchBytes(int width, int height) {
  const auto n = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  return align256(n * sizeof(int)) + 2 * align256(n * sizeof(short)) + align256(n) + 256;
}

void launchCanny(Plane<const std::uint8_t> red, Plane<const std::uint8_t> green, Plane<const std::uint8_t> blue,
                 bool colour, Plane<std::uint8_t> out, int low, int high, bool l2, void* scratch,
                 std::size_t scratchBytes, int* hostFlag, cudaStream_t stream) {
  const int width = out.width, height = out.height;
  if (width <= 0 || height <= 0 || red.width != width || red.height != height ||
      (colour && (green.width != width || green.height != height || blue.width != width || blue.height != height)))
    throw std::invalid_argument("Canny needs input and output planes of one nonempty size");
  if (planesOverlap(red, out)) throw std::invalid_argument("Canny cannot run in place");
  if (low > high) throw std::invalid_argument("Canny needs low <= high");
  if (scratch == nullptr || scratchBytes < cannyScratchBytes(width, height))
    throw std::invalid_argument("Canny needs " + std::to_string(cannyScratchBytes(width, height)) +
                                " bytes of scratch, got " + std::to_string(scratchBytes));
  if (hostFlag == nullptr) throw std::invalid_argument("Canny needs a pinned host flag");
  const Scratch s = carve(scratch, width, height);
  const CannyImage img{red, colour ? green : red, colour ? blue : red, colour};
  const dim3 block(kBlockX, kBlockY), grid(divUp(width, kBlockX), divUp(height, kBlockY));
  cannyGradientKernel<<<grid, block, 0, stream>>>(img, s, l2);
  GPULAB_CHECK_LAUNCH("cannyGradientKernel");
  cannySuppressKernel<<<grid, block, 0, stream>>>(s, low, high);
  GPULAB_CHECK_LAUNCH("cannySuppressKernel");
  const dim3 tiles(divUp(width, kTileX), divUp(height, kTileY));
  for (;;) {
    GPULAB_CUDA_CHECK(cudaMemsetAsync(s.flag, 0, sizeof(int), stream));
    cannyHysteresisKernel<<<tiles, dim3(kTileX, kTileY), 0, stream>>>(s.map, s.flag);
    GPULAB_CHECK_LAUNCH("cannyHysteresisKernel");
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(hostFlag, s.flag, sizeof(int), cudaMemcpyDeviceToHost, stream));
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (*hostFlag == 0) break;
  }
  cannyOutputKernel<<<grid, block, 0, stream>>>(Plane<const std::uint8_t>{s.map.data, width, height, s.map.pitch}, out);
  GPULAB_CHECK_LAUNCH("cannyOutputKernel");
}

}  // namespace gpulab::kernels
