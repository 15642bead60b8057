// The timing-pitfalls lab: validation, the cold-start JSON round trip, what the report says from
// known rows (the no-sync reading called out as the launch, the synchronise overhead, the cold
// start), records, a child that does not exist reported as unmeasured; on a GPU the three methods
// (no-sync far below the events for long kernels, sync at least the events), the cold start in this
// process (said to be not fresh) and in a fresh gpulab-cli process.
#include <gtest/gtest.h>

#include <atomic>

#include "gpulab/lab/timing_pitfalls.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

TEST(TimingLab, Validation) {
  TimingRequest r;
  EXPECT_NO_THROW(validate(r));
  r.work = {};
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.work = {0};
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.work = {10};
  r.elements = 0;
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.elements = 10;
  r.reps = 0;
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.reps = 1;
  r.warmup = -1;
  EXPECT_THROW(validate(r), std::invalid_argument);
}

TEST(TimingLab, ColdStartJsonRoundTrip) {
  ColdStart c;
  c.measured = true;
  c.freshProcess = true;
  c.where = "a fresh process";
  c.contextMs = 123.5;
  c.firstLaunchMs = 4.25;
  c.later = Stats::of({0.01, 0.02, 0.03});
  c.moduleLoading = "LAZY (default)";
  const ColdStart back = coldStartFromJson(toJson(c));
  EXPECT_TRUE(back.measured);
  EXPECT_TRUE(back.freshProcess);
  EXPECT_EQ(back.where, c.where);
  EXPECT_EQ(back.contextMs, 123.5);
  EXPECT_EQ(back.firstLaunchMs, 4.25);
  EXPECT_EQ(back.later.medianMs, 0.02);
  EXPECT_EQ(back.later.reps, 3);
  EXPECT_EQ(back.moduleLoading, c.moduleLoading);
  EXPECT_EQ(toJson(c).find('\n'), std::string::npos);
  EXPECT_THROW(coldStartFromJson("{}"), std::invalid_argument);
  EXPECT_THROW(coldStartFromJson("nonsense"), std::invalid_argument);
}

TEST(TimingLab, LessonsAndRecordsFromKnownRows) {
  TimingReport report;
  report.request.work = {1000};
  report.rows = {{1000, TimingMethod::HostNoSync, Stats::of({0.004})},
                 {1000, TimingMethod::HostSync, Stats::of({1.030})},
                 {1000, TimingMethod::Events, Stats::of({1.000})}};
  report.cold.measured = true;
  report.cold.freshProcess = true;
  report.cold.where = "a fresh process";
  report.cold.contextMs = 150;
  report.cold.firstLaunchMs = 2;
  report.cold.later = Stats::of({0.01});
  report.cold.moduleLoading = "LAZY (default)";
  const std::vector<std::string> lessons = report.lessons();
  ASSERT_EQ(lessons.size(), 2u);
  EXPECT_NE(lessons[0].find("250x too little: it timed the launch, not the kernel"), std::string::npos) << lessons[0];
  EXPECT_NE(lessons[0].find("(0.0300 ms of launch and synchronisation on top)"), std::string::npos) << lessons[0];
  EXPECT_NE(lessons[1].find("cudaFree(0) 150.000 ms, the first launch 2.000 ms, later launches 0.0100 ms"),
            std::string::npos)
      << lessons[1];
  const std::vector<Record> rows = report.records();
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].variant, "host-clock-no-sync");
  EXPECT_EQ(rows[0].note, "wrong: measures the launch");
  EXPECT_EQ(rows[2].variant, "cuda-events");
  EXPECT_EQ(rows[3].impl, "context");
  EXPECT_EQ(rows[4].impl, "first-launch");
  EXPECT_EQ(rows[5].impl, "later-launches");
  EXPECT_EQ(rows[5].note, "fresh process");

  report.cold = {};
  report.cold.error = "cannot run x";
  EXPECT_NE(report.lessons().back().find("cold start not measured: cannot run x"), std::string::npos);
  EXPECT_EQ(report.records().size(), 3u);
}

TEST(TimingLab, AChildThatCannotRunIsReportedNotThrown) {
  const ColdStart c = measureColdStartInChild({"/nonexistent/gpulab-cli", "lab", "timing", "--cold-probe"});
  EXPECT_FALSE(c.measured);
  EXPECT_NE(c.error.find("/nonexistent/gpulab-cli"), std::string::npos) << c.error;
  const ColdStart silent = measureColdStartInChild({"/bin/true"});
  EXPECT_FALSE(silent.measured);
  EXPECT_NE(silent.error.find("did not report"), std::string::npos) << silent.error;
  EXPECT_FALSE(measureColdStartInChild({}).measured);
}

TEST(TimingLabGpu, TheThreeMethodsTellTheirStory) {
  GPULAB_REQUIRE_GPU();
  TimingRequest r;
  r.work = {10, 20000};
  r.reps = 5;
  TimingLab lab;
  const TimingReport report = lab.run(r);
  ASSERT_EQ(report.rows.size(), 6u);
  const TimingRow* noSync = report.find(20000, TimingMethod::HostNoSync);
  const TimingRow* sync = report.find(20000, TimingMethod::HostSync);
  const TimingRow* events = report.find(20000, TimingMethod::Events);
  ASSERT_TRUE(noSync && sync && events);
  EXPECT_EQ(report.lessons().size(), 2u);
  if (test::underComputeSanitizer()) return;  // the timings' story needs unslowed kernels
  // 20000 dependent multiply-adds on a million elements take far longer than a launch.
  EXPECT_LT(noSync->stats.medianMs * 5, events->stats.medianMs)
      << "no-sync " << noSync->stats.medianMs << " events " << events->stats.medianMs;
  EXPECT_GE(sync->stats.medianMs * 1.02, events->stats.medianMs);
  EXPECT_GT(report.find(20000, TimingMethod::Events)->stats.medianMs,
            report.find(10, TimingMethod::Events)->stats.medianMs);
}

TEST(TimingLabGpu, ColdStartInThisProcessSaysItIsNotFresh) {
  GPULAB_REQUIRE_GPU();
  const ColdStart c = measureColdStart(false, 5);
  EXPECT_TRUE(c.measured);
  EXPECT_FALSE(c.freshProcess);
  EXPECT_NE(c.where.find("used CUDA before"), std::string::npos);
  EXPECT_EQ(c.later.reps, 5);
  const ColdStart again = measureColdStart(false, 3);
  EXPECT_LT(again.firstLaunchMs, 0) << "the probe's first launch is seen once per process";
  EXPECT_NE(again.where.find("launched here before"), std::string::npos);
}

TEST(TimingLabGpu, ColdStartInAFreshProcess) {
  GPULAB_REQUIRE_GPU();
  const ColdStart c = measureColdStartInChild({GPULAB_CLI_PATH, "lab", "timing", "--cold-probe"});
  ASSERT_TRUE(c.measured) << c.error;
  EXPECT_TRUE(c.freshProcess);
  if (!test::underComputeSanitizer()) {
    EXPECT_GT(c.contextMs, c.later.medianMs) << "creating a context costs more than a launch";
  }
  EXPECT_GE(c.firstLaunchMs, 0);
}

}  // namespace
