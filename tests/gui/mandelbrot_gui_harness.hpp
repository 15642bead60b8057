// What the Mandelbrot tab's offscreen suites share (test_mandelbrot_gui.cpp, test_mandelbrot_deep_gui.cpp,
// one binary): the tab with the services the main window would hand it, events sent to its canvas, and
// the views the tests visit.
#pragma once

#include <gtest/gtest.h>

#include <QApplication>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <vector>

#include "gpulab/mandelbrot/mandelbrot.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"
#include "shell/engine.hpp"
#include "shell/photo_document.hpp"
#include "shell/tab_services.hpp"
#include "support/gui_test_support.hpp"
#include "widgets/timings_panel.hpp"

namespace gpulab::gui::mandelbrot_test {

using namespace gpulab;
using namespace gpulab::gui;
using test_support::waitUntil;

inline QApplication& app() { return test_support::testApplication("test_mandelbrot_gui"); }

using test_support::waitUntil;

/// The relative difference of two plane coordinates, scaled by the view's width.
inline double planeError(QPointF a, QPointF b, double width) {
  return std::max(std::abs(a.x() - b.x()), std::abs(a.y() - b.y())) / width;
}

/// A Mandelbrot tab with the services the main window would hand it, shown offscreen.
struct Harness {
  Engine engine;
  PhotoDocument photo;
  TimingsPanel timings;
  QString lastError, lastMessage;
  TabServices services{engine, photo, timings, [this](const QString& m) { lastMessage = m; },
                       [this](const QString& m) { lastError = m; }};
  MandelbrotTab tab{services};
  std::vector<MandelbrotFrameInfo> presented;
  /// Off: `presented` stays as it is (a soak of thousands of frames measures the tab's memory, not
  /// ~600 bytes a frame of this record).
  bool recordPresented = true;

  /// `canvasPixels` fixes the canvas's size (deep views on the CPU stay quick at 96x54).
  explicit Harness(QSize canvasPixels = {}) {
    QObject::connect(&tab, &MandelbrotTab::framePresented, [this](const MandelbrotFrameInfo& info) {
      if (recordPresented) presented.push_back(info);
    });
    if (canvasPixels.isValid()) {
      canvas().setMinimumSize(1, 1);
      canvas().setFixedSize(canvasPixels);
    }
    tab.resize(760, 420);
    tab.show();
  }
  MandelbrotCanvas& canvas() { return tab.canvas(); }
  /// Waits until the full-resolution frame of the current view is painted and the view rests.
  bool settle(int timeoutMs = 120000) {
    return waitUntil([this] { return tab.showsCurrentView(); }, timeoutMs);
  }
  template <class T>
  T* child(const char* name) {
    return tab.findChild<T*>(QLatin1String(name));
  }
  QString info() { return child<QLabel>("mandelbrotInfo")->text(); }
  void wheel(QPointF widgetPos, int angle) {
    QWheelEvent event(widgetPos, canvas().mapToGlobal(widgetPos), QPoint(), QPoint(0, angle), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(&canvas(), &event);
  }
  void key(int key, const QString& text = {}, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    QKeyEvent press(QEvent::KeyPress, key, modifiers, text);
    QCoreApplication::sendEvent(&canvas(), &press);
  }
  QString message() {
    auto* label = child<QLabel>("mandelbrotMessage");
    return label->isVisibleTo(&tab) ? label->text() : QString();
  }
  /// With GPULAB_TEST_SCREENSHOTS=DIR, saves the tab as DIR/name (to look at what a test left on screen).
  void screenshot(const char* name) {
    const QByteArray dir = qgetenv("GPULAB_TEST_SCREENSHOTS");
    if (dir.isEmpty()) return;
    waitUntil([] { return false; }, 100);
    EXPECT_TRUE(tab.grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + QString::fromUtf8(name)));
  }
  void mouse(QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons,
             Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    QMouseEvent event(type, pos, canvas().mapToGlobal(pos), button, buttons, modifiers);
    QCoreApplication::sendEvent(&canvas(), &event);
  }
  /// Saves the view as a PNG of `size` pixels at `path` and waits until it is written.
  ::testing::AssertionResult savePng(const QString& path, QSize size, int supersample,
                                     const std::vector<int>& gpus = {}) {
    int done = 0;
    const QMetaObject::Connection saved =
        QObject::connect(&tab, &MandelbrotTab::pngSaved, [&](const QString& p) { done += p == path; });
    tab.savePng(path, size, supersample, gpus);
    const bool ended = waitUntil([&] { return done == 1 || !lastError.isEmpty(); });
    QObject::disconnect(saved);
    if (!ended) return ::testing::AssertionFailure() << "no pngSaved";
    if (!lastError.isEmpty()) return ::testing::AssertionFailure() << lastError.toStdString();
    return ::testing::AssertionSuccess();
  }
  /// Opens a PNG saved by the tab and waits until the view is back: the place and the iterations of
  /// `saved` (the image size stays the canvas's).
  ::testing::AssertionResult reopensPng(const QString& path, const MandelbrotView& saved) {
    tab.openPng(path);
    const auto back = [&] {
      const MandelbrotView& v = tab.view();
      return v.centerX == saved.centerX && v.centerY == saved.centerY && v.width == saved.width &&
             v.maxIterations == saved.maxIterations;
    };
    if (waitUntil(back)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << path.toStdString() << " did not bring its view back (error: '"
                                         << lastError.toStdString() << "')";
  }
};

class MandelbrotGui : public ::testing::Test {
 protected:
  void SetUp() override { app(); }
};

inline MandelbrotView sized(MandelbrotView v, int w, int h) {
  v.imageWidth = w;
  v.imageHeight = h;
  return v;
}

// A boundary point of seahorse valley found by a Newton zoom chain (gpulab-cli mandelbrot --bench's
// deep-1e-100), 125 digits.
inline constexpr const char* kDeepX =
    "-0.74361188847330224914444350843275271654387781715973313695436280182213037747031080759132550809537224388507262848"
    "072074461608";
inline constexpr const char* kDeepY =
    "0.131837002394806472849310458452438856417046191888077007404889544934349771337518486837307510297873928251456528894"
    "582019421";
// The same point with 150 significant digits in each coordinate.
inline constexpr const char* kDeepX150 =
    "-0.74361188847330224914444350843275271654387781715973313695436280182213037747031080759132550809537224388507262848"
    "0720744616081234567890123456789012345678";
inline constexpr const char* kDeepY150 =
    "0.131837002394806472849310458452438856417046191888077007404889544934349771337518486837307510297873928251456528894"
    "582019421987654321098765432109876543217";

/// A view at (x, y) of width w, every digit as given.
inline MandelbrotView place(MandelbrotView v, const char* x, const char* y, const char* w) {
  v.centerX = DecimalNumber::parse(x);
  v.centerY = DecimalNumber::parse(y);
  v.width = DeepWidth::parse(w);
  return v;
}

}  // namespace gpulab::gui::mandelbrot_test
