// The study guide's array examples: the linspace example against exact arithmetic, transcendental
// expressions, reductions along an axis and a row normalisation.
#include "gpulab/lab/course_arrays.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/course_arrays.cuh"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/elementwise.cuh"
#include "gpulab/kernels/reduce.cuh"
#include "gpulab/lab/elementwise.hpp"  // kMaxVectorElements
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

// ---------------------------------------------------------------------------------------------
// Exact values

CourseExact courseExact(std::size_t n) {
  if (n < 2 || n > kMaxVectorElements)
    throw std::invalid_argument("the linspace example needs 2 to " + std::to_string(kMaxVectorElements) +
                                " elements, got " + std::to_string(n));
  // z_i = (i / (N-1))^2 + 2 (1 + i / (N-1)); summed over i = 0..N-1 with sum i = N (N-1) / 2 and
  // sum i^2 = (N-1) N (2N-1) / 6:  sum = N (2N - 1) / (6 (N - 1)) + 2N + N.
  CourseExact e;
  e.n = n;
  const long double N = static_cast<long double>(n);
  e.mean = 3.0L + 1.0L / 3.0L + 1.0L / (6.0L * (N - 1.0L));
  e.sum = 3.0L * N + N * (2.0L * N - 1.0L) / (6.0L * (N - 1.0L));
  e.max = 5.0L;  // x = 1, y = 2 at the last element
  return e;
}

std::string exactText(long double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*Lg", digits, value);
  return text;
}

template <class T>
void linspaceCpu(T* out, std::size_t n, double start, double stop) {
  if (n == 0) return;
  const double step = n > 1 ? (stop - start) / static_cast<double>(n - 1) : 0.0;
  detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = static_cast<T>(i + 1 == n && n > 1 ? stop : start + static_cast<double>(i) * step);
  });
}

template <class T>
T sumPairwise(const T* x, std::size_t n) {
  if (n < 8) {
    T s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i];
    return s;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = x[j];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (int j = 0; j < 8; ++j) r[j] += x[i + j];
    T s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += x[i];
    return s;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return sumPairwise(x, half) + sumPairwise(x + half, n - half);
}

template <class T>
T sumSequential(const T* x, std::size_t n) {
  T s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

std::string accumulationHow(Accumulation a) {
  switch (a) {
    case Accumulation::GpuTree:
      return "in the element type: per-thread sums, then trees (like CuPy)";
    case Accumulation::CpuPairwise:
      return "in the element type: pairwise summation, one thread (like NumPy)";
    case Accumulation::CpuSequential:
      return "in the element type: the plain loop s += z[i], one thread";
    case Accumulation::GpuDouble:
      return "in float64: the reduce lab's kernel";
    case Accumulation::CpuDouble:
      return "in float64: stripes on the CPU threads";
  }
  return {};
}

#define GPULAB_COURSE_CPU(T)                                     \
  template void linspaceCpu<T>(T*, std::size_t, double, double); \
  template T sumPairwise<T>(const T*, std::size_t);              \
  template T sumSequential<T>(const T*, std::size_t);
GPULAB_COURSE_CPU(float)
GPULAB_COURSE_CPU(double)
#undef GPULAB_COURSE_CPU

// ---------------------------------------------------------------------------------------------
// The linspace example, measured

namespace {

void checkReps(int reps, int warmup) {
  if (reps < 1 || reps > 100000)
    throw std::invalid_argument("repetitions must be 1 to 100000, got " + std::to_string(reps));
  if (warmup < 0 || warmup > 1000)
    throw std::invalid_argument("warm-up runs must be 0 to 1000, got " + std::to_string(warmup));
}

double relativeTo(double value, long double exact) {
  return static_cast<double>(std::fabs(static_cast<long double>(value) - exact) / std::fabs(exact));
}

/// Sum in double over stripes on the CPU threads, stripes combined in order.
template <class T>
double sumDoubleCpu(const T* x, std::size_t n) {
  const std::size_t stripes = std::min<std::size_t>(n, 64);
  std::vector<double> partial(stripes, 0.0);
  const std::size_t per = (n + stripes - 1) / stripes;
  detail::parallelFor(stripes, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t s = begin; s < end; ++s) {
      double acc = 0;
      for (std::size_t i = s * per; i < std::min(n, (s + 1) * per); ++i) acc += static_cast<double>(x[i]);
      partial[s] = acc;
    }
  });
  return std::accumulate(partial.begin(), partial.end(), 0.0);
}

