// Escape-time Mandelbrot and Julia sets: the per-pixel arithmetic shared by the GPU kernels and the
// CPU baseline (so both produce the same integer iteration counts), and the launchers.
//
// Arithmetic, identical on host and device: z <- z^2 + c as
//     y2 = y*y;  r = fma(x, x, y2);  y' = fma(x + x, y, cy);  x' = fma(x, x, -y2) + cx
// with every product that feeds an addition written as an explicit fma, so no compiler contraction
// can change the rounding. Escape: |z|^2 > R^2 with R = 2^8 (a large radius keeps the smooth count
// continuous). z_0 = 0 (Mandelbrot) or the pixel (Julia); the escape count n is the first n < maxIter
// with |z_n| > R; pixels that never escape store kMandelbrotInterior (-1).
// Smooth count: nu = n + 1 - log2(ln|z_n| / ln R) = n + 5 - log2(log2 |z_n|^2), in [n, n + 1).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "gpulab/kernels/plane.cuh"

#if defined(__CUDACC__)
#define GPULAB_ESCAPE_HD __host__ __device__ __forceinline__
#else
#define GPULAB_ESCAPE_HD inline __attribute__((always_inline))
#endif
#if defined(__CUDA_ARCH__)
#define GPULAB_ESCAPE_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define GPULAB_ESCAPE_UNROLL  // the host pass of a .cu never runs the escape loop
#else
#define GPULAB_ESCAPE_UNROLL _Pragma("GCC unroll 8")
#endif

