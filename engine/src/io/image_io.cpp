// Image files. stb_image / stb_image_write do PNG, JPEG, BMP and TGA pixels; this file does the
// rest: the files themselves (read once, written atomically), format detection by content, NumPy
// .npy both ways, binary PGM/PPM output and PNG tEXt chunks.
//
// stb_image is not hardened against hostile files and fills missing bytes with zeros rather than
// failing, so before stb decodes anything the header is checked against the size limits and the
// file is walked structurally: PNG chunks with their CRCs up to IEND, JPEG markers up to EOI, and
// for BMP, TGA and PNM the bytes the header promises.
#include "gpulab/io/image_io.hpp"

#include <fcntl.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace gpulab {

namespace fs = std::filesystem;

namespace {

static_assert(std::endian::native == std::endian::little, ".npy and image I/O assume a little-endian host");

using Bytes = std::span<const std::uint8_t>;

enum class FileFormat { Png, Jpeg, Bmp, Tga, Pnm, Npy };

std::string_view formatName(FileFormat format) {
  switch (format) {
    case FileFormat::Png:
      return "PNG";
    case FileFormat::Jpeg:
      return "JPEG";
    case FileFormat::Bmp:
      return "BMP";
    case FileFormat::Tga:
      return "TGA";
    case FileFormat::Pnm:
      return "PNM";
    case FileFormat::Npy:
      return ".npy";
  }
  return "?";
}

constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};
constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};
constexpr std::string_view kReadableFormats = "PNG, JPEG, BMP, TGA, PNM or .npy";
// NumPy refuses longer headers too (numpy.lib.format, max_header_size).
constexpr std::size_t kMaxNpyHeaderBytes = 10000;

// ---- small helpers ------------------------------------------------------------------------------

std::string errnoMessage(int err) { return std::generic_category().message(err); }

std::uint32_t readBe16(const std::uint8_t* p) { return std::uint32_t{p[0]} << 8 | p[1]; }
std::uint32_t readBe32(const std::uint8_t* p) { return readBe16(p) << 16 | readBe16(p + 2); }
std::uint32_t readLe16(const std::uint8_t* p) { return std::uint32_t{p[1]} << 8 | p[0]; }
std::uint32_t readLe32(const std::uint8_t* p) { return readLe16(p + 2) << 16 | readLe16(p); }

