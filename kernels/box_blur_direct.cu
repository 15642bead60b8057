// Box blur, direct path (box_blur.cuh, "Direct path"): radii 1..kBoxBlurDirectMaxRadius on stacks of
// planes, streamed down bands of rows with no block barrier, in the manner of the Sobel kernel.
//
// A thread owns 4 adjacent output columns of one band of rows. Per input row it loads its 4 samples
// with one vector load and the R either side from the neighbouring aligned vectors (the lines its
// neighbours load too: L1 hits), and sums each output's 2R+1 samples along the row: in float for
// f32 (the first output of a row left to right, each next one sliding: at most 2R + 6 roundings), exactly in integers
// for u8. Down the band each output keeps the running sum of its window's 2R+1 row sums (double for f32, unsigned for
// u8): the entering row's sum goes in, and the leaving row's, kept in the thread's own slots of a shared ring of 2R+1
// rows, comes off (bit for bit the value that went in, so nothing drifts but the double's own rounding). Rows are
// loaded kRowsPerStep at a time before any of them is used. The grid is kWaves waves of blocks:
// bands short enough that an SM whose blocks finish early takes new ones.
//
// Measured on an H100 (2026-11-27, 4096^2 f32, copy ceiling 2984 GB/s): r=1 0.061 ms (the 3x3
// convolution it replaces 0.062), r=2 0.065 (the 5x5 convolution 0.073). From r=3 on the sweep is
// faster, so the path stops at r=2 (kBoxBlurDirectMaxRadius). With the radius a template argument up
// to 8 (two vectors either side from r=5), in the same call, this kernel against the sweep: r=3
// 0.082 / 0.075, r=4 0.095 / 0.077, r=7 0.200 / 0.081 ms. At 64 registers it spilled from r=3 on;
// a row a step instead of 2 took the spills away (r=3 0.075, r=4 0.083, r=7 0.130), and 6 blocks
// an SM with 2 or 3 rows a step was slower still. Nsight Compute at r=3 (the first version):
// 35 M warp instructions, 34% achieved occupancy, 40% of DRAM bandwidth.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpulab/kernels/box_blur.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "vector_loads.cuh"

namespace gpulab::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kColumns = 4;                         // adjacent output columns a thread
constexpr int kBlockColumns = kThreads * kColumns;  // 512
constexpr int kRowsPerStep = 2;                     // input rows a thread loads before it uses them
constexpr int kMinBlocks = 8;                       // blocks an SM must hold: caps the registers at 64
constexpr int kWaves = 4;
constexpr int kMinBandRows = 8;

template <class T>
struct DirectSums;
template <>
struct DirectSums<float> {
  using Row = float;      // a row's 2R+1 samples
  using Column = double;  // the window's 2R+1 row sums
};
template <>
struct DirectSums<std::uint8_t> {
  using Row = unsigned;
  using Column = unsigned;
};

template <class T>
struct DirectArgs {
  Plane<const T> in;  ///< planes of `height` rows one after the other (the stack's height is one plane's)
  Plane<T> out;
  BorderMode mode = BorderMode::Reflect101;
  T fill{};
  int bandRows = 0;
  bool vectors = false;  ///< rows aligned for 4-sample vector loads and stores, in and out
  BoxArea area;
  BoxDivide divide;  ///< u8: floor(n / area) for n up to 255 x area + area / 2
};

template <class T>
GPULAB_HD Plane<T> planeAt(const Plane<T>& stack, int z) {
  return {stack.row(z * stack.height), stack.width, stack.height, stack.pitch};
}

/// Vectors of 4 samples a thread loads either side of its own: enough for R samples.
template <int R>
constexpr int kSideVectors = (R + 3) / 4;

/// Whether columns x - 4V .. x + 3 + 4V (V = kSideVectors) lie inside the row and the rows take
/// vector loads: the thread's window then needs no border mapping along x.
template <class T, int R>
GPULAB_HD bool interiorColumns(const DirectArgs<T>& a, int x, int width) {
  constexpr int V = kSideVectors<R>;
  return a.vectors && x >= 4 * V && x + 4 + 4 * V <= width;
}

