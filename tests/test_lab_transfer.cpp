// Transfers: data survives host -> device -> host through pageable and pinned memory at odd sizes,
// both feeding patterns compute the same result as the CPU, and the records are well formed.
// Everything here needs a GPU except the check that the experiment refuses to start without one.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "gpulab/lab_elementwise.hpp"
#include "gpulab/lab_transfer.hpp"

using namespace gpulab;
using namespace gpulab::lab;

TEST(TransferCpu, RefusesToStartWithoutAGpu) {
  if (cudaAvailable()) GTEST_SKIP() << "this machine has a GPU";
  try {
    TransferLab lab;
    FAIL() << "constructed without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a CUDA device"), std::string::npos) << e.what();
  }
}

TEST(TransferCpu, Names) {
  EXPECT_STREQ(hostMemoryName(HostMemory::Pinned), "pinned");
  EXPECT_STREQ(directionName(Direction::DeviceToHost), "d2h");
  EXPECT_STREQ(copyPatternName(CopyPattern::UploadOnce), "upload_once");
}

TEST(TransferGpu, RoundTripsKeepEveryByte) {
  GPULAB_REQUIRE_GPU();
  TransferLab lab;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{4096}, (std::size_t{1} << 20) + 7}) {
    std::vector<std::uint8_t> in(bytes), out(bytes);
    for (std::size_t i = 0; i < bytes; ++i) in[i] = static_cast<std::uint8_t>(i * 131 + 7);
    for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned}) {
      SCOPED_TRACE(std::string(hostMemoryName(memory)) + " " + std::to_string(bytes) + " bytes");
      std::fill(out.begin(), out.end(), 0);
      lab.roundTrip(memory, in.data(), out.data(), bytes);
      EXPECT_EQ(std::memcmp(in.data(), out.data(), bytes), 0);
    }
  }
  std::uint8_t b = 0;
  EXPECT_THROW(lab.roundTrip(HostMemory::Pinned, &b, &b, 0), std::invalid_argument);
}

TEST(TransferGpu, BothPatternsComputeTheCpuResult) {
  GPULAB_REQUIRE_GPU();
  TransferLab lab;
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, std::size_t{1} << 18}) {
    std::vector<float> x(n), y(n), expected(n), actual(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 97) * 0.25f - 3.f;
      y[i] = static_cast<float>(i % 13) * -0.5f + 1.f;
    }
    elementwiseReference(ElementwiseOp::SquarePlusTwice, 0.f, x.data(), y.data(), expected.data(), n);
    for (CopyPattern pattern : {CopyPattern::CopyEveryIteration, CopyPattern::UploadOnce}) {
      SCOPED_TRACE(std::string(copyPatternName(pattern)) + " n=" + std::to_string(n));
      std::fill(actual.begin(), actual.end(), -1.f);
      lab.runPattern(pattern, x.data(), y.data(), actual.data(), n, 3);
      EXPECT_EQ(actual, expected);
    }
  }
  float v = 0;
  EXPECT_THROW(lab.runPattern(CopyPattern::UploadOnce, &v, &v, &v, 1, 0), std::invalid_argument);
}

TEST(TransferGpu, RecordsAreWellFormed) {
  GPULAB_REQUIRE_GPU();
  TransferLab lab;
  for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned})
    for (Direction direction : {Direction::HostToDevice, Direction::DeviceToHost}) {
      const Record r = lab.measureCopy(memory, direction, 1 << 20, {3, 1, false, false});
      EXPECT_EQ(r.experiment, "transfer");
      EXPECT_EQ(r.variant, directionName(direction));
      EXPECT_EQ(r.impl, hostMemoryName(memory));
      EXPECT_EQ(r.reps, 3);
      EXPECT_NEAR(r.gbps, (1 << 20) / (r.medianMs * 1e6), 1e-9 * r.gbps);
    }
  const Record once = lab.measurePattern(CopyPattern::UploadOnce, DType::F64, 1000, 5, {2, 1, false, false});
  EXPECT_TRUE(once.withCopies);
  EXPECT_EQ(once.sizes, (std::vector<std::int64_t>{8000}));
  EXPECT_NE(once.params.find("5 iterations"), std::string::npos);
}
