#include "gpulab/mandelbrot/newton_zoom.hpp"

#include <chrono>
#include <cmath>
#include <string>

#include "gpulab/core/operation.hpp"  // OperationCancelled, cancelRequested
#include "gpulab/kernels/floatexp.cuh"
#include "internal/mpfr_real.hpp"

namespace gpulab {

namespace {

using kernels::ComplexExp;
using kernels::FloatExp;

FloatExp fe(ExtendedReal v) { return {v.mantissa, v.exponent}; }
ComplexExp ce(const ExtendedComplex& v) { return {v.x, v.y, v.exponent}; }

std::string shortText(const DecimalNumber& v) {
  const std::string s = v.toString();
  return s.size() > 24 ? s.substr(0, 24) + "..." : s;
}

ComplexExp toComplexExp(mpfr_srcptr x, mpfr_srcptr y) {
  const ExtendedReal ex = toExtendedReal(x);
  const ExtendedReal ey = toExtendedReal(y);
  return kernels::fromParts(fe(ex), fe(ey));
}

// log2 of |(x, y)|, -inf for 0.
double log2Magnitude(mpfr_srcptr x, mpfr_srcptr y, mpfr_ptr scratch) {
  mpfr_hypot(scratch, x, y, MPFR_RNDN);
  return log2Of(toExtendedReal(scratch));
}

// Every MPFR number Newton needs, allocated once: the current point c with z = z_p(c) and d = dz_p/dc,
// a trial point q with its own z and d, the Newton step h, the start, and scratch.
struct NewtonState {
  explicit NewtonState(int bits)
      : cx(bits),
        cy(bits),
        zx(bits),
        zy(bits),
        dx(bits),
        dy(bits),
        qx(bits),
        qy(bits),
        wx(bits),
        wy(bits),
        ex(bits),
        ey(bits),
        hx(bits),
        hy(bits),
        sx(bits),
        sy(bits),
        t(bits),
        u(bits),
        v(bits) {}
  MpfrReal cx, cy, zx, zy, dx, dy;  // current
  MpfrReal qx, qy, wx, wy, ex, ey;  // trial
  MpfrReal hx, hy;                  // step
  MpfrReal sx, sy, t, u, v;

  // (w, e) = (z_p(q), dz_p/dc(q)) from z_0 = 0, dz_0 = 0.
  void evaluate(int period) {
    mpfr_set_zero(wx, 1);
    mpfr_set_zero(wy, 1);
    mpfr_set_zero(ex, 1);
    mpfr_set_zero(ey, 1);
    for (int k = 0; k < period; ++k) {
      // e <- 2 w e + 1
      mpfr_mul(t, wx, ex, MPFR_RNDN);
      mpfr_mul(u, wy, ey, MPFR_RNDN);
      mpfr_sub(t, t, u, MPFR_RNDN);
      mpfr_mul(u, wx, ey, MPFR_RNDN);
      mpfr_mul(v, wy, ex, MPFR_RNDN);
      mpfr_add(u, u, v, MPFR_RNDN);
      mpfr_mul_2ui(ex, t, 1, MPFR_RNDN);
      mpfr_add_ui(ex, ex, 1, MPFR_RNDN);
      mpfr_mul_2ui(ey, u, 1, MPFR_RNDN);
      // w <- w^2 + q
      mpfr_mul(t, wx, wy, MPFR_RNDN);
      mpfr_sqr(u, wx, MPFR_RNDN);
      mpfr_sqr(v, wy, MPFR_RNDN);
      mpfr_sub(wx, u, v, MPFR_RNDN);
      mpfr_add(wx, wx, qx, MPFR_RNDN);
      mpfr_mul_2ui(wy, t, 1, MPFR_RNDN);
      mpfr_add(wy, wy, qy, MPFR_RNDN);
    }
  }

  // The trial becomes the current point.
  void accept() {
    mpfr_swap(cx, qx);
    mpfr_swap(cy, qy);
    mpfr_swap(zx, wx);
    mpfr_swap(zy, wy);
    mpfr_swap(dx, ex);
    mpfr_swap(dy, ey);
  }

