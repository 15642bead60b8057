// gpulab-cli filter: box blur, Sobel or 2D convolution of one image on the GPU or the CPU
// (OpenCV), with the timings in one line:
//   gpu (NVIDIA H200): upload 1.234 ms, compute 0.045 ms, download 1.100 ms (median of 10)
//   cpu (OpenCV, 16 threads): 12.3 ms (median of 3)
// A u8 photo gives a u8 result; a float .npy gives a float result (write it to .npy).
// Convolution takes --method direct|fft|auto; fft and auto add a line saying what ran:
//   method: auto -> fft (cost model: direct 1.2e-09 ms/MAC + 0.004 ms, fft ...; ready in 85.2 ms)
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/conv_method.hpp"
#include "gpulab/device.hpp"
#include "gpulab/device_image.hpp"
#include "gpulab/filter.hpp"
#include "gpulab/image_io.hpp"
#include "gpulab/sobel.hpp"
#include "gpulab/timing.hpp"

namespace gpulab::cli {

namespace {

struct FilterArgs {
  std::string op;
  int radius = 0;
  std::string component = "mag";
  std::string kernel;
  bool correlate = false;
  std::string mode = "same";
  std::string method = "direct";
  std::string border = "reflect101";
  double borderValue = 0.0;
  std::string in;
  std::string out;
  std::string device;
  int reps = 0;  // 0: 10 on the GPU, 3 on the CPU

