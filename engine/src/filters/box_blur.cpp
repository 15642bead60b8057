#include "gpulab/filters/box_blur.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/box_blur.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"

namespace gpulab {

namespace {

using kernels::BoxBlurPath;

/// The kernel path of an engine path (Direct is the engine's own: Auto for the kernels).
BoxBlurPath toKernel(BoxGpuPath path) {
  switch (path) {
    case BoxGpuPath::TiledRing:
      return BoxBlurPath::TiledRing;
    case BoxGpuPath::TiledStream:
      return BoxBlurPath::TiledStream;
    case BoxGpuPath::SummedArea:
      return BoxBlurPath::SummedArea;
    case BoxGpuPath::Fused:
      return BoxBlurPath::Fused;
    case BoxGpuPath::Sweep:
      return BoxBlurPath::Sweep;
    default:
      return BoxBlurPath::Auto;
  }
}
using namespace cv_interop;

void checkType(const ImageShape& in) {
  if (in.type == PixelType::F64)
    throw std::invalid_argument("box blur takes u8, u16 and f32 images, not f64: convert the image to f32 first");
  validateImageShape(in.width, in.height, in.channels);
}

bool alphaPassesThrough(PixelType type, int channels) {
  return (type == PixelType::U8 || type == PixelType::U16) && channels == 4;
}

/// The constant border's value in samples of T: integers rounded to nearest and saturated.
template <class T>
T borderFill(double value) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::clamp(std::nearbyint(value), 0.0, static_cast<double>(std::numeric_limits<T>::max())));
  else
    return static_cast<T>(value);
}

/// The constant border's value as the samples of `type` hold it, in double.
double borderFillOf(PixelType type, double value) {
  switch (type) {
    case PixelType::U8:
      return borderFill<std::uint8_t>(value);
    case PixelType::U16:
      return borderFill<std::uint16_t>(value);
    default:
      return borderFill<float>(value);
  }
}

// ---------------------------------------------------------------------------------------------
// Naive reference: separable sums in double, every sample through borderIndex.

template <class T>
void referencePlane(const Image& in, Image& out, int c, int radius, const Border& border) {
  const int width = in.width(), height = in.height();
  const double fill = static_cast<double>(borderFill<T>(border.value));
  const double side = 2.0 * radius + 1.0;
  std::vector<double> rowSums(static_cast<std::size_t>(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int i = -radius; i <= radius; ++i) {
        const int xi = borderIndex(x + i, width, border.mode);
        sum += xi < 0 ? fill : static_cast<double>(in.at<T>(xi, y, c));
      }
      rowSums[static_cast<std::size_t>(y) * width + x] = sum;
    }
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int j = -radius; j <= radius; ++j) {
        const int yj = borderIndex(y + j, height, border.mode);
        sum += yj < 0 ? side * fill : rowSums[static_cast<std::size_t>(yj) * width + x];
      }
      const double mean = sum / (side * side);
      if constexpr (std::is_integral_v<T>)
        out.at<T>(x, y, c) = static_cast<T>(std::floor(mean + 0.5));  // never a tie: the area is odd
      else
        out.at<T>(x, y, c) = static_cast<T>(mean);
    }
}

// ---------------------------------------------------------------------------------------------
// CPU baseline: OpenCV on every core

constexpr std::size_t kDirectBudgetBytes = std::size_t{512} << 20;
constexpr std::size_t kStripBudgetBytes = std::size_t{16} << 20;

// cv::blur over (2r+1)^2 for one single-channel plane, strips in parallel.
// control.cancel is checked between rounds of bands (at least 4 windows tall: a quarter more at most).
void blurDirect(const cv::Mat& src, cv::Mat& dst, int r, BorderMode mode, const CpuControl& control) {
  const int minRows = std::max(16, 4 * (2 * r + 1));
  const cv::Size window(2 * r + 1, 2 * r + 1);
  if (mode == BorderMode::Wrap) {
    cv::Mat padded;
    cv::copyMakeBorder(src, padded, r, r, r, r, cv::BORDER_WRAP);
    parallelRows(
        control, src.rows,
        [&](int a, int b) {
          cv::Mat strip = dst.rowRange(a, b);
          cv::blur(padded(cv::Rect(r, r + a, src.cols, b - a)), strip, window, cv::Point(-1, -1),
                   cv::BORDER_REFLECT_101);
        },
        0, minRows);
    return;
  }
  parallelRows(
      control, src.rows,
      [&](int a, int b) {
        cv::Mat strip = dst.rowRange(a, b);
        cv::blur(src.rowRange(a, b), strip, window, cv::Point(-1, -1), cvBorder(mode));
      },
      0, minRows);
}

