// The Mandelbrot tab's view arithmetic (pure functions of gpulab::MandelbrotView) at any depth, the
// well-known places, the rule that raises the iteration cap from a frame's counts, and the record of a
// painted frame. No widgets, no engine calls beyond the number types: the canvas, the tab and the zoom
// benchmark share these, and the tests check them directly.
//
// Centres move in decimal arithmetic (gpulab::offsetBy, MPFR) and widths scale as gpulab::DeepWidth, so
// panning and zooming work the same at width 3 and at width 1e-5000: nothing goes through a double
// centre. A moved centre keeps its digits down to kGuardDigits below the pixel spacing of the finer of
// the two views (the old and the new), which is far below anything a frame can show; a centre that does
// not move (zooming about the centre) keeps every digit it had.
#pragma once

#include <QPointF>
#include <QRectF>
#include <QString>
#include <optional>
#include <vector>

#include "gpulab/mandelbrot/mandelbrot.hpp"

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// Numbers

/// Decimal digits a moved centre keeps below the pixel spacing.
inline constexpr int kGuardDigits = 20;

/// A point of the complex plane with every digit.
struct PlanePoint {
  gpulab::DecimalNumber x;
  gpulab::DecimalNumber y;
  friend bool operator==(const PlanePoint&, const PlanePoint&) = default;
};

/// a * factor (any finite factor; 0 gives 0).
gpulab::ExtendedReal scaledBy(gpulab::ExtendedReal a, double factor) noexcept;
/// a / b as a double (+-inf or 0 beyond the double range; b must not be 0).
double ratioOf(gpulab::ExtendedReal a, gpulab::ExtendedReal b) noexcept;
/// A decimal as an extended-range binary value (about 18 significant digits).
gpulab::ExtendedReal toExtendedValue(const gpulab::DecimalNumber& value);
/// a - b, exact to about 20 significant digits however close a and b are (decimal arithmetic).
gpulab::ExtendedReal differenceOf(const gpulab::DecimalNumber& a, const gpulab::DecimalNumber& b);
/// `value` rounded (half away from zero) to a multiple of 10^place.
gpulab::DecimalNumber roundedTo(const gpulab::DecimalNumber& value, long long place);

// ---------------------------------------------------------------------------------------------
// View arithmetic (pure). Pixels are image pixels of `view` (imageWidth x imageHeight), continuous:
// pixel (i, j) covers [i, i+1) x [j, j+1), its centre at (i + 0.5, j + 0.5). Functions that change the
// width throw std::invalid_argument with one sentence when it would leave [1e-100000, 100].

/// The point of the complex plane at `pixel`, with every digit that matters at this depth.
PlanePoint planePoint(const gpulab::MandelbrotView& view, QPointF pixel);
/// The same rounded to doubles (Julia constants, display, tests of shallow views).
QPointF planePointF(const gpulab::MandelbrotView& view, QPointF pixel);
/// Zoomed by `factor` (> 1 zooms in) keeping the point under `pixel` in place.
gpulab::MandelbrotView zoomedAbout(const gpulab::MandelbrotView& view, QPointF pixel, double factor);
/// Zoomed by `factor` about the centre: the centre keeps every digit.
gpulab::MandelbrotView zoomedBy(const gpulab::MandelbrotView& view, double factor);
/// Moved so that the content follows the mouse by `deltaPixels`.
gpulab::MandelbrotView panned(const gpulab::MandelbrotView& view, QPointF deltaPixels);
/// Zoomed into `pixels` (a box on the image), keeping the image's aspect ratio: the box's longer side
/// (relative to the image) fills the view.
gpulab::MandelbrotView zoomedToRect(const gpulab::MandelbrotView& view, const QRectF& pixels);
/// Centred on the point at `pixel`.
gpulab::MandelbrotView recentred(const gpulab::MandelbrotView& view, QPointF pixel);
/// Where an image rendered for `frame` lies in the pixels of `view` (to show a stale frame at once);
/// nullopt when it is too far away or at too different a scale to place (more than 10^6 times).
std::optional<QRectF> frameRectIn(const gpulab::MandelbrotView& view, const gpulab::MandelbrotView& frame);

