#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/morphology.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

template <bool kDilate, class T>
__device__ __forceinline__ T pick(T a, T b) {
  if constexpr (kDilate)
    return a < b ? b : a;
  else
    return b < a ? b : a;
}

template <class T>
__device__ __forceinline__ T sampleAt(const Plane<const T>& in, int x, int y, BorderMode mode, T fill) {
  const int xi = borderIndex(x, in.width, mode);
  const int yi = borderIndex(y, in.height, mode);
  return xi < 0 || yi < 0 ? fill : __ldg(in.row(yi) + xi);
}

// ---------------------------------------------------------------------------------------------
// Kernels: one output per thread, warps along rows (coalesced), the window's overlap from L1.

template <class T, bool kDilate, bool kRows>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    morphLineKernel(Plane<const T> in, Plane<T> out, int first, int last, BorderMode mode, T fill) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  T acc = sampleAt(in, kRows ? x + first : x, kRows ? y : y + first, mode, fill);
  const int n = kRows ? in.width : in.height;
  const int at = kRows ? x : y;
  if (at + first >= 0 && at + last < n) {
    if constexpr (kRows) {
      const T* row = in.row(y) + x;
      for (int d = first + 1; d <= last; ++d) acc = pick<kDilate>(acc, __ldg(row + d));
    } else {
      for (int d = first + 1; d <= last; ++d) acc = pick<kDilate>(acc, __ldg(in.row(y + d) + x));
    }
  } else {
    for (int d = first + 1; d <= last; ++d)
      acc = pick<kDilate>(acc, sampleAt(in, kRows ? x + d : x, kRows ? y : y + d, mode, fill));
  }
  out(x, y) = acc;
}

template <class T, bool kDilate>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    morphSpansKernel(Plane<const T> in, Plane<T> out, const int* __restrict__ spans, int rows, int anchorX, int anchorY,
                     BorderMode mode, T fill, T identity) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  T acc = identity;
  for (int i = 0; i < rows; ++i) {
    const int j1 = __ldg(spans + 2 * i), j2 = __ldg(spans + 2 * i + 1);
    const int yy = y + i - anchorY;
    const int x1 = x + j1 - anchorX, x2 = x + j2 - anchorX;  // [x1, x2)
    if (j1 >= j2) continue;
    if (yy >= 0 && yy < in.height && x1 >= 0 && x2 <= in.width) {
      const T* row = in.row(yy);
      for (int xx = x1; xx < x2; ++xx) acc = pick<kDilate>(acc, __ldg(row + xx));
    } else {
      for (int xx = x1; xx < x2; ++xx) acc = pick<kDilate>(acc, sampleAt(in, xx, yy, mode, fill));
    }
  }
  out(x, y) = acc;
}

// ---------------------------------------------------------------------------------------------
// Host side

template <class T>
void validate(Plane<const T> in, Plane<T> out) {
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("morphology needs input and output planes of one nonempty size");
  if (planesOverlap(in, out)) throw std::invalid_argument("a morphology pass cannot run in place");
}

dim3 gridFor(int width, int height) { return dim3(divUp(width, kBlockX), divUp(height, kBlockY)); }

template <class T, bool kRows>
void launchLine(Plane<const T> in, Plane<T> out, int first, int last, bool dilate, BorderMode mode, T fill,
                cudaStream_t stream) {
  validate(in, out);
  if (first > last) throw std::invalid_argument("a morphology pass needs first <= last");
  const dim3 grid = gridFor(out.width, out.height), block(kBlockX, kBlockY);
  if (dilate)
    morphLineKernel<T, true, kRows><<<grid, block, 0, stream>>>(in, out, first, last, mode, fill);
  else
    morphLineKernel<T, false, kRows><<<grid, block, 0, stream>>>(in, out, first, last, mode, fill);
  GPULAB_CHECK_LAUNCH("morphLineKernel");
}

}  // namespace

template <class T>
void launchMorphRows(Plane<const T> in, Plane<T> out, int first, int last, bool dilate, BorderMode mode, T fill,
                     cudaStream_t stream) {
  launchLine<T, true>(in, out, first, last, dilate, mode, fill, stream);
}

template <class T>
void launchMorphColumns(Plane<const T> in, Plane<T> out, int first, int last, bool dilate, BorderMode mode, T fill,
                        cudaStream_t stream) {
  launchLine<T, false>(in, out, first, last, dilate, mode, fill, stream);
}

template <class T>
void launchMorphSpans(Plane<const T> in, Plane<T> out, const int* spans, int rows, int anchorX, int anchorY,
                      bool dilate, BorderMode mode, T fill, cudaStream_t stream) {
  validate(in, out);
  if (spans == nullptr || rows <= 0) throw std::invalid_argument("the morphology element has no rows");
  // The identity of the extreme: what an empty element leaves (never for the elements gpulab builds).
  const T identity = dilate ? (sizeof(T) == 1 ? T(0) : T(-__builtin_huge_valf()))
                            : (sizeof(T) == 1 ? T(255) : T(__builtin_huge_valf()));
  const dim3 grid = gridFor(out.width, out.height), block(kBlockX, kBlockY);
  if (dilate)
    morphSpansKernel<T, true><<<grid, block, 0, stream>>>(in, out, spans, rows, anchorX, anchorY, mode, fill, identity);
  else
    morphSpansKernel<T, false>
        <<<grid, block, 0, stream>>>(in, out, spans, rows, anchorX, anchorY, mode, fill, identity);
  GPULAB_CHECK_LAUNCH("morphSpansKernel");
}

// ---------------------------------------------------------------------------------------------
// Instantiations

#define GPULAB_INSTANTIATE(T)                                                                                 \
  template void launchMorphRows<T>(Plane<const T>, Plane<T>, int, int, bool, BorderMode, T, cudaStream_t);    \
  template void launchMorphColumns<T>(Plane<const T>, Plane<T>, int, int, bool, BorderMode, T, cudaStream_t); \
  template void launchMorphSpans<T>(Plane<const T>, Plane<T>, const int*, int, int, int, bool, BorderMode, T, \
                                    cudaStream_t);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(float)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
