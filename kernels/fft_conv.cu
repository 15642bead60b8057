#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_conv.cuh"

namespace gpulab::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridY = 65535;

int gridRows(long long rows) { return static_cast<int>(std::max<long long>(1, std::min<long long>(rows, kMaxGridY))); }

// ---------------------------------------------------------------------------------------------
// Device helpers

template <class T, class Real>
__device__ __forceinline__ T convertSample(Real v) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    if (!(v == v)) return 0;  // NaN
    const Real r = rint(v);   // ties to even, as std::nearbyint on the host
    return static_cast<std::uint8_t>(r < Real(0) ? Real(0) : (r > Real(255) ? Real(255) : r));
  } else {
    return static_cast<T>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels

// One thread per padded column, rows strided over the grid; each block row handles one padded row
// of one plane (row index = plane * dstHeight + u). Reads of the source are along rows: coalesced
// except where the border folds them.
template <class T, class Real>
__global__ void borderPadKernel(Plane<const T> src, Real* __restrict__ dst, PadRegion region, int planes,
                                Real constant) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= region.dstWidth) return;
  const long long rows = static_cast<long long>(planes) * region.dstHeight;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    const int p = static_cast<int>(row / region.dstHeight);
    const int u = static_cast<int>(row - static_cast<long long>(p) * region.dstHeight);
    Real value = Real(0);
    if (u < region.fillHeight && v < region.fillWidth) {
      const int sy = borderIndex(u + region.originY, src.height, region.mode);
      const int sx = borderIndex(v + region.originX, src.width, region.mode);
      value = (sy < 0 || sx < 0) ? constant : static_cast<Real>(src.row(p * src.height + sy)[sx]);
    }
    dst[static_cast<std::size_t>(row) * region.dstWidth + v] = value;
  }
}

template <class Real, class T>
__global__ void cropConvertKernel(const Real* __restrict__ src, int srcWidth, int srcHeight, int offsetX, int offsetY,
                                  int planes, Plane<T> out, int outPlaneRows) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= out.width) return;
  const long long rows = static_cast<long long>(planes) * out.height;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    const int p = static_cast<int>(row / out.height);
    const int y = static_cast<int>(row - static_cast<long long>(p) * out.height);
    const std::size_t at =
        (static_cast<std::size_t>(p) * srcHeight + (y + offsetY)) * static_cast<std::size_t>(srcWidth) + (x + offsetX);
    out.row(p * outPlaneRows + y)[x] = convertSample<T>(src[at]);
  }
}

template <class Real>
__global__ void multiplySpectraKernel(Complex<Real>* __restrict__ spectrum, const Complex<Real>* __restrict__ kernel,
                                      std::size_t count, int planes, Real scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    Complex<Real> k = kernel[i];
    k.x *= scale;
    k.y *= scale;
    Complex<Real>* bin = spectrum + i;
    for (int p = 0; p < planes; ++p, bin += count) {
      const Complex<Real> a = *bin;
      Complex<Real> r;
      r.x = a.x * k.x - a.y * k.y;
      r.y = a.x * k.y + a.y * k.x;
      *bin = r;
    }
  }
}

