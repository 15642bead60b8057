#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/sobel.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Per-thread code (host-callable too: the host emulation runs it)

constexpr int kThreads = 128;
constexpr int kColumns = 4;                         // adjacent output columns per thread
constexpr int kBlockColumns = kThreads * kColumns;  // 512
constexpr int kSobelRowsPerStep = 3;                // input rows each thread loads before it computes
constexpr bool kSobelVectorEdges = true;            // x - 1 and x + 4 from the neighbours' aligned vectors
// Blocks an SM must hold (caps the registers at 64): the kernel is latency bound and needs warps.
// Each kernel is compiled for one part and for gray or colour input: with both chosen at run time
// (the direction's atan2 and the colour loads in every kernel) it spilled at 40 registers.
// On an H100 (4096^2 f32 magnitude, bands for 2 waves), 2026-11-27: 3 rows a step and 8 blocks
// 0.062 ms; 4 and 8 0.061; 2 and 12 0.063; 3 and 12 0.065; 6 and 6 0.067. Before (part and colour at
// run time, 2 rows, 12 blocks, 1 wave): 0.076.
constexpr int kSobelMinBlocks = 8;
// Bands for this many waves of blocks: shorter bands, and an SM whose blocks finish early takes new
// ones. The same kernel, bands for 1 / 2 / 3 / 4 / 6 waves: 0.066 / 0.062 / 0.058 / 0.056 / 0.056 ms
// (6000x4000 RGB u8 to gray: 0.119 / 0.100 / 0.093 / 0.088 / 0.094).
constexpr int kSobelWaves = 4;
constexpr int kMinBandRows = 8;

template <class T>
struct SobelArgs {
  Plane<const T> red, green, blue;
  bool colour = false;
  Plane<T> out;
  SobelPart part = SobelPart::Magnitude;
  BorderMode mode = BorderMode::Reflect101;
  float fill = 0.f;
};

template <class T>
GPULAB_HD float lumAt(const SobelArgs<T>& a, int x, int y) {
  if (!a.colour) return static_cast<float>(a.red(x, y));
  return luminance(static_cast<float>(a.red(x, y)), static_cast<float>(a.green(x, y)),
                   static_cast<float>(a.blue(x, y)));
}

// Four samples of row y starting at column x (x % 4 == 0, x + 4 <= width): one vector load on the GPU.
template <class T>
GPULAB_HD void load4(const T* row, int x, float (&v)[4]) {
#if defined(__CUDA_ARCH__)
  using Vector = std::conditional_t<std::is_same_v<T, float>, float4, uchar4>;
  const Vector q = *reinterpret_cast<const Vector*>(row + x);
  v[0] = q.x;
  v[1] = q.y;
  v[2] = q.z;
  v[3] = q.w;
#else
  for (int j = 0; j < 4; ++j) v[j] = row[x + j];
#endif
}

// Sample x - 1 (kLeft) or x + 4 of a row. kVector: taken from the aligned vector of 4 that holds it
// (the neighbour thread's vector, an L1 hit) rather than with a scalar load.
template <bool kVector, bool kLeft, class T>
GPULAB_HD float edgeSample(const T* row, int x) {
  if constexpr (kVector) {
    float v[4];
    load4(row, kLeft ? x - 4 : x + 4, v);
    return kLeft ? v[3] : v[0];
  } else {
    return static_cast<float>(row[kLeft ? x - 1 : x + 4]);
  }
}

// Whether columns x-1 .. x+4 (kVector: x-4 .. x+7) lie inside a row of `width`.
template <bool kVector>
GPULAB_HD bool interiorColumns(int x, int width) {
  return kVector ? x >= 4 && x + 8 <= width : x >= 1 && x + 5 <= width;
}

// Luminance of columns x-1 .. x+4 of row y, where interiorColumns<kVector>(x) and the row lies inside the image.
template <bool kVector, class T>
GPULAB_HD void loadInterior(const SobelArgs<T>& a, int x, int y, float (&lum)[6]) {
  float r[4];
  load4(a.red.row(y), x, r);
  float left = edgeSample<kVector, true>(a.red.row(y), x);
  float right = edgeSample<kVector, false>(a.red.row(y), x);
  if (a.colour) {
    float g[4], b[4];
    load4(a.green.row(y), x, g);
    load4(a.blue.row(y), x, b);
    for (int j = 0; j < 4; ++j) r[j] = luminance(r[j], g[j], b[j]);
    left = luminance(left, edgeSample<kVector, true>(a.green.row(y), x), edgeSample<kVector, true>(a.blue.row(y), x));
    right =
        luminance(right, edgeSample<kVector, false>(a.green.row(y), x), edgeSample<kVector, false>(a.blue.row(y), x));
  }
  lum[0] = left;
  for (int j = 0; j < 4; ++j) lum[j + 1] = r[j];
  lum[5] = right;
}

