#include "gpulab/mandelbrot/deep_number.hpp"

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>

#include "gpulab/kernels/floatexp.cuh"
#include "internal/mpfr_real.hpp"

namespace gpulab {

static_assert(sizeof(ExtendedReal) == sizeof(kernels::FloatExp) &&
              offsetof(ExtendedReal, exponent) == offsetof(kernels::FloatExp, e));
static_assert(sizeof(ExtendedComplex) == sizeof(kernels::ComplexExp) &&
              offsetof(ExtendedComplex, exponent) == offsetof(kernels::ComplexExp, e));
static_assert(kExtendedZeroExponent == kernels::kFloatExpZeroExponent);

namespace {

constexpr std::int64_t kMaxExponentText = 1'000'000'000;  // |exponent| accepted in text

// The input as a message shows it: quoted, long inputs cut short.
std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 40;
  if (text.size() <= kShown) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, kShown)) + "...\" (" + std::to_string(text.size()) + " characters)";
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view trimmed(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ExtendedReal

ExtendedReal toExtended(double value) noexcept {
  const kernels::FloatExp f = kernels::fromDouble(value);
  return {f.m, f.e};
}

double toDouble(ExtendedReal value) noexcept {
  return kernels::toDouble(kernels::FloatExp{value.mantissa, value.exponent});
}

double log2Of(ExtendedReal value) noexcept {
  if (value.mantissa == 0.0) return -INFINITY;
  return std::log2(std::fabs(value.mantissa)) + value.exponent;
}

// ---------------------------------------------------------------------------------------------
// DecimalNumber

DecimalNumber DecimalNumber::parse(std::string_view text, std::string_view what) {
  const std::string_view s = trimmed(text);
  const std::string name(what);
  if (s.size() > kMaxLength)
    throw std::invalid_argument(name + " has " + std::to_string(s.size()) + " characters; at most " +
                                std::to_string(kMaxLength) + " are accepted");
  if (s.empty()) throw std::invalid_argument(name + " is empty: expected a decimal number such as -0.75 or 1.5e-300");
  const auto notANumber = [&] {
    return std::invalid_argument(name + " " + quoted(text) +
                                 " is not a decimal number (expected digits with an optional sign, point and "
                                 "exponent, such as -0.75 or 1.5e-300)");
  };
  std::size_t pos = 0;
  bool negative = false;
  if (s[pos] == '+' || s[pos] == '-') negative = s[pos++] == '-';
  std::string digits;
  std::int64_t beforePoint = 0;
  bool point = false;
  for (; pos < s.size(); ++pos) {
    if (isDigit(s[pos])) {
      digits.push_back(s[pos]);
      if (!point) ++beforePoint;
    } else if (s[pos] == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (digits.empty()) throw notANumber();
  std::int64_t exponent = 0;
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    ++pos;
    bool negativeExponent = false;
    if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) negativeExponent = s[pos++] == '-';
    const std::size_t first = pos;
    for (; pos < s.size() && isDigit(s[pos]); ++pos) {
      exponent = exponent * 10 + (s[pos] - '0');
      if (exponent > kMaxExponentText)
        throw std::invalid_argument(name + " " + quoted(text) + " has an exponent beyond +-" +
                                    std::to_string(kMaxExponentText));
    }
    if (pos == first) throw notANumber();
    if (negativeExponent) exponent = -exponent;
  }
  if (pos != s.size()) throw notANumber();

  DecimalNumber r;
  const std::size_t lead = digits.find_first_not_of('0');
  if (lead == std::string::npos) return r;  // zero, whatever its sign
  const std::size_t trail = digits.find_last_not_of('0');
  r.negative_ = negative;
  r.digits_ = digits.substr(lead, trail - lead + 1);
  r.exponent_ = beforePoint - 1 - static_cast<std::int64_t>(lead) + exponent;
  return r;
}

DecimalNumber DecimalNumber::fromDouble(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("the number " + std::to_string(value) + " is not finite");
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  return parse(std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer)));
}

