#include "cli_support.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "gpulab/core/device.hpp"

namespace gpulab::cli {

bool useGpu(const std::string& device) {
  if (device == "cpu") return false;
  if (device == "gpu") {
    if (!cudaAvailable()) throw std::runtime_error(queryDevices().status + "; use --device cpu");
    return true;
  }
  if (!device.empty()) throw UsageError("--device '" + device + "' is unknown: use gpu or cpu");
  return cudaAvailable();
}

std::unique_ptr<GpuContext> gpuContextIf(bool gpu) { return gpu ? std::make_unique<GpuContext>() : nullptr; }

std::string lowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::string formatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 1 ? "%.4f" : (ms < 100 ? "%.2f" : "%.0f"), ms);
  return text;
}

void printTimings(const Measurement& m) {
  if (m.gpu) {
    const GpuMeasurement& g = *m.gpu;
    // Pinned host images are copied straight; pageable ones through staging (GpuContext).
    std::printf("gpu (%s): upload %.3f ms, compute %.3f ms, download %.3f ms (median of %d)%s%s\n",
                g.deviceName.c_str(), g.upload ? g.upload->medianMs : 0.0, g.compute.medianMs,
                g.download ? g.download->medianMs : 0.0, g.compute.reps, g.hostMemory.empty() ? "" : "; host memory ",
                g.hostMemory.c_str());
  }
  if (m.cpu)
    std::printf("cpu (%s, %d threads): %.3f ms (median of %d)\n", m.cpu->implementation.c_str(), m.cpu->threads,
                m.cpu->time.medianMs, m.cpu->time.reps);
}

void printMethodLine(const Measurement& m) {
  if (m.method == "direct") return;
  const std::string note = m.gpu ? m.gpu->methodNote : (m.cpu ? m.cpu->methodNote : std::string());
  const double prepareMs = m.gpu ? m.gpu->prepareMs : (m.cpu ? m.cpu->prepareMs : 0.0);
  const std::string used = m.gpu ? m.gpu->methodUsed : (m.cpu ? m.cpu->methodUsed : std::string("?"));
  std::vector<std::string> notes;
  if (!note.empty()) notes.push_back(note);
  if (prepareMs >= 0.05) {  // calibration, plans and spectra; the CPU's fft method has none
    char ready[48];
    std::snprintf(ready, sizeof ready, "ready in %.1f ms", prepareMs);
    notes.emplace_back(ready);
  }
  std::string line = "method: " + m.method;
  if (m.method == "auto") line += " -> " + used;
  for (std::size_t i = 0; i < notes.size(); ++i) line += (i == 0 ? " (" : "; ") + notes[i];
  std::printf("%s%s\n", line.c_str(), notes.empty() ? "" : ")");
}

}  // namespace gpulab::cli
