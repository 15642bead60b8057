// The GPU lab: experiments that show when and why a GPU is faster than the CPU (matrix product,
// transpose, host<->device transfers, elementwise operations, reductions), measured the same way
// for every implementation and returned as Records that the CLI prints, the GUI plots and both
// export.
//
//   gpulab::lab::LabRequest request;
//   request.experiment = gpulab::lab::Experiment::Matmul;
//   request.points = gpulab::lab::parseSizeList("32..4096");    // throws std::invalid_argument
//   auto records = gpulab::lab::runLab(request, control, sink);  // blocking; sink sees each record
//   for (const auto& c : gpulab::lab::findCrossovers(records)) puts(c.sentence().c_str());
//
// Timing: warm-up runs excluded, median/min/max of `reps` runs. GPU work is timed with CUDA events
// on the experiment's stream, its parts apart: upload, compute, download (compute-only and
// end-to-end are both reported). Host data of GPU runs lives in pinned memory, so an upload is the
// copy engine's time alone; the transfer experiment is where pageable memory is measured.
// CPU work is timed with a steady clock. Each GPU rate comes with a measured ceiling: matmul,
// cuBLAS at the same shape in the same run; transpose, elementwise and reduce, the DRAM copy
// bandwidth (deviceCopyCeiling: buffers 4x the L2 cache, measured once per process), with
// Record::note saying where a working set fits in L2 and so may exceed it; transfer, the bus
// bandwidth of large pinned copies measured at the start of the run.
//
// "No GPU" is a state: with no CUDA device runLab runs the CPU implementations of the experiment
// and throws only when the request names a GPU implementation or the experiment has no CPU one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/operation.hpp"   // CpuControl, OperationCancelled
#include "gpulab/measure/ceiling.hpp"  // CopyCeiling, deviceCopyCeiling, bytesText

namespace gpulab::lab {

enum class DType { F32, F64 };
/// Where the one-implementation-per-side experiments (elementwise, reduce) run.
enum class Target { Cpu, Gpu };
enum class Experiment { Matmul, Transpose, Transfer, Elementwise, Reduce };

std::size_t dtypeSize(DType type);  ///< 4, 8

constexpr EnumText enumText(DType) { return {"type", "f32|f64", "float32=f32|float=f32|float64=f64|double=f64"}; }
constexpr EnumText enumText(Target) { return {"target", "cpu|gpu"}; }
constexpr EnumText enumText(Experiment) { return {"experiment", "matmul|transpose|transfer|elementwise|reduce"}; }

/// One measurement of one implementation at one point of a sweep.
struct Record {
  std::string experiment;           ///< "matmul", "transpose", "transfer", "elementwise", "reduce"
  std::string variant;              ///< what was computed: "sum", "x*x+2*y", "h2d", ...; "" for matmul/transpose
  std::string impl;                 ///< "cpu_blas", "gpu_regblock", "cublas", "pinned", ...
  std::string dtype;                ///< "f32" / "f64"; "u8" for byte transfers
  std::vector<std::int64_t> sizes;  ///< matmul {m, n, k}; transpose {rows, cols}; transfer {bytes}; else {n}
  double size = 0;                  ///< x axis of the sweep: N of an NxN(xN) problem, n, or bytes
                                    ///< (cube root of m*n*k, square root of rows*cols when not square)
  std::string params;               ///< extra facts: "threads=16", "iterations=20", ...
  std::string device;               ///< where it ran: "GPU 0 (NVIDIA H100 80GB HBM3)", "CPU (16 threads)"
  bool gpu = false;
  bool withCopies = false;  ///< the timed region includes upload and download

  double medianMs = 0;
  double minMs = 0;
  double maxMs = 0;
  int reps = 0;
  double uploadMs = 0;    ///< GPU: median of the host->device copies of the inputs, timed apart
  double downloadMs = 0;  ///< GPU: median of the device->host copy of the result, timed apart

  double gflops = 0;          ///< matmul: 2*m*n*k / median
  double gbps = 0;            ///< others: bytes the operation must move / median (1 GB = 1e9 B)
  double ceiling = 0;         ///< same unit as the rate, measured in this run; 0 when there is none
  std::string ceilingName;    ///< "cuBLAS", "DRAM copy", "bus h2d", "bus d2h"
  std::string ceilingHow;     ///< one sentence: how the ceiling was measured
  std::string note;           ///< kInL2Note when the working set fits in the L2 cache, else ""
  double relativeError = -1;  ///< matmul when checked: ||C - Cref||_F / ||Cref||_F against float64