// Means over 2r+1 samples along each row of src (CV_8U or CV_32F) into dst (CV_32F, same size).
void blurRows(const cv::Mat& src, cv::Mat& dst, int r, BorderMode mode) {
  const cv::Size window(2 * r + 1, 1);
  if (mode == BorderMode::Wrap) {
    const std::size_t rowBytes = (static_cast<std::size_t>(src.cols) + 2 * static_cast<std::size_t>(r)) * 8;
    const auto strips = static_cast<int>(std::max<std::size_t>(static_cast<std::size_t>(cv::getNumThreads()),
                                                               rowBytes * src.rows / kStripBudgetBytes + 1));
    parallelRows(
        src.rows,
        [&](int a, int b) {
          cv::Mat padded;
          cv::copyMakeBorder(src.rowRange(a, b), padded, 0, 0, r, r, cv::BORDER_WRAP);
          cv::Mat strip = dst.rowRange(a, b);
          cv::boxFilter(padded(cv::Rect(r, 0, src.cols, b - a)), strip, CV_32F, window, cv::Point(-1, -1), true,
                        cv::BORDER_REFLECT_101);
        },
        strips);
    return;
  }
  parallelRows(src.rows, [&](int a, int b) {
    cv::Mat strip = dst.rowRange(a, b);
    cv::boxFilter(src.rowRange(a, b), strip, CV_32F, window, cv::Point(-1, -1), true, cvBorder(mode));
  });
}

void transposeParallel(const cv::Mat& src, cv::Mat& dst) {
  dst.create(src.cols, src.rows, src.type());
  parallelRows(src.cols, [&](int a, int b) {
    cv::Mat strip = dst.rowRange(a, b);
    cv::transpose(src.colRange(a, b), strip);
  });
}

// Rows, transpose, rows (the columns), transpose back: float throughout, buffers of image size.
void blurSeparable(const cv::Mat& src, cv::Mat& dst, int r, BorderMode mode, const CpuControl& control, double base,
                   double span) {
  cv::Mat rows(src.size(), CV_32F), turned, columns, back;
  blurRows(src, rows, r, mode);
  control.throwIfCancelled();
  control.report(base + 0.4 * span);
  transposeParallel(rows, turned);
  columns.create(turned.size(), CV_32F);
  blurRows(turned, columns, r, mode);
  control.throwIfCancelled();
  control.report(base + 0.8 * span);
  transposeParallel(columns, back);
  back.convertTo(dst, dst.type());  // u8: rounded to nearest, saturated
}

bool directFits(int width, int height, int r, BorderMode mode) {
  const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height),
             k = 2 * static_cast<std::size_t>(r);
  // cv::blur keeps about 2r+1 rows of double sums, (width + 2r) wide, per strip in flight.
  std::size_t bytes = (k + 4) * (w + k) * 8 * static_cast<std::size_t>(std::max(1, cv::getNumThreads()));
  if (mode == BorderMode::Wrap) bytes += (w + k) * (h + k) * 4;
  return bytes <= kDirectBudgetBytes;
}

void blurPlane(const cv::Mat& src, cv::Mat& dst, int r, const Border& border, BoxCpuMethod method,
               const CpuControl& control, double base, double span) {
  const bool separable = method == BoxCpuMethod::Separable ||
                         (method == BoxCpuMethod::Auto && !directFits(src.cols, src.rows, r, border.mode));
  const double fill = borderFillOf(
      src.depth() == CV_8U ? PixelType::U8 : (src.depth() == CV_16U ? PixelType::U16 : PixelType::F32), border.value);
  if (border.mode == BorderMode::Constant && fill != 0.0) {
    // OpenCV's filters pad with zeros only. The mean is linear and the weights sum to one, so
    // blur(x) with fill v equals blur(x - v) with fill 0, plus v.
    cv::Mat shifted, blurred(src.size(), CV_32F);
    src.convertTo(shifted, CV_32F, 1.0, -fill);
    if (separable)
      blurSeparable(shifted, blurred, r, border.mode, control, base, span);
    else
      blurDirect(shifted, blurred, r, border.mode, control);
    blurred.convertTo(dst, dst.type(), 1.0, fill);
    return;
  }
  if (separable)
    blurSeparable(src, dst, r, border.mode, control, base, span);
  else
    blurDirect(src, dst, r, border.mode, control);
}

