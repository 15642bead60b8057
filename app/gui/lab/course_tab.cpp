#include "lab/course_tab.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFontMetricsF>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/course_arrays.hpp"
#include "gpulab/lab/matmul.hpp"
#include "gpulab/lab/matmul_table.hpp"
#include "widgets/control_builders.hpp"

namespace gpulab::gui {

namespace {

QString num(double v, int precision = 4) { return QString::number(v, 'g', precision); }
QString sci(double v) { return QString::number(v, 'e', 3); }
QString fixed(double v, int decimals) { return QString::number(v, 'f', decimals); }
QString typeName(lab::DType t) { return t == lab::DType::F32 ? QStringLiteral("f32") : QStringLiteral("f64"); }
QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// Sizes as whole numbers: "5120,10240" -> {5120, 10240}; "13x17" -> {13, 17} (axis).
std::vector<std::int64_t> parsedSizes(const QString& sizes, bool matrix) {
  std::vector<std::int64_t> out;
  for (const lab::SizePoint& p : lab::parseSizeList(sizes.toStdString())) {
    if (matrix) {
      if (p.size() > 2) throw std::invalid_argument("the axis study takes one matrix size, RxC");
      out = {p[0], p.size() == 2 ? p[1] : p[0]};
      return out;
    }
    if (p.size() != 1) throw std::invalid_argument("sizes are single numbers N here");
    out.push_back(p[0]);
  }
  return out;
}

std::vector<lab::DType> typesOf(const QString& types) {
  if (types == QLatin1String("f32")) return {lab::DType::F32};
  if (types == QLatin1String("f64")) return {lab::DType::F64};
  return {lab::DType::F32, lab::DType::F64};
}

QString placeNote() {
  const DeviceReport devices = queryDevices();
  return QStringLiteral("GPU: %1; CPU: %2.")
      .arg(devices.available() ? QString::fromStdString(selectedDeviceLabel()) : QString::fromStdString(devices.status),
           QString::fromStdString(cpuLabel()));
}

CourseResult matmulTable(const std::vector<std::int64_t>& sizes, const std::vector<lab::DType>& types, int reps,
                         double cpuLimitS, const CpuControl& control) {
  lab::MatmulTableOptions o;
  o.sizes.clear();
  for (std::int64_t n : sizes) o.sizes.push_back(static_cast<int>(std::min<std::int64_t>(n, lab::kMaxMatmulDim + 1)));
  o.dtypes = types;
  o.reps = reps;
  o.cpuLimitMs = cpuLimitS * 1000;
  const std::vector<lab::MatmulTableRow> rows = lab::runMatmulTable(o, control);
  CourseResult r;
  r.headers = {"N",          "type",       "impl",    "device",  "compute s",         "with copies s",
               "upload s",   "download s", "GFLOP/s", "speedup", "speedup w/ copies", "f64/f32",
               "rel. error", "allclose",   "note"};
  for (const lab::MatmulTableRow& row : rows) {
    QStringList cells = {QString::number(row.n), typeName(row.dtype), QString::fromStdString(row.impl),
                         QString::fromStdString(row.device)};
    if (row.measured) {
      const QString star = row.speedupEstimated ? QStringLiteral("*") : QString();
      cells << num(row.computeMs / 1000) << num(row.withCopiesMs / 1000) << num(row.uploadMs / 1000)
            << num(row.downloadMs / 1000) << fixed(row.gflops, 1)
            << (row.speedupCompute > 0 ? fixed(row.speedupCompute, 2) + "x" + star : QStringLiteral("-"))
            << (row.speedupWithCopies > 0 ? fixed(row.speedupWithCopies, 2) + "x" + star : QStringLiteral("-"))
            << (row.f64OverF32 > 0 ? fixed(row.f64OverF32, 2) : QStringLiteral("-"));
    } else {
      for (int i = 0; i < 8; ++i) cells << QStringLiteral("-");
    }
    cells << (row.isReference ? QStringLiteral("reference")
                              : (row.relativeError >= 0 ? sci(row.relativeError) : QStringLiteral("-")))
          << (row.allclose < 0 ? QStringLiteral("-")
                               : (row.allclose ? QStringLiteral("True") : QStringLiteral("False")))
          << QString::fromStdString(row.note);
    r.rows.push_back(cells);
  }
  r.note = QStringLiteral(
               "Inputs uniform in [0, 1) like np.random.random. GPU: median of %1 after 1 warm-up (CUDA events); "
               "with copies = upload A, B + compute + download C, each timed apart (pinned memory). CPU: OpenBLAS "
               "(what numpy.dot calls), skipped where one run is estimated above %2 s (* = speedup against that "
               "estimate). rel. error = ||C - C_cuBLAS||_F / ||C_cuBLAS||_F, cuBLAS of the same type; allclose = "
               "numpy.allclose (rtol 1e-05, atol 1e-08). %3")
               .arg(reps)
               .arg(cpuLimitS)
               .arg(placeNote());
  return r;
}

CourseResult tensorCores(const std::vector<std::int64_t>& sizes, int reps) {
  if (!cudaAvailable())
    throw std::runtime_error("the tensor-core study runs on the GPU only: " + queryDevices().status);
  CourseResult r;
  r.headers = {"N", "precision", "device", "compute ms", "TFLOP/s", "rel. error vs f64", "how"};
  lab::MatmulLab matmul;
  for (std::int64_t n64 : sizes) {
    const int n = static_cast<int>(std::min<std::int64_t>(n64, lab::kMaxMatmulDim + 1));
    for (const lab::Record& rec :
         matmul.measurePrecisions(enumValues<lab::GemmPrecision>(), {n, n, n}, {reps, 2, false, false})) {
      r.rows.push_back({QString::number(n), QString::fromStdString(rec.dtype), QString::fromStdString(rec.device),
                        num(rec.medianMs), fixed(rec.gflops / 1000, 1),
                        rec.note == "reference" ? QStringLiteral("reference") : sci(rec.relativeError),
                        QString::fromStdString(rec.params)});
      r.points.push_back({QString::fromStdString(rec.dtype), n, rec.gflops / 1000, rec.relativeError});
    }
  }
  r.note = QStringLiteral(
               "The same float32 inputs (uniform in [-1, 1)) multiplied by cuBLAS in each precision; the error is "
               "against cuBLAS float64 of those inputs and includes rounding them to the precision. Median of %1 "
               "after 2 warm-up, CUDA events, data on the GPU. %2")
               .arg(reps)
               .arg(placeNote());
  return r;
}

CourseResult linspaceStudy(std::size_t n, const std::vector<lab::DType>& types, int reps) {
  lab::CourseReduceOptions o;
  o.n = n;
  o.dtypes = types;
  o.reps = reps;
  const lab::CourseExact exact = lab::courseExact(n);
  CourseResult r;
  r.headers = {"what", "type", "accumulation", "device", "sum", "mean", "max", "sum error", "mean error", "ms"};
  for (const lab::CourseReduceRow& row : lab::runCourseReduce(o))
    r.rows.push_back({QStringLiteral("sum/mean/max"), typeName(row.dtype), text(toString(row.accumulation)),
                      QString::fromStdString(row.device), fixed(row.sum, 8), fixed(row.mean, 15), num(row.max),
                      sci(row.sumError), sci(row.meanError), num(row.reduceMs)});
  for (const lab::ExpressionRow& row : lab::runCourseExpressions(o))
    r.rows.push_back({text(toString(row.expression)), typeName(row.dtype), QStringLiteral("-"),
                      QString::fromStdString(row.device), QStringLiteral("-"), QStringLiteral("-"), QStringLiteral("-"),
                      QStringLiteral("max rel. %1").arg(sci(row.maxRelativeError)), QStringLiteral("-"),
                      num(row.medianMs)});
  r.note = QStringLiteral(
               "x = linspace(0, 1, N), y = linspace(1, 2, N) made where they are used (on the GPU: no upload), "
               "z = x**2 + 2*y, N = %1. Exact: sum = 3N + N(2N-1)/(6(N-1)) = %2, mean = 3 + 1/3 + 1/(6(N-1)) = %3, "
               "max = 5; errors are |value - exact| / exact. gpu_tree and cpu_pairwise accumulate in the type (like "
               "CuPy and NumPy), cpu_sequential is the plain loop, *_double accumulate in float64. Expressions: max "
               "relative error against long double. %4")
               .arg(n)
               .arg(QString::fromStdString(lab::exactText(exact.sum)))
               .arg(QString::fromStdString(lab::exactText(exact.mean)))
               .arg(placeNote());
  return r;
}

CourseResult axisStudy(int rows, int cols, const std::vector<lab::DType>& types, int reps) {
  lab::AxisOptions o;
  o.rows = rows;
  o.cols = cols;
  o.dtypes = types;
  o.reps = reps;
  CourseResult r;
  r.headers = {"op", "numpy", "type", "device", "ms", "GB/s", "max rel. error", "check"};
  for (const lab::AxisRow& row : lab::runAxisStudy(o)) {
    r.rows.push_back({text(toString(row.op)), QString::fromStdString(lab::axisOpPython(row.op)), typeName(row.dtype),
                      QString::fromStdString(row.device), num(row.medianMs), fixed(row.gbps, 1),
                      sci(row.maxRelativeError), row.ok ? QStringLiteral("ok") : QStringLiteral("FAILED")});
    r.failedChecks += row.ok ? 0 : 1;
  }
  r.note = QStringLiteral(
               "A %1 x %2 row-major matrix of values in [0, 1); sums in float64, results in the type, "
               "checked against plain loops in float64. Median of %3 after 2 warm-up. %4")
               .arg(rows)
               .arg(cols)
               .arg(reps)
               .arg(placeNote());
  return r;
}

QString studyTitle(CourseTab::Study s) {
  switch (s) {
    case CourseTab::Study::MatmulTable:
      return CourseTab::tr("Matrix-product table (Numba lab)");
    case CourseTab::Study::TensorCores:
      return CourseTab::tr("Tensor cores: speed against accuracy");
    case CourseTab::Study::Linspace:
      return CourseTab::tr("linspace: sum, mean, max against exact");
    case CourseTab::Study::Axis:
      return CourseTab::tr("Reductions along an axis, row normalisation");
  }
  return {};
}

QString defaultSizes(CourseTab::Study s) {
  switch (s) {
    case CourseTab::Study::MatmulTable:
      return QStringLiteral("1024,2048");
    case CourseTab::Study::TensorCores:
      return QStringLiteral("4096,8192");
    case CourseTab::Study::Linspace:
      return QStringLiteral("10000000");
    case CourseTab::Study::Axis:
      return QStringLiteral("4096x4096");
  }
  return {};
}

QString aboutText(CourseTab::Study s) {
  switch (s) {
    case CourseTab::Study::MatmulTable:
      return CourseTab::tr(
          "The Numba lab's table: naive and shared-memory tiled kernels, cuBLAS and the CPU, float32 "
          "and float64, with and without copies. The lab itself uses 5120, 10240, 20480.");
    case CourseTab::Study::TensorCores:
      return CourseTab::tr(
          "cuBLAS in float64, float32, TF32, bfloat16 and float16 (float32 accumulate): how much "
          "faster the tensor cores are, and what it costs in accuracy.");
    case CourseTab::Study::Linspace:
      return CourseTab::tr(
          "The study guide's example, checked against exact arithmetic, and transcendental "
          "elementwise expressions.");
    case CourseTab::Study::Axis:
      return CourseTab::tr("x.sum(axis=1), x.sum(axis=0), and each row divided by its sum or its norm.");
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// PrecisionPlot

PrecisionPlot::PrecisionPlot(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("coursePrecisionPlot"));
  setMinimumSize(360, 260);
}

void PrecisionPlot::setPoints(std::vector<PrecisionPoint> points, const QString& device) {
  points_ = std::move(points);
  device_ = device;
  update();
}

void PrecisionPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().base());
  const QRectF area(64, 28, width() - 64 - 24, height() - 28 - 48);
  p.setPen(palette().text().color());
  p.drawText(QRectF(0, 4, width(), 20), Qt::AlignCenter,
             device_.isEmpty() ? tr("cuBLAS: TFLOP/s against relative error")
                               : tr("cuBLAS on %1: TFLOP/s against relative error").arg(device_));
  if (points_.empty()) {
    p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap,
               tr("Run \"Tensor cores\" to see speed against accuracy for f64, f32, tf32, bf16 and f16."));
    return;
  }
  double top = 0;
  double lo = 1e-1, hi = 1e-16;
  constexpr double kF64Roundoff = 1.1102230246251565e-16;  // 2^-53: where the reference is drawn
  for (const PrecisionPoint& pt : points_) {
    top = std::max(top, pt.tflops);
    if (pt.relativeError <= 0) lo = std::min(lo, kF64Roundoff);
    if (pt.relativeError > 0) {
      lo = std::min(lo, pt.relativeError);
      hi = std::max(hi, pt.relativeError);
    }
  }
  const double x0 = std::floor(std::log10(lo)) - 0.5, x1 = std::ceil(std::log10(hi)) + 0.5;
  const double yTop = top * 1.15;
  auto mapX = [&](double err) {
    const double e = std::log10(std::max(err, 1e-30));
    return area.left() + (std::clamp(e, x0, x1) - x0) / (x1 - x0) * area.width();
  };
  auto mapY = [&](double t) { return area.bottom() - t / yTop * area.height(); };