  // Which options the user gave, to reject the ones that do not apply to the op.
  CLI::Option* radiusOption = nullptr;
  CLI::Option* componentOption = nullptr;
  CLI::Option* kernelOption = nullptr;
  CLI::Option* correlateOption = nullptr;
  CLI::Option* modeOption = nullptr;
  CLI::Option* methodOption = nullptr;
  CLI::Option* borderValueOption = nullptr;
};

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

void onlyFor(const CLI::Option* option, const char* name, const char* op) {
  if (given(option)) throw UsageError(std::string(name) + " applies to --op " + op + " only");
}

FilterSpec buildSpec(const FilterArgs& a) {
  FilterSpec spec;
  if (a.op == "box") {
    spec.op = FilterOp::Box;
    if (!given(a.radiusOption)) throw UsageError("--op box needs --radius R (0 or more)");
    spec.radius = a.radius;
  } else if (a.op == "sobel") {
    spec.op = FilterOp::Sobel;
    const auto component = parseSobelComponent(a.component);
    if (!component) throw UsageError("--component '" + a.component + "' is unknown: use mag, x, y or dir");
    spec.component = *component;
  } else if (a.op == "conv") {
    spec.op = FilterOp::Conv;
    if (!given(a.kernelOption)) throw UsageError("--op conv needs --kernel FILE (text rows of numbers, or .npy)");
    spec.correlate = a.correlate;
    if (a.mode == "same")
      spec.mode = ConvMode::Same;
    else if (a.mode == "full")
      spec.mode = ConvMode::Full;
    else if (a.mode == "valid")
      spec.mode = ConvMode::Valid;
    else
      throw UsageError("--mode '" + a.mode + "' is unknown: use same, full or valid");
    const auto method = parseConvMethod(a.method);
    if (!method) throw UsageError("--method '" + a.method + "' is unknown: use " + convMethodNames());
    spec.method = *method;
  } else {
    throw UsageError("--op '" + a.op + "' is unknown: use box, sobel or conv");
  }
  if (spec.op != FilterOp::Box) onlyFor(a.radiusOption, "--radius", "box");
  if (spec.op != FilterOp::Sobel) onlyFor(a.componentOption, "--component", "sobel");
  if (spec.op != FilterOp::Conv) {
    onlyFor(a.kernelOption, "--kernel", "conv");
    onlyFor(a.correlateOption, "--correlate", "conv");
    onlyFor(a.modeOption, "--mode", "conv");
    onlyFor(a.methodOption, "--method", "conv");
  }
  const auto border = parseBorderMode(a.border);
  if (!border) throw UsageError("--border '" + a.border + "' is unknown: use " + borderModeNames());
  if (given(a.borderValueOption) && *border != BorderMode::Constant)
    throw UsageError("--border-value applies to --border constant only");
  spec.border = {*border, a.borderValue};
  return spec;
}

bool useGpu(const std::string& device) {
  if (device == "cpu") return false;
  if (device == "gpu") {
    if (!cudaAvailable()) throw std::runtime_error(queryDevices().status + "; use --device cpu");
    return true;
  }
  if (!device.empty()) throw UsageError("--device '" + device + "' is unknown: use gpu or cpu");
  return cudaAvailable();
}

/// "method: fft", "method: auto -> direct (cost model: ...; ready in 85.2 ms)": what a convolution
/// by method ran (the direct method and the other filters print none).
std::string methodLine(const ConvMethodFilter& filter, const std::optional<ConvAlgorithm>& choice,
                       const std::optional<ConvCostModel>& model, double prepareMs) {
  std::vector<std::string> notes;
  if (filter.method() == ConvMethod::Auto) {
    if (!filter.directPossible())
      notes.push_back("kernels above " + std::to_string(Conv2D::kMaxKernelSize) + " always take the fft");
    else if (model)
      notes.push_back("cost model: " + model->describe());
  }
  if (prepareMs >= 0.05) {  // calibration, plans and spectra; the CPU's fft method has none
    char ready[48];
    std::snprintf(ready, sizeof ready, "ready in %.1f ms", prepareMs);
    notes.emplace_back(ready);
  }
  std::string line = "method: " + std::string(toString(filter.method()));
  if (filter.method() == ConvMethod::Auto) line += " -> " + std::string(choice ? toString(*choice) : "?");
  for (std::size_t i = 0; i < notes.size(); ++i) line += (i == 0 ? " (" : "; ") + notes[i];
  return notes.empty() ? line : line + ")";
}

std::string lowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

void run(const FilterArgs& a) {
  FilterSpec spec = buildSpec(a);
  if (a.in.empty()) throw UsageError("--in IN is required");
  if (a.out.empty()) throw UsageError("--out OUT is required");
  if (a.reps < 0) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const bool gpuRun = useGpu(a.device);
  if (spec.op == FilterOp::Conv) spec.kernel = loadKernelFile(a.kernel);  // a bad file: exit 1

  std::unique_ptr<Filter> filter;
  try {
    filter = makeFilter(spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const Image img = loadImage(a.in);
  const ImageShape outShape = filter->outputShape(shapeOf(img));  // the image does not suit the filter: exit 1
  if (outShape.type != PixelType::U8 && lowerExtension(a.out) != ".npy")
    throw UsageError("--out '" + a.out + "' cannot hold the " + std::string(toString(outShape.type)) + " result of a " +
                     img.describe() + " input: use a .npy file");

  Image result;
  std::string methodText;
  if (gpuRun) {
    const int reps = a.reps > 0 ? a.reps : 10;
    GpuContext gpu;
    const DeviceInfo device = queryDevices().devices.at(static_cast<std::size_t>(gpu.device()));
    DeviceImage in, out;
    gpu.upload(img, in);  // allocates; the timed uploads below reuse it
    std::vector<double> uploads, downloads;
    for (int i = 0; i < reps; ++i) {
      gpu.upload(img, in);
      uploads.push_back(gpu.lastUpload().totalMs());
    }
    const double prepareMs = filter->prepareGpu(gpu, in, out);  // calibration and plans: never timed
    const Stats compute = timeStream(gpu.stream(), [&] { filter->runGpu(gpu, in, out); }, {2, reps});
    for (int i = 0; i < reps; ++i) {
      gpu.download(out, result);
      downloads.push_back(gpu.lastDownload().totalMs());
    }
    std::printf("gpu (%s): upload %.3f ms, compute %.3f ms, download %.3f ms (median of %d)\n", device.name.c_str(),
                Stats::of(uploads).medianMs, compute.medianMs, Stats::of(downloads).medianMs, reps);
    if (const auto* byMethod = dynamic_cast<const ConvMethodFilter*>(filter.get()))
      methodText = methodLine(*byMethod, byMethod->lastGpuChoice(), byMethod->gpuModel(gpu.device()), prepareMs);
  } else {
    const int reps = a.reps > 0 ? a.reps : 3;
    const double prepareMs = filter->prepareCpu(shapeOf(img));  // calibration: never timed
    const Stats cpu = timeHost([&] { result = filter->runCpu(img); }, {reps > 1 ? 1 : 0, reps});
    std::printf("cpu (OpenCV, %d threads): %.3f ms (median of %d)\n", cpuThreads(), cpu.medianMs, reps);
    if (const auto* byMethod = dynamic_cast<const ConvMethodFilter*>(filter.get()))
      methodText = methodLine(*byMethod, byMethod->lastCpuChoice(), byMethod->cpuModel(), prepareMs);
  }
  if (!methodText.empty()) std::printf("%s\n", methodText.c_str());
  saveImage(result, a.out);
  std::printf("wrote %s: %s of %s\n", a.out.c_str(), filter->describe().c_str(), img.describe().c_str());
}

}  // namespace

void registerFilter(CLI::App& app) {
  auto a = std::make_shared<FilterArgs>();
  auto* cmd = app.add_subcommand("filter", "Box blur, Sobel or 2D convolution of an image on the GPU or the CPU");
  cmd->add_option("--op", a->op, "box | sobel | conv")->required();
  a->radiusOption = cmd->add_option("--radius", a->radius, "Box: window (2R+1) x (2R+1), R >= 0");
  a->componentOption = cmd->add_option("--component", a->component, "Sobel: mag (default) | x | y | dir");
  a->kernelOption = cmd->add_option("--kernel", a->kernel, "Conv: kernel file, text rows of numbers or .npy");
  a->correlateOption = cmd->add_flag("--correlate", a->correlate, "Conv: correlation (as cv::filter2D), not flipped");
  a->modeOption = cmd->add_option("--mode", a->mode, "Conv: same (default) | full | valid");
  a->methodOption = cmd->add_option(
      "--method", a->method,
      "Conv: direct (default, kernels up to 127) | fft (up to 1024) | auto (the faster, by a cost model "
      "calibrated on this GPU or CPU once per run)");
  cmd->add_option("--border", a->border, "reflect101 (default) | reflect | replicate | wrap | constant");
  a->borderValueOption = cmd->add_option("--border-value", a->borderValue, "Value outside the image for constant");
  cmd->add_option("--in", a->in, "Input image (png, jpg, bmp, tga, pgm/ppm, or .npy)");
  cmd->add_option("--out", a->out, "Output image (float results need .npy)");
  cmd->add_option("--device", a->device, "gpu | cpu (default: the GPU when there is one)");
  cmd->add_option("--reps", a->reps, "Timed repetitions, median reported (default 10 on the GPU, 3 on the CPU)");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
