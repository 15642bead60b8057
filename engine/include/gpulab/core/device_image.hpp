// Images resident in GPU memory, and the context that moves them.
//
// A DeviceImage is planar: one pitched plane per channel, stacked in one allocation, so every
// kernel works on single planes and an alpha plane can pass through untouched. Upload once, run
// many operations on it, download once.
//
//   gpulab::GpuContext gpu;                       // the selected device, its own stream and staging buffers
//   gpulab::DeviceImage d = gpu.upload(photo);    // blocking; timed apart (gpu.lastTransfer())
//   ... operations enqueue kernels on gpu.stream() ...
//   gpulab::Image out = gpu.download(d);
#pragma once

#include <cstddef>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"  // selectedDevice
#include "gpulab/core/image.hpp"

namespace gpulab {

class DeviceImage {
 public:
  DeviceImage() = default;
  /// Allocates width x height x channels samples. Throws OutOfDeviceMemory with a clear sentence
  /// ("the 20000x20000 RGBA f32 image needs 6.0 GiB of GPU memory; 2.1 GiB is free").
  DeviceImage(int width, int height, int channels, PixelType type);

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  int channels() const noexcept { return channels_; }
  PixelType type() const noexcept { return type_; }
  bool empty() const noexcept { return data_ == nullptr; }
  std::size_t pitch() const noexcept { return pitch_; }  ///< bytes between rows of one plane
  std::size_t sizeBytes() const noexcept { return pitch_ * static_cast<std::size_t>(height_) * channels_; }
  bool sameShape(const DeviceImage& o) const noexcept {
    return width_ == o.width_ && height_ == o.height_ && channels_ == o.channels_ && type_ == o.type_;
  }

  /// The first byte of plane c (the engine hands kernels typed views of it: internal/planes.hpp).
  std::byte* planeData(int c) noexcept { return static_cast<std::byte*>(data_) + planeOffset(c); }
  const std::byte* planeData(int c) const noexcept { return static_cast<const std::byte*>(data_) + planeOffset(c); }

  ~DeviceImage();
  DeviceImage(DeviceImage&& other) noexcept;
  DeviceImage& operator=(DeviceImage&& other) noexcept;
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;

 private:
  std::size_t planeOffset(int c) const noexcept { return pitch_ * static_cast<std::size_t>(height_) * c; }
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t pitch_ = 0;
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  PixelType type_ = PixelType::U8;
};

/// How long the last upload or download took, its parts apart.
struct TransferTime {
  double stagingMs = 0;  ///< host memcpy between the pageable image and pinned staging (steady clock)
  double deviceMs = 0;   ///< the copy engine and the (de)interleave kernel (CUDA events on the stream)
  double totalMs() const { return stagingMs + deviceMs; }
};

/// One device, one stream and the reusable staging buffers (pinned host, device scratch) that
/// uploads and downloads go through. Not thread-safe: use one per worker thread.
class GpuContext {
 public:
  /// On `device`; by default the selected one (selectDevice), made current on this thread.
  explicit GpuContext(int device = selectedDevice());
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int device() const noexcept { return device_; }
  Stream& stream() noexcept { return stream_; }
  void synchronize() { stream_.synchronize(); }

  /// Copies a host image to the GPU (blocking). Reuses `dst` when its shape matches.
  DeviceImage upload(const Image& src);
  void upload(const Image& src, DeviceImage& dst);
  /// Copies a device image back (blocking, after the work queued on stream() before it).
  Image download(const DeviceImage& src);
  void download(const DeviceImage& src, Image& dst);

  const TransferTime& lastUpload() const noexcept { return lastUpload_; }
  const TransferTime& lastDownload() const noexcept { return lastDownload_; }

  /// Device scratch that operations may borrow between calls (grown, never shrunk).
  DeviceBuffer& scratch() noexcept { return scratch_; }

 private:
  int device_;
  Stream stream_;
  Event start_;
  Event stop_;
  PinnedBuffer hostStaging_;
  DeviceBuffer deviceStaging_;  // interleaved pixels on the device, before (de)interleaving
  DeviceBuffer scratch_;
  TransferTime lastUpload_;
  TransferTime lastDownload_;
};

}  // namespace gpulab