template <class T>
T maxCpu(const T* x, std::size_t n) {
  T best = x[0];
  for (std::size_t i = 1; i < n; ++i) best = std::max(best, x[i]);
  return best;
}

/// z = x*x + 2*y in T without contraction, like the elementwise lab's CPU side.
template <class T>
void squarePlusTwiceCpu(const T* x, const T* y, T* z, std::size_t n) {
  detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    elementwiseReference(ElementwiseOp::SquarePlusTwice, T(0), x + begin, y + begin, z + begin, end - begin);
  });
}

template <class T>
void courseReduceType(const CourseReduceOptions& o, DType dtype, bool gpu, const CourseExact& exact,
                      std::vector<CourseReduceRow>& rows) {
  const std::size_t n = o.n;
  const TimingOptions timing{o.warmup, o.reps};
  auto row = [&](Accumulation a, bool onGpu, double sum, double mean, double max) {
    CourseReduceRow r;
    r.dtype = dtype;
    r.accumulation = a;
    r.gpu = onGpu;
    r.device = onGpu ? selectedDeviceLabel() : (a == Accumulation::CpuDouble ? cpuLabel() : cpuLabel(1));
    r.n = n;
    r.sum = sum;
    r.mean = mean;
    r.max = max;
    r.sumError = relativeTo(sum, exact.sum);
    r.meanError = relativeTo(mean, exact.mean);
    r.maxError = relativeTo(max, exact.max);
    r.reps = o.reps;
    return r;
  };

  if (gpu) {
    activateSelectedDevice();
    Stream stream;
    const cudaStream_t cu = stream.get();
    DeviceBuffer x, y, z, partials, result, dpartials, dresult;
    x.reserve(n * sizeof(T));
    y.reserve(n * sizeof(T));
    z.reserve(n * sizeof(T));
    partials.reserve(2 * kernels::kInTypeMaxPartials * sizeof(T));
    result.reserve(2 * sizeof(T));
    dpartials.reserve(kernels::kReduceMaxPartials * sizeof(double));
    dresult.reserve(2 * sizeof(double));
    const Stats create = timeStream(
        cu,
        [&] {
          kernels::launchLinspace(x.as<T>(), n, 0.0, 1.0, cu);
          kernels::launchLinspace(y.as<T>(), n, 1.0, 2.0, cu);
        },
        timing);
    const Stats elementwise = timeStream(
        cu,
        [&] {
          kernels::launchElementwise(kernels::ElementwiseOp::SquarePlusTwice, T(0), x.as<T>(), y.as<T>(), z.as<T>(), n,
                                     cu);
        },
        timing);
    const Stats tree = timeStream(
        cu, [&] { kernels::launchSumMaxInType(z.as<T>(), n, partials.as<T>(), result.as<T>(), cu); }, timing);
    T inType[2];
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(inType, result.data(), sizeof inType, cudaMemcpyDeviceToHost, cu));
    const Stats dbl = timeStream(
        cu,
        [&] {
          kernels::launchReduce(z.as<T>(), n, kernels::ReduceKind::Sum, nullptr, 1.0, false, dpartials.as<double>(),
                                dresult.as<double>(), cu);
          kernels::launchReduce(z.as<T>(), n, kernels::ReduceKind::Max, nullptr, 1.0, false, dpartials.as<double>(),
                                dresult.as<double>() + 1, cu);
        },
        timing);
    double inDouble[2];
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(inDouble, dresult.data(), sizeof inDouble, cudaMemcpyDeviceToHost, cu));
    stream.synchronize();
    CourseReduceRow a =
        row(Accumulation::GpuTree, true, inType[0], static_cast<T>(inType[0] / static_cast<T>(n)), inType[1]);
    CourseReduceRow b =
        row(Accumulation::GpuDouble, true, inDouble[0], inDouble[0] / static_cast<double>(n), inDouble[1]);
    for (CourseReduceRow* r : {&a, &b}) {
      r->createMs = create.medianMs;
      r->elementwiseMs = elementwise.medianMs;
    }
    a.reduceMs = tree.medianMs;
    b.reduceMs = dbl.medianMs;
    rows.push_back(a);
    rows.push_back(b);
  }

  std::vector<T> x(n), y(n), z(n);
  const Stats create = timeHost(
      [&] {
        linspaceCpu(x.data(), n, 0.0, 1.0);
        linspaceCpu(y.data(), n, 1.0, 2.0);
      },
      timing);
  const Stats elementwise = timeHost([&] { squarePlusTwiceCpu(x.data(), y.data(), z.data(), n); }, timing);
  T pairwise = 0, sequential = 0, best = 0;
  double inDouble = 0;
  const TimingOptions once{std::min(o.warmup, 1), std::min(o.reps, 3)};  // one-thread loops over N: fewer runs
  const Stats tPair = timeHost([&] { pairwise = sumPairwise(z.data(), n), best = maxCpu(z.data(), n); }, once);
  const Stats tSeq = timeHost([&] { sequential = sumSequential(z.data(), n), best = maxCpu(z.data(), n); }, once);
  const Stats tDbl = timeHost([&] { inDouble = sumDoubleCpu(z.data(), n), best = maxCpu(z.data(), n); }, timing);
  CourseReduceRow p =
      row(Accumulation::CpuPairwise, false, pairwise, static_cast<T>(pairwise / static_cast<T>(n)), best);
  CourseReduceRow s =
      row(Accumulation::CpuSequential, false, sequential, static_cast<T>(sequential / static_cast<T>(n)), best);
  CourseReduceRow d = row(Accumulation::CpuDouble, false, inDouble, inDouble / static_cast<double>(n), best);
  p.reduceMs = tPair.medianMs;
  p.reps = tPair.reps;
  s.reduceMs = tSeq.medianMs;
  s.reps = tSeq.reps;
  d.reduceMs = tDbl.medianMs;
  for (CourseReduceRow* r : {&p, &s, &d}) {
    r->createMs = create.medianMs;
    r->elementwiseMs = elementwise.medianMs;
  }
  rows.push_back(p);
  rows.push_back(s);
  rows.push_back(d);
}

}  // namespace

