// Matrix product: every implementation against the float64 reference (relative error) and exactly
// on small-integer matrices, over square, rectangular, tiny, prime and off-tile sizes; the three
// hand-written kernels writing into a C surrounded by guard cells that must stay untouched (the
// register-blocked epilogue once stored a vector past the last column when N was a multiple of 4
// but not of 128). CPU BLAS runs everywhere; the GPU implementations skip without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/matmul.cuh"
#include "gpulab/lab/matmul.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

/// rows x cols values drawn from `dist`, seeded.
template <class T, class Distribution>
std::vector<T> matrixFrom(Distribution dist, int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> m(static_cast<std::size_t>(rows) * cols);
  for (T& v : m) v = static_cast<T>(dist(rng));
  return m;
}

template <class T>
std::vector<T> randomMatrix(int rows, int cols, unsigned seed) {
  return matrixFrom<T>(std::uniform_real_distribution<double>(-1.0, 1.0), rows, cols, seed);
}

/// Small integers: every product and sum is exact in float32, so implementations agree bit for bit.
template <class T>
std::vector<T> integerMatrix(int rows, int cols, unsigned seed) {
  return matrixFrom<T>(std::uniform_int_distribution<int>(-4, 4), rows, cols, seed);
}

std::string text(const MatmulShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

/// Exact equality, naming the first differing element.
template <class T>
::testing::AssertionResult exactlyEqual(const std::vector<double>& expected, const std::vector<T>& actual, int n) {
  std::size_t bad = 0, first = expected.size();
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (static_cast<double>(actual[i]) != expected[i]) {
      if (first == expected.size()) first = i;
      ++bad;
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << bad << " of " << expected.size() << " elements differ; first at row " << first / n << " column " << first % n
     << ": expected " << expected[first] << ", got " << static_cast<double>(actual[first]);
  return ::testing::AssertionFailure() << os.str();
}

// 1, 7, 33, 100, 257 square; rectangular in every orientation; single rows and columns; sizes just
// off the 32 and 128 tiles; shapes whose rows are multiples of 4 (the 16-byte vector paths) with
// ragged edges.
const std::vector<MatmulShape> kShapes = {
    {1, 1, 1},      {7, 7, 7},     {33, 33, 33}, {100, 100, 100}, {257, 257, 257}, {33, 100, 7},   {100, 7, 33},
    {7, 33, 100},   {1, 300, 1},   {300, 1, 1},  {1, 1, 300},     {129, 131, 9},   {128, 128, 8},  {128, 256, 64},
    {260, 132, 12}, {31, 65, 127}, {5, 300, 17}, {130, 4, 4},     {100, 37, 129},  {37, 129, 100}, {129, 100, 37},
};

constexpr MatmulImpl kGpuImpls[] = {MatmulImpl::GpuNaive, MatmulImpl::GpuTiled, MatmulImpl::GpuRegBlock,
                                    MatmulImpl::Cublas};

/// float32 rounding over k terms of size ~1: relative error grows like sqrt(k) * 2^-24.
template <class T>
double tolerance(int k) {
  return (sizeof(T) == 4 ? 2e-6 : 4e-15) * std::sqrt(static_cast<double>(k)) + (sizeof(T) == 4 ? 1e-6 : 1e-15);
}

template <class T>
void checkAgainstReference(MatmulLab& lab, MatmulImpl impl, const MatmulShape& s) {
  SCOPED_TRACE(std::string(toString(impl)) + " " + text(s) + (sizeof(T) == 4 ? " f32" : " f64"));
  const std::vector<T> a = randomMatrix<T>(s.m, s.k, 11u + s.m);
  const std::vector<T> b = randomMatrix<T>(s.k, s.n, 13u + s.n);
  std::vector<T> c(static_cast<std::size_t>(s.m) * s.n, T(12345));
  lab.multiply(impl, s, a.data(), b.data(), c.data());
  const std::vector<double> ref = matmulReference(a.data(), b.data(), s);
  EXPECT_LT(relativeError(c.data(), ref.data(), c.size()), tolerance<T>(s.k));

  const std::vector<T> ai = integerMatrix<T>(s.m, s.k, 17u + s.k);
  const std::vector<T> bi = integerMatrix<T>(s.k, s.n, 19u + s.m);
  lab.multiply(impl, s, ai.data(), bi.data(), c.data());
  EXPECT_TRUE(exactlyEqual(matmulReference(ai.data(), bi.data(), s), c, s.n));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The oracle itself

TEST(MatmulReference, HandComputedProduct) {
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  EXPECT_EQ(matmulReference(a.data(), b.data(), {2, 2, 3}), (std::vector<double>{58, 64, 139, 154}));
}

TEST(MatmulReference, RelativeErrorIsTheFrobeniusRatio) {
  const std::vector<double> ref = {3, 4};  // norm 5
  const std::vector<float> c = {3, 4.5f};  // diff norm 0.5
  EXPECT_DOUBLE_EQ(relativeError(c.data(), ref.data(), 2), 0.1);
  const std::vector<double> zeros = {0, 0};
  EXPECT_DOUBLE_EQ(relativeError(c.data(), zeros.data(), 2), std::sqrt(9 + 4.5 * 4.5));
}

// ---------------------------------------------------------------------------------------------
// Shapes and names

TEST(MatmulShapes, ValidationAndPoints) {
  EXPECT_THROW(validate(MatmulShape{0, 5, 5}), std::invalid_argument);
  EXPECT_THROW(validate(MatmulShape{5, -1, 5}), std::invalid_argument);
  EXPECT_THROW(validate(MatmulShape{5, 5, kMaxMatmulDim + 1}), std::invalid_argument);
  EXPECT_NO_THROW(validate(MatmulShape{1, kMaxMatmulDim, 1}));
  const MatmulShape square = matmulShape({64});
  EXPECT_EQ(square.m, 64);
  EXPECT_EQ(square.n, 64);
  EXPECT_EQ(square.k, 64);
  const MatmulShape rect = matmulShape({33, 100, 7});
  EXPECT_EQ(rect.m, 33);
  EXPECT_EQ(rect.n, 100);
  EXPECT_EQ(rect.k, 7);
  EXPECT_DOUBLE_EQ(rect.flops(), 2.0 * 33 * 100 * 7);
  EXPECT_THROW(matmulShape({3, 4}), std::invalid_argument);
  EXPECT_THROW(matmulShape({std::int64_t{1} << 40}), std::invalid_argument);
  for (MatmulImpl impl :
       {MatmulImpl::CpuBlas, MatmulImpl::GpuNaive, MatmulImpl::GpuTiled, MatmulImpl::GpuRegBlock, MatmulImpl::Cublas})
    EXPECT_EQ(parseEnumOrThrow<MatmulImpl>(std::string(toString(impl))), impl);
  EXPECT_THROW(parseEnumOrThrow<MatmulImpl>("gpu_magic"), std::invalid_argument);
  EXPECT_FALSE(isGpu(MatmulImpl::CpuBlas));
  EXPECT_TRUE(isGpu(MatmulImpl::Cublas));
}

TEST(MatmulLabCpu, BadShapeThrowsBeforeTouchingPointers) {
  MatmulLab lab;
  float x = 0;
  EXPECT_THROW(lab.multiply<float>(MatmulImpl::CpuBlas, {0, 1, 1}, &x, &x, &x), std::invalid_argument);
  EXPECT_THROW(lab.multiply<float>(MatmulImpl::GpuRegBlock, {1, 1, -3}, &x, &x, &x), std::invalid_argument);
}

TEST(MatmulLabCpu, GpuImplementationWithoutAGpuSaysSo) {
  if (cudaAvailable()) GTEST_SKIP() << "this machine has a GPU";
  MatmulLab lab;
  EXPECT_FALSE(lab.hasGpu());
  float x = 1;
  try {
    lab.multiply<float>(MatmulImpl::Cublas, {1, 1, 1}, &x, &x, &x);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cublas needs a CUDA device"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// CPU BLAS (OpenBLAS)

TEST(MatmulLabCpu, BlasMatchesReferenceF32) {
  MatmulLab lab;
  EXPECT_GE(MatmulLab::blasThreads(), 1);
  for (const MatmulShape& s : kShapes) checkAgainstReference<float>(lab, MatmulImpl::CpuBlas, s);
}

TEST(MatmulLabCpu, BlasMatchesReferenceF64) {
  MatmulLab lab;
  for (const MatmulShape& s : kShapes) checkAgainstReference<double>(lab, MatmulImpl::CpuBlas, s);
}

TEST(MatmulLabCpu, MeasureFillsARecord) {
  MatmulLab lab;
  const std::vector<Record> records = lab.measure(MatmulImpl::CpuBlas, DType::F64, {33, 100, 7}, {2, 1, true, true});
  ASSERT_EQ(records.size(), 1u);  // no "with copies" record on the CPU
  const Record& r = records[0];
  EXPECT_EQ(r.experiment, "matmul");
  EXPECT_EQ(r.impl, "cpu_blas");
  EXPECT_EQ(r.dtype, "f64");
  EXPECT_EQ(r.sizes, (std::vector<std::int64_t>{33, 100, 7}));
  EXPECT_EQ(r.reps, 2);
  EXPECT_FALSE(r.gpu);
  EXPECT_NEAR(r.gflops, 2.0 * 33 * 100 * 7 / (r.medianMs * 1e6), 1e-9 * r.gflops);
  EXPECT_GE(r.relativeError, 0);
  EXPECT_LT(r.relativeError, 1e-14);
  EXPECT_EQ(r.params, "threads=" + std::to_string(MatmulLab::blasThreads()));
}

// ---------------------------------------------------------------------------------------------
// GPU kernels and cuBLAS

TEST(MatmulLabGpu, EveryKernelMatchesReferenceF32) {
  GPULAB_REQUIRE_GPU();
  MatmulLab lab;
  ASSERT_TRUE(lab.hasGpu());
  for (MatmulImpl impl : kGpuImpls)
    for (const MatmulShape& s : kShapes) checkAgainstReference<float>(lab, impl, s);
}

TEST(MatmulLabGpu, EveryKernelMatchesReferenceF64) {
  GPULAB_REQUIRE_GPU();
  MatmulLab lab;
  for (MatmulImpl impl : kGpuImpls)
    for (const MatmulShape& s : kShapes) checkAgainstReference<double>(lab, impl, s);
}

TEST(MatmulLabGpu, CublasFloat32IsNotTf32) {
  // TF32 keeps 10 mantissa bits: a 512-deep product would be off by ~1e-3 relative, not ~1e-6.
  GPULAB_REQUIRE_GPU();
  MatmulLab lab;
  const MatmulShape s{256, 256, 512};
  const std::vector<float> a = randomMatrix<float>(s.m, s.k, 3);
  const std::vector<float> b = randomMatrix<float>(s.k, s.n, 4);
  std::vector<float> c(static_cast<std::size_t>(s.m) * s.n);
  lab.multiply(MatmulImpl::Cublas, s, a.data(), b.data(), c.data());
  const std::vector<double> ref = matmulReference(a.data(), b.data(), s);
  EXPECT_LT(relativeError(c.data(), ref.data(), c.size()), 2e-5);
}

TEST(MatmulLabGpu, ReusesBuffersAcrossShrinkingAndGrowingShapes) {
  GPULAB_REQUIRE_GPU();
  MatmulLab lab;
  for (const MatmulShape& s : {MatmulShape{300, 300, 300}, MatmulShape{3, 5, 7}, MatmulShape{301, 299, 302}})
    checkAgainstReference<float>(lab, MatmulImpl::GpuRegBlock, s);
}

TEST(MatmulLabGpu, MeasureSplitsUploadComputeDownloadAndChecks) {
  GPULAB_REQUIRE_GPU();
  MatmulLab lab;
  for (MatmulImpl impl : kGpuImpls) {
    SCOPED_TRACE(std::string(toString(impl)));
    const std::vector<Record> records = lab.measure(impl, DType::F32, {257, 129, 65}, {3, 1, true, true});
    ASSERT_EQ(records.size(), 2u);
    const Record& compute = records[0];
    const Record& whole = records[1];
    EXPECT_TRUE(compute.gpu);
    EXPECT_FALSE(compute.withCopies);
    EXPECT_TRUE(whole.withCopies);
    EXPECT_GT(compute.uploadMs, 0);
    EXPECT_GT(compute.downloadMs, 0);
    EXPECT_GT(compute.medianMs, 0);
    // Structure, not speed (timings are never compared in tests): the with-copies record times the
    // whole sequence as one; the compute record adds its parts.
    EXPECT_GT(whole.medianMs, 0);
    EXPECT_DOUBLE_EQ(whole.endToEndMs(), whole.medianMs);
    EXPECT_DOUBLE_EQ(compute.endToEndMs(), compute.uploadMs + compute.medianMs + compute.downloadMs);
    EXPECT_LT(compute.relativeError, 1e-5);
    EXPECT_LT(whole.relativeError, 1e-5);
  }
}

// ---------------------------------------------------------------------------------------------
// Guard cells: the kernels write C and nothing else

namespace {

template <class T>
void launchKernel(MatmulImpl impl, const T* a, const T* b, T* c, const MatmulShape& s, cudaStream_t stream) {
  switch (impl) {
    case MatmulImpl::GpuNaive:
      return kernels::launchMatmulNaive(a, b, c, s.m, s.n, s.k, stream);
    case MatmulImpl::GpuTiled:
      return kernels::launchMatmulTiled(a, b, c, s.m, s.n, s.k, stream);
    case MatmulImpl::GpuRegBlock:
      return kernels::launchMatmulRegBlock(a, b, c, s.m, s.n, s.k, stream);
    default:
      FAIL() << "not a hand-written kernel";
  }
}

/// C at `front` elements into a device buffer of front + m*n + kBack elements, all preset to a
/// sentinel; after the product every guard element must still hold it and C must be exact.
template <class T>
void checkGuarded(MatmulImpl impl, const MatmulShape& s, std::size_t front) {
  constexpr std::size_t kBack = 256;
  constexpr T kSentinel = T(-12345.5);  // no product of these small-integer matrices can equal it
  SCOPED_TRACE(std::string(toString(impl)) + " " + text(s) + (sizeof(T) == 4 ? " f32" : " f64") + ", C at +" +
               std::to_string(front) + " elements");
  const std::vector<T> a = integerMatrix<T>(s.m, s.k, 23u + s.k);
  const std::vector<T> b = integerMatrix<T>(s.k, s.n, 29u + s.n);
  const std::size_t cCount = static_cast<std::size_t>(s.m) * s.n;
  std::vector<T> whole(front + cCount + kBack, kSentinel);

  DeviceBuffer da(a.size() * sizeof(T)), db(b.size() * sizeof(T)), dc(whole.size() * sizeof(T));
  GPULAB_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  GPULAB_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice));
  GPULAB_CUDA_CHECK(cudaMemcpy(dc.data(), whole.data(), whole.size() * sizeof(T), cudaMemcpyHostToDevice));
  // cudaMemcpy from pageable memory may return before its DMA lands, and the stream below does not
  // wait for the legacy default stream: finish the copies first, or they race with the kernel.
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  Stream stream;
  launchKernel<T>(impl, da.as<T>(), db.as<T>(), dc.as<T>() + front, s, stream);
  stream.synchronize();
  GPULAB_CUDA_CHECK(cudaMemcpy(whole.data(), dc.data(), whole.size() * sizeof(T), cudaMemcpyDeviceToHost));

  for (std::size_t i = 0; i < front; ++i)
    ASSERT_EQ(whole[i], kSentinel) << "guard element " << front - i << " before C was overwritten";
  for (std::size_t i = 0; i < kBack; ++i)
    ASSERT_EQ(whole[front + cCount + i], kSentinel)
        << "guard element " << i << " after C (row " << s.m << ", column " << i << " past the end) was overwritten";
  const std::vector<T> c(whole.begin() + static_cast<std::ptrdiff_t>(front),
                         whole.begin() + static_cast<std::ptrdiff_t>(front + cCount));
  EXPECT_TRUE(exactlyEqual(matmulReference(a.data(), b.data(), s), c, s.n));
}

// N a multiple of 4 but not of 128 (the vector epilogue with a partial last tile: the bug's case),
// N not a multiple of 4 (scalar epilogue), N a multiple of 128 (whole tiles), with M and K ragged.
const std::vector<MatmulShape> kGuardShapes = {
    {1, 1, 1},      {3, 5, 7},     {5, 4, 3},     {7, 36, 11},    {33, 100, 7},
    {100, 37, 129}, {129, 131, 9}, {64, 124, 16}, {130, 132, 12}, {257, 260, 33},
    {2, 500, 3},    {131, 252, 8}, {128, 128, 8}, {129, 256, 5},  {200, 384, 130},
};

}  // namespace

TEST(MatmulLabGpu, KernelsWriteOnlyCF32) {
  GPULAB_REQUIRE_GPU();
  for (MatmulImpl impl : {MatmulImpl::GpuNaive, MatmulImpl::GpuTiled, MatmulImpl::GpuRegBlock})
    for (const MatmulShape& s : kGuardShapes) {
      checkGuarded<float>(impl, s, 64);  // C 16-byte aligned: the vector stores where N allows
      checkGuarded<float>(impl, s, 1);   // C misaligned: the scalar stores everywhere
    }
}

TEST(MatmulLabGpu, KernelsWriteOnlyCF64) {
  GPULAB_REQUIRE_GPU();
  for (MatmulImpl impl : {MatmulImpl::GpuNaive, MatmulImpl::GpuTiled, MatmulImpl::GpuRegBlock})
    for (const MatmulShape& s : kGuardShapes) {
      checkGuarded<double>(impl, s, 64);
      checkGuarded<double>(impl, s, 1);
    }
}
