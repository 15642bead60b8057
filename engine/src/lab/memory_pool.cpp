// Lab: cudaMalloc/cudaFree against cudaMallocAsync/cudaFreeAsync on the default memory pool.
#include "gpulab/lab/memory_pool.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "gpulab/core/buffers.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/lab_detail.hpp"
#include "internal/memory_format.hpp"

namespace gpulab::lab {

void validate(const PoolRequest& r) {
  if (r.allocations < 1 || r.allocations > 1000000)
    throw std::invalid_argument("the allocation count must be 1 to 1000000, got " + std::to_string(r.allocations));
  if (r.minBytes < 1) throw std::invalid_argument("the smallest allocation must be at least 1 byte");
  if (r.maxBytes < r.minBytes)
    throw std::invalid_argument("the largest allocation (" + formatBytes(r.maxBytes) + ") is below the smallest (" +
                                formatBytes(r.minBytes) + ")");
  if (r.maxBytes > (std::size_t{4} << 30))
    throw std::invalid_argument("the largest allocation must be at most 4 GiB, got " + formatBytes(r.maxBytes));
  if (r.live < 1 || r.live > r.allocations)
    throw std::invalid_argument("the allocations alive at once must be 1 to the allocation count (" +
                                std::to_string(r.allocations) + "), got " + std::to_string(r.live));
  if (r.rounds < 1 || r.rounds > 1000)
    throw std::invalid_argument("rounds must be 1 to 1000, got " + std::to_string(r.rounds));
}

std::vector<std::size_t> poolAllocationSizes(const PoolRequest& r) {
  validate(r);
  std::vector<std::size_t> sizes(static_cast<std::size_t>(r.allocations));
  std::vector<double> uniform(sizes.size());
  detail::fillRandom(uniform.data(), uniform.size(), r.seed);  // [-1, 1)
  const double lo = std::log(static_cast<double>(r.minBytes));
  const double hi = std::log(static_cast<double>(r.maxBytes));
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const double t = 0.5 * (uniform[k] + 1.0);  // [0, 1)
    const double bytes = std::exp(lo + t * (hi - lo));
    sizes[k] = std::clamp(static_cast<std::size_t>(std::llround(bytes)), r.minBytes, r.maxBytes);
  }
  return sizes;
}

std::size_t peakLiveBytes(const std::vector<std::size_t>& sizes, int live) {
  if (live < 1) throw std::invalid_argument("at least one allocation must be alive at a time");
  std::size_t current = 0, peak = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (k >= static_cast<std::size_t>(live)) current -= sizes[k - static_cast<std::size_t>(live)];
    current += sizes[k];
    peak = std::max(peak, current);
  }
  return peak;
}

std::string PoolStats::text() const {
  return "used " + formatBytes(used) + ", reserved " + formatBytes(reserved) + " (high: used " + formatBytes(usedHigh) +
         ", reserved " + formatBytes(reservedHigh) + ")";
}

std::string PoolReport::sentence() const {
  const double mallocUs = perPairUs(malloc);
  const double asyncUs = perPairUs(async);
  char text[256];
  if (asyncUs > 0 && asyncUs < mallocUs)
    std::snprintf(text, sizeof text,
                  "cudaMallocAsync from the pool is %.1fx faster per allocation + free pair than cudaMalloc/cudaFree "
                  "(%.2f us against %.2f us)",
                  mallocUs / asyncUs, asyncUs, mallocUs);
  else
    std::snprintf(text, sizeof text,
                  "cudaMallocAsync from the pool is not faster here: %.2f us per allocation + free pair against "
                  "%.2f us for cudaMalloc/cudaFree",
                  asyncUs, mallocUs);
  return text;
}

