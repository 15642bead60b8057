// gpulab's look: Fusion with a dark palette (photos read better on a dark surround), and the
// toolbar icons, painted so they match the palette at every scale.
#pragma once

#include <QColor>
#include <QIcon>

class QApplication;

namespace gpulab::gui {

/// Sets the Fusion style and gpulab's dark palette on `app`.
void applyTheme(QApplication& app);

enum class IconKind { Open, Save, ZoomIn, ZoomOut, Fit, ActualSize, Undo, Redo };
/// A line icon in `colour` (default: the application palette's button text).
QIcon makeIcon(IconKind kind, QColor colour = {});

}  // namespace gpulab::gui
