// The desktop app, offscreen: the image converter, the worker's job contract, the Timings panel
// and its CSV, the image view's zoom, the command line, the main window (bundled photo, bad files,
// recent files, drag and drop, saving) and `gpulab --screenshot` as a subprocess.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QSet>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QThread>
#include <QUrl>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "shell/command_line.hpp"
#include "shell/engine.hpp"
#include "shell/main_window.hpp"
#include "shell/resource_paths.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"
#include "widgets/device_panel.hpp"
#include "widgets/image_convert.hpp"
#include "widgets/image_view.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/timing_bars.hpp"
#include "widgets/timing_history.hpp"
#include "widgets/timings_panel.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() { return test_support::testApplication("test_gui"); }

bool waitUntil(const std::function<bool()>& done, int timeoutMs = 15000) {
  app();
  return test_support::waitUntil(done, timeoutMs);
}

class GuiTest : public ::testing::Test {
 protected:
  void SetUp() override { app(); }
};

QString sourcePath(const char* relative) { return QStringLiteral(GPULAB_SOURCE_DIR "/") + QString::fromUtf8(relative); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// gpulab::Image -> QImage

TEST(ImageConvert, GrayKeepsValuesOnOddWidths) {
  Image img(5, 3, 1, PixelType::U8);  // 5 bytes a row: QImage pads rows to 8
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) img.at<std::uint8_t>(x, y) = static_cast<std::uint8_t>(17 * x + 61 * y);
  DisplayRange range;
  const QImage q = toQImage(img, &range);
  ASSERT_EQ(q.format(), QImage::Format_Grayscale8);
  ASSERT_EQ(q.size(), QSize(5, 3));
  EXPECT_FALSE(range.normalised);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(q.constScanLine(y)[x], 17 * x + 61 * y) << "x=" << x << " y=" << y;
}

TEST(ImageConvert, RgbAndRgbaPixelsMatch) {
  const Image rgb = test::randomImage(7, 4, 3, PixelType::U8, 11);
  const QImage q = toQImage(rgb);
  ASSERT_EQ(q.format(), QImage::Format_RGB888);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 7; ++x)
      ASSERT_EQ(q.pixel(x, y),
                qRgb(rgb.at<std::uint8_t>(x, y, 0), rgb.at<std::uint8_t>(x, y, 1), rgb.at<std::uint8_t>(x, y, 2)))
          << "x=" << x << " y=" << y;

  const Image rgba = test::randomImage(3, 5, 4, PixelType::U8, 12);
  const QImage qa = toQImage(rgba);
  ASSERT_EQ(qa.format(), QImage::Format_RGBA8888);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 4; ++c)  // straight alpha, bytes as stored
        ASSERT_EQ(qa.constScanLine(y)[4 * x + c], rgba.at<std::uint8_t>(x, y, c)) << x << "," << y << "," << c;
}

TEST(ImageConvert, GrayAlphaBecomesRgba) {
  Image img(2, 1, 2, PixelType::U8);
  img.at<std::uint8_t>(0, 0, 0) = 200;
  img.at<std::uint8_t>(0, 0, 1) = 10;
  img.at<std::uint8_t>(1, 0, 0) = 30;
  img.at<std::uint8_t>(1, 0, 1) = 255;
  const QImage q = toQImage(img);
  ASSERT_EQ(q.format(), QImage::Format_RGBA8888);
  EXPECT_EQ(q.pixelColor(0, 0), QColor(200, 200, 200, 10));
  EXPECT_EQ(q.pixelColor(1, 0), QColor(30, 30, 30, 255));
}

TEST(ImageConvert, FloatIsNormalisedFromMinToMax) {
  Image img(4, 1, 1, PixelType::F32);
  const float values[] = {-1.f, 0.f, 3.f, 1.f};
  for (int x = 0; x < 4; ++x) img.at<float>(x, 0) = values[x];
  DisplayRange range;
  const QImage q = toQImage(img, &range);
  ASSERT_EQ(q.format(), QImage::Format_Grayscale8);
  EXPECT_TRUE(range.normalised);
  EXPECT_DOUBLE_EQ(range.min, -1.0);
  EXPECT_DOUBLE_EQ(range.max, 3.0);
  EXPECT_EQ(q.constScanLine(0)[0], 0);
  EXPECT_EQ(q.constScanLine(0)[1], 64);  // 1/4 of 255 = 63.75
  EXPECT_EQ(q.constScanLine(0)[2], 255);
  EXPECT_EQ(q.constScanLine(0)[3], 128);  // 2/4 of 255 = 127.5, rounded half away from zero
  EXPECT_EQ(describeRange(img, range), QStringLiteral("f32 shown normalised from -1 to 3"));
}

TEST(ImageConvert, FloatRangeSkipsNanInfinityAndAlpha) {
  Image img(3, 1, 4, PixelType::F64);  // RGBA f64: one range over R, G and B together
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double samples[3][4] = {{10, 20, 30, 1000}, {nan, inf, 50, -7}, {10, 10, 10, 0.5}};
  for (int x = 0; x < 3; ++x)
    for (int c = 0; c < 4; ++c) img.at<double>(x, 0, c) = samples[x][c];
  DisplayRange range;
  const QImage q = toQImage(img, &range);
  ASSERT_EQ(q.format(), QImage::Format_RGBA8888);
  EXPECT_DOUBLE_EQ(range.min, 10.0);
  EXPECT_DOUBLE_EQ(range.max, 50.0);
  EXPECT_EQ(q.pixelColor(0, 0), QColor(0, 64, 128, 255));  // (v-10)/40*255; alpha not shown
  EXPECT_EQ(q.pixelColor(1, 0), QColor(0, 0, 255, 255));   // NaN and inf shown as 0
  EXPECT_EQ(q.pixelColor(2, 0), QColor(0, 0, 0, 255));
}

TEST(ImageConvert, ConstantFloatAndEmptyImages) {
  Image img(3, 2, 3, PixelType::F32);
  for (float& v : img.samples<float>()) v = 2.5f;
  DisplayRange range;
  const QImage q = toQImage(img, &range);
  EXPECT_DOUBLE_EQ(range.min, 2.5);
  EXPECT_DOUBLE_EQ(range.max, 2.5);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) EXPECT_EQ(q.pixel(x, y), qRgb(0, 0, 0));
  EXPECT_TRUE(toQImage(Image{}).isNull());
}

// ---------------------------------------------------------------------------------------------
// The worker: exactly one outcome per job, on the GUI thread.

