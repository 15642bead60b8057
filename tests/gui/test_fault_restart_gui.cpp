// Restarting gpulab after a GPU fault it cannot recover from in the process (shell/fault_restart.hpp,
// MainWindow::restartAfterGpuFault / restoreAfterRestart).
//
// FaultRestartGui (no GPU needed; Engine::gpuLost is emitted by hand, and the process replacement is
// recorded instead of done): the restore file's round trip, the restored window's status line, the
// dialog (Restart by default, Escape continues on the CPU), the state a restart hands over (tab,
// Filters operation, Mandelbrot view, an edited photo as a lossless copy), the restore in a new
// window, the restart limit and a failed execve. With GPULAB_TEST_SCREENSHOTS=DIR the dialog and the
// restored window are saved there.
//
// GpuFaultRelaunch (a CUDA device): the gpulab binary, offscreen with --apply --screenshot and the
// test-only GPULAB_TEST_INJECT_GPU_FAULT=once, faults, restarts itself, restores and writes the
// screenshot. It faults the device on purpose: compute-sanitizer leaves out *GpuFaultRelaunch*.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QKeyEvent>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <cstdlib>
#include <optional>

#include "filters/filters_tab.hpp"
#include "gpulab/core/relaunch.hpp"
#include "gpulab/io/image_io.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"
#include "shell/fault_restart.hpp"
#include "shell/main_window.hpp"
#include "shell/theme.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"
#include "support/program_runner.hpp"

namespace gpulab::gui {
namespace {

using test_support::waitUntil;

QApplication& app() { return test_support::testApplication("test_fault_restart_gui"); }

const QString kLost = QStringLiteral(
    "The GPU faulted (an illegal memory access was encountered, seen by cudaStreamSynchronize); the device could not "
    "be reset (cudaErrorDevicesUnavailable: CUDA-capable device(s) is/are busy or unavailable), so gpulab runs CPU "
    "only until it is restarted");
const QString kFault =
    QStringLiteral("The GPU faulted (an illegal memory access was encountered, seen by cudaStreamSynchronize)");

void saveShot(QWidget& widget, const char* name) {
  const QByteArray dir = qgetenv("GPULAB_TEST_SCREENSHOTS");
  if (!dir.isEmpty()) widget.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QLatin1String(name)));
}

/// A started main window whose restart records the plan instead of replacing the process.
struct Window {
  std::optional<RelaunchPlan> plan;
  std::string failure;  // what the recorded relaunch answers ("": it "succeeded")
  MainWindow window;

  explicit Window(bool ask = true)
      : window({.persistSettings = false,
                .errorDialogs = false,
                .restartWithoutAsking = !ask,
                .relaunch = [this](const RelaunchPlan& p) {
                  plan = p;
                  return failure;
                }}) {
    bool started = false;
    QObject::connect(&window, &MainWindow::startupFinished, [&] { started = true; });
    window.resize(1200, 800);
    window.show();
    window.startUp({});
    EXPECT_TRUE(waitUntil([&] { return started; }));
  }
};

/// A key press and release on `widget`, as the keyboard sends them.
void press(QWidget* widget, int key) {
  QKeyEvent down(QEvent::KeyPress, key, Qt::NoModifier);
  QApplication::sendEvent(widget, &down);
  QKeyEvent up(QEvent::KeyRelease, key, Qt::NoModifier);
  QApplication::sendEvent(widget, &up);
}

QMessageBox* dialog(QWidget& parent) { return parent.findChild<QMessageBox*>(QStringLiteral("gpuLostDialog")); }

/// The restore file a recorded plan names.
std::optional<RestoreState> stateOf(const RelaunchPlan& plan) {
  const auto at = std::find(plan.arguments.begin(), plan.arguments.end(), std::string(kRestoreOption));
  if (at == plan.arguments.end() || at + 1 == plan.arguments.end()) return std::nullopt;
  QString error;
  auto state = readRestoreState(QString::fromStdString(*(at + 1)), &error);
  EXPECT_TRUE(state.has_value()) << error.toStdString();
  QFile::remove(QString::fromStdString(*(at + 1)));
  return state;
}

