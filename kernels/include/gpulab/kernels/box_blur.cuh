// Box blur of planes: the mean over a (2r+1) x (2r+1) window, any radius, every border mode, with
// a cost per pixel that does not depend on the radius. Four GPU paths:
//
//   Fused (one pass, radius up to boxBlurMaxFusedRadius; run when named, Auto takes Sweep): each
//   warp owns a strip of columns (its output tile plus the halo) and a segment of rows and walks
//   down it on its own, no block barrier. Every lane keeps the vertical window sum of its 8 or 16
//   columns in registers (the entering row added, the leaving row read again, from L2, taken off),
//   loads the rows of the next steps ahead, and per output row the warp prefix-sums those sums
//   along the strip (registers, shuffles, a small shared buffer per warp): each output is the
//   difference of two prefixes. It also runs on rows of C interleaved channels (launchBoxBlurInterleaved).
//   Tiled (one pass, radius up to boxBlurMaxTiledRadius): each block owns a tile of columns and a
//   segment of rows and marches down it. Per input row it takes the difference between the row
//   entering the vertical window and the row leaving it, prefix-sums that difference across the
//   tile (warp shuffles), turns it into the change of every column's horizontal window sum, and
//   adds that to a running sum per output column held in registers. Rows arrive in shared memory
//   through cp.async, several steps ahead. TiledRing keeps the last 2r+2 rows in a shared-memory
//   ring, so every input sample comes from DRAM once; TiledStream (larger radii) reads the leaving
//   row a second time, from L2.
//   Sweep (one pass, radius up to boxBlurMaxSweepRadius; Auto takes it where it fits): each block of
//   256 threads owns a tile of columns (plus the halo) and a segment of rows and sweeps down it, 16
//   output rows a batch. Every thread keeps the vertical window sums of one or two 4-byte words of
//   the row (1 f32, 2 u16 or 4 u8 samples: one load a row; u8 sums two to a register) and loads
//   the next batch's rows while the current one's horizontal phase runs; the sums go to shared
//   memory, where runs of outputs slide the horizontal window along each row, and the batch leaves
//   through 16-byte stores. f32 sums in double, u8 and u16 sums exact integers, as on the other
//   paths. Planes of any alignment (words gathered sample by sample where the rows are not aligned).
//   An f32 plane up to radius 15 takes the sweep's stream kernel instead (box_blur_stream.cu): a
//   block of 128 threads walks down a strip of 128 columns through a segment of rows sized for one
//   wave of blocks, each input row's row sums once (double, sliding along the row) into a shared
//   ring, and a thread a column keeps the vertical sum of the last 2r+1 of them.
//   SummedArea (any radius): a summed-area table in scratch memory, then every output as a few
//   taps of it; the border modes become integer weights on those taps (windowTaps below).
//
// Direct path (launchBoxBlurDirect, radius 1..kBoxBlurDirectMaxRadius, u8 and f32 stacks of planes):
// small windows, streamed. Each thread owns 4 columns of a band of rows and walks down it with no
// block barrier: per input row one vector load (and its neighbours' vectors for the R samples
// either side), the 2R+1-sample row sums of its 4 outputs (float for f32, exact for u8), and a
// running sum of the window's row sums down the band (double for f32), the leaving row's sum read
// back from the thread's slots of a shared ring. u8 exact as above; f32 the mean of the float row
// sums, each of which carries at most 2R + 6 float roundings.
//
// u8 and u16 sums are exact integers (results rounded to nearest; the area is odd, so there are no ties).
// f32 sums run in double, so results are the correctly rounded mean up to one float rounding.
// The tiled and fused paths, and every path on interleaved rows, need input planes 16-byte aligned
// with a pitch that is a multiple of 16 (DeviceImage planes are); the sweep and summed-area paths on
// a plane take any alignment.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

enum class BoxBlurPath { Auto, TiledRing, TiledStream, SummedArea, Fused, Sweep };

/// "auto", "ring", "stream", "sat", "fused", "sweep".
const char* toString(BoxBlurPath path) noexcept;

