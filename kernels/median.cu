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

template <class T>
void launchMedian(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, cudaStream_t stream) {
  if (radius < 0 || radius > kMaxMedianRadius)
    throw std::invalid_argument("median radius " + std::to_string(radius) + " is not allowed: use 0 to " +
                                std::to_string(kMaxMedianRadius));
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("the median needs input and output planes of one nonempty size");
  if (planesOverlap(in, out)) throw std::invalid_argument("the median cannot run in place");
  if (radius == 0) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, in.width * sizeof(T), in.height,
                                        cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const std::uint32_t fillKey = medianKey(borderValue);
  switch (radius) {
    case 1:
      return launchKernel<T, 1>(in, out, radius, mode, fillKey, stream);
    case 2:
      return launchKernel<T, 2>(in, out, radius, mode, fillKey, stream);
    case 3:
      return launchKernel<T, 3>(in, out, radius, mode, fillKey, stream);
    default:
      return launchKernel<T, 0>(in, out, radius, mode, fillKey, stream);
  }
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchMedian<std::uint8_t>(Plane<const std::uint8_t>, Plane<std::uint8_t>, int, BorderMode, std::uint8_t,
                                         cudaStream_t);
template void launchMedian<float>(Plane<const float>, Plane<float>, int, BorderMode, float, cudaStream_t);

}  // namespace gpulab::kernels
