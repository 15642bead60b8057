// Box blur, sweep path (box_blur.cuh, "Sweep"), word kernel: one block of kThreads threads per tile
// of columns and segment of rows, kRows output rows a batch. (f32 planes up to radius 15 take the
// stream kernel, box_blur_stream.cu, unless GPULAB_BOX_SWEEP_KERNEL=words.)
//
// A thread owns one or two words of the tile's extended row (output tile plus the halo): 4 aligned
// bytes of it, so 1 f32, 2 u16 or 4 u8 samples, loaded with one instruction a row. A batch is two
// phases between barriers:
//   vertical    each thread steps the vertical window sums of its words' samples down the batch
//               (add the entering row, write the sums to shared memory, take the leaving row off).
//               With one word a thread, the batch's rows were loaded during the previous batch's
//               horizontal phase (interleaved u8: entering and leaving; the others, which have no
//               registers for more: entering, the leaving ones, mostly L2 hits, loaded here); with
//               two, kLoads rows at a time. It also stores the last batch's outputs from the output
//               buffer: a warp a row, 16 bytes a lane.
//   horizontal  each thread takes a run of outputs of one row and channel (the same in every batch:
//               a row's 16 slots hold its runs, so a warp covers two rows) and slides the horizontal
//               window along the shared sums: the first output sums 2r+1 of them, each next one
//               adds the sum entering less the one leaving (one addition on the running sum's
//               chain), the reads of kChunk outputs issued together. Results go to the output buffer.
// The halo beyond the image's left and right edges costs no loads: a column's vertical sums do not
// depend on where the column stands, so between the two phases each halo sample takes the sums of the
// column the border maps it to (copyHalo, a third phase in the blocks that have a halo). Words that
// straddle the image's right edge gather their in-image samples one at a time through a per-block
// map, and so do halo samples in Constant mode (the fill) or mapped outside the block's extended row
// (Wrap, when the image is wider than a tile).
// The run length and the pitches of the shared buffers are chosen so that a warp's horizontal reads
// and writes spread over the banks (every warp alike). Every input sample is read from DRAM about
// once (the rows above a segment again, and the columns beside a tile, which its neighbours share,
// mostly from L2), every output written once, and the cost per output does not grow with the radius
// beyond (2r+1) / runLength shared reads.
//
// Sums: f32 in double, as on the other paths, so that only the final rounding shows and the result
// does not depend on the tiling (a tiled run, a batch or a planar run of the same image give the same
// bits). A NaN or inf spoils the sums it meets and everything after them in its column or run, never
// an output whose window was finite, so an output that comes out non-finite is recomputed from its
// window (boxWindowMeanExact), as on the other paths. u16: exact unsigned sums. u8 up to radius 127:
// the four samples of a word in two registers of two 16-bit lanes each ((2r+1) x 255 < 2^16), added
// and taken off with one instruction a lane pair; beyond, one register a sample. u8 means round
// with a multiply and a shift (BoxDivide), u16 ones with boxRoundedMean: both exact.
//
// Measured on an H100 (2026-11-27, session 13, copy ceiling 2976-2978 GB/s), as the bench names its
// rows (`boxK`, window K = 2r + 1): f32 4096^2 box7 (r=3) 0.070 ms, box15 (r=7) 0.080, box31 (r=15)
// 0.099 (session 11's sweep: 0.075, 0.081, 0.116); the 6000x4000 RGB u8 photo row (r=15) 0.134
// (0.150), the photo-u16 row 0.217 (0.212). Nsight Compute, session 11's sweep at r=15: 38 M warp
// instructions, 30% of DRAM bandwidth; every horizontal shared read 2-way bank conflicted (the
// pitches suited the first warp only), an integer division a thread a batch (8.7% of the
// instructions). Now 28-33 M instructions; the largest stalls are the loads (long scoreboard), the
// fixed-latency double additions and the barriers, about a fifth each. Session 16 (2026-11-28): the
// u8 mean one IMAD.HI (it was a 64-bit product and shift), the partial chunk predicated, the odd
// bytes permuted to their lanes: the photo row 0.126 ms (0.137), 46.8 M warp instructions (57.2 M);
// 28% of the stall samples wait at the barrier after the vertical phase. Session 17: one wave of
// blocks, each an equal share of the batches, took 13% fewer instructions but 0.194 ms, the blocks
// of the first and last tiles and of the tiles' tops setting the wave's end (README). Session 18
// (2026-11-28): the edge tiles' blocks took 60 us against 16 (their halo gathered a sample at a time,
// a wait for memory a row), so the kernel's last 30 us ran on a few SMs; with the halo copied and
// the longest blocks started first (blockAt) the photo row is 0.089 ms.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "box_blur_sweep.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"

