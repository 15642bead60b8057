// The Lab tab and its plots, offscreen: what the plots draw from records (series, ceilings with
// their values, the L2 band, crossover marks, one legend entry per implementation), a sweep run
// through the engine's worker into the table, CSV and PNG export, bad sizes, cancel keeping what
// was measured, GPU implementations greyed out without a GPU, runWhenReady, and the --lab-*
// command-line options.
#include <gtest/gtest.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QListWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <cmath>
#include <functional>

#include "lab/lab_plot.hpp"
#include "lab/lab_tab.hpp"
#include "shell/command_line.hpp"
#include "shell/engine.hpp"
#include "shell/photo_document.hpp"
#include "shell/tab_services.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"
#include "widgets/timings_panel.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() { return test_support::testApplication("test_lab_gui"); }

using test_support::waitUntil;

lab::Record record(const std::string& impl, bool gpu, double size, double ms) {
  lab::Record r;
  r.experiment = "matmul";
  r.impl = impl;
  r.dtype = "f32";
  r.gpu = gpu;
  r.size = size;
  r.sizes = {static_cast<std::int64_t>(size), static_cast<std::int64_t>(size), static_cast<std::int64_t>(size)};
  r.medianMs = r.minMs = r.maxMs = ms;
  r.reps = 1;
  r.gflops = 2 * size * size * size / (ms * 1e6);
  if (gpu) {
    r.uploadMs = 0.5;
    r.downloadMs = 0.25;
    r.ceiling = 1000;
    r.ceilingName = "cuBLAS";
  }
  return r;
}

/// A Lab tab with the services the main window would hand it.
struct Harness {
  Engine engine;
  PhotoDocument photo;
  TimingsPanel timings;
  QString lastError;
  TabServices services{engine, photo, timings, [](const QString&) {}, [this](const QString& m) { lastError = m; }};
  LabTab tab{services};
  bool finished = false;
  Harness() {
    QObject::connect(&tab, &LabTab::runFinished, [this] { finished = true; });
    tab.resize(1100, 800);
  }
  /// Waits until the worker has said whether there is a GPU, then sets up a sweep on the CPU alone.
  bool prepareCpuSweep(lab::Experiment experiment, const char* sizes, int reps) {
    if (!waitUntil([this] { return tab.deviceKnown(); })) return false;
    tab.setExperiment(experiment);
    tab.setSizesText(sizes);
    tab.setSelectedImpls({"cpu"});
    tab.setReps(reps);
    return true;
  }
  bool runAndWait(int timeoutMs = 120000) {
    finished = false;
    tab.run();
    return waitUntil([this] { return finished; }, timeoutMs);
  }
};

class LabGui : public ::testing::Test {
 protected:
  void SetUp() override { app(); }
};

}  // namespace

TEST_F(LabGui, PlotDrawsSeriesCeilingAndCrossover) {
  std::vector<lab::Record> records;
  for (double n : {32.0, 64.0, 128.0, 256.0}) {
    records.push_back(record("cpu_blas", false, n, n * n * n / 2e6));
    records.push_back(record("cublas", true, n, 0.02 + n * n * n / 2e9));
  }
  const std::vector<lab::Crossover> crossovers = lab::findCrossovers(records);
  LabPlot plot;
  plot.resize(640, 420);
  plot.setData(records, crossovers);
  EXPECT_TRUE(plot.variants().isEmpty());

  std::vector<LabPlot::Series> lines = plot.series();
  ASSERT_EQ(lines.size(), 3u);  // cpu_blas, cublas compute, cublas with copies
  EXPECT_EQ(lines[0].name, "cpu_blas");
  EXPECT_FALSE(lines[0].dashed);
  EXPECT_TRUE(lines[2].dashed);
  EXPECT_EQ(lines[1].points.size(), 4u);
  EXPECT_DOUBLE_EQ(lines[2].points[0].y(), 0.02 + 32.0 * 32 * 32 / 2e9 + 0.75);  // compute + upload + download
  ASSERT_FALSE(plot.markedCrossovers().empty());
  EXPECT_EQ(plot.markedCrossovers().front().gpuImpl, "cublas");

  plot.setMode(LabPlot::Mode::Rate);
  lines = plot.series();
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(lines.front().name.startsWith("cuBLAS"));  // the ceiling comes first, grey and dashed
  EXPECT_TRUE(lines.front().dashed);

  const QImage image = plot.grab().toImage();
  ASSERT_FALSE(image.isNull());
  const QRgb background = image.pixel(2, 2);
  int drawn = 0;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3) drawn += image.pixel(x, y) != background;
  EXPECT_GT(drawn, 200);
}

