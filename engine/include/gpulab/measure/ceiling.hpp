// The memory ceiling every bandwidth figure is set against: the device's DRAM copy bandwidth, as the
// fastest of `copies` device-to-device copies between two buffers at least 4x the L2 cache (so the
// copy streams through DRAM, not L2), measured once per process and device.
#pragma once

#include <cstddef>
#include <string>

namespace gpulab {

struct CopyCeiling {
  double gbps = 0;  ///< (bytes read + bytes written) / time, 1 GB = 1e9 B
  std::size_t bufferBytes = 0;
  std::size_t l2Bytes = 0;
  int copies = 0;
  int device = -1;
  /// "fastest of 20 device-to-device copies of 200.0 MiB (4x the 50.0 MiB L2 cache)".
  std::string how() const;
};

/// Bytes of each of the two ceiling buffers: max(4 x L2, 64 MiB), capped so that both together
/// take at most half of `freeBytes`, rounded down to a multiple of 1 MiB. Throws std::runtime_error
/// when free memory leaves less than 1 MiB per buffer.
std::size_t copyCeilingBytes(std::size_t l2Bytes, std::size_t freeBytes);

/// Whether a working set of `workingSetBytes` fits in an L2 cache of `l2Bytes`.
bool fitsInL2(std::size_t workingSetBytes, std::size_t l2Bytes);

/// The DRAM copy ceiling of the current device, measured the first time it is asked for in this
/// process (a few milliseconds, with two temporary buffers) and cached per device afterwards.
/// Blocking and thread-safe. Throws std::runtime_error without a CUDA device.
CopyCeiling deviceCopyCeiling();

/// The PCIe (or NVLink-C2C) ceiling every upload and download is set against: the fastest of
/// `copies` asynchronous copies between a page-locked host buffer and a device buffer, each way.
struct HostCopyCeiling {
  double hostToDeviceGbps = 0;  ///< bytes / time, 1 GB = 1e9 B
  double deviceToHostGbps = 0;
  std::size_t bufferBytes = 0;
  int copies = 0;
  int device = -1;
  /// "fastest of 10 pinned host <-> device copies of 64.0 MiB each way".
  std::string how() const;
};

/// The pinned host <-> device copy ceiling of the current device, measured the first time it is asked
/// for in this process (a pinned and a device buffer of 64 MiB, well under a second) and cached per
/// device. Blocking and thread-safe. Throws std::runtime_error without a CUDA device.
HostCopyCeiling hostCopyCeiling();

/// What page-locking `bytes` of host memory costs, each a median of `reps` (steady clock): registering
/// an existing, touched buffer (cudaHostRegister, how Image::pinned pins) and unregistering it, and
/// allocating page-locked memory outright (cudaHostAlloc) and freeing it.
struct PinningCost {
  std::size_t bytes = 0;
  double registerMs = 0;
  double unregisterMs = 0;
  double hostAllocMs = 0;
  double freeHostMs = 0;
  double touchMs = 0;  ///< first write of the pageable buffer (page faults), for scale
  int reps = 0;
};
/// Throws std::runtime_error without a CUDA device, CudaError when a call fails.
PinningCost measurePinningCost(std::size_t bytes, int reps = 3);

/// "256.0 MiB": binary units, one decimal (bytes as a whole number).
std::string bytesText(std::size_t bytes);

}  // namespace gpulab
