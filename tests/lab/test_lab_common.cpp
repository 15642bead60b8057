// The lab's shared parts: size lists, names, CSV, crossovers, request validation, the sweep's
// progress and cancel hook, the DRAM copy ceiling's buffer sizes and L2 notes. Runs without a GPU;
// the GPU sweeps at the end (every experiment; the DRAM ceiling and the L2 note on memory-bound
// records around the L2 size) skip without one.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/lab/lab.hpp"
#include "gpulab/lab/transfer.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

Record timing(const std::string& impl, bool gpu, double size, double ms, double upload = 0, double download = 0) {
  Record r;
  r.experiment = "matmul";
  r.impl = impl;
  r.dtype = "f32";
  r.gpu = gpu;
  r.size = size;
  r.sizes = {static_cast<std::int64_t>(size)};
  r.medianMs = r.minMs = r.maxMs = ms;
  r.reps = 1;
  r.uploadMs = upload;
  r.downloadMs = download;
  return r;
}

const Crossover* find(const std::vector<Crossover>& all, const std::string& gpuImpl, bool endToEnd) {
  for (const Crossover& c : all)
    if (c.gpuImpl == gpuImpl && c.endToEnd == endToEnd) return &c;
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Size lists

TEST(LabSizes, ParsesListsRangesSuffixesAndShapes) {
  EXPECT_EQ(parseSizeList("32,64, 100"), (std::vector<SizePoint>{{32}, {64}, {100}}));
  EXPECT_EQ(parseSizeList("32..256"), (std::vector<SizePoint>{{32}, {64}, {128}, {256}}));
  EXPECT_EQ(parseSizeList("100..300"), (std::vector<SizePoint>{{100}, {200}}));  // doubling stops below 300
  EXPECT_EQ(parseSizeList("7..7"), (std::vector<SizePoint>{{7}}));
  EXPECT_EQ(parseSizeList("4K,1M,2G"),
            (std::vector<SizePoint>{{4096}, {std::int64_t{1} << 20}, {std::int64_t{2} << 30}}));
  EXPECT_EQ(parseSizeList("33x100x7,1x1000"), (std::vector<SizePoint>{{33, 100, 7}, {1, 1000}}));
  EXPECT_EQ(parseSizeList("1Kx2"), (std::vector<SizePoint>{{1024, 2}}));
}

TEST(LabSizes, BadTokensNameThemselves) {
  EXPECT_NE(errorOf([] { parseSizeList("0"); }).find("'0' is zero"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("-5"); }).find("'-5' is negative"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("12,abc"); }).find("'abc' is not a whole number"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("1.5"); }).find("'1.5'"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("64..32"); }).find("runs backwards"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("1,,2"); }).find("empty entry"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList(""); }).find("empty"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("99999999999999999999"); }).find("too large"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("2000000G"); }).find("too large"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("1x2x3x4"); }).find("more than three"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSizeList("3x"); }).find("is empty"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Names

TEST(LabNames, RoundTripAndRejectUnknown) {
  EXPECT_EQ(parseEnumOrThrow<DType>("f32"), DType::F32);
  EXPECT_EQ(parseEnumOrThrow<DType>("float64"), DType::F64);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_THROW(parseEnumOrThrow<DType>("f16"), std::invalid_argument);
  for (Experiment e :
       {Experiment::Matmul, Experiment::Transpose, Experiment::Transfer, Experiment::Elementwise, Experiment::Reduce}) {
    EXPECT_EQ(parseEnumOrThrow<Experiment>(std::string(toString(e))), e);
    EXPECT_FALSE(implNames(e).empty());
    EXPECT_FALSE(defaultSizes(e).empty());
  }
  EXPECT_THROW(parseEnumOrThrow<Experiment>("fft"), std::invalid_argument);
  EXPECT_FALSE(isGpuImpl(Experiment::Matmul, "cpu_blas"));
  EXPECT_TRUE(isGpuImpl(Experiment::Matmul, "cublas"));
  EXPECT_TRUE(isGpuImpl(Experiment::Transfer, "pageable"));
  EXPECT_EQ(defaultSizes(Experiment::Matmul).front(), SizePoint{32});
  EXPECT_EQ(defaultSizes(Experiment::Matmul).back(), SizePoint{4096});
}

// ---------------------------------------------------------------------------------------------
// Records

TEST(LabRecord, EndToEndAndPercentOfCeiling) {
  Record r = timing("cublas", true, 1024, 2.0, 0.5, 0.25);
  EXPECT_DOUBLE_EQ(r.endToEndMs(), 2.75);
  r.withCopies = true;
  EXPECT_DOUBLE_EQ(r.endToEndMs(), 2.0);
  r.gflops = 40;
  r.ceiling = 50;
  EXPECT_DOUBLE_EQ(r.percentOfCeiling(), 80.0);
  r.ceiling = 0;
  EXPECT_DOUBLE_EQ(r.percentOfCeiling(), 0.0);
}

TEST(LabRecord, CsvRowHasAFieldPerHeaderColumnAndQuotesCommas) {
  Record r = timing("cpu_blas", false, 33, 1.5);
  r.sizes = {33, 100, 7};
  r.params = "threads=2, pinned";
  r.gflops = 12.5;
  const std::string header = csvHeader();
  const std::string row = toCsvRow(r);
  auto fields = [](const std::string& line) {
    int count = 1;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++count;
    }
    return count;
  };
  EXPECT_EQ(fields(header), fields(row)) << header << "\n" << row;
  EXPECT_NE(row.find("33x100x7"), std::string::npos) << row;
  EXPECT_NE(row.find("\"threads=2, pinned\""), std::string::npos) << row;
  EXPECT_EQ(header.rfind("op,", 0), 0u);
}