  // Axes, decades and TFLOP/s grid.
  const QColor grid = palette().mid().color();
  p.setPen(grid);
  for (int d = static_cast<int>(std::ceil(x0)); d <= static_cast<int>(std::floor(x1)); ++d) {
    const double x = mapX(std::pow(10.0, d));
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    p.setPen(palette().text().color());
    p.drawText(QRectF(x - 30, area.bottom() + 4, 60, 16), Qt::AlignCenter, QStringLiteral("1e%1").arg(d));
    p.setPen(grid);
  }
  const double step = std::pow(10.0, std::floor(std::log10(std::max(yTop / 5, 1e-9))));
  const double tick = yTop / step > 20 ? step * 5 : (yTop / step > 8 ? step * 2 : step);
  for (double t = 0; t <= yTop; t += tick) {
    const double y = mapY(t);
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    p.setPen(palette().text().color());
    p.drawText(QRectF(0, y - 8, area.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter, num(t, 3));
    p.setPen(grid);
  }
  p.setPen(palette().text().color());
  p.drawRect(area);
  p.drawText(QRectF(area.left(), height() - 22, area.width(), 18), Qt::AlignCenter,
             tr("relative error against float64 (log scale; left is more accurate)"));
  p.save();
  p.translate(14, area.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-80, -10, 160, 20), Qt::AlignCenter, tr("TFLOP/s"));
  p.restore();

