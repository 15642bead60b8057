// gpulab-cli filter: one registered image operation (box blur, Sobel, 2D convolution, and whatever
// filters/registry.hpp lists) on one image, on the GPU or the CPU (OpenCV), timed by the measuring
// harness, with the timings in one line:
//   gpu (NVIDIA H200): upload 1.234 ms, compute 0.045 ms, download 1.100 ms (median of 10)
//   cpu (OpenCV, 16 threads): 12.3 ms (median of 3)
// The options come from the operations' parameters (--radius, --component, --kernel, ...): a new
// filter brings its own. A u8 photo gives a u8 result, a 16-bit PNG/TIFF a u16 result (filtered as
// f32, or as u16 by auto-levels), a float .npy or TIFF a float result (write it to .npy or .tif). The output's format
// is checked before the filter runs. An image beyond the GPU memory the engine may use
// (--gpu-memory-limit, or the free memory) runs in tiles with halos (tiling/tiled_runner.hpp), once,
// with a line naming the tiles:
//   tiled: 9 tiles of 5462x5462 + halo 7, limit 512 MiB; upload 812 ms, compute 95.1 ms, ...
// Operations with a method other than direct add a line saying what ran:
//   method: auto -> fft (cost model: direct 1.2e-09 ms/MAC + 0.004 ms, fft ...; ready in 85.2 ms)
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/nonfinite.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/json.hpp"
#include "gpulab/tiling/tiled_runner.hpp"
#include "op_options.hpp"