// One thread per element of the torus; it gathers the taps that wrap onto it (usually one or none).
template <class Real>
__global__ void wrapKernelKernel(const Real* __restrict__ kernel, int kw, int kh, Real* __restrict__ dst, int width,
                                 int height, int shiftX, int shiftY) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= width) return;
  const int j0 = (v + shiftX) % width;  // shifts are reduced to [0, side) by the launcher
  for (int u = blockIdx.y; u < height; u += gridDim.y) {
    const int i0 = (u + shiftY) % height;
    Real sum = Real(0);
    for (int i = i0; i < kh; i += height)
      for (int j = j0; j < kw; j += width) sum += kernel[static_cast<std::size_t>(i) * kw + j];
    dst[static_cast<std::size_t>(u) * width + v] = sum;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

template <class Real>
void launchWrapKernel(const Real* kernel, int kw, int kh, Real* dst, int width, int height, int shiftX, int shiftY,
                      cudaStream_t stream) {
  if (width <= 0 || height <= 0 || kw <= 0 || kh <= 0) return;
  shiftX = ((shiftX % width) + width) % width;
  shiftY = ((shiftY % height) + height) % height;
  const dim3 grid(divUp(width, kThreads), gridRows(height));
  wrapKernelKernel<Real><<<grid, kThreads, 0, stream>>>(kernel, kw, kh, dst, width, height, shiftX, shiftY);
  GPULAB_CHECK_LAUNCH("wrapKernel");
}

template <class T, class Real>
void launchBorderPad(Plane<const T> srcStack, int planes, Real* dst, PadRegion region, cudaStream_t stream) {
  if (region.dstWidth <= 0 || region.dstHeight <= 0 || planes <= 0) return;
  const dim3 grid(divUp(region.dstWidth, kThreads), gridRows(static_cast<long long>(planes) * region.dstHeight));
  borderPadKernel<T, Real>
      <<<grid, kThreads, 0, stream>>>(srcStack, dst, region, planes, static_cast<Real>(region.value));
  GPULAB_CHECK_LAUNCH("borderPad");
}

template <class Real, class T>
void launchCropConvert(const Real* src, int srcWidth, int srcHeight, int offsetX, int offsetY, int planes,
                       Plane<T> outStack, int outPlaneRows, cudaStream_t stream) {
  if (outStack.width <= 0 || outStack.height <= 0 || planes <= 0) return;
  const dim3 grid(divUp(outStack.width, kThreads), gridRows(static_cast<long long>(planes) * outStack.height));
  cropConvertKernel<Real, T>
      <<<grid, kThreads, 0, stream>>>(src, srcWidth, srcHeight, offsetX, offsetY, planes, outStack, outPlaneRows);
  GPULAB_CHECK_LAUNCH("cropConvert");
}

template <class Real>
void launchMultiplySpectra(Complex<Real>* spectrum, const Complex<Real>* kernelSpectrum, std::size_t count, int planes,
                           Real scale, cudaStream_t stream) {
  if (count == 0 || planes <= 0) return;
  const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 1u << 20);
  multiplySpectraKernel<Real>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(spectrum, kernelSpectrum, count, planes, scale);
  GPULAB_CHECK_LAUNCH("multiplySpectra");
}

// ---------------------------------------------------------------------------------------------
// Instantiations: every sample type to and from float and double.

#define GPULAB_INSTANTIATE_PAIR(T, Real)                                                       \
  template void launchBorderPad<T, Real>(Plane<const T>, int, Real*, PadRegion, cudaStream_t); \
  template void launchCropConvert<Real, T>(const Real*, int, int, int, int, int, Plane<T>, int, cudaStream_t);
GPULAB_INSTANTIATE_PAIR(std::uint8_t, float)
GPULAB_INSTANTIATE_PAIR(float, float)
GPULAB_INSTANTIATE_PAIR(double, float)
GPULAB_INSTANTIATE_PAIR(std::uint8_t, double)
GPULAB_INSTANTIATE_PAIR(float, double)
GPULAB_INSTANTIATE_PAIR(double, double)
#undef GPULAB_INSTANTIATE_PAIR

#define GPULAB_INSTANTIATE_REAL(Real)                                                                     \
  template void launchMultiplySpectra<Real>(Complex<Real>*, const Complex<Real>*, std::size_t, int, Real, \
                                            cudaStream_t);                                                \
  template void launchWrapKernel<Real>(const Real*, int, int, Real*, int, int, int, int, cudaStream_t);
GPULAB_INSTANTIATE_REAL(float)
GPULAB_INSTANTIATE_REAL(double)
#undef GPULAB_INSTANTIATE_REAL

}  // namespace gpulab::kernels
