// Engine-private glue between gpulab and OpenCV for the CPU baselines: images as cv::Mat views,
// border modes as cv::BORDER_*, work split into row strips over OpenCV's thread pool, and the
// CpuControl checkpoints (cancel, progress).
#pragma once

#include <algorithm>
#include <cstdint>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <string>

#include "gpulab/core/border.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/thread_annotations.hpp"
#include "gpulab/filters/filter.hpp"

namespace gpulab::cv_interop {

inline int cvDepth(PixelType type) {
  switch (type) {
    case PixelType::U8:
      return CV_8U;
    case PixelType::F32:
      return CV_32F;
    case PixelType::F64:
      return CV_64F;
    case PixelType::U16:
      return CV_16U;
  }
  throw std::invalid_argument("unknown pixel type");
}

/// A cv::Mat sharing the image's samples (no copy); interleaved channels as OpenCV keeps them.
inline cv::Mat asMat(Image& image) {
  return cv::Mat(image.height(), image.width(), CV_MAKETYPE(cvDepth(image.type()), image.channels()), image.data(),
                 image.rowBytes());
}
/// Read-only by convention: OpenCV has no const Mat view.
inline cv::Mat asMat(const Image& image) { return asMat(const_cast<Image&>(image)); }

/// OpenCV's name for a border mode. BORDER_WRAP is accepted by cv::copyMakeBorder but not by the
/// filters (cv::blur, cv::Sobel, cv::filter2D throw): pad first (copyMakeBorder) and filter the
/// padded image instead. BORDER_CONSTANT in the filters always means 0.
inline int cvBorder(BorderMode mode) {
  switch (mode) {
    case BorderMode::Reflect101:
      return cv::BORDER_REFLECT_101;
    case BorderMode::Reflect:
      return cv::BORDER_REFLECT;
    case BorderMode::Replicate:
      return cv::BORDER_REPLICATE;
    case BorderMode::Wrap:
      return cv::BORDER_WRAP;
    case BorderMode::Constant:
      return cv::BORDER_CONSTANT;
  }
  throw std::invalid_argument("unknown border mode");
}

/// cv::parallel_for_(range, body, nstripes), every call in the engine goes through this one. OpenCV
/// runs the strips on its TBB pool and joins them inside libtbb, which is not built with
/// ThreadSanitizer: the fork (the caller's writes before, seen by every strip) and the join (every
/// strip's writes, seen by the caller after) are stated here so that a TSan build checks the strips
/// against each other and against other threads (gpulab/core/thread_annotations.hpp). Strips do not
/// acquire each other's releases, so a race between two strips is still reported.
template <class Body>
void parallelFor(const cv::Range& range, Body&& body, double nstripes = -1.0) {
  class Strips final : public cv::ParallelLoopBody {
   public:
    explicit Strips(Body& body) : body_(body) {}
    void operator()(const cv::Range& strip) const override {
      tsanAcquire(&fork_);  // before this object's members are read on a pool thread
      body_(strip);
      tsanRelease(&join_);
    }
    const void* fork() const { return &fork_; }
    const void* join() const { return &join_; }

   private:
    Body& body_;
    char fork_ = 0, join_ = 0;
  };
  const Strips strips(body);
  tsanRelease(strips.fork());
  cv::parallel_for_(range, strips, nstripes);
  tsanAcquire(strips.join());
}

/// Runs f(firstRow, endRow) over [0, rows) split into at least `strips` strips (one per OpenCV
/// thread by default), in parallel. A cv::Mat ROI of some rows still sees the rows around it, so
/// a filter run strip by strip gives the same result as one run over the whole image.
template <class F>
void parallelRows(int rows, F&& f, int strips = 0) {
  if (strips <= 0) strips = std::max(1, cv::getNumThreads());
  strips = std::clamp(strips, 1, std::max(1, rows));
  parallelFor(cv::Range(0, strips), [&](const cv::Range& range) {
    for (int s = range.start; s < range.end; ++s) {
      const int a = static_cast<int>(static_cast<std::int64_t>(rows) * s / strips);
      const int b = static_cast<int>(static_cast<std::int64_t>(rows) * (s + 1) / strips);
      if (b > a) f(a, b);
    }
  });
}

/// OpenCV's own exceptions carry a multi-line report; the engine's callers get one sentence.
[[noreturn]] inline void rethrowOpenCv(const cv::Exception& e, const std::string& what) {
  throw std::runtime_error("OpenCV failed in " + what + ": " + e.err);
}

}  // namespace gpulab::cv_interop