// cv::blur's running sums carry a NaN or inf on along the row and down the column, far past the
// windows that hold it (and inf - inf is NaN). Its finite outputs are exact (the sums are absorbing:
// box_blur.cuh, "Non-finite samples"), so the non-finite ones are recomputed from their windows.
// Cost on finite f32 input: one pass reading the output, branch-free bit tests on all cores; none
// for u8 and u16.
void repairNonFinite(const Image& in, Image& out, int radius, const Border& border, int filtered) {
  if (out.type() != PixelType::F32 || radius == 0) return;
  const kernels::Plane<const float> source{in.row<float>(0), in.width(), in.height(), in.rowBytes()};
  const float fill = borderFill<float>(border.value);
  const int channels = out.channels();
  const int samples = out.width() * channels;
  parallelRows(out.height(), [&](int a, int b) {
    for (int y = a; y < b; ++y) {
      float* row = out.row<float>(y);
      std::uint32_t exponentsFull = 0;  // bit 31 set where some sample's exponent is all ones
      for (int i = 0; i < samples; ++i)
        exponentsFull |= (std::bit_cast<std::uint32_t>(row[i]) & 0x7f800000u) + 0x00800000u;
      if ((exponentsFull & 0x80000000u) == 0) continue;
      for (int i = 0; i < samples; ++i) {
        const int c = i % channels;
        if (c < filtered && !kernels::boxFinite(row[i]))
          row[i] =
              kernels::boxWindowMeanExact(source, channels, i / channels, c, y, radius, toKernel(border.mode), fill);
      }
    }
  });
}

