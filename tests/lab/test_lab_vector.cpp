// Elementwise operations and reductions: CPU and GPU against the one-core references. Elementwise
// results must be identical bit for bit; reductions accumulate in double and must agree to a few
// units in the last place of a double sum, min and max exactly. Sizes: 1 element, around the
// 16-byte pack, one block (256 threads), past one block, past one grid-stride round, and through
// the kernels' scalar path (unaligned pointers).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/elementwise.cuh"
#include "gpulab/kernels/reduce.cuh"
#include "gpulab/lab/elementwise.hpp"
#include "gpulab/lab/reduce.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

const std::vector<std::size_t> kSizes = {1, 2, 3, 4, 5, 17, 255, 256, 257, 1000, 4099, 65537, (1u << 20) + 3};

template <class T>
std::vector<T> randomVector(std::size_t n, std::uint64_t seed, double lo = -3.0, double hi = 3.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
::testing::AssertionResult identical(const std::vector<T>& expected, const std::vector<T>& actual) {
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i]) {
      std::ostringstream os;
      os.precision(17);
      os << "first difference at element " << i << " of " << expected.size() << ": expected " << expected[i] << ", got "
         << actual[i];
      return ::testing::AssertionFailure() << os.str();
    }
  return ::testing::AssertionSuccess();
}

/// Sums of n values of magnitude <= 3 in double, in different orders, differ by far less than this
/// (a float accumulator would miss by ~1e-4 relative).
template <class T>
double reduceTolerance(ReduceOp op, const std::vector<T>& x) {
  if (op == ReduceOp::Min || op == ReduceOp::Max) return 0.0;
  double absSum = 0;
  for (T v : x) absSum += std::abs(static_cast<double>(v));
  const double scale = op == ReduceOp::Sum ? absSum : absSum / static_cast<double>(x.size());
  return 1e-11 * scale + 1e-15;
}

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Std, ReduceOp::Min, ReduceOp::Max};

template <class T>
void checkElementwise(ElementwiseLab& lab, Target target, std::size_t n) {
  const std::vector<T> x = randomVector<T>(n, 21 + n);
  const std::vector<T> y = randomVector<T>(n, 22 + n);
  for (ElementwiseOp op : {ElementwiseOp::SquarePlusTwice, ElementwiseOp::Axpy}) {
    SCOPED_TRACE(std::string(toString(op)) + " n=" + std::to_string(n) + (sizeof(T) == 4 ? " f32" : " f64"));
    std::vector<T> expected(n), actual(n, T(-99));
    const T a = static_cast<T>(kAxpyA);
    elementwiseReference(op, a, x.data(), y.data(), expected.data(), n);
    lab.run(target, op, a, x.data(), y.data(), actual.data(), n);
    EXPECT_TRUE(identical(expected, actual));
  }
}

template <class T>
void checkReduce(ReduceLab& lab, Target target, std::size_t n, int maxBlocks = 0, double shift = 0.0) {
  const std::vector<T> x = randomVector<T>(n, 31 + n, -3.0 + shift, 3.0 + shift);
  for (ReduceOp op : kOps) {
    SCOPED_TRACE(std::string(toString(op)) + " n=" + std::to_string(n) + " blocks=" + std::to_string(maxBlocks) +
                 (sizeof(T) == 4 ? " f32" : " f64"));
    const double expected = reduceReference(op, x.data(), n);
    const double actual = lab.reduce(target, op, x.data(), n, maxBlocks);
    EXPECT_NEAR(actual, expected, reduceTolerance(op, x));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// References by hand

TEST(ElementwiseReference, SmallCaseByHand) {
  const std::vector<float> x = {1, -2, 3};
  const std::vector<float> y = {0.5f, 4, -1};
  std::vector<float> out(3);
  elementwiseReference(ElementwiseOp::SquarePlusTwice, 0.f, x.data(), y.data(), out.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{2, 12, 7}));
  elementwiseReference(ElementwiseOp::Axpy, 2.5f, x.data(), y.data(), out.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{3, -1, 6.5f}));
  EXPECT_EQ(parseEnumOrThrow<ElementwiseOp>("a*x+y"), ElementwiseOp::Axpy);
  EXPECT_THROW(parseEnumOrThrow<ElementwiseOp>("x+y"), std::invalid_argument);
  EXPECT_THROW(elementwiseReference(ElementwiseOp::Axpy, 1.f, x.data(), y.data(), out.data(), 0),
               std::invalid_argument);
}

