#include "gpulab/filters/median.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/median.cuh"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"
#include "internal/planewise.hpp"

namespace gpulab {

using namespace cv_interop;

namespace {

static_assert(kMaxMedianSize / 2 == kernels::kMaxMedianRadius);
static_assert(static_cast<int>(MedianSelect::Histogram) == static_cast<int>(kernels::MedianPath::Histogram));

kernels::MedianPath toKernel(MedianSelect select) { return static_cast<kernels::MedianPath>(select); }

template <class T>
std::uint32_t keyOf(T v) {
  return kernels::medianKey(v);
}

// The padded image (border by `r` on every side), as cv::copyMakeBorder makes it.
cv::Mat padded(const cv::Mat& src, int r, const Border& border, double fill) {
  cv::Mat out;
  cv::copyMakeBorder(src, out, r, r, r, r, cvBorder(border.mode), cv::Scalar::all(fill));
  return out;
}

// gpulab's all-core f32 baseline: nth_element over each window's keys, one row strip per thread.
void nthElementMedian(const cv::Mat& pad, Image& out, int size, int filtered, const CpuControl& control) {
  const int width = out.width(), channels = out.channels();
  const int count = size * size;
  parallelRows(out.height(), [&](int a, int b) {
    std::vector<std::uint32_t> window(static_cast<std::size_t>(count));
    for (int y = a; y < b; ++y) {
      if (control.cancelled()) return;
      for (int x = 0; x < width; ++x)
        for (int c = 0; c < filtered; ++c) {
          std::size_t n = 0;
          for (int dy = 0; dy < size; ++dy) {
            const float* row = pad.ptr<float>(y + dy);
            for (int dx = 0; dx < size; ++dx) window[n++] = keyOf(row[(x + dx) * channels + c]);
          }
          std::nth_element(window.begin(), window.begin() + count / 2, window.end());
          out.at<float>(x, y, c) = kernels::medianValue<float>(window[static_cast<std::size_t>(count / 2)]);
        }
    }
  });
  control.throwIfCancelled();
}

// cv::medianBlur per row strip of the padded image: each strip takes its 2r halo rows along, so
// the strip's interior never sees medianBlur's own (replicated) border.
// With a cancel flag, bands of at least 8 window sizes: each starts its window histograms over its
// halo again, an eighth more at most (bands of 4 windows cost 17% more here), and only where one
// such band takes longer than a round's aim.
void openCvMedian(const cv::Mat& pad, cv::Mat& dst, int size, const CpuControl& control) {
  const int r = size / 2;
  parallelRows(
      control, dst.rows,
      [&](int a, int b) {
        cv::Mat result;
        cv::medianBlur(pad.rowRange(a, b + 2 * r), result, size);
        result(cv::Rect(r, r, dst.cols, b - a)).copyTo(dst.rowRange(a, b));
      },
      0, std::max(16, 8 * size));
}

}  // namespace

Median::Median(int size, Border border) : size_(size), border_(border) {
  if (size < 1 || size > kMaxMedianSize)
    throw std::invalid_argument("median size " + std::to_string(size) + " is not allowed: use an odd size 1 to " +
                                std::to_string(kMaxMedianSize));
  if (size % 2 == 0)
    throw std::invalid_argument("median size " + std::to_string(size) + " is even: use an odd size (1, 3, 5 ... " +
                                std::to_string(kMaxMedianSize) + ")");
  if (!std::isfinite(border.value)) throw std::invalid_argument("the border value must be a finite number");
}

OperationInfo medianInfo() {
  OperationInfo info;
  info.name = "median";
  info.title = "Median";
  info.summary = "the median of a size x size window (exact)";
  const ParamInfo size = ParamInfo::integer("size", "odd window side, 1 to 63", 1, kMaxMedianSize, "5");
  const ParamInfo select =
      ParamInfo::choice("select", "GPU selection: auto (default) | forgetful (up to 7x7) | radix | histogram (u8)",
                        enumNameList<MedianSelect>(), "auto");
  info.params = {size};
  for (ParamInfo& p : borderParamInfos()) info.params.push_back(std::move(p));
  info.params[1].defaultValue = "replicate";  // as cv::medianBlur
  info.params.push_back(select);
  info.make = [size, select](const ParamValues& values) -> std::unique_ptr<Operation> {
    ParamValues withBorder = values;
    withBorder.try_emplace("border", "replicate");
    auto median = std::make_unique<Median>(intParam(values, size), borderFromParams(withBorder));
    median->setSelect(parseEnumOrThrow<MedianSelect>(choiceParam(values, select)));
    return median;
  };
  return info;
}

std::string Median::describe() const {
  return "median " + std::to_string(size_) + "x" + std::to_string(size_) + " " + gpulab::describe(border_);
}

ParamValues Median::params() const {
  ParamValues values{{"size", std::to_string(size_)}, {"select", std::string(toString(select_))}};
  addBorderParams(values, border_);
  return values;
}

std::string Median::methodUsed(Side side) const {
  const std::string& used = side == Side::Cpu ? cpuUsed_ : gpuUsed_;
  return used.empty() ? method() : used;
}

std::string Median::methodNote(Side side) const {
  const std::string used = methodUsed(side);
  if (used == "forgetful") return "GPU forgetful selection (min/max network in registers; u8 two pixels a word)";
  if (used == "radix") return "GPU bitwise radix selection over a shared-memory tile";
  if (used == "histogram") return "GPU sliding histogram per column strip with a running median";
  if (used == "medianBlur") return "cv::medianBlur on " + std::to_string(cpuThreads()) + " threads";
  if (used == "nth_element")
    return "gpulab's std::nth_element baseline on " + std::to_string(cpuThreads()) +
           " threads (cv::medianBlur takes f32 up to 5x5 only)";
  return {};
}

void Median::setSelect(MedianSelect select) {
  if (select == MedianSelect::Forgetful && size_ > 7)
    throw std::invalid_argument("the forgetful selection takes sizes up to 7, not " + std::to_string(size_) +
                                ": use auto, radix or histogram");
  select_ = select;
}

ImageShape Median::outputShape(const ImageShape& in) const {
  planewise::checkU8OrF32(in, "the median");
  if (select_ == MedianSelect::Histogram && in.type != PixelType::U8)
    throw std::invalid_argument("the histogram median takes u8 images, not " + std::string(toString(in.type)) +
                                ": use select auto, forgetful or radix");
  return in;
}

void Median::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("the median cannot run in place: give it a separate output image");
  planewise::ensureShape(out, shape);
  planewise::visitU8OrF32(shape.type, "the median", [&](auto sample) {
    using T = decltype(sample);
    const T fill = planewise::borderSample<T>(border_.value);
    for (int c = 0; c < shape.channels; ++c) {
      if (c >= planewise::filteredChannels(shape))
        planewise::copyPlaneAsync(in, out, c, gpu.stream());
      else
        kernels::launchMedian<T>(planeOf<T>(in, c), planeOf<T>(out, c), size_ / 2, toKernel(border_.mode), fill,
                                 toKernel(select_), gpu.stream());
    }
  });
  static constexpr const char* kNames[] = {"auto", "forgetful", "radix", "histogram"};
  gpuUsed_ = size_ == 1 ? "copy"
                        : kNames[static_cast<int>(
                              kernels::resolveMedianPath(toKernel(select_), size_ / 2, shape.type == PixelType::U8))];
}

