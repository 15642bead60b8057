// What the fuzz targets share. Each target is one LLVMFuzzerTestOneInput over one parser's public
// entry point; it lets exactly the exceptions that parser documents pass and lets every other one
// escape, so an undocumented exception (std::length_error, std::bad_alloc, ...) is a finding like a
// crash. Built by scripts/fuzz.sh with clang's libFuzzer, ASan and UBSan; built in the ordinary build
// with replay_main.cpp, which feeds every corpus and regression file to the same function (CTest).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::fuzz {

/// A property a target checks failed: print it and abort, which libFuzzer records as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what.c_str());
  std::abort();
}

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Where scratch files go: $GPULAB_FUZZ_SCRATCH, else /dev/shm (memory: rewriting a file on a disk
/// made the file targets 10 times slower), else the temporary folder.
inline std::filesystem::path scratchFolder() {
  if (const char* dir = std::getenv("GPULAB_FUZZ_SCRATCH"); dir && *dir) return dir;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return std::filesystem::temp_directory_path();
}

/// A file of this process in scratchFolder(), written anew for every input (the loaders take paths);
/// the suffix picks the extension the loader sees.
inline std::filesystem::path writeScratchFile(std::string_view bytes, const std::string& suffix) {
  struct Written {  // removed when the process exits normally
    std::filesystem::path folder = scratchFolder();
    std::vector<std::filesystem::path> paths;
    ~Written() {
      std::error_code ec;
      for (const auto& p : paths) std::filesystem::remove(p, ec);
    }
  };
  static Written written;
  const std::filesystem::path path = written.folder / ("gpulab-fuzz-" + std::to_string(::getpid()) + suffix);
  if (std::find(written.paths.begin(), written.paths.end(), path) == written.paths.end()) written.paths.push_back(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("cannot write the scratch file " + path.string());
  return path;
}

}  // namespace gpulab::fuzz