TEST(ReduceReference, SmallCaseByHand) {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};  // mean 5, population std 2
  EXPECT_DOUBLE_EQ(reduceReference(ReduceOp::Sum, x.data(), x.size()), 40);
  EXPECT_DOUBLE_EQ(reduceReference(ReduceOp::Mean, x.data(), x.size()), 5);
  EXPECT_DOUBLE_EQ(reduceReference(ReduceOp::Std, x.data(), x.size()), 2);
  EXPECT_DOUBLE_EQ(reduceReference(ReduceOp::Min, x.data(), x.size()), 2);
  EXPECT_DOUBLE_EQ(reduceReference(ReduceOp::Max, x.data(), x.size()), 9);
  const float one = -3.5f;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Min, ReduceOp::Max})
    EXPECT_EQ(reduceReference(op, &one, 1), -3.5);
  EXPECT_EQ(reduceReference(ReduceOp::Std, &one, 1), 0.0);
  EXPECT_THROW(reduceReference(ReduceOp::Sum, &one, 0), std::invalid_argument);
  for (ReduceOp op : kOps) EXPECT_EQ(parseEnumOrThrow<ReduceOp>(std::string(toString(op))), op);
  EXPECT_THROW(parseEnumOrThrow<ReduceOp>("median"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// CPU

TEST(ElementwiseCpu, IdenticalToReference) {
  ElementwiseLab lab;
  for (std::size_t n : kSizes) {
    checkElementwise<float>(lab, Target::Cpu, n);
    checkElementwise<double>(lab, Target::Cpu, n);
  }
  float x = 0;
  EXPECT_THROW(lab.run(Target::Cpu, ElementwiseOp::Axpy, 1.f, &x, &x, &x, 0), std::invalid_argument);
}

TEST(ReduceCpu, MatchesReference) {
  ReduceLab lab;
  for (std::size_t n : kSizes) {
    checkReduce<float>(lab, Target::Cpu, n);
    checkReduce<double>(lab, Target::Cpu, n);
  }
  checkReduce<float>(lab, Target::Cpu, 100003, 0, 1000.0);  // a large mean: std must not cancel
  float x = 0;
  EXPECT_THROW(lab.reduce(Target::Cpu, ReduceOp::Sum, &x, 0), std::invalid_argument);
}

TEST(ReduceCpu, SameResultEveryRun) {
  ReduceLab lab;
  const std::vector<float> x = randomVector<float>(1 << 20, 5);
  const double first = lab.reduce(Target::Cpu, ReduceOp::Sum, x.data(), x.size());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(lab.reduce(Target::Cpu, ReduceOp::Sum, x.data(), x.size()), first);
}

TEST(VectorCpu, MeasureFillsRecords) {
  ElementwiseLab elementwise;
  const std::vector<Record> e =
      elementwise.measure(Target::Cpu, ElementwiseOp::SquarePlusTwice, DType::F64, 1000, {2, 1, true, false});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].variant, "x*x+2*y");
  EXPECT_EQ(e[0].dtype, "f64");
  EXPECT_NEAR(e[0].gbps, 3.0 * 1000 * 8 / (e[0].medianMs * 1e6), 1e-9 * e[0].gbps);
  ReduceLab reduce;
  const std::vector<Record> r = reduce.measure(Target::Cpu, ReduceOp::Std, DType::F32, 1000, {2, 1, false, false});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].variant, "std");
  EXPECT_EQ(r[0].impl, "cpu");
  EXPECT_NEAR(r[0].gbps, 1000.0 * 4 / (r[0].medianMs * 1e6), 1e-9 * r[0].gbps);
}

// ---------------------------------------------------------------------------------------------
// GPU

TEST(ElementwiseGpu, IdenticalToReference) {
  GPULAB_REQUIRE_GPU();
  ElementwiseLab lab;
  for (std::size_t n : kSizes) {
    checkElementwise<float>(lab, Target::Gpu, n);
    checkElementwise<double>(lab, Target::Gpu, n);
  }
}

