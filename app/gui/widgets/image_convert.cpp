#include "widgets/image_convert.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace gpulab::gui {
namespace {

QImage::Format formatFor(int channels) {
  switch (channels) {
    case 1:
      return QImage::Format_Grayscale8;
    case 3:
      return QImage::Format_RGB888;
    default:
      return QImage::Format_RGBA8888;  // 2 (gray + alpha) and 4
  }
}

// Expands one row of `channels` 8-bit samples into the QImage layout of formatFor(channels).
void writeRow(const std::uint8_t* in, int width, int channels, uchar* out) {
  switch (channels) {
    case 1:
    case 3:
    case 4:
      std::memcpy(out, in, static_cast<std::size_t>(width) * channels);
      break;
    case 2:
      for (int x = 0; x < width; ++x) {
        out[4 * x + 0] = out[4 * x + 1] = out[4 * x + 2] = in[2 * x];
        out[4 * x + 3] = in[2 * x + 1];
      }
      break;
    default:
      break;
  }
}

bool isAlpha(int channels, int c) { return (channels == 2 && c == 1) || (channels == 4 && c == 3); }

template <class T>
DisplayRange colourRange(const gpulab::Image& image) {
  DisplayRange range{true, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  const int channels = image.channels();
  const auto samples = image.samples<const T>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (isAlpha(channels, static_cast<int>(i % channels))) continue;
    const double v = samples[i];
    if (!std::isfinite(v)) continue;
    range.min = std::min(range.min, v);
    range.max = std::max(range.max, v);
  }
  if (range.min > range.max) range.min = range.max = 0;  // nothing finite
  return range;
}

template <class T>
QImage floatToQImage(const gpulab::Image& image, DisplayRange& range) {
  range = colourRange<T>(image);
  const int width = image.width(), channels = image.channels();
  const double span = range.max - range.min;
  const double scale = span > 0 ? 255.0 / span : 0.0;
  QImage out(width, image.height(), formatFor(channels));
  std::vector<std::uint8_t> row(static_cast<std::size_t>(width) * channels);
  for (int y = 0; y < image.height(); ++y) {
    const T* in = image.row<T>(y);
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (isAlpha(channels, static_cast<int>(i % channels))) {
        row[i] = 255;
        continue;
      }
      const double v = in[i];
      const double mapped = std::isfinite(v) ? (v - range.min) * scale : 0.0;
      row[i] = static_cast<std::uint8_t>(std::lround(std::clamp(mapped, 0.0, 255.0)));
    }
    writeRow(row.data(), width, channels, out.scanLine(y));
  }
  return out;
}

}  // namespace

QImage toQImage(const gpulab::Image& image, DisplayRange* range) {
  DisplayRange used;
  QImage out;
  if (!image.empty()) {
    switch (image.type()) {
      case PixelType::U8: {
        out = QImage(image.width(), image.height(), formatFor(image.channels()));
        for (int y = 0; y < image.height(); ++y)
          writeRow(image.row<std::uint8_t>(y), image.width(), image.channels(), out.scanLine(y));
        break;
      }
      case PixelType::F32:
        out = floatToQImage<float>(image, used);
        break;
      case PixelType::F64:
        out = floatToQImage<double>(image, used);
        break;
      case PixelType::U16: {  // the screen shows 8 bits: 0..65535 scaled to 0..255, alpha too
        out = QImage(image.width(), image.height(), formatFor(image.channels()));
        std::vector<std::uint8_t> row(image.rowBytes() / 2);
        for (int y = 0; y < image.height(); ++y) {
          const std::uint16_t* in = image.row<std::uint16_t>(y);
          for (std::size_t i = 0; i < row.size(); ++i) row[i] = static_cast<std::uint8_t>((in[i] + 128u) / 257u);
          writeRow(row.data(), image.width(), image.channels(), out.scanLine(y));
        }
        break;
      }
    }
  }
  if (range != nullptr) *range = used;
  return out;
}

QString describeRange(const gpulab::Image& image, const DisplayRange& range) {
  if (image.type() == PixelType::U16) return QStringLiteral("16-bit samples, shown at 8 bits");
  if (!range.normalised) return {};
  return QStringLiteral("%1 shown normalised from %2 to %3")
      .arg(QString::fromUtf8(toString(image.type())))
      .arg(range.min, 0, 'g', 4)
      .arg(range.max, 0, 'g', 4);
}

}  // namespace gpulab::gui
