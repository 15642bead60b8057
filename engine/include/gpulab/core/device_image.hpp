// Images resident in GPU memory, and the context that moves them.
//
// A DeviceImage is planar by default: one pitched plane per channel, stacked in one allocation, so
// every kernel works on single planes and an alpha plane can pass through untouched. Operations that
// filter photos in their own layout (Operation::gpuLayout) take it interleaved instead: the host
// image's rows as they are, so upload and download move bytes without a (de)interleave pass. Upload
// once, run many operations on it, download once.
//
//   gpulab::GpuContext gpu;                       // the selected device, its own stream and staging buffers
//   gpulab::DeviceImage d = gpu.upload(photo);    // blocking; timed apart (gpu.lastUpload())
//   ... operations enqueue kernels on gpu.stream() ...
//   gpulab::Image out = gpu.download(d);          // into pinned memory
//
// Transfers move row bands (transferBandBytes(), 4 MiB by default) through two slots, so that the
// copy of one band overlaps the (de)interleave kernel of the band before on the context's stream.
// A pinned host image (Image::pinned, HostMemory) is copied straight from or into its own memory;
// a pageable one goes through two pinned staging slots, the host memcpy of one band overlapping the
// DMA of the other.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"  // selectedDevice
#include "gpulab/core/image.hpp"

namespace gpulab {

/// How a DeviceImage keeps its channels. Planar: one pitched plane of width samples per channel,
/// the planes stacked (every operation takes it). Interleaved: one pitched plane of width x channels
/// samples, RGBRGB... as on the host (operations that say so take it). A one-channel image is both:
/// it always reads as Planar.
enum class DeviceLayout : std::uint8_t { Planar, Interleaved };
constexpr EnumText enumText(DeviceLayout) { return {"device layout", "planar|interleaved"}; }

class DeviceImage {
 public:
  DeviceImage() = default;
  /// Allocates width x height x channels samples. Throws OutOfDeviceMemory with a clear sentence
  /// ("the 20000x20000 RGBA f32 image needs 6.0 GiB of GPU memory; 2.1 GiB is free").
  DeviceImage(int width, int height, int channels, PixelType type, DeviceLayout layout = DeviceLayout::Planar);

  // An image allocated before the last device reset (recoverDevice, device.hpp) is stale: its memory
  // is gone, so it reads as empty (0x0, no data) and code that reuses an output of the same shape
  // allocates a new one; upload the host copy again.
  int width() const noexcept { return live() ? width_ : 0; }
  int height() const noexcept { return live() ? height_ : 0; }
  int channels() const noexcept { return live() ? channels_ : 0; }
  PixelType type() const noexcept { return type_; }
  DeviceLayout layout() const noexcept { return layout_; }
  bool interleaved() const noexcept { return layout_ == DeviceLayout::Interleaved; }
  bool empty() const noexcept { return !live(); }
  /// Allocated before the last device reset.
  bool stale() const noexcept { return data_ != nullptr && epoch_ != deviceEpoch(); }
  /// Bytes between rows: of one plane (planar), of whole pixel rows (interleaved).
  std::size_t pitch() const noexcept { return live() ? pitch_ : 0; }
  std::size_t sizeBytes() const noexcept {
    return pitch() * static_cast<std::size_t>(height()) * (interleaved() ? 1 : channels());
  }
  /// Same size, channels, type and layout.
  bool sameShape(const DeviceImage& o) const noexcept {
    return width() == o.width() && height() == o.height() && channels() == o.channels() && type_ == o.type_ &&
           layout_ == o.layout_;
  }

  /// The first byte of plane c (the engine hands kernels typed views of it: internal/kernel_views.hpp);
  /// null when empty or stale. An interleaved image has one plane: planeData(0), all channels.
  std::byte* planeData(int c) noexcept { return live() ? static_cast<std::byte*>(data_) + planeOffset(c) : nullptr; }
  const std::byte* planeData(int c) const noexcept {
    return live() ? static_cast<const std::byte*>(data_) + planeOffset(c) : nullptr;
  }

  ~DeviceImage();
  DeviceImage(DeviceImage&& other) noexcept;
  DeviceImage& operator=(DeviceImage&& other) noexcept;
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;

 private:
  std::size_t planeOffset(int c) const noexcept { return pitch_ * static_cast<std::size_t>(height_) * c; }
  bool live() const noexcept { return data_ != nullptr && epoch_ == deviceEpoch(); }
  void release() noexcept;

