#include "gpulab/filters/morphology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/filters/registry.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/morphology.cuh"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"
#include "internal/planewise.hpp"

namespace gpulab {

using namespace cv_interop;

namespace {

constexpr const char* kIgnore = "ignore";

/// The steps of an operation: false = erode, true = dilate.
std::vector<bool> stepsOf(MorphOp op) {
  switch (op) {
    case MorphOp::Erode:
      return {false};
    case MorphOp::Dilate:
      return {true};
    case MorphOp::Open:
      return {false, true};
    case MorphOp::Close:
      return {true, false};
  }
  throw std::invalid_argument("unknown morphology operation");
}

/// The sample outside the image for one step: the border's value, or the one that never wins.
template <class T>
T fillFor(const std::optional<Border>& border, bool dilate) {
  if (border && border->mode == BorderMode::Constant) return planewise::borderSample<T>(border->value);
  if constexpr (sizeof(T) == 1)
    return dilate ? T(0) : T(255);
  else
    return dilate ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
}

BorderMode modeOf(const std::optional<Border>& border) { return border ? border->mode : BorderMode::Constant; }

// One step over channel c of `in` into `out`, in plain loops.
template <class T>
void referenceStep(const Image& in, Image& out, int c, const std::vector<std::pair<int, int>>& spans, int anchor,
                   bool dilate, const std::optional<Border>& border) {
  const T fill = fillFor<T>(border, dilate);
  const BorderMode mode = modeOf(border);
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x) {
      bool first = true;
      T acc{};
      for (int i = 0; i < static_cast<int>(spans.size()); ++i)
        for (int j = spans[static_cast<std::size_t>(i)].first; j < spans[static_cast<std::size_t>(i)].second; ++j) {
          const int xi = borderIndex(x + j - anchor, in.width(), mode);
          const int yi = borderIndex(y + i - anchor, in.height(), mode);
          const T v = xi < 0 || yi < 0 ? fill : in.at<T>(xi, yi, c);
          if (first || (dilate ? acc < v : v < acc)) acc = v;
          first = false;
        }
      out.at<T>(x, y, c) = acc;
    }
}

}  // namespace

std::vector<std::pair<int, int>> morphSpans(MorphShape shape, int size) {
  std::vector<std::pair<int, int>> spans(static_cast<std::size_t>(size), {0, size});
  if (shape == MorphShape::Ellipse) {
    // getStructuringElement(MORPH_ELLIPSE): r = rows / 2, c = cols / 2.
    const int r = size / 2, c = size / 2;
    const double inverse = r > 0 ? 1.0 / (static_cast<double>(r) * r) : 0.0;
    for (int i = 0; i < size; ++i) {
      const int dy = i - r;
      int j1 = 0, j2 = 0;
      if (std::abs(dy) <= r) {
        const int dx = cv::saturate_cast<int>(c * std::sqrt((r * r - dy * dy) * inverse));
        j1 = std::max(c - dx, 0);
        j2 = std::min(c + dx + 1, size);
      }
      spans[static_cast<std::size_t>(i)] = {j1, j2};
    }
  }
  return spans;
}

Morphology::Morphology(MorphOp op, MorphShape shape, int size, std::optional<Border> border)
    : op_(op), shape_(shape), size_(size), border_(border) {
  stepsOf(op);
  if (size < 1 || size > kMaxMorphSize)
    throw std::invalid_argument("morphology size " + std::to_string(size) + " is not allowed: use 1 to " +
                                std::to_string(kMaxMorphSize));
  if (border && !std::isfinite(border->value)) throw std::invalid_argument("the border value must be a finite number");
}

Morphology::~Morphology() = default;
Morphology::Morphology(Morphology&&) noexcept = default;
Morphology& Morphology::operator=(Morphology&&) noexcept = default;

OperationInfo morphologyInfo() {
  OperationInfo info;
  info.name = "morph";
  info.title = "Morphology";
  info.summary = "erosion, dilation, opening or closing with a rectangle or an ellipse";
  const ParamInfo morph =
      ParamInfo::choice("morph", "erode (default) | dilate | open | close", enumNameList<MorphOp>(), "erode");
  const ParamInfo shape =
      ParamInfo::choice("shape", "structuring element: rect (default) | ellipse", enumNameList<MorphShape>(), "rect");
  const ParamInfo size = ParamInfo::integer("size", "element side, 1 to 63", 1, kMaxMorphSize, "3");
  std::vector<ParamInfo> borders = borderParamInfos();
  std::vector<std::string> choices{kIgnore};
  for (const std::string& c : enumNameList<BorderMode>()) choices.push_back(c);
  borders[0] = ParamInfo::choice(
      "border", "samples outside the image: ignore (default: never win, OpenCV's) | " + enumNames<BorderMode>(" | "),
      choices, kIgnore);
  info.params = {morph, shape, size, borders[0], borders[1]};
  info.make = [morph, shape, size, borders](const ParamValues& values) -> std::unique_ptr<Operation> {
    std::optional<Border> border;
    if (choiceParam(values, borders[0]) != kIgnore) border = borderFromParams(values);
    return std::make_unique<Morphology>(parseEnumOrThrow<MorphOp>(choiceParam(values, morph)),
                                        parseEnumOrThrow<MorphShape>(choiceParam(values, shape)),
                                        intParam(values, size), border);
  };
  return info;
}