  // h = z / d = z conj(d) / |d|^2; false when d is 0 or not finite.
  bool newtonStep() {
    mpfr_sqr(t, dx, MPFR_RNDN);
    mpfr_sqr(u, dy, MPFR_RNDN);
    mpfr_add(v, t, u, MPFR_RNDN);
    if (mpfr_zero_p(v) || !mpfr_number_p(v)) return false;
    mpfr_mul(hx, zx, dx, MPFR_RNDN);
    mpfr_fma(hx, zy, dy, hx, MPFR_RNDN);
    mpfr_div(hx, hx, v, MPFR_RNDN);
    mpfr_mul(hy, zx, dy, MPFR_RNDN);
    mpfr_fms(hy, zy, dx, hy, MPFR_RNDN);
    mpfr_div(hy, hy, v, MPFR_RNDN);
    return true;
  }
};

}  // namespace

int findPeriod(const ReferenceOrbit& orbit, ExtendedReal radius) {
  const FloatExp r2 = kernels::sqr(fe(radius));
  const ComplexExp one = kernels::fromDoubles(1.0, 0.0);
  ComplexExp d = kernels::zeroComplexExp();
  for (int n = 0; n + 1 < orbit.length(); ++n) {
    d = kernels::add(kernels::mul(kernels::scale2(ce(orbit.pointExtended(n)), 1), d), one);  // dZ_{n+1}/dc
    if (kernels::absLess(kernels::norm2(ce(orbit.pointExtended(n + 1))), kernels::mul(kernels::norm2(d), r2)))
      return n + 1;
  }
  return 0;
}

Nucleus findNucleus(const DecimalNumber& x, const DecimalNumber& y, int period, int precisionBits,
                    const NewtonOptions& options, const std::atomic<bool>* cancel) {
  if (period < 1) throw std::invalid_argument("a nucleus period must be at least 1, not " + std::to_string(period));
  if (precisionBits < 64 || precisionBits > 400'000)
    throw std::invalid_argument("Newton precision " + std::to_string(precisionBits) + " bits is outside 64..400000");
  const auto start = std::chrono::steady_clock::now();
  const auto fail = [&](const std::string& why) {
    return NewtonError("Newton's method found no period-" + std::to_string(period) + " nucleus near (" + shortText(x) +
                       ", " + shortText(y) + "): " + why);
  };
  NewtonState s(precisionBits);
  setDecimal(s.qx, x);
  setDecimal(s.qy, y);
  mpfr_set(s.sx, s.qx, MPFR_RNDN);
  mpfr_set(s.sy, s.qy, MPFR_RNDN);
  s.evaluate(period);
  s.accept();
  int steps = 1;  // evaluations of z_p, each `period` iterations
  const double bits = precisionBits;
  double residual = log2Magnitude(s.zx, s.zy, s.v);  // log2 |z_p(c)|
  double previous = INFINITY;
  for (;;) {
    if (!s.newtonStep()) throw fail("the derivative vanished or overflowed");
    double step = log2Magnitude(s.hx, s.hy, s.v);
    if (std::isnan(step)) throw fail("the iteration diverged");
    // Quadratic convergence ends at the precision's floor: below 2^(16 - bits), or once a step that is
    // already tiny stops halving.
    if (step < 16.0 - bits || (step < -0.75 * bits && step > previous - 1.0)) {
      mpfr_sub(s.cx, s.cx, s.hx, MPFR_RNDN);
      mpfr_sub(s.cy, s.cy, s.hy, MPFR_RNDN);
      break;
    }
    // Far from the nucleus a full step can throw c out of the set, where z_p explodes and Newton crawls:
    // halve the step until |z_p| shrinks (tiny steps near the floor are taken as they come).
    for (;;) {
      if (steps >= options.maxSteps)
        throw fail("the step was still 2^" + std::to_string(static_cast<int>(std::lround(step))) + " after " +
                   std::to_string(steps) + " evaluations");
      if (cancelRequested(cancel)) throw OperationCancelled();
      mpfr_sub(s.qx, s.cx, s.hx, MPFR_RNDN);
      mpfr_sub(s.qy, s.cy, s.hy, MPFR_RNDN);
      s.evaluate(period);
      ++steps;
      const double trial = log2Magnitude(s.wx, s.wy, s.v);
      if (trial < residual || step < -0.5 * bits) {
        residual = trial;
        break;
      }
      mpfr_div_2ui(s.hx, s.hx, 1, MPFR_RNDN);
      mpfr_div_2ui(s.hy, s.hy, 1, MPFR_RNDN);
      step -= 1.0;
    }
    s.accept();
    previous = step;
    if (!mpfr_number_p(s.cx) || !mpfr_number_p(s.cy)) throw fail("the iteration diverged");
    if (options.maxDistance.mantissa > 0.0) {
      mpfr_sub(s.t, s.cx, s.sx, MPFR_RNDN);
      mpfr_sub(s.u, s.cy, s.sy, MPFR_RNDN);
      if (log2Magnitude(s.t, s.u, s.v) > log2Of(options.maxDistance))
        throw fail("it left the search radius after " + std::to_string(steps) + " evaluations");
    }
  }

  Nucleus n;
  n.newtonSteps = steps;
  n.x = toDecimal(s.cx);
  n.y = toDecimal(s.cy);
  mpfr_sub(s.t, s.cx, s.sx, MPFR_RNDN);
  mpfr_sub(s.u, s.cy, s.sy, MPFR_RNDN);
  mpfr_hypot(s.v, s.t, s.u, MPFR_RNDN);
  n.distance = toExtendedReal(s.v);

  // Two more passes at the nucleus: its exact period (the first k dividing `period` with z_k ~ 0), then
  // the size estimate. Near the nucleus z_p ~ L (z^2 + beta dc) in the rescaled first-return map, with
  // L = prod_{i=1}^{p-1} 2 z_i and beta = 1 + sum_{i=1}^{p-1} 1 / prod_{j=1}^{i} 2 z_j, so the minibrot is
  // the whole set shrunk by 1 / (beta L^2).
  const auto restart = [&] {  // z_1 = c
    mpfr_set(s.zx, s.cx, MPFR_RNDN);
    mpfr_set(s.zy, s.cy, MPFR_RNDN);
  };
  const auto stepZ = [&] {
    mpfr_mul(s.t, s.zx, s.zy, MPFR_RNDN);
    mpfr_sqr(s.u, s.zx, MPFR_RNDN);
    mpfr_sqr(s.v, s.zy, MPFR_RNDN);
    mpfr_sub(s.zx, s.u, s.v, MPFR_RNDN);
    mpfr_add(s.zx, s.zx, s.cx, MPFR_RNDN);
    mpfr_mul_2ui(s.zy, s.t, 1, MPFR_RNDN);
    mpfr_add(s.zy, s.zy, s.cy, MPFR_RNDN);
  };
  n.period = period;
  restart();
  for (int k = 1; k < period; ++k, stepZ()) {
    if (period % k == 0 && log2Magnitude(s.zx, s.zy, s.v) < -0.5 * bits) {
      n.period = k;
      break;
    }
  }
  const ComplexExp one = kernels::fromDoubles(1.0, 0.0);
  ComplexExp l = one;
  ComplexExp beta = one;
  restart();
  for (int k = 1; k < n.period; ++k, stepZ()) {
    l = kernels::mul(l, kernels::scale2(toComplexExp(s.zx, s.zy), 1));
    beta = kernels::add(beta, kernels::divide(one, l));
  }
  const FloatExp size =
      kernels::divide(kernels::fromDouble(1.0), kernels::magnitude(kernels::mul(beta, kernels::sqr(l))));
  n.size = {size.m, size.e};
  n.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return n;
}

Nucleus findNucleusNear(const DeepView& view, const std::atomic<bool>* cancel) {
  validate(view);
  const int bits = referencePrecisionBits(view);
  const ReferenceOrbit orbit = ReferenceOrbit::compute(view.centerX, view.centerY, view.maxIterations, bits, cancel);
  const ExtendedReal w = view.width.value();
  const int period = findPeriod(orbit, {w.mantissa, w.exponent - 1});
  if (period == 0)
    throw NewtonError("no minibrot period was found within " + std::to_string(orbit.length()) +
                      " iterations of the view's centre");
  NewtonOptions options;
  options.maxDistance = w;
  return findNucleus(view.centerX, view.centerY, period, 2 * bits, options, cancel);
}

DeepWidth zoomTowards(const DeepWidth& width, ExtendedReal size, double fraction) {
  if (!(size.mantissa > 0.0) || !std::isfinite(fraction))
    throw std::invalid_argument("zoomTowards needs a positive minibrot size and a finite fraction");
  const double target = (1.0 - fraction) * log2Of(width.value()) + fraction * (log2Of(size) + 2.0);
  const double e = std::floor(target);
  return DeepWidth::fromExtended({std::exp2(target - e), static_cast<int>(e)});
}

}  // namespace gpulab
