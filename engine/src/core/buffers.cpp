#include "gpulab/core/buffers.hpp"

#include <cstdio>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "internal/memory_format.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Buffers

template <>
Buffer<MemoryKind::Device>::Buffer(std::size_t bytes) {
  epoch_ = deviceEpoch();
  if (bytes == 0) return;
  const cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    ptr_ = nullptr;
    throw OutOfDeviceMemory(outOfMemoryMessage("a buffer", bytes));
  }
  GPULAB_CUDA_CHECK(status);
  bytes_ = bytes;
}

template <>
Buffer<MemoryKind::Pinned>::Buffer(std::size_t bytes) {
  epoch_ = deviceEpoch();
  if (bytes == 0) return;
  GPULAB_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
  bytes_ = bytes;
}

template <>
void Buffer<MemoryKind::Device>::reset() noexcept {
  // An unloading runtime (cudaErrorCudartUnloading) is fine here; after a device reset the memory is
  // gone already, and its address may belong to a new allocation: nothing is freed then.
  if (ptr_ != nullptr && epoch_ == deviceEpoch()) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

template <>
void Buffer<MemoryKind::Pinned>::reset() noexcept {
  if (ptr_ != nullptr && epoch_ == deviceEpoch()) cudaFreeHost(ptr_);  // the reset freed a stale one
  ptr_ = nullptr;
  bytes_ = 0;
}

// ---------------------------------------------------------------------------------------------
// Stream and Event

Stream::Stream() { GPULAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

Stream::~Stream() { destroy(); }

void Stream::destroy() noexcept {
  if (stream_ != nullptr && epoch_ == deviceEpoch()) cudaStreamDestroy(stream_);  // a reset destroyed stale ones
  stream_ = nullptr;
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy();
    stream_ = std::exchange(other.stream_, nullptr);
    epoch_ = other.epoch_;
  }
  return *this;
}

void Stream::synchronize() const { GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event() { GPULAB_CUDA_CHECK(cudaEventCreate(&event_)); }

Event::~Event() { destroy(); }

void Event::destroy() noexcept {
  if (event_ != nullptr && epoch_ == deviceEpoch()) cudaEventDestroy(event_);  // a reset destroyed stale ones
  event_ = nullptr;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy();
    event_ = std::exchange(other.event_, nullptr);
    epoch_ = other.epoch_;
  }
  return *this;
}

void Event::record(cudaStream_t stream) { GPULAB_CUDA_CHECK(cudaEventRecord(event_, stream)); }

void Event::synchronize() const { GPULAB_CUDA_CHECK(cudaEventSynchronize(event_)); }

bool Event::query() const {
  const cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) return false;  // not an error, and not kept as the last one
  GPULAB_CUDA_CHECK(status);
  return true;
}

float Event::elapsedSince(const Event& start) const {
  float ms = 0;
  GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

}  // namespace gpulab
