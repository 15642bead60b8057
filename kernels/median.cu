#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/median.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernel: a block of 32 x 8 outputs loads its (32 + 2r) x (8 + 2r) tile of keys, border-mapped,
// into shared memory; each thread then selects its pixel's median from the tile.

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kThreads = kBlockX * kBlockY;

std::size_t tileBytes(int radius) {
  return static_cast<std::size_t>(kBlockX + 2 * radius) * (kBlockY + 2 * radius) * sizeof(std::uint32_t);
}

template <class T, int R>
__global__ void __launch_bounds__(kThreads)
    medianKernel(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, std::uint32_t fillKey) {
  extern __shared__ std::uint32_t tile[];
  const int r = R > 0 ? R : radius;
  const int tileWidth = kBlockX + 2 * r;
  const int tileSize = tileWidth * (kBlockY + 2 * r);
  const int x0 = blockIdx.x * kBlockX - r;
  const int y0 = blockIdx.y * kBlockY - r;
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < tileSize; i += kThreads) {
    const int ty = i / tileWidth;
    const int tx = i - ty * tileWidth;
    const int gx = borderIndex(x0 + tx, in.width, mode);
    const int gy = borderIndex(y0 + ty, in.height, mode);
    tile[i] = gx < 0 || gy < 0 ? fillKey : medianKey(__ldg(in.row(gy) + gx));
  }
  __syncthreads();
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  const std::uint32_t* window = tile + threadIdx.y * tileWidth + threadIdx.x;
  std::uint32_t key;
  if constexpr (R > 0)
    key = forgetfulMedian<R>(window, tileWidth);
  else
    key = radixMedian(window, tileWidth, 2 * r + 1, sizeof(T) == 1 ? 8 : 32);
  out(x, y) = medianValue<T>(key);
}

// The histogram path (u8): a block of kHistColumns threads, one output column each, slides down
// kHistRows output rows. Per thread: 256 fine and 16 coarse 16-bit counts in shared memory, laid
// out [bin][thread] so that the threads of a warp touch 32 different banks.
constexpr int kHistColumns = 64;
constexpr int kHistRows = 64;
constexpr std::size_t kHistSharedBytes = (256 + 16) * kHistColumns * sizeof(std::uint16_t);

__global__ void __launch_bounds__(kHistColumns)
    medianHistogramKernel(Plane<const std::uint8_t> in, Plane<std::uint8_t> out, int r, BorderMode mode,
                          std::uint8_t fill) {
  extern __shared__ std::uint16_t counts[];
  std::uint16_t* fine = counts + threadIdx.x;
  std::uint16_t* coarse = counts + 256 * kHistColumns + threadIdx.x;
  for (int b = 0; b < 256; ++b) fine[b * kHistColumns] = 0;
  for (int b = 0; b < 16; ++b) coarse[b * kHistColumns] = 0;
  const int x = blockIdx.x * kHistColumns + threadIdx.x;
  const int y0 = blockIdx.y * kHistRows;
  if (x >= out.width) return;  // no barrier below: each thread's counts are its own
  const int y1 = y0 + kHistRows < out.height ? y0 + kHistRows : out.height;
  const int side = 2 * r + 1;
  const bool interiorX = x - r >= 0 && x + r < in.width;
  auto update = [&](std::uint8_t v, int delta) {
    fine[v * kHistColumns] = static_cast<std::uint16_t>(fine[v * kHistColumns] + delta);
    coarse[(v >> 4) * kHistColumns] = static_cast<std::uint16_t>(coarse[(v >> 4) * kHistColumns] + delta);
  };
  auto row = [&](int yy, int delta) {
    const int yi = borderIndex(yy, in.height, mode);
    if (yi < 0) {
      fine[fill * kHistColumns] = static_cast<std::uint16_t>(fine[fill * kHistColumns] + delta * side);
      coarse[(fill >> 4) * kHistColumns] =
          static_cast<std::uint16_t>(coarse[(fill >> 4) * kHistColumns] + delta * side);
      return;
    }
    const std::uint8_t* p = in.row(yi);
    if (interiorX) {
      for (int dx = -r; dx <= r; ++dx) update(__ldg(p + x + dx), delta);
    } else {
      for (int dx = -r; dx <= r; ++dx) {
        const int xi = borderIndex(x + dx, in.width, mode);
        update(xi < 0 ? fill : __ldg(p + xi), delta);
      }
    }
  };
  for (int yy = y0 - r; yy <= y0 + r; ++yy) row(yy, 1);
  const int rank = side * side / 2;
  for (int y = y0; y < y1; ++y) {
    if (y > y0) {
      row(y - r - 1, -1);
      row(y + r, 1);
    }
    int below = 0, c = 0;
    for (; c < 15; ++c) {
      const int n = coarse[c * kHistColumns];
      if (below + n > rank) break;
      below += n;
    }
    int v = c * 16;
    for (; v < 255; ++v) {
      const int n = fine[v * kHistColumns];
      if (below + n > rank) break;
      below += n;
    }
    out(x, y) = static_cast<std::uint8_t>(v);
  }
}

