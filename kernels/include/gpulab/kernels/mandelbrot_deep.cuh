// Deep-zoom Mandelbrot by perturbation: one reference orbit, rebasing, and bivariate linear
// approximation (BLA) to skip iterations (mathematics: shared/design/deep-zoom.md). The per-pixel
// arithmetic is shared by the GPU kernel and the CPU path, which therefore give the same integer counts
// (every product that feeds a sum is an explicit fma, as in mandelbrot.cuh), and the launcher.
//
// Per pixel c = C + dc, with z_n = Z_m + dz (Z: the reference orbit Z_0 = 0 .. Z_{N-1}):
//   full step   dz <- (2 Z_m + dz) dz + dc;  n++, m++
//   BLA step    dz <- A dz + B dc;  n += 2^l, m += 2^l  (the longest level-l entry at m whose radius holds)
// then, at the new m, z = Z_m + dz and
//   escape      |z|^2 > R^2 (R = 2^8, as mandelbrot.cuh): the pixel escapes at n;
//   rebase      |z|^2 < |dz|^2 or m == N - 1: dz <- z, m <- 0 (exact in exact arithmetic, since Z_0 = 0);
//   cap         n == maxIterations - 1: interior.
// So the cap counts like the brute force: z_0 .. z_{maxIterations-1} are tested, z_{maxIterations} is
// never computed, and the count reported is the first n < maxIterations with |z_n| > R. BLA entries are
// taken only at m >= 1 and only when they land at or before N - 1 and at or before maxIterations - 1;
// a BLA step tests escape and rebase at its landing point like a full step (it may land on the
// reference's last point, which has itself escaped). BLA is tried only where the level-1 radius holds:
// a merged radius never exceeds its first half's (and a level-1 radius never exceeds the single-step
// radius epsilon |2 Z_m|), so when a short entry fails no longer one holds and the search stops at once.
//
// Two delta formats (chosen from the pixel spacing by the engine: DeltaFormat):
// - Double: dz, dc, A and B in double. Every squared magnitude the loop compares (|dz|^2, radius^2)
//   stays far above the double underflow (2^-1022) when the spacing h >= 2^-450 (~3.5e-136): dz starts at
//   dc ~ h and rarely falls much below it.
// - FloatExp: while |dz|^2 < 2^-1000 the pixel iterates in floatexp (ComplexExp dz and dc, floatexp BLA
//   coefficients and squared radii, the floatexp copy of Z_m for the rebase test); as soon as |dz|^2 >=
//   2^-1000 it continues exactly like the Double format (dc rounded to double: 2^-53 of dz is then far
//   above anything dc can add), and drops back to floatexp whenever |dz|^2 falls below 2^-1000 again.
//   With BLA the floatexp phase is mostly skipped, so deep frames run at nearly the Double speed.
//
// Outputs per pixel: nu = n + 5 - log2(log2 |z_n|^2) (smooth) or n, or kMandelbrotInterior (-1).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "gpulab/kernels/floatexp.cuh"
#include "gpulab/kernels/mandelbrot.cuh"
#include "gpulab/kernels/plane.cuh"

#if defined(__CUDACC__)
#define GPULAB_DEEP_HD __host__ __device__ __forceinline__
#else
#define GPULAB_DEEP_HD inline __attribute__((always_inline))
#endif

