// Transpose: the CPU and the three GPU kernels against the one-loop reference, exactly, on single
// rows and columns, odd and prime squares, sizes off the 32x32 tile, and large rectangles.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/lab/transpose.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

const std::vector<TransposeShape> kShapes = {
    {1, 1},   {1, 1000}, {1000, 1}, {2, 3},     {7, 7},   {13, 12},  {31, 33},
    {32, 32}, {33, 33},  {64, 96},  {257, 131}, {100, 1}, {1, 4099}, {515, 1029},
};

template <class T>
std::vector<T> distinctValues(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i) * T(0.5) - T(7);  // every element differs
  return v;
}

template <class T>
::testing::AssertionResult sameMatrix(const std::vector<T>& expected, const std::vector<T>& actual, int cols) {
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i]) {
      std::ostringstream os;
      os << "first difference at row " << i / cols << " column " << i % cols << " of the output: expected "
         << expected[i] << ", got " << actual[i];
      return ::testing::AssertionFailure() << os.str();
    }
  return ::testing::AssertionSuccess();
}

template <class T>
void check(TransposeLab& lab, TransposeImpl impl, const TransposeShape& s) {
  SCOPED_TRACE(std::string(toString(impl)) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
               (sizeof(T) == 4 ? " f32" : " f64"));
  const std::size_t n = static_cast<std::size_t>(s.rows) * s.cols;
  const std::vector<T> in = distinctValues<T>(n);
  std::vector<T> expected(n), actual(n, T(-1));
  transposeReference(in.data(), expected.data(), s);
  lab.transpose(impl, s, in.data(), actual.data());
  EXPECT_TRUE(sameMatrix(expected, actual, s.rows));
}

}  // namespace

TEST(TransposeReference, SmallCaseByHand) {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};  // 2 x 3
  std::vector<float> out(6);
  transposeReference(in.data(), out.data(), {2, 3});
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(TransposeShapes, ValidationAndPoints) {
  EXPECT_THROW(validate(TransposeShape{0, 3}), std::invalid_argument);
  EXPECT_THROW(validate(TransposeShape{3, kMaxTransposeDim + 1}), std::invalid_argument);
  EXPECT_EQ(transposeShape({5}).cols, 5);
  EXPECT_EQ(transposeShape({5, 9}).cols, 9);
  EXPECT_EQ(transposeShape({5, 9}).rows, 5);
  EXPECT_THROW(transposeShape({1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(transposeShape({-1}), std::invalid_argument);
  for (TransposeImpl impl :
       {TransposeImpl::Cpu, TransposeImpl::GpuNaive, TransposeImpl::GpuTiled, TransposeImpl::GpuTiledPadded})
    EXPECT_EQ(parseEnumOrThrow<TransposeImpl>(std::string(toString(impl))), impl);
  EXPECT_THROW(parseEnumOrThrow<TransposeImpl>("gpu"), std::invalid_argument);
  TransposeLab lab;
  float x = 0;
  EXPECT_THROW(lab.transpose<float>(TransposeImpl::Cpu, {0, 0}, &x, &x), std::invalid_argument);
}

TEST(TransposeCpu, MatchesReference) {
  TransposeLab lab;
  for (const TransposeShape& s : kShapes) {
    check<float>(lab, TransposeImpl::Cpu, s);
    check<double>(lab, TransposeImpl::Cpu, s);
  }
  check<float>(lab, TransposeImpl::Cpu, {1031, 2053});  // spread over several threads
}

TEST(TransposeCpu, MeasureFillsARecord) {
  TransposeLab lab;
  const std::vector<Record> records = lab.measure(TransposeImpl::Cpu, DType::F32, {30, 50}, {2, 1, false, false});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].sizes, (std::vector<std::int64_t>{30, 50}));
  EXPECT_NEAR(records[0].gbps, 2.0 * 30 * 50 * 4 / (records[0].medianMs * 1e6), 1e-9 * records[0].gbps);
}

TEST(TransposeGpu, EveryKernelMatchesReference) {
  GPULAB_REQUIRE_GPU();
  TransposeLab lab;
  for (TransposeImpl impl : {TransposeImpl::GpuNaive, TransposeImpl::GpuTiled, TransposeImpl::GpuTiledPadded})
    for (const TransposeShape& s : kShapes) {
      check<float>(lab, impl, s);
      check<double>(lab, impl, s);
    }
}

TEST(TransposeGpu, MeasureSplitsUploadComputeDownload) {
  GPULAB_REQUIRE_GPU();
  TransposeLab lab;
  const std::vector<Record> records =
      lab.measure(TransposeImpl::GpuTiledPadded, DType::F64, {257, 131}, {3, 1, true, false});
  ASSERT_EQ(records.size(), 2u);
  EXPECT_GT(records[0].uploadMs, 0);
  EXPECT_GT(records[0].downloadMs, 0);
  EXPECT_TRUE(records[1].withCopies);
  EXPECT_FALSE(records[0].withCopies);
  EXPECT_GT(records[1].medianMs, 0);  // structure, not speed: no timings are compared in tests
  EXPECT_DOUBLE_EQ(records[1].endToEndMs(), records[1].medianMs);
  EXPECT_DOUBLE_EQ(records[0].endToEndMs(), records[0].uploadMs + records[0].medianMs + records[0].downloadMs);
}
