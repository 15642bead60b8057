#include "command_line.hpp"

#include <QCommandLineParser>
#include <QRegularExpression>

namespace gpulab::gui {

std::optional<QSize> parseWindowSize(const QString& text) {
  static const QRegularExpression pattern(QStringLiteral("^\\s*(\\d{1,5})\\s*[xX]\\s*(\\d{1,5})\\s*$"));
  const auto match = pattern.match(text);
  if (!match.hasMatch()) return std::nullopt;
  const int w = match.captured(1).toInt(), h = match.captured(2).toInt();
  if (w < 64 || h < 64 || w > 16384 || h > 16384) return std::nullopt;
  return QSize(w, h);
}

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
  parser.addOptions({screenshot, tab, size, apply});
  parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Photo or .npy array to open."),
                               QStringLiteral("[FILE]"));
  result.helpText = parser.helpText();

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
  if (parser.isSet(screenshot) && result.screenshot.isEmpty())
    result.error = QStringLiteral("--screenshot needs a FILE");
  if (result.apply && !parser.isSet(screenshot)) result.error = QStringLiteral("--apply goes with --screenshot");
  return result;
}

}  // namespace gpulab::gui
