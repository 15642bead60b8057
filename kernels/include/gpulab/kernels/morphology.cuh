// Grey-level erosion (minimum) and dilation (maximum) of planes over a structuring element given
// as offsets from the anchor, every border mode at any distance (Constant: `fill`, which the caller
// sets to the type's largest value for erosion and smallest for dilation to make the border never
// win, OpenCV's default).
//
//   rectangle: launchMorphRows then launchMorphColumns (a rectangle's extreme is separable);
//   any shape: launchMorphSpans, one span of columns per element row (an ellipse).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// out(x, y) = min (or max, `dilate`) of in(x + d, y) for d in [first, last]. Planes of one size,
/// distinct. Asynchronous on `stream`.
template <class T>
void launchMorphRows(Plane<const T> in, Plane<T> out, int first, int last, bool dilate, BorderMode mode, T fill,
                     cudaStream_t stream);

/// out(x, y) = min (or max) of in(x, y + d) for d in [first, last].
template <class T>
void launchMorphColumns(Plane<const T> in, Plane<T> out, int first, int last, bool dilate, BorderMode mode, T fill,
                        cudaStream_t stream);

/// out(x, y) = min (or max) of in(x + dx, y + dy) over the element: for each element row i in
/// [0, rows), dy = i - anchorY and dx in [spans[2i] - anchorX, spans[2i + 1] - anchorX) (an empty
/// span adds nothing). `spans`: 2 * rows ints in device memory.
template <class T>
void launchMorphSpans(Plane<const T> in, Plane<T> out, const int* spans, int rows, int anchorX, int anchorY,
                      bool dilate, BorderMode mode, T fill, cudaStream_t stream);

}  // namespace gpulab::kernels
