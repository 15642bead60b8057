// Tool buttons in a row as one segmented control (Split | Original | Result): checkable buttons and
// the style sheet that joins them, the checked segment in the highlight colour. The first and last
// buttons get the property "segment" = "first" / "last" for their rounded outer corners.
#pragma once

#include <QString>

class QToolButton;

namespace gpulab::gui {

/// A checkable, text-only tool button.
QToolButton* makeToggle(const QString& text, const QString& tip);
/// The style sheet for the widget that holds the row.
QString segmentedStyle();

}  // namespace gpulab::gui
