#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/launch_support.hpp"
#include "gpulab/kernels/median.cuh"

namespace gpulab::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernel: a block of 32 x 8 outputs loads its (32 + 2r) x (8 + 2r) tile of keys, border-mapped,
// into shared memory; each thread then selects its pixel's median from the tile.

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kThreads = kBlockX * kBlockY;

std::size_t tileBytes(int radius) {
  return static_cast<std::size_t>(kBlockX + 2 * radius) * (kBlockY + 2 * radius) * sizeof(std::uint32_t);
}

template <class T, int R>
__global__ void __launch_bounds__(kThreads)
    medianKernel(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, std::uint32_t fillKey) {
  extern __shared__ std::uint32_t tile[];
  const int r = R > 0 ? R : radius;
  const int tileWidth = kBlockX + 2 * r;
  const int tileSize = tileWidth * (kBlockY + 2 * r);
  const int x0 = blockIdx.x * kBlockX - r;
  const int y0 = blockIdx.y * kBlockY - r;
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < tileSize; i += kThreads) {
    const int ty = i / tileWidth;
    const int tx = i - ty * tileWidth;
    const int gx = borderIndex(x0 + tx, in.width, mode);
    const int gy = borderIndex(y0 + ty, in.height, mode);
    tile[i] = gx < 0 || gy < 0 ? fillKey : medianKey(__ldg(in.row(gy) + gx));
  }
  __syncthreads();
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  const std::uint32_t* window = tile + threadIdx.y * tileWidth + threadIdx.x;
  std::uint32_t key;
  if constexpr (R > 0)
    key = forgetfulMedian<R>(window, tileWidth);
  else
    key = radixMedian(window, tileWidth, 2 * r + 1, sizeof(T) == 1 ? 8 : 32);
  out(x, y) = medianValue<T>(key);
}

// The forgetful path for u8: two outputs per thread in one 32-bit word, a 16-bit lane each, so
// every min/max of the network (__vminu2 / __vmaxu2, one VIMNMX.U16x2 each on sm_90) serves both.
// A block of kPackedX x kPackedY threads covers (2 kPackedX) x kPackedY outputs; its tile holds
// the samples as 16-bit values, so the pair of window samples at an even column offset is one
// aligned word and at an odd offset one __byte_perm of two.
constexpr int kPackedX = 32;
constexpr int kPackedY = 16;

template <int R>
__global__ void __launch_bounds__(kPackedX* kPackedY)
    medianPackedKernel(Plane<const std::uint8_t> in, Plane<std::uint8_t> out, BorderMode mode, std::uint8_t fill) {
  constexpr int kSide = 2 * R + 1;
  constexpr int kTileWidth = 2 * kPackedX + 2 * R;  // even: a row is kTileWidth / 2 words
  constexpr int kTileHeight = kPackedY + 2 * R;
  __shared__ std::uint32_t tileWords[kTileWidth / 2 * kTileHeight];
  std::uint16_t* tile = reinterpret_cast<std::uint16_t*>(tileWords);
  const int x0 = blockIdx.x * 2 * kPackedX - R;
  const int y0 = blockIdx.y * kPackedY - R;
  for (int i = threadIdx.y * kPackedX + threadIdx.x; i < kTileWidth * kTileHeight; i += kPackedX * kPackedY) {
    const int ty = i / kTileWidth;
    const int tx = i - ty * kTileWidth;
    const int gx = borderIndex(x0 + tx, in.width, mode);
    const int gy = borderIndex(y0 + ty, in.height, mode);
    tile[i] = gx < 0 || gy < 0 ? fill : __ldg(in.row(gy) + gx);
  }
  __syncthreads();
  const int x = blockIdx.x * 2 * kPackedX + 2 * threadIdx.x;
  const int y = blockIdx.y * kPackedY + threadIdx.y;
  if (x >= out.width || y >= out.height) return;
  const std::uint32_t* window = tileWords + threadIdx.y * (kTileWidth / 2) + threadIdx.x;
  const std::uint32_t pair = forgetfulSelect<R, std::uint32_t>(
      [&](int i) {
        const std::uint32_t* row = window + (i / kSide) * (kTileWidth / 2) + (i % kSide) / 2;
        return i % kSide % 2 == 0 ? row[0] : __byte_perm(row[0], row[1], 0x5432);
      },
      [](std::uint32_t a, std::uint32_t b) { return __vminu2(a, b); },
      [](std::uint32_t a, std::uint32_t b) { return __vmaxu2(a, b); });
  std::uint8_t* o = out.row(y) + x;
  o[0] = static_cast<std::uint8_t>(pair);
  if (x + 1 < out.width) o[1] = static_cast<std::uint8_t>(pair >> 16);
}

