// Box blur, sweep path, stream kernel (box_blur_stream.cuh): f32 planes up to radius kMaxRadius.
//
// The word kernel (box_blur_sweep.cu) tiles the row 216-240 columns wide to give each of its 256
// threads a word, so a 4096-wide image has 18-19 tiles, and it needs 4 waves of short segments
// (48 rows) to fill the GPU: at r=15 each segment sums 30 rows above its first output, 62% more
// rows than it stores, and longer segments measured slower still (its batches wait on the leaving
// rows' loads). Here a block of kThreads threads walks down a strip of kWidth output columns (a
// thread a column) through a segment of rows sized for one wave of blocks (256 rows at 4096x4096),
// kBatch input rows between barriers, as the separable convolution's stream kernel does:
//   1. put: the batch's samples, loaded during the batch before (a warp a row, border-mapped
//      columns worked out once a lane), go to shared memory;
//   2. row pass: each input row once. A thread takes kOutputs outputs of one row: the first window's
//      K = 2r+1 samples from 16-byte shared reads, summed in double on four chains, then each next
//      output adds the sample entering less the one leaving (one addition on the sum's chain). The
//      row sums go to a ring of doubles in shared memory (the batch's rows and the K before them);
//   3. column pass: a thread a column keeps the vertical sum of the last K row sums: the entering
//      row sum in, the leaving one (K rows up the ring) out, and the mean goes down the column by
//      the pitch. A batch checks its sum's finiteness once, at its end.
// The radius is a template argument (15 kernels): every loop bound and shared offset of the row
// pass is then a constant, with no masked adds (Nsight Compute, r=15 with the radius at run time:
// 38 M warp instructions, a quarter of them the masks' compares and selects; now 23 M).
//
// Measured on an H100 (2026-11-27, session 15, copy ceiling 2976 GB/s), 4096x4096: r=3 0.056 ms,
// r=7 0.063, r=15 0.064 (the word kernel in the same call: 0.073, 0.083, 0.103).
// Every input sample comes from DRAM once (the strips' halo columns and the rows above a segment
// again, mostly from L2) and every output is written once.
//
// Sums in double, as on the other f32 paths: finite f32 samples sum exactly wherever their bits
// fit a double's 53, so the result is then the mean's single rounding whatever the order. A NaN or
// inf spoils the row sums after it in its thread's outputs and the vertical sum of its column
// below it, never an output whose window was finite: an output that comes out non-finite is
// recomputed from its window (boxWindowMeanExact), as on the other paths.
//
// The phases are functions of the thread index, and the program that orders them takes the barrier
// as an argument, so the host runs the same code (emulate).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "box_blur_stream.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "vector_loads.cuh"

