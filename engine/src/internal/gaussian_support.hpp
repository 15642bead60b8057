// Engine-private pieces of the Gaussian blur that the unsharp mask reuses (engine/src/filters/gaussian.cpp).
#pragma once

#include <opencv2/core.hpp>
#include <vector>

#include "gpulab/core/border.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab::gaussian_detail {

/// cv::GaussianBlur of `src` (any channels, u8 or f32) into `dst` (same size and type) with the
/// window `ksize` and `sigma`, any gpulab border (wrap and a constant value by padding first), in
/// row strips on all cores. `fill` is the constant border's value in sample units. control.cancel is
/// checked between rounds of bands (cv_interop::parallelRows): OperationCancelled.
void blurCv(const cv::Mat& src, cv::Mat& dst, int ksize, double sigma, const Border& border, double fill,
            const CpuControl& control = {});

/// The Gaussian of channel c of `in` in double, row-major width x height: the reference's blur.
/// Outside the image per border (Constant: `fill`).
std::vector<double> blurReference(const Image& in, int c, const std::vector<double>& weights, const Border& border,
                                  double fill);

}  // namespace gpulab::gaussian_detail
