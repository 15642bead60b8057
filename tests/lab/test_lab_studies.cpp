// The course studies' engine parts: the linspace example's exact arithmetic (closed forms against
// brute-force integer sums), NumPy's pairwise summation against the plain loop, axis reductions and
// row normalisations against the plain-loop oracle on tiny, odd and prime shapes, the matmul table's
// logic (comparisons, allclose, the CPU estimate, speedups and ratios) with CPU-only inputs, the
// CPU-thread and device choices; the GPU kernels on the same shapes (skipped without a device).
#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <opencv2/core.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/course_arrays.hpp"
#include "gpulab/lab/matmul.hpp"
#include "gpulab/lab/matmul_table.hpp"
#include "internal/parallel_rows.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

/// Restores all cores after a test that limits the CPU threads.
struct AllCoresAfter {
  ~AllCoresAfter() { setCpuThreads(0); }
};

const std::vector<std::pair<int, int>> kShapes = {{1, 1},  {1, 7},    {7, 1},   {2, 3},   {13, 17},
                                                  {31, 1}, {64, 129}, {257, 3}, {97, 101}};

template <class T>
std::vector<T> unitMatrix(int rows, int cols, unsigned seed) {
  std::vector<T> x(static_cast<std::size_t>(rows) * cols);
  std::uint64_t state = seed * 2654435761u + 1;
  for (T& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<T>(static_cast<double>(state >> 11) * 0x1.0p-53);  // [0, 1)
  }
  return x;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The linspace example: exact arithmetic

TEST(CourseExact, TheStudyGuideExample) {
  const CourseExact e = courseExact(kCourseLinspaceN);
  // mean = 3 + 1/3 + 1/(6 (N-1)) = 3.33333333333... + 1/59999994 = 3.3333333500000016666667...;
  // sum = N mean = 33333333.500000016666667...
  EXPECT_NEAR(static_cast<double>(e.mean - 3.3333333500000016666667L), 0.0, 1e-18);
  EXPECT_NEAR(static_cast<double>(e.sum - 33333333.500000016666667L), 0.0, 1e-11);
  EXPECT_EQ(static_cast<double>(e.max), 5.0);
  EXPECT_EQ(exactText(e.sum, 12), "33333333.5");
  EXPECT_EQ(exactText(e.mean, 10), "3.33333335");
}

TEST(CourseExact, ClosedFormsMatchIntegerSums) {
  // (N-1)^2 z_i = i^2 + 2 (N-1)^2 + 2 i (N-1): an integer, so the sum is exact in 64 bits.
  for (std::uint64_t n : {2ull, 3ull, 7ull, 100ull, 1001ull, 65537ull}) {
    std::uint64_t scaled = 0;
    const std::uint64_t m = n - 1;
    for (std::uint64_t i = 0; i < n; ++i) scaled += i * i + 2 * m * m + 2 * i * m;
    const long double sum = static_cast<long double>(scaled) / (static_cast<long double>(m) * m);
    const CourseExact e = courseExact(n);
    EXPECT_NEAR(static_cast<double>((e.sum - sum) / sum), 0.0, 1e-17) << "N = " << n;
    EXPECT_NEAR(static_cast<double>((e.mean - sum / n) / e.mean), 0.0, 1e-17) << "N = " << n;
  }
  EXPECT_THROW(courseExact(1), std::invalid_argument);
  EXPECT_THROW(courseExact(0), std::invalid_argument);
}

TEST(CourseLinspace, EndpointsAndSteps) {
  std::vector<double> x(5);
  linspaceCpu(x.data(), 5, 0.0, 1.0);
  EXPECT_EQ(x, (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
  std::vector<float> y(3);
  linspaceCpu(y.data(), 3, 1.0, 2.0);
  EXPECT_EQ(y, (std::vector<float>{1.0f, 1.5f, 2.0f}));
  float one = -1;
  linspaceCpu(&one, 1, 7.0, 9.0);
  EXPECT_EQ(one, 7.0f);  // numpy.linspace(7, 9, 1) == [7]
  std::vector<float> big(1000003);
  linspaceCpu(big.data(), big.size(), 0.0, 1.0);
  EXPECT_EQ(big.back(), 1.0f);
  EXPECT_EQ(big[500001], static_cast<float>(500001.0 / 1000002.0));
}

TEST(CourseSums, PairwiseKeepsWhatTheLoopLoses) {
  // 2^24 + 100 ones: past 2^24 a float32 s += 1 stays at 2^24; pairwise halves never get there.
  const std::vector<float> ones((1u << 24) + 100, 1.0f);
  EXPECT_EQ(sumSequential(ones.data(), ones.size()), 16777216.0f);
  EXPECT_EQ(sumPairwise(ones.data(), ones.size()), 16777316.0f);
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 127u, 128u, 129u, 1000u, 12345u}) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 17) - 3.0;  // exact in double
    double exact = 0;
    for (double d : v) exact += d;
    EXPECT_EQ(sumPairwise(v.data(), n), exact) << n;
    EXPECT_EQ(sumSequential(v.data(), n), exact) << n;
  }
}

