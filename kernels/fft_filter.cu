#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_filter.cuh"

namespace gpulab::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridY = 65535;

int gridRows(int rows) { return std::max(1, std::min(rows, kMaxGridY)); }

// ---------------------------------------------------------------------------------------------
// Kernels

// Two neighbouring bins per thread, the half spectrum walked as one flat array of each plane, so
// every thread moves a 16-byte pair (one float4 for float spectra) and no block idles on the odd
// column count (W/2 + 1) of a row. The gain is computed once per bin and applied to every plane,
// so the mask costs no memory traffic of its own (no mask buffer exists).
template <class Real>
struct BinPair {
  Complex<Real> a, b;
};

template <class Real>
__device__ __forceinline__ BinPair<Real> loadPair(const Complex<Real>* p) {
  if constexpr (std::is_same_v<Real, float>) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    return {make_float2(v.x, v.y), make_float2(v.z, v.w)};
  } else {
    return {p[0], p[1]};
  }
}

template <class Real>
__device__ __forceinline__ void storePair(Complex<Real>* p, const BinPair<Real>& v) {
  if constexpr (std::is_same_v<Real, float>) {
    *reinterpret_cast<float4*>(p) = make_float4(v.a.x, v.a.y, v.b.x, v.b.y);
  } else {
    p[0] = v.a;
    p[1] = v.b;
  }
}

template <class Real>
__global__ void applyFreqMaskKernel(Complex<Real>* __restrict__ spectrum, int fftWidth, int fftHeight, int planes,
                                    FreqMask mask, Real scale) {
  const unsigned complexWidth = static_cast<unsigned>(fftWidth / 2 + 1);
  const unsigned planeSize = complexWidth * static_cast<unsigned>(fftHeight);
  // Pairs are 16-byte aligned in every plane when a plane holds an even number of bins.
  const bool paired = planeSize % 2 == 0;
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned pair = blockIdx.x * blockDim.x + threadIdx.x; 2 * pair < planeSize; pair += stride) {
    const unsigned i = 2 * pair;
    const unsigned ky = i / complexWidth;
    const unsigned kx = i - ky * complexWidth;
    const Real r2a = normalisedRadiusSquared<Real>(
        static_cast<int>(kx), signedFrequency(static_cast<int>(ky), fftHeight), fftWidth, fftHeight);
    const Real gainA = freqGain<Real>(mask, r2a) * scale;
    const bool hasB = i + 1 < planeSize;
    Real gainB = Real(0);
    if (hasB) {
      const bool wraps = kx + 1 == complexWidth;  // the pair's second bin starts the next row
      const int kxB = wraps ? 0 : static_cast<int>(kx) + 1;
      const int kyB = static_cast<int>(ky) + (wraps ? 1 : 0);
      gainB = freqGain<Real>(mask,
                             normalisedRadiusSquared<Real>(kxB, signedFrequency(kyB, fftHeight), fftWidth, fftHeight)) *
              scale;
    }
    Complex<Real>* bin = spectrum + i;
    for (int p = 0; p < planes; ++p, bin += planeSize) {
      if (hasB && paired) {
        BinPair<Real> v = loadPair<Real>(bin);
        v.a.x *= gainA, v.a.y *= gainA, v.b.x *= gainB, v.b.y *= gainB;
        storePair<Real>(bin, v);
      } else {
        Complex<Real> a = bin[0];
        a.x *= gainA, a.y *= gainA;
        bin[0] = a;
        if (hasB) {
          Complex<Real> b = bin[1];
          b.x *= gainB, b.y *= gainB;
          bin[1] = b;
        }
      }
    }
  }
}

template <class Real>
__global__ void scaleSpectrumKernel(Complex<Real>* __restrict__ spectrum, std::size_t count, Real scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    Complex<Real> v = spectrum[i];
    v.x *= scale;
    v.y *= scale;
    spectrum[i] = v;
  }
}

template <class Real>
__global__ void hermitianFillKernel(Complex<Real>* __restrict__ spectrum, int n) {
  const int k = n / 2 + 1 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= n) return;
  Complex<Real>* plane = spectrum + static_cast<std::size_t>(blockIdx.y) * n;
  Complex<Real> v = plane[n - k];
  v.y = -v.y;
  plane[k] = v;
}

template <class Real>
__global__ void trivialForwardKernel(const Real* __restrict__ real, std::size_t realPlaneStride,
                                     Complex<Real>* __restrict__ spectrum, int planes) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= planes) return;
  Complex<Real> v;
  v.x = real[p * realPlaneStride];
  v.y = Real(0);
  spectrum[p] = v;
}

template <class Real>
__global__ void trivialInverseKernel(const Complex<Real>* __restrict__ spectrum, Real* __restrict__ real,
                                     std::size_t realPlaneStride, int planes) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= planes) return;
  real[p * realPlaneStride] = spectrum[p].x;
}

// The largest finite |sample| over the stack's rows: rows spread over at most kRangeBlocks blocks,
// 16-byte loads where a row is aligned (4 floats or 2 doubles a thread), one atomic per block. (The
// first version ran a block per 256 columns and per 4 rows: 16384 blocks and atomics for a 4096^2
// image, 41 us at 51% of DRAM bandwidth on an H100.)
constexpr int kRangeBlocks = 1024;

