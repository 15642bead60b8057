// Format detection by content and the structural walk before a decoder sees the bytes: the header
// is checked against the size limits and the file is walked first, so a truncated, damaged or
// hostile file gets a sentence that says where, before anything large is allocated: PNG chunks with
// their CRCs up to IEND and the rows against deflate's largest expansion; JPEG markers up to EOI and
// the pixels against the entropy-coded bytes; for BMP and TGA (read through stb_image, which is not
// hardened against hostile files and fills missing bytes with zeros) the layouts stb decodes
// correctly and the bytes the header promises; PNM exactly. TIFF is checked in codec_tiff.cpp.

#include <cstdint>
#include <string>

#include "internal/image_files.hpp"

namespace gpulab::io_detail {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kReadableFormats = "PNG, JPEG, TIFF, BMP, TGA, PNM or .npy";

// ---- structural checks, one walk per format ------------------------------------------------------

/// The bytes of a PNG's filtered rows at the least (no filter bytes, no interlacing), from IHDR.
std::uint64_t pngRawBytesAtLeast(Bytes ihdr) {
  const std::uint64_t width = readBe32(ihdr.data()), height = readBe32(ihdr.data() + 4);
  const std::uint64_t depth = ihdr[8], colour = ihdr[9];
  const std::uint64_t samples = colour == 2 ? 3 : colour == 4 ? 2 : colour == 6 ? 4 : 1;
  return height * ((width * samples * depth + 7) / 8);
}

/// deflate's largest expansion: a 258-byte match coded in 2 bits, about 1032 bytes out per byte in.
constexpr std::uint64_t kDeflateMaxRatio = 1032;

Inspection inspectPng(Bytes bytes) {
  Inspection found;
  std::uint64_t idatBytes = 0, rawBytes = 0;
  found.problem = walkPngChunks(bytes, [&](std::string_view type, Bytes data) {
    if (type == "IHDR" && data.size() >= 13 && found.width < 0) {
      found.width = readBe32(data.data());
      found.height = readBe32(data.data() + 4);
      rawBytes = pngRawBytesAtLeast(data);
    }
    if (type == "IDAT") idatBytes += data.size();
  });
  // A decoded size plausible for the compressed bytes present: deflate expands at most ~1032 times.
  if (found.problem.empty() && found.width >= 0 && rawBytes > kDeflateMaxRatio * idatBytes + 1024)
    found.problem = "is truncated or corrupt (its header claims " + std::to_string(found.width) + "x" +
                    std::to_string(found.height) + " pixels, more than its " + std::to_string(idatBytes) +
                    " bytes of compressed image data can hold)";
  return found;
}

/// Follows the JPEG markers from SOI to EOI, skipping segments by their lengths and entropy-coded
/// data up to the next marker, so an embedded thumbnail's EOI does not count.
Inspection walkJpeg(Bytes b, std::uint64_t& scanBytes, bool& arithmetic) {
  Inspection found;
  const std::size_t n = b.size();
  std::size_t pos = 2;
  while (true) {
    while (pos < n && b[pos] != 0xFF) ++pos;  // decoders skip stray bytes between segments too
    while (pos < n && b[pos] == 0xFF) ++pos;  // fill bytes
    if (pos >= n) {
      found.problem = "is truncated (it ends at " + byteOffset(n) + " without an end-of-image marker)";
      return found;
    }
    const std::uint8_t marker = b[pos++];
    if (marker == 0xD9) return found;
    if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    if (n - pos < 2 || readBe16(&b[pos]) > n - pos) {
      found.problem = "is truncated (a JPEG segment at " + byteOffset(pos - 2) + " runs past the end of the file)";
      return found;
    }
    const std::size_t length = readBe16(&b[pos]);
    if (length < 2) {
      found.problem =
          "is corrupt (a JPEG segment at " + byteOffset(pos - 2) + " has length " + std::to_string(length) + ")";
      return found;
    }
    const bool frameHeader = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frameHeader && length >= 7 && found.width < 0) {
      found.height = readBe16(&b[pos + 3]);
      found.width = readBe16(&b[pos + 5]);
      arithmetic = marker >= 0xC9;
    }
    pos += length;
    if (marker != 0xDA) continue;
    const std::size_t scanStart = pos;
    // Entropy-coded data: 0xFF is followed by 0x00 (a stuffed byte), a restart marker, or the next marker.
    while (true) {
      const auto* ff = static_cast<const std::uint8_t*>(pos < n ? std::memchr(&b[pos], 0xFF, n - pos) : nullptr);
      if (ff == nullptr || ff + 1 >= b.data() + n) {
        found.problem = "is truncated (it ends inside the compressed data at " + byteOffset(n) + ")";
        return found;
      }
      pos = static_cast<std::size_t>(ff - b.data());
      const std::uint8_t next = b[pos + 1];
      if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) {
        pos += 2;
      } else if (next == 0xFF) {
        pos += 1;
      } else {
        break;
      }
    }
    scanBytes += pos - scanStart;
  }
}

