// gpulab-cli batch: one operation over a folder (or a glob) of images through the engine's batch
// pipeline (pipeline/batch.hpp): decode threads, the GPU on several streams (or the CPU baseline),
// encode threads. A progress bar with an ETA on a terminal, one line per file otherwise; at the
// end a summary (images/s, MB/s, the time per stage, how busy the GPU was) and the failures, each
// with its reason (exit code 1 when any file failed). --op none measures the codecs alone.
// --gpus all|0,1|N spreads the compute over several GPUs, one pipeline each, fed by the same decode
// and encode threads; the summary then shows images/s per GPU and in total, and which stage bounded
// the rate (decode, encode or the GPUs). --json FILE writes the summary with the devices it ran on.
// A GPU fault (a sticky CUDA error) ends the run with a GpuFaultError after the summary; gpulab-cli then
// restarts itself (fault_restart.hpp), and the restarted batch skips the images written before the
// fault, so none is made twice and none is lost.
//   gpulab-cli batch --op box --radius 15 --in photos/ --out blurred/ --format jpg --shard 2/8
//   gpulab-cli batch --op median --radius 3 --in photos/ --out out/ --gpus all --json batch.json
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "fault_restart.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/core/relaunch.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/pipeline/batch.hpp"
#include "op_options.hpp"

namespace gpulab::cli {

namespace {

struct BatchArgs {
  std::string op;
  std::string in;
  std::string out;
  std::string format = "same";
  std::string device;
  std::string shard;
  std::string gpus;
  std::string jsonPath;
  int jobs = 0;
  int streams = 0;
  int quality = SaveOptions{}.jpegQuality;
  int level = SaveOptions{}.compressionLevel;
  bool noFilter = false;
  OperationOptions params;
};

std::string seconds(double s) {
  char text[32];
  if (s < 0) return "?";
  if (s < 60) {
    std::snprintf(text, sizeof text, "%.1f s", s);
  } else {
    const int whole = static_cast<int>(std::lround(s));
    std::snprintf(text, sizeof text, "%d:%02d", whole / 60, whole % 60);
  }
  return text;
}

/// "2/8" -> {2, 8}; UsageError otherwise.
std::pair<int, int> parseShard(const std::string& text) {
  const std::size_t slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t used = 0;
      const int k = std::stoi(text.substr(0, slash), &used);
      if (used == slash) {
        const std::string rest = text.substr(slash + 1);
        const int n = std::stoi(rest, &used);
        if (used == rest.size() && n >= 1 && k >= 1 && k <= n) return {k, n};
      }
    }
  } catch (const std::exception&) {
  }
  throw UsageError("--shard '" + text + "' is not allowed: use K/N with 1 <= K <= N, e.g. 3/8");
}

void printProgress(const BatchProgress& p, bool terminal) {
  if (terminal) {
    constexpr int kWidth = 30;
    const int filled = p.total > 0 ? p.done * kWidth / p.total : 0;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r[%s] %d/%d  %s elapsed, ETA %s%s   ", bar.c_str(), p.done, p.total,
                 seconds(p.elapsedS).c_str(), seconds(p.etaS).c_str(),
                 p.failed > 0 ? (", " + std::to_string(p.failed) + " failed").c_str() : "");
    if (p.done == p.total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
    return;
  }
  std::printf("[%d/%d] %s %s\n", p.done, p.total, p.last.string().c_str(),
              p.lastError.empty() ? "ok" : ("FAILED: " + p.lastError).c_str());
  std::fflush(stdout);
}

std::string stage(double totalMs, int images) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f s (%.1f ms/image)", totalMs / 1000.0, images > 0 ? totalMs / images : 0.0);
  return text;
}