namespace gpulab::kernels {

enum class DeltaFormat : std::uint8_t {
  Double,    ///< spacing >= 2^kDoubleMinSpacingExponent
  FloatExp,  ///< any depth: floatexp while |dz| is tiny, double otherwise
};

inline constexpr int kDoubleMinSpacingExponent = -450;  ///< Double needs h >= 2^-450 (about 3.5e-136)
inline constexpr double kDeepTinyNorm2 = 0x1p-1000;     ///< FloatExp: |dz|^2 below this iterates in floatexp
inline constexpr int kMaxBlaLevels = 30;                ///< entries skip at most 2^30 iterations

/// One frame. Pixel (i, j) has dc = ((i + 0.5 - W/2) h + offsetX, (H/2 - 0.5 - j) h + offsetY), where
/// (offsetX, offsetY) = view centre - reference point C and h = spacing (row 0 on top, as mandelbrot.cuh).
struct PerturbationParams {
  int width = 0;
  int height = 0;
  int maxIterations = 0;  ///< tests z_0 .. z_{maxIterations-1}
  DeltaFormat format = DeltaFormat::Double;
  bool smooth = true;  ///< store nu; false: the integer escape count n
  bool bla = true;     ///< use the BLA table (false: full steps only)
  // Double: dc = fma(i + 0.5 - W/2, spacing, offsetX), ...
  double spacing = 0;
  double offsetX = 0;
  double offsetY = 0;
  // FloatExp: the same numbers in extended range.
  FloatExp spacingExp{0.0, kFloatExpZeroExponent};
  FloatExp offsetXExp{0.0, kFloatExpZeroExponent};
  FloatExp offsetYExp{0.0, kFloatExpZeroExponent};
};

/// The reference orbit Z_0 = 0, Z_1 = C, ..., Z_{length-1} (the first escaped point, or Z at the cap).
struct ReferenceView {
  const double2* z = nullptr;        ///< rounded to double (0 or subnormal where |Z_m| underflows)
  const ComplexExp* zExp = nullptr;  ///< the same in floatexp; read by the FloatExp format only
  int length = 0;                    ///< N >= 2
};

/// The BLA table. Level l (1 <= l <= levels) holds the entries that skip 2^l iterations from reference
/// index m, for m - 1 a multiple of 2^l and m + 2^l <= N - 1, at index levelStart(l) + ((m - 1) >> l);
/// unused slots have radius 0. Radii never grow with the level at a given m (the climb relies on it).
struct BlaView {
  const double* r2 = nullptr;       ///< radius^2 in double (0 where it is below the double range)
  const double2* a = nullptr;       ///< A (0 where it overflows double; its radius is then 0)
  const double2* b = nullptr;       ///< B
  const FloatExp* r2Exp = nullptr;  ///< the same in floatexp (FloatExp format only)
  const ComplexExp* aExp = nullptr;
  const ComplexExp* bExp = nullptr;
  int levels = 0;             ///< 0: no table
  int capacity = 0;           ///< a power of two >= N - 2; level l has capacity >> l slots
  double r2Level1Max = -1.0;  ///< the largest level-1 radius^2: |dz|^2 at or above it takes no entry
};

GPULAB_DEEP_HD int blaLevelStart(const BlaView& bla, int level) { return bla.capacity - (bla.capacity >> (level - 1)); }

/// Everything one pixel carries between steps, so that a caller can also run a pixel in slices
/// (advancePixel's budget): the steps and their order do not depend on the slicing.
struct DeepPixel {
  double dzx = 0, dzy = 0;                            // dz while in double
  double dz2 = 0;                                     // |dz|^2 (double)
  double zmx = 0, zmy = 0;                            // Z_m, carried so that a step loads one reference point
  double dcx = 0, dcy = 0;                            // dc rounded to double
  ComplexExp dzExp{0.0, 0.0, kFloatExpZeroExponent};  // dz while in floatexp
  ComplexExp dcExp{0.0, 0.0, kFloatExpZeroExponent};
  int n = 0;              // the pixel's iteration
  int m = 0;              // index into the reference
  int steps = 0;          // full steps + BLA steps taken
  bool extended = false;  // iterating in floatexp
  bool done = false;
  float value = kMandelbrotInterior;
};

// ---------------------------------------------------------------------------------------------
// Pieces of a step

namespace deep_detail {

GPULAB_DEEP_HD double norm2(double x, double y) { return fma(x, x, y * y); }
GPULAB_DEEP_HD int smaller(int a, int b) { return a < b ? a : b; }

GPULAB_DEEP_HD double2 loadPoint(const double2* p, int m) {
#if defined(__CUDA_ARCH__)
  return __ldg(p + m);
#else
  return p[m];
#endif
}

/// Index of the lowest set bit of v > 0, and of the highest.
GPULAB_DEEP_HD int lowestBit(int v) {
#if defined(__CUDA_ARCH__)
  return __ffs(v) - 1;
#else
  return __builtin_ctz(static_cast<unsigned>(v));
#endif
}
GPULAB_DEEP_HD int highestBit(int v) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(v);
#else
  return 31 - __builtin_clz(static_cast<unsigned>(v));
#endif
}

/// The longest level whose entry at m (odd) holds for |dz|^2 = dz2 and skips at most `limit` >= 1
/// iterations: the first level whose radius fails ends the climb (radii never grow with the level).
/// (Reading four levels' radii at once instead changed nothing measurable on the H200.)
GPULAB_DEEP_HD int blaLevel(const BlaView& bla, int m, double dz2, int limit) {
  const int start = m - 1;
  int top = smaller(bla.levels, highestBit(limit));  // m - 1 must be a multiple of 2^level
  if (start != 0) top = smaller(top, lowestBit(start));
  int level = 0;
  while (level < top && dz2 < bla.r2[blaLevelStart(bla, level + 1) + (start >> (level + 1))]) ++level;
  return level;
}

/// The same with the floatexp radii.
GPULAB_DEEP_HD int blaLevelExp(const BlaView& bla, int m, FloatExp dz2, int limit) {
  const int start = m - 1;
  int top = smaller(bla.levels, highestBit(limit));
  if (start != 0) top = smaller(top, lowestBit(start));
  int level = 0;
  while (level < top && absLess(dz2, bla.r2Exp[blaLevelStart(bla, level + 1) + (start >> (level + 1))])) ++level;
  return level;
}

GPULAB_DEEP_HD void finishEscaped(const PerturbationParams& p, DeepPixel& s, double z2) {
  s.value = escapedValue(s.n, static_cast<float>(z2), p.smooth);
  s.done = true;
}

GPULAB_DEEP_HD void finishInterior(DeepPixel& s) {
  s.value = kMandelbrotInterior;
  s.done = true;
}

/// Steps in double (FloatExp format: while |dz|^2 >= 2^-1000) until the pixel is finished (true), the
/// budget is spent, or dz has become tiny (FloatExp: s.extended is set). Full and BLA steps are both
/// dz <- P dz + Q (full: P = 2 Z_m + dz, Q = dc; BLA: P = A, Q = B dc) with the same tests after them, so
/// the lanes of a warp run the same instructions whichever step they take; only the search for a BLA
/// entry (while |dz| may be below a radius) and the rare events (escape, rebase, the end of the reference
/// or of the iterations, a tiny dz) branch. n is kept as m + offset: both advance together between rebases.
template <bool kExtended>
GPULAB_DEEP_HD bool doubleSteps(const PerturbationParams& p, const ReferenceView& ref, const BlaView& bla, double gate,
                                DeepPixel& s, int& budget) {
  const int last = ref.length - 1;
  double dzx = s.dzx, dzy = s.dzy, dz2 = s.dz2, zmx = s.zmx, zmy = s.zmy;
  const double dcx = s.dcx, dcy = s.dcy;
  int m = s.m;
  int offset = s.n - s.m;
  int steps = 0;
  // The step that reaches m = stop has an event: the reference's last point or the last iteration tested.
  int stop = smaller(last, p.maxIterations - 1 - offset);
  bool finished = false;
  if (budget <= 0) return false;
  // Every exit goes through one rarely taken branch, so the common path is the step, one load and the
  // tests (about 30 instructions, 15 of them FP64).
  for (;;) {
    ++steps;
    const double tx = fma(2.0, zmx, dzx);  // 2 Z_m + dz
    const double ty = fma(2.0, zmy, dzy);
    double nx = fma(tx, dzx, fma(-ty, dzy, dcx));
    double ny = fma(tx, dzy, fma(ty, dzx, dcy));
    if (dz2 < gate && (m & 1) != 0) {  // BLA at odd m: every level-1 entry starts there
      const int level = blaLevel(bla, m, dz2, stop - m);
      if (level > 0) {
        const int k = blaLevelStart(bla, level) + ((m - 1) >> level);
        const double2 a = loadPoint(bla.a, k);
        const double2 b = loadPoint(bla.b, k);
        const double qx = fma(b.x, dcx, -(b.y * dcy));
        const double qy = fma(b.x, dcy, b.y * dcx);
        nx = fma(a.x, dzx, fma(-a.y, dzy, qx));
        ny = fma(a.x, dzy, fma(a.y, dzx, qy));
        m += (1 << level) - 1;
      }
    }
    ++m;
    const double2 z = loadPoint(ref.z, m);
    const double zx = z.x + nx;
    const double zy = z.y + ny;
    const double z2 = norm2(zx, zy);
    dzx = nx;
    dzy = ny;
    dz2 = norm2(nx, ny);
    zmx = z.x;
    zmy = z.y;
    if (!(z2 <= kEscapeRadius2) || z2 < dz2 || m >= stop || steps == budget || (kExtended && dz2 < kDeepTinyNorm2)) {
      if (!(z2 <= kEscapeRadius2)) {  // also stops on inf/NaN
        s.n = m + offset;
        finishEscaped(p, s, z2);
        finished = true;
        break;
      }
      if (z2 < dz2 || m == last) {  // rebase: dz <- z at m = 0 (Z_0 = 0)
        dzx = zx;
        dzy = zy;
        dz2 = z2;
        zmx = 0.0;
        zmy = 0.0;
        offset += m;
        m = 0;
        stop = smaller(last, p.maxIterations - 1 - offset);
      }
      if (m + offset >= p.maxIterations - 1) {
        finishInterior(s);
        finished = true;
        break;
      }
      if (kExtended && dz2 < kDeepTinyNorm2) {
        s.dzExp = fromDoubles(dzx, dzy);
        s.extended = true;
        break;
      }
      if (steps == budget) break;
    }
  }
  budget -= steps;
  s.dzx = dzx;
  s.dzy = dzy;
  s.dz2 = dz2;
  s.zmx = zmx;
  s.zmy = zmy;
  s.n = m + offset;
  s.m = m;
  s.steps += steps;
  return finished;
}

/// One step in floatexp (FloatExp format while |dz|^2 < 2^-1000), with its tests. Returns true when
/// the pixel is finished.
GPULAB_DEEP_HD bool extendedStep(const PerturbationParams& p, const ReferenceView& ref, const BlaView& bla,
                                 DeepPixel& s) {
  const int last = ref.length - 1;
  int level = 0;
  if (p.bla && bla.levels > 0 && (s.m & 1) != 0) {
    const int limit = smaller(p.maxIterations - 1 - s.n, last - s.m);
    level = blaLevelExp(bla, s.m, norm2(s.dzExp), limit);
  }
  if (level > 0) {
    const int k = blaLevelStart(bla, level) + ((s.m - 1) >> level);
    s.dzExp = add(mul(bla.aExp[k], s.dzExp), mul(bla.bExp[k], s.dcExp));
    s.n += 1 << level;
    s.m += 1 << level;
  } else {
    const ComplexExp t = add(scale2(ref.zExp[s.m], 1), s.dzExp);  // 2 Z_m + dz
    s.dzExp = add(mul(t, s.dzExp), s.dcExp);
    ++s.n;
    ++s.m;
  }
  ++s.steps;

  // Escape can only happen at a reference point near R, where dz (below 2^-500) no longer matters.
  const double2 z = loadPoint(ref.z, s.m);
  const double zx = z.x + toDoubleReal(s.dzExp);
  const double zy = z.y + toDoubleImag(s.dzExp);
  const double z2 = norm2(zx, zy);
  if (!(z2 <= kEscapeRadius2)) {
    finishEscaped(p, s, z2);
    return true;
  }
  // |z| < |dz| needs |Z_m| < 2 |dz|; |Z_m| >= 2^Ze and |dz| < 2^(dze + 2) rule it out cheaply otherwise.
  const ComplexExp zExp = ref.zExp[s.m];
  if (s.m == last || (zExp.e < s.dzExp.e + 3 && absLess(norm2(add(zExp, s.dzExp)), norm2(s.dzExp)))) {
    s.dzExp = add(zExp, s.dzExp);
    s.m = 0;
  }
  if (s.n >= p.maxIterations - 1) {
    finishInterior(s);
    return true;
  }
  if (!absLess(norm2(s.dzExp), FloatExp{1.0, -1000})) {  // |dz|^2 >= 2^-1000: continue in double
    s.dzx = toDoubleReal(s.dzExp);
    s.dzy = toDoubleImag(s.dzExp);
    s.dz2 = norm2(s.dzx, s.dzy);
    const double2 zm = loadPoint(ref.z, s.m);
    s.zmx = zm.x;
    s.zmy = zm.y;
    s.extended = false;
  }
  return false;
}

}  // namespace deep_detail

