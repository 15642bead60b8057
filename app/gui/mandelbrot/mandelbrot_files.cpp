// The Mandelbrot tab's files and places: Save PNG at any size with the view in its text fields, Open
// PNG to restore such a view, and bookmarks (the well-known places and the user's own, in QSettings).
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <stdexcept>

#include "mandelbrot/mandelbrot_tab.hpp"
#include "mandelbrot/mandelbrot_worker.hpp"
#include "widgets/run_timing.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

namespace {

const char* const kBookmarksKey = "mandelbrot/bookmarks";

}  // namespace

// ---------------------------------------------------------------------------------------------
// PNG files

void MandelbrotTab::savePng(const QString& path, QSize size, int supersample, const std::vector<int>& gpus) {
  MandelbrotView v = view_;
  v.imageWidth = size.width();
  v.imageHeight = size.height();
  v.supersample = supersample;
  gpulab::PrecisionChoice used;
  try {
    used = gpulab::choosePrecision(v);
  } catch (const std::exception& e) {
    services_.showError(tr("Cannot save %1: %2").arg(path, QString::fromUtf8(e.what())));
    return;
  }
  const gpulab::Colouring c = colouring();
  cpuProgress_->setRange(0, 100);
  cpuProgress_->setValue(0);
  cpuProgress_->show();
  services_.showMessage(tr("Rendering %1x%2 for %3...").arg(size.width()).arg(size.height()).arg(path));
  auto finish = [this] {
    updateCancelButton();
    if (!cpuJob_.running()) cpuProgress_->hide();
  };
  saveJob_ = services_.engine.submit(
      this, [v, c, used, path, gpus](WorkerContext& ctx) { return renderPng(ctx, v, c, used, path, gpus); },
      [this, path, size, finish](const SavedPng& saved) {
        finish();
        QString text =
            tr("Saved %1 (%2x%3) in %4").arg(path).arg(size.width()).arg(size.height()).arg(formatMs(saved.ms));
        if (!saved.split.isEmpty()) text += QLatin1Char(' ') + saved.split;
        services_.showMessage(text);
        emit pngSaved(path);
      },
      {.coalesceKey = QStringLiteral("mandelbrot-save"),
       .failed =
           [this, finish](const QString& why) {
             finish();
             services_.showError(tr("Saving failed: %1").arg(why));
           },
       .cancelled =
           [this, finish] {
             finish();
             services_.showMessage(tr("Saving cancelled"));
           },
       .progress = [this](double f) { cpuProgress_->setValue(static_cast<int>(f * 100)); }});
  updateCancelButton();
}

void MandelbrotTab::openPng(const QString& path) {
  services_.engine.submit(
      this, [path](WorkerContext&) { return readPngView(path); },
      [this, path](StoredView o) {
        {
          const QSignalBlocker b1(palette_), b2(offset_), b3(density_), b4(autoIterations_), b5(iterations_),
              b6(precision_);
          const QString name = QString::fromStdString(o.colouring.palette.name());
          const int index = palette_->findText(name);
          if (index >= 0 && index < palette_->count() - 1) {
            palette_->setCurrentIndex(index);
          } else {
            customPalette_ = o.colouring.palette;
            gradient_->setText(QString::fromStdString(customPalette_.gradientText()));
            palette_->setCurrentIndex(palette_->count() - 1);
          }
          gradient_->setEnabled(palette_->currentIndex() == palette_->count() - 1);
          const double offset = o.colouring.offset - std::floor(o.colouring.offset);
          offset_->setValue(static_cast<int>(std::lround(offset * kOffsetSteps)) % kOffsetSteps);
          density_->setValue(o.colouring.density);
          autoIterations_->setChecked(false);
          iterations_->setEnabled(true);
          iterations_->setValue(o.view.maxIterations);
          precision_->setCurrentIndex(precision_->findData(static_cast<int>(o.view.precision)));
        }
        if (navigate(o.view)) services_.showMessage(tr("Restored the view of %1").arg(path));
      },
      {.coalesceKey = {},
       .failed = [this, path](const QString& why) { services_.showError(tr("Cannot open %1: %2").arg(path, why)); },
       .cancelled = {},
       .progress = {}});
}

QDialog* MandelbrotTab::createSaveDialog(const GpuChoices& gpus) {
  auto* dialog = new QDialog(this);
  dialog->setObjectName(QStringLiteral("mandelbrotSaveDialog"));
  dialog->setWindowTitle(tr("Save PNG"));
  auto* size = new QComboBox;
  size->setObjectName(QStringLiteral("mandelbrotSaveSize"));
  const QSize window = canvas_->pixelSize();
  size->addItem(tr("Window (%1x%2)").arg(window.width()).arg(window.height()), window);
  for (const auto& [name, s] :
       {std::pair{"1920x1080 (Full HD)", QSize(1920, 1080)}, std::pair{"3840x2160 (4K)", QSize(3840, 2160)},
        std::pair{"7680x4320 (8K)", QSize(7680, 4320)}, std::pair{"15360x8640 (16K)", QSize(15360, 8640)}})
    size->addItem(QString::fromUtf8(name), s);
  auto* samples = new QComboBox;
  samples->setObjectName(QStringLiteral("mandelbrotSaveSupersample"));
  samples->addItem(tr("off"), 1);
  samples->addItem(QStringLiteral("2x2"), 2);
  samples->addItem(QStringLiteral("3x3"), 3);
  samples->addItem(QStringLiteral("4x4"), 4);
  samples->setCurrentIndex(1);
  auto* form = new QFormLayout(dialog);
  form->addRow(tr("Size"), size);
  form->addRow(tr("Supersampling"), samples);

  // The GPUs that render this still: a checkbox each. One stays the default: splitting pays for large
  // stills and deep views, never for the interactive frames.
  const QString why =
      tr("Checked GPUs split the still's rows between them: each takes the next band of rows when it is free, "
         "and a deep view's reference orbit is computed once and copied to each. Splitting pays for large "
         "stills (4K and up) and deep views; the interactive frames always stay on one GPU, since a "
         "screen-sized frame takes a few milliseconds, less than spreading it costs.");
  auto* devices =
      new GpuCheckList(gpus, QStringLiteral("mandelbrotSave"), why, tr("No GPU: every CPU core renders the still."),
                       tr("Checked GPUs share the still's rows; the live view stays on one GPU."));
  form->addRow(tr("GPUs"), devices);
  form->addRow(new QLabel(tr("The width in the complex plane stays; the height follows the aspect ratio.")));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  return dialog;
}

