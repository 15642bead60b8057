// Finding minibrots to zoom to: the period of the nearest one, Newton's method for its nucleus, and
// an estimate of its size, so a caller can zoom "half-way" (in log scale) towards it or onto it.
//
//   const int p = gpulab::findPeriod(orbit, view.width.value());           // 0: none along the orbit
//   gpulab::Nucleus n = gpulab::findNucleus(view.centerX, view.centerY, p, bits);
//   view.centerX = n.x; view.centerY = n.y;
//   view.width = gpulab::zoomTowards(view.width, n.size, 0.5);              // half-way, in log scale
//
// Blocking, bounded: Newton runs at most NewtonOptions::maxSteps steps of `period` iterations each and
// throws NewtonError with one sentence when it does not converge (never loops on).
#pragma once

#include <atomic>
#include <stdexcept>

#include "gpulab/mandelbrot/deep_number.hpp"
#include "gpulab/mandelbrot/deep_view.hpp"
#include "gpulab/mandelbrot/reference_orbit.hpp"

namespace gpulab {

/// Newton's method did not find a nucleus (or no period was found to look for one).
class NewtonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The period of the nearest minibrot seen from the orbit's point C: the first n >= 1 at which the
/// disc |c - C| < radius, carried through n iterations to first order, contains 0, i.e.
/// |Z_n| < |dZ_n/dc| radius (the ball method). 0 when no n < orbit.length() qualifies.
int findPeriod(const ReferenceOrbit& orbit, ExtendedReal radius);

struct NewtonOptions {
  int maxSteps = 100;  ///< evaluations of z_p and its derivative (each `period` iterations), halvings included
  /// Fail once an iterate is farther than this from the start (0: no limit); e.g. the view's width.
  ExtendedReal maxDistance;
};

struct Nucleus {
  DecimalNumber x;
  DecimalNumber y;
  int period = 0;         ///< the exact period (a divisor of the one asked for, when Newton found that nucleus)
  ExtendedReal size;      ///< the minibrot's size: its main cardioid spans about this much (1/|beta L^2|)
  ExtendedReal distance;  ///< |nucleus - start|
  int newtonSteps = 0;
  double milliseconds = 0;
};

/// Newton's method in MPFR at precisionBits for the nucleus of `period` near (x, y): z_p(c) = 0, with z
/// and dz/dc iterated together and c <- c - z_p / z_p'. Converged when the step falls below 2^(16 - bits)
/// (or stops shrinking at the precision's floor). Throws NewtonError ("Newton's method found no period-p
/// nucleus near ...: ...") when it does not converge within options.maxSteps, leaves maxDistance, or
/// meets a zero derivative; std::invalid_argument for a period below 1 or precision outside 64..400,000
/// bits; OperationCancelled when `cancel` is set (checked every step).
Nucleus findNucleus(const DecimalNumber& x, const DecimalNumber& y, int period, int precisionBits,
                    const NewtonOptions& options = {}, const std::atomic<bool>* cancel = nullptr);

/// The minibrot nearest the view's centre: the reference orbit of the centre (the view's iterations),
/// findPeriod with half the view's width, then findNucleus at twice the view's precision (the nucleus
/// must hold the digits of a zoom far past the view), limited to a distance of one width. Throws
/// NewtonError when no period is found or Newton fails.
Nucleus findNucleusNear(const DeepView& view, const std::atomic<bool>* cancel = nullptr);

/// The width `fraction` of the way (in log scale) from `width` to a minibrot of size `size`:
/// width^(1 - fraction) * (k size)^fraction with k = 4, so that fraction 1 frames the whole minibrot and
/// 0.5 zooms "half-way". Throws std::invalid_argument when the result leaves the supported range.
DeepWidth zoomTowards(const DeepWidth& width, ExtendedReal size, double fraction);

}  // namespace gpulab
