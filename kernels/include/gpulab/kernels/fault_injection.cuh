// TEST ONLY: a kernel that faults on purpose, so the tests can prove that gpulab recovers from a
// sticky GPU error (gpulab/core/fault_injection.hpp is the engine's door to it). Nothing else calls it.
#pragma once

#include <cuda_runtime_api.h>

namespace gpulab::kernels {

enum class FaultKernel : int {
  IllegalAddress = 0,     ///< writes to an address no allocation has: cudaErrorIllegalAddress
  MisalignedAddress = 1,  ///< writes an int one byte into `valid`: cudaErrorMisalignedAddress
  Trap = 2,               ///< executes a trap instruction: cudaErrorLaunchFailure
};

/// Enqueues one thread of the faulting kernel on `stream` (asynchronous: the fault shows at the next
/// call that waits for the stream). `valid` must point to at least 8 bytes of device memory.
void launchFault(FaultKernel kind, void* valid, cudaStream_t stream);

}  // namespace gpulab::kernels
