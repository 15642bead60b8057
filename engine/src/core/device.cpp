#include "gpulab/core/device.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "gpulab/kernels/cuda_check.hpp"

namespace gpulab {

std::string formatCudaVersion(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

DeviceReport queryDevices() {
  DeviceReport report;
  cudaRuntimeGetVersion(&report.runtimeVersion);
  if (cudaDriverGetVersion(&report.driverVersion) != cudaSuccess) report.driverVersion = 0;

  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();  // these errors are states here, not failures; keep them from sticking
    if (report.driverVersion == 0 || status == cudaErrorInsufficientDriver)
      report.status = report.driverVersion == 0 ? "no CUDA driver is installed: CPU only"
                                                : "the CUDA driver (" + formatCudaVersion(report.driverVersion) +
                                                      ") is older than this build needs (" +
                                                      formatCudaVersion(report.runtimeVersion) + "): CPU only";
    else if (status == cudaSuccess || status == cudaErrorNoDevice)
      report.status = "no CUDA device: CPU only";
    else
      report.status = std::string("CUDA is unavailable (") + cudaGetErrorString(status) + "): CPU only";
    return report;
  }

  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    DeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    info.totalMemory = prop.totalGlobalMem;
    info.memoryBusWidthBits = prop.memoryBusWidth;
    info.l2CacheBytes = prop.l2CacheSize;
    info.sharedMemoryPerBlockOptin = prop.sharedMemPerBlockOptin;
    const MemoryUsage mem = deviceMemory(i);
    info.freeMemory = mem.free;
    report.devices.push_back(std::move(info));
  }
  return report;
}

bool cudaAvailable() {
  static const bool available = [] {
    int count = 0;
    const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError();
    return ok;
  }();
  return available;
}

namespace {
std::atomic<int> gSelectedDevice{0};
}  // namespace

std::string deviceListText(const DeviceReport& report) {
  if (!report.available()) return report.status.empty() ? std::string("no CUDA device") : report.status;
  std::string text;
  for (const DeviceInfo& d : report.devices) {
    if (!text.empty()) text += ", ";
    text += "GPU " + std::to_string(d.index) + " (" + d.name + ")";
  }
  return text;
}

void selectDevice(int index) {
  const DeviceReport report = queryDevices();
  const int count = static_cast<int>(report.devices.size());
  if (index < 0 || index >= count) {
    if (count == 0)
      throw std::invalid_argument("there is no GPU " + std::to_string(index) + ": this machine has no CUDA device (" +
                                  deviceListText(report) + ")");
    throw std::invalid_argument("there is no GPU " + std::to_string(index) + ": this machine has " +
                                deviceListText(report));
  }
  gSelectedDevice.store(index);
  GPULAB_CUDA_CHECK(cudaSetDevice(index));
}

int selectedDevice() noexcept { return gSelectedDevice.load(); }

void activateSelectedDevice() {
  if (!cudaAvailable()) return;
  GPULAB_CUDA_CHECK(cudaSetDevice(selectedDevice()));
}

std::string deviceLabel(int index) {
  if (!cudaAvailable()) return "no GPU";
  static std::mutex mutex;
  static std::vector<std::string> names;  // by index, filled on first use
  std::lock_guard lock(mutex);
  if (static_cast<int>(names.size()) <= index) names.resize(index + 1);
  if (names[index].empty()) {
    cudaDeviceProp prop{};
    GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
    names[index] = prop.name;
  }
  return "GPU " + std::to_string(index) + " (" + names[index] + ")";
}

std::string selectedDeviceLabel() { return deviceLabel(selectedDevice()); }

