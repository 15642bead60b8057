// Matrix product kernels of the GPU lab: C = A * B with A M x K, B K x N and C M x N, all row-major
// and tightly packed (the leading dimension is the number of columns). Any sizes from 1 up, not only
// multiples of a tile; T is float or double. Pointers are device memory; C must not alias A or B.
// Every launcher is asynchronous on `stream` and throws gpulab::CudaError if the launch fails.
#pragma once

#include <cuda_runtime_api.h>

namespace gpulab::kernels {

/// One thread per element of C, reading A and B straight from global memory.
template <class T>
void launchMatmulNaive(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream);

/// 32x32 tiles of A and B staged in shared memory; one thread per element of C.
template <class T>
void launchMatmulTiled(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream);

/// Register blocking: 128x128 tiles of C per block of 256 threads, each thread accumulating 8x8
/// elements in registers from 8-deep slices of A and B that are double-buffered in shared memory.
/// Global loads are 16-byte vectors where rows allow it (K, resp. N, a multiple of 4).
template <class T>
void launchMatmulRegBlock(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream);

}  // namespace gpulab::kernels
