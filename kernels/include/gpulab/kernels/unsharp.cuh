// Unsharp mask's last step on planes: out = in + amount * (in - blurred) where |in - blurred| >=
// threshold, else in; the blurred plane is the Gaussian in float (launchGaussianRows/Columns with
// T = float output). 8-bit results are rounded to nearest and saturated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// The unsharp value of one sample, in float: the same expression on host and device.
GPULAB_HD float unsharpValue(float in, float blurred, float amount, float threshold) {
  const float diff = in - blurred;
  const float magnitude = diff < 0.f ? -diff : diff;
  return magnitude >= threshold ? in + amount * diff : in;
}

/// out = unsharpValue(in, blurred, amount, threshold) per sample. Planes of one size; out may not
/// overlap blurred. Asynchronous on `stream`.
template <class T>
void launchUnsharpCombine(Plane<const T> in, Plane<const float> blurred, Plane<T> out, float amount, float threshold,
                          cudaStream_t stream);

}  // namespace gpulab::kernels
