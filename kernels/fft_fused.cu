#include <vector_functions.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_fused.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Complex arithmetic and the in-register DFTs

GPULAB_HD float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
GPULAB_HD float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
GPULAB_HD float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
/// a * conj(b)
GPULAB_HD float2 cmulConj(float2 a, float2 b) { return make_float2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y); }
GPULAB_HD float2 conj(float2 a) { return make_float2(a.x, -a.y); }
GPULAB_HD float2 scaled(float2 a, float s) { return make_float2(a.x * s, a.y * s); }

constexpr int log2Of(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  return bits;
}

/// x's low `bits` bits (bits <= 4) in reverse order.
constexpr int bitReverse(int x, int bits) {
  const int reversed4 = ((x & 1) << 3) | ((x & 2) << 1) | ((x & 4) >> 1) | ((x & 8) >> 3);
  return reversed4 >> (4 - bits);
}

/// d * e^(-2 pi i m / 16) (forward) or d * e^(+2 pi i m / 16) (inverse), 0 <= m < 8. m is a constant
/// once the DFT loops unroll, so each case is a few multiply-adds (none at m = 0 and 4).
template <bool Inverse>
GPULAB_HD float2 rotate16(float2 d, int m) {
  constexpr float kCos1 = 0.92387953251128674f;  // cos(pi / 8)
  constexpr float kSin1 = 0.38268343236508978f;  // sin(pi / 8)
  constexpr float kHalf = 0.70710678118654752f;  // sqrt(1/2)
  float c, s;
  switch (m) {
    case 0:
      return d;
    case 1:
      c = kCos1, s = kSin1;
      break;
    case 2:
      c = kHalf, s = kHalf;
      break;
    case 3:
      c = kSin1, s = kCos1;
      break;
    case 4:
      return Inverse ? make_float2(-d.y, d.x) : make_float2(d.y, -d.x);
    case 5:
      c = -kSin1, s = kCos1;
      break;
    case 6:
      c = -kHalf, s = kHalf;
      break;
    default:
      c = -kCos1, s = kSin1;
      break;
  }
  if (Inverse) return make_float2(d.x * c - d.y * s, d.x * s + d.y * c);
  return make_float2(d.x * c + d.y * s, d.y * c - d.x * s);
}

/// One radix-2 stage of dftInRegisters: butterflies `half` apart, then the stages below it. Each
/// stage is its own instantiation so every index is a constant and v stays in registers.
template <int R, int Half, bool Inverse>
GPULAB_HD void dftStages(float2 (&v)[R]) {
  GPULAB_UNROLL
  for (int start = 0; start < R; start += 2 * Half) {
    GPULAB_UNROLL
    for (int i = 0; i < Half; ++i) {
      const float2 a = v[start + i], b = v[start + i + Half];
      v[start + i] = cadd(a, b);
      v[start + i + Half] = rotate16<Inverse>(csub(a, b), i * (8 / Half));
    }
  }
  if constexpr (Half > 1) dftStages<R, Half / 2, Inverse>(v);
}

/// An R-point DFT (R = 2, 4, 8 or 16) of v in place, radix 2 decimation in frequency: natural order
/// in, bin k in v[bitReverse(k)] out. Unnormalised; Inverse uses e^(+2 pi i / R).
template <int R, bool Inverse>
GPULAB_HD void dftInRegisters(float2 (&v)[R]) {
  static_assert(R == 2 || R == 4 || R == 8 || R == 16);
  dftStages<R, R / 2, Inverse>(v);
}

// ---------------------------------------------------------------------------------------------
// N-point FFTs in shared memory, 16 values a thread a pass, N / 16 threads a transform

/// Shared-memory slot of element i: one pad value every 16, so the strided passes (and the last
/// pass's 16 consecutive values a thread) do not hit the same banks.
GPULAB_HD int padded(int i) { return i + (i >> 4); }
constexpr int paddedSize(int n) { return n + n / 16; }

