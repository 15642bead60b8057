// The CuPy study guide's array examples (course text 001, sections 5.1 and 5.2, and 9.1), measured
// and checked:
//
//  * the linspace example: x = linspace(0, 1, N), y = linspace(1, 2, N) made where they are used
//    (on the GPU: no upload), z = x**2 + 2*y, then sum(z), mean(z) and max(z), in float32 and
//    float64, on the GPU and the CPU, against the exact values
//        mean = 3 + 1/3 + 1/(6 (N - 1)),  sum = N * mean,  max = 5
//    (N = 10,000,000: mean = 3.3333333500000016667, sum = 33,333,333.500000016667). Sums accumulate in
//    the element type as NumPy and CuPy do (the GPU: per-thread sums and a tree, like CuPy; the CPU:
//    NumPy's pairwise summation, and the plain sequential loop to show what it costs in float32),
//    and in float64 for comparison.
//  * transcendental elementwise expressions (2*sin(x) + sqrt(|x|), exp(-x)*sin(y)) on both sides,
//    against float64 (std::) evaluations of the same inputs.
//  * reductions along an axis of a row-major matrix (row sums, axis 1; column sums, axis 0) and a
//    row normalisation (each row divided by its sum, or by its Euclidean norm), GPU against CPU,
//    each checked against plain loops in double (the oracle).
//
// Every row names the device it ran on ("GPU 0 (...)", "CPU (16 threads)"). Timings are medians
// after warm-up: CUDA events on the stream for the GPU, a steady clock for the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

// ---------------------------------------------------------------------------------------------
// The linspace example

/// N of the study guide's example.
constexpr std::size_t kCourseLinspaceN = 10'000'000;

/// The exact sum, mean and max of z = x**2 + 2*y over the mathematical (unrounded) linspaces, from
/// the closed forms sum = 3N + N (2N - 1) / (6 (N - 1)), mean = sum / N, in long double (64-bit
/// mantissa: the values below are exact to about 1e-19 relative, far below any float64 error).
struct CourseExact {
  std::size_t n = 0;
  long double sum = 0;
  long double mean = 0;
  long double max = 0;
};
/// Throws std::invalid_argument for n < 2 or above kMaxVectorElements.
CourseExact courseExact(std::size_t n);
/// "33333333.500000016666..." style decimal text of a long double with `digits` significant digits.
std::string exactText(long double value, int digits = 19);

/// numpy.linspace(start, stop, n) in T: each value computed in double and rounded, the last = stop.
template <class T>
void linspaceCpu(T* out, std::size_t n, double start, double stop);
/// NumPy's pairwise summation in T (blocks of 128 summed with 8 accumulators, halves combined).
template <class T>
T sumPairwise(const T* x, std::size_t n);
/// The plain loop s += x[i] in T.
template <class T>
T sumSequential(const T* x, std::size_t n);

/// How a sum was accumulated.
enum class Accumulation {
  GpuTree,        ///< GPU: per-thread sums, then trees, in the element type (like CuPy)
  CpuPairwise,    ///< CPU: NumPy's pairwise summation in the element type (one thread)
  CpuSequential,  ///< CPU: the plain loop in the element type (one thread)
  GpuDouble,      ///< GPU: accumulated in float64 whatever the type (the reduce lab's kernel)
  CpuDouble       ///< CPU: accumulated in float64, stripes on the CPU threads
};
constexpr EnumText enumText(Accumulation) {
  return {"accumulation", "gpu_tree|cpu_pairwise|cpu_sequential|gpu_double|cpu_double"};
}
/// "in the element type: per-thread sums and a tree (like CuPy)" ...
std::string accumulationHow(Accumulation a);

