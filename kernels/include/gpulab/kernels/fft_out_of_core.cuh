// The FFT filter's frequency mask on a block of half-spectrum columns, for the out-of-core 2D FFT
// (engine/src/tiling/fft_out_of_core.cpp): the same gain expression as launchApplyFreqMask
// (fft_filter.cuh), evaluated in the same precision, so each bin is multiplied by the very same
// factor as in the whole-image pipeline.
#pragma once

#include <cuda_runtime_api.h>

#include "gpulab/kernels/fft_filter.cuh"

namespace gpulab::kernels {

/// block(j, ky) *= freqGain(r2(kxOffset + j, ky)) * scale for j < columns, ky < fftHeight; the block
/// holds fftHeight rows of `columns` complex values, packed (bins kxOffset..kxOffset+columns-1 of
/// every row of an fftWidth x fftHeight transform's half spectrum). Async on `stream`.
template <class Real>
void launchApplyFreqMaskColumns(Complex<Real>* block, int columns, int kxOffset, int fftWidth, int fftHeight,
                                FreqMask mask, Real scale, cudaStream_t stream);

}  // namespace gpulab::kernels
