// The kernels around cuFFT for FFT convolution and padded FFT filtering: border-extended padding
// into packed real buffers, cropping back with conversion, and the spectrum product.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/fft_filter.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

/// Where the padded buffer comes from: dst(u, v) = ext(u + originY, v + originX) for u < fillHeight,
/// v < fillWidth, and 0 elsewhere in the dstWidth x dstHeight plane. ext is the source plane
/// extended by `mode` (Constant: `value` outside).
struct PadRegion {
  int dstWidth = 0;
  int dstHeight = 0;
  int fillWidth = 0;
  int fillHeight = 0;
  int originX = 0;
  int originY = 0;
  BorderMode mode = BorderMode::Reflect101;
  double value = 0.0;
};

/// Pads `planes` planes of `srcStack` (srcStack.height rows each, plane c at row c*height) into
/// packed Real planes of dstWidth x dstHeight, one after the other. Async on `stream`.
template <class T, class Real>
void launchBorderPad(Plane<const T> srcStack, int planes, Real* dst, PadRegion region, cudaStream_t stream);

/// out(y, x) = src(y + offsetY, x + offsetX) for every pixel of `planes` planes of outStack's size
/// (plane c from row c * outPlaneRows of outStack: a window of a taller image's planes, or
/// outStack.height for a stack of its own), from packed srcWidth x srcHeight planes. u8 output is
/// rounded to nearest (ties to even) and saturated to 0..255; NaN becomes 0.
template <class Real, class T>
void launchCropConvert(const Real* src, int srcWidth, int srcHeight, int offsetX, int offsetY, int planes,
                       Plane<T> outStack, int outPlaneRows, cudaStream_t stream);

/// spectrum[p][i] *= kernelSpectrum[i] * scale for i < count, p < planes (planes `count` apart).
template <class Real>
void launchMultiplySpectra(Complex<Real>* spectrum, const Complex<Real>* kernelSpectrum, std::size_t count, int planes,
                           Real scale, cudaStream_t stream);

/// The kw x kh kernel wrapped onto a width x height torus with its tap (i, j) moved to
/// ((i - shiftY) mod height, (j - shiftX) mod width): dst(u, v) = sum of the taps k(i, j) with
/// i = u + shiftY and j = v + shiftX modulo the plane's sides. Every element of the packed plane
/// is written (no zeroing needed); taps that land on one element (a kernel larger than the plane)
/// add up, which is what a circular convolution of that size does with them.
template <class Real>
void launchWrapKernel(const Real* kernel, int kw, int kh, Real* dst, int width, int height, int shiftX, int shiftY,
                      cudaStream_t stream);

}  // namespace gpulab::kernels