template <int N>
struct FftShape {
  static_assert(N >= 16 && (N & (N - 1)) == 0);
  static constexpr int kLog2 = log2Of(N);
  static constexpr int kPasses = (kLog2 + 3) / 4;
  static constexpr int kThreads = N / 16;
  /// Pass p's radix: 16, and 2, 4 or 8 for the last when log2 N is not a multiple of 4.
  static constexpr int radix(int p) { return p < kLog2 / 4 ? 16 : 1 << (kLog2 % 4); }
  /// The length of the sub-transforms pass p works on (N, then N / 16, ...).
  static constexpr int span(int p) {
    int length = N;
    for (int q = 0; q < p; ++q) length /= radix(q);
    return length;
  }
  /// The bin a forward transform leaves at position `pos` (digit reversal over the radices).
  static GPULAB_HD int binAt(int pos) {
    int bin = 0, weight = 1, length = N;
    GPULAB_UNROLL
    for (int p = 0; p < kPasses; ++p) {
      length /= radix(p);
      bin += (pos / length) * weight;
      pos %= length;
      weight *= radix(p);
    }
    return bin;
  }
  /// The position of bin k: the inverse of binAt.
  static GPULAB_HD int positionOf(int bin) {
    int pos = 0, length = N;
    GPULAB_UNROLL
    for (int p = 0; p < kPasses; ++p) {
      length /= radix(p);
      pos += (bin % radix(p)) * length;
      bin /= radix(p);
    }
    return pos;
  }
};

/// Where the twiddles of a radix-16 pass over sub-transforms of length L start in the table.
constexpr int passTwiddles(int length) { return kFftBaseTwiddles + length - 32; }

/// Pass P of the forward transform (decimation in frequency): for each butterfly of this thread,
/// the radix-R DFT of values stride apart, then the twiddles e^(-2 pi i t s / L), in place. Only the
/// last pass has a radix below 16, and its stride is 1 (no twiddles). Inverse: its mirror
/// (decimation in time), the conjugate twiddles first, then the inverse DFT.
template <int N, int P, bool Inverse, class Load, class Store>
GPULAB_HD void radixPass(int tid, const float2* twiddles, Load load, Store store) {
  using Shape = FftShape<N>;
  constexpr int R = Shape::radix(P), L = Shape::span(P), stride = L / R, bits = log2Of(R);
  static_assert(R == 16 || stride == 1);
  GPULAB_UNROLL
  for (int i = 0; i < 16 / R; ++i) {
    const int b = tid + Shape::kThreads * i;
    const int t = b % stride;
    const int base = (b / stride) * L + t;
    const auto twiddle = [&](int s) { return twiddles[passTwiddles(L) + s * stride + t]; };
    float2 v[R];
    GPULAB_UNROLL
    for (int j = 0; j < R; ++j) {
      const float2 z = load(base + stride * j);
      v[j] = Inverse && stride > 1 && j > 0 ? cmulConj(z, twiddle(j)) : z;
    }
    dftInRegisters<R, Inverse>(v);
    GPULAB_UNROLL
    for (int k = 0; k < R; ++k) {
      const float2 z = v[bitReverse(k, bits)];
      store(base + stride * k, !Inverse && stride > 1 && k > 0 ? cmul(z, twiddle(k)) : z);
    }
  }
}

/// The 16 values a thread keeps from one phase to the next (registers on the GPU).
struct Registers {
  float2 v[16];
};

/// The last pass into registers, the first half of a pass split by a barrier: this thread's 16 / R
/// butterflies (R consecutive positions each, no twiddles), regs.v[i * R + k] the k-th result of
/// butterfly i in order. Forward: the values at base + j, bins out. Inverse: the bins read in
/// natural order (binAt), values out.
template <int N, bool Inverse, class Load>
GPULAB_HD void lastPassIntoRegisters(int tid, Load load, Registers& regs) {
  using Shape = FftShape<N>;
  constexpr int R = Shape::radix(Shape::kPasses - 1), bits = log2Of(R);
  GPULAB_UNROLL
  for (int i = 0; i < 16 / R; ++i) {
    const int base = (tid + Shape::kThreads * i) * R;
    float2 v[R];
    GPULAB_UNROLL
    for (int j = 0; j < R; ++j) v[j] = load(Inverse ? Shape::binAt(base + j) : base + j);
    dftInRegisters<R, Inverse>(v);
    GPULAB_UNROLL
    for (int k = 0; k < R; ++k) regs.v[i * R + k] = v[bitReverse(k, bits)];
  }
}