TEST_F(GuiTest, JobRunsOnTheWorkerAndDeliversOnTheGuiThread) {
  Engine engine;
  QThread* workerThread = nullptr;
  QThread* doneThread = nullptr;
  int result = 0;
  engine.submit(
      nullptr,
      [&](WorkerContext&) {
        workerThread = QThread::currentThread();
        return 42;
      },
      [&](int r) {
        doneThread = QThread::currentThread();
        result = r;
      });
  ASSERT_TRUE(waitUntil([&] { return result != 0; }));
  EXPECT_EQ(result, 42);
  EXPECT_NE(workerThread, QCoreApplication::instance()->thread());
  EXPECT_EQ(doneThread, QCoreApplication::instance()->thread());
  EXPECT_EQ(engine.pendingJobs(), 0);
}

TEST_F(GuiTest, JobExceptionBecomesFailedWithItsMessage) {
  Engine engine;
  QString failed;
  bool done = false;
  engine.submit(
      nullptr, [](WorkerContext&) -> int { throw std::invalid_argument("radius -3 is negative; use 0 or more"); },
      [&](int) { done = true; }, {.failed = [&](const QString& why) { failed = why; }});
  ASSERT_TRUE(waitUntil([&] { return !failed.isEmpty(); }));
  EXPECT_EQ(failed, QStringLiteral("radius -3 is negative; use 0 or more"));
  EXPECT_FALSE(done);

  // Without a handler, the engine's jobFailed signal carries it.
  QString signalled;
  QObject::connect(&engine, &Engine::jobFailed, [&](const QString& why) { signalled = why; });
  engine.submit(
      nullptr, [](WorkerContext& ctx) { (void)ctx.photo(); }, [] {});
  ASSERT_TRUE(waitUntil([&] { return !signalled.isEmpty(); }));
  EXPECT_EQ(signalled, QStringLiteral("there is no photo: open one first"));
}

TEST_F(GuiTest, CancelBeforeDeliveryMeansNoDone) {
  Engine engine;
  bool done = false, cancelled = false;
  JobHandle job = engine.submit(
      nullptr, [](WorkerContext&) { return 1; }, [&](int) { done = true; }, {.cancelled = [&] { cancelled = true; }});
  job.cancel();  // on the GUI thread, before any event was processed
  ASSERT_TRUE(waitUntil([&] { return job.finished(); }));
  EXPECT_TRUE(cancelled);
  EXPECT_FALSE(done);
}

TEST_F(GuiTest, CoalescedJobsLatestWins) {
  Engine engine;
  // The first job keeps the worker until all three are queued (`release`), so that the second is
  // still waiting when the third supersedes it, however the threads are scheduled (under TSan, on a
  // loaded machine, the worker could otherwise start the second before the third arrives).
  std::atomic<bool> firstStarted{false}, secondRan{false}, release{false};
  std::vector<QString> outcomes;
  auto record = [&](QString name) {
    return JobOptions{.coalesceKey = QStringLiteral("frame"),
                      .failed = [&outcomes, name](const QString&) { outcomes.push_back(name + " failed"); },
                      .cancelled = [&outcomes, name] { outcomes.push_back(name + " cancelled"); }};
  };
  engine.submit(
      nullptr,
      [&](WorkerContext& ctx) {
        firstStarted = true;
        while (!ctx.cancelled() || !release) QThread::msleep(1);  // a long frame, stopped by the next request
        ctx.throwIfCancelled();
      },
      [&] { outcomes.push_back(QStringLiteral("first done")); }, record(QStringLiteral("first")));
  ASSERT_TRUE(waitUntil([&] { return firstStarted.load(); }));
  engine.submit(
      nullptr, [&](WorkerContext&) { secondRan = true; }, [&] { outcomes.push_back(QStringLiteral("second done")); },
      record(QStringLiteral("second")));
  engine.submit(
      nullptr, [](WorkerContext&) {}, [&] { outcomes.push_back(QStringLiteral("third done")); },
      record(QStringLiteral("third")));
  release = true;
  ASSERT_TRUE(waitUntil([&] { return engine.pendingJobs() == 0; }));
  EXPECT_EQ(outcomes, (std::vector<QString>{QStringLiteral("first cancelled"), QStringLiteral("second cancelled"),
                                            QStringLiteral("third done")}));
  EXPECT_FALSE(secondRan) << "a job cancelled while queued must not run";
}