template <int R>
void launchPacked(Plane<const std::uint8_t> in, Plane<std::uint8_t> out, BorderMode mode, std::uint8_t fill,
                  cudaStream_t stream) {
  const dim3 grid(divUp(out.width, 2 * kPackedX), divUp(out.height, kPackedY));
  medianPackedKernel<R><<<grid, dim3(kPackedX, kPackedY), 0, stream>>>(in, out, mode, fill);
  GPULAB_CHECK_LAUNCH("medianPackedKernel");
}

// The histogram path (u8): a block of kHistColumns threads, one output column each, slides down
// kHistRows output rows keeping the histogram of its window in shared memory: 256 counts of
// `Count` (8-bit up to 15x15, whose 225 samples fit; 16-bit beyond), packed in 32-bit words laid
// out [bin / countsPerWord][thread], so the threads of a warp always touch 32 different banks.
// A row step adds the entering row and removes the leaving one with shared atomic adds on the
// packed words (no thread waits on them: each thread owns its counts) and tracks the median
// itself (Huang): m and lt = the number of window samples below m; the median moves from its last
// value until lt <= rank < lt + count[m], a few bins on a photo (or on noise), not a 256-bin scan.
constexpr int kHistColumns = 64;
constexpr int kHistRows = 64;

template <class Count>
struct HistogramCounts {
  static constexpr int kPerWord = 4 / static_cast<int>(sizeof(Count));
  static constexpr int kWords = 256 / kPerWord;
  static constexpr std::size_t kSharedBytes = kWords * kHistColumns * sizeof(std::uint32_t);
  std::uint32_t* words;

  __device__ std::uint32_t* word(int v) const { return words + (v / kPerWord) * kHistColumns; }
  /// count[v] += delta (the count stays within 0 .. max of Count, so no carry leaves its field).
  __device__ void add(int v, int delta) const {
    atomicAdd(word(v), static_cast<std::uint32_t>(delta) << (8 * sizeof(Count) * (v % kPerWord)));
  }
  __device__ int count(int v) const {
    constexpr std::uint32_t kMask = (1u << (8 * sizeof(Count))) - 1;
    return static_cast<int>((*word(v) >> (8 * sizeof(Count) * (v % kPerWord))) & kMask);
  }
  /// The sum of the counts of the word holding bins 4w .. 4w + 3 (8-bit) or 2w, 2w + 1 (16-bit).
  __device__ int wordSum(int w) const {
    const std::uint32_t packed = words[w * kHistColumns];
    if constexpr (sizeof(Count) == 1)
      return static_cast<int>(__dp4a(packed, 0x01010101u, 0u));
    else
      return static_cast<int>((packed & 0xffffu) + (packed >> 16));
  }
};