// Luminance of columns x-1 .. x+4 of row yg (any integer), border-mapped.
template <bool kVector, class T>
GPULAB_HD void loadBorder(const SobelArgs<T>& a, int x, int yg, float (&lum)[6]) {
  const int width = a.out.width;
  const int height = a.out.height;
  if (a.mode == BorderMode::Constant && (yg < 0 || yg >= height)) {
    for (int j = 0; j < 6; ++j) lum[j] = a.fill;
    return;
  }
  const int y = borderIndex(yg, height, a.mode);
  if (interiorColumns<kVector>(x, width)) {
    loadInterior<kVector>(a, x, y, lum);
    return;
  }
  for (int j = 0; j < 6; ++j) {
    const int c = borderIndex(x - 1 + j, width, a.mode);
    lum[j] = c < 0 ? a.fill : lumAt(a, c, y);
  }
}

template <class T>
GPULAB_HD void storeRow(const SobelArgs<T>& a, int x, int y, const float (&above)[6], const float (&centre)[6],
                        const float (&below)[6]) {
  float smooth[6], diff[6];  // vertical [1 2 1] and [-1 0 1] of each column
  for (int c = 0; c < 6; ++c) {
    smooth[c] = above[c] + 2.f * centre[c] + below[c];
    diff[c] = below[c] - above[c];
  }
  T values[4];
  for (int j = 0; j < 4; ++j) {
    const float dx = smooth[j + 2] - smooth[j];
    const float dy = diff[j] + 2.f * diff[j + 1] + diff[j + 2];
    const float v = sobelValue(dx, dy, a.part);
    if constexpr (sizeof(T) == 1)
      values[j] = sobelToU8(v, a.part);
    else
      values[j] = v;
  }
  T* row = a.out.row(y);
  if (x + 4 <= a.out.width) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 1)
      *reinterpret_cast<uchar4*>(row + x) = make_uchar4(values[0], values[1], values[2], values[3]);
    else
      *reinterpret_cast<float4*>(row + x) = make_float4(values[0], values[1], values[2], values[3]);
#else
    for (int j = 0; j < 4; ++j) row[x + j] = values[j];
#endif
  } else {
    for (int j = 0; j < 4 && x + j < a.out.width; ++j) row[x + j] = values[j];
  }
}

// Columns x .. x+3, rows [y0, y1): keeps the last two rows of luminance in registers and loads
// kRowsPerStep (kSobelRowsPerStep) new rows per step before it uses any of them, so that each thread has that many rows
// of loads in flight.
template <int kRowsPerStep, bool kVector, class T>
GPULAB_HD void sobelStrip(const SobelArgs<T>& a, int x, int y0, int y1) {
  const int height = a.out.height;
  const bool interiorX = interiorColumns<kVector>(x, a.out.width);
  float rows[kRowsPerStep + 2][6] = {};
  loadBorder<kVector>(a, x, y0 - 1, rows[0]);
  loadBorder<kVector>(a, x, y0, rows[1]);
  for (int y = y0; y < y1; y += kRowsPerStep) {
    // Rows y + 1 .. y + kRowsPerStep; those past y1 are not needed (and not loaded).
    if (interiorX && y + kRowsPerStep < height && y + kRowsPerStep <= y1) {
      GPULAB_UNROLL
      for (int u = 0; u < kRowsPerStep; ++u) loadInterior<kVector>(a, x, y + 1 + u, rows[u + 2]);
    } else {
      GPULAB_UNROLL
      for (int u = 0; u < kRowsPerStep; ++u)
        if (y + u < y1) loadBorder<kVector>(a, x, y + 1 + u, rows[u + 2]);
    }
    GPULAB_UNROLL
    for (int u = 0; u < kRowsPerStep; ++u)
      if (y + u < y1) storeRow(a, x, y + u, rows[u], rows[u + 1], rows[u + 2]);
    for (int c = 0; c < 6; ++c) {
      rows[0][c] = rows[kRowsPerStep][c];
      rows[1][c] = rows[kRowsPerStep + 1][c];
    }
  }
}

/// Rows per band: about `targetBlocks` blocks in all (kSobelWaves times what the device holds at once), bands of
/// at least kMinBandRows rows.
inline int bandRows(int width, int height, long long targetBlocks) {
  const long long columnBlocks = divUp(width, kBlockColumns);
  const long long wanted = targetBlocks / columnBlocks > 1 ? targetBlocks / columnBlocks : 1;
  const int minRows = height < kMinBandRows ? height : kMinBandRows;
  const long long most = height / minRows;
  return divUp(height, static_cast<int>(wanted < most ? wanted : most));
}

// ---------------------------------------------------------------------------------------------
// Kernel

// kPart and kColour fix a.part and a.colour at compile time (the launch picks the kernel that
// matches them), so each kernel holds one part's arithmetic and one input layout's loads.
template <class T, SobelPart kPart, bool kColour>
__global__ void __launch_bounds__(kThreads, kSobelMinBlocks) sobelKernel(SobelArgs<T> args, int rowsPerBand) {
  SobelArgs<T> a = args;
  a.part = kPart;
  a.colour = kColour;
  const int x = blockIdx.x * kBlockColumns + threadIdx.x * kColumns;
  const int y0 = blockIdx.y * rowsPerBand;
  if (x >= a.out.width || y0 >= a.out.height) return;
  const int y1 = y0 + rowsPerBand < a.out.height ? y0 + rowsPerBand : a.out.height;
  sobelStrip<kSobelRowsPerStep, kSobelVectorEdges>(a, x, y0, y1);
}

