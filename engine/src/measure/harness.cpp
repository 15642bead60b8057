// The measuring harness: the project's timing policy in one place.
#include "gpulab/measure/harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gpulab/measure/ceiling.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Policies

MeasurePolicy MeasurePolicy::command(int reps) {
  const int cpuReps = reps > 0 ? reps : 3;
  return {.gpuReps = reps > 0 ? reps : 10, .cpuWarmup = cpuReps > 1 ? 1 : 0, .cpuReps = cpuReps};
}

MeasurePolicy MeasurePolicy::benchmark(int reps) {
  return {.gpuReps = std::max(reps, 1), .cpuReps = std::clamp(reps, 1, 5), .cpuBudgetMs = 2000};
}

MeasurePolicy MeasurePolicy::interactive() {
  return {.gpuSlowMs = 20, .transferReps = 3, .cpuReps = 5, .cpuBudgetMs = 2000};
}

MeasurePolicy MeasurePolicy::once() {
  return {.gpuWarmup = 0, .gpuReps = 1, .transferReps = 1, .cpuWarmup = 0, .cpuReps = 1};
}

namespace {

int transferReps(const MeasurePolicy& policy) {
  return policy.transferReps >= 0 ? std::max(policy.transferReps, 1) : std::max(policy.gpuReps, 1);
}

/// CPU runs under the policy: warm-ups (the first one reports progress), then the timed runs, as
/// many as the budget allows. `run` gets the control to pass on (progress only on the first run).
Stats timeCpu(const std::function<void(const CpuControl&)>& run, const MeasurePolicy& policy,
              const CpuControl& control) {
  const CpuControl quiet{control.cancel, {}};
  bool first = true;
  auto once = [&] {
    control.throwIfCancelled();
    const Stopwatch watch;
    run(first ? control : quiet);
    first = false;
    return watch.elapsedMs();
  };
  double warmupMs = 0;
  for (int i = 0; i < policy.cpuWarmup; ++i) warmupMs = once();
  int reps = std::max(policy.cpuReps, 1);
  if (policy.cpuBudgetMs > 0 && policy.cpuWarmup > 0)
    reps = std::clamp(static_cast<int>(policy.cpuBudgetMs / std::max(warmupMs, 1e-3)), 1, reps);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) samples.push_back(once());
  return Stats::of(std::move(samples));
}

/// Uploads or downloads `reps` times through `transfer`, each timed by the context (staging copy and
/// device copy), median of them.
Stats timeTransfers(int reps, const std::function<double()>& transfer, const CpuControl& control) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    control.throwIfCancelled();  // each transfer is synchronous: a 4 GiB one takes about 0.2 s
    samples.push_back(transfer());
  }
  return Stats::of(std::move(samples));
}

std::string deviceName(int device) {
  // Plain strings per ordinal, filled once: nothing here owns a CUDA resource.
  static std::mutex mutex;
  static std::map<int, std::string> names;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = names.find(device); it != names.end()) return it->second;
  const DeviceReport report = queryDevices();
  std::string name = "GPU " + std::to_string(device);
  for (const DeviceInfo& d : report.devices)
    if (d.index == device) name = d.name;
  names.emplace(device, name);
  return name;
}

std::string noGpuReason() {
  const DeviceReport report = queryDevices();
  return report.available() ? std::string("no GPU context was given") : report.status;
}

template <class T>
double maxAbsDiffTyped(const Image& a, const Image& b) {
  const auto x = a.samples<const T>();
  const auto y = b.samples<const T>();
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = static_cast<double>(x[i]), v = static_cast<double>(y[i]);
    if (std::isnan(u) && std::isnan(v)) continue;
    if (u == v) continue;  // equal infinities too
    const double d = std::abs(u - v);
    worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
  }
  return worst;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Timing primitives

Stats measureStream(cudaStream_t stream, const std::function<void()>& enqueue, const MeasurePolicy& policy,
                    const CpuControl& control) {
  const int reps = std::max(policy.gpuReps, 1);
  if (policy.gpuSlowMs <= 0) return timeStream(stream, enqueue, {std::max(policy.gpuWarmup, 0), reps}, control.cancel);
  // The last warm-up is a probe that sizes the measurement: slow work gets fewer runs.
  const Stats probe = timeStream(stream, enqueue, {std::max(policy.gpuWarmup - 1, 0), 1}, control.cancel);
  const int timed = probe.medianMs <= policy.gpuSlowMs ? reps : std::max(policy.gpuSlowReps, 1);
  return timeStream(stream, enqueue, {0, timed}, control.cancel, probe.medianMs);
}

Stats measureHost(const std::function<void()>& work, const MeasurePolicy& policy, const CpuControl& control) {
  return timeCpu([&](const CpuControl&) { work(); }, policy, control);
}

