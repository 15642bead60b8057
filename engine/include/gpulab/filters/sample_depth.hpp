// Sample types the operations do not take themselves, handled the same way by every front end
// (the CLI's filter and batch commands, the GUI):
//   - u16 (16-bit PNG and TIFF, .npy uint16): given as is to an operation that takes u16 (auto-levels);
//     otherwise filtered as f32, whose 24-bit mantissa holds every
//     16-bit value exactly, and stored back as u16 (rounded to nearest, saturated to 0..65535). A
//     4-channel u16 image is RGBA: its alpha passes through unchanged, as for u8 RGBA.
//   - f64 (NumPy's default .npy): given to an operation that refuses f64 as f32, with a note.
//
//   gpulab::FilterInput input = gpulab::prepareFilterInput(*op, gpulab::loadImage(path));
//   gpulab::Image out = gpulab::finishFilterResult(op->runCpu(input.image), input);
#pragma once

#include <string>

#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab {

struct FilterInput {
  Image image;                         ///< what the operation gets
  PixelType original = PixelType::U8;  ///< the sample type the caller had
  std::string note;                    ///< one sentence when the samples were converted; empty otherwise
};

/// The image `op` takes for `image` (moved through unchanged when it takes it as it is).
/// Throws std::invalid_argument with the operation's sentence when no conversion helps.
FilterInput prepareFilterInput(const Operation& op, Image image);

/// The result in the type the caller stores: back to u16 for a u16 input (alpha from the input),
/// unchanged otherwise.
Image finishFilterResult(Image result, const FilterInput& input);

/// The sample type prepareFilterInput gives `op` for `type` (type itself, or f32).
PixelType filterWorkingType(const Operation& op, const ImageShape& in);

/// The shape of the stored result for an input of shape `in` (outputShape through the conversions
/// above). Throws std::invalid_argument as outputShape does.
ImageShape filterResultShape(const Operation& op, const ImageShape& in);

}  // namespace gpulab
