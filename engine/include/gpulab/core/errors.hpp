// The errors every floor of gpulab throws: a failed call into CUDA or one of its libraries, and a
// GPU without the memory an operation needs. Plain C++ (no CUDA header), so front ends can catch
// them without seeing CUDA; the kernels' launch checks (gpulab/kernels/cuda_check.hpp) throw them too.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace gpulab {

/// A failed call into CUDA or one of its libraries: what was called, where, and the library's words.
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string call, std::string file, int line, int code, const std::string& message)
      : std::runtime_error(call + " failed at " + file + ":" + std::to_string(line) + ": " + message),
        call_(std::move(call)),
        file_(std::move(file)),
        line_(line),
        code_(code) {}

  const std::string& call() const noexcept { return call_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int code() const noexcept { return code_; }

 private:
  std::string call_;
  std::string file_;
  int line_;
  int code_;
};

/// The GPU lacks the memory an operation needs; the message says how much was asked and is free.
class OutOfDeviceMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpulab
