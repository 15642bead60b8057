// Numbers of a deep-zoom view: coordinates as decimal text of any length, widths far below the double
// range, and the extended-range values the perturbation kernels compute with.
//
//   auto x = gpulab::DecimalNumber::parse("-1.7400623825793399052208965570624873");
//   auto w = gpulab::DeepWidth::parse("3.2e-1000");      // w.toString() == "3.2e-1000"
//   gpulab::ExtendedReal h = w.value();                   // 1.66... * 2^-3320
//
// Parsing throws std::invalid_argument with one sentence naming the input and what is allowed; the
// other functions do not throw unless they say so. Plain C++: no MPFR, no CUDA.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpulab {

/// m * 2^e with 1 <= |m| < 2, or 0 (exponent kExtendedZeroExponent): the layout of the kernels' FloatExp.
struct ExtendedReal {
  double mantissa = 0;
  int exponent = -(1 << 29);
  friend bool operator==(const ExtendedReal&, const ExtendedReal&) = default;
};

/// (x + iy) * 2^e with 1 <= max(|x|, |y|) < 2, or 0: the layout of the kernels' ComplexExp.
struct ExtendedComplex {
  double x = 0;
  double y = 0;
  int exponent = -(1 << 29);
  friend bool operator==(const ExtendedComplex&, const ExtendedComplex&) = default;
};

inline constexpr int kExtendedZeroExponent = -(1 << 29);

/// An ExtendedReal from a finite double.
ExtendedReal toExtended(double value) noexcept;
/// Rounded once to double (0 or a subnormal below the double range, +-inf above it).
double toDouble(ExtendedReal value) noexcept;
/// log2 |value| (-inf for 0).
double log2Of(ExtendedReal value) noexcept;

/// A finite decimal number of any length, kept digit for digit: sign, significant digits and a
/// power of ten. -0 is 0.
class DecimalNumber {
 public:
  static constexpr std::size_t kMaxLength = 1'000'000;  ///< characters of text accepted by parse

  DecimalNumber() = default;  ///< 0

  /// Digits with an optional sign, decimal point and exponent: "-0.75", "+.5", "3.", "1.5e-300",
  /// "2E+7"; surrounding spaces are ignored. Throws std::invalid_argument with one sentence that calls
  /// the number `what` ("centre x \"1e\" is not a decimal number ...") for anything else: empty text,
  /// "nan", "inf", hexadecimal, a second point, an exponent without digits or beyond +-10^9, more than
  /// kMaxLength characters.
  static DecimalNumber parse(std::string_view text, std::string_view what = "number");
  /// The shortest decimal that reads back as `value` (finite; throws std::invalid_argument otherwise).
  static DecimalNumber fromDouble(double value);

  bool isZero() const noexcept { return digits_.empty(); }
  bool negative() const noexcept { return negative_; }
  /// The significant digits without leading or trailing zeros ("" for 0).
  const std::string& digits() const noexcept { return digits_; }
  /// The power of ten of the first digit: value = d1.d2d3... * 10^exponent10 (0 for 0).
  std::int64_t exponent10() const noexcept { return exponent_; }
  /// Plain notation when the exponent is in [-7, 20] ("-0.00123", "42"), else "d.ddde-300".
  std::string toString() const;
  /// Always "d.ddde+N" / "-d.ddde-N" ("0" for 0): every digit, no run of zeros however small or large.
  std::string toScientific() const;
  /// The nearest double (+-0 below the double range, +-inf above it).
  double toDouble() const;
  DecimalNumber operator-() const;

  /// Orders by value.
  friend std::strong_ordering operator<=>(const DecimalNumber& a, const DecimalNumber& b) noexcept;
  friend bool operator==(const DecimalNumber&, const DecimalNumber&) = default;

 private:
  bool negative_ = false;
  std::string digits_;
  std::int64_t exponent_ = 0;
};

/// The width of a deep view: a positive number from kMinDeepWidth (1e-100000) to kMaxDeepWidth (100),
/// kept as typed (decimal) and as an extended-range binary value.
class DeepWidth {
 public:
  static constexpr std::int64_t kMinExponent10 = -100000;  ///< 1e-100000
  static constexpr double kMax = 100.0;

  DeepWidth() = default;  ///< 3, the whole set

  /// "1e-500", "3.2E-1000", "0.005". Throws std::invalid_argument with one sentence for text that
  /// is not a number (DecimalNumber::parse), and for zero, negative widths and widths outside
  /// [1e-100000, 100].
  static DeepWidth parse(std::string_view text);
  /// The same checks for a width given as a number (NaN and inf are rejected too).
  static DeepWidth fromDecimal(const DecimalNumber& value);
  static DeepWidth fromDouble(double value);
  /// m * 2^e, printed with 17 significant digits; throws like parse when out of range.
  static DeepWidth fromExtended(ExtendedReal value);

  const DecimalNumber& decimal() const noexcept { return decimal_; }
  /// The binary value, rounded once from the decimal.
  ExtendedReal value() const noexcept { return value_; }
  double log10() const noexcept;
  /// The width as typed, normalised ("3.2e-1000", "0.005").
  std::string toString() const { return decimal_.toString(); }

  /// The width times `factor` (> 0), e.g. 0.5 to zoom in twice; throws when the result is out of range.
  DeepWidth scaled(double factor) const;

  friend bool operator==(const DeepWidth& a, const DeepWidth& b) { return a.decimal_ == b.decimal_; }

 private:
  DecimalNumber decimal_ = DecimalNumber::fromDouble(3.0);
  ExtendedReal value_{1.5, 1};
};

/// value + delta rounded to `precisionBits` bits (MPFR, 64..400,000): moves a centre by any fraction
/// of a pixel at any depth; the result holds the digits that precision carries.
DecimalNumber offsetBy(const DecimalNumber& value, ExtendedReal delta, int precisionBits);

}  // namespace gpulab
