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

/// A sticky GPU fault: a kernel touched an illegal or misaligned address, hit a trap or an assert,
/// or the launch failed on the device. Unlike other CudaErrors it poisons the whole CUDA context:
/// every later call on the device fails the same way until gpulab::recoverDevice() (device.hpp)
/// resets it. The message names the call that saw it and says the context is lost.
class GpuFaultError : public CudaError {
 public:
  /// `reason` is the runtime's plain words ("an illegal memory access was encountered"); `message`
  /// the full text as CudaError has it (name and words).
  GpuFaultError(std::string call, std::string file, int line, int code, const std::string& message, std::string reason)
      : CudaError(std::move(call), std::move(file), line, code,
                  message + " (a sticky GPU fault: the CUDA context is lost until the device is reset)"),
        reason_(std::move(reason)) {}

  /// What went wrong, in the runtime's words, without the call and file.
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

/// "the GPU faulted (an illegal memory access was encountered, seen by cudaStreamSynchronize)": the
/// start of the one sentence a front end shows for a GpuFaultError.
inline std::string describeGpuFault(const GpuFaultError& e) {
  const std::string& call = e.call();
  return "the GPU faulted (" + e.reason() + ", seen by " + call.substr(0, call.find('(')) + ")";
}

/// The GPU lacks the memory an operation needs; the message says how much was asked and is free.
class OutOfDeviceMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpulab
