// Running an operation tile by tile: which operations can, what a window costs, and the loop.
#include "gpulab/tiling/tiled_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/fft/fft_conv.hpp"
#include "gpulab/fft/fft_filter.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/sobel.hpp"
#include "gpulab/kernels/cuda_check.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Which operations tile, and how far they read

std::size_t gpuMemoryBudget(GpuContext& gpu) {
  const std::size_t limit = gpuMemoryLimit();
  const MemoryUsage memory = deviceMemory(gpu.device());
  const std::size_t usable = memory.free / 10 * 9;
  return limit == 0 ? usable : std::min(limit, usable);
}

namespace {

/// The kernel radius of the operations whose reach() is -1 only because of their border or method.
std::optional<int> localRadius(const Operation& op) {
  if (const auto* box = dynamic_cast<const BoxBlur*>(&op)) return box->radius();
  if (dynamic_cast<const Sobel*>(&op) != nullptr) return 1;
  if (const auto* conv = dynamic_cast<const Conv2D*>(&op))
    return std::max(conv->kernel().width, conv->kernel().height) / 2;
  if (const auto* conv = dynamic_cast<const ConvMethodFilter*>(&op))
    return std::max(conv->spec().kernel.width, conv->spec().kernel.height) / 2;
  return std::nullopt;
}

bool wrapsBorder(const Operation& op) {
  const ParamValues p = op.params();
  const auto it = p.find("border");
  return it != p.end() && it->second == "wrap";
}

std::size_t pitchedBytes(int width, int height, int channels, PixelType type) {
  const std::size_t row = static_cast<std::size_t>(width) * bytesPerSample(type);
  const std::size_t pitch = (row + 511) / 512 * 512;  // cudaMallocPitch's alignment on current GPUs
  return pitch * static_cast<std::size_t>(height) * static_cast<std::size_t>(channels);
}

}  // namespace

int tileHalo(const Operation& op, const ImageShape& in, std::string* why) {
  auto refuse = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return -1;
  };
  ImageShape out;
  try {
    out = op.outputShape(in);
  } catch (const std::invalid_argument& e) {
    return refuse(e.what());
  }
  if (out.width != in.width || out.height != in.height)
    return refuse(op.describe() + " gives a " + std::to_string(out.width) + "x" + std::to_string(out.height) +
                  " result from a " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                  " image: only operations that keep the image's size ('same' mode) run in tiles");
  if (const std::optional<int> radius = localRadius(op)) return *radius;
  if (op.reach() >= 0) return op.reach();
  if (op.name() == "fft-filter")
    return refuse("the FFT filter (" + op.describe() +
                  ") multiplies the spectrum of the whole image, so every output pixel depends on every input "
                  "pixel and it cannot run in tiles");
  return refuse(op.describe() + " reads the whole image for every output pixel (" +
                (wrapsBorder(op) ? std::string("its wrap border") : std::string("no bounded reach")) +
                ") and cannot run in tiles");
}

std::size_t gpuBytesEstimate(const Operation& op, const ImageShape& in) {
  ImageShape out = in;
  try {
    out = op.outputShape(in);
  } catch (const std::invalid_argument&) {
  }
  const std::size_t sample = bytesPerSample(in.type);
  const std::size_t pixels = static_cast<std::size_t>(in.width) * static_cast<std::size_t>(in.height);
  std::size_t bytes = pitchedBytes(in.width, in.height, in.channels, in.type) +
                      pitchedBytes(out.width, out.height, out.channels, out.type);
  // Upload and download staging on the device: the interleaved pixels, for more than one channel.
  const std::size_t outPixels = static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height);
  bytes += std::max(in.channels > 1 ? pixels * in.channels * sample : 0,
                    out.channels > 1 ? outPixels * out.channels * bytesPerSample(out.type) : 0);
  if (const auto* box = dynamic_cast<const BoxBlur*>(&op)) {
    const int tiledLimit = in.type == PixelType::U8 ? 768 : 192;  // beyond: the summed-area table
    if (box->radius() > tiledLimit)
      bytes += (static_cast<std::size_t>(in.width) + 1) * (static_cast<std::size_t>(in.height) + 1) * 8;
  } else if (const auto* conv = dynamic_cast<const ConvMethodFilter*>(&op)) {
    // The padded method's planes: real planes, half spectra of every channel, the kernel's half
    // spectrum, and cuFFT's workspace (about one set of half spectra).
    const Kernel2D& k = conv->spec().kernel;
    const std::size_t real = in.type == PixelType::F64 ? 8 : 4;
    const std::size_t wp = static_cast<std::size_t>(nextFftSize(in.width + k.width - 1));
    const std::size_t hp = static_cast<std::size_t>(nextFftSize(in.height + k.height - 1));
    const std::size_t channels = static_cast<std::size_t>(in.channels);
    const std::size_t half = (wp / 2 + 1) * hp * 2 * real;
    bytes += wp * hp * real * channels + 2 * half * channels + half;
  } else if (const auto* fft = dynamic_cast<const FftFilter*>(&op)) {
    // Real planes (packed copies unless transformed in place) and half spectra of the filtered
    // channels, and cuFFT's workspace (about one set of half spectra).
    const auto [fw, fh] = fft->fftSize(in.width, in.height);
    const std::size_t real = in.type == PixelType::F64 ? 8 : 4;
    const std::size_t channels = static_cast<std::size_t>(fftFilteredChannels(in.channels, in.type));
    const std::size_t half = (static_cast<std::size_t>(fw) / 2 + 1) * static_cast<std::size_t>(fh) * 2 * real;
    bytes += static_cast<std::size_t>(fw) * static_cast<std::size_t>(fh) * real * channels + 2 * half * channels;
  } else if (dynamic_cast<const Sobel*>(&op) == nullptr && dynamic_cast<const Conv2D*>(&op) == nullptr) {
    bytes += bytes / 2;  // an operation this estimate does not know: room for its work buffers
  }
  return bytes + bytes / 8;  // allocation granularity, plans, kernels' small buffers
}