/// The second half, after the barrier: result k of butterfly i to its bin's natural index (InOrder:
/// the forward spectrum leaves in order) or to base + k (the next inverse pass's places).
template <int N, bool InOrder, class Store>
GPULAB_HD void lastPassFromRegisters(int tid, const Registers& regs, Store store) {
  using Shape = FftShape<N>;
  constexpr int R = Shape::radix(Shape::kPasses - 1);
  GPULAB_UNROLL
  for (int i = 0; i < 16 / R; ++i) {
    const int base = (tid + Shape::kThreads * i) * R;
    GPULAB_UNROLL
    for (int k = 0; k < R; ++k) store(InOrder ? Shape::binAt(base + k) : base + k, regs.v[i * R + k]);
  }
}

/// The last forward pass, the gain of each bin and the first inverse pass in registers: the last
/// pass's butterflies are R consecutive values with no twiddles, so one thread does all three.
template <int N, class Load, class Store, class Gain>
GPULAB_HD void lastPassFiltered(int tid, Load load, Store store, Gain gain) {
  using Shape = FftShape<N>;
  constexpr int R = Shape::radix(Shape::kPasses - 1), bits = log2Of(R);
  GPULAB_UNROLL
  for (int i = 0; i < 16 / R; ++i) {
    const int base = (tid + Shape::kThreads * i) * R;
    float2 v[R];
    GPULAB_UNROLL
    for (int j = 0; j < R; ++j) v[j] = load(base + j);
    float g[R];  // before the values are live: the gain's branches then cost no registers of theirs
    GPULAB_UNROLL
    for (int s = 0; s < R; ++s) g[s] = gain(Shape::binAt(base + s));
    dftInRegisters<R, false>(v);
    float2 w[R];
    GPULAB_UNROLL
    for (int s = 0; s < R; ++s) w[s] = scaled(v[bitReverse(s, bits)], g[s]);
    dftInRegisters<R, true>(w);
    GPULAB_UNROLL
    for (int j = 0; j < R; ++j) store(base + j, w[bitReverse(j, bits)]);
  }
}

/// The range exponent of the input (fftRangeExponentOf) from its largest finite |sample|, as
/// launchMaxFiniteAbs left it (float bits in the low word); 0 without one (u8 input).
GPULAB_HD int rangeExponentFrom(const unsigned long long* maxBits) {
  if (maxBits == nullptr) return 0;
  const auto low = static_cast<unsigned>(*maxBits);
  float maxAbs;
  memcpy(&maxAbs, &low, sizeof maxAbs);
  return fftRangeExponentOf(maxAbs);
}

GPULAB_HD float2 descaled(float2 v, int exponent) {
  return make_float2(descalePow2(v.x, exponent), descalePow2(v.y, exponent));
}

// ---------------------------------------------------------------------------------------------
// The three passes as block programs: phases separated by barriers, each phase thread code that
// the kernels run with threadIdx and the host emulation with a loop (Registers carry a thread's
// values across a barrier).

/// A block's position: its index in the grid and its shared memory.
struct BlockAt {
  int x = 0;      ///< blockIdx.x
  int plane = 0;  ///< blockIdx.y
  float2* shared = nullptr;
};

/// Shared-memory values a row of an M-point row transform takes: 4 more than its padded size, so
/// the 4 rows a half-warp touches in the transposed phases start 8 banks apart.
constexpr int rowSlots(int m) { return paddedSize(m) + 4; }

/// Pass 1. Rows of W = 2M reals: z[n] = x[2n] + i x[2n+1] through an M-point FFT, then
///   X[k] = (Z[k] + conj Z[M-k]) / 2 - i e^(-2 pi i k / W) (Z[k] - conj Z[M-k]) / 2,  k = 0..M,
/// written to column k of the transposed half spectrum.
template <int M>
struct RowsForward {
  using Shape = FftShape<M>;
  static constexpr int kRows = std::max(4, 256 / Shape::kThreads);  // >= 4: 32-byte pieces a column
  static constexpr int kThreads = Shape::kThreads * kRows;
  static constexpr int kShared = rowSlots(M) * kRows;  // float2 values
  static constexpr int kPasses = Shape::kPasses;
  static constexpr int kPhases = kPasses + 2;  // passes, the in-order store, the split

  Plane<const float> stack;
  int height;
  float2* spectrum;
  const float2* twiddles;
  const unsigned long long* maxBits;  ///< the input's largest finite |sample|, or null (no scaling)

