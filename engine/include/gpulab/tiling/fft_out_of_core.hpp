// The FFT filter (low/high/band-pass, band-stop) on an image bigger than the GPU: every output pixel
// depends on every input pixel, so it cannot run in tiles with halos (tiled_runner.hpp); instead the
// 2D real FFT is taken apart into 1D transforms that run in chunks, with the half spectrum kept in
// pinned host memory between the passes:
//   1. rows:    chunks of rows are uploaded, batched 1D R2C (D2Z) transforms of every row, and the
//               half-spectrum rows (W/2+1 complex values) go back into the host spectrum;
//   2. columns: chunks of columns of the host spectrum go to the GPU (cudaMemcpy2DAsync), batched
//               1D C2C (Z2Z) forward along the columns, the filter's mask multiplied in exactly as
//               the whole-image pipeline does (the same gain expression in the same precision, with
//               the inverse's 1/(N_x N_y) folded in), inverse C2C, and back into the host spectrum;
//   3. rows:    chunks of the image's rows of the spectrum go to the GPU, batched 1D C2R (Z2D), the
//               samples converted (u8: rounded and saturated, as the GPU pipeline does) and downloaded.
// Mirror padding transforms the 2W x 2H reflected image as FftFilter does (pass 1 reads reflected
// rows; pass 3 keeps the top-left W x H). Each filtered channel runs the three passes on its own
// plane; alpha of 2- and 4-channel u8 images is copied. The transforms are the same DFT factored
// differently (rows then columns rather than cuFFT's 2D plan), so the result equals the untiled
// GPU run up to float rounding: the tests ask max |ooc - untiled| <= 1e-5 x the input's range (f32;
// 1e-12 for f64, +-1 for u8).
//
//   const gpulab::FftPassPlan plan = gpulab::planFftOutOfCore(filter, shapeOf(img), budget);
//   gpulab::FftOutOfCoreRun run = gpulab::runFftOutOfCore(gpu, filter, img, plan);
//   run.summary();  // "tiled: FFT filter out of core in 3 passes over the 16384x16384 transform ..."
//
// Scaling hook: FftOutOfCoreOptions::inputExponent multiplies the input by 2^-e as it is gathered for
// pass 1 and the result by 2^e as it is pasted after pass 3 (f32/f64: exact, powers of two), so a
// scale chosen to keep the transforms finite near FLT_MAX applies here as in the whole-image path.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"
#include "gpulab/fft/fft_filter.hpp"

namespace gpulab {

/// How the three passes cut the transform (pure: planFftOutOfCore needs no GPU).
struct FftPassPlan {
  int imageWidth = 0;
  int imageHeight = 0;
  int fftWidth = 0;  ///< the transform: the image, or 2W x 2H with mirror padding
  int fftHeight = 0;
  int planes = 0;               ///< channels transformed (alpha passes through)
  int rowChunk = 1;             ///< rows per chunk in passes 1 and 3
  int columnChunk = 1;          ///< half-spectrum columns per chunk in pass 2
  std::size_t budget = 0;       ///< the bytes a chunk may need
  std::size_t rowBytes = 0;     ///< the estimate for a row chunk (passes 1 and 3)
  std::size_t columnBytes = 0;  ///< the estimate for a column chunk (pass 2)
  std::size_t hostBytes = 0;    ///< the pinned host spectrum (one plane)

  int complexWidth() const noexcept { return fftWidth / 2 + 1; }
  int forwardRowChunks() const noexcept { return (fftHeight + rowChunk - 1) / rowChunk; }
  int columnChunks() const noexcept { return (complexWidth() + columnChunk - 1) / columnChunk; }
  int inverseRowChunks() const noexcept { return (imageHeight + rowChunk - 1) / rowChunk; }
  /// "3 passes over the 16384x16384 transform: rows 9 chunks of 1820 (R2C); columns 5 chunks of 1821
  /// (C2C, mask, C2C); rows 9 chunks of 1820 (C2R)".
  std::string describe() const;
};

/// GPU bytes of one chunk of `rows` rows (passes 1 and 3: real rows, their half spectra, the output
/// samples, cuFFT's workspace), and of `columns` half-spectrum columns (pass 2: the block and cuFFT's
/// workspace), for `filter` on an image of shape `in`.
std::size_t fftRowChunkBytes(const FftFilter& filter, const ImageShape& in, int rows);
std::size_t fftColumnChunkBytes(const FftFilter& filter, const ImageShape& in, int columns);

/// The largest row and column chunks whose estimates fit `budget`. Throws std::invalid_argument for
/// an empty image, more than 4 channels or u16 samples, and std::runtime_error with one sentence
/// when not even one row or one column fits.
FftPassPlan planFftOutOfCore(const FftFilter& filter, const ImageShape& in, std::size_t budget);

struct FftOutOfCoreOptions {
  /// The input is multiplied by 2^-inputExponent before pass 1 and the result by 2^inputExponent
  /// after pass 3 (f32 and f64 only; u8 needs none). 0: no scaling. Empty (the default): chosen from
  /// the image's largest finite |value| as the whole-image filter chooses it (0 for ordinary ranges).
  std::optional<int> inputExponent;
};

struct FftOutOfCoreRun {
  Image output;
  FftPassPlan plan;
  std::size_t limit = 0;         ///< gpuMemoryLimit() when the run started (0: none)
  double prepareMs = 0;          ///< cuFFT plan creation, not in compute
  double uploadMs = 0;           ///< sums over every chunk of every pass: host gather + copy engine
  double computeMs = 0;          ///< CUDA events around the transforms, the mask and the conversion
  double downloadMs = 0;         ///< copy engine + paste into the host spectrum or the result
  double wallMs = 0;             ///< the whole run, host clock (pinned allocation included)
  std::size_t peakGpuBytes = 0;  ///< measured: free memory before the run minus the least seen
  /// "tiled: FFT filter out of core, 3 passes over the 16384x16384 transform: rows 9 chunks of 1820
  /// (R2C); ..., limit 512 MiB; upload ... ms, compute ... ms, download ... ms (sums over the chunks),
  /// wall ... ms; peak GPU use ... (measured)".
  std::string summary() const;
};

/// Runs `filter` on `in` following `plan` (from planFftOutOfCore for this filter and shape) on
/// gpu.stream(), blocking. Throws what cuFFT and CUDA throw; OperationCancelled when `control`'s
/// cancel is set (checked between chunks).
FftOutOfCoreRun runFftOutOfCore(GpuContext& gpu, const FftFilter& filter, const Image& in, const FftPassPlan& plan,
                                const FftOutOfCoreOptions& options = {}, const CpuControl& control = {});

}  // namespace gpulab
