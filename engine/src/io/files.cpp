// The files behind image I/O: opened and read once, written atomically (a temporary file renamed
// over the target), and the byte helpers every format shares.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "internal/image_files.hpp"

namespace gpulab::io_detail {

namespace fs = std::filesystem;

std::string_view formatName(FileFormat format) {
  constexpr std::string_view kNames[] = {"PNG", "JPEG", "BMP", "TGA", "PNM", ".npy", "TIFF"};  // FileFormat's order
  static_assert(std::size(kNames) == static_cast<std::size_t>(FileFormat::Tiff) + 1);
  return kNames[static_cast<int>(format)];
}

// ---- bytes ---------------------------------------------------------------------------------------

std::string errnoMessage(int err) { return std::generic_category().message(err); }

std::string lowercaseExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return ext;
}

namespace {

/// "256 megapixels" for whole megapixels (2^20), else "1000000 pixels".
std::string pixelsText(std::int64_t pixels) {
  return pixels % (1 << 20) == 0 ? std::to_string(pixels >> 20) + " megapixels" : std::to_string(pixels) + " pixels";
}

/// How to raise a limit, or that it is gpulab's largest already.
std::string howToRaise(std::int64_t value, std::int64_t hardMaximum, const char* option, const char* variable,
                       const std::string& maximumText) {
  if (value >= hardMaximum)
    return " (gpulab's largest; " + std::string(option) + " and " + variable + " can lower it, not raise it)";
  return "; raise it with gpulab-cli " + std::string(option) + " N, the environment variable " + variable +
         " or the GUI's Device panel (up to " + maximumText + ")";
}

}  // namespace

void checkShape(std::int64_t width, std::int64_t height, int channels, const std::string& name) {
  ImageLimits limits;
  try {
    limits = imageLimits();
  } catch (const std::invalid_argument& e) {
    throw ImageIoError("cannot read " + name + ": " + e.what());
  }
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width > limits.maxSide || height > limits.maxSide)
    throw ImageIoError(name + ": image size " + size + " exceeds the limit of " + std::to_string(limits.maxSide) +
                       " pixels a side" +
                       howToRaise(limits.maxSide, kMaxImageDimension, "--max-image-side", "GPULAB_MAX_IMAGE_SIDE",
                                  std::to_string(kMaxImageDimension)));
  if (width > 0 && height > 0 && width * height > limits.maxPixels)  // both at most 32768 here: no overflow
    throw ImageIoError(name + ": image size " + size + " exceeds the limit of " + pixelsText(limits.maxPixels) +
                       howToRaise(limits.maxPixels, kMaxImagePixels, "--max-image-pixels", "GPULAB_MAX_IMAGE_PIXELS",
                                  std::to_string(kMaxImagePixels)));
  if (width < INT_MIN || height < INT_MIN)
    throw ImageIoError(name + ": image size " + size + " is empty: both sides must be at least 1 pixel");
  try {
    validateImageShape(static_cast<int>(width), static_cast<int>(height), channels);
  } catch (const std::invalid_argument& e) {
    throw ImageIoError(name + ": " + e.what());
  }
}

std::uint32_t crc32(Bytes bytes) {
  return static_cast<std::uint32_t>(::crc32_z(0, bytes.data(), bytes.size()));  // zlib's, several bytes a step
}

// ---- files --------------------------------------------------------------------------------------

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

namespace {

std::string describeDirectory(const fs::path& dir) {
  return dir == "." ? std::string("the current directory") : "the directory " + dir.string();
}

}  // namespace

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

}  // namespace gpulab::io_detail
