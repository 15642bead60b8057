// The Mandelbrot tab's view arithmetic (pure functions of gpulab::MandelbrotView), the well-known
// places, and the record of a painted frame. No widgets, no engine calls: the canvas, the tab and the
// zoom benchmark share these, and the tests check them directly.
#pragma once

#include <QPointF>
#include <QRectF>
#include <QString>
#include <optional>
#include <vector>

#include "gpulab/mandelbrot/mandelbrot.hpp"

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// View arithmetic (pure). Pixels are image pixels of `view` (imageWidth x imageHeight), continuous:
// pixel (i, j) covers [i, i+1) x [j, j+1), its centre at (i + 0.5, j + 0.5).

/// The point of the complex plane at `pixel`.
QPointF planePoint(const gpulab::MandelbrotView& view, QPointF pixel);
/// Zoomed by `factor` (> 1 zooms in) keeping the point under `pixel` in place.
gpulab::MandelbrotView zoomedAbout(const gpulab::MandelbrotView& view, QPointF pixel, double factor);
/// Moved so that the content follows the mouse by `deltaPixels`.
gpulab::MandelbrotView panned(const gpulab::MandelbrotView& view, QPointF deltaPixels);
/// Zoomed into `pixels` (a box on the image), keeping the image's aspect ratio: the box's longer side
/// (relative to the image) fills the view.
gpulab::MandelbrotView zoomedToRect(const gpulab::MandelbrotView& view, const QRectF& pixels);
/// Centred on the point at `pixel`.
gpulab::MandelbrotView recentred(const gpulab::MandelbrotView& view, QPointF pixel);
/// Where an image rendered for `frame` lies in the pixels of `view` (to show a stale frame at once).
QRectF frameRectIn(const gpulab::MandelbrotView& view, const gpulab::MandelbrotView& frame);

/// The well-known places: the whole set, seahorse valley, elephant valley, a mini-brot, a spiral.
struct MandelbrotBookmark {
  QString name;
  gpulab::MandelbrotView view;  ///< centre, width, iterations (0: automatic), Julia mode and constant
};
std::vector<MandelbrotBookmark> builtInBookmarks();

/// Worker time (compute, colour, download, conversion) a frame may take while the view moves and still
/// be drawn at full resolution: 12 ms leaves the GUI thread room for 60 frames per second.
inline constexpr double kInteractiveFrameBudgetMs = 12.0;

/// One frame the canvas has painted.
struct MandelbrotFrameInfo {
  gpulab::MandelbrotView view;  ///< what was rendered (image size reduced for a reduced frame)
  int width = 0;                ///< of the rendered samples (before any supersampling is averaged)
  int height = 0;
  int divisor = 1;                  ///< 1: the canvas's resolution (or supersampled); 2, 4: reduced
  std::optional<double> computeMs;  ///< escape-time pass (GPU events, CPU wall time); empty: recoloured
  double workerMs = 0;              ///< the whole job on the worker: compute, colour, download, conversion
  double latencyMs = 0;             ///< from handing the request to the worker until the paint that showed it
  bool onGpu = false;
};

/// Same centre, width and set (Julia constant included), whatever the size, iterations or precision.
bool samePlace(const gpulab::MandelbrotView& a, const gpulab::MandelbrotView& b);
/// "x, y" with 17 significant digits: what the Julia c field and the clipboard hold.
QString pointText(double x, double y);
/// "x, y" (or "x,y") as a point; nullopt for anything else.
std::optional<QPointF> parsePointText(const QString& text);

}  // namespace gpulab::gui