namespace gpulab::kernels::sweep {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRows = 16;        // output rows a batch
constexpr int kLoads = 8;        // rows of a word a thread loads at a time (entering and leaving)
constexpr int kStartLoads = 16;  // rows of a word a thread loads at a time above its segment
constexpr int kMaxWords = 2;     // words of the extended row a thread at most
constexpr int kMinTile = 32;     // output pixels a tile keeps beside the halo
constexpr int kWaves = 4;        // blocks planned: this many times as many as the GPU holds at once
constexpr int kLargestRadius = 240;
constexpr int kPackedRadius = 127;  // u8: 16-bit lanes hold (2r+1) x 255 up to here
constexpr int kUnused = -2;         // a gathered sample outside the extended row
// A halo sample whose column the border maps into the extended row: map entry kCopied - s, s the
// extended-row sample whose vertical sums it takes (copyHalo); gathered as a zero.
constexpr int kCopied = -3;
constexpr int kSkipped = -1;  // State::offset of a word with nothing to load (skipped)
// Horizontal phase: a thread per (row of the batch, slot); a row's slots hold its runs, channel by
// channel, so that a warp covers two rows alike and every warp meets the banks as the first does.
constexpr int kSlots = 16;
static_assert(kRows * kSlots == kThreads, "a thread per row and slot");

template <class T>
constexpr int samplesPerWord() {
  return 4 / static_cast<int>(sizeof(T));
}

template <class T>
constexpr int radiusLimit(int channels) {
  constexpr int q = samplesPerWord<T>();
  const int extent = (kMaxWords * kThreads * q - 2 * (q - 1)) / channels;  // pixels, whatever the word phase
  const int r = std::min((extent - kMinTile) / 2, kLargestRadius);
  return sizeof(T) == 2 && r > 127 ? 127 : r;  // u16: 65535 x 255^2 < 2^32
}

// Pack<T, Wide>: a word of Q samples and the vertical sums of its samples, in registers (Acc) and in
// shared memory (Sum, one a sample); H is a horizontal sum. The samples of a word are its bytes in
// order (little-endian, host and GPU).
template <class T, bool Wide>
struct Pack;

template <>
struct Pack<float, false> {
  static constexpr int Q = 1;
  using Word = float;
  using Sum = double;
  using H = double;
  struct Acc {
    double v = 0;
  };
  GPULAB_HD static Word join(const float* s) { return s[0]; }
  GPULAB_HD static void add(Acc& a, Word w) { a.v += static_cast<double>(w); }
  GPULAB_HD static void sub(Acc& a, Word w) { a.v -= static_cast<double>(w); }
  GPULAB_HD static void put(Sum* d, const Acc& a) { d[0] = a.v; }
};

template <>
struct Pack<std::uint16_t, false> {
  static constexpr int Q = 2;
  using Word = unsigned;
  using Sum = unsigned;
  using H = unsigned;
  struct Acc {
    unsigned v[2] = {0, 0};
  };
  GPULAB_HD static Word join(const std::uint16_t* s) { return s[0] | static_cast<unsigned>(s[1]) << 16; }
  GPULAB_HD static void add(Acc& a, Word w) {
    a.v[0] += w & 0xFFFFu;
    a.v[1] += w >> 16;
  }
  GPULAB_HD static void sub(Acc& a, Word w) {
    a.v[0] -= w & 0xFFFFu;
    a.v[1] -= w >> 16;
  }
  GPULAB_HD static void put(Sum* d, const Acc& a) { *reinterpret_cast<uint2*>(d) = make_uint2(a.v[0], a.v[1]); }
};

/// Bytes of the 8-byte value b:a, as __byte_perm picks them (selector nibbles 0..7, byte 0 first).
GPULAB_HD std::uint32_t bytePerm(std::uint32_t a, std::uint32_t b, unsigned selector) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, selector);
#else
  const std::uint64_t x = static_cast<std::uint64_t>(b) << 32 | a;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<std::uint32_t>(x >> (8 * ((selector >> (4 * i)) & 7)) & 0xFFu) << (8 * i);
  return r;
#endif
}

// u8 up to kPackedRadius: samples 0 and 2 in the 16-bit lanes of `even`, 1 and 3 in those of `odd`.
// A lane's running sum stays in [0, (2r+1) x 255], so no carry or borrow crosses into the next. A
// word's odd bytes come to their lanes with one byte permute, and the lanes go back to sample order
// with two.
template <>
struct Pack<std::uint8_t, false> {
  static constexpr int Q = 4;
  using Word = unsigned;
  using Sum = std::uint16_t;
  using H = unsigned;
  struct Acc {
    unsigned even = 0, odd = 0;
  };
  GPULAB_HD static Word join(const std::uint8_t* s) {
    return s[0] | static_cast<unsigned>(s[1]) << 8 | static_cast<unsigned>(s[2]) << 16 |
           static_cast<unsigned>(s[3]) << 24;
  }
  GPULAB_HD static unsigned odds(Word w) { return bytePerm(w, 0, 0x4341); }  // bytes 1 and 3, zero-extended
  GPULAB_HD static void add(Acc& a, Word w) {
    a.even += w & 0x00FF00FFu;
    a.odd += odds(w);
  }
  GPULAB_HD static void sub(Acc& a, Word w) {
    a.even -= w & 0x00FF00FFu;
    a.odd -= odds(w);
  }
  GPULAB_HD static void put(Sum* d, const Acc& a) {
    *reinterpret_cast<uint2*>(d) = make_uint2(bytePerm(a.even, a.odd, 0x5410), bytePerm(a.even, a.odd, 0x7632));
  }
};

// u8 beyond kPackedRadius: a register a sample.
template <>
struct Pack<std::uint8_t, true> {
  static constexpr int Q = 4;
  using Word = unsigned;
  using Sum = unsigned;
  using H = unsigned;
  struct Acc {
    unsigned v[4] = {0, 0, 0, 0};
  };
  GPULAB_HD static Word join(const std::uint8_t* s) { return Pack<std::uint8_t, false>::join(s); }
  GPULAB_HD static void add(Acc& a, Word w) {
    for (int q = 0; q < 4; ++q) a.v[q] += (w >> (8 * q)) & 0xFFu;
  }
  GPULAB_HD static void sub(Acc& a, Word w) {
    for (int q = 0; q < 4; ++q) a.v[q] -= (w >> (8 * q)) & 0xFFu;
  }
  GPULAB_HD static void put(Sum* d, const Acc& a) {
    *reinterpret_cast<uint4*>(d) = make_uint4(a.v[0], a.v[1], a.v[2], a.v[3]);
  }
};

// Segment rows when GPULAB_BOX_SWEEP_ROWS sets them (a tuning knob for benchmarks; results do not
// depend on it); 0: planned.
int forcedRows() {
  static const int rows = tuningRows("GPULAB_BOX_SWEEP_ROWS");
  return rows;
}

