// The matrix product split across GPUs (lab/matmul_multi.hpp): the row split (table of sizes,
// tiny and prime, fewer rows than workers), exact products of small-integer matrices against the
// float64 reference with the rows split over several workers (on one GPU the same device repeats,
// which runs the splitting and gathering), the experiment's report and records. GPU tests skip
// without a device; the split and the refusals run everywhere.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/lab/matmul.hpp"
#include "gpulab/lab/matmul_multi.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

template <class T>
std::vector<T> integerMatrix(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<T> m(static_cast<std::size_t>(rows) * cols);
  for (T& v : m) v = static_cast<T>(d(rng));
  return m;
}

struct SplitCase {
  int m;
  int parts;
  std::vector<int> rows;
};

}  // namespace

TEST(SplitRows, BlocksDifferByAtMostOneLargerFirst) {
  const std::vector<SplitCase> cases = {{1, 1, {1}},          {1, 2, {1, 0}},          {2, 3, {1, 1, 0}},
                                        {7, 3, {3, 2, 2}},    {13, 4, {4, 3, 3, 3}},   {16384, 2, {8192, 8192}},
                                        {257, 2, {129, 128}}, {5, 5, {1, 1, 1, 1, 1}}, {131, 1, {131}}};
  for (const SplitCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + " rows in " + std::to_string(c.parts));
    const std::vector<int> rows = splitRows(c.m, c.parts);
    EXPECT_EQ(rows, c.rows);
    EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), 0), c.m);
  }
  EXPECT_THROW(splitRows(0, 2), std::invalid_argument);
  EXPECT_THROW(splitRows(4, 0), std::invalid_argument);
}

TEST(MatmulMultiCpu, RefusalsAreOneSentence) {
  const std::vector<float> a(4, 1.0f), b(4, 1.0f);
  std::vector<float> c(4);
  EXPECT_THROW(multiplyAcrossGpus<float>({0}, {0, 2, 2}, a.data(), b.data(), c.data()), std::invalid_argument);
  try {
    multiplyAcrossGpus<float>({}, {2, 2, 1}, a.data(), b.data(), c.data());
    FAIL() << "ran on no GPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "the split matrix product needs at least one GPU");
  }
  if (!cudaAvailable()) {
    try {
      runMultiGpuMatmul({0}, {8, 8, 8}, DType::F32, {});
      FAIL() << "ran without a GPU";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("needs a CUDA device"), std::string::npos) << e.what();
    }
  } else {
    try {
      multiplyAcrossGpus<float>({0, 99}, {2, 2, 1}, a.data(), b.data(), c.data());
      FAIL() << "ran on GPU 99";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("there is no GPU 99"), std::string::npos) << e.what();
    }
  }
}

template <class T>
void expectExactSplitProducts() {
  GPULAB_REQUIRE_GPU();
  const std::vector<MatmulShape> shapes = {{1, 1, 1}, {2, 3, 5}, {13, 12, 7}, {257, 131, 33}, {64, 1, 129}};
  for (const std::vector<int>& devices : {std::vector<int>{0}, std::vector<int>{0, 0}, std::vector<int>{0, 0, 0}}) {
    for (const MatmulShape& s : shapes) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " on " +
                   std::to_string(devices.size()) + " workers");
      const std::vector<T> a = integerMatrix<T>(s.m, s.k, 3u + s.k), b = integerMatrix<T>(s.k, s.n, 5u + s.m);
      std::vector<T> c(static_cast<std::size_t>(s.m) * s.n, T(-12345.5));
      multiplyAcrossGpus<T>(devices, s, a.data(), b.data(), c.data());
      const std::vector<double> ref = matmulReference(a.data(), b.data(), s);
      for (std::size_t i = 0; i < c.size(); ++i)
        ASSERT_EQ(static_cast<double>(c[i]), ref[i]) << "first difference at row " << i / s.n << ", column " << i % s.n;
    }
  }
}

TEST(MatmulMultiGpu, SplitProductsAreExactF32) { expectExactSplitProducts<float>(); }
TEST(MatmulMultiGpu, SplitProductsAreExactF64) { expectExactSplitProducts<double>(); }

TEST(MatmulMultiGpu, ReportComparesTheSplitWithOneGpuAndNamesTheDevices) {
  GPULAB_REQUIRE_GPU();
  const MatmulShape s{67, 45, 38};
  const MultiGpuMatmulReport r = runMultiGpuMatmul({0, 0}, s, DType::F32, {.reps = 3, .warmup = 1});
  EXPECT_EQ(r.one.rows, std::vector<int>{67});
  EXPECT_EQ(r.split.rows, (std::vector<int>{34, 33}));
  EXPECT_TRUE(r.allclose) << r.toleranceText() << ", max diff " << r.maxAbsDiff;
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_GT(r.one.computeMs, 0.0);
  EXPECT_GT(r.split.withCopiesMs, 0.0);
  EXPECT_GT(r.speedup, 0.0);
  EXPECT_DOUBLE_EQ(r.efficiency, r.speedup / 2);
  ASSERT_EQ(r.split.uploadGbps.size(), 2u);
  EXPECT_GT(r.split.uploadGbps[0], 0.0);
  EXPECT_NE(r.toleranceText().find("rtol=1e-4"), std::string::npos) << r.toleranceText();
  const std::vector<Record> records = r.records();
  ASSERT_EQ(records.size(), 4u);
  for (const Record& rec : records) {
    EXPECT_EQ(rec.variant, "multi_gpu");
    EXPECT_EQ(rec.sizes, (std::vector<std::int64_t>{67, 45, 38}));
    EXPECT_NE(rec.device.find(deviceLabel(0)), std::string::npos) << rec.device;
    EXPECT_GT(rec.gflops, 0.0);
  }
  EXPECT_EQ(records[2].device, deviceLabel(0) + ", " + deviceLabel(0));
  EXPECT_TRUE(records[1].withCopies);
}
