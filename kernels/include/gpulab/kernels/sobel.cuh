// 3x3 Sobel gradient of planes, one pass. Colour input (three planes: R, G, B) goes to luminance
// first, 0.299 R + 0.587 G + 0.114 B in float with every operation rounded once (the same bits on
// host and device), so every implementation filters the very same luminance.
//
//   dx = [-1 0 1; -2 0 2; -1 0 1] (correlation: right minus left), dy = its transpose (down minus up)
//
// Output, one plane of the input's sample type:
//   float: magnitude sqrt(dx^2 + dy^2), dx, dy, or direction atan2(dy, dx) in radians, y pointing down;
//   u8:    magnitude and |dx|, |dy| rounded and saturated to 255; direction as a circular code,
//          round(angle * 128 / pi) mod 256: 0 = +x (right), 64 = +y (down), 128 = -x, 192 = -y.
// Each thread computes four adjacent columns down a segment of rows; loads are 16-byte (f32) or
// 4-byte (u8) vectors away from the left and right edges.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "gpulab/kernels/border.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

enum class SobelPart : int { Magnitude = 0, X = 1, Y = 2, Direction = 3 };

/// Luminance with one rounding per operation, in this order, on host and device alike.
GPULAB_HD float luminance(float r, float g, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fadd_rn(__fmul_rn(0.299f, r), __fmul_rn(0.587f, g)), __fmul_rn(0.114f, b));
#else
  // Host: separate statements and no -ffast-math; x86-64 without -mfma has no FMA to contract into.
  const float wr = 0.299f * r;
  const float wg = 0.587f * g;
  const float wb = 0.114f * b;
  const float rg = wr + wg;
  return rg + wb;
#endif
}

/// The float output for one pixel.
GPULAB_HD float sobelValue(float dx, float dy, SobelPart part) {
  switch (part) {
    case SobelPart::Magnitude:
      return ::sqrtf(dx * dx + dy * dy);
    case SobelPart::X:
      return dx;
    case SobelPart::Y:
      return dy;
    case SobelPart::Direction:
      return ::atan2f(dy, dx);
  }
  return 0.f;
}

/// A float output (sobelValue) as u8: the gradients as absolute values, rounded to nearest (ties
/// to even) and saturated; the direction as round(angle * 128 / pi) mod 256, so the four axis
/// directions are exact codes and +pi and -pi meet at 128.
GPULAB_HD std::uint8_t sobelToU8(float value, SobelPart part) {
  constexpr float kCodesPerRadian = 128.0f / 3.14159265358979323846f;
  if (part == SobelPart::Direction) {
    if (!(value == value)) return 0;  // NaN
    const int code = static_cast<int>(::rintf(value * kCodesPerRadian));
    return static_cast<std::uint8_t>(code & 255);
  }
  const float v = value < 0.f ? -value : value;
  if (!(v > 0.f)) return 0;  // also NaN
  const float r = ::rintf(v);
  return r >= 255.f ? std::uint8_t{255} : static_cast<std::uint8_t>(r);
}

/// out = Sobel of the luminance of (red, green, blue) when `colour`, else of `red` alone. All
/// planes of one size; out distinct from the inputs, 16-byte aligned with a pitch that is a
/// multiple of 16 (DeviceImage planes are). `borderValue` is a luminance (Constant only).
/// Asynchronous on `stream`.
template <class T>
void launchSobel(Plane<const T> red, Plane<const T> green, Plane<const T> blue, bool colour, Plane<T> out,
                 SobelPart part, BorderMode mode, float borderValue, cudaStream_t stream);

/// The same per-thread code as launchSobel, run on the host thread by thread. Host pointers.
template <class T>
void runSobelOnHost(Plane<const T> red, Plane<const T> green, Plane<const T> blue, bool colour, Plane<T> out,
                    SobelPart part, BorderMode mode, float borderValue);

}  // namespace gpulab::kernels
