// A folder of photos through one operation: a pipeline of decode threads -> upload (each GPU
// stream's pinned staging buffer, reused) -> the operation on several streams -> download ->
// encode threads, with bounded queues so memory stays flat however many files there are. With
// several GPUs (options.devices) each GPU runs its own compute pipeline (its streams, one thread
// each), all fed by the same decode threads and drained by the same encode threads: a GPU takes the
// next decoded image whenever one of its streams is free, so a faster or less busy GPU takes more.
// A GPU that fails mid-run (a CUDA error, out of memory) stops taking images; the image it held is
// retried on another GPU and the summary says so in one sentence. The CPU
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
  /// The GPUs that compute, one pipeline each (the CLI's --gpus, the GUI's device checkboxes);
  /// empty: the selected device alone (selectDevice). An index may repeat: two pipelines on one GPU
  /// (the tests use that to run the several-GPU path on a machine with one). Throws
  /// std::invalid_argument naming the index when one does not exist.
  std::vector<int> devices;
  /// CPU compute threads when !useGpu (each runs the OpenCV baseline, itself on all cores); 0: 1.
  /// More than one stands in for several GPUs where there is none (the tests of the splitting).
  int cpuPipelines = 0;
  int jobs = 0;     ///< threads that decode and encode; 0: every core
  int streams = 0;  ///< GPU streams per GPU, one thread each; 0: 4
  SaveOptions save;
  /// Called after each input, from a pipeline thread, one call at a time.
  std::function<void(const BatchProgress&)> onProgress;
  /// When set, no new input starts; the files already written stay.
  const std::atomic<bool>* cancel = nullptr;
  /// Test hook: called in a compute thread of pipeline `pipeline` (an index into the pipelines, i.e.
  /// into `devices`) before each image. An exception from it counts as that pipeline's device failing
  /// mid-run, as a CUDA error or out-of-memory does.
  std::function<void(int pipeline)> beforeCompute;
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

/// One compute pipeline of a run: a GPU with its streams, or a CPU compute thread.
struct BatchPipeline {
  int device = -1;      ///< the CUDA device; -1 on the CPU
  std::string label;    ///< "GPU 1 (NVIDIA H100 80GB HBM3)", "CPU pipeline 2"
  int images = 0;       ///< images it computed (handed to the encoders)
  double uploadMs = 0;  ///< summed like BatchStageTimes
  double computeMs = 0;
  double downloadMs = 0;
  double busy = -1;     ///< fraction of the wall time some stream of it copied or computed; -1 on the CPU
  bool failed = false;  ///< it stopped mid-run
  std::string failure;  ///< why, one sentence
  double imagesPerSecond(double wallS) const { return wallS > 0 ? images / wallS : 0; }
};

/// The stage that bounded the run's rate, from the stages' busy times.
enum class BatchLimit { Decode, Encode, Compute, None };

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
  bool filtered = false;                 ///< false: the codecs alone
  int workers = 0;                       ///< decode/encode threads
  int streams = 0;                       ///< GPU streams per GPU (0 on the CPU)
  double gpuBusy = -1;                   ///< mean over the GPUs of the fraction of the wall time some stream copied or
                                         ///< computed; -1 on the CPU
  std::string device;                    ///< "NVIDIA H100 80GB HBM3", "CPU (OpenCV, 16 threads)"
  std::string devices;                   ///< "GPU 0 (NVIDIA H100 80GB HBM3), GPU 1 (...)": every device it ran on
  std::vector<BatchPipeline> pipelines;  ///< one per GPU (or CPU compute thread), in options order
  int retried = 0;                       ///< images moved to another GPU after theirs failed
  std::vector<std::string> notes;        ///< one sentence per GPU that failed, and what happened
  /// Which stage bounded the rate: decode or encode when the decode/encode threads were busy at
  /// least as large a share of their time as the compute pipelines were; compute (the GPUs, or the
  /// CPU baseline) otherwise; None for the codecs alone when nothing was measured.
  BatchLimit limit = BatchLimit::None;
  double codecShare = 0;    ///< (decode + encode time) / (threads x wall time)
  double computeShare = 0;  ///< gpuBusy on the GPU; compute time / (pipelines x wall) on the CPU
  /// "decode: the 16 decode/encode threads were busy 97% of the time (decode 80%, encode 17%); the GPUs 41%".
  std::string limitSentence() const;

  double imagesPerSecond() const { return wallS > 0 ? written / wallS : 0; }
  /// Input file megabytes (10^6 bytes) per second.
  double megabytesPerSecond() const { return wallS > 0 ? static_cast<double>(bytesRead) / 1e6 / wallS : 0; }
};

/// Runs the batch (blocking). Throws std::invalid_argument for options that cannot work (no
/// inputs, no output folder, useGpu without a device, a device index that does not exist) and ImageIoError when the
/// output folder cannot be made or written to; everything about one file goes to summary.failures.
BatchSummary runBatch(const BatchOptions& options);

/// "decode", "encode", "GPU" / "CPU compute", "none".
std::string limitName(const BatchSummary& summary);

}  // namespace gpulab