template <class T>
struct Params {
  int width = 0;  ///< pixels
  int height = 0;
  int radius = 0;
  int channels = 1;
  int tileWidth = 0;  ///< output pixels a block: whole 16-byte units of a row
  int rows = 0;       ///< output rows a block, a multiple of kRows
  int runs = 0;       ///< runs a row and channel of the tile
  int runLength = 0;  ///< output pixels a run
  int perRuns = 0;    ///< ceil(2^16 / runs): slot * perRuns >> 16 is slot / runs for every slot
  int tilesX = 0;
  int tilesY = 0;
  int words = 0;             ///< words of the extended row a block holds at most: 1 or 2 a thread
  int sumPitch = 0;          ///< sums a row of the shared sums: words x Q, padded against bank conflicts
  int outPitch = 0;          ///< samples a row of the output buffer: tileWidth x C, padded likewise
  int phase = 0;             ///< samples from a word boundary to the input's first sample
  bool wordLoads = true;     ///< input rows hold whole aligned words (pitch a multiple of 4)
  bool vectorStores = true;  ///< output rows take 16-byte stores at every tile's start
  bool wide = false;         ///< u8 beyond kPackedRadius
  BorderMode mode = BorderMode::Reflect101;
  T fill{};
  BoxArea area;
  BoxDivide divide;  ///< u8: floor(n / area) for n up to 255 x area + area / 2

  GPULAB_HD int perThread() const { return words <= kThreads ? 1 : 2; }
  int sumBytes() const { return sizeof(T) == 4 ? 8 : (sizeof(T) == 1 && !wide ? 2 : 4); }

  std::size_t sharedBytes() const {
    const std::size_t sums = static_cast<std::size_t>(kRows) * sumPitch * sumBytes();
    const std::size_t outs = static_cast<std::size_t>(kRows) * outPitch * sizeof(T);
    const std::size_t map = static_cast<std::size_t>(words) * samplesPerWord<T>() * sizeof(int);
    return sums + outs + map;  // each a multiple of 16 bytes
  }
};

// boxWindowMeanExact out of line: the kernel calls it only for an output a NaN or inf spoiled, and
// its loops stay out of the kernel's registers.
__host__ __device__ __noinline__ float exactMean(Plane<const float> in, int channels, int x, int c, int y, int radius,
                                                 BorderMode mode, float fill) {
  return boxWindowMeanExact(in, channels, x, c, y, radius, mode, fill);
}

// K: words a thread (1 or 2).
template <class T, int C, int K, bool Wide>
struct Block {
  using P = Pack<T, Wide>;
  using Word = typename P::Word;
  using Sum = typename P::Sum;
  using H = typename P::H;
  static constexpr int Q = P::Q;
  static constexpr bool kFloat = std::is_same_v<T, float>;
  // Rows loaded ahead (K == 1): f32, u16 and single-channel u8 take only the entering ones, which
  // come from DRAM, and load the leaving ones (mostly L2 hits) in their vertical phase: with both,
  // their horizontal phase spills at 80 registers (f32's double sums, u16's rounded means; u8 gray
  // measured alike on an H100 either way, 0.042-0.060 ms at 4096^2, r=3..15). Interleaved u8 takes
  // both.
  static constexpr int kAhead = kFloat || sizeof(T) == 2 || C == 1 ? kRows : 2 * kRows;
  static constexpr int kChunk = kFloat || sizeof(T) == 2 ? 4 : 8;  // horizontal outputs whose reads go out together
  // A run's last kChunk - 1 outputs at most (and the first window's last sums) as 2 and 1 (f32,
  // u16), or u8's as one predicated chunk.
  static constexpr bool kSplitTail = kChunk == 4;

  // A thread's words: their vertical window sums, and where they are in a row.
  struct State {
    typename P::Acc acc[K];
    int offset[K];   ///< bytes from a row's start to the word (direct words); kSkipped
    bool direct[K];  ///< whole, inside the row: one load a row; else gathered through the map
    /// K == 1: the next batch's entering rows (then, for interleaved u8, its leaving rows), loaded ahead
    /// (a direct word of a batch inside the image) while this batch's horizontal phase runs.
    Word ahead[K == 1 ? kAhead : 1];
  };

  Plane<const T> in;
  Plane<T> out;
  Params<T> p;
  Sum* sums;  ///< kRows x p.sumPitch
  T* outs;    ///< kRows x p.outPitch
  int* map;   ///< p.words x Q: a gathered sample's index in a row, -1 for the fill, kUnused, kCopied - s
  int x0 = 0, tile = 0, y0 = 0, y1 = 0, ext = 0;
  int first = 0;                    ///< the block's first word, in words from the row's start (negative left of it)
  int lead = 0;                     ///< slot of the extended row's first sample in a shared row
  int words = 0;                    ///< words the block's extended row spans
  int haloLeft = 0, haloRight = 0;  ///< samples of the extended row left of the image, right of it
  bool copies = false;              ///< halo samples take the sums of the columns the border maps them to
  Word fillWord{};

  GPULAB_HD Block(Plane<const T> in_, Plane<T> out_, const Params<T>& p_, unsigned char* shared, int bx, int by)
      : in(in_), out(out_), p(p_) {
    sums = reinterpret_cast<Sum*>(shared);
    outs = reinterpret_cast<T*>(shared + static_cast<std::size_t>(kRows) * p.sumPitch * sizeof(Sum));
    map = reinterpret_cast<int*>(reinterpret_cast<unsigned char*>(outs) +
                                 static_cast<std::size_t>(kRows) * p.outPitch * sizeof(T));
    x0 = bx * p.tileWidth;
    tile = p.width - x0 < p.tileWidth ? p.width - x0 : p.tileWidth;
    y0 = by * p.rows;
    y1 = p.height - y0 < p.rows ? p.height : y0 + p.rows;
    ext = (tile + 2 * p.radius) * C;
    const int start = (x0 - p.radius) * C + p.phase;  // the extended row's first sample on the word grid
    first = floorDivide(start, Q);
    lead = start - first * Q;
    words = (lead + ext + Q - 1) / Q;
    haloLeft = (p.radius > x0 ? p.radius - x0 : 0) * C;
    haloRight = (x0 + tile + p.radius > p.width ? x0 + tile + p.radius - p.width : 0) * C;
    copies = p.mode != BorderMode::Constant && haloLeft + haloRight > 0;
    T fills[Q];
    for (int q = 0; q < Q; ++q) fills[q] = p.fill;
    fillWord = P::join(fills);
  }

  GPULAB_HD int batches() const { return (y1 - y0 + kRows - 1) / kRows; }
  GPULAB_HD int batchRows(int batch) const {
    const int left = y1 - y0 - batch * kRows;
    return left < kRows ? left : kRows;
  }