TEST(LabRecord, CsvCarriesTheCeilingHowAndTheNote) {
  Record r = timing("gpu", true, 1024, 0.01);
  r.experiment = "elementwise";
  r.gbps = 1200;
  r.ceiling = 3000;
  r.ceilingName = "DRAM copy";
  r.ceilingHow = "fastest of 20 copies, at the start";
  r.note = kInL2Note;
  r.device = "GPU 0 (Test GPU)";
  const std::string header = csvHeader();
  const std::string row = toCsvRow(r);
  EXPECT_NE(header.find(",ceiling_how,"), std::string::npos) << header;
  EXPECT_EQ(header.substr(header.size() - 12), ",note,device") << header;
  EXPECT_NE(row.find(",DRAM copy,\"fastest of 20 copies, at the start\","), std::string::npos) << row;
  EXPECT_EQ(row.substr(row.size() - 23), ",in L2,GPU 0 (Test GPU)") << row;
  EXPECT_NE(row.find(",40,"), std::string::npos) << row;  // 1200 of 3000 GB/s
}

// ---------------------------------------------------------------------------------------------
// The DRAM copy ceiling: buffer sizes and the L2 note (the measurement itself is a GPU test below)

TEST(LabCopyCeiling, BuffersAreFourTimesTheL2AndAtLeast64MiB) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  constexpr std::size_t GiB = std::size_t{1} << 30;
  EXPECT_EQ(copyCeilingBytes(50 * MiB, 140 * GiB), 200 * MiB);  // H100 / H200
  EXPECT_EQ(copyCeilingBytes(40 * MiB, 80 * GiB), 160 * MiB);   // A100
  EXPECT_EQ(copyCeilingBytes(6 * MiB, 24 * GiB), 64 * MiB);     // small L2: the 64 MiB floor
  EXPECT_EQ(copyCeilingBytes(0, 24 * GiB), 64 * MiB);
  // An L2 size that is not a whole number of MiB rounds up, never below 4x.
  EXPECT_EQ(copyCeilingBytes(50 * MiB + 3, 140 * GiB), 201 * MiB);
}