// ---------------------------------------------------------------------------------------------
// Text

/// "x, y" with every digit: what the centre field shows and takes.
QString centreText(const gpulab::MandelbrotView& view);
/// The width as kept ("1e-300", "0.005").
QString widthText(const gpulab::DeepWidth& width);
/// The width with 3 significant digits ("2.4e-301", "0.005"): for status lines.
QString shortWidthText(const gpulab::DeepWidth& width);
/// A decimal cut to `digits` significant digits with "..." and the full count when longer:
/// "-1.7400623825793399052208965570...(154 digits)".
QString shortDecimalText(const gpulab::DecimalNumber& value, int digits = 30);
/// "--center X,Y --width W": the clipboard's form, which gpulab-cli mandelbrot takes as it is.
QString locationText(const gpulab::MandelbrotView& view);

/// A place typed or pasted into the location fields.
struct Location {
  std::optional<PlanePoint> centre;
  std::optional<gpulab::DeepWidth> width;
};
/// Reads "X, Y" (centre), "X, Y, W" (centre and width) or the clipboard's "--center X,Y --width W"
/// (either part alone too). Throws std::invalid_argument with one sentence for anything else.
Location parseLocation(const QString& text);

/// "x, y" with 17 significant digits: what the Julia c field and the clipboard hold.
QString pointText(double x, double y);
/// "x, y" (or "x,y") as a point; nullopt for anything else.
std::optional<QPointF> parsePointText(const QString& text);

// ---------------------------------------------------------------------------------------------
// Iterations

/// What a frame's raw counts say about its iteration cap.
struct FrameCounts {
  long long pixels = 0;
  long long capped = 0;   ///< raw -1: interior, or not escaped within the cap
  long long nearCap = 0;  ///< escaped in the last tenth of the cap
  int maxEscape = -1;     ///< the largest escape count (-1: nothing escaped)
};
FrameCounts countFrame(const gpulab::Image& raw, int maxIterations);

/// The cap for the next frame of the same view when the counts say this one cut detail off: at least
/// 0.1% of the pixels reached the cap and at least 0.2% escaped in its last tenth (the escape counts run
/// into the cap) -> twice the cap, at most `limit`. nullopt otherwise (interior pixels alone, or counts
/// far below the cap, never raise it). At the places the tab knows, autoIterations never triggers it.
std::optional<int> raisedIterations(const FrameCounts& counts, int maxIterations, int limit);

// ---------------------------------------------------------------------------------------------
// Places and frames

/// The well-known places: the whole set, seahorse valley, elephant valley, a mini-brot, a spiral, a deep
/// point of seahorse valley at 1e-100, a Julia set.
struct MandelbrotBookmark {
  QString name;
  gpulab::MandelbrotView view;  ///< centre, width, iterations (0: automatic), Julia mode and constant
};
std::vector<MandelbrotBookmark> builtInBookmarks();

/// Worker time (compute, colour, download, conversion) a frame may take while the view moves and still
/// be drawn at full resolution: 12 ms leaves the GUI thread room for 60 frames per second.
inline constexpr double kInteractiveFrameBudgetMs = 12.0;

/// What a perturbation frame did with its reference orbit.
struct ReferenceInfo {
  bool reused = false;
  double referenceMs = 0;  ///< the MPFR orbit (0 when reused)
  double blaMs = 0;        ///< the BLA table, or its radii recomputed
  int length = 0;          ///< points of the orbit (0: not known, the CPU path)
  int precisionBits = 0;   ///< (0: not known)
};

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
  QString precision;                       ///< "f32", "f64", "perturbation f64", "perturbation floatexp"
  std::optional<ReferenceInfo> reference;  ///< perturbation frames that computed
};

/// Same centre, width and set (Julia constant included), whatever the size, iterations or precision.
bool samePlace(const gpulab::MandelbrotView& a, const gpulab::MandelbrotView& b);

}  // namespace gpulab::gui