  GPULAB_HD const T* rowOf(int y) const {  // border-mapped; nullptr: the fill (Constant)
    const int ym = borderIndex(y, p.height, p.mode);
    return ym < 0 ? nullptr : in.row(ym);
  }

  GPULAB_HD static Word load(const unsigned char* at) { return *reinterpret_cast<const Word*>(at); }

  // Word j of the block's extended row from `row` (nullptr: a row of fill), sample by sample.
  GPULAB_HD Word gather(const T* row, int j) const {
    T s[Q];
    for (int q = 0; q < Q; ++q) {
      const int m = map[j * Q + q];
      s[q] = m <= kUnused ? T(0) : (m < 0 || row == nullptr ? p.fill : row[m]);
    }
    return P::join(s);
  }

  GPULAB_HD Word wordOf(const State& s, int k, int j, const T* row) const {
    if (!s.direct[k]) return gather(row, j);
    return row == nullptr ? fillWord : load(reinterpret_cast<const unsigned char*>(row) + s.offset[k]);
  }

  // Where the thread's words are, and their vertical sums of rows y0 - r .. y0 + r - 1 (the window
  // of row y0 but its last row).
  GPULAB_HD void start(int tid, State& s) const {
    const int ys = y0 - p.radius, ye = y0 + p.radius;
    GPULAB_UNROLL
    for (int k = 0; k < K; ++k) {
      const int j = tid + k * kThreads;
      s.acc[k] = {};
      s.offset[k] = 0;
      s.direct[k] = false;
      if (j >= words) continue;
      const int g = (first + j) * Q - p.phase;  // the word's first sample in a row
      s.direct[k] = p.wordLoads && g >= 0 && g + Q <= p.width * C;
      s.offset[k] = s.direct[k] ? g * static_cast<int>(sizeof(T)) : 0;
      if (!s.direct[k]) {
        bool gathers = false;
        for (int q = 0; q < Q; ++q) {
          const int e = j * Q + q - lead;  // sample of the extended row
          int m = kUnused;
          if (e >= 0 && e < ext) {
            const int x = floorDivide(g + q, C);
            const int xm = borderIndex(x, p.width, p.mode);
            const int source = e + (xm - x) * C;  // the sample the border maps it to, in the extended row
            if (copies && xm != x && source >= 0 && source < ext)
              m = kCopied - source;
            else
              m = xm < 0 ? -1 : xm * C + (g + q - x * C);
          }
          map[j * Q + q] = m;
          gathers = gathers || m > kUnused;
        }
        if (!gathers) s.offset[k] = kSkipped;  // its sums are copied (copyHalo) or never read
      }
      if (skipped(s, k)) continue;
      if (s.direct[k] && ys >= 0 && ye <= p.height) {
        // kStartLoads rows at a time, the last group cut short by predicated loads (a row past the
        // window adds a zero word): one wait for memory a group, none a row.
        const auto* at = reinterpret_cast<const unsigned char*>(in.row(ys)) + s.offset[k];
        GPULAB_NO_UNROLL
        for (int left = ye - ys; left > 0; left -= kStartLoads) {
          Word v[kStartLoads];
          GPULAB_UNROLL
          for (int b = 0; b < kStartLoads; ++b, at += in.pitch) v[b] = b < left ? load(at) : Word{};
          GPULAB_UNROLL
          for (int b = 0; b < kStartLoads; ++b) P::add(s.acc[k], v[b]);
        }
        continue;
      }
      // Rows the border maps (a segment at the image's top or bottom) or a gathered word: the same
      // groups.
      GPULAB_NO_UNROLL
      for (int y = ys; y < ye; y += kStartLoads) {
        Word v[kStartLoads];
        GPULAB_UNROLL
        for (int b = 0; b < kStartLoads; ++b) v[b] = y + b < ye ? wordOf(s, k, j, rowOf(y + b)) : Word{};
        GPULAB_UNROLL
        for (int b = 0; b < kStartLoads; ++b) P::add(s.acc[k], v[b]);
      }
    }
  }

  // A word whose samples are all copied halo or outside the extended row: nothing to load or sum.
  GPULAB_HD static bool skipped(const State& s, int k) { return s.offset[k] == kSkipped; }

  // Batch `batch`, between the vertical and horizontal phases (barriers on both sides): the halo
  // samples the border maps into the extended row take the vertical sums of the samples they map to.
  // A column's vertical sums do not depend on where the column is, so the halo beside an image's
  // left and right edges costs no loads (all modes but Constant).
  GPULAB_HD void copyHalo(int tid, int batch) const {
    const int n = batchRows(batch), count = haloLeft + haloRight;
    for (int i = tid; i < n * count; i += kThreads) {
      const int b = i / count, h = i - b * count;
      const int e = h < haloLeft ? h : ext - haloRight + (h - haloLeft);
      const int m = map[lead + e];
      if (m <= kCopied) {
        Sum* row = sums + b * p.sumPitch + lead;
        row[e] = row[kCopied - m];
      }
    }
  }

  // Whether batch `batch` is whole and its entering and leaving rows all inside the image
  // (block-uniform): its rows are consecutive, with no border mapping.
  GPULAB_HD bool inside(int batch) const {
    const int yb = y0 + batch * kRows;
    return batch < batches() && batchRows(batch) == kRows && yb - p.radius >= 0 && yb + kRows - 1 + p.radius < p.height;
  }

  // K == 1: the loads of batch `batch` for a direct word, when the batch is inside the image.
  GPULAB_HD void loadAhead(int tid, int batch, State& s) const {
    if constexpr (K == 1) {
      if (tid >= words || !s.direct[0] || !inside(batch)) return;
      const int yb = y0 + batch * kRows;
      const auto* base = reinterpret_cast<const unsigned char*>(in.data) + s.offset[0];
      const auto* e = base + static_cast<std::size_t>(yb + p.radius) * in.pitch;
      const auto* l = base + static_cast<std::size_t>(yb - p.radius) * in.pitch;
      GPULAB_UNROLL
      for (int b = 0; b < kRows; ++b) {
        s.ahead[b] = load(e + b * in.pitch);
        if constexpr (kAhead == 2 * kRows) s.ahead[kRows + b] = load(l + b * in.pitch);
      }
    }
  }

