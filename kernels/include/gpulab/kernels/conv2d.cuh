// General 2D convolution of planes, any kernel from 1x1 to kConv2DMaxKernelSize square, odd or even,
// with every border mode. The launcher works in correlation form:
//
//   out(x, y) = sum_{p < kh, q < kw} w[p * kw + q] * in(x - anchorX + q, y - anchorY + p)
//
// where in() outside the plane follows the border mode. The caller flips the kernel for a true
// convolution and picks the anchor for the output mode (same / full / valid); the output plane may
// be larger or smaller than the input. u8 and f32 accumulate in float, f64 in double; u8 results
// are rounded to nearest (ties to even) and saturated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// The largest kernel width and height the direct convolution takes.
inline constexpr int kConv2DMaxKernelSize = 127;
/// Kernels with at most this many coefficients travel inside the launch (the constant bank);
/// larger ones are read from a device copy that the caller keeps.
inline constexpr int kConv2DMaxLaunchCoefficients = 2048;

/// float for u8 and f32 samples, double for f64.
template <class T>
using Conv2DAccumulator = std::conditional_t<std::is_same_v<T, double>, double, float>;

struct Conv2DGeometry {
  int kernelWidth = 1;
  int kernelHeight = 1;
  int anchorX = 0;  ///< input column read by coefficient column 0 is x - anchorX
  int anchorY = 0;
  BorderMode border = BorderMode::Reflect101;
};

/// Threads per block and the output tile each block computes, as the launcher picks them.
struct Conv2DLaunchShape {
  int blockX = 0;
  int blockY = 0;
  int tileWidth = 0;   ///< outputs per block along x
  int tileHeight = 0;  ///< outputs per block along y
  std::size_t sharedBytes = 0;
};

/// The largest block (32x8 threads) of the shared-memory tile code whose input tile with its halo
/// (plus a padded copy of the coefficients, for the sizes without a compile-time variant, up to
/// 16 KiB of them) fits in `sharedBytesLimit`; blockX == 0 when not even the smallest does.
/// (3x3 on 16-byte aligned planes runs a streaming kernel without a tile instead.)
template <class T>
Conv2DLaunchShape conv2DLaunchShape(int kernelWidth, int kernelHeight, std::size_t sharedBytesLimit);

/// Convolves `planes` planes: plane c of inStack starts at row c * inStack.height, plane c of
/// outStack at row c * outStack.height. `weights`: kernelHeight x kernelWidth coefficients on the host,
/// row-major, copied into the launch when there are at most kConv2DMaxLaunchCoefficients.
/// `deviceWeights`: the same coefficients in device memory, required for larger kernels (ignored
/// otherwise). `borderValue` is used for BorderMode::Constant. Asynchronous on `stream`; throws
/// std::invalid_argument if the tile does not fit in the device's shared memory.
template <class T>
void launchConv2D(Plane<const T> inStack, Plane<T> outStack, int planes, const Conv2DGeometry& geometry,
                  const Conv2DAccumulator<T>* weights, const Conv2DAccumulator<T>* deviceWeights, T borderValue,
                  cudaStream_t stream);

/// Runs the very tile code of launchConv2D on the host, block by block and thread by thread, with
/// the launch shape conv2DLaunchShape picks for `sharedBytesLimit`. Host pointers. Slow; it lets the
/// tiling, halo and border logic be tested on machines without a GPU.
template <class T>
void runConv2DTilesOnHost(Plane<const T> inStack, Plane<T> outStack, int planes, const Conv2DGeometry& geometry,
                          const Conv2DAccumulator<T>* weights, T borderValue, std::size_t sharedBytesLimit);

}  // namespace gpulab::kernels
