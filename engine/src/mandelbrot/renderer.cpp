// The GPU renderer: one raw plane per frame (escape time or perturbation), colouring, downloads.
#include "gpulab/mandelbrot/renderer.hpp"

#include <cstring>
#include <stdexcept>

#include "gpulab/kernels/cuda_check.hpp"
#include "internal/mandelbrot_params.hpp"

namespace gpulab {

namespace {

/// The raw plane of `frame` in `raw` as the colouring kernel reads it (rows packed).
kernels::Plane<const float> rawPlane(const MandelbrotFrame& frame, const DeviceBuffer& raw) {
  const int w = frame.view.rawWidth();
  return {raw.as<float>(), w, frame.view.rawHeight(), static_cast<std::size_t>(w) * sizeof(float)};
}

}  // namespace

const MandelbrotFrame& MandelbrotRenderer::frame() const {
  if (!hasFrame())
    throw std::logic_error("the Mandelbrot renderer has not computed a frame yet (or the GPU was reset)");
  return frame_;
}

std::size_t MandelbrotRenderer::deviceBytes() const noexcept { return raw_.size() + rgba_.size() + table_.size(); }

void MandelbrotRenderer::ensureDevice(GpuContext& gpu) {
  if (device_ == gpu.device() && epoch_ == deviceEpoch()) return;
  // A different device, or the device was reset: everything held belongs to the old one.
  if (epoch_ != deviceEpoch()) deep_.reset();  // its buffers and events died with the old context
  raw_.reset();
  rgba_.reset();
  table_.reset();
  tableUploaded_ = false;
  tableCopied_.reset();
  hasFrame_ = false;
  hasColour_ = false;
  device_ = gpu.device();
  epoch_ = deviceEpoch();
}

MandelbrotRenderer::MandelbrotRenderer() = default;
MandelbrotRenderer::~MandelbrotRenderer() = default;

const MandelbrotFrame& MandelbrotRenderer::compute(GpuContext& gpu, const MandelbrotView& view,
                                                   const MandelbrotOptions& options, const std::atomic<bool>* cancel) {
  const PrecisionChoice choice = choosePrecision(view);  // validates; throws before any work
  ensureDevice(gpu);
  raw_.reserve(static_cast<std::size_t>(view.rawWidth()) * view.rawHeight() * sizeof(float));
  std::optional<DeepFrame> deep;
  if (choice.used == Precision::Perturbation) {
    if (!deep_) deep_ = std::make_unique<DeepRenderer>();
    deep = deep_->prepare(gpu, deepViewOf(view), deepOptionsOf(options), cancel);
  }
  frame_ = {view, options, choice, std::move(deep)};
  hasFrame_ = true;
  hasColour_ = false;
  relaunch(gpu);
  return frame_;
}

void MandelbrotRenderer::relaunch(GpuContext& gpu) {
  const MandelbrotFrame& f = frame();
  const int width = f.view.rawWidth(), height = f.view.rawHeight();
  const std::size_t pitch = static_cast<std::size_t>(width) * sizeof(float);
  // The precision ladder: one case per rung, perturbation past the last.
  switch (f.precision.used) {
    case Precision::F32:
    case Precision::F64: {
      const kernels::EscapeParams p = escapeParams(f.view, f.options);
      const kernels::EscapeSchedule schedule = f.options.variant == MandelbrotVariant::Plain
                                                   ? kernels::EscapeSchedule::Plain
                                                   : kernels::EscapeSchedule::Optimized;
      const kernels::Plane<float> raw{raw_.as<float>(), width, height, pitch};
      if (f.precision.used == Precision::F32)
        kernels::launchEscapeTime<float>(p, schedule, raw, gpu.stream());
      else
        kernels::launchEscapeTime<double>(p, schedule, raw, gpu.stream());
      return;
    }
    case Precision::Perturbation:
      deep_->enqueue(gpu, raw_.as<float>(), pitch);
      return;
    case Precision::Auto:
      break;
  }
  throw std::logic_error("choosePrecision returned no precision");
}

void MandelbrotRenderer::colour(GpuContext& gpu, const Colouring& colouring, ChannelOrder order) {
  ensureDevice(gpu);  // after a device reset the frame is gone: compute() again
  if (!hasFrame_) throw std::logic_error("colour() needs a frame: call compute() first");
  validate(colouring);
  const std::array<Rgba8, Palette::kTableSize> table = colouring.palette.table();
  if (!tableUploaded_ || table != uploadedTable_) {
    table_.reserve(sizeof table);
    tableStaging_.reserve(sizeof table);
    if (tableCopied_) tableCopied_->synchronize();  // the previous table copy has left the staging buffer
    std::memcpy(tableStaging_.data(), table.data(), sizeof table);
    GPULAB_CUDA_CHECK(
        cudaMemcpyAsync(table_.data(), tableStaging_.data(), sizeof table, cudaMemcpyHostToDevice, gpu.stream()));
    if (!tableCopied_) tableCopied_.emplace();
    tableCopied_->record(gpu.stream());
    uploadedTable_ = table;
    tableUploaded_ = true;
  }
  const MandelbrotView& v = frame_.view;
  rgba_.reserve(static_cast<std::size_t>(v.imageWidth) * v.imageHeight * 4);
  const kernels::Plane<uchar4> rgba{rgba_.as<uchar4>(), v.imageWidth, v.imageHeight,
                                    static_cast<std::size_t>(v.imageWidth) * 4};
  kernels::ColourParams params = colourParams(colouring, v.supersample);
  params.bgra = order == ChannelOrder::Bgra;
  kernels::launchColourize(rawPlane(frame_, raw_), table_.as<uchar4>(), params, rgba, gpu.stream());
  hasColour_ = true;
}

Image MandelbrotRenderer::download(GpuContext& gpu, const void* src, int width, int height, int channels,
                                   PixelType type) {
  Image image(width, height, channels, type);
  staging_.reserve(image.sizeBytes());
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(staging_.data(), src, image.sizeBytes(), cudaMemcpyDeviceToHost, gpu.stream()));
  gpu.synchronize();
  std::memcpy(image.data(), staging_.data(), image.sizeBytes());
  return image;
}

