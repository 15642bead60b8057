#include "filters/param_controls.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "filters/kernel_editor.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "widgets/control_builders.hpp"

namespace gpulab::gui {
namespace {

constexpr int kDefaultSliderSpan = 512;  // an Integer's slider covers this much; the spin box goes on
constexpr double kSpinLimit = 1e6;       // a Number's spin box stays within +-this (the registry may allow more)

QString objectNameFor(const gpulab::OperationInfo& operation, const gpulab::ParamInfo& param) {
  return QStringLiteral("filterParam_%1_%2")
      .arg(QString::fromStdString(operation.name), QString::fromStdString(param.name));
}

std::string numberText(double v) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);  // shortest text that reads back the same
  return ec == std::errc() ? std::string(text, end) : std::to_string(v);
}

double parseNumber(const gpulab::ParamInfo& info, const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    throw std::invalid_argument(info.name + " '" + text + "' is not a number");
  if (v < info.minimum || v > info.maximum)
    throw std::invalid_argument(info.name + " " + text + " is out of range: use " + numberText(info.minimum) + " to " +
                                numberText(info.maximum));
  return v;
}

// ---------------------------------------------------------------------------------------------

class IntegerControl final : public ParamControl {
 public:
  IntegerControl(const gpulab::OperationInfo& op, gpulab::ParamInfo info, ParamPresentation p)
      : ParamControl(std::move(info), std::move(p)) {
    const gpulab::ParamInfo& i = this->info();
    const int lo = static_cast<int>(std::clamp(i.minimum, double(INT_MIN), double(INT_MAX)));
    const int hi = static_cast<int>(std::clamp(i.maximum, double(lo), double(INT_MAX)));
    const int sliderEnd =
        presentation().sliderMaximum > 0
            ? std::min(presentation().sliderMaximum, hi)
            : static_cast<int>(std::min<long long>(hi, static_cast<long long>(lo) + kDefaultSliderSpan));
    slider_ = new QSlider(Qt::Horizontal);
    slider_->setObjectName(objectNameFor(op, i) + QStringLiteral("_slider"));
    slider_->setRange(lo, sliderEnd);
    spin_ = new QSpinBox;
    spin_->setRange(lo, hi);
    row().addWidget(slider_, 1);
    place(spin_, op, 0);
    showInitialValue();
    slider_->setValue(std::min(spin_->value(), slider_->maximum()));
    connect(slider_, &QSlider::valueChanged, this, [this](int v) {
      // The slider ends before the spin box: at its end it leaves a larger value alone.
      if (spin_->value() <= slider_->maximum() || v < slider_->maximum()) spin_->setValue(v);
    });
    connect(spin_, &QSpinBox::valueChanged, this, [this](int v) {
      const QSignalBlocker block(slider_);
      slider_->setValue(std::min(v, slider_->maximum()));
      updateHint();
      emit changed();
    });
  }
  std::string value() const override { return std::to_string(spin_->value()); }
  void setValue(const std::string& text) override {
    const double v = parseNumber(info(), text);
    if (v != std::floor(v)) throw std::invalid_argument(info().name + " '" + text + "' is not a whole number");
    spin_->setValue(static_cast<int>(v));
  }

 private:
  QSlider* slider_ = nullptr;
  QSpinBox* spin_ = nullptr;
};

class NumberControl final : public ParamControl {
 public:
  NumberControl(const gpulab::OperationInfo& op, gpulab::ParamInfo info, ParamPresentation p)
      : ParamControl(std::move(info), std::move(p)) {
    const gpulab::ParamInfo& i = this->info();
    const double lo = std::max(i.minimum, -kSpinLimit), hi = std::max(lo, std::min(i.maximum, kSpinLimit));
    spin_ = decimalSpinBox(lo, hi, hi - lo <= 10 ? 0.01 : 1.0, 3, std::clamp(0.0, lo, hi));
    place(spin_, op);
    showInitialValue();
    reportChanges(spin_, &QDoubleSpinBox::valueChanged);
  }
  std::string value() const override { return numberText(spin_->value()); }
  void setValue(const std::string& text) override { spin_->setValue(parseNumber(info(), text)); }

 private:
  QDoubleSpinBox* spin_ = nullptr;
};