int Morphology::reach() const {
  if (border_ && border_->mode == BorderMode::Wrap) return -1;
  const int radius = size_ / 2;
  return op_ == MorphOp::Open || op_ == MorphOp::Close ? 2 * radius : radius;
}

std::string Morphology::describe() const {
  return "morph " + std::string(toString(op_)) + " " + std::string(toString(shape_)) + " " + std::to_string(size_) +
         " " + (border_ ? gpulab::describe(*border_) : std::string(kIgnore));
}

ParamValues Morphology::params() const {
  ParamValues values{
      {"morph", std::string(toString(op_))}, {"shape", std::string(toString(shape_))}, {"size", std::to_string(size_)}};
  if (border_)
    addBorderParams(values, *border_);
  else
    values["border"] = kIgnore;
  return values;
}

ImageShape Morphology::outputShape(const ImageShape& in) const {
  planewise::checkU8OrF32(in, "morphology");
  return in;
}

void Morphology::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  const ImageShape shape = outputShape(shapeOf(in));
  if (&in == &out) throw std::invalid_argument("morphology cannot run in place: give it a separate output image");
  planewise::ensureShape(out, shape);
  if (shape_ == MorphShape::Ellipse && (spans_.empty() || spansDevice_ != gpu.device())) {
    hostSpans_.clear();
    for (const auto& [first, end] : morphSpans(shape_, size_)) {
      hostSpans_.push_back(first);
      hostSpans_.push_back(end);
    }
    spans_ = DeviceBuffer(hostSpans_.size() * sizeof(int));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(spans_.data(), hostSpans_.data(), hostSpans_.size() * sizeof(int),
                                      cudaMemcpyHostToDevice, gpu.stream()));
    spansDevice_ = gpu.device();
  }
  const std::vector<bool> steps = stepsOf(op_);
  const int anchor = size_ / 2;
  const kernels::BorderMode mode = toKernel(modeOf(border_));
  planewise::visitU8OrF32(shape.type, "morphology", [&](auto sample) {
    using T = decltype(sample);
    // Scratch: a plane for the rectangle's row pass and one between the steps of open / close.
    const std::size_t pitch = (static_cast<std::size_t>(shape.width) * sizeof(T) + 255) / 256 * 256;
    const std::size_t planeBytes = pitch * static_cast<std::size_t>(shape.height);
    gpu.scratch().reserve(2 * planeBytes);
    auto* base = static_cast<unsigned char*>(gpu.scratch().data());
    const kernels::Plane<T> rows{reinterpret_cast<T*>(base), shape.width, shape.height, pitch};
    const kernels::Plane<T> between{reinterpret_cast<T*>(base + planeBytes), shape.width, shape.height, pitch};
    auto step = [&](kernels::Plane<const T> from, kernels::Plane<T> to, bool dilate) {
      const T fill = fillFor<T>(border_, dilate);
      if (shape_ == MorphShape::Rect) {
        kernels::launchMorphRows<T>(from, rows, -anchor, size_ - 1 - anchor, dilate, mode, fill, gpu.stream());
        kernels::launchMorphColumns<T>({rows.data, rows.width, rows.height, rows.pitch}, to, -anchor,
                                       size_ - 1 - anchor, dilate, mode, fill, gpu.stream());
      } else {
        kernels::launchMorphSpans<T>(from, to, spans_.as<int>(), size_, anchor, anchor, dilate, mode, fill,
                                     gpu.stream());
      }
    };
    for (int c = 0; c < shape.channels; ++c) {
      if (c >= planewise::filteredChannels(shape)) {
        planewise::copyPlaneAsync(in, out, c, gpu.stream());
        continue;
      }
      if (steps.size() == 1) {
        step(planeOf<T>(in, c), planeOf<T>(out, c), steps[0]);
      } else {
        step(planeOf<T>(in, c), between, steps[0]);
        step({between.data, between.width, between.height, between.pitch}, planeOf<T>(out, c), steps[1]);
      }
    }
  });
}