TEST(CourseReduceCpu, ValuesAgainstExact) {
  CourseReduceOptions o;
  o.n = 100003;  // prime
  o.useGpu = false;
  o.reps = 1;
  o.warmup = 0;
  const std::vector<CourseReduceRow> rows = runCourseReduce(o);
  ASSERT_EQ(rows.size(), 6u);  // f32 and f64, each pairwise, sequential, double
  for (const CourseReduceRow& r : rows) {
    EXPECT_FALSE(r.gpu);
    EXPECT_EQ(r.device.rfind("CPU (", 0), 0u) << r.device;
    EXPECT_EQ(r.max, 5.0);
    EXPECT_EQ(r.maxError, 0.0);
    const double bound = r.dtype == DType::F64 ? 1e-13 : (r.accumulation == Accumulation::CpuSequential ? 1e-4 : 1e-6);
    EXPECT_LT(r.sumError, bound) << toString(r.dtype) << " " << toString(r.accumulation);
    EXPECT_LT(r.meanError, bound);
  }
  EXPECT_EQ(rows[0].device, "CPU (1 thread)");  // NumPy's pairwise sum is one thread
  o.n = 1;
  EXPECT_THROW(runCourseReduce(o), std::invalid_argument);
}

TEST(CourseExpressionsCpu, WithinAFewUlps) {
  CourseReduceOptions o;
  o.n = 10007;
  o.useGpu = false;
  o.reps = 1;
  o.warmup = 0;
  const std::vector<ExpressionRow> rows = runCourseExpressions(o);
  ASSERT_EQ(rows.size(), 4u);
  for (const ExpressionRow& r : rows)
    EXPECT_LT(r.maxRelativeError, r.dtype == DType::F32 ? 4 * 6e-8 : 4 * 1.2e-16) << toString(r.expression);
}

// ---------------------------------------------------------------------------------------------
// Axis reductions and row normalisation

