// TEST ONLY: see gpulab/core/fault_injection.hpp.
#include "gpulab/core/fault_injection.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "gpulab/core/relaunch.hpp"
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

bool injectGpuFaultFromEnvironment(GpuContext& gpu) {
  static std::atomic<bool> spent{false};
  if (spent.load(std::memory_order_relaxed)) return false;  // the common case: one load, no getenv
  const char* mode = std::getenv(kInjectGpuFaultVariable);
  const bool once = mode != nullptr && std::strcmp(mode, "once") == 0;
  const bool always = mode != nullptr && std::strcmp(mode, "always") == 0;
  if ((!once && !always) || (once && faultRestarts() > 0) || spent.exchange(true)) {
    spent = true;
    return false;
  }
  injectGpuFault(gpu);
  return true;
}

}  // namespace gpulab::testing
