#include "lab/custom_kernel_panel.hpp"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <stdexcept>

#include "gpulab/lab/expression.hpp"
#include "widgets/code_editor.hpp"
#include "widgets/control_builders.hpp"

namespace gpulab::gui {

namespace {

constexpr const char* kExampleExpression = "y = sin(x)*2 + sqrt(abs(x))";

constexpr const char* kExampleSource = R"(// y = a * x + b, one thread per element
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
)";

QString number(double v) { return QString::number(v, 'g', 4); }

QStringList fields(const QString& text) {
  return text.split(QRegularExpression(QStringLiteral("[\\s;]+")), Qt::SkipEmptyParts);
}

std::size_t parseCount(const QString& text, const char* what) {
  const std::vector<lab::SizePoint> points = lab::parseSizeList(text.trimmed().toStdString());
  if (points.size() != 1 || points[0].size() != 1)
    throw std::invalid_argument(std::string(what) + " is one number, like 4096, 64K or 1M");
  return static_cast<std::size_t>(points[0][0]);
}

}  // namespace

CustomKernelPanel::CustomKernelPanel(TabServices& services, QWidget* parent)
    : QWidget(parent),
      services_(services),
      expressionText_(QString::fromLatin1(kExampleExpression)),
      sourceText_(QString::fromLatin1(kExampleSource)) {
  buildUi();
  modeChanged();
}

CustomKernelPanel::~CustomKernelPanel() { job_.cancel(); }

void CustomKernelPanel::buildUi() {
  mode_ = named(new QComboBox, "customMode");
  mode_->addItem(tr("Elementwise expression (ElementwiseKernel)"), static_cast<int>(Mode::Elementwise));
  mode_->addItem(tr("Raw kernel, CUDA source (RawKernel)"), static_cast<int>(Mode::Raw));
  editor_ = named(new CodeEditor, "customEditor");
  editor_->setMinimumHeight(160);

  inputs_ = named(new QLineEdit, "customInputs",
                  tr("How inputs are filled, separated by spaces: x=linspace:-10:10 w=random:0:1.\n"
                     "Inputs not named: the first linspace(-10, 10), the others random in [-1, 1)."));
  inputs_->setPlaceholderText(tr("x=linspace:-10:10  (default)"));
  elementwiseFields_ = new QWidget;
  auto* elementwiseForm = new QFormLayout(elementwiseFields_);
  elementwiseForm->setContentsMargins(0, 0, 0, 0);
  elementwiseForm->addRow(tr("Inputs"), inputs_);

  kernelName_ = named(new QLineEdit(QStringLiteral("axpb")), "customKernelName",
                      tr("The extern \"C\" __global__ function to launch"));
  args_ = named(new QLineEdit(QStringLiteral("in:x out:y f32:a=2.5 f32:b=1 i64:n=n")), "customArgs",
                tr("The kernel's arguments in order: in:x[=linspace:A:B|=random:A:B], out:y,\n"
                   "and scalars TYPE:NAME=VALUE with TYPE i32, i64, u32, u64, f32, f64 and VALUE a number or n"));
  expect_ = named(new QLineEdit(QStringLiteral("y = a*x + b")), "customExpect",
                  tr("The outputs as an expression of the inputs and scalars, for the CPU check;\n"
                     "empty: the kernel is timed only"));
  grid_ = named(new QLineEdit(QStringLiteral("auto")), "customGrid", tr("auto (ceil(size / block)), 1024 or 64x64"));
  block_ = named(new QLineEdit(QStringLiteral("256")), "customBlock", tr("256, 16x16 or 8x8x4"));
  shared_ = named(new QLineEdit(QStringLiteral("0")), "customShared", tr("Dynamic shared memory per block, bytes"));
  auto* open = new QPushButton(tr("Open .cu..."));
  rawFields_ = new QWidget;
  rawFields_->setHidden(true);  // Elementwise comes first
  auto* rawForm = new QFormLayout(rawFields_);
  rawForm->setContentsMargins(0, 0, 0, 0);
  rawForm->addRow(tr("Kernel"), rowWidget({kernelName_, open}, kernelName_));
  rawForm->addRow(tr("Arguments"), args_);
  rawForm->addRow(tr("Check"), expect_);
  rawForm->addRow(tr("Grid / block / shared"), rowWidget({grid_, block_, shared_}));

  size_ = named(new QLineEdit(QStringLiteral("1M")), "customSize", tr("Elements per array: 4096, 64K, 1M"));
  dtype_ = new QComboBox;
  addItems<lab::DType>(dtype_,
                       {{QStringLiteral("float32"), lab::DType::F32}, {QStringLiteral("float64"), lab::DType::F64}});
  reps_ = new QSpinBox;
  reps_->setRange(1, 1000);
  reps_->setValue(10);
  reps_->setToolTip(tr("Timed runs after 2 warm-up runs; the median is shown"));
  run_ = named(new QPushButton(tr("Compile && Run")), "customRun");
  run_->setDefault(true);
  status_ = named(new QLabel, "customStatus");
  status_->setWordWrap(true);

  auto* common = new QFormLayout;
  common->addRow(tr("Kind"), mode_);
  auto* common2 = new QFormLayout;
  common2->addRow(tr("Size / type / reps"), rowWidget({size_, dtype_, reps_}, size_));

  diagnostics_ = named(new QListWidget, "customDiagnostics");
  diagnostics_->setMaximumHeight(90);
  diagnostics_->setVisible(false);
  summary_ = named(new QLabel, "customSummary");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  table_ = named(new QTableWidget, "customTable");
  const QStringList headers = {tr("Implementation"), tr("Type"),      tr("Size"),      tr("Median ms"),
                               tr("Min ms"),         tr("Max ms"),    tr("Upload ms"), tr("Download ms"),
                               tr("Rate"),           tr("Max error"), tr("Note"),      tr("Parameters")};
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

  auto* left = new QWidget;
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addLayout(common);
  leftLayout->addWidget(editor_, 1);
  leftLayout->addWidget(diagnostics_);
  leftLayout->addWidget(elementwiseFields_);
  leftLayout->addWidget(rawFields_);
  leftLayout->addLayout(common2);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addStretch(1);
  leftLayout->addLayout(buttons);
  leftLayout->addWidget(status_);

  auto* right = new QWidget;
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  rightLayout->addWidget(summary_);
  rightLayout->addWidget(table_, 1);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  connect(mode_, &QComboBox::currentIndexChanged, this, &CustomKernelPanel::modeChanged);
  connect(run_, &QPushButton::clicked, this, &CustomKernelPanel::compileAndRun);
  connect(diagnostics_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    const int line = item->data(Qt::UserRole).toInt();
    if (line > 0) editor_->goTo(line, item->data(Qt::UserRole + 1).toInt());
  });
  connect(diagnostics_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    const int line = item->data(Qt::UserRole).toInt();
    if (line > 0) editor_->goTo(line, item->data(Qt::UserRole + 1).toInt());
  });
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a CUDA source"), {}, tr("CUDA (*.cu *.cuh)"));
    if (path.isEmpty()) return;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
      services_.showError(tr("Cannot read %1: %2").arg(path, file.errorString()));
      return;
    }
    editor_->setPlainText(QString::fromUtf8(file.readAll()));
  });
}

