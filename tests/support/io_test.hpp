// Helpers for the suites that write files: a scratch directory per test, whole-file reads and
// writes, and the check that an ImageIoError is one sentence naming its file.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/io/image_io.hpp"

namespace gpulab::test {

/// A fresh directory for one test, removed afterwards.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "gpulab-test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void writeBytes(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Passes when `action` throws ImageIoError whose message is one line, names `file` (unless empty)
/// and contains every one of `parts`.
inline ::testing::AssertionResult throwsIoError(const std::function<void()>& action, const std::string& file,
                                                std::initializer_list<std::string_view> parts) {
  std::string message;
  try {
    action();
    return ::testing::AssertionFailure() << "no exception was thrown";
  } catch (const ImageIoError& e) {
    message = e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another type than ImageIoError: " << e.what();
  }
  if (message.find('\n') != std::string::npos)
    return ::testing::AssertionFailure() << "message is not one line: " << message;
  if (!file.empty() && message.find(file) == std::string::npos)
    return ::testing::AssertionFailure() << "message does not name " << file << ": " << message;
  for (std::string_view part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << part << "\": " << message;
  return ::testing::AssertionSuccess() << message;
}

}  // namespace gpulab::test