  // Points: a colour per precision, a filled disc for the largest N, a ring for the others.
  const QHash<QString, QColor> colours = {{"f64", QColor(31, 119, 180)},
                                          {"f32", QColor(44, 160, 44)},
                                          {"tf32", QColor(255, 127, 14)},
                                          {"bf16", QColor(214, 39, 40)},
                                          {"f16", QColor(148, 103, 189)}};
  int largest = 0;
  for (const PrecisionPoint& pt : points_) largest = std::max(largest, pt.n);
  // Labels beside their points, moved left where they would leave the plot and down where they
  // would cover one placed before.
  std::vector<QRectF> placed;
  const QFontMetricsF metrics(p.font());
  for (const PrecisionPoint& pt : points_) {
    const bool reference = pt.relativeError <= 0;
    const QPointF c(mapX(reference ? kF64Roundoff : pt.relativeError), mapY(pt.tflops));
    const QColor colour = colours.value(pt.precision, Qt::gray);
    p.setPen(QPen(colour, 2));
    p.setBrush(pt.n == largest ? QBrush(colour) : Qt::NoBrush);
    p.drawEllipse(c, 5, 5);
    const QString label = QStringLiteral("%1 %2: %3%4")
                              .arg(pt.precision)
                              .arg(pt.n)
                              .arg(fixed(pt.tflops, 1))
                              .arg(reference ? tr(" (the reference, at 2^-53)") : QString());
    QRectF box(c + QPointF(8, -metrics.height() - 2), QSizeF(metrics.horizontalAdvance(label) + 2, metrics.height()));
    if (box.right() > width() - 4) box.moveRight(c.x() - 8);
    for (int tries = 0; tries < 12; ++tries) {
      const bool overlaps =
          std::any_of(placed.begin(), placed.end(), [&](const QRectF& other) { return other.intersects(box); });
      if (!overlaps) break;
      box.translate(0, metrics.height());
    }
    placed.push_back(box);
    p.setPen(colour.darker(130));  // the label in its point's colour: no doubt which is which
    p.drawText(box, Qt::AlignLeft | Qt::AlignVCenter, label);
  }
}

