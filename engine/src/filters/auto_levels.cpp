#include "gpulab/filters/auto_levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <opencv2/core.hpp>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/histogram.cuh"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {
namespace {

using namespace cv_interop;

bool keepsAlpha(PixelType type, int channels) { return isIntegerType(type) && channels == 4; }

kernels::LevelSamples levelSamples(PixelType type) {
  if (type == PixelType::U8) return kernels::LevelSamples::U8;
  return type == PixelType::U16 ? kernels::LevelSamples::U16 : kernels::LevelSamples::Float;
}
int stretchedChannels(PixelType type, int channels) { return keepsAlpha(type, channels) ? 3 : channels; }

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

template <class T>
void stretchRows(const Image& in, Image& out, const std::vector<std::pair<double, double>>& levels, int a, int b) {
  const int channels = in.channels();
  const int stretched = stretchedChannels(in.type(), channels);
  for (int y = a; y < b; ++y) {
    const T* src = in.row<T>(y);
    T* dst = out.row<T>(y);
    for (int x = 0; x < in.width(); ++x)
      for (int c = 0; c < channels; ++c) {
        const std::size_t i = static_cast<std::size_t>(x) * channels + c;
        if (c >= stretched) {
          dst[i] = src[i];
        } else if constexpr (std::is_same_v<T, std::uint8_t>) {
          dst[i] = kernels::stretchU8(src[i], static_cast<int>(levels[c].first), static_cast<int>(levels[c].second));
        } else {
          dst[i] =
              static_cast<T>(kernels::stretchFloat(static_cast<double>(src[i]), levels[c].first, levels[c].second));
        }
      }
  }
}

}  // namespace

AutoLevels::AutoLevels(double lowPercent, double highPercent) : low_(lowPercent), high_(highPercent) {
  if (!(std::isfinite(low_) && std::isfinite(high_) && low_ >= 0 && high_ <= 100 && low_ < high_))
    throw std::invalid_argument("auto-levels needs 0 <= low < high <= 100 (percent), not low " + number(low_) +
                                " and high " + number(high_));
}

OperationInfo autoLevelsInfo() {
  OperationInfo info;
  info.name = "auto-levels";
  info.title = "Auto levels";
  info.summary = "stretch each channel between two percentiles of its histogram";
  const ParamInfo low = ParamInfo::number("low", "percent of the samples that go to black", 0, 50, "0.5");
  const ParamInfo high = ParamInfo::number("high", "percentile that goes to white", 50, 100, "99.5");
  info.params = {low, high};
  info.make = [low, high](const ParamValues& values) -> std::unique_ptr<Operation> {
    return std::make_unique<AutoLevels>(numberParam(values, low), numberParam(values, high));
  };
  return info;
}

std::string AutoLevels::describe() const { return "auto-levels " + number(low_) + "%.." + number(high_) + "%"; }

ParamValues AutoLevels::params() const { return {{"low", number(low_)}, {"high", number(high_)}}; }

ImageShape AutoLevels::outputShape(const ImageShape& in) const {
  validateImageShape(in.width, in.height, in.channels);
  return in;
}

void AutoLevels::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in != &out && (out.empty() || !out.sameShape(in)))
    out = DeviceImage(shape.width, shape.height, shape.channels, shape.type);
  const int stretched = stretchedChannels(in.type(), in.channels());
  levels_.reserve(static_cast<std::size_t>(in.channels()) * 2 * sizeof(double));
  cudaStream_t stream = gpu.stream();
  histogram_.run(gpu, in);
  kernels::launchLevels(static_cast<const unsigned*>(histogram_.deviceCounts()),
                        static_cast<const kernels::RangeCode*>(histogram_.deviceRanges()), histogram_.lastBins(),
                        in.channels(), levelSamples(in.type()), low_ / 100.0, high_ / 100.0, levels_.as<double>(),
                        stream);
  auto launch = [&](auto sample) {
    using T = decltype(sample);
    for (int c = 0; c < in.channels(); ++c) {
      if (c < stretched) {
        kernels::launchStretch<T>(planeOf<T>(in, c), planeOf<T>(out, c), levels_.as<double>() + 2 * c, stream);
      } else if (&in != &out) {
        GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(out.planeData(c), out.pitch(), in.planeData(c), in.pitch(),
                                            static_cast<std::size_t>(in.width()) * sizeof(T), in.height(),
                                            cudaMemcpyDeviceToDevice, stream));
      }
    }
  };
  visitAnySampleType(in.type(), launch);
}

