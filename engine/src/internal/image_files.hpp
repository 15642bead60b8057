// Engine-private pieces of image I/O shared by engine/src/io: byte access, the files themselves
// (read once, written atomically), format detection and the structural walk that runs before a
// decoder sees the bytes, the codecs (libjpeg-turbo, libspng, libtiff) and the .npy layout.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/io/image_io.hpp"

namespace gpulab::io_detail {

static_assert(std::endian::native == std::endian::little, ".npy and image I/O assume a little-endian host");

using Bytes = std::span<const std::uint8_t>;

enum class FileFormat { Png, Jpeg, Bmp, Tga, Pnm, Npy, Tiff };

std::string_view formatName(FileFormat format);

inline constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};
inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};

// ---- bytes (files.cpp) --------------------------------------------------------------------------

std::string errnoMessage(int err);

inline std::uint32_t readBe16(const std::uint8_t* p) { return std::uint32_t{p[0]} << 8 | p[1]; }
inline std::uint32_t readBe32(const std::uint8_t* p) { return readBe16(p) << 16 | readBe16(p + 2); }
inline std::uint32_t readLe16(const std::uint8_t* p) { return std::uint32_t{p[1]} << 8 | p[0]; }
inline std::uint32_t readLe32(const std::uint8_t* p) { return readLe16(p + 2) << 16 | readLe16(p); }

inline bool startsWith(Bytes bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() && std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

inline Bytes asBytes(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

inline bool isSpace(std::uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string lowercaseExtension(const std::filesystem::path& path);

/// validateImageShape's sentence as an ImageIoError naming the file; sizes beyond int are caught too.
void checkShape(std::int64_t width, std::int64_t height, int channels, const std::string& name);

/// CRC-32 as PNG (and zlib) define it.
std::uint32_t crc32(Bytes bytes);

// ---- files (files.cpp) --------------------------------------------------------------------------

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

InputFile openForReading(const std::filesystem::path& path, const std::string& name);

/// Reads up to `count` bytes at `offset`; fewer only where the file ends.
std::size_t readAt(const InputFile& in, std::uint64_t offset, void* dst, std::size_t count, const std::string& name);

std::vector<std::uint8_t> readWhole(const InputFile& in, const std::string& name);

/// Writes `parts` to a new file in the same directory and renames it over `path`, so readers see the
/// old file or the new one, never half of one. The policy (files.cpp's header says it whole): the
/// replaced file's permission bits are kept; a symbolic link is followed and its existing target
/// replaced (a dangling link is refused); the folder is fsynced after the rename; stale temporary
/// files of gpulab saves whose process is gone are removed; a failure leaves the old file and no
/// temporary file.
void writeFileAtomically(const std::filesystem::path& path, const std::string& name,
                         std::initializer_list<std::string_view> parts);

// ---- format detection and structural checks (inspect.cpp) ---------------------------------------

/// The format from the first bytes (at least 18 where the file has them); TGA, which has no
/// signature, from the extension.
FileFormat detectFormat(Bytes head, const std::filesystem::path& path, const std::string& name);

/// What the walk over a file found: the dimensions its header states (-1 where not found) and, if the
/// file is incomplete or damaged, the rest of a sentence that starts with the file's name.
struct Inspection {
  std::int64_t width = -1;
  std::int64_t height = -1;
  std::string problem;
  std::size_t pnmDataOffset = 0;  // PNM only: where the samples start and their maximum value
  std::uint32_t pnmMaxValue = 0;
};

/// The structural walk for `format` (nothing for .npy, which npy.cpp reads itself).
Inspection inspect(FileFormat format, Bytes bytes);

inline std::string byteOffset(std::size_t pos) { return "byte " + std::to_string(pos); }

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

// ---- codecs (codec_jpeg.cpp, codec_png.cpp, codec_tiff.cpp) ------------------------------------
// Decoders check the size their header states against gpulab's limits before they allocate, and
// throw ImageIoError with one sentence naming the file; they decode into `reuse`'s memory when it
// is large enough (Image::reshape). Encoders return the file's bytes.

Image decodeJpeg(Bytes bytes, const std::string& name, Image reuse = {});
std::string encodeJpeg(const Image& image, int quality, const std::string& name);
Image decodePng(Bytes bytes, const std::string& name, Image reuse = {});
std::string encodePng(const Image& image, int level, const std::string& name);
Image decodeTiff(Bytes bytes, const std::string& name, Image reuse = {});
std::string encodeTiff(const Image& image, int level, const std::string& name);

// ---- .npy (npy.cpp) -----------------------------------------------------------------------------

/// Reads a .npy file whose first bytes are `head`; the samples go straight into the image.
Image loadNpy(const InputFile& in, Bytes head, const std::string& name, Image reuse = {});

/// The magic, version, length and header dict numpy.save writes for `image`.
std::string npyHeader(const Image& image);

inline std::string_view samplesOf(const Image& image) {
  return {reinterpret_cast<const char*>(image.data()), image.sizeBytes()};
}

}  // namespace gpulab::io_detail
