// What every offscreen GUI test binary needs: one QApplication, and a way to let the event loop run
// until something has happened.
#pragma once

#include <QApplication>
#include <QByteArray>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <functional>

#include "support/gpu_test.hpp"

namespace gpulab::gui::test_support {

/// The binary's one QApplication (created on the first call): offscreen, its QSettings in a private
/// temporary directory under organisation "gpulab-test" and application `name`, so tests never
/// read or write a person's settings.
inline QApplication& testApplication(const char* name) {
  static QApplication* instance = [name] {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    static QTemporaryDir config;
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(config.path()));
    static QByteArray programName(name);
    static int argc = 1;
    static char* argv[] = {programName.data(), nullptr};
    auto* app = new QApplication(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("gpulab-test"));
    QApplication::setApplicationName(QString::fromUtf8(name));
    return app;
  }();
  return *instance;
}

/// Runs the event loop until `done` holds (true) or `timeoutMs` passes (false). Under compute-sanitizer
/// the limit is ten times longer: the tools slow kernels 10-100x, and a GPU job (the convolution cost
/// model's calibration on 4096x4096 images, say) can take minutes there.
inline bool waitUntil(const std::function<bool()>& done, int timeoutMs = 60000) {
  if (::gpulab::test::underComputeSanitizer()) timeoutMs *= 10;
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > timeoutMs) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    QThread::msleep(1);
  }
  return true;
}

}  // namespace gpulab::gui::test_support
