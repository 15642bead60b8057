// The "Lab" tab: pick an experiment (matrix product, transpose, transfers, elementwise,
// reduction), a sweep of sizes, a type, implementations and variants; run it on the engine's worker
// with progress and cancel; see, side by side, time against size on log-log axes (CPU and each GPU
// implementation, with and without copies, the size where the GPU starts to win marked and stated
// in words) and throughput against the measured ceiling (sizes that fit in L2 shaded), and a table
// of every measurement. The table exports to CSV, the plots to PNG. Measurements arrive while the
// sweep runs; a cancelled sweep keeps what it measured.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "gpulab/lab/lab.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace gpulab::gui {

class LabPlot;

class LabTab : public QWidget {
  Q_OBJECT

 public:
  explicit LabTab(TabServices& services, QWidget* parent = nullptr);
  ~LabTab() override;

  // --- the controls, for scripting and tests (the widgets do the same) ------------------------
  void setExperiment(lab::Experiment experiment);
  lab::Experiment experiment() const;
  void setSizesText(const QString& sizes);
  void setDType(lab::DType dtype);
  void setReps(int reps);
  void setWithCopies(bool on);
  /// Checks exactly these implementations (names as lab::implNames); unknown names are ignored.
  void setSelectedImpls(const QStringList& impls);
  QStringList selectedImpls() const;
  void setSelectedVariants(const QStringList& variants);

  /// The variant both plots show ("sum", "h2d", ...); ignored when the data has no such variant.
  void setPlotVariant(const QString& variant);

  /// Starts the sweep on the worker (cancelling one still running). Bad sizes are reported at once.
  void run();
  /// run() as soon as the worker has said whether there is a GPU (at once when it has), so that
  /// GPU implementations are offered or greyed out before the request is built.
  void runWhenReady();
  void cancel();
  bool running() const noexcept { return job_.running(); }
  /// False until the worker has said whether there is a GPU.
  bool deviceKnown() const noexcept { return deviceKnown_; }

  /// Whether the last sweep ended with an error or the last request was refused (bad sizes, nothing
  /// chosen); false after one that was done or cancelled.
  bool lastRunFailed() const noexcept { return lastRunFailed_; }

  const std::vector<lab::Record>& records() const noexcept { return records_; }
  /// The crossover sentences under the plots (those of the plotted variant).
  QString crossoverText() const;
  QString statusText() const;
  /// Time against size.
  LabPlot& plot() noexcept { return *plot_; }
  /// Throughput against the ceiling.
  LabPlot& ratePlot() noexcept { return *ratePlot_; }

  /// Writes every measurement as CSV (lab::csvHeader, lab::toCsvRow). False with the reason.
  bool exportCsv(const QString& path, QString* error = nullptr) const;
  /// Saves both plots as shown, side by side, to a PNG. False with the reason.
  bool savePlot(const QString& path, QString* error = nullptr) const;

 signals:
  /// A sweep ended: done, failed or cancelled, or a request was refused before it started.
  void runFinished();

 private:
  struct Partial;

  void buildUi();
  void experimentChanged();
  void updateImplAvailability();
  void takePartial();
  void showRecords();
  void showCrossovers();
  /// A request that cannot start: said in the status line, counted as a failed run, runFinished().
  void refuse(const QString& message);
  void finish(const QString& message, bool isError);
  void setStatus(const QString& message, bool isError);
  /// Asks where to save (`title`, starting at the file name `suggested`, offering `filter`), saves
  /// there with `save`, and says how it went.
  void saveWithDialog(const QString& title, const QString& suggested, const QString& filter,
                      bool (LabTab::*save)(const QString& path, QString* error) const);

  TabServices& services_;
  JobHandle job_;
  std::shared_ptr<Partial> partial_;
  std::vector<lab::Record> records_;
  std::vector<lab::Crossover> crossovers_;
  bool deviceKnown_ = false;
  bool hasGpu_ = false;
  bool runPending_ = false;
  bool lastRunFailed_ = false;
  QString deviceStatus_;

  QComboBox* experiment_ = nullptr;
  QLineEdit* sizes_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QListWidget* impls_ = nullptr;
  QLabel* variantsLabel_ = nullptr;
  QListWidget* variants_ = nullptr;
  QCheckBox* withCopies_ = nullptr;
  QCheckBox* check_ = nullptr;
  QSpinBox* reps_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* plotVariantLabel_ = nullptr;
  QComboBox* plotVariant_ = nullptr;
  QWidget* plots_ = nullptr;
  LabPlot* plot_ = nullptr;
  LabPlot* ratePlot_ = nullptr;
  QLabel* crossoverLabel_ = nullptr;
  QTableWidget* table_ = nullptr;
  QPushButton* exportCsv_ = nullptr;
  QPushButton* savePlot_ = nullptr;
};

}  // namespace gpulab::gui
