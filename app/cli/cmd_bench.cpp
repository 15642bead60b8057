// gpulab-cli bench: the filters on an NxN f32 image (default 4096), CPU baseline (OpenCV on all
// cores) against GPU compute, with upload and download apart, the speedup, and the GPU's achieved
// bandwidth as a share of a device-to-device copy measured in the same run. Every GPU result is
// checked once against the CPU baseline, so a fast wrong kernel cannot hide.
//
// Convolution rows name their method: convK (direct), convK-fft, convK-auto (the cost model picks
// per device; the table says what it took on the GPU and on the CPU). fft-lowpass is the FFT
// low-pass as `fft --bench` times it (forward R2C, fused Gaussian mask multiply, inverse C2R).
// One-time work (cost model calibration, cuFFT plans, kernel spectra) is done before timing and
// reported apart (prepare_ms in the JSON). The CPU column runs the row's own method (convK: OpenCV
// filter2D; -fft: cv::dft; -auto: the CPU model's choice); a CPU run longer than kCpuBudgetMs / 5
// gets fewer reps (down to 1) so the default run stays short; the JSON says how many.
//
// mandel-seahorse and mandel-full are the Mandelbrot views of `mandelbrot --bench` (1920x1080,
// 1000 iterations, f32 and f64): GPU is the optimized kernel, with the plain (textbook) kernel's
// time beside it; CPU is the same optimized algorithm on all cores.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "gpulab/box_blur.hpp"
#include "gpulab/conv_method.hpp"
#include "gpulab/cuda_error.hpp"
#include "gpulab/device.hpp"
#include "gpulab/device_image.hpp"
#include "gpulab/fft_filter.hpp"
#include "gpulab/filter.hpp"
#include "gpulab/mandelbrot.hpp"
#include "gpulab/timing.hpp"

namespace gpulab::cli {

namespace {

constexpr const char* kAllOps =
    "box3,box15,box31,sobel,conv3,conv5,conv15,conv15-auto,conv31,conv31-fft,conv31-auto,conv63,conv63-fft,"
    "conv63-auto,fft-lowpass,mandel-seahorse,mandel-full";
constexpr const char* kOpForms =
    "boxK (odd K), sobel, convK, convK-fft, convK-auto, fft-lowpass, mandel-seahorse or mandel-full";
/// The CPU's timed reps of one op fit in about this much time (at least one rep).
constexpr double kCpuBudgetMs = 2000;

struct BenchArgs {
  int size = 4096;
  int reps = 20;
  std::string ops = kAllOps;
  std::string json;
  bool noCpu = false;
  std::string boxPath = "auto";
};

struct BenchOp {
  std::string name;
  bool lowpass = false;                      ///< the FFT low-pass, not a Filter
  std::optional<MandelbrotView> mandelbrot;  ///< a Mandelbrot view, not a Filter (no input image)
  FilterSpec spec;
  nlohmann::json params;
  double weightSum = 1;  ///< sum of |weights|: how far a result can reach per unit of input
};

/// What the bench times for one op: a Filter, or the FFT low-pass (an FftFilter).
class BenchTarget {
 public:
  virtual ~BenchTarget() = default;
  virtual double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) = 0;
  virtual void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) = 0;
  virtual double prepareCpu(const ImageShape& in) = 0;
  virtual Image runCpu(const Image& in) = 0;
  /// The image read once and the result written once.
  virtual std::size_t minimumBytesMoved(const ImageShape& in) const = 0;
  /// The method the row asks for ("direct", "fft", "auto") and what the last run took on each side.
  virtual std::string method() const = 0;
  virtual std::string chosen(bool gpu) const = 0;
};

class FilterTarget final : public BenchTarget {
 public:
  explicit FilterTarget(std::unique_ptr<Filter> filter) : filter_(std::move(filter)) {}
  Filter& filter() noexcept { return *filter_; }
  double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override {
    return filter_->prepareGpu(gpu, in, out);
  }
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override { filter_->runGpu(gpu, in, out); }
  double prepareCpu(const ImageShape& in) override { return filter_->prepareCpu(in); }
  Image runCpu(const Image& in) override { return filter_->runCpu(in); }
  std::size_t minimumBytesMoved(const ImageShape& in) const override { return filter_->minimumBytesMoved(in); }
  std::string method() const override {
    const auto* byMethod = dynamic_cast<const ConvMethodFilter*>(filter_.get());
    return byMethod ? std::string(toString(byMethod->method())) : "direct";
  }
  std::string chosen(bool gpu) const override {
    const auto* byMethod = dynamic_cast<const ConvMethodFilter*>(filter_.get());
    if (byMethod == nullptr) return "direct";
    const std::optional<ConvAlgorithm> c = gpu ? byMethod->lastGpuChoice() : byMethod->lastCpuChoice();
    return c ? std::string(toString(*c)) : "";
  }

