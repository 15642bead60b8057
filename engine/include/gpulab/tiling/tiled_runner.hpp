// Images bigger than the GPU: an operation whose output pixel reads a bounded neighbourhood (box
// blur, Sobel, convolution direct or through the FFT, and any operation with a finite reach()) runs
// on an image that does not fit in the GPU memory it may use, one tile at a time, each tile uploaded
// with a halo of real neighbouring pixels, filtered, and its interior pasted into the result.
//
//   gpulab::setGpuMemoryLimit(gpulab::parseByteSize("512M"));     // --gpu-memory-limit, the GUI's setting
//   const std::size_t budget = gpulab::gpuMemoryBudget(gpu);      // the limit, or the free memory
//   if (gpulab::gpuBytesEstimate(*op, shapeOf(photo)) > budget) {
//     gpulab::TilePlan plan = gpulab::planTiles(*op, shapeOf(photo), budget);  // throws when it cannot
//     gpulab::TiledRun run = gpulab::runTiled(gpu, *op, photo, plan);
//     run.output;     // the same pixels as the untiled run (see below)
//     run.summary();  // "tiled: 9 tiles of 5462x5462 + halo 7, limit 512 MiB; upload ..."
//   }
//
// Why the result is the untiled one. A tile's window is its interior grown by the halo (the
// operation's reach). Where the window meets the image's edge it is clipped there, so the operation
// applies its border mode exactly where the whole image has its border (core/roi.hpp); inside the
// image the window carries the real neighbours. With the wrap border the window is not clipped: its
// halo is gathered from the opposite edge (coordinates modulo the image size), so a wrapping filter
// tiles too. Every output pixel of an interior then reads the same input samples as in the whole
// image, in the same order:
// - box blur (u8), Sobel and direct convolution: bit-identical;
// - box blur (f32) sums in double with running sums that start at the tile's edge: identical
//   wherever those double sums are exact (e.g. samples on a 2^-24 grid, as 8- and 16-bit data
//   converted to float are); otherwise within one float rounding (1 ulp), the tests measure it;
// - FFT convolution: each tile is convolved through its own, smaller transform (overlap-save: the
//   halo's outputs are discarded), so the result differs from the untiled one by float rounding
//   alone: max |tiled - untiled| <= 1e-5 x max |untiled| for f32 (tests/tiling), +-1 for u8.
// The FFT filter (low-pass and co.) multiplies the whole image's spectrum: every output pixel
// depends on every input pixel. It is not tiled (planTiles refuses it with one sentence); it runs
// out of core instead, its 2D FFT in row and column passes (fft_out_of_core.hpp).
//
// The memory a window needs is estimated (gpuBytesEstimate: input and output planes with their
// pitch, upload staging, the operation's work buffers: FFT planes, spectra, cuFFT workspace, the box
// blur's summed-area table); the planner picks the fewest tiles whose windows fit the budget. The
// run measures the GPU memory actually in use (cudaMemGetInfo before the first tile and after each)
// and reports its peak next to the limit.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/operation.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// The limit

/// The GPU memory the engine may use for one image job, in bytes; 0: no limit (the free memory).
/// Process-wide (--gpu-memory-limit, GPULAB_GPU_MEMORY_LIMIT, the GUI's setting). Thread-safe.
void setGpuMemoryLimit(std::size_t bytes) noexcept;
std::size_t gpuMemoryLimit() noexcept;

/// The environment variable that sets the limit (same syntax as --gpu-memory-limit).
inline constexpr const char* kGpuMemoryLimitVariable = "GPULAB_GPU_MEMORY_LIMIT";

/// "536870912", "512M", "512MiB", "1.5G", "64k", "0" (no limit): K/M/G/T (powers of 1024) with an
/// optional "iB" or "B", case-insensitive. Throws std::invalid_argument with one sentence for
/// anything else (negative, not a number, an unknown suffix, beyond 2^60 bytes).
std::size_t parseByteSize(std::string_view text);
/// "512 MiB", "1.5 GiB", "64 KiB", "100 bytes".
std::string formatByteSize(std::size_t bytes);

/// Applies GPULAB_GPU_MEMORY_LIMIT when it is set and not empty; returns whether it was. Throws
/// std::invalid_argument naming the variable when its value does not parse.
bool applyGpuMemoryLimitFromEnvironment();

/// What one job may use on gpu's device now: the limit when one is set, else 90% of the free memory
/// (the rest for the CUDA libraries' own allocations); the smaller of the two when both apply.
std::size_t gpuMemoryBudget(GpuContext& gpu);

