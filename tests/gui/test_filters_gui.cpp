// The Filters tab, offscreen: its place in the main window, the kernel presets and editor, an Apply
// on the CPU giving exactly the engine's runCpu pixels and a Timings row, Cancel leaving everything
// as it was, bad parameters reported in a sentence, Keep result and Undo chaining filters, the
// before/after view's split and Space toggle, and `--apply`. The GPU runs compare with the naive
// reference and skip without a device.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QKeyEvent>
#include <QKeySequence>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <sstream>

#include "filters/filters_presets.hpp"
#include "filters/filters_tab.hpp"
#include "filters/kernel_editor.hpp"
#include "filters/param_controls.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/io/image_io.hpp"
#include "shell/command_line.hpp"
#include "shell/engine.hpp"
#include "shell/main_window.hpp"
#include "shell/photo_document.hpp"
#include "shell/tab_services.hpp"
#include "shell/theme.hpp"
#include "support/gpu_test.hpp"
#include "support/gui_test_support.hpp"
#include "widgets/before_after_view.hpp"
#include "widgets/image_convert.hpp"
#include "widgets/run_timing.hpp"
#include "widgets/timing_history.hpp"
#include "widgets/timings_panel.hpp"

using namespace gpulab;
using namespace gpulab::gui;

namespace {

QApplication& app() { return test_support::testApplication("test_filters_gui"); }

using test_support::waitUntil;

/// A Filters tab with the services the main window would hand it.
struct Harness {
  Engine engine;
  PhotoDocument photo;
  TimingsPanel timings;
  QStringList messages;
  QString lastError;
  TabServices services{engine, photo, timings, [this](const QString& m) { messages << m; },
                       [this](const QString& m) { lastError = m; }};
  FiltersTab tab{services};
  int finished = 0;
  int edits = 0;

  Harness() {
    QObject::connect(&engine, &Engine::photoChanged, &photo, &PhotoDocument::set);
    QObject::connect(&tab, &FiltersTab::runFinished, [this] { ++finished; });
    QObject::connect(&tab, &FiltersTab::photoEditFinished, [this] { ++edits; });
    tab.resize(1200, 800);
    tab.setLivePreview(false);  // these tests run the filter with Apply alone (test_filters_live_gui: live)
    waitUntil([this] { return tab.deviceKnown(); });
  }

  /// Makes `image` the current photo on the worker (uploaded when there is a GPU) and waits for it.
  bool setPhoto(Image image) {
    const quint64 before = photo.current().generation;
    engine.submit(
        nullptr, [image = std::move(image)](WorkerContext& ctx) mutable { ctx.setPhoto(std::move(image), "test"); },
        [] {});
    return waitUntil([&] { return photo.current().generation != before; });
  }

  /// Shows the controls of the registered operation `name`, and sets some of its parameters.
  void use(const char* name, std::initializer_list<std::pair<const char*, const char*>> params = {}) {
    EXPECT_TRUE(tab.setOperation(QString::fromUtf8(name))) << name;
    for (const auto& [param, value] : params) set(param, value);
  }
  /// Sets a parameter of the current operation as its control would.
  void set(const char* name, const char* value) {
    EXPECT_TRUE(tab.setParam(QString::fromUtf8(name), QString::fromUtf8(value))) << tab.errorText().toStdString();
  }
  /// The current operation's parameter `name`, as the registry will read it.
  std::string value(const char* name) const {
    const ParamValues values = tab.paramValues();
    const auto it = values.find(name);
    return it == values.end() ? std::string() : it->second;
  }
  Kernel2D kernel() const { return parseKernelText(value("kernel")); }

  bool applyAndWait(int timeoutMs = 60000) {
    const int before = finished;
    tab.apply();
    return waitUntil([&] { return finished > before; }, timeoutMs);
  }
  /// Applies the filter and waits for its result; the tab's error when there is none.
  ::testing::AssertionResult applied(int timeoutMs = 60000) {
    if (!applyAndWait(timeoutMs)) return ::testing::AssertionFailure() << "Apply did not finish";
    if (!tab.hasResult()) return ::testing::AssertionFailure() << "no result: " << tab.errorText().toStdString();
    return ::testing::AssertionSuccess();
  }

