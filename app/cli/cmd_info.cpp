// gpulab-cli info [--json]: the CUDA devices of this machine, or why there are none.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpulab/core/device.hpp"

namespace gpulab::cli {

namespace {

double gib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

nlohmann::json toJson(const DeviceReport& report) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceInfo& d : report.devices)
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"compute_capability", d.computeCapability()},
                       {"multiprocessors", d.multiprocessors},
                       {"total_memory_bytes", d.totalMemory},
                       {"free_memory_bytes", d.freeMemory},
                       {"l2_cache_bytes", d.l2CacheBytes},
                       {"memory_bus_width_bits", d.memoryBusWidthBits}});
  return {{"cuda_available", report.available()},
          {"status", report.available() ? "ok" : report.status},
          {"cuda_runtime", formatCudaVersion(report.runtimeVersion)},
          {"cuda_driver", formatCudaVersion(report.driverVersion)},
          {"devices", devices}};
}

void printText(const DeviceReport& report) {
  std::printf("CUDA runtime %s, driver %s\n", formatCudaVersion(report.runtimeVersion).c_str(),
              formatCudaVersion(report.driverVersion).c_str());
  if (!report.available()) {
    std::printf("%s\n", report.status.c_str());
    return;
  }
  for (const DeviceInfo& d : report.devices)
    std::printf("GPU %d: %s, compute %s, %d SMs, %.1f GiB total, %.1f GiB free, L2 %d MiB\n", d.index, d.name.c_str(),
                d.computeCapability().c_str(), d.multiprocessors, gib(d.totalMemory), gib(d.freeMemory),
                d.l2CacheBytes >> 20);
}

}  // namespace

void registerInfo(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "List CUDA devices (name, compute capability, SMs, memory)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of text");
  cmd->callback([json] {
    const DeviceReport report = queryDevices();
    if (*json)
      std::cout << toJson(report).dump(2) << "\n";
    else
      printText(report);
  });
}

}  // namespace gpulab::cli
