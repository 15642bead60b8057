#include "filters/batch_dialog.hpp"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "shell/handover.hpp"

namespace gpulab::gui {

namespace {

QString duration(double s) {
  if (s < 0) return QStringLiteral("?");
  if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', 1);
  const int whole = static_cast<int>(std::lround(s));
  return QStringLiteral("%1:%2").arg(whole / 60).arg(whole % 60, 2, 10, QLatin1Char('0'));
}

QString stage(const char* name, double ms, int images) {
  return QStringLiteral("%1 %2 s (%3 ms/image)")
      .arg(QString::fromUtf8(name))
      .arg(ms / 1000.0, 0, 'f', 2)
      .arg(images > 0 ? ms / images : 0.0, 0, 'f', 1);
}

}  // namespace

BatchDialog::BatchDialog(const gpulab::OperationInfo& info, gpulab::ParamValues params, const GpuChoices& gpus,
                         QWidget* parent)
    : QDialog(parent), info_(info), params_(std::move(params)), gpu_(!gpus.labels.isEmpty()) {
  setObjectName(QStringLiteral("batchDialog"));
  QString description = QString::fromStdString(info.title);
  try {
    description = QString::fromStdString(info.make(params_)->describe());
  } catch (const std::exception&) {
  }
  setWindowTitle(tr("Apply to folder: %1").arg(description));

  input_ = new QLineEdit;
  input_->setObjectName(QStringLiteral("batchInput"));
  input_->setPlaceholderText(tr("folder of images, or a pattern such as /photos/*.jpg"));
  output_ = new QLineEdit;
  output_->setObjectName(QStringLiteral("batchOutput"));
  output_->setPlaceholderText(tr("folder for the results (made when missing)"));
  auto* browseIn = new QPushButton(tr("Browse..."));
  auto* browseOut = new QPushButton(tr("Browse..."));
  connect(browseIn, &QPushButton::clicked, this, [this] { chooseFolder(input_, tr("Folder of images")); });
  connect(browseOut, &QPushButton::clicked, this, [this] { chooseFolder(output_, tr("Folder for the results")); });
  auto* inRow = new QHBoxLayout;
  inRow->addWidget(input_, 1);
  inRow->addWidget(browseIn);
  auto* outRow = new QHBoxLayout;
  outRow->addWidget(output_, 1);
  outRow->addWidget(browseOut);

  format_ = new QComboBox;
  format_->setObjectName(QStringLiteral("batchFormat"));
  format_->addItem(tr("Same as each input"), QStringLiteral("same"));
  format_->addItem(QStringLiteral("PNG"), QStringLiteral("png"));
  format_->addItem(QStringLiteral("JPEG"), QStringLiteral("jpg"));
  format_->addItem(QStringLiteral("TIFF"), QStringLiteral("tiff"));
  device_ = new QComboBox;
  device_->setObjectName(QStringLiteral("batchDevice"));
  device_->addItem(tr("GPU"), true);
  device_->addItem(tr("CPU (OpenCV)"), false);
  if (!gpu_) {
    device_->setCurrentIndex(1);
    device_->setEnabled(false);
    device_->setToolTip(tr("There is no CUDA device: the CPU runs the batch"));
  }
  gpus_ = new GpuCheckList(gpus, QStringLiteral("batch"),
                           tr("Each checked GPU runs its own pipeline; they share the decoding and encoding threads, "
                              "so more GPUs pay when the filter, not the codecs, is the slow stage (the summary "
                              "says which stage limited the run)."),
                           tr("No GPU: the CPU runs the batch."));
  connect(device_, &QComboBox::currentIndexChanged, this,
          [this] { gpus_->setEnabled(device_->currentData().toBool() && gpu_); });

  auto* form = new QFormLayout;
  form->addRow(tr("Filter:"), new QLabel(description));
  form->addRow(tr("Input:"), inRow);
  form->addRow(tr("Output:"), outRow);
  form->addRow(tr("Format:"), format_);
  form->addRow(tr("Run on:"), device_);
  form->addRow(tr("GPUs:"), gpus_);

  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("batchProgress"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_ = new QLabel(tr("Choose the folders, then Start."));
  status_->setObjectName(QStringLiteral("batchStatus"));
  status_->setWordWrap(true);
  summary_ = new QPlainTextEdit;
  summary_->setObjectName(QStringLiteral("batchSummary"));
  summary_->setReadOnly(true);
  summary_->setMinimumHeight(140);

  start_ = new QPushButton(tr("Start"));
  start_->setObjectName(QStringLiteral("batchStart"));
  start_->setDefault(true);
  cancelButton_ = new QPushButton(tr("Cancel"));
  cancelButton_->setObjectName(QStringLiteral("batchCancel"));
  cancelButton_->setEnabled(false);
  auto* close = new QPushButton(tr("Close"));
  connect(start_, &QPushButton::clicked, this, &BatchDialog::start);
  connect(cancelButton_, &QPushButton::clicked, this, &BatchDialog::cancel);
  connect(close, &QPushButton::clicked, this, &QDialog::close);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(start_);
  buttons->addWidget(cancelButton_);
  buttons->addWidget(close);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(summary_, 1);
  layout->addLayout(buttons);
  resize(640, 440);
}

BatchDialog::~BatchDialog() {
  cancel_ = true;
  join();
}

void BatchDialog::join() {
  if (thread_.joinable()) thread_.join();
}

void BatchDialog::setFolders(const QString& input, const QString& output) {
  input_->setText(input);
  output_->setText(output);
}

void BatchDialog::setFormat(const QString& format) {
  const int index = format_->findData(format);
  if (index >= 0) format_->setCurrentIndex(index);
}

void BatchDialog::setUseGpu(bool gpu) { device_->setCurrentIndex(gpu && gpu_ ? 0 : 1); }

QString BatchDialog::summaryText() const { return summary_->toPlainText(); }
QString BatchDialog::statusText() const { return status_->text(); }

void BatchDialog::chooseFolder(QLineEdit* edit, const QString& title) {
  const QString dir = QFileDialog::getExistingDirectory(this, title, edit->text());
  if (!dir.isEmpty()) edit->setText(dir);
}

void BatchDialog::setRunning(bool running) {
  running_ = running;
  start_->setEnabled(!running);
  cancelButton_->setEnabled(running);
  input_->setEnabled(!running);
  output_->setEnabled(!running);
  format_->setEnabled(!running);
  device_->setEnabled(!running && gpu_);
}

void BatchDialog::showProblem(const QString& text) {
  status_->setText(text);
  summary_->setPlainText(text);
  emit finished();
}

void BatchDialog::start() {
  if (running_) return;
  join();  // the previous batch's thread has ended: it posted its summary last
  const QString input = input_->text().trimmed(), output = output_->text().trimmed();
  if (input.isEmpty() || output.isEmpty()) {
    showProblem(tr("Choose a folder of images and a folder for the results."));
    return;
  }
  gpulab::BatchOptions options;
  try {
    info_.make(params_);  // a bad parameter: one sentence now
    const gpulab::OperationInfo* info = &info_;
    const gpulab::ParamValues params = params_;
    options.makeOperation = [info, params] { return info->make(params); };
    options.format = gpulab::parseEnumOrThrow<gpulab::BatchFormat>(format_->currentData().toString().toStdString());
  } catch (const std::exception& e) {
    showProblem(QString::fromStdString(e.what()));
    return;
  }
  options.outDir = output.toStdString();
  options.useGpu = device_->currentData().toBool() && gpu_;
  if (options.useGpu) options.devices = gpus_->checked();
  options.cancel = &cancel_;
  options.onProgress = [this](const gpulab::BatchProgress& p) {
    invokeQueued(this, [this, p] { showProgress(p); });  // shell/handover.hpp
  };
  cancel_ = false;
  summary_->clear();
  progress_->setRange(0, 0);
  status_->setText(tr("Listing %1...").arg(input));
  setRunning(true);
  thread_ = std::thread([this, options = std::move(options), pattern = input.toStdString()]() mutable {
    gpulab::BatchSummary summary;
    QString problem;
    try {
      options.inputs = gpulab::listBatchInputs(pattern);
      summary = gpulab::runBatch(options);
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
    invokeQueued(this, [this, summary = std::move(summary), problem] {
      setRunning(false);
      if (!problem.isEmpty())
        showProblem(problem);
      else
        showSummary(summary);
    });
  });
}

void BatchDialog::cancel() {
  if (!running_) return;
  cancel_ = true;
  status_->setText(tr("Cancelling: the images in flight finish..."));
}

void BatchDialog::showProgress(const gpulab::BatchProgress& p) {
  if (!running_) return;
  progress_->setRange(0, p.total);
  progress_->setValue(p.done);
  QString text = tr("%1 of %2 images, %3 elapsed, about %4 left")
                     .arg(p.done)
                     .arg(p.total)
                     .arg(duration(p.elapsedS))
                     .arg(duration(p.etaS));
  if (p.failed > 0) text += tr(" (%1 failed)").arg(p.failed);
  if (cancel_) text = tr("Cancelling: ") + text;
  status_->setText(text);
}

void BatchDialog::showSummary(const gpulab::BatchSummary& s) {
  progress_->setRange(0, std::max(s.total, 1));
  progress_->setValue(s.written + static_cast<int>(s.failures.size()));
  QStringList lines;
  lines << tr("%1 of %2 images written in %3 s on %4%5")
               .arg(s.written)
               .arg(s.total)
               .arg(s.wallS, 0, 'f', 2)
               .arg(QString::fromStdString(s.devices.empty() ? s.device : s.devices))
               .arg(s.cancelled ? tr(" (cancelled)") : QString());
  lines << tr("%1 images/s, %2 MB/s of input files")
               .arg(s.imagesPerSecond(), 0, 'f', 1)
               .arg(s.megabytesPerSecond(), 0, 'f', 1);
  const int n = std::max(s.written, 1);
  QStringList stages = {stage("decode", s.stages.decodeMs, n)};
  if (s.onGpu) {
    stages << stage("upload", s.stages.uploadMs, n) << stage("compute", s.stages.computeMs, n)
           << stage("download", s.stages.downloadMs, n);
  } else if (s.filtered) {
    stages << stage("compute", s.stages.computeMs, n);
  }
  stages << stage("encode", s.stages.encodeMs, n);
  lines << tr("Time per stage, summed over threads: %1").arg(stages.join(QStringLiteral(", ")));
  if (s.gpuBusy >= 0) lines << tr("GPU busy %1% of the time").arg(100.0 * s.gpuBusy, 0, 'f', 1);
  if (s.pipelines.size() > 1)
    for (const gpulab::BatchPipeline& p : s.pipelines)
      lines << tr("  %1: %2 images, %3 images/s")
                   .arg(QString::fromStdString(p.label))
                   .arg(p.images)
                   .arg(p.imagesPerSecond(s.wallS), 0, 'f', 1);
  if (const std::string limit = s.limitSentence(); !limit.empty())
    lines << tr("Limit: %1").arg(QString::fromStdString(limit));
  for (const std::string& note : s.notes) lines << QString::fromStdString(note);
  if (!s.failures.empty()) {
    lines << tr("Failed: %1 of %2 files").arg(s.failures.size()).arg(s.total);
    for (const gpulab::BatchFailure& f : s.failures) lines << QStringLiteral("  ") + QString::fromStdString(f.reason);
  }
  summary_->setPlainText(lines.join(QLatin1Char('\n')));
  status_->setText(s.cancelled ? tr("Cancelled: %1 images written.").arg(s.written)
                   : s.failures.empty()
                       ? tr("Done: %1 images written.").arg(s.written)
                       : tr("Done: %1 written, %2 failed (listed below).").arg(s.written).arg(s.failures.size()));
  emit finished();
}

void openBatchDialog(QWidget* parent, const gpulab::OperationInfo& info, const gpulab::ParamValues& params,
                     const GpuChoices& gpus) {
  auto* dialog = new BatchDialog(info, params, gpus, parent);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
}

}  // namespace gpulab::gui
