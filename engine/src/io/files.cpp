// The files behind image I/O: opened and read once, written atomically (a temporary file renamed
// over the target), and the byte helpers every format shares.
//
// Saving policy (writeFileAtomically):
//  - The bytes go to a temporary file in the target's folder, named ".gpulab-save-<pid>-<n>.tmp",
//    are fsynced, renamed over the target, and the folder is fsynced, so after a crash the folder
//    holds the old file or the new one, never half of one.
//  - A replaced file keeps its permission bits (a 0600 file stays 0600); a new file gets 0666 less
//    the umask. Owner and group are those of the saving process.
//  - A symbolic link is followed: its target (through chains of links, up to 40) is replaced
//    atomically in the target's own folder, and the link stays a link. A link whose target does not
//    exist is refused with a message, not created through.
//  - A failed save leaves the old file intact and removes its temporary file. A save that was
//    killed leaves its temporary file behind; the next save into that folder removes such files of
//    ours whose process is gone (the pid in the name) and that are a minute old.

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <ctime>
#include <iterator>
#include <optional>
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

namespace {

constexpr std::string_view kTempPrefix = ".gpulab-save-";
constexpr std::string_view kTempSuffix = ".tmp";
constexpr int kMaxLinkHops = 40;  // as the kernel's ELOOP limit
constexpr std::time_t kStaleAgeSeconds = 60;

/// The pid in a name ".gpulab-save-<pid>-<n>.tmp", or nullopt for any other name.
std::optional<pid_t> tempFilePid(std::string_view name) {
  if (!name.starts_with(kTempPrefix) || !name.ends_with(kTempSuffix)) return std::nullopt;
  name = name.substr(kTempPrefix.size(), name.size() - kTempPrefix.size() - kTempSuffix.size());
  const std::size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == name.size()) return std::nullopt;
  long long pid = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i == dash) continue;
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    if (i < dash) {
      pid = pid * 10 + (name[i] - '0');
      if (pid > INT_MAX) return std::nullopt;
    }
  }
  return static_cast<pid_t>(pid);
}

/// Removes temporary files of earlier saves into `dir` whose process is gone: regular files of
/// ours (same owner), named as writeFileAtomically names them, untouched for a minute. Best effort:
/// a file that cannot be removed stays.
void removeStaleTempFiles(const fs::path& dir) {
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return;
  const std::time_t now = std::time(nullptr);
  while (const dirent* entry = ::readdir(listing)) {
    const std::optional<pid_t> pid = tempFilePid(entry->d_name);
    if (!pid || *pid <= 0 || *pid == ::getpid()) continue;
    if (::kill(*pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to signal): keep
    struct stat info {};
    if (::fstatat(::dirfd(listing), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(info.st_mode) || info.st_uid != ::geteuid() || now - info.st_mtime < kStaleAgeSeconds) continue;
    ::unlinkat(::dirfd(listing), entry->d_name, 0);
  }
  ::closedir(listing);
}

/// The file a save to `path` replaces: `path` itself, or the final target of a (chain of) symbolic
/// link(s), which must exist.
fs::path saveTarget(const fs::path& path, const std::string& name) {
  fs::path target = path;
  for (int hops = 0;; ++hops) {
    struct stat info {};
    if (::lstat(target.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return target;
    if (hops == kMaxLinkHops)
      throw ImageIoError("cannot save " + name + ": more than " + std::to_string(kMaxLinkHops) +
                         " symbolic links lead from it (a loop?)");
    std::error_code ec;
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) throw ImageIoError("cannot save " + name + ": cannot read the symbolic link (" + ec.message() + ")");
    target = next.is_absolute() ? next : target.parent_path() / next;
    if (::lstat(target.c_str(), &info) != 0)
      throw ImageIoError("cannot save " + name + ": it is a symbolic link to " + target.string() +
                         ", which does not exist (gpulab replaces the target of a link, never creates one)");
  }
}

}  // namespace

void writeFileAtomically(const fs::path& path, const std::string& name, std::initializer_list<std::string_view> parts) {
  if (!path.has_filename() || path.filename() == "." || path.filename() == "..")
    throw ImageIoError("cannot save " + name + ": the path names no file");
  const fs::path target = saveTarget(path, name);  // a link: its target, in the target's folder
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ImageIoError("cannot save " + name + ": " + describeDirectory(dir) + " does not exist");
  if (fs::is_directory(target, ec)) throw ImageIoError("cannot save " + name + ": it is a directory");
  struct stat old {};
  const bool replaces = ::stat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  removeStaleTempFiles(dir);

  static std::atomic<unsigned> counter{0};
  fs::path temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = dir / (std::string(kTempPrefix) + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
                  std::string(kTempSuffix));
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
  if (replaces && ::fchmod(fd, old.st_mode & 07777) != 0) throw failure("keeping the file's permissions failed", errno);
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
  if (::rename(temp.c_str(), target.c_str()) != 0) throw failure("renaming the finished file failed", errno);
  // The rename itself reaches the disk with the folder's entry: fsync the folder (file systems that
  // cannot sync a folder say EINVAL; the file is in place either way).
  FileHandle folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0 && ::fsync(folder.get()) != 0 && errno != EINVAL && errno != EROFS)
    throw ImageIoError("cannot save " + name + ": the file was written, but flushing " + describeDirectory(dir) +
                       " to disk failed (" + errnoMessage(errno) + ")");
}

}  // namespace gpulab::io_detail