/// Samples x - R .. x + 3 + R of row `row` by vector loads, where interiorColumns holds.
template <class T, int R, class Row>
GPULAB_HD void loadVectors(const T* row, int x, Row (&w)[4 + 2 * R]) {
  constexpr int V = kSideVectors<R>;
  Row v[2 * V + 1][4];
  GPULAB_UNROLL
  for (int i = 0; i < 2 * V + 1; ++i) loadFour(row + x + 4 * (i - V), v[i]);
  GPULAB_UNROLL
  for (int k = 0; k < 4 + 2 * R; ++k) {
    const int s = 4 * V - R + k;  // sample k of the window in the loaded vectors
    w[k] = v[s / 4][s % 4];
  }
}

/// Samples x - R .. x + 3 + R of row y (any integer: border-mapped, the fill outside for Constant).
template <class T, int R, class Row>
GPULAB_HD void loadWindow(const DirectArgs<T>& a, const Plane<const T>& in, int x, int y, Row (&w)[4 + 2 * R]) {
  const int ym = borderIndex(y, in.height, a.mode);
  if (ym < 0) {
    GPULAB_UNROLL
    for (int k = 0; k < 4 + 2 * R; ++k) w[k] = static_cast<Row>(a.fill);
    return;
  }
  const T* row = in.row(ym);
  if (interiorColumns<T, R>(a, x, in.width)) {
    loadVectors<T, R>(row, x, w);
    return;
  }
  for (int k = 0; k < 4 + 2 * R; ++k) {
    const int xm = borderIndex(x - R + k, in.width, a.mode);
    w[k] = static_cast<Row>(xm < 0 ? a.fill : row[xm]);
  }
}

template <class T>
GPULAB_HD void storeFour(bool vectors, T* dst, int x, int width, const T (&v)[4]) {
#if defined(__CUDA_ARCH__)
  if (vectors && x + 4 <= width) {
    if constexpr (std::is_same_v<T, float>)
      *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
    else
      *reinterpret_cast<uchar4*>(dst) = make_uchar4(v[0], v[1], v[2], v[3]);
    return;
  }
#else
  static_cast<void>(vectors);  // the host stores sample by sample
#endif
  for (int j = 0; j < 4 && x + j < width; ++j) dst[j] = v[j];
}

// Each output's 2R+1 samples of a row: the first left to right, each next one sliding (the sample
// entering added, the one leaving taken off).
template <int R, class Row>
GPULAB_HD void rowSums(const Row (&w)[4 + 2 * R], Row (&h)[4]) {
  Row s = w[0];
  GPULAB_UNROLL
  for (int k = 1; k <= 2 * R; ++k) s += w[k];
  h[0] = s;
  GPULAB_UNROLL
  for (int j = 1; j < 4; ++j) h[j] = h[j - 1] + w[j + 2 * R] - w[j - 1];
}

