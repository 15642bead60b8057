// The sweep path of the box blur (box_blur.cuh, "Sweep"), between box_blur.cu and box_blur_sweep.cu.
// Private to the kernels library.
#pragma once

#include <cuda_runtime_api.h>

#include "gpulab/kernels/box_blur.cuh"

namespace gpulab::kernels::sweep {

/// boxBlurMaxSweepRadius without the channel check (channels 1..4).
template <class T>
int maxRadius(int channels);

/// The sweep on rows of `channels` interleaved channels (in.width, out.width count pixels). Planes
/// checked by the caller; radius 1..maxRadius(channels). Asynchronous on `stream`.
template <class T>
void launch(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, cudaStream_t stream);

/// The same block code on the host, thread by thread between the barriers, with the tiling
/// `launch` picks for a GPU holding `residentBlocks` blocks at once.
template <class T>
void emulate(Plane<const T> in, Plane<T> out, int channels, int radius, BorderMode mode, T fill, int residentBlocks);

}  // namespace gpulab::kernels::sweep