TEST(LabCopyCeiling, FreeMemoryCapsTheBuffers) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  // Both buffers within half of the free memory, whole MiB.
  EXPECT_EQ(copyCeilingBytes(50 * MiB, 600 * MiB), 150 * MiB);
  EXPECT_EQ(copyCeilingBytes(50 * MiB, 601 * MiB), 150 * MiB);
  EXPECT_EQ(copyCeilingBytes(50 * MiB, 800 * MiB), 200 * MiB);
  EXPECT_EQ(copyCeilingBytes(50 * MiB, 4 * MiB), 1 * MiB);
  try {
    copyCeilingBytes(50 * MiB, 4 * MiB - 1);
    FAIL() << "no error with less than 4 MiB free";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is free"), std::string::npos) << e.what();
  }
}

TEST(LabCopyCeiling, SaysHowItWasMeasured) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  CopyCeiling c;
  c.gbps = 3000;
  c.copies = 20;
  c.l2Bytes = 50 * MiB;
  c.bufferBytes = 200 * MiB;
  EXPECT_EQ(c.how(), "fastest of 20 device-to-device copies of 200.0 MiB (4x the 50.0 MiB L2 cache)");
  c.bufferBytes = 64 * MiB;
  c.l2Bytes = 6 * MiB;
  EXPECT_EQ(c.how(), "fastest of 20 device-to-device copies of 64.0 MiB (11x the 6.0 MiB L2 cache)");
  c.bufferBytes = 100 * MiB;
  c.l2Bytes = 50 * MiB;
  EXPECT_NE(c.how().find("only 2x the 50.0 MiB L2 cache"), std::string::npos) << c.how();
  c.l2Bytes = 0;
  EXPECT_NE(c.how().find("no L2"), std::string::npos) << c.how();
}

TEST(LabCopyCeiling, WorkingSetsUpToTheL2AreInL2) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  EXPECT_TRUE(fitsInL2(1, 50 * MiB));
  EXPECT_TRUE(fitsInL2(3 * 4 * MiB, 50 * MiB));  // 1M-element float elementwise: x, y, out
  EXPECT_TRUE(fitsInL2(50 * MiB, 50 * MiB));
  EXPECT_FALSE(fitsInL2(50 * MiB + 1, 50 * MiB));
  EXPECT_FALSE(fitsInL2(3 * 16 * MiB, 40 * MiB));
  EXPECT_FALSE(fitsInL2(1, 0));  // no L2 reported: nothing is noted
}

