// Escape-time Mandelbrot and Julia sets: the per-pixel arithmetic shared by the GPU kernels and the
// CPU baseline (so both produce the same integer iteration counts), and the launchers.
//
// Two algorithms, each run identically on host and device (every product that feeds an addition is an
// explicit fma, so no compiler contraction can change the rounding):
//
// Plain (the textbook loop, the benchmark's reference point): z <- z^2 + c as
//     y2 = y*y;  r = fma(x, x, y2);  y' = fma(x + x, y, cy);  x' = fma(x, x, -y2) + cx
// testing |z_n|^2 = r against R^2 before every step; no interior tests, no periodicity.
//
// Optimized: the orbit is kept as (X, y) with X = 2x, which makes one step four fmas,
//     a = fma(0.5, X, y)  [= x + y]     b = fma(-2, y, X)  [= 2 (x - y)]
//     y' = fma(X, y, cy)  [= 2xy + cy]  X' = fma(a, b, 2 cx)  [= 2 ((x + y)(x - y) + cx)]
// (scaling by 2 is exact, so X'/2 is x' = (x + y)(x - y) + cx rounded once, as if computed unscaled).
// Steps run in chunks of kEscapeChunk without an escape test; after a chunk, |x| > R/2 or |y| > R/2
// (|X| > 256, |y| > 128) or a NaN means z may have escaped inside it, and the chunk is replayed step by
// step with the exact test r = fma(X/2, X/2, y*y) > R^2. Past the escape radius |z| only grows (a
// Julia constant is within +-10, below R; a Mandelbrot c beyond R escapes at n = 1 and grows from
// there), so the test after a chunk never misses an escape inside it and the counts are exactly those
// of testing every step. The tail of fewer than kEscapeChunk steps before maxIterations runs step by
// step. The rounding differs from Plain's, so the two algorithms give different counts wherever the
// orbit is chaotic (pixels near the boundary: 5.5% of the seahorse view in float32, 0.08% in float64),
// and both miss a long-double reference equally often (seahorse float32: 5.57% optimized, 5.55% plain;
// spiral 9.65% / 9.64%; elephant valley 4.18% / 4.28%). GPU and CPU run the same algorithm and agree.
//
// Escape: |z|^2 > R^2 with R = 2^8 (a large radius keeps the smooth count continuous). z_0 = 0
// (Mandelbrot) or the pixel (Julia); the escape count n is the first n < maxIter with |z_n| > R;
// pixels that never escape store kMandelbrotInterior (-1).
// Smooth count: nu = n + 1 - log2(ln|z_n| / ln R) = n + 5 - log2(log2 |z_n|^2), in [n, n + 1).
//
// Work skipped by Optimized (each can be switched off in EscapeParams):
// - interior tests (Mandelbrot mode): a pixel in the main cardioid or the period-2 bulb is interior
//   without iterating;
// - periodicity (Brent): after every chunk z is compared with a saved point z_s, saved again at
//   n = 8, 16, 32, 64, ...; |x - x_s| <= tol and |y - y_s| <= tol means the orbit has settled on a
//   cycle and the pixel is interior. tol = periodicityTolerance = 1/64 of the pixel spacing
//   (kPeriodicityTolerance). An attracting cycle is then detected as soon as the orbit is within tol of
//   it; exact equality waits for the last bit, which in float64 takes several times longer (whole set,
//   1920x1080, 1000 iterations, float64: 26196 pixels of secondary bulbs run to maxIterations with
//   exact equality, 9018 with tol). The tolerance can call interior a pixel that escapes very late, a
//   hair outside a component: measured at 640x360 on 16 views in both precisions (whole set at 1000 and
//   5000 iterations, mini-brots, bulbs, cusp, neck, seahorse, spiral, float64 zooms to width 1e-10,
//   three Julia sets) and at 320x180 on four of them, at most 2 pixels of a view (0.0035%), each
//   escaping after 1100 or more iterations; a tolerance of 1/16 of the spacing turned up to 10
//   (0.017%), some escaping after 266. The CPU runs the same test, so GPU and CPU agree.
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

