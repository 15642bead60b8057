// TIFF through libtiff, from and to memory: gray, RGB and RGBA (the first extra sample as alpha),
// 8- and 16-bit unsigned and 32-bit float samples, interleaved (contiguous) strips, any compression
// libtiff was built with; written as one image with deflate at the level asked (0: uncompressed)
// and the horizontal predictor for integer samples. Other layouts (tiled, planar, palette, CMYK,
// 1-bit, signed or 64-bit samples) are refused with a sentence that names what was found.
// libtiff reports through process-wide handlers: they keep the last message per thread.

#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "internal/image_files.hpp"

namespace gpulab::io_detail {

namespace {

thread_local std::string tiffLastError;

void tiffError(const char* module, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  tiffLastError = (module != nullptr ? std::string(module) + ": " : std::string()) + text;
}
void tiffWarning(const char*, const char*, va_list) {}

void installTiffHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(tiffError);
    TIFFSetWarningHandler(tiffWarning);
  });
}

/// A TIFF file in memory for TIFFClientOpen: read from `input`, or written into `output`.
struct MemoryFile {
  Bytes input;
  std::string output;
  std::uint64_t pos = 0;
  bool writing = false;
  std::uint64_t size() const { return writing ? output.size() : input.size(); }
};

tmsize_t memRead(thandle_t h, void* buf, tmsize_t size) {
  auto* f = static_cast<MemoryFile*>(h);
  if (f->writing || f->pos >= f->input.size()) return 0;
  const auto n =
      static_cast<tmsize_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(size), f->input.size() - f->pos));
  std::memcpy(buf, f->input.data() + f->pos, static_cast<std::size_t>(n));
  f->pos += static_cast<std::uint64_t>(n);
  return n;
}
tmsize_t memWrite(thandle_t h, void* buf, tmsize_t size) {
  auto* f = static_cast<MemoryFile*>(h);
  if (!f->writing) return 0;
  const auto n = static_cast<std::size_t>(size);
  if (f->pos + n > f->output.size()) f->output.resize(f->pos + n);
  std::memcpy(f->output.data() + f->pos, buf, n);
  f->pos += n;
  return size;
}
toff_t memSeek(thandle_t h, toff_t offset, int whence) {
  auto* f = static_cast<MemoryFile*>(h);
  std::uint64_t base = 0;
  if (whence == SEEK_CUR) base = f->pos;
  if (whence == SEEK_END) base = f->size();
  f->pos = base + offset;
  if (f->writing && f->pos > f->output.size()) f->output.resize(f->pos);
  return f->pos;
}
int memClose(thandle_t) { return 0; }
toff_t memSize(thandle_t h) { return static_cast<MemoryFile*>(h)->size(); }
int memMap(thandle_t h, void** base, toff_t* size) {
  auto* f = static_cast<MemoryFile*>(h);
  if (f->writing) return 0;
  *base = const_cast<std::uint8_t*>(f->input.data());
  *size = f->input.size();
  return 1;
}
void memUnmap(thandle_t, void*, toff_t) {}

struct TiffDeleter {
  void operator()(TIFF* tif) const noexcept { TIFFClose(tif); }
};
using TiffHandle = std::unique_ptr<TIFF, TiffDeleter>;

std::string lastTiffError() { return tiffLastError.empty() ? std::string("unknown error") : tiffLastError; }

/// The most bytes one byte of a strip compressed this way can become, 0 where there is no useful bound
/// (LZMA, ZSTD, WebP and the rest: libtiff's own checks and the size limits bound those).
std::uint64_t maxExpansion(std::uint16_t compression) {
  switch (compression) {
    case COMPRESSION_NONE:
      return 1;
    case COMPRESSION_PACKBITS:
      return 64;  // 2 bytes repeat one byte 128 times
    case COMPRESSION_LZW:
      return 3641;  // a code of at least 9 bits emits at most 4096 bytes
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
      return 1032;  // deflate: a 258-byte match in 2 bits
    case COMPRESSION_JPEG:
      return 8192 * 3;  // Huffman JPEG: at least a bit per 8x8 block of the least-sampled component (inspect.cpp)
    default:
      return 0;
  }
}

