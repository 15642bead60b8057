// The Filters tab's controls: the operation menu, one page of generated controls per registered
// operation (filters/param_controls.hpp) and the links between them, where to run, Apply, and the
// result box; and reading and setting the parameters. The tab's actions are in filters_tab.cpp.
#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>
#include <stdexcept>
#include <utility>

#include "filters/batch_dialog.hpp"
#include "filters/filters_presets.hpp"
#include "filters/filters_summary.hpp"
#include "filters/filters_tab.hpp"
#include "filters/kernel_editor.hpp"
#include "filters/param_controls.hpp"
#include "gpulab/filters/filter.hpp"
#include "widgets/segmented_buttons.hpp"

namespace gpulab::gui {
// ---------------------------------------------------------------------------------------------
// Building

QWidget* FiltersTab::buildControls() {
  // --- the operations, one page of generated controls each; only the current page is shown (a
  // QStackedWidget would be as tall as its tallest page once word-wrapped labels are involved) ---
  operation_ = new QComboBox;
  operation_->setObjectName(QStringLiteral("filterOperation"));
  operation_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  operation_->setMinimumContentsLength(8);
  auto* filterBox = new QGroupBox(tr("Filter"));
  auto* filterLayout = new QVBoxLayout(filterBox);
  auto* opForm = new QFormLayout;
  opForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  opForm->addRow(tr("Operation"), operation_);
  filterLayout->addLayout(opForm);
  borderBox_ = new QGroupBox(tr("Border"));
  auto* borderLayout = new QVBoxLayout(borderBox_);
  for (const gpulab::OperationInfo& info : gpulab::imageOperations()) {
    operation_->addItem(QString::fromStdString(info.title), QString::fromStdString(info.name));
    operation_->setItemData(operation_->count() - 1, QString::fromStdString(info.summary), Qt::ToolTipRole);
    OperationControls op = buildOperation(info);
    filterLayout->addWidget(op.page);
    if (op.borderPage != nullptr) borderLayout->addWidget(op.borderPage);
    operations_.push_back(std::move(op));
  }
  for (OperationControls& op : operations_) linkControls(op);

  // --- where to run, Apply, progress ---
  gpu_ = new QCheckBox(tr("GPU (CUDA)"));
  gpu_->setObjectName(QStringLiteral("filterRunGpu"));
  gpu_->setChecked(true);
  gpu_->setEnabled(false);
  gpu_->setToolTip(tr("Looking for a CUDA device..."));
  cpu_ = new QCheckBox(tr("CPU (OpenCV)"));
  cpu_->setObjectName(QStringLiteral("filterRunCpu"));
  cpu_->setChecked(true);
  cpu_->setToolTip(tr("The OpenCV baseline on all cores: what a user would otherwise pick"));
  auto* runOnRow = new QVBoxLayout;
  runOnRow->setSpacing(2);
  runOnRow->addWidget(gpu_);
  runOnRow->addWidget(cpu_);

  applyButton_ = new QPushButton(tr("Apply"));
  applyButton_->setObjectName(QStringLiteral("filterApply"));
  applyButton_->setDefault(true);
  applyButton_->setToolTip(tr("Run the filter on the photo (Ctrl+Return)"));
  QFont bold = applyButton_->font();
  bold.setBold(true);
  applyButton_->setFont(bold);
  applyButton_->setMinimumHeight(30);
  cancelButton_ = new QPushButton(tr("Cancel"));
  cancelButton_->setObjectName(QStringLiteral("filterCancel"));
  cancelButton_->setEnabled(false);
  cancelButton_->setToolTip(tr("Stop the running filter (Esc); nothing changes"));
  auto* applyRow = new QHBoxLayout;
  applyRow->addWidget(applyButton_, 2);
  applyRow->addWidget(cancelButton_, 1);
  auto* folderButton = new QPushButton(tr("Apply to folder..."));
  folderButton->setObjectName(QStringLiteral("filterApplyToFolder"));
  folderButton->setToolTip(tr("Run this filter over every image of a folder and write the results to another"));
  connect(folderButton, &QPushButton::clicked, this,
          [this] { openBatchDialog(this, *current().info, paramValues(), gpuChoices_); });

  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("filterProgress"));
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(8);
  progressLabel_ = new QLabel;
  progressLabel_->setEnabled(false);
  auto* progressRow = new QWidget;
  auto* progressLayout = new QVBoxLayout(progressRow);
  progressLayout->setContentsMargins(0, 0, 0, 0);
  progressLayout->setSpacing(2);
  progressLayout->addWidget(progress_);
  progressLayout->addWidget(progressLabel_);
  // Keep the space so the panel does not jump when a run starts.
  QSizePolicy keep = progressRow->sizePolicy();
  keep.setRetainSizeWhenHidden(true);
  progressRow->setSizePolicy(keep);
  progress_->setVisible(false);
  progressLabel_->setVisible(false);

