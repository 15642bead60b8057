// The engine's public vocabulary as the kernels spell it: typed plane views of device images and the
// enums the launchers take. Engine-private: front ends never see a kernels type.
#pragma once

#include <cstddef>
#include <stdexcept>

#include "gpulab/core/border.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"
#include "gpulab/kernels/sobel.cuh"

namespace gpulab {

/// Throws std::logic_error when `image` is interleaved: the plane views below are for planar images,
/// and an operation that has not said it takes interleaved images (Operation::gpuLayout) must never
/// see one (the front ends convert with GpuContext::inLayout).
inline void requirePlanar(const DeviceImage& image) {
  if (image.interleaved())
    throw std::logic_error(
        "an interleaved device image reached code that reads planes: convert it with "
        "GpuContext::inLayout first");
}

/// Plane c of `image` as a kernel view; T must match image.type().
template <class T>
kernels::Plane<T> planeOf(DeviceImage& image, int c) {
  requirePlanar(image);
  return {reinterpret_cast<T*>(image.planeData(c)), image.width(), image.height(), image.pitch()};
}
template <class T>
kernels::Plane<const T> planeOf(const DeviceImage& image, int c) {
  requirePlanar(image);
  return {reinterpret_cast<const T*>(image.planeData(c)), image.width(), image.height(), image.pitch()};
}
/// All planes as one view of height * channels rows (plane c starts at row c * height).
template <class T>
kernels::Plane<T> stackOf(DeviceImage& image) {
  requirePlanar(image);
  return {reinterpret_cast<T*>(image.planeData(0)), image.width(), image.height(), image.pitch()};
}

/// An interleaved image (or a one-channel one) as one view: width pixels of channels() samples a
/// row, sample (x, c) at row(y)[x * channels() + c].
template <class T>
kernels::Plane<T> pixelsOf(DeviceImage& image) {
  if (!image.interleaved() && image.channels() != 1)
    throw std::logic_error("a planar device image reached code that reads interleaved pixels");
  return {reinterpret_cast<T*>(image.planeData(0)), image.width(), image.height(), image.pitch()};
}
template <class T>
kernels::Plane<const T> pixelsOf(const DeviceImage& image) {
  if (!image.interleaved() && image.channels() != 1)
    throw std::logic_error("a planar device image reached code that reads interleaved pixels");
  return {reinterpret_cast<const T*>(image.planeData(0)), image.width(), image.height(), image.pitch()};
}

static_assert(static_cast<int>(kernels::BorderMode::Reflect101) == static_cast<int>(BorderMode::Reflect101) &&
              static_cast<int>(kernels::BorderMode::Reflect) == static_cast<int>(BorderMode::Reflect) &&
              static_cast<int>(kernels::BorderMode::Replicate) == static_cast<int>(BorderMode::Replicate) &&
              static_cast<int>(kernels::BorderMode::Wrap) == static_cast<int>(BorderMode::Wrap) &&
              static_cast<int>(kernels::BorderMode::Constant) == static_cast<int>(BorderMode::Constant));
constexpr kernels::BorderMode toKernel(BorderMode mode) noexcept { return static_cast<kernels::BorderMode>(mode); }

/// The Sobel component as the kernel selects it; std::invalid_argument for a value outside the enum.
inline kernels::SobelPart toKernel(SobelComponent component) {
  switch (component) {
    case SobelComponent::Magnitude:
      return kernels::SobelPart::Magnitude;
    case SobelComponent::X:
      return kernels::SobelPart::X;
    case SobelComponent::Y:
      return kernels::SobelPart::Y;
    case SobelComponent::Direction:
      return kernels::SobelPart::Direction;
  }
  throw std::invalid_argument("unknown Sobel component");
}

/// kernels::borderIndex for the public mode: where coordinate i of an axis of n samples reads.
inline int borderIndex(int i, int n, BorderMode mode) { return kernels::borderIndex(i, n, toKernel(mode)); }

}  // namespace gpulab
