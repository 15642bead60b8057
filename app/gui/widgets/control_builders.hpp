// Small helpers for building the tabs' control panels: a named widget, a row of widgets that lines up
// in a form, a decimal spin box, combo box items from a table of (text, value), and the form the
// side panels list their facts in.
#pragma once

#include <QAnyStringView>
#include <QComboBox>
#include <QString>
#include <initializer_list>
#include <type_traits>
#include <utility>

class QDoubleSpinBox;
class QFormLayout;
class QWidget;

namespace gpulab::gui {

/// `widget` with an object name (tests and scripts find it by it) and, when one is given, a tooltip.
template <class Widget>
Widget* named(Widget* widget, QAnyStringView objectName, const QString& toolTip = {}) {
  widget->setObjectName(objectName);
  if (!toolTip.isEmpty()) widget->setToolTip(toolTip);
  return widget;
}

/// `widgets` side by side in a widget with no margins of its own, so that the row lines up with its
/// neighbours in a form, a column or a stack; `stretched` (one of them) takes the spare width.
QWidget* rowWidget(std::initializer_list<QWidget*> widgets, QWidget* stretched = nullptr);

/// A spin box for a decimal value from `minimum` to `maximum` in steps of `step`, starting at `value`.
QDoubleSpinBox* decimalSpinBox(double minimum, double maximum, double step, int decimals, double value);

/// Adds one item per (text, value) to `box`; an enum's value is stored as its int.
template <class Value>
void addItems(QComboBox* box, std::initializer_list<std::pair<QString, Value>> items) {
  for (const auto& [text, value] : items) {
    if constexpr (std::is_enum_v<Value>)
      box->addItem(text, static_cast<int>(value));
    else
      box->addItem(text, value);
  }
}

/// A form of facts, as the Device and Photo panels list them: labels on the left, fields growing.
QFormLayout* factsForm();

}  // namespace gpulab::gui