TEST_F(GuiTest, ProgressArrivesInOrderBeforeDone) {
  Engine engine;
  std::vector<double> progress;
  bool done = false;
  engine.submit(
      nullptr,
      [](WorkerContext& ctx) {
        for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
          ctx.reportProgress(f);
          QThread::msleep(60);  // longer than the 50 ms throttle: every step gets through
        }
      },
      [&] { done = true; }, {.progress = [&](double f) { progress.push_back(done ? -1 : f); }});
  ASSERT_TRUE(waitUntil([&] { return done; }));
  EXPECT_EQ(progress, (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
}

TEST_F(GuiTest, DestroyedReceiverGetsNoCallback) {
  Engine engine;
  auto* receiver = new QObject;
  bool called = false;
  std::atomic<bool> release{false};
  engine.submit(
      receiver,
      [&](WorkerContext&) {
        while (!release) QThread::msleep(1);
      },
      [&] { called = true; }, {.failed = [&](const QString&) { called = true; }});
  delete receiver;
  release = true;
  ASSERT_TRUE(waitUntil([&] { return engine.pendingJobs() == 0; }));
  EXPECT_FALSE(called);
}

TEST_F(GuiTest, EngineShutsDownWhileAJobRuns) {
  std::atomic<bool> started{false}, sawCancel{false};
  {
    Engine engine;
    engine.submit(
        nullptr,
        [&](WorkerContext& ctx) {
          started = true;
          while (!ctx.cancelled()) QThread::msleep(1);
          sawCancel = true;
        },
        [] {});
    ASSERT_TRUE(waitUntil([&] { return started.load(); }));
  }  // ~Engine asks the running job to stop and waits for it
  EXPECT_TRUE(sawCancel);
}

TEST_F(GuiTest, SetPhotoPublishesBeforeDone) {
  Engine engine;
  std::vector<QString> order;
  PhotoUpdate seen;
  QObject::connect(&engine, &Engine::photoChanged, [&](const PhotoUpdate& u) {
    seen = u;
    order.push_back(QStringLiteral("photo"));
  });
  engine.submit(
      nullptr, [](WorkerContext& ctx) { ctx.setPhoto(test::randomImage(9, 5, 3, PixelType::U8, 3), "random"); },
      [&] { order.push_back(QStringLiteral("done")); });
  ASSERT_TRUE(waitUntil([&] { return order.size() == 2; }));
  EXPECT_EQ(order, (std::vector<QString>{QStringLiteral("photo"), QStringLiteral("done")}));
  EXPECT_EQ(seen.generation, 1u);
  EXPECT_EQ(seen.description, QStringLiteral("9x5 RGB u8"));
  EXPECT_EQ(seen.display.size(), QSize(9, 5));
  EXPECT_EQ(seen.hostBytes, 9 * 5 * 3);
  EXPECT_EQ(seen.onGpu, cudaAvailable());
  EXPECT_EQ(seen.upload.has_value(), cudaAvailable());
  EXPECT_EQ(seen.uploadMs().has_value(), cudaAvailable());
}

TEST_F(GuiTest, ResidentPhotoMatchesTheHostCopy) {
  GPULAB_REQUIRE_GPU();
  Engine engine;
  bool equal = false, finished = false;
  QString error;
  engine.submit(
      nullptr,
      [](WorkerContext& ctx) {
        for (int channels : {1, 3, 4}) {
          ctx.setPhoto(test::randomImage(257, 131, channels, PixelType::U8, 5u + channels), "random");
          if (!ctx.photoOnGpu()) return false;
          if (ctx.gpu().download(ctx.devicePhoto()) != ctx.photo()) return false;
        }
        return true;
      },
      [&](bool ok) {
        equal = ok;
        finished = true;
      },
      {.failed = [&](const QString& why) {
        error = why;
        finished = true;
      }});
  ASSERT_TRUE(waitUntil([&] { return finished; }));
  EXPECT_TRUE(error.isEmpty()) << error.toStdString();
  EXPECT_TRUE(equal);
}

// ---------------------------------------------------------------------------------------------
// Timings panel

namespace {

/// A record as the harness returns it for a box blur measured on both sides.
Measurement boxRecord() {
  Measurement m;
  m.version = "9.9.9";
  m.operation = "box";
  m.description = "box r=7";
  m.params = {{"radius", "7"}};
  m.input = ImageShape{600, 400, 3, PixelType::U8};
  m.output = *m.input;
  GpuMeasurement g;
  g.deviceName = "Test GPU";
  g.methodUsed = "direct";
  g.upload = Stats{0.25, 0.25, 0.25, 1};
  g.compute = Stats{0.125, 0.1, 0.2, 10};
  g.download = Stats{0.375, 0.3, 0.4, 3};
  m.gpu = g;
  CpuMeasurement c;
  c.threads = 16;
  c.methodUsed = "direct";
  c.time = Stats{12.5, 12, 13, 5};
  m.cpu = c;
  m.work = 1.44e6;
  m.ceiling = Ceiling{"DRAM copy", 1000, "test"};
  m.maxAbsDiff = 0;
  return m;
}

}  // namespace

TEST_F(GuiTest, TimingsPanelAddsRowsAndExportsCsv) {
  TimingsPanel panel;
  panel.addRun(RunTiming{boxRecord(), QDateTime(QDate(2025, 1, 2), QTime(3, 4, 5))});

  Measurement upload;  // a transfer alone, with text that needs CSV quoting
  upload.operation = "upload";
  upload.description = "upload, \"warm\"";
  upload.input = ImageShape{9, 5, 1, PixelType::U8};
  upload.output = *upload.input;
  upload.gpu = GpuMeasurement{};
  upload.gpu->upload = Stats{0.5, 0.5, 0.5, 1};
  panel.addRun(upload);

  EXPECT_EQ(panel.history().rowCount(), 2);
  EXPECT_TRUE(panel.history().runs()[1].when.isValid()) << "addRun stamps the time";
  auto cell = [&](int row, int column) {
    return panel.history().data(panel.history().index(row, column), Qt::DisplayRole).toString();
  };
  EXPECT_EQ(cell(0, TimingHistoryModel::Speedup), QStringLiteral("100x"));
  EXPECT_EQ(cell(0, TimingHistoryModel::GpuTotalMs), QStringLiteral("0.75 ms"));
  EXPECT_EQ(cell(0, TimingHistoryModel::Image), QStringLiteral("600x400 RGB u8"));
  EXPECT_EQ(cell(0, TimingHistoryModel::CpuThreads), QStringLiteral("16"));
  // 1.44 MB in 0.125 ms: 11.5 GB/s, 1.2% of a 1000 GB/s ceiling.
  EXPECT_EQ(cell(0, TimingHistoryModel::Rate), QStringLiteral("1.2% (11.5 GB/s)"));
  EXPECT_EQ(rateText(panel.history().runs()[0].measurement), QStringLiteral("11.5 GB/s (1.2% of DRAM copy)"));
  EXPECT_TRUE(cell(1, TimingHistoryModel::ComputeMs).isEmpty()) << "a transfer alone has no compute";
  EXPECT_EQ(cell(1, TimingHistoryModel::UploadMs), QStringLiteral("0.5 ms"));
  ASSERT_TRUE(panel.bars().run().has_value());
  EXPECT_EQ(panel.bars().run()->measurement.description, upload.description) << "the bars show the latest run";

  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("timings.csv"));
  QString error;
  ASSERT_TRUE(panel.exportCsv(path, &error)) << error.toStdString();
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly | QIODevice::Text));
  const QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 4);  // header, two runs, and the empty string after the last newline
  // The engine's record columns (gpulab::csvHeader / toCsvRow) after the time.
  EXPECT_EQ(lines[0], QStringLiteral("time,") + QString::fromStdString(csvHeader()));
  EXPECT_EQ(lines[1], QStringLiteral("2025-01-02T03:04:05.000,") + QString::fromStdString(toCsvRow(boxRecord())));
  EXPECT_TRUE(lines[1].contains(QStringLiteral(",12.5,0.25,0.125,0.375,0.75,100,16.66666667,")))
      << lines[1].toStdString();
  EXPECT_TRUE(lines[2].contains(QStringLiteral(",upload,\"upload, \"\"warm\"\"\","))) << lines[2].toStdString();
  EXPECT_TRUE(lines[3].isEmpty());

  EXPECT_FALSE(panel.exportCsv(dir.filePath(QStringLiteral("no/such/dir/t.csv")), &error));
  EXPECT_FALSE(error.isEmpty());

  panel.clear();
  EXPECT_EQ(panel.history().rowCount(), 0);
  EXPECT_FALSE(panel.bars().run().has_value());
}

TEST_F(GuiTest, TimingBarsTurnLogarithmicBeyond30x) {
  TimingBars bars;
  Measurement m;
  m.description = "test";
  m.cpu = CpuMeasurement{};
  m.cpu->time = Stats{10, 10, 10, 1};
  m.gpu = GpuMeasurement{};
  m.gpu->compute = Stats{0.5, 0.5, 0.5, 1};  // 20x apart: linear
  bars.setRun({m, {}});
  EXPECT_FALSE(bars.logarithmic());
  m.gpu->compute.medianMs = 0.25;  // 40x apart: logarithmic
  bars.setRun({m, {}});
  EXPECT_TRUE(bars.logarithmic());
  bars.resize(500, 220);
  const QImage shot = bars.grab().toImage();  // paints both axes without tripping over anything
  EXPECT_FALSE(shot.isNull());
}