TEST(FaultRestartGui, RestoreFileRoundTrips) {
  QTemporaryDir dir;
  RestoreState state;
  state.fault = kFault;
  state.photo = dir.filePath(QStringLiteral("ünïcode photo.png"));
  state.photoName = QStringLiteral("coffee.png, box r=3");
  state.photoEdited = true;
  state.tab = QStringLiteral("Mandelbrot");
  state.filtersOperation = QStringLiteral("sobel");
  state.mandelbrotCenterX = QStringLiteral("-1.7400623825793399052208965570624873");
  state.mandelbrotCenterY = QStringLiteral("0.0281753397792110489924115211443195");
  state.mandelbrotWidth = QStringLiteral("1e-500");
  state.geometry = QByteArray("\x01\x00\xff geometry", 12);
  state.problems = {QStringLiteral("one"), QStringLiteral("two")};
  const QString file = dir.filePath(QStringLiteral("state.json"));
  ASSERT_EQ(writeRestoreState(state, file), QString());
  QString error;
  const std::optional<RestoreState> back = readRestoreState(file, &error);
  ASSERT_TRUE(back.has_value()) << error.toStdString();
  EXPECT_EQ(*back, state);

  EXPECT_FALSE(readRestoreState(dir.filePath(QStringLiteral("missing.json")), &error));
  EXPECT_TRUE(error.startsWith(QStringLiteral("cannot read "))) << error.toStdString();
  QFile junk(dir.filePath(QStringLiteral("junk.json")));
  ASSERT_TRUE(junk.open(QIODevice::WriteOnly));
  junk.write("{\"version\": 99}");
  junk.close();
  EXPECT_FALSE(readRestoreState(junk.fileName(), &error));
  EXPECT_TRUE(error.endsWith(QStringLiteral("is a restore file of another gpulab version"))) << error.toStdString();
  EXPECT_NE(writeRestoreState(state, dir.filePath(QStringLiteral("no/such/dir/state.json"))), QString());
}

TEST(FaultRestartGui, SummarySaysWhatWasKeptAndWhatWasLost) {
  RestoreState state;
  state.fault = kFault;
  state.photoName = QStringLiteral("coffee.png");
  state.tab = QStringLiteral("Filters");
  state.filtersOperation = QStringLiteral("box");
  state.mandelbrotWidth = QStringLiteral("3");
  const QString expected = QStringLiteral(
      "gpulab restarted after a GPU fault (restart 1 of 2) and restored the photo coffee.png, the Filters tab, "
      "operation box and the Mandelbrot view; lost: the undo history, results on screen, timings. The fault: ");
  EXPECT_EQ(restoredSummary(state, 1).toStdString(), (expected + kFault).toStdString());
  RestoreState bare;
  bare.photoName = QStringLiteral("x.npy");
  bare.photoEdited = true;
  bare.problems = {QStringLiteral("the Filters operation zap is not known")};
  EXPECT_EQ(restoredSummary(bare, 2).toStdString(),
            QStringLiteral("gpulab restarted after a GPU fault (restart 2 of 2) and restored the edited photo x.npy "
                           "(from a lossless copy); lost: the undo history, results on screen, timings; the Filters "
                           "operation zap is not known")
                .toStdString());
  EXPECT_EQ(faultClause(kLost), kFault);
}

TEST(FaultRestartGui, DialogRestartsByDefaultAndEscapeContinuesOnTheCpu) {
  applyTheme(app());  // the screenshots show what a person sees
  ::unsetenv(kFaultRestartsVariable);
  Window w;
  emit w.window.engine().gpuLost(kLost);
  ASSERT_TRUE(waitUntil([&] { return dialog(w.window) != nullptr && dialog(w.window)->isVisible(); }));
  QMessageBox* box = dialog(w.window);
  auto* restart = box->findChild<QPushButton*>(QStringLiteral("restartButton"));
  auto* cpu = box->findChild<QPushButton*>(QStringLiteral("continueOnCpuButton"));
  ASSERT_NE(restart, nullptr);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(box->defaultButton(), restart);
  EXPECT_EQ(box->escapeButton(), cpu);
  EXPECT_TRUE(box->informativeText().startsWith(kLost));
  EXPECT_TRUE(restart->text().contains(QStringLiteral("your photo, the tab and the Mandelbrot view are kept")));
  saveShot(*box, "gpu-lost-dialog.png");
  saveShot(w.window, "gpu-lost-dialog-window.png");

  press(box, Qt::Key_Escape);
  ASSERT_TRUE(waitUntil([&] { return dialog(w.window) == nullptr; }));
  EXPECT_FALSE(w.plan.has_value()) << "Continue on the CPU does not restart";
  EXPECT_EQ(w.window.statusBar()->currentMessage(),
            QStringLiteral("Continuing on the CPU: the GPU comes back when gpulab restarts"));

  // Enter takes the default: the restart.
  emit w.window.engine().gpuLost(kLost);
  ASSERT_TRUE(waitUntil([&] { return dialog(w.window) != nullptr && dialog(w.window)->isVisible(); }));
  press(dialog(w.window), Qt::Key_Return);
  ASSERT_TRUE(waitUntil([&] { return w.plan.has_value(); }));
  EXPECT_TRUE(stateOf(*w.plan).has_value());
}