// ---------------------------------------------------------------------------------------------
// CourseTab

CourseTab::CourseTab(TabServices& services, QWidget* parent) : QWidget(parent), services_(services) {
  buildUi();
  studyChanged();
}

CourseTab::~CourseTab() { job_.cancel(); }

void CourseTab::buildUi() {
  study_ = named(new QComboBox, "courseStudy");
  for (Study s : {Study::MatmulTable, Study::TensorCores, Study::Linspace, Study::Axis})
    study_->addItem(studyTitle(s), static_cast<int>(s));
  sizes_ = named(new QLineEdit, "courseSizes", tr("N, or a list: 5120,10240; the axis study takes RxC"));
  types_ = named(new QComboBox, "courseTypes");
  types_->addItem(tr("float32 and float64"), QStringLiteral("both"));
  types_->addItem(QStringLiteral("float32"), QStringLiteral("f32"));
  types_->addItem(QStringLiteral("float64"), QStringLiteral("f64"));
  reps_ = named(new QSpinBox, "courseReps", tr("Timed runs per measurement; the median is shown"));
  reps_->setRange(1, 1000);
  reps_->setValue(3);
  cpuLimit_ = named(new QDoubleSpinBox, "courseCpuLimit",
                    tr("Skip the CPU where one run is estimated to take longer (seconds)"));
  cpuLimit_->setRange(0.001, 3600);
  cpuLimit_->setDecimals(3);
  cpuLimit_->setValue(60);
  cpuLimitLabel_ = new QLabel(tr("CPU limit (s)"));
  about_ = new QLabel;
  about_->setWordWrap(true);
  run_ = named(new QPushButton(tr("Run")), "courseRun");
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  exportCsv_ = new QPushButton(tr("Export CSV..."));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  status_ = named(new QLabel, "courseStatus");
  status_->setWordWrap(true);
  auto* deviceHint = new QLabel(tr("The GPU and the CPU threads are chosen in the Device panel."));
  deviceHint->setWordWrap(true);

  auto* form = new QFormLayout;
  form->addRow(tr("Study"), study_);
  form->addRow(tr("Sizes"), sizes_);
  form->addRow(tr("Types"), types_);
  form->addRow(tr("Repetitions"), reps_);
  form->addRow(cpuLimitLabel_, cpuLimit_);
  auto* controls = new QWidget;
  auto* cl = new QVBoxLayout(controls);
  cl->addLayout(form);
  cl->addWidget(about_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  cl->addLayout(buttons);
  cl->addWidget(progress_);
  cl->addWidget(status_);
  cl->addWidget(deviceHint);
  cl->addStretch(1);
  cl->addWidget(exportCsv_);
  controls->setMaximumWidth(340);

  table_ = named(new QTableWidget, "courseTable");
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->setVisible(false);
  note_ = named(new QLabel, "courseNote");
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  plot_ = new PrecisionPlot;

  auto* results = new QWidget;
  auto* rl = new QVBoxLayout(results);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->addWidget(plot_, 2);
  rl->addWidget(table_, 3);
  rl->addWidget(note_);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(controls);
  layout->addWidget(results, 1);

  connect(study_, &QComboBox::currentIndexChanged, this, &CourseTab::studyChanged);
  connect(run_, &QPushButton::clicked, this, &CourseTab::run);
  connect(cancel_, &QPushButton::clicked, this, &CourseTab::cancel);
  connect(exportCsv_, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export CSV"), QStringLiteral("course.csv"), tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    QString error;
    if (!exportCsv(path, &error)) status_->setText(error);
  });
}