  /// Upload + compute + download: the median itself when withCopies, else the sum of the medians.
  double endToEndMs() const { return withCopies ? medianMs : medianMs + uploadMs + downloadMs; }
  double rate() const { return gflops > 0 ? gflops : gbps; }
  const char* rateUnit() const { return experiment == "matmul" ? "GFLOP/s" : "GB/s"; }
  /// Rate as a percentage of the ceiling; 0 when there is no ceiling.
  double percentOfCeiling() const { return ceiling > 0 ? 100.0 * rate() / ceiling : 0.0; }
};

/// Record::note of a GPU compute record whose working set (every array it reads and writes) fits
/// in the device's L2 cache: repeated runs are then served from L2 and can exceed the DRAM ceiling.
inline constexpr const char* kInL2Note = "in L2";

/// "33x100x7": a record's sizes joined by 'x'.
std::string sizesText(const std::vector<std::int64_t>& sizes);

/// Comma-separated CSV with a header line naming every Record field (for the GUI's export).
std::string csvHeader();
std::string toCsvRow(const Record& record);

/// Where the GPU starts to win against the CPU in a sweep, for one GPU implementation, one CPU
/// implementation, one variant and type, compute-only or end-to-end.
struct Crossover {
  enum class Outcome {
    Always,  ///< the GPU is faster at every size measured
    Never,   ///< the GPU is slower at the largest size measured
    At       ///< the GPU is faster from `firstWinningSize` on, slower just below it
  };
  std::string experiment;
  std::string variant;
  std::string dtype;
  std::string cpuImpl;
  std::string gpuImpl;
  bool endToEnd = false;  ///< including upload and download
  Outcome outcome = Outcome::Never;
  double firstWinningSize = 0;  ///< At: smallest measured size from which the GPU stays faster
  double lastLosingSize = 0;    ///< At: the measured size just below it
  double estimatedSize = 0;     ///< At: where the time ratio crosses 1, interpolated on log-log axes
  double smallestSize = 0;      ///< the range both were measured over
  double largestSize = 0;

  /// "f32 matmul: cublas (compute only) beats cpu_blas from size 256 on (the curves cross near 181)."
  std::string sentence() const;
};

/// Pairs every GPU implementation with every CPU implementation of the same experiment, variant and
/// type, over the sizes both were measured at, in both modes (compute only; end to end, which uses
/// the with-copies records where present). Groups with fewer than one common size are skipped.
std::vector<Crossover> findCrossovers(const std::vector<Record>& records);

/// How one measurement is taken (the per-experiment classes take these).
struct MeasureOptions {
  int reps = 10;
  int warmup = 2;
  bool withCopies = false;  ///< GPU: also time upload + compute + download as one region
  bool check = false;       ///< matmul: fill Record::relativeError against a float64 product
};

/// One point of a sweep as written: {N}, {A, B} or {A, B, C} ("4096", "1000x3", "33x100x7").
using SizePoint = std::vector<std::int64_t>;

/// Parses "32,64,100", "32..4096" (doubling), "1K..64M" (K, M, G are powers of 1024) and
/// "33x100x7". Throws std::invalid_argument with one sentence naming the bad token.
std::vector<SizePoint> parseSizeList(std::string_view text);

/// Bytes the largest point of a request needs on the host and on the device (for a check up front).
struct MemoryNeed {
  std::size_t hostBytes = 0;
  std::size_t deviceBytes = 0;
};

struct LabRequest {
  Experiment experiment = Experiment::Matmul;
  std::vector<SizePoint> points;  ///< empty: defaultSizes(experiment)
  DType dtype = DType::F32;
  std::vector<std::string> impls;     ///< names from implNames(); empty: every one this machine can run
  std::vector<std::string> variants;  ///< names from variantNames(); empty: all
  bool withCopies = false;            ///< also time upload + compute + download as one region (extra records)
  bool check = false;                 ///< matmul: relative error of each result against a float64 product
  int reps = 10;
  int warmup = 2;
  int iterations = 20;    ///< transfer: compute steps of the "copy every iteration" / "upload once" patterns
  std::vector<int> gpus;  ///< transfer: the first two are the peer-to-peer rows' GPUs A and B (default 0, 1)
};

/// Every implementation of an experiment, CPU ones first ("cpu_blas", "gpu_naive", ...).
std::vector<std::string> implNames(Experiment experiment);
/// Whether an implementation name of that experiment runs on the GPU.
bool isGpuImpl(Experiment experiment, std::string_view impl);
/// Variants of an experiment: elementwise "x*x+2*y", "a*x+y"; reduce "sum", "mean", "std", "min",
/// "max"; transfer "h2d", "d2h", "pattern"; empty for matmul and transpose.
std::vector<std::string> variantNames(Experiment experiment);
/// matmul 32..4096, transpose 256..8192, transfer 4K..256M bytes, elementwise/reduce 1K..64M.
std::vector<SizePoint> defaultSizes(Experiment experiment);

/// Validates the whole request (sizes, names, reps, that the machine can run it, that the largest
/// point fits in host and device memory) and throws before anything runs: std::invalid_argument for
/// a bad request, std::runtime_error for one this machine cannot run (no GPU, not enough memory).
void validate(const LabRequest& request);
MemoryNeed memoryNeed(const LabRequest& request);

/// What the experiment classes (MatmulLab, TransposeLab, ElementwiseLab, ReduceLab, TransferLab)
/// share: GPU resources made once and reused between calls, so an instance is not copyable and
/// serves one thread.
class LabBase {
 public:
  LabBase(const LabBase&) = delete;
  LabBase& operator=(const LabBase&) = delete;

  /// Whether a CUDA device exists: the GPU implementations run only then.
  bool hasGpu() const noexcept { return gpu_; }

 protected:
  LabBase();  ///< asks the CUDA runtime once
  ~LabBase() = default;

 private:
  bool gpu_;
};

using RecordSink = std::function<void(const Record&)>;

/// Runs a request (blocking). Each record goes to `sink` as soon as it is measured, then into the
/// returned list. Between measurements `control.progress` gets the fraction done and
/// `control.cancel` is checked; a cancelled run throws OperationCancelled.
std::vector<Record> runLab(const LabRequest& request, const CpuControl& control = {}, const RecordSink& sink = {});

}  // namespace gpulab::lab
