// The Mandelbrot tab's frames: which one to ask for next (preview while moving, full resolution when
// the view rests, supersampled after), handing it to the worker, showing it, and the CPU render beside
// the GPU.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "mandelbrot/mandelbrot_tab.hpp"
#include "mandelbrot/mandelbrot_worker.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui {

using gpulab::MandelbrotView;

// ---------------------------------------------------------------------------------------------
// Rendering

MandelbrotView MandelbrotTab::renderView(Quality quality, int divisor) const {
  MandelbrotView v = view_;
  if (quality == Quality::Preview) {
    v.imageWidth = std::max(1, v.imageWidth / divisor);
    v.imageHeight = std::max(1, v.imageHeight / divisor);
  } else if (quality == Quality::Super) {
    v.supersample = supersample_->currentData().toInt();
  }
  return v;
}

int MandelbrotTab::previewDivisor() const {
  if (!msPerMegapixel_) return 2;  // nothing measured yet
  const double megapixels = static_cast<double>(view_.imageWidth) * view_.imageHeight * 1e-6;
  for (int divisor : {1, 2})
    if (*msPerMegapixel_ * megapixels / (divisor * divisor) <= kInteractiveFrameBudgetMs) return divisor;
  return 4;
}

void MandelbrotTab::scheduleRender() {
  if (canvas_ == nullptr || historyIndex_ < 0) return;  // no size yet: the first resize starts it
  if (!isVisible()) {
    pending_ = true;  // the worker serves every tab: no frames for a tab nobody looks at
    return;
  }
  pending_ = false;
  if (inFlightKey_) {
    // frameDone asks again for the newest view. After a jump elsewhere (home, a bookmark, the location,
    // a Newton zoom) the frame on the worker is not worth waiting for: it is cancelled (a reference
    // orbit being computed included) and its outcome ignored.
    if (!(jumped_ && !samePlace(inFlightKey_->view, view_))) return;
    frameJob_.cancel();
    ++frameSerial_;
    endFrame();
    updateOverlay();
  }
  jumped_ = false;
  const gpulab::Colouring c = colouring();
  const int divisor = previewDivisor();
  const FrameKey full{renderView(Quality::Full), c}, super{renderView(Quality::Super), c};
  const FrameKey preview = divisor == 1 ? full : FrameKey{renderView(Quality::Preview, divisor), c};
  const bool superWanted = supersample_->currentData().toInt() > 1;
  auto shownView = [this](const FrameKey& k) { return shown_ && shown_->view == k.view; };
  FrameKey target = full;
  if (restTimer_->isActive()) {
    if (!shownView(full) && !shownView(super))
      target = preview;  // full resolution when it fits the frame budget; never step down while moving
    else
      target = shownView(super) ? super : full;
  } else if (superWanted && (shownView(full) || shownView(super))) {
    target = super;
  } else if (!superWanted && shownView(super)) {
    target = full;
  }
  if (shown_ && *shown_ == target) return;
  if (failed_ && *failed_ == target) return;  // do not retry a frame that failed until something changes
  try {
    gpulab::choosePrecision(target.view);
  } catch (const std::exception& e) {  // e.g. a supersampled frame beyond the size limit
    failed_ = target;
    message_->setText(QString::fromUtf8(e.what()));
    message_->show();
    return;
  }
  // The counts of a full frame at rest tell whether the iteration cap cut detail off.
  const bool wantCounts = autoIterations_->isChecked() && !restTimer_->isActive() && target == full;
  submitFrame(target, shownView(target), wantCounts);
}

void MandelbrotTab::submitFrame(const FrameKey& key, bool recolourOnly, bool wantCounts) {
  inFlightKey_ = key;
  const quint64 serial = ++frameSerial_;
  submittedAtMs_ = static_cast<double>(clock_.nsecsElapsed()) * 1e-6;
  slowFrameTimer_->start();
  const std::shared_ptr<MandelbrotWorkerState> state = state_;
  // Every outcome of a frame that was replaced (a jump cancelled it) is ignored.
  auto ended = [this, serial] {
    if (serial != frameSerial_) return false;
    endFrame();
    return true;
  };
  frameJob_ = services_.engine.submit(
      this,
      [state, key, recolourOnly, wantCounts](WorkerContext& ctx) {
        return renderFrame(*state, ctx, key.view, key.colouring, recolourOnly, wantCounts);
      },
      [this, key, ended](FrameResult r) {
        if (!ended()) return;
        frameDone(r, key);
        scheduleRender();
      },
      {.coalesceKey = QStringLiteral("mandelbrot-frame"),
       .failed =
           [this, key, ended](const QString& why) {
             if (!ended()) return;
             failed_ = key;
             message_->setText(tr("Frame failed: %1").arg(why));
             message_->show();
             services_.showError(why);
             updateOverlay();
             scheduleRender();
           },
       .cancelled =
           [this, key, ended] {
             if (!ended()) return;
             failed_ = key;  // cancelled by hand: not again until the view changes
             message_->setText(tr("Frame cancelled: the last frame stays until the view changes."));
             message_->show();
             updateOverlay();
           },
       .progress = {}});
}

