// "Apply to folder..." offscreen: the Filters tab's button opens the dialog for the current filter;
// the batch runs off the GUI thread (the GUI keeps processing events while it runs), shows its
// progress and summary, lists failures with their reason, and Cancel stops it.
#include <gtest/gtest.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <filesystem>
#include <fstream>

#include "filters/batch_dialog.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"

namespace gpulab::gui {
namespace {

namespace fs = std::filesystem;

QApplication& app() { return test_support::testApplication("test_batch_gui"); }

void writePhotos(const fs::path& dir, int count, int size) {
  fs::create_directories(dir);
  for (int i = 0; i < count; ++i)
    saveImage(test::randomImage(size, size * 2 / 3, 3, PixelType::U8, static_cast<unsigned>(i)),
              dir / ("p" + std::to_string(i) + ".png"));
}

/// Counts a dialog's finished() signals.
struct FinishedCount {
  explicit FinishedCount(BatchDialog& dialog) {
    QObject::connect(&dialog, &BatchDialog::finished, &dialog, [this] { ++count; });
  }
  int count = 0;
};

/// Runs the event loop until finished() comes (or `ms` pass).
void waitFinished(const FinishedCount& finished, int before, int ms = 60000) {
  QElapsedTimer timer;
  timer.start();
  while (finished.count == before && timer.elapsed() < ms) QApplication::processEvents(QEventLoop::AllEvents, 20);
}

TEST(BatchGui, RunsTheFilterOverAFolderOffTheGuiThread) {
  app();
  QTemporaryDir tmp;
  const fs::path root = tmp.path().toStdString();
  writePhotos(root / "in", 6, 90);
  { std::ofstream(root / "in/broken.png") << "\x89PNG\r\n\x1a\n cut short"; }
  BatchDialog dialog(findOperation("box"), {{"radius", "2"}}, GpuChoices{});
  dialog.show();
  dialog.setFolders(QString::fromStdString((root / "in").string()), QString::fromStdString((root / "out").string()));
  dialog.setFormat(QStringLiteral("jpg"));
  FinishedCount finished(dialog);
  dialog.start();
  // start() returns at once: the batch runs on another thread and reports through the event loop.
  EXPECT_TRUE(dialog.running());
  EXPECT_EQ(finished.count, 0);
  waitFinished(finished, 0);
  ASSERT_EQ(finished.count, 1) << dialog.statusText().toStdString();
  EXPECT_FALSE(dialog.running());
  const QString summary = dialog.summaryText();
  EXPECT_TRUE(summary.contains(QStringLiteral("6 of 7 images written"))) << summary.toStdString();
  EXPECT_TRUE(summary.contains(QStringLiteral("images/s"))) << summary.toStdString();
  EXPECT_TRUE(summary.contains(QStringLiteral("Failed: 1 of 7 files"))) << summary.toStdString();
  EXPECT_TRUE(summary.contains(QStringLiteral("broken.png"))) << summary.toStdString();
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("6 written, 1 failed"))) << dialog.statusText().toStdString();
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(fs::exists(root / "out" / ("p" + std::to_string(i) + ".jpg")));
  const QString shot = QString::fromUtf8(qgetenv("GPULAB_BATCH_SHOT"));
  if (!shot.isEmpty()) dialog.grab().save(shot);
}

TEST(BatchGui, CancelStopsTheBatch) {
  app();
  QTemporaryDir tmp;
  const fs::path root = tmp.path().toStdString();
  writePhotos(root / "in", 40, 200);
  BatchDialog dialog(findOperation("box"), {{"radius", "3"}}, GpuChoices{});
  dialog.setFolders(QString::fromStdString((root / "in").string()), QString::fromStdString((root / "out").string()));
  FinishedCount finished(dialog);
  dialog.start();
  dialog.cancel();
  waitFinished(finished, 0);
  ASSERT_EQ(finished.count, 1);
  EXPECT_TRUE(dialog.summaryText().contains(QStringLiteral("(cancelled)"))) << dialog.summaryText().toStdString();
  EXPECT_TRUE(dialog.statusText().startsWith(QStringLiteral("Cancelled"))) << dialog.statusText().toStdString();
}

