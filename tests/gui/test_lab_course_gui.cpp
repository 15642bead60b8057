// The Lab tab's course pages offscreen: the custom-kernel page (a syntax error marked at its line
// and column in the editor and listed; an expression run on the worker into the table, on the CPU
// alone without a GPU; a raw kernel with a compile error marked at its line, a GPU run checked and
// cached the second time), the memory-pool and timing pages (refused without a GPU, run with one),
// the code editor's marks and line-number margin, and the Lab tab's pages. With
// GPULAB_TEST_SCREENSHOTS set, the pages are saved as PNGs there.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QListWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include "lab/course_panels.hpp"
#include "lab/custom_kernel_panel.hpp"
#include "lab/lab_tab.hpp"
#include "shell/engine.hpp"
#include "shell/photo_document.hpp"
#include "shell/tab_services.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"
#include "widgets/code_editor.hpp"
#include "widgets/timings_panel.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() { return test_support::testApplication("test_lab_course_gui"); }

using test_support::waitUntil;

struct Services {
  Engine engine;
  PhotoDocument photo;
  TimingsPanel timings;
  QString lastError;
  TabServices services{engine, photo, timings, [](const QString&) {}, [this](const QString& m) { lastError = m; }};
};

template <class Panel>
bool runAndWait(Panel& panel, void (Panel::*start)(), int timeoutMs = 180000) {
  bool finished = false;
  const auto connection = QObject::connect(&panel, &Panel::runFinished, [&] { finished = true; });
  (panel.*start)();
  const bool ok = waitUntil([&] { return finished; }, timeoutMs);
  QObject::disconnect(connection);
  return ok;
}

void screenshot(QWidget& widget, const char* name) {
  const QByteArray dir = qgetenv("GPULAB_TEST_SCREENSHOTS");
  if (dir.isEmpty()) return;
  widget.grab().save(QString::fromUtf8(dir) + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
}

class LabCourseGui : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    // Compiled kernels go to a private cache, never a person's ~/.cache.
    static QTemporaryDir kernelCache;
    qputenv("GPULAB_KERNEL_CACHE", QFile::encodeName(kernelCache.path()));
  }
};

}  // namespace

TEST_F(LabCourseGui, CodeEditorMarksLinesAndColumns) {
  CodeEditor editor;
  editor.resize(400, 200);
  editor.setPlainText(QStringLiteral("a = 1\nb = (2 +\nc = 3"));
  EXPECT_GE(editor.lineNumberWidth(), 10);
  editor.setMarks({{2, 5, QStringLiteral("error: here"), true}, {9, 1, QStringLiteral("outside"), true}});
  ASSERT_EQ(editor.marks().size(), 2u);
  const QList<QTextEdit::ExtraSelection> selections = editor.extraSelections();
  ASSERT_EQ(selections.size(), 2);  // the line and the column of the mark inside the text
  EXPECT_EQ(selections[0].cursor.blockNumber(), 1);
  EXPECT_EQ(selections[1].cursor.selectedText(), QStringLiteral("("));
  editor.goTo(3, 3);
  EXPECT_EQ(editor.textCursor().blockNumber(), 2);
  EXPECT_EQ(editor.textCursor().positionInBlock(), 2);
  editor.insertPlainText(QStringLiteral("x"));  // an edit makes the marks stale
  EXPECT_TRUE(editor.marks().empty());
  EXPECT_TRUE(editor.extraSelections().isEmpty());
}

TEST_F(LabCourseGui, SyntaxErrorIsMarkedAtItsColumn) {
  Services s;
  CustomKernelPanel panel(s.services);
  panel.resize(1200, 700);
  panel.setCode(QStringLiteral("y = sin(x)*2\nz = y + (x * 3"));
  ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
  EXPECT_TRUE(panel.lastRunFailed());
  EXPECT_TRUE(panel.statusText().startsWith(QStringLiteral("line 2, column 15: expected ')'")))
      << panel.statusText().toStdString();
  ASSERT_EQ(panel.editor().marks().size(), 1u);
  EXPECT_EQ(panel.editor().marks()[0].line, 2);
  EXPECT_EQ(panel.editor().marks()[0].column, 15);
  ASSERT_EQ(panel.diagnosticTexts().size(), 1);
  EXPECT_TRUE(panel.diagnosticTexts()[0].startsWith(QStringLiteral("line 2, column 15: error: expected ')'")));
  screenshot(panel, "lab-custom-syntax-error");
}