inline constexpr float kMandelbrotInterior = -1.0f;        ///< raw value of pixels that never escape
inline constexpr double kEscapeRadius = 256.0;             ///< R = 2^8
inline constexpr double kEscapeRadius2 = 65536.0;          ///< R^2
inline constexpr int kEscapeChunk = 8;                     ///< Optimized: steps between escape/periodicity tests
inline constexpr double kPeriodicityTolerance = 1.0 / 64;  ///< in pixel spacings
inline constexpr int kMaxEscapeIterations = 1 << 24;       ///< float32 holds every count up to 2^24 exactly

/// Everything a kernel needs to know about one frame. Pixel (i, j) of the width x height grid lies at
/// x = centerX + (i + 0.5 - width/2) * spacing, y = centerY - (j + 0.5 - height/2) * spacing (row 0 on top),
/// computed in double and rounded once to the working precision.
struct EscapeParams {
  double centerX = 0;
  double centerY = 0;
  double spacing = 0;
  double juliaX = 0;
  double juliaY = 0;
  double periodicityTolerance = 0;  ///< tol of the periodicity test, in the plane's units
  int width = 0;
  int height = 0;
  int maxIterations = 0;
  bool julia = false;
  bool interiorTests = true;  ///< Optimized, Mandelbrot mode: skip the main cardioid and the period-2 bulb
  bool periodicity = true;    ///< Optimized: Brent cycle detection with tolerance periodicityTolerance
  bool smooth = true;         ///< store nu; false: store the integer escape count n
};

/// The GPU kernels. Both are grid launches, one thread per pixel.
enum class EscapeSchedule : std::uint8_t {
  Optimized,  ///< the optimized algorithm; 8x16-pixel blocks whose warps cover 8x4 pixels
  Plain,      ///< the textbook loop, 16x16 blocks (warps of 16x2 pixels)
};

// ---------------------------------------------------------------------------------------------
// Host and device arithmetic

GPULAB_ESCAPE_HD float mulAdd(float a, float b, float c) { return fmaf(a, b, c); }
GPULAB_ESCAPE_HD double mulAdd(double a, double b, double c) { return fma(a, b, c); }
GPULAB_ESCAPE_HD float magnitude(float a) { return fabsf(a); }
GPULAB_ESCAPE_HD double magnitude(double a) { return fabs(a); }

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

/// True when the interior tests prove the pixel never escapes (no iteration needed).
template <class T>
GPULAB_ESCAPE_HD bool provedInterior(const EscapeParams& p, T px, T py) {
  return !p.julia && p.interiorTests && (inMainCardioid(px, py) || inPeriod2Bulb(px, py));
}

/// Plain: one textbook step; returns false (and |z|^2 in r) when z has escaped instead of stepping.
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

/// Optimized: one step on (X, y) = (2x, y); c2x = 2 cx.
template <class T>
GPULAB_ESCAPE_HD void escapeStepHalved(T& X, T& y, T c2x, T cy) {
  const T a = mulAdd(T(0.5), X, y);
  const T b = mulAdd(T(-2), y, X);
  const T ny = mulAdd(X, y, cy);
  X = mulAdd(a, b, c2x);
  y = ny;
}