// The thread's 4 columns from x of output rows [o0, o1). `ring` is the thread's slot 0 of the ring
// of row sums; slot s starts ring + s * stride. kInside: the band's window rows lie inside the image
// and interiorColumns holds, so rows are read by vector loads with no border mapping.
template <class T, int R, bool kInside>
GPULAB_HD void walkBand(const DirectArgs<T>& a, const Plane<const T>& in, const Plane<T>& out,
                        typename DirectSums<T>::Row* ring, int stride, int x, int o0, int o1) {
  using Row = typename DirectSums<T>::Row;
  using Column = typename DirectSums<T>::Column;
  constexpr int W = 4 + 2 * R;
  Column column[4] = {};
  // Row o0 - R + i lives in slot i mod (2R + 1). Rows o0 - R .. o0 + R - 1 first: every window row
  // of o0 but its last.
  Row* const last = ring + 2 * R * stride;
  for (int i = 0; i < 2 * R; ++i) {
    Row w[W], h[4];
    if constexpr (kInside)
      loadVectors<T, R>(in.row(o0 - R + i), x, w);
    else
      loadWindow<T, R>(a, in, x, o0 - R + i, w);
    rowSums<R>(w, h);
    GPULAB_UNROLL
    for (int j = 0; j < 4; ++j) {
      ring[i * stride + j] = h[j];
      column[j] += static_cast<Column>(h[j]);
    }
  }
  Row* enter = last;  // the slots of rows y + R and y - R
  Row* leave = ring;
  for (int y = o0; y < o1; y += kRowsPerStep) {
    Row w[kRowsPerStep][W];
    GPULAB_UNROLL
    for (int u = 0; u < kRowsPerStep; ++u)
      if (y + u < o1) {
        if constexpr (kInside)
          loadVectors<T, R>(in.row(y + u + R), x, w[u]);
        else
          loadWindow<T, R>(a, in, x, y + u + R, w[u]);
      }
    GPULAB_UNROLL
    for (int u = 0; u < kRowsPerStep; ++u) {
      if (y + u >= o1) break;
      Row h[4];
      rowSums<R>(w[u], h);
      T v[4];
      float probe = 0.f;  // f32: NaN once an output is NaN or infinite
      GPULAB_UNROLL
      for (int j = 0; j < 4; ++j) {
        enter[j] = h[j];
        column[j] += static_cast<Column>(h[j]);
        if constexpr (std::is_same_v<T, float>) {
          v[j] = static_cast<float>(column[j] * a.area.inv);
          probe = fmaf(v[j], 0.f, probe);
        } else {
          v[j] = static_cast<T>(a.divide(column[j] + a.area.count / 2));
        }
        column[j] -= static_cast<Column>(leave[j]);
      }
      if constexpr (std::is_same_v<T, float>) {
        if (probe != probe)
          for (int j = 0; j < 4 && x + j < out.width; ++j)
            if (!boxFinite(v[j])) v[j] = boxWindowMeanExact(in, 1, x + j, 0, y + u, R, a.mode, a.fill);
      }
      storeFour(a.vectors, out.row(y + u) + x, x, out.width, v);
      enter = enter == last ? ring : enter + stride;
      leave = leave == last ? ring : leave + stride;
    }
  }
}

template <class T, int R>
GPULAB_HD void directBand(const DirectArgs<T>& a, const Plane<const T>& in, const Plane<T>& out,
                          typename DirectSums<T>::Row* ring, int stride, int x, int o0, int o1) {
  if (o0 - R >= 0 && o1 + R <= in.height && interiorColumns<T, R>(a, x, in.width))
    walkBand<T, R, true>(a, in, out, ring, stride, x, o0, o1);
  else
    walkBand<T, R, false>(a, in, out, ring, stride, x, o0, o1);
}

template <class T, int R>
__global__ void __launch_bounds__(kThreads, kMinBlocks) boxDirectKernel(DirectArgs<T> a) {
  using Row = typename DirectSums<T>::Row;
  __shared__ __align__(16) Row ring[(2 * R + 1) * kThreads * kColumns];
  const int x = (static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x)) * kColumns;
  const int o0 = static_cast<int>(blockIdx.y) * a.bandRows;
  if (x >= a.out.width || o0 >= a.out.height) return;  // no barrier follows
  const int o1 = o0 + a.bandRows < a.out.height ? o0 + a.bandRows : a.out.height;
  const int z = static_cast<int>(blockIdx.z);
  directBand<T, R>(a, planeAt(a.in, z), planeAt(a.out, z), ring + threadIdx.x * kColumns, kThreads * kColumns, x, o0,
                   o1);
}

/// Rows per band: about `targetBlocks` blocks in all, bands of at least kMinBandRows rows.
int bandRowsFor(int width, int height, int planes, long long targetBlocks) {
  const long long perBand = static_cast<long long>(divUp(width, kBlockColumns)) * planes;
  const long long wanted = std::max(1LL, targetBlocks / perBand);
  const int minRows = std::min(height, kMinBandRows);
  return divUp(height, static_cast<int>(std::min<long long>(wanted, height / minRows)));
}

