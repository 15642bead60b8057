// Shared by the per-channel filter suites (Gaussian, median, unsharp mask, morphology, Canny): the
// table of images every one of them runs (odd, prime and tiny sizes up to one larger than a GPU
// tile, every type, every border), and one GPU run of an operation.
#pragma once

#include <string>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/operation.hpp"
#include "support/gpu_test.hpp"

namespace gpulab::test {

struct Size2 {
  int w, h;
};
struct TypeAndChannels {
  PixelType type;
  int channels;
};

/// 1x1, 2x3, 7x13, 31x17, 127x61, 257x131 (larger than any block's tile).
inline std::vector<Size2> tableSizes() { return {{1, 1}, {2, 3}, {7, 13}, {31, 17}, {127, 61}, {257, 131}}; }

/// u8 gray / RGB / RGBA, f32 gray / RGB.
inline std::vector<TypeAndChannels> tableTypes() {
  return {{PixelType::U8, 1}, {PixelType::U8, 3}, {PixelType::U8, 4}, {PixelType::F32, 1}, {PixelType::F32, 3}};
}

/// Every border mode, constant with 0 and with a non-zero value.
inline std::vector<std::pair<BorderMode, bool>> tableBorders() {
  return {{BorderMode::Reflect101, false}, {BorderMode::Reflect, false},  {BorderMode::Replicate, false},
          {BorderMode::Wrap, false},       {BorderMode::Constant, false}, {BorderMode::Constant, true}};
}

/// Every combination of the three.
inline std::vector<FilterCaseImage> tableImages() {
  std::vector<FilterCaseImage> images;
  for (Size2 s : tableSizes())
    for (TypeAndChannels t : tableTypes())
      for (auto [mode, nonzero] : tableBorders()) images.push_back({s.w, s.h, mode, nonzero, t.type, t.channels});
  return images;
}

/// op.runGpu on a fresh context: upload (in the layout the operation prefers, what front ends do),
/// run, download.
inline Image runOnGpu(Operation& op, const Image& in) {
  GpuContext gpu;
  const DeviceImage d = gpu.upload(in, op.gpuLayout(shapeOf(in)));
  DeviceImage out;
  op.runGpu(gpu, d, out);
  return gpu.download(out);
}

}  // namespace gpulab::test