void printSummary(const BatchSummary& s) {
  const bool several = s.pipelines.size() > 1;
  std::printf(
      "batch: %d of %d images written in %.2f s on %s (%d decode/encode threads%s)%s\n", s.written, s.total, s.wallS,
      s.onGpu ? s.devices.c_str() : s.device.c_str(), s.workers,
      s.streams > 0 ? (", " + std::to_string(s.streams) + " GPU streams" + (several ? " per GPU" : "")).c_str() : "",
      s.filtered ? "" : ", no filter: the codecs alone");
  std::printf("rate: %.1f images/s, %.1f MB/s of input files, %.1f MB/s of pixels\n", s.imagesPerSecond(),
              s.megabytesPerSecond(), s.wallS > 0 ? static_cast<double>(s.pixelBytes) / 1e6 / s.wallS : 0.0);
  const int n = std::max(s.written, 1);
  std::printf("time per stage, summed over threads: decode %s", stage(s.stages.decodeMs, n).c_str());
  if (s.filtered) {
    if (s.onGpu)
      std::printf(", upload %s, compute %s, download %s", stage(s.stages.uploadMs, n).c_str(),
                  stage(s.stages.computeMs, n).c_str(), stage(s.stages.downloadMs, n).c_str());
    else
      std::printf(", compute %s", stage(s.stages.computeMs, n).c_str());
  }
  std::printf(", encode %s\n", stage(s.stages.encodeMs, n).c_str());
  if (s.gpuBusy >= 0 && !several)
    std::printf("GPU busy: %.1f%% of the wall time (copies or kernels on any stream)\n", 100.0 * s.gpuBusy);
  if (several) {
    std::printf("per %s:\n", s.onGpu ? "GPU" : "pipeline");
    for (const BatchPipeline& p : s.pipelines) {
      const int k = std::max(p.images, 1);
      std::printf("  %-40s %4d images, %6.2f images/s", p.label.c_str(), p.images, p.imagesPerSecond(s.wallS));
      if (p.busy >= 0)
        std::printf(", busy %5.1f%%, upload %.1f, compute %.1f, download %.1f ms/image", 100.0 * p.busy, p.uploadMs / k,
                    p.computeMs / k, p.downloadMs / k);
      else
        std::printf(", compute %.1f ms/image", p.computeMs / k);
      std::printf("%s\n", p.failed ? ", FAILED mid-run" : "");
    }
    std::printf("  %-40s %4d images, %6.2f images/s\n", "total", s.written, s.imagesPerSecond());
  }
  std::printf("limit: %s\n", s.limitSentence().c_str());
  for (const std::string& note : s.notes) std::printf("note: %s\n", note.c_str());
  if (s.cancelled)
    std::printf("cancelled: %d inputs were not started\n", s.total - s.written - static_cast<int>(s.failures.size()));
  if (!s.failures.empty()) {
    std::printf("failed: %zu of %d files\n", s.failures.size(), s.total);
    for (const BatchFailure& f : s.failures) std::printf("  %s: %s\n", f.input.string().c_str(), f.reason.c_str());
  }
}

/// Restarted after a GPU fault: the inputs written before it (kBatchWrittenVariable's list, which is
/// removed once read) are taken out of `inputs`, and a line says so.
std::vector<std::filesystem::path> writtenBeforeRestart(std::vector<std::filesystem::path>& inputs) {
  const char* list = std::getenv(kBatchWrittenVariable);
  if (faultRestarts() == 0 || list == nullptr || *list == '\0') return {};
  std::vector<std::filesystem::path> written = readPathList(list);
  std::error_code ec;
  std::filesystem::remove(list, ec);
  const std::size_t all = inputs.size();
  inputs = withoutWritten(inputs, written);
  std::printf("resuming after a GPU fault: %zu of %zu images were written before it, %zu remain\n", all - inputs.size(),
              all, inputs.size());
  return written;
}

/// Leaves the list of inputs written so far for the process gpulab-cli restarts into.
void handOverWritten(const std::vector<std::filesystem::path>& written) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("gpulab-batch-written-" + std::to_string(::getpid()) + ".txt");
  if (writePathList(file, written)) setRestartEnvironment(kBatchWrittenVariable, file.string());
  // Unwritable: the restarted batch makes every image again (none is lost).
}