bool startsWith(Bytes bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() && std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

Bytes asBytes(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

std::string lowercaseExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return ext;
}

/// validateImageShape's sentence as an ImageIoError naming the file; sizes beyond int are caught too.
void checkShape(std::int64_t width, std::int64_t height, int channels, const std::string& name) {
  if (width > INT_MAX || height > INT_MAX || width < INT_MIN || height < INT_MIN)
    throw ImageIoError(name + ": image size " + std::to_string(width) + "x" + std::to_string(height) +
                       " exceeds the limit of " + std::to_string(kMaxImageDimension) + " pixels a side");
  try {
    validateImageShape(static_cast<int>(width), static_cast<int>(height), channels);
  } catch (const std::invalid_argument& e) {
    throw ImageIoError(name + ": " + e.what());
  }
}

constexpr std::array<std::uint32_t, 256> makeCrcTable() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = makeCrcTable();

/// CRC-32 as PNG (and zlib) define it.
std::uint32_t crc32(Bytes bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint8_t b : bytes) c = kCrcTable[(c ^ b) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// ---- files --------------------------------------------------------------------------------------

class FileHandle {
 public:
  explicit FileHandle(int fd) noexcept : fd_(fd) {}
  FileHandle(FileHandle&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileHandle& operator=(FileHandle&&) = delete;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  /// Closes now and reports close()'s result, which the destructor cannot.
  int close() noexcept { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

struct InputFile {
  FileHandle file;
  std::uint64_t size;
};

InputFile openForReading(const fs::path& path, const std::string& name) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) throw ImageIoError(name + " does not exist");
  if (ec) throw ImageIoError("cannot open " + name + ": " + ec.message());
  if (status.type() == fs::file_type::directory) throw ImageIoError(name + " is a directory, not an image file");
  if (status.type() != fs::file_type::regular) throw ImageIoError(name + " is not a regular file");
  FileHandle file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) throw ImageIoError("cannot open " + name + ": " + errnoMessage(errno));
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) throw ImageIoError("cannot read " + name + ": " + errnoMessage(errno));
  if (info.st_size == 0) throw ImageIoError(name + " is empty");
  return {std::move(file), static_cast<std::uint64_t>(info.st_size)};
}

/// Reads up to `count` bytes at `offset`; fewer only where the file ends.
std::size_t readAt(const InputFile& in, std::uint64_t offset, void* dst, std::size_t count, const std::string& name) {
  auto* out = static_cast<char*>(dst);
  std::size_t done = 0;
  while (done < count) {
    const std::size_t chunk = std::min<std::size_t>(count - done, std::size_t{1} << 30);
    const ssize_t got = ::pread(in.file.get(), out + done, chunk, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw ImageIoError("cannot read " + name + ": " + errnoMessage(errno));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

std::vector<std::uint8_t> readWhole(const InputFile& in, const std::string& name) {
  if (in.size > std::uint64_t{INT_MAX})
    throw ImageIoError(name + " is " + std::to_string(in.size) +
                       " bytes, more than the 2 GiB an image within gpulab's size limits can take");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(in.size));
  if (readAt(in, 0, bytes.data(), bytes.size(), name) != bytes.size())
    throw ImageIoError(name + " became shorter while it was being read");
  return bytes;
}

std::string describeDirectory(const fs::path& dir) {
  return dir == "." ? std::string("the current directory") : "the directory " + dir.string();
}

/// Writes `parts` to a new file in the same directory and renames it over `path`, so readers see the
/// old file or the new one, never half of one.
void writeFileAtomically(const fs::path& path, const std::string& name, std::initializer_list<std::string_view> parts) {
  if (!path.has_filename() || path.filename() == "." || path.filename() == "..")
    throw ImageIoError("cannot save " + name + ": the path names no file");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ImageIoError("cannot save " + name + ": " + describeDirectory(dir) + " does not exist");
  if (fs::is_directory(path, ec)) throw ImageIoError("cannot save " + name + ": it is a directory");

  static std::atomic<unsigned> counter{0};
  fs::path temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = dir / (".gpulab-save-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp");
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 100))
      throw ImageIoError("cannot save " + name + ": cannot create a file in " + describeDirectory(dir) + " (" +
                         errnoMessage(errno) + ")");
  }
  FileHandle file(fd);
  auto failure = [&](const std::string& what, int err) {
    if (file.get() >= 0) file.close();
    ::unlink(temp.c_str());
    return ImageIoError("cannot save " + name + ": " + what + " (" + errnoMessage(err) + ")");
  };
  for (std::string_view part : parts) {
    while (!part.empty()) {
      const ssize_t put = ::write(fd, part.data(), std::min<std::size_t>(part.size(), std::size_t{1} << 30));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) throw failure("writing failed", errno);
      part.remove_prefix(static_cast<std::size_t>(put));
    }
  }
  if (::fsync(fd) != 0) throw failure("flushing to disk failed", errno);
  if (file.close() != 0) throw failure("closing the file failed", errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) throw failure("renaming the finished file failed", errno);
}

// ---- format detection ---------------------------------------------------------------------------