void CustomKernelPanel::modeChanged() {
  // Each kind keeps its own text while the other is shown.
  const Mode now = mode();
  const bool wasRaw = !rawFields_->isHidden();
  if (wasRaw != (now == Mode::Raw)) (wasRaw ? sourceText_ : expressionText_) = editor_->toPlainText();
  elementwiseFields_->setHidden(now == Mode::Raw);
  rawFields_->setHidden(now != Mode::Raw);
  editor_->setPlainText(now == Mode::Raw ? sourceText_ : expressionText_);
  diagnostics_->clear();
  diagnostics_->setVisible(false);
}

void CustomKernelPanel::setMode(Mode m) { mode_->setCurrentIndex(mode_->findData(static_cast<int>(m))); }

CustomKernelPanel::Mode CustomKernelPanel::mode() const { return static_cast<Mode>(mode_->currentData().toInt()); }

void CustomKernelPanel::setCode(const QString& text) { editor_->setPlainText(text); }
void CustomKernelPanel::setSizeText(const QString& size) { size_->setText(size); }
void CustomKernelPanel::setDType(lab::DType dtype) {
  dtype_->setCurrentIndex(dtype_->findData(static_cast<int>(dtype)));
}
void CustomKernelPanel::setReps(int reps) { reps_->setValue(reps); }

void CustomKernelPanel::setRawKernel(const QString& name, const QString& args, const QString& expect) {
  kernelName_->setText(name);
  args_->setText(args);
  expect_->setText(expect);
}

