// JPEG through libjpeg-turbo: decoding through its libjpeg API (gray stays gray, colour becomes RGB,
// the EXIF orientation applied so the pixels stand as the camera meant them), with an error manager
// that turns every warning about the data (premature end, corrupt data, bad Huffman code, bogus
// progression) into an error, so a damaged file never loads as a grey or garbage image; encoding
// through the TurboJPEG API with a quality (4:2:0 chroma, as cjpeg and cameras do; gray images stay
// one channel). The structural walk (inspect.cpp) has already passed the file when decodeJpeg runs,
// and the size the header states is checked against gpulab's limits before anything is allocated.

// jpeglib.h needs FILE and size_t declared before it, jerror.h needs jpeglib.h's types.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <turbojpeg.h>

#include <csetjmp>
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

/// One compressor per thread, made on first use (TurboJPEG handles are not thread-safe, and making
/// one costs a few allocations).
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

namespace {

/// More scans than any encoder writes (libjpeg's progressive scripts use 10 or so): a file with
/// thousands of tiny scans makes the decoder pass over every block once per scan.
constexpr int kMaxJpegScans = 1000;

/// libjpeg's decompressor with an error manager that jumps back instead of exiting. Every method that
/// calls into libjpeg sets the jump point itself and has no object with a destructor after it, so the
/// jump crosses only libjpeg's C frames.
class JpegDecoder {
 public:
  JpegDecoder() {
    info_.err = jpeg_std_error(&error_.manager);
    error_.manager.error_exit = &JpegDecoder::onError;
    error_.manager.emit_message = &JpegDecoder::onMessage;
    progress_.progress_monitor = &JpegDecoder::onProgress;
  }
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  ~JpegDecoder() {
    if (created_) jpeg_destroy_decompress(&info_);
  }

  /// Reads the header from `bytes` (which must outlive the decoder). False with message() on failure.
  bool readHeader(Bytes bytes) {
    if (setjmp(error_.jump) != 0) return false;
    jpeg_create_decompress(&info_);
    created_ = true;
    info_.progress = &progress_;
    jpeg_mem_src(&info_, bytes.data(), static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(&info_, TRUE);
    return true;
  }

  const jpeg_decompress_struct& info() const { return info_; }

  /// Decodes into `image` (width x height, 1 or 3 channels as the colour space asks). False with
  /// message() on an error or on any warning that means damaged data.
  bool decode(Image& image) {
    if (setjmp(error_.jump) != 0) return false;
    info_.out_color_space = image.channels() == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&info_);
    if (info_.output_width != static_cast<JDIMENSION>(image.width()) ||
        info_.output_height != static_cast<JDIMENSION>(image.height()) || info_.output_components != image.channels()) {
      std::snprintf(error_.message, sizeof error_.message, "the decoder's output does not match the header");
      return false;
    }
    while (info_.output_scanline < info_.output_height) {
      JSAMPROW row = reinterpret_cast<JSAMPROW>(image.data() + info_.output_scanline * image.rowBytes());
      jpeg_read_scanlines(&info_, &row, 1);
    }
    jpeg_finish_decompress(&info_);  // reads on to the end of the image: later damage counts too
    return true;
  }

  std::string message() const { return error_.message; }

 private:
  struct ErrorManager {
    jpeg_error_mgr manager;  // first: libjpeg hands back a pointer to it
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX] = {};
  };

  static void onError(j_common_ptr info) {
    auto* error = reinterpret_cast<ErrorManager*>(info->err);
    (*info->err->format_message)(info, error->message);
    std::longjmp(error->jump, 1);
  }
  /// Warnings (level -1) about the data are errors. Kept as warnings: bytes between segments (cameras
  /// and editors write them after a whole scan), an unknown JFIF revision and an unreadable ICC profile
  /// (gpulab reads neither). Trace messages (level >= 0) are ignored.
  static void onMessage(j_common_ptr info, int level) {
    if (level >= 0) return;
    const int code = info->err->msg_code;
    if (code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || code == JWRN_BOGUS_ICC) return;
    onError(info);
  }
  static void onProgress(j_common_ptr info) {
    if (info->is_decompressor == 0) return;
    const auto* decompress = reinterpret_cast<j_decompress_ptr>(info);
    if (decompress->input_scan_number > kMaxJpegScans) {
      auto* error = reinterpret_cast<ErrorManager*>(info->err);
      std::snprintf(error->message, sizeof error->message, "more than %d scans", kMaxJpegScans);
      std::longjmp(error->jump, 1);
    }
  }

  jpeg_decompress_struct info_{};
  ErrorManager error_{};
  jpeg_progress_mgr progress_{};
  bool created_ = false;
};

}  // namespace

Image decodeJpeg(Bytes bytes, const std::string& name, Image reuse) {
  JpegDecoder decoder;
  if (!decoder.readHeader(bytes))
    throw ImageIoError(name + " is corrupt (libjpeg-turbo cannot read its JPEG header: " + decoder.message() + ")");
  const jpeg_decompress_struct& info = decoder.info();
  checkShape(info.image_width, info.image_height, 1, name);
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK)
    throw ImageIoError(name + " is a CMYK JPEG; gpulab reads gray and colour (YCbCr or RGB) JPEGs");
  const bool gray = info.jpeg_color_space == JCS_GRAYSCALE;
  if (!gray && info.num_components != 3)
    throw ImageIoError(name + " is a JPEG of " + std::to_string(info.num_components) +
                       " components; gpulab reads gray and colour (YCbCr or RGB) JPEGs");
  Image image = std::move(reuse);
  image.reshape(static_cast<int>(info.image_width), static_cast<int>(info.image_height), gray ? 1 : 3, PixelType::U8);
  if (!decoder.decode(image))
    throw ImageIoError(name + " is truncated or corrupt (libjpeg-turbo: " + decoder.message() + ")");
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