/// visitAnySampleType for the types box blur takes (u8, u16, f32); f64 throws.
template <class F>
void visitType(PixelType type, F&& f) {
  if (type == PixelType::F64)
    throw std::invalid_argument("box blur takes u8, u16 and f32 images, not f64: convert the image to f32 first");
  visitAnySampleType(type, [&](auto sample) {
    if constexpr (!std::is_same_v<decltype(sample), double>) f(sample);
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// BoxBlur

BoxBlur::BoxBlur(int radius, Border border) : radius_(radius), border_(border) {
  if (radius < 0)
    throw std::invalid_argument("box blur radius " + std::to_string(radius) + " is negative: use 0 to " +
                                std::to_string(kMaxBoxRadius));
  if (radius > kMaxBoxRadius)
    throw std::invalid_argument("box blur radius " + std::to_string(radius) + " exceeds the largest, " +
                                std::to_string(kMaxBoxRadius) + " (a window wider than any image)");
  if (!std::isfinite(border.value)) throw std::invalid_argument("the border value must be a finite number");
}

struct BoxBlur::GpuPlan {
  kernels::BoxBlurPlan plan;
  PixelType type = PixelType::U8;
  bool interleavedRuns = false;  ///< the last run took an interleaved image (one launch of interleavedPath)
  BoxBlurPath interleavedPath = BoxBlurPath::Auto;
  bool directRuns = false;  ///< the last run took the direct path (a small window)
};

namespace {

/// The direct path (BoxGpuPath::Direct) runs for this radius, type and path choice.
bool takesDirect(BoxGpuPath path, int radius, PixelType type) {
  const bool fits = radius >= 1 && radius <= kBoxDirectMaxRadius && (type == PixelType::U8 || type == PixelType::F32);
  return fits && (path == BoxGpuPath::Auto || path == BoxGpuPath::Direct);
}

}  // namespace

DeviceLayout BoxBlur::gpuLayout(const ImageShape& in) const {
  // The sweep and fused paths filter every channel of interleaved rows: photos without an alpha to keep
  // (2 or 3 channels; 4 in f32, where alpha is filtered too), radii it takes. Auto keeps photos
  // interleaved at the direct path's radii too: the sweep on interleaved rows beat the direct kernel
  // on planes (6000x4000 RGB u8 r=2 on an H100: 0.113 against 0.159 ms).
  if (in.channels < 2 || radius_ < 1 ||
      (gpuPath_ != BoxGpuPath::Auto && gpuPath_ != BoxGpuPath::Fused && gpuPath_ != BoxGpuPath::Sweep) ||
      in.type == PixelType::F64 || alphaPassesThrough(in.type, in.channels))
    return DeviceLayout::Planar;
  int largest = 0;
  visitType(in.type, [&](auto sample) {
    largest = kernels::boxBlurMaxInterleavedRadius<decltype(sample)>(in.channels, toKernel(gpuPath_));
  });
  return radius_ <= largest ? DeviceLayout::Interleaved : DeviceLayout::Planar;
}

BoxBlur::~BoxBlur() = default;
BoxBlur::BoxBlur(BoxBlur&&) noexcept = default;
BoxBlur& BoxBlur::operator=(BoxBlur&&) noexcept = default;

void BoxBlur::setGpuPath(BoxGpuPath path) noexcept {
  gpuPath_ = path;
  plan_.reset();
}

OperationInfo boxBlurInfo() {
  OperationInfo info;
  info.name = "box";
  info.title = "Box blur";
  info.summary = "the mean over a (2r+1) x (2r+1) window";
  const ParamInfo radius = ParamInfo::integer("radius", "window (2R+1) x (2R+1), R >= 0", 0, kMaxBoxRadius);
  const ParamInfo path = ParamInfo::choice(
      "path",
      "GPU kernel: auto (default) | ring | stream | sat (summed-area table) | fused | direct (radius 1-2) | sweep",
      enumNameList<BoxGpuPath>(), "auto");
  info.params = {radius};
  for (ParamInfo& p : borderParamInfos()) info.params.push_back(std::move(p));
  info.params.push_back(path);
  info.make = [radius, path](const ParamValues& values) -> std::unique_ptr<Operation> {
    auto box = std::make_unique<BoxBlur>(intParam(values, radius), borderFromParams(values));
    box->setGpuPath(parseEnumOrThrow<BoxGpuPath>(choiceParam(values, path)));
    return box;
  };
  return info;
}

std::string BoxBlur::describe() const { return "box r=" + std::to_string(radius_) + " " + gpulab::describe(border_); }

ParamValues BoxBlur::params() const {
  ParamValues values{{"radius", std::to_string(radius_)}, {"path", std::string(toString(gpuPath_))}};
  addBorderParams(values, border_);
  return values;
}

std::string BoxBlur::methodNote(Side side) const {
  if (side == Side::Gpu && plan_ && plan_->interleavedRuns)
    return "GPU path " + std::string(kernels::toString(plan_->interleavedPath)) + ", interleaved channels";
  if (side == Side::Gpu && plan_ && plan_->directRuns) return "GPU path direct";
  if (side != Side::Gpu || !plan_ || plan_->plan.device < 0) return {};
  return "GPU path " + std::string(kernels::toString(plan_->plan.path));
}

ImageShape BoxBlur::outputShape(const ImageShape& in) const {
  checkType(in);
  return in;
}

void BoxBlur::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("box blur cannot run in place: give it a separate output image");
  if (in.interleaved()) {
    // A photo in its own layout: one launch over the interleaved rows, every channel.
    if (gpuLayout(shape) != DeviceLayout::Interleaved)
      throw std::logic_error("box blur takes this image planar on the GPU (Operation::gpuLayout)");
    if (out.empty() || !out.sameShape(in))
      out = DeviceImage(shape.width, shape.height, shape.channels, shape.type, DeviceLayout::Interleaved);
    if (!plan_) plan_ = std::make_unique<GpuPlan>();
    visitType(shape.type, [&](auto sample) {
      using T = decltype(sample);
      plan_->interleavedPath = kernels::boxBlurResolveInterleavedPath<T>(toKernel(gpuPath_), shape.channels, radius_);
      kernels::launchBoxBlurInterleaved<T>(pixelsOf<T>(in), pixelsOf<T>(out), shape.channels, radius_,
                                           toKernel(border_.mode), borderFill<T>(border_.value), gpu.stream(),
                                           plan_->interleavedPath);
    });
    plan_->interleavedRuns = true;
    return;
  }
  if (out.empty() || !out.sameShape(in)) out = DeviceImage(shape.width, shape.height, shape.channels, shape.type);
  if (plan_) plan_->interleavedRuns = false;
  const bool alpha = alphaPassesThrough(shape.type, shape.channels);
  if (gpuPath_ == BoxGpuPath::Direct && !takesDirect(gpuPath_, radius_, shape.type))
    throw std::invalid_argument("the direct box blur path takes u8 and f32 images of radius 1 to " +
                                std::to_string(kBoxDirectMaxRadius) + ": use path auto");
  if (takesDirect(gpuPath_, radius_, shape.type)) {
    // A small window: the direct kernel, every filtered plane in one launch.
    const int planes = alpha ? 3 : shape.channels;
    visitType(shape.type, [&](auto sample) {
      using T = decltype(sample);
      if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, float>) {
        const kernels::Plane<const T> inStack{planeOf<T>(in, 0).data, in.width(), in.height(), in.pitch()};
        kernels::launchBoxBlurDirect<T>(inStack, stackOf<T>(out), planes, radius_, toKernel(border_.mode),
                                        borderFill<T>(border_.value), gpu.stream());
        if (alpha)
          GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planeOf<T>(out, 3).data, out.pitch(), planeOf<T>(in, 3).data, in.pitch(),
                                              shape.width * sizeof(T), shape.height, cudaMemcpyDeviceToDevice,
                                              gpu.stream()));
      }
    });
    if (!plan_) plan_ = std::make_unique<GpuPlan>();
    plan_->directRuns = true;
    return;
  }
  if (plan_) plan_->directRuns = false;
  visitType(shape.type, [&](auto sample) {
    using T = decltype(sample);
    if (!plan_) plan_ = std::make_unique<GpuPlan>();
    kernels::BoxBlurPlan& plan = plan_->plan;
    if (plan.device != gpu.device() || plan.width != shape.width || plan.height != shape.height ||
        plan_->type != shape.type) {
      plan = kernels::planBoxBlur<T>(shape.width, shape.height, radius_, toKernel(gpuPath_));
      plan_->type = shape.type;
    }
    if (plan.scratchBytes > 0) gpu.scratch().reserve(plan.scratchBytes);
    const T fill = borderFill<T>(border_.value);
    for (int c = 0; c < shape.channels; ++c) {
      if (alpha && c == 3) {
        GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(planeOf<T>(out, c).data, out.pitch(), planeOf<T>(in, c).data, in.pitch(),
                                            shape.width * sizeof(T), shape.height, cudaMemcpyDeviceToDevice,
                                            gpu.stream()));
        continue;
      }
      kernels::launchBoxBlur<T>(plan, planeOf<T>(in, c), planeOf<T>(out, c), toKernel(border_.mode), fill,
                                gpu.scratch().data(), gpu.scratch().size(), gpu.stream());
    }
  });
}