/// The strips the directory lists must lie inside the file and, for the compressions with a known
/// largest expansion, hold enough bytes for the size the header claims: a short or damaged file is
/// refused before the image is allocated.
void checkStripsHoldTheImage(TIFF* tif, std::uint64_t fileBytes, std::uint64_t imageBytes, const std::string& name) {
  const std::uint32_t strips = TIFFNumberOfStrips(tif);
  std::uint64_t* offsets = nullptr;
  std::uint64_t* counts = nullptr;
  if (strips == 0 || !TIFFGetField(tif, TIFFTAG_STRIPOFFSETS, &offsets) ||
      !TIFFGetField(tif, TIFFTAG_STRIPBYTECOUNTS, &counts) || offsets == nullptr || counts == nullptr)
    throw ImageIoError(name + " is corrupt (its TIFF directory lists no strips)");
  std::uint64_t stored = 0;
  for (std::uint32_t s = 0; s < strips; ++s) {
    if (offsets[s] > fileBytes || counts[s] > fileBytes - offsets[s])
      throw ImageIoError(name + " is truncated (TIFF strip " + std::to_string(s) + " at byte " +
                         std::to_string(offsets[s]) + " needs " + std::to_string(counts[s]) + " bytes, the file has " +
                         std::to_string(fileBytes) + ")");
    stored += counts[s];
  }
  std::uint16_t compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  const std::uint64_t ratio = maxExpansion(compression);
  if (ratio != 0 && imageBytes > ratio * stored)
    throw ImageIoError(name + " is truncated or corrupt (its TIFF header claims " + std::to_string(imageBytes) +
                       " bytes of pixels, more than its " + std::to_string(stored) + " bytes of strips can hold)");
}

}  // namespace

Image decodeTiff(Bytes bytes, const std::string& name, Image reuse) {
  installTiffHandlers();
  tiffLastError.clear();
  MemoryFile file{bytes, {}, 0, false};
  TiffHandle tif(
      TIFFClientOpen(name.c_str(), "rm", &file, memRead, memWrite, memSeek, memClose, memSize, memMap, memUnmap));
  if (!tif)
    throw ImageIoError(name + " is truncated or corrupt (libtiff cannot read its header: " + lastTiffError() + ")");
  std::uint32_t width = 0, height = 0;
  std::uint16_t samples = 1, bits = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG, photometric = 0;
  if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &height))
    throw ImageIoError(name + " is corrupt (its TIFF directory has no image size)");
  checkShape(width, height, 1, name);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PLANARCONFIG, &planar);
  if (!TIFFGetField(tif.get(), TIFFTAG_PHOTOMETRIC, &photometric))
    photometric = samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;

  const auto unsupported = [&](const std::string& what) {
    return ImageIoError(name + " is a TIFF layout gpulab does not read (" + what +
                        "); it reads gray, RGB and RGBA strips of 8- or 16-bit unsigned or 32-bit float samples");
  };
  if (TIFFIsTiled(tif.get())) throw unsupported("tiled");
  if (planar != PLANARCONFIG_CONTIG) throw unsupported("one plane per channel");
  if (photometric != PHOTOMETRIC_MINISBLACK && photometric != PHOTOMETRIC_RGB)
    throw unsupported("photometric interpretation " + std::to_string(photometric) +
                      (photometric == PHOTOMETRIC_PALETTE      ? " (palette)"
                       : photometric == PHOTOMETRIC_SEPARATED  ? " (CMYK)"
                       : photometric == PHOTOMETRIC_MINISWHITE ? " (white is zero)"
                       : photometric == PHOTOMETRIC_YCBCR      ? " (YCbCr)"
                                                               : ""));
  PixelType type = PixelType::U8;
  if (format == SAMPLEFORMAT_UINT && bits == 8)
    type = PixelType::U8;
  else if (format == SAMPLEFORMAT_UINT && bits == 16)
    type = PixelType::U16;
  else if (format == SAMPLEFORMAT_IEEEFP && bits == 32)
    type = PixelType::F32;
  else
    throw unsupported(std::to_string(bits) + "-bit " +
                      (format == SAMPLEFORMAT_IEEEFP ? "float"
                       : format == SAMPLEFORMAT_INT  ? "signed"
                                                     : "unsigned") +
                      " samples");
  const bool rgb = photometric == PHOTOMETRIC_RGB;
  if ((rgb && samples < 3) || samples < 1 || samples > (rgb ? 4 : 2))
    throw unsupported(std::to_string(samples) + " samples per pixel with " + (rgb ? "RGB" : "gray"));
  // Gray + alpha becomes RGBA, as in the other formats.
  const int stored = samples, channels = samples == 2 ? 4 : samples;
  checkStripsHoldTheImage(tif.get(), bytes.size(),
                          std::uint64_t{width} * height * static_cast<std::uint64_t>(samples) * (bits / 8), name);
  Image raw = std::move(reuse);
  raw.reshape(static_cast<int>(width), static_cast<int>(height), stored, type);
  const tmsize_t stripBytes = TIFFStripSize(tif.get());
  const std::uint32_t strips = TIFFNumberOfStrips(tif.get());
  std::size_t done = 0;
  for (std::uint32_t s = 0; s < strips && done < raw.sizeBytes(); ++s) {
    const std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(stripBytes), raw.sizeBytes() - done);
    const tmsize_t got = TIFFReadEncodedStrip(tif.get(), s, raw.data() + done, static_cast<tmsize_t>(want));
    if (got < 0) throw ImageIoError(name + " is truncated or corrupt (libtiff: " + lastTiffError() + ")");
    done += static_cast<std::size_t>(got);
  }
  if (done < raw.sizeBytes())
    throw ImageIoError(name + " is truncated (its TIFF strips hold " + std::to_string(done) + " of the " +
                       std::to_string(raw.sizeBytes()) + " bytes the image needs)");
  if (channels == stored) return raw;
  Image image(raw.width(), raw.height(), 4, type);
  const std::size_t sample = bytesPerSample(type);
  for (std::size_t i = 0; i < raw.pixelCount(); ++i)
    for (int c = 0; c < 4; ++c)
      std::memcpy(image.data() + (4 * i + static_cast<std::size_t>(c)) * sample,
                  raw.data() + (2 * i + (c == 3 ? 1 : 0)) * sample, sample);
  return image;
}