nlohmann::json toJson(const BatchSummary& s) {
  nlohmann::json doc = {{"total", s.total},
                        {"written", s.written},
                        {"failed", s.failures.size()},
                        {"cancelled", s.cancelled},
                        {"wall_s", s.wallS},
                        {"images_per_s", s.imagesPerSecond()},
                        {"input_mb_per_s", s.megabytesPerSecond()},
                        {"on_gpu", s.onGpu},
                        {"filtered", s.filtered},
                        {"device", s.device},
                        {"devices", s.devices},
                        {"workers", s.workers},
                        {"streams_per_gpu", s.streams},
                        {"gpu_busy", s.gpuBusy},
                        {"limit", limitName(s)},
                        {"limit_sentence", s.limitSentence()},
                        {"codec_share", s.codecShare},
                        {"compute_share", s.computeShare},
                        {"retried", s.retried},
                        {"notes", s.notes},
                        {"stages_ms",
                         {{"decode", s.stages.decodeMs},
                          {"upload", s.stages.uploadMs},
                          {"compute", s.stages.computeMs},
                          {"download", s.stages.downloadMs},
                          {"encode", s.stages.encodeMs}}}};
  doc["pipelines"] = nlohmann::json::array();
  for (const BatchPipeline& p : s.pipelines)
    doc["pipelines"].push_back({{"device", p.device >= 0 ? nlohmann::json(p.device) : nlohmann::json(nullptr)},
                                {"label", p.label},
                                {"images", p.images},
                                {"images_per_s", p.imagesPerSecond(s.wallS)},
                                {"upload_ms", p.uploadMs},
                                {"compute_ms", p.computeMs},
                                {"download_ms", p.downloadMs},
                                {"busy", p.busy},
                                {"failed", p.failed},
                                {"failure", p.failure}});
  doc["failures"] = nlohmann::json::array();
  for (const BatchFailure& f : s.failures)
    doc["failures"].push_back({{"input", f.input.string()}, {"reason", f.reason}});
  return doc;
}

