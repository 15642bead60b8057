// The Mandelbrot tab's deep-zoom controls: the location (centre with every digit and width, typed,
// copied and pasted), zoom to a width, Newton zoom to the nearest minibrot, and the iteration cap raised
// when a frame's counts run into it.
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpulab/mandelbrot/newton_zoom.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"
#include "mandelbrot/mandelbrot_worker.hpp"
#include "widgets/control_builders.hpp"
#include "widgets/run_timing.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

namespace {

constexpr int kMaxIterationScale = 16;  // the cap learned from the counts: at most 16 times the automatic one

/// A minibrot's size as text ("1.3e-205"), also beyond the widths a view takes.
QString sizeText(gpulab::ExtendedReal size) {
  try {
    return shortWidthText(gpulab::DeepWidth::fromExtended(size));
  } catch (const std::invalid_argument&) {
    return QStringLiteral("1e%1").arg(gpulab::log2Of(size) * 0.30102999566398119521, 0, 'f', 1);
  }
}

/// Shows `text` in `edit` from its start, unless the person is editing it.
void showText(QLineEdit* edit, const QString& text) {
  if (edit->hasFocus() && edit->isModified()) return;
  if (edit->text() != text) {
    edit->setText(text);
    edit->setCursorPosition(0);
  }
  edit->setModified(false);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Controls

QWidget* MandelbrotTab::buildLocationControls() {
  centreEdit_ = named(new QLineEdit, "mandelbrotCentre",
                      tr("The centre X, Y with every digit. Type or paste X, Y, or X, Y, WIDTH, or the Copy button's\n"
                         "--center X,Y --width W, and press Enter"));
  widthEdit_ =
      named(new QLineEdit, "mandelbrotWidth",
            tr("The view's width in the complex plane: type one (e.g. 1e-300, down to 1e-100000) and press Enter\n"
               "to zoom the centre to it"));
  auto* copy = named(new QPushButton(tr("Copy")), "mandelbrotCopyLocation",
                     tr("Copy the location as --center X,Y --width W (gpulab-cli mandelbrot takes it as it is)"));
  auto* paste = named(new QPushButton(tr("Paste")), "mandelbrotPasteLocation",
                      tr("Go to the location on the clipboard (X, Y / X, Y, WIDTH / --center X,Y --width W)"));

  newtonButton_ = named(
      new QPushButton(tr("Zoom to minibrot")), "mandelbrotNewton",
      tr("Find the minibrot nearest the centre (N: nearest the cursor) with Newton's method and zoom towards it"));
  newtonDepth_ = named(new QComboBox, "mandelbrotNewtonDepth",
                       tr("How far to zoom, in log scale, from the view's width to the minibrot's size: half-way, "
                          "or onto it (the whole minibrot framed)"));
  addItems<double>(newtonDepth_, {{tr("half-way"), 0.5}, {tr("3/4 of the way"), 0.75}, {tr("onto it"), 1.0}});
  newtonStatus_ = named(new QLabel, "mandelbrotNewtonStatus");
  newtonStatus_->setWordWrap(true);
  newtonStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  newtonStatus_->hide();

  auto* box = new QWidget;
  auto* form = new QFormLayout(box);
  form->setContentsMargins(0, 0, 0, 0);
  form->addRow(tr("Centre"), centreEdit_);
  form->addRow(tr("Width"), rowWidget({widthEdit_, copy, paste}, widthEdit_));
  form->addRow(tr("Minibrot"), rowWidget({newtonButton_, newtonDepth_}, newtonButton_));
  form->addRow(newtonStatus_);

  connect(centreEdit_, &QLineEdit::returnPressed, this, [this] { goToLocation(centreEdit_->text()); });
  connect(widthEdit_, &QLineEdit::returnPressed, this, [this] { zoomToWidth(widthEdit_->text()); });
  // Text left without Enter (or rejected, then left) gives way to the view's location again.
  for (QLineEdit* edit : {centreEdit_, widthEdit_})
    connect(edit, &QLineEdit::editingFinished, this, [this, edit] {
      if (edit->hasFocus()) return;  // Enter: returnPressed has dealt with it
      edit->setModified(false);
      updateLocationFields();
    });
  connect(copy, &QPushButton::clicked, this, [this] {
    QApplication::clipboard()->setText(locationText(view_));
    services_.showMessage(tr("Copied the location (width %1)").arg(shortWidthText(view_.width)));
  });
  connect(paste, &QPushButton::clicked, this, [this] { goToLocation(QApplication::clipboard()->text()); });
  connect(newtonButton_, &QPushButton::clicked, this, [this] { zoomToMinibrot(); });
  return box;
}

void MandelbrotTab::updateLocationFields() {
  if (centreEdit_ == nullptr) return;
  showText(centreEdit_, centreText(view_));
  showText(widthEdit_, widthText(view_.width));
}

// ---------------------------------------------------------------------------------------------
// Location and width

bool MandelbrotTab::goToLocation(const QString& text) {
  Location location;
  try {
    location = parseLocation(text);
  } catch (const std::invalid_argument& e) {
    showProblem(QString::fromUtf8(e.what()), false);
    showText(widthEdit_, widthText(view_.width));  // the centre field keeps the text to mend
    return false;
  }
  MandelbrotView v = view_;
  if (location.centre) {
    v.centerX = location.centre->x;
    v.centerY = location.centre->y;
  }
  if (location.width) v.width = *location.width;
  if (QString why; !accept(v, &why)) {  // e.g. a centre beyond +-10: said here, not over the canvas
    showProblem(why, false);
    return false;
  }
  centreEdit_->setModified(false);
  widthEdit_->setModified(false);
  return navigate(v);
}

bool MandelbrotTab::zoomToWidth(const QString& text) {
  MandelbrotView v = view_;
  try {
    v.width = gpulab::DeepWidth::parse(text.toStdString());
  } catch (const std::invalid_argument& e) {
    showProblem(QString::fromUtf8(e.what()), false);
    showText(centreEdit_, centreText(view_));  // the width field keeps the text to mend
    return false;
  }
  widthEdit_->setModified(false);
  return navigate(v);
}

// ---------------------------------------------------------------------------------------------
// Newton zoom

void MandelbrotTab::zoomToMinibrot(std::optional<QPointF> pixel, std::optional<double> fraction) {
  auto say = [this](const QString& text) {
    newtonStatus_->setText(text);
    newtonStatus_->show();
    services_.showMessage(text);
  };
  if (view_.julia) {
    say(tr("Newton zoom finds minibrots of the Mandelbrot set: go back to it first (J)."));
    emit newtonFinished(false);
    return;
  }
  if (newtonJob_.running()) {  // one search at a time; Cancel stops it
    services_.showMessage(tr("Already looking for a minibrot (Cancel stops the search)."));
    return;
  }
  const MandelbrotView from = view_;
  const MandelbrotView at = pixel ? recentred(view_, *pixel) : view_;
  const double f = fraction.value_or(newtonDepth_->currentData().toDouble());
  newtonButton_->setEnabled(false);
  cpuProgress_->setRange(0, 0);  // Newton says nothing of its progress: a busy bar
  cpuProgress_->show();
  say(tr("Looking for the minibrot nearest %1, %2...")
          .arg(shortDecimalText(at.centerX, 12), shortDecimalText(at.centerY, 12)));
  auto finish = [this] {
    newtonButton_->setEnabled(true);
    cpuProgress_->setRange(0, 100);
    if (!cpuJob_.running() && !saveJob_.running()) cpuProgress_->hide();
    updateCancelButton();
  };
  newtonJob_ = services_.engine.submit(
      this, [at](WorkerContext& ctx) { return findMinibrot(ctx, at); },
      [this, from, f, finish, say](gpulab::Nucleus n) {
        finish();
        MandelbrotView v = view_;
        v.centerX = n.x;
        v.centerY = n.y;
        try {
          v.width = gpulab::zoomTowards(from.width, n.size, f);
        } catch (const std::invalid_argument& e) {
          say(tr("Newton zoom: %1").arg(QString::fromUtf8(e.what())));
          emit newtonFinished(false);
          return;
        }
        const QString found = tr("Period-%1 minibrot of size %2, found in %3 Newton steps (%4)")
                                  .arg(n.period)
                                  .arg(sizeText(n.size))
                                  .arg(n.newtonSteps)
                                  .arg(formatMs(n.milliseconds));
        const bool moved = navigate(v);
        if (moved) say(tr("%1: zoomed to width %2.").arg(found, shortWidthText(v.width)));
        emit newtonFinished(moved);
      },
      {.coalesceKey = QStringLiteral("mandelbrot-newton"),
       .failed =
           [this, finish, say](const QString& why) {
             finish();
             say(tr("Newton zoom: %1").arg(why));
             emit newtonFinished(false);
           },
       .cancelled =
           [this, finish, say] {
             finish();
             say(tr("Newton zoom cancelled."));
             emit newtonFinished(false);
           },
       .progress = {}});
  updateCancelButton();
}

// ---------------------------------------------------------------------------------------------
// Iterations

int MandelbrotTab::automaticIterations(const gpulab::DeepWidth& width) const {
  const double n = std::round(gpulab::autoIterations(width) * iterationScale_);
  return static_cast<int>(std::min(n, static_cast<double>(gpulab::kMaxMandelbrotIterations)));
}

void MandelbrotTab::raiseIterations(const FrameCounts& counts, const MandelbrotView& rendered) {
  if (!autoIterations_->isChecked() || !samePlace(rendered, view_) || rendered.maxIterations != view_.maxIterations)
    return;
  const int base = gpulab::autoIterations(view_.width);
  const int limit = static_cast<int>(
      std::min<long long>(gpulab::kMaxMandelbrotIterations, static_cast<long long>(base) * kMaxIterationScale));
  const std::optional<int> raised = raisedIterations(counts, view_.maxIterations, limit);
  if (!raised) return;
  iterationScale_ = static_cast<double>(*raised) / base;
  MandelbrotView v = view_;
  if (accept(v, nullptr) && !(v == view_)) setViewInternal(v, false);
}

}  // namespace gpulab::gui