namespace gpulab::kernels::boxstream {
namespace {

constexpr int kThreads = 128;
constexpr int kWidth = kThreads;  // output columns a strip: a thread a column
constexpr int kBatch = 8;         // input rows between barriers
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerWarp = kBatch / kWarps;
constexpr int kOutputs = 8;                                  // row-pass outputs a thread
constexpr int kSlots = (kWidth + 2 * kMaxRadius + 31) / 32;  // samples a lane loads a row
// 4 (mod 32) floats: the 8 lanes of a 16-byte shared access, on 8 consecutive rows, meet 32 banks.
constexpr int kInPitch = kSlots * 32 + 4;
// 16 (mod 128) bytes: the same for the row pass's 16-byte stores of its row sums.
constexpr int kRingPitch = kWidth + 2;
static_assert(kWidth / kOutputs * kBatch == kThreads, "a row-pass item a thread");
static_assert(kBatch % kWarps == 0 && kInPitch % 32 == 4 && kRingPitch * 8 % 128 == 16);

/// R: the radius, K = 2R + 1 taps a side. The ring holds the row sums of the batch's input rows and
/// the K before them, kBatch-row aligned.
template <int R>
struct Layout {
  static constexpr int taps = 2 * R + 1;
  static constexpr int ringRows = (taps + 2 * kBatch - 1) / kBatch * kBatch;
  static constexpr std::size_t inBytes = sizeof(float) * kBatch * kInPitch;
  static constexpr std::size_t bytes = inBytes + sizeof(double) * ringRows * kRingPitch;
  // The row pass's last 16-byte read (of the entering samples) stays in the loaded row.
  static_assert(kOutputs * (kWidth / kOutputs - 1) + taps / 4 * 4 + 4 * ((taps % 4 + kOutputs - 2) / 4 + 1) <=
                kSlots * 32);
};

struct Params {
  int rows = 0;  ///< output rows a segment, a multiple of kBatch
  BorderMode mode = BorderMode::Reflect101;
  float fill = 0;
  double inv = 0;  ///< 1 / K^2, as BoxArea
};

/// What a thread keeps across the barriers (registers on the GPU).
struct State {
  float ahead[kRowsPerWarp][kSlots];  // the next batch's samples
  int column[kSlots];                 // the plane column of each sample the lane loads, -1: the fill
  double sum;                         // the column's sum of the last K row sums
};

// boxWindowMeanExact out of line: called only for an output a NaN or inf spoiled.
__host__ __device__ __noinline__ float exactMean(Plane<const float> in, int x, int y, int radius, BorderMode mode,
                                                 float fill) {
  return boxWindowMeanExact(in, 1, x, 0, y, radius, mode, fill);
}

/// One block: strip bx, segment by, for radius R.
template <int R>
struct Block {
  using L = Layout<R>;
  static constexpr int kTaps = L::taps;
  static constexpr int kRing = L::ringRows;
  Plane<const float> in;
  Plane<float> out;
  const Params& p;
  float* inRows;  // kBatch rows of kInPitch: the batch's samples
  double* ring;   // kRing rows of kRingPitch: row sums, input row i of the segment at i % kRing
  int x0;         // the strip's first output column
  int y0;         // the segment's first output row
  int outputs;    // output rows in the segment
  int rows;       // input rows it reads: outputs + K - 1

  GPULAB_HD Block(Plane<const float> in_, Plane<float> out_, const Params& p_, unsigned char* shared, int bx, int by)
      : in(in_),
        out(out_),
        p(p_),
        inRows(reinterpret_cast<float*>(shared)),
        ring(reinterpret_cast<double*>(shared + L::inBytes)),
        x0(bx * kWidth),
        y0(by * p_.rows),
        outputs(p_.rows < out_.height - by * p_.rows ? p_.rows : out_.height - by * p_.rows),
        rows(outputs + kTaps - 1) {}

  /// The lane's columns. Beyond the extended row (kWidth + K - 1 samples) a lane loads a column the
  /// row pass never reads: the fill for Constant, else the row's first, so that only Constant
  /// needs a test a load.
  GPULAB_HD void start(int tid, State& s) const {
    const int lane = tid % 32;
    GPULAB_UNROLL
    for (int k = 0; k < kSlots; ++k) {
      const int e = lane + 32 * k;  // column of the strip's extended row
      const bool used = e < kWidth + kTaps - 1;
      s.column[k] = used ? borderIndex(x0 - R + e, in.width, p.mode) : (p.mode == BorderMode::Constant ? -1 : 0);
    }
    s.sum = 0;
  }

  /// The samples of input rows [i, i + kBatch) of the segment into s.ahead: rows warp and
  /// warp + kWarps, lane + 32 k of each.
  GPULAB_HD void load(int tid, State& s, int i) const {
    const int warp = tid / 32;
    GPULAB_UNROLL
    for (int u = 0; u < kRowsPerWarp; ++u) {
      const int y = borderIndex(y0 - R + i + warp + kWarps * u, in.height, p.mode);
      if (p.mode != BorderMode::Constant) {  // every row and column inside the plane
        const float* src = in.row(y);
        GPULAB_UNROLL
        for (int k = 0; k < kSlots; ++k) s.ahead[u][k] = src[s.column[k]];
      } else {
        const float* src = in.row(y < 0 ? 0 : y);
        GPULAB_UNROLL
        for (int k = 0; k < kSlots; ++k) s.ahead[u][k] = y < 0 || s.column[k] < 0 ? p.fill : src[s.column[k]];
      }
    }
  }