  // Batch `batch`: the vertical sums of its rows into the shared buffer. Inside the image, K == 1
  // takes its direct word's rows from those loaded ahead; K == 2 loads kLoads rows of a word at a
  // time.
  GPULAB_HD void vertical(int tid, int batch, State& s) const {
    const int yb = y0 + batch * kRows;
    const int n = batchRows(batch);
    if constexpr (K == 1) {
      if (inside(batch)) {
        const int j = tid;
        if (j >= words) return;
        if (s.direct[0]) {  // loaded ahead
          if constexpr (kAhead == 2 * kRows) {
            GPULAB_UNROLL
            for (int b = 0; b < kRows; ++b) step(s.acc[0], s.ahead[b], s.ahead[kRows + b], b, j);
          } else {
            const auto* l = reinterpret_cast<const unsigned char*>(in.row(yb - p.radius)) + s.offset[0];
            Word leave[kRows];
            GPULAB_UNROLL
            for (int b = 0; b < kRows; ++b) leave[b] = load(l + b * in.pitch);
            GPULAB_UNROLL
            for (int b = 0; b < kRows; ++b) step(s.acc[0], s.ahead[b], leave[b], b, j);
          }
          return;
        }
        if (skipped(s, 0)) return;
        GPULAB_NO_UNROLL
        for (int b = 0; b < kRows; ++b)  // a word the border maps or the image's right edge cuts
          step(s.acc[0], gather(in.row(yb + b + p.radius), j), gather(in.row(yb + b - p.radius), j), b, j);
        return;
      }
    }
    if (inside(batch)) {
      GPULAB_UNROLL
      for (int h = 0; h < kRows; h += kLoads) {
        GPULAB_UNROLL
        for (int k = 0; k < K; ++k) {
          const int j = tid + k * kThreads;
          if (j >= words || skipped(s, k)) continue;
          // A word the border maps or the image's right edge cuts: 4 rows at a time, their loads
          // issued together (one wait for memory, not four).
          if (!s.direct[k]) {
            GPULAB_UNROLL
            for (int g = 0; g < kLoads; g += 4) {
              Word enter[4], leave[4];
              GPULAB_UNROLL
              for (int b = 0; b < 4; ++b) {
                enter[b] = gather(in.row(yb + h + g + b + p.radius), j);
                leave[b] = gather(in.row(yb + h + g + b - p.radius), j);
              }
              GPULAB_UNROLL
              for (int b = 0; b < 4; ++b) step(s.acc[k], enter[b], leave[b], h + g + b, j);
            }
            continue;
          }
          const auto* base = reinterpret_cast<const unsigned char*>(in.data) + s.offset[k];
          const auto* e = base + static_cast<std::size_t>(yb + h + p.radius) * in.pitch;
          const auto* l = base + static_cast<std::size_t>(yb + h - p.radius) * in.pitch;
          Word enter[kLoads], leave[kLoads];  // all in flight together
          GPULAB_UNROLL
          for (int b = 0; b < kLoads; ++b) {
            enter[b] = load(e + b * in.pitch);
            leave[b] = load(l + b * in.pitch);
          }
          GPULAB_UNROLL
          for (int b = 0; b < kLoads; ++b) step(s.acc[k], enter[b], leave[b], h + b, j);
        }
      }
      return;
    }
    GPULAB_UNROLL
    for (int k = 0; k < K; ++k) {
      const int j = tid + k * kThreads;
      if (j >= words || skipped(s, k)) continue;
      // Near the image's top or bottom (a few batches): rows border-mapped one at a time, in a loop
      // kept rolled so that the border arithmetic stays out of the instruction cache's way.
      GPULAB_NO_UNROLL
      for (int b = 0; b < n; ++b)
        step(s.acc[k], wordOf(s, k, j, rowOf(yb + b + p.radius)), wordOf(s, k, j, rowOf(yb + b - p.radius)), b, j);
    }
  }

  // One row of a word: the entering row in, the sums out to shared row b, the leaving row off.
  GPULAB_HD void step(typename P::Acc& acc, Word enter, Word leave, int b, int j) const {
    P::add(acc, enter);
    P::put(sums + b * p.sumPitch + j * Q, acc);
    P::sub(acc, leave);
  }

  // High: u8 whose divider needs no shift (radius up to 31), one instruction a mean.
  template <bool High>
  GPULAB_HD T finish(H h) const {
    if constexpr (kFloat)
      return static_cast<float>(h * p.area.inv);
    else if constexpr (sizeof(T) == 1)
      return static_cast<T>(High ? p.divide.high(h) : p.divide(h));  // h started at area / 2: rounded to nearest
    else
      return boxRoundedMean<T>(h, p.area.count, p.area.invF, p.area.inv);
  }

  // N sums of one channel from `at` on, added to h: their reads issued together.
  template <int N>
  GPULAB_HD static void sum(H& h, const Sum*& at) {
    H part[N];
    GPULAB_UNROLL
    for (int i = 0; i < N; ++i) part[i] = H(at[i * C]);
    GPULAB_UNROLL
    for (int i = 0; i < N; ++i) h += part[i];
    at += N * C;
  }

  // N outputs of a run: their 2N reads issued together, each output's change (the sum entering less
  // the one leaving) apart from the running sum h, which then takes one addition an output.
  template <int N, bool High>
  GPULAB_HD void slide(H& h, const Sum*& enter, const Sum*& leave, T*& to) const {
    H change[N];
    GPULAB_UNROLL
    for (int i = 0; i < N; ++i) change[i] = H(enter[i * C]) - H(leave[i * C]);
    GPULAB_UNROLL
    for (int i = 0; i < N; ++i) {
      h += change[i];
      to[i * C] = finish<High>(h);
    }
    enter += N * C;
    leave += N * C;
    to += N * C;
  }

  // Batch `batch`: the horizontal windows over the shared sums into the output buffer. A thread
  // takes one run of one row and channel (the same in each batch; the last may have fewer rows).
  GPULAB_HD void horizontal(int tid, int batch) const {
    if constexpr (sizeof(T) == 1) {
      if (p.divide.shift == 0) return horizontalRun<true>(tid, batch);
    }
    horizontalRun<false>(tid, batch);
  }