std::vector<Record> PoolReport::records() const {
  std::vector<Record> rows;
  for (const PoolSide* side : {&malloc, &async}) {
    Record r;
    r.experiment = "pool";
    r.variant = "alloc+free";
    r.impl = side->name;
    r.dtype = "u8";
    r.sizes = {request.allocations};
    r.size = request.allocations;
    r.gpu = true;
    detail::setTimes(r, side->round);
    char params[200];
    std::snprintf(params, sizeof params, "us_per_pair=%.3f first_round_ms=%.3f live=%d sizes=%zu..%zu seed=%llu",
                  perPairUs(*side), side->firstRoundMs, request.live, request.minBytes, request.maxBytes,
                  static_cast<unsigned long long>(request.seed));
    r.params = params;
    rows.push_back(r);
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------

namespace {

PoolStats readStats(cudaMemPool_t pool) {
  PoolStats s;
  auto get = [&](cudaMemPoolAttr attr) {
    std::uint64_t v = 0;
    GPULAB_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
    return static_cast<std::size_t>(v);
  };
  s.used = get(cudaMemPoolAttrUsedMemCurrent);
  s.reserved = get(cudaMemPoolAttrReservedMemCurrent);
  s.usedHigh = get(cudaMemPoolAttrUsedMemHigh);
  s.reservedHigh = get(cudaMemPoolAttrReservedMemHigh);
  return s;
}

/// The pointers of one round; frees what is left if the round throws.
struct Ring {
  std::vector<void*> slots;
  bool async = false;
  cudaStream_t stream = nullptr;
  ~Ring() {
    for (void* p : slots)
      if (p) async ? cudaFreeAsync(p, stream) : cudaFree(p);
    if (async) cudaStreamSynchronize(stream);
  }
};

double oneRound(const std::vector<std::size_t>& sizes, int live, bool async, cudaStream_t stream) {
  Ring ring;
  ring.slots.assign(static_cast<std::size_t>(live), nullptr);
  ring.async = async;
  ring.stream = stream;
  const Stopwatch watch;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    void*& slot = ring.slots[k % ring.slots.size()];
    if (async) {
      if (slot) GPULAB_CUDA_CHECK(cudaFreeAsync(slot, stream));
      slot = nullptr;
      GPULAB_CUDA_CHECK(cudaMallocAsync(&slot, sizes[k], stream));
    } else {
      if (slot) GPULAB_CUDA_CHECK(cudaFree(slot));
      slot = nullptr;
      GPULAB_CUDA_CHECK(cudaMalloc(&slot, sizes[k]));
    }
  }
  for (void*& slot : ring.slots) {
    if (!slot) continue;
    if (async)
      GPULAB_CUDA_CHECK(cudaFreeAsync(slot, stream));
    else
      GPULAB_CUDA_CHECK(cudaFree(slot));
    slot = nullptr;
  }
  if (async) GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return watch.elapsedMs();
}

/// Raises the default pool's release threshold for the run (freed memory stays reserved, as in
/// CuPy's pool) and puts the pool's own value back afterwards.
struct ThresholdGuard {
  cudaMemPool_t pool;
  std::uint64_t original = 0;
  explicit ThresholdGuard(cudaMemPool_t p) : pool(p) {
    GPULAB_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &original));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    GPULAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  ~ThresholdGuard() { cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &original); }
};

}  // namespace

struct MemoryPoolLab::State : detail::LabState {
  using LabState::LabState;
};

MemoryPoolLab::MemoryPoolLab() : state_(std::make_unique<State>(hasGpu())) {}
MemoryPoolLab::~MemoryPoolLab() = default;

PoolReport MemoryPoolLab::run(const PoolRequest& request, const CpuControl& control) {
  validate(request);
  state_->requireGpu("the memory pool experiment");
  PoolReport report;
  report.request = request;
  const std::vector<std::size_t> sizes = poolAllocationSizes(request);
  for (std::size_t s : sizes) report.requestedBytes += s;
  report.peakLive = peakLiveBytes(sizes, request.live);
  // Headroom for the pool's granularity (it reserves in chunks of 2 MiB and more).
  detail::requireDeviceMemory(report.peakLive + report.peakLive / 4 + (std::size_t{64} << 20),
                              "the memory pool experiment (" + std::to_string(request.live) + " allocations alive)");

  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  report.deviceName = prop.name;
  cudaMemPool_t pool = nullptr;
  GPULAB_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  const cudaStream_t stream = state_->cuStream();

  const int steps = 2 * (request.rounds + 1) + 1;
  int done = 0;
  auto step = [&] {
    control.report(static_cast<double>(++done) / steps);
    control.throwIfCancelled();
  };

  // cudaMalloc / cudaFree.
  report.malloc.name = "cudaMalloc";
  report.malloc.firstRoundMs = oneRound(sizes, request.live, false, stream);
  step();
  std::vector<double> samples;
  for (int r = 0; r < request.rounds; ++r) {
    samples.push_back(oneRound(sizes, request.live, false, stream));
    step();
  }
  report.malloc.round = Stats::of(samples);

  // cudaMallocAsync / cudaFreeAsync from an empty default pool that keeps what is freed.
  {
    ThresholdGuard guard(pool);
    report.releaseThreshold = guard.original;
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    GPULAB_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    std::uint64_t zero = 0;
    GPULAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    GPULAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    report.async.name = "cudaMallocAsync";
    report.async.firstRoundMs = oneRound(sizes, request.live, true, stream);
    step();
    samples.clear();
    for (int r = 0; r < request.rounds; ++r) {
      samples.push_back(oneRound(sizes, request.live, true, stream));
      step();
    }
    report.async.round = Stats::of(samples);
    report.afterRun = readStats(pool);
    const Stopwatch watch;
    GPULAB_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    report.trimMs = watch.elapsedMs();
    report.afterTrim = readStats(pool);
  }
  step();
  return report;
}

}  // namespace gpulab::lab