Image Median::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, shape.channels, shape.type);
  const int r = size_ / 2;
  const double fill = shape.type == PixelType::U8 ? planewise::borderU8(border_.value)
                                                  : static_cast<double>(static_cast<float>(border_.value));
  control.throwIfCancelled();
  try {
    const cv::Mat source = asMat(in);
    cv::Mat target = asMat(out);
    if (size_ == 1) {
      source.copyTo(target);
    } else if (cpuUsesOpenCv(shape.type)) {
      // cv::medianBlur takes 1, 3 or 4 channels at every size; 2 channels go one at a time.
      if (shape.channels != 2) {
        openCvMedian(padded(source, r, border_, fill), target, size_, control);
      } else {
        for (int c = 0; c < 2; ++c) {
          cv::Mat plane, result(source.size(), CV_MAKETYPE(source.depth(), 1));
          cv::extractChannel(source, plane, c);
          openCvMedian(padded(plane, r, border_, fill), result, size_, control);
          cv::insertChannel(result, target, c);
        }
      }
      if (planewise::alphaPassesThrough(shape.type, shape.channels)) planewise::copyChannel(in, out, 3);
    } else {
      nthElementMedian(padded(source, r, border_, fill), out, size_, shape.channels, control);
    }
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the median baseline");
  }
  cpuUsed_ = size_ == 1 ? "copy" : cpuUsesOpenCv(shape.type) ? "medianBlur" : "nth_element";
  control.report(1.0);
  return out;
}

Image Median::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, shape.channels, shape.type);
  const int r = size_ / 2;
  planewise::visitU8OrF32(shape.type, "the median", [&](auto sample) {
    using T = decltype(sample);
    const T fill = planewise::borderSample<T>(border_.value);
    std::vector<std::uint32_t> window;
    for (int c = 0; c < shape.channels; ++c)
      for (int y = 0; y < shape.height; ++y)
        for (int x = 0; x < shape.width; ++x) {
          if (c >= planewise::filteredChannels(shape)) {
            out.at<T>(x, y, c) = in.at<T>(x, y, c);
            continue;
          }
          window.clear();
          for (int dy = -r; dy <= r; ++dy)
            for (int dx = -r; dx <= r; ++dx) {
              const int xi = borderIndex(x + dx, shape.width, border_.mode);
              const int yi = borderIndex(y + dy, shape.height, border_.mode);
              window.push_back(keyOf(xi < 0 || yi < 0 ? fill : in.at<T>(xi, yi, c)));
            }
          std::sort(window.begin(), window.end());
          out.at<T>(x, y, c) = kernels::medianValue<T>(window[window.size() / 2]);
        }
  });
  return out;
}

}  // namespace gpulab
