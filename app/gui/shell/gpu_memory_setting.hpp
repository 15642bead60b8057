// The GUI's GPU memory limit (File > GPU Memory Limit...): what the engine may use on the GPU, as
// gpulab-cli's --gpu-memory-limit. Kept in QSettings ("engine/gpuMemoryLimit", text such as "512M");
// GPULAB_GPU_MEMORY_LIMIT, when set, wins over the saved value. A photo larger than the limit stays
// on the host: the GPU side of a run is skipped with the reason, the CPU side works.
#pragma once

#include <QString>

class QWidget;

namespace gpulab::gui {

/// Applies the saved limit (when `persisted`), then GPULAB_GPU_MEMORY_LIMIT. Returns a sentence when a
/// value could not be read (it is then ignored), empty otherwise.
QString applyGpuMemoryLimitAtStartup(bool persisted);

/// "512 MiB" or "none (the free memory)".
QString gpuMemoryLimitText();

/// Asks for a new limit (a dialog; empty or 0 = none), applies and (when `persisted`) saves it.
/// Returns the status-bar sentence, empty when cancelled. A value that does not parse is refused
/// with its sentence and changes nothing.
QString editGpuMemoryLimit(QWidget* parent, bool persisted);

/// Parses and applies `text` (as the dialog does); the sentence for the status bar. Throws
/// std::invalid_argument with one sentence for a value that does not parse.
QString setGpuMemoryLimitText(const QString& text, bool persisted);

}  // namespace gpulab::gui
