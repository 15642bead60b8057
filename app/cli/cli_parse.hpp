// The CLI's own text parsers (the engine parses centres, widths, palettes and size lists), apart from
// the subcommands so the fuzz target tests/fuzz/cli_numbers calls them exactly as the CLI does.
// Every bad text throws UsageError (exit code 2) with one sentence naming the option.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace gpulab::cli {

/// mandelbrot --size WIDTHxHEIGHT ("1920x1080"): the two numbers as written; the view's checks
/// judge their range.
std::pair<int, int> parseSize(const std::string& text);

/// mandelbrot --iters: a whole number, clamped to -1 .. kMaxMandelbrotIterations + 1 so the view's
/// check names the limit; std::nullopt for "auto".
std::optional<int> parseIterations(const std::string& text);

/// mandelbrot --newton half|onto|F: the fraction of the way to zoom, in (0, 1].
double parseNewtonFraction(const std::string& text);

}  // namespace gpulab::cli