std::vector<std::pair<double, double>> AutoLevels::levelsCpu(const Image& in) const {
  const Histogram h = histogramCpu(in, kAutoLevelsFloatBins);
  std::vector<std::pair<double, double>> levels(h.channels);
  for (int c = 0; c < h.channels; ++c)
    kernels::levelsFromHistogram(h.counts.data() + static_cast<std::size_t>(c) * h.bins, h.bins,
                                 levelSamples(in.type()), h.lo[c], h.hi[c], low_ / 100.0, high_ / 100.0,
                                 levels[c].first, levels[c].second);
  return levels;
}

Image AutoLevels::runCpu(const Image& in, const CpuControl& control) const {
  outputShape(shapeOf(in));
  const std::vector<std::pair<double, double>> levels = levelsCpu(in);
  control.throwIfCancelled();
  control.report(0.5);
  Image out(in.width(), in.height(), in.channels(), in.type());
  try {
    if (in.type() == PixelType::U8) {
      // One lookup table per channel, applied by cv::LUT to row strips.
      cv::Mat lut(1, 256, CV_8UC(in.channels()));
      const int stretched = stretchedChannels(in.type(), in.channels());
      for (int v = 0; v < 256; ++v)
        for (int c = 0; c < in.channels(); ++c)
          lut.ptr<std::uint8_t>()[v * in.channels() + c] =
              c < stretched
                  ? kernels::stretchU8(v, static_cast<int>(levels[c].first), static_cast<int>(levels[c].second))
                  : static_cast<std::uint8_t>(v);
      const cv::Mat src = asMat(in);
      cv::Mat dst = asMat(out);
      parallelRows(in.height(), [&](int a, int b) {
        cv::Mat strip = dst.rowRange(a, b);
        cv::LUT(src.rowRange(a, b), lut, strip);
      });
    } else if (in.type() == PixelType::U16) {
      // cv::LUT takes 8-bit sources only: one 65536-entry table per channel, applied to row strips.
      const int channels = in.channels();
      const int stretched = stretchedChannels(in.type(), channels);
      std::vector<std::vector<std::uint16_t>> tables(channels, std::vector<std::uint16_t>(65536));
      for (int c = 0; c < channels; ++c)
        for (int v = 0; v < 65536; ++v)
          tables[c][v] = c < stretched ? kernels::stretchU16(v, static_cast<int>(levels[c].first),
                                                             static_cast<int>(levels[c].second))
                                       : static_cast<std::uint16_t>(v);
      parallelRows(in.height(), [&](int a, int b) {
        for (int y = a; y < b; ++y) {
          const std::uint16_t* src = in.row<std::uint16_t>(y);
          std::uint16_t* dst = out.row<std::uint16_t>(y);
          for (int x = 0; x < in.width(); ++x)
            for (int c = 0; c < channels; ++c) {
              const std::size_t i = static_cast<std::size_t>(x) * channels + c;
              dst[i] = tables[c][src[i]];
            }
        }
      });
    } else {
      parallelRows(in.height(), [&](int a, int b) {
        if (in.type() == PixelType::F32)
          stretchRows<float>(in, out, levels, a, b);
        else
          stretchRows<double>(in, out, levels, a, b);
      });
    }
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the auto-levels baseline");
  }
  control.report(1.0);
  return out;
}