void CourseTab::studyChanged() {
  const Study s = study();
  sizes_->setText(defaultSizes(s));
  about_->setText(aboutText(s));
  const bool table = s == Study::MatmulTable;
  cpuLimit_->setVisible(table);
  cpuLimitLabel_->setVisible(table);
  types_->setEnabled(s != Study::TensorCores);
  reps_->setValue(table ? 3 : 10);
  plot_->setVisible(s == Study::TensorCores);
}

void CourseTab::setStudy(Study s) { study_->setCurrentIndex(study_->findData(static_cast<int>(s))); }
CourseTab::Study CourseTab::study() const { return static_cast<Study>(study_->currentData().toInt()); }
void CourseTab::setSizesText(const QString& sizes) { sizes_->setText(sizes); }
void CourseTab::setReps(int reps) { reps_->setValue(reps); }
void CourseTab::setCpuLimitSeconds(double seconds) { cpuLimit_->setValue(seconds); }
void CourseTab::setTypes(const QString& types) {
  const int row = types_->findData(types);
  if (row >= 0) types_->setCurrentIndex(row);
}
QString CourseTab::statusText() const { return status_->text(); }

void CourseTab::run() {
  const Study s = study();
  std::vector<std::int64_t> sizes;
  try {
    sizes = parsedSizes(sizes_->text(), s == Study::Axis);
    if (sizes.empty()) throw std::invalid_argument("no sizes");
    if (s == Study::Linspace && sizes.size() != 1) throw std::invalid_argument("linspace takes one size N");
  } catch (const std::invalid_argument& e) {
    lastRunFailed_ = true;
    status_->setText(QString::fromStdString(e.what()));
    emit runFinished();
    return;
  }
  const std::vector<lab::DType> types = typesOf(types_->currentData().toString());
  const int reps = reps_->value();
  const double limit = cpuLimit_->value();
  job_.cancel();
  lastRunFailed_ = false;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  status_->setText(tr("Running %1...").arg(studyTitle(s)));
  job_ = services_.engine.submit(
      this,
      [s, sizes, types, reps, limit](WorkerContext& ctx) {
        switch (s) {
          case Study::MatmulTable:
            return matmulTable(sizes, types, reps, limit, ctx.cpuControl());
          case Study::TensorCores:
            return tensorCores(sizes, reps);
          case Study::Linspace:
            return linspaceStudy(static_cast<std::size_t>(sizes.front()), types, reps);
          case Study::Axis:
            return axisStudy(static_cast<int>(std::min<std::int64_t>(sizes[0], 1 << 30)),
                             static_cast<int>(std::min<std::int64_t>(sizes[1], 1 << 30)), types, reps);
        }
        throw std::logic_error("unknown study");
      },
      [this](CourseResult result) {
        showResult(result);
        finish(result.failedChecks > 0 ? tr("%1 results outside their tolerance.").arg(result.failedChecks)
                                       : tr("Done: %1 rows.").arg(result.rows.size()),
               result.failedChecks > 0);
      },
      {.coalesceKey = QStringLiteral("course"),
       .failed = [this](const QString& why) { finish(why, true); },
       .cancelled = [this] { finish(tr("Cancelled."), false); },
       .progress = [this](double f) { progress_->setValue(static_cast<int>(f * 1000)); }});
}