template <class T, int R>
void launchKernel(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, std::uint32_t fillKey,
                  cudaStream_t stream) {
  const std::size_t shared = tileBytes(radius);
  auto kernel = medianKernel<T, R>;
  if (shared > 48 * 1024)
    GPULAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  const dim3 grid(divUp(out.width, kBlockX), divUp(out.height, kBlockY));
  kernel<<<grid, dim3(kBlockX, kBlockY), shared, stream>>>(in, out, radius, mode, fillKey);
  GPULAB_CHECK_LAUNCH("medianKernel");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host side

MedianPath resolveMedianPath(MedianPath path, int radius, bool eightBit) {
  if (path != MedianPath::Auto) return path;
  // Measured on an H100 (6000x4000 RGB u8): 5x5 forgetful 1.68 ms, histogram 4.04; 7x7 forgetful
  // 5.56 ms, histogram 4.65; 15x15 radix 25.7 ms, histogram 6.75.
  if (eightBit && radius >= 3) return MedianPath::Histogram;
  return radius <= 3 ? MedianPath::Forgetful : MedianPath::Radix;
}

template <class T>
void launchMedian(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, MedianPath path,
                  cudaStream_t stream) {
  if (radius < 0 || radius > kMaxMedianRadius)
    throw std::invalid_argument("median radius " + std::to_string(radius) + " is not allowed: use 0 to " +
                                std::to_string(kMaxMedianRadius));
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("the median needs input and output planes of one nonempty size");
  if (planesOverlap(in, out)) throw std::invalid_argument("the median cannot run in place");
  path = resolveMedianPath(path, radius, sizeof(T) == 1);
  if (path == MedianPath::Forgetful && radius > 3)
    throw std::invalid_argument("the forgetful median takes sizes up to 7x7, not " + std::to_string(2 * radius + 1) +
                                "x" + std::to_string(2 * radius + 1) + ": use the radix or histogram path");
  if (path == MedianPath::Histogram && sizeof(T) != 1)
    throw std::invalid_argument("the histogram median takes u8 images only: use the forgetful or radix path");
  if (radius == 0) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, in.width * sizeof(T), in.height,
                                        cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if constexpr (sizeof(T) == 1) {
    if (path == MedianPath::Histogram) {
      const dim3 grid(divUp(out.width, kHistColumns), divUp(out.height, kHistRows));
      medianHistogramKernel<<<grid, kHistColumns, kHistSharedBytes, stream>>>(in, out, radius, mode, borderValue);
      GPULAB_CHECK_LAUNCH("medianHistogramKernel");
      return;
    }
  }
  const std::uint32_t fillKey = medianKey(borderValue);
  if (path == MedianPath::Radix) return launchKernel<T, 0>(in, out, radius, mode, fillKey, stream);
  switch (radius) {
    case 1:
      return launchKernel<T, 1>(in, out, radius, mode, fillKey, stream);
    case 2:
      return launchKernel<T, 2>(in, out, radius, mode, fillKey, stream);
    default:
      return launchKernel<T, 3>(in, out, radius, mode, fillKey, stream);
  }
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchMedian<std::uint8_t>(Plane<const std::uint8_t>, Plane<std::uint8_t>, int, BorderMode, std::uint8_t,
                                         MedianPath, cudaStream_t);
template void launchMedian<float>(Plane<const float>, Plane<float>, int, BorderMode, float, MedianPath, cudaStream_t);

}  // namespace gpulab::kernels