void MandelbrotTab::frameDone(const FrameResult& result, const FrameKey& key) {
  canvas_->setFrame(result.image, key.view);
  shown_ = key;
  failed_.reset();
  shownPrecision_ = result.precision;
  if (result.reference) lastReference_ = result.reference;
  const std::optional<double> computeMs = result.computeMs;
  const qint64 now = clock_.elapsed();
  frameTimes_.push_back(now);
  while (!frameTimes_.empty() && frameTimes_.front() < now - 1000) frameTimes_.pop_front();
  if (computeMs) {
    lastComputeMs_ = computeMs;
    // The frame budget follows the recent frames (their iteration counts change with the view); a new
    // reference orbit or BLA table is a one-off, not what the next frames will cost.
    const double prepared = result.reference ? result.reference->referenceMs + result.reference->blaMs : 0.0;
    const double sample = std::max(0.0, result.workerMs - prepared) /
                          (static_cast<double>(key.view.rawWidth()) * key.view.rawHeight() * 1e-6);
    msPerMegapixel_ = msPerMegapixel_ ? 0.5 * (*msPerMegapixel_ + sample) : sample;
  }
  const int divisor =
      std::max(1, static_cast<int>(std::lround(static_cast<double>(view_.imageWidth) / key.view.imageWidth)));
  const bool full = divisor == 1;
  MandelbrotFrameInfo info;
  info.view = key.view;
  info.width = key.view.rawWidth();
  info.height = key.view.rawHeight();
  info.divisor = divisor;
  info.computeMs = computeMs;
  info.workerMs = result.workerMs;
  info.latencyMs = submittedAtMs_;  // the start; canvasPresented subtracts it
  info.onGpu = result.onGpu;
  info.precision = result.precision;
  info.reference = result.reference;
  unpresented_ = info;
  unpresentedSerial_ = canvas_->frameSerial();
  QStringList lines;
  if (lastComputeMs_)
    lines << tr("%1 frame  %2 compute  (%3x%4%5, %6)")
                 .arg(result.onGpu ? tr("GPU") : tr("CPU"), formatMs(*lastComputeMs_))
                 .arg(key.view.rawWidth())
                 .arg(key.view.rawHeight())
                 .arg(key.view.supersample > 1 ? tr(", supersampled")
                                               : (full ? QString() : tr(", preview 1/%1").arg(divisor)),
                      result.precision);
  if (const std::optional<ReferenceInfo>& r = result.reference) {
    const QString table = r->blaMs > 0 ? tr("; BLA table %1").arg(formatMs(r->blaMs)) : QString();
    if (r->reused)
      lines << tr("reference orbit reused%1").arg(table);
    else if (r->length > 0)
      lines << tr("new reference orbit: %1 points at %2 bits, %3%4")
                   .arg(r->length)
                   .arg(r->precisionBits)
                   .arg(formatMs(r->referenceMs), table);
    else
      lines << tr("new reference orbit: %1%2").arg(formatMs(r->referenceMs), table);
  }
  if (!computeMs) lines << tr("recoloured without recomputing");
  if (frameTimes_.size() > 1) lines << tr("%1 frames in the last second").arg(frameTimes_.size());
  if (!result.onGpu) lines << tr("no GPU: frames are rendered on the CPU");
  timing_->setText(lines.join(QLatin1Char('\n')));
  updateOverlay();
  emit frameShown(full);
  if (result.counts) raiseIterations(*result.counts, key.view);
}

bool MandelbrotTab::showsCurrentView() const {
  if (inFlightKey_ || unpresented_ || restTimer_->isActive() || !shown_) return false;
  const FrameKey full{renderView(Quality::Full), colouring()};
  return *shown_ == full ||
         (supersample_->currentData().toInt() > 1 && *shown_ == FrameKey{renderView(Quality::Super), full.colouring});
}

void MandelbrotTab::canvasPresented(quint64 serial) {
  if (!unpresented_ || serial != unpresentedSerial_) return;
  MandelbrotFrameInfo info = *unpresented_;
  unpresented_.reset();
  info.latencyMs = static_cast<double>(clock_.nsecsElapsed()) * 1e-6 - info.latencyMs;
  emit framePresented(info);
}

// ---------------------------------------------------------------------------------------------
// CPU render, side by side with the GPU

void MandelbrotTab::renderOnCpu() {
  const MandelbrotView v = view_;
  const std::shared_ptr<MandelbrotWorkerState> state = state_;
  cpuButton_->setEnabled(false);
  cpuProgress_->setValue(0);
  cpuProgress_->show();
  comparison_->setText(tr("CPU rendering %1x%2...").arg(v.imageWidth).arg(v.imageHeight));
  auto finish = [this] {
    cpuButton_->setEnabled(true);
    cpuProgress_->hide();
    updateCancelButton();  // the job counts as finished when its outcome is delivered
  };
  cpuJob_ = services_.engine.submit(
      this, [state, v](WorkerContext& ctx) { return measureCpuRender(*state, ctx, v); },
      [this, finish](gpulab::Measurement m) {
        finish();
        QString text;
        if (const auto cpu = cpuMs(m))
          text = tr("CPU %1 (%2 threads, median of %3)").arg(formatMs(*cpu)).arg(m.cpu->threads).arg(m.cpu->time.reps);
        if (const auto gpu = computeMs(m)) {
          text += tr("   GPU %1 (median of %2)").arg(formatMs(*gpu)).arg(m.gpu->compute.reps);
          if (const auto speedup = m.speedup()) text += tr("   %1 faster").arg(formatSpeedup(*speedup));
        }
        comparison_->setText(text);
        services_.timings.addRun(m);
        emit cpuRenderFinished();
      },
      {.coalesceKey = QStringLiteral("mandelbrot-cpu"),
       .failed =
           [this, finish](const QString& why) {
             finish();
             comparison_->setText(tr("CPU render failed: %1").arg(why));
           },
       .cancelled =
           [this, finish] {
             finish();
             comparison_->setText(tr("CPU render cancelled"));
           },
       .progress = [this](double f) { cpuProgress_->setValue(static_cast<int>(f * 100)); }});
  updateCancelButton();
}

}  // namespace gpulab::gui