// ---------------------------------------------------------------------------------------------
// Window sums of a border-extended line as taps of its prefix sums (host and device).
//
// For a line x[0..n) extended by `mode` to e(i) for every integer i, and P[k] = x[0] + ... + x[k-1]
// (k in [0, n]), the sum of e(lo) ... e(hi - 1) equals
//   sum_k weight[k] * P[index[k]]  +  outside * borderValue      (outside is nonzero for Constant only)
// whatever the window's length against n. Periodic modes count whole periods; the weights are
// integers, so the formula is exact for integer samples.

struct WindowTaps {
  // Fixed slots, so that a GPU thread keeps them in registers: 0 and 1 are the taps that move with
  // the window's ends, 2..4 the fixed prefixes P[n], P[n-1] and P[1]. Unused slots weigh 0, and
  // repeated indices simply add up (the sum is linear in P).
  static constexpr int kCount = 5;
  int index[kCount] = {};
  long long weight[kCount] = {};
  long long outside = 0;
};

GPULAB_HD int floorDivide(int a, int b) {  // b > 0
  const int q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

GPULAB_HD int clampInt(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

namespace detail {
// Adds sign * Q(m), the sum of the first m samples of one period of the extended line
// (m in [0, period)), as P taps; the varying tap goes to `slot`.
GPULAB_HD void addPeriodPrefix(WindowTaps& t, int slot, int m, int n, BorderMode mode, long long sign) {
  if (m <= n) {
    t.index[slot] = m;
    t.weight[slot] = sign;
  } else if (mode == BorderMode::Reflect) {  // e(i) = x[2n-1-i] for i in [n, 2n)
    t.weight[2] += 2 * sign;
    t.index[slot] = 2 * n - m;
    t.weight[slot] = -sign;
  } else {  // Reflect101: e(i) = x[2n-2-i] for i in [n, 2n-2)
    t.weight[2] += sign;
    t.weight[3] += sign;
    t.index[slot] = 2 * n - 1 - m;
    t.weight[slot] = -sign;
  }
}
}  // namespace detail

/// Taps for the sum over [lo, hi) (lo <= hi) of the line of n >= 1 samples extended by `mode`.
GPULAB_HD WindowTaps windowTaps(int lo, int hi, int n, BorderMode mode) {
  WindowTaps t;
  t.index[2] = n;
  t.index[3] = n - 1;
  t.index[4] = 1;
  const int a = clampInt(lo, 0, n);
  const int b = clampInt(hi, 0, n);
  if (mode == BorderMode::Constant || mode == BorderMode::Replicate || n == 1) {
    t.index[0] = b;  // the part inside the line
    t.weight[0] = 1;
    t.index[1] = a;
    t.weight[1] = -1;
    if (mode == BorderMode::Constant) {
      t.outside = static_cast<long long>(hi - lo) - (b - a);
      return t;
    }
    // Replicate, and any mode on a line of one sample: x[0] = P[1] below, x[n-1] = P[n] - P[n-1] above.
    const long long below = (hi < 0 ? hi : 0) - lo;
    const long long above = hi - (lo > n ? lo : n);
    if (below > 0) t.weight[4] += below;
    if (above > 0) {
      t.weight[2] += above;
      t.weight[3] -= above;
    }
    return t;
  }
  const int period = mode == BorderMode::Wrap ? n : (mode == BorderMode::Reflect ? 2 * n : 2 * n - 2);
  const int qHi = floorDivide(hi, period);
  const int qLo = floorDivide(lo, period);
  const long long periods = static_cast<long long>(qHi) - qLo;
  // extended P(k) = (k div period) * Q(period) + Q(k mod period)
  if (mode == BorderMode::Wrap) {
    t.weight[2] = periods;
    t.index[0] = hi - qHi * period;
    t.weight[0] = 1;
    t.index[1] = lo - qLo * period;
    t.weight[1] = -1;
    return t;
  }
  if (mode == BorderMode::Reflect) {
    t.weight[2] = 2 * periods;
  } else {
    t.weight[2] = periods;
    t.weight[3] = periods;
    t.weight[4] = -periods;
  }
  detail::addPeriodPrefix(t, 0, hi - qHi * period, n, mode, 1);
  detail::addPeriodPrefix(t, 1, lo - qLo * period, n, mode, -1);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Non-finite samples (f32).
//
// The definition: each output is the mean of its window; a window holding a NaN, or both +inf and
// -inf, gives NaN; one holding +inf (and no -inf, no NaN) gives +inf, -inf likewise; otherwise the
// finite mean. Running sums (and summed-area tables) would carry a NaN or inf on to every later sum,
// far beyond the windows holding it (and inf - inf is NaN), so every path, after its pass,
// recomputes the outputs it left non-finite from their windows with boxWindowMeanExact. That is
// exact: in a sum of doubles non-finite values are absorbing (inf + x = inf, inf - inf = NaN, NaN
// stays), so an output that came out finite only ever met finite samples and is right, and one that
// a spread value spoiled is never finite. (Finite f32 samples cannot overflow the double sums.)
// The cost on finite input is a finiteness test of each running sum at the end of a block or warp
// (tiled and fused paths) or of each output (summed-area path, CPU baseline).

/// Whether v is neither NaN nor infinite (comparisons only: host and device alike).
GPULAB_HD bool boxFinite(double v) {
  return v >= -std::numeric_limits<double>::max() && v <= std::numeric_limits<double>::max();
}

/// The box mean of sample c of pixel (x, y) by the definition above, whatever the samples: rows of
/// `channels` interleaved channels (in.width counts pixels), the window's samples border-mapped by
/// `mode` (`fill` outside for Constant), finite ones summed in double. O(r^2) per output: the paths
/// call it only for the outputs their running sums left non-finite.
GPULAB_HD float boxWindowMeanExact(Plane<const float> in, int channels, int x, int c, int y, int radius,
                                   BorderMode mode, float fill) {
  double sum = 0;
  bool plus = false, minus = false;
  for (int j = -radius; j <= radius; ++j) {
    const int ym = borderIndex(y + j, in.height, mode);
    const float* row = ym < 0 ? nullptr : in.row(ym);
    for (int i = -radius; i <= radius; ++i) {
      const int xm = row == nullptr ? -1 : borderIndex(x + i, in.width, mode);
      const float v = xm < 0 ? fill : row[static_cast<std::size_t>(xm) * channels + c];
      if (boxFinite(v)) {
        sum += v;
        continue;
      }
      if (v != v) return std::numeric_limits<float>::quiet_NaN();
      (v > 0 ? plus : minus) = true;
      if (plus && minus) return std::numeric_limits<float>::quiet_NaN();
    }
  }
  if (plus) return std::numeric_limits<float>::infinity();
  if (minus) return -std::numeric_limits<float>::infinity();
  const double side = 2.0 * radius + 1.0;
  return static_cast<float>(sum / (side * side));
}

/// A window's area (2r+1)^2 and its reciprocal, as the integer rounding (boxRoundedMean) and the
/// float means take them.
struct BoxArea {
  unsigned count = 0;
  float invF = 0;
  double inv = 0;
};

inline BoxArea boxAreaOf(int radius) {
  const long long side = 2LL * radius + 1;
  BoxArea a;
  a.count = static_cast<unsigned>(side * side);
  a.inv = 1.0 / static_cast<double>(side * side);
  a.invF = static_cast<float>(a.inv);
  return a;
}

/// The box mean of a nonnegative integer window sum, rounded to nearest (the area is odd: no ties),
/// through a float (u8) or double (u16) estimate of the quotient corrected by one either way: exact,
/// without an integer division. `sum` below 2^32 - area / 2.
template <class T>
GPULAB_HD T boxRoundedMean(unsigned sum, unsigned area, float invAreaF, double invArea) {
  const unsigned n = sum + area / 2;
  unsigned q;
  if constexpr (sizeof(T) == 1)
    q = static_cast<unsigned>(static_cast<float>(n) * invAreaF);
  else
    q = static_cast<unsigned>(static_cast<double>(n) * invArea);
  const int rem = static_cast<int>(n - q * area);
  if (rem < 0)
    --q;
  else if (rem >= static_cast<int>(area))
    ++q;
  return static_cast<T>(q);
}

/// The high word of a x b: one instruction on the GPU.
GPULAB_HD std::uint32_t boxMulHi(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(a) * b >> 32);
#endif
}

/// floor(n / d) for every n below 2^bits as a multiply and a shift (Granlund and Montgomery, 1994):
/// with s >= bits + ceil(log2 d) and m = ceil(2^s / d), m d - 2^s < d <= 2^(s - bits), so the error
/// of n m / 2^s against n / d stays below 1 / d. s is at least 32, so that the quotient is the high
/// word of the 32-bit product n m shifted by s - 32 (an IMAD.HI, and no shift for the window sums
/// of u8 up to radius 31); m fits 32 bits for d >= 2 and bits <= 30.
struct BoxDivide {
  std::uint32_t multiplier = 1;
  int shift = 0;  ///< s - 32
  GPULAB_HD unsigned operator()(unsigned n) const { return boxMulHi(n, multiplier) >> shift; }
  /// The same when shift is 0 (the caller has checked): the high word alone.
  GPULAB_HD unsigned high(unsigned n) const { return boxMulHi(n, multiplier); }
};

/// The divider by d >= 2 for dividends below 2^bits (bits 1..30).
inline BoxDivide boxDivideOf(unsigned d, int bits) {
  int log2Up = 0;
  while ((1ULL << log2Up) < d) ++log2Up;
  const int s = bits + log2Up < 32 ? 32 : bits + log2Up;
  BoxDivide div;
  div.shift = s - 32;
  div.multiplier = static_cast<std::uint32_t>(((1ULL << s) + d - 1) / d);
  return div;
}

// ---------------------------------------------------------------------------------------------
// Launchers. T is std::uint8_t, std::uint16_t or float.

/// The largest radius of the direct path.
inline constexpr int kBoxBlurDirectMaxRadius = 2;

/// The direct path on `planes` planes of in.height rows each, one after the other in both stacks
/// (u8 or f32; radius 1..kBoxBlurDirectMaxRadius; not in place). Vector loads and stores where rows
/// are aligned for them (16 bytes f32, 4 u8, in and out), sample by sample elsewhere. Asynchronous
/// on `stream`; throws std::invalid_argument for a bad radius or mismatched stacks.
template <class T>
void launchBoxBlurDirect(Plane<const T> inStack, Plane<T> outStack, int planes, int radius, BorderMode mode,
                         T borderValue, cudaStream_t stream);
/// The same thread code on the host (host pointers), with the bands a GPU holding
/// `residentBlocks` blocks at once would get.
template <class T>
void runBoxBlurDirectOnHost(Plane<const T> inStack, Plane<T> outStack, int planes, int radius, BorderMode mode,
                            T borderValue, int residentBlocks);

/// The largest radius the tiled paths take (larger ones go to SummedArea): 192 for f32, 384 for
/// u16, 768 for u8.
template <class T>
int boxBlurMaxTiledRadius();

/// The largest radius the fused path takes on rows of `channels` (1..4) interleaved channels:
/// 96 / channels for f32 and u16, 192 / channels for u8 (rounded down).
template <class T>
int boxBlurMaxFusedRadius(int channels = 1);

/// The largest radius the sweep path takes on rows of `channels` (1..4) interleaved channels: its
/// tile of at most 512 words a row keeps 32 output pixels beside the halo, up to 240. f32 (a sample
/// a word): 240 on one channel, 112 on two, 69 on three, 48 on four; u8 (four): 240, 240, 240, 239;
/// u16 (two): 127, 127, 127, 111 (it stops at 127: its sums stay below 2^32).
template <class T>
int boxBlurMaxSweepRadius(int channels = 1);

/// The path Auto resolves to on `device` for this radius (Sweep up to boxBlurMaxSweepRadius, where it
/// measured fastest; beyond it TiledRing when its ring fits in
/// shared memory, TiledStream up to boxBlurMaxTiledRadius, SummedArea beyond). Radius 0 is a plain
/// copy. The fused path's row segments can be forced with GPULAB_BOX_FUSED_ROWS (benchmarks).
template <class T>
BoxBlurPath boxBlurResolvePath(BoxBlurPath path, int radius, int device);

/// Dynamic shared memory one block of a tiled path takes for this radius (0 for SummedArea); the
/// ring path runs where this fits the device's opt-in limit per block.
template <class T>
std::size_t boxBlurSharedBytes(BoxBlurPath path, int radius);

/// Device scratch bytes launchBoxBlur needs for `path` (0 for the tiled paths).
template <class T>
std::size_t boxBlurScratchBytes(BoxBlurPath path, int width, int height);

/// What a launch needs worked out beforehand for one device, plane size, radius and path: the
/// path resolved, and for the tiled paths the tiling that fills that GPU (from its SM count and
/// the kernel's occupancy) with the kernel's shared-memory limit raised. Plan once, launch often.
struct BoxBlurPlan {
  BoxBlurPath path = BoxBlurPath::Auto;  ///< resolved: never Auto in a plan from planBoxBlur
  int device = -1;
  int width = 0;
  int height = 0;
  int radius = 0;
  int tileWidth = 0;     ///< tiled paths: output columns per block (Fused: per warp)
  int rowsPerBlock = 0;  ///< tiled paths: output rows per block (Fused: per warp)
  int tilesX = 0;
  int tilesY = 0;
  std::size_t sharedBytes = 0;   ///< tiled paths: dynamic shared memory per block
  std::size_t scratchBytes = 0;  ///< SummedArea: device scratch the launch needs
};

/// Plans a box blur of width x height planes on the current device. Throws std::invalid_argument
/// for a negative radius, an empty size, or a path that cannot take the radius on this device.
template <class T>
BoxBlurPlan planBoxBlur(int width, int height, int radius, BoxBlurPath path);

/// out = box blur of in following `plan` (made on the current device for in's size): same size,
/// distinct memory; `scratch` holds plan.scratchBytes. Asynchronous on `stream`. Throws
/// std::invalid_argument for planes that do not match the plan, overlap, or are misaligned.
template <class T>
void launchBoxBlur(const BoxBlurPlan& plan, Plane<const T> in, Plane<T> out, BorderMode mode, T borderValue,
                   void* scratch, std::size_t scratchBytes, cudaStream_t stream);

/// planBoxBlur and launchBoxBlur in one call (the planning's device queries every time).
template <class T>
void launchBoxBlur(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, BoxBlurPath path,
                   void* scratch, std::size_t scratchBytes, cudaStream_t stream);

/// Runs the very block code of launchBoxBlur on the host, block by block, phase by phase between
/// the barriers (warp scans done lane by lane), with the tiling the launcher would pick for a GPU
/// holding `residentBlocks` blocks at once (Fused: that many blocks of 4 warps). Host pointers. Slow; it lets the
/// tiling, ring, scan and border logic be tested on machines without a GPU.
template <class T>
void runBoxBlurOnHost(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, BoxBlurPath path,
                      int residentBlocks);

/// The largest radius launchBoxBlurInterleaved takes for `path` (Fused or Sweep; Auto: the larger).
template <class T>
int boxBlurMaxInterleavedRadius(int channels, BoxBlurPath path);

/// The path launchBoxBlurInterleaved takes: `path` (Fused or Sweep), or for Auto the sweep path
/// where the radius fits it, the fused path beyond. Throws std::invalid_argument for another path.
template <class T>
BoxBlurPath boxBlurResolveInterleavedPath(BoxBlurPath path, int channels, int radius);

/// The fused or sweep path on rows of `channels` (1..4) interleaved channels: sample (x, c) of row
/// y at in.row(y)[x * channels + c]; in.width and out.width count pixels. Every channel filtered.
/// Auto takes the sweep path where its radius fits, the fused path beyond. Planes 16-byte aligned
/// with pitches a multiple of 16. Asynchronous on `stream`. Throws std::invalid_argument for
/// another path, a radius beyond boxBlurMaxInterleavedRadius(channels, path), mismatched,
/// overlapping or misaligned planes.
template <class T>
void launchBoxBlurInterleaved(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T borderValue,
                              cudaStream_t stream, BoxBlurPath path = BoxBlurPath::Auto);

/// The block or warp code of that path run on the host (thread by thread between barriers, lane by
/// lane with shuffles as loops), with the tiling the launcher picks for a GPU holding `residentWarps`
/// warps at once. Host pointers.
template <class T>
void runBoxBlurInterleavedOnHost(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode,
                                 T borderValue, int residentWarps, BoxBlurPath path = BoxBlurPath::Auto);

}  // namespace gpulab::kernels
