// The command line of the desktop app:
//   gpulab [FILE] [--screenshot OUT.png [--tab NAME] [--size WxH] [--apply]]
//          [--lab-experiment NAME] [--lab-sizes LIST] [--lab-dtype f32|f64] [--lab-impls LIST]
//          [--lab-ops LIST] [--lab-reps N] [--lab-with-copies] [--lab-run]
//          [--mandelbrot-center X,Y] [--mandelbrot-width W] [--mandelbrot-iters N|auto]
//          [--filters-op NAME] [--filters-region X,Y,W,H] [--filters-line X0,Y0,X1,Y1]
//   gpulab --zoom-benchmark N [--zoom-rate HZ] [--size WxH]   (the Mandelbrot tab; WxH is the canvas)
#pragma once

#include <QLineF>
#include <QRect>
#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

namespace gpulab::gui {

/// The Lab tab's options: any of them selects the Lab tab (unless --tab names it already).
struct LabCommandLine {
  QString experiment;       ///< --lab-experiment matmul|transpose|transfer|elementwise|reduce
  QString sizes;            ///< --lab-sizes LIST, as the tab's Sizes field takes it
  QString dtype;            ///< --lab-dtype f32|f64
  QStringList impls;        ///< --lab-impls a,b: exactly these implementations (default: all usable)
  QStringList ops;          ///< --lab-ops a,b: these variants; the first is plotted (default: all)
  int reps = 0;             ///< --lab-reps N; 0 keeps the tab's default
  bool withCopies = false;  ///< --lab-with-copies
  bool run = false;         ///< --lab-run: run the sweep; with --screenshot, shoot when it ends
  bool given = false;       ///< any --lab-* option was given
};

/// The Mandelbrot tab's start view: any of these selects the Mandelbrot tab (unless --tab names it
/// already). Validated by parseCommandLine; the texts go to gpulab::parseCenter and DeepWidth::parse.
struct MandelbrotCommandLine {
  QString center;      ///< --mandelbrot-center X,Y with every digit
  QString width;       ///< --mandelbrot-width W: 0.005, 1e-500, ... down to 1e-100000
  int iterations = 0;  ///< --mandelbrot-iters N; 0: automatic (from the depth)
  bool given = false;  ///< any --mandelbrot-* option was given
};

/// The Filters tab's start: any of these selects the Filters tab (unless --tab names it already).
struct FiltersCommandLine {
  QString operation;            ///< --filters-op NAME: a registered operation (box, sobel, conv, auto-levels, ...)
  std::optional<QRect> region;  ///< --filters-region X,Y,W,H: limit the filter to this rectangle
  std::optional<QLineF> line;   ///< --filters-line X0,Y0,X1,Y1: the Histogram panel's profile line
  bool given = false;
};

struct CommandLine {
  QString file;             ///< the photo to open instead of the bundled one
  QString screenshot;       ///< render the window to this file after start-up and exit
  QString tab;              ///< the tab to select first
  bool apply = false;       ///< with --screenshot: run the Filters tab's Apply and wait for its result
  int zoomBenchmark = 0;    ///< wheel-zoom steps to play on the Mandelbrot tab, then exit; 0: off
  double zoomRate = 120.0;  ///< steps per second; 0: each step once the previous one's frame is painted
  QSize size{1400, 900};
  bool sizeGiven = false;
  bool help = false;
  bool version = false;
  QString helpText;
  QString restoreAfterFault;  ///< --restore-after-fault FILE: a RestoreState (shell/fault_restart.hpp)
  QString error;              ///< one line saying what was wrong, when parsing failed
  LabCommandLine lab;
  MandelbrotCommandLine mandelbrot;
  FiltersCommandLine filters;
};

/// Parses `arguments` (argv, the program name first). Never exits and never prints; needs no
/// QCoreApplication (main() reads --help and --version before creating one).
CommandLine parseCommandLine(const QStringList& arguments);

/// "1400x900" -> QSize; nullopt unless both sides are 64..16384.
std::optional<QSize> parseWindowSize(const QString& text);

}  // namespace gpulab::gui
