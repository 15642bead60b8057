#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "gpulab/core/device.hpp"
#include "gpulab/core/version.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "internal/mandelbrot_params.hpp"

namespace gpulab {

namespace {

/// The raw plane of `frame` in `raw` as the colouring kernel reads it (rows packed).
kernels::Plane<const float> rawPlane(const MandelbrotFrame& frame, const DeviceBuffer& raw) {
  const int w = frame.view.rawWidth();
  return {raw.as<float>(), w, frame.view.rawHeight(), static_cast<std::size_t>(w) * sizeof(float)};
}

constexpr std::array<PrecisionRung, 2> kLadder{{
    {Precision::F32, 0x1p-20},
    {Precision::F64, 0x1p-49},
}};

std::string formatNumber(double value, const char* format = "%.17g") {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

/// The whole of `text` as a finite double, or nullopt.
std::optional<double> parseDouble(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<int> parseInt(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string hexColour(Rgba8 c) {
  char text[16];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
  return text;
}

std::optional<Rgba8> parseHexColour(std::string_view text) {
  if (text.size() != 7 || text[0] != '#') return std::nullopt;
  Rgba8 c;
  std::uint8_t* channels[] = {&c.r, &c.g, &c.b};
  for (int k = 0; k < 3; ++k) {
    unsigned value = 0;
    const char* first = text.data() + 1 + 2 * k;
    const auto [end, error] = std::from_chars(first, first + 2, value, 16);
    if (error != std::errc() || end != first + 2) return std::nullopt;
    *channels[k] = static_cast<std::uint8_t>(value);
  }
  return c;
}

bool finiteWithin(double v, double limit) { return std::isfinite(v) && std::abs(v) <= limit; }

}  // namespace

std::array<double, 2> parsePoint(std::string_view text, std::string_view what) {
  const std::size_t comma = text.find(',');
  if (comma != std::string_view::npos) {
    const auto x = parseDouble(text.substr(0, comma));
    const auto y = parseDouble(text.substr(comma + 1));
    if (x && y) return {*x, *y};
  }
  throw std::invalid_argument(std::string(what) + " '" + std::string(text) +
                              "' is not a point: write two finite numbers as X,Y (e.g. -0.5,0)");
}

// ---------------------------------------------------------------------------------------------
// Views and precision

std::span<const PrecisionRung> precisionLadder() noexcept { return kLadder; }

void validate(const MandelbrotView& v) {
  if (!std::isfinite(v.width) || v.width <= 0 || v.width > kMandelbrotMaxWidth)
    throw std::invalid_argument("width " + formatNumber(v.width, "%g") +
                                " is not allowed: the view's width in the complex plane must be in (0, 100]");
  if (!finiteWithin(v.centerX, kMandelbrotMaxCoordinate) || !finiteWithin(v.centerY, kMandelbrotMaxCoordinate))
    throw std::invalid_argument("centre (" + formatNumber(v.centerX, "%g") + ", " + formatNumber(v.centerY, "%g") +
                                ") is not allowed: both coordinates must be finite and within +-10");
  if (v.julia &&
      (!finiteWithin(v.juliaX, kMandelbrotMaxCoordinate) || !finiteWithin(v.juliaY, kMandelbrotMaxCoordinate)))
    throw std::invalid_argument("Julia constant (" + formatNumber(v.juliaX, "%g") + ", " +
                                formatNumber(v.juliaY, "%g") +
                                ") is not allowed: both coordinates must be finite and within +-10");
  if (v.maxIterations < 1 || v.maxIterations > kMaxMandelbrotIterations)
    throw std::invalid_argument(std::to_string(v.maxIterations) +
                                " iterations are not allowed: use 1 to 16777216 (2^24)");
  if (v.supersample < 1 || v.supersample > kMandelbrotMaxSupersample)
    throw std::invalid_argument("supersampling " + std::to_string(v.supersample) + " is not allowed: use 1 to 4");
  if (v.imageWidth <= 0 || v.imageHeight <= 0)
    throw std::invalid_argument("image size " + std::to_string(v.imageWidth) + "x" + std::to_string(v.imageHeight) +
                                " is empty: both sides must be at least 1 pixel");
  if (v.imageWidth > kMaxImageDimension / v.supersample || v.imageHeight > kMaxImageDimension / v.supersample)
    throw std::invalid_argument("image size " + std::to_string(v.imageWidth) + "x" + std::to_string(v.imageHeight) +
                                " with supersampling " + std::to_string(v.supersample) + " exceeds the limit of " +
                                std::to_string(kMaxImageDimension) + " samples a side");
  validateImageShape(v.rawWidth(), v.rawHeight(), 4);
}

int autoIterations(double width) {
  if (!std::isfinite(width) || width <= 0)
    throw std::invalid_argument("width " + formatNumber(width, "%g") + " is not allowed: it must be positive");
  const double depth = std::log10(std::max(1.0, 3.0 / width));
  const double n = std::round(256.0 * std::pow(1.0 + depth, 1.25));
  return static_cast<int>(std::min(n, static_cast<double>(kMaxMandelbrotIterations)));
}

std::string PrecisionChoice::describe() const {
  const double limit = used == Precision::F32 ? kLadder[0].minRelativeSpacing : kLadder[1].minRelativeSpacing;
  char text[160];
  std::snprintf(text, sizeof text, "%s (%s; relative pixel spacing 2^%.1f, %s down to 2^%.0f)%s",
                std::string(toString(used)).c_str(), forced ? "forced" : "auto", std::log2(relativeSpacing),
                std::string(toString(used)).c_str(), std::log2(limit),
                belowLimit ? ": too coarse for this zoom, expect blocks" : "");
  return text;
}

PrecisionChoice choosePrecision(const MandelbrotView& view) {
  validate(view);
  PrecisionChoice choice;
  const double scale = std::max({std::abs(view.centerX), std::abs(view.centerY), 1.0});
  choice.relativeSpacing = view.spacing() / scale;
  if (choice.relativeSpacing < kLadder.back().minRelativeSpacing)
    throw PrecisionLimitError("zoom beyond float64 precision (width " + formatNumber(view.width, "%.3g") +
                              "): deeper zooms need perturbation rendering (not yet available)");
  Precision automatic = Precision::F64;
  for (const PrecisionRung& rung : kLadder)
    if (choice.relativeSpacing >= rung.minRelativeSpacing) {
      automatic = rung.precision;
      break;
    }
  choice.forced = view.precision != Precision::Auto;
  choice.used = choice.forced ? view.precision : automatic;
  choice.belowLimit = choice.used == Precision::F32 && automatic == Precision::F64;
  return choice;
}

MandelbrotView seahorseValleyView() {
  MandelbrotView v;
  v.centerX = -0.743643887037151;
  v.centerY = 0.13182590420533;
  v.width = 0.005;
  v.maxIterations = 1000;
  return v;
}

MandelbrotView wholeSetView() {
  MandelbrotView v;
  v.centerX = -0.5;
  v.centerY = 0.0;
  v.width = 3.0;
  v.maxIterations = 1000;
  return v;
}

kernels::EscapeParams escapeParams(const MandelbrotView& view, const MandelbrotOptions& options) {
  kernels::EscapeParams p;
  p.centerX = view.centerX;
  p.centerY = view.centerY;
  p.spacing = view.spacing();
  p.juliaX = view.juliaX;
  p.juliaY = view.juliaY;
  p.width = view.rawWidth();
  p.height = view.rawHeight();
  p.periodicityTolerance = p.spacing * kernels::kPeriodicityTolerance;
  p.maxIterations = view.maxIterations;
  p.julia = view.julia;
  const bool plain = options.variant == MandelbrotVariant::Plain;
  p.interiorTests = options.interiorTests && !plain;
  p.periodicity = options.periodicity && !plain;
  p.smooth = options.smooth;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Palettes

namespace {

Palette builtIn(std::string_view name) {
  auto stop = [](double position, int r, int g, int b) {
    return ColourStop{
        position, Rgba8{static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g), static_cast<std::uint8_t>(b), 255}};
  };
  if (name == "classic")  // Ultra Fractal's default gradient
    return Palette::gradient({stop(0.0, 0, 7, 100), stop(0.16, 32, 107, 203), stop(0.42, 237, 255, 255),
                              stop(0.6425, 255, 170, 0), stop(0.8575, 0, 2, 0)},
                             "classic");
  if (name == "fire")
    return Palette::gradient({stop(0.0, 0, 0, 0), stop(0.2, 120, 0, 0), stop(0.45, 230, 60, 0), stop(0.65, 255, 170, 0),
                              stop(0.82, 255, 240, 120), stop(0.92, 255, 255, 255)},
                             "fire");
  if (name == "ice")
    return Palette::gradient({stop(0.0, 0, 5, 30), stop(0.3, 0, 60, 140), stop(0.55, 60, 160, 230),
                              stop(0.75, 190, 235, 255), stop(0.88, 255, 255, 255)},
                             "ice");
  if (name == "grayscale") return Palette::gradient({stop(0.0, 0, 0, 0), stop(0.5, 255, 255, 255)}, "grayscale");
  if (name == "rainbow")
    return Palette::gradient({stop(0.0, 255, 0, 0), stop(1.0 / 6, 255, 255, 0), stop(2.0 / 6, 0, 255, 0),
                              stop(3.0 / 6, 0, 255, 255), stop(4.0 / 6, 0, 0, 255), stop(5.0 / 6, 255, 0, 255)},
                             "rainbow");
  std::string names;
  for (const std::string& n : paletteNames()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown palette '" + std::string(name) + "': use " + names +
                              ", or a gradient such as 0:#000000,0.5:#ffffff");
}

}  // namespace

std::vector<std::string> paletteNames() { return {"classic", "fire", "ice", "grayscale", "rainbow"}; }

Palette Palette::named(std::string_view name) { return builtIn(name); }

Palette Palette::gradient(std::vector<ColourStop> stops, std::string name) {
  if (stops.empty()) throw std::invalid_argument("a gradient needs at least one colour stop");
  for (std::size_t k = 0; k < stops.size(); ++k) {
    const double p = stops[k].position;
    if (!std::isfinite(p) || p < 0 || p >= 1)
      throw std::invalid_argument("gradient stop position " + formatNumber(p, "%g") + " is outside [0, 1)");
    if (k > 0 && p <= stops[k - 1].position)
      throw std::invalid_argument(
          "gradient stop positions must increase: " + formatNumber(stops[k - 1].position, "%g") + " is followed by " +
          formatNumber(p, "%g"));
  }
  Palette palette;
  palette.name_ = std::move(name);
  palette.stops_ = std::move(stops);
  return palette;
}

Palette Palette::parseGradient(std::string_view text) {
  std::vector<ColourStop> stops;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const std::size_t colon = item.find(':');
    const auto position = colon == std::string_view::npos ? std::nullopt : parseDouble(item.substr(0, colon));
    const auto colour = colon == std::string_view::npos ? std::nullopt : parseHexColour(item.substr(colon + 1));
    if (!position || !colour)
      throw std::invalid_argument("gradient stop '" + std::string(item) +
                                  "' is not position:#rrggbb (e.g. 0:#000764,0.5:#ffaa00)");
    stops.push_back({*position, *colour});
    start = end + 1;
  }
  return gradient(std::move(stops), "custom");
}

std::string Palette::gradientText() const {
  std::string text;
  for (const ColourStop& s : stops_) {
    if (!text.empty()) text += ',';
    text += formatNumber(s.position, "%.10g") + ":" + hexColour(s.colour);
  }
  return text;
}

Rgba8 Palette::at(double position) const {
  double t = position - std::floor(position);
  if (stops_.size() == 1) return stops_[0].colour;
  // The stop at or before t (wrapping to the last stop when t precedes the first) and the one after.
  std::size_t a = stops_.size() - 1;
  for (std::size_t k = 0; k < stops_.size(); ++k)
    if (stops_[k].position <= t) a = k;
  const std::size_t b = (a + 1) % stops_.size();
  double from = stops_[a].position, to = stops_[b].position;
  if (to <= from) to += 1.0;
  if (t < from) t += 1.0;
  const double f = (t - from) / (to - from);
  auto mix = [f](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(std::lround(x + f * (static_cast<double>(y) - x)));
  };
  const Rgba8 &ca = stops_[a].colour, &cb = stops_[b].colour;
  return {mix(ca.r, cb.r), mix(ca.g, cb.g), mix(ca.b, cb.b), mix(ca.a, cb.a)};
}

std::array<Rgba8, Palette::kTableSize> Palette::table() const {
  std::array<Rgba8, kTableSize> entries;
  for (int k = 0; k < kTableSize; ++k) entries[k] = at(static_cast<double>(k) / kTableSize);
  return entries;
}

Palette parsePalette(std::string_view nameOrGradient) {
  if (nameOrGradient.find(':') != std::string_view::npos) return Palette::parseGradient(nameOrGradient);
  return Palette::named(nameOrGradient);
}

void validate(const Colouring& colouring) {
  if (!std::isfinite(colouring.density) || colouring.density <= 0)
    throw std::invalid_argument("palette density " + formatNumber(colouring.density, "%g") +
                                " is not allowed: it must be positive (cycles per 32 iterations)");
  if (!std::isfinite(colouring.offset)) throw std::invalid_argument("palette offset must be a finite number of cycles");
}

kernels::ColourParams colourParams(const Colouring& colouring, int supersample) {
  kernels::ColourParams c;
  c.offset = static_cast<float>(colouring.offset - std::floor(colouring.offset));
  c.cyclesPerIteration = static_cast<float>(colouring.density / 32.0);
  c.interior = {colouring.interior.r, colouring.interior.g, colouring.interior.b, colouring.interior.a};
  c.supersample = supersample;
  c.tableSize = Palette::kTableSize;
  return c;
}

// ---------------------------------------------------------------------------------------------
// GPU renderer

const MandelbrotFrame& MandelbrotRenderer::frame() const {
  if (!hasFrame_) throw std::logic_error("the Mandelbrot renderer has not computed a frame yet");
  return frame_;
}

std::size_t MandelbrotRenderer::deviceBytes() const noexcept { return raw_.size() + rgba_.size() + table_.size(); }

void MandelbrotRenderer::ensureDevice(GpuContext& gpu) {
  if (device_ == gpu.device()) return;
  // A different device: everything held belongs to the old one.
  raw_.reset();
  rgba_.reset();
  table_.reset();
  tableUploaded_ = false;
  tableCopied_.reset();
  hasFrame_ = false;
  hasColour_ = false;
  device_ = gpu.device();
}

const MandelbrotFrame& MandelbrotRenderer::compute(GpuContext& gpu, const MandelbrotView& view,
                                                   const MandelbrotOptions& options) {
  const PrecisionChoice choice = choosePrecision(view);  // validates; throws before any work
  ensureDevice(gpu);
  const kernels::EscapeParams p = escapeParams(view, options);
  const std::size_t bytes = static_cast<std::size_t>(p.width) * p.height * sizeof(float);
  raw_.reserve(bytes);
  const kernels::EscapeSchedule schedule =
      options.variant == MandelbrotVariant::Plain ? kernels::EscapeSchedule::Plain : kernels::EscapeSchedule::Optimized;
  const kernels::Plane<float> raw{raw_.as<float>(), p.width, p.height,
                                  static_cast<std::size_t>(p.width) * sizeof(float)};
  // The precision ladder: one case per rung.
  switch (choice.used) {
    case Precision::F32:
      kernels::launchEscapeTime<float>(p, schedule, raw, gpu.stream());
      break;
    case Precision::F64:
      kernels::launchEscapeTime<double>(p, schedule, raw, gpu.stream());
      break;
    case Precision::Auto:
      throw std::logic_error("choosePrecision returned no precision");
  }
  frame_ = {view, options, choice};
  hasFrame_ = true;
  hasColour_ = false;
  return frame_;
}

void MandelbrotRenderer::colour(GpuContext& gpu, const Colouring& colouring, ChannelOrder order) {
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

// ---------------------------------------------------------------------------------------------
// Benchmark

double countIterations(const Image& countsRaw, int maxIterations) {
  if (countsRaw.type() != PixelType::F32 || countsRaw.channels() != 1)
    throw std::invalid_argument("countIterations needs a 1-channel f32 raw plane, not " + countsRaw.describe());
  double total = 0;
  for (float v : countsRaw.samples<float>()) total += v < 0 ? static_cast<double>(maxIterations) : v;
  return total;
}

Measurement measureMandelbrot(const MandelbrotView& view, const MandelbrotOptions& options,
                              const MandelbrotMeasureSetup& setup, const MeasurePolicy& policy) {
  const PrecisionChoice precision = choosePrecision(view);
  Measurement m;
  m.version = gpulabVersion();
  m.operation = view.julia ? "julia" : "mandelbrot";
  m.method = toString(options.variant);
  char number[64];
  std::snprintf(number, sizeof number, "%.17g,%.17g", view.centerX, view.centerY);
  m.params["center"] = number;
  std::snprintf(number, sizeof number, "%.17g", view.width);
  m.params["width"] = number;
  m.params["iterations"] = std::to_string(view.maxIterations);
  m.params["precision"] = toString(precision.used);
  m.description = m.operation + " " + m.params["center"] + " width " + m.params["width"] + " " +
                  m.params["iterations"] + " iterations " + m.params["precision"] + " " + m.method;
  m.output = {view.rawWidth(), view.rawHeight(), 1, PixelType::F32};
  m.workUnit = WorkUnit::Iterations;
  MandelbrotOptions counting = options;
  counting.smooth = false;
  const bool gpu = setup.gpu != nullptr && setup.renderer != nullptr;
  if (gpu) {
    setup.renderer->compute(*setup.gpu, view, counting);
    m.work = countIterations(setup.renderer->downloadRaw(*setup.gpu), view.maxIterations);
    GpuMeasurement g;
    g.device = setup.gpu->device();
    g.deviceName = queryDevices().devices.at(static_cast<std::size_t>(g.device)).name;
    g.methodUsed = m.method;
    g.warmup = policy.gpuWarmup;
    g.compute = measureStream(
        setup.gpu->stream(), [&] { setup.renderer->compute(*setup.gpu, view, options); }, policy);
    m.gpu = std::move(g);
  } else {
    m.gpuSkipped = setup.gpu == nullptr ? queryDevices().status : "no renderer was given";
  }
  if (setup.wantCpu) {
    if (!gpu) m.work = countIterations(renderRawCpu(view, counting, setup.control), view.maxIterations);
    CpuMeasurement c;
    c.implementation = "gpulab";
    c.threads = options.cpuThreads > 0 ? options.cpuThreads
                                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    c.methodUsed = m.method;
    c.warmup = policy.cpuWarmup;
    c.time = measureHost([&] { (void)renderRawCpu(view, options, setup.control); }, policy, setup.control);
    m.cpu = std::move(c);
  } else {
    m.cpuSkipped = "not asked for";
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// PNG metadata

Image opaqueToRgb(const Image& rgba) {
  if (rgba.type() != PixelType::U8 || rgba.channels() != 4) return rgba;
  for (int y = 0; y < rgba.height(); ++y) {
    const std::uint8_t* row = rgba.row<std::uint8_t>(y);
    for (int x = 0; x < rgba.width(); ++x)
      if (row[4 * x + 3] != 255) return rgba;
  }
  Image rgb(rgba.width(), rgba.height(), 3, PixelType::U8);
  for (int y = 0; y < rgba.height(); ++y) {
    const std::uint8_t* in = rgba.row<std::uint8_t>(y);
    std::uint8_t* out = rgb.row<std::uint8_t>(y);
    for (int x = 0; x < rgba.width(); ++x) {
      out[3 * x] = in[4 * x];
      out[3 * x + 1] = in[4 * x + 1];
      out[3 * x + 2] = in[4 * x + 2];
    }
  }
  return rgb;
}

std::map<std::string, std::string> pngTextFromView(const MandelbrotView& view, const Colouring& colouring,
                                                   Precision used) {
  std::map<std::string, std::string> text;
  text["Software"] = "gpulab";
  text["gpulab.kind"] = view.julia ? "julia" : "mandelbrot";
  text["gpulab.center"] = formatNumber(view.centerX) + "," + formatNumber(view.centerY);
  text["gpulab.width"] = formatNumber(view.width);
  text["gpulab.iterations"] = std::to_string(view.maxIterations);
  text["gpulab.precision"] = std::string(toString(view.precision));
  text["gpulab.precision_used"] = std::string(toString(used));
  text["gpulab.julia"] = view.julia ? formatNumber(view.juliaX) + "," + formatNumber(view.juliaY) : "off";
  text["gpulab.size"] = std::to_string(view.imageWidth) + "x" + std::to_string(view.imageHeight);
  text["gpulab.supersample"] = std::to_string(view.supersample);
  text["gpulab.palette"] = colouring.palette.name();
  text["gpulab.gradient"] = colouring.palette.gradientText();
  text["gpulab.offset"] = formatNumber(colouring.offset);
  text["gpulab.density"] = formatNumber(colouring.density);
  text["gpulab.interior"] = hexColour(colouring.interior);
  return text;
}

namespace {

const std::string& field(const std::map<std::string, std::string>& text, const std::string& key) {
  const auto it = text.find(key);
  if (it == text.end())
    throw std::invalid_argument("the PNG has no gpulab Mandelbrot view (field " + key + " is missing)");
  return it->second;
}

[[noreturn]] void badField(const std::string& key, const std::string& value, const std::string& expected) {
  throw std::invalid_argument("the PNG's field " + key + " = '" + value + "' is not " + expected);
}

}  // namespace

MandelbrotView viewFromPngText(const std::map<std::string, std::string>& text) {
  MandelbrotView view;
  const auto center = parsePoint(field(text, "gpulab.center"), "gpulab.center");
  view.centerX = center[0];
  view.centerY = center[1];
  const std::string& width = field(text, "gpulab.width");
  const auto w = parseDouble(width);
  if (!w) badField("gpulab.width", width, "a number");
  view.width = *w;
  const std::string& iterations = field(text, "gpulab.iterations");
  const auto n = parseInt(iterations);
  if (!n) badField("gpulab.iterations", iterations, "a whole number");
  view.maxIterations = *n;
  if (const auto it = text.find("gpulab.precision"); it != text.end())
    view.precision = parseEnumOrThrow<Precision>(it->second);
  if (const auto it = text.find("gpulab.julia"); it != text.end() && it->second != "off") {
    const auto c = parsePoint(it->second, "gpulab.julia");
    view.julia = true;
    view.juliaX = c[0];
    view.juliaY = c[1];
  }
  if (const auto it = text.find("gpulab.size"); it != text.end()) {
    const std::size_t x = it->second.find('x');
    const auto iw = x == std::string::npos ? std::nullopt : parseInt(std::string_view(it->second).substr(0, x));
    const auto ih = x == std::string::npos ? std::nullopt : parseInt(std::string_view(it->second).substr(x + 1));
    if (!iw || !ih) badField("gpulab.size", it->second, "WIDTHxHEIGHT");
    view.imageWidth = *iw;
    view.imageHeight = *ih;
  }
  if (const auto it = text.find("gpulab.supersample"); it != text.end()) {
    const auto s = parseInt(it->second);
    if (!s) badField("gpulab.supersample", it->second, "a whole number");
    view.supersample = *s;
  }
  validate(view);
  return view;
}

Colouring colouringFromPngText(const std::map<std::string, std::string>& text) {
  Colouring colouring;
  const auto name = text.find("gpulab.palette");
  const auto gradient = text.find("gpulab.gradient");
  if (name != text.end()) {
    const auto builtIn = paletteNames();
    if (std::find(builtIn.begin(), builtIn.end(), name->second) != builtIn.end())
      colouring.palette = Palette::named(name->second);
    else if (gradient != text.end())
      colouring.palette = Palette::parseGradient(gradient->second);
    else
      colouring.palette = Palette::named(name->second);  // throws naming the palettes
  }
  if (const auto it = text.find("gpulab.offset"); it != text.end()) {
    const auto v = parseDouble(it->second);
    if (!v) badField("gpulab.offset", it->second, "a number");
    colouring.offset = *v;
  }
  if (const auto it = text.find("gpulab.density"); it != text.end()) {
    const auto v = parseDouble(it->second);
    if (!v) badField("gpulab.density", it->second, "a number");
    colouring.density = *v;
  }
  if (const auto it = text.find("gpulab.interior"); it != text.end()) {
    const auto c = parseHexColour(it->second);
    if (!c) badField("gpulab.interior", it->second, "a colour #rrggbb");
    colouring.interior = *c;
  }
  validate(colouring);
  return colouring;
}

}  // namespace gpulab
