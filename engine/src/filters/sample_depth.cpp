#include "gpulab/filters/sample_depth.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace gpulab {

namespace {

bool takes(const Operation& op, ImageShape shape) {
  try {
    op.outputShape(shape);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

PixelType filterWorkingType(const Operation& op, const ImageShape& in) {
  if ((in.type == PixelType::U16 || in.type == PixelType::F64) && !takes(op, in)) return PixelType::F32;
  return in.type;
}

ImageShape filterResultShape(const Operation& op, const ImageShape& in) {
  ImageShape working = in;
  working.type = filterWorkingType(op, in);
  ImageShape out = op.outputShape(working);
  if (in.type == PixelType::U16 && out.type == PixelType::F32) out.type = PixelType::U16;
  return out;
}

FilterInput prepareFilterInput(const Operation& op, Image image) {
  FilterInput input;
  input.original = image.type();
  const PixelType working = filterWorkingType(op, shapeOf(image));
  if (working != image.type()) {
    if (image.type() == PixelType::F64)
      input.note = "the float64 image is filtered as float32 (" + op.name() + " takes no float64)";
    image = image.convertedTo(working, image.memory());  // a pinned input is on its way to the GPU
  }
  op.outputShape(shapeOf(image));  // the operation's own sentence when it cannot take the image
  input.image = std::move(image);
  return input;
}

Image finishFilterResult(Image result, const FilterInput& input) {
  if (input.original != PixelType::U16 || result.type() != PixelType::F32) return result;
  Image out = result.convertedTo(PixelType::U16);
  const Image& in = input.image;
  if (out.channels() == 4 && in.channels() == 4 && out.width() == in.width() && out.height() == in.height())
    for (int y = 0; y < out.height(); ++y)
      for (int x = 0; x < out.width(); ++x)
        out.at<std::uint16_t>(x, y, 3) = static_cast<std::uint16_t>(in.at<float>(x, y, 3));
  return out;
}

}  // namespace gpulab
