// The "Course" tab: the course's studies that are tables rather than sweeps, run on the engine's
// worker with progress and cancel, each row naming the device it ran on:
//   * the Numba lab's matrix-product table (naive, tiled, cuBLAS, the CPU; f32 and f64; copies
//     excluded and included; speedups, f64/f32 ratios, errors against cuBLAS, allclose verdicts);
//   * cuBLAS on the tensor cores (f64, f32, tf32, bf16, f16): a plot of TFLOP/s against relative
//     error, each point labelled, beside its table;
//   * the study guide's linspace example (sum, mean, max against exact arithmetic) with the
//     transcendental expressions;
//   * reductions along an axis and row normalisations, GPU against CPU, checked.
// The GPU and the CPU threads are chosen in the Device dock (DevicePanel) for the whole app.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace gpulab::gui {

/// One point of the tensor-core plot.
struct PrecisionPoint {
  QString precision;  ///< "f64", "f32", "tf32", "bf16", "f16"
  int n = 0;
  double tflops = 0;
  double relativeError = 0;
};

/// TFLOP/s (linear, up) against relative error (log, right): the speed/accuracy trade in one view.
class PrecisionPlot : public QWidget {
  Q_OBJECT

 public:
  explicit PrecisionPlot(QWidget* parent = nullptr);
  void setPoints(std::vector<PrecisionPoint> points, const QString& device);
  const std::vector<PrecisionPoint>& points() const noexcept { return points_; }
  QSize sizeHint() const override { return {520, 360}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::vector<PrecisionPoint> points_;
  QString device_;
};

/// What a study returns to the GUI thread: a table ready to show and export.
struct CourseResult {
  QStringList headers;
  std::vector<QStringList> rows;
  std::vector<PrecisionPoint> points;  ///< tensor cores only
  QString note;                        ///< under the table: definitions, where it ran
  int failedChecks = 0;                ///< axis rows outside their tolerance
};

class CourseTab : public QWidget {
  Q_OBJECT

 public:
  enum class Study { MatmulTable, TensorCores, Linspace, Axis };

  explicit CourseTab(TabServices& services, QWidget* parent = nullptr);
  ~CourseTab() override;

  // --- the controls, for scripting and tests -------------------------------------------------
  void setStudy(Study study);
  Study study() const;
  void setSizesText(const QString& sizes);
  void setReps(int reps);
  void setCpuLimitSeconds(double seconds);
  /// "both", "f32" or "f64".
  void setTypes(const QString& types);

  void run();
  void cancel();
  bool running() const noexcept { return job_.running(); }
  bool lastRunFailed() const noexcept { return lastRunFailed_; }
  QString statusText() const;
  const CourseResult& result() const noexcept { return result_; }
  PrecisionPlot& precisionPlot() noexcept { return *plot_; }
  bool exportCsv(const QString& path, QString* error = nullptr) const;

 signals:
  void runFinished();

 private:
  void buildUi();
  void studyChanged();
  void showResult(const CourseResult& result);
  void finish(const QString& message, bool isError);

  TabServices& services_;
  JobHandle job_;
  CourseResult result_;
  bool lastRunFailed_ = false;

  QComboBox* study_ = nullptr;
  QLineEdit* sizes_ = nullptr;
  QComboBox* types_ = nullptr;
  QSpinBox* reps_ = nullptr;
  QDoubleSpinBox* cpuLimit_ = nullptr;
  QLabel* cpuLimitLabel_ = nullptr;
  QLabel* about_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* exportCsv_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* note_ = nullptr;
  PrecisionPlot* plot_ = nullptr;
};

}  // namespace gpulab::gui
