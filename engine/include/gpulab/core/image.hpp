// Host images: 8- and 16-bit photos (gray, RGB, RGBA) and float32 / float64 data, interleaved, rows
// packed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/core/enum_names.hpp"

namespace gpulab {

/// U16 comes last so that the first three keep their numbers (JSON records, saved settings).
enum class PixelType : std::uint8_t { U8, F32, F64, U16 };

constexpr std::size_t bytesPerSample(PixelType type) noexcept {
  switch (type) {
    case PixelType::U8:
      return 1;
    case PixelType::F32:
      return 4;
    case PixelType::F64:
      return 8;
    case PixelType::U16:
      return 2;
  }
  return 0;
}

constexpr EnumText enumText(PixelType) { return {"sample type", "u8|f32|f64|u16"}; }

/// True for the integer sample types (u8, u16), whose values are rounded and saturated on store.
constexpr bool isIntegerType(PixelType type) noexcept { return type == PixelType::U8 || type == PixelType::U16; }

/// The largest image gpulab accepts, checked before any allocation or decode.
inline constexpr int kMaxImageDimension = 32768;
inline constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 28;  // 268 M pixels (16384 x 16384)
inline constexpr int kMaxChannels = 4;

template <class T>
constexpr PixelType pixelTypeOf();
template <>
constexpr PixelType pixelTypeOf<std::uint8_t>() {
  return PixelType::U8;
}
template <>
constexpr PixelType pixelTypeOf<std::uint16_t>() {
  return PixelType::U16;
}
template <>
constexpr PixelType pixelTypeOf<float>() {
  return PixelType::F32;
}
template <>
constexpr PixelType pixelTypeOf<double>() {
  return PixelType::F64;
}

/// Calls f with a value of the sample type `type` stands for (std::uint8_t{}, float{} or double{}):
/// the one switch for code templated on the sample type of the operations and kernels. They take
/// u8, f32 and f64; a u16 image reaching one throws std::invalid_argument (front ends filter 16-bit
/// photos as f32 through filters/sample_depth.hpp and store the result back as u16). The histogram,
/// auto-levels and the uploads take u16 as it is (visitAnySampleType).
template <class F>
void visitPixelType(PixelType type, F&& f) {
  switch (type) {
    case PixelType::U8:
      f(std::uint8_t{});
      return;
    case PixelType::F32:
      f(float{});
      return;
    case PixelType::F64:
      f(double{});
      return;
    case PixelType::U16:
      throw std::invalid_argument(
          "this step takes u8, f32 or f64 samples, not u16: convert the image to f32 first (16-bit photos are "
          "filtered as f32 and stored back as u16)");
  }
}

/// visitPixelType over every sample type, u16 (std::uint16_t{}) included: for code that only moves
/// and converts samples (host images, files).
template <class F>
void visitAnySampleType(PixelType type, F&& f) {
  if (type == PixelType::U16) {
    f(std::uint16_t{});
    return;
  }
  visitPixelType(type, std::forward<F>(f));
}

/// Throws std::invalid_argument with one sentence when width x height x channels is not an image
/// gpulab accepts (zero or negative sizes, beyond kMaxImageDimension / kMaxImagePixels, channels
/// outside 1..4).
void validateImageShape(int width, int height, int channels);

/// "640x480 RGB u8": an image's size, layout and type, for messages.
std::string describeImage(int width, int height, int channels, PixelType type);

/// An axis-aligned rectangle of pixels: columns [x, x + width), rows [y, y + height).
struct PixelRect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

/// A host image: width x height pixels of `channels` interleaved samples of one PixelType.
/// Value type (copies deep-copy). Samples start zeroed.
class Image {
 public:
  Image() = default;
  Image(int width, int height, int channels, PixelType type);

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  int channels() const noexcept { return channels_; }
  PixelType type() const noexcept { return type_; }
  bool empty() const noexcept { return data_.empty(); }
  std::size_t pixelCount() const noexcept { return static_cast<std::size_t>(width_) * height_; }
  std::size_t rowBytes() const noexcept { return static_cast<std::size_t>(width_) * channels_ * bytesPerSample(type_); }
  std::size_t sizeBytes() const noexcept { return data_.size(); }
  /// "640x480 RGB u8" style summary for messages.
  std::string describe() const;

  std::byte* data() noexcept { return data_.data(); }
  const std::byte* data() const noexcept { return data_.data(); }

  template <class T>
  T* row(int y) noexcept {
    return reinterpret_cast<T*>(data_.data() + y * rowBytes());
  }
  template <class T>
  const T* row(int y) const noexcept {
    return reinterpret_cast<const T*>(data_.data() + y * rowBytes());
  }
  template <class T>
  T& at(int x, int y, int c = 0) noexcept {
    return row<T>(y)[static_cast<std::size_t>(x) * channels_ + c];
  }
  template <class T>
  const T& at(int x, int y, int c = 0) const noexcept {
    return row<T>(y)[static_cast<std::size_t>(x) * channels_ + c];
  }
  /// All samples as one span; T must match type().
  template <class T>
  std::span<T> samples() noexcept {
    return {reinterpret_cast<T*>(data_.data()), data_.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> samples() const noexcept {
    return {reinterpret_cast<const T*>(data_.data()), data_.size() / sizeof(T)};
  }

  /// Makes this a width x height x channels image of `type`, keeping the allocation when it is
  /// large enough (a decoder that refills it in a loop touches no fresh memory). The samples are
  /// left as they were in memory: the caller overwrites them all. Throws as the constructor does.
  void reshape(int width, int height, int channels, PixelType type);

  /// A copy converted to another sample type (u8/u16 -> float keeps the values; float -> u8/u16 and
  /// u16 -> u8 round and saturate, NaN becomes 0).
  Image convertedTo(PixelType type) const;
  /// One channel extracted as a 1-channel image.
  Image channel(int c) const;

  friend bool operator==(const Image& a, const Image& b) = default;

 private:
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  PixelType type_ = PixelType::U8;
  std::vector<std::byte> data_;
};

/// Sample (x, y, c) of any host image as a double (slow and general: references, tests, tools).
double sampleAt(const Image& img, int x, int y, int c);
/// Stores v at (x, y, c): u8/u16 rounded to nearest (ties to even) and saturated, NaN as 0; floats cast.
void storeSample(Image& img, int x, int y, int c, double v);

}  // namespace gpulab