void CustomKernelPanel::setLaunch(const QString& grid, const QString& block, const QString& shared) {
  grid_->setText(grid);
  block_->setText(block);
  shared_->setText(shared);
}

QString CustomKernelPanel::statusText() const { return status_->text(); }

QStringList CustomKernelPanel::diagnosticTexts() const {
  QStringList texts;
  for (int i = 0; i < diagnostics_->count(); ++i) texts << diagnostics_->item(i)->text();
  return texts;
}

// ---------------------------------------------------------------------------------------------
// Running

void CustomKernelPanel::compileAndRun() {
  const Mode m = mode();
  const std::string code = editor_->toPlainText().toStdString();
  lab::ElementwiseRequest elementwise;
  lab::RawKernelRequest raw;
  try {
    const std::size_t size = parseCount(size_->text(), "the size");
    const auto dtype = static_cast<lab::DType>(dtype_->currentData().toInt());
    if (m == Mode::Elementwise) {
      elementwise.expression = code;
      elementwise.dtype = dtype;
      elementwise.size = size;
      for (const QString& spec : fields(inputs_->text()))
        elementwise.inputs.push_back(lab::parseInputSpec(spec.toStdString()));
      elementwise.reps = reps_->value();
    } else {
      raw.source = code;
      raw.sourceName = "kernel.cu";
      raw.kernel = kernelName_->text().trimmed().toStdString();
      for (const QString& spec : fields(args_->text())) raw.args.push_back(lab::parseKernelArg(spec.toStdString()));
      const QString grid = grid_->text().trimmed();
      if (grid != QLatin1String("auto")) {
        raw.launch.autoGrid = false;
        raw.launch.grid = lab::parseDims(grid.toStdString(), "the grid");
      }
      raw.launch.block = lab::parseDims(block_->text().trimmed().toStdString(), "the block");
      const QString shared = shared_->text().trimmed();
      raw.launch.dynamicSharedBytes =
          shared.isEmpty() || shared == QLatin1String("0") ? 0 : parseCount(shared, "the shared memory");
      raw.check = expect_->text().toStdString();
      raw.dtype = dtype;
      raw.size = size;
      raw.reps = reps_->value();
    }
  } catch (const std::invalid_argument& e) {
    lastRunFailed_ = true;
    status_->setText(QString::fromStdString(e.what()));
    status_->setStyleSheet(QStringLiteral("color: #c0392b;"));
    emit runFinished();
    return;
  }

  job_.cancel();
  lastRunFailed_ = false;
  run_->setEnabled(false);
  editor_->clearMarks();
  diagnostics_->clear();
  diagnostics_->setVisible(false);
  status_->setStyleSheet({});
  status_->setText(tr("Compiling and running on the worker..."));
  job_ = services_.engine.submit(
      this,
      [m, elementwise, raw](WorkerContext&) {
        Outcome o;
        try {
          // A lab per run: its stream and buffers live and die on the worker. Compiled kernels stay
          // in the process's cache, so the second run of the same source does not compile.
          lab::CustomKernelLab lab;
          o.run = m == Mode::Elementwise ? lab.runElementwise(elementwise) : lab.runRaw(raw);
        } catch (const lab::ExpressionError& e) {
          o.error = QString::fromStdString(e.what());
          o.diagnostics.push_back({e.line(), e.column(), "error", e.message()});
        } catch (const lab::CompileError& e) {
          o.error = QString::fromStdString(e.what());
          o.diagnostics = e.diagnostics();
          o.inEditor = m == Mode::Raw;              // an expression's errors are in the generated source
        } catch (const std::invalid_argument& e) {  // launch checks, argument binding
          o.error = QString::fromStdString(e.what());
        }
        return o;
      },
      [this](Outcome o) { showOutcome(o); },
      {.coalesceKey = QStringLiteral("lab-custom"), .failed = [this](const QString& why) { finish(why, true); }});
}

void CustomKernelPanel::showDiagnostics(const std::vector<lab::CompileDiagnostic>& diagnostics, bool inEditor) {
  diagnostics_->clear();
  std::vector<CodeEditor::Mark> marks;
  for (const lab::CompileDiagnostic& d : diagnostics) {
    auto* item = new QListWidgetItem(QString::fromStdString(d.text()), diagnostics_);
    const bool error = d.severity != "warning" && d.severity != "remark";
    item->setForeground(error ? QColor(0xc0, 0x39, 0x2b) : QColor(0xb9, 0x77, 0x0e));
    if (inEditor && d.line > 0) {
      item->setData(Qt::UserRole, d.line);
      item->setData(Qt::UserRole + 1, d.column);
      marks.push_back({d.line, d.column, QString::fromStdString(d.severity + ": " + d.message), error});
    }
  }
  editor_->setMarks(marks);
  diagnostics_->setVisible(diagnostics_->count() > 0);
}

