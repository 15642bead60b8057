// The Course tab offscreen: each study run through the engine's worker into its table (every row
// naming its device), the tensor-core plot on a GPU ("GPU only" without one), CSV export, bad sizes;
// and the Device panel's pickers: the CPU threads applied to the engine, a GPU index that does not
// exist refused with the engine's sentence. With GPULAB_SHOT_DIR set, the tab is saved as PNGs there.
#include <gtest/gtest.h>

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTableWidget>
#include <QTemporaryDir>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "lab/course_tab.hpp"
#include "shell/engine.hpp"
#include "shell/photo_document.hpp"
#include "shell/tab_services.hpp"
#include "support/gui_test_support.hpp"
#include "widgets/device_panel.hpp"
#include "widgets/timings_panel.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() { return test_support::testApplication("test_course_gui"); }
using test_support::waitUntil;

struct Harness {
  Engine engine;
  PhotoDocument photo;
  TimingsPanel timings;
  TabServices services{engine, photo, timings, [](const QString&) {}, [](const QString&) {}};
  CourseTab tab{services};
  bool finished = false;
  Harness() {
    QObject::connect(&tab, &CourseTab::runFinished, [this] { finished = true; });
    tab.resize(1400, 900);
  }
  bool runStudy(CourseTab::Study study, const QString& sizes, int reps) {
    tab.setStudy(study);
    tab.setSizesText(sizes);
    tab.setReps(reps);
    finished = false;
    tab.run();
    return waitUntil([this] { return finished; }, 240000);
  }
  void shot(const char* name) {
    const QString dir = qEnvironmentVariable("GPULAB_SHOT_DIR");
    if (dir.isEmpty()) return;
    tab.show();
    QApplication::processEvents();
    EXPECT_TRUE(tab.grab().save(QDir(dir).filePath(QString::fromLatin1(name)))) << name;
  }
};

bool gpu() { return cudaAvailable(); }

int column(const CourseResult& r, const char* name) {
  return static_cast<int>(r.headers.indexOf(QString::fromLatin1(name)));
}

}  // namespace

TEST(CourseGui, MatmulTableRowsNameTheirDevice) {
  app();
  Harness h;
  ASSERT_TRUE(h.runStudy(CourseTab::Study::MatmulTable, QStringLiteral("7,64"), 1)) << h.tab.statusText().toStdString();
  ASSERT_FALSE(h.tab.lastRunFailed()) << h.tab.statusText().toStdString();
  const CourseResult& r = h.tab.result();
  ASSERT_EQ(r.rows.size(), gpu() ? 16u : 4u);
  const int device = column(r, "device");
  const int allclose = column(r, "allclose");
  ASSERT_GE(device, 0);
  for (const QStringList& row : r.rows) {
    EXPECT_TRUE(row[device].startsWith(QStringLiteral("GPU ")) || row[device].startsWith(QStringLiteral("CPU (")))
        << row.join(QLatin1Char('|')).toStdString();
    EXPECT_NE(row[allclose], QStringLiteral("False")) << row.join(QLatin1Char('|')).toStdString();
  }
  auto* table = h.tab.findChild<QTableWidget*>(QStringLiteral("courseTable"));
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->rowCount(), static_cast<int>(r.rows.size()));
  QTemporaryDir dir;
  const QString csv = dir.filePath(QStringLiteral("t.csv"));
  ASSERT_TRUE(h.tab.exportCsv(csv));
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  EXPECT_EQ(lines.size(), static_cast<qsizetype>(r.rows.size() + 1));
  EXPECT_TRUE(lines.front().startsWith("N,type,impl,device,")) << lines.front().toStdString();
  h.shot("course-matmul-table.png");
}

TEST(CourseGui, LinspaceAndAxisStudies) {
  app();
  Harness h;
  ASSERT_TRUE(h.runStudy(CourseTab::Study::Linspace, QStringLiteral("100003"), 1));
  ASSERT_FALSE(h.tab.lastRunFailed()) << h.tab.statusText().toStdString();
  EXPECT_EQ(h.tab.result().rows.size(), gpu() ? 18u : 10u);  // 5 or 3 sums and 4 or 2 expressions per type
  EXPECT_TRUE(h.tab.result().note.contains(QStringLiteral("mean = 3 + 1/3 + 1/(6(N-1))")));
  h.shot("course-linspace.png");
  ASSERT_TRUE(h.runStudy(CourseTab::Study::Axis, QStringLiteral("13x17"), 1));
  ASSERT_FALSE(h.tab.lastRunFailed()) << h.tab.statusText().toStdString();
  const CourseResult& r = h.tab.result();
  EXPECT_EQ(r.rows.size(), gpu() ? 16u : 8u);
  for (const QStringList& row : r.rows) EXPECT_EQ(row.back(), QStringLiteral("ok"));
}

