// The Numba lab's matrix-product table: naive, tiled, cuBLAS and OpenBLAS, float32 and float64.
#include "gpulab/lab/matmul_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/matmul.hpp"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

template <class T>
ProductComparison compareProducts(const T* c, const T* ref, std::size_t count, double rtol, double atol) {
  ProductComparison out;
  double diff = 0;
  double norm = 0;
  bool close = true;
  for (std::size_t i = 0; i < count; ++i) {
    const double a = static_cast<double>(c[i]);
    const double b = static_cast<double>(ref[i]);
    const double d = std::abs(a - b);
    diff += d * d;
    norm += b * b;
    if (!(d <= atol + rtol * std::abs(b))) close = false;  // NaN fails too
    if (d > out.maxAbsDifference || std::isnan(d)) out.maxAbsDifference = d;
  }
  out.relativeError = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  out.allclose = close;
  return out;
}
template ProductComparison compareProducts<float>(const float*, const float*, std::size_t, double, double);
template ProductComparison compareProducts<double>(const double*, const double*, std::size_t, double, double);

double estimateCubicMs(int measuredN, double measuredMs, int n) {
  if (measuredN < 1 || measuredMs <= 0) throw std::invalid_argument("an estimate needs a measured run");
  const double ratio = static_cast<double>(n) / measuredN;
  return measuredMs * ratio * ratio * ratio;
}

void finishMatmulTable(std::vector<MatmulTableRow>& rows) {
  using Key = std::tuple<int, DType>;
  std::map<Key, const MatmulTableRow*> cpu;
  for (const MatmulTableRow& r : rows)
    if (!r.gpu) cpu[{r.n, r.dtype}] = &r;
  std::map<std::tuple<int, std::string>, double> f32Time;  // (n, impl) -> with copies
  for (const MatmulTableRow& r : rows)
    if (r.dtype == DType::F32 && r.measured) f32Time[{r.n, r.impl}] = r.withCopiesMs;

  for (MatmulTableRow& r : rows) {
    r.speedupCompute = r.speedupWithCopies = 0;
    r.speedupEstimated = false;
    r.f64OverF32 = 0;
    if (!r.measured) continue;
    if (auto it = cpu.find({r.n, r.dtype}); it != cpu.end()) {
      const MatmulTableRow& c = *it->second;
      const double cpuMs = c.measured ? c.computeMs : c.estimatedMs;
      if (cpuMs > 0 && r.computeMs > 0) {
        r.speedupCompute = cpuMs / r.computeMs;
        r.speedupWithCopies = cpuMs / r.withCopiesMs;
        r.speedupEstimated = !c.measured;
      }
    }
    if (r.dtype == DType::F64)
      if (auto it = f32Time.find({r.n, r.impl}); it != f32Time.end() && it->second > 0)
        r.f64OverF32 = r.withCopiesMs / it->second;
  }
}

void validate(const MatmulTableOptions& options) {
  if (options.sizes.empty()) throw std::invalid_argument("the matmul table needs at least one size");
  if (options.dtypes.empty()) throw std::invalid_argument("the matmul table needs at least one type");
  for (int n : options.sizes)
    if (n < 1 || n > kMaxMatmulDim)
      throw std::invalid_argument("matmul table size " + std::to_string(n) + " is out of range: 1 to " +
                                  std::to_string(kMaxMatmulDim));
  if (options.reps < 1 || options.reps > 1000)
    throw std::invalid_argument("repetitions must be 1 to 1000, got " + std::to_string(options.reps));
  if (options.warmup < 0 || options.warmup > 100)
    throw std::invalid_argument("warm-up runs must be 0 to 100, got " + std::to_string(options.warmup));
  if (!(options.cpuLimitMs > 0)) throw std::invalid_argument("the CPU time limit must be positive");
}

namespace {

std::string secondsText(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 10000 ? "%.3g s" : "%.0f s", ms / 1000);
  return text;
}

/// The largest CPU run measured so far in one precision: what estimates scale from.
struct CpuRate {
  int n = 0;
  double ms = 0;
  std::string from;  ///< "the 5120 run", "a 1024 calibration run"
};