// ---------------------------------------------------------------------------------------------
// Planning (pure: no GPU)

/// Tiles of an image: `columns` x `rows` interiors of tileWidth x tileHeight (the last column and
/// row smaller when the size does not divide), each read through a window grown by `halo`.
struct TilePlan {
  int imageWidth = 0;
  int imageHeight = 0;
  int tileWidth = 0;
  int tileHeight = 0;
  int columns = 1;
  int rows = 1;
  int halo = 0;
  bool wrap = false;            ///< windows gathered across the opposite edge (wrap border), not clipped
  std::size_t budget = 0;       ///< the bytes a window may need
  std::size_t windowBytes = 0;  ///< the estimate for the largest window
  std::size_t wholeBytes = 0;   ///< the estimate for the whole image in one piece

  int count() const noexcept { return columns * rows; }
  bool tiled() const noexcept { return count() > 1; }
  /// The interior of tile i (row-major), inside the image.
  PixelRect tile(int i) const;
  /// The window tile i reads (clipped to the image unless wrap; then possibly outside it).
  PixelRect window(int i) const;
  /// "36 tiles of 2736x2736 + halo 15" (or "1 tile (the whole 800x600 image)").
  std::string describe() const;
};

/// GPU bytes one window of width x height needs.
using WindowBytes = std::function<std::size_t(int width, int height)>;

/// The fewest tiles of a width x height image whose windows (tile + 2 x halo a side, clipped to the
/// image unless `wrap`) each need at most `budget` bytes by `bytesFor`; among plans with as many
/// tiles, the one with the widest tiles (longer rows to copy). One tile when the whole image fits.
/// Throws std::invalid_argument for a non-positive size or negative halo, and std::runtime_error
/// with one sentence when not even a 1x1 tile with its halo fits the budget.
TilePlan planTiles(int width, int height, int halo, bool wrap, std::size_t budget, const WindowBytes& bytesFor);

// ---------------------------------------------------------------------------------------------
// Operations

/// How far the operation reads around an output pixel when the image is cut in tiles: reach() where
/// it is finite; the kernel's radius for box blur, Sobel and convolution (direct, FFT or auto) with a
/// wrapping border, and for FFT convolution in 'same' mode. -1 when the operation cannot run in
/// tiles, with the reason in `why` (one sentence).
int tileHalo(const Operation& op, const ImageShape& in, std::string* why = nullptr);

/// Estimated GPU bytes of one runGpu of `op` on an image of shape `in` (input, output, staging,
/// the operation's buffers), as the planner counts them.
std::size_t gpuBytesEstimate(const Operation& op, const ImageShape& in);

/// The plan for `op` on `in` within `budget`. Throws std::invalid_argument with one sentence when
/// the operation cannot run in tiles ("the FFT filter transforms the whole image at once ..."), and
/// what planTiles throws.
TilePlan planTiles(const Operation& op, const ImageShape& in, std::size_t budget);

// ---------------------------------------------------------------------------------------------
// Running

struct TiledRun {
  Image output;
  TilePlan plan;
  std::size_t limit = 0;         ///< gpuMemoryLimit() when the run started (0: none)
  int distinctWindows = 0;       ///< window sizes (each prepared once: plans, spectra)
  double prepareMs = 0;          ///< prepareGpu of each window size (plans, calibration): not in compute
  double uploadMs = 0;           ///< sums over the tiles: host gather (into pinned staging) + copy engine
  double computeMs = 0;          ///< CUDA events around runGpu on gpu.stream(), summed
  double downloadMs = 0;         ///< copy engine (the interior alone for one channel) + paste into the result
  double wallMs = 0;             ///< the whole run, host clock
  std::size_t peakGpuBytes = 0;  ///< measured: free memory before the first tile minus the least after any
  /// "tiled: 9 tiles of 5462x5462 + halo 7, limit 512 MiB; upload 812 ms, compute 95.1 ms, download
  /// 700 ms (sums over tiles), wall 1702 ms; peak GPU use 300 MiB".
  std::string summary() const;
};

/// Runs `op` on `in` tile by tile on gpu.stream() (blocking), following `plan` (from planTiles for
/// this operation and shape). The operation must be the one planned for. Throws what the operation
/// throws; OperationCancelled when `cancel` is set between tiles.
TiledRun runTiled(GpuContext& gpu, Operation& op, const Image& in, const TilePlan& plan,
                  const CpuControl& control = {});

}  // namespace gpulab