template <class Count, int R>
__global__ void __launch_bounds__(kHistColumns)
    medianHistogramKernel(Plane<const std::uint8_t> in, Plane<std::uint8_t> out, int radius, BorderMode mode,
                          std::uint8_t fill) {
  using Counts = HistogramCounts<Count>;
  extern __shared__ std::uint32_t histWords[];
  const Counts hist{histWords + threadIdx.x};
  for (int w = 0; w < Counts::kWords; ++w) hist.words[w * kHistColumns] = 0;
  const int x = blockIdx.x * kHistColumns + threadIdx.x;
  const int y0 = blockIdx.y * kHistRows;
  if (x >= out.width) return;  // no barrier below: each thread's counts are its own
  const int y1 = y0 + kHistRows < out.height ? y0 + kHistRows : out.height;
  const int r = R > 0 ? R : radius;
  const int side = 2 * r + 1;
  const int rank = side * side / 2;
  int m = 0, lt = 0;  // the running median and the number of window samples below it
  auto apply = [&](int v, int delta) {
    hist.add(v, delta);
    lt += v < m ? delta : 0;
  };
  auto start = [&] {  // the first median of a strip (m = lt = 0 before): a word at a time, then a bin
    int w = 0;
    for (int n = hist.wordSum(w); lt + n <= rank; n = hist.wordSum(++w)) lt += n;
    m = w * Counts::kPerWord;
    for (int n = hist.count(m); lt + n <= rank; n = hist.count(++m)) lt += n;
  };
  auto walk = [&] {
    while (lt > rank) lt -= hist.count(--m);
    for (int n = hist.count(m); lt + n <= rank; n = hist.count(++m)) lt += n;
  };
  if constexpr (R > 0) {
    // The window's columns once (border-mapped; -1: the constant fill), then two rows per step
    // loaded together before their updates.
    constexpr int kSide = 2 * R + 1;
    // Every load happens (at a valid column and row), the fill is selected afterwards: no branch
    // between the loads of a step.
    int xs[kSide];
    std::uint32_t fillColumns = 0;
    GPULAB_UNROLL
    for (int i = 0; i < kSide; ++i) {
      const int xi = borderIndex(x - R + i, in.width, mode);
      xs[i] = xi < 0 ? 0 : xi;
      fillColumns |= xi < 0 ? 1u << i : 0u;
    }
    auto load = [&](int yy, std::uint8_t(&v)[kSide]) {
      const int yi = borderIndex(yy, in.height, mode);
      const std::uint8_t* p = in.row(yi < 0 ? 0 : yi);
      const std::uint32_t fills = yi < 0 ? ~0u : fillColumns;
      GPULAB_UNROLL
      for (int i = 0; i < kSide; ++i) {
        const std::uint8_t sample = __ldg(p + xs[i]);
        v[i] = (fills >> i & 1u) != 0 ? fill : sample;
      }
    };
    std::uint8_t a[kSide], b[kSide];
    for (int yy = y0 - R; yy <= y0 + R; ++yy) {
      load(yy, a);
      GPULAB_UNROLL
      for (int i = 0; i < kSide; ++i) apply(a[i], 1);
    }
    start();
    out(x, y0) = static_cast<std::uint8_t>(m);
    for (int y = y0 + 1; y < y1; ++y) {
      load(y - R - 1, a);
      load(y + R, b);
      GPULAB_UNROLL
      for (int i = 0; i < kSide; ++i) apply(a[i], -1);
      GPULAB_UNROLL
      for (int i = 0; i < kSide; ++i) apply(b[i], 1);
      walk();
      out(x, y) = static_cast<std::uint8_t>(m);
    }
  } else {
    const bool interiorX = x - r >= 0 && x + r < in.width;
    auto row = [&](int yy, int delta) {
      const int yi = borderIndex(yy, in.height, mode);
      if (yi < 0) {
        hist.add(fill, delta * side);
        lt += fill < m ? delta * side : 0;
        return;
      }
      const std::uint8_t* p = in.row(yi);
      if (interiorX) {
#pragma unroll 4
        for (int dx = -r; dx <= r; ++dx) apply(__ldg(p + x + dx), delta);
      } else {
        for (int dx = -r; dx <= r; ++dx) {
          const int xi = borderIndex(x + dx, in.width, mode);
          apply(xi < 0 ? fill : __ldg(p + xi), delta);
        }
      }
    };
    for (int yy = y0 - r; yy <= y0 + r; ++yy) row(yy, 1);
    start();
    out(x, y0) = static_cast<std::uint8_t>(m);
    for (int y = y0 + 1; y < y1; ++y) {
      row(y - r - 1, -1);
      row(y + r, 1);
      walk();
      out(x, y) = static_cast<std::uint8_t>(m);
    }
  }
}

template <class Count, int R>
void launchHistogram(Plane<const std::uint8_t> in, Plane<std::uint8_t> out, int radius, BorderMode mode,
                     std::uint8_t fill, cudaStream_t stream) {
  const dim3 grid(divUp(out.width, kHistColumns), divUp(out.height, kHistRows));
  medianHistogramKernel<Count, R>
      <<<grid, kHistColumns, HistogramCounts<Count>::kSharedBytes, stream>>>(in, out, radius, mode, fill);
  GPULAB_CHECK_LAUNCH("medianHistogramKernel");
}

void launchHistogramMedian(Plane<const std::uint8_t> in, Plane<std::uint8_t> out, int radius, BorderMode mode,
                           std::uint8_t fill, cudaStream_t stream) {
  using std::uint16_t, std::uint8_t;
  switch (radius) {  // 8-bit counts up to 15x15 (225 samples), 16-bit up to 63x63 (3969)
    case 1:
      return launchHistogram<uint8_t, 1>(in, out, radius, mode, fill, stream);
    case 2:
      return launchHistogram<uint8_t, 2>(in, out, radius, mode, fill, stream);
    case 3:
      return launchHistogram<uint8_t, 3>(in, out, radius, mode, fill, stream);
    case 4:
      return launchHistogram<uint8_t, 4>(in, out, radius, mode, fill, stream);
    case 5:
      return launchHistogram<uint8_t, 5>(in, out, radius, mode, fill, stream);
    case 6:
      return launchHistogram<uint8_t, 6>(in, out, radius, mode, fill, stream);
    case 7:
      return launchHistogram<uint8_t, 7>(in, out, radius, mode, fill, stream);
    default:
      return launchHistogram<uint16_t, 0>(in, out, radius, mode, fill, stream);
  }
}