Image Morphology::runCpu(const Image& in, const CpuControl& control) const {
  const ImageShape shape = outputShape(shapeOf(in));
  // Every sample is written below (the result's copy, and alpha): no zeroing, which took 0.3 s of an
  // 8192x8192 RGB f32 image before the first cancel check.
  Image out = Image::uninitialized(shape.width, shape.height, shape.channels, shape.type);
  control.throwIfCancelled();
  try {
    const cv::Mat element =
        cv::getStructuringElement(shape_ == MorphShape::Rect ? cv::MORPH_RECT : cv::MORPH_ELLIPSE, {size_, size_});
    const int r = size_;  // padding enough for the element on every side
    // Bands of at least 4 element sizes: each band reads its halo again, a quarter more work at most
    // (only where one such band takes longer than a round's aim).
    const int minRows = std::max(16, 4 * size_);
    // With a cancel flag a band also goes in column pieces of about kPieceMultiplyAdds (each output
    // takes the maximum over the element's points), the flag checked between them: a band of an
    // ellipse of 31 over 8192 columns of RGB f32 took 1-2 s, and answered a cancel that late. A range
    // sees the pixels around it, so pieces give the whole-image result.
    const double perPixel = static_cast<double>(cv::countNonZero(element)) * shape.channels;
    const auto pieceCols = [&](int bandRows) {
      return std::max(size_, static_cast<int>(cv_interop::kPieceMultiplyAdds / (perPixel * bandRows)));
    };
    const std::vector<bool> steps = stepsOf(op_);
    cv::Mat current = asMat(in);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const bool dilate = steps[s];
      cv::Mat result(current.size(), current.type());
      auto run = [&](const cv::Mat& src, cv::Mat& dst, int borderType, const cv::Scalar& value) {
        if (dilate)
          cv::dilate(src, dst, element, cv::Point(-1, -1), 1, borderType, value);
        else
          cv::erode(src, dst, element, cv::Point(-1, -1), 1, borderType, value);
      };
      if (!border_ || border_->mode == BorderMode::Constant) {
        // BORDER_CONSTANT with morphologyDefaultBorderValue() (ignore) or the value.
        const cv::Scalar value =
            border_
                ? cv::Scalar::all(shape.type == PixelType::U8 ? planewise::borderU8(border_->value)
                                                              : static_cast<double>(static_cast<float>(border_->value)))
                : cv::morphologyDefaultBorderValue();
        parallelRows(
            control, shape.height,
            [&](int a, int b) {
              cv_interop::columnPieces(control, shape.width, pieceCols(b - a), [&](int x, int w) {
                cv::Mat piece = result(cv::Rect(x, a, w, b - a));
                run(current(cv::Rect(x, a, w, b - a)), piece, cv::BORDER_CONSTANT, value);
              });
            },
            0, minRows);
      } else {
        // The other modes pad first: cv::dilate gets an element wider than a tiny image wrong with
        // reflect101 (a 2x3 image, a 4x4 rectangle), and rejects wrap.
        cv::Mat padded;
        cv::copyMakeBorder(current, padded, r, r, r, r, cvBorder(border_->mode));
        control.throwIfCancelled();
        parallelRows(
            control, shape.height,
            [&](int a, int b) {
              cv_interop::columnPieces(control, shape.width, pieceCols(b - a), [&](int x, int w) {
                cv::Mat piece = result(cv::Rect(x, a, w, b - a));
                run(padded(cv::Rect(r + x, r + a, w, b - a)), piece, cv::BORDER_REPLICATE, cv::Scalar());
              });
            },
            0, minRows);
      }
      current = result;
      control.throwIfCancelled();
      control.report(static_cast<double>(s + 1) / static_cast<double>(steps.size()));
    }
    cv::Mat target = asMat(out);
    current.copyTo(target);
    if (planewise::alphaPassesThrough(shape.type, shape.channels)) planewise::copyChannel(in, out, 3);
  } catch (const cv::Exception& e) {
    rethrowOpenCv(e, "the morphology baseline");
  }
  return out;
}

Image Morphology::runReference(const Image& in) const {
  const ImageShape shape = outputShape(shapeOf(in));
  const std::vector<std::pair<int, int>> spans = morphSpans(shape_, size_);
  Image current = in;
  for (const bool dilate : stepsOf(op_)) {
    Image next = current;  // a passing alpha stays as it is
    planewise::visitU8OrF32(shape.type, "morphology", [&](auto sample) {
      using T = decltype(sample);
      for (int c = 0; c < planewise::filteredChannels(shape); ++c)
        referenceStep<T>(current, next, c, spans, size_ / 2, dilate, border_);
    });
    current = std::move(next);
  }
  return current;
}

}  // namespace gpulab
