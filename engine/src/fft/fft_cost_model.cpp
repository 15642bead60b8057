// ConvCostModel: direct vs FFT convolution from throughputs measured on the running machine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "gpulab/fft/fft_conv.hpp"

namespace gpulab {

ConvCostModel::ConvCostModel(Line direct, Line fft, FftSizeRule rule)
    : direct_(direct), fft_(fft), rule_(rule), calibrated_(true) {}

Image ConvCostModel::calibrationImage(int width, int height) {
  Image img(width, height, 1, PixelType::F32);
  std::uint64_t index = 0;
  for (float& v : img.samples<float>()) {
    std::uint64_t z = ++index * 0x9E3779B97F4A7C15ull;  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // 24 bits: exact in float
  }
  return img;
}

double ConvCostModel::directUnits(int width, int height, int kw, int kh, int channels) {
  return static_cast<double>(width) * height * kw * kh * channels;
}

double ConvCostModel::fftUnits(int width, int height, int kw, int kh, int channels, FftSizeRule rule) {
  const FftConvGeometry g = fftConvGeometry(width, height, kw, kh, ConvMode::Same, rule);
  const double n = static_cast<double>(g.paddedWidth) * g.paddedHeight;
  return channels * n * std::log2(std::max(n, 2.0));
}

double ConvCostModel::directMs(int width, int height, int kw, int kh, int channels) const {
  return direct_.at(directUnits(width, height, kw, kh, channels));
}

double ConvCostModel::fftMs(int width, int height, int kw, int kh, int channels) const {
  return fft_.at(fftUnits(width, height, kw, kh, channels, rule_));
}

double ConvCostModel::separableUnits(int width, int height, int kw, int kh, int rank, int channels) {
  return static_cast<double>(width) * height * channels * (static_cast<double>(rank) * (kw + kh) + kSeparablePixelTaps);
}

double ConvCostModel::separableMs(int width, int height, int kw, int kh, int rank, int channels) const {
  return separable_.at(separableUnits(width, height, kw, kh, rank, channels));
}

ConvAlgorithm ConvCostModel::choose(int width, int height, int kw, int kh, int channels, int separableRank) const {
  if (!calibrated_)
    throw std::logic_error(
        "the convolution cost model is not calibrated: run ConvCostModel::calibrateGpu or "
        "calibrateCpu first");
  const double direct = directMs(width, height, kw, kh, channels);
  const double fft = fftMs(width, height, kw, kh, channels);
  const ConvAlgorithm best = fft < direct ? ConvAlgorithm::Fft : ConvAlgorithm::Direct;
  if (!hasSeparable_ || separableRank < 1 || separableRank > 3) return best;
  return separableMs(width, height, kw, kh, separableRank, channels) < std::min(direct, fft) ? ConvAlgorithm::Separable
                                                                                             : best;
}

std::string ConvCostModel::describe() const {
  if (!calibrated_) return "uncalibrated";
  char text[240];
  std::snprintf(text, sizeof text, "direct %.3g ms/MAC + %.3g ms, fft %.3g ms/(N log2 N) + %.3g ms", direct_.msPerUnit,
                direct_.fixedMs, fft_.msPerUnit, fft_.fixedMs);
  std::string result = text;
  if (hasSeparable_) {
    std::snprintf(text, sizeof text, ", separable %.3g ms/tap + %.3g ms", separable_.msPerUnit, separable_.fixedMs);
    result += text;
  }
  return result;
}

ConvCostModel::Line ConvCostModel::fit(std::span<const std::pair<double, double>> unitsAndMs) {
  std::set<double> distinct;
  for (const auto& p : unitsAndMs) distinct.insert(p.first);
  if (distinct.size() < 2)
    throw std::invalid_argument("fitting a cost line needs measurements at two or more different sizes, got " +
                                std::to_string(distinct.size()));
  const auto n = static_cast<double>(unitsAndMs.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : unitsAndMs) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  Line line;
  line.msPerUnit = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  line.fixedMs = (sy - line.msPerUnit * sx) / n;
  if (line.fixedMs < 0) {  // a negative launch overhead is noise: fit through the origin instead
    line.fixedMs = 0;
    line.msPerUnit = sxy / sxx;
  }
  if (line.msPerUnit < 0) {  // no growth measurable: a constant
    line.msPerUnit = 0;
    line.fixedMs = std::max(0.0, sy / n);
  }
  return line;
}

namespace {

FilterSpec randomKernelSpec(int k, unsigned seed) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel.width = spec.kernel.height = k;
  spec.kernel.values.resize(static_cast<std::size_t>(k) * k);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (double& v : spec.kernel.values) v = d(rng);
  return spec;
}

struct Case {
  int size;
  int kernel;
};

std::vector<std::pair<double, double>> measureDirect(const ConvCostModel::DirectTimer& directMs,
                                                     std::initializer_list<Case> cases) {
  std::vector<std::pair<double, double>> points;
  for (const Case& c : cases)
    points.emplace_back(ConvCostModel::directUnits(c.size, c.size, c.kernel, c.kernel),
                        directMs(c.size, c.size, c.kernel, c.kernel));
  return points;
}

}  // namespace

