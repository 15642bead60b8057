#include "widgets/photo_info_panel.hpp"

#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <utility>

#include "shell/photo_document.hpp"
#include "widgets/control_builders.hpp"
#include "widgets/device_panel.hpp"
#include "widgets/run_timing.hpp"

namespace gpulab::gui {
namespace {

QString channelNames(int channels) {
  switch (channels) {
    case 1:
      return QObject::tr("gray");
    case 2:
      return QObject::tr("gray + alpha");
    case 3:
      return QObject::tr("RGB");
    case 4:
      return QObject::tr("RGBA");
    default:
      return QObject::tr("%1 channels").arg(channels);
  }
}

QString sampleNames(const QString& type) {
  if (type == QLatin1String("u8")) return QObject::tr("8-bit");
  if (type == QLatin1String("f32")) return QObject::tr("float32");
  if (type == QLatin1String("f64")) return QObject::tr("float64");
  return type;
}

}  // namespace

PhotoInfoPanel::PhotoInfoPanel(PhotoDocument& photo, QWidget* parent)
    : QWidget(parent),
      photo_(photo),
      form_(factsForm()),
      empty_(new QLabel(tr("No photo"))),
      file_(new QLabel),
      size_(new QLabel),
      samples_(new QLabel),
      host_(new QLabel),
      gpu_(new QLabel),
      display_(new QLabel) {
  const std::pair<QString, QLabel*> rows[] = {{tr("File"), file_},       {tr("Size"), size_},
                                              {tr("Samples"), samples_}, {tr("Host memory"), host_},
                                              {tr("On the GPU"), gpu_},  {tr("Display"), display_}};
  for (const auto& [title, field] : rows) {
    field->setTextInteractionFlags(Qt::TextSelectableByMouse);
    field->setWordWrap(true);
    form_->addRow(title, field);
  }
  gpu_->setObjectName(QStringLiteral("photoGpu"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(10, 8, 10, 10);
  layout->addWidget(empty_);
  layout->addLayout(form_);
  layout->addStretch();
  connect(&photo_, &PhotoDocument::changed, this, &PhotoInfoPanel::photoChanged);
  photoChanged();
}

void PhotoInfoPanel::photoChanged() {
  const bool has = photo_.hasPhoto();
  empty_->setVisible(!has);
  for (int row = 0; row < form_->rowCount(); ++row) form_->setRowVisible(row, has);
  if (!has) return;
  const PhotoUpdate& p = photo_.current();
  file_->setText(photo_.displayName());
  file_->setToolTip(p.source);
  size_->setText(tr("%1 x %2 pixels").arg(p.width).arg(p.height));
  samples_->setText(QStringLiteral("%1, %2").arg(channelNames(p.channels), sampleNames(p.sampleType)));
  host_->setText(formatBytes(p.hostBytes));
  if (p.onGpu) {
    const std::optional<double> uploadMs = p.uploadMs();
    const QString memory =
        p.upload && p.upload->gpu ? QString::fromStdString(p.upload->gpu->hostMemory) : QString();  // pinned/pageable
    gpu_->setText(uploadMs ? (memory.isEmpty()
                                  ? tr("resident, %1 (upload %2)").arg(formatBytes(p.gpuBytes), formatMs(*uploadMs))
                                  : tr("resident, %1 (upload %2 from %3 memory)")
                                        .arg(formatBytes(p.gpuBytes), formatMs(*uploadMs), memory))
                           : tr("resident, %1").arg(formatBytes(p.gpuBytes)));
  } else {
    gpu_->setText(p.gpuNote.isEmpty() ? tr("no (CPU only)") : tr("no: %1").arg(p.gpuNote));
  }
  display_->setText(p.displayNote.isEmpty() ? tr("as stored") : p.displayNote);
}

}  // namespace gpulab::gui
