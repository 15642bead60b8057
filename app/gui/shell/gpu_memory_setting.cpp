#include "shell/gpu_memory_setting.hpp"

#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QSettings>
#include <stdexcept>

#include "gpulab/tiling/tiled_runner.hpp"

namespace gpulab::gui {

namespace {
const QString kKey = QStringLiteral("engine/gpuMemoryLimit");
}  // namespace

QString applyGpuMemoryLimitAtStartup(bool persisted) {
  QString problem;
  if (persisted) {
    const QString saved = QSettings().value(kKey).toString();
    if (!saved.isEmpty()) {
      try {
        setGpuMemoryLimit(parseByteSize(saved.toStdString()));
      } catch (const std::invalid_argument& e) {
        problem = QObject::tr("The saved GPU memory limit is ignored: %1").arg(QString::fromStdString(e.what()));
      }
    }
  }
  try {
    applyGpuMemoryLimitFromEnvironment();
  } catch (const std::invalid_argument& e) {
    problem =
        QObject::tr("The GPU memory limit from the environment is ignored: %1").arg(QString::fromStdString(e.what()));
  }
  return problem;
}

QString gpuMemoryLimitText() {
  const std::size_t limit = gpuMemoryLimit();
  return limit == 0 ? QObject::tr("none (the free memory)") : QString::fromStdString(formatByteSize(limit));
}

QString setGpuMemoryLimitText(const QString& text, bool persisted) {
  const std::size_t bytes = text.trimmed().isEmpty() ? 0 : parseByteSize(text.toStdString());
  setGpuMemoryLimit(bytes);
  if (persisted) QSettings().setValue(kKey, bytes == 0 ? QString() : text.trimmed());
  return QObject::tr("GPU memory limit: %1 (applies to photos opened from now on)").arg(gpuMemoryLimitText());
}

QString editGpuMemoryLimit(QWidget* parent, bool persisted) {
  bool ok = false;
  const std::size_t limit = gpuMemoryLimit();
  const QString current =
      limit == 0 ? QString() : QString::fromStdString(formatByteSize(limit)).remove(QLatin1Char(' '));
  const QString text = QInputDialog::getText(
      parent, QObject::tr("GPU Memory Limit"),
      QObject::tr("GPU memory the engine may use, e.g. 512M or 2GiB (empty or 0: the free memory).\n"
                  "Photos larger than this stay on the host; the CPU side keeps working."),
      QLineEdit::Normal, current, &ok);
  if (!ok) return {};
  try {
    return setGpuMemoryLimitText(text, persisted);
  } catch (const std::invalid_argument& e) {
    QMessageBox::warning(parent, QObject::tr("GPU Memory Limit"), QString::fromStdString(e.what()));
    return {};
  }
}

}  // namespace gpulab::gui