Image MandelbrotRenderer::downloadRaw(GpuContext& gpu) {
  const MandelbrotView& v = frame().view;
  return download(gpu, raw_.data(), v.rawWidth(), v.rawHeight(), 1, PixelType::F32);
}

Image MandelbrotRenderer::downloadRgba(GpuContext& gpu) {
  if (!hasColour_) throw std::logic_error("downloadRgba() needs a coloured frame: call colour() first");
  const MandelbrotView& v = frame_.view;
  return download(gpu, rgba_.data(), v.imageWidth, v.imageHeight, 4, PixelType::U8);
}

void MandelbrotRenderer::downloadRgba(GpuContext& gpu, std::byte* dst, std::size_t dstPitch) {
  if (!hasColour_) throw std::logic_error("downloadRgba() needs a coloured frame: call colour() first");
  const MandelbrotView& v = frame_.view;
  const std::size_t rowBytes = static_cast<std::size_t>(v.imageWidth) * 4;
  if (dst == nullptr || dstPitch < rowBytes)
    throw std::invalid_argument("downloadRgba() needs a destination with rows of at least " + std::to_string(rowBytes) +
                                " bytes, not " + std::to_string(dstPitch));
  const std::size_t bytes = rowBytes * v.imageHeight;
  staging_.reserve(bytes);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(staging_.data(), rgba_.data(), bytes, cudaMemcpyDeviceToHost, gpu.stream()));
  gpu.synchronize();
  const auto* src = static_cast<const std::byte*>(staging_.data());
  for (int y = 0; y < v.imageHeight; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y) * dstPitch, src + static_cast<std::size_t>(y) * rowBytes, rowBytes);
}

Image renderMandelbrot(GpuContext& gpu, MandelbrotRenderer& renderer, const MandelbrotView& view,
                       const Colouring& colouring, const MandelbrotOptions& options) {
  validate(colouring);
  renderer.compute(gpu, view, options);
  renderer.colour(gpu, colouring);
  return renderer.downloadRgba(gpu);
}

double countIterations(const Image& countsRaw, int maxIterations) {
  if (countsRaw.type() != PixelType::F32 || countsRaw.channels() != 1)
    throw std::invalid_argument("countIterations needs a 1-channel f32 raw plane, not " + countsRaw.describe());
  double total = 0;
  for (float v : countsRaw.samples<float>()) total += v < 0 ? static_cast<double>(maxIterations) : v;
  return total;
}

}  // namespace gpulab
