// Elementwise kernels of the GPU lab over n elements of float or double in device memory.
// Each product and sum is rounded on its own (no fused multiply-add), so results are bit-identical
// to the plain CPU loop `out[i] = x[i] * x[i] + 2 * y[i]`. `out` must not overlap `x` or `y`.
// Asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels {

enum class ElementwiseOp {
  SquarePlusTwice,  ///< out = x*x + 2*y
  Axpy              ///< out = a*x + y
};

/// `a` is used by Axpy only. n == 0 launches nothing.
template <class T>
void launchElementwise(ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n, cudaStream_t stream);

}  // namespace gpulab::kernels