TEST_F(LabCourseGui, BadFieldsAreRefusedAtOnce) {
  Services s;
  CustomKernelPanel panel(s.services);
  panel.setSizeText(QStringLiteral("lots"));
  ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
  EXPECT_TRUE(panel.lastRunFailed());
  EXPECT_TRUE(panel.statusText().contains(QStringLiteral("lots"))) << panel.statusText().toStdString();
  panel.setSizeText(QStringLiteral("1000"));
  panel.setMode(CustomKernelPanel::Mode::Raw);
  panel.setRawKernel(QStringLiteral("axpb"), QStringLiteral("in:x bogus:y"), {});
  ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
  EXPECT_TRUE(panel.lastRunFailed());
  EXPECT_TRUE(panel.statusText().contains(QStringLiteral("bogus:y"))) << panel.statusText().toStdString();
}

TEST_F(LabCourseGui, ModesKeepTheirOwnText) {
  Services s;
  CustomKernelPanel panel(s.services);
  panel.setCode(QStringLiteral("q = x + 1"));
  panel.setMode(CustomKernelPanel::Mode::Raw);
  EXPECT_TRUE(panel.editor().toPlainText().contains(QStringLiteral("__global__")));
  panel.setMode(CustomKernelPanel::Mode::Elementwise);
  EXPECT_EQ(panel.editor().toPlainText(), QStringLiteral("q = x + 1"));
}

TEST_F(LabCourseGui, ExpressionRunsOnTheWorker) {
  Services s;
  CustomKernelPanel panel(s.services);
  panel.resize(1200, 700);
  panel.setSizeText(QStringLiteral("100000"));
  panel.setReps(3);
  ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
  ASSERT_FALSE(panel.lastRunFailed()) << panel.statusText().toStdString();
  ASSERT_TRUE(panel.lastRun());
  if (cudaAvailable()) {
    EXPECT_TRUE(panel.lastRun()->gpuRan);
    EXPECT_TRUE(panel.lastRun()->passed);
    EXPECT_EQ(panel.table().rowCount(), 2);
    EXPECT_EQ(panel.table().item(0, 0)->text(), QStringLiteral("gpu_elementwise"));
    // The second run of the same source takes the compiled kernel from the cache.
    ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
    EXPECT_NE(panel.lastRun()->compiled.cache, lab::CacheOutcome::Compiled);
    EXPECT_TRUE(panel.statusText().contains(QStringLiteral("cached"))) << panel.statusText().toStdString();
  } else {
    EXPECT_FALSE(panel.lastRun()->gpuRan);
    EXPECT_EQ(panel.table().rowCount(), 1);
    EXPECT_EQ(panel.table().item(0, 0)->text(), QStringLiteral("cpu"));
    EXPECT_TRUE(panel.statusText().contains(QStringLiteral("No CUDA device"))) << panel.statusText().toStdString();
  }
  screenshot(panel, "lab-custom-expression");
}

TEST_F(LabCourseGui, RawKernelCompileErrorMarkedOrNoDeviceSaid) {
  Services s;
  CustomKernelPanel panel(s.services);
  panel.resize(1200, 700);
  panel.setMode(CustomKernelPanel::Mode::Raw);
  panel.setCode(
      QStringLiteral("extern \"C\" __global__ void axpb(const float* x, float* y, float a, float b, long long n) {\n"
                     "  y[0] = a * x[0] + undefined_b;\n}\n"));
  ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
  EXPECT_TRUE(panel.lastRunFailed());
  if (!cudaAvailable()) {
    EXPECT_TRUE(panel.statusText().contains(QStringLiteral("needs a CUDA device"))) << panel.statusText().toStdString();
    return;
  }
  ASSERT_FALSE(panel.editor().marks().empty());
  EXPECT_EQ(panel.editor().marks()[0].line, 2);
  EXPECT_EQ(panel.editor().marks()[0].column, 21);
  screenshot(panel, "lab-custom-compile-error");
}

