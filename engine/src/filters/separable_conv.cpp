// SeparableConv: rank detection by SVD, the fused GPU kernel, and cv::sepFilter2D on the CPU.
#include "gpulab/filters/separable_conv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/separable_conv.cuh"
#include "internal/conv_support.hpp"
#include "internal/cv_interop.hpp"
#include "internal/kernel_views.hpp"
#include "internal/planewise.hpp"

namespace gpulab {

static_assert(kMaxSeparableTaps == kernels::kSeparableMaxTaps && kMaxSeparableRank == kernels::kSeparableMaxRank);

// ---------------------------------------------------------------------------------------------
// Detection

SeparableTerms separableTerms(const Kernel2D& kernel, double tolerance) {
  SeparableTerms terms;
  const int kw = kernel.width, kh = kernel.height;
  if (kw <= 0 || kh <= 0 || kernel.values.size() != static_cast<std::size_t>(kw) * static_cast<std::size_t>(kh))
    return terms;
  cv::Mat k(kh, kw, CV_64F);
  double peak = 0;
  for (int p = 0; p < kh; ++p)
    for (int q = 0; q < kw; ++q) {
      k.at<double>(p, q) = kernel.at(q, p);
      peak = std::max(peak, std::abs(kernel.at(q, p)));
    }
  if (peak == 0 || !std::isfinite(peak)) {  // all zero: one zero term (non-finite: no decomposition)
    terms.rank = std::isfinite(peak) ? 1 : 0;
    if (terms.rank == 1) {
      terms.cols.assign(1, std::vector<double>(static_cast<std::size_t>(kh), 0.0));
      terms.rows.assign(1, std::vector<double>(static_cast<std::size_t>(kw), 0.0));
      terms.singularValues.assign(static_cast<std::size_t>(std::min(kw, kh)), 0.0);
    }
    return terms;
  }
  cv::Mat s, u, vt;
  cv::SVD::compute(k, s, u, vt, cv::SVD::FULL_UV);
  const int n = std::min(kw, kh);
  for (int i = 0; i < n; ++i) terms.singularValues.push_back(s.at<double>(i));
  cv::Mat approx = cv::Mat::zeros(kh, kw, CV_64F);
  for (int r = 1; r <= n; ++r) {
    const double sv = s.at<double>(r - 1);
    approx += sv * u.col(r - 1) * vt.row(r - 1);
    const double error = cv::norm(k - approx, cv::NORM_INF) / peak;
    if (error > tolerance && r < n) continue;
    terms.rank = r;
    terms.relativeError = error;
    break;
  }
  if (terms.rank > kMaxSeparableRank) return terms;
  for (int t = 0; t < terms.rank; ++t) {
    const double scale = std::sqrt(s.at<double>(t));
    std::vector<double> col(static_cast<std::size_t>(kh)), row(static_cast<std::size_t>(kw));
    for (int p = 0; p < kh; ++p) col[static_cast<std::size_t>(p)] = scale * u.at<double>(p, t);
    for (int q = 0; q < kw; ++q) row[static_cast<std::size_t>(q)] = scale * vt.at<double>(t, q);
    terms.cols.push_back(std::move(col));
    terms.rows.push_back(std::move(row));
  }
  return terms;
}

// ---------------------------------------------------------------------------------------------
// Construction

namespace {

std::string notSeparableText(const Kernel2D& kernel, const SeparableTerms& terms) {
  return "the " + sizeText(kernel.width, kernel.height) + " kernel is not separable: it needs " +
         std::to_string(terms.rank) +
         " outer products (SVD, within 1e-6 relative) and the separable method sums at most " +
         std::to_string(kMaxSeparableRank) + "; use --method direct, fft or auto";
}

}  // namespace

SeparableConv::SeparableConv(const FilterSpec& spec) : spec_(spec), direct_(spec) {
  terms_ = separableTerms(spec.kernel);
  if (!terms_.separable()) throw std::invalid_argument(notSeparableText(spec.kernel, terms_));
}

// ---------------------------------------------------------------------------------------------
// GPU

namespace {

/// The launch geometry: correlation form (a convolution flips both vectors), Conv2D's anchors.
kernels::SeparableGeometry geometryOf(const FilterSpec& spec, const Conv2D& direct, const SeparableTerms& terms) {
  const int kw = spec.kernel.width, kh = spec.kernel.height;
  kernels::SeparableGeometry g;
  g.kernelWidth = kw;
  g.kernelHeight = kh;
  g.anchorX = direct.anchorX();
  g.anchorY = direct.anchorY();
  g.rank = terms.rank;
  g.border = toKernel(spec.border.mode);
  for (int t = 0; t < terms.rank; ++t) {
    const auto& row = terms.rows[static_cast<std::size_t>(t)];
    const auto& col = terms.cols[static_cast<std::size_t>(t)];
    for (int q = 0; q < kw; ++q)
      g.rowWeights[t][q] = static_cast<float>(row[static_cast<std::size_t>(spec.correlate ? q : kw - 1 - q)]);
    for (int p = 0; p < kh; ++p)
      g.colWeights[t][p] = static_cast<float>(col[static_cast<std::size_t>(spec.correlate ? p : kh - 1 - p)]);
  }
  return g;
}

}  // namespace

Image SeparableConv::runTilesOnHost(const Image& in) const {
  if (in.empty() || !gpuTakes(in.type()))
    throw std::invalid_argument("the separable tile code takes non-empty u8 and f32 images");
  const ImageShape os = outputShape(shapeOf(in));
  Image out(os.width, os.height, os.channels, os.type);
  const kernels::SeparableGeometry g = geometryOf(spec_, direct_, terms_);
  const int planes = convolvedChannels(shapeOf(in), spec_.mode);
  visitPixelType(in.type(), [&](auto sample) {
    using T = decltype(sample);
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, float>) {
      // Planar stacks as a DeviceImage keeps them: plane c at row c * height, rows 64-byte aligned.
      auto pitchOf = [](int width) { return (static_cast<std::size_t>(width) * sizeof(T) + 63) / 64 * 64; };
      const std::size_t inPitch = pitchOf(in.width()), outPitch = pitchOf(os.width);
      std::vector<std::uint64_t> srcBytes((inPitch * in.height() * in.channels() + 7) / 8 + 1);
      std::vector<std::uint64_t> dstBytes((outPitch * os.height * os.channels + 7) / 8 + 1);
      const kernels::Plane<T> src{reinterpret_cast<T*>(srcBytes.data()), in.width(), in.height(), inPitch};
      const kernels::Plane<T> dst{reinterpret_cast<T*>(dstBytes.data()), os.width, os.height, outPitch};
      for (int c = 0; c < in.channels(); ++c)
        for (int y = 0; y < in.height(); ++y)
          for (int x = 0; x < in.width(); ++x) src.row(c * in.height() + y)[x] = in.at<T>(x, y, c);
      const kernels::Plane<const T> inStack{src.data, src.width, src.height, src.pitch};
      const kernels::Plane<T> outStack = dst;
      kernels::runSeparableConvTilesOnHost<T>(inStack, outStack, planes, g,
                                              static_cast<float>(toSample<T>(spec_.border.value)));
      for (int c = 0; c < os.channels; ++c)
        for (int y = 0; y < os.height; ++y)
          for (int x = 0; x < os.width; ++x)
            out.at<T>(x, y, c) = c < planes ? dst.row(c * os.height + y)[x] : in.at<T>(x, y, c);
    }
  });
  return out;
}