ConvCostModel ConvCostModel::calibrateGpu(GpuContext& gpu, const DirectTimer& directMs) {
  if (!directMs) throw std::invalid_argument("calibrating the cost model needs a timer for direct convolution");
  // Both lines reach 4096^2 (64 MiB of float32, beyond the L2 cache of every current GPU): measured
  // only up to 2048^2, the FFT ran from L2 and the line extrapolated to large images came out 1.6x too
  // cheap (H100: auto took FFT, 0.50 ms, over direct, 0.31 ms, for 15x15 on 4096^2). The direct
  // points use the kernels where the two methods are close (9 to 21), where direct is compute-bound.
  std::vector<std::pair<double, double>> fftPoints;
  std::map<int, DeviceImage> inputs;  // each size made and uploaded once
  for (const Case& c : {Case{1024, 15}, Case{2048, 31}, Case{4096, 15}, Case{4096, 31}}) {
    FftConvolver conv(randomKernelSpec(c.kernel, 7));
    auto [input, fresh] = inputs.try_emplace(c.size);
    if (fresh) input->second = gpu.upload(calibrationImage(c.size, c.size));
    const DeviceImage& in = input->second;
    DeviceImage out;
    conv.prepare(gpu, in, out);
    const Stats s = timeStream(gpu.stream(), [&] { conv.runGpu(gpu, in, out); }, {2, 7});
    fftPoints.emplace_back(fftUnits(c.size, c.size, c.kernel, c.kernel, 1, FftSizeRule::Cufft), s.medianMs);
  }
  const auto directPoints =
      measureDirect(directMs, {Case{1024, 9}, Case{2048, 15}, Case{4096, 9}, Case{4096, 15}, Case{4096, 21}});
  return ConvCostModel(fit(directPoints), fit(fftPoints), FftSizeRule::Cufft);
}

ConvCostModel ConvCostModel::calibrateCpu(const DirectTimer& directMs) {
  if (!directMs) throw std::invalid_argument("calibrating the cost model needs a timer for direct convolution");
  std::vector<std::pair<double, double>> fftPoints;
  for (const Case& c : {Case{256, 15}, Case{512, 15}, Case{512, 31}, Case{1024, 31}}) {
    const FftConvolver conv(randomKernelSpec(c.kernel, 7));
    const Image in = calibrationImage(c.size, c.size);
    const Stats s = timeHost([&] { (void)conv.runCpu(in); }, {1, 3});
    fftPoints.emplace_back(fftUnits(c.size, c.size, c.kernel, c.kernel, 1, FftSizeRule::OpenCv), s.medianMs);
  }
  // Small kernels only: OpenCV's filter2D itself switches to a DFT from 11x11 up.
  const auto directPoints = measureDirect(directMs, {Case{512, 3}, Case{512, 5}, Case{1024, 7}, Case{1024, 9}});
  return ConvCostModel(fit(directPoints), fit(fftPoints), FftSizeRule::OpenCv);
}

}  // namespace gpulab
