#include "gpulab/core/device_image.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

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
    const char* layout[] = {"", "gray", "2-channel", "RGB", "RGBA"};
    throw OutOfDeviceMemory("the " + std::to_string(width) + "x" + std::to_string(height) + " " + layout[channels] +
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
  start_ = Event();
  stop_ = Event();
  hostStaging_.reset();
  deviceStaging_.reset();
  scratch_.reset();
  epoch_ = deviceEpoch();
}

DeviceImage GpuContext::upload(const Image& src, DeviceLayout layout) {
  DeviceImage dst;
  upload(src, dst, layout);
  return dst;
}

void GpuContext::upload(const Image& src, DeviceImage& dst, DeviceLayout layout) {
  if (src.empty()) throw std::invalid_argument("cannot upload an empty image");
  renewIfStale();
  if (src.channels() == 1) layout = DeviceLayout::Planar;
  if (dst.empty() || dst.width() != src.width() || dst.height() != src.height() || dst.channels() != src.channels() ||
      dst.type() != src.type() || dst.layout() != layout)
    dst = DeviceImage(src.width(), src.height(), src.channels(), src.type(), layout);

  const std::size_t bytes = src.sizeBytes();
  Stopwatch staging;
  hostStaging_.reserve(bytes);
  std::memcpy(hostStaging_.data(), src.data(), bytes);
  lastUpload_.stagingMs = staging.elapsedMs();

  start_.record(stream_);
  if (src.channels() == 1 || dst.interleaved()) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(dst.planeData(0), dst.pitch(), hostStaging_.data(), src.rowBytes(),
                                        src.rowBytes(), src.height(), cudaMemcpyHostToDevice, stream_));
  } else {
    deviceStaging_.reserve(bytes);
    GPULAB_CUDA_CHECK(
        cudaMemcpyAsync(deviceStaging_.data(), hostStaging_.data(), bytes, cudaMemcpyHostToDevice, stream_));
    visitAnySampleType(src.type(), [&](auto sample) {
      using T = decltype(sample);
      kernels::launchDeinterleave<T>(deviceStaging_.as<T>(), src.channels(), stackOf<T>(dst), stream_);
    });
  }
  stop_.record(stream_);
  stop_.synchronize();
  lastUpload_.deviceMs = stop_.elapsedSince(start_);
}

Image GpuContext::download(const DeviceImage& src) {
  Image dst;
  download(src, dst);
  return dst;
}

void GpuContext::download(const DeviceImage& src, Image& dst) {
  if (src.empty())
    throw std::invalid_argument(src.stale() ? "cannot download a device image from before the GPU was reset"
                                            : "cannot download an empty device image");
  if (dst.width() != src.width() || dst.height() != src.height() || dst.channels() != src.channels() ||
      dst.type() != src.type())
    dst = Image(src.width(), src.height(), src.channels(), src.type());

  renewIfStale();
  const std::size_t bytes = dst.sizeBytes();
  hostStaging_.reserve(bytes);
  start_.record(stream_);
  if (src.channels() == 1 || src.interleaved()) {
    GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(hostStaging_.data(), dst.rowBytes(), src.planeData(0), src.pitch(),
                                        dst.rowBytes(), dst.height(), cudaMemcpyDeviceToHost, stream_));
  } else {
    deviceStaging_.reserve(bytes);
    visitAnySampleType(src.type(), [&](auto sample) {
      using T = decltype(sample);
      const kernels::Plane<const T> stack{planeOf<T>(src, 0).data, src.width(), src.height(), src.pitch()};
      kernels::launchInterleave<T>(stack, src.channels(), deviceStaging_.as<T>(), stream_);
    });
    GPULAB_CUDA_CHECK(
        cudaMemcpyAsync(hostStaging_.data(), deviceStaging_.data(), bytes, cudaMemcpyDeviceToHost, stream_));
  }
  stop_.record(stream_);
  stop_.synchronize();
  lastDownload_.deviceMs = stop_.elapsedSince(start_);

  Stopwatch staging;
  std::memcpy(dst.data(), hostStaging_.data(), bytes);
  lastDownload_.stagingMs = staging.elapsedMs();
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