  /// The photo as the worker holds it.
  Image workerPhoto() {
    std::optional<Image> out;
    engine.submit(
        nullptr, [](WorkerContext& ctx) { return ctx.photo(); }, [&out](Image image) { out = std::move(image); });
    EXPECT_TRUE(waitUntil([&] { return out.has_value(); }));
    return out.value_or(Image{});
  }
};

class FiltersGui : public ::testing::Test {
 protected:
  void SetUp() override { app(); }
};

std::vector<double> values(std::initializer_list<double> v) { return v; }

/// kw x kh coefficients uniform in [-1, 1), seeded.
Kernel2D randomKernel(int kw, int kh, unsigned seed) {
  Kernel2D k{kw, kh, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int i = 0; i < kw * kh; ++i) k.values.push_back(d(rng));
  return k;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The tab in the main window

TEST_F(FiltersGui, IsTheSecondTabTitledFilters) {
  MainWindow window({.persistSettings = false, .errorDialogs = false});
  const QStringList names = window.tabNames();
  ASSERT_GE(names.size(), 2);
  EXPECT_EQ(names[0], "Photo");
  EXPECT_EQ(names[1], "Filters");
  EXPECT_TRUE(window.selectTab(QStringLiteral("filters")));
  ASSERT_NE(window.findChild<FiltersTab*>(), nullptr);
  EXPECT_NE(window.currentImageView(), nullptr);  // the zoom actions act on the before/after view
}

TEST_F(FiltersGui, ApplyIsAScreenshotOption) {
  const CommandLine ok =
      parseCommandLine({QStringLiteral("gpulab"), QStringLiteral("--screenshot"), QStringLiteral("f.png"),
                        QStringLiteral("--tab"), QStringLiteral("Filters"), QStringLiteral("--apply")});
  EXPECT_TRUE(ok.error.isEmpty()) << ok.error.toStdString();
  EXPECT_TRUE(ok.apply);
  const CommandLine alone = parseCommandLine({QStringLiteral("gpulab"), QStringLiteral("--apply")});
  EXPECT_FALSE(alone.error.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// Controls generated from the registry: every registered operation and parameter has one, and
// changing it changes what Apply would run.

namespace {

/// A value of `param` other than `current` that its control accepts.
std::string anotherValue(const ParamInfo& param, const std::string& current) {
  switch (param.kind) {
    case ParamInfo::Kind::Integer: {
      const long long lo = static_cast<long long>(param.minimum);
      const long long v = current == std::to_string(lo) ? lo + 1 : lo;
      return std::to_string(std::min<long long>(v, static_cast<long long>(param.maximum)));
    }
    case ParamInfo::Kind::Number:
      // 2 or 3 where the range has them, else an end of the range ("high": 50..100).
      for (double v : {2.0, 3.0, param.maximum, param.minimum}) {
        if (v < param.minimum || v > param.maximum) continue;
        std::ostringstream text;
        text << v;
        if (text.str() != current) return text.str();
      }
      return current;
    case ParamInfo::Kind::Choice:
      return current == param.choices.back() ? param.choices.front() : param.choices.back();
    case ParamInfo::Kind::Flag:
      return current == "true" ? "false" : "true";
    case ParamInfo::Kind::Kernel:
      return formatKernelText({3, 1, {0.25, 0.5, 0.25}});
  }
  return {};
}

}  // namespace

TEST_F(FiltersGui, EveryRegisteredOperationAndParameterHasAControl) {
  Harness h;
  auto* operations = h.tab.findChild<QComboBox*>(QStringLiteral("filterOperation"));
  ASSERT_NE(operations, nullptr);
  ASSERT_EQ(operations->count(), static_cast<int>(imageOperations().size()));
  int index = 0;
  for (const OperationInfo& info : imageOperations()) {
    SCOPED_TRACE(info.name);
    const QString name = QString::fromStdString(info.name);
    EXPECT_EQ(operations->itemText(index), QString::fromStdString(info.title));
    EXPECT_EQ(operations->itemData(index).toString(), name);
    ++index;
    ASSERT_TRUE(h.tab.setOperation(name));
    EXPECT_EQ(h.tab.operation(), name);
    if (const QByteArray dir = qgetenv("GPULAB_TEST_SCREENSHOTS"); !dir.isEmpty()) {  // DIR: each generated page
      h.tab.show();
      waitUntil([] { return false; }, 200);  // the layout settles
      EXPECT_TRUE(h.tab.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/filters_page_%1.png").arg(name)));
    }
    ASSERT_NO_THROW(h.tab.makeOperation()) << "the controls' first values make a valid operation";
    for (const ParamInfo& param : info.params) {
      SCOPED_TRACE(param.name);
      const QString paramName = QString::fromStdString(param.name);
      ParamControl* control = h.tab.paramControl(name, paramName);
      ASSERT_NE(control, nullptr);
      EXPECT_EQ(control->info().name, param.name);
      EXPECT_NE(h.tab.findChild<QWidget*>(QStringLiteral("filterParam_%1_%2").arg(name, paramName)), nullptr);
      EXPECT_EQ(control->kernelEditor() != nullptr, param.kind == ParamInfo::Kind::Kernel);

      // A parameter that only matters with another's value: absent and disabled until that value is chosen.
      if (!param.onlyWith.empty()) {
        const std::string other = param.onlyWith.substr(0, param.onlyWith.find('='));
        const std::string needed = param.onlyWith.substr(param.onlyWith.find('=') + 1);
        const std::string otherBefore = h.tab.param(QString::fromStdString(other)).toStdString();
        if (otherBefore != needed) {
          EXPECT_EQ(h.tab.paramValues().count(param.name), 0u);
          EXPECT_FALSE(control->widget()->isEnabled());
        }
        ASSERT_TRUE(h.tab.setParam(QString::fromStdString(other), QString::fromStdString(needed)));
        EXPECT_TRUE(control->widget()->isEnabled());
      }

      // Changing the control changes the values Apply sends, as the registry reads them.
      const std::string before = h.tab.paramValues().at(param.name);
      const std::string changed = anotherValue(param, before);
      ASSERT_NE(changed, before);
      ASSERT_TRUE(h.tab.setParam(paramName, QString::fromStdString(changed))) << h.tab.errorText().toStdString();
      if (param.kind == ParamInfo::Kind::Kernel)
        EXPECT_EQ(parseKernelText(h.tab.paramValues().at(param.name)), parseKernelText(changed));
      else
        EXPECT_EQ(h.tab.paramValues().at(param.name), changed);
      EXPECT_NO_THROW(info.make(h.tab.paramValues()));
      ASSERT_TRUE(h.tab.setParam(paramName, QString::fromStdString(before)));
    }
  }
}

TEST_F(FiltersGui, GeneratedControlsAreTheUsualWidgets) {
  Harness h;
  h.use("box");
  // Integer: a slider and a spin box that follow each other; the spin box goes past the slider's end.
  auto* radius = h.tab.findChild<QSpinBox*>(QStringLiteral("filterParam_box_radius"));
  auto* slider = h.tab.findChild<QSlider*>(QStringLiteral("filterParam_box_radius_slider"));
  ASSERT_TRUE(radius != nullptr && slider != nullptr);
  EXPECT_EQ(radius->value(), 5) << "the box blur starts at radius 5";
  slider->setValue(9);
  EXPECT_EQ(h.value("radius"), "9");
  radius->setValue(1000);
  EXPECT_EQ(slider->value(), slider->maximum());
  EXPECT_EQ(h.value("radius"), "1000");
  EXPECT_FALSE(h.tab.setParam(QStringLiteral("radius"), QStringLiteral("-1")));
  EXPECT_TRUE(h.tab.errorText().startsWith(QStringLiteral("Radius -1 is out of range")))
      << h.tab.errorText().toStdString();
  EXPECT_FALSE(h.tab.setParam(QStringLiteral("no-such"), QStringLiteral("1")));

  // Choice and its dependent Number: the border value sits beside the border and is used for 'constant' only.
  auto* border = h.tab.findChild<QComboBox*>(QStringLiteral("filterParam_box_border"));
  auto* value = h.tab.findChild<QDoubleSpinBox*>(QStringLiteral("filterParam_box_border-value"));
  ASSERT_TRUE(border != nullptr && value != nullptr);
  EXPECT_EQ(border->currentText(), QStringLiteral("reflect101 (default)"));
  border->setCurrentIndex(border->findData(QStringLiteral("constant")));
  value->setValue(12.5);
  EXPECT_EQ(h.value("border"), "constant");
  EXPECT_EQ(h.value("border-value"), "12.5");
  EXPECT_EQ(h.tab.makeOperation()->describe(), "box r=1000 constant(12.5)");

  // Flag: a check box; Kernel: the kernel editor.
  h.use("conv");
  auto* correlate = h.tab.findChild<QCheckBox*>(QStringLiteral("filterParam_conv_correlate"));
  ASSERT_NE(correlate, nullptr);
  EXPECT_EQ(h.value("correlate"), "false");
  correlate->setChecked(true);
  EXPECT_EQ(h.value("correlate"), "true");
  ASSERT_NE(h.tab.kernelEditor(), nullptr);
  EXPECT_EQ(h.tab.kernelEditor(), h.tab.findChild<KernelEditor*>(QStringLiteral("filterParam_conv_kernel")));
  h.tab.kernelEditor()->selectPreset(KernelPreset::Laplacian);
  EXPECT_EQ(h.kernel(), laplacianKernel());
  EXPECT_EQ(h.tab.kernelEditor(QStringLiteral("box")), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Kernel presets

TEST(FilterPresets, FixedKernels) {
  const Kernel2D sharpen = sharpenKernel();
  EXPECT_EQ(sharpen.width, 3);
  EXPECT_EQ(sharpen.height, 3);
  EXPECT_EQ(sharpen.values, values({0, -1, 0, -1, 5, -1, 0, -1, 0}));
  EXPECT_EQ(embossKernel().values, values({-2, -1, 0, -1, 1, 1, 0, 1, 2}));
  EXPECT_EQ(laplacianKernel().values, values({0, 1, 0, 1, -4, 1, 0, 1, 0}));
  const Kernel2D box = boxKernel(3, 2);
  EXPECT_EQ(box.width, 3);
  EXPECT_EQ(box.height, 2);
  for (double v : box.values) EXPECT_DOUBLE_EQ(v, 1.0 / 6);
}

TEST(FilterPresets, GaussianIsNormalisedSymmetricAndFollowsSigma) {
  const Kernel2D g = gaussianKernel(1.0, 5);
  ASSERT_EQ(g.values.size(), 25u);
  double sum = 0;
  for (double v : g.values) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) {
      EXPECT_DOUBLE_EQ(g.at(x, y), g.at(4 - x, y));
      EXPECT_DOUBLE_EQ(g.at(x, y), g.at(y, x));
    }
  EXPECT_NEAR(g.at(3, 2) / g.at(2, 2), std::exp(-0.5), 1e-12);  // one sigma from the centre
  EXPECT_NEAR(g.at(4, 4) / g.at(2, 2), std::exp(-4.0), 1e-12);  // (2, 2) away: exp(-8 / 2)
  const Kernel2D even = gaussianKernel(2.0, 4);                 // centred between samples
  EXPECT_DOUBLE_EQ(even.at(1, 1), even.at(2, 2));
  EXPECT_EQ(gaussianSizeFor(1.5), 11);
  EXPECT_EQ(gaussianSizeFor(0.3), 3);
  EXPECT_EQ(gaussianSizeFor(20), kMaxEditorKernelSize);
  EXPECT_THROW(gaussianKernel(0.0, 5), std::invalid_argument);
  // Sides up to kMaxEditorFftKernelSize (the fft and auto methods); the editor limits direct to 63.
  EXPECT_EQ(gaussianKernel(30.0, kMaxEditorFftKernelSize).width, 255);
  EXPECT_THROW(gaussianKernel(1.0, kMaxEditorFftKernelSize + 1), std::invalid_argument);
  EXPECT_EQ(gaussianSizeFor(20, kMaxEditorFftKernelSize), 121);
  EXPECT_EQ(gaussianSizeFor(50, kMaxEditorFftKernelSize), 255);
  EXPECT_EQ(editorKernelLimit(ConvMethod::Direct), kMaxEditorKernelSize);
  EXPECT_EQ(editorKernelLimit(ConvMethod::Fft), kMaxEditorFftKernelSize);
  EXPECT_EQ(editorKernelLimit(ConvMethod::Auto), kMaxEditorFftKernelSize);
  EXPECT_EQ(editorKernelLimit(ConvMethod::Separable), kMaxEditorKernelSize);
  EXPECT_EQ(boxKernel(255, 1).values.size(), 255u);
  EXPECT_THROW(motionBlurKernel(256, 0), std::invalid_argument);
}

TEST(FilterPresets, MotionBlurIsAStreakAtItsAngle) {
  const Kernel2D h = motionBlurKernel(5, 0);
  ASSERT_EQ(h.width, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_NEAR(h.at(x, y), y == 2 ? 0.2 : 0.0, 1e-12) << x << "," << y;
  const Kernel2D v = motionBlurKernel(5, 90);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_NEAR(v.at(x, y), x == 2 ? 0.2 : 0.0, 1e-12) << x << "," << y;
  // 45 degrees counter-clockwise on screen: up and to the right, through (5, 1) and (1, 5).
  const Kernel2D d = motionBlurKernel(7, 45);
  EXPECT_GT(d.at(5, 1), 0.0);
  EXPECT_DOUBLE_EQ(d.at(5, 1), d.at(1, 5));
  EXPECT_EQ(d.at(1, 1), 0.0);
  // An even length: one row wider, the ends at half weight, still centred.
  const Kernel2D e = motionBlurKernel(4, 0);
  ASSERT_EQ(e.width, 5);
  const double expected[] = {0.125, 0.25, 0.25, 0.25, 0.125};
  for (int x = 0; x < 5; ++x) EXPECT_NEAR(e.at(x, 2), expected[x], 1e-12);
  EXPECT_THROW(motionBlurKernel(0, 0), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The kernel editor

TEST_F(FiltersGui, PresetsFillTheKernelEditor) {
  KernelEditor editor;
  auto* preset = editor.findChild<QComboBox*>(QStringLiteral("kernelPreset"));
  auto* table = editor.findChild<QTableWidget*>(QStringLiteral("kernelTable"));
  ASSERT_NE(preset, nullptr);
  ASSERT_NE(table, nullptr);
  int changes = 0;
  QObject::connect(&editor, &KernelEditor::changed, [&] { ++changes; });

  preset->setCurrentIndex(preset->findText(QStringLiteral("Sharpen")));
  EXPECT_EQ(editor.preset(), KernelPreset::Sharpen);
  EXPECT_EQ(editor.kernel().values, values({0, -1, 0, -1, 5, -1, 0, -1, 0}));
  ASSERT_EQ(table->rowCount(), 3);
  ASSERT_EQ(table->columnCount(), 3);
  const double sharpen[3][3] = {{0, -1, 0}, {-1, 5, -1}, {0, -1, 0}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(table->item(r, c)->data(Qt::EditRole).toDouble(), sharpen[r][c]);
  EXPECT_GE(changes, 1);

  preset->setCurrentIndex(preset->findText(QStringLiteral("Emboss")));
  EXPECT_EQ(editor.kernel().values, embossKernel().values);
  preset->setCurrentIndex(preset->findText(QStringLiteral("Laplacian")));
  EXPECT_EQ(editor.kernel().values, laplacianKernel().values);

  editor.setGaussian(1.0, 5);
  EXPECT_EQ(editor.preset(), KernelPreset::Gaussian);
  EXPECT_EQ(editor.kernel().values, gaussianKernel(1.0, 5).values);
  EXPECT_EQ(table->rowCount(), 5);
  editor.setGaussian(1.5, 0);  // size 0 = auto: +-3 sigma
  EXPECT_EQ(editor.kernel().width, 11);

  editor.setMotionBlur(9, 90);
  EXPECT_EQ(editor.kernel().values, motionBlurKernel(9, 90).values);

  preset->setCurrentIndex(preset->findText(QStringLiteral("Box")));
  editor.findChild<QSpinBox*>(QStringLiteral("kernelWidth"))->setValue(4);
  editor.findChild<QSpinBox*>(QStringLiteral("kernelHeight"))->setValue(2);
  EXPECT_EQ(editor.preset(), KernelPreset::Box);  // the box follows its size
  EXPECT_EQ(editor.kernel().values, boxKernel(4, 2).values);
}

TEST_F(FiltersGui, EditingMakesTheKernelCustomAndNormaliseChecksTheSum) {
  KernelEditor editor;
  QStringList messages;
  QObject::connect(&editor, &KernelEditor::message, [&](const QString& m) { messages << m; });
  editor.selectPreset(KernelPreset::Sharpen);
  auto* table = editor.findChild<QTableWidget*>(QStringLiteral("kernelTable"));

  // Growing the size keeps the coefficients centred and turns the preset to Custom.
  editor.findChild<QSpinBox*>(QStringLiteral("kernelWidth"))->setValue(5);
  EXPECT_EQ(editor.preset(), KernelPreset::Custom);
  ASSERT_EQ(editor.kernel().width, 5);
  ASSERT_EQ(editor.kernel().height, 3);
  EXPECT_EQ(editor.kernel().at(2, 1), 5.0);
  EXPECT_EQ(editor.kernel().at(0, 1), 0.0);
  EXPECT_EQ(editor.kernel().at(1, 1), -1.0);

  table->item(0, 0)->setData(Qt::EditRole, 3.0);  // as the cell delegate commits an edit
  EXPECT_EQ(editor.kernel().at(0, 0), 3.0);
  EXPECT_DOUBLE_EQ(editor.sum(), 4.0);
  EXPECT_TRUE(editor.normalise());
  EXPECT_DOUBLE_EQ(editor.kernel().at(2, 1), 1.25);
  EXPECT_NEAR(editor.sum(), 1.0, 1e-12);

  editor.selectPreset(KernelPreset::Laplacian);
  const std::vector<double> before = editor.kernel().values;
  EXPECT_FALSE(editor.normalise());
  EXPECT_EQ(editor.kernel().values, before);
  ASSERT_FALSE(messages.isEmpty());
  EXPECT_TRUE(messages.last().contains(QStringLiteral("sum to 0"))) << messages.last().toStdString();

  EXPECT_THROW(editor.setKernel({64, 1, std::vector<double>(64, 1.0)}), std::invalid_argument);
  editor.setKernel({2, 1, {1.0, 2.0}});
  EXPECT_EQ(editor.preset(), KernelPreset::Custom);
  EXPECT_EQ(table->columnCount(), 2);
  EXPECT_EQ(table->rowCount(), 1);
}

// ---------------------------------------------------------------------------------------------
// The convolution's method

TEST_F(FiltersGui, MethodSelectorShowsForConvolutionAndSetsTheKernelLimit) {
  Harness h;
  h.tab.show();
  auto* method = h.tab.findChild<QComboBox*>(QStringLiteral("filterParam_conv_method"));
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->count(), 4);  // direct, FFT, separable, auto
  EXPECT_GE(method->findText(QStringLiteral("Separable")), 0);
  h.use("box");
  EXPECT_FALSE(method->isVisibleTo(&h.tab));
  EXPECT_TRUE(h.tab.param(QStringLiteral("method")).isEmpty()) << "box has no method";
  h.use("conv");
  EXPECT_TRUE(method->isVisibleTo(&h.tab));
  EXPECT_EQ(h.value("method"), "direct");

  ASSERT_NE(h.tab.kernelEditor(), nullptr);
  KernelEditor& editor = *h.tab.kernelEditor();
  auto* width = editor.findChild<QSpinBox*>(QStringLiteral("kernelWidth"));
  auto* table = editor.findChild<QTableWidget*>(QStringLiteral("kernelTable"));
  ASSERT_NE(width, nullptr);
  EXPECT_EQ(width->maximum(), kMaxEditorKernelSize);
  EXPECT_THROW(editor.setKernel({64, 1, std::vector<double>(64, 1.0)}), std::invalid_argument);

  // FFT: up to 255 a side, in the size boxes, the presets and setKernel.
  method->setCurrentIndex(method->findText(QStringLiteral("FFT")));
  EXPECT_EQ(h.value("method"), "fft");
  EXPECT_EQ(editor.maxSide(), kMaxEditorFftKernelSize);
  EXPECT_EQ(width->maximum(), kMaxEditorFftKernelSize);
  editor.setGaussian(30.0, 0);  // auto size: +-3 sigma
  EXPECT_EQ(editor.kernel().width, 181);
  EXPECT_EQ(table->rowCount(), 181);
  const Kernel2D big = randomKernel(201, 199, 401);
  ASSERT_NO_THROW(editor.setKernel(big));
  EXPECT_EQ(table->columnCount(), 201);
  EXPECT_EQ(h.kernel().values, big.values);
  EXPECT_THROW(editor.setKernel({256, 1, std::vector<double>(256, 1.0)}), std::invalid_argument);
  h.set("method", "auto");
  EXPECT_EQ(editor.kernel().values, big.values);  // fft to auto: the same limit, nothing changes
  EXPECT_TRUE(h.tab.errorText().isEmpty()) << h.tab.errorText().toStdString();

  // Back to direct: the custom kernel is cropped about its centre, and the tab says so.
  h.set("method", "direct");
  EXPECT_EQ(editor.maxSide(), kMaxEditorKernelSize);
  ASSERT_EQ(editor.kernel().width, 63);
  ASSERT_EQ(editor.kernel().height, 63);
  EXPECT_EQ(editor.kernel().at(31, 31), big.at(100, 99));
  EXPECT_EQ(editor.kernel().at(0, 0), big.at(69, 68));
  EXPECT_EQ(editor.preset(), KernelPreset::Custom);
  EXPECT_TRUE(h.tab.errorText().contains(QStringLiteral("201x199"))) << h.tab.errorText().toStdString();
  EXPECT_TRUE(h.tab.errorText().contains(QStringLiteral("63x63"))) << h.tab.errorText().toStdString();

  // A preset is recomputed within the limit instead.
  h.set("method", "fft");
  editor.setMotionBlur(151, 30);
  EXPECT_EQ(editor.kernel().width, 151);
  h.set("method", "direct");
  EXPECT_EQ(editor.preset(), KernelPreset::MotionBlur);
  EXPECT_EQ(editor.kernel().values, motionBlurKernel(63, 30).values);
  // Small kernels stay as they are.
  editor.selectPreset(KernelPreset::Sharpen);
  h.set("method", "auto");
  EXPECT_EQ(editor.kernel().values, sharpenKernel().values);
}

TEST_F(FiltersGui, CpuAutoConvolutionShowsWhatItChose) {
  Harness h;
  const Image photo = test::randomImage(61, 43, 3, PixelType::U8, 402);
  ASSERT_TRUE(h.setPhoto(photo));
  h.use("conv", {{"method", "auto"}, {"border", "reflect"}});
  h.tab.kernelEditor()->setGaussian(3.0, 0);  // 19x19
  h.tab.setRunOn(true, false);
  const int rows = h.timings.history().rowCount();
  ASSERT_TRUE(h.applied());
  EXPECT_EQ(h.value("method"), "auto");
  const FilterRun& run = *h.tab.lastRun();
  ASSERT_NE(run.cpu, nullptr);
  EXPECT_TRUE(test::imagesNear(h.tab.makeOperation()->runReference(photo), *run.cpu, 1.0));
  EXPECT_EQ(run.record.method, "auto");
  ASSERT_TRUE(run.record.cpu.has_value());
  EXPECT_FALSE(run.record.gpu.has_value());
  const std::optional<ConvCostModel> model = cachedCpuConvCostModel();
  ASSERT_TRUE(model.has_value());  // calibrated by the run
  const QString chosen = QString::fromStdString(run.record.cpu->methodUsed);
  // A Gaussian kernel has rank 1: the model weighs the separable method too (as the run did), and
  // picks it whenever its calibration says so (on a loaded machine it sometimes does).
  EXPECT_EQ(chosen, QString::fromUtf8(toString(model->choose(61, 43, 19, 19, 3, 1))));
  EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("auto → ") + chosen)) << h.tab.statusText().toStdString();
  EXPECT_TRUE(run.record.description.ends_with(" auto")) << run.record.description;
  ASSERT_EQ(h.timings.history().rowCount(), rows + 1);
  EXPECT_EQ(operationText(h.timings.history().runs().back().measurement),
            QString::fromStdString(run.record.description) + QStringLiteral(" → ") + chosen);
  EXPECT_TRUE(h.lastError.isEmpty()) << h.lastError.toStdString();
}

TEST_F(FiltersGui, AutoConvolutionInTheMainWindowNamesItsChoiceInTheTimings) {
  const QByteArray screenshots = qgetenv("GPULAB_TEST_SCREENSHOTS");  // DIR: keep a themed picture
  if (!screenshots.isEmpty()) applyTheme(app());
  MainWindow window({.persistSettings = false, .errorDialogs = false});
  bool started = false;
  QObject::connect(&window, &MainWindow::startupFinished, [&] { started = true; });
  window.resize(1400, 900);
  window.show();
  window.startUp({});  // the bundled photo
  ASSERT_TRUE(waitUntil([&] { return started; }));
  ASSERT_TRUE(window.photo().hasPhoto());
  ASSERT_TRUE(window.selectTab(QStringLiteral("filters")));
  auto* tab = window.findChild<FiltersTab*>();
  ASSERT_NE(tab, nullptr);
  ASSERT_TRUE(waitUntil([&] { return tab->deviceKnown(); }));
  ASSERT_TRUE(tab->setOperation(QStringLiteral("conv")));
  ASSERT_TRUE(tab->setParam(QStringLiteral("method"), QStringLiteral("auto")));
  tab->kernelEditor()->setGaussian(5.0, 0);  // 31x31
  tab->setRunOn(true, true);
  int finished = 0;
  QObject::connect(tab, &FiltersTab::runFinished, [&] { ++finished; });
  tab->apply();
  ASSERT_TRUE(waitUntil([&] { return finished > 0; }, 300000));
  ASSERT_TRUE(tab->hasResult()) << tab->errorText().toStdString();
  const FilterRun& run = *tab->lastRun();
  ASSERT_TRUE(run.record.cpu.has_value());
  EXPECT_TRUE(run.record.cpu->methodUsed == "direct" || run.record.cpu->methodUsed == "fft" ||
              run.record.cpu->methodUsed == "separable")
      << run.record.cpu->methodUsed;
  EXPECT_EQ(run.record.gpu.has_value(), cudaAvailable());
  EXPECT_EQ(run.gpu != nullptr, cudaAvailable());
  ASSERT_FALSE(window.timings().history().runs().empty());
  const QString operation = operationText(window.timings().history().runs().back().measurement);
  EXPECT_TRUE(operation.startsWith(QStringLiteral("conv 31x31 same reflect101 auto → "))) << operation.toStdString();
  EXPECT_TRUE(tab->statusText().contains(QStringLiteral("Method"))) << tab->statusText().toStdString();
  EXPECT_TRUE(window.lastError().isEmpty()) << window.lastError().toStdString();
  if (!screenshots.isEmpty()) {
    QElapsedTimer settle;  // let the layout take the new summary in
    settle.start();
    while (settle.elapsed() < 300) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    EXPECT_TRUE(window.grab().save(QString::fromLocal8Bit(screenshots) + QStringLiteral("/filters_conv_auto.png")));
  }
}

TEST_F(FiltersGui, CpuFftConvolutionTakesAKernelAbove127) {
  Harness h;
  const Image photo = test::randomImage(40, 30, 1, PixelType::U8, 403);
  ASSERT_TRUE(h.setPhoto(photo));
  h.use("conv", {{"method", "fft"}, {"border", "wrap"}});
  h.tab.kernelEditor()->selectPreset(KernelPreset::Box);
  h.tab.kernelEditor()->findChild<QSpinBox*>(QStringLiteral("kernelWidth"))->setValue(129);
  h.tab.kernelEditor()->findChild<QSpinBox*>(QStringLiteral("kernelHeight"))->setValue(131);
  h.tab.setRunOn(true, false);
  ASSERT_TRUE(h.applied());
  const Kernel2D kernel = h.kernel();
  ASSERT_EQ(kernel.width, 129);
  ASSERT_EQ(kernel.height, 131);
  EXPECT_EQ(kernel.values, boxKernel(129, 131).values);
  const FilterRun& run = *h.tab.lastRun();
  EXPECT_TRUE(test::imagesNear(h.tab.makeOperation()->runReference(photo), *run.cpu, 1.0));
  EXPECT_EQ(run.record.cpu->methodUsed, "fft");
  EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("fft"))) << h.tab.statusText().toStdString();
}

// ---------------------------------------------------------------------------------------------
// Apply on the CPU

TEST_F(FiltersGui, CpuBoxBlurGivesTheEnginesPixelsAndATimingsRow) {
  Harness h;
  // A photo that went through a file, as a user's would.
  QTemporaryDir dir;
  const std::filesystem::path file = QFile::encodeName(dir.filePath(QStringLiteral("small.png"))).toStdString();
  saveImage(test::randomImage(37, 23, 3, PixelType::U8, 301), file);
  const Image photo = loadImage(file);
  ASSERT_TRUE(h.setPhoto(photo));

  h.use("box", {{"radius", "3"}, {"border", "reflect"}});
  h.tab.setRunOn(true, false);
  const int rows = h.timings.history().rowCount();
  ASSERT_TRUE(h.applyAndWait());
  ASSERT_TRUE(h.tab.errorText().isEmpty()) << h.tab.errorText().toStdString();
  ASSERT_TRUE(h.tab.hasResult());

  EXPECT_EQ(h.tab.operation(), QStringLiteral("box"));
  EXPECT_EQ(h.value("radius"), "3");
  const Image expected = h.tab.makeOperation()->runCpu(photo);
  const FilterRun& run = *h.tab.lastRun();
  ASSERT_NE(run.cpu, nullptr);
  EXPECT_TRUE(test::imagesNear(expected, *run.cpu, 0));
  EXPECT_EQ(run.gpu, nullptr);
  EXPECT_EQ(h.tab.view().after(), toQImage(expected));  // what the screen shows
  EXPECT_TRUE(h.tab.view().hasResult());

  ASSERT_EQ(h.timings.history().rowCount(), rows + 1);
  const Measurement& timing = h.timings.history().runs().back().measurement;
  EXPECT_EQ(timing.operation, "box");
  EXPECT_EQ(operationText(timing), QStringLiteral("box r=3 reflect"));
  ASSERT_TRUE(cpuMs(timing).has_value());
  EXPECT_GT(*cpuMs(timing), 0.0);
  EXPECT_GT(timing.cpu->threads, 0);
  EXPECT_GE(timing.cpu->time.reps, 1);
  EXPECT_EQ(timing.cpu->warmup, 1) << "the CPU side is warmed up like the GPU side";
  EXPECT_FALSE(timing.gpu.has_value());
  EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("OpenCV"))) << h.tab.statusText().toStdString();
  EXPECT_TRUE(h.lastError.isEmpty());
}

TEST_F(FiltersGui, CpuConvolutionFromAPresetGivesTheEnginesPixels) {
  Harness h;
  const Image photo = test::randomImage(29, 17, 4, PixelType::U8, 302);
  ASSERT_TRUE(h.setPhoto(photo));
  h.use("conv", {{"mode", "full"}, {"border", "constant"}, {"border-value", "7"}});
  h.tab.kernelEditor()->selectPreset(KernelPreset::Sharpen);
  h.tab.setRunOn(true, false);
  ASSERT_TRUE(h.applied());

  EXPECT_EQ(h.kernel().values, sharpenKernel().values);
  EXPECT_EQ(h.value("mode"), "full");
  EXPECT_EQ(h.value("border-value"), "7");
  const Image expected = h.tab.makeOperation()->runCpu(photo);
  ASSERT_EQ(expected.width(), 31);  // 'full': W + kw - 1
  EXPECT_TRUE(test::imagesNear(expected, *h.tab.lastRun()->cpu, 0));
  EXPECT_EQ(h.tab.lastRun()->beforeOffset, QPoint(1, 1));  // the original sits one pixel in
}

// ---------------------------------------------------------------------------------------------
// Cancel, errors

TEST_F(FiltersGui, CancelledCpuConvolutionChangesNothing) {
  Harness h;
  const Image photo = test::randomImage(1600, 1200, 3, PixelType::U8, 303);
  ASSERT_TRUE(h.setPhoto(photo));
  const quint64 generation = h.photo.current().generation;
  h.use("conv", {{"border", "wrap"}});
  h.tab.kernelEditor()->setGaussian(10.0, 63);
  h.tab.setRunOn(true, false);
  const int rows = h.timings.history().rowCount();

  // Cancel as soon as the first channel's progress shows: the run is certainly still going.
  auto* progress = h.tab.findChild<QProgressBar*>(QStringLiteral("filterProgress"));
  ASSERT_NE(progress, nullptr);
  bool cancelledAtProgress = false;
  QObject::connect(progress, &QProgressBar::valueChanged, [&](int value) {
    if (value > 0 && h.tab.running()) {
      h.tab.cancel();
      cancelledAtProgress = true;
    }
  });
  QElapsedTimer timer;
  timer.start();
  ASSERT_TRUE(h.applyAndWait(300000));
  EXPECT_TRUE(cancelledAtProgress);
  EXPECT_FALSE(h.tab.running());
  EXPECT_FALSE(h.tab.hasResult());
  EXPECT_FALSE(h.tab.view().hasResult());
  EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("Cancelled"))) << h.tab.statusText().toStdString();
  EXPECT_EQ(h.timings.history().rowCount(), rows);
  EXPECT_EQ(h.photo.current().generation, generation);
  EXPECT_TRUE(h.workerPhoto() == photo);
  EXPECT_TRUE(waitUntil([&] { return h.engine.pendingJobs() == 0; }));
  EXPECT_TRUE(h.lastError.isEmpty()) << h.lastError.toStdString();
}

// Esc (the tab's shortcut) cancels a running filter, and the worker really stops soon after: the
// direct convolution's bands and column pieces check the flag (issue 19), not only its channels.
TEST_F(FiltersGui, EscCancelsARunningFilterAndTheWorkerStopsPromptly) {
  Harness h;
  const Image photo = test::randomImage(2000, 1500, 3, PixelType::U8, 305);
  ASSERT_TRUE(h.setPhoto(photo));
  h.use("conv", {{"method", "direct"}, {"border", "reflect101"}});
  h.tab.kernelEditor()->setGaussian(20.0, 127);  // 16,129 multiply-adds a sample: seconds a channel here
  h.tab.setRunOn(true, false);
  QAction* esc = nullptr;
  for (QAction* a : h.tab.actions())
    if (a->shortcut() == QKeySequence(Qt::Key_Escape)) esc = a;
  ASSERT_NE(esc, nullptr);
  auto* progress = h.tab.findChild<QProgressBar*>(QStringLiteral("filterProgress"));
  ASSERT_NE(progress, nullptr);
  QElapsedTimer sinceEsc, sinceApply;
  qint64 firstMs = 0;
  QObject::connect(progress, &QProgressBar::valueChanged, [&](int value) {
    if (value > 0 && h.tab.running() && !sinceEsc.isValid()) {
      firstMs = sinceApply.elapsed();
      esc->trigger();
      sinceEsc.start();
    }
  });
  sinceApply.start();
  ASSERT_TRUE(h.applyAndWait(300000));
  ASSERT_TRUE(sinceEsc.isValid()) << "no progress was shown while the filter ran";
  EXPECT_FALSE(h.tab.running());
  EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("Cancelled"))) << h.tab.statusText().toStdString();
  ASSERT_TRUE(waitUntil([&] { return h.engine.pendingJobs() == 0; }, 60000));
  // The two remaining channels take twice `firstMs` uncancelled (about 2 s each on 2 cores); the
  // worker answers within one round of bands and pieces.
  std::printf("first channel %lld ms, the worker stopped %lld ms after Esc\n", firstMs, sinceEsc.elapsed());
  EXPECT_LT(sinceEsc.elapsed(), 2000) << "the worker went on for " << sinceEsc.elapsed() << " ms after Esc";
  EXPECT_TRUE(h.workerPhoto() == photo);
}