TEST(RunTiming, PartsTotalsAndWords) {
  Measurement m;
  EXPECT_FALSE(gpuTotalMs(m));
  EXPECT_FALSE(m.speedup());
  m.cpu = CpuMeasurement{};
  m.cpu->time = Stats{8, 8, 8, 1};
  m.gpu = GpuMeasurement{};
  EXPECT_FALSE(computeMs(m)) << "no compute reps: a transfer alone";
  m.gpu->compute = Stats{2, 2, 2, 1};
  EXPECT_DOUBLE_EQ(*m.speedup(), 4.0);
  EXPECT_DOUBLE_EQ(*m.speedupEndToEnd(), 4.0);
  m.gpu->upload = Stats{1, 1, 1, 1};
  m.gpu->download = Stats{1, 1, 1, 1};
  EXPECT_DOUBLE_EQ(*gpuTotalMs(m), 4.0);
  EXPECT_DOUBLE_EQ(*m.speedupEndToEnd(), 2.0);

  // What ran: the description, and the method each side took when it is not the one asked for.
  m.description = "conv 31x31 same reflect101 auto";
  m.method = "auto";
  m.gpu->methodUsed = "fft";
  m.cpu->methodUsed = "fft";
  EXPECT_EQ(operationText(m), QStringLiteral("conv 31x31 same reflect101 auto → fft"));
  EXPECT_EQ(methodText(m), QStringLiteral("auto → fft"));
  m.cpu->methodUsed = "direct";
  EXPECT_EQ(methodText(m), QStringLiteral("auto → GPU fft, CPU direct"));
  m.method = "direct";
  m.gpu->methodUsed = "direct";
  EXPECT_EQ(operationText(m), QStringLiteral("conv 31x31 same reflect101 auto"));
  m.operation = "fft-filter";
  m.description = "lowpass gaussian c=0.25 pad=none";
  EXPECT_EQ(operationText(m), QStringLiteral("fft-filter lowpass gaussian c=0.25 pad=none"))
      << "the operation's name goes first when the description does not start with it";
  m.output = ImageShape{1920, 1080, 1, PixelType::F32};
  EXPECT_EQ(imageText(m), QStringLiteral("1920x1080")) << "a generated image: its size";

  EXPECT_EQ(formatMs(0.0345), QStringLiteral("0.0345 ms"));
  EXPECT_EQ(formatMs(1.234), QStringLiteral("1.23 ms"));
  EXPECT_EQ(formatMs(123.4), QStringLiteral("123 ms"));
  EXPECT_EQ(formatSpeedup(35.24), QStringLiteral("35.2x"));
}

// ---------------------------------------------------------------------------------------------
// Image view: zoom about a point, fit, steps

TEST_F(GuiTest, ImageViewZoomsAboutTheAnchor) {
  ImageView view;
  view.resize(416, 316);
  view.show();  // resize events reach shown widgets only
  QImage image(200, 100, QImage::Format_RGB888);
  image.fill(Qt::darkCyan);
  view.setImage(image);
  EXPECT_TRUE(view.fitsToWindow());
  EXPECT_DOUBLE_EQ(view.zoom(), 2.0);  // (416 - 16) / 200 against (316 - 16) / 100

  view.actualSize();
  EXPECT_DOUBLE_EQ(view.zoom(), 1.0);
  EXPECT_FALSE(view.fitsToWindow());
  view.zoomIn();
  EXPECT_DOUBLE_EQ(view.zoom(), 1.5);
  view.zoomOut();
  view.zoomOut();
  EXPECT_NEAR(view.zoom(), 2.0 / 3.0, 1e-12);

  view.setZoom(4.0, QPointF(200, 150));
  const QPointF before = view.imagePointAt(QPointF(150, 120));
  view.setZoom(8.0, QPointF(150, 120));
  const QPointF after = view.imagePointAt(QPointF(150, 120));
  EXPECT_NEAR(before.x(), after.x(), 1e-9);
  EXPECT_NEAR(before.y(), after.y(), 1e-9);
  view.setZoom(1000, QPointF(0, 0));
  EXPECT_DOUBLE_EQ(view.zoom(), ImageView::kMaxZoom);

  view.fitToWindow();
  EXPECT_DOUBLE_EQ(view.zoom(), 2.0);
  view.resize(216, 116);  // fit follows the size
  EXPECT_DOUBLE_EQ(view.zoom(), 1.0);
}

