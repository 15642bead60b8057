// Interleaved host pixels <-> planar device images. gpulab keeps images planar on the GPU (one
// pitched plane per channel, planes stacked in one allocation) so every filter is a plane filter
// and alpha can pass through untouched; photos arrive interleaved (RGBRGB...).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// src: width*height pixels of `channels` interleaved T, tightly packed. dst: `channels` planes of
/// width x height stacked in one pitched allocation (plane c starts at row c*height).
template <class T>
void launchDeinterleave(const T* src, int channels, Plane<T> dstStack, cudaStream_t stream);

/// The inverse of launchDeinterleave.
template <class T>
void launchInterleave(Plane<const T> srcStack, int channels, T* dst, cudaStream_t stream);

/// The same with pitched interleaved rows: srcPitch / dstPitch bytes between the starts of two rows
/// of width x channels samples (a DeviceImage in DeviceLayout::Interleaved).
template <class T>
void launchDeinterleave(const T* src, std::size_t srcPitch, int channels, Plane<T> dstStack, cudaStream_t stream);
template <class T>
void launchInterleave(Plane<const T> srcStack, int channels, T* dst, std::size_t dstPitch, cudaStream_t stream);
/// A band of rows: src holds rows [firstRow, firstRow + rows) of the image, interleaved and packed;
/// they go to the same rows of every plane (the uploads' pipelined bands).
template <class T>
void launchDeinterleaveRows(const T* src, int channels, Plane<T> dstStack, int firstRow, int rows, cudaStream_t stream);
/// The inverse: rows [firstRow, firstRow + rows) of every plane to `dst`, interleaved and packed.
template <class T>
void launchInterleaveRows(Plane<const T> srcStack, int channels, T* dst, int firstRow, int rows, cudaStream_t stream);

}  // namespace gpulab::kernels
