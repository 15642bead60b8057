// One measured run as the Timings panel keeps it: the engine's record (gpulab::Measurement: what ran,
// on which device and threads, the GPU's upload, compute and download and the CPU baseline, each a
// median of its own, the work done, the ceiling and max|gpu-cpu|) and when it arrived. The GUI never
// times anything itself: every number here comes from the measuring harness (gpulab/measure/).
//
// The helpers below read a record the way the panel shows it; a part that was not measured is absent.
#pragma once

#include <QDateTime>
#include <QString>
#include <optional>

#include "gpulab/measure/record.hpp"

namespace gpulab::gui {

struct RunTiming {
  gpulab::Measurement measurement;
  QDateTime when;  ///< set by TimingsPanel::addRun when left invalid
};

/// The GPU parts that were measured (compute is absent for a transfer alone: Stats with no reps).
std::optional<double> uploadMs(const gpulab::Measurement& m);
std::optional<double> computeMs(const gpulab::Measurement& m);
std::optional<double> downloadMs(const gpulab::Measurement& m);
/// upload + compute + download, of the parts present; absent without a GPU side.
std::optional<double> gpuTotalMs(const gpulab::Measurement& m);
/// The CPU baseline's median.
std::optional<double> cpuMs(const gpulab::Measurement& m);

/// What ran, for titles and tables: the description (after the operation's name when it does not
/// start with it: "fft-filter lowpass gaussian c=0.25 pad=none"), followed by the method each side
/// took when it differs from the one asked for ("conv 31x31 same reflect101 auto → fft", "... auto →
/// GPU fft, CPU direct").
QString operationText(const gpulab::Measurement& m);
/// The method asked for and what the sides took: "direct", "auto → fft", "auto → GPU fft, CPU direct".
QString methodText(const gpulab::Measurement& m);
/// The image it ran on: "600x400 RGB u8", or "1920x1080" for a generated one (no input).
QString imageText(const gpulab::Measurement& m);
/// "123 GB/s (30% of DRAM copy)": the GPU's rate on the record's work, against its ceiling; `brief`
/// puts the share first and leaves the ceiling's name out: "30% (123 GB/s)". Empty without a rate.
QString rateText(const gpulab::Measurement& m, bool brief = false);

/// "0.0345 ms", "1.23 ms", "12.3 ms", "1234 ms": three significant digits, at least.
QString formatMs(double ms);
/// "35.2x", "1.05x", "0.42x".
QString formatSpeedup(double ratio);

}  // namespace gpulab::gui