TEST_F(GuiTest, ImageViewFollowsTheMouse) {
  ImageView view;
  view.resize(416, 316);
  view.show();
  QImage image(200, 100, QImage::Format_RGB888);
  image.fill(Qt::darkCyan);
  view.setImage(image);  // fitted: 2x
  QPoint hovered;
  QObject::connect(&view, &ImageView::pixelHovered, [&](QPoint pixel) { hovered = pixel; });
  auto mouse = [&view](QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons) {
    QMouseEvent event(type, pos, view.mapToGlobal(pos), button, buttons, Qt::NoModifier);
    QCoreApplication::sendEvent(&view, &event);
  };

  // A wheel notch zooms 1.2x about the cursor (across: the picture is still lower than the view, centred).
  const QPointF cursor(150, 120);
  const QPointF under = view.imagePointAt(cursor);
  QWheelEvent wheel(cursor, view.mapToGlobal(cursor), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(&view, &wheel);
  EXPECT_DOUBLE_EQ(view.zoom(), 2.4);
  EXPECT_FALSE(view.fitsToWindow());
  EXPECT_NEAR(view.imagePointAt(cursor).x(), under.x(), 1e-9);
  EXPECT_NEAR(view.imagePointAt(QPointF(0, 158)).y(), 50.0, 1e-9);

  // A drag moves the picture with the mouse where it is wider than the view; it stays centred where not.
  const QPointF from(200, 150), to(180, 140);
  const QPointF grabbed = view.imagePointAt(from);
  mouse(QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
  mouse(QEvent::MouseMove, to, Qt::NoButton, Qt::LeftButton);
  mouse(QEvent::MouseButtonRelease, to, Qt::LeftButton, Qt::NoButton);
  EXPECT_NEAR(view.imagePointAt(to).x(), grabbed.x(), 1e-9);
  EXPECT_NEAR(view.imagePointAt(QPointF(0, 158)).y(), 50.0, 1e-9);

  // The pixel under the mouse, and (-1, -1) once it leaves.
  mouse(QEvent::MouseMove, cursor, Qt::NoButton, Qt::NoButton);
  const QPointF pixel = view.imagePointAt(cursor);
  EXPECT_EQ(hovered, QPoint(static_cast<int>(pixel.x()), static_cast<int>(pixel.y())));
  QEvent leave(QEvent::Leave);
  QCoreApplication::sendEvent(&view, &leave);
  EXPECT_EQ(hovered, QPoint(-1, -1));

  // A double-click shows 100 % about the point, another fits the photo again.
  mouse(QEvent::MouseButtonDblClick, cursor, Qt::LeftButton, Qt::LeftButton);
  EXPECT_DOUBLE_EQ(view.zoom(), 1.0);
  mouse(QEvent::MouseButtonDblClick, cursor, Qt::LeftButton, Qt::LeftButton);
  EXPECT_TRUE(view.fitsToWindow());
  EXPECT_DOUBLE_EQ(view.zoom(), 2.0);
}

TEST_F(GuiTest, ImageViewPaintsLargePhotosBeforeAndAfterTheSmoothCache) {
  ImageView view;
  view.resize(400, 300);
  view.show();
  QImage image(3000, 2000, QImage::Format_RGB888);  // 6 MP: the smooth picture is deferred
  image.fill(QColor(200, 40, 90));
  view.setImage(image);
  ASSERT_LT(view.zoom(), 1.0);
  const QPoint centre(200, 150);
  EXPECT_EQ(view.grab().toImage().pixelColor(centre), QColor(200, 40, 90));  // the quick picture
  QElapsedTimer t;
  t.start();
  waitUntil([&] { return t.elapsed() > 300; });
  EXPECT_EQ(view.grab().toImage().pixelColor(centre), QColor(200, 40, 90));  // the cached one
}

// ---------------------------------------------------------------------------------------------
// Command line

TEST(CommandLine, ParsesOptionsAndRejectsBadOnes) {
  const CommandLine ok = parseCommandLine(
      {QStringLiteral("gpulab"), QStringLiteral("--screenshot"), QStringLiteral("out.png"), QStringLiteral("--tab"),
       QStringLiteral("Photo"), QStringLiteral("--size"), QStringLiteral("800x600"), QStringLiteral("a.png")});
  EXPECT_TRUE(ok.error.isEmpty()) << ok.error.toStdString();
  EXPECT_EQ(ok.screenshot, QStringLiteral("out.png"));
  EXPECT_EQ(ok.tab, QStringLiteral("Photo"));
  EXPECT_EQ(ok.size, QSize(800, 600));
  EXPECT_EQ(ok.file, QStringLiteral("a.png"));

  EXPECT_EQ(parseCommandLine({QStringLiteral("gpulab")}).size, QSize(1400, 900));
  EXPECT_FALSE(
      parseCommandLine({QStringLiteral("gpulab"), QStringLiteral("--size"), QStringLiteral("8x6")}).error.isEmpty());
  EXPECT_FALSE(parseCommandLine({QStringLiteral("gpulab"), QStringLiteral("--bogus")}).error.isEmpty());
  EXPECT_FALSE(parseCommandLine({QStringLiteral("gpulab"), QStringLiteral("a"), QStringLiteral("b")}).error.isEmpty());
  EXPECT_TRUE(parseCommandLine({QStringLiteral("gpulab"), QStringLiteral("--help")}).help);

  EXPECT_EQ(parseWindowSize(QStringLiteral("1920x1080")), QSize(1920, 1080));
  EXPECT_EQ(parseWindowSize(QStringLiteral(" 640 X 480 ")), QSize(640, 480));
  EXPECT_FALSE(parseWindowSize(QStringLiteral("1920")));
  EXPECT_FALSE(parseWindowSize(QStringLiteral("0x100")));
  EXPECT_FALSE(parseWindowSize(QStringLiteral("100000x100")));
}

// ---------------------------------------------------------------------------------------------
// The main window

namespace {

struct StartedWindow {
  MainWindow window{{.persistSettings = false, .errorDialogs = false}};
  bool started = false;
  explicit StartedWindow(const QString& file = {}) {
    QObject::connect(&window, &MainWindow::startupFinished, [this] { started = true; });
    window.resize(1000, 700);
    window.show();
    window.startUp(file);
  }
};

}  // namespace

TEST_F(GuiTest, WindowOpensOnTheBundledPhoto) {
  ASSERT_FALSE(bundledPhoto().isEmpty()) << "resources/photos/coffee.png is part of the repository";
  StartedWindow w;
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  ASSERT_TRUE(w.window.photo().hasPhoto());
  EXPECT_EQ(QFileInfo(w.window.photo().current().source).canonicalFilePath(), bundledPhoto());
  EXPECT_EQ(w.window.photo().current().description, QStringLiteral("600x400 RGB u8"));
  ASSERT_NE(w.window.currentImageView(), nullptr);
  EXPECT_EQ(w.window.currentImageView()->image().size(), QSize(600, 400));
  EXPECT_TRUE(w.window.tabNames().contains(QStringLiteral("Photo")));
  EXPECT_TRUE(w.window.windowTitle().startsWith(QStringLiteral("coffee.png")));
  EXPECT_TRUE(w.window.recentFiles().isEmpty()) << "the bundled photo is not a recent file";
  EXPECT_TRUE(w.window.devicePanel().valid());
  EXPECT_EQ(w.window.devicePanel().snapshot().gpu, cudaAvailable());
  EXPECT_TRUE(w.window.lastError().isEmpty()) << w.window.lastError().toStdString();
}

TEST_F(GuiTest, PhotoUploadIsTheFirstTimingOnAGpu) {
  GPULAB_REQUIRE_GPU();
  StartedWindow w;
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  ASSERT_EQ(w.window.timings().history().rowCount(), 1);
  const Measurement& run = w.window.timings().history().runs().front().measurement;
  EXPECT_EQ(run.operation, "upload");
  EXPECT_EQ(operationText(run), QStringLiteral("upload photo"));
  EXPECT_EQ(imageText(run), QStringLiteral("600x400 RGB u8"));
  ASSERT_TRUE(uploadMs(run).has_value());
  EXPECT_GT(*uploadMs(run), 0.0);
  EXPECT_FALSE(computeMs(run).has_value());
  EXPECT_FALSE(run.cpu.has_value());
  EXPECT_FALSE(run.gpu->deviceName.empty());
  EXPECT_TRUE(w.window.photo().current().onGpu);
  EXPECT_GE(w.window.photo().current().gpuBytes, 600 * 400 * 3);
  EXPECT_FALSE(w.window.devicePanel().snapshot().name.isEmpty());
  EXPECT_GT(w.window.devicePanel().snapshot().totalBytes, 0);
}

TEST_F(GuiTest, ViewActionsHaveTheirShortcutsAndZoomTheCurrentTab) {
  StartedWindow w;
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  auto action = [&](const QString& text) -> QAction* {
    for (QAction* a : w.window.findChildren<QAction*>())
      if (a->text().remove(QLatin1Char('&')) == text) return a;
    return nullptr;
  };
  const struct {
    const char* text;
    QKeySequence key;
  } expected[] = {{"Open...", QKeySequence(Qt::CTRL | Qt::Key_O)},
                  {"Save As...", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)},
                  {"Quit", QKeySequence(Qt::CTRL | Qt::Key_Q)},
                  {"Zoom In", QKeySequence(Qt::CTRL | Qt::Key_Equal)},
                  {"Zoom Out", QKeySequence(Qt::CTRL | Qt::Key_Minus)},
                  {"Fit to Window", QKeySequence(Qt::CTRL | Qt::Key_0)},
                  {"Actual Size (100%)", QKeySequence(Qt::CTRL | Qt::Key_1)}};
  for (const auto& e : expected) {
    QAction* a = action(QString::fromUtf8(e.text));
    ASSERT_NE(a, nullptr) << e.text;
    EXPECT_TRUE(a->shortcuts().contains(e.key)) << e.text;
  }
  ImageView* view = w.window.currentImageView();
  ASSERT_NE(view, nullptr);
  action(QStringLiteral("Actual Size (100%)"))->trigger();
  EXPECT_DOUBLE_EQ(view->zoom(), 1.0);
  action(QStringLiteral("Zoom In"))->trigger();
  EXPECT_DOUBLE_EQ(view->zoom(), 1.5);
  action(QStringLiteral("Zoom Out"))->trigger();
  EXPECT_DOUBLE_EQ(view->zoom(), 1.0);
  action(QStringLiteral("Fit to Window"))->trigger();
  EXPECT_TRUE(view->fitsToWindow());
}

TEST_F(GuiTest, BadFileKeepsThePhotoAndSaysWhy) {
  StartedWindow w;
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  const quint64 generation = w.window.photo().current().generation;

  QTemporaryDir dir;
  const QString bad = dir.filePath(QStringLiteral("bad.png"));
  {
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("this is not a PNG file, only some text");
  }
  QString reported;
  QObject::connect(&w.window, &MainWindow::errorReported, [&](const QString& m) { reported = m; });
  w.window.openFile(bad);
  ASSERT_TRUE(waitUntil([&] { return !reported.isEmpty(); }));
  // The engine's own sentence (ImageIoError), naming the file.
  std::string expected;
  try {
    (void)loadImage(QFile::encodeName(bad).toStdString());
  } catch (const ImageIoError& e) {
    expected = e.what();
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_NE(reported.indexOf(QString::fromStdString(expected)), -1) << reported.toStdString();
  EXPECT_NE(reported.indexOf(QStringLiteral("bad.png")), -1);
  EXPECT_EQ(w.window.photo().current().generation, generation) << "the current photo stays";
  EXPECT_EQ(w.window.currentImageView()->image().size(), QSize(600, 400));
  EXPECT_TRUE(w.window.recentFiles().isEmpty());

  reported.clear();
  w.window.openFile(dir.filePath(QStringLiteral("missing.png")));
  ASSERT_TRUE(waitUntil([&] { return !reported.isEmpty(); }));
  EXPECT_NE(reported.indexOf(QStringLiteral("missing.png")), -1) << reported.toStdString();
  EXPECT_NE(reported.indexOf(QStringLiteral("current photo stays")), -1) << reported.toStdString();
  EXPECT_EQ(w.window.photo().current().generation, generation);
  EXPECT_EQ(w.window.currentImageView()->image().size(), QSize(600, 400));
}

TEST_F(GuiTest, BadFileIsReportedInADialog) {
  MainWindow window{{.persistSettings = false, .errorDialogs = true}};
  bool started = false;
  QObject::connect(&window, &MainWindow::startupFinished, [&] { started = true; });
  window.resize(1000, 700);
  window.show();
  window.startUp({});
  ASSERT_TRUE(waitUntil([&] { return started; }));
  const quint64 generation = window.photo().current().generation;
  QTemporaryDir dir;
  window.openFile(dir.filePath(QStringLiteral("missing.png")));
  QMessageBox* box = nullptr;
  ASSERT_TRUE(waitUntil([&] {
    for (QMessageBox* b : window.findChildren<QMessageBox*>())
      if (b->isVisible()) box = b;
    return box != nullptr;
  }));
  EXPECT_NE(box->text().indexOf(QStringLiteral("missing.png")), -1) << box->text().toStdString();
  EXPECT_EQ(box->icon(), QMessageBox::Warning);
  EXPECT_EQ(window.photo().current().generation, generation) << "the previous photo stays";
  box->close();
}

TEST_F(GuiTest, EachTabShowsTheDocksThatApplyAndRemembersItsLayout) {
  StartedWindow w;
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  MainWindow& window = w.window;
  auto visible = [&] {
    QStringList v = window.visibleDocks();
    v.sort();
    return v;
  };
  auto sorted = [](QStringList v) {
    v.sort();
    return v;
  };
  for (const QString& tab : window.tabNames()) {
    SCOPED_TRACE(tab.toStdString());
    ASSERT_TRUE(window.selectTab(tab));
    QCoreApplication::processEvents();
    EXPECT_EQ(visible(), sorted(window.docksOf(tab)));
  }
  EXPECT_EQ(window.docksOf(QStringLiteral("Lab")), QStringList{QStringLiteral("deviceDock")});
  EXPECT_EQ(window.docksOf(QStringLiteral("Mandelbrot")), QStringList{QStringLiteral("deviceDock")});
  EXPECT_TRUE(window.docksOf(QStringLiteral("Filters")).contains(QStringLiteral("histogramDock")));

  // Closing the Timings dock on the Filters tab holds for the Filters tab alone.
  ASSERT_TRUE(window.selectTab(QStringLiteral("Filters")));
  auto* timings = window.findChild<QDockWidget*>(QStringLiteral("timingsDock"));
  ASSERT_NE(timings, nullptr);
  timings->close();
  auto open = [&] { return window.visibleDocks().contains(QStringLiteral("timingsDock")); };
  ASSERT_TRUE(window.selectTab(QStringLiteral("Photo")));
  EXPECT_TRUE(open());
  ASSERT_TRUE(window.selectTab(QStringLiteral("Lab")));
  EXPECT_FALSE(open());
  EXPECT_FALSE(timings->toggleViewAction()->isEnabled()) << "a dock that does not apply cannot be shown";
  ASSERT_TRUE(window.selectTab(QStringLiteral("Filters")));
  EXPECT_FALSE(open());
  EXPECT_TRUE(timings->toggleViewAction()->isEnabled());
  ASSERT_TRUE(window.selectTab(QStringLiteral("FFT")));
  EXPECT_TRUE(open());
}

TEST_F(GuiTest, OpenSaveRecentAndDrop) {
  StartedWindow w;
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  QTemporaryDir dir;

  // Save As writes the current photo through the engine.
  const QString saved = dir.filePath(QStringLiteral("saved.png"));
  w.window.saveTo(saved);
  ASSERT_TRUE(waitUntil([&] { return w.window.recentFiles().contains(saved); }));
  const Image reread = loadImage(QFile::encodeName(saved).toStdString());
  EXPECT_EQ(reread, loadImage(QFile::encodeName(bundledPhoto()).toStdString()));

  // A failing save says why and changes nothing.
  QString reported;
  QObject::connect(&w.window, &MainWindow::errorReported, [&](const QString& m) { reported = m; });
  w.window.saveTo(dir.filePath(QStringLiteral("no/such/dir/x.png")));
  ASSERT_TRUE(waitUntil([&] { return !reported.isEmpty(); }));
  EXPECT_TRUE(reported.startsWith(QStringLiteral("Could not save"))) << reported.toStdString();

  // Opening a file makes it the photo and the first recent file.
  const QString astronaut = sourcePath("resources/photos/astronaut.png");
  QString opened;
  QObject::connect(&w.window, &MainWindow::fileOpened, [&](const QString& p) { opened = p; });
  w.window.openFile(astronaut);
  ASSERT_TRUE(waitUntil([&] { return opened == astronaut; }));
  EXPECT_EQ(w.window.photo().current().description, QStringLiteral("512x512 RGB u8"));
  EXPECT_EQ(w.window.recentFiles().front(), QFileInfo(astronaut).absoluteFilePath());
  EXPECT_EQ(w.window.currentImageView()->image().size(), QSize(512, 512));

  // Dropping a file opens it.
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(saved)});
  QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&w.window, &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&w.window, &drop);
  ASSERT_TRUE(waitUntil([&] { return opened == saved; }));
  EXPECT_EQ(w.window.photo().current().description, QStringLiteral("600x400 RGB u8"));

  // The recent list keeps the newest eight, without duplicates.
  for (int i = 0; i < 10; ++i) {
    const QString copy = dir.filePath(QStringLiteral("copy%1.png").arg(i));
    ASSERT_TRUE(QFile::copy(saved, copy));
    w.window.openFile(copy);
    ASSERT_TRUE(waitUntil([&] { return opened == copy; }));
  }
  w.window.openFile(dir.filePath(QStringLiteral("copy5.png")));
  ASSERT_TRUE(waitUntil([&] { return opened == dir.filePath(QStringLiteral("copy5.png")); }));
  QStringList recent = w.window.recentFiles();
  ASSERT_EQ(recent.size(), MainWindow::kMaxRecentFiles);
  EXPECT_EQ(recent.front(), dir.filePath(QStringLiteral("copy5.png")));
  EXPECT_EQ(recent[1], dir.filePath(QStringLiteral("copy9.png")));
  EXPECT_EQ(recent.removeDuplicates(), 0);
}