template <class T>
void runType(const MatmulTableOptions& options, DType dtype, bool gpu, MatmulLab& lab, detail::Sweep& sweep,
             std::vector<MatmulTableRow>& rows, const MatmulTableSink& sink) {
  CpuRate rate;
  for (int n : options.sizes) {
    const MatmulShape shape{n, n, n};
    const std::size_t count = static_cast<std::size_t>(n) * n;
    const std::size_t bytes = count * sizeof(T);
    detail::requireHostMemory(5 * bytes, "the " + std::to_string(n) + " matmul table point");
    if (gpu) detail::requireDeviceMemory(3 * bytes, "the " + std::to_string(n) + " matmul table point");

    auto emit = [&](MatmulTableRow row) {
      rows.push_back(row);
      if (sink) sink(row);
      sweep.stepDone();
    };
    auto fromRecord = [&](const Record& r) {
      MatmulTableRow row;
      row.n = n;
      row.dtype = dtype;
      row.impl = r.impl;
      row.device = r.device;
      row.gpu = r.gpu;
      row.measured = true;
      row.computeMs = r.medianMs;
      row.uploadMs = r.gpu ? r.uploadMs : 0;
      row.downloadMs = r.gpu ? r.downloadMs : 0;
      row.withCopiesMs = r.gpu ? r.uploadMs + r.medianMs + r.downloadMs : r.medianMs;
      row.gflops = shape.flops() / (r.medianMs * 1e6);
      row.reps = r.reps;
      return row;
    };

    // cuBLAS first: the reference the others are compared with.
    std::vector<T> reference;
    const MeasureOptions gpuOptions{options.reps, options.warmup, false, false};
    if (gpu) {
      for (MatmulImpl impl : {MatmulImpl::Cublas, MatmulImpl::GpuNaive, MatmulImpl::GpuTiled}) {
        const std::vector<Record> records = lab.measure(impl, dtype, shape, gpuOptions);
        MatmulTableRow row = fromRecord(records.front());
        const T* product = lab.lastProduct<T>();
        if (impl == MatmulImpl::Cublas) {
          reference.assign(product, product + count);
          row.isReference = true;
          row.note = "reference";
        } else {
          const ProductComparison cmp = compareProducts(product, reference.data(), count);
          row.relativeError = cmp.relativeError;
          row.maxAbsDifference = cmp.maxAbsDifference;
          row.allclose = cmp.allclose ? 1 : 0;
        }
        emit(row);
      }
    }

    // The CPU, unless one run would take longer than the limit.
    if (rate.n == 0) {
      const int calibration = std::min(n, 1024);
      const std::vector<Record> r = lab.measure(MatmulImpl::CpuBlas, dtype, {calibration, calibration, calibration},
                                                MeasureOptions{1, 1, false, false});
      rate = {calibration, r.front().medianMs, "a " + std::to_string(calibration) + " calibration run"};
    }
    const double estimate = estimateCubicMs(rate.n, rate.ms, n);
    MatmulTableRow cpuRow;
    if (estimate > options.cpuLimitMs) {
      cpuRow.n = n;
      cpuRow.dtype = dtype;
      cpuRow.impl = "cpu_blas";
      cpuRow.device = cpuLabel(MatmulLab::blasThreads());
      cpuRow.estimatedMs = estimate;
      cpuRow.note = "skipped: one run estimated at " + secondsText(estimate) + " from " + rate.from + " (limit " +
                    secondsText(options.cpuLimitMs) + ")";
      emit(cpuRow);
      continue;
    }
    const bool longRun = estimate > 2000;
    const MeasureOptions cpuOptions{longRun ? 1 : std::min(options.reps, 3), longRun ? 0 : 1, false, false};
    // The same seeded inputs as the GPU rows (refilled after the calibration run).
    const std::vector<Record> records = lab.measure(MatmulImpl::CpuBlas, dtype, shape, cpuOptions);
    cpuRow = fromRecord(records.front());
    cpuRow.estimatedMs = estimate;
    cpuRow.note = cpuRow.reps == 1 ? "one run" : "median of " + std::to_string(cpuRow.reps);
    if (gpu) {
      const ProductComparison cmp = compareProducts(lab.lastProduct<T>(), reference.data(), count);
      cpuRow.relativeError = cmp.relativeError;
      cpuRow.maxAbsDifference = cmp.maxAbsDifference;
      cpuRow.allclose = cmp.allclose ? 1 : 0;
    } else {
      cpuRow.isReference = true;
      cpuRow.note += "; reference (no GPU)";
    }
    rate = {n, cpuRow.computeMs, "the " + std::to_string(n) + " run"};
    emit(cpuRow);
  }
}

}  // namespace

std::vector<MatmulTableRow> runMatmulTable(const MatmulTableOptions& options, const CpuControl& control,
                                           const MatmulTableSink& sink) {
  validate(options);
  const bool gpu = options.useGpu && cudaAvailable();
  const int perPoint = gpu ? 4 : 1;
  static const RecordSink noRecords;
  detail::Sweep sweep(control, noRecords, static_cast<int>(options.sizes.size() * options.dtypes.size()) * perPoint);
  sweep.checkCancel();
  MatmulLab lab;
  lab.setInputs(MatmulInputs::Unit);
  std::vector<MatmulTableRow> rows;
  for (DType dtype : options.dtypes)
    detail::byDType(dtype, [&](auto t) { runType<decltype(t)>(options, dtype, gpu, lab, sweep, rows, sink); });
  finishMatmulTable(rows);
  control.report(1.0);
  return rows;
}

}  // namespace gpulab::lab