TEST_F(LabGui, PlotPicksOneVariantAtATime) {
  std::vector<lab::Record> records;
  for (const char* variant : {"sum", "max"})
    for (double n : {1024.0, 4096.0}) {
      lab::Record r = record("cpu", false, n, n / 1e6);
      r.experiment = "reduce";
      r.variant = variant;
      records.push_back(r);
    }
  LabPlot plot;
  plot.setData(records, {});
  EXPECT_EQ(plot.variants(), (QStringList{"sum", "max"}));
  EXPECT_EQ(plot.variant(), "sum");
  ASSERT_EQ(plot.series().size(), 1u);
  plot.setVariant("max");
  ASSERT_EQ(plot.series().size(), 1u);
  EXPECT_EQ(plot.series()[0].points.size(), 2u);
}

TEST_F(LabGui, CpuSweepFillsTableAndExports) {
  Harness h;
  ASSERT_TRUE(h.prepareCpuSweep(lab::Experiment::Reduce, "1K,4K", 1));
  ASSERT_TRUE(h.runAndWait());
  ASSERT_EQ(h.tab.records().size(), 10u) << h.tab.statusText().toStdString();  // 2 sizes x 5 reductions
  EXPECT_TRUE(h.tab.statusText().startsWith("Done")) << h.tab.statusText().toStdString();
  auto* table = h.tab.findChild<QTableWidget*>("labTable");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->rowCount(), 10);
  EXPECT_EQ(table->item(0, 1)->text(), "cpu");

  QTemporaryDir dir;
  const QString csv = dir.filePath("lab.csv"), png = dir.filePath("lab.png");
  QString error;
  ASSERT_TRUE(h.tab.exportCsv(csv, &error)) << error.toStdString();
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  EXPECT_EQ(lines.size(), 11);
  EXPECT_TRUE(lines[0].startsWith("op,variant,impl"));
  ASSERT_TRUE(h.tab.savePlot(png, &error)) << error.toStdString();
  EXPECT_FALSE(QImage(png).isNull());
  EXPECT_FALSE(h.tab.savePlot(dir.filePath("missing/dir/lab.png"), &error));
}

TEST_F(LabGui, BadSizesAreReportedWithoutRunning) {
  Harness h;
  h.tab.setExperiment(lab::Experiment::Matmul);
  h.tab.setSizesText("64,abc");
  h.tab.run();
  EXPECT_FALSE(h.tab.running());
  EXPECT_TRUE(h.finished);  // a refused request ends the run too: a screenshot waiting on it is not stuck
  EXPECT_TRUE(h.tab.lastRunFailed());
  EXPECT_TRUE(h.tab.statusText().contains("'abc'")) << h.tab.statusText().toStdString();
  h.finished = false;
  h.tab.setSizesText("64");
  h.tab.setSelectedImpls({});
  h.tab.run();
  EXPECT_FALSE(h.tab.running());
  EXPECT_TRUE(h.finished);
  EXPECT_TRUE(h.tab.lastRunFailed());
  EXPECT_TRUE(h.tab.statusText().contains("implementation")) << h.tab.statusText().toStdString();
}

TEST_F(LabGui, CancelKeepsWhatWasMeasured) {
  Harness h;
  ASSERT_TRUE(h.prepareCpuSweep(lab::Experiment::Elementwise,
                                "1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M,2M,4M,8M,16M,32M,64M", 20));
  bool cancelled = false;
  h.finished = false;
  h.tab.run();
  ASSERT_TRUE(h.tab.running());
  // Cancel once the first measurements are in.
  ASSERT_TRUE(waitUntil([&] { return !h.tab.records().empty() || h.finished; }));
  h.tab.cancel();
  ASSERT_TRUE(waitUntil([&] { return h.finished; }));
  cancelled = h.tab.statusText().startsWith("Cancelled");
  EXPECT_TRUE(cancelled) << h.tab.statusText().toStdString();
  EXPECT_FALSE(h.tab.records().empty());
  EXPECT_LT(h.tab.records().size(), 34u);
}

TEST_F(LabGui, GpuImplementationsFollowTheDevice) {
  Harness h;
  ASSERT_TRUE(waitUntil([&] { return h.tab.deviceKnown(); }));
  h.tab.setExperiment(lab::Experiment::Matmul);
  auto* impls = h.tab.findChild<QListWidget*>("labImpls");
  ASSERT_NE(impls, nullptr);
  ASSERT_EQ(impls->count(), 5);
  for (int i = 0; i < impls->count(); ++i) {
    const bool gpu = impls->item(i)->text() != "cpu_blas";
    EXPECT_EQ(bool(impls->item(i)->flags() & Qt::ItemIsEnabled), !gpu || cudaAvailable()) << i;
  }
  if (!cudaAvailable()) {
    EXPECT_EQ(h.tab.selectedImpls(), QStringList{"cpu_blas"});
    EXPECT_TRUE(h.tab.statusText().contains("CPU")) << h.tab.statusText().toStdString();
    return;
  }
  // On a GPU machine: a short sweep with every implementation states where the GPU wins.
  h.tab.setSizesText("16,256");
  h.tab.setReps(2);
  h.tab.setWithCopies(true);
  ASSERT_TRUE(h.runAndWait());
  EXPECT_EQ(h.tab.records().size(), 18u) << h.tab.statusText().toStdString();
  EXPECT_FALSE(h.tab.crossoverText().isEmpty());
  EXPECT_FALSE(h.tab.plot().series().empty());
}