TEST_F(GuiTest, FloatArraysShowNormalisedAndRefuseEightBitFormats) {
  QTemporaryDir dir;
  const QString npy = dir.filePath(QStringLiteral("ramp.npy"));
  Image ramp(64, 32, 1, PixelType::F32);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x) ramp.at<float>(x, y) = -2.0f + 0.125f * static_cast<float>(x);
  saveImage(ramp, QFile::encodeName(npy).toStdString());

  StartedWindow w(npy);
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  ASSERT_TRUE(w.window.photo().hasPhoto()) << w.window.lastError().toStdString();
  EXPECT_EQ(w.window.photo().current().description, QStringLiteral("64x32 gray f32"));
  EXPECT_EQ(w.window.photo().current().displayNote, QStringLiteral("f32 shown normalised from -2 to 5.875"));
  const QImage& shown = w.window.currentImageView()->image();
  EXPECT_EQ(shown.pixelColor(0, 0), QColor(0, 0, 0));
  EXPECT_EQ(shown.pixelColor(63, 31), QColor(255, 255, 255));

  QString reported;
  QObject::connect(&w.window, &MainWindow::errorReported, [&](const QString& m) { reported = m; });
  w.window.saveTo(dir.filePath(QStringLiteral("ramp.png")));
  ASSERT_TRUE(waitUntil([&] { return !reported.isEmpty(); }));
  EXPECT_NE(reported.indexOf(QStringLiteral(".npy")), -1) << "the engine names the way out: " << reported.toStdString();
  EXPECT_FALSE(QFileInfo::exists(dir.filePath(QStringLiteral("ramp.png"))));

  const QString copy = dir.filePath(QStringLiteral("copy.npy"));
  w.window.saveTo(copy);
  ASSERT_TRUE(waitUntil([&] { return w.window.recentFiles().contains(copy); }));
  EXPECT_EQ(loadImage(QFile::encodeName(copy).toStdString()), ramp);
}