  template <bool High>
  GPULAB_HD void horizontalRun(int tid, int batch) const {
    const int b = tid / kSlots, slot = tid % kSlots;
    if (slot >= p.runs * C || b >= batchRows(batch)) return;
    const int c = slot * p.perRuns >> 16;  // slot / p.runs: a multiply, not a division a batch
    const int run = slot - c * p.runs;
    const int xs = run * p.runLength;
    if (xs >= tile) return;
    const int xe = xs + p.runLength < tile ? xs + p.runLength : tile;
    const int span = 2 * p.radius;
    const Sum* row = sums + b * p.sumPitch + lead + c;  // extended pixel e of channel c at row[e * C]
    T* dst = outs + b * p.outPitch + c;
    if constexpr (kSplitTail) {
      // The first window: 2r+1 sums, kChunk reads at a time, the rest as 2 and 1 (the same for
      // every thread).
      H h = H(0);
      const Sum* at = row + xs * C;
      int left = span + 1;
      GPULAB_NO_UNROLL
      for (; left >= kChunk; left -= kChunk) sum<kChunk>(h, at);
      if (left & 2) sum<2>(h, at);
      if (left & 1) sum<1>(h, at);
      dst[xs * C] = finish<High>(h);
      // kChunk outputs at a time, the rest of the run as 2 and 1: threads part ways only where their
      // runs differ in length modulo kChunk (the last run of a row, say).
      const Sum* enter = row + (xs + 1 + span) * C;
      const Sum* leave = row + xs * C;
      T* to = dst + (xs + 1) * C;
      left = xe - xs - 1;
      for (; left >= kChunk; left -= kChunk) slide<kChunk, High>(h, enter, leave, to);
      if (left & 2) slide<2, High>(h, enter, leave, to);
      if (left & 1) slide<1, High>(h, enter, leave, to);
      if constexpr (kFloat) nonFinite(h, xs, xe, c, b, batch, dst);
    } else {
      // The first window: 2r+1 sums (u8 from area / 2, so that the mean rounds to nearest), kChunk
      // reads at a time.
      H h = sizeof(T) == 1 ? H(p.area.count / 2) : H(0);
      const Sum* at = row + xs * C;
      int e = 0;
      for (; e + kChunk <= span + 1; e += kChunk, at += kChunk * C) {
        H part[kChunk];
        GPULAB_UNROLL
        for (int i = 0; i < kChunk; ++i) part[i] = H(at[i * C]);
        GPULAB_UNROLL
        for (int i = 0; i < kChunk; ++i) h += part[i];
      }
      for (; e <= span; ++e, at += C) h += H(*at);
      dst[xs * C] = finish<High>(h);
      // kChunk outputs at a time: their 2 kChunk reads issued together, each output's change (the sum
      // entering less the one leaving) apart from the running sum, which then takes one addition an
      // output. The last, partial chunk reads and writes under predicates.
      const Sum* enter = row + (xs + 1 + span) * C;
      const Sum* leave = row + xs * C;
      T* to = dst + (xs + 1) * C;
      int x = xs + 1;
      for (; x + kChunk <= xe; x += kChunk, enter += kChunk * C, leave += kChunk * C, to += kChunk * C) {
        H change[kChunk];
        GPULAB_UNROLL
        for (int i = 0; i < kChunk; ++i) change[i] = H(enter[i * C]) - H(leave[i * C]);
        GPULAB_UNROLL
        for (int i = 0; i < kChunk; ++i) {
          h += change[i];
          to[i * C] = finish<High>(h);
        }
      }
      if (x < xe) {
        H change[kChunk];
        GPULAB_UNROLL
        for (int i = 0; i < kChunk; ++i) change[i] = x + i < xe ? H(enter[i * C]) - H(leave[i * C]) : H(0);
        GPULAB_UNROLL
        for (int i = 0; i < kChunk; ++i) {
          h += change[i];
          if (x + i < xe) to[i * C] = finish<High>(h);
        }
      }
      if constexpr (kFloat) nonFinite(h, xs, xe, c, b, batch, dst);
    }
  }

  // f32: a NaN or inf, once in h, stays (inf - inf is NaN): a finite h at the end of the run means
  // every output of it was finite (finite floats cannot overflow a double sum). Otherwise those
  // that are not get their window's exact mean.
  GPULAB_HD void nonFinite(H h, int xs, int xe, int c, int b, int batch, T* dst) const {
    if (boxFinite(h)) return;
    const int yb = y0 + batch * kRows;
    for (int x = xs; x < xe; ++x)
      if (!boxFinite(dst[x * C])) dst[x * C] = exactMean(in, C, x0 + x, c, yb + b, p.radius, p.mode, p.fill);
  }

  // Batch `batch`'s outputs from the output buffer to `out`: a warp a row, 16 bytes a lane where
  // the rows allow it (a tile row holds at most 64 K units of 16 bytes), the row's last samples one
  // at a time.
  GPULAB_HD void store(int tid, int batch) const {
    const int yb = y0 + batch * kRows;
    const int n = batchRows(batch);
    const int warp = tid / 32, lane = tid % 32;
    const int samples = tile * C;
    const int units = p.vectorStores ? samples * static_cast<int>(sizeof(T)) / 16 : 0;
    const int rest = units * 16 / static_cast<int>(sizeof(T));
    for (int b = warp; b < n; b += kWarps) {
      T* dst = out.row(yb + b) + x0 * C;
      const T* src = outs + b * p.outPitch;
      GPULAB_UNROLL
      for (int i = 0; i < 2 * K; ++i) {
        const int u = lane + 32 * i;
        if (u < units) reinterpret_cast<uint4*>(dst)[u] = reinterpret_cast<const uint4*>(src)[u];
      }
      if (p.vectorStores) {  // fewer than 16 bytes left
        if (rest + lane < samples) dst[rest + lane] = src[rest + lane];
      } else {
        GPULAB_NO_UNROLL
        for (int x = lane; x < samples; x += 32) dst[x] = src[x];
      }
    }
  }
};

