// MainWindow: restarting gpulab after a GPU fault it cannot recover from in this process, and
// restoring what the restart keeps (shell/fault_restart.hpp).
#include <unistd.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <cstdio>
#include <filesystem>

#include "filters/filters_tab.hpp"
#include "gpulab/core/relaunch.hpp"
#include "gpulab/io/image_io.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"
#include "shell/main_window.hpp"

namespace gpulab::gui {

namespace {

std::filesystem::path toPath(const QString& path) { return QFile::encodeName(path).toStdString(); }

/// The temporary file `suffix` of this process ("/tmp/gpulab-restore-1234.json"); the process
/// restarted keeps the process id, so a second restart writes over the first's files.
QString temporaryFile(const QString& suffix) {
  return QDir(QDir::tempPath()).filePath(QStringLiteral("gpulab-restore-%1%2").arg(::getpid()).arg(suffix));
}

}  // namespace

RestoreState MainWindow::stateForRestart() const {
  RestoreState state;
  state.tab = currentTabName();
  if (const auto* filters = findChild<FiltersTab*>()) state.filtersOperation = filters->operation();
  if (const auto* mandelbrot = findChild<MandelbrotTab*>()) {
    const gpulab::MandelbrotView& view = mandelbrot->view();
    state.mandelbrotCenterX = QString::fromStdString(view.centerX.toString());
    state.mandelbrotCenterY = QString::fromStdString(view.centerY.toString());
    state.mandelbrotWidth = QString::fromStdString(view.width.toString());
  }
  state.geometry = saveGeometry();
  if (photo_.hasPhoto()) {
    state.photo = currentFile_;
    state.photoName = photo_.displayName();
    // A photo made by a job (Keep result) is not the file it came from.
    state.photoEdited = photo_.current().source != currentFile_;
  }
  return state;
}

void MainWindow::offerRestart(const QString& message) {
  gpuLostMessage_ = message;
  if (!gpulab::mayRestartAfterFault()) {
    showMessage(tr("%1; gpulab restarted %2 times after GPU faults already, so it goes on CPU only")
                    .arg(faultClause(message))
                    .arg(gpulab::faultRestarts()),
                0);
    emit restartFailed(tr("the restart limit is reached"));
    return;
  }
  if (options_.restartWithoutAsking) return restartAfterGpuFault(message);
  QMessageBox* box = createGpuLostDialog(message, this);
  connect(box, &QMessageBox::finished, this, [this, box, message] {
    if (box->clickedButton() != nullptr && box->clickedButton()->objectName() == QLatin1String("restartButton"))
      restartAfterGpuFault(message);
    else
      showMessage(tr("Continuing on the CPU: the GPU comes back when gpulab restarts"), 0);
  });
  box->open();
}

void MainWindow::restartAfterGpuFault(const QString& message) {
  RestoreState state = stateForRestart();
  state.fault = faultClause(message);
  if (!state.photoEdited) return relaunchWith(state);
  // The edited photo lives on the worker (its host copy survives the fault): a lossless .npy copy.
  const QString copy = temporaryFile(QStringLiteral(".npy"));
  showMessage(tr("Saving the photo for the restart..."), 0);
  engine_.submit(
      this, [file = toPath(copy)](WorkerContext& ctx) { gpulab::saveImage(ctx.photo(), file); },
      [this, state, copy]() mutable {
        state.photo = copy;
        relaunchWith(state);
      },
      {.failed = [this, state](const QString& why) mutable {
        state.photoEdited = false;
        state.problems << tr("the edited photo could not be kept (%1), so its file was opened again").arg(why);
        relaunchWith(state);
      }});
}

void MainWindow::relaunchWith(const RestoreState& state) {
  const QString file = temporaryFile(QStringLiteral(".json"));
  QString failure = writeRestoreState(state, file);
  if (failure.isEmpty()) {
    try {
      std::vector<std::string> arguments = gpulab::currentArguments();
      gpulab::setArgumentValue(arguments, kRestoreOption, file.toStdString());
      const gpulab::RelaunchPlan plan =
          gpulab::planFaultRestart(std::move(arguments), gpulab::currentEnvironment(), state.fault.toStdString());
      std::fprintf(stderr, "gpulab: %s; gpulab restarts itself to get a new CUDA context (%s)\n",
                   qPrintable(state.fault), gpulab::describeRestart(gpulab::faultRestarts() + 1).c_str());
      std::fflush(stderr);
      if (options_.relaunch) {
        failure = QString::fromStdString(options_.relaunch(plan));
      } else {
        // A child process takes over (GPULAB_RELAUNCH=child): this one only waits for it, unseen.
        QList<QWidget*> hidden;
        if (plan.mode == gpulab::RelaunchMode::ChildProcess)
          for (QWidget* widget : QApplication::topLevelWidgets())
            if (widget->isVisible()) {
              widget->hide();
              hidden << widget;
            }
        QCoreApplication::processEvents();
        failure = QString::fromStdString(gpulab::relaunch(plan));  // returns only when it failed
        for (QWidget* widget : hidden) widget->show();
      }
    } catch (const std::exception& e) {
      failure = QString::fromStdString(e.what());
    }
  }
  if (failure.isEmpty()) return;  // a test's relaunch that records the plan
  QFile::remove(file);
  QString why = failure;
  if (const QString prefix = QStringLiteral("gpulab could not restart itself: "); why.startsWith(prefix))
    why.remove(0, prefix.size());
  showMessage(tr("gpulab could not restart (%1), so it goes on CPU only").arg(why), 0);
  emit restartFailed(failure);
}

void MainWindow::restoreAfterRestart(const RestoreState& state, int restart) {
  if (!state.tab.isEmpty()) selectTab(state.tab);
  auto* filters = findChild<FiltersTab*>();
  QStringList problems = state.problems;
  if (filters != nullptr && !state.filtersOperation.isEmpty() && !filters->setOperation(state.filtersOperation))
    problems << tr("the Filters operation %1 is not known").arg(state.filtersOperation);
  if (auto* mandelbrot = findChild<MandelbrotTab*>(); mandelbrot != nullptr && !state.mandelbrotWidth.isEmpty()) {
    try {
      gpulab::MandelbrotView view = mandelbrot->view();
      view.centerX = gpulab::DecimalNumber::parse(state.mandelbrotCenterX.toStdString());
      view.centerY = gpulab::DecimalNumber::parse(state.mandelbrotCenterY.toStdString());
      view.width = gpulab::DeepWidth::parse(state.mandelbrotWidth.toStdString());
      const gpulab::MandelbrotView& now = mandelbrot->view();
      if (!(view.centerX == now.centerX && view.centerY == now.centerY && view.width == now.width))
        mandelbrot->navigate(view);
    } catch (const std::exception& e) {
      problems << tr("the Mandelbrot view could not be restored (%1)").arg(QString::fromUtf8(e.what()));
    }
  }
  if (!state.geometry.isEmpty()) restoreGeometry(state.geometry);
  RestoreState shown = state;
  shown.problems = problems;
  connect(
      this, &MainWindow::startupFinished, this,
      [this, shown, restart] {
        RestoreState result = shown;
        if (!startupError_.isEmpty()) {
          result.photoName.clear();
          result.problems << tr("the photo could not be opened again (%1)").arg(startupError_);
        }
        if (shown.photoEdited) QFile::remove(shown.photo);  // the copy is on the worker now
        // Where the photo is now: on the GPU again is what the restart was for.
        QString place;
        if (photo_.hasPhoto()) {
          const PhotoUpdate& now = photo_.current();
          place =
              now.onGpu
                  ? tr("the photo is on the GPU again")
                  : tr("the photo is on the host only (%1)").arg(now.gpuNote.isEmpty() ? tr("no GPU") : now.gpuNote);
        }
        const QString summary = restoredSummary(result, restart, place);
        showMessage(summary, 0);
        std::fprintf(stderr, "%s\n", qPrintable(summary));  // "gpulab restarted after ..."
        std::fflush(stderr);
        emit restored(summary);
      },
      Qt::SingleShotConnection);
}

}  // namespace gpulab::gui
