// gpulab: the desktop application. Everything but start-up lives in the gpulab_gui library.
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QPixmap>
#include <QTimer>
#include <cstdio>
#include <optional>

#include "fft/fft_tab.hpp"
#include "filters/filters_tab.hpp"
#include "gpulab/core/relaunch.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab_build_version.hpp"
#include "lab/lab_tab.hpp"
#include "mandelbrot/mandelbrot_tab.hpp"
#include "mandelbrot/mandelbrot_zoom_benchmark.hpp"
#include "shell/command_line.hpp"
#include "shell/fault_restart.hpp"
#include "shell/main_window.hpp"
#include "shell/resource_paths.hpp"
#include "shell/theme.hpp"

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

/// A command line that parseCommandLine refused: one line on stderr, exit code 2.
int usageError(QString error) {
  if (error.endsWith(QLatin1Char('.'))) error.chop(1);  // QCommandLineParser ends its sentences with one
  return fail(2, error + QStringLiteral(" (see 'gpulab --help')"));
}

/// Whether QApplication can start a window system: a display, or a platform named by
/// QT_QPA_PLATFORM or -platform. Without one it aborts with Qt's xcb error.
bool platformAvailable(const QStringList& arguments) {
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
    if (!qEnvironmentVariableIsEmpty(name)) return true;
  return arguments.contains(QStringLiteral("-platform")) || arguments.contains(QStringLiteral("--platform"));
}

/// Prints the help or the version when `cli` asks for one; true when it did.
bool printHelpOrVersion(const gpulab::gui::CommandLine& cli) {
  if (cli.help)
    std::fputs(qPrintable(cli.helpText), stdout);
  else if (cli.version)
    std::printf("gpulab %s\n", GPULAB_VERSION_STRING);
  return cli.help || cli.version;
}

/// Sets the Lab tab's controls from --lab-* (validated by parseCommandLine).
void applyLabOptions(gpulab::gui::LabTab& lab, const gpulab::gui::LabCommandLine& options) {
  namespace labns = gpulab::lab;
  if (!options.experiment.isEmpty())
    lab.setExperiment(gpulab::parseEnumOrThrow<labns::Experiment>(options.experiment.toStdString()));
  if (!options.sizes.isEmpty()) lab.setSizesText(options.sizes);
  if (!options.dtype.isEmpty()) lab.setDType(gpulab::parseEnumOrThrow<labns::DType>(options.dtype.toStdString()));
  if (!options.impls.isEmpty()) lab.setSelectedImpls(options.impls);
  if (!options.ops.isEmpty()) lab.setSelectedVariants(options.ops);
  if (options.reps > 0) lab.setReps(options.reps);
  lab.setWithCopies(options.withCopies);
  if (!options.ops.isEmpty()) {
    const QString plotted = options.ops.front();
    QObject::connect(&lab, &gpulab::gui::LabTab::runFinished, &lab, [&lab, plotted] { lab.setPlotVariant(plotted); });
  }
}