TEST_F(GuiTest, MissingFileOnTheCommandLineStartsEmptyWithAReason) {
  QTemporaryDir dir;
  StartedWindow w(dir.filePath(QStringLiteral("nope.png")));
  ASSERT_TRUE(waitUntil([&] { return w.started; }));
  EXPECT_FALSE(w.window.photo().hasPhoto());
  EXPECT_NE(w.window.lastError().indexOf(QStringLiteral("nope.png")), -1) << w.window.lastError().toStdString();
  EXPECT_TRUE(w.window.currentImageView()->image().isNull());
}

TEST_F(GuiTest, DevicePanelShowsAGpuOrWhyNot) {
  Engine engine;
  DevicePanel panel(engine);
  ASSERT_TRUE(waitUntil([&] { return panel.valid(); }));
  auto* headline = panel.findChild<QLabel*>(QStringLiteral("deviceHeadline"));
  ASSERT_NE(headline, nullptr);
  if (!cudaAvailable()) {
    EXPECT_EQ(headline->text(), QStringLiteral("No CUDA device: CPU only"));
    EXPECT_FALSE(panel.snapshot().status.isEmpty());
    EXPECT_EQ(panel.summary(), QStringLiteral("CPU only"));
  } else {
    EXPECT_EQ(headline->text(), panel.snapshot().name);
  }
  EXPECT_GE(panel.snapshot().cpuThreads, 1);

  DeviceSnapshot gpu;
  gpu.gpu = true;
  gpu.name = QStringLiteral("NVIDIA H200");
  gpu.computeCapability = QStringLiteral("9.0");
  gpu.multiprocessors = 132;
  gpu.totalBytes = qint64{140} << 30;
  gpu.freeBytes = qint64{139} << 30;
  panel.display(gpu);
  EXPECT_EQ(headline->text(), QStringLiteral("NVIDIA H200"));
  bool memoryShown = false;
  for (QLabel* l : panel.findChildren<QLabel*>()) memoryShown |= l->text() == QStringLiteral("1.00 GiB of 140.00 GiB");
  EXPECT_TRUE(memoryShown);
}