std::optional<double> maxAbsDifference(const Image& a, const Image& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels() || a.type() != b.type())
    return std::nullopt;
  switch (a.type()) {
    case PixelType::U8:
      return maxAbsDiffTyped<std::uint8_t>(a, b);
    case PixelType::F32:
      return maxAbsDiffTyped<float>(a, b);
    case PixelType::F64:
      return maxAbsDiffTyped<double>(a, b);
    case PixelType::U16:
      return maxAbsDiffTyped<std::uint16_t>(a, b);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Operations

MeasureResult measure(Operation& op, const Image& input, const MeasureSetup& setup, const MeasurePolicy& policy) {
  MeasureResult result;
  Measurement& m = result.record;
  m = describeOperation(op);
  const ImageShape inShape = shapeOf(input);
  m.input = inShape;
  m.output = op.outputShape(inShape);  // an input the operation cannot take throws here, before any work
  m.work = static_cast<double>(op.minimumBytesMoved(inShape));
  m.workUnit = WorkUnit::Bytes;
  const CpuControl& control = setup.control;

  if (!setup.wantGpu) {
    m.gpuSkipped = "not asked for";
  } else if (setup.gpu == nullptr) {
    m.gpuSkipped = noGpuReason();
  } else {
    GpuContext& gpu = *setup.gpu;
    GpuMeasurement g;
    g.device = gpu.device();
    g.deviceName = deviceName(g.device);
    DeviceImage uploaded;
    const DeviceLayout layout = op.gpuLayout(inShape);
    const DeviceImage* in = setup.resident;
    std::string upMemory, downMemory;
    if (in == nullptr) {
      gpu.upload(input, uploaded, layout);  // allocates; the timed uploads reuse it
      g.upload = timeTransfers(
          transferReps(policy),
          [&] {
            gpu.upload(input, uploaded, layout);
            return gpu.lastUpload().totalMs();
          },
          control);
      upMemory = gpu.lastUpload().hostMemory();
      m.uploadBytes = static_cast<double>(input.sizeBytes());
      in = &uploaded;
    } else {
      in = &gpu.inLayout(*in, layout, uploaded);  // a resident image in the other layout: one pass, not timed
    }
    DeviceImage ownOutput;
    DeviceImage& out = setup.gpuOutput != nullptr ? *setup.gpuOutput : ownOutput;
    if (!out.empty() && out.layout() != layout) out = DeviceImage();  // a reused output of another layout
    control.throwIfCancelled();
    g.prepareMs = op.prepareGpu(gpu, *in, out);
    control.throwIfCancelled();
    g.compute = measureStream(
        gpu.stream(), [&] { op.runGpu(gpu, *in, out); }, policy, control);
    g.warmup = std::max(policy.gpuWarmup, policy.gpuSlowMs > 0 ? 1 : 0);
    g.methodUsed = op.methodUsed(Side::Gpu);
    g.methodNote = op.methodNote(Side::Gpu);
    if (setup.download) {
      // The result comes from the GPU: into pinned memory, allocated (and page-locked) before the
      // timed downloads, as the device images are before the timed uploads.
      result.gpuOutput = Image(out.width(), out.height(), out.channels(), out.type(), setup.outputMemory);
      g.download = timeTransfers(
          transferReps(policy),
          [&] {
            gpu.download(out, result.gpuOutput);
            return gpu.lastDownload().totalMs();
          },
          control);
      downMemory = gpu.lastDownload().hostMemory();
      m.downloadBytes = static_cast<double>(result.gpuOutput.sizeBytes());
    }
    if (upMemory.empty() || downMemory.empty() || upMemory == downMemory)
      g.hostMemory = upMemory.empty() ? downMemory : upMemory;
    else
      g.hostMemory = upMemory + "/" + downMemory;
    m.gpu = std::move(g);
    if (setup.withCeiling) {
      const CopyCeiling ceiling = deviceCopyCeiling();
      m.ceiling = Ceiling{"DRAM copy", ceiling.gbps, ceiling.how()};
      const HostCopyCeiling host = hostCopyCeiling();
      m.transferCeiling = TransferCeiling{host.hostToDeviceGbps, host.deviceToHostGbps, host.how()};
    }
  }

  if (!setup.wantCpu) {
    m.cpuSkipped = "not asked for";
  } else {
    control.throwIfCancelled();
    CpuMeasurement c;
    c.threads = cpuThreads();
    c.prepareMs = op.prepareCpu(inShape);
    c.warmup = policy.cpuWarmup;
    c.time = timeCpu([&](const CpuControl& runControl) { result.cpuOutput = op.runCpu(input, runControl); }, policy,
                     control);
    c.methodUsed = op.methodUsed(Side::Cpu);
    c.methodNote = op.methodNote(Side::Cpu);
    m.cpu = std::move(c);
  }
  control.throwIfCancelled();

  if (setup.compare && !result.gpuOutput.empty() && !result.cpuOutput.empty())
    m.maxAbsDiff = maxAbsDifference(result.gpuOutput, result.cpuOutput);
  return result;
}

}  // namespace gpulab