Image BoxBlur::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, shape.channels, shape.type);
  const int filtered = alphaPassesThrough(shape.type, shape.channels) ? 3 : shape.channels;
  try {
    cv::Mat source = asMat(in), target = asMat(out);
    // Every channel filtered, direct method, a border OpenCV pads itself: one cv::blur over the
    // interleaved image gives what the plane-by-plane loop below gives (OpenCV filters each channel
    // with the same arithmetic) without extracting and inserting planes, a third of the memory
    // traffic of a photo.
    const bool zeroFill = border_.mode != BorderMode::Constant || borderFillOf(shape.type, border_.value) == 0;
    if (shape.channels > 1 && filtered == shape.channels && radius_ > 0 && border_.mode != BorderMode::Wrap &&
        zeroFill && cpuMethod_ != BoxCpuMethod::Separable &&
        directFits(shape.width * shape.channels, shape.height, radius_, border_.mode)) {
      control.throwIfCancelled();
      blurDirect(source, target, radius_, border_.mode, control);
      repairNonFinite(in, out, radius_, border_, filtered);
      control.report(1.0);
      return out;
    }
    for (int c = 0; c < shape.channels; ++c) {
      control.throwIfCancelled();
      const double base = static_cast<double>(c) / shape.channels, span = 1.0 / shape.channels;
      cv::Mat plane, result;
      if (shape.channels == 1) {
        plane = source;
        result = target;
      } else {
        cv::extractChannel(source, plane, c);
        result.create(plane.size(), plane.type());
      }
      if (c >= filtered || radius_ == 0)
        plane.copyTo(result);
      else
        blurPlane(plane, result, radius_, border_, cpuMethod_, control, base, span);
      if (shape.channels > 1) cv::insertChannel(result, target, c);
      control.report(base + span);
    }
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the box blur baseline");
  }
  repairNonFinite(in, out, radius_, border_, filtered);
  return out;
}

Image BoxBlur::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  Image out(shape.width, shape.height, shape.channels, shape.type);
  const int filtered = alphaPassesThrough(shape.type, shape.channels) ? 3 : shape.channels;
  visitType(shape.type, [&](auto sample) {
    using T = decltype(sample);
    for (int c = 0; c < shape.channels; ++c) {
      if (c < filtered) {
        referencePlane<T>(in, out, c, radius_, border_);
        continue;
      }
      for (int y = 0; y < shape.height; ++y)
        for (int x = 0; x < shape.width; ++x) out.at<T>(x, y, c) = in.at<T>(x, y, c);
    }
  });
  return out;
}

}  // namespace gpulab