TEST_F(LabGui, RatePlotShadesWhatFitsInL2AndNamesItsCeiling) {
  std::vector<lab::Record> records;
  for (double n : {1024.0, 4096.0, 16384.0, 65536.0}) {
    lab::Record cpu = record("cpu", false, n, n / 1e6);
    lab::Record gpu = record("gpu", true, n, 0.004);
    for (lab::Record* r : {&cpu, &gpu}) {
      r->experiment = "elementwise";
      r->variant = "a*x+y";
      r->gflops = 0;
      r->gbps = 12 * n / (r->medianMs * 1e6);
    }
    gpu.ceiling = 3000;
    gpu.ceilingName = "DRAM copy";
    if (n <= 4096) gpu.note = lab::kInL2Note;
    records.push_back(cpu);
    records.push_back(gpu);
  }
  LabPlot plot;
  plot.resize(640, 420);
  plot.setData(records, lab::findCrossovers(records));
  EXPECT_EQ(plot.inL2UpTo(), 0);  // time plot: no band
  EXPECT_EQ(plot.title(), "Time against size (log-log)");
  plot.setMode(LabPlot::Mode::Rate);
  EXPECT_DOUBLE_EQ(plot.inL2UpTo(), std::sqrt(4096.0 * 16384.0));  // between the last in L2 and the next size
  EXPECT_EQ(plot.title(), "GB/s against the DRAM copy ceiling (log-log)");
  const std::vector<LabPlot::Series> lines = plot.series();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].legend, "DRAM copy ceiling: 3000 GB/s");  // one value: shown
  EXPECT_EQ(lines[1].legend, "cpu");

  // Everything in L2: the band reaches the largest size.
  for (lab::Record& r : records)
    if (r.gpu) r.note = lab::kInL2Note;
  plot.setData(records, {});
  EXPECT_DOUBLE_EQ(plot.inL2UpTo(), 65536.0);
  for (lab::Record& r : records) r.note.clear();
  plot.setData(records, {});
  EXPECT_EQ(plot.inL2UpTo(), 0);
}

TEST_F(LabGui, LegendListsEachImplementationOnceAndCeilingsPerShape) {
  std::vector<lab::Record> records;
  for (double n : {32.0, 64.0}) {
    records.push_back(record("cpu_blas", false, n, n * n * n / 2e6));
    lab::Record gpu = record("cublas", true, n, 0.01);
    gpu.ceiling = n * 10;  // one cuBLAS ceiling per shape
    records.push_back(gpu);
    gpu.withCopies = true;
    gpu.medianMs = 0.8;
    records.push_back(gpu);
  }
  LabPlot plot;
  plot.setData(records, {});
  std::vector<LabPlot::Series> lines = plot.series();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].name, "cublas compute");
  EXPECT_EQ(lines[1].legend, "cublas");
  EXPECT_EQ(lines[2].name, "cublas with copies");
  EXPECT_TRUE(lines[2].legend.isEmpty());         // explained once by the "dashed: with copies" entry
  EXPECT_DOUBLE_EQ(lines[2].points[0].y(), 0.8);  // measured as a whole: not the sum of parts
  plot.setMode(LabPlot::Mode::Rate);
  lines = plot.series();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].legend, "cuBLAS ceiling");  // 320 and 640: no single value
}

TEST_F(LabGui, TabShowsTimeAndRateSideBySideAndSavesBoth) {
  Harness h;
  EXPECT_EQ(h.tab.plot().mode(), LabPlot::Mode::Time);
  EXPECT_EQ(h.tab.ratePlot().mode(), LabPlot::Mode::Rate);
  ASSERT_TRUE(h.prepareCpuSweep(lab::Experiment::Reduce, "1K,2K", 1));
  h.tab.setSelectedVariants({"sum", "max"});
  ASSERT_TRUE(h.runAndWait());
  EXPECT_FALSE(h.tab.lastRunFailed());
  EXPECT_EQ(h.tab.records().size(), 4u);
  EXPECT_EQ(h.tab.plot().variant(), "sum");
  h.tab.setPlotVariant("max");
  EXPECT_EQ(h.tab.plot().variant(), "max");
  EXPECT_EQ(h.tab.ratePlot().variant(), "max");
  h.tab.setPlotVariant("no such variant");
  EXPECT_EQ(h.tab.plot().variant(), "max");

  QTemporaryDir dir;
  QString error;
  const QString png = dir.filePath("plots.png");
  ASSERT_TRUE(h.tab.savePlot(png, &error)) << error.toStdString();
  const QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_GE(image.width(), h.tab.plot().width() + h.tab.ratePlot().width());
}

