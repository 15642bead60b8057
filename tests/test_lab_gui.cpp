// The Lab tab and its plot, offscreen: what the plot draws from records (series, ceilings,
// crossover marks), a sweep run through the engine's worker into the table, CSV and PNG export,
// bad sizes, cancel keeping what was measured, and GPU implementations greyed out without a GPU.
#include <gtest/gtest.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QListWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <functional>

#include "engine.hpp"
#include "gpu_test.hpp"
#include "lab_plot.hpp"
#include "lab_tab.hpp"
#include "photo_document.hpp"
#include "tab_services.hpp"
#include "timings_panel.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() {
  static QApplication* instance = [] {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "test_lab_gui";
    static char* argv[] = {name, nullptr};
    return new QApplication(argc, argv);
  }();
  return *instance;
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs = 60000) {
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > timeoutMs) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    QThread::msleep(1);
  }
  return true;
}

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
  ASSERT_TRUE(waitUntil([&] { return h.tab.deviceKnown(); }));
  h.tab.setExperiment(lab::Experiment::Reduce);
  h.tab.setSizesText("1K,4K");
  h.tab.setSelectedImpls({"cpu"});
  h.tab.setReps(1);
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
  EXPECT_TRUE(h.tab.statusText().contains("'abc'")) << h.tab.statusText().toStdString();
  h.tab.setSizesText("64");
  h.tab.setSelectedImpls({});
  h.tab.run();
  EXPECT_FALSE(h.tab.running());
  EXPECT_TRUE(h.tab.statusText().contains("implementation")) << h.tab.statusText().toStdString();
}

TEST_F(LabGui, CancelKeepsWhatWasMeasured) {
  Harness h;
  ASSERT_TRUE(waitUntil([&] { return h.tab.deviceKnown(); }));
  h.tab.setExperiment(lab::Experiment::Elementwise);
  h.tab.setSizesText("1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M,2M,4M,8M,16M,32M,64M");
  h.tab.setSelectedImpls({"cpu"});
  h.tab.setReps(20);
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