class ChoiceControl final : public ParamControl {
 public:
  ChoiceControl(const gpulab::OperationInfo& op, gpulab::ParamInfo info, ParamPresentation p)
      : ParamControl(std::move(info), std::move(p)) {
    combo_ = new QComboBox;
    for (const std::string& choice : this->info().choices) {
      QString text = QString::fromStdString(choice);
      for (const auto& [value, label] : presentation().choiceLabels)
        if (value == choice) text = label;
      combo_->addItem(text, QString::fromStdString(choice));
    }
    combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo_->setMinimumContentsLength(8);
    place(combo_, op);
    showInitialValue();
    reportChanges(combo_, &QComboBox::currentIndexChanged);
  }
  std::string value() const override { return combo_->currentData().toString().toStdString(); }
  void setValue(const std::string& text) override {
    const int index = combo_->findData(QString::fromStdString(text));
    if (index < 0) {
      std::string choices;
      for (const std::string& c : info().choices) choices += (choices.empty() ? "" : "|") + c;
      throw std::invalid_argument(info().name + " '" + text + "' is not one of " + choices);
    }
    combo_->setCurrentIndex(index);
  }

 private:
  QComboBox* combo_ = nullptr;
};

class FlagControl final : public ParamControl {
 public:
  FlagControl(const gpulab::OperationInfo& op, gpulab::ParamInfo info, ParamPresentation p)
      : ParamControl(std::move(info), std::move(p)) {
    check_ = new QCheckBox(presentation().label);
    place(check_, op);
    showInitialValue();
    reportChanges(check_, &QCheckBox::toggled);
  }
  bool spansRow() const override { return true; }
  std::string value() const override { return check_->isChecked() ? "true" : "false"; }
  void setValue(const std::string& text) override {
    check_->setChecked(gpulab::flagParam({{info().name, text}}, info()));
  }

 private:
  QCheckBox* check_ = nullptr;
};

class KernelControl final : public ParamControl {
 public:
  KernelControl(const gpulab::OperationInfo& op, gpulab::ParamInfo info, ParamPresentation p)
      : ParamControl(std::move(info), std::move(p)) {
    editor_ = new KernelEditor;
    place(editor_, op);
    showInitialValue();  // without one, the editor's own first preset
    connect(editor_, &KernelEditor::changed, this, &ParamControl::changed);
    connect(editor_, &KernelEditor::message, this, &ParamControl::message);
  }
  bool spansRow() const override { return true; }
  std::string value() const override { return gpulab::formatKernelText(editor_->kernel()); }
  void setValue(const std::string& text) override { editor_->setKernel(gpulab::parseKernelText(text)); }
  KernelEditor* kernelEditor() noexcept override { return editor_; }

 private:
  KernelEditor* editor_ = nullptr;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

ParamControl::ParamControl(gpulab::ParamInfo info, ParamPresentation presentation)
    : info_(std::move(info)), presentation_(std::move(presentation)) {
  widget_ = new QWidget;
  auto* layout = new QVBoxLayout(widget_);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  row_ = new QHBoxLayout;
  row_->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(row_);
  if (presentation_.hint) {
    hint_ = new QLabel;
    hint_->setWordWrap(true);
    hint_->setEnabled(false);  // the palette's dimmed text
    layout->addWidget(hint_);
  }
}

void ParamControl::addBeside(QWidget* other) { row_->addWidget(other); }

void ParamControl::updateHint() {
  if (hint_ != nullptr) hint_->setText(presentation_.hint(value()));
}

std::string ParamControl::initialValue() const {
  return presentation_.initialValue.empty() ? info_.defaultValue : presentation_.initialValue;
}

void ParamControl::place(QWidget* editor, const gpulab::OperationInfo& operation, int stretch) {
  editor->setObjectName(objectNameFor(operation, info_));
  editor->setToolTip(presentation_.tooltip);
  row_->addWidget(editor, stretch);
}

void ParamControl::showInitialValue() {
  const std::string first = initialValue();
  if (!first.empty()) setValue(first);
  updateHint();
}

std::unique_ptr<ParamControl> makeParamControl(const gpulab::OperationInfo& operation, const gpulab::ParamInfo& param) {
  ParamPresentation presentation = presentationOf(operation, param);
  switch (param.kind) {
    case gpulab::ParamInfo::Kind::Integer:
      return std::make_unique<IntegerControl>(operation, param, std::move(presentation));
    case gpulab::ParamInfo::Kind::Number:
      return std::make_unique<NumberControl>(operation, param, std::move(presentation));
    case gpulab::ParamInfo::Kind::Choice:
      return std::make_unique<ChoiceControl>(operation, param, std::move(presentation));
    case gpulab::ParamInfo::Kind::Flag:
      return std::make_unique<FlagControl>(operation, param, std::move(presentation));
    case gpulab::ParamInfo::Kind::Kernel:
      return std::make_unique<KernelControl>(operation, param, std::move(presentation));
  }
  throw std::invalid_argument("parameter " + param.name + " has a kind the Filters tab does not know");
}

}  // namespace gpulab::gui
