#include "gpulab/core/device_image.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "gpulab/core/fault_injection.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/layout.cuh"
#include "internal/kernel_views.hpp"
#include "internal/memory_format.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// DeviceImage

DeviceImage::DeviceImage(int width, int height, int channels, PixelType type, DeviceLayout layout)
    : width_(width),
      height_(height),
      channels_(channels),
      type_(type),
      layout_(channels == 1 ? DeviceLayout::Planar : layout) {
  validateImageShape(width, height, channels);
  const bool packed = layout_ == DeviceLayout::Interleaved;
  const std::size_t rowBytes = static_cast<std::size_t>(width) * bytesPerSample(type) * (packed ? channels : 1);
  const std::size_t rows = static_cast<std::size_t>(height) * (packed ? 1 : channels);
  const cudaError_t status = cudaMallocPitch(&data_, &pitch_, rowBytes, rows);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    data_ = nullptr;
    const char* names[] = {"", "gray", "2-channel", "RGB", "RGBA"};
    throw OutOfDeviceMemory("the " + std::to_string(width) + "x" + std::to_string(height) + " " + names[channels] +
                            " " + std::string(toString(type)) +
                            " image does not fit on the GPU: " + outOfMemoryMessage("it", rowBytes * rows));
  }
  GPULAB_CUDA_CHECK(status);
}

DeviceImage::~DeviceImage() { release(); }

DeviceImage::DeviceImage(DeviceImage&& other) noexcept
    : epoch_(other.epoch_),
      data_(std::exchange(other.data_, nullptr)),
      pitch_(std::exchange(other.pitch_, 0)),
      width_(std::exchange(other.width_, 0)),
      height_(std::exchange(other.height_, 0)),
      channels_(std::exchange(other.channels_, 0)),
      type_(other.type_),
      layout_(other.layout_) {}

DeviceImage& DeviceImage::operator=(DeviceImage&& other) noexcept {
  if (this != &other) {
    release();
    epoch_ = other.epoch_;
    data_ = std::exchange(other.data_, nullptr);
    pitch_ = std::exchange(other.pitch_, 0);
    width_ = std::exchange(other.width_, 0);
    height_ = std::exchange(other.height_, 0);
    channels_ = std::exchange(other.channels_, 0);
    type_ = other.type_;
    layout_ = other.layout_;
  }
  return *this;
}