bool isSpace(std::uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

FileFormat detectFormat(Bytes head, const fs::path& path, const std::string& name) {
  if (startsWith(head, kNpyMagic)) return FileFormat::Npy;
  if (startsWith(head, kPngSignature)) return FileFormat::Png;
  if (head.size() >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) return FileFormat::Jpeg;
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
  if (lowercaseExtension(path) == ".tga") return FileFormat::Tga;  // TGA has no signature
  for (std::string_view magic : {kPngSignature, kNpyMagic})
    if (head.size() < magic.size() &&
        startsWith(asBytes(magic), std::string_view(reinterpret_cast<const char*>(head.data()), head.size())))
      throw ImageIoError(name + " is truncated (it ends inside the file signature)");
  throw ImageIoError(name + " is not an image gpulab reads (" + std::string(kReadableFormats) + ")");
}

// ---- structural checks before stb decodes -------------------------------------------------------

/// What the walk over a file found: the dimensions its header states (-1 where not found) and, if the
/// file is incomplete or damaged, the rest of a sentence that starts with the file's name.
struct Inspection {
  std::int64_t width = -1;
  std::int64_t height = -1;
  std::string problem;
  std::size_t pnmDataOffset = 0;  // PNM only: where the samples start and their maximum value
  std::uint32_t pnmMaxValue = 0;
};

std::string byteOffset(std::size_t pos) { return "byte " + std::to_string(pos); }

/// Walks the chunks of a PNG held in memory up to IEND, checking lengths, bounds and CRCs, and calls
/// onChunk(type, data) for each. Returns the problem found, or an empty string.
template <class OnChunk>
std::string walkPngChunks(Bytes bytes, OnChunk&& onChunk) {
  std::size_t pos = kPngSignature.size();
  while (true) {
    if (bytes.size() - pos < 12)
      return "is truncated (it ends at " + byteOffset(bytes.size()) + " without an IEND chunk)";
    const std::uint32_t length = readBe32(&bytes[pos]);
    const std::string_view type(reinterpret_cast<const char*>(&bytes[pos + 4]), 4);
    if (!std::all_of(type.begin(), type.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }))
      return "is corrupt (no valid PNG chunk at " + byteOffset(pos) + ")";
    if (length > 0x7FFFFFFFu)
      return "is corrupt (chunk '" + std::string(type) + "' at " + byteOffset(pos) + " claims " +
             std::to_string(length) + " bytes)";
    if (length > bytes.size() - pos - 12)
      return "is truncated (chunk '" + std::string(type) + "' at " + byteOffset(pos) + " needs " +
             std::to_string(length) + " bytes but the file ends at " + byteOffset(bytes.size()) + ")";
    if (crc32(bytes.subspan(pos + 4, length + 4)) != readBe32(&bytes[pos + 8 + length]))
      return "is corrupt (CRC mismatch in chunk '" + std::string(type) + "' at " + byteOffset(pos) + ")";
    onChunk(type, bytes.subspan(pos + 8, length));
    if (type == "IEND") return {};
    pos += 12 + std::size_t{length};
  }
}

Inspection inspectPng(Bytes bytes) {
  Inspection found;
  found.problem = walkPngChunks(bytes, [&](std::string_view type, Bytes data) {
    if (type == "IHDR" && data.size() >= 8 && found.width < 0) {
      found.width = readBe32(data.data());
      found.height = readBe32(data.data() + 4);
    }
  });
  return found;
}

/// Follows the JPEG markers from SOI to EOI, skipping segments by their lengths and entropy-coded
/// data up to the next marker, so an embedded thumbnail's EOI does not count.
Inspection inspectJpeg(Bytes b) {
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
    }
    pos += length;
    if (marker != 0xDA) continue;
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
  }
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
  // Uncompressed and bit-field layouts have rows of a known size; stb_image reads no RLE BMPs.
  if ((compression == 0 || compression == 3 || compression == 6) && found.width > 0 && bitsPerPixel <= 32) {
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
  if (imageType < 8) {
    pos += pixels * pixelBytes;
  } else {
    std::uint64_t done = 0;
    while (done < pixels && pos < b.size()) {
      const std::uint8_t packet = b[pos++];
      const std::uint64_t count = (packet & 0x7Fu) + 1u;
      pos += (packet & 0x80u) ? pixelBytes : count * pixelBytes;
      done += count;
    }
    if (done < pixels) pos = b.size() + 1;
  }
  if (pos > b.size())
    found.problem = "is truncated (its TGA header promises more pixel data than the " + std::to_string(b.size()) +
                    " bytes of the file hold)";
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
    while (pos < n && b[pos] >= '0' && b[pos] <= '9' && value < (std::uint64_t{1} << 24))
      value = value * 10 + (b[pos++] - '0');
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
  if (pos > n || samples > n - pos)
    found.problem = "is truncated (its PNM header promises " + std::to_string(samples) +
                    " bytes of pixels, the file has " + std::to_string(pos > n ? 0 : n - pos) + ")";
  return found;
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
      break;
  }
  return {};
}

// ---- decoding with stb_image --------------------------------------------------------------------

