// gpulab-cli bench: image operations on an NxN f32 image (default 4096), the CPU baseline (OpenCV on
// all cores) against GPU compute, with upload and download apart, the speedup, and the GPU's achieved
// bandwidth as a share of the DRAM copy ceiling measured in the same run. Every row is one
// Measurement of the harness (measure/harness.hpp); every GPU result is checked against the CPU
// baseline, so a fast wrong kernel cannot hide.
//
// Rows: boxK (odd K), sobel, convK (direct), convK-fft, convK-auto (the cost model picks per device;
// the table says what it took on the GPU and on the CPU), convK-sep (a KxK Gaussian, rank 1, by the
// separable method; convK-sep-direct, -fft and -auto the same kernel by those methods), gaussianK (a
// K-tap Gaussian blur; gaussianK-two-pass through its two-pass GPU kernels), fft-lowpass (the FFT low-pass
// as `fft --bench` times it; fft-lowpass-cufft the same on cuFFT where the fused passes would run), any registered
// operation by its name with default parameters, and mandel-seahorse / mandel-full (1920x1080, 1000 iterations, f32 and
// f64; GPU is the optimized kernel with the plain kernel's time beside it; CPU the same optimized algorithm on all
// cores), medianK (medianK-forgetful / -radix / -histogram: that GPU selection), erodeK / dilateK / openK / closeK (a
// KxK rectangle; -ellipse for the ellipse). --rgb8 WxH runs the image operations on a WxH RGB 8-bit image instead (a
// photo's shape; no Mandelbrot rows). Transfer rows, in a table of their own with GB/s against the pinned
// host <-> device copy ceiling measured in the same run: photo-u8 / photo-u16 (a 6000x4000 RGB photo: upload,
// box r=15 / auto-levels, download; with the image pinned, pageable, and pageable in one band, the unpipelined
// path gpulab had before), upload-f32 (a 16384x16384 f32 upload), pinning (what page-locking 72 MB and 1 GB
// costs). One-time work (cost model calibration, cuFFT plans, kernel spectra) is done
// before timing and reported apart (prepare_ms in the JSON). Without a GPU the CPU rows run and the GPU columns say so.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/version.hpp"
#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/filters/gaussian.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "gpulab/measure/ceiling.hpp"
#include "gpulab/measure/harness.hpp"
#include "gpulab/measure/json.hpp"