void DeviceImage::release() noexcept {
  if (data_ != nullptr && epoch_ == deviceEpoch()) cudaFree(data_);  // a device reset freed a stale one
  data_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// GpuContext

namespace {

/// Makes `device` current on this thread (not the process's choice: selectDevice does that).
int makeCurrent(int device) {
  GPULAB_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

}  // namespace

// Members after device_ (the stream, events, buffers) are created on the selected device.
GpuContext::GpuContext(int device) : device_(makeCurrent(device)) {}

GpuContext::~GpuContext() = default;

void GpuContext::renewIfStale() {
  if (epoch_ == deviceEpoch()) return;
  makeCurrent(device_);
  // The old handles died with the reset: moving new ones in frees nothing of theirs.
  stream_ = Stream();
  copyStream_ = Stream();
  start_ = Event();
  stop_ = Event();
  for (int s = 0; s < kSlots; ++s) {
    copied_[s] = Event();
    layoutDone_[s] = Event();
  }
  hostStaging_.reset();
  deviceStaging_.reset();
  scratch_.reset();
  epoch_ = deviceEpoch();
}

namespace {

/// Rows a band of `bandBytes` holds: at least 1, at most the image.
int rowsPerBand(std::size_t bandBytes, std::size_t rowBytes, int height) {
  const std::size_t rows = std::max<std::size_t>(bandBytes / rowBytes, 1);
  return static_cast<int>(std::min<std::size_t>(rows, static_cast<std::size_t>(height)));
}

void streamWaits(cudaStream_t stream, const Event& event) {
  GPULAB_CUDA_CHECK(cudaStreamWaitEvent(stream, event.get(), 0));
}

}  // namespace

DeviceImage GpuContext::upload(const Image& src, DeviceLayout layout) {
  DeviceImage dst;
  upload(src, dst, layout);
  return dst;
}

// Upload, band k in slot k % 2: [copy stream] (wait until band k-2's deinterleave has read the device
// slot) DMA host band -> device slot, record copied; [stream] wait copied, deinterleave the band into
// the planes, record layoutDone. A pageable image first waits on the host until band k-2's DMA has
// read the host slot, then copies its rows in (overlapping band k-1's DMA). One channel needs no
// kernel: the DMA writes the plane rows (a pinned image in one 2-D copy).
void GpuContext::upload(const Image& src, DeviceImage& dst, DeviceLayout layout) {
  if (src.empty()) throw std::invalid_argument("cannot upload an empty image");
  renewIfStale();
  if (src.channels() == 1) layout = DeviceLayout::Planar;
  if (dst.empty() || dst.width() != src.width() || dst.height() != src.height() || dst.channels() != src.channels() ||
      dst.type() != src.type() || dst.layout() != layout)
    dst = DeviceImage(src.width(), src.height(), src.channels(), src.type(), layout);

  TransferTime time;
  time.pinned = src.pinned();
  const int channels = src.channels();
  const int height = src.height();
  const std::size_t rowBytes = src.rowBytes();
  std::byte* const planes = dst.planeData(0);
  const bool direct = channels == 1 || dst.interleaved();  // the host rows as they are: no kernel

  start_.record(stream_);
  if (time.pinned && direct) {
    time.bands = 1;
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planes, dst.pitch(), src.data(), rowBytes, rowBytes, height,
                                        cudaMemcpyHostToDevice, stream_));
  } else {
    const int bandRows = rowsPerBand(bandBytes_, rowBytes, height);
    const std::size_t slotBytes = static_cast<std::size_t>(bandRows) * rowBytes;
    if (!time.pinned) hostStaging_.reserve(kSlots * slotBytes);
    if (!direct) deviceStaging_.reserve(kSlots * slotBytes);
    streamWaits(copyStream_, start_);  // after the work queued before (it may still read dst)
    for (int y0 = 0, k = 0; y0 < height; y0 += bandRows, ++k) {
      const int slot = k % kSlots;
      const int rows = std::min(bandRows, height - y0);
      const std::size_t bytes = static_cast<std::size_t>(rows) * rowBytes;
      const std::byte* from = src.data() + static_cast<std::size_t>(y0) * rowBytes;
      if (!time.pinned) {
        std::byte* staged = hostStaging_.as<std::byte>() + slot * slotBytes;
        if (k >= kSlots) copied_[slot].synchronize();  // band k-2's DMA has read the slot
        const Stopwatch staging;
        std::memcpy(staged, from, bytes);
        time.stagingMs += staging.elapsedMs();
        from = staged;
      }
      if (direct) {
        GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planes + static_cast<std::size_t>(y0) * dst.pitch(), dst.pitch(), from,
                                            rowBytes, rowBytes, rows, cudaMemcpyHostToDevice, copyStream_));
        copied_[slot].record(copyStream_);
      } else {
        std::byte* band = deviceStaging_.as<std::byte>() + slot * slotBytes;
        if (k >= kSlots) streamWaits(copyStream_, layoutDone_[slot]);
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(band, from, bytes, cudaMemcpyHostToDevice, copyStream_));
        copied_[slot].record(copyStream_);
        streamWaits(stream_, copied_[slot]);
        visitAnySampleType(src.type(), [&](auto sample) {
          using T = decltype(sample);
          kernels::launchDeinterleaveRows<T>(reinterpret_cast<const T*>(band), channels, stackOf<T>(dst), y0, rows,
                                             stream_);
        });
        layoutDone_[slot].record(stream_);
      }
      time.bands = k + 1;
    }
    // The copy stream is in order: its last event covers every band.
    streamWaits(stream_, copied_[(time.bands - 1) % kSlots]);
  }
  stop_.record(stream_);
  stop_.synchronize();
  time.deviceMs = stop_.elapsedSince(start_);
  time.elapsedMs = time.deviceMs;
  lastUpload_ = time;
}

Image GpuContext::download(const DeviceImage& src) {
  Image dst(HostMemory::Pinned);
  download(src, dst);
  return dst;
}