void SeparableConv::runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty device image");
  if (&in == &out) throw std::invalid_argument("convolution cannot run in place; give it a separate output image");
  if (!gpuTakes(in.type())) {
    direct_.runGpu(gpu, in, out);
    return;
  }
  const ImageShape os = outputShape(shapeOf(in));
  if (out.empty() || out.width() != os.width || out.height() != os.height || out.channels() != os.channels ||
      out.type() != os.type)
    out = DeviceImage(os.width, os.height, os.channels, os.type);

  const kernels::SeparableGeometry g = geometryOf(spec_, direct_, terms_);
  const bool alpha = convolvedChannels(shapeOf(in), spec_.mode) < in.channels();
  const int planes = alpha ? 3 : in.channels();
  visitPixelType(in.type(), [&](auto sample) {
    using T = decltype(sample);
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, float>) {
      const kernels::Plane<const T> inStack{planeOf<T>(in, 0).data, in.width(), in.height(), in.pitch()};
      kernels::launchSeparableConv<T>(inStack, stackOf<T>(out), planes, g,
                                      static_cast<float>(toSample<T>(spec_.border.value)), gpu.stream());
      if (alpha) planewise::copyPlaneAsync(in, out, 3, gpu.stream());
    }
  });
}

// ---------------------------------------------------------------------------------------------
// CPU baseline: cv::sepFilter2D per term over the padded plane, row strips on all cores

