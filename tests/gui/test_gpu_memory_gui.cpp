// The GUI's GPU memory limit (File > GPU Memory Limit...), offscreen: the text it takes, the saved
// setting and GPULAB_GPU_MEMORY_LIMIT at startup, and the menu entry. A photo above the limit stays
// on the host with the reason (WorkerContext::setPhoto); that part needs a GPU and is not run here.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <cstdlib>
#include <stdexcept>

#include "gpulab/tiling/tiled_runner.hpp"
#include "shell/gpu_memory_setting.hpp"
#include "shell/main_window.hpp"
#include "support/gui_test_support.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() { return test_support::testApplication("test_gpu_memory_gui"); }

TEST(GpuMemorySetting, TakesTheCliSyntax) {
  app();
  EXPECT_TRUE(setGpuMemoryLimitText(QStringLiteral("512M"), false).contains(QStringLiteral("512 MiB")));
  EXPECT_EQ(gpuMemoryLimit(), std::size_t{512} << 20);
  EXPECT_EQ(gpuMemoryLimitText(), QStringLiteral("512 MiB"));
  EXPECT_THROW(setGpuMemoryLimitText(QStringLiteral("twelve"), false), std::invalid_argument);
  EXPECT_EQ(gpuMemoryLimit(), std::size_t{512} << 20);  // unchanged
  setGpuMemoryLimitText(QString(), false);
  EXPECT_EQ(gpuMemoryLimit(), 0u);
  EXPECT_TRUE(gpuMemoryLimitText().startsWith(QStringLiteral("none")));
}

TEST(GpuMemorySetting, SavedValueAndEnvironmentAtStartup) {
  app();
  setGpuMemoryLimitText(QStringLiteral("64M"), true);  // saved
  setGpuMemoryLimit(0);
  EXPECT_TRUE(applyGpuMemoryLimitAtStartup(true).isEmpty());
  EXPECT_EQ(gpuMemoryLimit(), std::size_t{64} << 20);
  ::setenv("GPULAB_GPU_MEMORY_LIMIT", "2G", 1);  // the environment wins
  EXPECT_TRUE(applyGpuMemoryLimitAtStartup(true).isEmpty());
  EXPECT_EQ(gpuMemoryLimit(), std::size_t{2} << 30);
  ::setenv("GPULAB_GPU_MEMORY_LIMIT", "2 bananas", 1);
  const QString problem = applyGpuMemoryLimitAtStartup(true);
  ::unsetenv("GPULAB_GPU_MEMORY_LIMIT");
  EXPECT_TRUE(problem.contains(QStringLiteral("GPULAB_GPU_MEMORY_LIMIT"))) << problem.toStdString();
  QSettings().setValue(QStringLiteral("engine/gpuMemoryLimit"), QStringLiteral("lots"));
  setGpuMemoryLimit(0);
  EXPECT_TRUE(applyGpuMemoryLimitAtStartup(true).contains(QStringLiteral("is not a memory size")));
  EXPECT_EQ(gpuMemoryLimit(), 0u);
  setGpuMemoryLimitText(QString(), true);  // cleared
  EXPECT_TRUE(QSettings().value(QStringLiteral("engine/gpuMemoryLimit")).toString().isEmpty());
}

TEST(GpuMemorySetting, FileMenuHasTheEntry) {
  app();
  MainWindow window{{.persistSettings = false, .errorDialogs = false}};
  QAction* action = window.findChild<QAction*>(QStringLiteral("gpuMemoryLimitAction"));
  ASSERT_NE(action, nullptr);
  EXPECT_TRUE(action->text().contains(QStringLiteral("GPU Memory Limit")));
  QMenu* file = window.menuBar()->actions().front()->menu();
  ASSERT_NE(file, nullptr);
  EXPECT_TRUE(file->actions().contains(action));
  if (const char* dir = std::getenv("GPULAB_TEST_SCREENSHOTS")) {
    file->adjustSize();
    file->grab().save(QString::fromUtf8(dir) + QStringLiteral("/file-menu-gpu-limit.png"));
  }
}

}  // namespace