/// Optimized: |z|^2 of (X, y) = (2x, y).
template <class T>
GPULAB_ESCAPE_HD T modulus2Halved(T X, T y) {
  const T x = T(0.5) * X;
  return mulAdd(x, x, y * y);
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

/// Plain: the textbook loop for pixel (i, j) (CPU baseline of the plain kernel).
template <class T>
GPULAB_ESCAPE_HD float plainEscapeValue(const EscapeParams& p, int i, int j) {
  const T px = static_cast<T>(pixelX(p, i));
  const T py = static_cast<T>(pixelY(p, j));
  T x = p.julia ? px : T(0);
  T y = p.julia ? py : T(0);
  const T cx = p.julia ? static_cast<T>(p.juliaX) : px;
  const T cy = p.julia ? static_cast<T>(p.juliaY) : py;
  T r = T(0);
  int n = 0;
  for (; n < p.maxIterations; ++n)
    if (!escapeStep(x, y, cx, cy, r)) break;
  return n < p.maxIterations ? escapedValue(n, static_cast<float>(r), p.smooth) : kMandelbrotInterior;
}

/// Optimized: the whole run for pixel (i, j) (the optimized kernel and the CPU baseline).
template <class T>
GPULAB_ESCAPE_HD float escapeValue(const EscapeParams& p, int i, int j) {
  const T px = static_cast<T>(pixelX(p, i));
  const T py = static_cast<T>(pixelY(p, j));
  if (provedInterior(p, px, py)) return kMandelbrotInterior;
  T X = p.julia ? px + px : T(0);
  T y = p.julia ? py : T(0);
  const T c2x = p.julia ? T(2) * static_cast<T>(p.juliaX) : px + px;
  const T cy = p.julia ? static_cast<T>(p.juliaY) : py;
  // Periodicity off: a negative tolerance that nothing is within (one loop serves both cases).
  const T tolY = p.periodicity ? static_cast<T>(p.periodicityTolerance) : T(-1);
  const T tolX = tolY + tolY;
  T savedX = X, savedY = y;
  int n = 0;
  while (n + kEscapeChunk <= p.maxIterations) {
    const T chunkX = X, chunkY = y;
    GPULAB_ESCAPE_UNROLL
    for (int u = 0; u < kEscapeChunk; ++u) escapeStepHalved(X, y, c2x, cy);
    // max(|x|, |y|) > R / 2 (or a NaN): z may have escaped in this chunk.
    const bool outside = !(magnitude(X) <= T(kEscapeRadius) && magnitude(y) <= T(0.5 * kEscapeRadius));
    const bool cycle = magnitude(X - savedX) <= tolX && magnitude(y - savedY) <= tolY;
    if (outside || cycle) {
      if (!outside) return kMandelbrotInterior;
      X = chunkX;  // replay the chunk step by step below
      y = chunkY;
      break;
    }
    n += kEscapeChunk;
    if ((n & (n - 1)) == 0) {  // n = 8, 16, 32, ...: Brent's doubling distances
      savedX = X;
      savedY = y;
    }
  }
  for (; n < p.maxIterations; ++n) {
    const T r = modulus2Halved(X, y);
    if (!(r <= T(kEscapeRadius2))) return escapedValue(n, static_cast<float>(r), p.smooth);
    escapeStepHalved(X, y, c2x, cy);
  }
  return kMandelbrotInterior;
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
  bool bgra = false;  ///< store B, G, R, A (a little-endian 0xAARRGGBB word, as QImage::Format_RGB32)
};

GPULAB_ESCAPE_HD float palettePosition(float value, const ColourParams& c) {
  const float t = c.offset + c.cyclesPerIteration * value;
  return t - floorf(t);
}

// ---------------------------------------------------------------------------------------------
// Launchers: asynchronous on `stream`.

/// Computes the raw plane (p.width x p.height floats, row pitch raw.pitch) with `schedule`: rows
/// [firstRow, firstRow + rowCount) of it (rowCount -1: to the last row), each at its own row number (the
/// others untouched), so a frame can be split into bands of rows. Throws std::invalid_argument for rows
/// outside the frame.
template <class T>
void launchEscapeTime(const EscapeParams& p, EscapeSchedule schedule, Plane<float> raw, cudaStream_t stream,
                      int firstRow = 0, int rowCount = -1);

/// Colours raw (read only) into rgba, whose size is raw's divided by c.supersample. `table` holds
/// c.tableSize RGBA entries in device memory.
void launchColourize(Plane<const float> raw, const uchar4* table, const ColourParams& c, Plane<uchar4> rgba,
                     cudaStream_t stream);

}  // namespace gpulab::kernels
