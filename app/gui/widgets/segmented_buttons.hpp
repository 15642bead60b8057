// Tool buttons in a row as one segmented control (Split | Original | Result): checkable buttons and
// the style sheet that joins them, the checked segment in the highlight colour. The first and last
// buttons get the property "segment" = "first" / "last" for their rounded outer corners.
#pragma once

#include <QString>
#include <initializer_list>

class QHBoxLayout;
class QToolButton;
class QWidget;

namespace gpulab::gui {

/// A checkable, text-only tool button.
QToolButton* makeToggle(const QString& text, const QString& tip);
/// The style sheet for the widget that holds the row.
QString segmentedStyle();
/// Lays out `caption` and then `buttons` as one segmented control in `holder`, which gets the style
/// sheet and a row with no margins; the first and last buttons get their "segment" property. Returns
/// the row, for whatever follows the buttons.
QHBoxLayout* layOutSegmented(QWidget* holder, const QString& caption, std::initializer_list<QToolButton*> buttons);

}  // namespace gpulab::gui