template <class Real>
__device__ __forceinline__ unsigned long long finiteBits(Real v) {
  v = fabs(v);
  if (!isfinite(v)) return 0;  // the bits of a non-negative float order like the values
  if constexpr (std::is_same_v<Real, float>)
    return __float_as_uint(v);
  else
    return static_cast<unsigned long long>(__double_as_longlong(v));
}

/// The block's largest finite |sample| of its rows (every thread's partial; thread 0 combines them).
template <class Real>
__device__ __forceinline__ unsigned long long blockMaxFiniteBits(Plane<const Real> stack) {
  using Vector = std::conditional_t<std::is_same_v<Real, float>, float4, double2>;
  constexpr int kLanes = sizeof(Vector) / sizeof(Real);
  unsigned long long best = 0;
  for (int y = blockIdx.x; y < stack.height; y += gridDim.x) {
    const Real* row = stack.row(y);
    const bool aligned = reinterpret_cast<std::uintptr_t>(row) % sizeof(Vector) == 0;
    const int vectors = aligned ? stack.width / kLanes : 0;
    const Vector* vrow = reinterpret_cast<const Vector*>(row);
#pragma unroll 4
    for (int i = threadIdx.x; i < vectors; i += kThreads) {
      const Vector v = vrow[i];
      unsigned long long b;
      if constexpr (kLanes == 4)
        b = max(max(finiteBits(v.x), finiteBits(v.y)), max(finiteBits(v.z), finiteBits(v.w)));
      else
        b = max(finiteBits(v.x), finiteBits(v.y));
      best = b > best ? b : best;
    }
    for (int x = vectors * kLanes + threadIdx.x; x < stack.width; x += kThreads) {
      const unsigned long long b = finiteBits(row[x]);
      best = b > best ? b : best;
    }
  }
  // A warp's maximum by shuffles, then the block's through shared memory (valid in thread 0).
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, best, offset);
    best = other > best ? other : best;
  }
  __shared__ unsigned long long warpBest[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warpBest[warp] = best;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < kThreads / 32; ++w) best = warpBest[w] > best ? warpBest[w] : best;
  return best;
}

template <class Real>
__global__ void __launch_bounds__(kThreads)
    maxFiniteAbsKernel(Plane<const Real> stack, unsigned long long* __restrict__ maxBits) {
  const unsigned long long best = blockMaxFiniteBits(stack);
  if (threadIdx.x == 0 && best != 0) atomicMax(maxBits, best);
}

template <class Real>
__global__ void scalePow2Kernel(Plane<const Real> src, Plane<Real> dst, int exponent) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= src.width) return;
  for (int y = blockIdx.y; y < src.height; y += gridDim.y) dst.row(y)[x] = descalePow2(src.row(y)[x], exponent);
}

template <class T>
__global__ void luminanceKernel(Plane<const T> stack, int channels, float* __restrict__ dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= stack.width) return;
  for (int y = blockIdx.y; y < stack.height; y += gridDim.y) {
    float value;
    if (channels >= 3) {
      const float r = static_cast<float>(stack.row(y)[x]);
      const float g = static_cast<float>(stack.row(stack.height + y)[x]);
      const float b = static_cast<float>(stack.row(2 * stack.height + y)[x]);
      value = 0.299f * r + 0.587f * g + 0.114f * b;
    } else {
      value = static_cast<float>(stack.row(y)[x]);
    }
    dst[static_cast<std::size_t>(y) * stack.width + x] = value;
  }
}

__global__ void logMagnitudeCentredKernel(const float2* __restrict__ half, int fftWidth, int fftHeight,
                                          Plane<float> out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= out.width) return;
  const int complexWidth = fftWidth / 2 + 1;
  const int kx = (x - fftWidth / 2 + fftWidth) % fftWidth;
  for (int y = blockIdx.y; y < out.height; y += gridDim.y) {
    const int ky = (y - fftHeight / 2 + fftHeight) % fftHeight;
    // Bins past the half spectrum are conjugates of their mirror bins: same magnitude.
    const bool stored = kx < complexWidth;
    const int hx = stored ? kx : fftWidth - kx;
    const int hy = stored ? ky : (fftHeight - ky) % fftHeight;
    const float2 v = half[static_cast<std::size_t>(hy) * complexWidth + hx];
    out(x, y) = log1pf(sqrtf(v.x * v.x + v.y * v.y));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers

template <class Real>
void launchApplyFreqMask(Complex<Real>* spectrum, int fftWidth, int fftHeight, int planes, FreqMask mask, Real scale,
                         cudaStream_t stream) {
  if (fftWidth <= 0 || fftHeight <= 0 || planes <= 0) return;
  const std::size_t pairs = (static_cast<std::size_t>(fftWidth / 2 + 1) * fftHeight + 1) / 2;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((pairs + kThreads - 1) / kThreads, 1u << 20));
  applyFreqMaskKernel<Real><<<blocks, kThreads, 0, stream>>>(spectrum, fftWidth, fftHeight, planes, mask, scale);
  GPULAB_CHECK_LAUNCH("applyFreqMask");
}