  template <int Phase>
  GPULAB_HD void phase(int tid, BlockAt block, Registers& regs) const {
    const int row = tid / Shape::kThreads, t = tid % Shape::kThreads;
    float2* data = block.shared + row * rowSlots(M);
    const auto inShared = [data](int i) { return data[padded(i)]; };
    const auto toShared = [data](int i, float2 v) { data[padded(i)] = v; };
    const int y = block.x * kRows + row;
    const float2* in = y < height ? reinterpret_cast<const float2*>(stack.row(block.plane * height + y)) : nullptr;
    const auto inGlobal = [in, this](int n) {
      if (in == nullptr) return make_float2(0.f, 0.f);
      const int e = rangeExponentFrom(maxBits);  // extreme ranges: the input times 2^-e
      return e == 0 ? in[n] : descaled(in[n], -e);
    };
    if constexpr (Phase == kPasses - 1) {
      if constexpr (kPasses == 1)
        lastPassIntoRegisters<M, false>(t, inGlobal, regs);
      else
        lastPassIntoRegisters<M, false>(t, inShared, regs);
    } else if constexpr (Phase == 0) {
      radixPass<M, 0, false>(t, twiddles, inGlobal, toShared);
    } else if constexpr (Phase < kPasses - 1) {
      radixPass<M, Phase, false>(t, twiddles, inShared, toShared);
    } else if constexpr (Phase == kPasses) {
      lastPassFromRegisters<M, true>(t, regs, toShared);
    } else {
      // Transposed writes: kRows consecutive rows of one column per kRows threads.
      const int r = tid % kRows;
      const int yr = block.x * kRows + r;
      const float2* z = block.shared + r * rowSlots(M);
      float2* column = spectrum + static_cast<std::size_t>(block.plane) * (M + 1) * height + yr;
      for (int k = tid / kRows; k <= M; k += kThreads / kRows) {
        const float2 a = z[padded(k & (M - 1))];
        const float2 b = conj(z[padded((M - k) & (M - 1))]);
        const float2 even = scaled(cadd(a, b), 0.5f);
        const float2 d = scaled(csub(a, b), 0.5f);
        const float2 odd = make_float2(d.y, -d.x);  // -i d
        const float2 x = cadd(even, cmul(twiddles[k * (kFftBaseTwiddles / (2 * M))], odd));
        if (yr < height) column[static_cast<std::size_t>(k) * height] = x;
      }
    }
  }
};

/// Pass 2. Columns of H complex values: forward FFT, gain * scale, inverse FFT.
template <int H>
struct ColumnsFilter {
  using Shape = FftShape<H>;
  static constexpr int kColumns = std::max(1, 256 / Shape::kThreads);
  static constexpr int kThreads = Shape::kThreads * kColumns;
  static constexpr int kShared = paddedSize(H) * kColumns;
  static constexpr int kPhases = 2 * Shape::kPasses - 1;

  float2* spectrum;
  int fftWidth;
  int columns;  ///< fftWidth / 2 + 1
  FreqMask mask;
  float scale;
  const float2* twiddles;

  /// The gain of bin (kx, ky) times scale, fx2 the kx part of r^2.
  GPULAB_HD float gainAt(float fx2, int ky) const {
    const float fy = 2.f * static_cast<float>(signedFrequency(ky, H)) / static_cast<float>(H);
    return freqGain<float>(mask, fx2 + fy * fy) * scale;
  }

