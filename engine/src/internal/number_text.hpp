// Numbers as text for the engine's parsers and fields (engine-private): exact reads that reject
// trailing garbage, and printf-style writes.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace gpulab {

inline std::string formatNumber(double value, const char* format = "%.17g") {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

/// The shortest text that reads back as exactly `value` ("0.16", "0.16666666666666666", "1e-05").
inline std::string formatShortest(double value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : formatNumber(value);
}

/// The whole of `text` (spaces around it and a leading '+' allowed) as a finite double, or nullopt.
inline std::optional<double> parseDouble(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') {
    text.remove_prefix(1);
    if (!text.empty() && text.front() == '-') return std::nullopt;  // "+-5" is no number
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

/// The whole of `text` as an int, or nullopt.
inline std::optional<int> parseInt(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace gpulab