TEST(CourseGui, TensorCoresPlotOrWhyNot) {
  app();
  Harness h;
  ASSERT_TRUE(h.runStudy(CourseTab::Study::TensorCores, QStringLiteral("1024,2048"), 3));
  if (!gpu()) {
    EXPECT_TRUE(h.tab.lastRunFailed());
    EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("GPU only"))) << h.tab.statusText().toStdString();
    return;
  }
  ASSERT_FALSE(h.tab.lastRunFailed()) << h.tab.statusText().toStdString();
  EXPECT_EQ(h.tab.precisionPlot().points().size(), 10u);
  for (const PrecisionPoint& p : h.tab.precisionPlot().points()) EXPECT_GT(p.tflops, 0);
  h.shot("course-tensor-cores.png");
}

TEST(CourseGui, BadSizesAreRefusedAtOnce) {
  app();
  Harness h;
  h.tab.setStudy(CourseTab::Study::MatmulTable);
  h.tab.setSizesText(QStringLiteral("12,abc"));
  h.tab.run();
  EXPECT_TRUE(h.finished);
  EXPECT_TRUE(h.tab.lastRunFailed());
  EXPECT_FALSE(h.tab.statusText().isEmpty());
}

TEST(DevicePickerGui, ThreadsAndDevices) {
  app();
  Engine engine;
  DevicePanel panel(engine);
  ASSERT_TRUE(waitUntil([&] { return panel.valid(); }));
  auto* threads = panel.findChild<QComboBox*>(QStringLiteral("cpuThreadsPicker"));
  auto* devices = panel.findChild<QComboBox*>(QStringLiteral("devicePicker"));
  ASSERT_NE(threads, nullptr);
  ASSERT_NE(devices, nullptr);
  EXPECT_EQ(threads->itemData(0).toInt(), 0);  // all cores first
  EXPECT_EQ(devices->count(), static_cast<int>(queryDevices().devices.size()));

  bool refreshed = false;
  QObject::connect(&panel, &DevicePanel::refreshed, [&] { refreshed = true; });
  panel.setCpuThreads(1);
  ASSERT_TRUE(waitUntil([&] { return refreshed && panel.snapshot().cpuThreads == 1; }));
  EXPECT_EQ(cpuThreadSetting(), 1);
  EXPECT_EQ(threads->currentData().toInt(), 1);
  refreshed = false;
  panel.setCpuThreads(0);
  ASSERT_TRUE(waitUntil([&] { return refreshed && panel.snapshot().cpuThreads == cpuCores(); }));

  // An index that does not exist: the engine's sentence, and the device in use stays.
  panel.selectDevice(99);
  auto* detail = panel.findChild<QLabel*>(QStringLiteral("deviceDetail"));
  ASSERT_NE(detail, nullptr);
  ASSERT_TRUE(waitUntil([&] { return detail->text().contains(QStringLiteral("there is no GPU 99")); }))
      << detail->text().toStdString();
  EXPECT_EQ(selectedDevice(), 0);
  if (gpu()) {
    refreshed = false;
    panel.selectDevice(0);
    ASSERT_TRUE(waitUntil([&] { return refreshed; }));
    EXPECT_EQ(panel.snapshot().selectedDevice, 0);
    EXPECT_TRUE(panel.snapshot().gpu);
  }
}

TEST(CourseGui, PrecisionPlotDrawsEveryPoint) {
  app();
  PrecisionPlot plot;
  plot.resize(640, 420);
  // Drawing test data (not measurements): a reference at error 0, and four more precisions.
  plot.setPoints({{"f64", 4096, 50, 0},
                  {"f32", 4096, 45, 8e-7},
                  {"tf32", 4096, 300, 3e-4},
                  {"bf16", 4096, 550, 2e-3},
                  {"f16", 4096, 560, 3e-4}},
                 QStringLiteral("GPU 0 (Test GPU)"));
  const QImage image = plot.grab().toImage();
  ASSERT_FALSE(image.isNull());
  // Every point's colour appears somewhere (the discs are filled for the largest N).
  for (QRgb colour :
       {qRgb(31, 119, 180), qRgb(44, 160, 44), qRgb(255, 127, 14), qRgb(214, 39, 40), qRgb(148, 103, 189)}) {
    bool found = false;
    for (int y = 0; y < image.height() && !found; ++y)
      for (int x = 0; x < image.width() && !found; ++x) found = image.pixel(x, y) == colour;
    EXPECT_TRUE(found) << std::hex << colour;
  }
  const QString dir = qEnvironmentVariable("GPULAB_SHOT_DIR");
  if (!dir.isEmpty()) image.save(QDir(dir).filePath(QStringLiteral("course-precision-plot-test-data.png")));
}