TEST_F(LabGui, RunWhenReadyWaitsForTheDeviceAndFailuresAreKept) {
  Harness h;
  h.tab.setExperiment(lab::Experiment::Elementwise);
  h.tab.setSizesText("1K");
  h.tab.setReps(1);
  h.tab.setSelectedVariants({"a*x+y"});
  h.finished = false;
  h.tab.runWhenReady();  // the device may not be known yet: GPU items still checked
  ASSERT_TRUE(waitUntil([&] { return h.finished; }));
  EXPECT_TRUE(h.tab.deviceKnown());
  EXPECT_FALSE(h.tab.lastRunFailed()) << h.tab.statusText().toStdString();
  EXPECT_EQ(h.tab.records().size(), cudaAvailable() ? 2u : 1u);

  // A request the engine refuses fails on the worker: the failure is kept and said.
  h.tab.setSizesText("3x4");
  ASSERT_TRUE(h.runAndWait());
  EXPECT_TRUE(h.tab.lastRunFailed());
  EXPECT_TRUE(h.tab.statusText().contains("single numbers")) << h.tab.statusText().toStdString();
  h.tab.setSizesText("2K");
  ASSERT_TRUE(h.runAndWait());
  EXPECT_FALSE(h.tab.lastRunFailed()) << h.tab.statusText().toStdString();
}

// ---------------------------------------------------------------------------------------------
// --lab-* on the command line

namespace {
CommandLine parse(QStringList args) {
  args.prepend(QStringLiteral("gpulab"));
  return parseCommandLine(args);
}
}  // namespace

TEST_F(LabGui, CommandLineLabOptions) {
  const CommandLine ok =
      parse({"--screenshot", "out.png", "--lab-experiment", "reduce", "--lab-sizes", "1K..64M", "--lab-dtype", "f64",
             "--lab-impls", "cpu, gpu", "--lab-ops", "std,sum", "--lab-reps", "5", "--lab-with-copies", "--lab-run"});
  ASSERT_TRUE(ok.error.isEmpty()) << ok.error.toStdString();
  EXPECT_TRUE(ok.lab.given);
  EXPECT_EQ(ok.lab.experiment, "reduce");
  EXPECT_EQ(ok.lab.sizes, "1K..64M");
  EXPECT_EQ(ok.lab.dtype, "f64");
  EXPECT_EQ(ok.lab.impls, (QStringList{"cpu", "gpu"}));
  EXPECT_EQ(ok.lab.ops, (QStringList{"std", "sum"}));
  EXPECT_EQ(ok.lab.reps, 5);
  EXPECT_TRUE(ok.lab.withCopies);
  EXPECT_TRUE(ok.lab.run);

  const CommandLine plain = parse({"--screenshot", "out.png", "--tab", "Photo"});
  EXPECT_TRUE(plain.error.isEmpty());
  EXPECT_FALSE(plain.lab.given);
  EXPECT_TRUE(parse({"--lab-run"}).lab.given);  // the default experiment, matmul
  EXPECT_TRUE(parse({"--tab", "lab", "--lab-run"}).error.isEmpty());

  auto error = [](const QStringList& args) { return parse(args).error.toStdString(); };
  EXPECT_NE(error({"--lab-experiment", "fft"}).find("unknown experiment 'fft'"), std::string::npos);
  EXPECT_NE(error({"--lab-sizes", "64,abc"}).find("'abc'"), std::string::npos);
  EXPECT_NE(error({"--lab-dtype", "f16"}).find("'f16'"), std::string::npos);
  EXPECT_TRUE(parse({"--lab-impls", "cublas"}).error.isEmpty());
  EXPECT_NE(error({"--lab-experiment", "reduce", "--lab-impls", "cublas"})
                .find("unknown implementation 'cublas' for reduce: choose from cpu, gpu"),
            std::string::npos);
  EXPECT_NE(error({"--lab-experiment", "reduce", "--lab-ops", "median"}).find("unknown variant 'median'"),
            std::string::npos);
  EXPECT_NE(error({"--lab-ops", "sum"}).find("matmul has no variants"), std::string::npos);
  EXPECT_NE(error({"--lab-impls", ","}).find("at least one"), std::string::npos);
  EXPECT_NE(error({"--lab-reps", "0"}).find("1 to 1000"), std::string::npos);
  EXPECT_NE(error({"--lab-reps", "x"}).find("1 to 1000"), std::string::npos);
  EXPECT_NE(error({"--tab", "Photo", "--lab-run"}).find("go with the Lab tab"), std::string::npos);
}