TEST(FaultRestartGui, RestartHandsOverTheTabOperationAndViewAndTheNewWindowRestoresThem) {
  (void)app();
  ::unsetenv(kFaultRestartsVariable);
  std::optional<RestoreState> state;
  {
    Window w(/*ask=*/false);
    auto* filters = w.window.findChild<FiltersTab*>();
    auto* mandelbrot = w.window.findChild<MandelbrotTab*>();
    ASSERT_TRUE(filters != nullptr && mandelbrot != nullptr);
    ASSERT_TRUE(filters->setOperation(QStringLiteral("sobel")));
    ASSERT_TRUE(mandelbrot->goToLocation(QStringLiteral("-0.743643887037151, 0.131825904205330, 0.000123")));
    ASSERT_TRUE(w.window.selectTab(QStringLiteral("Filters")));
    emit w.window.engine().gpuLost(kLost);
    ASSERT_TRUE(waitUntil([&] { return w.plan.has_value(); }));
    EXPECT_EQ(dialog(w.window), nullptr) << "restartWithoutAsking: no question";
    EXPECT_EQ(w.plan->program, "/proc/self/exe");
    EXPECT_EQ(w.plan->arguments.front(), currentArguments().front());
    EXPECT_EQ(environmentValue(w.plan->environment, kFaultRestartsVariable), "1");
    EXPECT_EQ(environmentValue(w.plan->environment, kFaultReasonVariable), kFault.toStdString());
    state = stateOf(*w.plan);
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(state->fault, kFault);
    EXPECT_EQ(state->tab, QStringLiteral("Filters"));
    EXPECT_EQ(state->filtersOperation, QStringLiteral("sobel"));
    EXPECT_EQ(state->mandelbrotCenterX.left(12), QStringLiteral("-0.743643887"));
    EXPECT_EQ(state->mandelbrotWidth, QStringLiteral("0.000123"));
    EXPECT_FALSE(state->photoEdited);
    EXPECT_EQ(state->photoName, QStringLiteral("coffee.png"));
    EXPECT_FALSE(state->geometry.isEmpty());
  }
  // The new process: a fresh window restores it.
  MainWindow restored({.persistSettings = false, .errorDialogs = false});
  QString summary;
  QObject::connect(&restored, &MainWindow::restored, [&](const QString& s) { summary = s; });
  restored.restoreAfterRestart(*state, 1);
  restored.show();
  restored.startUp(state->photo, !state->photoEdited);
  ASSERT_TRUE(waitUntil([&] { return !summary.isEmpty(); }));
  EXPECT_EQ(restored.currentTabName(), QStringLiteral("Filters"));
  EXPECT_EQ(restored.findChild<FiltersTab*>()->operation(), QStringLiteral("sobel"));
  const MandelbrotView& view = restored.findChild<MandelbrotTab*>()->view();
  EXPECT_EQ(QString::fromStdString(view.width.toString()), QStringLiteral("0.000123"));
  EXPECT_EQ(QString::fromStdString(view.centerX.toString()), state->mandelbrotCenterX);
  // Where it ends up depends on the machine: on the GPU again where there is one, else on the host.
  const QString where = cudaAvailable() ? QStringLiteral("the photo is on the GPU again")
                                        : QStringLiteral("the photo is on the host only (no GPU)");
  EXPECT_EQ(summary, restoredSummary(*state, 1, where));
  EXPECT_TRUE(summary.contains(QStringLiteral("Mandelbrot view; ") + where + QStringLiteral("; lost: ")))
      << summary.toStdString();
  EXPECT_EQ(restored.statusBar()->currentMessage(), summary);
  EXPECT_EQ(restored.photo().displayName(), QStringLiteral("coffee.png"));
  saveShot(restored, "gpu-restart-restored.png");
}