  auto* runBox = new QGroupBox(tr("Run on"));
  auto* runLayout = new QVBoxLayout(runBox);
  runLayout->addLayout(runOnRow);

  // --- the result ---
  keepButton_ = new QPushButton(tr("Keep result"));
  keepButton_->setObjectName(QStringLiteral("filterKeep"));
  keepButton_->setToolTip(tr("Make the shown result the photo, so the next filter works on it (Ctrl+K)"));
  undoButton_ = new QPushButton(tr("Undo"));
  undoButton_->setObjectName(QStringLiteral("filterUndo"));
  undoButton_->setToolTip(tr("Back to the photo before the last Keep (Ctrl+Z)"));
  auto* keepRow = new QHBoxLayout;
  keepRow->addWidget(keepButton_);
  keepRow->addWidget(undoButton_);

  showGpu_ = makeToggle(tr("GPU"), tr("Show what the GPU computed (Keep result keeps the one shown)"));
  showGpu_->setObjectName(QStringLiteral("filterShowGpu"));
  showCpu_ = makeToggle(tr("CPU"), tr("Show what the CPU baseline computed (Keep result keeps the one shown)"));
  showCpu_->setObjectName(QStringLiteral("filterShowCpu"));
  auto* sourceGroup = new QButtonGroup(this);
  sourceGroup->setExclusive(true);
  sourceGroup->addButton(showGpu_);
  sourceGroup->addButton(showCpu_);
  showGpu_->setEnabled(false);
  showCpu_->setEnabled(false);
  auto* sourceRow = new QWidget;
  layOutSegmented(sourceRow, tr("Show the result of"), {showGpu_, showCpu_})->addStretch(1);

  error_ = new QLabel;
  error_->setObjectName(QStringLiteral("filterError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(QStringLiteral("color: #ff8a80;"));
  error_->setVisible(false);
  status_ = new QLabel;
  status_->setObjectName(QStringLiteral("filterStatus"));
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::RichText);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  auto* resultBox = new QGroupBox(tr("Result"));
  auto* resultLayout = new QVBoxLayout(resultBox);
  resultLayout->addWidget(sourceRow);
  resultLayout->addLayout(keepRow);
  resultLayout->addSpacing(4);
  resultLayout->addWidget(error_);
  resultLayout->addWidget(status_);
  // The summary is never squeezed: a tall filter page (the kernel editor) scrolls instead.
  resultBox->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);