/// Moves the Mandelbrot tab to the view of --mandelbrot-* (validated by parseCommandLine); empty, or
/// one sentence when the view cannot be rendered (a centre beyond +-10).
QString applyMandelbrotOptions(gpulab::gui::MandelbrotTab& tab, const gpulab::gui::MandelbrotCommandLine& options) {
  gpulab::MandelbrotView view = tab.view();
  if (!options.center.isEmpty()) {
    const auto c = gpulab::parseCenter(options.center.toStdString(), "--mandelbrot-center");
    view.centerX = c[0];
    view.centerY = c[1];
  }
  if (!options.width.isEmpty()) view.width = gpulab::DeepWidth::parse(options.width.toStdString());
  try {
    gpulab::choosePrecision(view);
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  tab.setIterations(options.iterations > 0 ? std::optional<int>(options.iterations) : std::nullopt);
  tab.navigate(view);
  return {};
}

// After start-up (photo shown, device reported, or `timeoutMs`), with `apply` once the Filters
// tab has shown its result, and with `labRun` once the Lab tab's sweep has ended, renders the
// window to `file` and quits with 0, or with 1 and one line on stderr when the photo asked for cannot
// be opened, the file cannot be written or the sweep failed.
void screenshotWhenReady(gpulab::gui::MainWindow& window, const QString& file, int timeoutMs, bool apply, bool labRun) {
  auto taken = std::make_shared<bool>(false);
  auto take = [&window, file, taken](bool timedOut, const QString& failure = {}) {
    if (*taken) return;
    *taken = true;
    if (timedOut)
      std::fprintf(stderr, "gpulab: start-up took longer than expected; the screenshot shows it unfinished\n");
    // Let the layout and the last paints settle before rendering.
    QTimer::singleShot(100, &window, [&window, file, failure] {
      const QPixmap shot = window.grab();
      if (shot.isNull() || !shot.save(file))
        QCoreApplication::exit(fail(1, QStringLiteral("cannot write the screenshot to %1").arg(file)));
      else
        QCoreApplication::exit(failure.isEmpty() ? 0 : fail(1, failure));
    });
  };
  QObject::connect(&window, &gpulab::gui::MainWindow::startupFinished, &window, [&window, take, apply, labRun] {
    // The photo asked for could not be opened: no screenshot of something else.
    if (const QString why = window.startupError(); !why.isEmpty()) {
      QCoreApplication::exit(fail(1, why));
      return;
    }
    if (auto* lab = labRun ? window.findChild<gpulab::gui::LabTab*>() : nullptr) {
      QObject::connect(
          lab, &gpulab::gui::LabTab::runFinished, &window,
          [take, lab] {
            take(false,
                 lab->lastRunFailed() ? QStringLiteral("the Lab run failed: %1").arg(lab->statusText()) : QString());
          },
          Qt::SingleShotConnection);
      return lab->runWhenReady();
    }
    // The FFT and Mandelbrot tabs compute on show: shoot once the first result is on screen.
    if (auto* fft = window.findChild<gpulab::gui::FftTab*>();
        fft != nullptr && fft->isVisible() && fft->awaitingResult()) {
      QObject::connect(
          fft, &gpulab::gui::FftTab::resultShown, &window, [take] { take(false); }, Qt::SingleShotConnection);
      return;
    }
    if (auto* mandelbrot = window.findChild<gpulab::gui::MandelbrotTab*>();
        mandelbrot != nullptr && mandelbrot->isVisible() && !mandelbrot->showsCurrentView()) {
      QObject::connect(mandelbrot, &gpulab::gui::MandelbrotTab::framePresented, &window, [take, mandelbrot] {
        if (mandelbrot->showsCurrentView()) take(false);
      });
      return;
    }
    auto* filters = apply ? window.findChild<gpulab::gui::FiltersTab*>() : nullptr;
    if (filters == nullptr) return take(false);
    // Once the result is shown and the Histogram panel has caught up with it.
    QObject::connect(
        filters, &gpulab::gui::FiltersTab::runFinished, &window,
        [take, filters] {
          if (filters->analysisCurrent()) return take(false);
          QObject::connect(filters, &gpulab::gui::FiltersTab::analysisShown, filters, [take, filters] {
            if (filters->analysisCurrent()) take(false);
          });
        },
        Qt::SingleShotConnection);
    filters->apply();
  });
  QTimer::singleShot(timeoutMs, &window, [take, labRun] {
    take(true, labRun ? QStringLiteral("the Lab run did not finish in time") : QString());
  });
}

// Once start-up has finished, plays the zoom benchmark on the Mandelbrot tab, prints its report on
// stdout and quits with 0, or with 1 and one line on stderr when nothing could be measured.
void zoomBenchmarkWhenReady(gpulab::gui::MainWindow& window, const gpulab::gui::CommandLine& cli) {
  QObject::connect(&window, &gpulab::gui::MainWindow::startupFinished, &window, [&window, cli] {
    auto* tab = window.findChild<gpulab::gui::MandelbrotTab*>();
    if (tab == nullptr) return QCoreApplication::exit(fail(1, QStringLiteral("there is no Mandelbrot tab")));
    gpulab::gui::MandelbrotZoomBenchmark::Options options;
    options.steps = cli.zoomBenchmark;
    options.rateHz = cli.zoomRate;
    if (cli.sizeGiven) options.canvasSize = cli.size;
    auto* benchmark = new gpulab::gui::MandelbrotZoomBenchmark(*tab, options, &window);
    QObject::connect(
        benchmark, &gpulab::gui::MandelbrotZoomBenchmark::finished, &window,
        [](const gpulab::gui::MandelbrotZoomBenchmark::Result& result) {
          const QString report = gpulab::gui::MandelbrotZoomBenchmark::describe(result);
          if (!result.error.isEmpty())
            return QCoreApplication::exit(fail(1, QString(report).replace(QLatin1Char('\n'), QStringLiteral("; "))));
          std::printf("%s\n", qPrintable(report));
          std::fflush(stdout);
          QCoreApplication::exit(0);
        });
    benchmark->start();
  });
}

}  // namespace

