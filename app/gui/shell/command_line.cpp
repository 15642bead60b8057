#include "shell/command_line.hpp"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/lab/lab.hpp"
#include "gpulab/mandelbrot/view.hpp"

namespace gpulab::gui {

std::optional<QSize> parseWindowSize(const QString& text) {
  static const QRegularExpression pattern(QStringLiteral("^\\s*(\\d{1,5})\\s*[xX]\\s*(\\d{1,5})\\s*$"));
  const auto match = pattern.match(text);
  if (!match.hasMatch()) return std::nullopt;
  const int w = match.captured(1).toInt(), h = match.captured(2).toInt();
  if (w < 64 || h < 64 || w > 16384 || h > 16384) return std::nullopt;
  return QSize(w, h);
}

namespace {

/// --<tab>-<name> (the tab's name in lower case), its help starting "<Tab> tab: "; it takes a value
/// when `valueName` is given.
QCommandLineOption tabOption(const char* tab, const char* name, const char* description,
                             const char* valueName = nullptr) {
  const QString tabName = QString::fromLatin1(tab);
  return QCommandLineOption(tabName.toLower() + QLatin1Char('-') + QLatin1String(name),
                            tabName + QStringLiteral(" tab: ") + QLatin1String(description),
                            valueName != nullptr ? QString::fromLatin1(valueName) : QString());
}

// ---------------------------------------------------------------------------------------------
// The Lab tab's options

QCommandLineOption labOption(const char* name, const char* description, const char* valueName = nullptr) {
  return tabOption("Lab", name, description, valueName);
}

struct LabOptionSet {
  QCommandLineOption experiment =
      labOption("experiment", "the experiment (matmul, transpose, transfer, elementwise, reduce).", "NAME");
  QCommandLineOption sizes = labOption("sizes", "the sweep, e.g. 32..4096, 4K..256M or 33x100x7,64.", "LIST");
  QCommandLineOption dtype = labOption("dtype", "f32 or f64.", "TYPE");
  QCommandLineOption impls =
      labOption("impls", "comma-separated implementations (default: all this machine can run).", "LIST");
  QCommandLineOption ops = labOption("ops", "comma-separated variants to measure; the first is plotted.", "LIST");
  QCommandLineOption reps = labOption("reps", "timed runs per measurement (1-1000).", "N");
  QCommandLineOption withCopies = labOption("with-copies", "also time upload + compute + download as one.");
  QCommandLineOption run = labOption("run", "run the sweep; with --screenshot, take it once the sweep ends.");
};

LabOptionSet addLabOptions(QCommandLineParser& parser) {
  LabOptionSet o;
  parser.addOptions({o.experiment, o.sizes, o.dtype, o.impls, o.ops, o.reps, o.withCopies, o.run});
  return o;
}

QStringList commaList(const QString& text) {
  QStringList items = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
  for (QString& item : items) item = item.trimmed();
  items.removeAll(QString());
  return items;
}

/// "unknown implementation 'x' for matmul: choose from a, b" when `names` holds something else.
QString unknownName(const QStringList& given, const std::vector<std::string>& known, const QString& what,
                    lab::Experiment experiment) {
  QStringList choices;
  for (const std::string& k : known) choices << QString::fromStdString(k);
  for (const QString& name : given)
    if (!choices.contains(name))
      return QStringLiteral("unknown %1 '%2' for %3: choose from %4")
          .arg(what, name, QString::fromUtf8(toString(experiment)), choices.join(QStringLiteral(", ")));
  return {};
}

/// Fills result.lab from the parsed options; sets result.error to one line for a bad value.
void readLabOptions(const QCommandLineParser& parser, const LabOptionSet& o, CommandLine& result) {
  LabCommandLine& lab = result.lab;
  lab.given = parser.isSet(o.experiment) || parser.isSet(o.sizes) || parser.isSet(o.dtype) || parser.isSet(o.impls) ||
              parser.isSet(o.ops) || parser.isSet(o.reps) || parser.isSet(o.withCopies) || parser.isSet(o.run);
  if (!lab.given) return;
  lab::Experiment experiment = lab::Experiment::Matmul;
  try {
    if (parser.isSet(o.experiment)) {
      lab.experiment = parser.value(o.experiment).trimmed();
      experiment = parseEnumOrThrow<lab::Experiment>(lab.experiment.toStdString());
    }
    if (parser.isSet(o.sizes)) {
      lab.sizes = parser.value(o.sizes).trimmed();
      lab::parseSizeList(lab.sizes.toStdString());
    }
    if (parser.isSet(o.dtype)) {
      lab.dtype = parser.value(o.dtype).trimmed();
      parseEnumOrThrow<lab::DType>(lab.dtype.toStdString());
    }
  } catch (const std::invalid_argument& e) {
    result.error = QStringLiteral("--lab: %1").arg(QString::fromStdString(e.what()));
    return;
  }
  lab.impls = commaList(parser.value(o.impls));
  lab.ops = commaList(parser.value(o.ops));
  if (parser.isSet(o.impls) && lab.impls.isEmpty()) {
    result.error = QStringLiteral("--lab-impls needs at least one implementation");
    return;
  }
  if (parser.isSet(o.ops) && lab.ops.isEmpty()) {
    result.error = QStringLiteral("--lab-ops needs at least one variant");
    return;
  }
  if (QString bad = unknownName(lab.impls, lab::implNames(experiment), QStringLiteral("implementation"), experiment);
      !bad.isEmpty()) {
    result.error = QStringLiteral("--lab-impls: ") + bad;
    return;
  }
  if (!lab.ops.isEmpty() && lab::variantNames(experiment).empty()) {
    result.error = QStringLiteral("--lab-ops: %1 has no variants").arg(QString::fromUtf8(toString(experiment)));
    return;
  }
  if (QString bad = unknownName(lab.ops, lab::variantNames(experiment), QStringLiteral("variant"), experiment);
      !bad.isEmpty()) {
    result.error = QStringLiteral("--lab-ops: ") + bad;
    return;
  }
  if (parser.isSet(o.reps)) {
    bool ok = false;
    lab.reps = parser.value(o.reps).toInt(&ok);
    if (!ok || lab.reps < 1 || lab.reps > 1000) {
      result.error = QStringLiteral("--lab-reps '%1' is not a whole number from 1 to 1000").arg(parser.value(o.reps));
      return;
    }
  }
  lab.withCopies = parser.isSet(o.withCopies);
  lab.run = parser.isSet(o.run);
  if (!result.tab.isEmpty() && result.tab.compare(QStringLiteral("Lab"), Qt::CaseInsensitive) != 0)
    result.error = QStringLiteral("the --lab-* options go with the Lab tab, not '%1'").arg(result.tab);
}

// ---------------------------------------------------------------------------------------------
// The Mandelbrot tab's options

QCommandLineOption mandelbrotOption(const char* name, const char* description, const char* valueName) {
  return tabOption("Mandelbrot", name, description, valueName);
}

struct MandelbrotOptionSet {
  QCommandLineOption center =
      mandelbrotOption("center", "the centre X,Y, with as many digits as the depth needs.", "X,Y");
  QCommandLineOption width = mandelbrotOption(
      "width", "the view's width in the complex plane, e.g. 0.005 or 1e-500 (down to 1e-100000).", "W");
  QCommandLineOption iterations =
      mandelbrotOption("iters", "maximum iterations (1..16777216) or auto (from the depth, the default).", "N");
};

MandelbrotOptionSet addMandelbrotOptions(QCommandLineParser& parser) {
  MandelbrotOptionSet o;
  parser.addOptions({o.center, o.width, o.iterations});
  return o;
}

/// Fills result.mandelbrot from the parsed options; sets result.error to one line for a bad value.
void readMandelbrotOptions(const QCommandLineParser& parser, const MandelbrotOptionSet& o, CommandLine& result) {
  MandelbrotCommandLine& m = result.mandelbrot;
  m.given = parser.isSet(o.center) || parser.isSet(o.width) || parser.isSet(o.iterations);
  if (!m.given) return;
  try {
    if (parser.isSet(o.center)) {
      m.center = parser.value(o.center).trimmed();
      gpulab::parseCenter(m.center.toStdString(), "--mandelbrot-center");
    }
    if (parser.isSet(o.width)) {
      m.width = parser.value(o.width).trimmed();
      gpulab::DeepWidth::parse(m.width.toStdString());
    }
  } catch (const std::invalid_argument& e) {
    result.error = QString::fromUtf8(e.what());
    if (parser.isSet(o.width) && !result.error.startsWith(QStringLiteral("--")))
      result.error = QStringLiteral("--mandelbrot-width: ") + result.error;
    return;
  }
  if (parser.isSet(o.iterations)) {
    const QString text = parser.value(o.iterations).trimmed();
    if (text.compare(QStringLiteral("auto"), Qt::CaseInsensitive) != 0) {
      bool ok = false;
      m.iterations = text.toInt(&ok);
      if (!ok || m.iterations < 1 || m.iterations > gpulab::kMaxMandelbrotIterations) {
        result.error =
            QStringLiteral("--mandelbrot-iters '%1' is not auto or a whole number from 1 to 16777216").arg(text);
        return;
      }
    }
  }
  if (!result.tab.isEmpty() && result.tab.compare(QStringLiteral("Mandelbrot"), Qt::CaseInsensitive) != 0)
    result.error = QStringLiteral("the --mandelbrot-* options go with the Mandelbrot tab, not '%1'").arg(result.tab);
  else if (result.lab.given)
    result.error = QStringLiteral("the --mandelbrot-* and --lab-* options cannot be combined");
}

// ---------------------------------------------------------------------------------------------
// The Filters tab's options

struct FiltersOptionSet {
  QCommandLineOption operation = tabOption("Filters", "op", "the operation to show (box, sobel, conv, ...).", "NAME");
  QCommandLineOption region =
      tabOption("Filters", "region", "limit the filter to the rectangle X,Y,W,H (photo pixels).", "X,Y,W,H");
  QCommandLineOption line =
      tabOption("Filters", "line", "the Histogram panel's profile line from X0,Y0 to X1,Y1.", "X0,Y0,X1,Y1");
};

FiltersOptionSet addFiltersOptions(QCommandLineParser& parser) {
  FiltersOptionSet o;
  parser.addOptions({o.operation, o.region, o.line});
  return o;
}

/// `count` comma-separated numbers, or nullopt.
std::optional<std::vector<double>> numbers(const QString& text, int count) {
  const QStringList parts = text.split(QLatin1Char(','));
  if (parts.size() != count) return std::nullopt;
  std::vector<double> out;
  for (const QString& p : parts) {
    bool ok = false;
    const double v = p.trimmed().toDouble(&ok);
    if (!ok || !std::isfinite(v)) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

void readFiltersOptions(const QCommandLineParser& parser, const FiltersOptionSet& o, CommandLine& result) {
  FiltersCommandLine& f = result.filters;
  f.given = parser.isSet(o.operation) || parser.isSet(o.region) || parser.isSet(o.line);
  if (!f.given) return;
  f.operation = parser.value(o.operation).trimmed();
  if (parser.isSet(o.region)) {
    const auto v = numbers(parser.value(o.region), 4);
    if (!v || (*v)[2] < 1 || (*v)[3] < 1 || (*v)[0] < 0 || (*v)[1] < 0) {
      result.error = QStringLiteral("--filters-region '%1' is not X,Y,W,H with X, Y >= 0 and W, H >= 1")
                         .arg(parser.value(o.region));
      return;
    }
    f.region = QRect(static_cast<int>((*v)[0]), static_cast<int>((*v)[1]), static_cast<int>((*v)[2]),
                     static_cast<int>((*v)[3]));
  }
  if (parser.isSet(o.line)) {
    const auto v = numbers(parser.value(o.line), 4);
    if (!v) {
      result.error = QStringLiteral("--filters-line '%1' is not X0,Y0,X1,Y1").arg(parser.value(o.line));
      return;
    }
    f.line = QLineF((*v)[0], (*v)[1], (*v)[2], (*v)[3]);
  }
  if (!result.tab.isEmpty() && result.tab.compare(QStringLiteral("Filters"), Qt::CaseInsensitive) != 0)
    result.error = QStringLiteral("the --filters-* options go with the Filters tab, not '%1'").arg(result.tab);
  else if (result.lab.given || result.mandelbrot.given)
    result.error = QStringLiteral("the --filters-* options cannot be combined with --lab-* or --mandelbrot-*");
}

}  // namespace

CommandLine parseCommandLine(const QStringList& arguments) {
  CommandLine result;
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("gpulab: GPU image processing with CPU timings side by side.\n"
                     "Opens FILE, or the bundled photo when no FILE is given."));
  const QCommandLineOption help = parser.addHelpOption();
  const QCommandLineOption version = parser.addVersionOption();
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"),
      QStringLiteral("Render the window to FILE (PNG) once the photo is shown, then exit."), QStringLiteral("FILE"));
  const QCommandLineOption tab(QStringLiteral("tab"), QStringLiteral("Select the tab NAME first (e.g. Photo)."),
                               QStringLiteral("NAME"));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size, default 1400x900."),
                                QStringLiteral("WxH"));
  const QCommandLineOption apply(
      QStringLiteral("apply"),
      QStringLiteral("With --screenshot: apply the Filters tab's filter first (GPU and CPU where available) and "
                     "take the screenshot once its result and timings are shown."));
  const QCommandLineOption zoomBenchmark(
      QStringLiteral("zoom-benchmark"),
      QStringLiteral("Play N wheel-zoom steps on the Mandelbrot tab (in towards seahorse valley and out again), "
                     "print the frames per second painted (display included), GPU time per frame and the "
                     "share of full-resolution frames, then exit. --size is then the canvas size."),
      QStringLiteral("N"));
  const QCommandLineOption zoomRate(
      QStringLiteral("zoom-rate"),
      QStringLiteral("With --zoom-benchmark: wheel steps per second (default 120); 0 sends each step once the "
                     "previous step's frame is painted."),
      QStringLiteral("HZ"));
  // Internal: gpulab restarting itself after a GPU fault hands the new process what to restore
  // (shell/fault_restart.hpp); not for users, so not in --help.
  QCommandLineOption restore(QStringLiteral("restore-after-fault"), QStringLiteral("Internal."),
                             QStringLiteral("FILE"));
  restore.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOptions({screenshot, tab, size, apply, zoomBenchmark, zoomRate, restore});
  const LabOptionSet labOptions = addLabOptions(parser);
  const MandelbrotOptionSet mandelbrotOptions = addMandelbrotOptions(parser);
  const FiltersOptionSet filtersOptions = addFiltersOptions(parser);
  parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Photo or .npy array to open."),
                               QStringLiteral("[FILE]"));
  result.helpText = parser.helpText();
  // gpulab --help answers before the QApplication exists (so that it works without a display), and
  // without one Qt names the program "<executable_name>": name it as it was started.
  if (QCoreApplication::instance() == nullptr && !arguments.isEmpty())
    result.helpText.replace(QStringLiteral("<executable_name>"), arguments.front());

  if (!parser.parse(arguments)) {
    result.error = parser.errorText();
    return result;
  }
  result.help = parser.isSet(help);
  result.version = parser.isSet(version);
  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    result.error = QStringLiteral("expected at most one FILE, got %1").arg(positional.size());
    return result;
  }
  if (!positional.isEmpty()) result.file = positional.front();
  result.screenshot = parser.value(screenshot);
  result.tab = parser.value(tab);
  result.apply = parser.isSet(apply);
  result.restoreAfterFault = parser.value(restore);
  if (parser.isSet(size)) {
    const auto parsed = parseWindowSize(parser.value(size));
    if (!parsed) {
      result.error = QStringLiteral("--size '%1' is not WxH with both sides from 64 to 16384, e.g. 1400x900")
                         .arg(parser.value(size));
      return result;
    }
    result.size = *parsed;
    result.sizeGiven = true;
  }
  if (parser.isSet(zoomBenchmark)) {
    bool ok = false;
    result.zoomBenchmark = parser.value(zoomBenchmark).toInt(&ok);
    if (!ok || result.zoomBenchmark < 1 || result.zoomBenchmark > 100000) {
      result.error = QStringLiteral("--zoom-benchmark '%1' is not a number of steps from 1 to 100000")
                         .arg(parser.value(zoomBenchmark));
      return result;
    }
  }
  if (parser.isSet(zoomRate)) {
    bool ok = false;
    result.zoomRate = parser.value(zoomRate).toDouble(&ok);
    if (!ok || !(result.zoomRate >= 0 && result.zoomRate <= 1000)) {
      result.error =
          QStringLiteral("--zoom-rate '%1' is not a rate from 0 to 1000 steps per second").arg(parser.value(zoomRate));
      return result;
    }
    if (!parser.isSet(zoomBenchmark)) {
      result.error = QStringLiteral("--zoom-rate goes with --zoom-benchmark");
      return result;
    }
  }
  if (result.zoomBenchmark > 0 && parser.isSet(screenshot)) {
    result.error = QStringLiteral("--zoom-benchmark and --screenshot cannot be combined");
    return result;
  }
  if (parser.isSet(screenshot) && result.screenshot.isEmpty())
    result.error = QStringLiteral("--screenshot needs a FILE");
  if (result.apply && !parser.isSet(screenshot)) result.error = QStringLiteral("--apply goes with --screenshot");
  if (result.error.isEmpty()) readLabOptions(parser, labOptions, result);
  if (result.error.isEmpty()) readMandelbrotOptions(parser, mandelbrotOptions, result);
  if (result.error.isEmpty()) readFiltersOptions(parser, filtersOptions, result);
  return result;
}

}  // namespace gpulab::gui