template <class Real>
void launchScaleSpectrum(Complex<Real>* spectrum, std::size_t count, Real scale, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 65536);
  scaleSpectrumKernel<Real><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(spectrum, count, scale);
  GPULAB_CHECK_LAUNCH("scaleSpectrum");
}

template <class Real>
void launchHermitianFill(Complex<Real>* spectrum, int n, int planes, cudaStream_t stream) {
  const int missing = n - (n / 2 + 1);
  if (missing <= 0 || planes <= 0) return;
  const dim3 grid(divUp(missing, kThreads), planes);
  hermitianFillKernel<Real><<<grid, kThreads, 0, stream>>>(spectrum, n);
  GPULAB_CHECK_LAUNCH("hermitianFill");
}

template <class Real>
void launchTrivialForward(const Real* real, std::size_t realPlaneStride, Complex<Real>* spectrum, int planes,
                          cudaStream_t stream) {
  if (planes <= 0) return;
  trivialForwardKernel<Real><<<divUp(planes, kThreads), kThreads, 0, stream>>>(real, realPlaneStride, spectrum, planes);
  GPULAB_CHECK_LAUNCH("trivialForward");
}

template <class Real>
void launchTrivialInverse(const Complex<Real>* spectrum, Real* real, std::size_t realPlaneStride, int planes,
                          cudaStream_t stream) {
  if (planes <= 0) return;
  trivialInverseKernel<Real><<<divUp(planes, kThreads), kThreads, 0, stream>>>(spectrum, real, realPlaneStride, planes);
  GPULAB_CHECK_LAUNCH("trivialInverse");
}

template <class Real>
void launchMaxFiniteAbs(Plane<const Real> stack, unsigned long long* maxBits, cudaStream_t stream) {
  if (stack.width <= 0 || stack.height <= 0) return;
  maxFiniteAbsKernel<Real><<<std::min(stack.height, kRangeBlocks), kThreads, 0, stream>>>(stack, maxBits);
  GPULAB_CHECK_LAUNCH("maxFiniteAbs");
}

template <class Real>
void launchScalePow2(Plane<const Real> src, Plane<Real> dst, int exponent, cudaStream_t stream) {
  if (src.width <= 0 || src.height <= 0) return;
  const dim3 grid(divUp(src.width, kThreads), gridRows(src.height));
  scalePow2Kernel<Real><<<grid, kThreads, 0, stream>>>(src, dst, exponent);
  GPULAB_CHECK_LAUNCH("scalePow2");
}

template <class T>
void launchLuminance(Plane<const T> stack, int channels, float* dst, cudaStream_t stream) {
  if (stack.width <= 0 || stack.height <= 0) return;
  const dim3 grid(divUp(stack.width, kThreads), gridRows(stack.height));
  luminanceKernel<T><<<grid, kThreads, 0, stream>>>(stack, channels, dst);
  GPULAB_CHECK_LAUNCH("luminance");
}

void launchLogMagnitudeCentred(const float2* halfSpectrum, int fftWidth, int fftHeight, Plane<float> out,
                               cudaStream_t stream) {
  if (out.width <= 0 || out.height <= 0) return;
  const dim3 grid(divUp(out.width, kThreads), gridRows(out.height));
  logMagnitudeCentredKernel<<<grid, kThreads, 0, stream>>>(halfSpectrum, fftWidth, fftHeight, out);
  GPULAB_CHECK_LAUNCH("logMagnitudeCentred");
}

// ---------------------------------------------------------------------------------------------
// Instantiations: float (R2C/C2R) and double (D2Z/Z2D); luminance for every sample type.

#define GPULAB_INSTANTIATE_REAL(Real)                                                                    \
  template void launchApplyFreqMask<Real>(Complex<Real>*, int, int, int, FreqMask, Real, cudaStream_t);  \
  template void launchScaleSpectrum<Real>(Complex<Real>*, std::size_t, Real, cudaStream_t);              \
  template void launchHermitianFill<Real>(Complex<Real>*, int, int, cudaStream_t);                       \
  template void launchTrivialForward<Real>(const Real*, std::size_t, Complex<Real>*, int, cudaStream_t); \
  template void launchTrivialInverse<Real>(const Complex<Real>*, Real*, std::size_t, int, cudaStream_t); \
  template void launchMaxFiniteAbs<Real>(Plane<const Real>, unsigned long long*, cudaStream_t);          \
  template void launchScalePow2<Real>(Plane<const Real>, Plane<Real>, int, cudaStream_t);
GPULAB_INSTANTIATE_REAL(float)
GPULAB_INSTANTIATE_REAL(double)
#undef GPULAB_INSTANTIATE_REAL

template void launchLuminance<std::uint8_t>(Plane<const std::uint8_t>, int, float*, cudaStream_t);
template void launchLuminance<float>(Plane<const float>, int, float*, cudaStream_t);
template void launchLuminance<double>(Plane<const double>, int, float*, cudaStream_t);

}  // namespace gpulab::kernels
