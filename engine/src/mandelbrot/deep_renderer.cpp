// The GPU side of perturbation: the reference's arrays on the device, copied when they change.
#include "gpulab/mandelbrot/deep_renderer.hpp"

#include <cuda_runtime_api.h>

#include <span>
#include <stdexcept>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/deep_params.hpp"

namespace gpulab {

struct DeepRenderer::State {
  int device = -1;
  DeepReference reference;
  const DeepReference* shared = nullptr;  // prepareShared(): the caller's reference, not `reference`
  DeepView view;
  DeepOptions options;
  kernels::PerturbationParams params;
  DeepFrame frame;
  bool prepared = false;
  bool counting = false;
  // Device copies of the orbit's and the table's arrays, and the step counter.
  DeviceBuffer doubles, extended;
  DeviceBuffer radii2, a, b, radii2Extended, aExtended, bExtended;
  DeviceBuffer counter;

  const DeepReference& source() const { return shared != nullptr ? *shared : reference; }

  DeepDevicePointers pointers() const {
    return {doubles.data(), extended.data(),       radii2.data(),    a.data(),
            b.data(),       radii2Extended.data(), aExtended.data(), bExtended.data()};
  }
};

namespace {

template <class T>
void upload(DeviceBuffer& buffer, std::span<const T> host, cudaStream_t stream) {
  buffer.reserve(host.size_bytes() + 16);  // never empty: an empty level table still gets a pointer
  if (!host.empty())
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream));
}

}  // namespace

DeepRenderer::DeepRenderer() : state_(std::make_unique<State>()) {}
DeepRenderer::~DeepRenderer() = default;

const DeepFrame& DeepRenderer::frame() const noexcept { return state_->frame; }
const DeepReference& DeepRenderer::reference() const noexcept { return state_->source(); }

const DeepFrame& DeepRenderer::prepare(GpuContext& gpu, const DeepView& view, const DeepOptions& options,
                                       const std::atomic<bool>* cancel) {
  State& s = *state_;
  if (s.device != gpu.device()) {  // everything held belongs to another device
    s = State{};
    s.device = gpu.device();
  }
  if (s.shared != nullptr) {  // the device copies hold another reference's arrays
    s.shared = nullptr;
    s.prepared = false;
  }
  if (s.prepared && s.view == view && s.options == options) {  // prepared already (a caller timing compute())
    s.frame.referenceReused = true;
    s.frame.referenceMs = s.frame.blaMs = s.frame.uploadMs = 0;
    return s.frame;
  }
  const bool hadOrbit = s.reference.ready();
  const DeepReference::Update update = s.reference.prepare(view, options, cancel);
  const cudaStream_t stream = gpu.stream();
  DeepFrame frame;
  frame.deltas = chooseDeltaFormat(view);
  frame.referenceReused = hadOrbit && !update.orbitComputed;
  frame.referenceMs = update.referenceMs;
  frame.blaMs = update.blaMs;
  const Stopwatch watch;
  const ReferenceOrbit& orbit = s.reference.orbit();
  if (update.orbitComputed || !s.prepared) {
    upload(s.doubles, orbit.doubles(), stream);
    upload(s.extended, orbit.extended(), stream);
  }
  if (const BlaTable* table = s.reference.table(options)) {
    if (update.tableBuilt || !s.prepared) {
      upload(s.a, table->a(), stream);
      upload(s.b, table->b(), stream);
      upload(s.aExtended, table->aExtended(), stream);
      upload(s.bExtended, table->bExtended(), stream);
    }
    if (update.radiiChanged || !s.prepared) {
      upload(s.radii2, table->radii2(), stream);
      upload(s.radii2Extended, table->radii2Extended(), stream);
    }
    frame.blaLevels = table->levels();
  }
  frame.uploadMs = watch.elapsedMs();
  s.params = perturbationParams(view, s.reference.offset(), options);
  s.view = view;
  s.options = options;
  frame.referenceLength = orbit.length();
  frame.referenceEscaped = orbit.escaped();
  frame.precisionBits = orbit.precisionBits();
  frame.referenceX = orbit.centerX();
  frame.referenceY = orbit.centerY();
  s.frame = frame;
  s.prepared = true;
  return s.frame;
}

const DeepFrame& DeepRenderer::prepareShared(GpuContext& gpu, const DeepView& view, const DeepOptions& options,
                                             const DeepReference& reference) {
  State& s = *state_;
  if (s.device != gpu.device()) {
    s = State{};
    s.device = gpu.device();
  }
  const ReferenceOrbit& orbit = reference.orbit();  // std::logic_error before the reference's prepare()
  const cudaStream_t stream = gpu.stream();
  const Stopwatch watch;
  upload(s.doubles, orbit.doubles(), stream);
  upload(s.extended, orbit.extended(), stream);
  DeepFrame frame;
  frame.deltas = chooseDeltaFormat(view);
  frame.referenceReused = true;  // computed by the caller, once for every device
  if (const BlaTable* table = reference.table(options)) {
    upload(s.a, table->a(), stream);
    upload(s.b, table->b(), stream);
    upload(s.aExtended, table->aExtended(), stream);
    upload(s.bExtended, table->bExtended(), stream);
    upload(s.radii2, table->radii2(), stream);
    upload(s.radii2Extended, table->radii2Extended(), stream);
    frame.blaLevels = table->levels();
  }
  gpu.synchronize();  // the host arrays may change once this returns
  frame.uploadMs = watch.elapsedMs();
  s.shared = &reference;
  s.params = perturbationParams(view, reference.offset(), options);
  s.view = view;
  s.options = options;
  frame.referenceLength = orbit.length();
  frame.referenceEscaped = orbit.escaped();
  frame.precisionBits = orbit.precisionBits();
  frame.referenceX = orbit.centerX();
  frame.referenceY = orbit.centerY();
  s.frame = frame;
  s.prepared = true;
  return s.frame;
}

void DeepRenderer::enqueue(GpuContext& gpu, float* raw, std::size_t pitch, int firstRow, int rowCount) {
  State& s = *state_;
  if (!s.prepared || s.device != gpu.device())
    throw std::logic_error("the deep renderer has no prepared view on this device: call prepare() first");
  const DeepDevicePointers device = s.pointers();
  const kernels::ReferenceView ref = withDevicePointers(referenceView(s.source().orbit()), device);
  const kernels::BlaView bla = withDevicePointers(blaView(s.source().table(s.options)), device);
  kernels::PerturbationLaunch launch;
  launch.firstRow = firstRow;
  launch.rowCount = rowCount;
  if (s.counting) launch.stepCounter = s.counter.as<unsigned long long>();
  const kernels::Plane<float> plane{raw, s.view.imageWidth, s.view.imageHeight, pitch};
  kernels::launchPerturbation(s.params, ref, bla, plane, launch, gpu.stream());
}

void DeepRenderer::countSteps(GpuContext& gpu, bool enable) {
  State& s = *state_;
  s.counting = enable;
  if (!enable) return;
  s.counter.reserve(sizeof(unsigned long long));
  GPULAB_CUDA_CHECK(cudaMemsetAsync(s.counter.data(), 0, sizeof(unsigned long long), gpu.stream()));
}

unsigned long long DeepRenderer::stepsCounted(GpuContext& gpu) {
  State& s = *state_;
  if (s.counter.empty()) return 0;
  unsigned long long steps = 0;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(&steps, s.counter.data(), sizeof steps, cudaMemcpyDeviceToHost, gpu.stream()));
  gpu.synchronize();
  return steps;
}

}  // namespace gpulab
