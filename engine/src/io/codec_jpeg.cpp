// JPEG through libjpeg-turbo's TurboJPEG API: decoding (gray stays gray, colour becomes RGB, the
// EXIF orientation applied so the pixels stand as the camera meant them) and encoding with a
// quality (4:2:0 chroma, as cjpeg and cameras do; gray images stay one channel).
// The structural walk (inspect.cpp) has already passed the file when decodeJpeg runs, and the
// size the header states is checked against gpulab's limits before anything is allocated.

#include <turbojpeg.h>

#include <cstring>
#include <memory>
#include <utility>

#include "internal/image_files.hpp"

namespace gpulab::io_detail {

namespace {

struct TjHandleDeleter {
  void operator()(void* handle) const noexcept { tjDestroy(handle); }
};
using TjHandle = std::unique_ptr<void, TjHandleDeleter>;

/// One decompressor and one compressor per thread, made on first use (TurboJPEG handles are not
/// thread-safe, and making one costs a few allocations).
tjhandle threadDecompressor() {
  thread_local TjHandle handle(tjInitDecompress());
  if (!handle) throw ImageIoError("libjpeg-turbo could not make a decompressor (out of memory)");
  return handle.get();
}
tjhandle threadCompressor() {
  thread_local TjHandle handle(tjInitCompress());
  if (!handle) throw ImageIoError("libjpeg-turbo could not make a compressor (out of memory)");
  return handle.get();
}

std::string tjMessage(tjhandle handle) {
  const char* text = tjGetErrorStr2(handle);
  return text != nullptr ? text : "unknown error";
}

/// The orientation tag (0x0112) of the first EXIF APP1 segment: 1..8, or 1 when there is none or
/// it cannot be read. Only the markers before the first scan are looked at.
int exifOrientation(Bytes b) {
  std::size_t pos = 2;
  while (pos + 4 <= b.size() && b[pos] == 0xFF) {
    const std::uint8_t marker = b[pos + 1];
    if (marker == 0xDA || marker == 0xD9) break;  // start of scan, end of image
    if (marker == 0xFF) {
      ++pos;
      continue;
    }
    const std::size_t length = readBe16(&b[pos + 2]);
    if (length < 2 || pos + 2 + length > b.size()) break;
    if (marker == 0xE1 && length >= 16 && std::memcmp(&b[pos + 4], "Exif\0\0", 6) == 0) {
      const Bytes tiff = b.subspan(pos + 10, length - 8);
      const bool little = tiff[0] == 'I' && tiff[1] == 'I';
      if (!little && !(tiff[0] == 'M' && tiff[1] == 'M')) return 1;
      auto u16 = [&](std::size_t at) -> std::uint32_t { return little ? readLe16(&tiff[at]) : readBe16(&tiff[at]); };
      auto u32 = [&](std::size_t at) -> std::uint32_t { return little ? readLe32(&tiff[at]) : readBe32(&tiff[at]); };
      const std::size_t ifd = u32(4);
      if (ifd + 2 > tiff.size()) return 1;
      const std::uint32_t entries = u16(ifd);
      for (std::uint32_t i = 0; i < entries; ++i) {
        const std::size_t entry = ifd + 2 + 12 * std::size_t{i};
        if (entry + 12 > tiff.size()) return 1;
        if (u16(entry) == 0x0112 && u16(entry + 2) == 3) {  // SHORT
          const std::uint32_t value = u16(entry + 8);
          return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
        }
      }
      return 1;
    }
    pos += 2 + length;
  }
  return 1;
}

/// The image turned as EXIF orientation `orientation` (2..8) asks: the stored pixel (x, y) goes to
/// where a viewer shows it. Orientations 5..8 swap width and height.
Image applyOrientation(const Image& in, int orientation) {
  const int w = in.width(), h = in.height(), c = in.channels();
  const bool swap = orientation >= 5;
  Image out(swap ? h : w, swap ? w : h, c, in.type());
  const std::size_t bytes = bytesPerSample(in.type()) * static_cast<std::size_t>(c);
  for (int y = 0; y < h; ++y) {
    const std::byte* row = in.data() + static_cast<std::size_t>(y) * in.rowBytes();
    for (int x = 0; x < w; ++x) {
      int ox = x, oy = y;
      switch (orientation) {
        case 2:
          ox = w - 1 - x;
          break;  // mirrored left-right
        case 3:
          ox = w - 1 - x;
          oy = h - 1 - y;
          break;  // turned 180
        case 4:
          oy = h - 1 - y;
          break;  // mirrored top-bottom
        case 5:
          ox = y;
          oy = x;
          break;  // transposed
        case 6:
          ox = h - 1 - y;
          oy = x;
          break;  // turned 90 clockwise
        case 7:
          ox = h - 1 - y;
          oy = w - 1 - x;
          break;  // transversed
        case 8:
          ox = y;
          oy = w - 1 - x;
          break;  // turned 90 counter-clockwise
        default:
          break;
      }
      std::memcpy(out.data() + static_cast<std::size_t>(oy) * out.rowBytes() + static_cast<std::size_t>(ox) * bytes,
                  row + static_cast<std::size_t>(x) * bytes, bytes);
    }
  }
  return out;
}

}  // namespace

Image decodeJpeg(Bytes bytes, const std::string& name, Image reuse) {
  tjhandle tj = threadDecompressor();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height, &subsampling,
                          &colorspace) != 0)
    throw ImageIoError(name + " is corrupt (libjpeg-turbo cannot read its JPEG header: " + tjMessage(tj) + ")");
  checkShape(width, height, 1, name);
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    throw ImageIoError(name + " is a CMYK JPEG; gpulab reads gray and colour (YCbCr or RGB) JPEGs");
  const bool gray = colorspace == TJCS_GRAY;
  Image image = std::move(reuse);
  image.reshape(width, height, gray ? 1 : 3, PixelType::U8);
  if (tjDecompress2(tj, bytes.data(), static_cast<unsigned long>(bytes.size()),
                    reinterpret_cast<unsigned char*>(image.data()), width, static_cast<int>(image.rowBytes()), height,
                    gray ? TJPF_GRAY : TJPF_RGB, 0) != 0) {
    // Warnings ("extraneous bytes before marker") are common in files that cameras and editors
    // write and leave a whole image; missing data does not.
    const std::string message = tjMessage(tj);
    if (tjGetErrorCode(tj) == TJERR_FATAL || message.find("Premature end") != std::string::npos)
      throw ImageIoError(name + " is truncated or corrupt (libjpeg-turbo: " + message + ")");
  }
  const int orientation = exifOrientation(bytes);
  if (orientation == 1) return image;  // moved: a conditional expression would copy it
  return applyOrientation(image, orientation);
}

std::string encodeJpeg(const Image& image, int quality, const std::string& name) {
  if (quality < 1 || quality > 100)
    throw ImageIoError("cannot save " + name + ": JPEG quality " + std::to_string(quality) + " is outside 1 to 100");
  const int c = image.channels();
  tjhandle tj = threadCompressor();
  const int format = c == 1 ? TJPF_GRAY : c == 3 ? TJPF_RGB : TJPF_RGBX;  // RGBX: alpha is dropped
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int status = tjCompress2(tj, reinterpret_cast<const unsigned char*>(image.data()), image.width(),
                                 static_cast<int>(image.rowBytes()), image.height(), format, &out, &size,
                                 c == 1 ? TJSAMP_GRAY : TJSAMP_420, quality, 0);
  const std::unique_ptr<unsigned char, decltype(&tjFree)> owned(out, &tjFree);
  if (status != 0) throw ImageIoError("cannot save " + name + ": JPEG encoding failed (" + tjMessage(tj) + ")");
  return std::string(reinterpret_cast<const char*>(out), size);
}

}  // namespace gpulab::io_detail
