#include "gpulab/mandelbrot/deep_render_cpu.hpp"

#include <chrono>

#include "internal/deep_params.hpp"
#include "internal/mandelbrot_rows.hpp"
#include "internal/parallel_rows.hpp"

namespace gpulab {

namespace {

struct RowJob {
  kernels::PerturbationParams params;
  kernels::ReferenceView ref;
  kernels::BlaView bla;
};

template <bool kExtended>
[[gnu::always_inline]] inline double rowBody(const RowJob& job, int j, float* out) {
  double steps = 0;
  for (int i = 0; i < job.params.width; ++i) {
    int s = 0;
    out[i] = kernels::perturbationValue<kExtended>(job.params, job.ref, job.bla, i, j, &s);
    steps += s;
  }
  return steps;
}

template <bool kExtended>
double row(const RowJob& job, int j, float* out) {
  return rowBody<kExtended>(job, j, out);
}

// The step is a chain of fmas. Built for baseline x86-64, fma() is a call into libm (exact but slow); a
// copy compiled for the FMA instruction set runs it inline where the CPU has FMA. Both round identically.
#if defined(__x86_64__) || defined(__i386__)
#define GPULAB_DEEP_HAVE_FMA_CLONE 1
template <bool kExtended>
__attribute__((target("fma"))) double rowFma(const RowJob& job, int j, float* out) {
  return rowBody<kExtended>(job, j, out);
}
#endif

using RowFunction = double (*)(const RowJob&, int, float*);

RowFunction rowFunction(bool extended) {
#if defined(GPULAB_DEEP_HAVE_FMA_CLONE)
  if (__builtin_cpu_supports("fma")) return extended ? &rowFma<true> : &rowFma<false>;
#endif
  return extended ? &row<true> : &row<false>;
}

RowJob makeJob(const DeepView& view, const ReferenceOrbit& orbit, const BlaTable* table, const DeepOptions& options) {
  // Any orbit serves any view of its neighbourhood: a pixel that outlives it rebases at its end.
  RowJob job{perturbationParams(view, orbit, options), referenceView(orbit), blaView(options.bla ? table : nullptr)};
  job.params.bla = options.bla && job.bla.levels > 0;
  return job;
}

}  // namespace

DeepCpuResult renderDeepCpu(const DeepView& view, const ReferenceOrbit& orbit, const BlaTable* table,
                            const DeepOptions& options, const CpuControl& control) {
  const auto start = std::chrono::steady_clock::now();
  const RowJob job = makeJob(view, orbit, table, options);
  const RowFunction rowFn = rowFunction(job.params.format == kernels::DeltaFormat::FloatExp);
  DeepCpuResult result;
  result.raw.assign(static_cast<std::size_t>(view.imageWidth) * static_cast<std::size_t>(view.imageHeight), 0.0f);

  const int threads = rowThreads(options.cpuThreads, view.imageHeight);
  std::vector<double> steps(static_cast<std::size_t>(threads), 0.0);
  parallelRows(view.imageHeight, threads, control, [&](int j, int t) {
    steps[t] += rowFn(job, j, result.raw.data() + static_cast<std::size_t>(j) * view.imageWidth);
  });
  for (double s : steps) result.steps += s;
  result.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void deepRowsCpu(const DeepView& view, const ReferenceOrbit& orbit, const BlaTable* table, const DeepOptions& options,
                 int first, int count, float* raw) {
  const RowJob job = makeJob(view, orbit, table, options);
  const RowFunction rowFn = rowFunction(job.params.format == kernels::DeltaFormat::FloatExp);
  for (int j = first; j < first + count; ++j) rowFn(job, j, raw + static_cast<std::size_t>(j) * view.imageWidth);
}

}  // namespace gpulab