 private:
  std::unique_ptr<Filter> filter_;
};

class LowpassTarget final : public BenchTarget {
 public:
  explicit LowpassTarget(const FftFilterSpec& spec) : filter_(spec) {}
  double prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override {
    const Stopwatch watch;
    filter_.prepare(gpu, in, out);
    return watch.elapsedMs();
  }
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override { filter_.runGpu(gpu, in, out); }
  double prepareCpu(const ImageShape&) override { return 0.0; }
  Image runCpu(const Image& in) override { return filter_.runCpu(in); }
  std::size_t minimumBytesMoved(const ImageShape& in) const override {
    return 2 * static_cast<std::size_t>(in.width) * in.height * in.channels * bytesPerSample(in.type);
  }
  std::string method() const override { return "fft"; }
  std::string chosen(bool) const override { return "fft"; }

 private:
  FftFilter filter_;
};

FftFilterSpec lowpassSpec() {
  FftFilterSpec spec;  // as `fft --bench`
  spec.band = FreqBand::Lowpass;
  spec.shape = FreqShape::Gaussian;
  spec.cutoff = 0.25;
  spec.padding = FftPadding::None;
  return spec;
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream s(list);
  std::string item;
  while (std::getline(s, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

BenchOp parseOp(const std::string& name) {
  BenchOp op;
  op.name = name;
  // The digits of name[begin, end): 1 to 4 of them, else -1.
  auto sideIn = [&](std::size_t begin, std::size_t end) {
    const std::string digits = name.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 4) return -1;
    return std::stoi(digits);
  };
  if (name == "fft-lowpass") {
    op.lowpass = true;
    const FftFilterSpec spec = lowpassSpec();
    op.params = {{"filter", toString(spec.band)},
                 {"shape", toString(spec.shape)},
                 {"cutoff", spec.cutoff},
                 {"padding", toString(spec.padding)}};
    return op;  // a Gaussian low-pass: a positive kernel summing to 1, weightSum 1
  }
  if (name == "mandel-seahorse" || name == "mandel-full") {
    op.mandelbrot = name == "mandel-seahorse" ? seahorseValleyView() : wholeSetView();
    return op;
  }
  if (name == "sobel") {
    op.spec.op = FilterOp::Sobel;
    op.params = {{"component", "mag"}, {"border", "reflect101"}};
    op.weightSum = 8;
    return op;
  }
  if (name.rfind("box", 0) == 0) {
    const int window = sideIn(3, std::string::npos);
    if (window >= 1 && window % 2 == 1) {
      op.spec.op = FilterOp::Box;
      op.spec.radius = window / 2;
      op.params = {{"window", window}, {"radius", window / 2}, {"border", "reflect101"}};
      return op;
    }
  }
  if (name.rfind("conv", 0) == 0) {
    const std::size_t dash = name.find('-');
    // "convK" is the direct method; "convK-fft" and "convK-auto" the others ("convK-direct" is not a name).
    std::optional<ConvMethod> method = ConvMethod::Direct;
    if (dash != std::string::npos) {
      method = parseConvMethod(name.substr(dash + 1));
      if (method == ConvMethod::Direct) method.reset();
    }
    const int k = method ? sideIn(4, dash) : -1;
    if (k > kMaxFftKernelSide)
      throw UsageError("--ops: '" + name + "' asks for a kernel larger than the largest, " +
                       std::to_string(kMaxFftKernelSide) + "x" + std::to_string(kMaxFftKernelSide));
    if (k >= 1) {
      op.spec.op = FilterOp::Conv;
      op.spec.method = *method;
      op.spec.kernel.width = op.spec.kernel.height = k;
      std::mt19937 rng(static_cast<unsigned>(1000 + k));
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      op.weightSum = 0;
      for (int i = 0; i < k * k; ++i) {
        op.spec.kernel.values.push_back(d(rng));
        op.weightSum += std::abs(op.spec.kernel.values.back());
      }
      op.params = {{"kernel", std::to_string(k) + "x" + std::to_string(k)},
                   {"coefficients", "uniform random in [-1, 1), seeded"},
                   {"mode", "same"},
                   {"border", "reflect101"},
                   {"method", toString(*method)}};
      return op;
    }
  }
  throw UsageError("--ops: '" + name + "' is unknown: use " + kOpForms + ", e.g. " + kAllOps);
}

Image randomImage(int size) {
  Image img(size, size, 1, PixelType::F32);
  std::mt19937 rng(20261122);
  std::uniform_real_distribution<float> d(0.f, 1.f);
  for (float& v : img.samples<float>()) v = d(rng);
  return img;
}

double maxAbsDiff(const Image& a, const Image& b) {
  double m = 0;
  const auto x = a.samples<float>(), y = b.samples<float>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = std::abs(double(x[i]) - double(y[i]));
    if (!(d <= m)) m = d;  // NaN wins
  }
  return m;
}

double gbps(std::size_t bytes, double ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0; }

// Device-to-device copy of a 1 GiB buffer (less on small GPUs): bytes read + written per second.
double copyBandwidth(GpuContext& gpu, int reps) {
  std::size_t bytes = std::size_t{1} << 30;
  const MemoryUsage memory = deviceMemory(gpu.device());
  while (bytes > (std::size_t{16} << 20) && 2 * bytes > memory.free / 2) bytes /= 2;
  DeviceBuffer src(bytes), dst(bytes);
  GPULAB_CUDA_CHECK(cudaMemsetAsync(src.data(), 0, bytes, gpu.stream()));
  const Stats s = timeStream(
      gpu.stream(),
      [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, gpu.stream()));
      },
      {2, std::max(reps, 10)});
  std::printf("device-to-device copy of %zu MiB: %.3f ms -> %.0f GB/s (read + write, median of %d)\n", bytes >> 20,
              s.medianMs, gbps(2 * bytes, s.medianMs), s.reps);
  return gbps(2 * bytes, s.medianMs);
}