void validate(const CourseReduceOptions& options) {
  courseExact(options.n);
  if (options.dtypes.empty()) throw std::invalid_argument("choose at least one type");
  checkReps(options.reps, options.warmup);
}

std::vector<CourseReduceRow> runCourseReduce(const CourseReduceOptions& options) {
  validate(options);
  const CourseExact exact = courseExact(options.n);
  const bool gpu = options.useGpu && cudaAvailable();
  detail::requireHostMemory(3 * options.n * 8, "the linspace example");
  if (gpu) detail::requireDeviceMemory(3 * options.n * 8, "the linspace example");
  std::vector<CourseReduceRow> rows;
  for (DType dtype : options.dtypes)
    detail::byDType(dtype, [&](auto t) { courseReduceType<decltype(t)>(options, dtype, gpu, exact, rows); });
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Transcendental expressions

template <class T>
void courseExpressionCpu(CourseExpression e, const T* x, const T* y, T* out, std::size_t n) {
  detail::parallelFor(n, std::size_t{1} << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = e == CourseExpression::SinSqrt ? T(2) * std::sin(x[i]) + std::sqrt(std::fabs(x[i]))
                                              : std::exp(-x[i]) * std::sin(y[i]);
  });
}
template void courseExpressionCpu<float>(CourseExpression, const float*, const float*, float*, std::size_t);
template void courseExpressionCpu<double>(CourseExpression, const double*, const double*, double*, std::size_t);

