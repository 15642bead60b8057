#include "mandelbrot/mandelbrot_view.hpp"

#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpulab::gui {

using gpulab::DecimalNumber;
using gpulab::DeepWidth;
using gpulab::ExtendedReal;
using gpulab::MandelbrotView;

namespace {

constexpr double kLog10Of2 = 0.30102999566398119521;

// ---------------------------------------------------------------------------------------------
// Decimal magnitudes, digit by digit

/// The digit of |d| at 10^place (0 outside its digits).
int digitAt(const DecimalNumber& d, long long place) {
  const long long index = d.exponent10() - place;
  return index < 0 || index >= static_cast<long long>(d.digits().size())
             ? 0
             : d.digits()[static_cast<std::size_t>(index)] - '0';
}

long long lowestPlace(const DecimalNumber& d) { return d.exponent10() - static_cast<long long>(d.digits().size()) + 1; }

/// |a| <=> |b|.
int compareMagnitudes(const DecimalNumber& a, const DecimalNumber& b) {
  if (a.exponent10() != b.exponent10()) return a.exponent10() < b.exponent10() ? -1 : 1;
  const int c = a.digits().compare(b.digits());  // no trailing zeros: plain order
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

/// |a| + |b| (add) or |a| - |b| (|a| >= |b|), with its leading 25 significant digits.
DecimalNumber magnitudeSumOrDifference(const DecimalNumber& a, const DecimalNumber& b, bool add) {
  const long long top = std::max(a.exponent10(), b.exponent10()) + 1;  // room for a carry
  const long long bottom = std::min(lowestPlace(a), lowestPlace(b));
  std::string digits(static_cast<std::size_t>(top - bottom + 1), '0');
  int carry = 0;
  for (long long place = bottom; place <= top; ++place) {
    int d = digitAt(a, place) + (add ? digitAt(b, place) + carry : -digitAt(b, place) - carry);
    carry = 0;
    if (d >= 10) {
      d -= 10;
      carry = 1;
    } else if (d < 0) {
      d += 10;
      carry = 1;
    }
    digits[static_cast<std::size_t>(top - place)] = static_cast<char>('0' + d);
  }
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return {};
  const std::string kept = digits.substr(first, 25);
  const long long lowest = top - static_cast<long long>(first + kept.size()) + 1;
  return DecimalNumber::parse(kept + "e" + std::to_string(lowest));
}

/// The bits a centre near `value` needs to hold digits kGuardDigits below `spacing`.
int bitsFor(ExtendedReal spacing) {
  const double bits = 8.0 - gpulab::log2Of(spacing) + kGuardDigits / kLog10Of2 + 16.0;
  return static_cast<int>(std::clamp(std::ceil(bits), 64.0, 400000.0));
}

/// The place (power of ten) a moved centre is rounded to.
long long placeFor(ExtendedReal spacing) {
  return static_cast<long long>(std::floor(gpulab::log2Of(spacing) * kLog10Of2)) - kGuardDigits;
}

/// `value` + delta, its digits kept down to kGuardDigits below `finest`; unchanged for a zero delta.
DecimalNumber moved(const DecimalNumber& value, ExtendedReal delta, ExtendedReal finest) {
  if (delta.mantissa == 0.0) return value;
  return roundedTo(gpulab::offsetBy(value, delta, bitsFor(finest)), placeFor(finest));
}

/// The image pixel's size in the complex plane (not the raw samples': supersampling aside).
ExtendedReal imageSpacing(const MandelbrotView& v) { return scaledBy(v.width.value(), 1.0 / v.imageWidth); }

/// The offset of `pixel` from the centre, in the plane.
std::pair<ExtendedReal, ExtendedReal> offsetOf(const MandelbrotView& v, QPointF pixel) {
  const ExtendedReal h = imageSpacing(v);
  return {scaledBy(h, pixel.x() - 0.5 * v.imageWidth), scaledBy(h, 0.5 * v.imageHeight - pixel.y())};
}

/// The width times `factor`, kept to 16 significant digits: a binary factor such as 0.8 or 0.001 leaves
/// no trailing noise ("2.4", not "2.4000000000000001"), and 10^-16 of a width is nothing a frame shows.
DeepWidth widthScaled(const DeepWidth& width, double factor) {
  if (!(factor > 0.0) || !std::isfinite(factor))
    throw std::invalid_argument("a zoom factor must be positive and finite");
  const DecimalNumber scaled = width.scaled(factor).decimal();
  return DeepWidth::fromDecimal(roundedTo(scaled, scaled.exponent10() - 15));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Numbers

ExtendedReal scaledBy(ExtendedReal a, double factor) noexcept {
  if (a.mantissa == 0.0 || factor == 0.0 || !std::isfinite(factor)) return {};
  int fe = 0, e = 0;
  const double fm = std::frexp(factor, &fe);         // [0.5, 1)
  const double m = std::frexp(a.mantissa * fm, &e);  // a.mantissa * fm in [0.5, 2)
  return {2.0 * m, a.exponent + fe + e - 1};
}

double ratioOf(ExtendedReal a, ExtendedReal b) noexcept {
  if (a.mantissa == 0.0) return 0.0;
  const long long e = static_cast<long long>(a.exponent) - b.exponent;
  return std::ldexp(a.mantissa / b.mantissa, static_cast<int>(std::clamp(e, -4000LL, 4000LL)));
}

ExtendedReal toExtendedValue(const DecimalNumber& value) {
  if (value.isZero()) return {};
  const DecimalNumber magnitude = value.negative() ? -value : value;
  ExtendedReal r;
  if (magnitude.exponent10() >= DeepWidth::kMinExponent10 && magnitude.exponent10() < 2) {
    r = DeepWidth::fromDecimal(roundedTo(magnitude, magnitude.exponent10() - 24)).value();  // MPFR, exact rounding
  } else {
    // Beyond the width range: 19 digits and the exponent in long double (relative error ~1e-15).
    const std::string& d = magnitude.digits();
    const std::size_t n = std::min<std::size_t>(d.size(), 19);
    long double m = std::stold(d.substr(0, n)) / std::pow(10.0L, static_cast<long double>(n));  // [0.1, 1)
    const long double l2 = std::log2(m) + static_cast<long double>(magnitude.exponent10() + 1) * std::log2(10.0L);
    const long double whole = std::floor(l2);
    if (whole < -(1 << 28)) return {};
    r.mantissa = static_cast<double>(std::exp2(l2 - whole));
    r.exponent = static_cast<int>(std::min(whole, static_cast<long double>(1 << 28)));
    if (r.mantissa >= 2.0) {
      r.mantissa *= 0.5;
      ++r.exponent;
    }
  }
  if (value.negative()) r.mantissa = -r.mantissa;
  return r;
}

ExtendedReal differenceOf(const DecimalNumber& a, const DecimalNumber& b) {
  if (a == b) return {};
  if (b.isZero()) return toExtendedValue(a);
  if (a.isZero()) return toExtendedValue(-b);
  if (a.negative() != b.negative()) {  // |a| + |b| with a's sign
    const DecimalNumber sum = magnitudeSumOrDifference(a, b, true);
    return toExtendedValue(a.negative() ? -sum : sum);
  }
  // The same sign: the larger magnitude less the smaller, a's sign when |a| is the larger.
  const bool aLarger = compareMagnitudes(a, b) > 0;
  const DecimalNumber& big = aLarger ? a : b;
  const DecimalNumber& small = aLarger ? b : a;
  if (big.exponent10() - small.exponent10() > 40) return toExtendedValue(aLarger ? a : -b);  // small is noise
  const DecimalNumber difference = magnitudeSumOrDifference(big, small, false);
  const bool negative = aLarger ? a.negative() : !a.negative();
  return toExtendedValue(negative ? -difference : difference);
}

DecimalNumber roundedTo(const DecimalNumber& value, long long place) {
  if (value.isZero() || lowestPlace(value) >= place) return value;
  const std::string sign = value.negative() ? "-" : "";
  const long long keep = value.exponent10() - place + 1;  // digits at places >= 10^place
  if (keep < 0) return {};
  std::string kept = value.digits().substr(0, static_cast<std::size_t>(keep));
  const bool up = value.digits()[static_cast<std::size_t>(keep)] >= '5';
  if (up) {
    int i = static_cast<int>(kept.size()) - 1;
    for (; i >= 0 && kept[static_cast<std::size_t>(i)] == '9'; --i) kept[static_cast<std::size_t>(i)] = '0';
    if (i >= 0)
      ++kept[static_cast<std::size_t>(i)];
    else
      kept.insert(kept.begin(), '1');
  }
  if (kept.empty() || kept.find_first_not_of('0') == std::string::npos) return {};
  return DecimalNumber::parse(sign + kept + "e" + std::to_string(place));
}

// ---------------------------------------------------------------------------------------------
// View arithmetic

PlanePoint planePoint(const MandelbrotView& v, QPointF pixel) {
  const auto [dx, dy] = offsetOf(v, pixel);
  const ExtendedReal h = imageSpacing(v);
  return {moved(v.centerX, dx, h), moved(v.centerY, dy, h)};
}

QPointF planePointF(const MandelbrotView& v, QPointF pixel) {
  const auto [dx, dy] = offsetOf(v, pixel);
  return {v.x() + gpulab::toDouble(dx), v.y() + gpulab::toDouble(dy)};
}

MandelbrotView zoomedAbout(const MandelbrotView& v, QPointF pixel, double factor) {
  MandelbrotView out = v;
  out.width = widthScaled(v.width, 1.0 / factor);
  // The point under the pixel stays: the centre moves (1 - 1/factor) of the way towards it.
  const auto [dx, dy] = offsetOf(v, pixel);
  const double towards = 1.0 - 1.0 / factor;
  const ExtendedReal h = imageSpacing(v);
  const ExtendedReal finest = factor > 1.0 ? scaledBy(h, 1.0 / factor) : h;
  out.centerX = moved(v.centerX, scaledBy(dx, towards), finest);
  out.centerY = moved(v.centerY, scaledBy(dy, towards), finest);
  return out;
}

MandelbrotView zoomedBy(const MandelbrotView& v, double factor) {
  MandelbrotView out = v;
  out.width = widthScaled(v.width, 1.0 / factor);
  return out;
}

MandelbrotView panned(const MandelbrotView& v, QPointF delta) {
  const ExtendedReal h = imageSpacing(v);
  MandelbrotView out = v;
  out.centerX = moved(v.centerX, scaledBy(h, -delta.x()), h);
  out.centerY = moved(v.centerY, scaledBy(h, delta.y()), h);
  return out;
}

MandelbrotView zoomedToRect(const MandelbrotView& v, const QRectF& pixels) {
  const QRectF r = pixels.normalized();
  const double fraction = std::max(r.width() / v.imageWidth, r.height() / v.imageHeight);
  if (fraction <= 0) return v;
  const auto [dx, dy] = offsetOf(v, r.center());
  const ExtendedReal finest = scaledBy(imageSpacing(v), std::min(1.0, fraction));
  MandelbrotView out = v;
  out.width = widthScaled(v.width, fraction);
  out.centerX = moved(v.centerX, dx, finest);
  out.centerY = moved(v.centerY, dy, finest);
  return out;
}

MandelbrotView recentred(const MandelbrotView& v, QPointF pixel) {
  const PlanePoint p = planePoint(v, pixel);
  MandelbrotView out = v;
  out.centerX = p.x;
  out.centerY = p.y;
  return out;
}

std::optional<QRectF> frameRectIn(const MandelbrotView& view, const MandelbrotView& frame) {
  const double scale = ratioOf(frame.width.value(), view.width.value());  // frame widths per view width
  if (!(scale > 1e-6 && scale < 1e6)) return std::nullopt;
  const ExtendedReal h = imageSpacing(view);
  const double ox = ratioOf(differenceOf(frame.centerX, view.centerX), h);
  const double oy = ratioOf(differenceOf(frame.centerY, view.centerY), h);
  if (!(std::abs(ox) < 1e7 && std::abs(oy) < 1e7)) return std::nullopt;
  const double w = scale * view.imageWidth;
  const double height = w * frame.imageHeight / frame.imageWidth;
  return QRectF(0.5 * view.imageWidth + ox - 0.5 * w, 0.5 * view.imageHeight - oy - 0.5 * height, w, height);
}

// ---------------------------------------------------------------------------------------------
// Text

QString centreText(const MandelbrotView& v) {
  return QString::fromStdString(v.centerX.toString() + ", " + v.centerY.toString());
}

QString widthText(const DeepWidth& width) { return QString::fromStdString(width.toString()); }

QString shortWidthText(const DeepWidth& width) {
  const DecimalNumber& d = width.decimal();
  if (d.exponent10() >= -4 && d.exponent10() <= 2) return QString::number(gpulab::toDouble(width.value()), 'g', 3);
  return QString::fromStdString(roundedTo(d, d.exponent10() - 2).toScientific())
      .replace(QStringLiteral("e+"), QStringLiteral("e"));
}

QString shortDecimalText(const DecimalNumber& value, int digits) {
  const int n = static_cast<int>(value.digits().size());
  if (n <= digits) return QString::fromStdString(value.toString());
  const DecimalNumber cut = DecimalNumber::parse(std::string(value.negative() ? "-" : "") +
                                                 value.digits().substr(0, static_cast<std::size_t>(digits)) + "e" +
                                                 std::to_string(value.exponent10() - digits + 1));
  return QStringLiteral("%1...(%2 digits)").arg(QString::fromStdString(cut.toString())).arg(n);
}

QString locationText(const MandelbrotView& v) {
  return QString::fromStdString("--center " + v.centerX.toString() + "," + v.centerY.toString() + " --width " +
                                v.width.toString());
}

Location parseLocation(const QString& text) {
  const QString t = text.trimmed();
  if (t.isEmpty())
    throw std::invalid_argument("the location is empty: write the centre as X, Y (and a width after it if you like)");
  Location out;
  if (t.contains(QStringLiteral("--"))) {  // the clipboard's form: --center X,Y --width W
    static const QRegularExpression option(QStringLiteral("--(center|centre|width)(?:\\s*=\\s*|\\s+)(\\S+)"));
    auto it = option.globalMatch(t);
    while (it.hasNext()) {
      const auto m = it.next();
      const std::string value = m.captured(2).toStdString();
      if (m.captured(1) == QStringLiteral("width")) {
        out.width = DeepWidth::parse(value);
      } else {
        const auto c = gpulab::parseCenter(value, "centre");
        out.centre = PlanePoint{c[0], c[1]};
      }
    }
    if (!out.centre && !out.width)
      throw std::invalid_argument("the location '" + t.left(60).toStdString() +
                                  "' has no --center X,Y or --width W in it");
    return out;
  }
  const QStringList parts = t.split(QLatin1Char(','));
  if (parts.size() != 2 && parts.size() != 3)
    throw std::invalid_argument("the location '" + t.left(60).toStdString() +
                                "' is not X, Y or X, Y, WIDTH (e.g. -0.75, 0.1, 1e-20)");
  out.centre = PlanePoint{DecimalNumber::parse(parts[0].toStdString(), "centre x"),
                          DecimalNumber::parse(parts[1].toStdString(), "centre y")};
  if (parts.size() == 3) out.width = DeepWidth::parse(parts[2].toStdString());
  return out;
}

QString pointText(double x, double y) { return QStringLiteral("%1, %2").arg(x, 0, 'g', 17).arg(y, 0, 'g', 17); }

std::optional<QPointF> parsePointText(const QString& text) {
  try {
    const auto p = gpulab::parsePoint(text.toStdString(), "c");
    return QPointF(p[0], p[1]);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------
// Iterations

FrameCounts countFrame(const gpulab::Image& raw, int maxIterations) {
  FrameCounts c;
  const long long nearFrom = static_cast<long long>(std::ceil(0.9 * maxIterations));
  for (int y = 0; y < raw.height(); ++y) {
    const float* row = raw.row<float>(y);
    for (int x = 0; x < raw.width(); ++x) {
      const float v = row[x];
      if (v < 0.0f) {
        ++c.capped;
        continue;
      }
      const int n = static_cast<int>(v);
      c.maxEscape = std::max(c.maxEscape, n);
      c.nearCap += n >= nearFrom;
    }
  }
  c.pixels = static_cast<long long>(raw.width()) * raw.height();
  return c;
}

std::optional<int> raisedIterations(const FrameCounts& c, int maxIterations, int limit) {
  if (c.pixels <= 0 || c.maxEscape < 0 || maxIterations >= limit) return std::nullopt;
  if (c.capped * 1000 < c.pixels || c.nearCap * 500 < c.pixels) return std::nullopt;
  return static_cast<int>(std::min<long long>(limit, 2LL * maxIterations));
}

// ---------------------------------------------------------------------------------------------
// Places

bool samePlace(const MandelbrotView& a, const MandelbrotView& b) {
  return a.centerX == b.centerX && a.centerY == b.centerY && a.width == b.width && a.julia == b.julia &&
         a.juliaX == b.juliaX && a.juliaY == b.juliaY;
}

std::vector<MandelbrotBookmark> builtInBookmarks() {
  auto place = [](const char* name, const char* x, const char* y, const char* width) {
    MandelbrotView v;
    v.centerX = DecimalNumber::parse(x);
    v.centerY = DecimalNumber::parse(y);
    v.width = DeepWidth::parse(width);
    v.maxIterations = 0;
    return MandelbrotBookmark{QString::fromUtf8(name), v};
  };
  MandelbrotBookmark rabbit = place(QT_TR_NOOP("Julia: Douady's rabbit"), "0", "0", "3.2");
  rabbit.view.julia = true;
  rabbit.view.juliaX = -0.123;
  rabbit.view.juliaY = 0.745;
  // A boundary point of seahorse valley (a Newton zoom chain; gpulab-cli mandelbrot --bench's deep-1e-100).
  const char* deepX =
      "-0.74361188847330224914444350843275271654387781715973313695436280182213037747031080759132550809537224388507262"
      "848072074461608";
  const char* deepY =
      "0.1318370023948064728493104584524388564170461918880770074048895449343497713375184868373075102978739282514565288"
      "94582019421";
  return {place(QT_TR_NOOP("Whole set"), "-0.5", "0", "3"),
          place(QT_TR_NOOP("Seahorse valley"), "-0.743643887037151", "0.13182590420533", "0.005"),
          place(QT_TR_NOOP("Elephant valley"), "0.2925", "0.0149", "0.02"),
          place(QT_TR_NOOP("Mini-brot on the real axis"), "-1.7548776662", "0", "0.05"),
          place(QT_TR_NOOP("Spiral"), "-0.761574", "-0.0847596", "0.002"),
          place(QT_TR_NOOP("Deep in seahorse valley (1e-100)"), deepX, deepY, "1e-100"),
          rabbit};
}

}  // namespace gpulab::gui