std::vector<int> MandelbrotTab::checkedGpus(const QDialog& dialog) {
  const auto* devices = dialog.findChild<GpuCheckList*>(QStringLiteral("mandelbrotSaveGpus"));
  return devices == nullptr ? std::vector<int>{} : devices->checked();
}

void MandelbrotTab::saveWithDialog() {
  const std::unique_ptr<QDialog> dialog(createSaveDialog(gpuChoices_));
  if (dialog->exec() != QDialog::Accepted) return;
  const auto* size = dialog->findChild<QComboBox*>(QStringLiteral("mandelbrotSaveSize"));
  const auto* samples = dialog->findChild<QComboBox*>(QStringLiteral("mandelbrotSaveSupersample"));
  const QSize chosen = size->currentData().toSize();
  const int supersample = samples->currentData().toInt();
  const std::vector<int> gpus = checkedGpus(*dialog);
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save PNG"), QStringLiteral("mandelbrot.png"), tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  savePng(path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive) ? path : path + QStringLiteral(".png"), chosen,
          supersample, gpus);
}

void MandelbrotTab::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a PNG saved by gpulab"), QString(), tr("PNG images (*.png)"));
  if (!path.isEmpty()) openPng(path);
}

// ---------------------------------------------------------------------------------------------
// Bookmarks

void MandelbrotTab::loadBookmarks() {
  bookmarks_ = builtInBookmarks();
  const QStringList saved = QSettings().value(QString::fromUtf8(kBookmarksKey)).toStringList();
  for (const QString& line : saved) {
    const QStringList f = line.split(QLatin1Char('\t'));
    if (f.size() != 8) continue;
    MandelbrotView v;
    bool ok[4] = {};
    try {  // the centre and width as decimal text, every digit (older entries hold 17 digits)
      v.centerX = gpulab::DecimalNumber::parse(f[1].toStdString());
      v.centerY = gpulab::DecimalNumber::parse(f[2].toStdString());
      v.width = gpulab::DeepWidth::parse(f[3].toStdString());
    } catch (const std::invalid_argument&) {
      continue;
    }
    v.maxIterations = f[4].toInt(&ok[0]);
    v.julia = f[5].toInt(&ok[1]) != 0;
    v.juliaX = f[6].toDouble(&ok[2]);
    v.juliaY = f[7].toDouble(&ok[3]);
    if (std::all_of(std::begin(ok), std::end(ok), [](bool b) { return b; })) bookmarks_.push_back({f[0], v});
  }
  const QSignalBlocker block(bookmarkBox_);
  bookmarkBox_->clear();
  bookmarkBox_->addItem(tr("Go to..."));
  for (const MandelbrotBookmark& b : bookmarks_) bookmarkBox_->addItem(b.name);
}

void MandelbrotTab::addBookmarkWithDialog() {
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Add bookmark"), tr("Name"), QLineEdit::Normal,
                                             tr("Width %1").arg(shortWidthText(view_.width)), &ok);
  if (ok) addBookmark(name);
}

void MandelbrotTab::addBookmark(const QString& requested) {
  const QString name = requested.trimmed().replace(QLatin1Char('\t'), QLatin1Char(' '));
  if (name.isEmpty()) return;
  QSettings settings;
  QStringList saved = settings.value(QString::fromUtf8(kBookmarksKey)).toStringList();
  const int iterations = autoIterations_->isChecked() ? 0 : view_.maxIterations;
  saved << QStringList{name,
                       QString::fromStdString(view_.centerX.toString()),
                       QString::fromStdString(view_.centerY.toString()),
                       widthText(view_.width),
                       QString::number(iterations),
                       QString::number(view_.julia ? 1 : 0),
                       QString::number(view_.juliaX, 'g', 17),
                       QString::number(view_.juliaY, 'g', 17)}
               .join(QLatin1Char('\t'));
  settings.setValue(QString::fromUtf8(kBookmarksKey), saved);
  loadBookmarks();
  services_.showMessage(tr("Bookmarked \"%1\"").arg(name));
}

void MandelbrotTab::bookmarkChosen(int index) {
  if (index <= 0 || index > static_cast<int>(bookmarks_.size())) return;
  MandelbrotView v = bookmarks_[static_cast<std::size_t>(index - 1)].view;
  {
    const QSignalBlocker b1(autoIterations_), b2(iterations_);
    autoIterations_->setChecked(v.maxIterations == 0);
    iterations_->setEnabled(v.maxIterations != 0);
    if (v.maxIterations != 0) iterations_->setValue(v.maxIterations);
  }
  if (v.maxIterations == 0) v.maxIterations = 1;  // accept() fills in the automatic count
  if (v.julia) mandelbrotView_ = view_.julia ? mandelbrotView_ : view_;
  navigate(v);
  const QSignalBlocker block(bookmarkBox_);
  bookmarkBox_->setCurrentIndex(0);
}

}  // namespace gpulab::gui
