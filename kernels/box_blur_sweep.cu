// Box blur, sweep path (box_blur.cuh, "Sweep"): one block of kThreads threads per tile of columns
// and segment of rows, kRows output rows a batch.
//
// A batch is two phases between barriers:
//   vertical    each thread owns one or two samples of the tile's extended row (output tile plus
//               the halo, border-mapped): it loads their kRows entering and kRows leaving samples
//               at once, then steps its vertical window sums down the batch (add the entering
//               row, write the sum to shared memory, take the leaving row off). It also stores
//               the last batch's outputs, coalesced, from the output buffer.
//   horizontal  each thread takes runs of outputs of one row and channel and slides the horizontal
//               window along the shared sums: the first output sums 2r+1 of them, each next one
//               adds the sum entering and takes off the one leaving. Results go to the output buffer.
// Every input sample is read from DRAM about once (the rows above a segment and the halo columns
// again, the latter mostly from L2), every output written once, and the cost per output does not
// grow with the radius beyond (2r+1) / runLength shared reads.
//
// f32: sums in double, as on the other paths, so that only the final rounding shows and the result
// does not depend on the tiling (a tiled run, a batch or a planar run of the same image give the same
// bits). A NaN or inf spoils the sums it meets and everything after them in its column or run, never
// an output whose window was finite, so an output that comes out non-finite is recomputed from its
// window (boxWindowMeanExact), as on the other paths. u8, u16: exact unsigned sums.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "box_blur_sweep.cuh"
#include "gpulab/kernels/cuda_check.hpp"

// Unrolled on the GPU; the host emulation compiles the same loops plainly.
#if defined(__CUDA_ARCH__)
#define GPULAB_UNROLL _Pragma("unroll")
#define GPULAB_NO_UNROLL _Pragma("unroll 1")
#else
#define GPULAB_UNROLL
#define GPULAB_NO_UNROLL
#endif

namespace gpulab::kernels::sweep {
namespace {

constexpr int kThreads = 256;
constexpr int kRows = 16;                     // output rows a batch
constexpr int kLoads = 8;                     // samples a thread loads at a time (kLoads / K rows)
constexpr int kMaxCols = 2;                   // extended-row samples a thread at most
constexpr int kExtent = kThreads * kMaxCols;  // samples of an extended row a block holds
constexpr int kMinTile = 32;                  // output pixels a tile keeps beside the halo
constexpr int kMinBlocksPerSm = 4;            // caps the registers at 64 a thread

template <class T>
using SumOf = std::conditional_t<std::is_same_v<T, float>, double, unsigned>;

template <class T>
constexpr int radiusLimit(int channels) {
  const int r = (kExtent / channels - kMinTile) / 2;
  return sizeof(T) == 2 && r > 127 ? 127 : r;  // u16: 65535 x 255^2 < 2^32
}

// Segment rows when GPULAB_BOX_SWEEP_ROWS sets them (a tuning knob for benchmarks; results do not
// depend on it); 0: planned.
int forcedRows() {
  static const int rows = [] {
    const char* text = std::getenv("GPULAB_BOX_SWEEP_ROWS");
    const int v = text != nullptr ? std::atoi(text) : 0;
    return v > 0 ? v : 0;
  }();
  return rows;
}

template <class T>
struct Params {
  int width = 0;  ///< pixels
  int height = 0;
  int radius = 0;
  int tileWidth = 0;  ///< output pixels a block
  int rows = 0;       ///< output rows a block, a multiple of kRows
  int runs = 0;       ///< runs a row and channel of the tile
  int runLength = 0;  ///< output pixels a run
  int tilesX = 0;
  int tilesY = 0;
  int sPitch = 0;  ///< sums a row of the shared buffer: (tileWidth + 2r) x C
  int cols = 1;    ///< extended-row samples a thread: 1 when sPitch <= kThreads, else 2
  BorderMode mode = BorderMode::Reflect101;
  T fill{};
  BoxArea area;

  std::size_t sharedBytes(int channels) const {
    const std::size_t sums = static_cast<std::size_t>(kRows) * sPitch * sizeof(SumOf<T>);
    const std::size_t outs = static_cast<std::size_t>(kRows) * tileWidth * channels * sizeof(T);
    return sums + (outs + 15) / 16 * 16;
  }
};

// boxWindowMeanExact out of line: the kernel calls it only for an output a NaN or inf spoiled, and
// its loops stay out of the kernel's registers.
__host__ __device__ __noinline__ float exactMean(Plane<const float> in, int channels, int x, int c, int y, int radius,
                                                 BorderMode mode, float fill) {
  return boxWindowMeanExact(in, channels, x, c, y, radius, mode, fill);
}

// K: extended-row samples a thread (1 or 2).
template <class T, int C, int K>
struct Block {
  using Sum = SumOf<T>;
  static constexpr int kStep = kLoads / K;  // rows a thread loads at a time
  static constexpr bool kFloat = std::is_same_v<T, float>;