std::vector<std::pair<double, double>> AutoLevels::levelsReference(const Image& in) const {
  // Independent of the histogram code: sort the finite samples, take the two order statistics, and
  // (float) map each to its bin's edge.
  std::vector<std::pair<double, double>> levels(in.channels(), {0.0, 0.0});
  const bool u8 = in.type() == PixelType::U8;
  for (int c = 0; c < in.channels(); ++c) {
    std::vector<double> v;
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) {
        double s = 0;
        if (u8)
          s = in.at<std::uint8_t>(x, y, c);
        else if (in.type() == PixelType::U16)
          s = in.at<std::uint16_t>(x, y, c);
        else if (in.type() == PixelType::F32)
          s = in.at<float>(x, y, c);
        else
          s = in.at<double>(x, y, c);
        if (std::isfinite(s)) v.push_back(s);
      }
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const auto n = static_cast<long long>(v.size());
    auto rank = [n](double r) { return std::clamp<long long>(static_cast<long long>(std::max(r, 0.0)), 0, n - 1); };
    const auto count = static_cast<double>(n);
    const double sampleLo = v[static_cast<std::size_t>(rank(std::floor(low_ / 100.0 * count)))];
    const double sampleHi = v[static_cast<std::size_t>(rank(std::ceil(high_ / 100.0 * count) - 1))];
    if (u8) {
      levels[c] = {sampleLo, sampleHi};
      continue;
    }
    const double lo = v.front(), hi = v.back();
    const int bins = kAutoLevelsFloatBins;
    if (in.type() == PixelType::U16) {
      // The integer bin of each value over [lo, hi]; the levels are the first value of the low
      // sample's bin and the last value of the high sample's bin, found by walking the values.
      const auto span = static_cast<long long>(hi - lo) + 1;
      auto bin = [&](double s) { return static_cast<long long>(s - lo) * bins / span; };
      double first = sampleLo, last = sampleHi;
      while (first > lo && bin(first - 1) == bin(sampleLo)) --first;
      while (last < hi && bin(last + 1) == bin(sampleHi)) ++last;
      levels[c] = {first, last};
      continue;
    }
    const double scale = hi > lo ? bins / (hi - lo) : 0.0;
    auto bin = [&](double s) { return std::clamp(static_cast<int>((s - lo) * scale), 0, bins - 1); };
    const double width = (hi - lo) / bins;
    const int hb = bin(sampleHi);
    levels[c] = {lo + bin(sampleLo) * width, hb + 1 >= bins ? hi : lo + (hb + 1) * width};
  }
  return levels;
}

Image AutoLevels::runReference(const Image& in) const {
  outputShape(shapeOf(in));
  const std::vector<std::pair<double, double>> levels = levelsReference(in);
  Image out(in.width(), in.height(), in.channels(), in.type());
  const int stretched = stretchedChannels(in.type(), in.channels());
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x)
      for (int c = 0; c < in.channels(); ++c) {
        const auto [lo, hi] = levels[c];
        switch (in.type()) {
          case PixelType::U8: {
            const int v = in.at<std::uint8_t>(x, y, c);
            int r = v;
            if (c < stretched && hi > lo) {
              const double exact = (v - lo) * 255.0 / (hi - lo);
              r = static_cast<int>(std::clamp(std::floor(exact + 0.5), 0.0, 255.0));
            }
            out.at<std::uint8_t>(x, y, c) = static_cast<std::uint8_t>(r);
            break;
          }
          case PixelType::U16: {
            const int v = in.at<std::uint16_t>(x, y, c);
            int r = v;
            if (c < stretched && hi > lo) {
              const double exact = (v - lo) * 65535.0 / (hi - lo);
              r = static_cast<int>(std::clamp(std::floor(exact + 0.5), 0.0, 65535.0));
            }
            out.at<std::uint16_t>(x, y, c) = static_cast<std::uint16_t>(r);
            break;
          }
          case PixelType::F32: {
            const double v = in.at<float>(x, y, c);
            const double r = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : v;
            out.at<float>(x, y, c) = static_cast<float>(std::isnan(v) ? v : r);
            break;
          }
          case PixelType::F64: {
            const double v = in.at<double>(x, y, c);
            const double r = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : v;
            out.at<double>(x, y, c) = std::isnan(v) ? v : r;
            break;
          }
        }
      }
  return out;
}

}  // namespace gpulab