TilePlan planTiles(const Operation& op, const ImageShape& in, std::size_t budget) {
  std::string why;
  const int halo = tileHalo(op, in, &why);
  if (halo < 0) throw std::invalid_argument(why);
  const bool wrap = wrapsBorder(op);
  return planTiles(in.width, in.height, halo, wrap, budget, [&](int w, int h) {
    return gpuBytesEstimate(op, {w, h, in.channels, in.type});
  });
}

// ---------------------------------------------------------------------------------------------
// Running

std::string TiledRun::summary() const {
  char text[512];
  std::snprintf(text, sizeof text,
                "tiled: %s, limit %s; upload %.1f ms, compute %.2f ms, download %.1f ms (sums over the tiles), "
                "wall %.0f ms; peak GPU use %s (measured)",
                plan.describe().c_str(), limit == 0 ? "none (free memory)" : formatByteSize(limit).c_str(), uploadMs,
                computeMs, downloadMs, wallMs, formatByteSize(peakGpuBytes).c_str());
  return text;
}

namespace {

/// Pixels `rect` of `image` into `out` (its allocation reused: no fresh pages per tile), coordinates
/// taken modulo the image's size when `wrap` (the wrap border's halo; the rectangle may then lie
/// partly outside the image), else `rect` must be inside it.
void gatherRows(const Image& image, const PixelRect& rect, bool wrap, std::byte* out) {
  const std::size_t pixel = static_cast<std::size_t>(image.channels()) * bytesPerSample(image.type());
  const int w = image.width(), h = image.height();
  for (int y = 0; y < rect.height; ++y) {
    const int sy = wrap ? ((rect.y + y) % h + h) % h : rect.y + y;
    const std::byte* src = image.row<std::byte>(sy);
    std::byte* dst = out + static_cast<std::size_t>(y) * static_cast<std::size_t>(rect.width) * pixel;
    int x = 0;
    while (x < rect.width) {
      const int sx = wrap ? ((rect.x + x) % w + w) % w : rect.x + x;
      const int run = std::min(rect.width - x, w - sx);
      std::memcpy(dst + static_cast<std::size_t>(x) * pixel, src + static_cast<std::size_t>(sx) * pixel,
                  static_cast<std::size_t>(run) * pixel);
      x += run;
    }
  }
}

void gatherWindow(const Image& image, const PixelRect& rect, bool wrap, Image& out) {
  out.reshape(rect.width, rect.height, image.channels(), image.type());
  gatherRows(image, rect, wrap, out.data());
}

/// A fresh operation like `op` where its buffers depend on the window size (FFT plans and kernel
/// spectra are kept per size): one per window size, released before the next.
std::unique_ptr<Operation> freshCopy(const Operation& op) {
  if (const auto* conv = dynamic_cast<const ConvMethodFilter*>(&op)) {
    auto copy = std::make_unique<ConvMethodFilter>(conv->spec());
    if (auto model = conv->gpuModel(selectedDevice())) copy->pinGpuModel(*model);
    return copy;
  }
  return nullptr;
}

}  // namespace