TEST(LabCopyCeiling, NeedsAGpu) {
  if (cudaAvailable()) GTEST_SKIP() << "this machine has a GPU";
  try {
    deviceCopyCeiling();
    FAIL() << "measured without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a CUDA device"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Crossovers

TEST(LabCrossover, FindsTheFirstSizeFromWhichTheGpuStaysFaster) {
  std::vector<Record> records;
  // CPU time grows as N^3; the GPU pays a 1 ms fixed cost and copies.
  for (double n : {32.0, 64.0, 128.0, 256.0, 512.0}) {
    records.push_back(timing("cpu_blas", false, n, std::pow(n / 128.0, 3)));
    records.push_back(timing("cublas", true, n, 0.5 + 0.01 * std::pow(n / 128.0, 3), 1.0, 1.0));
  }
  const std::vector<Crossover> all = findCrossovers(records);
  const Crossover* compute = find(all, "cublas", false);
  ASSERT_NE(compute, nullptr);
  // compute only: 0.5+ vs 0.125 at 64 (CPU wins), 0.51 vs 1 at 128 (GPU wins)
  EXPECT_EQ(compute->outcome, Crossover::Outcome::At);
  EXPECT_EQ(compute->firstWinningSize, 128);
  EXPECT_EQ(compute->lastLosingSize, 64);
  EXPECT_GT(compute->estimatedSize, 64);
  EXPECT_LT(compute->estimatedSize, 128);
  EXPECT_EQ(compute->cpuImpl, "cpu_blas");
  // with copies (+2 ms): 2.51 vs 1 at 128 loses, 2.58 vs 8 at 256 wins
  const Crossover* endToEnd = find(all, "cublas", true);
  ASSERT_NE(endToEnd, nullptr);
  EXPECT_EQ(endToEnd->outcome, Crossover::Outcome::At);
  EXPECT_EQ(endToEnd->firstWinningSize, 256);
  EXPECT_NE(compute->sentence().find("from size 128"), std::string::npos) << compute->sentence();
  EXPECT_NE(endToEnd->sentence().find("with copies"), std::string::npos) << endToEnd->sentence();
}

TEST(LabCrossover, AlwaysNeverAndALateLossCountsAsNotYetWon) {
  std::vector<Record> records;
  for (double n : {1.0, 2.0, 4.0}) {
    records.push_back(timing("cpu", false, n, 10));
    records.push_back(timing("fast", true, n, 1));
    records.push_back(timing("slow", true, n, 100));
  }
  // "wobbly" wins at 1 and 4 but loses at 2: the GPU stays faster only from 4 on.
  records.push_back(timing("wobbly", true, 1, 1));
  records.push_back(timing("wobbly", true, 2, 20));
  records.push_back(timing("wobbly", true, 4, 1));
  const std::vector<Crossover> all = findCrossovers(records);
  ASSERT_NE(find(all, "fast", false), nullptr);
  EXPECT_EQ(find(all, "fast", false)->outcome, Crossover::Outcome::Always);
  EXPECT_NE(find(all, "fast", false)->sentence().find("every size"), std::string::npos);
  EXPECT_EQ(find(all, "slow", false)->outcome, Crossover::Outcome::Never);
  EXPECT_EQ(find(all, "wobbly", false)->outcome, Crossover::Outcome::At);
  EXPECT_EQ(find(all, "wobbly", false)->firstWinningSize, 4);
}

TEST(LabCrossover, WithCopiesRecordsReplaceTheSumOfParts) {
  std::vector<Record> records;
  records.push_back(timing("cpu", false, 10, 5));
  records.push_back(timing("gpu", true, 10, 1, 1, 1));  // parts: 3 ms end to end
  Record whole = timing("gpu", true, 10, 7);            // measured whole: 7 ms
  whole.withCopies = true;
  records.push_back(whole);
  const std::vector<Crossover> all = findCrossovers(records);
  ASSERT_NE(find(all, "gpu", true), nullptr);
  EXPECT_EQ(find(all, "gpu", true)->outcome, Crossover::Outcome::Never);
  EXPECT_EQ(find(all, "gpu", false)->outcome, Crossover::Outcome::Always);
}

TEST(LabCrossover, GroupsByVariantAndTypeAndSkipsGroupsWithoutACpu) {
  std::vector<Record> records;
  Record cpu = timing("cpu", false, 8, 1);
  cpu.experiment = "reduce";
  cpu.variant = "sum";
  Record gpu = timing("gpu", true, 8, 2);
  gpu.experiment = "reduce";
  gpu.variant = "max";  // a different variant: no pair
  records.push_back(cpu);
  records.push_back(gpu);
  EXPECT_TRUE(findCrossovers(records).empty());
  gpu.variant = "sum";
  gpu.dtype = "f64";  // a different type: still no pair
  records.push_back(gpu);
  EXPECT_TRUE(findCrossovers(records).empty());
}

// ---------------------------------------------------------------------------------------------
// Requests

TEST(LabRequestValidation, BadRequestsThrowBeforeRunning) {
  LabRequest r;
  r.experiment = Experiment::Matmul;
  r.points = {{0}};
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.points = {{3, 4}};
  EXPECT_NE(errorOf([&] { validate(r); }).find("MxNxK"), std::string::npos);
  r.points = {{70000}};
  EXPECT_NE(errorOf([&] { validate(r); }).find("1 to 65536"), std::string::npos);
  r.points = {{8}};
  r.impls = {"cpu_blas", "gpu_magic"};
  EXPECT_NE(errorOf([&] { validate(r); }).find("'gpu_magic'"), std::string::npos);
  r.impls = {"cpu_blas"};
  r.reps = 0;
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.reps = 2;
  r.variants = {"sum"};
  EXPECT_THROW(validate(r), std::invalid_argument);  // matmul has no variants
  r.variants = {};
  EXPECT_NO_THROW(validate(r));

  r.experiment = Experiment::Reduce;
  r.impls = {"cpu"};
  r.points = {{10, 10}};
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.points = {{10}};
  r.variants = {"median"};
  EXPECT_NE(errorOf([&] { validate(r); }).find("'median'"), std::string::npos);
  r.variants = {"std"};
  EXPECT_NO_THROW(validate(r));

  r.experiment = Experiment::Transpose;
  r.impls = {"cpu"};
  r.variants = {};
  r.points = {{3, 0}};
  EXPECT_THROW(validate(r), std::invalid_argument);
  r.points = {{1, 2, 3}};
  EXPECT_THROW(validate(r), std::invalid_argument);
}

TEST(LabRequestValidation, TooLargeForMemoryIsARuntimeErrorWithSizes) {
  LabRequest r;
  r.experiment = Experiment::Elementwise;
  r.impls = {"cpu"};
  r.dtype = DType::F64;
  r.points = {{std::int64_t{1} << 36}};  // three arrays of 512 GiB
  EXPECT_EQ(memoryNeed(r).hostBytes, 3 * (std::size_t{1} << 39));
  try {
    validate(r);
    FAIL() << "no error for 1.5 TiB";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("1.5 TiB of host memory"), std::string::npos) << e.what();
  }
  r.experiment = Experiment::Matmul;
  r.impls = {"cpu_blas"};
  r.points = {{65536}};
  EXPECT_EQ(memoryNeed(r).hostBytes, 3 * std::size_t{65536} * 65536 * 8);
}

TEST(LabRequestValidation, GpuImplementationsNeedAGpu) {
  if (cudaAvailable()) GTEST_SKIP() << "this machine has a GPU";
  LabRequest r;
  r.experiment = Experiment::Matmul;
  r.points = {{8}};
  r.impls = {"cublas"};
  EXPECT_THROW(validate(r), std::runtime_error);
  r.impls = {};
  EXPECT_NO_THROW(validate(r));  // the CPU implementations alone
  r.experiment = Experiment::Transfer;
  try {
    validate(r);
    FAIL() << "transfer without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU only"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Sweeps on the CPU: records, progress, cancel

TEST(LabSweep, CpuSweepEmitsOneRecordPerPointAndReportsProgress) {
  LabRequest r;
  r.experiment = Experiment::Reduce;
  r.impls = {"cpu"};
  r.variants = {"sum", "max"};
  r.points = {{1}, {1000}, {100003}};
  r.reps = 2;
  r.warmup = 1;
  std::vector<double> progress;
  std::vector<Record> streamed;
  CpuControl control;
  control.progress = [&](double p) { progress.push_back(p); };
  const std::vector<Record> records = runLab(r, control, [&](const Record& rec) { streamed.push_back(rec); });
  ASSERT_EQ(records.size(), 6u);
  ASSERT_EQ(streamed.size(), 6u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& rec = records[i];
    EXPECT_EQ(rec.experiment, "reduce");
    EXPECT_EQ(rec.impl, "cpu");
    EXPECT_FALSE(rec.gpu);
    EXPECT_EQ(rec.reps, 2);
    EXPECT_GE(rec.maxMs, rec.medianMs);
    EXPECT_GE(rec.medianMs, rec.minMs);
    EXPECT_GT(rec.gbps, 0);
    EXPECT_EQ(rec.sizes.size(), 1u);
    EXPECT_EQ(rec.size, static_cast<double>(rec.sizes[0]));
    EXPECT_EQ(rec.impl, streamed[i].impl);
  }
  EXPECT_EQ(records[0].variant, "sum");
  EXPECT_EQ(records[1].variant, "max");
  ASSERT_FALSE(progress.empty());
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GE(progress[i], progress[i - 1]);
  EXPECT_DOUBLE_EQ(progress.back(), 1.0);
}

TEST(LabSweep, CancelStopsBetweenMeasurements) {
  LabRequest r;
  r.experiment = Experiment::Elementwise;
  r.impls = {"cpu"};
  r.points = {{100}, {200}, {400}, {800}};
  r.reps = 1;
  std::atomic<bool> cancel{false};
  int measured = 0;
  CpuControl control;
  control.cancel = &cancel;
  EXPECT_THROW(runLab(r, control,
                      [&](const Record&) {
                        if (++measured == 2) cancel = true;
                      }),
               OperationCancelled);
  EXPECT_EQ(measured, 2);
  cancel = true;
  measured = 0;
  EXPECT_THROW(runLab(r, control, [&](const Record&) { ++measured; }), OperationCancelled);
  EXPECT_EQ(measured, 0);
}

TEST(LabSweep, MatmulCpuSweepChecksAgainstFloat64) {
  LabRequest r;
  r.experiment = Experiment::Matmul;
  r.impls = {"cpu_blas"};
  r.points = {{7}, {33, 100, 7}};
  r.reps = 1;
  r.check = true;
  for (DType dtype : {DType::F32, DType::F64}) {
    r.dtype = dtype;
    const std::vector<Record> records = runLab(r);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[1].sizes, (std::vector<std::int64_t>{33, 100, 7}));
    EXPECT_NEAR(records[1].size, std::cbrt(33.0 * 100 * 7), 1e-9);
    for (const Record& rec : records) {
      EXPECT_GE(rec.relativeError, 0);
      EXPECT_LT(rec.relativeError, dtype == DType::F32 ? 1e-6 : 1e-14) << rec.impl;
      EXPECT_GT(rec.gflops, 0);
      EXPECT_NE(rec.params.find("threads="), std::string::npos);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Sweeps on the GPU: every experiment end to end, records well formed (numbers are not judged)

TEST(LabSweepGpu, EveryExperimentRunsWithCeilingsAndCopies) {
  GPULAB_REQUIRE_GPU();
  for (Experiment e :
       {Experiment::Matmul, Experiment::Transpose, Experiment::Transfer, Experiment::Elementwise, Experiment::Reduce}) {
    SCOPED_TRACE(std::string(toString(e)));
    LabRequest r;
    r.experiment = e;
    r.points =
        e == Experiment::Transfer ? std::vector<SizePoint>{{4096}, {1 << 20}} : std::vector<SizePoint>{{33}, {100}};
    r.reps = 2;
    r.warmup = 1;
    r.iterations = 3;
    r.withCopies = true;
    const std::vector<Record> records = runLab(r);
    ASSERT_FALSE(records.empty());
    std::set<std::string> impls;
    for (const Record& rec : records) {
      impls.insert(rec.impl);
      if (rec.note == kNeedsTwoGpusNote || rec.note == "no peer access") continue;  // p2p rows one GPU cannot measure
      EXPECT_GT(rec.medianMs, 0) << rec.impl;
      EXPECT_EQ(rec.reps, 2);
      if (!rec.gpu) continue;
      if (e == Experiment::Transfer) {
        if (rec.variant == "h2d" || rec.variant == "d2h") {  // pattern and p2p rows have no bus ceiling
          EXPECT_GT(rec.ceiling, 0) << rec.impl;
        }
        continue;
      }
      EXPECT_GT(rec.ceiling, 0) << rec.impl;
      EXPECT_FALSE(rec.ceilingName.empty());
      if (!rec.withCopies) {
        EXPECT_GT(rec.uploadMs, 0) << rec.impl;
        EXPECT_GT(rec.downloadMs, 0) << rec.impl;
      }
    }
    EXPECT_EQ(impls.size(), implNames(e).size());  // a GPU machine runs every implementation
    if (e != Experiment::Transfer) {
      EXPECT_FALSE(findCrossovers(records).empty());
    }
  }
}

TEST(LabSweepGpu, DramCeilingIsMeasuredOnceOnBuffersBeyondTheL2) {
  GPULAB_REQUIRE_GPU();
  int device = 0, l2 = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), cudaSuccess);
  const CopyCeiling first = deviceCopyCeiling();
  EXPECT_EQ(first.device, device);
  EXPECT_EQ(first.l2Bytes, static_cast<std::size_t>(l2));
  EXPECT_GE(first.bufferBytes, std::size_t{4} * static_cast<std::size_t>(l2)) << first.how();
  EXPECT_GE(first.bufferBytes, std::size_t{64} << 20);
  EXPECT_EQ(first.copies, 20);
  EXPECT_GT(first.gbps, 0);
  const CopyCeiling again = deviceCopyCeiling();  // cached: the same numbers, not a new measurement
  EXPECT_EQ(again.gbps, first.gbps);
  EXPECT_EQ(again.bufferBytes, first.bufferBytes);
  EXPECT_EQ(again.how(), first.how());
}

TEST(LabSweepGpu, MemoryBoundRecordsUseTheDramCeilingAndNoteWhatFitsInL2) {
  GPULAB_REQUIRE_GPU();
  const CopyCeiling ceiling = deviceCopyCeiling();
  const std::size_t l2 = ceiling.l2Bytes;
  ASSERT_GT(l2, 0u);
  auto expectCeiling = [&](const Record& r, std::size_t workingSet) {
    SCOPED_TRACE(r.experiment + " " + r.variant + " " + r.impl + " size " + std::to_string(r.size) +
                 (r.withCopies ? " with copies" : ""));
    EXPECT_EQ(r.ceiling, ceiling.gbps);
    EXPECT_EQ(r.ceilingName, "DRAM copy");
    EXPECT_EQ(r.ceilingHow, ceiling.how());
    EXPECT_EQ(r.note, !r.withCopies && workingSet <= l2 ? kInL2Note : "") << workingSet << " bytes, L2 " << l2;
  };

  // Elementwise, float: x, y and out, 12 bytes per element; the last two sizes straddle the L2.
  LabRequest e;
  e.experiment = Experiment::Elementwise;
  e.impls = {"gpu"};
  e.variants = {"a*x+y"};
  e.reps = 2;
  e.warmup = 1;
  e.withCopies = true;
  const std::int64_t edge = static_cast<std::int64_t>(l2 / 12);
  e.points = {{1024}, {edge}, {edge + 1}, {static_cast<std::int64_t>(l2)}};
  const std::vector<Record> elementwise = runLab(e);
  ASSERT_EQ(elementwise.size(), 8u);
  for (const Record& r : elementwise) {
    ASSERT_TRUE(r.gpu);
    expectCeiling(r, 12 * static_cast<std::size_t>(r.sizes[0]));
  }
  // 12x the L2 streams from DRAM: the kernel cannot be much faster than the DRAM copy.
  if (!test::underComputeSanitizer()) {
    EXPECT_LT(elementwise[6].gbps, 1.25 * ceiling.gbps) << elementwise[6].gbps << " GB/s against " << ceiling.how();
  }

  // Reduce, double: one array of 8 bytes per element.
  LabRequest r;
  r.experiment = Experiment::Reduce;
  r.dtype = DType::F64;
  r.impls = {"gpu"};
  r.variants = {"max"};
  r.reps = 2;
  r.warmup = 1;
  r.points = {{1}, {static_cast<std::int64_t>(l2 / 8)}, {static_cast<std::int64_t>(l2 / 8) + 1}};
  const std::vector<Record> reduce = runLab(r);
  ASSERT_EQ(reduce.size(), 3u);
  for (const Record& rec : reduce) expectCeiling(rec, 8 * static_cast<std::size_t>(rec.sizes[0]));

  // Transpose, float: input and output, 8 bytes per element.
  LabRequest t;
  t.experiment = Experiment::Transpose;
  t.impls = {"gpu_tiled_padded"};
  t.reps = 2;
  t.warmup = 1;
  const auto side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(l2) / 8))) + 1;
  t.points = {{33, 100}, {side}};
  const std::vector<Record> transpose = runLab(t);
  ASSERT_EQ(transpose.size(), 2u);
  for (const Record& rec : transpose)
    expectCeiling(rec, 8 * static_cast<std::size_t>(rec.sizes[0]) * static_cast<std::size_t>(rec.sizes[1]));
  EXPECT_EQ(transpose[0].note, kInL2Note);
  EXPECT_EQ(transpose[1].note, "");
}