  std::uint64_t epoch_ = deviceEpoch();
  void* data_ = nullptr;
  std::size_t pitch_ = 0;
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  PixelType type_ = PixelType::U8;
  DeviceLayout layout_ = DeviceLayout::Planar;
};

/// How long the last upload or download took, its parts apart.
struct TransferTime {
  /// Host memcpy between a pageable image and the pinned staging slots, summed over the bands
  /// (steady clock); it overlaps the device part. 0 for a pinned image.
  double stagingMs = 0;
  /// CUDA events on the context's stream from the transfer's start (when the stream reached it) to
  /// its end: the DMA copies and the (de)interleave kernels, and for a pageable image the waits for
  /// the staging memcpy between them.
  double deviceMs = 0;
  /// What the transfer took as a whole: deviceMs, plus for a pageable download the memcpy of its
  /// last band out of staging (after the stream was done).
  double elapsedMs = 0;
  bool pinned = false;  ///< the host image was page-locked: copied straight, no staging
  int bands = 0;        ///< row bands it moved in
  double totalMs() const { return elapsedMs; }
  /// "pinned" or "pageable": how the host side was moved, for summaries.
  const char* hostMemory() const { return pinned ? "pinned" : "pageable"; }
};

/// The default band of a pipelined transfer (GpuContext::setTransferBandBytes).
inline constexpr std::size_t kDefaultTransferBandBytes = std::size_t{4} << 20;

/// One device, one stream and the reusable staging buffers (pinned host, device scratch) that
/// uploads and downloads go through. Not thread-safe: use one per worker thread.
/// After a device reset (recoverDevice) it renews itself on next use: a new stream and events, and
/// staging and scratch allocated again; device images made before the reset are stale.
class GpuContext {
 public:
  /// On `device`; by default the selected one (selectDevice), made current on this thread.
  explicit GpuContext(int device = selectedDevice());
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int device() const noexcept { return device_; }
  /// The context's stream (a new one after a device reset: take it anew for each piece of work).
  Stream& stream() {
    renewIfStale();
    return stream_;
  }
  void synchronize() { stream().synchronize(); }

  /// Copies a host image to the GPU (blocking), planar or as it is (interleaved). Reuses `dst`
  /// when its shape and layout match. A pinned `src` is read by the copy engine directly; a
  /// pageable one is staged band by band.
  DeviceImage upload(const Image& src, DeviceLayout layout = DeviceLayout::Planar);
  void upload(const Image& src, DeviceImage& dst, DeviceLayout layout = DeviceLayout::Planar);
  /// Copies a device image back (blocking, after the work queued on stream() before it), in either
  /// layout. The first form returns a pinned image (pageable where pinning is not possible:
  /// pinnedMemoryNote()); the second reuses `dst` when its shape matches, keeping its memory kind,
  /// and allocates a new one in `dst`'s kind otherwise.
  Image download(const DeviceImage& src);
  void download(const DeviceImage& src, Image& dst);

  /// `src` in `layout`: src itself when it has it, else `converted` (reused when its shape fits)
  /// after a (de)interleave pass queued on stream(). Asynchronous; not timed.
  const DeviceImage& inLayout(const DeviceImage& src, DeviceLayout layout, DeviceImage& converted);

  /// Bytes of interleaved host rows per band of a transfer (at least one row a band; larger than the
  /// image: one band, the unpipelined path). For tests and benchmarks; 4 MiB by default.
  void setTransferBandBytes(std::size_t bytes) noexcept { bandBytes_ = bytes == 0 ? 1 : bytes; }
  std::size_t transferBandBytes() const noexcept { return bandBytes_; }

  const TransferTime& lastUpload() const noexcept { return lastUpload_; }
  const TransferTime& lastDownload() const noexcept { return lastDownload_; }

  /// Device scratch that operations may borrow between calls (grown, never shrunk).
  DeviceBuffer& scratch() noexcept { return scratch_; }

  /// The device epoch this context's stream and events belong to (device.hpp).
  std::uint64_t epoch() const noexcept { return epoch_; }

 private:
  /// After a device reset: makes the stream and events anew (the buffers reallocate when next reserved).
  void renewIfStale();

  static constexpr int kSlots = 2;  // bands in flight: one copied while the other is (de)interleaved

  int device_;
  std::uint64_t epoch_ = deviceEpoch();
  Stream stream_;
  Stream copyStream_;  // the DMA of the bands; stream_ runs the (de)interleave kernels
  Event start_;
  Event stop_;
  Event copied_[kSlots];        // a slot's DMA is done (host slot free again; device slot filled or read)
  Event layoutDone_[kSlots];    // a slot's (de)interleave kernel is done
  PinnedBuffer hostStaging_;    // kSlots bands of a pageable image's rows
  DeviceBuffer deviceStaging_;  // kSlots bands of interleaved pixels on the device
  std::size_t bandBytes_ = kDefaultTransferBandBytes;
  DeviceBuffer scratch_;
  TransferTime lastUpload_;
  TransferTime lastDownload_;
};

}  // namespace gpulab
