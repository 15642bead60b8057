// The command line of the desktop app:
//   gpulab [FILE] [--screenshot OUT.png [--tab NAME] [--size WxH] [--apply]]
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

namespace gpulab::gui {

struct CommandLine {
  QString file;        ///< the photo to open instead of the bundled one
  QString screenshot;  ///< render the window to this file after start-up and exit
  QString tab;         ///< the tab to select first
  bool apply = false;  ///< with --screenshot: run the Filters tab's Apply and wait for its result
  QSize size{1400, 900};
  bool sizeGiven = false;
  bool help = false;
  bool version = false;
  QString helpText;
  QString error;  ///< one line saying what was wrong, when parsing failed
};

/// Parses `arguments` (argv, the program name first). Never exits and never prints.
CommandLine parseCommandLine(const QStringList& arguments);

/// "1400x900" -> QSize; nullopt unless both sides are 64..16384.
std::optional<QSize> parseWindowSize(const QString& text);

}  // namespace gpulab::gui
