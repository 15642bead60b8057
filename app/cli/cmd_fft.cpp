// gpulab-cli fft: frequency-domain filtering of an image (and its spectrum for display) on the GPU
// (cuFFT) or the CPU (OpenCV), with plan creation reported apart from the timings. An image that
// needs more GPU memory than gpulab may use (--gpu-memory-limit, or the free memory) is filtered out
// of core (tiling/fft_out_of_core.hpp: row, column and row passes in chunks), once, with a `tiled:` line.
// gpulab-cli fft --bench: the FFT low-pass and FFT convolution on an NxN f32 image, stage by stage,
// against the bytes they must move and the device copy bandwidth measured in the same run.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/nonfinite.hpp"
#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/measure/ceiling.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/json.hpp"
#include "gpulab/tiling/fft_out_of_core.hpp"
#include "gpulab/tiling/tiled_runner.hpp"

namespace gpulab::cli {

namespace {

struct FftArgs {
  std::string filter = "lowpass";
  std::string shape = "gaussian";
  double cutoff = NAN;
  double cutoff2 = NAN;
  int order = 2;
  std::string padding = "none";
  std::string spectrum;
  std::string colormap = "viridis";
  std::string in;
  std::string out;
  std::string device;
  std::string json;
  int reps = 0;  // 0: 10 on the GPU, 3 on the CPU
  bool bench = false;
  int size = 4096;
};

FftFilterSpec buildSpec(const FftArgs& a) {
  FftFilterSpec spec;
  const auto band = parseEnum<FreqBand>(a.filter);
  if (!band) throw UsageError("--filter '" + a.filter + "' is unknown: use " + enumNames<FreqBand>());
  const auto shape = parseEnum<FreqShape>(a.shape);
  if (!shape) throw UsageError("--shape '" + a.shape + "' is unknown: use " + enumNames<FreqShape>());
  const auto padding = parseEnum<FftPadding>(a.padding);
  if (!padding) throw UsageError("--padding '" + a.padding + "' is unknown: use " + enumNames<FftPadding>());
  if (std::isnan(a.cutoff)) throw UsageError("--cutoff C is required: the cutoff as a fraction of Nyquist");
  if ((*band == FreqBand::Bandpass || *band == FreqBand::Bandstop) && std::isnan(a.cutoff2))
    throw UsageError("--filter " + a.filter + " needs --cutoff2 C2 greater than --cutoff " + std::to_string(a.cutoff));
  spec.band = *band;
  spec.shape = *shape;
  spec.padding = *padding;
  spec.cutoff = a.cutoff;
  spec.cutoff2 = a.cutoff2;
  spec.order = a.order;
  if (spec.shape != FreqShape::Butterworth && a.order < 1)  // checked for every shape: a typo is still a typo
    throw UsageError("--order " + std::to_string(a.order) + " is not allowed: use 1 to " +
                     std::to_string(kMaxButterworthOrder));
  asUsage([&] {
    validateFftFilterSpec(spec);
    return 0;
  });
  return spec;
}

/// Writes the log-magnitude spectrum: .npy as the raw f32 values, anything else colour-mapped RGBA.
void writeSpectrum(const Image& logMagnitude, const std::string& path, ColorMap map) {
  const bool npy = lowerExtension(path) == ".npy";
  saveImage(npy ? logMagnitude : applyColorMap(logMagnitude, map), path);
  std::printf("wrote spectrum %s (log(1+|F|), centred%s)\n", path.c_str(),
              npy ? "" : (", " + std::string(toString(map))).c_str());
}

/// The FFT filter out of core (rows, columns, rows; tiling/fft_out_of_core.hpp) when the image needs
/// more GPU memory than the engine may use; false when it fits.
bool runOutOfCoreIfNeeded(const FftArgs& a, GpuContext& gpu, const FftFilter& filter, const Image& img) {
  const std::size_t budget = gpuMemoryBudget(gpu), needed = gpuBytesEstimate(filter, shapeOf(img));
  if (needed <= budget) return false;
  if (!a.spectrum.empty())
    throw std::runtime_error("the " + img.describe() + " image needs about " + formatByteSize(needed) +
                             " of GPU memory, more than the " + formatByteSize(budget) +
                             " allowed: the FFT filter runs out of core, but --spectrum does not; leave it out, "
                             "raise --gpu-memory-limit or use --device cpu");
  FftPassPlan plan;
  try {
    plan = planFftOutOfCore(filter, shapeOf(img), budget);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("the " + img.describe() + " image needs about " + formatByteSize(needed) +
                             " of GPU memory for the FFT filter, more than the " + formatByteSize(budget) + " that " +
                             (gpuMemoryLimit() == 0 ? "the free GPU memory" : "--gpu-memory-limit") +
                             " allows, and out of core " + e.what() + "; raise --gpu-memory-limit or use --device cpu");
  }
  const FftOutOfCoreRun run = runFftOutOfCore(gpu, filter, img, plan);
  std::printf("%s (one run; %s budget, whole image about %s; plan creation %.1f ms apart)\n", run.summary().c_str(),
              formatByteSize(budget).c_str(), formatByteSize(needed).c_str(), run.prepareMs);
  saveImage(run.output, a.out);
  std::printf("wrote %s (%s)\n", a.out.c_str(), run.output.describe().c_str());
  if (!a.json.empty()) {
    nlohmann::json report = jsonReport(std::nullopt, std::nullopt);
    report["tiled"] = {{"operation", "fft-filter " + filter.describe()},
                       {"method", "out of core: row R2C, column C2C + mask + C2C, row C2R"},
                       {"passes", 3},
                       {"fft_width", plan.fftWidth},
                       {"fft_height", plan.fftHeight},
                       {"row_chunk", plan.rowChunk},
                       {"row_chunks_forward", plan.forwardRowChunks()},
                       {"column_chunk", plan.columnChunk},
                       {"column_chunks", plan.columnChunks()},
                       {"row_chunks_inverse", plan.inverseRowChunks()},
                       {"host_spectrum_bytes", plan.hostBytes},
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

void filterImage(const FftArgs& a) {
  const FftFilterSpec spec = buildSpec(a);
  if (a.in.empty()) throw UsageError("--in IN is required (or --bench)");
  if (a.out.empty()) throw UsageError("--out OUT is required (or --bench)");
  const auto colorMap = parseEnum<ColorMap>(a.colormap);
  if (!colorMap) throw UsageError("--colormap '" + a.colormap + "' is unknown: use " + enumNames<ColorMap>());
  if (a.reps < 0) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const bool gpuRun = useGpu(a.device);

  const Image img = loadImage(a.in);
  if (img.type() != PixelType::U8 && lowerExtension(a.out) != ".npy")
    throw UsageError("--out '" + a.out + "' cannot hold the " + img.describe() + " result: use a .npy file");
  FftFilter filter(spec);
  std::printf("fft %s on %s\n", filter.describe().c_str(), img.describe().c_str());

  const std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);
  if (gpuRun && runOutOfCoreIfNeeded(a, *gpu, filter, img)) return;
  MeasureSetup setup;
  setup.wantGpu = gpuRun;
  setup.wantCpu = !gpuRun;
  setup.gpu = gpu.get();
  setup.withCeiling = !a.json.empty();
  const MeasurePolicy policy = MeasurePolicy::command(a.reps);
  const MeasureResult measured = measure(filter, img, setup, policy);
  const Measurement& m = measured.record;
  const Image& result = gpuRun ? measured.gpuOutput : measured.cpuOutput;
  if (m.gpu) {
    std::printf("GPU %s: plan creation %.3f ms (%zu cuFFT plans, first run only)\n", m.gpu->deviceName.c_str(),
                m.gpu->prepareMs, filter.plans().size());
    std::printf("GPU upload %.4g ms, compute %s, download %.4g ms (medians of %d)\n", m.gpu->upload->medianMs,
                m.gpu->compute.describe().c_str(), m.gpu->download->medianMs, m.gpu->compute.reps);
  }
  if (m.cpu) std::printf("CPU (OpenCV cv::dft, %d threads): %s\n", m.cpu->threads, m.cpu->time.describe().c_str());
  Image spectrum;
  if (!a.spectrum.empty()) {
    FftSpectrum display;
    setup.download = true;
    const MeasureResult shown = measure(display, img, setup, policy);
    spectrum = gpuRun ? shown.gpuOutput : shown.cpuOutput;
    if (shown.record.gpu)
      std::printf("GPU spectrum: plan creation %.3f ms, compute %s\n", shown.record.gpu->prepareMs,
                  shown.record.gpu->compute.describe().c_str());
    if (shown.record.cpu) std::printf("CPU spectrum: %s\n", shown.record.cpu->time.describe().c_str());
  }
  saveImage(result, a.out);
  // NaN or inf in the input or the result is said, never silent (the image is still written).
  const std::string nonFinite = describeNonFinite(countNonFinite(img), countNonFinite(result));
  std::printf("wrote %s (%s)%s\n", a.out.c_str(), result.describe().c_str(),
              nonFinite.empty() ? "" : ("; non-finite: " + nonFinite).c_str());
  if (!a.spectrum.empty()) writeSpectrum(spectrum, a.spectrum, *colorMap);
  if (!a.json.empty()) {
    nlohmann::json report = jsonReport(std::nullopt, std::nullopt);
    for (auto& row : toJsonRows(m)) report["records"].push_back(row);
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// --bench

Image randomImage(int size, unsigned seed) {
  Image img(size, size, 1, PixelType::F32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.f, 1.f);
  for (float& v : img.samples<float>()) v = d(rng);
  return img;
}

double gbPerS(std::size_t bytes, double ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0; }

/// "forward 0.071, multiply 0.034, inverse 0.070 ms" with the stages that ran.
std::string stageLine(const std::vector<std::pair<const char*, Stats>>& stages) {
  std::string text;
  double sum = 0;
  for (const auto& [name, s] : stages) {
    if (s.reps == 0) continue;
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.4f", text.empty() ? "" : ", ", name, s.medianMs);
    text += part;
    sum += s.medianMs;
  }
  char total[48];
  std::snprintf(total, sizeof total, " ms (sum %.4f ms)", sum);
  return text + total;
}

void printTraffic(std::size_t bytes, double medianMs, double copyGBs) {
  const double floorMs = static_cast<double>(bytes) / (copyGBs * 1e6);
  std::printf(
      "  traffic: at least %.1f MB moved -> %.4f ms at the copy bandwidth; achieved %.0f GB/s, %.0f%% of the "
      "copy bandwidth (%.2fx the floor)\n",
      static_cast<double>(bytes) / 1e6, floorMs, gbPerS(bytes, medianMs), 100.0 * gbPerS(bytes, medianMs) / copyGBs,
      medianMs / floorMs);
}

void bench(const FftArgs& a) {
  if (a.size < 16 || a.size > 16384)
    throw UsageError("--size " + std::to_string(a.size) + " is not allowed: use 16 to 16384");
  if (a.reps < 0) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const int n = a.size, reps = a.reps > 0 ? a.reps : 20;
  const bool gpuRun = cudaAvailable();
  const std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);
  const MeasurePolicy policy = MeasurePolicy::benchmark(reps);
  const Image img = randomImage(n, 1);
  const std::size_t imageBytes = img.sizeBytes();
  double copyGBs = 0;
  if (gpuRun) {
    const DeviceInfo device = queryDevices().devices.at(static_cast<std::size_t>(gpu->device()));
    const CopyCeiling ceiling = deviceCopyCeiling();
    copyGBs = ceiling.gbps;
    std::printf("device: %s (%d SMs); image %dx%d f32; medians of %d after %d warm-up runs\n", device.name.c_str(),
                device.multiprocessors, n, n, reps, policy.gpuWarmup);
    std::printf("DRAM copy ceiling: %.0f GB/s (read + write; %s); one read + one write of the image: %.4f ms\n",
                copyGBs, ceiling.how().c_str(), static_cast<double>(2 * imageBytes) / (copyGBs * 1e6));
  } else {
    std::printf("no GPU (%s): the CPU rows run; the GPU rows (compute, stages, traffic) are skipped; image %dx%d f32\n",
                queryDevices().status.c_str(), n, n);
  }
  // The image goes to the GPU once: the bench reports compute, not transfers.
  DeviceImage resident;
  if (gpuRun) gpu->upload(img, resident);
  MeasureSetup setup;
  setup.wantGpu = gpuRun;
  setup.gpu = gpu.get();
  setup.resident = gpuRun ? &resident : nullptr;
  setup.download = false;

  // FFT low-pass.
  FftFilterSpec spec;
  spec.band = FreqBand::Lowpass;
  spec.shape = FreqShape::Gaussian;
  spec.cutoff = 0.25;
  FftFilter lowpass(spec);
  const Measurement low = measure(lowpass, img, setup, policy).record;
  const bool fused = lowpass.takesFusedPath(shapeOf(img));
  std::printf("\nFFT low-pass (%s), %s:\n", lowpass.describe().c_str(),
              fused ? "fused passes: rows forward, each column's FFT + gain + inverse FFT, rows inverse"
                    : "cuFFT forward R2C + mask multiply + inverse C2R");
  if (low.gpu) {
    if (fused)
      std::printf("  no cuFFT plans (one twiddle table, computed on first use)\n");
    else
      std::printf("  plan creation %.3f ms (%zu plans, once per shape)\n", low.gpu->prepareMs, lowpass.plans().size());
    std::printf("  GPU compute %s   [issue 14 target on an H200: <= 0.2 ms]\n", low.gpu->compute.describe().c_str());
    DeviceImage out;
    const FftStageTimes stages = lowpass.profileGpu(*gpu, resident, out, {policy.gpuWarmup, reps});
    std::printf("  stages: %s\n", stageLine({{"pad", stages.pad},
                                             {fused ? "rows forward" : "forward", stages.forward},
                                             {fused ? "columns" : "multiply", stages.multiply},
                                             {fused ? "rows inverse" : "inverse", stages.inverse},
                                             {"crop", stages.crop}})
                                      .c_str());
    printTraffic(lowpass.pipelineBytesMoved(shapeOf(img)), low.gpu->compute.medianMs, copyGBs);
    std::printf("  (the filter as a whole must read and write the image once: %.4f ms at the copy bandwidth)\n",
                static_cast<double>(2 * imageBytes) / (copyGBs * 1e6));
  }
  if (low.gpu && fused) {  // the same filter on cuFFT, for comparison
    FftFilter cufft(spec);
    cufft.setCufftOnly(true);
    MeasureSetup gpuOnly = setup;
    gpuOnly.wantCpu = false;
    const Measurement viaCufft = measure(cufft, img, gpuOnly, policy).record;
    if (viaCufft.gpu)
      std::printf("  the same on cuFFT (R2C + mask + C2R): %s\n", viaCufft.gpu->compute.describe().c_str());
  }
  if (low.cpu) {
    std::printf("  CPU (OpenCV cv::dft, %d threads): %s", low.cpu->threads, low.cpu->time.describe().c_str());
    if (low.speedup()) std::printf(" -> GPU speedup %.0fx", *low.speedup());
    std::printf("\n");
  }

  // FFT convolution: on the CPU only when there is no GPU (the GPU rows are the point of --bench).
  std::printf("\nFFT convolution (random kernel, same, reflect101):\n");
  setup.wantCpu = !gpuRun;
  for (int k : {15, 31, 63, 127}) {
    FilterSpec conv;
    conv.op = FilterOp::Conv;
    conv.method = ConvMethod::Fft;
    conv.kernel.width = conv.kernel.height = k;
    std::mt19937 rng(static_cast<unsigned>(k));
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (int i = 0; i < k * k; ++i) conv.kernel.values.push_back(d(rng));
    ConvMethodFilter convolver(conv);
    const Measurement m = measure(convolver, img, setup, policy).record;
    if (m.cpu)
      std::printf("  %3dx%-3d CPU (OpenCV cv::dft, %d threads): %s\n", k, k, m.cpu->threads,
                  m.cpu->time.describe().c_str());
    if (!m.gpu) continue;
    DeviceImage out;
    const FftStageTimes t = convolver.fft().profileGpu(*gpu, resident, out, {policy.gpuWarmup, reps});
    const FftConvGeometry g = convolver.fft().geometry(n, n);
    std::printf("  %3dx%-3d %s %dx%d: GPU compute %s; plan creation %.3f ms\n", k, k,
                g.circular ? "circular" : "padded", g.paddedWidth, g.paddedHeight, m.gpu->compute.describe().c_str(),
                m.gpu->prepareMs);
    std::printf(
        "    stages: %s\n",
        g.circular
            ? stageLine(
                  {{"forward", t.forward}, {"multiply", t.multiply}, {"inverse", t.inverse}, {"border bands", t.crop}})
                  .c_str()
            : stageLine({{"pad", t.pad},
                         {"forward", t.forward},
                         {"multiply", t.multiply},
                         {"inverse", t.inverse},
                         {"crop", t.crop}})
                  .c_str());
    std::printf("  ");
    printTraffic(convolver.fft().pipelineBytesMoved(shapeOf(img)), m.gpu->compute.medianMs, copyGBs);
  }
}

}  // namespace

void registerFft(CLI::App& app) {
  auto args = std::make_shared<FftArgs>();
  auto* cmd =
      app.add_subcommand("fft", "Frequency-domain filter (low/high/band-pass, band-stop) and spectrum; --bench");
  cmd->add_option("--filter", args->filter, "lowpass|highpass|bandpass|bandstop (default lowpass)");
  cmd->add_option("--shape", args->shape, "ideal|gaussian|butterworth (default gaussian)");
  cmd->add_option("--cutoff", args->cutoff, "Cutoff as a fraction of Nyquist (1.0 = Nyquist along an axis)");
  cmd->add_option("--cutoff2", args->cutoff2, "Upper cutoff of band filters, > --cutoff");
  cmd->add_option("--order", args->order, "Butterworth order n >= 1 (default 2)");
  cmd->add_option("--padding", args->padding, "none (periodic) or mirror (2W x 2H reflected; no edge ringing)");
  cmd->add_option("--spectrum", args->spectrum, "Also write log(1+|F|) of the input, centred: .npy raw, .png coloured");
  cmd->add_option("--colormap", args->colormap,
                  "Colour map of a .png spectrum: gray|viridis|inferno (default viridis)");
  cmd->add_option("--in", args->in, "Input image (png, jpg, ..., or .npy)");
  cmd->add_option("--out", args->out, "Output image (float inputs need .npy)");
  cmd->add_option("--device", args->device, "gpu or cpu (default: the GPU when there is one)");
  cmd->add_option("--json", args->json, "Also write the measurement (or the out-of-core run) as JSON to FILE");
  cmd->add_option("--reps", args->reps, "Timed repetitions (default 10 on the GPU, 3 on the CPU; 20 for --bench)");
  cmd->add_flag("--bench", args->bench, "Benchmark the FFT low-pass and FFT convolution on an NxN f32 image");
  cmd->add_option("--size", args->size, "Image side N for --bench (default 4096)");
  cmd->callback([args] {
    if (args->bench)
      bench(*args);
    else
      filterImage(*args);
  });
}

}  // namespace gpulab::cli
