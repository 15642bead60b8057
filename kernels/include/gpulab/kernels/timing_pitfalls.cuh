// Kernels of the timing-pitfalls lab: busy work whose duration grows with `iterations` (a chain of
// dependent multiply-adds per element, so the compiler cannot shorten it), and a probe kernel that
// nothing else launches, so that its first launch in a process loads its module. Asynchronous on
// `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels {

/// data[i] = iterations steps of v = v * 0.999 + 0.001 from data[i]. n == 0 launches nothing.
void launchBusyWork(float* data, std::size_t n, int iterations, cudaStream_t stream);

/// One block of 32 threads writing data[threadIdx.x] = threadIdx.x (data holds 32 floats).
void launchColdStartProbe(float* data, cudaStream_t stream);

}  // namespace gpulab::kernels