  // The settings scroll; Apply and the result stay in view below them.
  auto* settings = new QWidget;
  auto* settingsLayout = new QVBoxLayout(settings);
  settingsLayout->setContentsMargins(0, 0, 4, 0);
  settingsLayout->addWidget(filterBox);
  settingsLayout->addWidget(borderBox_);
  settingsLayout->addWidget(runBox);
  settingsLayout->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(settings);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  auto* panel = new QWidget;
  panel->setFixedWidth(330);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll, 1);
  layout->addLayout(applyRow);
  layout->addWidget(folderButton);
  layout->addWidget(progressRow);
  layout->addWidget(resultBox);

  connect(operation_, &QComboBox::currentIndexChanged, this, &FiltersTab::operationChanged);
  connect(operation_, &QComboBox::currentIndexChanged, this, &FiltersTab::settingsChanged);
  connect(applyButton_, &QPushButton::clicked, this, &FiltersTab::apply);
  connect(cancelButton_, &QPushButton::clicked, this, &FiltersTab::cancel);
  connect(keepButton_, &QPushButton::clicked, this, &FiltersTab::keepResult);
  connect(undoButton_, &QPushButton::clicked, this, &FiltersTab::undo);
  connect(showGpu_, &QToolButton::clicked, this, &FiltersTab::showResultSource);
  connect(showCpu_, &QToolButton::clicked, this, &FiltersTab::showResultSource);
  connect(gpu_, &QCheckBox::toggled, this, &FiltersTab::updateActions);
  connect(cpu_, &QCheckBox::toggled, this, &FiltersTab::updateActions);
  return panel;
}

FiltersTab::OperationControls FiltersTab::buildOperation(const gpulab::OperationInfo& info) {
  OperationControls op;
  op.info = &info;
  for (const gpulab::ParamInfo& param : info.params) {
    ParamControl* control = makeParamControl(info, param).release();
    control->setParent(this);
    op.controls[param.name] = control;
    connect(control, &ParamControl::message, this, &FiltersTab::reportProblem);
    connect(control, &ParamControl::changed, this, [this, name = info.name] {
      if (operation().toStdString() == name) settingsChanged();
    });
  }
  // A number that only matters with one value of a choice ("border-value" with "border=constant")
  // sits beside that choice; the others get rows of their own, in the registry's order.
  auto besideOf = [&op](const gpulab::ParamInfo& param) -> ParamControl* {
    const auto [name, value] = param.condition();
    const auto target = op.controls.find(name);
    const bool number = param.kind == gpulab::ParamInfo::Kind::Integer || param.kind == gpulab::ParamInfo::Kind::Number;
    if (!number || target == op.controls.end() || target->second->info().kind != gpulab::ParamInfo::Kind::Choice)
      return nullptr;
    return target->second;
  };
  auto makeForm = [](QWidget*& page) {
    page = new QWidget;
    auto* form = new QFormLayout(page);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    return form;
  };
  QFormLayout* form = makeForm(op.page);
  QFormLayout* borderForm = makeForm(op.borderPage);
  // The kernel editor, the one tall control, goes after the compact ones.
  std::vector<const gpulab::ParamInfo*> order;
  for (const gpulab::ParamInfo& param : info.params)
    if (param.kind != gpulab::ParamInfo::Kind::Kernel) order.push_back(&param);
  for (const gpulab::ParamInfo& param : info.params)
    if (param.kind == gpulab::ParamInfo::Kind::Kernel) order.push_back(&param);
  for (const gpulab::ParamInfo* next : order) {
    const gpulab::ParamInfo& param = *next;
    ParamControl* control = op.controls.at(param.name);
    if (ParamControl* target = besideOf(param)) {
      target->addBeside(control->widget());
      continue;
    }
    const ParamPresentation& p = control->presentation();
    QFormLayout* into = p.group.isEmpty() ? form : borderForm;
    if (control->spansRow() || p.label == p.group)  // a check box, the kernel editor, a box's own title
      into->addRow(control->widget());
    else
      into->addRow(p.label, control->widget());
  }
  if (const QString note = operationNote(info); !note.isEmpty()) {
    auto* label = new QLabel(note);
    label->setWordWrap(true);
    label->setEnabled(false);
    form->addRow(label);
  }
  if (borderForm->rowCount() == 0) {
    delete op.borderPage;
    op.borderPage = nullptr;
  }
  return op;
}

