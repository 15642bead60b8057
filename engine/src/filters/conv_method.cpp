// ConvMethodFilter: the FFT and auto methods of the general convolution behind the Filter
// interface, and the process-wide cost models auto chooses with.
#include "gpulab/filters/conv_method.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/border.cuh"
#include "internal/conv_support.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {

namespace {

// ---------------------------------------------------------------------------------------------
// Calibration: what the direct method costs, measured with Conv2D itself

FilterSpec randomConvSpec(int kw, int kh, unsigned seed) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel.width = kw;
  spec.kernel.height = kh;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int i = 0; i < kw * kh; ++i) spec.kernel.values.push_back(d(rng));
  return spec;
}

double directGpuMs(GpuContext& gpu, const DeviceImage& in, int kw, int kh) {
  Conv2D conv(randomConvSpec(kw, kh, 17));
  DeviceImage out;
  return timeStream(gpu.stream(), [&] { conv.runGpu(gpu, in, out); }, {.warmup = 2, .reps = 5}).medianMs;
}

double directCpuMs(int width, int height, int kw, int kh) {
  const Conv2D conv(randomConvSpec(kw, kh, 17));
  const Image in = ConvCostModel::calibrationImage(width, height);
  return timeHost([&] { (void)conv.runCpu(in); }, {.warmup = 1, .reps = 3}).medianMs;
}

// A k x k kernel that is the sum of `rank` random outer products (seeded).
FilterSpec lowRankSpec(int k, int rank, unsigned seed) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel.width = spec.kernel.height = k;
  spec.kernel.values.assign(static_cast<std::size_t>(k) * k, 0.0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int t = 0; t < rank; ++t) {
    std::vector<double> col(static_cast<std::size_t>(k)), row(static_cast<std::size_t>(k));
    for (double& v : col) v = d(rng);
    for (double& v : row) v = d(rng);
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q)
        spec.kernel.values[static_cast<std::size_t>(p) * k + q] +=
            col[static_cast<std::size_t>(p)] * row[static_cast<std::size_t>(q)];
  }
  return spec;
}

struct SeparableCase {
  int size;
  int kernel;
  int rank;
};

// The separable line: SeparableConv's own timings over ConvCostModel::separableUnits.
template <class Timer>
ConvCostModel::Line fitSeparable(std::initializer_list<SeparableCase> cases, Timer&& msOf) {
  std::vector<std::pair<double, double>> points;
  for (const SeparableCase& c : cases) {
    SeparableConv conv(lowRankSpec(c.kernel, c.rank, 23));
    if (conv.rank() != c.rank) throw std::logic_error("the separable calibration kernel has an unexpected rank");
    points.emplace_back(ConvCostModel::separableUnits(c.size, c.size, c.kernel, c.kernel, c.rank), msOf(c.size, conv));
  }
  return ConvCostModel::fit(points);
}

// Plain numbers only (no device objects): safe as a function-local static.
struct ModelCache {
  std::mutex gpuMutex;
  std::map<int, ConvCostModel> gpu;  // by device ordinal
  std::mutex cpuMutex;
  std::optional<ConvCostModel> cpu;
};

ModelCache& modelCache() {
  static ModelCache cache;
  return cache;
}

