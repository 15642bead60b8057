#include <cstdint>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/layout.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernels: one thread per pixel, all channels of it; rows are independent.
// Plane stacks hold `channels` planes of `height` rows each; srcStack.height / dstStack.height is
// the height of one plane. The interleaved side holds the band of rows [firstRow, firstRow + rows).

template <class T>
__global__ void deinterleaveKernel(const T* __restrict__ src, std::size_t srcPitch, int channels, Plane<T> dst,
                                   int firstRow) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= dst.width) return;
  const T* px = reinterpret_cast<const T*>(reinterpret_cast<const unsigned char*>(src) + y * srcPitch) +
                static_cast<std::size_t>(x) * channels;
  for (int c = 0; c < channels; ++c) dst.row(c * dst.height + firstRow + y)[x] = px[c];
}

template <class T>
__global__ void interleaveKernel(Plane<const T> src, int channels, T* __restrict__ dst, std::size_t dstPitch,
                                 int firstRow) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= src.width) return;
  T* px = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(dst) + y * dstPitch) +
          static_cast<std::size_t>(x) * channels;
  for (int c = 0; c < channels; ++c) px[c] = src.row(c * src.height + firstRow + y)[x];
}

constexpr int kThreads = 256;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

template <class T>
void launchDeinterleave(const T* src, int channels, Plane<T> dstStack, cudaStream_t stream) {
  launchDeinterleaveRows(src, channels, dstStack, 0, dstStack.height, stream);
}

template <class T>
void launchInterleave(Plane<const T> srcStack, int channels, T* dst, cudaStream_t stream) {
  launchInterleaveRows(srcStack, channels, dst, 0, srcStack.height, stream);
}

template <class T>
void launchDeinterleaveRows(const T* src, int channels, Plane<T> dstStack, int firstRow, int rows,
                            cudaStream_t stream) {
  if (dstStack.width == 0 || rows <= 0) return;
  const dim3 grid(divUp(dstStack.width, kThreads), rows);
  deinterleaveKernel<T><<<grid, kThreads, 0, stream>>>(
      src, static_cast<std::size_t>(dstStack.width) * channels * sizeof(T), channels, dstStack, firstRow);
  GPULAB_CHECK_LAUNCH("deinterleave");
}

template <class T>
void launchInterleaveRows(Plane<const T> srcStack, int channels, T* dst, int firstRow, int rows, cudaStream_t stream) {
  if (srcStack.width == 0 || rows <= 0) return;
  const dim3 grid(divUp(srcStack.width, kThreads), rows);
  interleaveKernel<T><<<grid, kThreads, 0, stream>>>(
      srcStack, channels, dst, static_cast<std::size_t>(srcStack.width) * channels * sizeof(T), firstRow);
  GPULAB_CHECK_LAUNCH("interleave");
}

template <class T>
void launchDeinterleave(const T* src, std::size_t srcPitch, int channels, Plane<T> dstStack, cudaStream_t stream) {
  if (dstStack.width == 0 || dstStack.height == 0) return;
  const dim3 grid(divUp(dstStack.width, kThreads), dstStack.height);
  deinterleaveKernel<T><<<grid, kThreads, 0, stream>>>(src, srcPitch, channels, dstStack, 0);
  GPULAB_CHECK_LAUNCH("deinterleave");
}

template <class T>
void launchInterleave(Plane<const T> srcStack, int channels, T* dst, std::size_t dstPitch, cudaStream_t stream) {
  if (srcStack.width == 0 || srcStack.height == 0) return;
  const dim3 grid(divUp(srcStack.width, kThreads), srcStack.height);
  interleaveKernel<T><<<grid, kThreads, 0, stream>>>(srcStack, channels, dst, dstPitch, 0);
  GPULAB_CHECK_LAUNCH("interleave");
}

// ---------------------------------------------------------------------------------------------
// Instantiations: the sample types of gpulab::PixelType.

#define GPULAB_INSTANTIATE(T)                                                               \
  template void launchDeinterleave<T>(const T*, int, Plane<T>, cudaStream_t);               \
  template void launchInterleave<T>(Plane<const T>, int, T*, cudaStream_t);                 \
  template void launchDeinterleaveRows<T>(const T*, int, Plane<T>, int, int, cudaStream_t); \
  template void launchInterleaveRows<T>(Plane<const T>, int, T*, int, int, cudaStream_t);   \
  template void launchDeinterleave<T>(const T*, std::size_t, int, Plane<T>, cudaStream_t);  \
  template void launchInterleave<T>(Plane<const T>, int, T*, std::size_t, cudaStream_t);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(std::uint16_t)
GPULAB_INSTANTIATE(float)
GPULAB_INSTANTIATE(double)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
