// The "FFT" tab: the photo's spectrum (log magnitude, centred, colour-mapped) with the filter's
// cutoffs drawn over it, the filter's controls (low/high/band-pass, band-stop; ideal, Gaussian,
// Butterworth; cutoffs, order, padding), and the filtered photo beside it. Every change runs the
// filter again on the worker (jobs coalesce: the newest wins), on the GPU and, when asked, on the
// CPU; timings go to the Timings panel, with cuFFT plan creation shown apart the first time.
#pragma once

#include <QImage>
#include <QWidget>
#include <memory>

#include "gpulab/fft/fft_filter.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace gpulab::gui {

class ImageView;

class FftTab : public QWidget {
  Q_OBJECT

 public:
  explicit FftTab(TabServices& services, QWidget* parent = nullptr);
  ~FftTab() override;

  /// The filter the controls describe (validated by the engine when it runs).
  gpulab::FftFilterSpec spec() const;
  ImageView& spectrumView() noexcept { return *spectrumView_; }
  ImageView& resultView() noexcept { return *resultView_; }
  /// A run was submitted and neither its result nor its failure has arrived yet.
  bool awaitingResult() const noexcept { return awaitingResult_; }

  /// Worker-side state: plans, buffers and the last spectrum; touched only by this tab's jobs.
  struct WorkerState;

 signals:
  /// A run finished and its images are shown (for tests and screenshots).
  void resultShown();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void buildUi();
  void controlsChanged();
  void photoChanged();
  void schedule();
  void useAsPhoto();
  void showSpectrum();

  TabServices& services_;
  std::shared_ptr<WorkerState> state_;
  JobHandle job_;

  QComboBox* band_ = nullptr;
  QComboBox* shape_ = nullptr;
  QDoubleSpinBox* cutoff_ = nullptr;
  QWidget* cutoff2Row_ = nullptr;  // its slider and spin box, used by band filters alone
  QDoubleSpinBox* cutoff2_ = nullptr;
  QSpinBox* order_ = nullptr;
  QComboBox* padding_ = nullptr;
  QComboBox* colorMap_ = nullptr;
  QCheckBox* gpu_ = nullptr;
  QCheckBox* cpu_ = nullptr;
  QPushButton* usePhoto_ = nullptr;
  QLabel* status_ = nullptr;
  ImageView* spectrumView_ = nullptr;
  ImageView* resultView_ = nullptr;

  QImage spectrum_;  // colour-mapped, without the overlay
  quint64 shownGeneration_ = 0;
  bool planShown_ = false;  // plan creation is reported once per photo shape
  bool pending_ = false;    // a change arrived while hidden: run when shown
  bool awaitingResult_ = false;
};

}  // namespace gpulab::gui