/// Binary PGM/PPM samples scaled from 0..maxval to 0..255; 16-bit samples are big-endian. (stb_image
/// 2.27 ignores maxval and reads 16-bit PNM in the wrong byte order.)
Image decodePnm(Bytes b, const Inspection& found, bool rgb) {
  Image image(static_cast<int>(found.width), static_cast<int>(found.height), rgb ? 3 : 1, PixelType::U8);
  const std::uint8_t* in = b.data() + found.pnmDataOffset;
  const std::uint32_t maxValue = found.pnmMaxValue;
  auto samples = image.samples<std::uint8_t>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::uint32_t v = maxValue > 255 ? readBe16(in + 2 * i) : in[i];
    samples[i] = maxValue == 255 ? static_cast<std::uint8_t>(v)
                                 : static_cast<std::uint8_t>((std::min(v, maxValue) * 255 + maxValue / 2) / maxValue);
  }
  return image;
}

Image decodeWithStb(const std::vector<std::uint8_t>& bytes, FileFormat format, const std::string& name) {
  const Inspection found = inspect(format, bytes);
  // A header cut short or broken says nothing trustworthy about the size: report that first. Then
  // the limits, from our own reading of the header: stb_image's info call tries every format in
  // turn, so its failure reason names the last one tried, not the file's.
  if (!found.problem.empty() && found.width < 0) throw ImageIoError(name + " " + found.problem);
  if (found.width >= 0) checkShape(found.width, found.height, 1, name);
  const int length = static_cast<int>(bytes.size());
  int width = 0, height = 0, components = 0;
  if (!stbi_info_from_memory(bytes.data(), length, &width, &height, &components)) {
    if (!found.problem.empty()) throw ImageIoError(name + " " + found.problem);
    throw ImageIoError(name + " is corrupt (stb_image cannot read its " + std::string(formatName(format)) + " header)");
  }
  if (format == FileFormat::Bmp) height = static_cast<int>(std::abs(std::int64_t{height}));  // top-down BMP
  checkShape(width, height, 1, name);
  if (!found.problem.empty()) throw ImageIoError(name + " " + found.problem);
  if (format == FileFormat::Pnm) return decodePnm(bytes, found, bytes[1] == '6');

  std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(bytes.data(), length, &width, &height, &components, 0), &stbi_image_free);
  if (!pixels) {
    const char* why = stbi_failure_reason();
    throw ImageIoError(name + " is truncated or corrupt (stb_image: " + (why ? why : "unknown error") + ")");
  }
  checkShape(width, height, components, name);
  Image image(width, height, components == 2 ? 4 : components, PixelType::U8);
  const std::size_t count = image.pixelCount();
  auto* out = reinterpret_cast<std::uint8_t*>(image.data());
  if (components == 2) {  // gray + alpha becomes RGBA
    for (std::size_t i = 0; i < count; ++i) {
      out[4 * i] = out[4 * i + 1] = out[4 * i + 2] = pixels.get()[2 * i];
      out[4 * i + 3] = pixels.get()[2 * i + 1];
    }
  } else {
    std::memcpy(out, pixels.get(), image.sizeBytes());
  }
  return image;
}

// ---- .npy ---------------------------------------------------------------------------------------

struct NpyLayout {
  PixelType type = PixelType::U8;
  int height = 0;
  int width = 0;
  int channels = 0;
  std::uint64_t dataBytes = 0;
};

