#include "cli_parse.hpp"

#include <algorithm>
#include <exception>

#include "commands.hpp"
#include "gpulab/mandelbrot/view.hpp"

namespace gpulab::cli {

std::pair<int, int> parseSize(const std::string& text) {
  const std::size_t x = text.find('x');
  try {
    std::size_t used1 = 0, used2 = 0;
    if (x != std::string::npos) {
      const std::string a = text.substr(0, x), b = text.substr(x + 1);
      const int w = std::stoi(a, &used1), h = std::stoi(b, &used2);
      if (used1 == a.size() && used2 == b.size() && !a.empty() && !b.empty()) return {w, h};
    }
  } catch (const std::exception&) {
  }
  throw UsageError("--size '" + text + "' is not WIDTHxHEIGHT (e.g. 1920x1080)");
}

std::optional<int> parseIterations(const std::string& text) {
  if (text == "auto") return std::nullopt;
  std::size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0) throw UsageError("--iters '" + text + "' is not a whole number or 'auto'");
  return static_cast<int>(std::clamp<long long>(n, -1, kMaxMandelbrotIterations + 1LL));
}

double parseNewtonFraction(const std::string& text) {
  if (text == "half") return 0.5;
  if (text == "onto") return 1.0;
  double fraction = 0;
  std::size_t used = 0;
  try {
    fraction = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(fraction > 0 && fraction <= 1))
    throw UsageError("--newton '" + text + "' is not half, onto or a fraction in (0, 1]");
  return fraction;
}

}  // namespace gpulab::cli