  /// Phase 1: s.ahead to shared memory.
  GPULAB_HD void put(int tid, const State& s) const {
    const int warp = tid / 32, lane = tid % 32;
    GPULAB_UNROLL
    for (int u = 0; u < kRowsPerWarp; ++u) {
      float* dst = inRows + (warp + kWarps * u) * kInPitch + lane;
      GPULAB_UNROLL
      for (int k = 0; k < kSlots; ++k) dst[32 * k] = s.ahead[u][k];
    }
  }

  /// Phase 2: row b = tid % kBatch of the batch, outputs [n0, n0 + kOutputs), n0 = kOutputs *
  /// (tid / kBatch): their row sums to ring row `slot` + b.
  GPULAB_HD void rowPass(int tid, int slot) const {
    constexpr int kWindow = (kTaps + 3) / 4;                 // 16-byte reads of the first window
    constexpr int kFirst = kWindow > 2 ? kWindow : 2;        // and of the samples that leave
    constexpr int kPhase = kTaps % 4;                        // the entering samples' offset in their unit
    constexpr int kEnter = (kPhase + kOutputs - 2) / 4 + 1;  // 16-byte reads of them
    const int b = tid % kBatch, n0 = kOutputs * (tid / kBatch);
    const float* src = inRows + b * kInPitch + n0;
    // The first window on four chains; its first kOutputs - 1 samples leave the later windows.
    double part[4] = {0, 0, 0, 0};
    double leave[kOutputs - 1];
    GPULAB_UNROLL
    for (int m = 0; m < kFirst; ++m) {
      float v[4];
      loadShared16(src + 4 * m, v);
      GPULAB_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int k = 4 * m + e;
        if (k >= kTaps && k >= kOutputs - 1) continue;
        const double d = v[e];
        if (k < kOutputs - 1) leave[k] = d;
        if (k < kTaps) part[e] += d;
      }
    }
    double h[kOutputs];
    h[0] = (part[0] + part[1]) + (part[2] + part[3]);
    // Samples K .. K + kOutputs - 2 enter: from kPhase on in the 16-byte units from K - kPhase.
    float enter[4 * kEnter];
    GPULAB_UNROLL
    for (int q = 0; q < kEnter; ++q) {
      float v[4];
      loadShared16(src + (kTaps - kPhase) + 4 * q, v);
      GPULAB_UNROLL
      for (int e = 0; e < 4; ++e) enter[4 * q + e] = v[e];
    }
    double change[kOutputs - 1];
    GPULAB_UNROLL
    for (int n = 1; n < kOutputs; ++n) change[n - 1] = static_cast<double>(enter[kPhase + n - 1]) - leave[n - 1];
    GPULAB_UNROLL
    for (int n = 1; n < kOutputs; ++n) h[n] = h[n - 1] + change[n - 1];
    double* dst = ring + (slot + b) * kRingPitch + n0;
    GPULAB_UNROLL
    for (int n = 0; n < kOutputs; n += 2) storeShared16(dst + n, h + n);
  }