std::string encodeTiff(const Image& image, int level, const std::string& name) {
  if (level < 0 || level > 9)
    throw ImageIoError("cannot save " + name + ": TIFF compression level " + std::to_string(level) +
                       " is outside 0 to 9");
  installTiffHandlers();
  tiffLastError.clear();
  MemoryFile file{{}, {}, 0, true};
  TiffHandle tif(
      TIFFClientOpen(name.c_str(), "w", &file, memRead, memWrite, memSeek, memClose, memSize, memMap, memUnmap));
  const auto failed = [&] {
    return ImageIoError("cannot save " + name + ": TIFF encoding failed (libtiff: " + lastTiffError() + ")");
  };
  if (!tif) throw failed();
  const int c = image.channels();
  const bool isFloat = image.type() == PixelType::F32;
  TIFFSetField(tif.get(), TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(image.width()));
  TIFFSetField(tif.get(), TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(image.height()));
  TIFFSetField(tif.get(), TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(c));
  TIFFSetField(tif.get(), TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(8 * bytesPerSample(image.type())));
  TIFFSetField(tif.get(), TIFFTAG_SAMPLEFORMAT,
               static_cast<std::uint16_t>(isFloat ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
  TIFFSetField(tif.get(), TIFFTAG_PHOTOMETRIC,
               static_cast<std::uint16_t>(c >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK));
  TIFFSetField(tif.get(), TIFFTAG_PLANARCONFIG, static_cast<std::uint16_t>(PLANARCONFIG_CONTIG));
  if (c == 4) {
    const std::uint16_t extra[] = {EXTRASAMPLE_UNASSALPHA};
    TIFFSetField(tif.get(), TIFFTAG_EXTRASAMPLES, static_cast<std::uint16_t>(1), extra);
  }
  if (level > 0) {
    TIFFSetField(tif.get(), TIFFTAG_COMPRESSION, static_cast<std::uint16_t>(COMPRESSION_ADOBE_DEFLATE));
    TIFFSetField(tif.get(), TIFFTAG_ZIPQUALITY, level);
    TIFFSetField(tif.get(), TIFFTAG_PREDICTOR,
                 static_cast<std::uint16_t>(isFloat ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL));
  } else {
    TIFFSetField(tif.get(), TIFFTAG_COMPRESSION, static_cast<std::uint16_t>(COMPRESSION_NONE));
  }
  // Strips of about 256 KiB: small enough to stream, large enough to compress well.
  const std::uint32_t rows =
      static_cast<std::uint32_t>(std::max<std::size_t>(1, (std::size_t{256} << 10) / image.rowBytes()));
  TIFFSetField(tif.get(), TIFFTAG_ROWSPERSTRIP,
               std::min<std::uint32_t>(rows, static_cast<std::uint32_t>(image.height())));
  const std::uint32_t strips = TIFFNumberOfStrips(tif.get());
  const std::size_t stripRows = std::min<std::size_t>(rows, static_cast<std::size_t>(image.height()));
  std::vector<std::byte> strip;  // libtiff's predictor works in place: give it a copy
  for (std::uint32_t s = 0; s < strips; ++s) {
    const std::size_t first = s * stripRows,
                      count = std::min(stripRows, static_cast<std::size_t>(image.height()) - first);
    const std::byte* from = image.data() + first * image.rowBytes();
    strip.assign(from, from + count * image.rowBytes());
    if (TIFFWriteEncodedStrip(tif.get(), s, strip.data(), static_cast<tmsize_t>(strip.size())) < 0) throw failed();
  }
  if (!TIFFWriteDirectory(tif.get())) throw failed();
  tif.reset();
  return std::move(file.output);
}

}  // namespace gpulab::io_detail