/// Huffman-coded JPEG needs at least one bit per 8x8 block of each component in a scan, and the
/// component with the fewest blocks (sampling 1x1 beside 4x4) has one per 32x32 pixels: at most
/// 1024 x 8 pixels per byte of entropy-coded data. (Arithmetic coding has no such bound: it may
/// legally end early and have the decoder supply zeros; the size limits bound it.)
constexpr std::uint64_t kJpegHuffmanMaxPixelsPerByte = 8192;

Inspection inspectJpeg(Bytes b) {
  std::uint64_t scanBytes = 0;
  bool arithmetic = false;
  Inspection found = walkJpeg(b, scanBytes, arithmetic);
  if (found.problem.empty() && found.width > 0 && found.height > 0 && !arithmetic &&
      static_cast<std::uint64_t>(found.width) * static_cast<std::uint64_t>(found.height) >
          kJpegHuffmanMaxPixelsPerByte * (scanBytes + 2))
    found.problem = "is truncated or corrupt (its frame header claims " + std::to_string(found.width) + "x" +
                    std::to_string(found.height) + " pixels, more than its " + std::to_string(scanBytes) +
                    " bytes of compressed image data can hold)";
  return found;
}

Inspection inspectBmp(Bytes b) {
  Inspection found;
  if (b.size() < 26) {
    found.problem = "is truncated (it ends inside the BMP header)";
    return found;
  }
  const std::uint64_t offset = readLe32(&b[10]);
  const std::uint32_t headerSize = readLe32(&b[14]);
  std::uint32_t bitsPerPixel = 0, compression = 0;
  if (headerSize == 12) {
    found.width = readLe16(&b[18]);
    found.height = readLe16(&b[20]);
    bitsPerPixel = readLe16(&b[24]);
  } else {
    if (b.size() < 34) {
      found.problem = "is truncated (it ends inside the BMP header)";
      return found;
    }
    found.width = static_cast<std::int32_t>(readLe32(&b[18]));
    found.height = std::abs(std::int64_t{static_cast<std::int32_t>(readLe32(&b[22]))});  // negative: top-down rows
    bitsPerPixel = readLe16(&b[28]);
    compression = readLe32(&b[30]);
  }
  // The layouts stb_image decodes correctly, compared unsigned: uncompressed (BI_RGB) at 1, 4, 8, 16,
  // 24 or 32 bits and bit fields (BI_BITFIELDS) at 16 or 32. stb compares the compression signed,
  // so a value of 2^31 or more would be taken for uncompressed: refused here, before stb sees it.
  const std::uint32_t planes = headerSize == 12 ? readLe16(&b[22]) : readLe16(&b[26]);
  const bool depthKnown = bitsPerPixel == 1 || bitsPerPixel == 4 || bitsPerPixel == 8 || bitsPerPixel == 16 ||
                          bitsPerPixel == 24 || bitsPerPixel == 32;
  if (compression != 0 && !(compression == 3 && (bitsPerPixel == 16 || bitsPerPixel == 32))) {
    const char* kind = compression == 1   ? " (RLE8)"
                       : compression == 2 ? " (RLE4)"
                       : compression == 3 ? " (bit fields at other than 16 or 32 bits)"
                       : compression == 4 ? " (embedded JPEG)"
                       : compression == 5 ? " (embedded PNG)"
                       : compression == 6 ? " (alpha bit fields)"
                                          : "";
    found.problem = "is a BMP gpulab does not read (compression " + std::to_string(compression) + kind +
                    "); it reads uncompressed BMPs and 16- or 32-bit bit-field BMPs";
    return found;
  }
  if (!depthKnown || planes != 1) {
    found.problem = "is corrupt (its BMP header states " + std::to_string(bitsPerPixel) + " bits a pixel and " +
                    std::to_string(planes) + " planes; BMPs have 1, 4, 8, 16, 24 or 32 bits and 1 plane)";
    return found;
  }
  // Every row is stored, padded to 4 bytes: the file must hold offset + rows x stride bytes.
  if (found.width > 0) {
    const std::uint64_t rowBytes = (static_cast<std::uint64_t>(found.width) * bitsPerPixel + 31) / 32 * 4;
    const std::uint64_t needed = offset + rowBytes * static_cast<std::uint64_t>(found.height);
    if (needed > b.size())
      found.problem = "is truncated (its BMP header promises " + std::to_string(needed) + " bytes, the file has " +
                      std::to_string(b.size()) + ")";
  }
  return found;
}