TEST(BatchGui, AProblemBeforeTheStartIsOneSentence) {
  app();
  BatchDialog dialog(findOperation("box"), {{"radius", "2"}}, GpuChoices{});
  FinishedCount finished(dialog);
  dialog.start();
  EXPECT_EQ(finished.count, 1);
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("Choose a folder"))) << dialog.statusText().toStdString();
  QTemporaryDir tmp;
  dialog.setFolders(tmp.path() + QStringLiteral("/missing"), tmp.path() + QStringLiteral("/out"));
  dialog.start();
  waitFinished(finished, 1);
  EXPECT_EQ(finished.count, 2);
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("missing"))) << dialog.statusText().toStdString();
}

// The GPUs of a batch: a checkbox each, the selected device checked by default, at least one stays
// checked, and running on the CPU greys the list out. The device lists are given, so it runs here.
TEST(BatchGui, GpuListChoosesThePipelines) {
  app();
  GpuChoices two;
  two.labels = {QStringLiteral("GPU 0 (NVIDIA H100 80GB HBM3)"), QStringLiteral("GPU 1 (NVIDIA H100 80GB HBM3)")};
  two.selected = 0;
  BatchDialog dialog(findOperation("box"), {{"radius", "2"}}, two);
  auto* list = dialog.findChild<GpuCheckList*>(QStringLiteral("batchGpus"));
  auto* gpu0 = dialog.findChild<QCheckBox*>(QStringLiteral("batchGpu0"));
  auto* gpu1 = dialog.findChild<QCheckBox*>(QStringLiteral("batchGpu1"));
  auto* device = dialog.findChild<QComboBox*>(QStringLiteral("batchDevice"));
  ASSERT_TRUE(list && gpu0 && gpu1 && device);
  EXPECT_EQ(list->checked(), std::vector<int>({0}));
  gpu1->setChecked(true);
  EXPECT_EQ(list->checked(), std::vector<int>({0, 1}));
  gpu0->setChecked(false);
  gpu1->setChecked(false);  // the last one checked stays checked
  EXPECT_EQ(list->checked(), std::vector<int>({1}));
  EXPECT_TRUE(list->isEnabled());
  device->setCurrentIndex(1);  // CPU
  EXPECT_FALSE(list->isEnabled());
  device->setCurrentIndex(0);
  EXPECT_TRUE(list->isEnabled());
  EXPECT_TRUE(gpu0->toolTip().contains(QStringLiteral("own pipeline")));
  const QString shot = QString::fromUtf8(qgetenv("GPULAB_BATCH_GPUS_SHOT"));
  if (!shot.isEmpty()) {
    dialog.show();
    dialog.grab().save(shot);
  }

  BatchDialog none(findOperation("box"), {{"radius", "2"}}, GpuChoices{});
  EXPECT_NE(none.findChild<QLabel*>(QStringLiteral("batchNoGpu")), nullptr);
  EXPECT_FALSE(none.findChild<QComboBox*>(QStringLiteral("batchDevice"))->isEnabled());
}

// On a GPU machine the batch runs on the machine's devices as the list gives them, and the summary
// names them.
TEST(BatchGui, GpuBatchNamesItsDevices) {
  GPULAB_REQUIRE_GPU();
  app();
  QTemporaryDir tmp;
  const fs::path root = tmp.path().toStdString();
  writePhotos(root / "in", 4, 64);
  GpuChoices gpus = listGpus();
  BatchDialog dialog(findOperation("box"), {{"radius", "2"}}, gpus);
  for (QCheckBox* box : dialog.findChildren<QCheckBox*>())
    if (box->isEnabled()) box->setChecked(true);  // every GPU
  dialog.setFolders(QString::fromStdString((root / "in").string()), QString::fromStdString((root / "out").string()));
  FinishedCount finished(dialog);
  dialog.start();
  waitFinished(finished, 0);
  ASSERT_EQ(finished.count, 1) << dialog.statusText().toStdString();
  const QString summary = dialog.summaryText();
  EXPECT_TRUE(summary.contains(QStringLiteral("4 of 4 images written"))) << summary.toStdString();
  EXPECT_TRUE(summary.contains(gpus.labels.back().section(QLatin1Char(' '), 0, 1))) << summary.toStdString();
}

}  // namespace
}  // namespace gpulab::gui