void CourseTab::cancel() {
  if (running()) status_->setText(tr("Cancelling after the current measurement..."));
  job_.cancel();
}

void CourseTab::showResult(const CourseResult& result) {
  result_ = result;
  table_->clear();
  table_->setColumnCount(static_cast<int>(result.headers.size()));
  table_->setHorizontalHeaderLabels(result.headers);
  table_->setRowCount(static_cast<int>(result.rows.size()));
  for (int r = 0; r < static_cast<int>(result.rows.size()); ++r)
    for (int c = 0; c < result.rows[r].size(); ++c) {
      auto* item = new QTableWidgetItem(result.rows[r][c]);
      if (result.rows[r][c] == QLatin1String("False") || result.rows[r][c] == QLatin1String("FAILED"))
        item->setForeground(QColor(200, 40, 40));
      table_->setItem(r, c, item);
    }
  table_->resizeColumnsToContents();
  note_->setText(result.note);
  if (!result.points.empty())
    plot_->setPoints(result.points, result.rows.empty() ? QString() : result.rows.front().value(2));
}

void CourseTab::finish(const QString& message, bool isError) {
  lastRunFailed_ = isError;
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  progress_->setValue(isError ? 0 : 1000);
  status_->setText(message);
  status_->setStyleSheet(isError ? QStringLiteral("color: #c62828") : QString());
  emit runFinished();
}

bool CourseTab::exportCsv(const QString& path, QString* error) const {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  auto field = [](QString s) {
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')))
      s = QLatin1Char('"') + s.replace(QLatin1String("\""), QLatin1String("\"\"")) + QLatin1Char('"');
    return s;
  };
  QStringList header;
  for (const QString& h : result_.headers) header << field(h);
  QByteArray out = header.join(QLatin1Char(',')).toUtf8() + '\n';
  for (const QStringList& row : result_.rows) {
    QStringList cells;
    for (const QString& c : row) cells << field(c);
    out += cells.join(QLatin1Char(',')).toUtf8() + '\n';
  }
  if (file.write(out) != out.size()) {
    if (error) *error = tr("Writing %1 failed: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace gpulab::gui