struct CourseReduceRow {
  DType dtype = DType::F32;
  Accumulation accumulation = Accumulation::GpuTree;
  bool gpu = false;
  std::string device;
  std::size_t n = 0;
  double sum = 0, mean = 0, max = 0;
  double sumError = 0, meanError = 0, maxError = 0;  ///< |value - exact| / exact
  double createMs = 0;                               ///< the two linspaces (median)
  double elementwiseMs = 0;                          ///< z = x**2 + 2*y (median)
  double reduceMs = 0;                               ///< sum and max (median)
  int reps = 0;
};

struct CourseReduceOptions {
  std::size_t n = kCourseLinspaceN;
  std::vector<DType> dtypes{DType::F32, DType::F64};
  bool useGpu = true;  ///< false: the CPU alone (also without a device)
  int reps = 10;
  int warmup = 2;
};
void validate(const CourseReduceOptions& options);
std::vector<CourseReduceRow> runCourseReduce(const CourseReduceOptions& options);

// ---------------------------------------------------------------------------------------------
// Transcendental elementwise expressions

enum class CourseExpression { SinSqrt, ExpSin };
constexpr EnumText enumText(CourseExpression) { return {"expression", "2*sin(x)+sqrt(abs(x))|exp(-x)*sin(y)"}; }

/// The expression in T with the C++ library's functions (the CPU side).
template <class T>
void courseExpressionCpu(CourseExpression e, const T* x, const T* y, T* out, std::size_t n);

struct ExpressionRow {
  CourseExpression expression = CourseExpression::SinSqrt;
  DType dtype = DType::F32;
  bool gpu = false;
  std::string device;
  std::size_t n = 0;
  double medianMs = 0;
  double gbps = 0;              ///< x, y read and out written / median
  double maxRelativeError = 0;  ///< against the expression in double (std::) of the same inputs
  int reps = 0;
};
/// x = linspace(0, 1, n), y = linspace(1, 2, n) (on the side that computes), each expression on each side.
std::vector<ExpressionRow> runCourseExpressions(const CourseReduceOptions& options);

// ---------------------------------------------------------------------------------------------
// Reductions along an axis, and a row normalisation

enum class AxisOp { RowSums, ColumnSums, NormalizeBySum, NormalizeByNorm };
constexpr EnumText enumText(AxisOp) { return {"axis operation", "row_sums|column_sums|rows_by_sum|rows_by_norm"}; }
/// "x.sum(axis=1)", "x.sum(axis=0)", "x / x.sum(axis=1, keepdims=True)", "x / norm(x, axis=1, keepdims=True)".
std::string axisOpPython(AxisOp op);

/// Plain loops in double on one core: the oracle. Row and column sums: rows or cols values;
/// normalisations: rows x cols values.
template <class T>
std::vector<double> axisReference(AxisOp op, const T* x, int rows, int cols);
/// The CPU implementation: stripes of rows (columns for column sums) on the CPU threads, sums in
/// double, results rounded to T.
template <class T>
void axisCpu(AxisOp op, const T* x, int rows, int cols, T* out);
/// How many values an op writes: rows, cols or rows * cols.
std::size_t axisOutputCount(AxisOp op, int rows, int cols);

struct AxisRow {
  AxisOp op = AxisOp::RowSums;
  DType dtype = DType::F32;
  bool gpu = false;
  std::string device;
  int rows = 0;
  int cols = 0;
  double medianMs = 0;
  double gbps = 0;              ///< matrix read + result written / median
  double maxRelativeError = 0;  ///< against axisReference
  bool ok = false;              ///< maxRelativeError within the tolerance of the type (axisTolerance)
  int reps = 0;
};
/// The bound on maxRelativeError that counts as correct: one rounding to T plus the double sums.
double axisTolerance(DType dtype);

struct AxisOptions {
  int rows = 4096;
  int cols = 4096;
  std::vector<DType> dtypes{DType::F32, DType::F64};
  bool useGpu = true;
  int reps = 10;
  int warmup = 2;
};
void validate(const AxisOptions& options);
/// The matrix holds seeded values in [0, 1) (positive: row sums are never near zero).
std::vector<AxisRow> runAxisStudy(const AxisOptions& options);

}  // namespace gpulab::lab