Inspection inspectTga(Bytes b) {
  Inspection found;
  if (b.size() < 18) {
    found.problem = "is truncated (it ends inside the TGA header)";
    return found;
  }
  const std::uint32_t idLength = b[0], colorMapped = b[1], imageType = b[2];
  const std::uint32_t paletteStart = readLe16(&b[3]), paletteLength = readLe16(&b[5]), paletteBits = b[7];
  found.width = readLe16(&b[12]);
  found.height = readLe16(&b[14]);
  const std::uint64_t pixelBytes = (std::uint64_t{b[16]} + 7) / 8;
  // The same offsets stb_image uses, palette start included.
  std::uint64_t pos = 18 + idLength;
  if (colorMapped) pos += paletteStart + std::uint64_t{paletteLength} * ((paletteBits + 7) / 8);
  const std::uint64_t pixels = static_cast<std::uint64_t>(found.width) * static_cast<std::uint64_t>(found.height);
  // Colour-mapped pixels index the palette; stb_image would show an index beyond it as entry 0.
  bool indexBeyondPalette = false;
  const auto checkIndexes = [&](std::uint64_t from, std::uint64_t count) {
    if (!colorMapped || from + count * pixelBytes > b.size()) return;  // short: reported as truncated
    for (std::uint64_t i = 0; i < count && !indexBeyondPalette; ++i) {
      const std::uint8_t* p = &b[from + i * pixelBytes];
      indexBeyondPalette = (pixelBytes == 1 ? p[0] : readLe16(p)) >= paletteLength;
    }
  };
  if (imageType < 8) {
    checkIndexes(pos, pixels);
    pos += pixels * pixelBytes;
  } else {
    std::uint64_t done = 0;
    while (done < pixels && pos < b.size()) {
      const std::uint8_t packet = b[pos++];
      const std::uint64_t count = (packet & 0x7Fu) + 1u;
      const std::uint64_t stored = (packet & 0x80u) ? 1 : count;  // a run stores one pixel
      checkIndexes(pos, stored);
      pos += stored * pixelBytes;
      done += count;
    }
    if (done < pixels) pos = b.size() + 1;
  }
  if (pos > b.size())
    found.problem = "is truncated (its TGA header promises more pixel data than the " + std::to_string(b.size()) +
                    " bytes of the file hold)";
  else if (indexBeyondPalette)
    found.problem =
        "is corrupt (a pixel's colour index is beyond its " + std::to_string(paletteLength) + "-entry TGA palette)";
  return found;
}

Inspection inspectPnm(Bytes b) {
  Inspection found;
  const std::size_t n = b.size();
  std::size_t pos = 2;
  std::array<std::uint64_t, 3> values{};  // width, height, maxval
  for (std::uint64_t& value : values) {
    while (pos < n && (isSpace(b[pos]) || b[pos] == '#')) {
      if (b[pos] == '#')
        while (pos < n && b[pos] != '\n' && b[pos] != '\r') ++pos;
      else
        ++pos;
    }
    if (pos >= n || b[pos] < '0' || b[pos] > '9') {
      found.problem =
          pos >= n ? "is truncated (it ends inside the PNM header)" : "is corrupt (its PNM header is malformed)";
      return found;
    }
    for (; pos < n && b[pos] >= '0' && b[pos] <= '9'; ++pos)  // every digit is read; the value saturates
      if (value < (std::uint64_t{1} << 24)) value = value * 10 + (b[pos] - '0');
  }
  if (values[2] == 0 || values[2] > 65535) {
    found.problem = "is corrupt (its PNM maximum value " + std::to_string(values[2]) + " is outside 1 to 65535)";
    return found;
  }
  found.width = static_cast<std::int64_t>(values[0]);
  found.height = static_cast<std::int64_t>(values[1]);
  ++pos;  // the one whitespace character after maxval
  found.pnmDataOffset = pos;
  found.pnmMaxValue = static_cast<std::uint32_t>(values[2]);
  const std::uint64_t samples = values[0] * values[1] * (b[1] == '6' ? 3 : 1) * (values[2] > 255 ? 2 : 1);
  if (pos > n || samples > n - pos) {
    found.problem = "is truncated (its PNM header promises " + std::to_string(samples) +
                    " bytes of pixels, the file has " + std::to_string(pos > n ? 0 : n - pos) + ")";
    return found;
  }
  // The size is exact: after the pixels only white space or the next image of a multi-image file.
  std::size_t after = pos + static_cast<std::size_t>(samples);
  while (after < n && isSpace(b[after])) ++after;
  if (after < n && b[after] != 'P')
    found.problem = "is corrupt (" + std::to_string(n - pos - samples) + " bytes follow the " +
                    std::to_string(samples) + " bytes of pixels its PNM header promises)";
  return found;
}

