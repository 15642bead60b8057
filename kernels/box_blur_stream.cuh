// The stream kernel of the box blur's sweep path (box_blur_stream.cu): f32 planes up to radius
// kMaxRadius. Between box_blur.cu and box_blur_stream.cu; private to the kernels library.
#pragma once

#include <cuda_runtime_api.h>

#include "gpulab/kernels/box_blur.cuh"

namespace gpulab::kernels::boxstream {

/// The largest radius the stream kernel takes (a window of 31 x 31).
constexpr int kMaxRadius = 15;

/// Whether the sweep path runs the stream kernel for an f32 plane of this radius: radius 1 to
/// kMaxRadius, unless GPULAB_BOX_SWEEP_KERNEL=words asks for the word kernel (box_blur_sweep.cu).
bool takes(int radius);

/// The box blur of an f32 plane, radius 1..kMaxRadius (planes checked by the caller). Asynchronous
/// on `stream`.
void launch(Plane<const float> in, Plane<float> out, int radius, BorderMode mode, float fill, cudaStream_t stream);

/// The same block code on the host, thread by thread between the barriers, with the segments
/// `launch` plans for a GPU holding `residentBlocks` blocks at once.
void emulate(Plane<const float> in, Plane<float> out, int radius, BorderMode mode, float fill, int residentBlocks);

}  // namespace gpulab::kernels::boxstream
