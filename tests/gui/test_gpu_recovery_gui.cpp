// The GUI's recovery from a sticky GPU fault, offscreen: a job faults the device on purpose
// (gpulab/core/fault_injection.hpp, test only), the engine's worker resets it, rebuilds its GPU
// context, uploads the photo again and says so in one sentence (the job's failure and
// Engine::gpuFaultRecovered, which the main window shows in its status bar), and the next job gives
// the result it gave before the fault.
//
// Suite GpuFaultRecovery: it faults the device deliberately, so compute-sanitizer must not run it
// (scripts/gpu-check.sh excludes *GpuFaultRecovery*). With GPULAB_SHOT_DIR set, the main window
// after a recovery is saved there as gpu-fault-recovered.png.
#include <gtest/gtest.h>

#include <QDir>
#include <QStatusBar>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "gpulab/core/device.hpp"
#include "gpulab/core/fault_injection.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "shell/engine.hpp"
#include "shell/main_window.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"

namespace gpulab::gui {
namespace {

using test_support::waitUntil;

QApplication& app() { return test_support::testApplication("test_gpu_recovery_gui"); }

const QString kRecovered = QStringLiteral(
    "The GPU faulted (an illegal memory access was encountered, seen by cudaStreamSynchronize); the device was reset "
    "and the photo re-uploaded, so the next job runs");

/// Set when the driver refused a new CUDA context after the fault (cudaErrorDevicesUnavailable): the
/// machine's limit; the process's GPU is gone then, and the tests after it skip with this reason.
QString gRefusal;

bool refused(const QString& message) {
  // Such drivers want the process relaunched: the window restarts gpulab there (suite GpuFaultRelaunch).
  if (message.contains(QStringLiteral("cudaErrorDevicesUnavailable")))
    gRefusal = message + QStringLiteral(" (gpulab restarts itself there instead: suite GpuFaultRelaunch)");
  return !gRefusal.isEmpty();
}

bool sameBytes(const Image& a, const Image& b) {
  return a.width() == b.width() && a.height() == b.height() && a.channels() == b.channels() && a.type() == b.type() &&
         std::memcmp(a.data(), b.data(), a.sizeBytes()) == 0;
}

/// The box blur of the resident photo, downloaded: what a Filters job does.
Image blurResident(WorkerContext& ctx) {
  BoxBlur blur(3);
  DeviceImage out;
  blur.runGpu(ctx.gpu(), ctx.devicePhoto(), out);
  return ctx.gpu().download(out);
}

TEST(GpuFaultRecovery, GuiWorkerResetsReuploadsAndTheNextJobRuns) {
  GPULAB_REQUIRE_GPU();
  (void)app();
  Engine engine;
  std::optional<PhotoUpdate> lastPhoto;
  QString recovered;
  QObject::connect(&engine, &Engine::photoChanged, [&](const PhotoUpdate& u) { lastPhoto = u; });
  QObject::connect(&engine, &Engine::gpuFaultRecovered, [&](const QString& m) { recovered = m; });

  const Image photo = test::randomImage(131, 89, 3, PixelType::U8, 23);
  std::optional<Image> before;
  engine.submit(
      nullptr, [photo](WorkerContext& ctx) { ctx.setPhoto(photo, QStringLiteral("test photo")); }, [] {});
  engine.submit(nullptr, blurResident, [&](Image r) { before = std::move(r); });
  ASSERT_TRUE(waitUntil([&] { return before.has_value(); }));
  ASSERT_TRUE(lastPhoto && lastPhoto->onGpu);
  const quint64 generation = lastPhoto->generation;

  // A job that faults: its outcome is `failed` with the sentence, and the engine says it too.
  QString failed;
  bool done = false;
  engine.submit(
      nullptr,
      [](WorkerContext& ctx) {
        testing::injectGpuFault(ctx.gpu());
        ctx.gpu().synchronize();
      },
      [&] { done = true; }, {.failed = [&](const QString& why) { failed = why; }});
  ASSERT_TRUE(waitUntil([&] { return !failed.isEmpty(); }));
  if (refused(failed)) GTEST_SKIP() << gRefusal.toStdString();
  EXPECT_FALSE(done);
  EXPECT_EQ(failed, kRecovered);
  EXPECT_EQ(recovered, kRecovered);
  ASSERT_TRUE(lastPhoto.has_value());
  EXPECT_GT(lastPhoto->generation, generation) << "the photo was published again after its re-upload";
  EXPECT_TRUE(lastPhoto->onGpu);
  EXPECT_TRUE(lastPhoto->gpuNote.isEmpty()) << lastPhoto->gpuNote.toStdString();

  // The next job works on the re-uploaded photo and gives the same result.
  std::optional<Image> after;
  engine.submit(nullptr, blurResident, [&](Image r) { after = std::move(r); });
  ASSERT_TRUE(waitUntil([&] { return after.has_value(); }));
  EXPECT_TRUE(sameBytes(*before, *after));

  // A fault that reaches the worker as another exception is recovered too (the context is probed).
  failed.clear();
  recovered.clear();
  engine.submit(
      nullptr,
      [](WorkerContext& ctx) {
        testing::injectGpuFault(ctx.gpu());
        throw std::runtime_error("the experiment stopped");
      },
      [] {}, {.failed = [&](const QString& why) { failed = why; }});
  ASSERT_TRUE(waitUntil([&] { return !failed.isEmpty(); }));
  EXPECT_EQ(failed,
            QStringLiteral("The GPU faulted (an illegal memory access was encountered: the experiment stopped); "
                           "the device was reset and the photo re-uploaded, so the next job runs"));
  EXPECT_EQ(recovered, failed);
  after.reset();
  engine.submit(nullptr, blurResident, [&](Image r) { after = std::move(r); });
  ASSERT_TRUE(waitUntil([&] { return after.has_value(); }));
  EXPECT_TRUE(sameBytes(*before, *after));

  // An ordinary failure does not reset anything.
  const std::uint64_t epoch = deviceEpoch();
  failed.clear();
  engine.submit(
      nullptr, [](WorkerContext&) { throw std::invalid_argument("radius -1 is negative"); }, [] {},
      {.failed = [&](const QString& why) { failed = why; }});
  ASSERT_TRUE(waitUntil([&] { return !failed.isEmpty(); }));
  EXPECT_EQ(failed, QStringLiteral("radius -1 is negative"));
  EXPECT_EQ(deviceEpoch(), epoch);
}

TEST(GpuFaultRecovery, MainWindowShowsTheRecoveryInItsStatusBar) {
  GPULAB_REQUIRE_GPU();
  if (!gRefusal.isEmpty()) GTEST_SKIP() << gRefusal.toStdString();
  (void)app();
  MainWindow window{{.persistSettings = false, .errorDialogs = false}};
  bool started = false;
  QObject::connect(&window, &MainWindow::startupFinished, [&] { started = true; });
  window.resize(1000, 700);
  window.show();
  window.startUp({});
  ASSERT_TRUE(waitUntil([&] { return started; }));
  ASSERT_TRUE(window.photo().hasPhoto());

  window.engine().submit(
      nullptr,
      [](WorkerContext& ctx) {
        testing::injectGpuFault(ctx.gpu());
        ctx.gpu().synchronize();
      },
      [] {});
  ASSERT_TRUE(waitUntil([&] { return window.statusBar()->currentMessage() == kRecovered; }));
  // The photo is still there, on the GPU again.
  ASSERT_TRUE(waitUntil([&] { return window.photo().current().onGpu; }));
  const QByteArray dir = qgetenv("GPULAB_SHOT_DIR");
  if (!dir.isEmpty()) window.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath("gpu-fault-recovered.png"));
}

}  // namespace
}  // namespace gpulab::gui
