// One measured run of an operation, as the Timings panel shows it: the CPU baseline and the GPU's
// upload, compute and download, each optional (medians in milliseconds, from gpulab::Stats).
#pragma once

#include <QDateTime>
#include <QString>
#include <optional>

namespace gpulab::gui {

struct RunTiming {
  QString operation;                 ///< "box r=7 reflect101", "upload photo"
  QString image;                     ///< "400x300 RGB u8"
  std::optional<double> cpuMs;       ///< CPU baseline (OpenCV), median
  int cpuThreads = 0;                ///< threads the CPU baseline used
  std::optional<double> uploadMs;    ///< host -> device, median
  std::optional<double> computeMs;   ///< the GPU kernels alone, median
  std::optional<double> downloadMs;  ///< device -> host, median
  QDateTime when;                    ///< set by TimingsPanel::addRun when left invalid

  bool hasGpu() const { return uploadMs || computeMs || downloadMs; }
  /// Sum of the GPU parts present (upload + compute + download): the end-to-end GPU time.
  std::optional<double> gpuTotalMs() const {
    if (!hasGpu()) return std::nullopt;
    return uploadMs.value_or(0) + computeMs.value_or(0) + downloadMs.value_or(0);
  }
  /// CPU time over GPU compute time, when both exist and are positive.
  std::optional<double> speedupCompute() const { return ratio(cpuMs, computeMs); }
  /// CPU time over the end-to-end GPU time, when both exist and the GPU ran a compute step.
  std::optional<double> speedupEndToEnd() const { return computeMs ? ratio(cpuMs, gpuTotalMs()) : std::nullopt; }

 private:
  static std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
    if (!a || !b || *a <= 0 || *b <= 0) return std::nullopt;
    return *a / *b;
  }
};

/// "0.0345 ms", "1.23 ms", "12.3 ms", "1234 ms": three significant digits, at least.
QString formatMs(double ms);
/// "35.2x", "1.05x", "0.42x".
QString formatSpeedup(double ratio);

}  // namespace gpulab::gui