TEST(AxisReference, HandComputed) {
  const double x[] = {1, 2, 3, 4};
  EXPECT_EQ(axisReference(AxisOp::RowSums, x, 2, 2), (std::vector<double>{3, 7}));
  EXPECT_EQ(axisReference(AxisOp::ColumnSums, x, 2, 2), (std::vector<double>{4, 6}));
  EXPECT_EQ(axisReference(AxisOp::NormalizeBySum, x, 2, 2), (std::vector<double>{1.0 / 3, 2.0 / 3, 3.0 / 7, 4.0 / 7}));
  const std::vector<double> byNorm = axisReference(AxisOp::NormalizeByNorm, x, 2, 2);
  EXPECT_DOUBLE_EQ(byNorm[0], 1 / std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(byNorm[3], 4 / 5.0);
  EXPECT_THROW(axisReference(AxisOp::RowSums, x, 0, 2), std::invalid_argument);
}

template <class T>
void checkAxisCpu() {
  for (const auto& [rows, cols] : kShapes) {
    const std::vector<T> x = unitMatrix<T>(rows, cols, static_cast<unsigned>(rows * 1000 + cols));
    for (AxisOp op : enumValues<AxisOp>()) {
      const std::vector<double> ref = axisReference(op, x.data(), rows, cols);
      std::vector<T> out(axisOutputCount(op, rows, cols));
      axisCpu(op, x.data(), rows, cols, out.data());
      ASSERT_EQ(out.size(), ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i)
        ASSERT_LE(std::abs(out[i] - ref[i]), axisTolerance(sizeof(T) == 4 ? DType::F32 : DType::F64) * std::abs(ref[i]))
            << toString(op) << " " << rows << "x" << cols << " at " << i;
    }
  }
}

TEST(AxisCpu, MatchesReferenceF32) { checkAxisCpu<float>(); }
TEST(AxisCpu, MatchesReferenceF64) { checkAxisCpu<double>(); }

TEST(AxisCpu, NormalisedRowsSumToOne) {
  const std::vector<double> x = unitMatrix<double>(13, 17, 3);
  std::vector<double> out(x.size());
  axisCpu(AxisOp::NormalizeBySum, x.data(), 13, 17, out.data());
  std::vector<double> sums(13);
  axisCpu(AxisOp::RowSums, out.data(), 13, 17, sums.data());
  for (double s : sums) EXPECT_NEAR(s, 1.0, 1e-14);
  axisCpu(AxisOp::NormalizeByNorm, x.data(), 13, 17, out.data());
  for (int r = 0; r < 13; ++r) {
    double sq = 0;
    for (int c = 0; c < 17; ++c) sq += out[r * 17 + c] * out[r * 17 + c];
    EXPECT_NEAR(sq, 1.0, 1e-14);
  }
}

TEST(AxisStudyCpu, EveryRowChecked) {
  AxisOptions o;
  o.rows = 31;
  o.cols = 97;
  o.useGpu = false;
  o.reps = 1;
  o.warmup = 0;
  const std::vector<AxisRow> rows = runAxisStudy(o);
  ASSERT_EQ(rows.size(), 8u);  // 4 ops x 2 types
  for (const AxisRow& r : rows) {
    EXPECT_TRUE(r.ok) << toString(r.op) << " " << r.maxRelativeError;
    EXPECT_GT(r.medianMs, 0);
    EXPECT_EQ(r.device.rfind("CPU (", 0), 0u);
  }
  o.rows = 0;
  EXPECT_THROW(runAxisStudy(o), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The matmul table's logic

TEST(MatmulTableLogic, CompareProductsIsNumpyAllclose) {
  const double ref[] = {1.0, -2.0, 0.0, 1e6};
  const double same[] = {1.0, -2.0, 0.0, 1e6};
  ProductComparison c = compareProducts(same, ref, 4);
  EXPECT_EQ(c.relativeError, 0.0);
  EXPECT_EQ(c.maxAbsDifference, 0.0);
  EXPECT_TRUE(c.allclose);
  // Within atol + rtol |ref| everywhere: 1e6 may be off by 10.00000001.
  const double close[] = {1.0 + 1e-5, -2.0, 5e-9, 1e6 + 10};
  EXPECT_TRUE(compareProducts(close, ref, 4).allclose);
  // Zero in the reference leaves only atol = 1e-8.
  const double farAtZero[] = {1.0, -2.0, 2e-8, 1e6};
  c = compareProducts(farAtZero, ref, 4);
  EXPECT_FALSE(c.allclose);
  EXPECT_DOUBLE_EQ(c.maxAbsDifference, 2e-8);
  // The Frobenius ratio: one element off by 3 against a norm of 5 (3-4-0 triangle).
  const float r2[] = {3.0f, 4.0f};
  const float c2[] = {3.0f, 7.0f};
  EXPECT_DOUBLE_EQ(compareProducts(c2, r2, 2).relativeError, 3.0 / 5.0);
  // NaN is never close.
  const double withNan[] = {1.0, std::numeric_limits<double>::quiet_NaN(), 0.0, 1e6};
  EXPECT_FALSE(compareProducts(withNan, ref, 4).allclose);
}

TEST(MatmulTableLogic, CubicEstimate) {
  EXPECT_DOUBLE_EQ(estimateCubicMs(1000, 100, 2000), 800.0);
  EXPECT_DOUBLE_EQ(estimateCubicMs(5120, 2800, 10240), 22400.0);
  EXPECT_THROW(estimateCubicMs(0, 1, 2), std::invalid_argument);
  EXPECT_THROW(estimateCubicMs(10, 0, 2), std::invalid_argument);
}

TEST(MatmulTableLogic, SpeedupsAndRatios) {
  auto row = [](int n, DType t, std::string impl, bool gpu, double compute, double withCopies) {
    MatmulTableRow r;
    r.n = n;
    r.dtype = t;
    r.impl = std::move(impl);
    r.gpu = gpu;
    r.measured = true;
    r.computeMs = compute;
    r.withCopiesMs = withCopies;
    return r;
  };
  std::vector<MatmulTableRow> rows = {
      row(100, DType::F32, "cublas", true, 1, 4),      row(100, DType::F32, "gpu_naive", true, 10, 13),
      row(100, DType::F32, "cpu_blas", false, 40, 40), row(100, DType::F64, "cublas", true, 2, 10),
      row(100, DType::F64, "gpu_naive", true, 30, 39), row(200, DType::F64, "cublas", true, 16, 40)};
  MatmulTableRow skipped = row(100, DType::F64, "cpu_blas", false, 0, 0);
  skipped.measured = false;
  skipped.estimatedMs = 120;
  rows.push_back(skipped);
  finishMatmulTable(rows);
  EXPECT_DOUBLE_EQ(rows[0].speedupCompute, 40.0);
  EXPECT_DOUBLE_EQ(rows[0].speedupWithCopies, 10.0);
  EXPECT_FALSE(rows[0].speedupEstimated);
  EXPECT_DOUBLE_EQ(rows[1].speedupCompute, 4.0);
  EXPECT_DOUBLE_EQ(rows[2].speedupCompute, 1.0);  // the CPU against itself
  EXPECT_EQ(rows[0].f64OverF32, 0.0);             // float32 rows carry no ratio
  EXPECT_DOUBLE_EQ(rows[3].f64OverF32, 10.0 / 4);
  EXPECT_DOUBLE_EQ(rows[4].f64OverF32, 39.0 / 13);
  EXPECT_DOUBLE_EQ(rows[3].speedupCompute, 60.0);  // against the estimate of the skipped CPU run
  EXPECT_TRUE(rows[3].speedupEstimated);
  EXPECT_EQ(rows[5].speedupCompute, 0.0);  // no CPU row at 200
  EXPECT_EQ(rows[5].f64OverF32, 0.0);      // no float32 row at 200
  EXPECT_EQ(rows[6].speedupCompute, 0.0);  // a skipped row has no times
}

TEST(MatmulTableLogic, Validation) {
  MatmulTableOptions o;
  o.sizes = {};
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.sizes = {0};
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.sizes = {kMaxMatmulDim + 1};
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.sizes = {7};
  o.reps = 0;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.reps = 1;
  o.cpuLimitMs = 0;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.cpuLimitMs = 1;
  EXPECT_NO_THROW(validate(o));
}

TEST(MatmulTableCpu, OddSizesOnTheCpuAlone) {
  MatmulTableOptions o;
  o.sizes = {1, 7, 31};
  o.reps = 1;
  o.warmup = 0;
  o.useGpu = false;
  const std::vector<MatmulTableRow> rows = runMatmulTable(o);
  ASSERT_EQ(rows.size(), 6u);
  for (const MatmulTableRow& r : rows) {
    EXPECT_EQ(r.impl, "cpu_blas");
    EXPECT_TRUE(r.measured);
    EXPECT_TRUE(r.isReference);
    EXPECT_GT(r.computeMs, 0);
    EXPECT_EQ(r.withCopiesMs, r.computeMs);
    EXPECT_EQ(r.device, cpuLabel(MatmulLab::blasThreads()));
    EXPECT_NE(r.note.find("reference (no GPU)"), std::string::npos);
  }
  EXPECT_GT(rows[3].f64OverF32, 0);  // f64 rows come after the f32 ones
}

TEST(MatmulTableCpu, SkipsTheCpuBeyondTheLimitAndSaysWhy) {
  MatmulTableOptions o;
  o.sizes = {64, 97};
  o.dtypes = {DType::F64};
  o.reps = 1;
  o.warmup = 0;
  o.useGpu = false;
  o.cpuLimitMs = 1e-6;  // every run is longer than a nanosecond
  const std::vector<MatmulTableRow> rows = runMatmulTable(o);
  ASSERT_EQ(rows.size(), 2u);
  for (const MatmulTableRow& r : rows) {
    EXPECT_FALSE(r.measured);
    EXPECT_GT(r.estimatedMs, 0);
    EXPECT_NE(r.note.find("skipped: one run estimated at"), std::string::npos) << r.note;
    EXPECT_NE(r.note.find("a 64 calibration run"), std::string::npos) << r.note;
  }
  // The estimate of 97 scales the calibration run by (97/64)^3.
  EXPECT_NEAR(rows[1].estimatedMs / rows[0].estimatedMs, std::pow(97.0 / 64.0, 3), 1e-9);
}

// ---------------------------------------------------------------------------------------------
// CPU threads and the device choice

TEST(CpuThreads, ParseAndApply) {
  AllCoresAfter restore;
  EXPECT_EQ(parseCpuThreads("all"), 0);
  EXPECT_EQ(parseCpuThreads("1"), 1);
  EXPECT_EQ(parseCpuThreads("16"), 16);
  for (const char* bad : {"0", "-1", "", "x", "2x", "all ", "4097"})
    EXPECT_THROW(parseCpuThreads(bad), std::invalid_argument) << bad;

  setCpuThreads(1);
  EXPECT_EQ(cpuThreadSetting(), 1);
  EXPECT_EQ(cv::getNumThreads(), 1);
  EXPECT_EQ(openblas_get_num_threads(), 1);
  EXPECT_EQ(MatmulLab::blasThreads(), 1);
  EXPECT_EQ(rowThreads(0, 1000), 1);
  EXPECT_EQ(rowThreads(3, 1000), 3);  // an explicit count still wins
  EXPECT_EQ(cpuLabel(), "CPU (1 thread)");
  // The records of a CPU run say so.
  MatmulLab lab;
  const std::vector<Record> records = lab.measure(MatmulImpl::CpuBlas, DType::F32, {5, 5, 5}, {1, 0, false, false});
  EXPECT_EQ(records.front().device, "CPU (1 thread)");
  EXPECT_EQ(records.front().params, "threads=1");

  setCpuThreads(0);
  EXPECT_EQ(cpuThreadSetting(), cpuCores());
  EXPECT_EQ(openblas_get_num_threads(), cpuCores());
  EXPECT_EQ(cpuLabel(4), "CPU (4 threads)");
}

TEST(DeviceChoice, AnIndexThatDoesNotExistIsOneSentence) {
  const DeviceReport report = queryDevices();
  const int count = static_cast<int>(report.devices.size());
  for (int bad : {count, count + 5, -1}) {
    try {
      selectDevice(bad);
      ADD_FAILURE() << "GPU " << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("there is no GPU " + std::to_string(bad) + ": this machine has ", 0), 0u) << message;
      if (count > 0) {
        EXPECT_NE(message.find("GPU 0 ("), std::string::npos) << message;
      }
      EXPECT_EQ(message.find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(selectedDevice(), 0);  // unchanged by the refusals
  if (count == 0) {
    EXPECT_EQ(selectedDeviceLabel(), "no GPU");
  }
}

// ---------------------------------------------------------------------------------------------
// GPU

TEST(DeviceChoiceGpu, SelectedDeviceNamesRecords) {
  GPULAB_REQUIRE_GPU();
  selectDevice(0);
  EXPECT_EQ(selectedDeviceLabel(), "GPU 0 (" + queryDevices().devices[0].name + ")");
  MatmulLab lab;
  const std::vector<Record> records = lab.measure(MatmulImpl::Cublas, DType::F32, {5, 5, 5}, {1, 0, false, false});
  EXPECT_EQ(records.front().device, selectedDeviceLabel());
}

TEST(MatmulTableGpu, OddAndPrimeSizesAgreeWithCublas) {
  GPULAB_REQUIRE_GPU();
  MatmulTableOptions o;
  o.sizes = {1, 2, 7, 33, 97, 131};
  o.reps = 1;
  o.warmup = 0;
  const std::vector<MatmulTableRow> rows = runMatmulTable(o);
  ASSERT_EQ(rows.size(), o.sizes.size() * 2 * 4);
  for (const MatmulTableRow& r : rows) {
    ASSERT_TRUE(r.measured) << r.impl << " " << r.n;
    if (r.isReference) continue;
    EXPECT_EQ(r.allclose, 1) << r.impl << " " << toString(r.dtype) << " N=" << r.n << " err " << r.relativeError;
    EXPECT_LT(r.relativeError, r.dtype == DType::F32 ? 1e-6 : 1e-14) << r.impl << " N=" << r.n;
    if (r.gpu) {
      EXPECT_GT(r.speedupCompute, 0);
    }
  }
}

TEST(TensorCoresGpu, ErrorsOrderedByPrecision) {
  GPULAB_REQUIRE_GPU();
  MatmulLab lab;
  const std::vector<GemmPrecision> all = enumValues<GemmPrecision>();
  for (int n : {1, 17, 256}) {
    const std::vector<Record> records = lab.measurePrecisions(all, {n, n, n}, {2, 1, false, false});
    ASSERT_EQ(records.size(), all.size());
    std::map<std::string, double> error;
    for (const Record& r : records) {
      error[r.dtype] = r.relativeError;
      EXPECT_GT(r.gflops, 0);
      EXPECT_EQ(r.variant, "precision");
      EXPECT_EQ(r.device, selectedDeviceLabel());
    }
    EXPECT_LT(error["f64"], 1e-15) << n;
    EXPECT_LT(error["f32"], 1e-6) << n;
    EXPECT_LT(error["tf32"], 2e-3) << n;
    EXPECT_LT(error["f16"], 2e-3) << n;
    EXPECT_LT(error["bf16"], 1e-2) << n;
    if (n >= 17) {  // enough terms for the roundings to show
      EXPECT_LT(error["f32"], error["tf32"]) << n;
      EXPECT_LT(error["f16"], error["bf16"]) << n;
    }
  }
}

TEST(CourseGpu, LinspaceExampleAgainstExact) {
  GPULAB_REQUIRE_GPU();
  CourseReduceOptions o;
  o.reps = 2;
  o.warmup = 1;
  const std::vector<CourseReduceRow> rows = runCourseReduce(o);
  int gpuRows = 0;
  for (const CourseReduceRow& r : rows) {
    if (!r.gpu) continue;
    ++gpuRows;
    EXPECT_EQ(r.max, 5.0);
    EXPECT_LT(r.sumError, r.dtype == DType::F64 ? 1e-14 : 1e-6) << toString(r.accumulation);
  }
  EXPECT_EQ(gpuRows, 4);
}

TEST(CourseGpu, ExpressionsAndAxisStudy) {
  GPULAB_REQUIRE_GPU();
  CourseReduceOptions e;
  e.n = 100003;
  e.reps = 1;
  e.warmup = 0;
  for (const ExpressionRow& r : runCourseExpressions(e))
    EXPECT_LT(r.maxRelativeError, r.dtype == DType::F32 ? 4 * 6e-8 : 4 * 1.2e-16) << toString(r.expression) << r.gpu;
  for (const auto& [rows, cols] : kShapes) {
    AxisOptions o;
    o.rows = rows;
    o.cols = cols;
    o.reps = 1;
    o.warmup = 0;
    int gpuRows = 0;
    for (const AxisRow& r : runAxisStudy(o)) {
      EXPECT_TRUE(r.ok) << toString(r.op) << " " << rows << "x" << cols << (r.gpu ? " gpu " : " cpu ")
                        << r.maxRelativeError;
      gpuRows += r.gpu ? 1 : 0;
    }
    EXPECT_EQ(gpuRows, 8);
  }
}