  // A thread's vertical window sums.
  struct State {
    Sum v[K];
    int src[K];  ///< the sample of a row each column reads; -1 outside (Constant)
  };

  Plane<const T> in;
  Plane<T> out;
  Params<T> p;
  Sum* sums;  ///< kRows x p.sPitch
  T* outs;    ///< kRows x tileWidth x C
  int x0 = 0, tile = 0, y0 = 0, y1 = 0, ext = 0;

  GPULAB_HD Block(Plane<const T> in_, Plane<T> out_, const Params<T>& p_, unsigned char* shared, int bx, int by)
      : in(in_), out(out_), p(p_) {
    sums = reinterpret_cast<Sum*>(shared);
    outs = reinterpret_cast<T*>(shared + static_cast<std::size_t>(kRows) * p.sPitch * sizeof(Sum));
    x0 = bx * p.tileWidth;
    tile = p.width - x0 < p.tileWidth ? p.width - x0 : p.tileWidth;
    y0 = by * p.rows;
    y1 = p.height - y0 < p.rows ? p.height : y0 + p.rows;
    ext = (tile + 2 * p.radius) * C;
  }

  GPULAB_HD int batches() const { return (y1 - y0 + kRows - 1) / kRows; }
  GPULAB_HD int batchRows(int batch) const {
    const int left = y1 - y0 - batch * kRows;
    return left < kRows ? left : kRows;
  }

  GPULAB_HD T sample(int y, int src) const {
    const int ym = borderIndex(y, p.height, p.mode);
    return ym < 0 || src < 0 ? p.fill : in.row(ym)[src];
  }

  // The vertical sums of rows y0 - r .. y0 + r - 1 (the window of row y0 but its last row).
  GPULAB_HD void start(int tid, State& s) const {
    for (int k = 0; k < K; ++k) {
      const int j = tid + k * kThreads;
      s.v[k] = Sum(0);
      s.src[k] = -1;
      if (j >= ext) continue;
      const int e = j / C;
      const int xm = borderIndex(x0 - p.radius + e, p.width, p.mode);
      s.src[k] = xm < 0 ? -1 : xm * C + (j - e * C);
      for (int y = y0 - p.radius; y < y0 + p.radius; ++y) s.v[k] += static_cast<Sum>(sample(y, s.src[k]));
    }
  }

  // Column sample `src` of the kStep rows from `row` on, `pitch` bytes apart.
  GPULAB_HD static void loadRows(const T* row, std::size_t pitch, int src, T (&v)[kStep]) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(row + src);
    GPULAB_UNROLL
    for (int b = 0; b < kStep; ++b) v[b] = *reinterpret_cast<const T*>(bytes + b * pitch);
  }

  // Batch `batch`: the vertical sums of its rows into the shared buffer.
  GPULAB_HD void vertical(int tid, int batch, State& s) const {
    const int yb = y0 + batch * kRows;
    const int n = batchRows(batch);
    // A whole batch whose entering and leaving rows are all inside the image (block-uniform): the
    // rows are consecutive, no border mapping; kStep rows of loads in flight at a time.
    const bool inside = n == kRows && yb - p.radius >= 0 && yb + kRows - 1 + p.radius < p.height;
    if (inside) {
      GPULAB_UNROLL
      for (int h = 0; h < kRows; h += kStep) {
        T enter[K][kStep], leave[K][kStep];  // every column's loads in flight together
        GPULAB_UNROLL
        for (int k = 0; k < K; ++k) {
          if (tid + k * kThreads >= ext) continue;
          if (s.src[k] < 0) {  // Constant, a column outside the image: every sample is the fill
            for (int b = 0; b < kStep; ++b) enter[k][b] = leave[k][b] = p.fill;
            continue;
          }
          loadRows(in.row(yb + h + p.radius), in.pitch, s.src[k], enter[k]);
          loadRows(in.row(yb + h - p.radius), in.pitch, s.src[k], leave[k]);
        }
        GPULAB_UNROLL
        for (int k = 0; k < K; ++k) {
          const int j = tid + k * kThreads;
          if (j >= ext) continue;
          GPULAB_UNROLL
          for (int b = 0; b < kStep; ++b) {
            s.v[k] += static_cast<Sum>(enter[k][b]);
            sums[(h + b) * p.sPitch + j] = s.v[k];
            s.v[k] -= static_cast<Sum>(leave[k][b]);
          }
        }
      }
      return;
    }
    GPULAB_UNROLL
    for (int k = 0; k < K; ++k) {
      const int j = tid + k * kThreads;
      if (j >= ext) continue;
      // Near the image's top or bottom (a few batches): rows border-mapped one at a time, in a loop
      // kept rolled so that the border arithmetic stays out of the instruction cache's way.
      GPULAB_NO_UNROLL
      for (int b = 0; b < n; ++b) {
        const T enter = sample(yb + b + p.radius, s.src[k]);
        const T leave = sample(yb + b - p.radius, s.src[k]);
        s.v[k] += static_cast<Sum>(enter);
        sums[b * p.sPitch + j] = s.v[k];
        s.v[k] -= static_cast<Sum>(leave);
      }
    }
  }

  GPULAB_HD T finish(Sum h) const {
    if constexpr (kFloat)
      return static_cast<float>(h * p.area.inv);
    else
      return boxRoundedMean<T>(h, p.area.count, p.area.invF, p.area.inv);
  }

  // Batch `batch`: the horizontal windows over the shared sums into the output buffer.
  GPULAB_HD void horizontal(int tid, int batch) const {
    const int yb = y0 + batch * kRows;
    const int items = batchRows(batch) * C * p.runs;
    const int span = 2 * p.radius;
    for (int item = tid; item < items; item += kThreads) {
      const int run = item % p.runs;
      const int rest = item / p.runs;
      const int c = rest % C;
      const int b = rest / C;
      const int xs = run * p.runLength;
      if (xs >= tile) continue;
      const int xe = xs + p.runLength < tile ? xs + p.runLength : tile;
      const Sum* row = sums + b * p.sPitch + c;  // extended pixel e of channel c at row[e * C]
      T* dst = outs + b * p.tileWidth * C + c;
      Sum h = 0;
      for (int e = xs; e <= xs + span; ++e) h += row[e * C];
      dst[xs * C] = finish(h);
      for (int x = xs + 1; x < xe; ++x) {
        h += row[(x + span) * C];
        h -= row[(x - 1) * C];
        dst[x * C] = finish(h);
      }
      if constexpr (kFloat) {
        // A NaN or inf, once in h, stays (inf - inf is NaN): a finite h at the end of the run means
        // every output of it was finite (finite floats cannot overflow a double sum). Otherwise those
        // that are not get their window's exact mean.
        if (boxFinite(h)) continue;
        for (int x = xs; x < xe; ++x)
          if (!boxFinite(dst[x * C])) dst[x * C] = exactMean(in, C, x0 + x, c, yb + b, p.radius, p.mode, p.fill);
      }
    }
  }

  // Batch `batch`'s outputs from the output buffer to `out`, consecutive threads on consecutive samples.
  GPULAB_HD void store(int tid, int batch) const {
    const int yb = y0 + batch * kRows;
    const int w = tile * C;
    const int n = batchRows(batch);
    for (int b = 0; b < n; ++b) {
      T* dst = out.row(yb + b) + x0 * C;
      const T* src = outs + b * p.tileWidth * C;
      for (int x = tid; x < w; x += kThreads) dst[x] = src[x];
    }
  }
};

template <class T, int C, int K>
__global__ void __launch_bounds__(kThreads, std::is_same_v<T, float> ? 3 : kMinBlocksPerSm)
    boxSweepKernel(Plane<const T> in, Plane<T> out, Params<T> p) {
  extern __shared__ __align__(16) unsigned char shared[];
  using B = Block<T, C, K>;
  const B block(in, out, p, shared, blockIdx.x, blockIdx.y);
  const int tid = threadIdx.x;
  typename B::State state;
  block.start(tid, state);
  const int batches = block.batches();
  for (int batch = 0; batch < batches; ++batch) {
    if (batch > 0) block.store(tid, batch - 1);  // read before the barrier that lets horizontal rewrite it
    block.vertical(tid, batch, state);
    __syncthreads();
    block.horizontal(tid, batch);
    __syncthreads();  // the sums are read; the outputs are written
  }
  block.store(tid, batches - 1);
}

// Tiles as wide as keeps the extended row within one sample a thread while the halo is at most half
// the tile (tile >= 4r), else within two; balanced across the width. Segments long enough that the 2r rows each
// re-reads above it stay under half its rows, short enough for about two waves of blocks.
template <class T, int C>
Params<T> plan(int width, int height, int radius, BorderMode mode, T fill, int residentBlocks) {
  Params<T> p;
  p.width = width;
  p.height = height;
  p.radius = radius;
  int tw = kThreads / C - 2 * radius;
  if (tw < 4 * radius || tw < kMinTile) tw = kExtent / C - 2 * radius;
  p.tilesX = divUp(width, tw);
  p.tileWidth = divUp(width, p.tilesX);
  p.tilesX = divUp(width, p.tileWidth);
  const int segments = std::max(1, divUp(2 * residentBlocks, p.tilesX));
  int rows = std::max({divUp(height, segments), 4 * radius, kRows});
  if (forcedRows() > 0) rows = forcedRows();
  rows = std::min(divUp(rows, kRows), divUp(height, kRows)) * kRows;
  p.rows = rows;
  p.tilesY = divUp(height, rows);
  // Runs: about one per thread in the horizontal phase, of an odd length (no shared bank conflicts
  // between neighbouring runs on one channel).
  const int runsWanted = std::max(1, kThreads / (kRows * C));
  p.runLength = divUp(p.tileWidth, runsWanted) | 1;
  p.runs = divUp(p.tileWidth, p.runLength);
  p.sPitch = (p.tileWidth + 2 * radius) * C;
  p.cols = p.sPitch <= kThreads ? 1 : 2;
  p.mode = mode;
  p.fill = fill;
  p.area = boxAreaOf(radius);
  return p;
}

template <class T, int C>
void launchChannels(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T fill, cudaStream_t stream) {
  int device = 0, sms = 0, perSm = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // The tiles (and so the buffers and the kernel) do not depend on the occupancy, the segments do.
  Params<T> p = plan<T, C>(in.width, in.height, radius, mode, fill, 1);
  auto kernel = p.cols == 1 ? boxSweepKernel<T, C, 1> : boxSweepKernel<T, C, 2>;
  const int bytes = static_cast<int>(p.sharedBytes(C));
  if (bytes > 48 * 1024)
    GPULAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, bytes));
  p = plan<T, C>(in.width, in.height, radius, mode, fill, std::max(1, perSm) * sms);
  kernel<<<dim3(p.tilesX, p.tilesY), kThreads, p.sharedBytes(C), stream>>>(in, out, p);
  GPULAB_CHECK_LAUNCH("boxSweepKernel");
}