  /// Phase 3 for the batch at input row i (ring rows slot.. ; `old`: the ring row of input row
  /// i - K): column tid. Input row i + r completes output row i + r - (K - 1); those in
  /// [0, outputs) are stored, down the column by the pitch from the first. Steady: a batch whose
  /// rows all have a leaving row and complete an output (no test a row).
  template <bool Steady>
  GPULAB_HD void columnPass(int tid, State& s, int i, int slot, int old) const {
    const int j0 = i - (kTaps - 1);
    const int lo = Steady || j0 >= 0 ? 0 : -j0;
    const int hi = Steady || outputs - j0 >= kBatch ? kBatch : outputs - j0;
    const int x = x0 + tid;
    const double* enter = ring + slot * kRingPitch + tid;
    // The leaving rows from `old` on, back to the ring's first row after its last.
    const double* leave = ring + old * kRingPitch + tid;
    const int wrap = kRing - old;  // rows before the wrap
    float mean[kBatch];
    GPULAB_UNROLL
    for (int r = 0; r < kBatch; ++r) {
      const double h = enter[r * kRingPitch];
      if (Steady || i + r >= kTaps)
        s.sum += h - (r < wrap ? leave : leave - kRing * kRingPitch)[r * kRingPitch];
      else
        s.sum += h;
      mean[r] = static_cast<float>(s.sum * p.inv);
    }
    if (x >= out.width || lo >= hi) return;
    // A NaN or inf, once in the sum, stays (inf - inf is NaN): a finite sum at the batch's end
    // means every mean of it was finite. Otherwise those that are not get their window's.
    if (!boxFinite(s.sum)) {
      GPULAB_UNROLL
      for (int r = 0; r < kBatch; ++r)
        if (r >= lo && r < hi && !boxFinite(mean[r])) mean[r] = exactMean(in, x, y0 + j0 + r, R, p.mode, p.fill);
    }
    float* dst = out.row(y0 + j0 + lo) + x;
    GPULAB_UNROLL
    for (int r = 0; r < kBatch; ++r) {
      if (Steady || (r >= lo && r < hi)) {
        *dst = mean[r];
        dst = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(dst) + out.pitch);
      }
    }
  }

  /// Whether the batch at input row i is steady (columnPass).
  GPULAB_HD bool steady(int i) const { return i >= kTaps && i - (kTaps - 1) + kBatch <= outputs; }
};

/// The block's program. each(f) runs f(tid, state) for every thread, sync() is a barrier.
template <class Block, class Each, class Sync>
GPULAB_HD void program(const Block& block, Each&& each, Sync&& sync) {
  each([&](int tid, State& s) {
    block.start(tid, s);
    block.load(tid, s, 0);
  });
  int slot = 0;  // the ring row of input row i
  for (int i = 0; i < block.rows; i += kBatch) {
    each([&](int tid, State& s) { block.put(tid, s); });
    sync();
    each([&](int tid, State& s) {
      if (i + kBatch < block.rows) block.load(tid, s, i + kBatch);  // in flight through the row pass
      block.rowPass(tid, slot);
    });
    sync();
    const int old = slot < Block::kTaps ? slot - Block::kTaps + Block::kRing : slot - Block::kTaps;
    if (block.steady(i))
      each([&](int tid, State& s) { block.template columnPass<true>(tid, s, i, slot, old); });
    else
      each([&](int tid, State& s) { block.template columnPass<false>(tid, s, i, slot, old); });
    slot = slot + kBatch == Block::kRing ? 0 : slot + kBatch;
  }
}

/// Blocks an SM as the shared memory allows them (H100: 228 KB), the registers held to fit.
template <int R>
constexpr int residentFor() {
  return R <= 3 ? 8 : R <= 7 ? 7 : R <= 11 ? 5 : 4;
}

template <int R>
__global__ void __launch_bounds__(kThreads, residentFor<R>())
    boxStreamKernel(Plane<const float> in, Plane<float> out, const __grid_constant__ Params params) {
  __shared__ __align__(16) unsigned char shared[Layout<R>::bytes];
  const Block<R> block(in, out, params, shared, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y));
  const int tid = static_cast<int>(threadIdx.x);
  State state;
  program(
      block, [&](auto&& f) { f(tid, state); }, [] { __syncthreads(); });
}