/// Whether an 18-byte TGA header is one stb_image decodes and is self-consistent: colour-map type 0
/// or 1, image type 1, 2, 3, 9, 10 or 11 matching it, a pixel depth that type has, colour-map fields
/// consistent with the type, and both sides at least 1. TGA has no signature: this is the evidence.
bool isPlausibleTgaHeader(Bytes h) {
  if (h.size() < 18) return false;
  const std::uint32_t mapType = h[1], imageType = h[2], mapLength = readLe16(&h[5]), mapBits = h[7];
  const std::uint32_t width = readLe16(&h[12]), height = readLe16(&h[14]), depth = h[16], descriptor = h[17];
  if (width < 1 || height < 1 || (descriptor & 0xC0u) != 0) return false;  // bits 6-7: interleaving, unused since 1989
  const std::uint32_t base = imageType & ~8u;                              // 9, 10, 11: the RLE forms of 1, 2, 3
  if (imageType != base && imageType != base + 8) return false;
  switch (base) {
    case 1:  // colour-mapped: 8- or 16-bit indexes into a palette of 8, 15, 16, 24 or 32-bit entries
      return mapType == 1 && mapLength >= 1 && (depth == 8 || depth == 16) &&
             (mapBits == 8 || mapBits == 15 || mapBits == 16 || mapBits == 24 || mapBits == 32);
    case 2:  // true colour
      return mapType == 0 && mapLength == 0 && (depth == 15 || depth == 16 || depth == 24 || depth == 32);
    case 3:  // gray, or gray + alpha at 16 bits
      return mapType == 0 && mapLength == 0 && (depth == 8 || depth == 16);
    default:
      return false;
  }
}

}  // namespace

// ---- format detection ---------------------------------------------------------------------------

FileFormat detectFormat(Bytes head, const fs::path& path, const std::string& name) {
  if (startsWith(head, kNpyMagic)) return FileFormat::Npy;
  if (startsWith(head, kPngSignature)) return FileFormat::Png;
  if (head.size() >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) return FileFormat::Jpeg;
  if (head.size() >= 4 && ((head[0] == 'I' && head[1] == 'I' && (head[2] == 42 || head[2] == 43) && head[3] == 0) ||
                           (head[0] == 'M' && head[1] == 'M' && head[2] == 0 && (head[3] == 42 || head[3] == 43))))
    return FileFormat::Tiff;  // classic and BigTIFF, either byte order
  if (head.size() >= 2 && head[0] == 'B' && head[1] == 'M') {
    // "BM" alone is weak evidence; the info header sizes stb_image knows make it strong.
    const std::uint32_t headerSize = head.size() >= 18 ? readLe32(head.data() + 14) : 0;
    if (headerSize == 12 || headerSize == 40 || headerSize == 56 || headerSize == 108 || headerSize == 124)
      return FileFormat::Bmp;
  }
  if (head.size() >= 3 && head[0] == 'P' && isSpace(head[2])) {
    if (head[1] == '5' || head[1] == '6') return FileFormat::Pnm;
    if (head[1] >= '1' && head[1] <= '4')
      throw ImageIoError(name + " is a plain-text or 1-bit PNM (P1 to P4); gpulab reads binary PGM and PPM (P5, P6)");
  }
  // TGA has no signature: the name must say .tga and the header must hold together.
  if (lowercaseExtension(path) == ".tga") {
    if (head.size() < 18) throw ImageIoError(name + " is truncated (it ends inside the 18-byte TGA header)");
    if (isPlausibleTgaHeader(head)) return FileFormat::Tga;
    throw ImageIoError(name +
                       " is named .tga but its header is not a TGA header gpulab reads (types, pixel depth or colour "
                       "map do not hold together); gpulab reads " +
                       std::string(kReadableFormats));
  }
  for (std::string_view magic : {kPngSignature, kNpyMagic})
    if (head.size() < magic.size() &&
        startsWith(asBytes(magic), std::string_view(reinterpret_cast<const char*>(head.data()), head.size())))
      throw ImageIoError(name + " is truncated (it ends inside the file signature)");
  throw ImageIoError(name + " is not an image gpulab reads (" + std::string(kReadableFormats) + ")");
}

Inspection inspect(FileFormat format, Bytes bytes) {
  switch (format) {
    case FileFormat::Png:
      return inspectPng(bytes);
    case FileFormat::Jpeg:
      return inspectJpeg(bytes);
    case FileFormat::Bmp:
      return inspectBmp(bytes);
    case FileFormat::Tga:
      return inspectTga(bytes);
    case FileFormat::Pnm:
      return inspectPnm(bytes);
    case FileFormat::Npy:
    case FileFormat::Tiff:
      break;
  }
  return {};
}

}  // namespace gpulab::io_detail
