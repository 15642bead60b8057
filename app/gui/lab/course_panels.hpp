// Two pages of the Lab tab that are single experiments rather than sweeps:
//   PoolPanel    cudaMalloc/cudaFree against cudaMallocAsync/cudaFreeAsync on the default memory pool
//                over many mixed-size allocations: time per pair, the first round apart, the pool's
//                used/reserved bytes (CuPy's used_bytes/total_bytes) before and after trimming it.
//   TimingPanel  the same kernel timed three ways (host clock without synchronising: the wrong one;
//                host clock with it; CUDA events) at several amounts of work, and the cold start:
//                context creation, first launch and later launches, in a fresh gpulab-cli process
//                when one is found next to the app, else in the worker's process (and said so).
// Both run on the engine's worker and show a table (exportable like the sweeps' rows) and sentences.
#pragma once

#include <QWidget>
#include <vector>

#include "gpulab/lab/lab.hpp"
#include "shell/engine.hpp"
#include "shell/tab_services.hpp"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace gpulab::gui {

/// A table of lab records (variant, implementation, median/min/max, parameters, note) shared by the
/// two pages.
void showLabRecords(QTableWidget& table, const std::vector<lab::Record>& records);

class PoolPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PoolPanel(TabServices& services, QWidget* parent = nullptr);
  ~PoolPanel() override;

  void setAllocations(int count, const QString& minBytes, const QString& maxBytes, int live, int rounds);
  void run();
  bool running() const noexcept { return job_.running(); }
  bool lastRunFailed() const noexcept { return lastRunFailed_; }
  QString statusText() const;
  QString summaryText() const;
  const std::vector<lab::Record>& records() const noexcept { return records_; }

 signals:
  void runFinished();

 private:
  void finish(const QString& message, bool isError);

  TabServices& services_;
  JobHandle job_;
  bool lastRunFailed_ = false;
  std::vector<lab::Record> records_;
  QSpinBox* allocations_ = nullptr;
  QLineEdit* minBytes_ = nullptr;
  QLineEdit* maxBytes_ = nullptr;
  QSpinBox* live_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QSpinBox* rounds_ = nullptr;
  QPushButton* run_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
};

class TimingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TimingPanel(TabServices& services, QWidget* parent = nullptr);
  ~TimingPanel() override;

  void setWork(const QString& work, const QString& elements, int reps);
  void setColdStartInChild(bool on);
  void run();
  bool running() const noexcept { return job_.running(); }
  bool lastRunFailed() const noexcept { return lastRunFailed_; }
  QString statusText() const;
  QString lessonsText() const;
  const std::vector<lab::Record>& records() const noexcept { return records_; }

 signals:
  void runFinished();

 private:
  void finish(const QString& message, bool isError);

  TabServices& services_;
  JobHandle job_;
  bool lastRunFailed_ = false;
  std::vector<lab::Record> records_;
  QLineEdit* work_ = nullptr;
  QLineEdit* elements_ = nullptr;
  QSpinBox* reps_ = nullptr;
  QCheckBox* coldChild_ = nullptr;
  QPushButton* run_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* lessons_ = nullptr;
  QTableWidget* table_ = nullptr;
};

}  // namespace gpulab::gui