// ---------------------------------------------------------------------------------------------
// The pixel

/// The state of pixel (i, j) before its first step. kExtended: the FloatExp format.
template <bool kExtended>
GPULAB_DEEP_HD DeepPixel startPixel(const PerturbationParams& p, int i, int j) {
  DeepPixel s;
  const double u = static_cast<double>(i) + 0.5 - 0.5 * p.width;
  const double v = 0.5 * p.height - 0.5 - static_cast<double>(j);
  if constexpr (kExtended) {
    const FloatExp cx = add(mul(fromDouble(u), p.spacingExp), p.offsetXExp);
    const FloatExp cy = add(mul(fromDouble(v), p.spacingExp), p.offsetYExp);
    s.dcExp = fromParts(cx, cy);
    s.dcx = toDouble(cx);
    s.dcy = toDouble(cy);
    s.extended = true;  // dz = 0
  } else {
    s.dcx = fma(u, p.spacing, p.offsetX);
    s.dcy = fma(v, p.spacing, p.offsetY);
  }
  s.done = p.maxIterations <= 1;  // z_0 = 0 is the only point tested
  return s;
}

/// Runs at most `budget` steps (full or BLA) of pixel s; true once it is finished (s.value holds the
/// result). Slicing the run changes nothing: the same steps happen in the same order.
template <bool kExtended>
GPULAB_DEEP_HD bool advancePixel(const PerturbationParams& p, const ReferenceView& ref, const BlaView& bla,
                                 DeepPixel& s, int budget) {
  if (s.done) return true;
  // |dz|^2 below the largest level-1 radius^2 may take a BLA entry (negative: BLA off).
  const double gate = p.bla && bla.levels > 0 ? bla.r2Level1Max : -1.0;
  while (budget > 0) {
    if constexpr (kExtended) {
      if (s.extended) {
        --budget;
        if (deep_detail::extendedStep(p, ref, bla, s)) return true;
        continue;
      }
    }
    if (deep_detail::doubleSteps<kExtended>(p, ref, bla, gate, s, budget)) return true;
  }
  return false;
}

