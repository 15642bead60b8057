#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/elementwise.cuh"
#include "gpulab/kernels/launch_support.hpp"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers: arithmetic with one rounding per operation (the _rn intrinsics are never
// contracted into an FMA), and 16-byte packs for vector loads.

__device__ __forceinline__ float mulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mulRn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float addRn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double addRn(double a, double b) { return __dadd_rn(a, b); }

template <class T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

template <ElementwiseOp Op, class T>
__device__ __forceinline__ T apply(T a, T x, T y) {
  if constexpr (Op == ElementwiseOp::SquarePlusTwice)
    return addRn(mulRn(x, x), mulRn(T(2), y));
  else
    return addRn(mulRn(a, x), y);
}

// ---------------------------------------------------------------------------------------------
// Kernel: grid-stride over 16-byte packs, then over the elements after the last whole pack (all
// of them when a pointer is not 16-byte aligned).

constexpr int kThreads = 256;

template <ElementwiseOp Op, class T>
__global__ void __launch_bounds__(kThreads)
    elementwiseKernel(T a, const T* __restrict__ x, const T* __restrict__ y, T* out, std::size_t n, bool vectorOk) {
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  constexpr int kPack = Pack<T>::kSize;
  const std::size_t packs = vectorOk ? n / kPack : 0;
  for (std::size_t p = first; p < packs; p += stride) {
    const Pack<T> xs = reinterpret_cast<const Pack<T>*>(x)[p];
    const Pack<T> ys = reinterpret_cast<const Pack<T>*>(y)[p];
    Pack<T> r;
#pragma unroll
    for (int e = 0; e < kPack; ++e) r.v[e] = apply<Op>(a, xs.v[e], ys.v[e]);
    reinterpret_cast<Pack<T>*>(out)[p] = r;
  }
  for (std::size_t i = packs * kPack + first; i < n; i += stride) out[i] = apply<Op>(a, x[i], y[i]);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launcher

template <class T>
void launchElementwise(ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const bool vectorOk = aligned16(x) && aligned16(y) && aligned16(out);
  const std::size_t items = vectorOk ? n / Pack<T>::kSize + n % Pack<T>::kSize : n;
  // Enough resident blocks to fill every SM several times over; beyond that threads loop.
  const std::size_t wanted = (items + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::min<std::size_t>(wanted, static_cast<std::size_t>(multiprocessors()) * 16));
  switch (op) {
    case ElementwiseOp::SquarePlusTwice:
      elementwiseKernel<ElementwiseOp::SquarePlusTwice, T><<<blocks, kThreads, 0, stream>>>(a, x, y, out, n, vectorOk);
      GPULAB_CHECK_LAUNCH("elementwise x*x+2*y");
      break;
    case ElementwiseOp::Axpy:
      elementwiseKernel<ElementwiseOp::Axpy, T><<<blocks, kThreads, 0, stream>>>(a, x, y, out, n, vectorOk);
      GPULAB_CHECK_LAUNCH("elementwise a*x+y");
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchElementwise<float>(ElementwiseOp, float, const float*, const float*, float*, std::size_t,
                                       cudaStream_t);
template void launchElementwise<double>(ElementwiseOp, double, const double*, const double*, double*, std::size_t,
                                        cudaStream_t);

}  // namespace gpulab::kernels