TiledRun runTiled(GpuContext& gpu, Operation& op, const Image& in, const TilePlan& plan, const CpuControl& control) {
  if (plan.imageWidth != in.width() || plan.imageHeight != in.height())
    throw std::invalid_argument("the tile plan is for a " + std::to_string(plan.imageWidth) + "x" +
                                std::to_string(plan.imageHeight) + " image, not " + in.describe());
  const ImageShape outShape = op.outputShape(shapeOf(in));
  TiledRun run;
  run.plan = plan;
  run.limit = gpuMemoryLimit();
  run.output = Image(outShape.width, outShape.height, outShape.channels, outShape.type);
  Stopwatch wall;

  // Tiles grouped by window size, so that each size's plans and buffers are made once.
  std::vector<int> order(static_cast<std::size_t>(plan.count()));
  std::iota(order.begin(), order.end(), 0);
  auto sizeOf = [&](int i) {
    const PixelRect w = plan.window(i);
    return std::pair{w.width, w.height};
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sizeOf(a) < sizeOf(b); });

  gpu.synchronize();
  const std::size_t freeBefore = deviceMemory(gpu.device()).free;
  std::size_t leastFree = freeBefore;
  Event start, stop, copyStart, copyStop;
  DeviceImage dIn, dOut;
  Image window, filtered;
  std::unique_ptr<Operation> fresh;
  std::pair<int, int> currentSize{-1, -1};
  const std::size_t inSample = bytesPerSample(in.type()), outSample = bytesPerSample(outShape.type);
  const std::size_t outPixel = static_cast<std::size_t>(outShape.channels) * outSample;
  // One plane in or out: straight between the image and pinned buffers of our own (one host copy
  // fewer, and only the interior comes back); more channels go through the context's
  // (de)interleaving upload and download.
  const bool planarIn = in.channels() == 1, planarOut = outShape.channels == 1;
  PinnedBuffer hostIn, hostOut;

  for (std::size_t n = 0; n < order.size(); ++n) {
    const int i = order[n];
    control.throwIfCancelled();
    const PixelRect t = plan.tile(i);
    const PixelRect w = plan.window(i);
    const bool newSize = sizeOf(i) != currentSize;
    if (newSize) {
      // Free the last size's buffers before the next size's exist (never both at once).
      dIn = DeviceImage();
      dOut = DeviceImage();
      fresh.reset();
      fresh = freshCopy(op);
      currentSize = sizeOf(i);
      ++run.distinctWindows;
    }
    Stopwatch host;
    if (planarIn) {
      const std::size_t rowBytes = static_cast<std::size_t>(w.width) * inSample;
      hostIn.reserve(rowBytes * static_cast<std::size_t>(w.height));
      gatherRows(in, w, plan.wrap, hostIn.as<std::byte>());
      const double gatherMs = host.elapsedMs();
      if (dIn.empty()) dIn = DeviceImage(w.width, w.height, 1, in.type());
      copyStart.record(gpu.stream());
      GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(dIn.planeData(0), dIn.pitch(), hostIn.data(), rowBytes, rowBytes,
                                          static_cast<std::size_t>(w.height), cudaMemcpyHostToDevice, gpu.stream()));
      copyStop.record(gpu.stream());
      copyStop.synchronize();
      run.uploadMs += gatherMs + copyStop.elapsedSince(copyStart);
    } else {
      gatherWindow(in, w, plan.wrap, window);
      const double gatherMs = host.elapsedMs();
      gpu.upload(window, dIn, (fresh ? *fresh : op).gpuLayout(shapeOf(window)));
      run.uploadMs += gatherMs + gpu.lastUpload().totalMs();
    }
    if (newSize) run.prepareMs += (fresh ? *fresh : op).prepareGpu(gpu, dIn, dOut);
    Operation& target = fresh ? *fresh : op;
    start.record(gpu.stream());
    target.runGpu(gpu, dIn, dOut);
    stop.record(gpu.stream());
    stop.synchronize();
    run.computeMs += stop.elapsedSince(start);
    leastFree = std::min(leastFree, deviceMemory(gpu.device()).free);
    const int ix = t.x - w.x, iy = t.y - w.y;  // the interior inside the window
    const std::size_t interiorRow = static_cast<std::size_t>(t.width) * outPixel;
    const std::byte* source = nullptr;
    std::size_t sourceStride = 0;
    double copyMs = 0;
    if (planarOut) {
      hostOut.reserve(interiorRow * static_cast<std::size_t>(t.height));
      copyStart.record(gpu.stream());
      GPULAB_CUDA_CHECK(cudaMemcpy2DAsync(
          hostOut.data(), interiorRow,
          dOut.planeData(0) + static_cast<std::size_t>(iy) * dOut.pitch() + static_cast<std::size_t>(ix) * outSample,
          dOut.pitch(), interiorRow, static_cast<std::size_t>(t.height), cudaMemcpyDeviceToHost, gpu.stream()));
      copyStop.record(gpu.stream());
      copyStop.synchronize();
      copyMs = copyStop.elapsedSince(copyStart);
      source = hostOut.as<std::byte>();
      sourceStride = interiorRow;
    } else {
      gpu.download(dOut, filtered);
      copyMs = gpu.lastDownload().totalMs();
      source = filtered.row<std::byte>(iy) + static_cast<std::size_t>(ix) * outPixel;
      sourceStride = filtered.rowBytes();
    }
    Stopwatch paste;
    for (int y = 0; y < t.height; ++y)
      std::memcpy(run.output.row<std::byte>(t.y + y) + static_cast<std::size_t>(t.x) * outPixel,
                  source + static_cast<std::size_t>(y) * sourceStride, interiorRow);
    run.downloadMs += copyMs + paste.elapsedMs();
    control.report(static_cast<double>(n + 1) / static_cast<double>(order.size()));
  }
  run.peakGpuBytes = freeBefore - leastFree;
  run.wallMs = wall.elapsedMs();
  return run;
}

}  // namespace gpulab