/// The raw value of pixel (i, j): the CPU path, and what the GPU kernel computes per thread.
/// `steps`, when not null, receives the number of full and BLA steps taken.
template <bool kExtended>
GPULAB_DEEP_HD float perturbationValue(const PerturbationParams& p, const ReferenceView& ref, const BlaView& bla, int i,
                                       int j, int* steps = nullptr) {
  DeepPixel s = startPixel<kExtended>(p, i, j);
  while (!advancePixel<kExtended>(p, ref, bla, s, 1 << 30)) {
  }
  if (steps != nullptr) *steps = s.steps;
  return s.value;
}

// ---------------------------------------------------------------------------------------------
// Launcher: asynchronous on `stream`.

/// Which rows to compute. Rows [firstRow, firstRow + rowCount) of the frame are written into `raw` at
/// their own row numbers (the others are untouched), so a caller can split a slow frame into bands of
/// rows and stay responsive between launches.
struct PerturbationLaunch {
  int firstRow = 0;
  int rowCount = -1;  ///< -1: to the last row
  /// Optional device counter: the launch adds the number of steps (full and BLA) it took; not zeroed here.
  unsigned long long* stepCounter = nullptr;
};

/// Computes the raw values of the frame's rows, one thread per pixel in 8x16-pixel blocks (warps of 8x4
/// neighbours, whose counts are alike). `ref` and `bla` point to device memory (the engine's
/// ReferenceOrbit and BlaTable arrays uploaded as they are); `raw` is p.width x p.height. Throws
/// std::invalid_argument for rows outside the frame or a raw plane smaller than it, and CudaError when
/// the launch fails.
void launchPerturbation(const PerturbationParams& p, const ReferenceView& ref, const BlaView& bla, Plane<float> raw,
                        const PerturbationLaunch& launch, cudaStream_t stream);

}  // namespace gpulab::kernels
