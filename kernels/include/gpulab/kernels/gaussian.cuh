// Separable Gaussian blur on planes: one pass along rows into a float plane, one along columns
// into the output type. The weights (2r + 1 floats, in device memory, summing to 1) are the
// caller's; every border mode at any distance (gpulab/kernels/border.cuh).
//
//   launchGaussianRows<std::uint8_t>(in, tmp, weights, r, mode, fill, stream);  // T -> float
//   launchGaussianColumns<std::uint8_t>(tmp, out, weights, r, mode, fill, stream);  // float -> T
//
// Sums are in float, in tap order; an 8-bit result is rounded to nearest and saturated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// tmp(x, y) = sum_k weights[k] * in(x + k - radius, y); outside the image per `mode` (Constant:
/// `fill`). Planes of one size, tmp distinct from in. Asynchronous on `stream`.
template <class T>
void launchGaussianRows(Plane<const T> in, Plane<float> tmp, const float* weights, int radius, BorderMode mode,
                        float fill, cudaStream_t stream);

/// out(x, y) = sum_k weights[k] * tmp(x, y + k - radius), rounded and saturated for 8-bit. Rows
/// outside the image read `fill` for Constant (a row of fill blurs to fill: the weights sum to 1).
template <class T>
void launchGaussianColumns(Plane<const float> tmp, Plane<T> out, const float* weights, int radius, BorderMode mode,
                           float fill, cudaStream_t stream);

}  // namespace gpulab::kernels
