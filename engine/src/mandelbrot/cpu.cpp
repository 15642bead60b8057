// The Mandelbrot CPU baseline: the kernels' own per-pixel code (gpulab/kernels/mandelbrot.cuh) on every
// core, rows handed out one at a time so slow rows do not leave threads idle.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include "gpulab/mandelbrot/deep_render_cpu.hpp"
#include "gpulab/mandelbrot/renderer.hpp"
#include "internal/mandelbrot_params.hpp"
#include "internal/mandelbrot_rows.hpp"
#include "internal/parallel_rows.hpp"

namespace gpulab {

namespace {

using kernels::EscapeParams;

template <class T, bool kPlain>
[[gnu::always_inline]] inline void computeRowBody(const EscapeParams& p, int j, float* out) {
  for (int i = 0; i < p.width; ++i)
    out[i] = kPlain ? kernels::plainEscapeValue<T>(p, i, j) : kernels::escapeValue<T>(p, i, j);
}

template <class T, bool kPlain>
void computeRow(const EscapeParams& p, int j, float* out) {
  computeRowBody<T, kPlain>(p, j, out);
}

// The escape loop is a chain of fmas. Built for baseline x86-64, fmaf() is a call into libm (exact but
// slow); a copy compiled for the FMA instruction set runs it inline where the CPU has FMA. Both round
// identically, so the counts do not depend on which one runs.
#if defined(__x86_64__) || defined(__i386__)
#define GPULAB_HAVE_FMA_CLONE 1
template <class T, bool kPlain>
__attribute__((target("fma"))) void computeRowFma(const EscapeParams& p, int j, float* out) {
  computeRowBody<T, kPlain>(p, j, out);
}
#endif

using RowFunction = void (*)(const EscapeParams&, int, float*);

template <class T, bool kPlain>
RowFunction rowFunction() {
#if defined(GPULAB_HAVE_FMA_CLONE)
  if (__builtin_cpu_supports("fma")) return &computeRowFma<T, kPlain>;
#endif
  return &computeRow<T, kPlain>;
}

template <class T>
RowFunction rowFunction(MandelbrotVariant variant) {
  return variant == MandelbrotVariant::Plain ? rowFunction<T, true>() : rowFunction<T, false>();
}

}  // namespace

Image renderRawCpu(const MandelbrotView& view, const MandelbrotOptions& options, const CpuControl& control) {
  MandelbrotCpuRenderer renderer;
  return renderer.compute(view, options, control);
}

Image MandelbrotCpuRenderer::compute(const MandelbrotView& view, const MandelbrotOptions& options,
                                     const CpuControl& control) {
  const PrecisionChoice choice = choosePrecision(view);
  if (choice.used == Precision::Perturbation) {
    // The same perturbation as the GPU's, against the kept reference.
    const DeepView deep = deepViewOf(view);
    const DeepOptions deepOptions = deepOptionsOf(options);
    update_ = reference_.prepare(deep, deepOptions, control.cancel);
    const DeepCpuResult result =
        renderDeepCpu(deep, reference_.orbit(), reference_.table(deepOptions), deepOptions, control);
    Image raw(deep.imageWidth, deep.imageHeight, 1, PixelType::F32);
    std::copy(result.raw.begin(), result.raw.end(), raw.samples<float>().begin());
    return raw;
  }
  const EscapeParams p = escapeParams(view, options);
  Image raw(p.width, p.height, 1, PixelType::F32);
  const RowFunction row =
      choice.used == Precision::F64 ? rowFunction<double>(options.variant) : rowFunction<float>(options.variant);

  parallelRows(p.height, rowThreads(options.cpuThreads, p.height), control,
               [&](int j, int) { row(p, j, raw.row<float>(j)); });
  return raw;
}

void escapeRowsCpu(const MandelbrotView& view, const MandelbrotOptions& options, Precision precision, int first,
                   int count, Image& raw) {
  const EscapeParams p = escapeParams(view, options);
  const RowFunction row =
      precision == Precision::F64 ? rowFunction<double>(options.variant) : rowFunction<float>(options.variant);
  for (int j = first; j < first + count; ++j) row(p, j, raw.row<float>(j));
}

int escapeCount(double x, double y, int maxIterations) {
  double zx = 0, zy = 0, r = 0;
  for (int n = 0; n < maxIterations; ++n)
    if (!kernels::escapeStep(zx, zy, x, y, r)) return n;
  return -1;
}

bool insideMainCardioid(double x, double y) { return kernels::inMainCardioid(x, y); }
bool insidePeriod2Bulb(double x, double y) { return kernels::inPeriod2Bulb(x, y); }

Image colourRaw(const Image& raw, const Colouring& colouring, int supersample) {
  if (raw.type() != PixelType::F32 || raw.channels() != 1)
    throw std::invalid_argument("colouring needs a 1-channel f32 raw plane, not " + raw.describe());
  if (supersample < 1 || raw.width() % supersample != 0 || raw.height() % supersample != 0)
    throw std::invalid_argument("supersampling " + std::to_string(supersample) + " does not divide the raw plane " +
                                raw.describe());
  validate(colouring);
  const kernels::ColourParams c = colourParams(colouring, supersample);
  const auto table = colouring.palette.table();
  Image rgba(raw.width() / supersample, raw.height() / supersample, 4, PixelType::U8);
  // The GPU pass's formula, step by step in float.
  for (int y = 0; y < rgba.height(); ++y)
    for (int x = 0; x < rgba.width(); ++x) {
      float sum[4] = {0, 0, 0, 0};
      for (int b = 0; b < supersample; ++b)
        for (int a = 0; a < supersample; ++a) {
          const float value = raw.at<float>(x * supersample + a, y * supersample + b);
          float colour[4];
          if (value < 0.f) {
            const Rgba8& in = colouring.interior;
            colour[0] = in.r;
            colour[1] = in.g;
            colour[2] = in.b;
            colour[3] = in.a;
          } else {
            const float position = kernels::palettePosition(value, c) * static_cast<float>(c.tableSize);
            const int i0 = std::min(static_cast<int>(position), c.tableSize - 1);
            const float f = position - static_cast<float>(i0);
            const Rgba8& lo = table[i0];
            const Rgba8& hi = table[i0 + 1 == c.tableSize ? 0 : i0 + 1];
            const std::uint8_t l[4] = {lo.r, lo.g, lo.b, lo.a}, h[4] = {hi.r, hi.g, hi.b, hi.a};
            for (int k = 0; k < 4; ++k) {
              const float from = l[k], to = h[k];
              colour[k] = from + f * (to - from);
            }
          }
          for (int k = 0; k < 4; ++k) sum[k] += colour[k];
        }
      const float scale = 1.0f / static_cast<float>(supersample * supersample);
      for (int k = 0; k < 4; ++k)
        rgba.at<std::uint8_t>(x, y, k) = static_cast<std::uint8_t>(std::min(sum[k] * scale + 0.5f, 255.f));
    }
  return rgba;
}

}  // namespace gpulab
