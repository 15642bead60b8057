// Engine-private helpers the per-channel neighbourhood filters share (Gaussian, median, unsharp mask,
// morphology): the types they take, RGBA's alpha passing through, the constant border's value in
// sample units, and the output allocated once.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/kernels/cuda_check.hpp"

namespace gpulab::planewise {

/// u8 or f32 with 1..4 channels; std::invalid_argument naming `what` otherwise.
inline void checkU8OrF32(const ImageShape& in, const std::string& what) {
  if (in.type == PixelType::F64 || in.type == PixelType::U16)
    throw std::invalid_argument(what + " takes u8 and f32 images, not " + (in.type == PixelType::U16 ? "u16" : "f64") +
                                ": convert the image to f32 first");
  validateImageShape(in.width, in.height, in.channels);
}

/// A 4-channel u8 image is RGBA: its alpha passes through unchanged.
inline bool alphaPassesThrough(PixelType type, int channels) { return type == PixelType::U8 && channels == 4; }
/// Channels filtered (all but a passing alpha).
inline int filteredChannels(const ImageShape& s) { return alphaPassesThrough(s.type, s.channels) ? 3 : s.channels; }

/// A constant border's value as the u8 sample it stands for: rounded and saturated.
inline std::uint8_t borderU8(double value) {
  return static_cast<std::uint8_t>(std::clamp(std::nearbyint(value), 0.0, 255.0));
}
/// The value in sample type T (u8: borderU8; f32: rounded to float).
template <class T>
T borderSample(double value) {
  if constexpr (sizeof(T) == 1)
    return borderU8(value);
  else
    return static_cast<T>(value);
}

/// f(sample) with std::uint8_t{} or float{}; f64 throws naming `what`.
template <class F>
void visitU8OrF32(PixelType type, const std::string& what, F&& f) {
  if (type == PixelType::U8)
    f(std::uint8_t{});
  else if (type == PixelType::F32)
    f(float{});
  else
    throw std::invalid_argument(what + " takes u8 and f32 images, not f64: convert the image to f32 first");
}

/// `out` with `shape`, reallocated only when its shape differs.
inline void ensureShape(DeviceImage& out, const ImageShape& shape) {
  if (out.empty() || out.width() != shape.width || out.height() != shape.height || out.channels() != shape.channels ||
      out.type() != shape.type || out.layout() != DeviceLayout::Planar)
    out = DeviceImage(shape.width, shape.height, shape.channels, shape.type);
}

/// Copies plane c of `in` to plane c of `out` on `stream` (the alpha that passes through).
inline void copyPlaneAsync(const DeviceImage& in, DeviceImage& out, int c, cudaStream_t stream) {
  GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.planeData(c), out.pitch(), in.planeData(c), in.pitch(),
                                      static_cast<std::size_t>(in.width()) * bytesPerSample(in.type()), in.height(),
                                      cudaMemcpyDeviceToDevice, stream));
}

/// Bytes of one float plane with rows padded to 256 bytes, and that pitch: the scratch planes.
inline std::size_t floatPitch(int width) { return (static_cast<std::size_t>(width) * 4 + 255) / 256 * 256; }

/// Copies channel c of `from` into `to` (same size and type), for a passing alpha.
inline void copyChannel(const Image& from, Image& to, int c) {
  visitPixelType(from.type(), [&](auto sample) {
    using T = decltype(sample);
    for (int y = 0; y < from.height(); ++y)
      for (int x = 0; x < from.width(); ++x) to.at<T>(x, y, c) = from.at<T>(x, y, c);
  });
}

}  // namespace gpulab::planewise
