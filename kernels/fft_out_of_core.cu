#include <algorithm>
#include <cstddef>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_out_of_core.cuh"

namespace gpulab::kernels {
namespace {

constexpr int kThreads = 256;

template <class Real>
__global__ void applyFreqMaskColumnsKernel(Complex<Real>* __restrict__ block, int columns, int kxOffset, int fftWidth,
                                           int fftHeight, FreqMask mask, Real scale) {
  const std::size_t count = static_cast<std::size_t>(columns) * static_cast<std::size_t>(fftHeight);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const int ky = static_cast<int>(i / static_cast<std::size_t>(columns));
    const int kx = kxOffset + static_cast<int>(i - static_cast<std::size_t>(ky) * columns);
    // As applyFreqMaskKernel: r2 from the bin's column and signed row, gain times the scale.
    const Real r2 = normalisedRadiusSquared<Real>(kx, signedFrequency(ky, fftHeight), fftWidth, fftHeight);
    const Real gain = freqGain<Real>(mask, r2) * scale;
    Complex<Real> v = block[i];
    v.x *= gain, v.y *= gain;
    block[i] = v;
  }
}

}  // namespace

template <class Real>
void launchApplyFreqMaskColumns(Complex<Real>* block, int columns, int kxOffset, int fftWidth, int fftHeight,
                                FreqMask mask, Real scale, cudaStream_t stream) {
  if (columns <= 0 || fftHeight <= 0) return;
  const std::size_t count = static_cast<std::size_t>(columns) * static_cast<std::size_t>(fftHeight);
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 1u << 20));
  applyFreqMaskColumnsKernel<Real>
      <<<blocks, kThreads, 0, stream>>>(block, columns, kxOffset, fftWidth, fftHeight, mask, scale);
  GPULAB_CHECK_LAUNCH("applyFreqMaskColumns");
}

template void launchApplyFreqMaskColumns<float>(Complex<float>*, int, int, int, int, FreqMask, float, cudaStream_t);
template void launchApplyFreqMaskColumns<double>(Complex<double>*, int, int, int, int, FreqMask, double, cudaStream_t);

}  // namespace gpulab::kernels
