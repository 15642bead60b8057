#include "widgets/control_builders.hpp"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QWidget>

namespace gpulab::gui {

QWidget* rowWidget(std::initializer_list<QWidget*> widgets, QWidget* stretched) {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  for (QWidget* widget : widgets) layout->addWidget(widget, widget == stretched ? 1 : 0);
  return row;
}

QDoubleSpinBox* decimalSpinBox(double minimum, double maximum, double step, int decimals, double value) {
  auto* spin = new QDoubleSpinBox;
  spin->setDecimals(decimals);  // first: the range and the value are rounded to it
  spin->setRange(minimum, maximum);
  spin->setSingleStep(step);
  spin->setValue(value);
  return spin;
}

QFormLayout* factsForm() {
  auto* form = new QFormLayout;
  form->setLabelAlignment(Qt::AlignLeft);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setHorizontalSpacing(14);
  form->setVerticalSpacing(6);
  return form;
}

}  // namespace gpulab::gui
