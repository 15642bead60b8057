// gpulab-cli filter: one registered image operation (box blur, Sobel, 2D convolution, and whatever
// filters/registry.hpp lists) on one image, on the GPU or the CPU (OpenCV), timed by the measuring
// harness, with the timings in one line:
//   gpu (NVIDIA H200): upload 1.234 ms, compute 0.045 ms, download 1.100 ms (median of 10)
//   cpu (OpenCV, 16 threads): 12.3 ms (median of 3)
// The options come from the operations' parameters (--radius, --component, --kernel, ...): a new
// filter brings its own. A u8 photo gives a u8 result; a float .npy a float result (write it to
// .npy). Operations with a method other than direct add a line saying what ran:
//   method: auto -> fft (cost model: direct 1.2e-09 ms/MAC + 0.004 ms, fft ...; ready in 85.2 ms)
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/json.hpp"

namespace gpulab::cli {

namespace {

struct FilterArgs {
  std::string op;
  std::string in;
  std::string out;
  std::string device;
  std::string json;
  int reps = 0;  // 0: 10 on the GPU, 3 on the CPU
  // One option per parameter name across every registered operation.
  std::map<std::string, CLI::Option*> options;
  std::map<std::string, std::string> text;
  std::map<std::string, bool> flags;
};

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

/// "--op box" or "--op box|sobel": the operations that take a parameter, for error messages.
std::string opsTaking(const std::string& param) {
  std::string ops;
  for (const OperationInfo& info : imageOperations())
    if (info.param(param) != nullptr) ops += (ops.empty() ? "" : "|") + info.name;
  return ops;
}

/// The user's parameter values for `info`, checked against what it takes; kernel files read.
ParamValues collectParams(const FilterArgs& a, const OperationInfo& info) {
  for (const auto& [name, option] : a.options)
    if (given(option) && info.param(name) == nullptr)
      throw UsageError("--" + name + " applies to --op " + opsTaking(name) + " only");
  ParamValues values;
  for (const ParamInfo& p : info.params) {
    const CLI::Option* option = a.options.at(p.name);
    if (!given(option)) {
      if (p.defaultValue.empty()) throw UsageError("--op " + info.name + " needs --" + p.name + " (" + p.help + ")");
      continue;
    }
    if (p.kind == ParamInfo::Kind::Flag)
      values[p.name] = a.flags.at(p.name) ? "true" : "false";
    else if (p.kind == ParamInfo::Kind::Kernel)
      values[p.name] = formatKernelText(loadKernelFile(a.text.at(p.name)));  // a bad file: exit 1
    else
      values[p.name] = a.text.at(p.name);
  }
  for (const ParamInfo& p : info.params) {
    if (p.onlyWith.empty() || !values.contains(p.name)) continue;
    const auto [other, wanted] = p.condition();
    if (info.withDefaults(values)[other] != wanted)
      throw UsageError("--" + p.name + " applies to --" + other + " " + wanted + " only");
  }
  return values;
}

void run(const FilterArgs& a) {
  const OperationInfo& info = asUsage([&]() -> const OperationInfo& { return findOperation(a.op); });
  const ParamValues values = collectParams(a, info);
  if (a.in.empty()) throw UsageError("--in IN is required");
  if (a.out.empty()) throw UsageError("--out OUT is required");
  if (a.reps < 0) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const bool gpuRun = useGpu(a.device);
  const std::unique_ptr<Operation> op = asUsage([&] { return info.make(values); });

  const Image img = loadImage(a.in);
  const ImageShape outShape = op->outputShape(shapeOf(img));  // the image does not suit the filter: exit 1
  if (outShape.type != PixelType::U8 && lowerExtension(a.out) != ".npy")
    throw UsageError("--out '" + a.out + "' cannot hold the " + std::string(toString(outShape.type)) + " result of a " +
                     img.describe() + " input: use a .npy file");

  const std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);
  MeasureSetup setup;
  setup.wantGpu = gpuRun;
  setup.wantCpu = !gpuRun;
  setup.gpu = gpu.get();
  setup.withCeiling = !a.json.empty();
  const MeasureResult result = measure(*op, img, setup, MeasurePolicy::command(a.reps));
  printTimings(result.record);
  printMethodLine(result.record);
  saveImage(gpuRun ? result.gpuOutput : result.cpuOutput, a.out);
  std::printf("wrote %s: %s of %s\n", a.out.c_str(), op->describe().c_str(), img.describe().c_str());
  if (!a.json.empty()) {
    nlohmann::json report = jsonReport(std::nullopt, std::nullopt);
    for (auto& row : toJsonRows(result.record)) report["records"].push_back(row);
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
}

}  // namespace

void registerFilter(CLI::App& app) {
  auto a = std::make_shared<FilterArgs>();
  auto* cmd = app.add_subcommand("filter", "A filter (" + operationNames() + ") on an image, on the GPU or the CPU");
  cmd->add_option("--op", a->op, operationNames())->required();
  std::set<std::string> seen;
  for (const OperationInfo& info : imageOperations())
    for (const ParamInfo& p : info.params) {
      if (!seen.insert(p.name).second) continue;
      const std::string help = "(" + opsTaking(p.name) + ") " + p.help;
      if (p.kind == ParamInfo::Kind::Flag)
        a->options[p.name] = cmd->add_flag("--" + p.name, a->flags[p.name], help);
      else
        a->options[p.name] = cmd->add_option("--" + p.name, a->text[p.name], help);
    }
  cmd->add_option("--in", a->in, "Input image (png, jpg, bmp, tga, pgm/ppm, or .npy)");
  cmd->add_option("--out", a->out, "Output image (float results need .npy)");
  cmd->add_option("--device", a->device, "gpu | cpu (default: the GPU when there is one)");
  cmd->add_option("--reps", a->reps, "Timed repetitions, median reported (default 10 on the GPU, 3 on the CPU)");
  cmd->add_option("--json", a->json, "Also write the measurement as JSON to FILE");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
