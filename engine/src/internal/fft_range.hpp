// Range scaling for the FFT paths (FftFilter, FftConvolver): a float transform of finite samples
// near FLT_MAX overflows in its sums (3e38 x 64 pixels is inf, and inf - inf is NaN), and denormal
// samples lose their digits. The paths therefore scale the input by 2^-e, where 2^e is the order of
// its largest finite |value|, transform, and scale the result by 2^e. Powers of two are exact, and e
// is 0 whenever the largest |value| lies in [2^-64, 2^64), so every ordinary image runs exactly as
// before (bit for bit, with no extra pass but one max reduction of f32/f64 input). Where the true
// output itself exceeds the type's range (an ideal low-pass overshooting 3.4e38), it is inf: no
// scaling can store it.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <opencv2/core.hpp>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/fft_filter.cuh"
#include "internal/kernel_views.hpp"

namespace gpulab {

using kernels::kFftRangeLimitExponent;

/// The exponent e to scale by 2^-e before the transform (and 2^e after) for a largest finite
/// |value| of `maxAbs`; 0 for ordinary ranges, zero and non-finite values.
inline int fftRangeExponent(double maxAbs) { return kernels::fftRangeExponentOf(maxAbs); }

/// The largest finite |value| of a one-channel Mat of any depth (NaN and infinities skipped).
inline double finiteMaxAbs(const cv::Mat& plane) {
  cv::Mat values;
  plane.convertTo(values, CV_64F);
  double best = 0;
  for (int y = 0; y < values.rows; ++y) {
    const double* row = values.ptr<double>(y);
    for (int x = 0; x < values.cols * values.channels(); ++x)
      if (std::isfinite(row[x])) best = std::max(best, std::fabs(row[x]));
  }
  return best;
}

/// Every value of a CV_32F or CV_64F Mat times 2^exponent, in place (kernels::descalePow2: exact
/// unless the product under- or overflows, no 2^exponent ever formed in float, and a result that
/// rounding alone pushed past the largest finite value is that value, not inf).
inline void scaleMatPow2(cv::Mat& m, int exponent) {
  for (int y = 0; y < m.rows; ++y) {
    const int n = m.cols * m.channels();
    if (m.depth() == CV_64F) {
      double* row = m.ptr<double>(y);
      for (int x = 0; x < n; ++x) row[x] = kernels::descalePow2(row[x], exponent);
    } else {
      float* row = m.ptr<float>(y);
      for (int x = 0; x < n; ++x) row[x] = kernels::descalePow2(row[x], exponent);
    }
  }
}

/// All `planes` planes of `image` as one Plane of planes * height rows.
template <class T>
kernels::Plane<const T> planesOf(const DeviceImage& image, int planes) {
  kernels::Plane<const T> view = planeOf<T>(image, 0);
  view.height = image.height() * planes;
  return view;
}

/// The largest finite |sample| of the first `planes` planes of a device image; 0 for u8 and u16
/// images (whose range never needs scaling) without touching the GPU. Waits for gpu's stream: the
/// scale is chosen on the host.
inline double deviceFiniteMaxAbs(GpuContext& gpu, const DeviceImage& in, int planes, DeviceBuffer& scratch) {
  if (in.type() != PixelType::F32 && in.type() != PixelType::F64) return 0;
  cudaStream_t stream = gpu.stream();
  if (scratch.size() < sizeof(unsigned long long)) {
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    scratch.reserve(sizeof(unsigned long long));
  }
  auto* bits = scratch.as<unsigned long long>();
  GPULAB_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof *bits, stream));
  if (in.type() == PixelType::F32)
    kernels::launchMaxFiniteAbs<float>(planesOf<float>(in, planes), bits, stream);
  else
    kernels::launchMaxFiniteAbs<double>(planesOf<double>(in, planes), bits, stream);
  unsigned long long host = 0;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(&host, bits, sizeof host, cudaMemcpyDeviceToHost, stream));
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (in.type() == PixelType::F32) {
    const auto low = static_cast<std::uint32_t>(host);
    float value;
    std::memcpy(&value, &low, sizeof value);
    return value;
  }
  double value;
  std::memcpy(&value, &host, sizeof value);
  return value;
}

/// dst = src * 2^exponent over every plane (f32 or f64 images of one shape; dst may be src).
inline void scaleDeviceImage(GpuContext& gpu, const DeviceImage& src, DeviceImage& dst, int exponent) {
  const int planes = src.channels();
  if (src.type() == PixelType::F32) {
    kernels::Plane<float> to = planeOf<float>(dst, 0);
    to.height = dst.height() * planes;
    kernels::launchScalePow2<float>(planesOf<float>(src, planes), to, exponent, gpu.stream());
  } else if (src.type() == PixelType::F64) {
    kernels::Plane<double> to = planeOf<double>(dst, 0);
    to.height = dst.height() * planes;
    kernels::launchScalePow2<double>(planesOf<double>(src, planes), to, exponent, gpu.stream());
  }
}

}  // namespace gpulab
