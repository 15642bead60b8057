// Engine-private glue between gpulab and OpenCV for the CPU baselines: images as cv::Mat views,
// border modes as cv::BORDER_*, work split into row strips over OpenCV's thread pool, and the
// CpuControl checkpoints (cancel, progress).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <string>

#include "gpulab/core/border.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"  // CpuControl, OperationCancelled
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

/// Runs f(a, b) over the rows [first, end) cut into `count` strips of near-equal height, in parallel.
template <class F>
void parallelStrips(int first, int end, int count, F& f) {
  parallelFor(cv::Range(0, count), [&](const cv::Range& range) {
    for (int s = range.start; s < range.end; ++s) {
      const int a = first + static_cast<int>(static_cast<std::int64_t>(end - first) * s / count);
      const int b = first + static_cast<int>(static_cast<std::int64_t>(end - first) * (s + 1) / count);
      if (b > a) f(a, b);
    }
  });
}

/// Runs f(firstRow, endRow) over [0, rows) split into at least `strips` strips (one per OpenCV
/// thread by default), in parallel. A cv::Mat ROI of some rows still sees the rows around it, so
/// a filter run strip by strip gives the same result as one run over the whole image.
template <class F>
void parallelRows(int rows, F&& f, int strips = 0) {
  if (strips <= 0) strips = std::max(1, cv::getNumThreads());
  strips = std::clamp(strips, 1, std::max(1, rows));
  parallelStrips(0, rows, strips, f);
}

/// Milliseconds of work a band round aims at while a cancel flag listens: a cancel is answered
/// within about this (times the slowdown of a loaded machine).
inline constexpr double kBandRoundMs = 40;

/// parallelRows with a cancel flag that is answered while the work runs: with control.cancel set, the
/// rows go in rounds of one band per OpenCV thread, the band height adapting (from `minRows`, doubling
/// or halving) so that a round takes about kBandRoundMs; the flag is checked between rounds
/// (OperationCancelled). Only for work whose result does not depend on where the bands fall (a
/// filter over a cv::Mat ROI that sees its surroundings, a per-pixel map): the band geometry follows
/// the machine's speed. No flag, or `strips` 1: parallelRows(rows, f, strips) as before. No band is
/// shorter than `minRows` rows unless the image is (filter2D gets a one-row range of a taller image
/// wrong, OpenCV 4.6). A band that reads a halo of rows around it costs halo/minRows more at most.
template <class F>
void parallelRows(const CpuControl& control, int rows, F&& f, int strips = 0, int minRows = 16) {
  if (control.cancel == nullptr || strips == 1) {  // one strip asked for: the whole image in one call
    parallelRows(rows, f, strips);
    return;
  }
  control.throwIfCancelled();
  const int threads = std::max(1, cv::getNumThreads());
  minRows = std::clamp(minRows, 1, std::max(rows, 1));
  int band = minRows;
  int next = 0;
  while (next < rows) {
    int count = threads;  // bands this round
    int end = static_cast<int>(std::min<std::int64_t>(rows, next + static_cast<std::int64_t>(band) * count));
    if (rows - end < minRows) end = rows;  // no short band left behind
    count = std::max(1, std::min(count, (end - next) / std::max(band, 1)));
    const auto started = std::chrono::steady_clock::now();
    parallelStrips(next, end, count, f);
    next = end;
    control.throwIfCancelled();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (ms < kBandRoundMs / 2 && band < rows)
      band *= 2;
    else if (ms > 2 * kBandRoundMs)
      band = std::max(minRows, band / 2);
  }
}

/// Multiply-adds of one column piece (columnPieces): tens of milliseconds on one core.
inline constexpr double kPieceMultiplyAdds = 2e8;

/// Calls g(x, width) for column pieces of [0, cols) of at least `pieceCols` (and 256) columns each,
/// even widths, checking control.cancel between pieces and returning early once it is set (the
/// enclosing parallelRows throws after its round). No flag: one piece, g(0, cols). For filters over
/// a cv::Mat ROI, which see the columns around it as they see the rows: pieces do not change the
/// result, and the rows a band reads around it are read once per piece of them, not once per piece
/// of the image (no extra work beyond the columns' halo reads).
template <class G>
void columnPieces(const CpuControl& control, int cols, int pieceCols, G&& g) {
  // Not narrower than 256: a filter's pass over a row has a setup that narrow pieces pay too often.
  const int pieces = control.cancel == nullptr ? 1 : std::max(1, cols / std::max(pieceCols, 256));
  for (int p = 0; p < pieces; ++p) {
    if (p > 0 && control.cancelled()) return;
    const int x = static_cast<int>(static_cast<std::int64_t>(cols) * p / pieces);
    g(x, static_cast<int>(static_cast<std::int64_t>(cols) * (p + 1) / pieces) - x);
  }
}

/// OpenCV's own exceptions carry a multi-line report; the engine's callers get one sentence.
[[noreturn]] inline void rethrowOpenCv(const cv::Exception& e, const std::string& what) {
  throw std::runtime_error("OpenCV failed in " + what + ": " + e.err);
}

}  // namespace gpulab::cv_interop