template <class T>
using SobelKernel = void (*)(SobelArgs<T>, int);

template <class T, bool kColour>
SobelKernel<T> sobelKernelFor(SobelPart part) {
  switch (part) {
    case SobelPart::X:
      return sobelKernel<T, SobelPart::X, kColour>;
    case SobelPart::Y:
      return sobelKernel<T, SobelPart::Y, kColour>;
    case SobelPart::Direction:
      return sobelKernel<T, SobelPart::Direction, kColour>;
    case SobelPart::Magnitude:
      break;
  }
  return sobelKernel<T, SobelPart::Magnitude, kColour>;
}

// ---------------------------------------------------------------------------------------------
// Host side

template <class T>
void checkPlane(Plane<const T> p, int width, int height, const char* what) {
  if (p.width != width || p.height != height)
    throw std::invalid_argument(std::string("Sobel needs planes of one size; the ") + what + " plane is " +
                                std::to_string(p.width) + "x" + std::to_string(p.height) + ", the output " +
                                std::to_string(width) + "x" + std::to_string(height));
}

template <class T>
SobelArgs<T> makeArgs(Plane<const T> red, Plane<const T> green, Plane<const T> blue, bool colour, Plane<T> out,
                      SobelPart part, BorderMode mode, float borderValue, bool device) {
  if (out.width <= 0 || out.height <= 0) throw std::invalid_argument("Sobel needs a nonempty output plane");
  checkPlane(red, out.width, out.height, "input");
  if (colour) {
    checkPlane(green, out.width, out.height, "green");
    checkPlane(blue, out.width, out.height, "blue");
  }
  const Plane<const T> inputs[3] = {red, green, blue};
  for (int c = 0; c < (colour ? 3 : 1); ++c) {
    if (planesOverlap(inputs[c], out))
      throw std::invalid_argument("Sobel cannot run in place: give it a separate output plane");
    if (device && !aligned16(inputs[c].data, inputs[c].pitch))
      throw std::invalid_argument("Sobel needs 16-byte aligned planes with a pitch that is a multiple of 16 bytes");
  }
  if (device && !aligned16(out.data, out.pitch))
    throw std::invalid_argument("Sobel needs 16-byte aligned planes with a pitch that is a multiple of 16 bytes");
  SobelArgs<T> a;
  a.red = red;
  a.green = colour ? green : red;
  a.blue = colour ? blue : red;
  a.colour = colour;
  a.out = out;
  a.part = part;
  a.mode = mode;
  a.fill = borderValue;
  return a;
}

}  // namespace

template <class T>
void launchSobel(Plane<const T> red, Plane<const T> green, Plane<const T> blue, bool colour, Plane<T> out,
                 SobelPart part, BorderMode mode, float borderValue, cudaStream_t stream) {
  const SobelArgs<T> a = makeArgs(red, green, blue, colour, out, part, mode, borderValue, true);
  const auto kernel = colour ? sobelKernelFor<T, true>(part) : sobelKernelFor<T, false>(part);
  int perSm = 0;
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, 0));
  const long long resident = static_cast<long long>(multiprocessors()) * (perSm > 0 ? perSm : 1);
  const int rows = bandRows(out.width, out.height, kSobelWaves * resident);
  const dim3 grid(divUp(out.width, kBlockColumns), divUp(out.height, rows));
  kernel<<<grid, kThreads, 0, stream>>>(a, rows);
  GPULAB_CHECK_LAUNCH("sobelKernel");
}

template <class T>
void runSobelOnHost(Plane<const T> red, Plane<const T> green, Plane<const T> blue, bool colour, Plane<T> out,
                    SobelPart part, BorderMode mode, float borderValue) {
  const SobelArgs<T> a = makeArgs(red, green, blue, colour, out, part, mode, borderValue, false);
  // Three bands a plane, as if the device held three blocks per column of blocks: the band edges
  // get tested too.
  const int rows = bandRows(out.width, out.height, 3LL * divUp(out.width, kBlockColumns));
  for (int by = 0; by < divUp(out.height, rows); ++by)
    for (int bx = 0; bx < divUp(out.width, kBlockColumns); ++bx)
      for (int tid = 0; tid < kThreads; ++tid) {
        const int x = bx * kBlockColumns + tid * kColumns;
        const int y0 = by * rows;
        if (x < out.width)
          sobelStrip<kSobelRowsPerStep, kSobelVectorEdges>(a, x, y0, y0 + rows < out.height ? y0 + rows : out.height);
      }
}

// ---------------------------------------------------------------------------------------------
// Instantiations

#define GPULAB_INSTANTIATE(T)                                                                                         \
  template void launchSobel<T>(Plane<const T>, Plane<const T>, Plane<const T>, bool, Plane<T>, SobelPart, BorderMode, \
                               float, cudaStream_t);                                                                  \
  template void runSobelOnHost<T>(Plane<const T>, Plane<const T>, Plane<const T>, bool, Plane<T>, SobelPart,          \
                                  BorderMode, float);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(float)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels
