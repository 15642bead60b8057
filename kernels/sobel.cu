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
constexpr int kRowsPerBlock = 32;

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

// Luminance of columns x-1 .. x+4 of row y, where those columns and the row lie inside the image.
template <class T>
GPULAB_HD void loadInterior(const SobelArgs<T>& a, int x, int y, float (&lum)[6]) {
  float r[4];
  load4(a.red.row(y), x, r);
  float left = static_cast<float>(a.red.row(y)[x - 1]);
  float right = static_cast<float>(a.red.row(y)[x + 4]);
  if (a.colour) {
    float g[4], b[4];
    load4(a.green.row(y), x, g);
    load4(a.blue.row(y), x, b);
    for (int j = 0; j < 4; ++j) r[j] = luminance(r[j], g[j], b[j]);
    left = luminance(left, static_cast<float>(a.green.row(y)[x - 1]), static_cast<float>(a.blue.row(y)[x - 1]));
    right = luminance(right, static_cast<float>(a.green.row(y)[x + 4]), static_cast<float>(a.blue.row(y)[x + 4]));
  }
  lum[0] = left;
  for (int j = 0; j < 4; ++j) lum[j + 1] = r[j];
  lum[5] = right;
}

// Luminance of columns x-1 .. x+4 of row yg (any integer), border-mapped.
template <class T>
GPULAB_HD void loadBorder(const SobelArgs<T>& a, int x, int yg, float (&lum)[6]) {
  const int width = a.out.width;
  const int height = a.out.height;
  if (a.mode == BorderMode::Constant && (yg < 0 || yg >= height)) {
    for (int j = 0; j < 6; ++j) lum[j] = a.fill;
    return;
  }
  const int y = borderIndex(yg, height, a.mode);
  if (x >= 1 && x + 5 <= width) {
    loadInterior(a, x, y, lum);
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

// Columns x .. x+3, rows [y0, y1): keeps three rows of luminance in registers and loads two new
// rows per step, so that each thread has two rows of loads in flight.
template <class T>
GPULAB_HD void sobelStrip(const SobelArgs<T>& a, int x, int y0, int y1) {
  const int height = a.out.height;
  const bool interiorX = x >= 1 && x + 5 <= a.out.width;
  float r0[6], r1[6], r2[6], r3[6];
  loadBorder(a, x, y0 - 1, r0);
  loadBorder(a, x, y0, r1);
  int y = y0;
  for (; y + 1 < y1; y += 2) {
    if (interiorX && y + 2 < height) {
      loadInterior(a, x, y + 1, r2);
      loadInterior(a, x, y + 2, r3);
    } else {
      loadBorder(a, x, y + 1, r2);
      loadBorder(a, x, y + 2, r3);
    }
    storeRow(a, x, y, r0, r1, r2);
    storeRow(a, x, y + 1, r1, r2, r3);
    for (int c = 0; c < 6; ++c) {
      r0[c] = r2[c];
      r1[c] = r3[c];
    }
  }
  if (y < y1) {
    loadBorder(a, x, y + 1, r2);
    storeRow(a, x, y, r0, r1, r2);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernel

template <class T>
__global__ void __launch_bounds__(kThreads) sobelKernel(SobelArgs<T> a) {
  const int x = blockIdx.x * kBlockColumns + threadIdx.x * kColumns;
  const int y0 = blockIdx.y * kRowsPerBlock;
  if (x >= a.out.width) return;
  const int y1 = y0 + kRowsPerBlock < a.out.height ? y0 + kRowsPerBlock : a.out.height;
  sobelStrip(a, x, y0, y1);
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
  const dim3 grid(divUp(out.width, kBlockColumns), divUp(out.height, kRowsPerBlock));
  sobelKernel<T><<<grid, kThreads, 0, stream>>>(a);
  GPULAB_CHECK_LAUNCH("sobelKernel");
}

template <class T>
void runSobelOnHost(Plane<const T> red, Plane<const T> green, Plane<const T> blue, bool colour, Plane<T> out,
                    SobelPart part, BorderMode mode, float borderValue) {
  const SobelArgs<T> a = makeArgs(red, green, blue, colour, out, part, mode, borderValue, false);
  for (int by = 0; by < divUp(out.height, kRowsPerBlock); ++by)
    for (int bx = 0; bx < divUp(out.width, kBlockColumns); ++bx)
      for (int tid = 0; tid < kThreads; ++tid) {
        const int x = bx * kBlockColumns + tid * kColumns;
        const int y0 = by * kRowsPerBlock;
        if (x < out.width) sobelStrip(a, x, y0, y0 + kRowsPerBlock < out.height ? y0 + kRowsPerBlock : out.height);
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
