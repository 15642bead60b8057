// Lab: one matrix product split across several GPUs by rows of A (lab/matmul_multi.hpp).
#include "gpulab/lab/matmul_multi.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/cublas_support.hpp"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

namespace {

int makeCurrent(int device) {
  GPULAB_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

/// One GPU's share: its rows of A and C, all of B, its stream, cuBLAS handle and events. Made with
/// its device current (the members after `device` belong to it).
struct Worker {
  Worker(int dev, int firstRow, int rowCount, const MatmulShape& s, std::size_t element)
      : device(makeCurrent(dev)), row0(firstRow), rows(rowCount), cublas(stream.get()) {
    if (rows == 0) return;
    a = DeviceBuffer(static_cast<std::size_t>(rows) * s.k * element);
    b = DeviceBuffer(static_cast<std::size_t>(s.k) * s.n * element);
    c = DeviceBuffer(static_cast<std::size_t>(rows) * s.n * element);
  }

  int device;
  int row0;
  int rows;
  Stream stream;
  detail::CublasHandle cublas;
  DeviceBuffer a, b, c;
  Event start, uploaded, computed, done;
};

/// The workers of one device list; destroys each with its own device current (cuBLAS asks for it).
class WorkerGroup {
 public:
  WorkerGroup(const std::vector<int>& devices, const MatmulShape& s, std::size_t element) {
    const std::vector<int> rows = splitRows(s.m, static_cast<int>(devices.size()));
    int row0 = 0;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      workers_.push_back(std::make_unique<Worker>(devices[i], row0, rows[i], s, element));
      row0 += rows[i];
    }
  }
  ~WorkerGroup() {
    for (auto& w : workers_) {
      cudaSetDevice(w->device);  // best effort in a destructor
      w.reset();
    }
  }
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  /// Runs f(worker) for every worker with rows, each in its own thread with its device current,
  /// all released together; returns the host wall time from the release to the last one done.
  template <class F>
  double onEach(F&& f) {
    std::latch go(1);
    std::vector<std::exception_ptr> errors(workers_.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      if (workers_[i]->rows == 0) continue;
      threads.emplace_back([&, i] {
        try {
          makeCurrent(workers_[i]->device);
          go.wait();
          f(*workers_[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    const auto t0 = std::chrono::steady_clock::now();
    go.count_down();
    for (std::thread& t : threads) t.join();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    return ms;
  }

  std::vector<std::unique_ptr<Worker>>& workers() { return workers_; }

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
};

template <class T>
void enqueueUpload(Worker& w, const MatmulShape& s, const T* a, const T* b) {
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(w.a.data(), a + static_cast<std::size_t>(w.row0) * s.k,
                                    static_cast<std::size_t>(w.rows) * s.k * sizeof(T), cudaMemcpyHostToDevice,
                                    w.stream));
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(w.b.data(), b, static_cast<std::size_t>(s.k) * s.n * sizeof(T),
                                    cudaMemcpyHostToDevice, w.stream));
}

template <class T>
void enqueueGemm(Worker& w, const MatmulShape& s) {
  detail::cublasGemm(w.cublas.get(), w.a.as<T>(), w.b.as<T>(), w.c.as<T>(), {w.rows, s.n, s.k});
}

template <class T>
void enqueueDownload(Worker& w, const MatmulShape& s, T* c) {
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(c + static_cast<std::size_t>(w.row0) * s.n, w.c.data(),
                                    static_cast<std::size_t>(w.rows) * s.n * sizeof(T), cudaMemcpyDeviceToHost,
                                    w.stream));
}

void checkDevices(const std::vector<int>& devices) {
  if (devices.empty()) throw std::invalid_argument("the split matrix product needs at least one GPU");
  if (!cudaAvailable())
    throw std::runtime_error("the split matrix product needs a CUDA device: " + detail::gpuUnavailableReason());
  const DeviceReport report = queryDevices();
  for (int d : devices)
    if (d < 0 || d >= static_cast<int>(report.devices.size()))
      throw std::invalid_argument("there is no GPU " + std::to_string(d) + ": this machine has " +
                                  deviceListText(report));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double maxOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
double minOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

/// Times one device list on the inputs; leaves its product in `c`.
template <class T>
MultiGpuMatmulRun measureRun(const std::vector<int>& devices, const MatmulShape& s, const T* a, const T* b, T* c,
                             const MeasureOptions& options) {
  WorkerGroup group(devices, s, sizeof(T));
  MultiGpuMatmulRun run;
  run.devices = devices;
  run.label = deviceLabels(devices);
  run.rows = splitRows(s.m, static_cast<int>(devices.size()));
  run.reps = options.reps;
  run.flops = s.flops();
  const std::size_t n = devices.size();

  // With copies (its warm-up also puts A and B on the GPUs for the compute-only runs).
  std::vector<double> total, up, down;
  std::vector<std::vector<double>> gbps(n);
  std::vector<double> repTotal(n), repUp(n), repDown(n);
  for (int rep = -options.warmup; rep < options.reps; ++rep) {
    std::fill(repTotal.begin(), repTotal.end(), 0.0);
    group.onEach([&](Worker& w) {
      w.start.record(w.stream);
      enqueueUpload(w, s, a, b);
      w.uploaded.record(w.stream);
      enqueueGemm<T>(w, s);
      w.computed.record(w.stream);
      enqueueDownload(w, s, c);
      w.done.record(w.stream);
      w.done.synchronize();
    });
    if (rep < 0) continue;
    for (std::size_t i = 0; i < n; ++i) {
      Worker& w = *group.workers()[i];
      if (w.rows == 0) continue;
      repTotal[i] = w.done.elapsedSince(w.start);
      repUp[i] = w.uploaded.elapsedSince(w.start);
      repDown[i] = w.done.elapsedSince(w.computed);
      const double bytes = (static_cast<double>(w.rows) * s.k + static_cast<double>(s.k) * s.n) * sizeof(T);
      gbps[i].push_back(bytes / (repUp[i] * 1e6));
    }
    total.push_back(maxOf(repTotal));
    up.push_back(maxOf(repUp));
    down.push_back(maxOf(repDown));
  }
  run.withCopiesMs = median(total);
  run.withCopiesMinMs = minOf(total);
  run.withCopiesMaxMs = maxOf(total);
  run.uploadMs = median(up);
  run.downloadMs = median(down);
  for (std::size_t i = 0; i < n; ++i) run.uploadGbps.push_back(median(gbps[i]));

  // Compute only: the GEMMs on the operands already there.
  std::vector<double> compute, host;
  std::vector<double> repCompute(n);
  for (int rep = -options.warmup; rep < options.reps; ++rep) {
    std::fill(repCompute.begin(), repCompute.end(), 0.0);
    const double hostMs = group.onEach([&](Worker& w) {
      w.start.record(w.stream);
      enqueueGemm<T>(w, s);
      w.computed.record(w.stream);
      w.computed.synchronize();
    });
    if (rep < 0) continue;
    for (std::size_t i = 0; i < n; ++i) {
      Worker& w = *group.workers()[i];
      if (w.rows > 0) repCompute[i] = w.computed.elapsedSince(w.start);
    }
    compute.push_back(maxOf(repCompute));
    host.push_back(hostMs);
  }
  run.computeMs = median(compute);
  run.computeMinMs = minOf(compute);
  run.computeMaxMs = maxOf(compute);
  run.hostComputeMs = median(host);
  return run;
}

std::string shortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

}  // namespace

std::vector<int> splitRows(int m, int parts) {
  if (m < 1) throw std::invalid_argument("a matrix to split needs at least 1 row, got " + std::to_string(m));
  if (parts < 1) throw std::invalid_argument("rows split among " + std::to_string(parts) + " workers: use 1 or more");
  std::vector<int> rows(static_cast<std::size_t>(parts), m / parts);
  for (int i = 0; i < m % parts; ++i) ++rows[static_cast<std::size_t>(i)];
  return rows;
}

template <class T>
void multiplyAcrossGpus(const std::vector<int>& devices, const MatmulShape& shape, const T* a, const T* b, T* c) {
  validate(shape);
  checkDevices(devices);
  WorkerGroup group(devices, shape, sizeof(T));
  group.onEach([&](Worker& w) {
    enqueueUpload(w, shape, a, b);
    enqueueGemm<T>(w, shape);
    enqueueDownload(w, shape, c);
    w.stream.synchronize();
  });
}
template void multiplyAcrossGpus<float>(const std::vector<int>&, const MatmulShape&, const float*, const float*,
                                        float*);
template void multiplyAcrossGpus<double>(const std::vector<int>&, const MatmulShape&, const double*, const double*,
                                         double*);

std::string MultiGpuMatmulReport::toleranceText() const {
  const std::string eps = dtype == DType::F32 ? "1e-4" : "1e-12";
  return "allclose(split, one GPU, rtol=" + eps + ", atol=" + eps + "*sqrt(K)=" + shortNumber(atol) + ")";
}

std::vector<Record> MultiGpuMatmulReport::records() const {
  std::vector<Record> out;
  const double size = std::cbrt(static_cast<double>(shape.m) * shape.n * shape.k);
  for (const MultiGpuMatmulRun* run : {&one, &split}) {
    if (run->devices.empty()) continue;
    std::string rows;
    for (int r : run->rows) rows += (rows.empty() ? "" : "+") + std::to_string(r);
    Record r = detail::labRecord("matmul", "cublas", dtype, {shape.m, shape.n, shape.k}, size, true);
    r.variant = "multi_gpu";
    r.device = run->label;
    r.params = "rows " + rows + " over " + std::to_string(run->devices.size()) + " GPU(s), B copied to each";
    r.medianMs = run->computeMs;
    r.minMs = run->computeMinMs;
    r.maxMs = run->computeMaxMs;
    r.reps = run->reps;
    r.uploadMs = run->uploadMs;
    r.downloadMs = run->downloadMs;
    r.gflops = run->computeMs > 0 ? run->flops / (run->computeMs * 1e6) : 0;
    out.push_back(r);
    Record c = r;
    c.withCopies = true;
    c.medianMs = run->withCopiesMs;
    c.minMs = run->withCopiesMinMs;
    c.maxMs = run->withCopiesMaxMs;
    c.gflops = run->withCopiesMs > 0 ? run->flops / (run->withCopiesMs * 1e6) : 0;
    out.push_back(c);
  }
  return out;
}

MultiGpuMatmulReport runMultiGpuMatmul(const std::vector<int>& devices, const MatmulShape& shape, DType dtype,
                                       const MeasureOptions& options) {
  validate(shape);
  checkDevices(devices);
  if (options.reps < 1) throw std::invalid_argument("the split matrix product needs at least 1 rep");
  if (options.warmup < 0) throw std::invalid_argument("warm-up runs cannot be negative");
  const std::size_t element = dtypeSize(dtype);
  const std::size_t ab = (static_cast<std::size_t>(shape.m) * shape.k + static_cast<std::size_t>(shape.k) * shape.n);
  const std::size_t cc = static_cast<std::size_t>(shape.m) * shape.n;
  detail::requireHostMemory((ab + 2 * cc) * element, "the split matrix product (A, B and two C, pinned)");

  MultiGpuMatmulReport report;
  report.shape = shape;
  report.dtype = dtype;
  detail::byDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    PinnedBuffer a(static_cast<std::size_t>(shape.m) * shape.k * sizeof(T));
    PinnedBuffer b(static_cast<std::size_t>(shape.k) * shape.n * sizeof(T));
    PinnedBuffer cOne(cc * sizeof(T)), cSplit(cc * sizeof(T));
    detail::fillRandom(a.as<T>(), static_cast<std::size_t>(shape.m) * shape.k, 1);
    detail::fillRandom(b.as<T>(), static_cast<std::size_t>(shape.k) * shape.n, 2);
    report.one = measureRun<T>({devices.front()}, shape, a.as<T>(), b.as<T>(), cOne.as<T>(), options);
    report.split = measureRun<T>(devices, shape, a.as<T>(), b.as<T>(), cSplit.as<T>(), options);

    report.rtol = dtype == DType::F32 ? 1e-4 : 1e-12;
    report.atol = report.rtol * std::sqrt(static_cast<double>(shape.k));
    std::mutex mutex;
    const T* x = cSplit.as<T>();
    const T* y = cOne.as<T>();
    detail::parallelFor(cc, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
      double worst = 0;
      std::size_t bad = 0, differ = 0;
      for (std::size_t i = begin; i < end; ++i) {
        const double d = std::abs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
        worst = std::max(worst, d);
        if (!(d <= report.atol + report.rtol * std::abs(static_cast<double>(y[i])))) ++bad;
        if (std::memcmp(&x[i], &y[i], sizeof(T)) != 0) ++differ;
      }
      const std::lock_guard lock(mutex);
      report.maxAbsDiff = std::max(report.maxAbsDiff, worst);
      report.mismatches += bad;
      report.differing += differ;
    });
    report.allclose = report.mismatches == 0;
    return 0;
  });
  const double n = static_cast<double>(devices.size());
  if (report.split.computeMs > 0) report.speedup = report.one.computeMs / report.split.computeMs;
  if (report.split.withCopiesMs > 0) report.speedupWithCopies = report.one.withCopiesMs / report.split.withCopiesMs;
  report.efficiency = report.speedup / n;
  report.efficiencyWithCopies = report.speedupWithCopies / n;
  return report;
}

}  // namespace gpulab::lab
