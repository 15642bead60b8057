// cuFFT failures as exceptions (CufftError, fft/fft.hpp), for the engine's calls into cuFFT.
//   GPULAB_CUFFT_CHECK(cufftExecR2C(plan, in, out));   // throws gpulab::CufftError naming the call
#pragma once

#include <cufft.h>

#include "gpulab/fft/fft.hpp"

namespace gpulab {

namespace detail {
[[noreturn]] void throwCufftError(const char* call, const char* file, int line, int result);
}  // namespace detail

}  // namespace gpulab

#define GPULAB_CUFFT_CHECK(call)                                                                            \
  do {                                                                                                      \
    const cufftResult gpulab_cufft_status_ = (call);                                                        \
    if (gpulab_cufft_status_ != CUFFT_SUCCESS)                                                              \
      ::gpulab::detail::throwCufftError(#call, __FILE__, __LINE__, static_cast<int>(gpulab_cufft_status_)); \
  } while (0)