kernels::BoxBlurPath parseBoxPath(const std::string& name) {
  for (auto p : {kernels::BoxBlurPath::Auto, kernels::BoxBlurPath::TiledRing, kernels::BoxBlurPath::TiledStream,
                 kernels::BoxBlurPath::SummedArea})
    if (name == kernels::toString(p)) return p;
  throw UsageError("--box-path '" + name + "' is unknown: use auto, ring, stream or sat");
}

std::string formatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 1 ? "%.4f" : (ms < 100 ? "%.2f" : "%.0f"), ms);
  return text;
}

/// One Mandelbrot view in f32 and f64: a table row each (GPU = the optimized kernel) and JSON
/// records for the optimized and plain kernels and the CPU.
void benchMandelbrot(const BenchOp& op, GpuContext* gpu, MandelbrotRenderer& renderer, const BenchArgs& a,
                     nlohmann::json& report) {
  for (Precision precision : {Precision::F32, Precision::F64}) {
    MandelbrotView view = *op.mandelbrot;
    view.precision = precision;
    const std::string dtype(toString(precision));
    char params[200];
    std::snprintf(params, sizeof params, "center=%.15g,%.15g width=%g iters=%d", view.centerX, view.centerY, view.width,
                  view.maxIterations);
    auto record = [&](const char* impl, const Stats& s, double iterations) {
      return nlohmann::json{{"op", op.name},
                            {"params", params},
                            {"width", view.imageWidth},
                            {"height", view.imageHeight},
                            {"channels", 1},
                            {"dtype", dtype},
                            {"impl", impl},
                            {"median_ms", s.medianMs},
                            {"min_ms", s.minMs},
                            {"max_ms", s.maxMs},
                            {"reps", s.reps},
                            {"giter_per_s", s.medianMs > 0 ? iterations / s.medianMs * 1e-6 : 0.0}};
    };
    Stats cpu;
    if (!a.noCpu) {
      Image counts;
      MandelbrotOptions counting;
      counting.smooth = false;
      cpu = timeHost([&] { counts = renderRawCpu(view, counting); }, {1, 3});
      nlohmann::json r = record("cpu", cpu, countIterations(counts, view.maxIterations));
      r["threads"] = cpuThreads();
      report["records"].push_back(r);
    }
    const std::string name = op.name + " " + dtype;
    if (gpu == nullptr) {
      std::printf("%-20s %12s %12s %21s %9s %9s %9s %8s %7s %12s  %s\n", name.c_str(), formatMs(cpu.medianMs).c_str(),
                  "-", "", "-", "-", "-", "-", "-", "-", "optimized (1920x1080, 1000 iterations)");
      continue;
    }
    MandelbrotOptions plainOptions;
    plainOptions.variant = MandelbrotVariant::Plain;
    const MandelbrotBenchResult optimized = benchmarkMandelbrot(*gpu, renderer, view, {}, {3, a.reps});
    const MandelbrotBenchResult plain = benchmarkMandelbrot(*gpu, renderer, view, plainOptions, {3, a.reps});
    report["records"].push_back(record("gpu-optimized", optimized.compute, optimized.iterations));
    report["records"].push_back(record("gpu-plain", plain.compute, plain.iterations));
    char range[48], speedup[32] = "-", method[96];
    std::snprintf(range, sizeof range, "(%s .. %s)", formatMs(optimized.compute.minMs).c_str(),
                  formatMs(optimized.compute.maxMs).c_str());
    if (!a.noCpu) std::snprintf(speedup, sizeof speedup, "%.0fx", cpu.medianMs / optimized.compute.medianMs);
    std::snprintf(method, sizeof method, "optimized; plain kernel %s ms (%.2fx)",
                  formatMs(plain.compute.medianMs).c_str(), plain.compute.medianMs / optimized.compute.medianMs);
    std::printf("%-20s %12s %12s %21s %9s %9s %9s %8s %7s %12s  %s\n", name.c_str(),
                a.noCpu ? "-" : formatMs(cpu.medianMs).c_str(), formatMs(optimized.compute.medianMs).c_str(), range,
                "-", "-", speedup, "-", "-", "-", method);
  }
}

