// The Mandelbrot tab, offscreen: the view arithmetic, wheel zoom about the cursor, drag, keys, back and
// forward, bookmarks, the precision shown (f32, f64, then perturbation with no wall), recolouring
// without recomputing, PNG save and reopen, the CPU render with its cancel, progressive frames and the
// zoom benchmark. Deep zoom (location, Newton, iterations, deep PNGs) is in test_mandelbrot_deep_gui.cpp,
// the same binary. Frames come from the GPU when there is one and from the CPU otherwise; the tests
// that need the GPU say so and skip without one.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QTemporaryDir>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "gui/mandelbrot_gui_harness.hpp"
#include "mandelbrot/mandelbrot_zoom_benchmark.hpp"
#include "shell/command_line.hpp"
#include "support/gpu_test.hpp"
#include "widgets/run_timing.hpp"

using namespace gpulab;
using namespace gpulab::gui;
using namespace gpulab::gui::mandelbrot_test;

// ---------------------------------------------------------------------------------------------
// View arithmetic (pure)

TEST_F(MandelbrotGui, ViewArithmeticKeepsThePointUnderTheCursor) {
  const MandelbrotView v = sized(wholeSetView(), 301, 171);
  EXPECT_EQ(planePointF(v, {150.5, 85.5}), QPointF(-0.5, 0.0));  // the centre of the middle pixel
  EXPECT_EQ(planePoint(v, {150.5, 85.5}), (PlanePoint{v.centerX, v.centerY}));
  const double h = 3.0 / 301;
  EXPECT_NEAR(planePointF(v, {0, 0}).x(), -0.5 - 150.5 * h, 1e-15);
  EXPECT_NEAR(planePointF(v, {0, 0}).y(), 85.5 * h, 1e-15);  // row 0 is the top
  EXPECT_NEAR(planePoint(v, {0, 0}).y.toDouble(), 85.5 * h, 1e-15);
  const double w = v.widthValue();

  for (const QPointF pixel : {QPointF(17.25, 160.5), QPointF(300, 0), QPointF(150.5, 85.5)}) {
    const MandelbrotView in = zoomedAbout(v, pixel, 1.25);
    EXPECT_DOUBLE_EQ(in.widthValue(), w / 1.25);
    EXPECT_LT(planeError(planePointF(in, pixel), planePointF(v, pixel), w), 1e-14) << pixel.x();
    const MandelbrotView out = zoomedAbout(v, pixel, 1 / 1.25);
    EXPECT_LT(planeError(planePointF(out, pixel), planePointF(v, pixel), w), 1e-14);
  }
  // Panning: the content follows the mouse; the point that was at p is at p + delta afterwards.
  const MandelbrotView moved = panned(v, {30, -12});
  EXPECT_LT(planeError(planePointF(moved, {130, 48}), planePointF(v, {100, 60}), w), 1e-14);
  // A box zooms so that its longer side (relative to the image) fills the view, centred on the box:
  // 100x60 pixels of 301x171 is 0.33 of the width and 0.35 of the height, so the height fills it.
  const MandelbrotView boxed = zoomedToRect(v, QRectF(QPointF(200, 40), QPointF(100, 100)));
  EXPECT_DOUBLE_EQ(boxed.widthValue(), w * 60.0 / 171);
  EXPECT_DOUBLE_EQ(zoomedToRect(v, QRectF(0, 0, 150, 20)).widthValue(), w * 150.0 / 301);
  EXPECT_LT(planeError(planePointF(boxed, {150.5, 85.5}), planePointF(v, {150, 70}), w), 1e-14);
  const MandelbrotView centred = recentred(v, {10, 20});
  EXPECT_LT(planeError(QPointF(centred.x(), centred.y()), planePointF(v, {10, 20}), w), 1e-16);
  // Zooming about the centre keeps the centre, digit for digit.
  const MandelbrotView keys = zoomedBy(v, 1000.0);
  EXPECT_EQ(keys.centerX, v.centerX);
  EXPECT_EQ(keys.width.toString(), "0.003");
  // A frame rendered for an older view lands where its pixels belong now.
  const std::optional<QRectF> r = frameRectIn(zoomedAbout(v, {150.5, 85.5}, 2.0), v);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->width(), 602, 1e-9);
  EXPECT_NEAR(r->left(), -150.5, 1e-9);
  EXPECT_NEAR(r->top(), -85.5, 1e-9);
  // Widths beyond the supported range are refused with one sentence.
  EXPECT_THROW(zoomedBy(v, 1.0 / 1000), std::invalid_argument);
}