  template <int Phase>
  GPULAB_HD void phase(int tid, BlockAt block, Registers&) const {
    constexpr int passes = Shape::kPasses;
    const int c = tid / Shape::kThreads, t = tid % Shape::kThreads;
    const int kx = block.x * kColumns + c;
    float2* data = block.shared + c * paddedSize(H);
    float2* column = kx < columns ? spectrum + (static_cast<std::size_t>(block.plane) * columns + kx) * H : nullptr;
    const auto inShared = [data](int i) { return data[padded(i)]; };
    const auto toShared = [data](int i, float2 v) { data[padded(i)] = v; };
    const auto inGlobal = [column](int i) { return column ? column[i] : make_float2(0.f, 0.f); };
    const auto toGlobal = [column](int i, float2 v) {
      if (column) column[i] = v;
    };
    const float fx2 = normalisedRadiusSquared<float>(kx, 0, fftWidth, H);
    const auto gain = [this, fx2](int ky) { return gainAt(fx2, ky); };
    if constexpr (passes == 1) {
      lastPassFiltered<H>(t, inGlobal, toGlobal, gain);
    } else if constexpr (Phase == 0) {
      radixPass<H, 0, false>(t, twiddles, inGlobal, toShared);
    } else if constexpr (Phase < passes - 1) {
      radixPass<H, Phase, false>(t, twiddles, inShared, toShared);
    } else if constexpr (Phase == passes - 1) {
      lastPassFiltered<H>(t, inShared, toShared, gain);
    } else if constexpr (Phase < kPhases - 1) {
      radixPass<H, kPhases - 1 - Phase, true>(t, twiddles, inShared, toShared);
    } else {
      radixPass<H, 0, true>(t, twiddles, inShared, toGlobal);
    }
  }
};

/// Pass 3. The inverse of pass 1: from bins 0..M of a row,
///   Z[k] = (X[k] + conj X[M-k]) + i e^(2 pi i k / W) (X[k] - conj X[M-k]),  k = 0..M-1,
/// whose unnormalised M-point inverse is W (x[2n] + i x[2n+1]).
template <int M>
struct RowsInverse {
  using Shape = FftShape<M>;
  static constexpr int kRows = RowsForward<M>::kRows;
  static constexpr int kThreads = Shape::kThreads * kRows;
  static constexpr int kShared = rowSlots(M) * kRows;
  static constexpr int kPasses = Shape::kPasses;
  static constexpr int kPhases = kPasses + 2;  // the split, the in-order last pass, its store, passes

  const float2* spectrum;
  Plane<float> stack;
  int height;
  const float2* twiddles;
  const unsigned long long* maxBits;  ///< as RowsForward's: the result times 2^e

  GPULAB_HD float2 twisted(float2 a, float2 b, int k) const {  // b = conj X[M-k]
    const float2 d = cmulConj(csub(a, b), twiddles[k * (kFftBaseTwiddles / (2 * M))]);
    return cadd(cadd(a, b), make_float2(-d.y, d.x));  // + i d
  }

