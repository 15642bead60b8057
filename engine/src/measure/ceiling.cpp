// The DRAM copy ceiling every bandwidth figure is set against (the filters, the FFT, the lab's
// memory-bound experiments), measured once per process and device on buffers larger than the L2 cache.
//
// A copy of a buffer that fits in L2 is served from L2 after the first repetition: on an H100/H200
// (50 MiB of L2) a 4 MiB copy is not a DRAM number, and kernels measured at small sizes would show
// 160% of such a "ceiling". Four times the L2 leaves no room for reuse between repetitions.
#include "gpulab/measure/ceiling.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/memory_format.hpp"

namespace gpulab {

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kMinCeilingBytes = 64 * kMiB;
constexpr int kL2Multiple = 4;
constexpr int kCeilingCopies = 20;
constexpr int kCeilingWarmup = 3;

std::string ratioText(double ratio) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2g", ratio);
  return text;
}

}  // namespace

std::size_t copyCeilingBytes(std::size_t l2Bytes, std::size_t freeBytes) {
  const std::size_t wanted = std::max(kL2Multiple * l2Bytes, kMinCeilingBytes);
  const std::size_t roundedUp = (wanted + kMiB - 1) / kMiB * kMiB;
  const std::size_t allowed = freeBytes / 4 / kMiB * kMiB;  // both buffers within half of free memory
  const std::size_t bytes = std::min(roundedUp, allowed);
  if (bytes < kMiB)
    throw std::runtime_error(
        "measuring the DRAM copy ceiling needs two buffers of at least 1.0 MiB within half of "
        "the free GPU memory; " +
        bytesText(freeBytes) + " is free");
  return bytes;
}

bool fitsInL2(std::size_t workingSetBytes, std::size_t l2Bytes) { return l2Bytes > 0 && workingSetBytes <= l2Bytes; }

std::string CopyCeiling::how() const {
  std::string text = "fastest of " + std::to_string(copies) + " device-to-device copies of " + bytesText(bufferBytes);
  if (l2Bytes == 0) return text + " (the device reports no L2 cache)";
  const double ratio = static_cast<double>(bufferBytes) / static_cast<double>(l2Bytes);
  if (bufferBytes >= kL2Multiple * l2Bytes)
    return text + " (" + ratioText(ratio) + "x the " + bytesText(l2Bytes) + " L2 cache)";
  return text + " (only " + ratioText(ratio) + "x the " + bytesText(l2Bytes) +
         " L2 cache: free GPU memory allowed no more, so part of the copy may come from L2)";
}

CopyCeiling deviceCopyCeiling() {
  if (!cudaAvailable()) throw std::runtime_error("the DRAM copy ceiling needs a CUDA device: " + queryDevices().status);
  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));

  // Plain numbers per device ordinal: nothing here owns a CUDA resource beyond this call.
  static std::mutex mutex;
  static std::map<int, CopyCeiling> measured;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = measured.find(device); it != measured.end()) return it->second;

  int l2 = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  std::size_t freeBytes = 0;
  std::size_t totalBytes = 0;
  GPULAB_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));

  CopyCeiling ceiling;
  ceiling.device = device;
  ceiling.l2Bytes = static_cast<std::size_t>(std::max(l2, 0));
  ceiling.bufferBytes = copyCeilingBytes(ceiling.l2Bytes, freeBytes);
  ceiling.copies = kCeilingCopies;
  {
    Stream stream;
    DeviceBuffer source(ceiling.bufferBytes);
    DeviceBuffer target(ceiling.bufferBytes);
    const std::size_t bytes = ceiling.bufferBytes;
    GPULAB_CUDA_CHECK(cudaMemsetAsync(source.data(), 1, bytes, stream));
    const Stats copy = timeStream(
        stream,
        [&] {
          GPULAB_CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), bytes, cudaMemcpyDeviceToDevice, stream));
        },
        {kCeilingWarmup, kCeilingCopies});
    ceiling.gbps = 2.0 * static_cast<double>(bytes) / (copy.minMs * 1e6);
  }
  measured.emplace(device, ceiling);
  return ceiling;
}

std::string HostCopyCeiling::how() const {
  return "fastest of " + std::to_string(copies) + " pinned host <-> device copies of " + bytesText(bufferBytes) +
         " each way";
}

HostCopyCeiling hostCopyCeiling() {
  if (!cudaAvailable()) throw std::runtime_error("the host copy ceiling needs a CUDA device: " + queryDevices().status);
  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));

  static std::mutex mutex;
  static std::map<int, HostCopyCeiling> measured;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = measured.find(device); it != measured.end()) return it->second;

  HostCopyCeiling ceiling;
  ceiling.device = device;
  ceiling.bufferBytes = 64 * kMiB;  // large enough that the per-copy overhead (~10 us) is under 1%
  ceiling.copies = 10;
  {
    const std::size_t bytes = ceiling.bufferBytes;
    Stream stream;
    PinnedBuffer host(bytes);
    DeviceBuffer target(bytes);
    std::memset(host.data(), 1, bytes);
    const Stats up = timeStream(
        stream,
        [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(target.data(), host.data(), bytes, cudaMemcpyHostToDevice, stream)); },
        {kCeilingWarmup, ceiling.copies});
    const Stats down = timeStream(
        stream,
        [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(host.data(), target.data(), bytes, cudaMemcpyDeviceToHost, stream)); },
        {kCeilingWarmup, ceiling.copies});
    ceiling.hostToDeviceGbps = static_cast<double>(bytes) / (up.minMs * 1e6);
    ceiling.deviceToHostGbps = static_cast<double>(bytes) / (down.minMs * 1e6);
  }
  measured.emplace(device, ceiling);
  return ceiling;
}

PinningCost measurePinningCost(std::size_t bytes, int reps) {
  if (!cudaAvailable()) throw std::runtime_error("pinning needs a CUDA device: " + queryDevices().status);
  PinningCost cost;
  cost.bytes = bytes;
  cost.reps = std::max(reps, 1);
  std::vector<double> touch, reg, unreg, alloc, freeHost;
  for (int i = 0; i < cost.reps; ++i) {
    void* block = ::operator new (bytes, std::align_val_t{4096});
    Stopwatch watch;
    std::memset(block, 0, bytes);
    touch.push_back(watch.elapsedMs());
    watch = Stopwatch();
    cudaError_t status = cudaHostRegister(block, bytes, cudaHostRegisterPortable);
    reg.push_back(watch.elapsedMs());
    if (status != cudaSuccess) {
      ::operator delete (block, std::align_val_t{4096});
      GPULAB_CUDA_CHECK(status);
    }
    watch = Stopwatch();
    status = cudaHostUnregister(block);
    unreg.push_back(watch.elapsedMs());
    ::operator delete (block, std::align_val_t{4096});
    GPULAB_CUDA_CHECK(status);

    void* pinned = nullptr;
    watch = Stopwatch();
    GPULAB_CUDA_CHECK(cudaHostAlloc(&pinned, bytes, cudaHostAllocPortable));
    alloc.push_back(watch.elapsedMs());
    watch = Stopwatch();
    GPULAB_CUDA_CHECK(cudaFreeHost(pinned));
    freeHost.push_back(watch.elapsedMs());
  }
  cost.touchMs = Stats::of(touch).medianMs;
  cost.registerMs = Stats::of(reg).medianMs;
  cost.unregisterMs = Stats::of(unreg).medianMs;
  cost.hostAllocMs = Stats::of(alloc).medianMs;
  cost.freeHostMs = Stats::of(freeHost).medianMs;
  return cost;
}

std::string bytesText(std::size_t bytes) { return formatBytes(bytes); }

}  // namespace gpulab
