#include "widgets/gpu_checklist.hpp"

#include <QCheckBox>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

#include "gpulab/core/device.hpp"

namespace gpulab::gui {

GpuChoices listGpus() {
  GpuChoices choices;
  const gpulab::DeviceReport report = gpulab::queryDevices();
  for (const gpulab::DeviceInfo& d : report.devices)
    choices.labels << QStringLiteral("GPU %1 (%2)").arg(d.index).arg(QString::fromStdString(d.name));
  choices.selected = gpulab::selectedDevice();
  return choices;
}

GpuCheckList::GpuCheckList(const GpuChoices& gpus, const QString& prefix, const QString& why, const QString& noGpu,
                           const QString& note, QWidget* parent)
    : QWidget(parent) {
  setObjectName(prefix + QStringLiteral("Gpus"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  if (gpus.labels.isEmpty()) {
    auto* none = new QLabel(noGpu);
    none->setObjectName(prefix + QStringLiteral("NoGpu"));
    layout->addWidget(none);
  }
  const bool single = gpus.labels.size() == 1;
  for (int i = 0; i < gpus.labels.size(); ++i) {
    auto* box = new QCheckBox(gpus.labels[i]);
    box->setObjectName(prefix + QStringLiteral("Gpu%1").arg(i));
    box->setChecked(i == gpus.selected || single);
    if (single) {
      box->setEnabled(false);
      box->setToolTip(
          tr("This machine has one GPU: the work runs on it. With several GPUs, the checked ones "
             "share it."));
    } else {
      box->setToolTip(why);
    }
    layout->addWidget(box);
    boxes_ << box;
  }
  if (gpus.labels.size() > 1 && !note.isEmpty()) {
    auto* hint = new QLabel(note);
    hint->setObjectName(prefix + QStringLiteral("GpuNote"));
    hint->setEnabled(false);  // drawn as a quiet hint
    layout->addWidget(hint);
  }
  setToolTip(why);
  // At least one GPU stays checked.
  for (QCheckBox* box : boxes_)
    connect(box, &QCheckBox::toggled, this, [this, box](bool on) {
      if (!on && std::none_of(boxes_.begin(), boxes_.end(), [](QCheckBox* b) { return b->isChecked(); }))
        box->setChecked(true);
    });
}

std::vector<int> GpuCheckList::checked() const {
  std::vector<int> devices;
  for (int i = 0; i < boxes_.size(); ++i)
    if (boxes_[i]->isChecked()) devices.push_back(i);
  return devices;
}

}  // namespace gpulab::gui