TEST_F(MandelbrotGui, BuiltInBookmarksAreRenderablePlaces) {
  const auto places = builtInBookmarks();
  ASSERT_GE(places.size(), 5u);
  QStringList names;
  for (const MandelbrotBookmark& b : places) {
    names << b.name;
    MandelbrotView v = sized(b.view, 320, 180);
    v.maxIterations = autoIterations(v.width);
    EXPECT_NO_THROW(choosePrecision(v)) << b.name.toStdString();
  }
  for (const char* expected : {"Seahorse valley", "Elephant valley", "Mini-brot on the real axis", "Spiral"})
    EXPECT_TRUE(names.contains(QLatin1String(expected))) << expected;
}

// ---------------------------------------------------------------------------------------------
// Interaction

TEST_F(MandelbrotGui, WheelZoomsAboutTheCursorDragPansKeysMove) {
  Harness h;
  ASSERT_TRUE(h.settle());
  ASSERT_FALSE(h.presented.empty());
  EXPECT_EQ(h.presented.back().divisor, 1);  // the first frame is the full one
  const MandelbrotView start = h.tab.view();
  EXPECT_EQ(QSize(start.imageWidth, start.imageHeight), h.canvas().pixelSize());
  const double dpr = h.canvas().devicePixelRatioF();
  const double startWidth = start.widthValue();

  // One notch in at a point off-centre: width / 1.25, and the point under the cursor stays.
  const QPointF cursor(h.canvas().width() * 0.3, h.canvas().height() * 0.7);
  const QPointF under = planePointF(start, cursor * dpr);
  h.wheel(cursor, 120);
  MandelbrotView v = h.tab.view();
  EXPECT_DOUBLE_EQ(v.widthValue(), startWidth / 1.25);
  EXPECT_LT(planeError(planePointF(v, cursor * dpr), under, startWidth), 1e-12);
  h.wheel(cursor, -240);  // two notches out
  EXPECT_NEAR(h.tab.view().widthValue(), startWidth * 1.25, 1e-12);
  EXPECT_LT(planeError(planePointF(h.tab.view(), cursor * dpr), under, startWidth), 1e-12);

  // Drag: the content follows the mouse.
  v = h.tab.view();
  const QPointF from(100, 100), to(160, 70);
  const QPointF grabbed = planePointF(v, from * dpr);
  h.mouse(QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
  h.mouse(QEvent::MouseMove, (from + to) / 2, Qt::NoButton, Qt::LeftButton);
  h.mouse(QEvent::MouseMove, to, Qt::NoButton, Qt::LeftButton);
  h.mouse(QEvent::MouseButtonRelease, to, Qt::LeftButton, Qt::NoButton);
  EXPECT_EQ(h.tab.view().width, v.width);
  EXPECT_LT(planeError(planePointF(h.tab.view(), to * dpr), grabbed, v.widthValue()), 1e-12);

  // Shift+drag: a box to zoom into, centred where the box was. A double-click recentres.
  v = h.tab.view();
  const QPointF middle(0.5 * v.imageWidth, 0.5 * v.imageHeight);
  const QPointF corner(60, 40), opposite(180, 100);
  h.mouse(QEvent::MouseButtonPress, corner, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
  h.mouse(QEvent::MouseMove, opposite, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
  h.mouse(QEvent::MouseButtonRelease, opposite, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
  EXPECT_LT(h.tab.view().widthValue(), 0.5 * v.widthValue());
  EXPECT_LT(
      planeError(planePointF(h.tab.view(), middle), planePointF(v, (corner + opposite) / 2 * dpr), v.widthValue()),
      1e-12);
  v = h.tab.view();
  h.mouse(QEvent::MouseButtonDblClick, from, Qt::LeftButton, Qt::LeftButton);
  EXPECT_EQ(h.tab.view().width, v.width);
  EXPECT_LT(planeError(planePointF(h.tab.view(), middle), planePointF(v, from * dpr), v.widthValue()), 1e-12);

  // Keys: + and - zoom about the centre by 1.5, arrows move by a tenth of the image, Home goes home.
  v = h.tab.view();
  const QPointF centre(0.5 * v.imageWidth, 0.5 * v.imageHeight);
  h.key(Qt::Key_Plus, QStringLiteral("+"));
  EXPECT_DOUBLE_EQ(h.tab.view().widthValue(), v.widthValue() / 1.5);
  EXPECT_EQ(h.tab.view().centerX, v.centerX);  // every digit kept
  EXPECT_EQ(h.tab.view().centerY, v.centerY);
  h.key(Qt::Key_Minus, QStringLiteral("-"));
  EXPECT_NEAR(h.tab.view().widthValue(), v.widthValue(), 1e-15);
  v = h.tab.view();
  const double planeHeight = v.widthValue() * v.imageHeight / v.imageWidth;
  h.key(Qt::Key_Right);
  EXPECT_NEAR(h.tab.view().x(), v.x() + 0.1 * v.widthValue(), 1e-12);
  EXPECT_EQ(h.tab.view().centerY, v.centerY);
  h.key(Qt::Key_Up);
  EXPECT_NEAR(h.tab.view().y(), v.y() + 0.1 * planeHeight, 1e-12);
  h.key(Qt::Key_Left);
  h.key(Qt::Key_Down);
  EXPECT_NEAR(h.tab.view().x(), v.x(), 1e-12);
  EXPECT_NEAR(h.tab.view().y(), v.y(), 1e-12);
  h.key(Qt::Key_Home);
  EXPECT_EQ(h.tab.view().x(), -0.5);
  EXPECT_EQ(h.tab.view().y(), 0.0);
  EXPECT_EQ(h.tab.view().widthValue(), 3.0);

  // Whatever came while moving, the view at rest gets its full-resolution frame.
  ASSERT_TRUE(h.settle());
  for (const MandelbrotFrameInfo& f : h.presented) {
    EXPECT_TRUE(f.divisor == 1 || f.divisor == 2 || f.divisor == 4) << f.divisor;
    EXPECT_GE(f.latencyMs, 0.0);
    EXPECT_GT(f.workerMs, 0.0);
  }
  EXPECT_EQ(h.presented.back().divisor, 1);
  EXPECT_EQ(h.presented.back().view.widthValue(), 3.0);
  EXPECT_TRUE(h.lastError.isEmpty()) << h.lastError.toStdString();
}

TEST_F(MandelbrotGui, BackAndForwardWalkTheHistory) {
  Harness h;
  ASSERT_TRUE(h.settle());
  auto* back = h.child<QPushButton>("mandelbrotBack");
  auto* forward = h.child<QPushButton>("mandelbrotForward");
  ASSERT_NE(back, nullptr);
  EXPECT_FALSE(back->isEnabled());
  EXPECT_FALSE(forward->isEnabled());
  const MandelbrotView home = h.tab.view();

  const MandelbrotView a = place(home, "-0.75", "0.1", "0.05");
  ASSERT_TRUE(h.tab.navigate(a));
  // An interactive step lands in the history once the view rests.
  h.wheel(QPointF(h.canvas().width() / 2.0, h.canvas().height() / 2.0), 120);
  const MandelbrotView b = h.tab.view();
  EXPECT_TRUE(waitUntil([&] { return back->isEnabled() && h.tab.showsCurrentView(); }));
  EXPECT_FALSE(forward->isEnabled());

  back->click();
  EXPECT_EQ(h.tab.view().width, a.width);
  EXPECT_EQ(h.tab.view().centerX, a.centerX);
  EXPECT_TRUE(forward->isEnabled());
  back->click();
  EXPECT_EQ(h.tab.view().width, home.width);
  EXPECT_FALSE(back->isEnabled());
  forward->click();
  forward->click();
  EXPECT_EQ(h.tab.view().width, b.width);
  EXPECT_EQ(h.tab.view().centerX, b.centerX);
  EXPECT_FALSE(forward->isEnabled());
  // A new view after going back drops the forward branch.
  back->click();
  MandelbrotView c = a;
  c.centerY = DecimalNumber::parse("-0.1");
  ASSERT_TRUE(h.tab.navigate(c));
  EXPECT_FALSE(forward->isEnabled());
  back->click();
  EXPECT_EQ(h.tab.view().centerY, a.centerY);
  ASSERT_TRUE(h.settle());
}

TEST_F(MandelbrotGui, BookmarksGoToPlacesAndKeepTheUsersOwn) {
  QSettings().remove(QStringLiteral("mandelbrot/bookmarks"));
  Harness h;
  ASSERT_TRUE(h.settle());
  auto* box = h.child<QComboBox>("mandelbrotBookmarks");
  ASSERT_NE(box, nullptr);
  const std::size_t builtIn = builtInBookmarks().size();
  ASSERT_EQ(h.tab.bookmarks().size(), builtIn);
  ASSERT_EQ(box->count(), static_cast<int>(builtIn) + 1);  // "Go to..." first

  const int seahorse = box->findText(QStringLiteral("Seahorse valley"));
  ASSERT_GT(seahorse, 0);
  emit box->activated(seahorse);
  EXPECT_EQ(h.tab.view().centerX, DecimalNumber::parse("-0.743643887037151"));
  EXPECT_EQ(h.tab.view().centerY, DecimalNumber::parse("0.13182590420533"));
  EXPECT_EQ(h.tab.view().width.toString(), "0.005");
  EXPECT_EQ(h.tab.view().maxIterations, autoIterations(DeepWidth::parse("0.005")));
  EXPECT_EQ(box->currentIndex(), 0);

  // The user's own: stored in the settings, listed after the built-in ones, found again by a new tab.
  const MandelbrotView mine = place(h.tab.view(), "-0.7453", "0.1127", "6.5e-4");
  ASSERT_TRUE(h.tab.navigate(mine));
  h.tab.addBookmark(QStringLiteral("  my\tspiral  "));
  ASSERT_EQ(h.tab.bookmarks().size(), builtIn + 1);
  EXPECT_EQ(h.tab.bookmarks().back().name, QStringLiteral("my spiral"));
  EXPECT_EQ(box->itemText(box->count() - 1), QStringLiteral("my spiral"));
  emit box->activated(1);  // somewhere else
  EXPECT_NE(h.tab.view().centerX, mine.centerX);
  ASSERT_TRUE(h.settle());

  Harness again;
  ASSERT_EQ(again.tab.bookmarks().size(), builtIn + 1);
  auto* box2 = again.child<QComboBox>("mandelbrotBookmarks");
  emit box2->activated(box2->count() - 1);
  EXPECT_EQ(again.tab.view().centerX, mine.centerX);
  EXPECT_EQ(again.tab.view().centerY, mine.centerY);
  EXPECT_EQ(again.tab.view().width, mine.width);
  ASSERT_TRUE(again.settle());
  QSettings().remove(QStringLiteral("mandelbrot/bookmarks"));
}

// The precision line follows the rule of gpulab::choosePrecision as the view deepens: float32, then
// float64 one wheel notch past float32's limit, then perturbation one notch past float64's, with no
// message and no wall.
TEST_F(MandelbrotGui, PrecisionLabelSwitchesToPerturbationPastFloat64) {
  Harness h;
  ASSERT_TRUE(h.settle());
  EXPECT_TRUE(h.info().contains(QStringLiteral("precision  f32 (auto"))) << h.info().toStdString();

  const QSize pixels = h.canvas().pixelSize();
  const QPointF middle(h.canvas().width() / 2.0, h.canvas().height() / 2.0);
  MandelbrotView v = place(h.tab.view(), "-0.743643887037151", "0.13182590420533", "1");
  v.width = DeepWidth::fromDouble(std::ldexp(1.0, -20) * pixels.width() * 1.1);  // 10% above float32's limit
  ASSERT_TRUE(h.tab.navigate(v));
  EXPECT_TRUE(h.info().contains(QStringLiteral("precision  f32 (auto"))) << h.info().toStdString();
  EXPECT_TRUE(h.canvas().overlay().startsWith(QStringLiteral("f32   width "))) << h.canvas().overlay().toStdString();
  h.wheel(middle, 120);  // 1.25x: past the limit
  EXPECT_TRUE(h.info().contains(QStringLiteral("precision  f64 (auto"))) << h.info().toStdString();
  EXPECT_EQ(choosePrecision(h.tab.view()).used, Precision::F64);
  ASSERT_TRUE(h.settle());

  v = h.tab.view();
  v.width = DeepWidth::fromDouble(std::ldexp(1.0, -49) * pixels.width() * 1.1);  // 10% above float64's limit
  ASSERT_TRUE(h.tab.navigate(v));
  EXPECT_TRUE(h.info().contains(QStringLiteral("precision  f64 (auto"))) << h.info().toStdString();
  const MandelbrotView shallow = h.tab.view();
  h.wheel(middle, 120);
  EXPECT_LT(h.tab.view().width.log10(), shallow.width.log10()) << "the view stopped at float64";
  EXPECT_TRUE(h.canvas().message().isEmpty()) << h.canvas().message().toStdString();
  EXPECT_TRUE(h.info().contains(QStringLiteral("precision  perturbation, f64 deltas (auto"))) << h.info().toStdString();
  EXPECT_TRUE(h.canvas().overlay().startsWith(QStringLiteral("perturbation f64   width ")))
      << h.canvas().overlay().toStdString();
  h.wheel(middle, -120);  // back out: escape time again
  EXPECT_TRUE(h.info().contains(QStringLiteral("precision  f64 (auto"))) << h.info().toStdString();
  ASSERT_TRUE(h.settle());
}

TEST_F(MandelbrotGui, RecolouringDoesNotRecompute) {
  Harness h;
  ASSERT_TRUE(h.settle());
  ASSERT_TRUE(h.presented.back().computeMs.has_value());
  const QImage before = h.canvas().frame().copy();
  const std::size_t framesBefore = h.presented.size();
  auto* palette = h.child<QComboBox>("mandelbrotPalette");
  ASSERT_NE(palette, nullptr);
  palette->setCurrentIndex(palette->findText(QStringLiteral("fire")));
  ASSERT_TRUE(h.settle());
  ASSERT_GT(h.presented.size(), framesBefore);
  const MandelbrotFrameInfo& recoloured = h.presented.back();
  EXPECT_FALSE(recoloured.computeMs.has_value()) << "the palette change recomputed the frame";
  EXPECT_EQ(recoloured.divisor, 1);
  EXPECT_NE(h.canvas().frame(), before);
  EXPECT_TRUE(h.child<QLabel>("mandelbrotTiming")->text().contains(QStringLiteral("recoloured without recomputing")));
  EXPECT_EQ(h.tab.colouring().palette.name(), "fire");
  // So does the offset; a new view computes again.
  h.child<QSlider>("mandelbrotOffset")->setValue(250);
  ASSERT_TRUE(h.settle());
  EXPECT_FALSE(h.presented.back().computeMs.has_value());
  EXPECT_DOUBLE_EQ(h.tab.colouring().offset, 0.25);
  h.key(Qt::Key_Plus, QStringLiteral("+"));
  ASSERT_TRUE(h.settle());
  EXPECT_TRUE(h.presented.back().computeMs.has_value());
}

TEST_F(MandelbrotGui, SavedPngReopensTheView) {
  QTemporaryDir dir;
  Harness h;
  ASSERT_TRUE(h.settle());
  ASSERT_TRUE(h.tab.navigate(place(h.tab.view(), "0.2925", "0.0149", "0.02")));
  auto* palette = h.child<QComboBox>("mandelbrotPalette");
  palette->setCurrentIndex(palette->findText(QStringLiteral("ice")));
  ASSERT_TRUE(h.settle());
  const MandelbrotView saved = h.tab.view();

  const QString path = dir.filePath(QStringLiteral("elephant.png"));
  ASSERT_TRUE(h.savePng(path, QSize(97, 61), 2));
  const Image png = loadImage(path.toStdString());
  EXPECT_EQ(png.describe(), "97x61 RGB u8");  // opaque: written without alpha
  const auto text = readPngText(path.toStdString());
  const MandelbrotView stored = viewFromPngText(text);
  EXPECT_EQ(stored.centerX, saved.centerX);
  EXPECT_EQ(stored.centerY, saved.centerY);
  EXPECT_EQ(stored.width, saved.width);
  EXPECT_EQ(stored.maxIterations, saved.maxIterations);
  EXPECT_EQ(stored.imageWidth, 97);
  EXPECT_EQ(stored.supersample, 2);
  EXPECT_EQ(colouringFromPngText(text).palette.name(), "ice");

  // Elsewhere, another palette; opening the PNG brings both back (the size stays the canvas's).
  h.key(Qt::Key_Home);
  palette->setCurrentIndex(palette->findText(QStringLiteral("fire")));
  ASSERT_TRUE(h.settle());
  ASSERT_TRUE(h.reopensPng(path, saved));
  EXPECT_EQ(QSize(h.tab.view().imageWidth, h.tab.view().imageHeight), h.canvas().pixelSize());
  EXPECT_EQ(h.tab.colouring().palette.name(), "ice");
  ASSERT_TRUE(h.settle());

  // A PNG without a view says so and leaves the view alone.
  const QString plain = dir.filePath(QStringLiteral("plain.png"));
  saveImage(test::randomImage(8, 8, 3, PixelType::U8, 1), plain.toStdString());
  h.tab.openPng(plain);
  ASSERT_TRUE(waitUntil([&] { return !h.lastError.isEmpty(); }));
  EXPECT_TRUE(h.lastError.contains(QStringLiteral("no gpulab Mandelbrot view"))) << h.lastError.toStdString();
  EXPECT_EQ(h.tab.view().centerX, saved.centerX);
}

TEST_F(MandelbrotGui, CpuRenderReportsItsTimeAndCancels) {
  Harness h;
  ASSERT_TRUE(h.settle());
  auto* cpu = h.child<QPushButton>("mandelbrotCpuRender");
  auto* cancel = h.child<QPushButton>("mandelbrotCancel");
  auto* comparison = h.child<QLabel>("mandelbrotComparison");
  ASSERT_TRUE(cpu != nullptr && cancel != nullptr && comparison != nullptr);
  EXPECT_FALSE(cancel->isEnabled());

  // Cancelled: the label says so, the buttons come back, nothing reaches the Timings panel.
  int finished = 0;
  std::vector<RunTiming> runs;
  QObject::connect(&h.tab, &MandelbrotTab::cpuRenderFinished, [&] { ++finished; });
  QObject::connect(&h.timings, &TimingsPanel::runAdded, [&](const RunTiming& r) { runs.push_back(r); });
  cpu->click();
  EXPECT_FALSE(cpu->isEnabled());
  EXPECT_TRUE(cancel->isEnabled());
  EXPECT_TRUE(comparison->text().startsWith(QStringLiteral("CPU rendering"))) << comparison->text().toStdString();
  cancel->click();
  ASSERT_TRUE(waitUntil([&] { return comparison->text() == QStringLiteral("CPU render cancelled"); }))
      << comparison->text().toStdString();
  EXPECT_TRUE(cpu->isEnabled());
  EXPECT_FALSE(cancel->isEnabled());
  EXPECT_EQ(finished, 0);
  EXPECT_TRUE(runs.empty());

  // Run to the end: the CPU time (and the GPU's beside it when there is one) in words and in the panel.
  cpu->click();
  ASSERT_TRUE(waitUntil([&] { return finished == 1; }, 180000)) << comparison->text().toStdString();
  const QString text = comparison->text();
  EXPECT_TRUE(text.startsWith(QStringLiteral("CPU "))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("threads"))) << text.toStdString();
  EXPECT_EQ(text.contains(QStringLiteral("faster")), cudaAvailable()) << text.toStdString();
  ASSERT_EQ(runs.size(), 1u);
  const Measurement& run = runs.front().measurement;  // the engine's measureMandelbrot record
  EXPECT_EQ(run.operation, "mandelbrot");
  EXPECT_TRUE(cpuMs(run).has_value() && *cpuMs(run) > 0);
  EXPECT_EQ(run.cpu->warmup, 1) << "the CPU render is warmed up, as the GPU's";
  EXPECT_EQ(computeMs(run).has_value(), cudaAvailable());
  EXPECT_GT(run.work, 0.0) << "iterations counted";
  const MandelbrotView v = h.tab.view();
  EXPECT_EQ(imageText(run), QStringLiteral("%1x%2").arg(v.imageWidth).arg(v.imageHeight));
  EXPECT_TRUE(cpu->isEnabled());
  if (const QByteArray dir = qgetenv("GPULAB_TEST_SCREENSHOTS"); !dir.isEmpty()) {  // DIR: the tab and its timings
    h.timings.resize(1000, 260);
    h.timings.show();
    waitUntil([] { return false; }, 200);
    EXPECT_TRUE(h.tab.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/mandelbrot_cpu_render.png")));
    EXPECT_TRUE(h.timings.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/mandelbrot_cpu_timings.png")));
  }
}

// With a GPU, frames and the CPU render's comparison say where they come from.
TEST_F(MandelbrotGui, FramesComeFromTheGpuWhenThereIsOne) {
  GPULAB_REQUIRE_GPU();
  Harness h;
  ASSERT_TRUE(h.settle());
  ASSERT_FALSE(h.presented.empty());
  EXPECT_TRUE(h.presented.back().onGpu);
  EXPECT_TRUE(h.child<QLabel>("mandelbrotTiming")->text().startsWith(QStringLiteral("GPU frame")));
  // The canvas shows the renderer's image: the GPU colouring of the CPU's raw plane, within 1 per channel.
  const MandelbrotView v = h.tab.view();
  const Image expected = colourRaw(renderRawCpu(v), h.tab.colouring());
  const QImage shown = h.canvas().frame().convertToFormat(QImage::Format_RGBA8888);
  ASSERT_EQ(shown.size(), QSize(v.imageWidth, v.imageHeight));
  int worst = 0, differing = 0;
  for (int y = 0; y < shown.height(); ++y)
    for (int x = 0; x < shown.width(); ++x) {
      const uchar* p = shown.constScanLine(y) + 4 * x;
      int d = 0;
      for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(p[c] - expected.at<std::uint8_t>(x, y, c)));
      worst = std::max(worst, d);
      differing += d > 1;
    }
  // Pixels whose integer count differs (allowed: 0.01%) may differ in colour by more.
  EXPECT_LE(differing, shown.width() * shown.height() / 10000) << "worst " << worst;
}

// ---------------------------------------------------------------------------------------------
// gpulab --zoom-benchmark N [--zoom-rate HZ]

TEST_F(MandelbrotGui, ZoomBenchmarkCommandLine) {
  auto parse = [](QStringList args) {
    args.prepend(QStringLiteral("gpulab"));
    return parseCommandLine(args);
  };
  const CommandLine plain = parse({});
  EXPECT_EQ(plain.zoomBenchmark, 0);
  const CommandLine ok = parse({QStringLiteral("--zoom-benchmark"), QStringLiteral("300"), QStringLiteral("--size"),
                                QStringLiteral("1920x1080"), QStringLiteral("--tab"), QStringLiteral("Mandelbrot")});
  EXPECT_TRUE(ok.error.isEmpty()) << ok.error.toStdString();
  EXPECT_EQ(ok.zoomBenchmark, 300);
  EXPECT_EQ(ok.zoomRate, 120.0);
  EXPECT_EQ(ok.size, QSize(1920, 1080));
  const CommandLine paced = parse(
      {QStringLiteral("--zoom-benchmark"), QStringLiteral("5"), QStringLiteral("--zoom-rate"), QStringLiteral("0")});
  EXPECT_TRUE(paced.error.isEmpty()) << paced.error.toStdString();
  EXPECT_EQ(paced.zoomRate, 0.0);
  const std::vector<std::pair<QStringList, QString>> bad = {
      {{QStringLiteral("--zoom-benchmark"), QStringLiteral("0")}, QStringLiteral("--zoom-benchmark '0'")},
      {{QStringLiteral("--zoom-benchmark"), QStringLiteral("many")}, QStringLiteral("--zoom-benchmark 'many'")},
      {{QStringLiteral("--zoom-rate"), QStringLiteral("60")}, QStringLiteral("--zoom-rate goes with --zoom-benchmark")},
      {{QStringLiteral("--zoom-benchmark"), QStringLiteral("9"), QStringLiteral("--zoom-rate"), QStringLiteral("-1")},
       QStringLiteral("--zoom-rate '-1'")},
      {{QStringLiteral("--zoom-benchmark"), QStringLiteral("9"), QStringLiteral("--screenshot"),
        QStringLiteral("a.png")},
       QStringLiteral("cannot be combined")},
  };
  for (const auto& [args, expected] : bad) {
    const CommandLine c = parse(args);
    EXPECT_TRUE(c.error.contains(expected)) << args.join(' ').toStdString() << ": " << c.error.toStdString();
  }
  EXPECT_TRUE(plain.helpText.contains(QStringLiteral("--zoom-benchmark")));
}

// The zoom benchmark (its mechanics on any machine; 1920x1080 at 60 fps is for the GPU machine)

namespace {

// Plays the zoom benchmark on `tab`; empty when it has not finished within three minutes.
std::optional<MandelbrotZoomBenchmark::Result> playZoomBenchmark(MandelbrotTab& tab,
                                                                 const MandelbrotZoomBenchmark::Options& options) {
  std::optional<MandelbrotZoomBenchmark::Result> result;
  MandelbrotZoomBenchmark benchmark(tab, options);
  QObject::connect(&benchmark, &MandelbrotZoomBenchmark::finished,
                   [&](const MandelbrotZoomBenchmark::Result& r) { result = r; });
  benchmark.start();
  waitUntil([&] { return result.has_value(); }, 180000);
  return result;
}

}  // namespace

TEST_F(MandelbrotGui, ZoomBenchmarkPlaysItsStepsAndCountsPaintedFrames) {
  Harness h;
  ASSERT_TRUE(h.settle());
  MandelbrotZoomBenchmark::Options options;
  options.steps = 12;
  options.depthSteps = 8;  // 8 in, 4 out
  options.rateHz = 0;      // each step after the previous one's frame: every view is painted
  const std::optional<MandelbrotZoomBenchmark::Result> result = playZoomBenchmark(h.tab, options);
  ASSERT_TRUE(result.has_value()) << "the benchmark did not finish";
  EXPECT_TRUE(result->error.isEmpty()) << result->error.toStdString();
  EXPECT_FALSE(result->timedOut);
  EXPECT_EQ(result->steps, 12);
  EXPECT_GE(result->framesPresented, 12);  // one per step at least
  EXPECT_EQ(result->fullFrames + result->reducedFrames, result->framesPresented);
  EXPECT_EQ(result->computeMs.reps + result->recolouredFrames, result->framesPresented);
  EXPECT_GT(result->seconds, 0.0);
  EXPECT_NEAR(result->framesPerSecond, result->framesPresented / result->seconds, 1e-9);
  EXPECT_NEAR(result->deepestWidth, 3.0 / std::pow(1.25, 8), 1e-12);
  EXPECT_NEAR(h.tab.view().widthValue(), 3.0 / std::pow(1.25, 4), 1e-12);  // 8 in, 4 out
  EXPECT_EQ(result->onGpu, cudaAvailable());
  const QString report = MandelbrotZoomBenchmark::describe(*result);
  EXPECT_TRUE(report.contains(QStringLiteral("frames/s (display included)"))) << report.toStdString();
  EXPECT_TRUE(report.contains(QStringLiteral("12 wheel steps")));
}

// The figures (frames per second, GPU time, full-resolution share) are the benchmark's, printed here
// for the log, not asserted: `gpulab --zoom-benchmark` on the GPU machine reports them.
TEST_F(MandelbrotGui, ZoomBenchmarkRunsAtFullHdOnTheGpu) {
  GPULAB_REQUIRE_GPU();
  Harness h;
  ASSERT_TRUE(h.settle());
  MandelbrotZoomBenchmark::Options options;
  options.steps = 120;
  options.rateHz = 120;
  options.canvasSize = QSize(1920, 1080);
  const std::optional<MandelbrotZoomBenchmark::Result> result = playZoomBenchmark(h.tab, options);
  ASSERT_TRUE(result.has_value()) << "the benchmark did not finish";
  std::printf("%s\n", qPrintable(MandelbrotZoomBenchmark::describe(*result)));
  ASSERT_TRUE(result->error.isEmpty()) << result->error.toStdString();
  EXPECT_FALSE(result->timedOut);
  EXPECT_EQ(result->canvas, QSize(1920, 1080));
  EXPECT_EQ(result->steps, 120);
  EXPECT_TRUE(result->onGpu);
  EXPECT_GT(result->framesPresented, 0);
  EXPECT_GT(result->computeMs.reps, 0);
  EXPECT_GT(result->computeMs.minMs, 0.0);
  EXPECT_NEAR(result->deepestWidth, 3.0 / std::pow(1.25, 100), 1e-15);
  for (const MandelbrotFrameInfo& f : h.presented) EXPECT_TRUE(f.onGpu);
}

// The Save PNG dialog's GPU checkboxes: with several GPUs the selected one is checked and the others
// can join (at least one stays checked); with one GPU it is checked and disabled, saying why; without
// a GPU a line says the CPU renders the still. The device lists are given, so every case runs here.
TEST_F(MandelbrotGui, SaveDialogChoosesTheGpusOfTheStill) {
  Harness h;
  const QByteArray shots = qgetenv("GPULAB_TEST_SCREENSHOTS");
  auto shot = [&](QDialog& d, const char* name) {
    if (shots.isEmpty()) return;
    d.show();
    waitUntil([] { return false; }, 100);
    EXPECT_TRUE(d.grab().save(QString::fromLocal8Bit(shots) + QLatin1Char('/') + QString::fromUtf8(name)));
  };
  {
    GpuChoices two;
    two.labels = {QStringLiteral("GPU 0 (NVIDIA H100 80GB HBM3)"), QStringLiteral("GPU 1 (NVIDIA H100 80GB HBM3)")};
    two.selected = 1;
    const std::unique_ptr<QDialog> d(h.tab.createSaveDialog(two));
    auto* gpu0 = d->findChild<QCheckBox*>(QStringLiteral("mandelbrotSaveGpu0"));
    auto* gpu1 = d->findChild<QCheckBox*>(QStringLiteral("mandelbrotSaveGpu1"));
    ASSERT_NE(gpu0, nullptr);
    ASSERT_NE(gpu1, nullptr);
    EXPECT_FALSE(gpu0->isChecked());  // one GPU, the selected one, stays the default
    EXPECT_TRUE(gpu1->isChecked());
    EXPECT_TRUE(gpu0->isEnabled());
    EXPECT_EQ(MandelbrotTab::checkedGpus(*d), std::vector<int>({1}));
    gpu1->setChecked(false);  // the last one checked stays checked
    EXPECT_TRUE(gpu1->isChecked());
    gpu0->setChecked(true);
    EXPECT_EQ(MandelbrotTab::checkedGpus(*d), std::vector<int>({0, 1}));
    EXPECT_TRUE(gpu0->toolTip().contains(QStringLiteral("interactive frames always stay on one GPU")));
    shot(*d, "mandelbrot_save_two_gpus.png");
  }
  {
    GpuChoices one;
    one.labels = {QStringLiteral("GPU 0 (NVIDIA H100 80GB HBM3)")};
    const std::unique_ptr<QDialog> d(h.tab.createSaveDialog(one));
    auto* gpu0 = d->findChild<QCheckBox*>(QStringLiteral("mandelbrotSaveGpu0"));
    ASSERT_NE(gpu0, nullptr);
    EXPECT_TRUE(gpu0->isChecked());
    EXPECT_FALSE(gpu0->isEnabled());
    EXPECT_TRUE(gpu0->toolTip().contains(QStringLiteral("one GPU")));
    EXPECT_EQ(MandelbrotTab::checkedGpus(*d), std::vector<int>({0}));
    shot(*d, "mandelbrot_save_one_gpu.png");
  }
  {
    const std::unique_ptr<QDialog> d(h.tab.createSaveDialog(GpuChoices{}));
    EXPECT_NE(d->findChild<QLabel*>(QStringLiteral("mandelbrotSaveNoGpu")), nullptr);
    EXPECT_TRUE(MandelbrotTab::checkedGpus(*d).empty());
    shot(*d, "mandelbrot_save_no_gpu.png");
  }
  // The machine's own list arrives from the worker: one label per device.
  ASSERT_TRUE(waitUntil(
      [&] { return static_cast<std::size_t>(h.tab.gpuChoices().labels.size()) == queryDevices().devices.size(); }));
}

// A still saved split over two workers (on device 0 when it is the only GPU) is the one-GPU still.
TEST_F(MandelbrotGui, StillSplitOverGpusSavesTheSamePng) {
  GPULAB_REQUIRE_GPU();
  QTemporaryDir dir;
  Harness h;
  ASSERT_TRUE(h.settle());
  const QString one = dir.filePath(QStringLiteral("one.png")), split = dir.filePath(QStringLiteral("split.png"));
  ASSERT_TRUE(h.savePng(one, QSize(211, 97), 2));
  const int count = static_cast<int>(queryDevices().devices.size());
  ASSERT_TRUE(h.savePng(split, QSize(211, 97), 2, count > 1 ? std::vector<int>{0, 1} : std::vector<int>{0, 0}));
  EXPECT_TRUE(h.lastMessage.contains(QStringLiteral("rows"))) << h.lastMessage.toStdString();
  const Image a = loadImage(one.toStdString()), b = loadImage(split.toStdString());
  ASSERT_EQ(a.sizeBytes(), b.sizeBytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.sizeBytes()), 0);
}