template <class T, int C, int K>
void emulateBlocks(const Params<T>& p, Plane<const T> in, Plane<T> out) {
  using B = Block<T, C, K>;
  std::vector<unsigned char> shared(p.sharedBytes(C));
  std::vector<typename B::State> states(kThreads);
  for (int by = 0; by < p.tilesY; ++by)
    for (int bx = 0; bx < p.tilesX; ++bx) {
      std::fill(shared.begin(), shared.end(), static_cast<unsigned char>(0xA5));  // a read before a write shows
      const B block(in, out, p, shared.data(), bx, by);
      for (int tid = 0; tid < kThreads; ++tid) block.start(tid, states[tid]);
      const int batches = block.batches();
      for (int batch = 0; batch < batches; ++batch) {
        for (int tid = 0; tid < kThreads; ++tid) {
          if (batch > 0) block.store(tid, batch - 1);
          block.vertical(tid, batch, states[tid]);
        }
        for (int tid = 0; tid < kThreads; ++tid) block.horizontal(tid, batch);
      }
      for (int tid = 0; tid < kThreads; ++tid) block.store(tid, batches - 1);
    }
}

template <class T, int C>
void emulateChannels(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T fill, int residentBlocks) {
  const Params<T> p = plan<T, C>(in.width, in.height, radius, mode, fill, residentBlocks);
  if (p.cols == 1)
    emulateBlocks<T, C, 1>(p, in, out);
  else
    emulateBlocks<T, C, 2>(p, in, out);
}

template <class F>
void withChannels(int channels, F&& f) {
  switch (channels) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    default:
      return f(std::integral_constant<int, 4>{});
  }
}

}  // namespace

template <class T>
int maxRadius(int channels) {
  return radiusLimit<T>(channels);
}

template <class T>
void launch(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, cudaStream_t stream) {
  withChannels(channels, [&](auto c) { launchChannels<T, decltype(c)::value>(in, out, radius, mode, fill, stream); });
}

template <class T>
void emulate(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, int residentBlocks) {
  withChannels(channels,
               [&](auto c) { emulateChannels<T, decltype(c)::value>(in, out, radius, mode, fill, residentBlocks); });
}

#define GPULAB_INSTANTIATE(T)                                                               \
  template int maxRadius<T>(int);                                                           \
  template void launch<T>(Plane<const T>, Plane<T>, int, int, BorderMode, T, cudaStream_t); \
  template void emulate<T>(Plane<const T>, Plane<T>, int, int, BorderMode, T, int);
GPULAB_INSTANTIATE(std::uint8_t)
GPULAB_INSTANTIATE(std::uint16_t)
GPULAB_INSTANTIATE(float)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab::kernels::sweep