TEST(ElementwiseGpu, UnalignedPointersTakeTheScalarPath) {
  GPULAB_REQUIRE_GPU();
  const std::size_t n = 1001;
  const std::vector<float> x = randomVector<float>(n, 1);
  const std::vector<float> y = randomVector<float>(n, 2);
  std::vector<float> expected(n), actual(n);
  elementwiseReference(ElementwiseOp::SquarePlusTwice, 0.f, x.data(), y.data(), expected.data(), n);
  DeviceBuffer dx((n + 1) * sizeof(float)), dy((n + 1) * sizeof(float)), dout((n + 1) * sizeof(float));
  Stream stream;
  // One element in: 4-byte aligned, not 16-byte aligned. The copies go on the kernel's stream: a
  // cudaMemcpy from pageable memory may return before its DMA lands, and `stream` does not wait for
  // the legacy default stream.
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(dx.as<float>() + 1, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(dy.as<float>() + 1, y.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  kernels::launchElementwise(kernels::ElementwiseOp::SquarePlusTwice, 0.f, dx.as<float>() + 1, dy.as<float>() + 1,
                             dout.as<float>() + 1, n, stream);
  stream.synchronize();
  GPULAB_CUDA_CHECK(cudaMemcpy(actual.data(), dout.as<float>() + 1, n * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(identical(expected, actual));
}

TEST(ReduceGpu, MatchesReference) {
  GPULAB_REQUIRE_GPU();
  ReduceLab lab;
  for (std::size_t n : kSizes) {
    checkReduce<float>(lab, Target::Gpu, n);
    checkReduce<double>(lab, Target::Gpu, n);
  }
  // Past one grid-stride round of the default grid (up to 2048 blocks x 256 threads x 4 floats).
  checkReduce<float>(lab, Target::Gpu, (std::size_t{3} << 21) + 5);
  checkReduce<float>(lab, Target::Gpu, 100003, 0, 1000.0);  // a large mean: std must not cancel
}

TEST(ReduceGpu, SmallGridsLoopManyRounds) {
  GPULAB_REQUIRE_GPU();
  ReduceLab lab;
  for (int blocks : {1, 3, 7})
    for (std::size_t n : {std::size_t{1}, std::size_t{257}, std::size_t{100003}}) {
      checkReduce<float>(lab, Target::Gpu, n, blocks);
      checkReduce<double>(lab, Target::Gpu, n, blocks);
    }
}

TEST(ReduceGpu, SameResultEveryRunAndAgreesWithCpu) {
  GPULAB_REQUIRE_GPU();
  ReduceLab lab;
  const std::vector<float> x = randomVector<float>((1 << 22) + 1, 9);
  const double first = lab.reduce(Target::Gpu, ReduceOp::Sum, x.data(), x.size());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(lab.reduce(Target::Gpu, ReduceOp::Sum, x.data(), x.size()), first);
  for (ReduceOp op : kOps)
    EXPECT_NEAR(lab.reduce(Target::Gpu, op, x.data(), x.size()), lab.reduce(Target::Cpu, op, x.data(), x.size()),
                reduceTolerance(op, x))
        << std::string(toString(op));
}

TEST(ReduceGpu, UnalignedPointerTakesTheScalarPath) {
  GPULAB_REQUIRE_GPU();
  const std::size_t n = 5003;
  const std::vector<double> x = randomVector<double>(n, 3);
  DeviceBuffer dx((n + 1) * sizeof(double)), partials(kernels::kReduceMaxPartials * sizeof(double)),
      result(sizeof(double));
  Stream stream;
  GPULAB_CUDA_CHECK(  // on the kernel's stream, as above
      cudaMemcpyAsync(dx.as<double>() + 1, x.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream));
  kernels::launchReduce(dx.as<double>() + 1, n, kernels::ReduceKind::Max, nullptr, 1.0, false, partials.as<double>(),
                        result.as<double>(), stream);
  stream.synchronize();
  double actual = 0;
  GPULAB_CUDA_CHECK(cudaMemcpy(&actual, result.data(), sizeof(double), cudaMemcpyDeviceToHost));
  EXPECT_EQ(actual, reduceReference(ReduceOp::Max, x.data(), n));
  EXPECT_THROW(kernels::launchReduce(dx.as<double>(), 0, kernels::ReduceKind::Sum, nullptr, 1.0, false,
                                     partials.as<double>(), result.as<double>(), stream),
               std::invalid_argument);
}

TEST(VectorGpu, MeasureSplitsUploadComputeDownload) {
  GPULAB_REQUIRE_GPU();
  ElementwiseLab elementwise;
  const std::vector<Record> e =
      elementwise.measure(Target::Gpu, ElementwiseOp::Axpy, DType::F32, 1 << 20, {3, 1, true, false});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_GT(e[0].uploadMs, 0);
  EXPECT_GT(e[0].downloadMs, 0);
  EXPECT_TRUE(e[1].withCopies);
  ReduceLab reduce;
  const std::vector<Record> r = reduce.measure(Target::Gpu, ReduceOp::Std, DType::F64, 1 << 20, {3, 1, true, false});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_GT(r[0].uploadMs, 0);
  EXPECT_NE(r[0].params.find("two passes"), std::string::npos);
}