template <class T, int R>
void launchKernel(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, std::uint32_t fillKey,
                  cudaStream_t stream) {
  const std::size_t shared = tileBytes(radius);
  auto kernel = medianKernel<T, R>;
  if (shared > 48 * 1024)
    GPULAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  const dim3 grid(divUp(out.width, kBlockX), divUp(out.height, kBlockY));
  kernel<<<grid, dim3(kBlockX, kBlockY), shared, stream>>>(in, out, radius, mode, fillKey);
  GPULAB_CHECK_LAUNCH("medianKernel");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host side

MedianPath resolveMedianPath(MedianPath path, int radius, bool eightBit) {
  if (path != MedianPath::Auto) return path;
  // Measured on an H100 (6000x4000 RGB u8 noise, 3 planes): forgetful (two pixels a thread) 3x3
  // 0.33 ms, 5x5 0.96, 7x7 3.00; histogram 3x3 7.74, 5x5 4.25, 7x7 3.04, 9x9 2.55, 15x15 2.56;
  // f32 4096^2: forgetful 7x7 1.30 ms; radix 15x15 23.4 ms (the issue-filters run).
  if (radius <= 3) return MedianPath::Forgetful;
  return eightBit ? MedianPath::Histogram : MedianPath::Radix;
}

template <class T>
void launchMedian(Plane<const T> in, Plane<T> out, int radius, BorderMode mode, T borderValue, MedianPath path,
                  cudaStream_t stream) {
  if (radius < 0 || radius > kMaxMedianRadius)
    throw std::invalid_argument("median radius " + std::to_string(radius) + " is not allowed: use 0 to " +
                                std::to_string(kMaxMedianRadius));
  if (in.width != out.width || in.height != out.height || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("the median needs input and output planes of one nonempty size");
  if (planesOverlap(in, out)) throw std::invalid_argument("the median cannot run in place");
  path = resolveMedianPath(path, radius, sizeof(T) == 1);
  if (path == MedianPath::Forgetful && radius > 3)
    throw std::invalid_argument("the forgetful median takes sizes up to 7x7, not " + std::to_string(2 * radius + 1) +
                                "x" + std::to_string(2 * radius + 1) + ": use the radix or histogram path");
  if (path == MedianPath::Histogram && sizeof(T) != 1)
    throw std::invalid_argument("the histogram median takes u8 images only: use the forgetful or radix path");
  if (radius == 0) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, in.width * sizeof(T), in.height,
                                        cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if constexpr (sizeof(T) == 1) {
    if (path == MedianPath::Histogram) {
      return launchHistogramMedian(in, out, radius, mode, borderValue, stream);
    }
    if (path == MedianPath::Forgetful) {
      switch (radius) {
        case 1:
          return launchPacked<1>(in, out, mode, borderValue, stream);
        case 2:
          return launchPacked<2>(in, out, mode, borderValue, stream);
        default:
          return launchPacked<3>(in, out, mode, borderValue, stream);
      }
    }
  }
  const std::uint32_t fillKey = medianKey(borderValue);
  if (path == MedianPath::Radix) return launchKernel<T, 0>(in, out, radius, mode, fillKey, stream);
  if constexpr (sizeof(T) != 1) {  // u8 took its packed kernel above
    switch (radius) {
      case 1:
        return launchKernel<T, 1>(in, out, radius, mode, fillKey, stream);
      case 2:
        return launchKernel<T, 2>(in, out, radius, mode, fillKey, stream);
      default:
        return launchKernel<T, 3>(in, out, radius, mode, fillKey, stream);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Instantiations

template void launchMedian<std::uint8_t>(Plane<const std::uint8_t>, Plane<std::uint8_t>, int, BorderMode, std::uint8_t,
                                         MedianPath, cudaStream_t);
template void launchMedian<float>(Plane<const float>, Plane<float>, int, BorderMode, float, MedianPath, cudaStream_t);

}  // namespace gpulab::kernels
