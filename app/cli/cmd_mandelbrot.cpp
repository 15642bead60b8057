// gpulab-cli mandelbrot: render a Mandelbrot or Julia view to a PNG (view stored in its text fields) and
// optionally the raw smooth iteration counts to .npy, on the GPU or all CPU cores, with timings.
// gpulab-cli mandelbrot --bench: the two benchmark views in f32 and f64: the plain kernel, the
// optimized one and what each of its shortcuts contributes, the CPU baseline, and the speedups.
// --gpus all|0,1|N: the still split over several GPUs (rows in bands, a shared queue; the deep reference
// computed once); --bench-gpus: a 16K still and the deep still at 1e-300 on one GPU and on the set.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli_parse.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "gpulab/mandelbrot/multi_gpu.hpp"
#include "gpulab/mandelbrot/newton_zoom.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/json.hpp"

namespace gpulab::cli {

namespace {

struct MandelbrotArgs {
  std::string center = "-0.5,0";
  std::string width = "3";
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
  std::string deep = "all";  // --bench: the deep rows
  std::string newton;        // zoom towards the nearest minibrot: half | onto | a fraction
  bool noBla = false;
  std::string json;
  std::string gpus;        // --gpus: the still split over these GPUs
  bool benchGpus = false;  // --bench-gpus
};

/// The devices of --gpus (parseGpuList's sentence, exit 2, for one that does not exist); `fallback`
/// when the option is absent.
std::vector<int> gpuSet(const MandelbrotArgs& a, const std::string& fallback) {
  if (a.device == "cpu") throw UsageError("--gpus spreads the work over GPUs: leave out --device cpu");
  const std::string text = a.gpus.empty() ? fallback : a.gpus;
  return asUsage([&] { return parseGpuList(text, static_cast<int>(queryDevices().devices.size())); });
}

/// asUsage, and a view deeper than the renderer covers is a usage error too (exit code 2).
template <class F>
auto asViewUsage(F&& f) -> decltype(f()) {
  try {
    return asUsage(f);
  } catch (const PrecisionLimitError& e) {
    throw UsageError(e.what());
  }
}

MandelbrotView buildView(const MandelbrotArgs& a) {
  return asViewUsage([&] {
    MandelbrotView v;
    const auto c = parseCenter(a.center, "--center");
    v.centerX = c[0];
    v.centerY = c[1];
    v.width = DeepWidth::parse(a.width);
    std::tie(v.imageWidth, v.imageHeight) = parseSize(a.size);
    v.precision = parseEnumOrThrow<Precision>(a.precision);
    v.supersample = a.supersample;
    if (!a.julia.empty()) {
      const auto j = parsePoint(a.julia, "--julia");
      v.julia = true;
      v.juliaX = j[0];
      v.juliaY = j[1];
    }
    const std::optional<int> iterations = parseIterations(a.iterations);
    v.maxIterations = iterations ? *iterations : autoIterations(v.width);
    choosePrecision(v);  // validates the view and the zoom depth
    return v;
  });
}

/// The centre with at most `digits` significant digits shown ("..." when cut).
std::string shortDecimal(const DecimalNumber& value, std::size_t digits = 40) {
  const std::string text = value.toString();
  return text.size() <= digits + 3 ? text : text.substr(0, digits + 2) + "...";
}

std::string describeView(const MandelbrotView& v) {
  std::string out = std::string(v.julia ? "julia" : "mandelbrot") + ", centre (" + shortDecimal(v.centerX) + ", " +
                    shortDecimal(v.centerY) + "), width " + v.width.toString() + ", " + std::to_string(v.imageWidth) +
                    "x" + std::to_string(v.imageHeight);
  if (v.supersample > 1) out += " (supersampled " + std::to_string(v.supersample) + "x)";
  out += ", " + std::to_string(v.maxIterations) + " iterations";
  if (v.julia) {
    char text[96];
    std::snprintf(text, sizeof text, ", c = (%.17g, %.17g)", v.juliaX, v.juliaY);
    out += text;
  }
  return out;
}

/// "reference: 17,167 points at 448 bits (escaped), 10.1 ms; BLA 14 levels, 4.9 ms; upload 0.6 ms".
void printDeepFrame(const DeepFrame& d) {
  std::printf("reference: %d points at %d bits%s, %s; BLA %d levels, %.1f ms; upload %.1f ms\n", d.referenceLength,
              d.precisionBits, d.referenceEscaped ? " (escaped)" : "",
              d.referenceReused ? "reused" : (std::to_string(static_cast<int>(d.referenceMs + 0.5)) + " ms").c_str(),
              d.blaLevels, d.blaMs, d.uploadMs);
}

/// --newton half|onto|F: the view moved onto the nearest minibrot's nucleus, its width F of the way (in
/// log scale) from the view's towards the minibrot's size (half: 0.5; onto: 1, the minibrot framed).
MandelbrotView newtonZoom(const MandelbrotView& view, const std::string& how) {
  const double fraction = parseNewtonFraction(how);
  if (view.julia) throw UsageError("--newton zooms the Mandelbrot set: leave out --julia");
  Nucleus n;
  try {
    n = findNucleusNear(deepViewOf(view));
  } catch (const NewtonError& e) {
    throw std::runtime_error(std::string("Newton zoom: ") + e.what());  // exit 1, one sentence
  }
  MandelbrotView zoomed = view;
  zoomed.centerX = n.x;
  zoomed.centerY = n.y;
  zoomed.width = zoomTowards(view.width, n.size, fraction);
  std::printf("newton: period %d minibrot of size %s at (%s, %s), found in %d steps (%.0f ms); width %s -> %s\n",
              n.period, DeepWidth::fromExtended(n.size).toString().c_str(), shortDecimal(n.x).c_str(),
              shortDecimal(n.y).c_str(), n.newtonSteps, n.milliseconds, view.width.toString().c_str(),
              zoomed.width.toString().c_str());
  return zoomed;
}

void render(const MandelbrotArgs& a) {
  MandelbrotView view = buildView(a);
  if (!a.newton.empty()) {
    view = newtonZoom(view, a.newton);
    if (a.iterations == "auto") view.maxIterations = autoIterations(view.width);
  }
  MandelbrotOptions options;
  options.bla = !a.noBla;
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
  const std::vector<int> split = a.gpus.empty() ? std::vector<int>{} : gpuSet(a, "");
  const bool gpuRun = !split.empty() || useGpu(a.device);
  std::printf("%s\n", describeView(view).c_str());
  std::printf("precision: %s\n", precision.describe().c_str());

  Image raw, rgba;
  if (!split.empty()) {
    DeepReference reference;
    StillSplitOptions splitOptions;
    splitOptions.colouring = colouring;
    splitOptions.wantRaw = !a.raw.empty();
    splitOptions.reference = &reference;
    const Stopwatch total;
    SplitStill still = renderStillOnGpus(split, view, options, splitOptions);
    const double totalMs = total.elapsedMs();
    if (still.reference)
      std::printf(
          "reference: %d points at %d bits%s, %.0f ms with its BLA table, on the host once, copied to each GPU\n",
          reference.orbit().length(), reference.orbit().precisionBits(),
          reference.orbit().escaped() ? " (escaped)" : "", still.referenceMs);
    std::printf("gpus: %s\n", deviceLabels(split).c_str());
    std::printf(
        "split still (%s, compute + colour + copy back): %s bands %.1f ms, whole call %.1f ms\n",
        precision.used == Precision::Perturbation ? "perturbation" : std::string(toString(options.variant)).c_str(),
        std::to_string(still.report.bandCount).c_str(), still.report.wallMs, totalMs);
    std::printf("rows per GPU: %s\n", still.report.sharesText().c_str());
    if (still.report.anyFailed()) std::printf("%s\n", still.report.failureSentence().c_str());
    rgba = std::move(still.rgba);
    raw = std::move(still.raw);
  } else if (gpuRun) {
    GpuContext gpu;
    MandelbrotRenderer renderer;
    const MeasurePolicy policy = MeasurePolicy::command(a.reps);
    const MandelbrotFrame& frame = renderer.compute(gpu, view, options);  // deep: the reference, once
    if (frame.deep) printDeepFrame(*frame.deep);
    const Stats compute = measureStream(
        gpu.stream(), [&] { renderer.relaunch(gpu); }, policy);
    const Stats colour = measureStream(
        gpu.stream(), [&] { renderer.colour(gpu, colouring); }, policy);
    std::printf(
        "gpu compute (%s): %s\n",
        precision.used == Precision::Perturbation ? "perturbation" : std::string(toString(options.variant)).c_str(),
        compute.describe().c_str());
    std::printf("gpu colouring (palette %s): %s\n", colouring.palette.name().c_str(), colour.describe().c_str());
    rgba = renderer.downloadRgba(gpu);
    if (!a.raw.empty()) raw = renderer.downloadRaw(gpu);
  } else {
    const MeasurePolicy policy = MeasurePolicy::command(a.reps > 0 ? a.reps : 1);
    MandelbrotCpuRenderer renderer;
    raw = renderer.compute(view, options);  // the first frame: deep views compute their reference here
    if (precision.used == Precision::Perturbation)
      std::printf("cpu reference orbit %.1f ms, BLA table %.1f ms (not in the compute time)\n",
                  renderer.lastReferenceUpdate().referenceMs, renderer.lastReferenceUpdate().blaMs);
    const Stats compute = measureHost([&] { raw = renderer.compute(view, options); }, policy);
    const int threads = options.cpuThreads > 0 ? options.cpuThreads
                                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::printf("cpu compute (%d threads): %s\n", threads, compute.describe().c_str());
    const Stats colour =
        measureHost([&] { rgba = colourRaw(raw, colouring, view.supersample); }, MeasurePolicy::once());
    std::printf("cpu colouring (palette %s, one thread): %.4g ms\n", colouring.palette.name().c_str(), colour.medianMs);
  }
  const Image png = opaqueToRgb(rgba);
  savePngWithText(png, a.out, pngTextFromView(view, colouring, precision));
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

/// The deep rows: for each deep benchmark view, the reference orbit and BLA table times, the GPU
/// frame with BLA and without, steps per pixel both ways, and the CPU frame of the 1e-100 view.
template <class Keep>
void benchDeep(const MandelbrotArgs& a, GpuContext* gpu, MandelbrotRenderer& renderer, const MeasurePolicy& policy,
               Keep&& keep) {
  std::vector<std::string> names;
  if (a.deep == "all") {
    names = {"deep-1e-100", "deep-1e-300", "deep-1e-1000"};
  } else {
    std::stringstream list(a.deep);
    for (std::string name; std::getline(list, name, ',');)
      if (!name.empty()) names.push_back(name);
  }
  std::printf("\n%-14s %10s %8s %10s %10s %10s %12s %12s %10s %10s\n", "deep view", "reference", "BLA", "frame ms",
              "min ms", "no-BLA ms", "steps/px", "no-BLA st/px", "counts", "CPU ms");
  for (const std::string& name : names) {
    const std::vector<DeepBenchmarkView> views = deepBenchmarkViews(1920, 1080, name);
    if (views.empty())
      throw UsageError("--deep: '" + name + "' is unknown: use deep-1e-100, deep-1e-300 or deep-1e-1000");
    const DeepBenchmarkView& v = views.front();
    MandelbrotOptions with, without;
    without.bla = false;
    MeasurePolicy slow = policy;  // without BLA a frame takes up to a second: fewer runs
    slow.gpuReps = 3;
    slow.gpuWarmup = 1;
    const bool cpu = name == "deep-1e-100";  // the side-by-side baseline; the others take minutes
    Measurement m = measureMandelbrot(v.view, with, {gpu, gpu ? &renderer : nullptr, cpu, {}}, policy);
    m.operation = name;
    std::optional<Measurement> plain;
    if (gpu != nullptr) {
      plain = measureMandelbrot(v.view, without, {gpu, &renderer, false, {}}, slow);
      plain->operation = name;
    }
    auto param = [](const Measurement& r, const char* key) {
      const auto it = r.params.find(key);
      return it == r.params.end() ? std::string("-") : it->second;
    };
    std::printf("%-14s %10s %8s %10s %10s %10s %12s %12s %10.0f %10s\n", name.c_str(),
                (param(m, "reference_ms") + " ms").c_str(), param(m, "bla_ms").c_str(),
                m.gpu ? formatMs(m.gpu->compute.medianMs).c_str() : "-",
                m.gpu ? formatMs(m.gpu->compute.minMs).c_str() : "-",
                plain ? formatMs(plain->gpu->compute.medianMs).c_str() : "-", param(m, "steps_per_pixel").c_str(),
                plain ? param(*plain, "steps_per_pixel").c_str() : "-", m.work / (1920.0 * 1080.0),
                m.cpu ? formatMs(m.cpu->time.medianMs).c_str() : "-");
    std::printf("  %s (%d iterations%s)\n", v.how.c_str(), v.view.maxIterations,
                v.newtonMs > 0 ? (", Newton " + std::to_string(static_cast<int>(v.newtonMs)) + " ms").c_str() : "");
    keep(std::move(m), name.c_str());
    if (plain) keep(std::move(*plain), name.c_str());
  }
  std::printf(
      "deep rows: 1920x1080; reference = the MPFR orbit (not in the frame time), BLA = the table build; frame = the\n"
      "perturbation kernel alone (CUDA events, median); counts = mean escape count per pixel; CPU = the same\n"
      "perturbation on every core.\n");
}

void bench(const MandelbrotArgs& a) {
  const bool gpuRun = useGpu(a.device);
  const MeasurePolicy policy = MeasurePolicy::benchmark(a.reps > 0 ? a.reps : 20);
  if (gpuRun)
    std::printf("device: %s\n", queryDevices().devices.at(selectedDevice()).name.c_str());
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
  interior.centerX = DecimalNumber::fromDouble(-0.1);
  interior.width = DeepWidth::fromDouble(0.1);
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
  if (a.deep != "none") benchDeep(a, gpu.get(), renderer, policy, keep);
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
        gpuRun ? std::optional<DeviceInfo>(queryDevices().devices.at(selectedDevice())) : std::optional<DeviceInfo>(),
        std::nullopt);
    report["records"] = records;
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// --bench-gpus

/// Median of `values`.
double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// The two rows, each on the first GPU of the set alone and on the whole set: the still is
/// computed, coloured and copied back band by band (the PNG's work, without encoding it). One warm-up
/// run (the deep reference is computed there, once, and kept), then `reps` timed runs; "bands" is the
/// split's wall time once every GPU is set up, "call" the whole renderStillOnGpus (buffers, the
/// reference's upload to each GPU, the host image).
void benchGpus(const MandelbrotArgs& a) {
  const std::vector<int> devices = gpuSet(a, "all");
  const int reps = a.reps > 0 ? a.reps : 3;
  std::printf("devices: %s\n", deviceLabels(devices).c_str());
  struct Row {
    std::string name;
    MandelbrotView view;
    std::string how;
  };
  std::vector<Row> rows;
  MandelbrotView still = seahorseValleyView();
  still.imageWidth = 15360;
  still.imageHeight = 8640;
  still.maxIterations = 10000;
  rows.push_back({"still-16k", still, "seahorse valley, width 0.005"});
  for (DeepBenchmarkView& v : deepBenchmarkViews(3840, 2160, "deep-1e-300"))
    rows.push_back({"deep-1e-300", v.view, v.how});
  std::vector<std::vector<int>> sets = {{devices.front()}};
  if (devices.size() > 1) sets.push_back(devices);

  nlohmann::json records = nlohmann::json::array();
  std::printf("%-12s %-10s %8s %-5s %10s %10s %10s %8s  %s\n", "view", "size", "iters", "gpus", "bands ms", "min ms",
              "call ms", "speedup", "rows per GPU (bands)");
  for (const Row& row : rows) {
    MandelbrotOptions options;
    options.bla = !a.noBla;
    const PrecisionChoice precision = choosePrecision(row.view);
    DeepReference reference;
    StillSplitOptions split;
    split.colouring = Colouring{};
    split.wantRaw = false;
    split.reference = &reference;
    double oneGpuMs = 0;
    for (const std::vector<int>& set : sets) {
      const SplitStill warm = renderStillOnGpus(set, row.view, options, split);
      if (warm.reference && warm.reference->orbitComputed)
        std::printf("  %s: reference %d points at %d bits, %.0f ms with its BLA table, once, on the host\n",
                    row.name.c_str(), reference.orbit().length(), reference.orbit().precisionBits(), warm.referenceMs);
      std::vector<double> bandsMs, callMs;
      SplitReport last;
      for (int r = 0; r < reps; ++r) {
        const Stopwatch watch;
        SplitStill s = renderStillOnGpus(set, row.view, options, split);
        callMs.push_back(watch.elapsedMs());
        bandsMs.push_back(s.report.wallMs);
        last = std::move(s.report);
      }
      const double ms = medianOf(bandsMs);
      if (set.size() == 1) oneGpuMs = ms;
      const double speedup = oneGpuMs / ms;
      char size[32];
      std::snprintf(size, sizeof size, "%dx%d", row.view.imageWidth, row.view.imageHeight);
      std::printf("%-12s %-10s %8d %-5zu %10.1f %10.1f %10.1f %7.2fx  %s\n", row.name.c_str(), size,
                  row.view.maxIterations, set.size(), ms, *std::min_element(bandsMs.begin(), bandsMs.end()),
                  medianOf(callMs), speedup, last.sharesText().c_str());
      if (last.anyFailed()) std::printf("  %s\n", last.failureSentence().c_str());
      nlohmann::json shares = nlohmann::json::array();
      for (const SplitWorker& w : last.workers)
        shares.push_back({{"device", w.device},
                          {"label", deviceLabel(w.device)},
                          {"bands", w.bands},
                          {"rows", w.rows},
                          {"busy_ms", w.busyMs},
                          {"setup_ms", w.setupMs},
                          {"failed", w.failed}});
      records.push_back({{"operation", "mandelbrot_split_still"},
                         {"view", row.name},
                         {"how", row.how},
                         {"width", row.view.imageWidth},
                         {"height", row.view.imageHeight},
                         {"iterations", row.view.maxIterations},
                         {"precision", precision.describe()},
                         {"gpus", set.size()},
                         {"devices", deviceLabels(set)},
                         {"bands", last.bandCount},
                         {"reps", reps},
                         {"bands_median_ms", ms},
                         {"bands_min_ms", *std::min_element(bandsMs.begin(), bandsMs.end())},
                         {"call_median_ms", medianOf(callMs)},
                         {"speedup_vs_one_gpu", speedup},
                         {"shares", shares}});
    }
    std::printf("  %s: %s, %s\n", row.name.c_str(), row.how.c_str(), precision.describe().c_str());
  }
  std::printf(
      "bands ms: the split's wall time (median of %d after a warm-up) from every GPU set up to the last band\n"
      "computed, coloured and copied back into the host image; call ms: the whole call (buffers, the deep\n"
      "reference's upload to each GPU, the host image); speedup: one GPU's bands ms over the set's. The\n"
      "deep reference orbit and BLA table are computed once on the host (in the warm-up) and not timed.\n",
      reps);
  if (!a.json.empty()) {
    nlohmann::json report =
        jsonReport(queryDevices().devices.at(static_cast<std::size_t>(devices.front())), std::nullopt);
    report["devices"] = deviceLabels(devices);
    report["records"] = records;
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
}

}  // namespace

void registerMandelbrot(CLI::App& app) {
  auto* cmd = app.add_subcommand("mandelbrot", "Render the Mandelbrot or a Julia set (GPU or CPU) to PNG / .npy");
  auto a = std::make_shared<MandelbrotArgs>();
  cmd->add_option("--center", a->center, "Centre X,Y in the complex plane, with as many digits as the depth needs")
      ->capture_default_str();
  cmd->add_option("--width", a->width,
                  "Width of the view in the complex plane: 3, 0.005, 1e-500, ... down to 1e-100000")
      ->capture_default_str();
  cmd->add_option("--size", a->size, "Image size WxH in pixels")->capture_default_str();
  cmd->add_option("--iters", a->iterations, "Maximum iterations (1..16777216) or 'auto' (from the zoom depth)")
      ->capture_default_str();
  cmd->add_option("--precision", a->precision,
                  "auto|f32|f64|perturbation (auto: escape time while f64 reaches, perturbation beyond)")
      ->capture_default_str();
  cmd->add_option("--newton", a->newton,
                  "Zoom towards the nearest minibrot first: half (half-way, in log scale), onto (frame it) or a "
                  "fraction in (0, 1]");
  cmd->add_flag("--no-bla", a->noBla, "Perturbation without the bilinear approximation (every step iterated)");
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
  cmd->add_option("--deep", a->deep,
                  "--bench: the deep rows: all (default), none, or a comma list of deep-1e-100, deep-1e-300, "
                  "deep-1e-1000");
  cmd->add_option("--json", a->json, "--bench, --bench-gpus: also write the records as JSON");
  cmd->add_option("--gpus", a->gpus,
                  "Split the still over several GPUs: all, a list (0,1) or a count (2); rows go in bands to whichever "
                  "GPU is free, a deep view's reference is computed once (default: one GPU, the selected one)");
  cmd->add_flag("--bench-gpus", a->benchGpus,
                "Benchmark a 16K still (15360x8640, 10,000 iterations) and the deep still at 1e-300 (3840x2160, "
                "100,000 iterations) on one GPU and on --gpus (default all), with the speedup and rows per GPU");
  cmd->callback([a] {
    if (a->benchGpus)
      benchGpus(*a);
    else if (a->bench)
      bench(*a);
    else
      render(*a);
  });
}

}  // namespace gpulab::cli