namespace {

template <class T>
double expressionError(CourseExpression e, const T* x, const T* y, const T* out, std::size_t n) {
  std::mutex mutex;
  double worst = 0;
  detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    double local = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const long double xv = x[i], yv = y[i];
      const long double ref =
          e == CourseExpression::SinSqrt ? 2 * std::sin(xv) + std::sqrt(std::fabs(xv)) : std::exp(-xv) * std::sin(yv);
      const long double diff = std::fabs(static_cast<long double>(out[i]) - ref);
      if (diff > 0) local = std::max(local, static_cast<double>(diff / std::fabs(ref)));
    }
    std::lock_guard lock(mutex);
    worst = std::max(worst, local);
  });
  return worst;
}

template <class T>
void expressionsType(const CourseReduceOptions& o, DType dtype, bool gpu, std::vector<ExpressionRow>& rows) {
  const std::size_t n = o.n;
  const TimingOptions timing{o.warmup, o.reps};
  std::vector<T> x(n), y(n), out(n);
  linspaceCpu(x.data(), n, 0.0, 1.0);
  linspaceCpu(y.data(), n, 1.0, 2.0);
  for (CourseExpression e : {CourseExpression::SinSqrt, CourseExpression::ExpSin}) {
    ExpressionRow base;
    base.expression = e;
    base.dtype = dtype;
    base.n = n;
    base.reps = o.reps;
    if (gpu) {
      activateSelectedDevice();
      Stream stream;
      const cudaStream_t cu = stream.get();
      DeviceBuffer dx, dy, dout;
      dx.reserve(n * sizeof(T));
      dy.reserve(n * sizeof(T));
      dout.reserve(n * sizeof(T));
      kernels::launchLinspace(dx.as<T>(), n, 0.0, 1.0, cu);  // made on the device: no upload
      kernels::launchLinspace(dy.as<T>(), n, 1.0, 2.0, cu);
      const Stats t = timeStream(
          cu,
          [&] {
            kernels::launchCourseExpression(static_cast<kernels::CourseExpression>(e), dx.as<T>(), dy.as<T>(),
                                            dout.as<T>(), n, cu);
          },
          timing);
      std::vector<T> gx(n), gy(n);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(out.data(), dout.data(), n * sizeof(T), cudaMemcpyDeviceToHost, cu));
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(gx.data(), dx.data(), n * sizeof(T), cudaMemcpyDeviceToHost, cu));
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(gy.data(), dy.data(), n * sizeof(T), cudaMemcpyDeviceToHost, cu));
      stream.synchronize();
      ExpressionRow r = base;
      r.gpu = true;
      r.device = selectedDeviceLabel();
      r.medianMs = t.medianMs;
      r.gbps = 3.0 * static_cast<double>(n * sizeof(T)) / (t.medianMs * 1e6);
      r.maxRelativeError = expressionError(e, gx.data(), gy.data(), out.data(), n);
      rows.push_back(r);
    }
    const Stats t = timeHost([&] { courseExpressionCpu(e, x.data(), y.data(), out.data(), n); }, timing);
    ExpressionRow r = base;
    r.device = cpuLabel();
    r.medianMs = t.medianMs;
    r.gbps = 3.0 * static_cast<double>(n * sizeof(T)) / (t.medianMs * 1e6);
    r.maxRelativeError = expressionError(e, x.data(), y.data(), out.data(), n);
    rows.push_back(r);
  }
}

}  // namespace