template <class T>
DirectArgs<T> directArgs(Plane<const T> inStack, Plane<T> outStack, int planes, int radius, BorderMode mode, T fill) {
  if (radius < 1 || radius > kBoxBlurDirectMaxRadius)
    throw std::invalid_argument("the direct box blur takes radii 1 to " + std::to_string(kBoxBlurDirectMaxRadius) +
                                ", not " + std::to_string(radius));
  if (inStack.width != outStack.width || inStack.height != outStack.height || inStack.width <= 0 ||
      inStack.height <= 0 || planes <= 0)
    throw std::invalid_argument("the direct box blur needs input and output stacks of one nonempty size, got " +
                                std::to_string(inStack.width) + "x" + std::to_string(inStack.height) + " and " +
                                std::to_string(outStack.width) + "x" + std::to_string(outStack.height));
  const Plane<const T> inAll{inStack.data, inStack.width, inStack.height * planes, inStack.pitch};
  const Plane<T> outAll{outStack.data, outStack.width, outStack.height * planes, outStack.pitch};
  if (planesOverlap(inAll, outAll))
    throw std::invalid_argument("box blur cannot run in place: give it a separate output plane");
  const auto aligned = [](const void* p, std::size_t pitch) {
    constexpr std::size_t kBytes = 4 * sizeof(T);
    return reinterpret_cast<std::uintptr_t>(p) % kBytes == 0 && pitch % kBytes == 0;
  };
  DirectArgs<T> a;
  a.in = inStack;
  a.out = outStack;
  a.mode = mode;
  a.fill = fill;
  a.vectors = aligned(inStack.data, inStack.pitch) && aligned(outStack.data, outStack.pitch);
  a.area = boxAreaOf(radius);
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    const unsigned largest = 255u * a.area.count + a.area.count / 2;
    int bits = 1;
    while ((largest >> bits) != 0) ++bits;
    a.divide = boxDivideOf(a.area.count, bits);
  }
  return a;
}

// f(integral_constant R) for radius 1..kBoxBlurDirectMaxRadius.
template <class F>
void withRadius(int radius, F&& f) {
  static_assert(kBoxBlurDirectMaxRadius == 2, "a case a radius");
  if (radius == 1) return f(std::integral_constant<int, 1>{});
  return f(std::integral_constant<int, 2>{});
}

}  // namespace

template <class T>
void launchBoxBlurDirect(Plane<const T> inStack, Plane<T> outStack, int planes, int radius, BorderMode mode, T fill,
                         cudaStream_t stream) {
  DirectArgs<T> a = directArgs(inStack, outStack, planes, radius, mode, fill);
  withRadius(radius, [&](auto r) {
    auto* kernel = boxDirectKernel<T, decltype(r)::value>;
    int perSm = 0;
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, 0));
    const long long resident = static_cast<long long>(multiprocessors()) * std::max(1, perSm);
    a.bandRows = bandRowsFor(inStack.width, inStack.height, planes, kWaves * resident);
    const dim3 grid(divUp(inStack.width, kBlockColumns), divUp(inStack.height, a.bandRows), planes);
    kernel<<<grid, kThreads, 0, stream>>>(a);
    GPULAB_CHECK_LAUNCH("boxDirectKernel");
  });
}

template <class T>
void runBoxBlurDirectOnHost(Plane<const T> inStack, Plane<T> outStack, int planes, int radius, BorderMode mode, T fill,
                            int residentBlocks) {
  DirectArgs<T> a = directArgs(inStack, outStack, planes, radius, mode, fill);
  a.bandRows = bandRowsFor(inStack.width, inStack.height, planes, std::max(1, residentBlocks));
  using Row = typename DirectSums<T>::Row;
  withRadius(radius, [&](auto r) {
    constexpr int R = decltype(r)::value;
    // Each thread's ring, filled with a pattern: a slot read before it is written shows.
    std::vector<Row> ring((2 * R + 1) * kColumns);
    for (int z = 0; z < planes; ++z)
      for (int o0 = 0; o0 < inStack.height; o0 += a.bandRows)
        for (int x = 0; x < inStack.width; x += kColumns) {
          std::fill(ring.begin(), ring.end(), static_cast<Row>(0xA5));
          directBand<T, R>(a, planeAt(a.in, z), planeAt(a.out, z), ring.data(), kColumns, x, o0,
                           std::min(o0 + a.bandRows, inStack.height));
        }
  });
}

#define GPULAB_INSTANTIATE(T)                                                                            \
  template void launchBoxBlurDirect<T>(Plane<const T>, Plane<T>, int, int, BorderMode, T, cudaStream_t); \
  template void runBoxBlurDirectOnHost<T>(Plane<const T>, Plane<T>, int, int, BorderMode, T, int);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(float)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
