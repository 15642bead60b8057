// Engine-private helpers shared by the FFT filter and FFT convolution: host sample access, OpenCV
// views of host images, device buffer growth and CPU run control.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <opencv2/core.hpp>
#include <type_traits>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/cv_interop.hpp"

namespace gpulab {

/// Calls f(sample, real) with the image's sample type and the precision it is transformed in: u8 and
/// f32 in float, f64 in double.
template <class F>
void visitTransformType(PixelType type, F&& f) {
  visitPixelType(type, [&](auto sample) {
    using Real = std::conditional_t<std::is_same_v<decltype(sample), double>, double, float>;
    f(sample, Real{});
  });
}

/// The stages of FftFilter's and FftConvolver's pipelines, as enqueue masks.
enum FftStage : int { kPad = 1, kForward = 2, kMultiply = 4, kInverse = 8, kCrop = 16, kAllStages = 31 };

/// Times each stage alone on `stream`: `enqueueStages(mask)` enqueues the stages in the mask; pad and
/// crop only when the pipeline has them. The stages run out of order, so the caller runs the whole
/// pipeline afterwards to leave a correct result.
template <class EnqueueStages>
FftStageTimes profileFftStages(cudaStream_t stream, EnqueueStages&& enqueueStages, TimingOptions options,
                               bool padAndCrop) {
  auto stage = [&](int which) {
    return timeStream(
        stream, [&] { enqueueStages(which); }, options);
  };
  FftStageTimes times;
  if (padAndCrop) times.pad = stage(kPad);
  times.forward = stage(kForward);
  times.multiply = stage(kMultiply);
  times.inverse = stage(kInverse);
  if (padAndCrop) times.crop = stage(kCrop);
  return times;
}

/// Channel c of `img` as a one-channel Mat of `depth` (CV_32F or CV_64F).
inline cv::Mat channelMat(const Image& img, int c, int depth) {
  cv::Mat plane, converted;
  cv::extractChannel(cv_interop::asMat(img), plane, c);
  plane.convertTo(converted, depth);
  return converted;
}

/// Writes a one-channel float Mat into channel c of `img`: u8 through OpenCV's saturate_cast
/// (round to nearest even, saturate), which matches storeSample.
inline void storeChannel(const cv::Mat& values, Image& img, int c) {
  cv::Mat converted;
  values.convertTo(converted, cv_interop::cvDepth(img.type()));
  cv::Mat view = cv_interop::asMat(img);
  cv::insertChannel(converted, view, c);
}

/// Grows `buffer` to at least `bytes`, first waiting for `stream` (work queued on it may still use
/// the old allocation). Growth happens on the first call of a shape, never on the per-frame path.
inline void growDeviceBuffer(DeviceBuffer& buffer, std::size_t bytes, cudaStream_t stream) {
  if (buffer.size() >= bytes) return;
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  buffer.reserve(bytes);
}

}  // namespace gpulab