namespace gpulab::cli {

namespace {

constexpr const char* kAllOps =
    "box3,box15,box31,sobel,conv3,conv5,conv15,conv15-auto,conv31,conv31-fft,conv31-auto,conv63,conv63-fft,"
    "conv63-auto,conv15-sep,conv31-sep,conv31-sep-auto,fft-lowpass,mandel-seahorse,mandel-full,photo-u8,photo-u16,"
    "upload-f32,pinning";
constexpr const char* kOpForms =
    "boxK (odd K), sobel, convK, convK-fft, convK-auto, convK-sep(-direct|-fft|-auto), gaussianK(-two-pass) (odd K), "
    "fft-lowpass(-cufft), mandel-seahorse, mandel-full, medianK(-select) "
    "(odd K), "
    "erodeK / dilateK / openK / closeK (-ellipse), photo-u8, photo-u16, upload-f32, pinning or a registered operation";

struct BenchArgs {
  int size = 4096;
  int reps = 20;
  std::string ops = kAllOps;
  std::string json;
  bool noCpu = false;
  std::string boxPath = "auto";
  std::string rgb8;  ///< "WxH": an RGB u8 image of that size instead of NxN f32
};

struct BenchOp {
  std::string name;
  std::string operation;  ///< registered name; empty for fft-lowpass and the Mandelbrot views
  ParamValues values;
  bool lowpass = false;
  bool lowpassCufft = false;  ///< fft-lowpass-cufft: cuFFT even where the fused passes would run
  std::optional<MandelbrotView> mandelbrot;
  double weightSum = 1;  ///< sum of |weights|: how far a result can reach per unit of input
  bool exact = false;    ///< picks samples (median, morphology) or decides edges (Canny): GPU == CPU
  int gaussianSize = 0;  ///< gaussianK: a K-tap Gaussian (sigma from K); gaussianK-two-pass: its two-pass GPU path
  bool gaussianTwoPass = false;
  bool transfer = false;  ///< photo-u8, photo-u16, upload-f32, pinning: the transfer table
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

/// The digits of name[begin, end): 1 to 4 of them, else -1.
int sideIn(const std::string& name, std::size_t begin, std::size_t end) {
  const std::string digits = name.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 4) return -1;
  return std::stoi(digits);
}

BenchOp parseOp(const std::string& name) {
  BenchOp op;
  op.name = name;
  if (name == "fft-lowpass" || name == "fft-lowpass-cufft") {
    op.lowpass = true;  // a Gaussian low-pass: a positive kernel summing to 1, weightSum 1
    op.lowpassCufft = name == "fft-lowpass-cufft";
    return op;
  }
  if (name == "mandel-seahorse" || name == "mandel-full") {
    op.mandelbrot = name == "mandel-seahorse" ? seahorseValleyView() : wholeSetView();
    return op;
  }
  if (name == "photo-u8" || name == "photo-u16" || name == "upload-f32" || name == "pinning") {
    op.transfer = true;
    return op;
  }
  if (name == "sobel") {
    op.operation = "sobel";
    op.weightSum = 8;
    return op;
  }
  if (name.rfind("box", 0) == 0) {
    const int window = sideIn(name, 3, std::string::npos);
    if (window >= 1 && window % 2 == 1) {
      op.operation = "box";
      op.values["radius"] = std::to_string(window / 2);
      return op;
    }
  }
  if (name.rfind("gaussian", 0) == 0 && name.size() > 8 && std::isdigit(static_cast<unsigned char>(name[8]))) {
    // "gaussianK": a K-tap Gaussian (the default sigma for K), the fused GPU pass up to 63 taps;
    // "gaussianK-two-pass": the same through the two-pass GPU kernels, for comparison.
    const std::size_t dash = name.find('-');
    const int window = sideIn(name, 8, dash);
    if (window >= 1 && window % 2 == 1 && window <= kMaxGaussianSize &&
        (dash == std::string::npos || name.substr(dash) == "-two-pass")) {
      op.gaussianSize = window;
      op.gaussianTwoPass = dash != std::string::npos;
      return op;
    }
  }
  if (name.rfind("median", 0) == 0) {
    // "medianK" or "medianK-SELECT" (forgetful, radix, histogram): the GPU's selection.
    const std::size_t dash = name.find('-');
    const int window = sideIn(name, 6, dash);
    if (window >= 1 && window % 2 == 1) {
      op.operation = "median";
      op.values["size"] = std::to_string(window);
      if (dash != std::string::npos) op.values["select"] = name.substr(dash + 1);
      op.exact = true;
      return op;
    }
  }
  for (const std::string morph : {"erode", "dilate", "open", "close"}) {
    if (name.rfind(morph, 0) != 0) continue;
    const bool ellipse = name.size() > 8 && name.compare(name.size() - 8, 8, "-ellipse") == 0;
    const int side = sideIn(name, morph.size(), ellipse ? name.size() - 8 : std::string::npos);
    if (side >= 1) {
      op.operation = "morph";
      op.values = {{"morph", morph}, {"size", std::to_string(side)}, {"shape", ellipse ? "ellipse" : "rect"}};
      op.exact = true;
      return op;
    }
  }
  if (name == "canny") op.exact = true;
  if (name.rfind("conv", 0) == 0) {
    const std::size_t dash = name.find('-');
    // "convK" is the direct method; "convK-fft" and "convK-auto" the others ("convK-direct" is not a name).
    // "convK-sep" is a KxK Gaussian (rank 1) by the separable method, "convK-sep-METHOD" by another.
    ConvMethod method = ConvMethod::Direct;
    bool named = true;  // a method the names take
    bool gaussian = false;
    if (dash != std::string::npos) {
      std::string suffix = name.substr(dash + 1);
      gaussian = suffix == "sep" || suffix.rfind("sep-", 0) == 0;
      if (gaussian) suffix = suffix == "sep" ? "separable" : suffix.substr(4);
      const std::optional<ConvMethod> parsed = parseEnum<ConvMethod>(suffix);
      named = parsed.has_value() && (gaussian || parsed != ConvMethod::Direct);
      if (parsed) method = *parsed;
    }
    const int k = named ? sideIn(name, 4, dash) : -1;
    if (k > kMaxFftKernelSide)
      throw UsageError("--ops: '" + name + "' asks for a kernel larger than the largest, " +
                       std::to_string(kMaxFftKernelSide) + "x" + std::to_string(kMaxFftKernelSide));
    if (k >= 1 && gaussian) {
      // getGaussianKernel's default sigma for the size; the outer product of two such vectors.
      const double sigma = 0.3 * ((k - 1) * 0.5 - 1) + 0.8;
      std::vector<double> g(static_cast<std::size_t>(k));
      double sum = 0;
      for (int i = 0; i < k; ++i) {
        const double d = i - (k - 1) * 0.5;
        g[static_cast<std::size_t>(i)] = std::exp(-d * d / (2 * sigma * sigma));
        sum += g[static_cast<std::size_t>(i)];
      }
      Kernel2D kernel{k, k, {}};
      for (int y = 0; y < k; ++y)
        for (int x = 0; x < k; ++x)
          kernel.values.push_back(g[static_cast<std::size_t>(y)] * g[static_cast<std::size_t>(x)] / (sum * sum));
      op.weightSum = 1;
      op.operation = "conv";
      op.values = {{"kernel", formatKernelText(kernel)}, {"method", std::string(toString(method))}};
      return op;
    }
    if (k >= 1) {
      Kernel2D kernel{k, k, {}};
      std::mt19937 rng(static_cast<unsigned>(1000 + k));  // uniform random in [-1, 1), seeded
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      op.weightSum = 0;
      for (int i = 0; i < k * k; ++i) {
        kernel.values.push_back(d(rng));
        op.weightSum += std::abs(kernel.values.back());
      }
      op.operation = "conv";
      op.values = {{"kernel", formatKernelText(kernel)}, {"method", std::string(toString(method))}};
      return op;
    }
  }
  for (const OperationInfo& info : imageOperations())
    if (info.name == name) {
      op.operation = name;
      return op;
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

/// A width x height RGB u8 image of seeded uniform noise: a photo's shape and type.
Image randomRgb8(int width, int height) {
  Image img(width, height, 3, PixelType::U8);
  std::mt19937 rng(20261126);
  for (std::uint8_t& v : img.samples<std::uint8_t>()) v = static_cast<std::uint8_t>(rng() >> 24);
  return img;
}

/// "6000x4000" -> {6000, 4000}; UsageError otherwise.
std::pair<int, int> parseSize(const std::string& text) {
  const std::size_t x = text.find('x');
  const int w = x == std::string::npos ? -1 : sideIn(text, 0, x);
  const int h = x == std::string::npos ? -1 : sideIn(text, x + 1, std::string::npos);
  if (w < 16 || h < 16 || static_cast<long long>(w) * h > 16384LL * 16384)
    throw UsageError("--rgb8 '" + text + "' is not a size: give WxH from 16x16, e.g. 6000x4000");
  return {w, h};
}

void printHeader() {
  std::printf("\n%-20s %12s %12s %21s %9s %9s %9s %8s %7s %12s  %s\n", "op", "CPU ms", "GPU ms", "(min .. max)",
              "upload", "download", "speedup", "GB/s", "% copy", "max|gpu-cpu|", "method");
}

/// One table row from a record: "-" where a side or a value is missing.
void printRow(const std::string& name, const Measurement& m, const std::string& check, const std::string& method) {
  auto ms = [](const std::optional<Stats>& s) { return s ? formatMs(s->medianMs) : std::string("-"); };
  const std::string cpuMs = m.cpu ? formatMs(m.cpu->time.medianMs) : "-";
  const std::string gpuMs = m.gpu ? formatMs(m.gpu->compute.medianMs) : "-";
  std::string range, speedup = "-", rate = "-", percent = "-";
  if (m.gpu) range = "(" + formatMs(m.gpu->compute.minMs) + " .. " + formatMs(m.gpu->compute.maxMs) + ")";
  char text[32];
  if (m.speedup()) {
    std::snprintf(text, sizeof text, "%.0fx", *m.speedup());
    speedup = text;
  }
  if (m.gpuRate() && m.workUnit == WorkUnit::Bytes) {
    std::snprintf(text, sizeof text, "%.0f", *m.gpuRate());
    rate = text;
  }
  if (m.percentOfCeiling()) {
    std::snprintf(text, sizeof text, "%.0f%%", *m.percentOfCeiling());
    percent = text;
  }
  std::printf("%-20s %12s %12s %21s %9s %9s %9s %8s %7s %12s  %s\n", name.c_str(), cpuMs.c_str(), gpuMs.c_str(),
              range.c_str(), m.gpu ? ms(m.gpu->upload).c_str() : "-", m.gpu ? ms(m.gpu->download).c_str() : "-",
              speedup.c_str(), rate.c_str(), percent.c_str(), check.c_str(), method.c_str());
}

/// "auto -> fft (cpu: direct)", "direct".
std::string methodColumn(const Measurement& m) {
  if (m.method != "auto") return m.method;
  const std::string gpuChosen = m.gpu ? m.gpu->methodUsed : std::string();
  const std::string cpuChosen = m.cpu ? m.cpu->methodUsed : std::string();
  if (gpuChosen.empty()) return "auto -> " + cpuChosen;
  std::string text = "auto -> " + gpuChosen;
  if (!cpuChosen.empty() && cpuChosen != gpuChosen) text += " (cpu: " + cpuChosen + ")";
  return text;
}

/// One Mandelbrot view in f32 and f64: a table row each (GPU = the optimized kernel, the plain
/// kernel's time beside it) and the records of both kernels.
void benchMandelbrot(const BenchOp& op, GpuContext* gpu, MandelbrotRenderer& renderer, const BenchArgs& a,
                     nlohmann::json& report) {
  for (Precision precision : {Precision::F32, Precision::F64}) {
    MandelbrotView view = *op.mandelbrot;
    view.precision = precision;
    const MeasurePolicy policy = MeasurePolicy::benchmark(a.reps);
    MandelbrotMeasureSetup setup{gpu, gpu != nullptr ? &renderer : nullptr, !a.noCpu, {}};
    Measurement optimized = measureMandelbrot(view, {}, setup, policy);
    optimized.operation = op.name;
    for (auto& row : toJsonRows(optimized)) report["records"].push_back(row);
    std::string method = "optimized (1920x1080, 1000 iterations)";
    if (gpu != nullptr) {
      MandelbrotOptions plainOptions;
      plainOptions.variant = MandelbrotVariant::Plain;
      setup.wantCpu = false;
      Measurement plain = measureMandelbrot(view, plainOptions, setup, policy);
      plain.operation = op.name;
      for (auto& row : toJsonRows(plain)) report["records"].push_back(row);
      char text[96];
      std::snprintf(text, sizeof text, "optimized; plain kernel %s ms (%.2fx)",
                    formatMs(plain.gpu->compute.medianMs).c_str(),
                    plain.gpu->compute.medianMs / optimized.gpu->compute.medianMs);
      method = text;
    }
    printRow(op.name + " " + std::string(toString(precision)), optimized, "-", method);
  }
}

// ---------------------------------------------------------------------------------------------
// Transfers

/// A width x height image of `channels` samples of `type` in `memory`, seeded noise over the type's range.
Image randomPhoto(int width, int height, int channels, PixelType type, HostMemory memory) {
  Image img(width, height, channels, type, memory);
  std::mt19937 rng(20261126);
  visitAnySampleType(type, [&](auto sample) {
    using T = decltype(sample);
    for (T& v : img.samples<T>()) {
      if constexpr (std::is_floating_point_v<T>)
        v = static_cast<T>(rng() >> 8) / static_cast<T>(1 << 24);
      else
        v = static_cast<T>(rng() >> (32 - 8 * sizeof(T)));
    }
  });
  return img;
}

/// How a transfer row holds its host image: pinned, pageable, or pageable in a single band (the path
/// before pipelining: the whole image memcpy'd into staging, then one copy, then one kernel).
struct HostMode {
  const char* label;
  HostMemory memory;
  bool oneBand;
};
constexpr HostMode kHostModes[] = {{"pinned", HostMemory::Pinned, false},
                                   {"pageable", HostMemory::Pageable, false},
                                   {"pageable 1 band", HostMemory::Pageable, true}};

std::string percentText(const std::optional<double>& v) {
  if (!v) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", *v);
  return text;
}

std::string rateText(const std::optional<double>& v) {
  if (!v) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f", *v);
  return text;
}

void printTransferHeader() {
  std::printf("\n%-26s %-16s %9s %7s %6s  %-22s %9s %7s %6s %9s %7s %6s\n", "transfer", "host memory", "upload", "GB/s",
              "% pin", "compute", "ms", "GB/s", "% copy", "download", "GB/s", "% pin");
}

/// One row: `operation` on `img` (GPU only), its upload, compute and download, each with its rate.
void benchTransferRow(const std::string& name, const Image& img, const OperationInfo& info, const ParamValues& values,
                      const HostMode& mode, GpuContext& gpu, const BenchArgs& a, nlohmann::json& report) {
  std::unique_ptr<Operation> operation = info.make(values);
  MeasureSetup setup;
  setup.wantCpu = false;
  setup.gpu = &gpu;
  setup.outputMemory = mode.memory;
  gpu.setTransferBandBytes(mode.oneBand ? std::numeric_limits<std::size_t>::max() : kDefaultTransferBandBytes);
  MeasureResult result = measure(*operation, img, setup, MeasurePolicy::benchmark(a.reps));
  gpu.setTransferBandBytes(kDefaultTransferBandBytes);
  Measurement& m = result.record;
  m.operation = name;
  m.description += std::string(" (") + mode.label + ")";
  for (auto& row : toJsonRows(m)) report["records"].push_back(row);
  const std::string up = m.gpu->upload ? formatMs(m.gpu->upload->medianMs) : "-";
  const std::string down = m.gpu->download ? formatMs(m.gpu->download->medianMs) : "-";
  std::printf("%-26s %-16s %9s %7s %6s  %-22s %9s %7s %6s %9s %7s %6s\n", (name + " " + img.describe()).c_str(),
              (std::string(mode.label) + (img.pinned() == (mode.memory == HostMemory::Pinned) ? "" : "?")).c_str(),
              up.c_str(), rateText(m.uploadRate()).c_str(), percentText(m.uploadPercentOfCeiling()).c_str(),
              operation->describe().substr(0, 22).c_str(), formatMs(m.gpu->compute.medianMs).c_str(),
              rateText(m.gpuRate()).c_str(), percentText(m.percentOfCeiling()).c_str(), down.c_str(),
              rateText(m.downloadRate()).c_str(), percentText(m.downloadPercentOfCeiling()).c_str());
}

/// A 16384x16384 f32 upload (1 GiB), pinned and pageable: an upload-only record (compute reps 0).
void benchLargeUpload(const HostCopyCeiling& ceiling, GpuContext& gpu, const BenchArgs& a, nlohmann::json& report) {
  for (const HostMode& mode : kHostModes) {
    if (mode.oneBand) continue;
    const Image img = randomPhoto(16384, 16384, 1, PixelType::F32, mode.memory);
    DeviceImage d;
    gpu.upload(img, d);  // allocates; the timed uploads reuse it
    std::vector<double> samples;
    for (int i = 0; i < std::max(a.reps / 4, 3); ++i) {
      gpu.upload(img, d);
      samples.push_back(gpu.lastUpload().totalMs());
    }
    Measurement m;
    m.version = gpulabVersion();
    m.operation = "upload-f32";
    m.description = std::string("upload (") + mode.label + ")";
    m.input = shapeOf(img);
    m.output = shapeOf(img);
    GpuMeasurement g;
    g.device = gpu.device();
    g.deviceName = queryDevices().devices.at(static_cast<std::size_t>(gpu.device())).name;
    g.upload = Stats::of(samples);
    g.hostMemory = gpu.lastUpload().hostMemory();
    m.gpu = g;
    m.uploadBytes = static_cast<double>(img.sizeBytes());
    m.transferCeiling = TransferCeiling{ceiling.hostToDeviceGbps, ceiling.deviceToHostGbps, ceiling.how()};
    for (auto& row : toJsonRows(m)) report["records"].push_back(row);
    std::printf("%-26s %-16s %9s %7s %6s  %-22s\n", ("upload-f32 " + img.describe()).c_str(),
                (std::string(mode.label) + (img.pinned() == (mode.memory == HostMemory::Pinned) ? "" : "?")).c_str(),
                formatMs(g.upload->medianMs).c_str(), rateText(m.uploadRate()).c_str(),
                percentText(m.uploadPercentOfCeiling()).c_str(), "(upload only)");
  }
}

void benchPinning(nlohmann::json& report) {
  for (const std::size_t bytes : {std::size_t{6000} * 4000 * 3, std::size_t{1} << 30}) {
    const PinningCost c = measurePinningCost(bytes);
    std::printf(
        "pinning %s: cudaHostRegister %.2f ms + cudaHostUnregister %.2f ms (first touch of the pageable buffer "
        "%.2f ms); cudaHostAlloc %.2f ms + cudaFreeHost %.2f ms (median of %d)\n",
        bytesText(bytes).c_str(), c.registerMs, c.unregisterMs, c.touchMs, c.hostAllocMs, c.freeHostMs, c.reps);
    report["pinning"].push_back({{"bytes", bytes},
                                 {"register_ms", c.registerMs},
                                 {"unregister_ms", c.unregisterMs},
                                 {"touch_ms", c.touchMs},
                                 {"host_alloc_ms", c.hostAllocMs},
                                 {"free_host_ms", c.freeHostMs},
                                 {"reps", c.reps}});
  }
}

/// The transfer table: photo rows (6000x4000 RGB u8 / u16), the 16384x16384 f32 upload, pinning costs.
void benchTransfers(const std::vector<BenchOp>& ops, GpuContext* gpu, const BenchArgs& a, nlohmann::json& report) {
  std::vector<std::string> names;
  for (const BenchOp& op : ops)
    if (op.transfer) names.push_back(op.name);
  if (names.empty()) return;
  if (gpu == nullptr) {
    std::printf("\n%s: skipped: no GPU (%s)\n", "transfers", queryDevices().status.c_str());
    return;
  }
  const HostCopyCeiling ceiling = hostCopyCeiling();
  report["pinned_copy_upload_gbps"] = ceiling.hostToDeviceGbps;
  report["pinned_copy_download_gbps"] = ceiling.deviceToHostGbps;
  report["pinned_copy_how"] = ceiling.how();
  std::printf("\npinned copy ceiling: host -> device %.1f GB/s, device -> host %.1f GB/s (%s)\n",
              ceiling.hostToDeviceGbps, ceiling.deviceToHostGbps, ceiling.how().c_str());
  const std::string note = pinnedMemoryNote();
  printTransferHeader();
  for (const std::string& name : names) {
    if (name == "pinning") {
      benchPinning(report);
      continue;
    }
    if (name == "upload-f32") {
      benchLargeUpload(ceiling, *gpu, a, report);
      continue;
    }
    const bool u16 = name == "photo-u16";
    for (const HostMode& mode : kHostModes) {
      const Image photo = randomPhoto(6000, 4000, 3, u16 ? PixelType::U16 : PixelType::U8, mode.memory);
      if (u16) {
        // A 16-bit photo: auto-levels and the box blur take u16 as it is (the box blur on the
        // interleaved rows, as it does every RGB photo).
        benchTransferRow(name, photo, findOperation("auto-levels"), {}, mode, *gpu, a, report);
        benchTransferRow(name, photo, findOperation("box"), {{"radius", "15"}}, mode, *gpu, a, report);
      } else {
        benchTransferRow(name, photo, findOperation("box"), {{"radius", "15"}}, mode, *gpu, a, report);
      }
    }
  }
  if (!pinnedMemoryNote().empty() && pinnedMemoryNote() != note)
    std::printf("note: %s (rows marked ? are not in the memory they name)\n", pinnedMemoryNote().c_str());
  std::printf(
      "\nupload / download: GpuContext's transfer of the host image, in %s bands; GB/s: host image bytes over "
      "the median; %% pin: that against the pinned copy ceiling above. compute: the operation's kernels (%% copy: "
      "against the DRAM copy ceiling). pageable 1 band: the path before pipelining (whole-image staging)\n",
      bytesText(kDefaultTransferBandBytes).c_str());
}

void run(const BenchArgs& a) {
  if (a.size < 16 || a.size > 16384)
    throw UsageError("--size " + std::to_string(a.size) + " is not allowed: use 16 to 16384");
  if (a.reps < 1) throw UsageError("--reps " + std::to_string(a.reps) + " is not allowed: use 1 or more");
  const ParamInfo& paths = *findOperation("box").param("path");
  asUsage([&] { return choiceParam({{"path", a.boxPath}}, paths); });
  std::vector<BenchOp> ops;
  for (const std::string& name : splitList(a.ops)) ops.push_back(parseOp(name));
  if (ops.empty()) throw UsageError("--ops is empty: name at least one of " + std::string(kAllOps));

  const int n = a.size;
  const bool rgb8 = !a.rgb8.empty();
  const auto [photoWidth, photoHeight] = rgb8 ? parseSize(a.rgb8) : std::pair{n, n};
  const Image img = rgb8 ? randomRgb8(photoWidth, photoHeight) : randomImage(n);
  const std::string imageText = img.describe();
  const bool gpuRun = cudaAvailable();
  const MeasurePolicy policy = MeasurePolicy::benchmark(a.reps);
  if (!gpuRun && a.noCpu) throw UsageError("--no-cpu leaves nothing to run on a machine without a GPU");

  std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);
  std::optional<DeviceInfo> device;
  std::optional<CopyCeiling> ceiling;
  if (gpuRun) {
    device = queryDevices().devices.at(static_cast<std::size_t>(gpu->device()));
    ceiling = deviceCopyCeiling();
    std::printf(
        "device: %s (%d SMs, compute %s); image %s; GPU: median of %d after %d warm-up runs; CPU "
        "(OpenCV, %d threads): median of up to %d after %d (fewer for runs over %.1f s)\n",
        device->name.c_str(), device->multiprocessors, device->computeCapability().c_str(), imageText.c_str(),
        policy.gpuReps, policy.gpuWarmup, cpuThreads(), policy.cpuReps, policy.cpuWarmup,
        policy.cpuBudgetMs / policy.cpuReps / 1000);
    std::printf("DRAM copy ceiling: %.0f GB/s (read + write; %s)\n", ceiling->gbps, ceiling->how().c_str());
  } else {
    std::printf(
        "no GPU (%s): the CPU rows run, the GPU rows are skipped; image %s; CPU (OpenCV, %d threads): median "
        "of up to %d after %d (fewer for runs over %.1f s)\n",
        queryDevices().status.c_str(), imageText.c_str(), cpuThreads(), policy.cpuReps, policy.cpuWarmup,
        policy.cpuBudgetMs / policy.cpuReps / 1000);
  }
  nlohmann::json report = jsonReport(device, ceiling);
  report["image"] = {{"width", img.width()},
                     {"height", img.height()},
                     {"channels", img.channels()},
                     {"dtype", std::string(toString(img.type()))}};

  printHeader();
  std::vector<std::string> mismatches;
  MandelbrotRenderer mandelbrotRenderer;
  for (BenchOp& op : ops) {
    if (op.transfer) continue;  // their own table, below
    if (op.mandelbrot && rgb8) {
      std::printf("%-20s skipped: the Mandelbrot rows render their own 1920x1080 frames (no --rgb8)\n",
                  op.name.c_str());
      continue;
    }
    if (op.mandelbrot) {
      benchMandelbrot(op, gpu.get(), mandelbrotRenderer, a, report);
      continue;
    }
    std::unique_ptr<Operation> operation;
    try {
      if (op.lowpass) {
        auto filter = std::make_unique<FftFilter>(lowpassSpec());
        filter->setCufftOnly(op.lowpassCufft);
        operation = std::move(filter);
      } else if (op.gaussianSize > 0) {
        auto blur = std::make_unique<GaussianBlur>(0.0, op.gaussianSize);
        blur->setFusedGpu(!op.gaussianTwoPass);
        operation = std::move(blur);
      } else {
        const OperationInfo& info = findOperation(op.operation);
        if (info.param("path") != nullptr) op.values["path"] = a.boxPath;
        operation = info.make(op.values);
      }
      (void)operation->outputShape(shapeOf(img));  // Canny takes u8 only: its f32 row is skipped
    } catch (const std::invalid_argument& e) {
      std::printf("%-20s skipped: %s\n", op.name.c_str(), e.what());
      continue;
    }
    MeasureSetup setup;
    setup.wantGpu = gpuRun;
    setup.wantCpu = !a.noCpu;
    setup.gpu = gpu.get();
    MeasureResult result = measure(*operation, img, setup, policy);
    Measurement& m = result.record;
    m.operation = op.name;

    std::string check = m.gpu ? "not checked" : "-";
    if (m.maxAbsDiff) {
      // f32 inputs in [0, 1): 1e-4 per unit of weight; u8: within 1 (rounding); exact ops: none.
      const double tolerance = op.exact ? 0.0 : rgb8 ? 1.0 : 1e-4 * op.weightSum;
      char text[48];
      std::snprintf(text, sizeof text, "%.2g%s", *m.maxAbsDiff, *m.maxAbsDiff <= tolerance ? "" : " FAIL");
      check = text;
      if (!(*m.maxAbsDiff <= tolerance))
        mismatches.push_back(op.name + " differs from the CPU baseline by " + text + " (tolerance " +
                             std::to_string(tolerance) + ")");
    }
    for (auto& row : toJsonRows(m)) report["records"].push_back(row);
    printRow(op.name, m, check, methodColumn(m));
  }
  std::printf(
      "\nGB/s: the bytes an op must move at least (each input sample read once, each output written once) "
      "over its GPU compute time; %% copy: that against the DRAM copy ceiling above. method: convK is direct, "
      "convK-sep separable (a Gaussian kernel); "
      "auto says what its cost model took on the GPU (and on the CPU, when that differs); the CPU runs each "
      "row's method too (direct: OpenCV filter2D; fft: cv::dft). Calibration and FFT plans are made before "
      "timing (prepare_ms in the JSON)\n");
  benchTransfers(ops, gpu.get(), a, report);
  if (!a.json.empty()) {
    writeJson(report, a.json);
    std::printf("wrote %s\n", a.json.c_str());
  }
  if (!mismatches.empty()) throw std::runtime_error(mismatches.front());
}

}  // namespace

void registerBench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Benchmark image operations on an NxN f32 image: CPU baseline vs GPU");
  cmd->add_option("--size", a->size, "Image side N (default 4096)");
  cmd->add_option("--reps", a->reps,
                  "Timed GPU repetitions (default 20; the CPU runs at most 5, fewer when one run is slow)");
  cmd->add_option("--ops", a->ops, std::string("Comma-separated ops (default ") + kAllOps + ")");
  cmd->add_option("--json", a->json, "Also write the results as JSON to FILE");
  cmd->add_flag("--no-cpu", a->noCpu, "Skip the CPU baselines (and the check against them)");
  cmd->add_option("--box-path", a->boxPath,
                  "GPU box blur path: auto (default) | ring | stream | sat | fused | direct (radius 1-2) | sweep");
  cmd->add_option("--rgb8", a->rgb8, "Run on a WxH RGB 8-bit image (e.g. 6000x4000) instead of NxN f32");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