TEST_F(LabCourseGui, RawKernelRunsCheckedOnAGpu) {
  GPULAB_REQUIRE_GPU();
  Services s;
  CustomKernelPanel panel(s.services);
  panel.resize(1200, 700);
  panel.setMode(CustomKernelPanel::Mode::Raw);  // the example: axpb with its arguments and check
  panel.setSizeText(QStringLiteral("100003"));
  panel.setReps(3);
  ASSERT_TRUE(runAndWait(panel, &CustomKernelPanel::compileAndRun));
  ASSERT_FALSE(panel.lastRunFailed()) << panel.statusText().toStdString();
  EXPECT_TRUE(panel.lastRun()->checked);
  EXPECT_EQ(panel.table().rowCount(), 2);
  screenshot(panel, "lab-custom-raw");
}

TEST_F(LabCourseGui, PoolAndTimingPages) {
  Services s;
  PoolPanel pool(s.services);
  pool.resize(1200, 600);
  pool.setAllocations(200, QStringLiteral("1K"), QStringLiteral("2M"), 8, 2);
  ASSERT_TRUE(runAndWait(pool, &PoolPanel::run));
  TimingPanel timing(s.services);
  timing.resize(1200, 600);
  timing.setWork(QStringLiteral("10,20000"), QStringLiteral("256K"), 5);
  ASSERT_TRUE(runAndWait(timing, &TimingPanel::run));
  if (!cudaAvailable()) {
    EXPECT_TRUE(pool.lastRunFailed());
    EXPECT_TRUE(pool.statusText().contains(QStringLiteral("needs a CUDA device"))) << pool.statusText().toStdString();
    EXPECT_TRUE(timing.lastRunFailed());
    EXPECT_TRUE(timing.statusText().contains(QStringLiteral("needs a CUDA device")));
    screenshot(pool, "lab-pool-no-gpu");
    screenshot(timing, "lab-timing-no-gpu");
    return;
  }
  EXPECT_FALSE(pool.lastRunFailed()) << pool.statusText().toStdString();
  EXPECT_EQ(pool.records().size(), 2u);
  EXPECT_TRUE(pool.summaryText().contains(QStringLiteral("cudaMemPoolTrimTo")));
  EXPECT_FALSE(timing.lastRunFailed()) << timing.statusText().toStdString();
  EXPECT_GE(timing.records().size(), 8u);  // 6 rows, then the cold start
  EXPECT_TRUE(timing.lessonsText().contains(QStringLiteral("cold start"))) << timing.lessonsText().toStdString();
  screenshot(pool, "lab-pool");
  screenshot(timing, "lab-timing");
}

TEST_F(LabCourseGui, BadPoolAndTimingFieldsAreRefused) {
  Services s;
  PoolPanel pool(s.services);
  pool.setAllocations(10, QStringLiteral("1M"), QStringLiteral("1K"), 1, 1);
  ASSERT_TRUE(runAndWait(pool, &PoolPanel::run));
  EXPECT_TRUE(pool.lastRunFailed());
  EXPECT_TRUE(pool.statusText().contains(QStringLiteral("below the smallest")));
  TimingPanel timing(s.services);
  timing.setWork(QStringLiteral("10,abc"), QStringLiteral("1M"), 5);
  ASSERT_TRUE(runAndWait(timing, &TimingPanel::run));
  EXPECT_TRUE(timing.lastRunFailed());
  EXPECT_TRUE(timing.statusText().contains(QStringLiteral("abc")));
}

TEST_F(LabCourseGui, LabTabHasTheCoursePages) {
  Services s;
  LabTab tab(s.services);
  tab.resize(1400, 900);
  auto* pages = tab.findChild<QTabWidget*>(QStringLiteral("labPages"));
  ASSERT_NE(pages, nullptr);
  ASSERT_EQ(pages->count(), 4);
  EXPECT_EQ(pages->tabText(1), QStringLiteral("Custom kernel"));
  EXPECT_EQ(pages->tabText(2), QStringLiteral("Memory pool"));
  EXPECT_EQ(pages->tabText(3), QStringLiteral("Timing pitfalls"));
  EXPECT_NE(tab.findChild<CustomKernelPanel*>(), nullptr);
  pages->setCurrentIndex(1);
  screenshot(tab, "lab-tab-custom");
}
