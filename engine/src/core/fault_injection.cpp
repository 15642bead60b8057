// TEST ONLY: see gpulab/core/fault_injection.hpp.
#include "gpulab/core/fault_injection.hpp"

#include "gpulab/kernels/fault_injection.cuh"

namespace gpulab::testing {

std::string_view toString(GpuFault fault) noexcept {
  switch (fault) {
    case GpuFault::IllegalAddress:
      return "illegal-address";
    case GpuFault::MisalignedAddress:
      return "misaligned-address";
    case GpuFault::Trap:
      return "trap";
  }
  return "unknown";
}

void injectGpuFault(GpuContext& gpu, GpuFault fault) {
  Stream& stream = gpu.stream();
  gpu.scratch().reserve(64);  // a real allocation for the misaligned write
  const auto kind = fault == GpuFault::IllegalAddress      ? kernels::FaultKernel::IllegalAddress
                    : fault == GpuFault::MisalignedAddress ? kernels::FaultKernel::MisalignedAddress
                                                           : kernels::FaultKernel::Trap;
  kernels::launchFault(kind, gpu.scratch().data(), stream);
}

}  // namespace gpulab::testing