void run(const BatchArgs& a) {
  if (a.in.empty()) throw UsageError("--in DIR|GLOB is required");
  if (a.out.empty()) throw UsageError("--out DIR is required");
  const bool none = a.noFilter || a.op == "none";
  if (!none && a.op.empty())
    throw UsageError("--op is required: " + operationNames() + ", or none for the codecs alone");
  BatchOptions options;
  if (!none) {
    const OperationInfo& info = asUsage([&]() -> const OperationInfo& { return findOperation(a.op); });
    const ParamValues values = a.params.collect(info);
    asUsage([&] { info.make(values); });  // bad values: one sentence now, not per file
    options.makeOperation = [&info, values] { return info.make(values); };
  }
  options.format = asUsage([&] { return parseEnumOrThrow<BatchFormat>(a.format); });
  options.useGpu = useGpu(a.device);
  if (!a.gpus.empty()) {
    if (a.device == "cpu") throw UsageError("--gpus " + a.gpus + " needs the GPU: leave out --device cpu");
    options.devices = asUsage([&] { return parseGpuList(a.gpus, static_cast<int>(queryDevices().devices.size())); });
    options.useGpu = true;
  }
  options.jobs = a.jobs;
  options.streams = a.streams;
  options.save.jpegQuality = a.quality;
  options.save.compressionLevel = a.level;
  if (a.quality < 1 || a.quality > 100)
    throw UsageError("--quality " + std::to_string(a.quality) + " is outside 1 to 100");
  if (a.level < 0 || a.level > 9) throw UsageError("--level " + std::to_string(a.level) + " is outside 0 to 9");
  options.inputs = asUsage([&] { return listBatchInputs(a.in); });
  if (!a.shard.empty()) {
    const auto [k, n] = parseShard(a.shard);
    const std::size_t all = options.inputs.size();
    options.inputs = shardOf(options.inputs, k, n);
    std::printf("shard %d/%d: %zu of %zu files\n", k, n, options.inputs.size(), all);
    if (options.inputs.empty()) return;
  }
  // Restarted after a GPU fault: what was written before it is not made again.
  auto written = std::make_shared<std::vector<std::filesystem::path>>(writtenBeforeRestart(options.inputs));
  if (options.inputs.empty()) return;
  options.outDir = a.out;
  std::ofstream json;  // opened first: a bad path fails before the batch runs
  if (!a.jsonPath.empty()) {
    json.open(a.jsonPath);
    if (!json) throw std::runtime_error("cannot write '" + a.jsonPath + "'");
  }
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  options.onProgress = [terminal, written](const BatchProgress& p) {  // called one at a time
    if (p.lastError.empty()) written->push_back(p.last);
    printProgress(p, terminal);
  };
  BatchSummary summary;
  try {
    summary = asUsage([&] { return runBatch(options); });
  } catch (const GpuFaultError&) {
    handOverWritten(*written);
    throw;
  }
  printSummary(summary);
  // A GPU that failed with a sticky fault: the process's CUDA context is lost (main restarts it).
  const bool gpuFailed = std::any_of(summary.pipelines.begin(), summary.pipelines.end(),
                                     [](const BatchPipeline& p) { return p.failed && p.device >= 0; });
  if (gpuFailed) {
    if (const std::optional<std::string> fault = stickyGpuFault()) {
      handOverWritten(*written);
      throw GpuFaultError("the batch's GPU pipeline", __FILE__, __LINE__, 0, *fault, *fault);
    }
  }
  if (json.is_open()) {
    json << toJson(summary).dump(2) << "\n";
    if (!json) throw std::runtime_error("writing '" + a.jsonPath + "' failed");
  }
  if (!summary.failures.empty())
    throw std::runtime_error(std::to_string(summary.failures.size()) + " of " + std::to_string(summary.total) +
                             " files failed (listed above)");
}

}  // namespace

void registerBatch(CLI::App& app) {
  auto a = std::make_shared<BatchArgs>();
  auto* cmd = app.add_subcommand("batch", "One filter over a folder of images: a decode -> GPU -> encode pipeline");
  cmd->add_option("--op", a->op, operationNames() + "|none (none: the codecs alone)");
  cmd->add_flag("--no-filter", a->noFilter, "The same as --op none: decode and encode only, the pipeline's limit");
  a->params.addTo(*cmd);
  cmd->add_option("--in", a->in, "A folder (its image files) or a quoted glob such as 'photos/*.jpg'");
  cmd->add_option("--out", a->out, "Output folder (made when missing; never an input's own file)");
  cmd->add_option("--format", a->format, "same | png | jpg | tiff (default same: each input's format)");
  cmd->add_option("--device", a->device, "gpu | cpu (default: the GPU when there is one)");
  cmd->add_option("--jobs", a->jobs, "Decode/encode threads (default: every core)");
  cmd->add_option("--streams", a->streams, "GPU streams per GPU, one thread each (default 4)");
  cmd->add_option("--gpus", a->gpus,
                  "all | 0,1 | N: one pipeline per GPU, fed by the same decode/encode threads (default: one GPU)");
  cmd->add_option("--json", a->jsonPath, "Write the summary (devices, per-GPU images/s, stages, limit) as JSON");
  cmd->add_option("--shard", a->shard,
                  "K/N: only the K-th of N disjoint parts of the inputs (Slurm arrays, GNU parallel)");
  cmd->add_option("--quality", a->quality, "JPEG quality of the outputs, 1 to 100 (default 95)");
  cmd->add_option("--level", a->level, "PNG/TIFF compression level, 0 to 9 (default 1: fast)");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