TEST_F(FiltersGui, BadParametersGiveASentenceNotACrash) {
  Harness h;
  // No photo yet.
  ASSERT_TRUE(h.applyAndWait());
  EXPECT_TRUE(h.tab.errorText().contains(QStringLiteral("no photo"))) << h.tab.errorText().toStdString();

  ASSERT_TRUE(h.setPhoto(test::randomImage(8, 8, 1, PixelType::U8, 304)));
  h.use("conv", {{"mode", "valid"}});
  h.tab.kernelEditor()->setGaussian(2.0, 15);
  h.tab.setRunOn(true, false);
  ASSERT_TRUE(h.applyAndWait());
  EXPECT_FALSE(h.tab.hasResult());
  const QString valid = h.tab.errorText();
  ASSERT_FALSE(valid.isEmpty());
  EXPECT_TRUE(valid.contains(QStringLiteral("'valid'")) && valid.contains(QStringLiteral("empty")))
      << valid.toStdString();
  EXPECT_TRUE(valid.front().isUpper() && valid.endsWith(QLatin1Char('.'))) << valid.toStdString();
  EXPECT_TRUE(h.messages.contains(valid));  // and in the status bar

  // A type the filter does not take itself: float64 (NumPy's default) runs as float32, with a note.
  ASSERT_TRUE(h.setPhoto(test::randomImage(9, 7, 1, PixelType::F64, 305)));
  h.use("box");
  ASSERT_TRUE(h.applyAndWait());
  ASSERT_TRUE(h.tab.hasResult()) << h.tab.errorText().toStdString();
  EXPECT_TRUE(h.tab.lastRun()->displayNote.contains(QStringLiteral("float64")))
      << h.tab.lastRun()->displayNote.toStdString();

  // Nowhere to run.
  h.use("sobel");
  h.tab.setRunOn(false, false);
  ASSERT_TRUE(h.applyAndWait());
  EXPECT_TRUE(h.tab.errorText().contains(QStringLiteral("CPU"))) << h.tab.errorText().toStdString();

  // And a good run afterwards clears the message: f64 Sobel is refused, f64 convolution is fine.
  h.use("conv", {{"mode", "same"}});
  h.tab.kernelEditor()->selectPreset(KernelPreset::Laplacian);
  h.tab.setRunOn(true, false);
  ASSERT_TRUE(h.applyAndWait());
  EXPECT_TRUE(h.tab.errorText().isEmpty()) << h.tab.errorText().toStdString();
  EXPECT_TRUE(h.tab.hasResult());
  EXPECT_TRUE(h.lastError.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// Keep result and Undo

TEST_F(FiltersGui, KeepResultChainsFiltersAndUndoGoesBack) {
  Harness h;
  const Image photo = test::randomImage(41, 31, 3, PixelType::U8, 306);
  ASSERT_TRUE(h.setPhoto(photo));
  h.tab.setRunOn(true, false);
  h.use("box", {{"radius", "2"}});
  ASSERT_TRUE(h.applied());
  const Image blurred = *h.tab.lastRun()->cpu;

  int edits = h.edits;
  h.tab.keepResult();
  ASSERT_TRUE(waitUntil([&] { return h.edits > edits; }));
  EXPECT_EQ(h.tab.undoDepth(), 1);
  EXPECT_FALSE(h.tab.hasResult());  // the result is the photo now
  EXPECT_TRUE(h.workerPhoto() == blurred);
  EXPECT_EQ(h.photo.current().display, toQImage(blurred));

  // The next filter works on the kept photo.
  h.use("sobel");
  ASSERT_TRUE(h.applied());
  EXPECT_TRUE(test::imagesNear(h.tab.makeOperation()->runCpu(blurred), *h.tab.lastRun()->cpu, 0));
  edits = h.edits;
  h.tab.keepResult();
  ASSERT_TRUE(waitUntil([&] { return h.edits > edits; }));
  EXPECT_EQ(h.tab.undoDepth(), 2);
  EXPECT_EQ(h.workerPhoto().channels(), 1);  // Sobel gives one channel

  for (const Image* expected : {&blurred, &photo}) {
    edits = h.edits;
    h.tab.undo();
    ASSERT_TRUE(waitUntil([&] { return h.edits > edits; }));
    EXPECT_TRUE(h.workerPhoto() == *expected);
  }
  EXPECT_EQ(h.tab.undoDepth(), 0);

  // A photo from elsewhere (File > Open) starts a new history.
  ASSERT_TRUE(h.applyAndWait());
  edits = h.edits;
  h.tab.keepResult();
  ASSERT_TRUE(waitUntil([&] { return h.edits > edits; }));
  EXPECT_EQ(h.tab.undoDepth(), 1);
  ASSERT_TRUE(h.setPhoto(test::randomImage(5, 5, 1, PixelType::U8, 307)));
  EXPECT_EQ(h.tab.undoDepth(), 0);
  EXPECT_TRUE(h.lastError.isEmpty()) << h.lastError.toStdString();
}

// ---------------------------------------------------------------------------------------------
// The before/after view

TEST_F(FiltersGui, BeforeAfterViewSplitsAndSpaceShowsTheOriginal) {
  BeforeAfterView view;
  view.resize(300, 200);
  QImage red(100, 60, QImage::Format_RGB32);
  red.fill(Qt::red);
  QImage blue(100, 60, QImage::Format_RGB32);
  blue.fill(Qt::blue);
  view.setBefore(red);
  view.show();
  const QPoint left(view.width() / 2 - 25, view.height() / 2 + 30);
  const QPoint right(view.width() / 2 + 25, view.height() / 2 + 30);
  auto colourAt = [&](QPoint p) { return view.grab().toImage().pixelColor(p); };
  EXPECT_EQ(colourAt(right), QColor(Qt::red));  // no result: the original alone

  view.setResult(blue);
  EXPECT_EQ(view.mode(), BeforeAfterView::Mode::Split);
  EXPECT_EQ(colourAt(left), QColor(Qt::red));
  EXPECT_EQ(colourAt(right), QColor(Qt::blue));

  // A drag that starts on the split line moves it.
  for (const auto& [type, x, button, buttons] :
       {std::tuple{QEvent::MouseButtonPress, 150, Qt::LeftButton, Qt::MouseButtons(Qt::LeftButton)},
        std::tuple{QEvent::MouseMove, 225, Qt::NoButton, Qt::MouseButtons(Qt::LeftButton)},
        std::tuple{QEvent::MouseButtonRelease, 225, Qt::LeftButton, Qt::MouseButtons(Qt::NoButton)}}) {
    const QPointF pos(x, 100);
    QMouseEvent event(type, pos, view.mapToGlobal(pos), button, buttons, Qt::NoModifier);
    QCoreApplication::sendEvent(&view, &event);
  }
  EXPECT_DOUBLE_EQ(view.splitFraction(), 0.75);
  view.setSplitFraction(0.5);

  QKeyEvent space(QEvent::KeyPress, Qt::Key_Space, Qt::NoModifier, QStringLiteral(" "));
  QCoreApplication::sendEvent(&view, &space);
  EXPECT_EQ(view.mode(), BeforeAfterView::Mode::Before);
  EXPECT_EQ(colourAt(right), QColor(Qt::red));
  QCoreApplication::sendEvent(&view, &space);
  EXPECT_EQ(view.mode(), BeforeAfterView::Mode::Split);

  view.setMode(BeforeAfterView::Mode::After);
  EXPECT_EQ(colourAt(left), QColor(Qt::blue));
  view.setMode(BeforeAfterView::Mode::Split);
  view.setSplitFraction(0.0);
  EXPECT_EQ(colourAt(left), QColor(Qt::blue));

  view.clearResult();
  EXPECT_FALSE(view.hasResult());
  EXPECT_EQ(colourAt(right), QColor(Qt::red));
}

// ---------------------------------------------------------------------------------------------
// Without and with a GPU

TEST_F(FiltersGui, WithoutAGpuTheGpuChoiceIsOffAndSaysWhy) {
  if (cudaAvailable()) GTEST_SKIP() << "this machine has a CUDA device";
  Harness h;
  ASSERT_TRUE(h.tab.deviceKnown());
  auto* gpu = h.tab.findChild<QCheckBox*>(QStringLiteral("filterRunGpu"));
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->isEnabled());
  EXPECT_FALSE(gpu->isChecked());
  EXPECT_TRUE(gpu->toolTip().startsWith(QStringLiteral("no CUDA device: CPU only"))) << gpu->toolTip().toStdString();
  EXPECT_FALSE(h.tab.gpuAvailable());
}

TEST_F(FiltersGui, GpuAndCpuRunSideBySideAndAgree) {
  GPULAB_REQUIRE_GPU();
  Harness h;
  ASSERT_TRUE(h.tab.gpuAvailable());
  const Image photo = test::randomImage(97, 61, 3, PixelType::U8, 308);
  ASSERT_TRUE(h.setPhoto(photo));
  ASSERT_TRUE(h.photo.current().onGpu);
  h.tab.setRunOn(true, true);
  h.use("box", {{"radius", "4"}});
  const int rows = h.timings.history().rowCount();
  ASSERT_TRUE(h.applied());
  const FilterRun run = *h.tab.lastRun();  // a copy: Keep below clears the tab's
  ASSERT_NE(run.gpu, nullptr);
  ASSERT_NE(run.cpu, nullptr);
  const Image reference = h.tab.makeOperation()->runReference(photo);
  EXPECT_TRUE(test::imagesNear(reference, *run.gpu, 0));  // u8 box: GPU and reference agree exactly
  EXPECT_TRUE(test::imagesNear(reference, *run.cpu, 1));  // OpenCV within 1
  ASSERT_TRUE(run.record.maxAbsDiff.has_value());
  EXPECT_LE(*run.record.maxAbsDiff, 1.0);
  ASSERT_TRUE(computeMs(run.record).has_value());
  // Ten runs, unless the first took longer than the harness's slow-run line (under the tools it may).
  if (!test::underComputeSanitizer()) {
    EXPECT_EQ(run.record.gpu->compute.reps, 10);
  }
  EXPECT_GT(*computeMs(run.record), 0.0);
  ASSERT_EQ(h.timings.history().rowCount(), rows + 1);
  const Measurement& timing = h.timings.history().runs().back().measurement;
  EXPECT_TRUE(cpuMs(timing) && computeMs(timing) && downloadMs(timing) && uploadMs(timing))
      << "the resident photo's upload counts in the run's end-to-end time";
  EXPECT_TRUE(timing.speedup().has_value());
  EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("max |CPU"))) << h.tab.statusText().toStdString();

  // Keep the GPU result and chain a float convolution on it; the GPU works from the new resident photo.
  auto* showGpu = h.tab.findChild<QAbstractButton*>(QStringLiteral("filterShowGpu"));
  ASSERT_TRUE(showGpu->isChecked());
  const int edits = h.edits;
  h.tab.keepResult();
  ASSERT_TRUE(waitUntil([&] { return h.edits > edits; }));
  EXPECT_TRUE(h.workerPhoto() == *run.gpu);
  EXPECT_TRUE(h.photo.current().onGpu);

  const Image floats = test::randomImage(53, 41, 1, PixelType::F32, 309, 10.0);
  ASSERT_TRUE(h.setPhoto(floats));
  h.use("conv", {{"mode", "full"}, {"border", "reflect"}});
  h.tab.kernelEditor()->setKernel({4, 3, {1, -2, 3, 0.5, 2, 0, -1, 4, 1.5, -3, 2, 1}});
  ASSERT_TRUE(h.applied());
  const Image convRef = h.tab.makeOperation()->runReference(floats);
  EXPECT_TRUE(test::imagesNear(convRef, *h.tab.lastRun()->gpu, 1e-4, 1e-5));
  EXPECT_TRUE(test::imagesNear(convRef, *h.tab.lastRun()->cpu, 1e-4, 1e-5));
  EXPECT_TRUE(h.lastError.isEmpty()) << h.lastError.toStdString();
}