std::string DecimalNumber::toString() const {
  if (isZero()) return "0";
  std::string out = negative_ ? "-" : "";
  const auto length = static_cast<std::int64_t>(digits_.size());
  if (exponent_ >= -7 && exponent_ <= 20) {
    if (exponent_ < 0) {
      out += "0." + std::string(static_cast<std::size_t>(-exponent_ - 1), '0') + digits_;
    } else if (length <= exponent_ + 1) {
      out += digits_ + std::string(static_cast<std::size_t>(exponent_ + 1 - length), '0');
    } else {
      out.append(digits_, 0, static_cast<std::size_t>(exponent_ + 1));
      out.push_back('.');
      out.append(digits_, static_cast<std::size_t>(exponent_ + 1), std::string::npos);
    }
    return out;
  }
  return toScientific();
}

std::string DecimalNumber::toScientific() const {
  if (isZero()) return "0";
  std::string out;
  out.reserve(digits_.size() + 16);
  if (negative_) out.push_back('-');
  out.push_back(digits_[0]);
  if (digits_.size() > 1) {
    out.push_back('.');
    out.append(digits_, 1, std::string::npos);
  }
  out.append(exponent_ < 0 ? "e-" : "e+");
  out.append(std::to_string(exponent_ < 0 ? -exponent_ : exponent_));
  return out;
}

double DecimalNumber::toDouble() const {
  if (isZero()) return 0.0;
  if (exponent_ < -400) return negative_ ? -0.0 : 0.0;
  if (exponent_ > 400) return negative_ ? -INFINITY : INFINITY;
  // strtod rounds correctly however many digits it reads.
  return std::strtod(toScientific().c_str(), nullptr);
}

DecimalNumber DecimalNumber::operator-() const {
  DecimalNumber r = *this;
  if (!r.isZero()) r.negative_ = !r.negative_;
  return r;
}

std::strong_ordering operator<=>(const DecimalNumber& a, const DecimalNumber& b) noexcept {
  const int signA = a.isZero() ? 0 : (a.negative_ ? -1 : 1);
  const int signB = b.isZero() ? 0 : (b.negative_ ? -1 : 1);
  if (signA != signB || signA == 0) return signA <=> signB;
  std::strong_ordering magnitude = a.exponent_ <=> b.exponent_;
  if (magnitude == 0) magnitude = a.digits_.compare(b.digits_) <=> 0;  // no trailing zeros: plain order
  return signA > 0 ? magnitude : 0 <=> magnitude;
}

// ---------------------------------------------------------------------------------------------
// DeepWidth

DeepWidth DeepWidth::fromDecimal(const DecimalNumber& value) {
  const std::string shown = value.toString().size() > 40 ? value.toString().substr(0, 40) + "..." : value.toString();
  if (value.isZero()) throw std::invalid_argument("width 0 is not positive: a width must be between 1e-100000 and 100");
  if (value.negative())
    throw std::invalid_argument("width " + shown + " is negative: a width must be between 1e-100000 and 100");
  if (value.exponent10() < kMinExponent10)
    throw std::invalid_argument("width " + shown + " is below the deepest supported width 1e-100000");
  if (value > DecimalNumber::fromDouble(kMax))
    throw std::invalid_argument("width " + shown + " is above the widest supported width 100");
  DeepWidth w;
  w.decimal_ = value;
  MpfrReal v(53);
  setDecimal(v, value);
  w.value_ = toExtendedReal(v);
  return w;
}

DeepWidth DeepWidth::parse(std::string_view text) { return fromDecimal(DecimalNumber::parse(text, "width")); }

DeepWidth DeepWidth::fromDouble(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("width " + std::to_string(value) + " is not a finite number");
  return fromDecimal(DecimalNumber::fromDouble(value));
}

DeepWidth DeepWidth::fromExtended(ExtendedReal value) {
  if (value.mantissa == 0.0 || !std::isfinite(value.mantissa))
    throw std::invalid_argument("width 0 is not positive: a width must be between 1e-100000 and 100");
  MpfrReal v(64);
  setExtended(v, value);
  return fromDecimal(toDecimal(v, 17));
}

double DeepWidth::log10() const noexcept { return log2Of(value_) * 0.30102999566398119521; }

DeepWidth DeepWidth::scaled(double factor) const {
  if (!(factor > 0.0) || !std::isfinite(factor))
    throw std::invalid_argument("a width scale factor must be positive and finite");
  MpfrReal v(80);
  setDecimal(v, decimal_);
  mpfr_mul_d(v, v, factor, MPFR_RNDN);
  return fromDecimal(toDecimal(v, 17));
}

}  // namespace gpulab