namespace gpulab::kernels {

inline constexpr float kMandelbrotInterior = -1.0f;   ///< raw value of pixels that never escape
inline constexpr double kEscapeRadius = 256.0;        ///< R = 2^8
inline constexpr double kEscapeRadius2 = 65536.0;     ///< R^2
inline constexpr int kEscapeUnroll = 8;               ///< iterations between periodicity checks
inline constexpr int kMaxEscapeIterations = 1 << 24;  ///< float32 holds every count up to 2^24 exactly

/// Everything a kernel needs to know about one frame. Pixel (i, j) of the width x height grid lies at
/// x = centerX + (i + 0.5 - width/2) * spacing, y = centerY - (j + 0.5 - height/2) * spacing (row 0 on top),
/// computed in double and rounded once to the working precision.
struct EscapeParams {
  double centerX = 0;
  double centerY = 0;
  double spacing = 0;
  double juliaX = 0;
  double juliaY = 0;
  int width = 0;
  int height = 0;
  int maxIterations = 0;
  bool julia = false;
  bool interiorTests = true;  ///< Mandelbrot mode: skip the main cardioid and the period-2 bulb
  bool periodicity = true;    ///< Brent-style cycle detection (exact equality, so counts never change)
  bool smooth = true;         ///< store nu; false: store the integer escape count n
};

/// How the GPU distributes pixels over threads. The image is the same for every schedule.
enum class EscapeSchedule : std::uint8_t {
  Balanced,  ///< persistent warps; each lane takes a new pixel from its warp's tile as soon as it finishes
  Tiled,     ///< persistent warps; each warp takes 16x8 tiles from a global counter, lane per pixel
  Plain,     ///< one thread per pixel, 16x16 blocks, the textbook loop: no interior tests, no periodicity
};

/// The global tile counter of the persistent schedules. Zero before a launch; the last warp of each
/// launch sets it back to zero, so one zeroing after allocation serves every later frame.
struct EscapeWorkQueue {
  unsigned int next;
  unsigned int warpsDone;
};

// ---------------------------------------------------------------------------------------------
// Host and device arithmetic

GPULAB_ESCAPE_HD float mulAdd(float a, float b, float c) { return fmaf(a, b, c); }
GPULAB_ESCAPE_HD double mulAdd(double a, double b, double c) { return fma(a, b, c); }

GPULAB_ESCAPE_HD double pixelX(const EscapeParams& p, int i) {
  return fma(static_cast<double>(i) + 0.5 - 0.5 * p.width, p.spacing, p.centerX);
}
GPULAB_ESCAPE_HD double pixelY(const EscapeParams& p, int j) {
  return fma(0.5 * p.height - 0.5 - static_cast<double>(j), p.spacing, p.centerY);
}

/// Inside the main cardioid: q (q + (x - 1/4)) <= y^2 / 4 with q = (x - 1/4)^2 + y^2.
template <class T>
GPULAB_ESCAPE_HD bool inMainCardioid(T x, T y) {
  const T xm = x - T(0.25);
  const T y2 = y * y;
  const T q = mulAdd(xm, xm, y2);
  return q * (q + xm) <= T(0.25) * y2;
}

/// Inside the period-2 bulb: the disc of radius 1/4 about -1.
template <class T>
GPULAB_ESCAPE_HD bool inPeriod2Bulb(T x, T y) {
  const T xp = x + T(1);
  return mulAdd(xp, xp, y * y) <= T(0.0625);
}

template <class T>
struct Orbit {
  T x, y;    ///< z_n
  T cx, cy;  ///< the constant c
  T sx, sy;  ///< periodicity reference, replaced at n = 8, 16, 32, ...
  int n;     ///< iterations done
  int saveAt;
};

enum class OrbitStatus : int { Running, Escaped, Bounded };

template <class T>
GPULAB_ESCAPE_HD Orbit<T> startOrbit(const EscapeParams& p, T px, T py) {
  Orbit<T> o;
  if (p.julia) {
    o.x = px;
    o.y = py;
    o.cx = static_cast<T>(p.juliaX);
    o.cy = static_cast<T>(p.juliaY);
  } else {
    o.x = T(0);
    o.y = T(0);
    o.cx = px;
    o.cy = py;
  }
  o.sx = o.x;
  o.sy = o.y;
  o.n = 0;
  o.saveAt = kEscapeUnroll;
  return o;
}

/// True when the interior tests prove the pixel never escapes (no iteration needed).
template <class T>
GPULAB_ESCAPE_HD bool provedInterior(const EscapeParams& p, T px, T py) {
  return !p.julia && p.interiorTests && (inMainCardioid(px, py) || inPeriod2Bulb(px, py));
}

/// One escape-time step: returns false (and |z|^2 in r) when z has escaped instead of stepping.
template <class T>
GPULAB_ESCAPE_HD bool escapeStep(T& x, T& y, T cx, T cy, T& r) {
  const T y2 = y * y;
  r = mulAdd(x, x, y2);
  if (!(r <= T(kEscapeRadius2))) return false;  // also stops on inf/NaN
  const T ny = mulAdd(x + x, y, cy);
  x = mulAdd(x, x, -y2) + cx;
  y = ny;
  return true;
}

/// Advances by kEscapeUnroll iterations (fewer at the end), then compares z with the periodicity
/// reference: an exact repeat means the orbit cycles through values that all passed the escape test,
/// so it never escapes. On Escaped, o.n is the escape count and r holds |z_n|^2.
template <class T>
GPULAB_ESCAPE_HD OrbitStatus advanceChunk(Orbit<T>& o, int maxIterations, bool periodicity, T& r) {
  if (o.n + kEscapeUnroll <= maxIterations) {
    GPULAB_ESCAPE_UNROLL
    for (int u = 0; u < kEscapeUnroll; ++u) {
      if (!escapeStep(o.x, o.y, o.cx, o.cy, r)) {
        o.n += u;
        return OrbitStatus::Escaped;
      }
    }
    o.n += kEscapeUnroll;
    if (periodicity) {
      if (o.x == o.sx && o.y == o.sy) return OrbitStatus::Bounded;
      if (o.n >= o.saveAt) {
        o.sx = o.x;
        o.sy = o.y;
        o.saveAt *= 2;
      }
    }
    return OrbitStatus::Running;
  }
  for (; o.n < maxIterations; ++o.n)
    if (!escapeStep(o.x, o.y, o.cx, o.cy, r)) return OrbitStatus::Escaped;
  return OrbitStatus::Bounded;
}

/// The value stored for an escaped pixel: nu, or n itself for integer counts. The GPU takes the
/// hardware log2 (2 ulp; 2 instructions instead of 80, once per pixel): nu differs from the CPU's by
/// about 1e-6, the integer counts not at all.
GPULAB_ESCAPE_HD float escapedValue(int n, float r, bool smooth) {
  if (!smooth) return static_cast<float>(n);
#if defined(__CUDA_ARCH__)
  return static_cast<float>(n) + 5.0f - __log2f(__log2f(r));
#else
  return static_cast<float>(n) + 5.0f - log2f(log2f(r));
#endif
}

/// The whole escape-time run for one pixel (CPU baseline and the tiled schedule).
template <class T>
GPULAB_ESCAPE_HD float escapeValue(const EscapeParams& p, int i, int j) {
  const T px = static_cast<T>(pixelX(p, i));
  const T py = static_cast<T>(pixelY(p, j));
  if (provedInterior(p, px, py)) return kMandelbrotInterior;
  Orbit<T> o = startOrbit(p, px, py);
  T r = T(0);
  OrbitStatus status;
  do {
    status = advanceChunk(o, p.maxIterations, p.periodicity, r);
  } while (status == OrbitStatus::Running);
  return status == OrbitStatus::Escaped ? escapedValue(o.n, static_cast<float>(r), p.smooth) : kMandelbrotInterior;
}

// ---------------------------------------------------------------------------------------------
// Colouring

/// Palette position of a raw value: offset + density * nu / 32 (one cycle per 32 iterations at
/// density 1), wrapped to [0, 1) and looked up with linear interpolation in a cyclic table.
struct ColourParams {
  float offset = 0;
  float cyclesPerIteration = 1.0f / 32.0f;
  uchar4 interior = {0, 0, 0, 255};
  int supersample = 1;  ///< each output pixel averages supersample^2 raw samples
  int tableSize = 0;
};

GPULAB_ESCAPE_HD float palettePosition(float value, const ColourParams& c) {
  const float t = c.offset + c.cyclesPerIteration * value;
  return t - floorf(t);
}

// ---------------------------------------------------------------------------------------------
// Launchers: asynchronous on `stream`.

/// Blocks for the persistent schedules: every SM full (occupancy API). Query once per device and keep.
template <class T>
int escapeTimePersistentBlocks(EscapeSchedule schedule, int device);

/// Computes the raw plane (p.width x p.height floats, row pitch raw.pitch). `queue` is device memory
/// (zeroed once after allocation) used by the persistent schedules; `persistentBlocks` from above.
template <class T>
void launchEscapeTime(const EscapeParams& p, EscapeSchedule schedule, Plane<float> raw, EscapeWorkQueue* queue,
                      int persistentBlocks, cudaStream_t stream);

/// Colours raw (read only) into rgba, whose size is raw's divided by c.supersample. `table` holds
/// c.tableSize RGBA entries in device memory.
void launchColourize(Plane<const float> raw, const uchar4* table, const ColourParams& c, Plane<uchar4> rgba,
                     cudaStream_t stream);

}  // namespace gpulab::kernels