std::optional<ConvAlgorithm> decodeChoice(int code) noexcept {
  if (code < 0) return std::nullopt;
  return static_cast<ConvAlgorithm>(code);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The process-wide models

ConvCostModel gpuConvCostModel(GpuContext& gpu) {
  ModelCache& cache = modelCache();
  const std::lock_guard lock(cache.gpuMutex);  // held while calibrating: one calibration per device
  if (const auto it = cache.gpu.find(gpu.device()); it != cache.gpu.end()) return it->second;
  std::map<std::pair<int, int>, DeviceImage> inputs;  // each size made and uploaded once
  auto inputOf = [&](int width, int height) -> const DeviceImage& {
    auto [input, fresh] = inputs.try_emplace({width, height});
    if (fresh) input->second = gpu.upload(ConvCostModel::calibrationImage(width, height));
    return input->second;
  };
  ConvCostModel model = ConvCostModel::calibrateGpu(
      gpu, [&](int width, int height, int kw, int kh) { return directGpuMs(gpu, inputOf(width, height), kw, kh); });
  model.setSeparable(fitSeparable(
      {{2048, 15, 1}, {4096, 3, 1}, {4096, 15, 1}, {4096, 31, 1}, {4096, 15, 3}}, [&](int size, SeparableConv& conv) {
        const DeviceImage& in = inputOf(size, size);
        DeviceImage out;
        return timeStream(gpu.stream(), [&] { conv.runGpu(gpu, in, out); }, {.warmup = 2, .reps = 5}).medianMs;
      }));
  cache.gpu.emplace(gpu.device(), model);
  return model;
}

ConvCostModel cpuConvCostModel() {
  ModelCache& cache = modelCache();
  const std::lock_guard lock(cache.cpuMutex);
  if (!cache.cpu) {
    ConvCostModel model = ConvCostModel::calibrateCpu(directCpuMs);
    model.setSeparable(
        fitSeparable({{512, 7, 1}, {1024, 15, 1}, {1024, 31, 1}, {1024, 15, 2}}, [](int size, SeparableConv& conv) {
          const Image in = ConvCostModel::calibrationImage(size, size);
          return timeHost([&] { (void)conv.runCpu(in); }, {.warmup = 1, .reps = 3}).medianMs;
        }));
    cache.cpu = model;
  }
  return *cache.cpu;
}

std::optional<ConvCostModel> cachedGpuConvCostModel(int device) {
  ModelCache& cache = modelCache();
  const std::lock_guard lock(cache.gpuMutex);
  if (const auto it = cache.gpu.find(device); it != cache.gpu.end()) return it->second;
  return std::nullopt;
}

std::optional<ConvCostModel> cachedCpuConvCostModel() {
  ModelCache& cache = modelCache();
  const std::lock_guard lock(cache.cpuMutex);
  return cache.cpu;
}

// ---------------------------------------------------------------------------------------------
// Construction, shapes

ConvMethodFilter::ConvMethodFilter(const FilterSpec& spec) : spec_(spec), fft_(spec) {
  if (spec_.method != ConvMethod::Fft && spec_.method != ConvMethod::Auto && spec_.method != ConvMethod::Separable)
    throw std::invalid_argument(
        "ConvMethodFilter computes the fft, auto and separable methods; the direct method is Conv2D");
  if (spec_.kernel.width <= Conv2D::kMaxKernelSize && spec_.kernel.height <= Conv2D::kMaxKernelSize)
    direct_.emplace(spec_);
  if (spec_.method == ConvMethod::Separable) {
    if (spec_.kernel.width > kMaxSeparableTaps || spec_.kernel.height > kMaxSeparableTaps)
      throw std::invalid_argument("the separable method takes kernels up to " +
                                  sizeText(kMaxSeparableTaps, kMaxSeparableTaps) + ", not " +
                                  sizeText(spec_.kernel.width, spec_.kernel.height) + "; use the fft or auto method");
    separable_.emplace(spec_);  // throws when the kernel is not separable
  } else if (spec_.method == ConvMethod::Auto && spec_.kernel.width <= kMaxSeparableTaps &&
             spec_.kernel.height <= kMaxSeparableTaps && separableTerms(spec_.kernel).separable()) {
    separable_.emplace(spec_);
  }
}

OperationInfo convolutionInfo() {
  OperationInfo info;
  info.name = "conv";
  info.title = "Convolution";
  info.summary = "2D convolution with any kernel";
  const ParamInfo kernel = ParamInfo::kernel("kernel", "kernel file, text rows of numbers or .npy");
  const ParamInfo correlate = ParamInfo::flag("correlate", "correlation (as cv::filter2D), not flipped");
  const ParamInfo mode = ParamInfo::choice("mode", "same (default) | full | valid", enumNameList<ConvMode>(), "same");
  const ParamInfo method = ParamInfo::choice(
      "method",
      "direct (default, kernels up to 127) | fft (up to 1024) | auto (the fastest, by a cost model calibrated on "
      "this GPU or CPU once per run) | separable (kernels of rank 1 to 3, up to 127: 1-D passes)",
      enumNameList<ConvMethod>(), "direct");
  info.params = {kernel, correlate, mode, method};
  for (ParamInfo& p : borderParamInfos()) info.params.push_back(std::move(p));
  info.make = [kernel, correlate, mode, method](const ParamValues& values) -> std::unique_ptr<Operation> {
    const auto text = values.find(kernel.name);
    if (text == values.end()) throw std::invalid_argument("the kernel parameter is required: " + kernel.help);
    FilterSpec spec;
    spec.op = FilterOp::Conv;
    spec.kernel = parseKernelText(text->second);
    spec.correlate = flagParam(values, correlate);
    spec.mode = parseEnumOrThrow<ConvMode>(choiceParam(values, mode));
    spec.method = parseEnumOrThrow<ConvMethod>(choiceParam(values, method));
    spec.border = borderFromParams(values);
    return makeFilter(spec);
  };
  return info;
}

std::string ConvMethodFilter::describe() const {
  return describeConvolution(spec_.kernel, spec_.correlate, spec_.mode, spec_.border, spec_.method);
}

ParamValues ConvMethodFilter::params() const {
  return convolutionParams(spec_.kernel, spec_.correlate, spec_.mode, spec_.border, spec_.method);
}

std::string ConvMethodFilter::method() const { return std::string(toString(spec_.method)); }

std::string ConvMethodFilter::methodUsed(Side side) const {
  const std::optional<ConvAlgorithm> choice = side == Side::Gpu ? lastGpuChoice() : lastCpuChoice();
  return choice ? std::string(toString(*choice)) : method();
}

std::string ConvMethodFilter::methodNote(Side side) const {
  const std::string rank =
      separable_ ? "kernel of rank " + std::to_string(separable_->rank()) + " by SVD" : std::string();
  if (spec_.method == ConvMethod::Separable) {
    if (side == Side::Gpu && lastGpuChoice() == ConvAlgorithm::Direct)
      return rank + "; f64 images take the direct method on the GPU (the separable kernel sums in float)";
    return rank;
  }
  if (spec_.method != ConvMethod::Auto) return {};
  if (!directPossible()) return "kernels above " + std::to_string(Conv2D::kMaxKernelSize) + " always take the fft";
  const std::optional<ConvCostModel> model = side == Side::Gpu ? gpuModel(lastGpuDevice_.load()) : cpuModel();
  if (!model) return rank;
  return "cost model: " + model->describe() + (rank.empty() ? std::string() : "; " + rank);
}

ImageShape ConvMethodFilter::outputShape(const ImageShape& in) const {
  return direct_ ? direct_->outputShape(in) : fft_.outputShape(in);
}

// ---------------------------------------------------------------------------------------------
// Choosing

ConvAlgorithm ConvMethodFilter::chooseGpu(GpuContext& gpu, const ImageShape& in) {
  if (spec_.method == ConvMethod::Separable)
    return SeparableConv::gpuTakes(in.type) ? ConvAlgorithm::Separable : ConvAlgorithm::Direct;
  if (spec_.method == ConvMethod::Fft || !direct_) return ConvAlgorithm::Fft;
  const ConvCostModel model = pinnedGpu_ ? *pinnedGpu_ : gpuConvCostModel(gpu);
  const int rank = separable_ && SeparableConv::gpuTakes(in.type) ? separable_->rank() : 0;
  return model.choose(in.width, in.height, spec_.kernel.width, spec_.kernel.height, convolvedChannels(in, spec_.mode),
                      rank);
}

ConvAlgorithm ConvMethodFilter::chooseCpu(const ImageShape& in) const {
  if (spec_.method == ConvMethod::Separable) return ConvAlgorithm::Separable;
  if (spec_.method == ConvMethod::Fft || !direct_) return ConvAlgorithm::Fft;
  const ConvCostModel model = pinnedCpu_ ? *pinnedCpu_ : cpuConvCostModel();
  return model.choose(in.width, in.height, spec_.kernel.width, spec_.kernel.height, convolvedChannels(in, spec_.mode),
                      separable_ ? separable_->rank() : 0);
}

std::optional<ConvAlgorithm> ConvMethodFilter::lastGpuChoice() const noexcept { return decodeChoice(lastGpu_.load()); }
std::optional<ConvAlgorithm> ConvMethodFilter::lastCpuChoice() const noexcept { return decodeChoice(lastCpu_.load()); }

std::optional<ConvCostModel> ConvMethodFilter::gpuModel(int device) const {
  if (spec_.method != ConvMethod::Auto) return std::nullopt;
  if (pinnedGpu_) return pinnedGpu_;
  return cachedGpuConvCostModel(device);
}

std::optional<ConvCostModel> ConvMethodFilter::cpuModel() const {
  if (spec_.method != ConvMethod::Auto) return std::nullopt;
  if (pinnedCpu_) return pinnedCpu_;
  return cachedCpuConvCostModel();
}

void ConvMethodFilter::pinGpuModel(const ConvCostModel& model) {
  if (!model.calibrated()) throw std::invalid_argument("an uncalibrated cost model cannot choose a method");
  pinnedGpu_ = model;
}

void ConvMethodFilter::pinCpuModel(const ConvCostModel& model) {
  if (!model.calibrated()) throw std::invalid_argument("an uncalibrated cost model cannot choose a method");
  pinnedCpu_ = model;
}

// ---------------------------------------------------------------------------------------------
// GPU

double ConvMethodFilter::prepareGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty device image");
  const Stopwatch watch;
  const ConvAlgorithm algorithm = chooseGpu(gpu, shapeOf(in));
  if (algorithm == ConvAlgorithm::Fft) {
    fft_.prepare(gpu, in, out);
  } else {
    if (algorithm == ConvAlgorithm::Separable)
      separable_->runGpu(gpu, in, out);  // sizes `out`
    else
      direct_->runGpu(gpu, in, out);  // sizes `out`, uploads large weights once
    gpu.synchronize();
  }
  return watch.elapsedMs();
}