// The tile and segment of the block the GPU starts id-th: those that take longest first, so that the
// last to start, which set the kernel's end, are short. First the first and last tiles' columns
// (Constant and Wrap gather their halo), then the other tiles' top and bottom segments (border-mapped
// rows), then the rest row by row. (H100, session 18: the 6000x4000 RGB u8 photo at r=15 0.088 ms
// in launch order, 0.089 in this one; Constant and Wrap borders 17-24% faster, f32 r=31 and r=63,
// 16-bit RGBA and 8-bit gray 8-14%.)
GPULAB_HD void blockAt(int id, int tilesX, int tilesY, int& bx, int& by) {
  bx = id % tilesX;
  by = id / tilesX;
  if (tilesX <= 2 || tilesY <= 2) return;
  if (id < 2 * tilesY) {
    bx = id % 2 == 0 ? 0 : tilesX - 1;
    by = id / 2;
    return;
  }
  id -= 2 * tilesY;
  if (id < 2 * (tilesX - 2)) {
    bx = 1 + id / 2;
    by = id % 2 == 0 ? 0 : tilesY - 1;
    return;
  }
  id -= 2 * (tilesX - 2);
  bx = 1 + id % (tilesX - 2);
  by = 1 + id / (tilesX - 2);
}

template <class T, int C, int K, bool Wide>
__global__ void __launch_bounds__(kThreads, K == 1 ? 3 : 2)
    boxSweepKernel(Plane<const T> in, Plane<T> out, Params<T> p) {
  extern __shared__ __align__(16) unsigned char shared[];
  using B = Block<T, C, K, Wide>;
  int bx = 0, by = 0;
  blockAt(static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x), p.tilesX, p.tilesY, bx, by);
  const B block(in, out, p, shared, bx, by);
  const int tid = threadIdx.x;
  typename B::State state;
  block.start(tid, state);
  block.loadAhead(tid, 0, state);
  const int batches = block.batches();
  for (int batch = 0; batch < batches; ++batch) {
    if (batch > 0) block.store(tid, batch - 1);  // read before the barrier that lets horizontal rewrite it
    block.vertical(tid, batch, state);
    block.loadAhead(tid, batch + 1, state);  // in flight through the horizontal phase
    __syncthreads();
    if (block.copies) {  // block-uniform
      block.copyHalo(tid, batch);
      __syncthreads();
    }
    block.horizontal(tid, batch);
    __syncthreads();  // the sums are read; the outputs are written
  }
  block.store(tid, batches - 1);
}

// Row segments for a GPU holding `residentBlocks` blocks at once: about kWaves waves of blocks, each
// segment at least 2r rows (the rows it sums above its first output) and a whole number of batches.
// The tiling, and so the kernel and its buffers, does not depend on them.
template <class T>
void planSegments(Params<T>& p, int residentBlocks) {
  const int segments = std::max(1, divUp(kWaves * residentBlocks, p.tilesX));
  // The nearest whole number of batches (measured on an H100: box 31x31 at 48 rows 0.0995 ms, at
  // the 64 that rounding up gave 0.1037), but at least 2r rows.
  int batches = std::max((divUp(p.height, segments) + kRows / 2) / kRows, divUp(2 * p.radius, kRows));
  if (forcedRows() > 0) batches = divUp(forcedRows(), kRows);
  const int rows = std::max(1, std::min(batches, divUp(p.height, kRows))) * kRows;
  p.rows = rows;
  p.tilesY = divUp(p.height, rows);
}

// Tiles as wide as keeps the extended row within one word a thread while the halo is at most half
// the tile (tile >= 4r), else within two; whole 16-byte units of a row; balanced across the width.
// Segments as planSegments.
template <class T>
Params<T> plan(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, int residentBlocks) {
  constexpr int q = samplesPerWord<T>();
  Params<T> p;
  p.width = in.width;
  p.height = in.height;
  p.radius = radius;
  p.channels = channels;
  const int unit = 16 / std::gcd(16, channels * static_cast<int>(sizeof(T)));  // pixels of whole 16-byte units
  const auto widest = [&](int perThread) {  // the widest tile whose extended row fits
    const int pixels = (perThread * kThreads * q - 2 * (q - 1)) / channels - 2 * radius;
    return pixels / unit * unit;
  };
  int tw = widest(1);
  if (tw < 4 * radius || tw < kMinTile) tw = widest(kMaxWords);
  p.tilesX = divUp(p.width, tw);
  p.tileWidth = divUp(divUp(p.width, p.tilesX), unit) * unit;
  p.tilesX = divUp(p.width, p.tileWidth);
  p.words = ((p.tileWidth + 2 * radius) * channels + 2 * (q - 1)) / q;
  planSegments(p, residentBlocks);
  p.wide = sizeof(T) == 1 && radius > kPackedRadius;
  // Runs: a row's kSlots slots hold them channel by channel, each at least r long (the 2r+1 reads
  // that start a run stay under two a output) and odd (neighbouring runs on one channel meet
  // different banks). The run length (up to a few more than the least) and the row pitches of the
  // shared sums and output buffer (padded by whole 16-byte units) are those with which a warp's
  // horizontal reads of the sums and writes of the outputs take the fewest shared passes. Every
  // warp covers two rows as the first does, so the first warp's count holds for all.
  const int runsWanted = std::max(1, kSlots / channels);
  const int leastRun = std::max(divUp(p.tileWidth, runsWanted), radius) | 1;
  const auto passes = [&](int length, int pitch, int bytesPer, bool reads) {
    const int runs = divUp(p.tileWidth, length);
    const int halves = bytesPer == 8 ? 2 : 1;  // 64-bit accesses: a pass for each half warp at least
    int total = 0;
    for (int half = 0; half < halves; ++half) {
      long long seen[32][64];  // per bank, the distinct accesses met
      int count[32] = {};
      int ways = 0;
      for (int lane = half * 32 / halves; lane < (half + 1) * 32 / halves; ++lane) {
        const int slot = lane % kSlots, b = lane / kSlots;
        if (slot >= runs * channels) continue;
        const int x = slot % runs * length + (reads ? 2 * radius + 1 : 0);  // a read of the sums or a write
        const long long byte = (static_cast<long long>(b) * pitch + x * channels + slot / runs) * bytesPer;
        for (long long word = byte / 4; word * 4 < byte + bytesPer; ++word) {
          const long long access = reads ? word : byte;  // reads of one word are one access
          const int bank = static_cast<int>(word % 32);
          if (std::find(seen[bank], seen[bank] + count[bank], access) == seen[bank] + count[bank])
            seen[bank][count[bank]++] = access;
          ways = std::max(ways, count[bank]);
        }
      }
      total += ways;
    }
    return total;
  };
  const auto pitchFor = [&](int length, int samples, int bytesPer, bool reads, int& best) {
    int fewest = 1 << 30;
    for (int pad = 0; pad < 32 * 4 / bytesPer; pad += 16 / bytesPer) {
      const int n = passes(length, samples + pad, bytesPer, reads);
      if (n < fewest) fewest = n, best = samples + pad;
    }
    return fewest;
  };
  int fewest = 1 << 30;
  for (int length = leastRun; length <= leastRun + 6; length += 2) {
    int sumPitch = 0, outPitch = 0;
    const int n = 2 * pitchFor(length, p.words * q, p.sumBytes(), true, sumPitch) +
                  pitchFor(length, p.tileWidth * channels, sizeof(T), false, outPitch);
    if (n < fewest) fewest = n, p.runLength = length, p.sumPitch = sumPitch, p.outPitch = outPitch;
  }
  p.runs = divUp(p.tileWidth, p.runLength);
  p.perRuns = divUp(1 << 16, p.runs);
  const auto address = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); };
  p.phase = static_cast<int>(address(in.data) % 4 / sizeof(T));
  p.wordLoads = in.pitch % 4 == 0;
  p.vectorStores = address(out.data) % 16 == 0 && out.pitch % 16 == 0;
  p.mode = mode;
  p.fill = fill;
  p.area = boxAreaOf(radius);
  if constexpr (sizeof(T) == 1) {
    const unsigned largest = 255u * p.area.count + p.area.count / 2;
    int bits = 1;
    while ((largest >> bits) != 0) ++bits;
    p.divide = boxDivideOf(p.area.count, bits);
  }
  return p;
}

