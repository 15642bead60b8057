// gpulab: the desktop application. Everything but start-up lives in the gpulab_gui library.
#include <QApplication>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "command_line.hpp"
#include "filters_tab.hpp"
#include "main_window.hpp"
#include "theme.hpp"

namespace {

// The offscreen and some X11 setups warn about a window-manager hint they cannot pass on; it says
// nothing to a user, and --screenshot promises one line on stderr when something goes wrong.
QtMessageHandler qtHandler = nullptr;

void quietMessages(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (message.startsWith(QLatin1String("This plugin does not support propagateSizeHints"))) return;
  qtHandler(type, context, message);
}

int fail(int code, const QString& message) {
  std::fprintf(stderr, "gpulab: %s\n", qPrintable(message));
  return code;
}

// After start-up (photo shown, device reported, or `timeoutMs`), and with `apply` once the Filters
// tab has shown its result, renders the window to `file` and quits with 0, or with 1 and one line
// on stderr when the file cannot be written.
void screenshotWhenReady(gpulab::gui::MainWindow& window, const QString& file, int timeoutMs, bool apply) {
  auto taken = std::make_shared<bool>(false);
  auto take = [&window, file, taken](bool timedOut) {
    if (*taken) return;
    *taken = true;
    if (timedOut)
      std::fprintf(stderr, "gpulab: start-up took longer than expected; the screenshot shows it unfinished\n");
    // Let the layout and the last paints settle before rendering.
    QTimer::singleShot(100, &window, [&window, file] {
      const QPixmap shot = window.grab();
      if (shot.isNull() || !shot.save(file))
        QCoreApplication::exit(fail(1, QStringLiteral("cannot write the screenshot to %1").arg(file)));
      else
        QCoreApplication::exit(0);
    });
  };
  QObject::connect(&window, &gpulab::gui::MainWindow::startupFinished, &window, [&window, take, apply] {
    auto* filters = apply ? window.findChild<gpulab::gui::FiltersTab*>() : nullptr;
    if (filters == nullptr) return take(false);
    QObject::connect(
        filters, &gpulab::gui::FiltersTab::runFinished, &window, [take] { take(false); }, Qt::SingleShotConnection);
    filters->apply();
  });
  QTimer::singleShot(timeoutMs, &window, [take] { take(true); });
}

}  // namespace

int main(int argc, char** argv) {
  qtHandler = qInstallMessageHandler(quietMessages);  // Qt's own handler when none was installed
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("gpulab"));
  QApplication::setApplicationName(QStringLiteral("gpulab"));
  QApplication::setApplicationVersion(QStringLiteral(GPULAB_VERSION));
  gpulab::gui::applyTheme(app);

  const gpulab::gui::CommandLine cli = gpulab::gui::parseCommandLine(QApplication::arguments());
  if (!cli.error.isEmpty()) {
    QString error = cli.error;
    if (error.endsWith(QLatin1Char('.'))) error.chop(1);  // QCommandLineParser ends its sentences with one
    return fail(2, error + QStringLiteral(" (see 'gpulab --help')"));
  }
  if (cli.help) {
    std::fputs(qPrintable(cli.helpText), stdout);
    return 0;
  }
  if (cli.version) {
    std::printf("gpulab %s\n", GPULAB_VERSION);
    return 0;
  }

  const bool screenshot = !cli.screenshot.isEmpty();
  gpulab::gui::MainWindow window({.persistSettings = !screenshot, .errorDialogs = !screenshot});
  if (!cli.tab.isEmpty() && !window.selectTab(cli.tab))
    return fail(
        2, QStringLiteral("there is no tab '%1'; tabs: %2").arg(cli.tab, window.tabNames().join(QStringLiteral(", "))));
  if (screenshot || cli.sizeGiven) window.resize(cli.size);
  if (screenshot) screenshotWhenReady(window, cli.screenshot, cli.apply ? 60000 : 10000, cli.apply);
  window.show();
  window.startUp(cli.file);
  return QApplication::exec();
}