TEST_F(FiltersGui, GpuAutoAndFftConvolutionsMatchTheReference) {
  GPULAB_REQUIRE_GPU();
  Harness h;
  ASSERT_TRUE(h.tab.gpuAvailable());
  const Image photo = test::randomImage(97, 61, 3, PixelType::U8, 404);
  ASSERT_TRUE(h.setPhoto(photo));
  h.tab.setRunOn(true, true);
  h.use("conv", {{"method", "auto"}, {"border", "reflect101"}});
  h.tab.kernelEditor()->setGaussian(4.0, 0);  // 25x25
  // Auto calibrates the GPU cost model first; under racecheck that outlasts a GPU-machine call (the
  // kernels it times are racechecked in the filter suites; see test_conv_method.cpp).
  if (test::computeSanitizerStep() != "racecheck") {
    ASSERT_TRUE(h.applied());
    const FilterRun& run = *h.tab.lastRun();
    ASSERT_NE(run.gpu, nullptr);
    ASSERT_NE(run.cpu, nullptr);
    const Image reference = h.tab.makeOperation()->runReference(photo);
    EXPECT_TRUE(test::imagesNear(reference, *run.gpu, 1.0));
    EXPECT_TRUE(test::imagesNear(reference, *run.cpu, 1.0));
    ASSERT_TRUE(run.record.gpu.has_value());
    ASSERT_TRUE(run.record.cpu.has_value());
    const std::optional<ConvCostModel> model = cachedGpuConvCostModel(0);
    ASSERT_TRUE(model.has_value());  // calibrated before the timed runs
    // A Gaussian is rank 1: the separable method is a candidate.
    EXPECT_EQ(run.record.gpu->methodUsed, toString(model->choose(97, 61, 25, 25, 3, 1)));
    EXPECT_GT(run.record.gpu->prepareMs, 0.0);
    ASSERT_TRUE(computeMs(run.record).has_value());
    EXPECT_TRUE(h.tab.statusText().contains(QStringLiteral("auto → "))) << h.tab.statusText().toStdString();
  }

  // A 201x201 kernel through the FFT on the GPU, on a photo small enough for the naive reference.
  const Image small = test::randomImage(31, 23, 1, PixelType::F32, 405, 50.0);
  ASSERT_TRUE(h.setPhoto(small));
  h.set("method", "fft");
  h.tab.kernelEditor()->setKernel(randomKernel(201, 201, 406));
  h.set("mode", "same");
  h.set("border", "constant");
  h.set("border-value", "3");
  ASSERT_TRUE(h.applied(300000));
  const FilterRun& run = *h.tab.lastRun();
  const Image reference = h.tab.makeOperation()->runReference(small);
  double peak = 0;
  for (float v : reference.samples<float>()) peak = std::max(peak, double(std::abs(v)));
  EXPECT_TRUE(test::imagesNear(reference, *run.gpu, 1e-4 * peak));  // float32, relative to the peak
  EXPECT_TRUE(test::imagesNear(reference, *run.cpu, 1e-4 * peak));
  EXPECT_EQ(run.record.gpu->methodUsed, "fft");
  EXPECT_EQ(run.record.method, "fft");
}
