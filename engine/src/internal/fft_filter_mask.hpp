// The FFT filter's mask as the kernels take it (fft_filter.cpp), for the out-of-core run
// (tiling/fft_out_of_core.cpp), so both multiply by the same gains.
#pragma once

#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/kernels/fft_filter.cuh"

namespace gpulab {

/// The kernels' FreqMask of a (validated) spec: the one FftFilter applies.
kernels::FreqMask fftFilterMask(const FftFilterSpec& spec);

}  // namespace gpulab
