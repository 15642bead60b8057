#include "gpulab/core/image.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace gpulab {

void validateImageShape(int width, int height, int channels) {
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                " is empty: both sides must be at least 1 pixel");
  if (width > kMaxImageDimension || height > kMaxImageDimension)
    throw std::invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                " exceeds the limit of " + std::to_string(kMaxImageDimension) + " pixels a side");
  if (std::int64_t{width} * height > kMaxImagePixels)
    throw std::invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                " exceeds the limit of " + std::to_string(kMaxImagePixels / (1 << 20)) + " megapixels");
  if (channels < 1 || channels > kMaxChannels)
    throw std::invalid_argument(std::to_string(channels) + " channels are not supported: use 1 to " +
                                std::to_string(kMaxChannels));
}

Image::Image(int width, int height, int channels, PixelType type)
    : width_(width), height_(height), channels_(channels), type_(type) {
  validateImageShape(width, height, channels);
  data_.resize(static_cast<std::size_t>(width) * height * channels * bytesPerSample(type));
}

void Image::reshape(int width, int height, int channels, PixelType type) {
  validateImageShape(width, height, channels);
  const std::size_t bytes = static_cast<std::size_t>(width) * height * channels * bytesPerSample(type);
  if (bytes > data_.capacity()) data_ = {};  // no copy of samples about to be overwritten
  data_.resize(bytes);
  width_ = width;
  height_ = height;
  channels_ = channels;
  type_ = type;
}

std::string describeImage(int width, int height, int channels, PixelType type) {
  static constexpr const char* kLayouts[] = {"", "gray", "2-channel", "RGB", "RGBA"};
  return std::to_string(width) + "x" + std::to_string(height) + " " +
         (channels >= 1 && channels <= 4 ? kLayouts[channels] : "?") + " " + std::string(toString(type));
}

std::string Image::describe() const { return describeImage(width_, height_, channels_, type_); }

namespace {

template <class Src, class Dst>
void convertSamples(std::span<const Src> src, std::span<Dst> dst) {
  constexpr bool narrowing = std::is_integral_v<Dst> && (std::is_floating_point_v<Src> || sizeof(Src) > sizeof(Dst));
  if constexpr (narrowing && std::is_integral_v<Src>) {  // u16 -> u8
    std::transform(src.begin(), src.end(), dst.begin(), [](Src v) { return static_cast<Dst>(std::min<Src>(v, 255)); });
  } else if constexpr (narrowing) {
    std::transform(src.begin(), src.end(), dst.begin(), [](Src v) {
      constexpr double top = static_cast<double>(std::numeric_limits<Dst>::max());
      if (!(v == v)) return Dst{0};  // NaN
      return static_cast<Dst>(std::clamp<double>(std::nearbyint(static_cast<double>(v)), 0.0, top));
    });
  } else {
    std::transform(src.begin(), src.end(), dst.begin(), [](Src v) { return static_cast<Dst>(v); });
  }
}

}  // namespace

Image Image::convertedTo(PixelType type) const {
  if (type == type_) return *this;
  Image out(width_, height_, channels_, type);
  visitAnySampleType(type_, [&](auto src) {
    visitAnySampleType(type, [&](auto dst) {
      using S = decltype(src);
      using D = decltype(dst);
      convertSamples<S, D>(samples<S>(), out.samples<D>());
    });
  });
  return out;
}

Image Image::channel(int c) const {
  if (c < 0 || c >= channels_)
    throw std::out_of_range("channel " + std::to_string(c) + " of a " + std::to_string(channels_) + "-channel image");
  Image out(width_, height_, 1, type_);
  const std::size_t bytes = bytesPerSample(type_);
  for (std::size_t i = 0; i < pixelCount(); ++i)
    std::copy_n(data_.data() + (i * channels_ + c) * bytes, bytes, out.data_.data() + i * bytes);
  return out;
}

/// Sample (x, y, c) of any host image as a double.
double sampleAt(const Image& img, int x, int y, int c) {
  switch (img.type()) {
    case PixelType::U8:
      return img.at<std::uint8_t>(x, y, c);
    case PixelType::F32:
      return img.at<float>(x, y, c);
    case PixelType::F64:
      return img.at<double>(x, y, c);
    case PixelType::U16:
      return img.at<std::uint16_t>(x, y, c);
  }
  return 0;
}

/// Stores v at (x, y, c): u8 rounded to nearest (ties to even) and saturated, NaN as 0.
void storeSample(Image& img, int x, int y, int c, double v) {
  switch (img.type()) {
    case PixelType::U8:
      img.at<std::uint8_t>(x, y, c) =
          static_cast<std::uint8_t>(std::isnan(v) ? 0.0 : std::clamp(std::nearbyint(v), 0.0, 255.0));
      return;
    case PixelType::F32:
      img.at<float>(x, y, c) = static_cast<float>(v);
      return;
    case PixelType::F64:
      img.at<double>(x, y, c) = v;
      return;
    case PixelType::U16:
      img.at<std::uint16_t>(x, y, c) =
          static_cast<std::uint16_t>(std::isnan(v) ? 0.0 : std::clamp(std::nearbyint(v), 0.0, 65535.0));
      return;
  }
}

}  // namespace gpulab
