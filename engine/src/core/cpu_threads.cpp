#include "gpulab/core/cpu_threads.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <thread>

namespace gpulab {

namespace {
constexpr int kMaxCpuThreads = 4096;
std::atomic<int> gCpuThreads{0};  // 0: all cores
}  // namespace

int cpuCores() noexcept { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int parseCpuThreads(std::string_view text) {
  if (text == "all") return 0;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw std::invalid_argument("CPU threads '" + std::string(text) + "' is not 1, all or a whole number");
  if (value < 1 || value > kMaxCpuThreads)
    throw std::invalid_argument("CPU threads must be 1 to " + std::to_string(kMaxCpuThreads) + " or all, got " +
                                std::string(text));
  return value;
}

void setCpuThreads(int threads) {
  threads = std::clamp(threads, 0, kMaxCpuThreads);
  gCpuThreads.store(threads);
  const int count = threads == 0 ? cpuCores() : threads;
  cv::setNumThreads(threads == 0 ? -1 : count);  // -1: OpenCV's own default (every core)
  openblas_set_num_threads(count);
}

int cpuThreadSetting() noexcept {
  const int threads = gCpuThreads.load();
  return threads == 0 ? cpuCores() : threads;
}

std::string cpuLabel(int threads) {
  return "CPU (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
}

std::string cpuLabel() { return cpuLabel(cpuThreadSetting()); }

}  // namespace gpulab