int main(int argc, char** argv) {
  gpulab::adoptFaultRestartState();  // restarted after a GPU fault: this process's, not its children's
  // --help and --version answer before QApplication exists, so that they work without a display.
  // Qt's own options (-platform, -style, ...) are unknown here: such command lines are read again
  // below, once QApplication has taken its options out, unless there is no display to start.
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  if (const auto early = gpulab::gui::parseCommandLine(arguments); early.error.isEmpty()) {
    if (printHelpOrVersion(early)) return 0;
  } else if (!platformAvailable(arguments)) {
    return usageError(early.error);
  }

  qtHandler = qInstallMessageHandler(quietMessages);  // Qt's own handler when none was installed
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("gpulab"));
  QApplication::setApplicationName(QStringLiteral("gpulab"));
  QApplication::setApplicationVersion(QStringLiteral(GPULAB_VERSION_STRING));
  QApplication::setWindowIcon(gpulab::gui::applicationIcon());
  QGuiApplication::setDesktopFileName(QStringLiteral(GPULAB_APP_ID));  // Wayland: the .desktop file's icon
  gpulab::gui::applyTheme(app);

  const gpulab::gui::CommandLine cli = gpulab::gui::parseCommandLine(QApplication::arguments());
  if (!cli.error.isEmpty()) return usageError(cli.error);
  if (printHelpOrVersion(cli)) return 0;

  const bool screenshot = !cli.screenshot.isEmpty();
  const bool unattended = screenshot || cli.zoomBenchmark > 0;
  gpulab::gui::MainWindow window({.persistSettings = !unattended,
                                  .errorDialogs = !unattended,
                                  .restartWithoutAsking = unattended || gpulab::gui::restartOnFaultWithoutAsking()});
  const QString tab = cli.tab.isEmpty() && cli.lab.given ? QStringLiteral("Lab") : cli.tab;
  if (!tab.isEmpty() && !window.selectTab(tab))
    return fail(
        2, QStringLiteral("there is no tab '%1'; tabs: %2").arg(tab, window.tabNames().join(QStringLiteral(", "))));
  if (cli.zoomBenchmark > 0) {
    const QString mandelbrot = QStringLiteral("Mandelbrot");
    if (!tab.isEmpty() && tab.compare(mandelbrot, Qt::CaseInsensitive) != 0)
      return fail(2, QStringLiteral("--zoom-benchmark runs on the Mandelbrot tab, not '%1'").arg(tab));
    window.selectTab(mandelbrot);
    zoomBenchmarkWhenReady(window, cli);
  }
  auto* lab = window.findChild<gpulab::gui::LabTab*>();
  if (cli.lab.given && lab != nullptr) applyLabOptions(*lab, cli.lab);
  if (cli.mandelbrot.given) {
    window.selectTab(QStringLiteral("Mandelbrot"));
    auto* mandelbrot = window.findChild<gpulab::gui::MandelbrotTab*>();
    if (mandelbrot == nullptr) return fail(2, QStringLiteral("there is no Mandelbrot tab"));
    if (const QString why = applyMandelbrotOptions(*mandelbrot, cli.mandelbrot); !why.isEmpty())
      return fail(2, QStringLiteral("--mandelbrot-*: %1").arg(why));
  }
  if (cli.filters.given) {
    window.selectTab(QStringLiteral("Filters"));
    auto* filters = window.findChild<gpulab::gui::FiltersTab*>();
    if (filters == nullptr) return fail(2, QStringLiteral("there is no Filters tab"));
    if (!cli.filters.operation.isEmpty() && !filters->setOperation(cli.filters.operation))
      return fail(2, QStringLiteral("--filters-op: there is no operation '%1'; operations: %2")
                         .arg(cli.filters.operation, QString::fromStdString(gpulab::operationNames())));
    // The region and the line are set once the photo is shown (they are clipped to it).
    QObject::connect(
        &window, &gpulab::gui::MainWindow::startupFinished, filters,
        [filters, options = cli.filters] {
          if (options.region) filters->setRegion(options.region);
          if (options.line) filters->setProfileLine(options.line);
        },
        Qt::SingleShotConnection);
  }
  if (screenshot && cli.lab.given)  // the Lab's screenshot: the device panel, not the photo's docks
    for (const char* dock : {"photoDock", "timingsDock"})
      if (auto* widget = window.findChild<QDockWidget*>(QLatin1String(dock))) widget->hide();
  // Restarted after a GPU fault: the photo, tab, Filters operation, Mandelbrot view and window come back.
  std::optional<gpulab::gui::RestoreState> restore;
  if (!cli.restoreAfterFault.isEmpty()) {
    QString why;
    restore = gpulab::gui::readRestoreState(cli.restoreAfterFault, &why);
    QFile::remove(cli.restoreAfterFault);
    if (restore)
      window.restoreAfterRestart(*restore, gpulab::faultRestarts());
    else
      fail(0, QStringLiteral("restarted after a GPU fault, but nothing could be restored: %1").arg(why));
  }
  if (screenshot || cli.sizeGiven) window.resize(cli.size);
  const bool labRun = cli.lab.run && lab != nullptr;
  // A deep view rendered on the CPU (no GPU) takes a while: its screenshot waits up to two minutes.
  const int screenshotMs = labRun ? 600000 : cli.mandelbrot.given ? 120000 : cli.apply ? 60000 : 10000;
  if (screenshot)
    screenshotWhenReady(window, cli.screenshot, screenshotMs, cli.apply, labRun);
  else if (labRun)
    lab->runWhenReady();
  window.show();
  if (restore)
    window.startUp(restore->photo, !restore->photoEdited);  // a copy of an edited photo is no recent file
  else
    window.startUp(cli.file);
  return QApplication::exec();
}
