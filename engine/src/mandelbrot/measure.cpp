// Mandelbrot renders measured with the harness's policy.
#include "gpulab/mandelbrot/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <thread>

#include "gpulab/core/device.hpp"
#include "gpulab/core/version.hpp"

namespace gpulab {

namespace {

/// Every thread of the CPU path.
int threadsOf(const MandelbrotOptions& options) {
  return options.cpuThreads > 0 ? options.cpuThreads
                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string msText(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ms);
  return text;
}

}  // namespace

Measurement measureMandelbrot(const MandelbrotView& view, const MandelbrotOptions& options,
                              const MandelbrotMeasureSetup& setup, const MeasurePolicy& policy) {
  const PrecisionChoice precision = choosePrecision(view);
  const bool deep = precision.used == Precision::Perturbation;
  Measurement m;
  m.version = gpulabVersion();
  m.operation = view.julia ? "julia" : "mandelbrot";
  m.method = toString(options.variant);
  m.params["center"] = view.centerX.toString() + "," + view.centerY.toString();
  m.params["width"] = view.width.toString();
  m.params["iterations"] = std::to_string(view.maxIterations);
  m.params["precision"] = precision.label();
  if (deep) m.params["bla"] = options.bla ? "on" : "off";
  m.description = m.operation + " width " + m.params["width"] + " " + m.params["iterations"] + " iterations " +
                  m.params["precision"] + " " + m.method;
  m.output = {view.rawWidth(), view.rawHeight(), 1, PixelType::F32};
  m.workUnit = WorkUnit::Iterations;
  MandelbrotOptions counting = options;
  counting.smooth = false;
  const double pixels = static_cast<double>(view.rawWidth()) * view.rawHeight();
  const bool gpu = setup.gpu != nullptr && setup.renderer != nullptr;
  if (gpu) {
    GpuContext& context = *setup.gpu;
    MandelbrotRenderer& renderer = *setup.renderer;
    // One counting frame first: the work (and, deep, the reference and its table: reported, not timed).
    const MandelbrotFrame& counted = renderer.compute(context, view, counting, setup.control.cancel);
    GpuMeasurement g;
    if (counted.deep) {
      const DeepFrame& d = *counted.deep;
      g.prepareMs = d.referenceMs + d.blaMs + d.uploadMs;
      m.params["reference_ms"] = msText(d.referenceMs);
      m.params["bla_ms"] = msText(d.blaMs);
      m.params["reference_length"] = std::to_string(d.referenceLength);
      m.params["precision_bits"] = std::to_string(d.precisionBits);
    }
    m.work = countIterations(renderer.downloadRaw(context), view.maxIterations);
    renderer.compute(context, view, options, setup.control.cancel);  // the reference is reused
    if (DeepRenderer* steps = renderer.deepRenderer(); deep && steps != nullptr) {
      steps->countSteps(context, true);
      renderer.relaunch(context);
      m.params["steps_per_pixel"] = std::to_string(static_cast<double>(steps->stepsCounted(context)) / pixels);
      steps->countSteps(context, false);
    }
    g.device = context.device();
    g.deviceName = queryDevices().devices.at(static_cast<std::size_t>(g.device)).name;
    g.methodUsed = m.method;
    g.warmup = policy.gpuWarmup;
    g.compute = measureStream(
        context.stream(), [&] { renderer.relaunch(context); }, policy, setup.control);
    m.gpu = std::move(g);
  } else {
    m.gpuSkipped = setup.gpu == nullptr ? queryDevices().status : "no renderer was given";
  }
  if (setup.wantCpu) {
    CpuMeasurement c;
    c.implementation = "gpulab";
    c.threads = threadsOf(options);
    c.methodUsed = m.method;
    c.warmup = policy.cpuWarmup;
    // A first (counting) frame prepares the deep reference, reported apart; the timed frames reuse it.
    MandelbrotCpuRenderer renderer;
    const Image counts = renderer.compute(view, counting, CpuControl{setup.control.cancel, {}});  // no progress
    if (!gpu) m.work = countIterations(counts, view.maxIterations);
    c.prepareMs = renderer.lastReferenceUpdate().referenceMs + renderer.lastReferenceUpdate().blaMs;
    c.time = measureHost([&] { (void)renderer.compute(view, options, setup.control); }, policy, setup.control);
    m.cpu = std::move(c);
  } else {
    m.cpuSkipped = "not asked for";
  }
  return m;
}

}  // namespace gpulab
