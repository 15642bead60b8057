// The deep benchmark views: the depths the deep-zoom issue sets its numbers at, found the way a
// person gets there (Newton zoom towards a minibrot), so the benchmark also times that.
#include <cmath>
#include <cstdio>

#include "gpulab/mandelbrot/measure.hpp"
#include "gpulab/mandelbrot/newton_zoom.hpp"

namespace gpulab {

namespace {

// A point of seahorse valley's boundary at depth 1e-102 (a Newton zoom chain from -0.7436438870371587
// + 0.1318259042053119i), 125 digits.
constexpr const char* kSeahorseX =
    "-0.74361188847330224914444350843275271654387781715973313695436280182213037747031080759132550809537224388507262848"
    "072074461608";
constexpr const char* kSeahorseY =
    "0.131837002394806472849310458452438856417046191888077007404889544934349771337518486837307510297873928251456528894"
    "582019421000";
// A 1.2e-185 view of a Newton zoom chain from near c = i (205 digits); its nearest minibrot has period 17009.
constexpr const char* kChainX =
    "-0.00943319639901759950607686587478033447114342406349377262820812738311448077682854534739016679041700171629166"
    "28423852480351846166364808482187861944222886112142654934315341382635366049709116569654026321090";
constexpr const char* kChainY =
    "1.00627519133653907476699536967365453828792621294036441742110885340841927537026192828081698440337871820991840"
    "520270995257209685590975733427267791022779925955863009417912492530193573876455149700146529556442";

std::string sizeText(ExtendedReal size) {
  char text[48];
  std::snprintf(text, sizeof text, "1e%.1f", log2Of(size) * 0.30102999566398119521);
  return text;
}

/// `view` moved to `nucleus` plus (fx, fy) of its width, so the minibrot sits off centre.
void besides(MandelbrotView& view, const Nucleus& nucleus, double fx, double fy) {
  view.centerX = nucleus.x;
  view.centerY = nucleus.y;
  view = movedBy(view, fx, fy);
}

}  // namespace

std::vector<DeepBenchmarkView> deepBenchmarkViews(int width, int height, const std::string& only) {
  std::vector<DeepBenchmarkView> views;
  auto wanted = [&](const char* name) { return only.empty() || only == name; };
  MandelbrotView base;
  base.imageWidth = width;
  base.imageHeight = height;

  if (wanted("deep-1e-100")) {
    DeepBenchmarkView v{"deep-1e-100", base, "a boundary point of seahorse valley", 0};
    v.view.centerX = DecimalNumber::parse(kSeahorseX);
    v.view.centerY = DecimalNumber::parse(kSeahorseY);
    v.view.width = DeepWidth::parse("1e-100");
    v.view.maxIterations = 20000;
    views.push_back(std::move(v));
  }
  if (wanted("deep-1e-300")) {
    // Newton from the chain's 1e-185 view (the minibrot within a twentieth of its width), then 1e-300
    // beside that minibrot.
    DeepView chain;
    chain.centerX = DecimalNumber::parse(kChainX);
    chain.centerY = DecimalNumber::parse(kChainY);
    chain.width = DeepWidth::parse("1.2056370889999617e-185");
    chain.maxIterations = 100000;
    const int bits = referencePrecisionBits(chain);
    const ReferenceOrbit orbit = ReferenceOrbit::compute(chain.centerX, chain.centerY, chain.maxIterations, bits);
    ExtendedReal radius = chain.width.value();
    radius.mantissa *= 0.05;
    NewtonOptions newton;
    newton.maxDistance = chain.width.value();
    const Nucleus n = findNucleus(chain.centerX, chain.centerY, findPeriod(orbit, radius), 2 * bits, newton);
    DeepBenchmarkView v{"deep-1e-300", base,
                        "beside the period-" + std::to_string(n.period) + " minibrot (size " + sizeText(n.size) +
                            ") Newton found from a 1.2e-185 view near c = i",
                        orbit.milliseconds() + n.milliseconds};
    v.view.width = DeepWidth::parse("1e-300");
    v.view.maxIterations = 100000;
    besides(v.view, n, 0.3, 0.1);
    views.push_back(std::move(v));
  }
  if (wanted("deep-1e-1000")) {
    DeepView near;
    near.centerX = DecimalNumber::parse("3.1e-1001");
    near.centerY = DecimalNumber::parse("1." + std::string(1000, '0') + "17");
    near.width = DeepWidth::parse("1e-1000");
    near.imageWidth = width;
    near.imageHeight = height;
    near.maxIterations = 100000;
    const Nucleus n = findNucleusNear(near);
    DeepBenchmarkView v{"deep-1e-1000", base,
                        "beside the period-" + std::to_string(n.period) + " minibrot (size " + sizeText(n.size) +
                            ") Newton found next to the Misiurewicz point c = i",
                        n.milliseconds};
    v.view.width = near.width;
    v.view.maxIterations = 100000;
    besides(v.view, n, 0.25, 0.15);
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace gpulab
