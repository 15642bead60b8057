// Runs a program as a user would from a terminal, for tests of the installed and built programs:
// its exit code, stdout and stderr, with the environment chosen by the test (no display, ...).
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <string>

namespace gpulab::test {

struct ProgramRun {
  int exitCode = -1;  ///< -1 when it did not start, crashed or timed out (then `error` says which)
  QString out;
  QString err;
  QString error;

  /// "exit 0 / stdout ... / stderr ..." for failure messages.
  std::string describe() const {
    return ("exit " + QString::number(exitCode) + (error.isEmpty() ? QString() : QStringLiteral(" (") + error + ')') +
            "\n--- stdout\n" + out + "--- stderr\n" + err)
        .toStdString();
  }
};

/// The caller's environment without a display: no DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM, as
/// on a server or in a container (Qt would pick xcb and abort there).
inline QProcessEnvironment environmentWithoutDisplay() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(QString::fromLatin1(name));
  return env;
}

inline ProgramRun runProgram(const QString& program, const QStringList& arguments,
                             const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                             int timeoutMs = 120000) {
  QProcess process;
  process.setProcessEnvironment(env);
  process.setStandardInputFile(QProcess::nullDevice());
  process.start(program, arguments);
  ProgramRun run;
  if (!process.waitForStarted()) {
    run.error = QStringLiteral("did not start: ") + process.errorString();
    return run;
  }
  if (!process.waitForFinished(timeoutMs)) {
    process.kill();
    process.waitForFinished();
    run.error = QStringLiteral("timed out");
  } else if (process.exitStatus() != QProcess::NormalExit) {
    run.error = QStringLiteral("crashed: ") + process.errorString();
  } else {
    run.exitCode = process.exitCode();
  }
  run.out = QString::fromLocal8Bit(process.readAllStandardOutput());
  run.err = QString::fromLocal8Bit(process.readAllStandardError());
  return run;
}

}  // namespace gpulab::test
