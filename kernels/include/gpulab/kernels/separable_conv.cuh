// Separable 2D convolution of planes in one fused pass: a kernel of rank 1 to kSeparableMaxRank,
//
//   w(p, q) = sum_{t < rank} col[t][p] * row[t][q]        (p < kh rows, q < kw columns)
//
// in correlation form, exactly as launchConv2D (conv2d.cuh) defines it:
//
//   out(x, y) = sum_{p < kh, q < kw} w(p, q) * in(x - anchorX + q, y - anchorY + p)
//
// where in() outside the plane follows the border mode (Constant: `borderValue` wherever the row
// or the column is outside). Two kernels, each one read and one write of the image in DRAM (the
// halo comes from L2):
//   - stream (rank 1, one channel, 9 to 32 taps on the longer side): a block walks down a strip of
//     128 columns through a segment of rows, runs the row pass of each input row once, and keeps
//     each column's sums in registers, storing an output row as soon as it is whole;
//   - tile (every other kernel): a block copies its output tile's input with the halo into shared
//     memory (as float, border-mapped), runs the 1-D pass along rows into a second shared tile, the
//     1-D pass along columns from it (per term, summing the terms in registers), and writes its
//     outputs once.
// Both form the same sums in the same order.
//
// Sums are in float, in tap order (row pass first); u8 results are rounded to nearest (ties to
// even) and saturated as launchConv2D's. Interleaved rows: with C > 1 a plane row holds width
// pixels of C samples, sample (x, c) at row[x * C + c], each channel convolved on its own.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// The largest kernel width and height (the number of taps of either 1-D pass).
inline constexpr int kSeparableMaxTaps = 127;
/// The most separable terms one launch sums (a rank-3 kernel).
inline constexpr int kSeparableMaxRank = 3;
/// The most taps a side on interleaved rows (C > 1), where only rank-1 kernels run.
inline constexpr int kSeparableMaxInterleavedTaps = 32;

struct SeparableGeometry {
  int kernelWidth = 1;   ///< taps along a row (q)
  int kernelHeight = 1;  ///< taps along a column (p)
  int anchorX = 0;
  int anchorY = 0;
  int rank = 1;  ///< terms, 1..kSeparableMaxRank
  BorderMode border = BorderMode::Reflect101;
  /// rowWeights[t][q], q < kernelWidth, and colWeights[t][p], p < kernelHeight, for t < rank.
  float rowWeights[kSeparableMaxRank][kSeparableMaxTaps] = {};
  float colWeights[kSeparableMaxRank][kSeparableMaxTaps] = {};
};

/// Shared memory one block of launchSeparableConv<T, C> takes for this geometry.
template <int C = 1>
std::size_t separableSharedBytes(int kernelWidth, int kernelHeight);

/// Convolves `planes` planes: plane i of inStack starts at row i * inStack.height, plane i of
/// outStack at row i * outStack.height (widths in pixels of C samples). Asynchronous on `stream`;
/// std::invalid_argument for a geometry out of range (taps, rank) or a tile that does not fit in
/// the device's shared memory. Instantiated for T = std::uint8_t and float, C = 1 (kernels up to
/// kSeparableMaxTaps) and C = 3 (rank 1, kernels up to 32 taps).
template <class T, int C = 1>
void launchSeparableConv(Plane<const T> inStack, Plane<T> outStack, int planes, const SeparableGeometry& geometry,
                         float borderValue, cudaStream_t stream);

/// Runs the very block code of launchSeparableConv (the stream or the tile kernel, as it chooses)
/// on the host, block by block and thread by thread (each phase for every thread, as the barriers
/// between them order it). Host pointers.
/// Slow; it lets the tiling, halo, border and output-mode logic be tested without a GPU.
template <class T, int C = 1>
void runSeparableConvTilesOnHost(Plane<const T> inStack, Plane<T> outStack, int planes,
                                 const SeparableGeometry& geometry, float borderValue);

}  // namespace gpulab::kernels