TEST_F(GuiTest, DevicePanelSetsAndKeepsTheImageLimits) {
  const ImageLimits saved = imageLimits();
  QSettings().remove(QStringLiteral("limits"));
  Engine engine;
  {
    DevicePanel panel(engine);
    auto* side = panel.findChild<QSpinBox*>(QStringLiteral("maxImageSide"));
    auto* pixels = panel.findChild<QSpinBox*>(QStringLiteral("maxImagePixels"));
    ASSERT_NE(side, nullptr);
    ASSERT_NE(pixels, nullptr);
    EXPECT_EQ(side->value(), saved.maxSide);
    EXPECT_EQ(side->maximum(), kMaxImageDimension);
    EXPECT_EQ(pixels->maximum(), kMaxImagePixels);
    panel.persistImageLimits();  // nothing saved yet: the limits stay
    EXPECT_EQ(imageLimits(), saved);
    // The user types a side and leaves the box: loading refuses a wider image from then on.
    side->setValue(32);
    emit side->editingFinished();
    EXPECT_EQ(imageLimits().maxSide, 32);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("wide.png"));
    saveImage(test::randomImage(40, 30, 3, PixelType::U8, 7), path.toStdString());
    try {
      loadImage(path.toStdString());
      ADD_FAILURE() << "a 40 x 30 image loaded under a 32-pixel limit";
    } catch (const ImageIoError& e) {
      EXPECT_NE(std::string(e.what()).find("exceeds the limit of 32 pixels a side"), std::string::npos) << e.what();
    }
    panel.setImageLimits(99999, 5000);  // clamped to gpulab's maximum side
    EXPECT_EQ(imageLimits(), (ImageLimits{kMaxImageDimension, 5000}));
    EXPECT_EQ(side->value(), kMaxImageDimension);
    EXPECT_EQ(pixels->value(), 5000);
  }
  // Saved: a new panel (a new session) applies them.
  setImageLimits(saved);
  {
    DevicePanel panel(engine);
    panel.persistImageLimits();
    EXPECT_EQ(imageLimits(), (ImageLimits{kMaxImageDimension, 5000}));
    EXPECT_EQ(panel.findChild<QSpinBox*>(QStringLiteral("maxImagePixels"))->value(), 5000);
  }
  QSettings().remove(QStringLiteral("limits"));
  setImageLimits(saved);
}

// ---------------------------------------------------------------------------------------------
// gpulab --screenshot, as a person (or the README script) runs it

namespace {

struct ProcessResult {
  int exitCode = -1;
  QString stdErr;
};

ProcessResult runGui(const QStringList& arguments) {
  QProcess process;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  process.setProcessEnvironment(env);
  process.start(QStringLiteral(GPULAB_GUI_PATH), arguments);
  if (!process.waitForFinished(60000)) {
    process.kill();
    process.waitForFinished();
    return {};
  }
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromLocal8Bit(process.readAllStandardError())};
}

// The lines of `text` that are ours (Qt's platform plugins add their own notes on stderr).
QStringList gpulabLines(const QString& text) {
  QStringList lines;
  for (const QString& line : text.split(QLatin1Char('\n')))
    if (line.startsWith(QStringLiteral("gpulab:"))) lines << line;
  return lines;
}

}  // namespace

TEST_F(GuiTest, ScreenshotIsWrittenAndNotBlank) {
  QTemporaryDir dir;
  const QString shot = dir.filePath(QStringLiteral("shot.png"));
  const ProcessResult r = runGui({QStringLiteral("--screenshot"), shot, QStringLiteral("--size"),
                                  QStringLiteral("1400x900"), QStringLiteral("--tab"), QStringLiteral("photo")});
  ASSERT_EQ(r.exitCode, 0) << r.stdErr.toStdString();
  QImage image(shot);
  ASSERT_FALSE(image.isNull());
  // The README's size: every tab must fit in it (a wider minimum would grow the window).
  EXPECT_EQ(image.size(), QSize(1400, 900));
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) colours.insert(image.pixel(x, y));
  EXPECT_GT(colours.size(), 5000) << "a window showing a photo has thousands of colours";
}

TEST_F(GuiTest, ScreenshotsOfComputingTabsWaitForTheirFirstResult) {
  // The FFT and Mandelbrot tabs compute when shown: the shot is taken once the result is painted,
  // not while the views still show their placeholders (no "took longer" note either).
  for (const QString& tab : {QStringLiteral("FFT"), QStringLiteral("Mandelbrot")}) {
    SCOPED_TRACE(tab.toStdString());
    QTemporaryDir dir;
    const QString shot = dir.filePath(QStringLiteral("shot.png"));
    const ProcessResult r = runGui({QStringLiteral("--screenshot"), shot, QStringLiteral("--size"),
                                    QStringLiteral("1400x900"), QStringLiteral("--tab"), tab});
    ASSERT_EQ(r.exitCode, 0) << r.stdErr.toStdString();
    EXPECT_TRUE(gpulabLines(r.stdErr).isEmpty()) << r.stdErr.toStdString();
    const QImage image(shot);
    ASSERT_FALSE(image.isNull());
    // The tab's views (right of its controls, above the Timings dock) hold images, not placeholder text.
    QSet<QRgb> colours;
    for (int y = 100; y < 620; ++y)
      for (int x = 320; x < 1040; ++x) colours.insert(image.pixel(x, y));
    EXPECT_GT(colours.size(), 500) << "the tab's views show computed images (a placeholder has a few dozen colours)";
  }
}

TEST_F(GuiTest, ScreenshotFailuresExitNonZeroWithOneLine) {
  QTemporaryDir dir;
  ProcessResult r = runGui({QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("no/such/dir/shot.png"))});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(gpulabLines(r.stdErr).size(), 1) << r.stdErr.toStdString();

  r = runGui({QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("s.png")), QStringLiteral("--tab"),
              QStringLiteral("Nope")});
  EXPECT_EQ(r.exitCode, 2);
  ASSERT_EQ(gpulabLines(r.stdErr).size(), 1) << r.stdErr.toStdString();
  EXPECT_NE(gpulabLines(r.stdErr).front().indexOf(QStringLiteral("Photo")), -1) << "it names the tabs there are";

  r = runGui({QStringLiteral("--size"), QStringLiteral("huge")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(gpulabLines(r.stdErr).size(), 1) << r.stdErr.toStdString();

  // A photo that cannot be opened: no screenshot of something else, exit 1 and the reason.
  const QString shot = dir.filePath(QStringLiteral("missing-shot.png"));
  r = runGui({QStringLiteral("--screenshot"), shot, dir.filePath(QStringLiteral("missing.png"))});
  EXPECT_EQ(r.exitCode, 1);
  ASSERT_EQ(gpulabLines(r.stdErr).size(), 1) << r.stdErr.toStdString();
  EXPECT_NE(gpulabLines(r.stdErr).front().indexOf(QStringLiteral("missing.png")), -1) << r.stdErr.toStdString();
  EXPECT_NE(gpulabLines(r.stdErr).front().indexOf(QStringLiteral("does not exist")), -1) << r.stdErr.toStdString();
  EXPECT_FALSE(QFileInfo::exists(shot));
}