std::vector<ExpressionRow> runCourseExpressions(const CourseReduceOptions& options) {
  validate(options);
  const bool gpu = options.useGpu && cudaAvailable();
  detail::requireHostMemory(5 * options.n * 8, "the expressions");
  std::vector<ExpressionRow> rows;
  for (DType dtype : options.dtypes)
    detail::byDType(dtype, [&](auto t) { expressionsType<decltype(t)>(options, dtype, gpu, rows); });
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Axis reductions and the row normalisation

std::string axisOpPython(AxisOp op) {
  switch (op) {
    case AxisOp::RowSums:
      return "x.sum(axis=1)";
    case AxisOp::ColumnSums:
      return "x.sum(axis=0)";
    case AxisOp::NormalizeBySum:
      return "x / x.sum(axis=1, keepdims=True)";
    case AxisOp::NormalizeByNorm:
      return "x / linalg.norm(x, axis=1, keepdims=True)";
  }
  return {};
}

std::size_t axisOutputCount(AxisOp op, int rows, int cols) {
  switch (op) {
    case AxisOp::RowSums:
      return static_cast<std::size_t>(rows);
    case AxisOp::ColumnSums:
      return static_cast<std::size_t>(cols);
    case AxisOp::NormalizeBySum:
    case AxisOp::NormalizeByNorm:
      return static_cast<std::size_t>(rows) * cols;
  }
  return 0;
}

double axisTolerance(DType dtype) { return dtype == DType::F32 ? 1.2e-7 : 1e-12; }

namespace {
void checkMatrix(int rows, int cols) {
  if (rows < 1 || cols < 1 || static_cast<std::size_t>(rows) * cols > kMaxVectorElements)
    throw std::invalid_argument("the matrix " + std::to_string(rows) + "x" + std::to_string(cols) +
                                " must have at least one row and column and at most " +
                                std::to_string(kMaxVectorElements) + " elements");
}
}  // namespace

template <class T>
std::vector<double> axisReference(AxisOp op, const T* x, int rows, int cols) {
  checkMatrix(rows, cols);
  std::vector<double> out(axisOutputCount(op, rows, cols), 0.0);
  auto at = [&](int r, int c) { return static_cast<double>(x[static_cast<std::size_t>(r) * cols + c]); };
  switch (op) {
    case AxisOp::RowSums:
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out[r] += at(r, c);
      break;
    case AxisOp::ColumnSums:
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out[c] += at(r, c);
      break;
    case AxisOp::NormalizeBySum:
    case AxisOp::NormalizeByNorm:
      for (int r = 0; r < rows; ++r) {
        double s = 0;
        for (int c = 0; c < cols; ++c) s += op == AxisOp::NormalizeBySum ? at(r, c) : at(r, c) * at(r, c);
        if (op == AxisOp::NormalizeByNorm) s = std::sqrt(s);
        for (int c = 0; c < cols; ++c) out[static_cast<std::size_t>(r) * cols + c] = at(r, c) / s;
      }
      break;
  }
  return out;
}

template <class T>
void axisCpu(AxisOp op, const T* x, int rows, int cols, T* out) {
  checkMatrix(rows, cols);
  const std::size_t C = static_cast<std::size_t>(cols);
  if (op == AxisOp::ColumnSums) {
    // Stripes of columns; each walks its columns row by row (contiguous within a row).
    const std::size_t grain = std::max<std::size_t>(64, C / (4 * static_cast<std::size_t>(cpuThreadSetting())) + 1);
    detail::parallelFor(C, grain, [&](std::size_t begin, std::size_t end) {
      std::vector<double> acc(end - begin, 0.0);
      for (int r = 0; r < rows; ++r) {
        const T* row = x + r * C;
        for (std::size_t c = begin; c < end; ++c) acc[c - begin] += static_cast<double>(row[c]);
      }
      for (std::size_t c = begin; c < end; ++c) out[c] = static_cast<T>(acc[c - begin]);
    });
    return;
  }
  detail::parallelFor(static_cast<std::size_t>(rows), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const T* row = x + r * C;
      double s = 0;
      for (std::size_t c = 0; c < C; ++c) {
        const double v = static_cast<double>(row[c]);
        s += op == AxisOp::NormalizeByNorm ? v * v : v;
      }
      if (op == AxisOp::RowSums) {
        out[r] = static_cast<T>(s);
        continue;
      }
      if (op == AxisOp::NormalizeByNorm) s = std::sqrt(s);
      for (std::size_t c = 0; c < C; ++c) out[r * C + c] = static_cast<T>(static_cast<double>(row[c]) / s);
    }
  });
}

#define GPULAB_AXIS(T)                                                       \
  template std::vector<double> axisReference<T>(AxisOp, const T*, int, int); \
  template void axisCpu<T>(AxisOp, const T*, int, int, T*);
GPULAB_AXIS(float)
GPULAB_AXIS(double)
#undef GPULAB_AXIS

void validate(const AxisOptions& options) {
  checkMatrix(options.rows, options.cols);
  if (options.dtypes.empty()) throw std::invalid_argument("choose at least one type");
  checkReps(options.reps, options.warmup);
}

