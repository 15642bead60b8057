// One Mandelbrot still spread over several GPUs: the rows of the raw plane cut into bands, one host
// thread per GPU taking the next band from a shared queue (dynamic load balancing: a band of interior
// or deep rows costs many times a band of fast escapes), each GPU computing (and colouring) its band in
// its own device buffers and copying it back into the host image.
//
//   std::vector<int> gpus = gpulab::parseGpuList("all", gpulab::queryDevices().devices.size());
//   gpulab::StillSplitOptions split;
//   split.colouring = gpulab::Colouring{};
//   gpulab::SplitStill still = gpulab::renderStillOnGpus(gpus, view, {}, split);  // blocking
//   std::puts(still.report.sharesText().c_str());     // "GPU 0: 33 bands, 4,455 rows (52%); GPU 1: ..."
//
// The image is bit-identical to the one-GPU render (MandelbrotRenderer) whatever the split: every pixel's
// arithmetic depends on its own coordinates alone (escape time, and perturbation with per-pixel rebasing:
// no glitch detection that looks at neighbours, no state carried from launch to launch). Deep views:
// the reference orbit (MPFR) and its BLA table are computed ONCE on the calling thread, on the host, and
// copied to every GPU (DeepRenderer::prepareShared).
//
// A GPU that fails (out of memory, a failed launch) stops taking bands; the band it held goes back into
// the queue and the other GPUs finish it and the rest, so every band computed is kept and the image is
// complete; SplitReport::failureSentence() says so in one sentence. Only when every worker fails does
// the render throw.
//
// Splitting pays for large stills (4K and up) and deep views; interactive frames stay on one GPU (a
// screen-sized frame takes a few milliseconds, less than starting the threads and copies costs).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/image.hpp"
#include "gpulab/mandelbrot/deep_reference.hpp"
#include "gpulab/mandelbrot/palette.hpp"
#include "gpulab/mandelbrot/renderer.hpp"
#include "gpulab/mandelbrot/view.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// The split: bands, the shared queue, the workers (no GPU needed: the CPU path and the tests use it)

/// Rows [first, first + count) of the raw plane; `index` is its place in the plan.
struct RowBand {
  int index = 0;
  int first = 0;
  int count = 0;
};

/// Bands covering `rows` rows in order, each a multiple of `align` rows (the supersampling factor, so a
/// band colours whole output rows; `rows` must be a multiple of it), the last one possibly shorter.
/// `bandRows` 0 picks the height: about max(64, 16 x workers) bands, at least 16 rows (one block of the
/// kernels). Throws std::invalid_argument with one sentence for rows < 1, workers < 1, align < 1, rows
/// not a multiple of align, or a bandRows that is negative or not a multiple of align.
std::vector<RowBand> planBands(int rows, int workers, int align = 1, int bandRows = 0);

/// Test hook: worker `worker` throws (as a GPU running out of memory would) when it is about to start
/// its band number afterBands + 1; -1: off. So that it fires whatever the timing, the other workers take
/// no band until then (they then finish the rest). The CLI has no option for it.
struct SplitFailureHook {
  int worker = -1;
  int afterBands = 0;
};

/// What one worker did.
struct SplitWorker {
  int device = -1;     ///< its GPU; -1 for a CPU worker
  std::string name;    ///< "GPU 1", "worker 1 (GPU 0)" when two workers share a device, "CPU worker 1"
  int bands = 0;       ///< bands it finished (computed and copied back)
  int rows = 0;        ///< rows of those bands
  double busyMs = 0;   ///< time inside its bands (steady clock)
  double setupMs = 0;  ///< its buffers, its copy of the deep reference (steady clock)
  bool failed = false;
  std::string failure;  ///< what it threw
};

/// What a split render did.
struct SplitReport {
  std::vector<SplitWorker> workers;
  int bandCount = 0;
  int rows = 0;
  int reassigned = 0;  ///< bands a failed worker gave back, finished by the others
  double wallMs = 0;   ///< first worker started to last one done (steady clock)

  bool anyFailed() const noexcept;
  /// One sentence when a worker failed ("GPU 1 failed after 7 bands (out of memory); GPU 0 finished
  /// its band in flight and the rest: the image is complete."); empty otherwise.
  std::string failureSentence() const;
  /// "GPU 0: 33 bands, 4,455 rows (52%); GPU 1: 31 bands, 4,185 rows (48%)".
  std::string sharesText() const;
};

/// Runs `bands` on one thread per entry of `devices` (a device may repeat; -1: a CPU worker). Each
/// thread calls setup(worker), then render(worker, band) for the next band of the shared queue until
/// none is left, then teardown(worker) (always, on that thread: device memory is freed where it
/// was made). A band is done once render returns: it must be in the host image by then. A worker whose
/// setup or render throws stops; the band it held goes back to the queue, and a worker that finds the
/// queue empty waits while others still hold bands that may come back. `cancel` is checked before each
/// band (OperationCancelled after every thread stopped). Throws std::runtime_error with one sentence
/// when every worker failed.
SplitReport runBandQueue(const std::vector<RowBand>& bands, const std::vector<int>& devices,
                         const std::function<void(int worker)>& setup,
                         const std::function<void(int worker, const RowBand& band)>& render,
                         const std::function<void(int worker)>& teardown, const SplitFailureHook& hook = {},
                         const std::atomic<bool>* cancel = nullptr);

// ---------------------------------------------------------------------------------------------
// Stills

struct StillSplitOptions {
  int bandRows = 0;                    ///< 0: planBands chooses
  bool wantRaw = true;                 ///< copy the raw plane back
  std::optional<Colouring> colouring;  ///< colour each band where it was computed and copy it back
  ChannelOrder order = ChannelOrder::Rgba;
  DeepReference* reference = nullptr;  ///< deep views: a reference kept by the caller (reused while it
                                       ///< serves); null: a fresh one for this still
  SplitFailureHook failure;            ///< test hook
  const std::atomic<bool>* cancel = nullptr;
};

struct SplitStill {
  Image raw;   ///< rawWidth x rawHeight f32, when wantRaw
  Image rgba;  ///< imageWidth x imageHeight RGBA (or BGRA) u8, with a colouring
  PrecisionChoice precision;
  std::optional<DeepReference::Update> reference;  ///< deep views: what preparing the shared reference did
  double referenceMs = 0;                          ///< deep views: orbit and table on the host, once (steady clock)
  SplitReport report;
};

/// The still on the GPUs `devices` (one worker each, in that order; repeating a device runs several
/// workers on it, which exercises the split on a one-GPU machine). Blocking. Each GPU holds a raw plane
/// of the whole frame (kernels write rows at their own row numbers) and band-sized colour and staging
/// buffers. Throws std::invalid_argument (bad view, empty device list), PrecisionLimitError,
/// OperationCancelled, std::runtime_error when every GPU failed.
SplitStill renderStillOnGpus(const std::vector<int>& devices, const MandelbrotView& view,
                             const MandelbrotOptions& options = {}, const StillSplitOptions& split = {});

/// The same split with `workers` CPU workers (one thread each, the CPU renderers' row functions), the
/// raw plane identical to renderRawCpu's; colouring (colourRaw) after the split. What the tests run on
/// a machine without a GPU.
SplitStill renderStillSplitCpu(int workers, const MandelbrotView& view, const MandelbrotOptions& options = {},
                               const StillSplitOptions& split = {});

}  // namespace gpulab
