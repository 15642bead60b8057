// Fuzz target: convolution kernel files. Text goes to parseKernelText; bytes that start like a .npy
// go through loadKernelFile from a scratch file (its NumPy branch: channels, type, finiteness).
// Allowed: KernelFileError. Checked: a parsed kernel has width x height finite values, and
// formatKernelText writes text that parses back to the same doubles.
#include <cmath>
#include <cstdint>
#include <string>

#include "../fuzz_support.hpp"
#include "gpulab/filters/kernel_file.hpp"

namespace {

void check(const gpulab::Kernel2D& kernel) {
  using namespace gpulab;
  if (kernel.width < 1 || kernel.height < 1 ||
      kernel.values.size() != static_cast<std::size_t>(kernel.width) * static_cast<std::size_t>(kernel.height))
    fuzz::fail("the kernel's value count does not match its shape");
  for (double v : kernel.values)
    if (!std::isfinite(v)) fuzz::fail("the kernel holds a value that is not finite");
  if (parseKernelText(formatKernelText(kernel), "the formatted kernel") != kernel)
    fuzz::fail("parseKernelText(formatKernelText(k)) differs from k");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulab;
  const std::string bytes(fuzz::asText(data, size));
  try {
    if (bytes.starts_with("\x93NUMPY"))
      check(loadKernelFile(fuzz::writeScratchFile(bytes, ".npy")));
    else
      check(parseKernelText(bytes, "the fuzz input"));
  } catch (const KernelFileError&) {
  }
  return 0;
}
