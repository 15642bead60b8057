// Convolution kernels as files and text: what `gpulab-cli filter --kernel FILE` reads and the GUI's
// kernel editor loads and saves.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "gpulab/filters/filter.hpp"

namespace gpulab {

/// A kernel file that cannot be used: missing, empty, ragged, not a number, not 2-D.
class KernelFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads convolution coefficients from a file. Text: one kernel row per line, numbers separated by
/// spaces, tabs or commas, '#' starts a comment, blank lines are skipped. .npy (by content): a 2-D
/// float32 or float64 array (HxW, or HxWx1). Throws KernelFileError with one sentence naming the
/// file (and the line, for text) when it is missing, empty, ragged, holds something that is not a
/// finite number, or has more than kMaxImageDimension coefficients a side.
Kernel2D loadKernelFile(const std::filesystem::path& path);
/// The text format of loadKernelFile, from memory; `nameForErrors` names the source in messages.
Kernel2D parseKernelText(const std::string& text, const std::string& nameForErrors = "the kernel text");
/// The kernel as that text format: a line per row, coefficients with 17 significant digits (so
/// parseKernelText gives back the same doubles).
std::string formatKernelText(const Kernel2D& kernel);

}  // namespace gpulab
