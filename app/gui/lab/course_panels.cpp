#include "lab/course_panels.hpp"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <stdexcept>

#include "gpulab/lab/memory_pool.hpp"
#include "gpulab/lab/timing_pitfalls.hpp"
#include "widgets/control_builders.hpp"

namespace gpulab::gui {

namespace {

QString number(double v) { return QString::number(v, 'g', 4); }

std::size_t parseCount(const QString& text, const QString& what) {
  const std::vector<lab::SizePoint> points = lab::parseSizeList(text.trimmed().toStdString());
  if (points.size() != 1 || points[0].size() != 1)
    throw std::invalid_argument(what.toStdString() + " is one number, like 4096, 64K or 1M");
  return static_cast<std::size_t>(points[0][0]);
}

QTableWidget* recordTable(const char* objectName) {
  auto* table = named(new QTableWidget, objectName);
  const QStringList headers = {QObject::tr("Variant"), QObject::tr("Implementation"), QObject::tr("Median ms"),
                               QObject::tr("Min ms"),  QObject::tr("Max ms"),         QObject::tr("Runs"),
                               QObject::tr("Note"),    QObject::tr("Parameters")};
  table->setColumnCount(static_cast<int>(headers.size()));
  table->setHorizontalHeaderLabels(headers);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->verticalHeader()->setVisible(false);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  return table;
}

QLabel* wrapping(const char* objectName) {
  auto* label = named(new QLabel, objectName);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

/// Controls on the left, results on the right.
void layOut(QWidget* panel, QFormLayout* form, QPushButton* run, QLabel* status, QLabel* text, QTableWidget* table,
            const QString& intro) {
  auto* controls = new QWidget;
  auto* left = new QVBoxLayout(controls);
  auto* introLabel = new QLabel(intro);
  introLabel->setWordWrap(true);
  left->addWidget(introLabel);
  left->addLayout(form);
  left->addWidget(run);
  left->addWidget(status);
  left->addStretch(1);
  controls->setMaximumWidth(380);
  auto* results = new QVBoxLayout;
  results->addWidget(text);
  results->addWidget(table, 1);
  auto* layout = new QHBoxLayout(panel);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(controls);
  layout->addLayout(results, 1);
}

void setStatus(QLabel* status, const QString& message, bool isError) {
  status->setText(message);
  status->setStyleSheet(isError ? QStringLiteral("color: #c0392b;") : QString());
}

}  // namespace

void showLabRecords(QTableWidget& table, const std::vector<lab::Record>& records) {
  table.setRowCount(static_cast<int>(records.size()));
  for (int row = 0; row < static_cast<int>(records.size()); ++row) {
    const lab::Record& r = records[static_cast<std::size_t>(row)];
    const QStringList cells = {QString::fromStdString(r.variant),
                               QString::fromStdString(r.impl),
                               number(r.medianMs),
                               number(r.minMs),
                               number(r.maxMs),
                               QString::number(r.reps),
                               QString::fromStdString(r.note),
                               QString::fromStdString(r.params)};
    for (int col = 0; col < static_cast<int>(cells.size()); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (col >= 2 && col <= 5) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (r.note.rfind("wrong", 0) == 0) item->setForeground(QColor(0xc0, 0x39, 0x2b));
      table.setItem(row, col, item);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// PoolPanel

PoolPanel::PoolPanel(TabServices& services, QWidget* parent) : QWidget(parent), services_(services) {
  allocations_ = named(new QSpinBox, "poolAllocations");
  allocations_->setRange(1, 1000000);
  allocations_->setValue(10000);
  minBytes_ = named(new QLineEdit(QStringLiteral("1K")), "poolMinBytes");
  maxBytes_ = named(new QLineEdit(QStringLiteral("64M")), "poolMaxBytes");
  live_ = named(new QSpinBox, "poolLive", tr("Allocations alive at a time: each new one frees the oldest"));
  live_->setRange(1, 100000);
  live_->setValue(16);
  seed_ = new QSpinBox;
  seed_->setRange(0, 1000000);
  seed_->setValue(42);
  rounds_ = named(new QSpinBox, "poolRounds", tr("Timed rounds per side after one untimed first round"));
  rounds_->setRange(1, 1000);
  rounds_->setValue(3);
  run_ = named(new QPushButton(tr("Run")), "poolRun");
  status_ = wrapping("poolStatus");
  summary_ = wrapping("poolSummary");
  table_ = recordTable("poolTable");
  auto* form = new QFormLayout;
  form->addRow(tr("Allocations"), allocations_);
  form->addRow(tr("Smallest"), minBytes_);
  form->addRow(tr("Largest"), maxBytes_);
  form->addRow(tr("Alive at once"), live_);
  form->addRow(tr("Seed"), seed_);
  form->addRow(tr("Rounds"), rounds_);
  layOut(this, form, run_, status_, summary_, table_,
         tr("Why CuPy keeps a memory pool: many allocations of mixed sizes (log-uniform), made and freed with "
            "cudaMalloc/cudaFree and with cudaMallocAsync/cudaFreeAsync from the device's default pool."));
  connect(run_, &QPushButton::clicked, this, &PoolPanel::run);
}

PoolPanel::~PoolPanel() { job_.cancel(); }

void PoolPanel::setAllocations(int count, const QString& minBytes, const QString& maxBytes, int live, int rounds) {
  allocations_->setValue(count);
  minBytes_->setText(minBytes);
  maxBytes_->setText(maxBytes);
  live_->setValue(live);
  rounds_->setValue(rounds);
}

QString PoolPanel::statusText() const { return status_->text(); }
QString PoolPanel::summaryText() const { return summary_->text(); }

void PoolPanel::run() {
  lab::PoolRequest request;
  try {
    request.allocations = allocations_->value();
    request.minBytes = parseCount(minBytes_->text(), tr("the smallest allocation"));
    request.maxBytes = parseCount(maxBytes_->text(), tr("the largest allocation"));
    request.live = live_->value();
    request.seed = static_cast<std::uint64_t>(seed_->value());
    request.rounds = rounds_->value();
    lab::validate(request);
  } catch (const std::invalid_argument& e) {
    lastRunFailed_ = true;
    setStatus(status_, QString::fromStdString(e.what()), true);
    emit runFinished();
    return;
  }
  job_.cancel();
  lastRunFailed_ = false;
  run_->setEnabled(false);
  setStatus(status_, tr("Allocating..."), false);
  job_ = services_.engine.submit(
      this,
      [request](WorkerContext& ctx) {
        lab::MemoryPoolLab lab;
        return lab.run(request, ctx.cpuControl());
      },
      [this](lab::PoolReport report) {
        records_ = report.records();
        showLabRecords(*table_, records_);
        summary_->setText(tr("%1 allocations, %2 requested in all, at most %3 alive at once, on %4.\n%5.\n"
                             "Default pool after the run (release threshold raised, everything freed): %6.\n"
                             "After cudaMemPoolTrimTo(pool, 0) (%7 ms; CuPy's free_all_blocks): %8.")
                              .arg(report.request.allocations)
                              .arg(QString::fromStdString(bytesText(report.requestedBytes)),
                                   QString::fromStdString(bytesText(report.peakLive)),
                                   QString::fromStdString(report.deviceName), QString::fromStdString(report.sentence()),
                                   QString::fromStdString(report.afterRun.text()), number(report.trimMs),
                                   QString::fromStdString(report.afterTrim.text())));
        finish(tr("Done."), false);
      },
      {.coalesceKey = QStringLiteral("lab-pool"),
       .failed = [this](const QString& why) { finish(why, true); },
       .cancelled = [this] { finish(tr("Cancelled."), false); }});
}

void PoolPanel::finish(const QString& message, bool isError) {
  lastRunFailed_ = isError;
  run_->setEnabled(true);
  setStatus(status_, message, isError);
  emit runFinished();
}

// ---------------------------------------------------------------------------------------------
// TimingPanel

namespace {

/// gpulab-cli beside the app (installed together) or in the build tree (app/cli beside app/gui).
QString findCli() {
  const QDir dir(QCoreApplication::applicationDirPath());
  for (const QString& candidate :
       {dir.filePath(QStringLiteral("gpulab-cli")), dir.filePath(QStringLiteral("../cli/gpulab-cli")),
        dir.filePath(QStringLiteral("../app/cli/gpulab-cli"))}) {
    const QFileInfo info(candidate);
    if (info.isFile() && info.isExecutable()) return info.canonicalFilePath();
  }
  return {};
}

}  // namespace

TimingPanel::TimingPanel(TabServices& services, QWidget* parent) : QWidget(parent), services_(services) {
  work_ = named(new QLineEdit(QStringLiteral("100,1000,10000,100000")), "timingWork",
                tr("Dependent multiply-adds per element: the kernel's length"));
  elements_ = named(new QLineEdit(QStringLiteral("1M")), "timingElements");
  reps_ = named(new QSpinBox, "timingReps");
  reps_->setRange(1, 10000);
  reps_->setValue(20);
  coldChild_ = named(new QCheckBox(tr("Cold start in a fresh process (gpulab-cli)")), "timingColdChild",
                     tr("Only a process that has not used CUDA shows the context's creation; this app's worker has"));
  coldChild_->setChecked(true);
  run_ = named(new QPushButton(tr("Run")), "timingRun");
  status_ = wrapping("timingStatus");
  lessons_ = wrapping("timingLessons");
  table_ = recordTable("timingTable");
  auto* form = new QFormLayout;
  form->addRow(tr("Work"), work_);
  form->addRow(tr("Elements"), elements_);
  form->addRow(tr("Repetitions"), reps_);
  form->addRow(coldChild_);
  layOut(this, form, run_, status_, lessons_, table_,
         tr("The same kernel timed three ways: a host clock around the launch alone (wrong: it measures the "
            "launch), a host clock around launch + synchronise, and CUDA events. And the cold start measured apart."));
  connect(run_, &QPushButton::clicked, this, &TimingPanel::run);
}

TimingPanel::~TimingPanel() { job_.cancel(); }

void TimingPanel::setWork(const QString& work, const QString& elements, int reps) {
  work_->setText(work);
  elements_->setText(elements);
  reps_->setValue(reps);
}

void TimingPanel::setColdStartInChild(bool on) { coldChild_->setChecked(on); }

QString TimingPanel::statusText() const { return status_->text(); }
QString TimingPanel::lessonsText() const { return lessons_->text(); }

void TimingPanel::run() {
  lab::TimingRequest request;
  try {
    request.work.clear();
    for (const QString& w : work_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      bool ok = false;
      const int v = w.trimmed().toInt(&ok);
      if (!ok) throw std::invalid_argument("work '" + w.trimmed().toStdString() + "' is not a whole number");
      request.work.push_back(v);
    }
    request.elements = parseCount(elements_->text(), tr("the element count"));
    request.reps = reps_->value();
    lab::validate(request);
  } catch (const std::invalid_argument& e) {
    lastRunFailed_ = true;
    setStatus(status_, QString::fromStdString(e.what()), true);
    emit runFinished();
    return;
  }
  const QString cli = coldChild_->isChecked() ? findCli() : QString();
  job_.cancel();
  lastRunFailed_ = false;
  run_->setEnabled(false);
  setStatus(status_, tr("Timing..."), false);
  job_ = services_.engine.submit(
      this,
      [request, cli](WorkerContext& ctx) {
        lab::TimingLab lab;
        lab::TimingReport report = lab.run(request, ctx.cpuControl());
        if (!cli.isEmpty())
          report.cold = lab::measureColdStartInChild({cli.toStdString(), "lab", "timing", "--cold-probe"});
        if (!report.cold.measured) {
          const std::string why = cli.isEmpty() ? std::string("no gpulab-cli found beside the app") : report.cold.error;
          report.cold = lab::measureColdStart(false);
          report.cold.where += " (" + why + ")";
        }
        return report;
      },
      [this](lab::TimingReport report) {
        records_ = report.records();
        showLabRecords(*table_, records_);
        QStringList lines;
        for (const std::string& s : report.lessons()) lines << QString::fromStdString(s);
        lessons_->setText(lines.join(QStringLiteral("\n\n")));
        finish(tr("Done on %1.").arg(QString::fromStdString(report.deviceName)), false);
      },
      {.coalesceKey = QStringLiteral("lab-timing"),
       .failed = [this](const QString& why) { finish(why, true); },
       .cancelled = [this] { finish(tr("Cancelled."), false); }});
}

void TimingPanel::finish(const QString& message, bool isError) {
  lastRunFailed_ = isError;
  run_->setEnabled(true);
  setStatus(status_, message, isError);
  emit runFinished();
}

}  // namespace gpulab::gui
