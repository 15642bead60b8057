// Matrix transpose kernels of the GPU lab: out (cols x rows) = transpose of in (rows x cols), both
// row-major and tightly packed, T float or double, any sizes from 1 up. Not in place: `out` must not
// overlap `in`. Asynchronous on `stream`; a failed launch throws gpulab::CudaError.
#pragma once

#include <cuda_runtime_api.h>

namespace gpulab::kernels {

enum class TransposeVariant {
  Naive,       ///< reads coalesced, writes strided by `rows` elements
  Tiled,       ///< 32x32 tile through shared memory: both sides coalesced, column reads of the tile
               ///< hit one bank 32 times
  TiledPadded  ///< the same tile with one extra column, so a tile column spans all 32 banks
};

template <class T>
void launchTranspose(TransposeVariant variant, const T* in, T* out, int rows, int cols, cudaStream_t stream);

}  // namespace gpulab::kernels