void FiltersTab::linkControls(OperationControls& op) {
  // A parameter that only matters with another's value is enabled only then.
  for (const gpulab::ParamInfo& param : op.info->params) {
    const auto [name, value] = param.condition();
    const auto target = op.controls.find(name);
    if (target == op.controls.end()) continue;
    ParamControl* control = op.controls.at(param.name);
    ParamControl* other = target->second;
    auto update = [control, other, value] { control->widget()->setEnabled(other->value() == value); };
    connect(other, &ParamControl::changed, control, update);
    update();
  }
  // The kernel editor offers the sides the chosen convolution method takes (63 direct and separable, 255 fft
  // and auto).
  const auto method = op.controls.find("method");
  for (const auto& [name, control] : op.controls) {
    KernelEditor* editor = control->kernelEditor();
    if (editor == nullptr || method == op.controls.end()) continue;
    ParamControl* chooser = method->second;
    auto update = [editor, chooser] {
      editor->setMaxSide(
          editorKernelLimit(gpulab::parseEnum<ConvMethod>(chooser->value()).value_or(ConvMethod::Direct)));
    };
    connect(chooser, &ParamControl::changed, editor, update);
    update();
  }
}

// ---------------------------------------------------------------------------------------------
// The controls

const FiltersTab::OperationControls& FiltersTab::current() const {
  return operations_.at(static_cast<std::size_t>(std::max(0, operation_->currentIndex())));
}

QString FiltersTab::operation() const { return operation_->currentData().toString(); }

bool FiltersTab::setOperation(const QString& name) {
  const int index = operation_->findData(name);
  if (index < 0) return false;
  operation_->setCurrentIndex(index);
  return true;
}

gpulab::ParamValues FiltersTab::paramValues() const {
  const OperationControls& op = current();
  gpulab::ParamValues values;
  for (const gpulab::ParamInfo& param : op.info->params) {
    const auto [name, value] = param.condition();
    const auto target = op.controls.find(name);
    if (target != op.controls.end() && target->second->value() != value) continue;
    values[param.name] = op.controls.at(param.name)->value();
  }
  return values;
}

QString FiltersTab::param(const QString& name) const {
  const OperationControls& op = current();
  const auto it = op.controls.find(name.toStdString());
  return it == op.controls.end() ? QString() : QString::fromStdString(it->second->value());
}

bool FiltersTab::setParam(const QString& name, const QString& value) {
  const OperationControls& op = current();
  const auto it = op.controls.find(name.toStdString());
  try {
    if (it == op.controls.end())
      throw std::invalid_argument(op.info->name + " has no parameter '" + name.toStdString() + "'");
    it->second->setValue(value.toStdString());
  } catch (const std::exception& e) {
    reportProblem(sentence(QString::fromStdString(e.what())));
    return false;
  }
  return true;
}

std::unique_ptr<gpulab::Operation> FiltersTab::makeOperation() const { return current().info->make(paramValues()); }

ParamControl* FiltersTab::paramControl(const QString& operation, const QString& param) const {
  for (const OperationControls& op : operations_)
    if (op.info->name == operation.toStdString()) {
      const auto it = op.controls.find(param.toStdString());
      return it == op.controls.end() ? nullptr : it->second;
    }
  return nullptr;
}

KernelEditor* FiltersTab::kernelEditor(const QString& operation) const {
  const std::string name = operation.isEmpty() ? current().info->name : operation.toStdString();
  for (const OperationControls& op : operations_)
    if (op.info->name == name)
      for (const auto& [param, control] : op.controls)
        if (KernelEditor* editor = control->kernelEditor()) return editor;
  return nullptr;
}

void FiltersTab::setRunOn(bool cpu, bool gpu) {
  cpu_->setChecked(cpu);
  gpu_->setChecked(gpu && (gpuAvailable_ || !deviceKnown_));
}

void FiltersTab::operationChanged() {
  const int index = operation_->currentIndex();
  bool border = false;
  for (int i = 0; i < static_cast<int>(operations_.size()); ++i) {
    const OperationControls& op = operations_[static_cast<std::size_t>(i)];
    op.page->setVisible(i == index);
    if (op.borderPage != nullptr) op.borderPage->setVisible(i == index);
    border |= i == index && op.borderPage != nullptr;
  }
  borderBox_->setVisible(border);
}

}  // namespace gpulab::gui
