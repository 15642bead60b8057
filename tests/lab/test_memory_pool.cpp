// The memory-pool lab: the allocation sizes (log-uniform within the bounds, the same for a seed),
// the peak of live bytes, validation, the statistics text, and on a GPU a run whose pool figures
// are consistent (used 0 after everything is freed, reserved at least the peak live bytes' worth
// while the threshold keeps it, less after trimming) and whose records carry both sides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpulab/lab/memory_pool.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

TEST(PoolSizes, LogUniformWithinBoundsAndSeeded) {
  PoolRequest r;
  const std::vector<std::size_t> sizes = poolAllocationSizes(r);
  ASSERT_EQ(sizes.size(), 10000u);
  EXPECT_EQ(sizes, poolAllocationSizes(r));
  EXPECT_GE(*std::min_element(sizes.begin(), sizes.end()), r.minBytes);
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), r.maxBytes);
  // Log-uniform over 16 doublings: about 1/16 of the sizes in each octave, so the median sits near
  // the geometric middle (256 KiB), far below the arithmetic one (32 MiB).
  std::vector<std::size_t> sorted = sizes;
  std::nth_element(sorted.begin(), sorted.begin() + 5000, sorted.end());
  EXPECT_GT(sorted[5000], std::size_t{128} << 10);
  EXPECT_LT(sorted[5000], std::size_t{512} << 10);
  int lowOctave = 0;
  for (std::size_t s : sizes) lowOctave += s < 2048;
  EXPECT_GT(lowOctave, 10000 / 16 / 2);
  EXPECT_LT(lowOctave, 10000 / 16 * 2);
  PoolRequest other = r;
  other.seed = 7;
  EXPECT_NE(poolAllocationSizes(other), sizes);
  PoolRequest one = r;
  one.minBytes = one.maxBytes = 4096;
  one.allocations = 3;
  one.live = 1;
  EXPECT_EQ(poolAllocationSizes(one), (std::vector<std::size_t>{4096, 4096, 4096}));
}

TEST(PoolSizes, PeakLiveBytes) {
  EXPECT_EQ(peakLiveBytes({5, 1, 9, 2}, 1), 9u);
  EXPECT_EQ(peakLiveBytes({5, 1, 9, 2}, 2), 11u);
  EXPECT_EQ(peakLiveBytes({5, 1, 9, 2}, 3), 15u);
  EXPECT_EQ(peakLiveBytes({5, 1, 9, 2}, 4), 17u);
  EXPECT_EQ(peakLiveBytes({5, 1, 9, 2}, 9), 17u);
  EXPECT_EQ(peakLiveBytes({}, 3), 0u);
  EXPECT_THROW(peakLiveBytes({1}, 0), std::invalid_argument);
}

TEST(PoolSizes, ValidationNamesTheField) {
  auto refused = [](PoolRequest r, const char* says) {
    try {
      validate(r);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  PoolRequest r;
  EXPECT_NO_THROW(validate(r));
  r.allocations = 0;
  refused(r, "allocation count");
  r = {};
  r.maxBytes = 512;
  refused(r, "is below the smallest");
  r = {};
  r.maxBytes = std::size_t{5} << 30;
  refused(r, "at most 4 GiB");
  r = {};
  r.live = 0;
  refused(r, "alive at once");
  r = {};
  r.allocations = 4;
  r.live = 5;
  refused(r, "alive at once");
  r = {};
  r.rounds = 0;
  refused(r, "rounds");
}

TEST(PoolSizes, StatsTextAndSentence) {
  PoolStats s{0, std::size_t{512} << 20, std::size_t{700} << 20, std::size_t{768} << 20};
  EXPECT_EQ(s.text(), "used 0 B, reserved 512.0 MiB (high: used 700.0 MiB, reserved 768.0 MiB)");
  PoolReport report;
  report.request.allocations = 1000;
  report.malloc.name = "cudaMalloc";
  report.malloc.round = Stats::of({100.0});
  report.async.name = "cudaMallocAsync";
  report.async.round = Stats::of({2.0});
  EXPECT_DOUBLE_EQ(report.perPairUs(report.malloc), 100.0);
  EXPECT_DOUBLE_EQ(report.perPairUs(report.async), 2.0);
  EXPECT_NE(report.sentence().find("50.0x faster"), std::string::npos) << report.sentence();
  const std::vector<Record> rows = report.records();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].impl, "cudaMalloc");
  EXPECT_EQ(rows[1].impl, "cudaMallocAsync");
  EXPECT_EQ(rows[1].experiment, "pool");
  EXPECT_NE(rows[1].params.find("us_per_pair=2.000"), std::string::npos) << rows[1].params;
  report.async.round = Stats::of({200.0});
  EXPECT_NE(report.sentence().find("not faster"), std::string::npos);
}

TEST(PoolGpu, BothSidesAndThePoolFigures) {
  GPULAB_REQUIRE_GPU();
  PoolRequest r;
  r.allocations = 500;
  r.maxBytes = std::size_t{8} << 20;
  r.live = 8;
  r.rounds = 2;
  MemoryPoolLab lab;
  const PoolReport report = lab.run(r);
  EXPECT_GT(report.malloc.round.medianMs, 0);
  EXPECT_GT(report.async.round.medianMs, 0);
  EXPECT_EQ(report.malloc.round.reps, 2);
  EXPECT_EQ(report.afterRun.used, 0u);
  EXPECT_GE(report.afterRun.reserved, std::size_t{1} << 20);
  const std::vector<std::size_t> sizes = poolAllocationSizes(r);
  EXPECT_GE(report.afterRun.usedHigh, *std::max_element(sizes.begin(), sizes.end()));
  EXPECT_LE(report.afterRun.usedHigh, report.afterRun.reservedHigh);
  EXPECT_LE(report.afterRun.usedHigh, report.peakLive + (std::size_t{8} << 20));
  EXPECT_LT(report.afterTrim.reserved, report.afterRun.reserved);
  EXPECT_EQ(report.afterTrim.used, 0u);
  EXPECT_FALSE(report.sentence().empty());
  // The pool's own threshold is back.
  const PoolReport again = lab.run(r);
  EXPECT_EQ(again.releaseThreshold, report.releaseThreshold);
}

TEST(PoolGpu, CancelStopsBetweenRounds) {
  GPULAB_REQUIRE_GPU();
  PoolRequest r;
  r.allocations = 50;
  r.maxBytes = 1 << 20;
  std::atomic<bool> cancel{true};
  CpuControl control;
  control.cancel = &cancel;
  MemoryPoolLab lab;
  EXPECT_THROW(lab.run(r, control), OperationCancelled);
}

}  // namespace
