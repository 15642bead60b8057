// A folder of photos through one operation: a pipeline of decode threads -> upload (each GPU
// stream's pinned staging buffer, reused) -> the operation on several streams -> download ->
// encode threads, with bounded queues so memory stays flat however many files there are. The CPU
// runs the same pipeline with the operation's OpenCV baseline in place of the GPU stage; with no
// operation it measures the codecs alone (the limit the GPU stage should come close to).
//
//   gpulab::BatchOptions options;
//   options.inputs = gpulab::shardOf(gpulab::listBatchInputs("photos/*.jpg"), 1, 4);  // part 1 of 4
//   options.outDir = "out";
//   options.makeOperation = [] { return gpulab::findOperation("box").make({{"radius", "15"}}); };
//   gpulab::BatchSummary summary = gpulab::runBatch(options);  // blocking; progress via onProgress
//
// Each output is byte for byte what `gpulab-cli filter` writes for that input (same decoder,
// sample-type handling of filters/sample_depth.hpp, operation and encoder). A file that fails
// (unreadable, corrupt, too large, a result its format cannot hold, an output that cannot be
// written) is skipped with its reason in summary.failures and the batch goes on. Inputs are never
// overwritten: an output path that names an input, or the output of an earlier input, fails.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/io/image_io.hpp"

namespace gpulab {

/// The outputs' format: the input's own, or one for all.
enum class BatchFormat { Same, Png, Jpg, Tiff };
constexpr EnumText enumText(BatchFormat) { return {"output format", "same|png|jpg|tiff", "jpeg=jpg|tif=tiff"}; }

/// The image files of a folder (by extension: supportedImageExtensions(), any case) or the files a
/// shell glob matches ("photos/*.JPG", "scans/**" is not recursive), sorted by path. Throws
/// std::invalid_argument with one sentence when the folder does not exist or nothing matches.
std::vector<std::filesystem::path> listBatchInputs(const std::string& folderOrGlob);

/// Part k (1..n) of n disjoint parts whose union is `inputs`. A file's part depends on its path
/// alone (a hash of it), not on the other files, so adding files to a collection moves none of the
/// others, and every machine that lists the same paths agrees. Throws std::invalid_argument for k
/// outside 1..n.
std::vector<std::filesystem::path> shardOf(const std::vector<std::filesystem::path>& inputs, int k, int n);

/// Where the output of `input` goes: outDir / the input's name, with the format's extension.
std::filesystem::path batchOutputPath(const std::filesystem::path& input, const std::filesystem::path& outDir,
                                      BatchFormat format);

struct BatchProgress {
  int done = 0;  ///< inputs finished, failed ones included
  int failed = 0;
  int total = 0;
  double elapsedS = 0;
  double etaS = -1;            ///< -1 until a first file is done
  std::filesystem::path last;  ///< the input just finished
  std::string lastError;       ///< its failure, or empty
};

struct BatchOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path outDir;  ///< created when missing
  BatchFormat format = BatchFormat::Same;
  /// Makes one instance of the operation per GPU stream (or one for the CPU); empty: no operation,
  /// the codecs alone.
  std::function<std::unique_ptr<Operation>()> makeOperation;
  bool useGpu = true;
  int jobs = 0;     ///< threads that decode and encode; 0: every core
  int streams = 0;  ///< GPU streams, one thread each; 0: 4
  SaveOptions save;
  /// Called after each input, from a pipeline thread, one call at a time.
  std::function<void(const BatchProgress&)> onProgress;
  /// When set, no new input starts; the files already written stay.
  const std::atomic<bool>* cancel = nullptr;
};

struct BatchFailure {
  std::filesystem::path input;
  std::string reason;  ///< one sentence
};

/// Where the time went, summed over the images (so with several threads a stage's sum can exceed
/// the wall time). upload/download: staging copy + copy engine; compute: CUDA events on the
/// stream (the GPU) or the baseline's wall time (the CPU).
struct BatchStageTimes {
  double decodeMs = 0;
  double uploadMs = 0;
  double computeMs = 0;
  double downloadMs = 0;
  double encodeMs = 0;
};

struct BatchSummary {
  int total = 0;
  int written = 0;
  bool cancelled = false;
  std::vector<BatchFailure> failures;  ///< in input order
  double wallS = 0;
  std::uint64_t bytesRead = 0;     ///< input files
  std::uint64_t bytesWritten = 0;  ///< output files
  std::uint64_t pixelBytes = 0;    ///< decoded samples of the written images
  BatchStageTimes stages;
  bool onGpu = false;
  bool filtered = false;  ///< false: the codecs alone
  int workers = 0;        ///< decode/encode threads
  int streams = 0;        ///< GPU streams (0 on the CPU)
  double gpuBusy = -1;    ///< fraction of the wall time some stream copied or computed; -1 on the CPU
  std::string device;     ///< "NVIDIA H100 80GB HBM3", "CPU (OpenCV, 16 threads)"

  double imagesPerSecond() const { return wallS > 0 ? written / wallS : 0; }
  /// Input file megabytes (10^6 bytes) per second.
  double megabytesPerSecond() const { return wallS > 0 ? static_cast<double>(bytesRead) / 1e6 / wallS : 0; }
};

/// Runs the batch (blocking). Throws std::invalid_argument for options that cannot work (no
/// inputs, no output folder, useGpu without a device) and ImageIoError when the output folder
/// cannot be made or written to; everything about one file goes to summary.failures.
BatchSummary runBatch(const BatchOptions& options);

}  // namespace gpulab
