// Owning handles for device memory, pinned host memory, streams and events.
// Move-only; destructors never throw and tolerate a CUDA runtime that is already unloading.
// Never create these as statics or globals: their destruction order against the runtime is undefined.
// Each remembers the device epoch it was made in (device.hpp): after recoverDevice() reset the device,
// it is stale: it frees nothing (the reset did), a Buffer reads as empty (null, size 0, so reserve()
// allocates anew), and a Stream or Event says stale() so its owner makes a new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "gpulab/core/cuda_types.hpp"
#include "gpulab/core/device.hpp"

namespace gpulab {

/// Where a Buffer's memory lives.
enum class MemoryKind {
  Device,  ///< linear device memory from cudaMalloc; a failed allocation throws OutOfDeviceMemory with
           ///< the requested and free sizes
  Pinned,  ///< page-locked host memory from cudaMallocHost: the only host memory the copy engines
           ///< move at full speed
};

/// An owned allocation of `bytes` (move-only; null when empty).
template <MemoryKind Kind>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes);
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)), epoch_(other.epoch_) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      epoch_ = other.epoch_;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() noexcept { return live() ? ptr_ : nullptr; }
  const void* data() const noexcept { return live() ? ptr_ : nullptr; }
  template <class T>
  T* as() noexcept {
    return static_cast<T*>(data());
  }
  template <class T>
  const T* as() const noexcept {
    return static_cast<const T*>(data());
  }
  std::size_t size() const noexcept { return live() ? bytes_ : 0; }
  bool empty() const noexcept { return !live(); }
  /// Allocated before the last device reset: its memory is gone.
  bool stale() const noexcept { return ptr_ != nullptr && epoch_ != deviceEpoch(); }

  /// Grows to at least `bytes` (contents are not kept); never shrinks. For reusable scratch.
  void reserve(std::size_t bytes) {
    if (bytes <= size()) return;
    reset();
    *this = Buffer(bytes);
  }
  void reset() noexcept;

 private:
  bool live() const noexcept { return ptr_ != nullptr && epoch_ == deviceEpoch(); }

  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint64_t epoch_ = deviceEpoch();
};

// Allocation and release per kind (buffers.cpp).
template <>
Buffer<MemoryKind::Device>::Buffer(std::size_t bytes);
template <>
Buffer<MemoryKind::Pinned>::Buffer(std::size_t bytes);
template <>
void Buffer<MemoryKind::Device>::reset() noexcept;
template <>
void Buffer<MemoryKind::Pinned>::reset() noexcept;

using DeviceBuffer = Buffer<MemoryKind::Device>;
using PinnedBuffer = Buffer<MemoryKind::Pinned>;

/// A non-blocking CUDA stream.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)), epoch_(other.epoch_) {}
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }  // NOLINT: used like the raw handle
  void synchronize() const;
  /// Created before the last device reset: the handle is dead; make a new Stream.
  bool stale() const noexcept { return stream_ != nullptr && epoch_ != deviceEpoch(); }

 private:
  void destroy() noexcept;

  cudaStream_t stream_ = nullptr;
  std::uint64_t epoch_ = deviceEpoch();
};

/// A CUDA event with timing enabled.
class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)), epoch_(other.epoch_) {}
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream);
  void synchronize() const;
  /// True once the work recorded before it has completed (cudaEventQuery); never blocks.
  bool query() const;
  /// Milliseconds from `start` to this event; both must have completed.
  float elapsedSince(const Event& start) const;
  /// Created before the last device reset: the handle is dead; make a new Event.
  bool stale() const noexcept { return event_ != nullptr && epoch_ != deviceEpoch(); }

 private:
  void destroy() noexcept;

  cudaEvent_t event_ = nullptr;
  std::uint64_t epoch_ = deviceEpoch();
};

}  // namespace gpulab
