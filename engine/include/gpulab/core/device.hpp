// What GPUs this machine has. "No GPU" and "no driver" are states, not errors: queryDevices()
// never throws for them, and every CPU path of gpulab keeps working.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  std::size_t totalMemory = 0;  ///< bytes
  std::size_t freeMemory = 0;   ///< bytes, when queried
  int memoryBusWidthBits = 0;
  int l2CacheBytes = 0;
  std::size_t sharedMemoryPerBlockOptin = 0;

  std::string computeCapability() const { return std::to_string(computeMajor) + "." + std::to_string(computeMinor); }
};

struct DeviceReport {
  std::vector<DeviceInfo> devices;
  int runtimeVersion = 0;  ///< e.g. 13000 for CUDA 13.0
  int driverVersion = 0;   ///< 0 when no driver is installed
  std::string status;      ///< why there is no device ("no CUDA driver", ...); empty when there is one

  bool available() const noexcept { return !devices.empty(); }
};

/// Every CUDA device with its properties and current free memory. Never throws for a missing
/// device or driver; those come back as an empty list and a status sentence.
DeviceReport queryDevices();

/// True when at least one usable CUDA device exists. Cached after the first call.
bool cudaAvailable();

// ---------------------------------------------------------------------------------------------
// The device gpulab computes on: one choice for the whole process (the CLI's --gpu N, the GUI's
// device picker), device 0 until chosen. The CUDA runtime's current device is per thread, so each
// thread that starts GPU work calls activateSelectedDevice() first (GpuContext and the lab's
// experiments do); nothing else calls cudaSetDevice.

/// Makes device `index` the one every later GpuContext and lab experiment uses, and the calling
/// thread's current device. Throws std::invalid_argument with one sentence that lists the devices
/// ("there is no GPU 3: this machine has GPU 0 (NVIDIA H100 80GB HBM3)") when it does not exist.
void selectDevice(int index);
/// The chosen device index (0 until selectDevice).
int selectedDevice() noexcept;
/// cudaSetDevice(selectedDevice()) on the calling thread; nothing without a CUDA device.
void activateSelectedDevice();
/// "GPU 0 (NVIDIA H100 80GB HBM3)" for the selected device; "no GPU" without one. Records name the
/// device they ran on with it.
std::string selectedDeviceLabel();
/// "GPU 0 (NVIDIA H100 80GB HBM3), GPU 1 (...)" or the reason there is none.
std::string deviceListText(const DeviceReport& report);

/// "GPU 1 (NVIDIA H100 80GB HBM3)" for any device index; "no GPU" without a CUDA device.
std::string deviceLabel(int index);

// ---------------------------------------------------------------------------------------------
// Several GPUs: the devices a command spreads its work over (the CLI's --gpus, the GUI's device
// checkboxes). One GPU stays the default where splitting does not pay; the single-device choice
// above (selectDevice) is untouched by these.

/// Reads a --gpus value against `deviceCount` devices: "all", a comma-separated list of distinct
/// indices ("0,2"), or a count ("2": the first two devices). The result is sorted and never empty.
/// Throws std::invalid_argument with one sentence ("--gpus 3: there is no GPU 3; this machine has
/// GPU 0 and GPU 1") for an index that does not exist, a repeated index, a count of 0 or more than
/// the machine has, or text that is none of the three forms. No device at all is an error too.
std::vector<int> parseGpuList(std::string_view text, int deviceCount);
/// "GPU 0 (NVIDIA H100 80GB HBM3), GPU 1 (NVIDIA H100 80GB HBM3)": records name the devices they
/// ran on with it.
std::string deviceLabels(const std::vector<int>& devices);

/// Free and total memory of a device (the selected one by default), in bytes.
struct MemoryUsage {
  std::size_t free = 0;
  std::size_t total = 0;
};
MemoryUsage deviceMemory(int device = selectedDevice());

// ---------------------------------------------------------------------------------------------
// Recovery from a sticky GPU fault (GpuFaultError, errors.hpp). The fault poisons the CUDA context;
// recoverDevice() resets the device (cudaDeviceReset) and starts a new device epoch. Every engine
// object that holds GPU memory, a stream, an event, a cuFFT plan or a cuBLAS handle remembers the
// epoch it was made in: once the epoch moved on it frees nothing (the reset already did), reports
// itself empty (Buffer, DeviceImage), and the caches rebuild what they need on next use (GpuContext's
// stream and staging, FftPlanCache's plans). What lived on the GPU is gone: upload it again.

namespace detail {
extern std::atomic<std::uint64_t> gDeviceEpoch;
}  // namespace detail

/// The device epoch: 0 at start, one more after each recoverDevice().
inline std::uint64_t deviceEpoch() noexcept { return detail::gDeviceEpoch.load(std::memory_order_acquire); }

/// For failure paths: when the current device's context holds a sticky fault (whatever exception
/// carried it, e.g. a lab KernelFault), the runtime's words for it ("an illegal memory access was
/// encountered"); else nothing. Waits for the device, so a fault still in flight is seen.
std::optional<std::string> stickyGpuFault();

/// Resets the selected device after a GpuFaultError (cudaDeviceReset), starts a new device epoch and
/// checks that the new context works. Call it on the thread that saw the fault, once no other
/// thread is using the GPU (its resources are released under it). Throws std::runtime_error without
/// a device, CudaError when the reset or the new context fails (then only a restart helps).
void recoverDevice();

/// "13.0" from 13000.
std::string formatCudaVersion(int version);

}  // namespace gpulab