namespace {

std::string machineHas(int deviceCount) {
  if (deviceCount <= 0) return "this machine has no CUDA device";
  if (deviceCount == 1) return "this machine has only GPU 0";
  std::string text = "this machine has GPU 0";
  for (int i = 1; i < deviceCount; ++i) text += (i + 1 == deviceCount ? " and GPU " : ", GPU ") + std::to_string(i);
  return text;
}

// A whole non-negative decimal number without sign or spaces; -1 otherwise (or beyond int).
int readIndex(std::string_view text) {
  if (text.empty() || text.size() > 9) return -1;
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::vector<int> parseGpuList(std::string_view text, int deviceCount) {
  const std::string quoted = "--gpus " + std::string(text);
  if (deviceCount <= 0) throw std::invalid_argument(quoted + ": " + machineHas(deviceCount));
  std::vector<int> devices;
  if (text == "all") {
    for (int i = 0; i < deviceCount; ++i) devices.push_back(i);
    return devices;
  }
  if (text.find(',') == std::string_view::npos) {
    const int count = readIndex(text);
    if (count < 0)
      throw std::invalid_argument(quoted + ": expected all, a list of GPU indices such as 0,1, or a number of GPUs");
    if (count == 0 || count > deviceCount)
      throw std::invalid_argument(quoted + ": cannot use " + std::to_string(count) + " GPU" + (count == 1 ? "" : "s") +
                                  "; " + machineHas(deviceCount));
    for (int i = 0; i < count; ++i) devices.push_back(i);
    return devices;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const int index = readIndex(item);
    if (index < 0)
      throw std::invalid_argument(quoted + ": \"" + std::string(item) +
                                  "\" is not a GPU index (expected a list such as 0,1)");
    if (index >= deviceCount)
      throw std::invalid_argument(quoted + ": there is no GPU " + std::to_string(index) + "; " +
                                  machineHas(deviceCount));
    if (std::find(devices.begin(), devices.end(), index) != devices.end())
      throw std::invalid_argument(quoted + ": GPU " + std::to_string(index) + " is listed twice");
    devices.push_back(index);
    start = comma + 1;
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

std::string deviceLabels(const std::vector<int>& devices) {
  std::string text;
  for (const int d : devices) {
    if (!text.empty()) text += ", ";
    text += deviceLabel(d);
  }
  return text.empty() ? std::string("no GPU") : text;
}

namespace detail {
std::atomic<std::uint64_t> gDeviceEpoch{0};
}  // namespace detail

std::optional<std::string> stickyGpuFault() {
  if (!cudaAvailable()) return std::nullopt;
  cudaError_t code = cudaPeekAtLastError();
  if (!detail::isStickyCudaError(code)) code = cudaDeviceSynchronize();
  if (!detail::isStickyCudaError(code)) {
    if (code != cudaSuccess) cudaGetLastError();
    return std::nullopt;
  }
  return std::string(cudaGetErrorString(code));
}

void recoverDevice() {
  if (!cudaAvailable()) throw std::runtime_error("there is no GPU to reset: gpulab runs CPU only here");
  const int device = selectedDevice();
  cudaSetDevice(device);  // reports the sticky error again; the reset below is what matters
  // The epoch moves first: from here on no holder of the old context's memory, streams, events,
  // plans or handles frees them (the reset does), so nothing can free an address of the new context.
  detail::gDeviceEpoch.fetch_add(1, std::memory_order_acq_rel);
  const cudaError_t reset = cudaDeviceReset();
  cudaGetLastError();
  if (reset != cudaSuccess)
    throw CudaError("cudaDeviceReset()", __FILE__, __LINE__, static_cast<int>(reset),
                    std::string(cudaGetErrorName(reset)) + ": " + cudaGetErrorString(reset) +
                        " (the GPU could not be reset: restart gpulab to use it again)");
  // The new context is created now, so a failure shows here. A driver may still be tearing the
  // faulted context down and answer "busy or unavailable" for a while: retry for up to 2 s. (On an
  // H100 with driver 580.159.04, compute mode Default, the answer stayed cudaErrorDevicesUnavailable
  // for as long as it was asked, 11.5 s, after cudaDeviceReset and after cuDevicePrimaryCtxReset
  // alike, and cuCtxCreate gave CUDA_ERROR_ILLEGAL_ADDRESS: that driver wants a new process.)
  cudaError_t open = cudaSuccess;
  const auto start = std::chrono::steady_clock::now();
  for (int wait = 10;; wait = std::min(wait * 2, 1000)) {
    open = cudaSetDevice(device);
    if (open == cudaSuccess) open = cudaFree(nullptr);
    if (open != cudaErrorDevicesUnavailable || std::chrono::steady_clock::now() - start > std::chrono::seconds(2))
      break;
    cudaGetLastError();
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
  }
  if (open != cudaSuccess) {
    cudaGetLastError();
    throw CudaError("cudaSetDevice(device) after cudaDeviceReset()", __FILE__, __LINE__, static_cast<int>(open),
                    std::string(cudaGetErrorName(open)) + ": " + cudaGetErrorString(open) +
                        " (the driver gives this process no new CUDA context after the fault: restart gpulab to use "
                        "the GPU again)");
  }
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
}

MemoryUsage deviceMemory(int device) {
  int previous = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&previous));
  GPULAB_CUDA_CHECK(cudaSetDevice(device));
  MemoryUsage usage;
  const cudaError_t status = cudaMemGetInfo(&usage.free, &usage.total);
  cudaSetDevice(previous);
  GPULAB_CUDA_CHECK(status);
  return usage;
}

}  // namespace gpulab
