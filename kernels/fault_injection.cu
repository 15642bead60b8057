// TEST ONLY: see gpulab/kernels/fault_injection.cuh.
#include <cstdint>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fault_injection.cuh"

namespace gpulab::kernels {

namespace {

__global__ void faultKernel(int kind, unsigned char* valid) {
  if (kind == static_cast<int>(FaultKernel::IllegalAddress)) {
    // The first page is never mapped on the device.
    *reinterpret_cast<volatile int*>(static_cast<std::uintptr_t>(16)) = 1;
  } else if (kind == static_cast<int>(FaultKernel::MisalignedAddress)) {
    *reinterpret_cast<volatile int*>(valid + 1) = 1;
  } else {
    __trap();
  }
}

}  // namespace

void launchFault(FaultKernel kind, void* valid, cudaStream_t stream) {
  faultKernel<<<1, 1, 0, stream>>>(static_cast<int>(kind), static_cast<unsigned char*>(valid));
  GPULAB_CHECK_LAUNCH("faultKernel");
}

}  // namespace gpulab::kernels