template <class T, int C, int K, bool Wide>
void launchWith(const Params<T>& tiled, Plane<const T> in, Plane<T> out, cudaStream_t stream) {
  auto kernel = boxSweepKernel<T, C, K, Wide>;
  const int bytes = static_cast<int>(tiled.sharedBytes());
  int device = 0, sms = 0, perSm = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (bytes > 48 * 1024)
    GPULAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, bytes));
  Params<T> p = tiled;
  planSegments(p, std::max(1, perSm) * sms);  // the segments follow the occupancy; the tiles do not
  kernel<<<dim3(p.tilesX, p.tilesY), kThreads, bytes, stream>>>(in, out, p);
  GPULAB_CHECK_LAUNCH("boxSweepKernel");
}

template <class T, int C, int K, bool Wide>
void emulateWith(const Params<T>& p, Plane<const T> in, Plane<T> out) {
  using B = Block<T, C, K, Wide>;
  std::vector<unsigned char> shared(p.sharedBytes());
  std::vector<typename B::State> states(kThreads);
  for (int by = 0; by < p.tilesY; ++by)
    for (int bx = 0; bx < p.tilesX; ++bx) {
      std::fill(shared.begin(), shared.end(), static_cast<unsigned char>(0xA5));  // a read before a write shows
      const B block(in, out, p, shared.data(), bx, by);
      for (int tid = 0; tid < kThreads; ++tid) {
        block.start(tid, states[tid]);
        block.loadAhead(tid, 0, states[tid]);
      }
      const int batches = block.batches();
      for (int batch = 0; batch < batches; ++batch) {
        for (int tid = 0; tid < kThreads; ++tid) {
          if (batch > 0) block.store(tid, batch - 1);
          block.vertical(tid, batch, states[tid]);
          block.loadAhead(tid, batch + 1, states[tid]);
        }
        if (block.copies)
          for (int tid = 0; tid < kThreads; ++tid) block.copyHalo(tid, batch);
        for (int tid = 0; tid < kThreads; ++tid) block.horizontal(tid, batch);
      }
      for (int tid = 0; tid < kThreads; ++tid) block.store(tid, batches - 1);
    }
}

// f(integral_constant C, integral_constant K, bool_constant Wide) for the plan's kernel.
template <class T, class F>
void withKernel(const Params<T>& p, F&& f) {
  const auto withK = [&](auto c) {
    const auto withWide = [&](auto k) {
      if constexpr (sizeof(T) == 1) {
        if (p.wide) return f(c, k, std::true_type{});
      }
      return f(c, k, std::false_type{});
    };
    if (p.perThread() == 1) return withWide(std::integral_constant<int, 1>{});
    return withWide(std::integral_constant<int, 2>{});
  };
  switch (p.channels) {
    case 1:
      return withK(std::integral_constant<int, 1>{});
    case 2:
      return withK(std::integral_constant<int, 2>{});
    case 3:
      return withK(std::integral_constant<int, 3>{});
    default:
      return withK(std::integral_constant<int, 4>{});
  }
}

}  // namespace

template <class T>
int maxRadius(int channels) {
  return radiusLimit<T>(channels);
}

template <class T>
void launch(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, cudaStream_t stream) {
  const Params<T> p = plan<T>(in, out, channels, radius, mode, fill, 1);
  withKernel(p, [&](auto c, auto k, auto wide) {
    launchWith<T, decltype(c)::value, decltype(k)::value, decltype(wide)::value>(p, in, out, stream);
  });
}

template <class T>
void emulate(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, int residentBlocks) {
  const Params<T> p = plan<T>(in, out, channels, radius, mode, fill, residentBlocks);
  withKernel(p, [&](auto c, auto k, auto wide) {
    emulateWith<T, decltype(c)::value, decltype(k)::value, decltype(wide)::value>(p, in, out);
  });
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