void ConvMethodFilter::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty device image");
  if (spec_.method == ConvMethod::Auto && &in == &out)
    throw std::invalid_argument(
        "the auto convolution method cannot run in place (it may choose direct); give it a separate output image");
  if (spec_.method == ConvMethod::Separable && &in == &out)
    throw std::invalid_argument("the separable convolution cannot run in place; give it a separate output image");
  const ConvAlgorithm algorithm = chooseGpu(gpu, shapeOf(in));
  if (algorithm == ConvAlgorithm::Fft)
    fft_.runGpu(gpu, in, out);
  else if (algorithm == ConvAlgorithm::Separable)
    separable_->runGpu(gpu, in, out);
  else
    direct_->runGpu(gpu, in, out);
  lastGpu_.store(static_cast<int>(algorithm));
  lastGpuDevice_.store(gpu.device());
}

// ---------------------------------------------------------------------------------------------
// CPU

double ConvMethodFilter::prepareCpu(const ImageShape& in) {
  const Stopwatch watch;
  (void)outputShape(in);  // a shape the filter cannot take throws here, not in the timed run
  (void)chooseCpu(in);
  return watch.elapsedMs();
}

Image ConvMethodFilter::runCpu(const Image& in, const CpuControl& control) const {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty image");
  const ConvAlgorithm algorithm = chooseCpu(shapeOf(in));
  Image out = algorithm == ConvAlgorithm::Fft         ? fft_.runCpu(in, control)
              : algorithm == ConvAlgorithm::Separable ? separable_->runCpu(in, control)
                                                      : direct_->runCpu(in, control);
  lastCpu_.store(static_cast<int>(algorithm));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Naive reference

// Conv2D::runReference's formula for kernels it cannot take.
Image ConvMethodFilter::runReference(const Image& in) const {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty image");
  if (direct_) return direct_->runReference(in);
  return convolutionReference(in, outputShape(shapeOf(in)), spec_.kernel, spec_.correlate, spec_.mode, spec_.border);
}

}  // namespace gpulab