namespace gpulab::cli {

namespace {

nlohmann::json nonFiniteJson(const NonFiniteCount& in, const NonFiniteCount& out) {
  return {{"input", {{"nan", in.nan}, {"inf", in.inf}}}, {"output", {{"nan", out.nan}, {"inf", out.inf}}}};
}

struct FilterArgs {
  std::string op;
  std::string in;
  std::string out;
  std::string device;
  std::string json;
  int reps = 0;  // 0: 10 on the GPU, 1 on the CPU
  int quality = SaveOptions{}.jpegQuality;
  int level = SaveOptions{}.compressionLevel;
  OperationOptions params;
};

/// Brings the result back to the input's type and layout, writes it, and returns it.
Image saveResult(const FilterArgs& a, Image result, const FilterInput& input) {
  SaveOptions save;
  save.jpegQuality = a.quality;
  save.compressionLevel = a.level;
  Image output = finishFilterResult(std::move(result), input);
  saveImage(output, a.out, save);
  return output;
}

/// The image in tiles when it needs more GPU memory than the engine may use; false when it fits.
bool runTiledIfNeeded(const FilterArgs& a, GpuContext& gpu, Operation& op, const FilterInput& input,
                      const ImageShape& inShape) {
  const Image& img = input.image;
  const ImageShape shape = shapeOf(img);
  const std::size_t budget = gpuMemoryBudget(gpu);
  const std::size_t needed = gpuBytesEstimate(op, shape);
  if (needed <= budget) return false;
  const std::string limit = gpuMemoryLimit() == 0 ? "the free GPU memory" : "--gpu-memory-limit";
  TilePlan plan;
  try {
    plan = planTiles(op, shape, budget);
  } catch (const std::exception& e) {
    throw std::runtime_error("the " + describe(shape) + " image needs about " + formatByteSize(needed) +
                             " of GPU memory for " + op.describe() + ", more than the " + formatByteSize(budget) +
                             " that " + limit + " allows, and " + e.what() +
                             "; raise --gpu-memory-limit or use --device cpu");
  }
  TiledRun run = runTiled(gpu, op, img, plan);
  std::printf("%s (one run; %s budget, whole image about %s)\n", run.summary().c_str(), formatByteSize(budget).c_str(),
              formatByteSize(needed).c_str());
  const Image output = saveResult(a, std::move(run.output), input);
  const std::string nonFinite = describeNonFinite(countNonFinite(img), countNonFinite(output));
  std::printf("wrote %s: %s of %s%s\n", a.out.c_str(), op.describe().c_str(), describe(inShape).c_str(),
              nonFinite.empty() ? "" : ("; non-finite: " + nonFinite).c_str());
  if (!a.json.empty()) {
    nlohmann::json report = jsonReport(std::nullopt, std::nullopt);
    report["tiled"] = {{"operation", op.describe()},
                       {"tiles", plan.count()},
                       {"tile_width", plan.tileWidth},
                       {"tile_height", plan.tileHeight},
                       {"halo", plan.halo},
                       {"limit_bytes", run.limit},
                       {"budget_bytes", budget},
                       {"peak_gpu_bytes", run.peakGpuBytes},
                       {"upload_ms", run.uploadMs},
                       {"compute_ms", run.computeMs},
                       {"download_ms", run.downloadMs},
                       {"prepare_ms", run.prepareMs},
                       {"wall_ms", run.wallMs}};
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
  return true;
}

void run(const FilterArgs& a) {
  const OperationInfo& info = asUsage([&]() -> const OperationInfo& { return findOperation(a.op); });
  const ParamValues values = a.params.collect(info);
  if (a.in.empty()) throw UsageError("--in IN is required");
  if (a.out.empty()) throw UsageError("--out OUT is required");
  if (a.reps < 0) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const bool gpuRun = useGpu(a.device);
  const std::unique_ptr<Operation> op = asUsage([&] { return info.make(values); });

  // An output format gpulab does not write fails before anything is read or filtered.
  try {
    checkSaveFormat(a.out, PixelType::U8, 1);  // every format holds u8 gray: this checks the extension
  } catch (const ImageIoError& e) {
    throw UsageError(e.what());
  }
  // Decoded straight into pinned memory when it goes to the GPU (copied there without staging).
  const FilterInput input = prepareFilterInput(
      *op, loadImage(a.in, Image(gpuRun ? HostMemory::Pinned : HostMemory::Pageable)));  // unsuitable image: exit 1
  const Image& img = input.image;
  const ImageShape inShape{img.width(), img.height(), img.channels(), input.original};
  const ImageShape outShape = filterResultShape(*op, inShape);
  try {
    checkSaveFormat(a.out, outShape.type, outShape.channels);
  } catch (const ImageIoError& e) {
    throw UsageError(std::string(e.what()) + " (the result of the " + describe(inShape) + " input is " +
                     describe(outShape) + ")");
  }
  if (!input.note.empty()) std::printf("note: %s\n", input.note.c_str());

  const std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);
  if (gpuRun && runTiledIfNeeded(a, *gpu, *op, input, inShape)) return;
  MeasureSetup setup;
  setup.wantGpu = gpuRun;
  setup.wantCpu = !gpuRun;
  setup.gpu = gpu.get();
  setup.withCeiling = !a.json.empty();
  // One CPU run by default: the command's job is the output; --reps asks for a median.
  MeasureResult result = measure(*op, img, setup, MeasurePolicy::command(a.reps > 0 || gpuRun ? a.reps : 1));
  printTimings(result.record);
  printMethodLine(result.record);
  const Image output = saveResult(a, std::move(gpuRun ? result.gpuOutput : result.cpuOutput), input);
  // NaN or inf in the input or the result is said, never silent (the image is still written).
  const NonFiniteCount inBad = countNonFinite(img), outBad = countNonFinite(output);
  const std::string nonFinite = describeNonFinite(inBad, outBad);
  std::printf("wrote %s: %s of %s%s\n", a.out.c_str(), op->describe().c_str(), describe(inShape).c_str(),
              nonFinite.empty() ? "" : ("; non-finite: " + nonFinite).c_str());
  if (!a.json.empty()) {
    nlohmann::json report = jsonReport(std::nullopt, std::nullopt);
    for (auto& row : toJsonRows(result.record)) {
      row["nonfinite"] = nonFiniteJson(inBad, outBad);
      report["records"].push_back(row);
    }
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
}

}  // namespace

void registerFilter(CLI::App& app) {
  auto a = std::make_shared<FilterArgs>();
  auto* cmd = app.add_subcommand("filter", "A filter (" + operationNames() + ") on an image, on the GPU or the CPU");
  cmd->add_option("--op", a->op, operationNames())->required();
  a->params.addTo(*cmd);
  cmd->add_option("--in", a->in, "Input image (" + supportedImageExtensions() + ")");
  cmd->add_option("--out", a->out, "Output image (16-bit results: png, tif, npy; float: tif, npy)");
  cmd->add_option("--quality", a->quality, "JPEG quality of the output, 1 to 100 (default 95)");
  cmd->add_option("--level", a->level, "PNG/TIFF compression level, 0 to 9 (default 1: fast)");
  cmd->add_option("--device", a->device, "gpu | cpu (default: the GPU when there is one)");
  cmd->add_option("--reps", a->reps, "Timed repetitions, median reported (default 10 on the GPU, 1 on the CPU)");
  cmd->add_option("--json", a->json, "Also write the measurement as JSON to FILE");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