  template <int Phase>
  GPULAB_HD void phase(int tid, BlockAt block, Registers& regs) const {
    const int row = tid / Shape::kThreads, t = tid % Shape::kThreads;
    float2* data = block.shared + row * rowSlots(M);
    const auto inShared = [data](int i) { return data[padded(i)]; };
    const auto toShared = [data](int i, float2 v) { data[padded(i)] = v; };
    const int y = block.x * kRows + row;
    float2* out = y < height ? reinterpret_cast<float2*>(stack.row(block.plane * height + y)) : nullptr;
    const auto toGlobal = [out, this](int n, float2 v) {
      if (out == nullptr) return;
      const int e = rangeExponentFrom(maxBits);
      out[n] = e == 0 ? v : descaled(v, e);
    };
    if constexpr (Phase == 0) {
      const int r = tid % kRows;
      const int yr = block.x * kRows + r;
      float2* z = block.shared + r * rowSlots(M);
      const float2* column = spectrum + static_cast<std::size_t>(block.plane) * (M + 1) * height + yr;
      const auto bin = [&](int k) {
        return yr < height ? column[static_cast<std::size_t>(k) * height] : make_float2(0.f, 0.f);
      };
      for (int k = tid / kRows; k <= M / 2; k += kThreads / kRows) {
        const float2 a = bin(k), b = bin(M - k);
        z[padded(k)] = twisted(a, conj(b), k);
        if (k > 0 && k < M / 2) z[padded(M - k)] = twisted(b, conj(a), M - k);
      }
    } else if constexpr (Phase == 1) {
      lastPassIntoRegisters<M, true>(t, inShared, regs);
    } else if constexpr (Phase == 2) {
      if constexpr (kPasses == 1)
        lastPassFromRegisters<M, false>(t, regs, toGlobal);
      else
        lastPassFromRegisters<M, false>(t, regs, toShared);
    } else if constexpr (Phase < kPhases - 1) {
      radixPass<M, kPasses + 1 - Phase, true>(t, twiddles, inShared, toShared);
    } else {
      radixPass<M, 0, true>(t, twiddles, inShared, toGlobal);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Kernels, launchers and the host emulation

template <class Program, int... Phase>
__device__ __forceinline__ void runPhases(const Program& program, BlockAt block, std::integer_sequence<int, Phase...>) {
  Registers regs;
  ((program.template phase<Phase>(static_cast<int>(threadIdx.x), block, regs), __syncthreads()), ...);
}

/// Blocks an SM must be able to hold: 1024 threads' worth (caps the registers at 64 a thread); the
/// passes wait on memory and shared memory, so they need the warps more than the registers.
template <class Program>
constexpr int minBlocks() {
  return std::max(1, 1024 / Program::kThreads);
}

template <class Program>
__global__ void __launch_bounds__(Program::kThreads, minBlocks<Program>()) programKernel(Program program) {
  extern __shared__ float2 shared[];
  runPhases(program, BlockAt{static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), shared},
            std::make_integer_sequence<int, Program::kPhases>{});
}

template <class Program>
void launchProgram(const Program& program, int blocks, int planes, cudaStream_t stream, const char* name) {
  const std::size_t bytes = Program::kShared * sizeof(float2);
  if (bytes > 48 * 1024)
    GPULAB_CUDA_CHECK(cudaFuncSetAttribute(programKernel<Program>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
  programKernel<Program><<<dim3(blocks, planes), Program::kThreads, bytes, stream>>>(program);
  GPULAB_CHECK_LAUNCH(name);
}

template <class Program, int... Phase>
void runPhasesOnHost(const Program& program, BlockAt block, std::integer_sequence<int, Phase...>) {
  std::vector<Registers> regs(Program::kThreads);
  const auto everyThread = [&](auto phase) {
    for (int tid = 0; tid < Program::kThreads; ++tid) phase(tid);
  };
  (everyThread([&](int tid) { program.template phase<Phase>(tid, block, regs[tid]); }), ...);
}

template <class Program>
void runProgramOnHost(const Program& program, int blocks, int planes) {
  std::vector<float2> shared(Program::kShared);
  for (int plane = 0; plane < planes; ++plane)
    for (int x = 0; x < blocks; ++x)
      runPhasesOnHost(program, BlockAt{x, plane, shared.data()}, std::make_integer_sequence<int, Program::kPhases>{});
}

/// Calls f(std::integral_constant<int, n>) for a power of two n in [N, Max].
template <int N, int Max, class F>
void withSize(int n, F&& f) {
  if (n == N) return f(std::integral_constant<int, N>{});
  if constexpr (N < Max)
    return withSize<2 * N, Max>(n, std::forward<F>(f));
  else
    throw std::invalid_argument("fused FFT: no kernel for length " + std::to_string(n));
}

// Row transforms are W/2 points (W = 32..8192), column transforms H points (H = 32..8192).
constexpr int kMinRowFft = kFusedFftMinSide / 2, kMaxRowFft = kFusedFftMaxSide / 2;
constexpr int kMinColumnFft = kFusedFftMinSide, kMaxColumnFft = kFusedFftMaxSide;

/// Twiddle i of the table is e^(-2 pi i numerator / denominator) (the layout in fft_fused.cuh).
GPULAB_HD void twiddleFraction(int i, int& numerator, int& denominator) {
  if (i < kFftBaseTwiddles) {
    numerator = i, denominator = kFftBaseTwiddles;
    return;
  }
  int j = i - kFftBaseTwiddles, length = 32;
  while (j >= length) j -= length, length *= 2;
  const int stride = length / 16;
  numerator = (j / stride) * (j % stride), denominator = length;
}

__global__ void twiddleKernel(float2* table) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kFftTwiddleCount) return;
  int numerator, denominator;
  twiddleFraction(i, numerator, denominator);
  double s, c;
  sincospi(-2.0 * numerator / denominator, &s, &c);
  table[i] = make_float2(static_cast<float>(c), static_cast<float>(s));
}

}  // namespace

bool fusedFftFilterSupports(int fftWidth, int fftHeight) noexcept {
  const auto ok = [](int n) { return n >= kFusedFftMinSide && n <= kFusedFftMaxSide && (n & (n - 1)) == 0; };
  return ok(fftWidth) && ok(fftHeight);
}

void launchFftTwiddles(float2* table, cudaStream_t stream) {
  twiddleKernel<<<divUp(kFftTwiddleCount, 256), 256, 0, stream>>>(table);
  GPULAB_CHECK_LAUNCH("fftTwiddles");
}

void fftTwiddlesOnHost(float2* table) {
  for (int i = 0; i < kFftTwiddleCount; ++i) {
    // In double, rounded to float: the kernel's sincospi gives the same floats but for a rare tie.
    int numerator, denominator;
    twiddleFraction(i, numerator, denominator);
    const double angle = -2.0 * std::numbers::pi * numerator / denominator;
    table[i] = make_float2(static_cast<float>(std::cos(angle)), static_cast<float>(std::sin(angle)));
  }
}

void launchFusedRowsForward(Plane<const float> stack, int planes, float2* spectrum, const float2* twiddles,
                            const unsigned long long* maxBits, cudaStream_t stream) {
  const int height = stack.height / planes;
  withSize<kMinRowFft, kMaxRowFft>(stack.width / 2, [&](auto m) {
    using Program = RowsForward<decltype(m)::value>;
    launchProgram(Program{stack, height, spectrum, twiddles, maxBits}, divUp(height, Program::kRows), planes, stream,
                  "fusedFftRowsForward");
  });
}

void launchFusedColumnsFilter(float2* spectrum, int fftWidth, int fftHeight, int planes, FreqMask mask, float scale,
                              const float2* twiddles, cudaStream_t stream) {
  const int columns = fftWidth / 2 + 1;
  withSize<kMinColumnFft, kMaxColumnFft>(fftHeight, [&](auto h) {
    using Program = ColumnsFilter<decltype(h)::value>;
    launchProgram(Program{spectrum, fftWidth, columns, mask, scale, twiddles}, divUp(columns, Program::kColumns),
                  planes, stream, "fusedFftColumnsFilter");
  });
}

void launchFusedRowsInverse(const float2* spectrum, Plane<float> stack, int planes, const float2* twiddles,
                            const unsigned long long* maxBits, cudaStream_t stream) {
  const int height = stack.height / planes;
  withSize<kMinRowFft, kMaxRowFft>(stack.width / 2, [&](auto m) {
    using Program = RowsInverse<decltype(m)::value>;
    launchProgram(Program{spectrum, stack, height, twiddles, maxBits}, divUp(height, Program::kRows), planes, stream,
                  "fusedFftRowsInverse");
  });
}

void runFusedFftFilterOnHost(Plane<const float> in, Plane<float> out, FreqMask mask, const float2* twiddles) {
  const int width = in.width, height = in.height;
  if (!fusedFftFilterSupports(width, height))
    throw std::invalid_argument("fused FFT: " + std::to_string(width) + "x" + std::to_string(height) +
                                " is not a power-of-two size it takes");
  float maxAbs = 0;  // as launchMaxFiniteAbs: the largest finite |sample|, its bits in the low word
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      if (std::isfinite(in(x, y))) maxAbs = std::max(maxAbs, std::fabs(in(x, y)));
  unsigned bits;
  std::memcpy(&bits, &maxAbs, sizeof bits);
  const unsigned long long maxBits = bits;
  std::vector<float2> spectrum(static_cast<std::size_t>(width / 2 + 1) * height);
  withSize<kMinRowFft, kMaxRowFft>(width / 2, [&](auto m) {
    using Program = RowsForward<decltype(m)::value>;
    runProgramOnHost(Program{in, height, spectrum.data(), twiddles, &maxBits}, divUp(height, Program::kRows), 1);
  });
  const float scale = 1.f / (static_cast<float>(width) * static_cast<float>(height));
  withSize<kMinColumnFft, kMaxColumnFft>(height, [&](auto h) {
    using Program = ColumnsFilter<decltype(h)::value>;
    const int columns = width / 2 + 1;
    runProgramOnHost(Program{spectrum.data(), width, columns, mask, scale, twiddles}, divUp(columns, Program::kColumns),
                     1);
  });
  withSize<kMinRowFft, kMaxRowFft>(width / 2, [&](auto m) {
    using Program = RowsInverse<decltype(m)::value>;
    runProgramOnHost(Program{spectrum.data(), out, height, twiddles, &maxBits}, divUp(height, Program::kRows), 1);
  });
}

}  // namespace gpulab::kernels