Image SeparableConv::runCpu(const Image& in, const CpuControl& control) const {
  if (in.empty()) throw std::invalid_argument("convolution needs a non-empty image");
  const ImageShape os = outputShape(shapeOf(in));
  Image out(os.width, os.height, os.channels, os.type);
  const cv::Mat src = cv_interop::asMat(in);
  cv::Mat dst = cv_interop::asMat(out);
  const int kw = spec_.kernel.width, kh = spec_.kernel.height;
  const int sumDepth = in.type() == PixelType::F64 ? CV_64F : CV_32F;
  // sepFilter2D correlates: the correlation-form vectors, anchored at (0, 0) over a plane padded
  // by the border mode so that output (x, y) reads padded (x + q, y + p).
  std::vector<cv::Mat> rowKernels, colKernels;
  for (int t = 0; t < terms_.rank; ++t) {
    cv::Mat row(1, kw, CV_64F), col(kh, 1, CV_64F);
    for (int q = 0; q < kw; ++q)
      row.at<double>(0, q) = terms_.rows[t][static_cast<std::size_t>(spec_.correlate ? q : kw - 1 - q)];
    for (int p = 0; p < kh; ++p)
      col.at<double>(p, 0) = terms_.cols[t][static_cast<std::size_t>(spec_.correlate ? p : kh - 1 - p)];
    cv::Mat rowTyped, colTyped;
    row.convertTo(rowTyped, sumDepth);
    col.convertTo(colTyped, sumDepth);
    rowKernels.push_back(rowTyped);
    colKernels.push_back(colTyped);
  }
  const double fill = borderSample(in.type(), spec_.border.value);
  const int ax = direct_.anchorX(), ay = direct_.anchorY();
  const bool alpha = convolvedChannels(shapeOf(in), spec_.mode) < in.channels();
  const int strips = std::clamp(os.height / std::max(16, kh), 1, std::max(1, cv::getNumThreads()));
  try {
    for (int c = 0; c < in.channels(); ++c) {
      control.throwIfCancelled();
      cv::Mat plane;
      if (in.channels() == 1)
        plane = src;
      else
        cv::extractChannel(src, plane, c);
      cv::Mat result;
      if (alpha && c == 3) {
        result = plane;
      } else {
        cv::Mat padded;
        cv::copyMakeBorder(plane, padded, ay, os.height + kh - 1 - in.height() - ay, ax,
                           os.width + kw - 1 - in.width() - ax, cv_interop::cvBorder(spec_.border.mode),
                           cv::Scalar::all(fill));
        result.create(os.height, os.width, plane.type());
        cv_interop::parallelRows(
            control, os.height,
            [&](int a, int b) {
              // Output rows [a, b) read padded rows [a, b + kh - 1): exactly those, so no border
              // rule of sepFilter2D ever reaches a sample that is kept.
              const cv::Mat window = padded(cv::Rect(0, a, padded.cols, b - a + kh - 1));
              cv::Mat sum, term;
              for (int t = 0; t < terms_.rank; ++t) {
                cv::sepFilter2D(window, t == 0 ? sum : term, sumDepth, rowKernels[static_cast<std::size_t>(t)],
                                colKernels[static_cast<std::size_t>(t)], cv::Point(0, 0), 0,
                                cv::BORDER_CONSTANT | cv::BORDER_ISOLATED);
                if (t > 0) sum += term;
              }
              cv::Mat strip = result.rowRange(a, b);
              sum(cv::Rect(0, 0, os.width, b - a)).convertTo(strip, plane.type());  // u8: rounded, saturated
            },
            strips, std::max(16, 4 * kh));  // each band reads kh - 1 rows more: a quarter at most
      }
      if (os.channels == 1)
        result.copyTo(dst);
      else
        cv::insertChannel(result, dst, c);
      control.report(static_cast<double>(c + 1) / in.channels());
    }
  } catch (const cv::Exception& e) {
    cv_interop::rethrowOpenCv(e, "the separable convolution baseline");
  }
  return out;
}

}  // namespace gpulab
