#include "gpulab/analysis/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/histogram.cuh"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {
namespace {

using namespace cv_interop;

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  std::uint64_t nans = 0;
  bool any() const { return lo <= hi; }
};

template <class T>
double sampleAt(const Image& image, int x, int y, int c) {
  return static_cast<double>(image.at<T>(x, y, c));
}

double sample(const Image& image, int x, int y, int c) {
  switch (image.type()) {
    case PixelType::U8:
      return sampleAt<std::uint8_t>(image, x, y, c);
    case PixelType::U16:
      return sampleAt<std::uint16_t>(image, x, y, c);
    case PixelType::F32:
      return sampleAt<float>(image, x, y, c);
    case PixelType::F64:
      return sampleAt<double>(image, x, y, c);
  }
  return 0;
}

Histogram emptyHistogram(const Image& image, int bins) {
  Histogram h;
  h.channels = image.channels();
  h.bins = bins;
  h.counts.assign(static_cast<std::size_t>(h.channels) * bins, 0);
  h.lo.assign(h.channels, 0.0);
  h.hi.assign(h.channels, 255.0);
  return h;
}

void checkImage(const Image& image) {
  if (image.empty()) throw std::invalid_argument("cannot take the histogram of an empty image");
}

// The finite range of channel c over rows [a, b), and its NaNs.
template <class T>
Range typedRangeOf(const Image& image, int c, int a, int b) {
  Range r;
  const int channels = image.channels();
  for (int y = a; y < b; ++y) {
    const T* row = image.row<T>(y) + c;
    for (int x = 0; x < image.width(); ++x) {
      const double v = static_cast<double>(row[static_cast<std::size_t>(x) * channels]);
      if (std::isnan(v)) ++r.nans;
      if (!std::isfinite(v)) continue;
      r.lo = std::min(r.lo, v);
      r.hi = std::max(r.hi, v);
    }
  }
  return r;
}

Range rangeOf(const Image& image, int c, int a, int b) {
  switch (image.type()) {
    case PixelType::U8:
      return typedRangeOf<std::uint8_t>(image, c, a, b);
    case PixelType::U16:
      return typedRangeOf<std::uint16_t>(image, c, a, b);
    case PixelType::F32:
      return typedRangeOf<float>(image, c, a, b);
    case PixelType::F64:
      return typedRangeOf<double>(image, c, a, b);
  }
  return {};
}

void setRange(Histogram& h, int c, const Range& r) {
  h.lo[c] = r.any() ? r.lo : 0.0;
  h.hi[c] = r.any() ? r.hi : -1.0;  // lo > hi: nothing counted
}

}  // namespace

std::uint64_t Histogram::total(int channel) const {
  std::uint64_t n = 0;
  for (int b = 0; b < bins; ++b) n += at(channel, b);
  return n;
}

std::uint32_t Histogram::peak() const { return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end()); }

int histogramBins(PixelType type, int floatBins) {
  if (type == PixelType::U8) return 256;
  if (floatBins < 1 || floatBins > kMaxFloatBins)
    throw std::invalid_argument("a float histogram has 1 to " + std::to_string(kMaxFloatBins) + " bins, not " +
                                std::to_string(floatBins));
  return floatBins;
}

Histogram histogramReference(const Image& image, int floatBins) {
  checkImage(image);
  const int bins = histogramBins(image.type(), floatBins);
  Histogram h = emptyHistogram(image, bins);
  for (int c = 0; c < image.channels(); ++c) {
    std::uint32_t* counts = h.counts.data() + static_cast<std::size_t>(c) * bins;
    if (image.type() == PixelType::U8) {
      for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) ++counts[image.at<std::uint8_t>(x, y, c)];
      continue;
    }
    const Range r = rangeOf(image, c, 0, image.height());
    setRange(h, c, r);
    if (!r.any()) continue;
    if (image.type() == PixelType::U16) {
      // Integer bins: (v - lo) * bins / (hi - lo + 1), written out in plain arithmetic.
      const long long lo = static_cast<long long>(r.lo), span = static_cast<long long>(r.hi) - lo + 1;
      for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) ++counts[(image.at<std::uint16_t>(x, y, c) - lo) * bins / span];
      continue;
    }
    const double scale = r.hi > r.lo ? bins / (r.hi - r.lo) : 0.0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) {
        const double v = sample(image, x, y, c);
        if (!std::isfinite(v)) continue;
        const auto b = static_cast<long long>((v - r.lo) * scale);
        ++counts[std::clamp<long long>(b, 0, bins - 1)];
      }
  }
  return h;
}