void CustomKernelPanel::showOutcome(const Outcome& o) {
  if (!o.run) {
    showDiagnostics(o.diagnostics, o.inEditor);
    finish(o.error, true);
    return;
  }
  const lab::KernelRun& run = *o.run;
  lastRun_ = run;
  if (!run.compiled.log.empty()) showDiagnostics(lab::parseCompileLog(run.compiled.log), mode() == Mode::Raw);

  QStringList lines;
  if (run.gpuRan) {
    lines << tr("<b>Compile:</b> %1").arg(QString::fromStdString(run.compileSummary()).toHtmlEscaped())
          << tr("<b>Module load:</b> %1 ms (cudaLibraryLoadData)").arg(number(run.loadMs))
          << tr("<b>Launch:</b> grid %1x%2x%3, block %4x%5x%6, %7 registers/thread on %8")
                 .arg(run.grid[0])
                 .arg(run.grid[1])
                 .arg(run.grid[2])
                 .arg(run.block[0])
                 .arg(run.block[1])
                 .arg(run.block[2])
                 .arg(run.registers)
                 .arg(QString::fromStdString(run.deviceName).toHtmlEscaped())
          << tr("<b>Run:</b> kernel %1 ms (CUDA events, median of %2 after warm-up), upload %3 ms, download %4 ms")
                 .arg(number(run.gpu.medianMs))
                 .arg(run.gpu.reps)
                 .arg(number(run.uploadMs))
                 .arg(number(run.downloadMs));
  }
  if (run.checked) {
    for (const lab::OutputCheck& c : run.checks)
      lines << tr("<b>Check %1:</b> max error %2 (tolerance %3): %4")
                   .arg(QString::fromStdString(c.name), QString::number(c.maxError, 'g', 3),
                        QString::number(run.tolerance, 'g', 1),
                        c.mismatches == 0
                            ? tr("ok")
                            : tr("<span style='color:#c0392b'>%1 of %2 differ, first at %3: gpu %4, "
                                 "cpu %5</span>")
                                  .arg(c.mismatches)
                                  .arg(run.size)
                                  .arg(c.firstMismatch)
                                  .arg(QString::number(c.gpuValue, 'g', 9), QString::number(c.cpuValue, 'g', 9)));
  } else {
    lines << tr("<b>Check:</b> %1").arg(QString::fromStdString(run.checkNote).toHtmlEscaped());
  }
  summary_->setText(lines.join(QStringLiteral("<br>")));

  const std::vector<lab::Record> rows = run.records();
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    const lab::Record& r = rows[static_cast<std::size_t>(row)];
    const QStringList cells = {QString::fromStdString(r.impl),
                               QString::fromStdString(r.dtype),
                               QString::number(r.size, 'f', 0),
                               number(r.medianMs),
                               number(r.minMs),
                               number(r.maxMs),
                               r.gpu ? number(r.uploadMs) : QString(),
                               r.gpu ? number(r.downloadMs) : QString(),
                               r.gbps > 0 ? number(r.gbps) + QStringLiteral(" GB/s") : QString(),
                               r.relativeError >= 0 ? QString::number(r.relativeError, 'g', 3) : QString(),
                               QString::fromStdString(r.note),
                               QString::fromStdString(r.params)};
    for (int col = 0; col < static_cast<int>(cells.size()); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (col >= 2 && col <= 9) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, col, item);
    }
  }
  if (!run.passed)
    finish(tr("Verification failed: the GPU and the CPU disagree beyond the tolerance."), true);
  else if (!run.gpuRan)
    finish(tr("No CUDA device: the expression ran on the CPU alone."), false);
  else
    finish(tr("Done: %1.").arg(QString::fromStdString(run.compileSummary())), false);
}

void CustomKernelPanel::finish(const QString& message, bool isError) {
  lastRunFailed_ = isError;
  run_->setEnabled(true);
  status_->setText(message);
  status_->setStyleSheet(isError ? QStringLiteral("color: #c0392b;") : QString());
  if (!isError && services_.showMessage) services_.showMessage(message);
  emit runFinished();
}

}  // namespace gpulab::gui
