// One measured run of an operation, as every front end reports it: what ran (operation, parameters,
// the method asked for and the one each side used, device, threads), the timings (GPU upload,
// compute and download apart; the CPU baseline), the least work the operation must do, the ceiling
// measured for it, and how far the GPU result is from the CPU's. The CLI prints it and writes it as
// JSON (measure/json.hpp); the GUI draws bars, history and CSV from it. A value that was not
// measured is absent here and null in JSON and empty in CSV.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/core/timing.hpp"

namespace gpulab {

/// What Measurement::work counts, and so the unit of its rates.
enum class WorkUnit { Bytes, Flops, Iterations };
constexpr EnumText enumText(WorkUnit) { return {"work unit", "bytes|flops|iterations"}; }
/// "GB/s", "GFLOP/s", "Giter/s" (1 G = 1e9).
std::string_view rateUnit(WorkUnit unit) noexcept;

struct GpuMeasurement {
  int device = 0;
  std::string deviceName;
  std::string methodUsed;       ///< what the operation took: "direct", "fft", ...
  std::string methodNote;       ///< why (Operation::methodNote): the cost model, the GPU path
  double prepareMs = 0;         ///< one-time work done before timing (plans, calibration)
  int warmup = 0;               ///< untimed runs before the timed ones
  std::optional<Stats> upload;  ///< host -> device (GpuContext::upload); absent when the input was resident
  Stats compute;  ///< the operation's kernels alone: CUDA events on its stream (reps 0: not measured, e.g.
                  ///< an upload-only record)
  std::optional<Stats> download;  ///< device -> host; absent when not asked for
  /// How the host images of the timed transfers were held: "pinned" (copied straight) or "pageable"
  /// (through the staging slots); "pinned/pageable" when upload and download differ; empty: none timed.
  std::string hostMemory;
  /// upload + compute + download medians (the parts that were measured).
  double endToEndMs() const;
};

struct CpuMeasurement {
  int threads = 0;
  std::string implementation = "OpenCV";
  std::string methodUsed;
  std::string methodNote;
  double prepareMs = 0;
  int warmup = 0;
  Stats time;  ///< steady clock around each run
};

/// The ceiling uploads and downloads are set against: pinned host <-> device copies (GB/s).
struct TransferCeiling {
  double uploadGbps = 0;    ///< host -> device
  double downloadGbps = 0;  ///< device -> host
  std::string how;
};

/// The ceiling a rate is set against, in the same unit (GB/s for bytes).
struct Ceiling {
  std::string name;  ///< "DRAM copy", "cuBLAS"
  double value = 0;
  std::string how;  ///< one sentence: how it was measured
};

struct Measurement {
  std::string version;      ///< gpulabVersion()
  std::string operation;    ///< "box", "conv", "mandelbrot", "upload": the registered name or the step
  std::string description;  ///< "box r=7 reflect101"
  ParamValues params;
  std::string method = "direct";    ///< the method asked for
  std::optional<ImageShape> input;  ///< absent for generated images (Mandelbrot)
  ImageShape output;

  std::optional<GpuMeasurement> gpu;
  std::string gpuSkipped;  ///< why there is no GPU side: "no CUDA device", "not asked for"
  std::optional<CpuMeasurement> cpu;
  std::string cpuSkipped;

  double work = 0;  ///< the least the operation must do: bytes moved, FLOPs or iterations
  WorkUnit workUnit = WorkUnit::Bytes;
  std::optional<Ceiling> ceiling;
  std::optional<double> maxAbsDiff;  ///< max |gpu - cpu| over every sample, when both ran and compare
  double uploadBytes = 0;            ///< host bytes an upload moves (the input image)
  double downloadBytes = 0;          ///< host bytes a download moves (the output image)
  std::optional<TransferCeiling> transferCeiling;

  /// work / GPU compute median, in rateUnit(workUnit); absent without a GPU side or work.
  std::optional<double> gpuRate() const;
  std::optional<double> cpuRate() const;
  /// gpuRate as a percentage of the ceiling.
  std::optional<double> percentOfCeiling() const;
  /// Upload / download GB/s (bytes over the median), and as a percentage of the pinned copy ceiling.
  std::optional<double> uploadRate() const;
  std::optional<double> downloadRate() const;
  std::optional<double> uploadPercentOfCeiling() const;
  std::optional<double> downloadPercentOfCeiling() const;
  /// CPU median over GPU compute median, and over the GPU's end-to-end time.
  std::optional<double> speedup() const;
  std::optional<double> speedupEndToEnd() const;
};

/// A record with what every record carries: the version, and the operation's name, description,
/// parameters and method (the sides are filled by the harness).
Measurement describeOperation(const Operation& op);

/// CSV of records, for the GUI's history export: a header naming the columns, and one line each
/// (missing values empty, text quoted when it holds a comma or a quote).
std::string csvHeader();
std::string toCsvRow(const Measurement& m);

}  // namespace gpulab
