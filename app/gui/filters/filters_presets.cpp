#include "filters/filters_presets.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace gpulab::gui {
namespace {

void checkSide(int side, const char* what) {
  if (side < 1 || side > kMaxEditorFftKernelSize)
    throw std::invalid_argument(std::string(what) + " " + std::to_string(side) + " is outside 1.." +
                                std::to_string(kMaxEditorFftKernelSize));
}

gpulab::Kernel2D fromRows(int width, int height, std::initializer_list<double> values) {
  return {width, height, std::vector<double>(values)};
}

void normaliseToOne(gpulab::Kernel2D& k) {
  double sum = 0;
  for (double v : k.values) sum += v;
  for (double& v : k.values) v /= sum;
}

}  // namespace

gpulab::Kernel2D gaussianKernel(double sigma, int size) {
  if (!std::isfinite(sigma) || sigma <= 0)
    throw std::invalid_argument("the Gaussian's sigma must be a positive number, not " + std::to_string(sigma));
  checkSide(size, "the Gaussian's size");
  gpulab::Kernel2D k{size, size, std::vector<double>(static_cast<std::size_t>(size) * size)};
  const double centre = (size - 1) / 2.0;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      const double dx = x - centre, dy = y - centre;
      k.values[static_cast<std::size_t>(y) * size + x] = std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma));
    }
  normaliseToOne(k);
  return k;
}

int gaussianSizeFor(double sigma, int maxSide) {
  maxSide = std::clamp(maxSide, 1, kMaxEditorFftKernelSize);
  if (!std::isfinite(sigma) || sigma <= 0) return 1;
  const double half = std::ceil(3 * sigma);
  if (half >= maxSide / 2) return maxSide;
  return 2 * static_cast<int>(half) + 1;
}

gpulab::Kernel2D sharpenKernel() { return fromRows(3, 3, {0, -1, 0, -1, 5, -1, 0, -1, 0}); }
gpulab::Kernel2D embossKernel() { return fromRows(3, 3, {-2, -1, 0, -1, 1, 1, 0, 1, 2}); }
gpulab::Kernel2D laplacianKernel() { return fromRows(3, 3, {0, 1, 0, 1, -4, 1, 0, 1, 0}); }

gpulab::Kernel2D motionBlurKernel(int length, double angleDegrees) {
  checkSide(length, "the motion blur's length");
  if (!std::isfinite(angleDegrees)) throw std::invalid_argument("the motion blur's angle must be a finite number");
  const int size = length | 1;
  const double c = (size - 1) / 2.0;
  const double a = angleDegrees * std::numbers::pi / 180;
  const double ux = std::cos(a), uy = -std::sin(a);  // screen: y grows downwards
  gpulab::Kernel2D k{size, size, std::vector<double>(static_cast<std::size_t>(size) * size)};
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      const double dx = x - c, dy = y - c;
      const double along = dx * ux + dy * uy;
      const double across = -dx * uy + dy * ux;
      // A line one pixel wide (tent across it) whose ends fade over one pixel.
      const double w = std::max(0.0, 1 - std::abs(across)) * std::clamp(length / 2.0 + 0.5 - std::abs(along), 0.0, 1.0);
      k.values[static_cast<std::size_t>(y) * size + x] = w;
    }
  normaliseToOne(k);  // the centre sample always has weight 1, so the sum is positive
  return k;
}

gpulab::Kernel2D boxKernel(int width, int height) {
  checkSide(width, "the box's width");
  checkSide(height, "the box's height");
  const double v = 1.0 / (static_cast<double>(width) * height);
  return {width, height, std::vector<double>(static_cast<std::size_t>(width) * height, v)};
}

}  // namespace gpulab::gui