Histogram histogramCpu(const Image& image, int floatBins, const CpuControl& control) {
  checkImage(image);
  const int bins = histogramBins(image.type(), floatBins);
  Histogram h = emptyHistogram(image, bins);
  const cv::Mat all = asMat(image);
  std::mutex merge;
  try {
    for (int c = 0; c < image.channels(); ++c) {
      control.throwIfCancelled();
      std::uint32_t* counts = h.counts.data() + static_cast<std::size_t>(c) * bins;
      Range r;
      if (image.type() != PixelType::U8) {
        parallelRows(image.height(), [&](int a, int b) {
          const Range s = rangeOf(image, c, a, b);
          std::lock_guard lock(merge);
          r.lo = std::min(r.lo, s.lo);
          r.hi = std::max(r.hi, s.hi);
          r.nans += s.nans;
        });
        setRange(h, c, r);
        if (!r.any()) continue;
      }
      if (image.type() == PixelType::U16) {
        // calcHist bins 16-bit samples over a float range; the integer bins are counted directly.
        const int lo = static_cast<int>(r.lo), hi = static_cast<int>(r.hi);
        parallelRows(image.height(), [&](int a, int b) {
          std::vector<std::uint32_t> local(bins, 0);
          for (int y = a; y < b; ++y) {
            const std::uint16_t* row = image.row<std::uint16_t>(y);
            for (int x = 0; x < image.width(); ++x)
              ++local[kernels::histogramBinU16(row[static_cast<std::size_t>(x) * image.channels() + c], lo, hi, bins)];
          }
          std::lock_guard lock(merge);
          for (int i = 0; i < bins; ++i) counts[i] += local[i];
        });
        control.report(static_cast<double>(c + 1) / image.channels());
        continue;
      }
      if (image.type() == PixelType::F64) {
        const double scale = r.hi > r.lo ? bins / (r.hi - r.lo) : 0.0;
        parallelRows(image.height(), [&](int a, int b) {
          std::vector<std::uint32_t> local(bins, 0);
          for (int y = a; y < b; ++y) {
            const double* row = image.row<double>(y);
            for (int x = 0; x < image.width(); ++x) {
              const double v = row[static_cast<std::size_t>(x) * image.channels() + c];
              if (std::isfinite(v)) ++local[kernels::histogramBin(v, r.lo, scale, bins)];
            }
          }
          std::lock_guard lock(merge);
          for (int i = 0; i < bins; ++i) counts[i] += local[i];
        });
        continue;
      }
      // calcHist's upper bound is exclusive: the largest float sample needs the next float above it.
      float range[2] = {0.f, 256.f};
      if (image.type() == PixelType::F32) {
        range[0] = static_cast<float>(r.lo);
        range[1] = std::nextafter(static_cast<float>(r.hi), std::numeric_limits<float>::infinity());
      }
      const float* ranges[] = {range};
      const int histBins = image.type() == PixelType::F32 && r.hi == r.lo ? 1 : bins;
      parallelRows(image.height(), [&](int a, int b) {
        const cv::Mat strip = all.rowRange(a, b);
        cv::Mat hist;
        cv::calcHist(&strip, 1, &c, cv::Mat(), hist, 1, &histBins, ranges, true, false);
        std::lock_guard lock(merge);
        for (int i = 0; i < histBins; ++i) counts[i] += static_cast<std::uint32_t>(std::lround(hist.at<float>(i)));
      });
      // calcHist clamps a NaN's bin (it fails both range checks) into bin 0; the definition skips NaN.
      counts[0] -= static_cast<std::uint32_t>(r.nans);
      control.report(static_cast<double>(c + 1) / image.channels());
    }
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the histogram baseline");
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// GPU

HistogramGpu::HistogramGpu(int floatBins) : floatBins_(histogramBins(PixelType::F32, floatBins)) {}

void HistogramGpu::run(GpuContext& gpu, const DeviceImage& image) {
  if (image.empty()) throw std::invalid_argument("cannot take the histogram of an empty image");
  const int bins = histogramBins(image.type(), floatBins_);
  const int channels = image.channels();
  counts_.reserve(static_cast<std::size_t>(channels) * bins * sizeof(unsigned));
  ranges_.reserve(static_cast<std::size_t>(channels) * sizeof(kernels::RangeCode));
  channels_ = channels;
  bins_ = bins;
  type_ = image.type();
  cudaStream_t stream = gpu.stream();
  GPULAB_CUDA_CHECK(
      cudaMemsetAsync(counts_.data(), 0, static_cast<std::size_t>(channels) * bins * sizeof(unsigned), stream));
  auto* counts = counts_.as<unsigned>();
  auto* ranges = ranges_.as<kernels::RangeCode>();
  for (int c = 0; c < channels; ++c) {
    unsigned* planeCounts = counts + static_cast<std::size_t>(c) * bins;
    switch (image.type()) {
      case PixelType::U8:
        kernels::launchHistogram<std::uint8_t>(planeOf<std::uint8_t>(image, c), nullptr, bins, planeCounts, stream);
        break;
      case PixelType::U16:
        kernels::launchPlaneRange<std::uint16_t>(planeOf<std::uint16_t>(image, c), ranges + c, stream);
        kernels::launchHistogram<std::uint16_t>(planeOf<std::uint16_t>(image, c), ranges + c, bins, planeCounts,
                                                stream);
        break;
      case PixelType::F32:
        kernels::launchPlaneRange<float>(planeOf<float>(image, c), ranges + c, stream);
        kernels::launchHistogram<float>(planeOf<float>(image, c), ranges + c, bins, planeCounts, stream);
        break;
      case PixelType::F64:
        kernels::launchPlaneRange<double>(planeOf<double>(image, c), ranges + c, stream);
        kernels::launchHistogram<double>(planeOf<double>(image, c), ranges + c, bins, planeCounts, stream);
        break;
    }
  }
}

Histogram HistogramGpu::download(GpuContext& gpu) {
  if (channels_ == 0) throw std::logic_error("HistogramGpu::download before any run");
  const std::size_t countBytes = static_cast<std::size_t>(channels_) * bins_ * sizeof(unsigned);
  const std::size_t rangeBytes = static_cast<std::size_t>(channels_) * sizeof(kernels::RangeCode);
  hostCounts_.reserve(countBytes);
  hostRanges_.reserve(rangeBytes);
  cudaStream_t stream = gpu.stream();
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(hostCounts_.data(), counts_.data(), countBytes, cudaMemcpyDeviceToHost, stream));
  if (type_ != PixelType::U8)
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(hostRanges_.data(), ranges_.data(), rangeBytes, cudaMemcpyDeviceToHost, stream));
  gpu.synchronize();
  Histogram h;
  h.channels = channels_;
  h.bins = bins_;
  const auto* counts = hostCounts_.as<unsigned>();
  h.counts.assign(counts, counts + static_cast<std::size_t>(channels_) * bins_);
  h.lo.assign(channels_, 0.0);
  h.hi.assign(channels_, 255.0);
  if (type_ != PixelType::U8) {
    const auto* ranges = hostRanges_.as<kernels::RangeCode>();
    for (int c = 0; c < channels_; ++c) {
      Range r;
      if (ranges[c].lo <= ranges[c].hi) {
        r.lo = kernels::decodeOrdered(ranges[c].lo);
        r.hi = kernels::decodeOrdered(ranges[c].hi);
      }
      setRange(h, c, r);
    }
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// Line profile

LineProfile lineProfile(const Image& image, double x0, double y0, double x1, double y1) {
  if (image.empty()) throw std::invalid_argument("cannot take a line profile of an empty image");
  for (double v : {x0, y0, x1, y1})
    if (!std::isfinite(v)) throw std::invalid_argument("a line profile's end points must be finite numbers");
  LineProfile p;
  p.channels = image.channels();
  p.values.resize(p.channels);
  const double dx = x1 - x0, dy = y1 - y0;
  const auto steps = static_cast<int>(std::ceil(std::max(std::abs(dx), std::abs(dy))));
  const int n = std::max(1, std::min(steps, 4 * kMaxImageDimension) + 1);
  for (int i = 0; i < n; ++i) {
    const double t = n == 1 ? 0.0 : static_cast<double>(i) / (n - 1);
    const int x = std::clamp(static_cast<int>(std::floor(x0 + t * dx)), 0, image.width() - 1);
    const int y = std::clamp(static_cast<int>(std::floor(y0 + t * dy)), 0, image.height() - 1);
    p.xs.push_back(x);
    p.ys.push_back(y);
    for (int c = 0; c < p.channels; ++c) p.values[c].push_back(sample(image, x, y, c));
  }
  return p;
}

}  // namespace gpulab