void run(const BenchArgs& a) {
  if (a.size < 16 || a.size > 16384)
    throw UsageError("--size " + std::to_string(a.size) + " is not allowed: use 16 to 16384");
  if (a.reps < 1) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const kernels::BoxBlurPath boxPath = parseBoxPath(a.boxPath);
  std::vector<BenchOp> ops;
  for (const std::string& name : splitList(a.ops)) ops.push_back(parseOp(name));
  if (ops.empty()) throw UsageError("--ops is empty: name at least one of " + std::string(kAllOps));
  std::ofstream jsonFile;
  if (!a.json.empty()) {
    jsonFile.open(a.json);
    if (!jsonFile) throw std::runtime_error("cannot write --json '" + a.json + "'");
  }

  const int n = a.size;
  const Image img = randomImage(n);
  const ImageShape shape = shapeOf(img);
  const bool gpuRun = cudaAvailable();
  const int cpuReps = std::max(1, std::min(a.reps, 5));
  if (!gpuRun && a.noCpu) throw UsageError("--no-cpu leaves nothing to run on a machine without a GPU");

  nlohmann::json report = {{"image", {{"width", n}, {"height", n}, {"channels", 1}, {"dtype", "f32"}}},
                           {"cpu_threads", cpuThreads()},
                           {"records", nlohmann::json::array()}};
  std::unique_ptr<GpuContext> gpu;
  DeviceImage in, out;
  double copyGBs = 0;
  if (gpuRun) {
    gpu = std::make_unique<GpuContext>();
    const DeviceInfo device = queryDevices().devices.at(static_cast<std::size_t>(gpu->device()));
    report["device"] = {{"name", device.name},
                        {"compute_capability", device.computeCapability()},
                        {"multiprocessors", device.multiprocessors},
                        {"total_memory_bytes", device.totalMemory}};
    std::printf(
        "device: %s (%d SMs, compute %s); image %dx%d f32; GPU: median of %d after 2 warm-up runs; CPU "
        "(OpenCV, %d threads): median of up to %d after 1 (fewer for runs over %.1f s)\n",
        device.name.c_str(), device.multiprocessors, device.computeCapability().c_str(), n, n, a.reps, cpuThreads(),
        cpuReps, kCpuBudgetMs / cpuReps / 1000);
    copyGBs = copyBandwidth(*gpu, a.reps);
    report["copy_bandwidth_gbps"] = copyGBs;
    gpu->upload(img, in);
  } else {
    report["device"] = nullptr;
    report["copy_bandwidth_gbps"] = nullptr;
    std::printf(
        "no GPU (%s): CPU baselines only; image %dx%d f32; CPU (OpenCV, %d threads): median of up to %d after 1 "
        "(fewer for runs over %.1f s)\n",
        queryDevices().status.c_str(), n, n, cpuThreads(), cpuReps, kCpuBudgetMs / cpuReps / 1000);
  }

  std::printf("\n%-20s %12s %12s %21s %9s %9s %9s %8s %7s %12s  %s\n", "op", "CPU ms", "GPU ms", "(min .. max)",
              "upload", "download", "speedup", "GB/s", "% copy", "max|gpu-cpu|", "method");
  std::vector<std::string> mismatches;
  MandelbrotRenderer mandelbrotRenderer;
  for (BenchOp& op : ops) {
    if (op.mandelbrot) {
      benchMandelbrot(op, gpu.get(), mandelbrotRenderer, a, report);
      continue;
    }
    std::unique_ptr<BenchTarget> target;
    if (op.lowpass) {
      target = std::make_unique<LowpassTarget>(lowpassSpec());
    } else {
      std::unique_ptr<Filter> filter;
      try {
        filter = makeFilter(op.spec);
      } catch (const std::invalid_argument& e) {
        std::printf("%-20s skipped: %s\n", op.name.c_str(), e.what());
        continue;
      }
      if (auto* box = dynamic_cast<BoxBlur*>(filter.get())) {
        box->setGpuPath(boxPath);
        if (gpuRun)
          op.params["gpu_path"] =
              kernels::toString(kernels::boxBlurResolvePath<float>(boxPath, op.spec.radius, gpu->device()));
      }
      target = std::make_unique<FilterTarget>(std::move(filter));
    }
    const std::size_t bytes = target->minimumBytesMoved(shape);
    auto record = [&](const char* impl, const Stats& s, double prepareMs) {
      return nlohmann::json{{"op", op.name},
                            {"params", op.params},
                            {"width", n},
                            {"height", n},
                            {"channels", 1},
                            {"dtype", "f32"},
                            {"impl", impl},
                            {"method", target->method()},
                            {"chosen", target->chosen(std::string_view(impl) == "gpu")},
                            {"prepare_ms", prepareMs},
                            {"median_ms", s.medianMs},
                            {"min_ms", s.minMs},
                            {"max_ms", s.maxMs},
                            {"reps", s.reps},
                            {"upload_ms", nullptr},
                            {"download_ms", nullptr},
                            {"gbps", gbps(bytes, s.medianMs)},
                            {"pct_of_copy", nullptr}};
    };

    Image cpuResult;
    Stats cpu;
    if (!a.noCpu) {
      const double prepareMs = target->prepareCpu(shape);  // the CPU cost model, once: never timed
      // One warm-up run, timed only to size the measurement: a slow op gets fewer reps.
      const Stopwatch warmup;
      cpuResult = target->runCpu(img);
      const double warmupMs = warmup.elapsedMs();
      const int reps = std::clamp(static_cast<int>(kCpuBudgetMs / std::max(warmupMs, 1e-3)), 1, cpuReps);
      cpu = timeHost([&] { cpuResult = target->runCpu(img); }, {0, reps});
      nlohmann::json r = record("cpu", cpu, prepareMs);
      r["threads"] = cpuThreads();
      report["records"].push_back(r);
    }
    const std::string cpuChosen = a.noCpu ? "" : target->chosen(false);
    if (!gpuRun) {
      const std::string method = target->method() == "auto" ? "auto -> " + cpuChosen : target->method();
      std::printf("%-20s %12s %12s %21s %9s %9s %9s %8s %7s %12s  %s\n", op.name.c_str(),
                  formatMs(cpu.medianMs).c_str(), "-", "", "-", "-", "-", "-", "-", "-", method.c_str());
      continue;
    }

    std::vector<double> uploads, downloads;
    for (int i = 0; i < a.reps; ++i) {
      gpu->upload(img, in);
      uploads.push_back(gpu->lastUpload().totalMs());
    }
    const double prepareMs = target->prepareGpu(*gpu, in, out);  // calibration, plans: never timed
    const Stats compute = timeStream(gpu->stream(), [&] { target->runGpu(*gpu, in, out); }, {2, a.reps});
    Image gpuResult;
    for (int i = 0; i < a.reps; ++i) {
      gpu->download(out, gpuResult);
      downloads.push_back(gpu->lastDownload().totalMs());
    }
    const double upload = Stats::of(uploads).medianMs, download = Stats::of(downloads).medianMs;
    const double achieved = gbps(bytes, compute.medianMs);
    nlohmann::json r = record("gpu", compute, prepareMs);
    r["upload_ms"] = upload;
    r["download_ms"] = download;
    r["pct_of_copy"] = 100.0 * achieved / copyGBs;

    std::string check = "not checked";
    if (!a.noCpu) {
      const double diff = maxAbsDiff(cpuResult, gpuResult);
      const double tolerance = 1e-4 * op.weightSum;  // inputs in [0, 1)
      char text[48];
      std::snprintf(text, sizeof text, "%.2g%s", diff, diff <= tolerance ? "" : " FAIL");
      check = text;
      r["max_abs_diff_vs_cpu"] = diff;
      if (!(diff <= tolerance))
        mismatches.push_back(op.name + " differs from the CPU baseline by " + text + " (tolerance " +
                             std::to_string(tolerance) + ")");
    }
    report["records"].push_back(r);
    std::string method = target->method();
    if (method == "auto") {
      const std::string gpuChosen = target->chosen(true);
      method += " -> " + gpuChosen;
      if (!cpuChosen.empty() && cpuChosen != gpuChosen) method += " (cpu: " + cpuChosen + ")";
    }
    char range[48];
    std::snprintf(range, sizeof range, "(%s .. %s)", formatMs(compute.minMs).c_str(), formatMs(compute.maxMs).c_str());
    char speedup[32] = "-";
    if (!a.noCpu) std::snprintf(speedup, sizeof speedup, "%.0fx", cpu.medianMs / compute.medianMs);
    std::printf("%-20s %12s %12s %21s %9s %9s %9s %8.0f %6.0f%% %12s  %s\n", op.name.c_str(),
                a.noCpu ? "-" : formatMs(cpu.medianMs).c_str(), formatMs(compute.medianMs).c_str(), range,
                formatMs(upload).c_str(), formatMs(download).c_str(), speedup, achieved, 100.0 * achieved / copyGBs,
                check.c_str(), method.c_str());
  }
  std::printf(
      "\nGB/s: the bytes an op must move at least (each input sample read once, each output written once) "
      "over its GPU compute time; %% copy: that against the device-to-device copy above. method: convK is direct; "
      "auto says what its cost model took on the GPU (and on the CPU, when that differs); the CPU runs each "
      "row's method too (direct: OpenCV filter2D; fft: cv::dft). Calibration and FFT plans are made before "
      "timing (prepare_ms in the JSON)\n");
  if (jsonFile.is_open()) {
    jsonFile << report.dump(2) << "\n";
    if (!jsonFile) throw std::runtime_error("cannot write --json '" + a.json + "'");
    std::printf("wrote %s\n", a.json.c_str());
  }
  if (!mismatches.empty()) throw std::runtime_error(mismatches.front());
}

}  // namespace

void registerBench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Benchmark the filters on an NxN f32 image: CPU baseline vs GPU");
  cmd->add_option("--size", a->size, "Image side N (default 4096)");
  cmd->add_option("--reps", a->reps,
                  "Timed GPU repetitions (default 20; the CPU runs at most 5, fewer when one run is slow)");
  cmd->add_option("--ops", a->ops, std::string("Comma-separated ops (default ") + kAllOps + ")");
  cmd->add_option("--json", a->json, "Also write the results as JSON to FILE");
  cmd->add_flag("--no-cpu", a->noCpu, "Skip the CPU baselines (and the check against them)");
  cmd->add_option("--box-path", a->boxPath, "GPU box blur path: auto (default) | ring | stream | sat");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
