#include "widgets/device_panel.hpp"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <stdexcept>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/io/image_io.hpp"
#include "shell/engine.hpp"
#include "widgets/control_builders.hpp"

namespace gpulab::gui {

DeviceSnapshot DeviceSnapshot::capture(WorkerContext& ctx) {
  DeviceSnapshot s;
  const gpulab::DeviceReport& report = ctx.devices();
  s.runtimeVersion = QString::fromStdString(gpulab::formatCudaVersion(report.runtimeVersion));
  s.driverVersion = QString::fromStdString(gpulab::formatCudaVersion(report.driverVersion));
  s.cpuThreads = gpulab::cpuThreadSetting();  // what the baselines run on (OpenCV, OpenBLAS, rows)
  s.cpuCores = gpulab::cpuCores();
  for (const gpulab::DeviceInfo& d : report.devices)
    s.devices << QStringLiteral("GPU %1: %2").arg(d.index).arg(QString::fromStdString(d.name));
  s.selectedDevice = gpulab::selectedDevice();
  if (!ctx.hasGpu()) {
    s.status = report.available() ? QStringLiteral("the GPU could not be opened (%1): CPU only").arg(ctx.gpuError())
                                  : QString::fromStdString(report.status);
    return s;
  }
  const int index = ctx.gpu().device();
  const gpulab::DeviceInfo& info = report.devices.at(static_cast<std::size_t>(index));
  const gpulab::MemoryUsage memory = gpulab::deviceMemory(index);
  s.gpu = true;
  s.name = QString::fromStdString(info.name);
  s.computeCapability = QString::fromStdString(info.computeCapability());
  s.multiprocessors = info.multiprocessors;
  s.totalBytes = static_cast<qint64>(memory.total);
  s.freeBytes = static_cast<qint64>(memory.free);
  s.memoryBusWidthBits = info.memoryBusWidthBits;
  s.l2CacheBytes = info.l2CacheBytes;
  return s;
}

QString formatBytes(qint64 bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return QString::number(b / (1024.0 * 1024 * 1024), 'f', 2) + QStringLiteral(" GiB");
  if (b >= 1024.0 * 1024) return QString::number(b / (1024.0 * 1024), 'f', 0) + QStringLiteral(" MiB");
  if (b >= 1024.0) return QString::number(b / 1024.0, 'f', 0) + QStringLiteral(" KiB");
  return QString::number(bytes) + QStringLiteral(" B");
}

DevicePanel::DevicePanel(Engine& engine, QWidget* parent)
    : QWidget(parent),
      engine_(engine),
      timer_(new QTimer(this)),
      headline_(new QLabel(tr("Looking for a CUDA device..."))),
      detail_(new QLabel),
      form_(factsForm()),
      capability_(new QLabel),
      multiprocessors_(new QLabel),
      memoryText_(new QLabel),
      memoryBar_(new QProgressBar),
      cuda_(new QLabel),
      cpu_(new QLabel),
      devicePicker_(new QComboBox),
      threadsPicker_(new QComboBox),
      maxSide_(new QSpinBox),
      maxPixels_(new QSpinBox) {
  devicePicker_->setObjectName(QStringLiteral("devicePicker"));
  devicePicker_->setToolTip(tr("The GPU every tab computes on; records name it"));
  devicePicker_->hide();
  threadsPicker_->setObjectName(QStringLiteral("cpuThreadsPicker"));
  threadsPicker_->setToolTip(
      tr("Threads of every CPU baseline (OpenCV, OpenBLAS, the row scheduler);\n"
         "the course compares with single-threaded NumPy in places"));
  {
    const int cores = gpulab::cpuCores();
    threadsPicker_->addItem(tr("All cores (%1)").arg(cores), 0);
    for (int n = 1; n < cores; n *= 2) threadsPicker_->addItem(n == 1 ? tr("1 thread") : tr("%1 threads").arg(n), n);
  }
  connect(devicePicker_, &QComboBox::activated, this,
          [this](int row) { selectDevice(devicePicker_->itemData(row).toInt()); });
  connect(threadsPicker_, &QComboBox::activated, this,
          [this](int row) { setCpuThreads(threadsPicker_->itemData(row).toInt()); });
  QFont big = headline_->font();
  big.setBold(true);
  big.setPointSizeF(big.pointSizeF() * 1.15);
  headline_->setFont(big);
  headline_->setObjectName(QStringLiteral("deviceHeadline"));
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  detail_->setWordWrap(true);
  detail_->setObjectName(QStringLiteral("deviceDetail"));
  detail_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  detail_->hide();

  memoryBar_->setRange(0, 1000);
  memoryBar_->setTextVisible(false);
  memoryBar_->setFixedHeight(8);

  form_->addRow(tr("Compute capability"), capability_);
  form_->addRow(tr("Multiprocessors"), multiprocessors_);
  form_->addRow(tr("Memory in use"), memoryText_);
  form_->addRow(QString(), memoryBar_);
  form_->addRow(tr("CUDA runtime / driver"), cuda_);
  form_->addRow(tr("CPU baseline threads"), cpu_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(10, 8, 10, 10);
  layout->setSpacing(8);
  layout->addWidget(devicePicker_);
  layout->addWidget(headline_);
  layout->addWidget(detail_);
  layout->addLayout(form_);
  auto* threadsRow = new QHBoxLayout;
  threadsRow->addWidget(new QLabel(tr("CPU baselines")));
  threadsRow->addWidget(threadsPicker_, 1);
  layout->addLayout(threadsRow);

  // The largest image a file may hold: what the environment set (GPULAB_MAX_IMAGE_SIDE /
  // GPULAB_MAX_IMAGE_PIXELS), else gpulab's maximum, until the user or the saved settings change it.
  gpulab::ImageLimits limits;
  QString environmentProblem;
  try {
    limits = gpulab::imageLimits();
  } catch (const std::invalid_argument& e) {
    environmentProblem = QStringLiteral("\n") + QString::fromStdString(e.what());
  }
  maxSide_->setObjectName(QStringLiteral("maxImageSide"));
  maxSide_->setRange(1, gpulab::kMaxImageDimension);
  maxSide_->setSuffix(tr(" px a side"));
  maxSide_->setValue(limits.maxSide);
  maxSide_->setToolTip(
      tr("Largest image a file may hold, in pixels a side (at most %1); larger files are refused from their header")
          .arg(gpulab::kMaxImageDimension) +
      environmentProblem);
  maxPixels_->setObjectName(QStringLiteral("maxImagePixels"));
  maxPixels_->setRange(1, static_cast<int>(gpulab::kMaxImagePixels));
  maxPixels_->setGroupSeparatorShown(true);
  maxPixels_->setSuffix(tr(" px in all"));
  maxPixels_->setValue(static_cast<int>(limits.maxPixels));
  maxPixels_->setToolTip(tr("Largest image a file may hold, in pixels in all (at most %L1 = 256 megapixels)")
                             .arg(gpulab::kMaxImagePixels));
  const auto applyLimits = [this] { setImageLimits(maxSide_->value(), maxPixels_->value()); };
  connect(maxSide_, &QSpinBox::editingFinished, this, applyLimits);
  connect(maxPixels_, &QSpinBox::editingFinished, this, applyLimits);
  auto* limitsForm = factsForm();
  limitsForm->addRow(tr("Largest image"), maxSide_);
  limitsForm->addRow(QString(), maxPixels_);
  layout->addLayout(limitsForm);
  layout->addStretch();

  for (int row = 0; row < form_->rowCount(); ++row) form_->setRowVisible(row, false);

  timer_->setInterval(kRefreshMs);
  connect(timer_, &QTimer::timeout, this, &DevicePanel::refresh);
  timer_->start();
  refresh();
}

void DevicePanel::refresh() {
  engine_.submit(
      this, [](WorkerContext& ctx) { return DeviceSnapshot::capture(ctx); },
      [this](const DeviceSnapshot& s) { display(s); },
      {.coalesceKey = QStringLiteral("device-panel"),
       .failed = [this](const QString& message) { showError(message); }});
}

void DevicePanel::selectDevice(int index) {
  engine_.submit(
      this,
      [index](WorkerContext& ctx) {
        ctx.selectDevice(index);
        return DeviceSnapshot::capture(ctx);
      },
      [this](const DeviceSnapshot& s) { display(s); },
      {.failed = [this](const QString& message) { showError(message); }});
}

void DevicePanel::setCpuThreads(int threads) {
  engine_.submit(
      this,
      [threads](WorkerContext& ctx) {
        gpulab::setCpuThreads(threads);
        return DeviceSnapshot::capture(ctx);
      },
      [this](const DeviceSnapshot& s) { display(s); },
      {.failed = [this](const QString& message) { showError(message); }});
}

void DevicePanel::setImageLimits(int maxSide, int maxPixels) {
  const gpulab::ImageLimits limits{std::clamp(maxSide, 1, gpulab::kMaxImageDimension),
                                   std::clamp<std::int64_t>(maxPixels, 1, gpulab::kMaxImagePixels)};
  gpulab::setImageLimits(limits);  // two atomics the loaders read: no job for the worker
  {
    const QSignalBlocker blockSide(maxSide_), blockPixels(maxPixels_);
    maxSide_->setValue(limits.maxSide);
    maxPixels_->setValue(static_cast<int>(limits.maxPixels));
  }
  if (persistLimits_) {
    QSettings settings;
    settings.setValue(QStringLiteral("limits/maxImageSide"), limits.maxSide);
    settings.setValue(QStringLiteral("limits/maxImagePixels"), static_cast<qlonglong>(limits.maxPixels));
  }
}

void DevicePanel::persistImageLimits() {
  const QSettings settings;
  const QVariant side = settings.value(QStringLiteral("limits/maxImageSide"));
  const QVariant pixels = settings.value(QStringLiteral("limits/maxImagePixels"));
  if (side.isValid() || pixels.isValid())
    setImageLimits(side.isValid() ? side.toInt() : maxSide_->value(),
                   pixels.isValid()
                       ? static_cast<int>(std::min<qlonglong>(pixels.toLongLong(), gpulab::kMaxImagePixels))
                       : maxPixels_->value());
  persistLimits_ = true;
}

QString DevicePanel::summary() const {
  if (!valid_) return {};
  return snapshot_.gpu ? snapshot_.name : tr("CPU only");
}

void DevicePanel::display(const DeviceSnapshot& s) {
  snapshot_ = s;
  valid_ = true;
  cuda_->setText(QStringLiteral("%1 / %2").arg(s.runtimeVersion, s.driverVersion));
  cpu_->setText(QString::number(s.cpuThreads));
  {
    const QSignalBlocker block(devicePicker_);
    devicePicker_->clear();
    for (int i = 0; i < s.devices.size(); ++i) devicePicker_->addItem(s.devices[i], i);
    devicePicker_->setCurrentIndex(s.selectedDevice);
    devicePicker_->setVisible(!s.devices.isEmpty());
    const int row = threadsPicker_->findData(s.cpuThreads == s.cpuCores ? 0 : s.cpuThreads);
    if (row >= 0) threadsPicker_->setCurrentIndex(row);
  }
  if (s.gpu) {
    headline_->setText(s.name);
    detail_->hide();
    capability_->setText(
        QStringLiteral("sm_%1 (%2)").arg(QString(s.computeCapability).remove(QLatin1Char('.')), s.computeCapability));
    multiprocessors_->setText(QString::number(s.multiprocessors));
    const qint64 used = s.totalBytes - s.freeBytes;
    memoryText_->setText(tr("%1 of %2").arg(formatBytes(used), formatBytes(s.totalBytes)));
    memoryBar_->setValue(s.totalBytes > 0 ? static_cast<int>(1000 * used / s.totalBytes) : 0);
    memoryBar_->setToolTip(tr("%1 free").arg(formatBytes(s.freeBytes)));
    for (int row = 0; row < form_->rowCount(); ++row) form_->setRowVisible(row, true);
  } else {
    headline_->setText(tr("No CUDA device: CPU only"));
    // The engine's sentence ends in ": CPU only", which the headline already says.
    QString reason = s.status;
    if (reason.endsWith(QStringLiteral(": CPU only"))) reason.chop(10);
    if (!reason.isEmpty()) reason[0] = reason[0].toUpper();
    detail_->setText(reason);
    detail_->setVisible(!reason.isEmpty());
    for (int row = 0; row < 4; ++row) form_->setRowVisible(row, false);
    form_->setRowVisible(4, true);
    form_->setRowVisible(5, true);
    timer_->stop();  // nothing changes without a device
  }
  emit refreshed();
}

void DevicePanel::showError(const QString& message) {
  detail_->setText(tr("Could not query the device: %1").arg(message));
  detail_->show();
}

}  // namespace gpulab::gui