TEST(FaultRestartGui, AnEditedPhotoTravelsAsALosslessCopy) {
  (void)app();
  ::unsetenv(kFaultRestartsVariable);
  Window w(/*ask=*/false);
  // A photo a job produced (as Keep result does): not the file that was opened.
  const Image edited = test::randomImage(61, 37, 3, PixelType::U8, 7);
  bool set = false;
  w.window.engine().submit(
      nullptr, [edited](WorkerContext& ctx) { ctx.setPhoto(edited, QStringLiteral("coffee.png, box r=3")); },
      [&] { set = true; });
  ASSERT_TRUE(waitUntil([&] { return set && w.window.photo().current().width == 61; }));
  emit w.window.engine().gpuLost(kLost);
  ASSERT_TRUE(waitUntil([&] { return w.plan.has_value(); }));
  const std::optional<RestoreState> state = stateOf(*w.plan);
  ASSERT_TRUE(state.has_value());
  EXPECT_TRUE(state->photoEdited);
  EXPECT_TRUE(state->photo.endsWith(QStringLiteral(".npy"))) << state->photo.toStdString();
  const Image copy = loadImage(QFile::encodeName(state->photo).toStdString());
  EXPECT_TRUE(test::imagesNear(edited, copy, 0.0));
  QFile::remove(state->photo);
}

TEST(FaultRestartGui, AtTheLimitOrWhenExecveFailsItGoesOnCpuOnly) {
  (void)app();
  {
    ::setenv(kFaultRestartsVariable, "2", 1);
    Window w;
    QString why;
    QObject::connect(&w.window, &MainWindow::restartFailed, [&](const QString& s) { why = s; });
    emit w.window.engine().gpuLost(kLost);
    EXPECT_EQ(why, QStringLiteral("the restart limit is reached"));
    EXPECT_EQ(dialog(w.window), nullptr);
    EXPECT_FALSE(w.plan.has_value());
    EXPECT_EQ(w.window.statusBar()->currentMessage(),
              kFault + QStringLiteral("; gpulab restarted 2 times after GPU faults already, so it goes on CPU only"));
    ::unsetenv(kFaultRestartsVariable);
  }
  Window w(/*ask=*/false);
  w.failure = "gpulab could not restart itself: execve /proc/self/exe: Permission denied";
  QString why;
  QObject::connect(&w.window, &MainWindow::restartFailed, [&](const QString& s) { why = s; });
  emit w.window.engine().gpuLost(kLost);
  ASSERT_TRUE(waitUntil([&] { return !why.isEmpty(); }));
  EXPECT_EQ(why, QString::fromStdString(w.failure));
  EXPECT_EQ(w.window.statusBar()->currentMessage(),
            QStringLiteral("gpulab could not restart (execve /proc/self/exe: Permission denied), so it goes on CPU "
                           "only"));
}

// ---------------------------------------------------------------------------------------------
// GpuFaultRelaunch: the real binary, a real fault, a real restart

TEST(GpuFaultRelaunch, GuiRestartsItselfRestoresAndTakesTheScreenshot) {
  GPULAB_REQUIRE_GPU();
  QTemporaryDir dir;
  for (const QString& mode : {QString(), QStringLiteral("child")}) {  // in place (the default), as a child
    SCOPED_TRACE("GPULAB_RELAUNCH=" + mode.toStdString());
    const QString shot = dir.filePath(QStringLiteral("after-restart%1.png").arg(mode));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("GPULAB_TEST_INJECT_GPU_FAULT"), QStringLiteral("once"));
    env.insert(QString::fromLatin1(kRelaunchModeVariable), mode);
    env.remove(QString::fromLatin1(kFaultRestartsVariable));
    const test::ProgramRun run =
        test::runProgram(QStringLiteral(GPULAB_GUI_PATH),
                         {QStringLiteral("--screenshot"), shot, QStringLiteral("--size"), QStringLiteral("1200x800"),
                          QStringLiteral("--filters-op"), QStringLiteral("box"), QStringLiteral("--apply")},
                         env);
    ASSERT_EQ(run.exitCode, 0) << run.describe();
    EXPECT_TRUE(run.err.contains(QStringLiteral("gpulab: The GPU faulted ("))) << run.describe();
    EXPECT_TRUE(run.err.contains(QStringLiteral("gpulab restarts itself to get a new CUDA context (restart 1 of 2)")))
        << run.describe();
    EXPECT_TRUE(
        run.err.contains(QStringLiteral("gpulab restarted after a GPU fault (restart 1 of 2) and restored the "
                                        "photo coffee.png, the Filters tab, operation box")))
        << run.describe();
    EXPECT_TRUE(run.err.contains(QStringLiteral("; the photo is on the GPU again; lost: "))) << run.describe();
    EXPECT_TRUE(QFile::exists(shot)) << run.describe();
    if (const QByteArray out = qgetenv("GPULAB_TEST_SCREENSHOTS"); !out.isEmpty())
      QFile::copy(shot,
                  QDir(QString::fromLocal8Bit(out)).filePath(QStringLiteral("gpu-restart-screenshot%1.png").arg(mode)));
  }
}

}  // namespace
}  // namespace gpulab::gui