namespace {

template <class T>
double maxRelative(const T* out, const std::vector<double>& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(out[i]) - ref[i]);
    if (diff > 0) worst = std::max(worst, diff / std::fabs(ref[i]));
    if (std::isnan(diff)) return diff;
  }
  return worst;
}

template <class T>
void axisType(const AxisOptions& o, DType dtype, bool gpu, std::vector<AxisRow>& rows) {
  const std::size_t count = static_cast<std::size_t>(o.rows) * o.cols;
  std::vector<T> x(count);
  detail::fillRandom(x.data(), count, 7);
  for (T& v : x) v = (v + T(1)) * T(0.5);  // [0, 1): positive rows
  const TimingOptions timing{o.warmup, o.reps};
  std::optional<Stream> stream;
  DeviceBuffer dx, dout;
  if (gpu) {
    activateSelectedDevice();
    stream.emplace();
    dx.reserve(count * sizeof(T));
    dout.reserve(count * sizeof(T));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(dx.data(), x.data(), count * sizeof(T), cudaMemcpyHostToDevice, stream->get()));
    stream->synchronize();
  }
  for (AxisOp op : {AxisOp::RowSums, AxisOp::ColumnSums, AxisOp::NormalizeBySum, AxisOp::NormalizeByNorm}) {
    const std::vector<double> ref = axisReference(op, x.data(), o.rows, o.cols);
    const std::size_t outCount = axisOutputCount(op, o.rows, o.cols);
    const double bytes = static_cast<double>((count + outCount) * sizeof(T));
    std::vector<T> out(outCount);
    AxisRow base;
    base.op = op;
    base.dtype = dtype;
    base.rows = o.rows;
    base.cols = o.cols;
    base.reps = o.reps;
    if (gpu) {
      const cudaStream_t cu = stream->get();
      const Stats t = timeStream(
          cu,
          [&] {
            switch (op) {
              case AxisOp::RowSums:
                kernels::launchRowSums(dx.as<T>(), o.rows, o.cols, dout.as<T>(), cu);
                break;
              case AxisOp::ColumnSums:
                kernels::launchColumnSums(dx.as<T>(), o.rows, o.cols, dout.as<T>(), cu);
                break;
              case AxisOp::NormalizeBySum:
              case AxisOp::NormalizeByNorm:
                kernels::launchRowNormalize(dx.as<T>(), o.rows, o.cols, op == AxisOp::NormalizeByNorm, dout.as<T>(),
                                            cu);
                break;
            }
          },
          timing);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(out.data(), dout.data(), outCount * sizeof(T), cudaMemcpyDeviceToHost, cu));
      stream->synchronize();
      AxisRow r = base;
      r.gpu = true;
      r.device = selectedDeviceLabel();
      r.medianMs = t.medianMs;
      r.gbps = bytes / (t.medianMs * 1e6);
      r.maxRelativeError = maxRelative(out.data(), ref);
      r.ok = r.maxRelativeError <= axisTolerance(dtype);
      rows.push_back(r);
    }
    const Stats t = timeHost([&] { axisCpu(op, x.data(), o.rows, o.cols, out.data()); }, timing);
    AxisRow r = base;
    r.device = cpuLabel();
    r.medianMs = t.medianMs;
    r.gbps = bytes / (t.medianMs * 1e6);
    r.maxRelativeError = maxRelative(out.data(), ref);
    r.ok = r.maxRelativeError <= axisTolerance(dtype);
    rows.push_back(r);
  }
}

}  // namespace

std::vector<AxisRow> runAxisStudy(const AxisOptions& options) {
  validate(options);
  const bool gpu = options.useGpu && cudaAvailable();
  const std::size_t count = static_cast<std::size_t>(options.rows) * options.cols;
  detail::requireHostMemory(4 * count * 8, "the axis study");
  if (gpu) detail::requireDeviceMemory(2 * count * 8, "the axis study");
  std::vector<AxisRow> rows;
  for (DType dtype : options.dtypes)
    detail::byDType(dtype, [&](auto t) { axisType<decltype(t)>(options, dtype, gpu, rows); });
  return rows;
}

}  // namespace gpulab::lab
