// gpulab-cli mandelbrot: render a Mandelbrot or Julia view to a PNG (view stored in its text fields) and
// optionally the raw smooth iteration counts to .npy, on the GPU or all CPU cores, with timings.
// gpulab-cli mandelbrot --bench: the two benchmark views in f32 and f64: the plain kernel, the
// optimized one and what each of its shortcuts contributes, the CPU baseline, and the speedups.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/json.hpp"

namespace gpulab::cli {

namespace {

struct MandelbrotArgs {
  std::string center = "-0.5,0";
  double width = 3.0;
  std::string size = "1920x1080";
  std::string iterations = "auto";
  std::string precision = "auto";
  std::string palette = "classic";
  double offset = 0.0;
  double density = 1.0;
  std::string julia;
  int supersample = 1;
  std::string raw;
  std::string out;
  std::string device;
  std::string variant = "optimized";
  int reps = 0;  // 0: 10 on the GPU, 1 on the CPU
  int threads = 0;
  bool bench = false;
  std::string json;
};

/// asUsage, and a view deeper than the renderer covers is a usage error too (exit code 2).
template <class F>
auto asViewUsage(F&& f) -> decltype(f()) {
  try {
    return asUsage(f);
  } catch (const PrecisionLimitError& e) {
    throw UsageError(e.what());
  }
}

std::pair<int, int> parseSize(const std::string& text) {
  const std::size_t x = text.find('x');
  try {
    std::size_t used1 = 0, used2 = 0;
    if (x != std::string::npos) {
      const std::string a = text.substr(0, x), b = text.substr(x + 1);
      const int w = std::stoi(a, &used1), h = std::stoi(b, &used2);
      if (used1 == a.size() && used2 == b.size() && !a.empty() && !b.empty()) return {w, h};
    }
  } catch (const std::exception&) {
  }
  throw UsageError("--size '" + text + "' is not WIDTHxHEIGHT (e.g. 1920x1080)");
}

MandelbrotView buildView(const MandelbrotArgs& a) {
  return asViewUsage([&] {
    MandelbrotView v;
    const auto c = parsePoint(a.center, "--center");
    v.centerX = c[0];
    v.centerY = c[1];
    v.width = a.width;
    std::tie(v.imageWidth, v.imageHeight) = parseSize(a.size);
    v.precision = parseEnumOrThrow<Precision>(a.precision);
    v.supersample = a.supersample;
    if (!a.julia.empty()) {
      const auto j = parsePoint(a.julia, "--julia");
      v.julia = true;
      v.juliaX = j[0];
      v.juliaY = j[1];
    }
    if (a.iterations == "auto") {
      v.maxIterations = autoIterations(v.width);
    } else {
      std::size_t used = 0;
      long long n = -1;
      try {
        n = std::stoll(a.iterations, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != a.iterations.size() || used == 0)
        throw UsageError("--iters '" + a.iterations + "' is not a whole number or 'auto'");
      v.maxIterations = static_cast<int>(std::clamp<long long>(n, -1, kMaxMandelbrotIterations + 1LL));
    }
    choosePrecision(v);  // validates the view and the zoom depth
    return v;
  });
}

std::string describeView(const MandelbrotView& v) {
  char text[320];
  std::snprintf(text, sizeof text, "%s, centre (%.17g, %.17g), width %.6g, %dx%d%s, %d iterations",
                v.julia ? "julia" : "mandelbrot", v.centerX, v.centerY, v.width, v.imageWidth, v.imageHeight,
                v.supersample > 1 ? (" (supersampled " + std::to_string(v.supersample) + "x)").c_str() : "",
                v.maxIterations);
  std::string out = text;
  if (v.julia) {
    std::snprintf(text, sizeof text, ", c = (%.17g, %.17g)", v.juliaX, v.juliaY);
    out += text;
  }
  return out;
}

void render(const MandelbrotArgs& a) {
  const MandelbrotView view = buildView(a);
  MandelbrotOptions options;
  options.variant = asUsage([&] { return parseEnumOrThrow<MandelbrotVariant>(a.variant); });
  options.cpuThreads = a.threads;
  Colouring colouring;
  asUsage([&] {
    colouring.palette = parsePalette(a.palette);
    colouring.offset = a.offset;
    colouring.density = a.density;
    validate(colouring);
    return 0;
  });
  if (a.out.empty()) throw UsageError("--out OUT.png is required (or --bench)");
  if (std::filesystem::path(a.out).extension() != ".png")
    throw UsageError("--out '" + a.out + "' must be a .png file: the view is stored in its text fields");
  if (!a.raw.empty() && std::filesystem::path(a.raw).extension() != ".npy")
    throw UsageError("--raw '" + a.raw + "' must be a .npy file");

  const PrecisionChoice precision = choosePrecision(view);
  const bool gpuRun = useGpu(a.device);
  std::printf("%s\n", describeView(view).c_str());
  std::printf("precision: %s\n", precision.describe().c_str());

  Image raw, rgba;
  if (gpuRun) {
    GpuContext gpu;
    MandelbrotRenderer renderer;
    const MeasurePolicy policy = MeasurePolicy::command(a.reps);
    const Stats compute = measureStream(
        gpu.stream(), [&] { renderer.compute(gpu, view, options); }, policy);
    const Stats colour = measureStream(
        gpu.stream(), [&] { renderer.colour(gpu, colouring); }, policy);
    std::printf("gpu compute (%s): %s\n", std::string(toString(options.variant)).c_str(), compute.describe().c_str());
    std::printf("gpu colouring (palette %s): %s\n", colouring.palette.name().c_str(), colour.describe().c_str());
    rgba = renderer.downloadRgba(gpu);
    if (!a.raw.empty()) raw = renderer.downloadRaw(gpu);
  } else {
    MeasurePolicy policy = MeasurePolicy::command(a.reps > 0 ? a.reps : 1);
    const Stats compute = measureHost([&] { raw = renderRawCpu(view, options); }, policy);
    const int threads = options.cpuThreads > 0 ? options.cpuThreads
                                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::printf("cpu compute (%d threads): %s\n", threads, compute.describe().c_str());
    policy.cpuWarmup = 0;
    policy.cpuReps = 1;
    const Stats colour = measureHost([&] { rgba = colourRaw(raw, colouring, view.supersample); }, policy);
    std::printf("cpu colouring (palette %s, one thread): %.4g ms\n", colouring.palette.name().c_str(), colour.medianMs);
  }
  const Image png = opaqueToRgb(rgba);
  savePngWithText(png, a.out, pngTextFromView(view, colouring, precision.used));
  std::printf("wrote %s (%s, %.1f MiB)\n", a.out.c_str(), png.describe().c_str(),
              static_cast<double>(std::filesystem::file_size(a.out)) / (1024.0 * 1024.0));
  if (!a.raw.empty()) {
    saveImage(raw, a.raw);
    std::printf("wrote %s (%s; interior pixels -1)\n", a.raw.c_str(), raw.describe().c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// --bench

struct BenchImpl {
  const char* name;
  MandelbrotOptions options;
};

/// The plain kernel first (the reference point), then the optimized one, then the optimized one with
/// one shortcut switched off at a time (what each contributes).
std::vector<BenchImpl> benchImpls() {
  MandelbrotOptions plain, optimized, noPeriodicity, noInterior;
  plain.variant = MandelbrotVariant::Plain;
  noPeriodicity.periodicity = false;
  noInterior.interiorTests = false;
  return {{"plain", plain},
          {"optimized", optimized},
          {"optimized-no-periodicity", noPeriodicity},
          {"optimized-no-interior-tests", noInterior}};
}

void printBenchRow(const std::string& view, const std::string& dtype, const std::string& impl, const Stats& s,
                   double iterations, double plainMs) {
  char ratio[32] = "";
  if (plainMs > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", plainMs / s.medianMs);
  std::printf("%-20s %-4s %-28s %10.4f %10.4f %10.4f %10.1f %9s\n", view.c_str(), dtype.c_str(), impl.c_str(),
              s.medianMs, s.minMs, s.maxMs, iterations / s.medianMs * 1e-6, ratio);
}

void bench(const MandelbrotArgs& a) {
  const bool gpuRun = useGpu(a.device);
  const MeasurePolicy policy = MeasurePolicy::benchmark(a.reps > 0 ? a.reps : 20);
  if (gpuRun)
    std::printf("device: %s\n", queryDevices().devices.front().name.c_str());
  else
    std::printf("no GPU (%s): the CPU rows run, the GPU rows are skipped\n",
                a.device == "cpu" ? "--device cpu" : queryDevices().status.c_str());
  std::printf("%-20s %-4s %-28s %10s %10s %10s %10s %9s\n", "view", "type", "impl", "median ms", "min ms", "max ms",
              "G iter/s", "vs plain");

  struct Named {
    const char* op;
    MandelbrotView view;
  };
  MandelbrotView interior = wholeSetView();  // every pixel inside the cardioid: no divergence, the peak rate
  interior.centerX = -0.1;
  interior.width = 0.1;
  const Named views[] = {{"mandel_seahorse", seahorseValleyView()}, {"mandel_full", wholeSetView()}};

  const std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);
  MandelbrotRenderer renderer;
  nlohmann::json records = nlohmann::json::array();
  auto keep = [&](Measurement m, const char* op) {
    m.operation = op;
    for (auto& row : toJsonRows(m)) records.push_back(row);
  };
  // [view][precision]: plain and optimized medians, for the summary
  double plainMs[2][2] = {}, optimizedMs[2][2] = {};
  for (int v = 0; v < 2; ++v)
    for (int t = 0; t < 2; ++t) {
      const Named& named = views[v];
      MandelbrotView view = named.view;
      view.precision = t == 0 ? Precision::F32 : Precision::F64;
      const std::string dtype(toString(view.precision));
      if (gpuRun)
        for (const BenchImpl& impl : benchImpls()) {
          Measurement m = measureMandelbrot(view, impl.options, {gpu.get(), &renderer, false, {}}, policy);
          m.method = impl.name;
          const double ms = m.gpu->compute.medianMs;
          if (impl.options.variant == MandelbrotVariant::Plain) plainMs[v][t] = ms;
          if (std::string(impl.name) == "optimized") optimizedMs[v][t] = ms;
          printBenchRow(named.op, dtype, std::string("gpu-") + impl.name, m.gpu->compute, m.work,
                        impl.options.variant == MandelbrotVariant::Plain ? 0 : plainMs[v][t]);
          keep(std::move(m), named.op);
        }
      MandelbrotOptions cpuOptions;
      cpuOptions.cpuThreads = a.threads;
      MeasurePolicy cpuPolicy = policy;
      cpuPolicy.cpuReps = std::min(policy.gpuReps, 3);
      const Measurement m = measureMandelbrot(view, cpuOptions, {nullptr, nullptr, true, {}}, cpuPolicy);
      printBenchRow(named.op, dtype, "cpu", m.cpu->time, m.work, 0);
      keep(m, named.op);
    }
  if (gpuRun)
    for (Precision precision : {Precision::F32, Precision::F64}) {
      MandelbrotView view = interior;
      view.precision = precision;
      MandelbrotOptions options;
      options.variant = MandelbrotVariant::Plain;
      const Measurement m = measureMandelbrot(view, options, {gpu.get(), &renderer, false, {}}, policy);
      printBenchRow("mandel_interior_peak", std::string(toString(precision)), "gpu-plain", m.gpu->compute, m.work, 0);
      keep(m, "mandel_interior_peak");
    }
  std::printf(
      "G iter/s: the plain loop's iterations (escape counts summed over the image, interior pixels counting\n"
      "every iteration) per second, for every impl; mandel_interior_peak (every pixel inside the cardioid,\n"
      "plain kernel) is the machine's ceiling for the plain loop. Each optimized-no-* row switches off one\n"
      "shortcut of the optimized kernel.\n");
  if (gpuRun) {
    std::printf("optimized vs plain: whole set %.2fx (f32), %.2fx (f64); seahorse valley %.2fx (f32), %.2fx (f64)\n",
                plainMs[1][0] / optimizedMs[1][0], plainMs[1][1] / optimizedMs[1][1], plainMs[0][0] / optimizedMs[0][0],
                plainMs[0][1] / optimizedMs[0][1]);
    std::printf("seahorse valley, optimized: %.4f ms f32 (target <= 0.14), %.4f ms f64 (target <= 0.19)\n",
                optimizedMs[0][0], optimizedMs[0][1]);
  }
  if (!a.json.empty()) {
    nlohmann::json report = jsonReport(
        gpuRun ? std::optional<DeviceInfo>(queryDevices().devices.front()) : std::optional<DeviceInfo>(), std::nullopt);
    report["records"] = records;
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
}

}  // namespace

void registerMandelbrot(CLI::App& app) {
  auto* cmd = app.add_subcommand("mandelbrot", "Render the Mandelbrot or a Julia set (GPU or CPU) to PNG / .npy");
  auto a = std::make_shared<MandelbrotArgs>();
  cmd->add_option("--center", a->center, "Centre X,Y in the complex plane")->capture_default_str();
  cmd->add_option("--width", a->width, "Width of the view in the complex plane")->capture_default_str();
  cmd->add_option("--size", a->size, "Image size WxH in pixels")->capture_default_str();
  cmd->add_option("--iters", a->iterations, "Maximum iterations (1..16777216) or 'auto' (from the zoom depth)")
      ->capture_default_str();
  cmd->add_option("--precision", a->precision, "auto|f32|f64")->capture_default_str();
  cmd->add_option("--palette", a->palette,
                  "classic|fire|ice|grayscale|rainbow, or a gradient pos:#rrggbb,... (e.g. 0:#000000,0.5:#ff8000)")
      ->capture_default_str();
  cmd->add_option("--offset", a->offset, "Palette offset in cycles")->capture_default_str();
  cmd->add_option("--density", a->density, "Palette cycles per 32 iterations")->capture_default_str();
  cmd->add_option("--julia", a->julia, "Render the Julia set of the constant X,Y");
  cmd->add_option("--supersample", a->supersample, "1..4: samples per pixel side")->capture_default_str();
  cmd->add_option("--raw", a->raw, "Also write the float32 smooth iteration counts (.npy; interior -1)");
  cmd->add_option("--out", a->out, "Output PNG (the view is stored in its text fields)");
  cmd->add_option("--device", a->device, "gpu|cpu (default: the GPU when there is one)")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  cmd->add_option("--variant", a->variant, "optimized|plain (the GPU and the CPU run the same one)")
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "Timed repetitions (default 10 GPU, 1 CPU; --bench 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", a->threads, "CPU threads (default: all)")->check(CLI::Range(1, 4096));
  cmd->add_flag("--bench", a->bench,
                "Benchmark the seahorse valley and the whole set (1920x1080, 1000 iterations) in f32 and f64");
  cmd->add_option("--json", a->json, "--bench: also write the records as JSON");
  cmd->callback([a] {
    if (a->bench)
      bench(*a);
    else
      render(*a);
  });
}

}  // namespace gpulab::cli