// Download, band k in slot k % 2: [stream] (wait until band k-2's DMA has read the device slot)
// interleave the band's plane rows into the device slot, record layoutDone; [copy stream] wait
// layoutDone, DMA device slot -> host band (the image itself when pinned, else the host slot),
// record copied. A pageable image: once band k is queued, the host waits for band k-1's DMA and
// copies it out of its slot, overlapping band k's DMA.
void GpuContext::download(const DeviceImage& src, Image& dst) {
  if (src.empty())
    throw std::invalid_argument(src.stale() ? "cannot download a device image from before the GPU was reset"
                                            : "cannot download an empty device image");
  if (dst.width() != src.width() || dst.height() != src.height() || dst.channels() != src.channels() ||
      dst.type() != src.type())
    dst.reshape(src.width(), src.height(), src.channels(), src.type());  // keeps dst's memory kind

  renewIfStale();
  testing::injectGpuFaultFromEnvironment(*this);  // test only: GPULAB_TEST_INJECT_GPU_FAULT
  TransferTime time;
  time.pinned = dst.pinned();
  const int channels = dst.channels();
  const int height = dst.height();
  const std::size_t rowBytes = dst.rowBytes();
  const std::byte* const planes = src.planeData(0);
  const bool direct = channels == 1 || src.interleaved();  // the device rows as they are: no kernel

  start_.record(stream_);  // after the work queued before
  if (time.pinned && direct) {
    time.bands = 1;
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(dst.data(), rowBytes, planes, src.pitch(), rowBytes, height,
                                        cudaMemcpyDeviceToHost, stream_));
    stop_.record(stream_);
    stop_.synchronize();
    time.deviceMs = stop_.elapsedSince(start_);
    time.elapsedMs = time.deviceMs;
    lastDownload_ = time;
    return;
  }

  const int bandRows = rowsPerBand(bandBytes_, rowBytes, height);
  const std::size_t slotBytes = static_cast<std::size_t>(bandRows) * rowBytes;
  const int bands = (height + bandRows - 1) / bandRows;
  if (!time.pinned) hostStaging_.reserve(kSlots * slotBytes);
  if (!direct) deviceStaging_.reserve(kSlots * slotBytes);
  if (direct) streamWaits(copyStream_, start_);
  auto bandRowsOf = [&](int k) { return std::min(bandRows, height - k * bandRows); };
  // A pageable image: band k out of its host slot into dst (once its DMA is done).
  auto drain = [&](int k) {
    const int slot = k % kSlots;
    copied_[slot].synchronize();
    const Stopwatch staging;
    std::memcpy(dst.data() + static_cast<std::size_t>(k) * bandRows * rowBytes,
                hostStaging_.as<std::byte>() + slot * slotBytes, static_cast<std::size_t>(bandRowsOf(k)) * rowBytes);
    time.stagingMs += staging.elapsedMs();
  };
  for (int k = 0; k < bands; ++k) {
    const int slot = k % kSlots;
    const int y0 = k * bandRows;
    const int rows = bandRowsOf(k);
    const std::size_t bytes = static_cast<std::size_t>(rows) * rowBytes;
    std::byte* to = time.pinned ? dst.data() + static_cast<std::size_t>(y0) * rowBytes
                                : hostStaging_.as<std::byte>() + slot * slotBytes;
    if (direct) {
      GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(to, rowBytes, planes + static_cast<std::size_t>(y0) * src.pitch(),
                                          src.pitch(), rowBytes, rows, cudaMemcpyDeviceToHost, copyStream_));
    } else {
      std::byte* band = deviceStaging_.as<std::byte>() + slot * slotBytes;
      if (k >= kSlots) streamWaits(stream_, copied_[slot]);
      visitAnySampleType(src.type(), [&](auto sample) {
        using T = decltype(sample);
        const kernels::Plane<const T> stack{planeOf<T>(src, 0).data, src.width(), src.height(), src.pitch()};
        kernels::launchInterleaveRows<T>(stack, channels, reinterpret_cast<T*>(band), y0, rows, stream_);
      });
      layoutDone_[slot].record(stream_);
      streamWaits(copyStream_, layoutDone_[slot]);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(to, band, bytes, cudaMemcpyDeviceToHost, copyStream_));
    }
    copied_[slot].record(copyStream_);
    if (!time.pinned && k >= 1) drain(k - 1);  // overlaps band k's DMA
  }
  streamWaits(stream_, copied_[(bands - 1) % kSlots]);
  stop_.record(stream_);
  stop_.synchronize();
  time.deviceMs = stop_.elapsedSince(start_);
  time.bands = bands;
  if (!time.pinned) {
    const Stopwatch tail;
    drain(bands - 1);
    time.elapsedMs = time.deviceMs + tail.elapsedMs();
  } else {
    time.elapsedMs = time.deviceMs;
  }
  lastDownload_ = time;
}

const DeviceImage& GpuContext::inLayout(const DeviceImage& src, DeviceLayout layout, DeviceImage& converted) {
  if (src.empty())
    throw std::invalid_argument(src.stale() ? "cannot use a device image from before the GPU was reset"
                                            : "cannot convert an empty device image");
  if (src.channels() == 1 || src.layout() == layout) return src;
  renewIfStale();
  if (converted.empty() || converted.width() != src.width() || converted.height() != src.height() ||
      converted.channels() != src.channels() || converted.type() != src.type() || converted.layout() != layout)
    converted = DeviceImage(src.width(), src.height(), src.channels(), src.type(), layout);
  visitAnySampleType(src.type(), [&](auto sample) {
    using T = decltype(sample);
    if (layout == DeviceLayout::Planar) {
      kernels::launchDeinterleave<T>(reinterpret_cast<const T*>(src.planeData(0)), src.pitch(), src.channels(),
                                     stackOf<T>(converted), stream_);
    } else {
      const kernels::Plane<const T> stack{reinterpret_cast<const T*>(src.planeData(0)), src.width(), src.height(),
                                          src.pitch()};
      kernels::launchInterleave<T>(stack, src.channels(), reinterpret_cast<T*>(converted.planeData(0)),
                                   converted.pitch(), stream_);
    }
  });
  return converted;
}

}  // namespace gpulab