/// The size of the magic, version, length field and header together, from the first bytes (at
/// least 12 where the file has them) and the total size.
std::size_t npyPrefixLength(Bytes head, std::uint64_t totalSize, const std::string& name) {
  if (head.size() < 8) throw ImageIoError(name + " is truncated (it ends inside the .npy preamble)");
  const unsigned major = head[6], minor = head[7];
  if (major < 1 || major > 3 || minor != 0)
    throw ImageIoError(name + " has .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                       "; gpulab reads versions 1.0, 2.0 and 3.0");
  const std::size_t fieldBytes = major == 1 ? 2 : 4;
  if (head.size() < 8 + fieldBytes) throw ImageIoError(name + " is truncated (it ends inside the .npy preamble)");
  const std::uint64_t headerBytes = major == 1 ? readLe16(&head[8]) : readLe32(&head[8]);
  if (headerBytes > kMaxNpyHeaderBytes)
    throw ImageIoError(name + " has a .npy header of " + std::to_string(headerBytes) + " bytes, more than the " +
                       std::to_string(kMaxNpyHeaderBytes) + " that NumPy itself reads");
  const std::size_t prefix = 8 + fieldBytes + static_cast<std::size_t>(headerBytes);
  if (prefix > totalSize)
    throw ImageIoError(name + " is truncated (its .npy header needs " + std::to_string(prefix) +
                       " bytes, the data has " + std::to_string(totalSize) + ")");
  return prefix;
}

/// Parses the Python dict literal of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<std::vector<std::uint64_t>> shape;
  };

  Fields parse() {
    Fields fields;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') break;
      const std::string key = parseString();
      expect(':');
      skipSpace();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          throw ImageIoError(name_ +
                             " holds a structured NumPy dtype, which gpulab does not read: use uint8 ('|u1'), "
                             "float32 ('<f4') or float64 ('<f8')");
        fields.descr = parseString();
      } else if (key == "fortran_order") {
        fields.fortranOrder = parseBool();
      } else if (key == "shape") {
        fields.shape = parseTuple();
      } else {
        throw malformed("an unexpected key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') throw malformed("',' or '}' expected at position " + std::to_string(pos_));
    }
    ++pos_;
    skipSpace();
    if (pos_ != text_.size()) throw malformed("text after the closing '}'");
    if (!fields.descr || !fields.fortranOrder || !fields.shape)
      throw malformed("the keys 'descr', 'fortran_order' and 'shape' are required");
    return fields;
  }

 private:
  ImageIoError malformed(const std::string& what) const {
    return ImageIoError(name_ + " has a malformed .npy header (" + what + ")");
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && isSpace(static_cast<std::uint8_t>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c) throw malformed(std::string("'") + c + "' expected at position " + std::to_string(pos_));
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    const char quote = peek();
    if (quote != '\'' && quote != '"') throw malformed("a quoted string expected at position " + std::to_string(pos_));
    std::string out;
    for (++pos_; pos_ < text_.size() && text_[pos_] != quote; ++pos_) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_];
    }
    if (pos_ >= text_.size()) throw malformed("an unterminated string");
    ++pos_;
    return out;
  }
  bool parseBool() {
    for (std::string_view word : {"True", "False"})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return word == "True";
      }
    throw malformed("True or False expected at position " + std::to_string(pos_));
  }
  std::vector<std::uint64_t> parseTuple() {
    std::vector<std::uint64_t> dims;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') throw malformed("a dimension expected at position " + std::to_string(pos_));
      std::uint64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        value = std::min<std::uint64_t>(value * 10 + static_cast<std::uint64_t>(peek() - '0'), std::uint64_t{1} << 62);
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literals, as NumPy itself accepts in versions 1.0 and 2.0
      dims.push_back(value);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') throw malformed("',' or ')' expected at position " + std::to_string(pos_));
    }
    ++pos_;
    return dims;
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::string shapeText(const std::vector<std::uint64_t>& dims) {
  std::string out = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

NpyLayout parseNpyHeader(std::string_view prefix, const std::string& name) {
  const std::size_t fieldBytes = prefix[6] == 1 ? 2 : 4;
  const NpyHeaderParser::Fields fields = NpyHeaderParser(prefix.substr(8 + fieldBytes), name).parse();
  NpyLayout layout;
  const std::string& descr = *fields.descr;
  if (descr == "|u1" || descr == "<u1" || descr == ">u1" || descr == "=u1") {
    layout.type = PixelType::U8;
  } else if (descr == "<f4") {
    layout.type = PixelType::F32;
  } else if (descr == "<f8") {
    layout.type = PixelType::F64;
  } else if (descr == ">f4" || descr == ">f8") {
    throw ImageIoError(name + " holds big-endian data ('" + descr + "'); gpulab reads little-endian: save a.astype('<" +
                       descr.substr(1) + "')");
  } else {
    throw ImageIoError(name + " holds NumPy dtype '" + descr +
                       "', which gpulab does not read: use uint8 ('|u1'), float32 ('<f4') or float64 ('<f8')");
  }
  if (*fields.fortranOrder)
    throw ImageIoError(name + " is stored in Fortran (column-major) order; save np.ascontiguousarray(a) instead");
  const std::vector<std::uint64_t>& dims = *fields.shape;
  const std::string allowed =
      "gpulab reads (H, W) or (H, W, C) arrays with C from 1 to " + std::to_string(kMaxChannels);
  if (dims.size() != 2 && dims.size() != 3) throw ImageIoError(name + " has shape " + shapeText(dims) + "; " + allowed);
  if (std::find(dims.begin(), dims.end(), 0) != dims.end())
    throw ImageIoError(name + " has shape " + shapeText(dims) + ", an empty array; " + allowed);
  const std::uint64_t channels = dims.size() == 3 ? dims[2] : 1;
  if (channels > static_cast<std::uint64_t>(kMaxChannels))
    throw ImageIoError(name + " has shape " + shapeText(dims) + "; " + allowed);
  checkShape(static_cast<std::int64_t>(dims[1]), static_cast<std::int64_t>(dims[0]), static_cast<int>(channels), name);
  layout.height = static_cast<int>(dims[0]);
  layout.width = static_cast<int>(dims[1]);
  layout.channels = static_cast<int>(channels);
  layout.dataBytes = static_cast<std::uint64_t>(layout.height) * static_cast<std::uint64_t>(layout.width) *
                     static_cast<std::uint64_t>(layout.channels) * bytesPerSample(layout.type);
  return layout;
}

ImageIoError npyTruncated(const std::string& name, const NpyLayout& layout, std::uint64_t available) {
  return ImageIoError(name + " is truncated (its .npy header promises " + std::to_string(layout.dataBytes) +
                      " bytes of data, " + std::to_string(available) + " follow)");
}

Image loadNpy(const InputFile& in, Bytes head, const std::string& name) {
  const std::size_t prefixLength = npyPrefixLength(head, in.size, name);
  std::string prefix(prefixLength, '\0');
  if (readAt(in, 0, prefix.data(), prefixLength, name) != prefixLength)
    throw ImageIoError(name + " became shorter while it was being read");
  const NpyLayout layout = parseNpyHeader(prefix, name);
  // Bytes after the array are allowed, as numpy.load allows them (np.save called twice on one file).
  if (in.size - prefixLength < layout.dataBytes) throw npyTruncated(name, layout, in.size - prefixLength);
  Image image(layout.width, layout.height, layout.channels, layout.type);
  if (readAt(in, prefixLength, image.data(), image.sizeBytes(), name) != image.sizeBytes())
    throw ImageIoError(name + " became shorter while it was being read");
  return image;
}

std::string npyHeader(const Image& image) {
  const char* descr = image.type() == PixelType::U8 ? "|u1" : image.type() == PixelType::F32 ? "<f4" : "<f8";
  const std::string height = std::to_string(image.height());
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + height + ", " +
                     std::to_string(image.width()) +
                     (image.channels() == 1 ? std::string() : ", " + std::to_string(image.channels())) + "), }";
  // As numpy.save (1.23 and later): room for the first axis to grow to 21 digits, then spaces and a
  // newline so the data start at a multiple of 64 bytes (a full 64 when already aligned).
  dict.append(21 - height.size(), ' ');
  const std::size_t padding = 64 - (10 + dict.size() + 1) % 64;
  dict.append(padding, ' ');
  dict += '\n';
  std::string out(kNpyMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

std::string_view samplesOf(const Image& image) {
  return {reinterpret_cast<const char*>(image.data()), image.sizeBytes()};
}

// ---- encoding -----------------------------------------------------------------------------------

void appendToString(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

/// 8-bit formats take u8 gray, RGB or RGBA; anything else keeps its values only in .npy.
void requireEightBit(const Image& image, const std::string& ext, const std::string& name) {
  if (image.empty()) throw ImageIoError("cannot save " + name + ": the image is empty");
  if (image.type() != PixelType::U8)
    throw ImageIoError("cannot save " + name + ": " + ext + " stores 8-bit samples and the image is " +
                       image.describe() + "; save it as .npy to keep the values, or convert it to u8 first");
  if (image.channels() == 2)
    throw ImageIoError("cannot save " + name + ": " + ext +
                       " takes gray, RGB or RGBA images and this one has 2 channels; save it as .npy");
}

std::string encodePng(const Image& image, const std::string& name) {
  std::string out;
  if (!stbi_write_png_to_func(appendToString, &out, image.width(), image.height(), image.channels(), image.data(),
                              static_cast<int>(image.rowBytes())))
    throw ImageIoError("cannot save " + name + ": PNG encoding failed");
  return out;
}

std::string encodePnm(const Image& image, const std::string& ext, const std::string& name) {
  if (ext == ".pgm" && image.channels() != 1)
    throw ImageIoError("cannot save " + name + ": .pgm holds gray images and this one has " +
                       std::to_string(image.channels()) + " channels; use .ppm or .png");
  const bool gray = ext == ".pgm" || (ext == ".pnm" && image.channels() == 1);
  const int outChannels = gray ? 1 : 3;
  std::string out =
      (gray ? "P5\n" : "P6\n") + std::to_string(image.width()) + " " + std::to_string(image.height()) + "\n255\n";
  const std::size_t header = out.size();
  out.resize(header + image.pixelCount() * static_cast<std::size_t>(outChannels));
  const auto* in = reinterpret_cast<const std::uint8_t*>(image.data());
  char* dst = out.data() + header;
  const std::size_t c = static_cast<std::size_t>(image.channels());
  for (std::size_t i = 0; i < image.pixelCount(); ++i)
    for (int k = 0; k < outChannels; ++k)  // gray expands to RGB, alpha is dropped
      *dst++ = static_cast<char>(in[i * c + (c == 1 ? 0 : static_cast<std::size_t>(k))]);
  return out;
}

std::string encodeEightBit(const Image& image, const std::string& ext, int jpegQuality, const std::string& name) {
  requireEightBit(image, ext, name);
  std::string out;
  const int w = image.width(), h = image.height(), c = image.channels();
  int ok = 1;
  if (ext == ".png") {
    return encodePng(image, name);
  } else if (ext == ".jpg" || ext == ".jpeg") {
    if (jpegQuality < 1 || jpegQuality > 100)
      throw ImageIoError("cannot save " + name + ": JPEG quality " + std::to_string(jpegQuality) +
                         " is outside 1 to 100");
    ok = stbi_write_jpg_to_func(appendToString, &out, w, h, c, image.data(), jpegQuality);
  } else if (ext == ".bmp") {
    ok = stbi_write_bmp_to_func(appendToString, &out, w, h, c, image.data());
  } else if (ext == ".tga") {
    ok = stbi_write_tga_to_func(appendToString, &out, w, h, c, image.data());
  } else {
    return encodePnm(image, ext, name);
  }
  if (!ok) throw ImageIoError("cannot save " + name + ": encoding as " + ext + " failed");
  return out;
}

bool isEightBitExtension(const std::string& ext) {
  for (std::string_view known : {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".pgm", ".ppm", ".pnm"})
    if (ext == known) return true;
  return false;
}

void appendPngChunk(std::string& out, std::string_view type, std::string_view data) {
  const auto length = static_cast<std::uint32_t>(data.size());
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((length >> shift) & 0xFF);
  const std::size_t typeAt = out.size();
  out += type;
  out += data;
  const std::uint32_t crc = crc32(asBytes(std::string_view(out).substr(typeAt)));
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((crc >> shift) & 0xFF);
}

/// PNG keywords: 1 to 79 printable Latin-1 characters, no leading, trailing or doubled spaces.
void checkPngText(const std::string& key, const std::string& value, const std::string& name) {
  const auto printable = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 32 && u <= 126) || u >= 161;
  };
  std::string shown = key.substr(0, 100);  // the key as the message can show it, on one line
  std::replace_if(
      shown.begin(), shown.end(), [&](char c) { return !printable(c); }, '?');
  const bool keyOk = !key.empty() && key.size() <= 79 && std::all_of(key.begin(), key.end(), printable) &&
                     key.front() != ' ' && key.back() != ' ' && key.find("  ") == std::string::npos;
  if (!keyOk)
    throw ImageIoError("cannot save " + name + ": PNG text key '" + shown +
                       "' must be 1 to 79 printable Latin-1 characters without leading, trailing or double spaces");
  if (value.find('\0') != std::string::npos || value.size() > 0x7FFFFFFFu - 80)
    throw ImageIoError("cannot save " + name + ": the PNG text for key '" + shown +
                       "' contains a NUL byte or is too long");
}

}  // namespace

// ---- public API ---------------------------------------------------------------------------------

Image loadImage(const fs::path& path) {
  const std::string name = path.string();
  const InputFile in = openForReading(path, name);
  std::array<std::uint8_t, 18> head{};
  const std::size_t headLength = readAt(in, 0, head.data(), head.size(), name);
  const Bytes headBytes(head.data(), headLength);
  const FileFormat format = detectFormat(headBytes, path, name);
  if (format == FileFormat::Npy) return loadNpy(in, headBytes, name);
  return decodeWithStb(readWhole(in, name), format, name);
}

void saveImage(const Image& image, const fs::path& path, int jpegQuality) {
  const std::string name = path.string();
  const std::string ext = lowercaseExtension(path);
  if (ext == ".npy") {
    if (image.empty()) throw ImageIoError("cannot save " + name + ": the image is empty");
    const std::string header = npyHeader(image);
    writeFileAtomically(path, name, {header, samplesOf(image)});
    return;
  }
  if (!isEightBitExtension(ext))
    throw ImageIoError("cannot save " + name + ": " +
                       (ext.empty() ? std::string("it has no extension") : "unknown extension '" + ext + "'") +
                       "; gpulab writes " + supportedImageExtensions());
  const std::string encoded = encodeEightBit(image, ext, jpegQuality, name);
  writeFileAtomically(path, name, {encoded});
}

void savePngWithText(const Image& image, const fs::path& path, const std::map<std::string, std::string>& text) {
  const std::string name = path.string();
  if (lowercaseExtension(path) != ".png")
    throw ImageIoError("cannot save " + name + ": PNG text needs a .png file name");
  requireEightBit(image, ".png", name);
  for (const auto& [key, value] : text) checkPngText(key, value, name);
  std::string png = encodePng(image, name);
  // stb_image_write ends the stream with the 12-byte IEND chunk; the text goes just before it.
  const std::size_t iend = png.size() - 12;
  if (png.size() < kPngSignature.size() + 12 || png.compare(iend + 4, 4, "IEND") != 0)
    throw ImageIoError("cannot save " + name + ": the PNG encoder produced no IEND chunk");
  std::string chunks;
  for (const auto& [key, value] : text) appendPngChunk(chunks, "tEXt", key + '\0' + value);
  png.insert(iend, chunks);
  writeFileAtomically(path, name, {png});
}

std::map<std::string, std::string> readPngText(const fs::path& path) {
  const std::string name = path.string();
  const InputFile in = openForReading(path, name);
  const std::vector<std::uint8_t> bytes = readWhole(in, name);
  if (!startsWith(bytes, kPngSignature)) throw ImageIoError(name + " is not a PNG file");
  std::map<std::string, std::string> text;
  const std::string problem = walkPngChunks(bytes, [&](std::string_view type, Bytes data) {
    if (type != "tEXt") return;
    const std::string_view chunk(reinterpret_cast<const char*>(data.data()), data.size());
    const std::size_t nul = chunk.find('\0');
    if (nul == std::string_view::npos) throw ImageIoError(name + " is corrupt (a tEXt chunk has no keyword)");
    text.insert_or_assign(std::string(chunk.substr(0, nul)), std::string(chunk.substr(nul + 1)));
  });
  if (!problem.empty()) throw ImageIoError(name + " " + problem);
  return text;
}

Image decodeNpy(const std::string& bytes, const std::string& nameForErrors) {
  const std::string& name = nameForErrors;
  const Bytes all = asBytes(bytes);
  if (!startsWith(all, kNpyMagic)) throw ImageIoError(name + " is not .npy data (no \\x93NUMPY magic)");
  const std::size_t prefixLength = npyPrefixLength(all, bytes.size(), name);
  const NpyLayout layout = parseNpyHeader(std::string_view(bytes).substr(0, prefixLength), name);
  const std::uint64_t available = bytes.size() - prefixLength;
  if (available < layout.dataBytes) throw npyTruncated(name, layout, available);
  Image image(layout.width, layout.height, layout.channels, layout.type);
  std::memcpy(image.data(), bytes.data() + prefixLength, image.sizeBytes());
  return image;
}

std::string encodeNpy(const Image& image) {
  if (image.empty()) throw ImageIoError("cannot encode an empty image as .npy");
  return npyHeader(image) + std::string(samplesOf(image));
}

std::string supportedImageExtensions() { return "png, jpg, jpeg, bmp, tga, pgm, ppm, pnm, npy"; }

}  // namespace gpulab