// ---------------------------------------------------------------------------------------------
// Host side

/// GPULAB_BOX_SWEEP_KERNEL=words runs the word kernel where this one would (for comparison);
/// GPULAB_BOX_STREAM_ROWS forces the segment rows (rounded up to a batch). Tuning knobs: the results
/// do not depend on them.
const std::string& forcedKernel() {
  static const std::string kernel = tuningText("GPULAB_BOX_SWEEP_KERNEL");
  return kernel;
}

int forcedRows() {
  static const int rows = tuningRows("GPULAB_BOX_STREAM_ROWS");
  return rows;
}

/// About one wave of blocks for a GPU holding `resident` at once: as many segments a strip as
/// fit, each a whole number of batches.
Params plan(int width, int height, int radius, BorderMode mode, float fill, int resident) {
  Params p;
  p.mode = mode;
  p.fill = fill;
  p.inv = boxAreaOf(radius).inv;
  const int strips = divUp(width, kWidth);
  const int segments = std::max(1, resident / strips);
  const int rows = forcedRows() > 0 ? forcedRows() : divUp(height, segments);
  p.rows = divUp(rows, kBatch) * kBatch;
  return p;
}

/// f(integral_constant R) for the radius (1..kMaxRadius).
template <class F, int... Rs>
void withRadius(int radius, F&& f, std::integer_sequence<int, Rs...>) {
  ((radius == Rs + 1 ? f(std::integral_constant<int, Rs + 1>{}) : void()), ...);
}

template <class F>
void withRadius(int radius, F&& f) {
  withRadius(radius, f, std::make_integer_sequence<int, kMaxRadius>{});
}

}  // namespace

bool takes(int radius) { return radius >= 1 && radius <= kMaxRadius && forcedKernel() != "words"; }

void launch(Plane<const float> in, Plane<float> out, int radius, BorderMode mode, float fill, cudaStream_t stream) {
  withRadius(radius, [&](auto r) {
    auto kernel = boxStreamKernel<decltype(r)::value>;
    int device = 0, sms = 0, perSm = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, 0));
    const Params p = plan(in.width, in.height, radius, mode, fill, std::max(1, perSm) * sms);
    const dim3 grid(static_cast<unsigned>(divUp(out.width, kWidth)), static_cast<unsigned>(divUp(out.height, p.rows)));
    kernel<<<grid, kThreads, 0, stream>>>(in, out, p);
    GPULAB_CHECK_LAUNCH("boxStreamKernel");
  });
}

void emulate(Plane<const float> in, Plane<float> out, int radius, BorderMode mode, float fill, int residentBlocks) {
  withRadius(radius, [&](auto r) {
    using B = Block<decltype(r)::value>;
    const Params p = plan(in.width, in.height, radius, mode, fill, residentBlocks);
    std::vector<unsigned char> shared(B::L::bytes);
    std::vector<State> states(kThreads);
    const auto each = [&](auto&& f) {
      for (int tid = 0; tid < kThreads; ++tid) f(tid, states[static_cast<std::size_t>(tid)]);
    };
    for (int by = 0; by < divUp(out.height, p.rows); ++by)
      for (int bx = 0; bx < divUp(out.width, kWidth); ++bx) {
        // NaN in every shared cell and register no phase writes: a read of one would show in the
        // results.
        const float nanF = std::nanf("");
        const double nanD = std::nan("");
        for (std::size_t k = 0; k < B::L::inBytes / sizeof(float); ++k)
          std::memcpy(&shared[k * sizeof(float)], &nanF, sizeof nanF);
        for (std::size_t k = B::L::inBytes; k + sizeof(double) <= shared.size(); k += sizeof(double))
          std::memcpy(&shared[k], &nanD, sizeof nanD);
        const B block(in, out, p, shared.data(), bx, by);
        program(block, each, [] {});
      }
  });
}

}  // namespace gpulab::kernels::boxstream
