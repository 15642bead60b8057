// Restarting gpulab after a GPU fault that the worker could not recover from (Engine::gpuLost: the
// driver gives the process no new CUDA context, see gpulab/core/relaunch.hpp). The main window asks
// (createGpuLostDialog: "Restart gpulab now" or "Continue on the CPU"), or restarts without asking in
// unattended runs (--screenshot, --zoom-benchmark) and under GPULAB_RESTART_ON_FAULT=1. What survives
// the restart is a RestoreState, written as JSON to a temporary file the new process gets with
// --restore-after-fault FILE: the photo (its file, or a lossless .npy copy of an edited photo), the
// tab, the Filters operation, the Mandelbrot view and the window geometry. The undo history, the
// results on screen and the timings are lost, and the restored window says so.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <optional>

class QMessageBox;
class QWidget;

namespace gpulab::gui {

struct RestoreState {
  QString fault;              ///< the sentence of the fault ("The GPU faulted (...)")
  QString photo;              ///< the file to open; empty: the bundled photo
  QString photoName;          ///< what the photo was called on screen ("coffee.png, box r=3")
  bool photoEdited = false;   ///< `photo` is a temporary lossless copy of an edited photo
  QString tab;                ///< the tab's title
  QString filtersOperation;   ///< the Filters tab's operation
  QString mandelbrotCenterX;  ///< the Mandelbrot view, every digit (DecimalNumber::toString)
  QString mandelbrotCenterY;
  QString mandelbrotWidth;  ///< DeepWidth::toString
  QByteArray geometry;      ///< QWidget::saveGeometry
  QStringList problems;     ///< what could not be kept, one sentence each

  friend bool operator==(const RestoreState&, const RestoreState&) = default;
};

/// The option that hands a RestoreState file to the restarted process.
inline constexpr const char* kRestoreOption = "--restore-after-fault";
/// GPULAB_RESTART_ON_FAULT=1: restart after a lost GPU without asking (for tests and kiosks).
bool restartOnFaultWithoutAsking();

/// Writes `state` as JSON to `path`; empty, or one sentence why it could not.
QString writeRestoreState(const RestoreState& state, const QString& path);
/// Reads what writeRestoreState wrote; nullopt with `*error` set (one sentence) when it cannot.
std::optional<RestoreState> readRestoreState(const QString& path, QString* error);

/// "gpulab restarted after a GPU fault (restart 1 of 2) and restored the photo coffee.png, the Filters
/// tab, operation box and the Mandelbrot view; lost: the undo history, results on screen, timings. The
/// fault: ...": the status line of the new process.
/// `photoPlace` ("the photo is on the GPU again"), when given, follows what was restored.
QString restoredSummary(const RestoreState& state, int restart, const QString& photoPlace = {});

/// The question after a lost GPU: `message` (the worker's sentence), then Restart gpulab now (the
/// default; object name "restartButton") or Continue on the CPU (Escape; "continueOnCpuButton").
/// Not shown yet: open() it. Object name "gpuLostDialog".
QMessageBox* createGpuLostDialog(const QString& message, QWidget* parent);

/// "The GPU faulted (an illegal memory access ...)": the first clause of the worker's sentence.
QString faultClause(const QString& message);

}  // namespace gpulab::gui
