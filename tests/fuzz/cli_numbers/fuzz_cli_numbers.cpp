// Fuzz target: the number and list parsers behind the CLI's options (and the GUI's fields).
// Input: one byte choosing the parser (byte % 13), then the text it gets:
//   0 --center (parseCenter)    1 --julia (parsePoint)       2 --width (DeepWidth::parse)
//   3 --palette (parsePalette)  4 colours (parseHexColour)   5 lab --sizes (lab::parseSizeList)
//   6 --size (cli::parseSize)   7 --iters (cli::parseIterations)  8 --newton (cli::parseNewtonFraction)
//   9 parseDouble / parseInt (the engine's exact number reads)   10 DecimalNumber::parse
//   11 enum names (precision, border, experiment, dtype)         12 one --center, --width, --size, --iters
//      line each ("a\nb\nc\nd"), built into a view and judged (validate, choosePrecision)
// Allowed: std::invalid_argument, cli::UsageError and PrecisionLimitError. Checked: what parses
// prints back to text that parses to the same value, and parsed values keep their documented ranges.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../../../app/cli/cli_parse.hpp"
#include "../../../app/cli/commands.hpp"
#include "../fuzz_support.hpp"
#include "gpulab/core/border.hpp"
#include "gpulab/core/enum_names.hpp"
#include "gpulab/lab/lab.hpp"
#include "gpulab/mandelbrot/palette.hpp"
#include "gpulab/mandelbrot/view.hpp"
#include "internal/number_text.hpp"

namespace {

using namespace gpulab;

template <class E>
void enumRoundTrip(std::string_view text) {
  if (const auto value = parseEnum<E>(text)) {
    if (parseEnum<E>(toString(*value)) != value) fuzz::fail("an enum's name does not parse back to it");
  } else {
    try {
      parseEnumOrThrow<E>(text);
      fuzz::fail("parseEnumOrThrow accepted what parseEnum refused");
    } catch (const std::invalid_argument&) {
    }
  }
}

void run(int which, std::string_view text) {
  const std::string s(text);
  switch (which) {
    case 0: {
      const auto c = parseCenter(text, "--center");
      if (parseCenter(c[0].toString() + "," + c[1].toString(), "again") != c)
        fuzz::fail("a centre does not print back to itself");
      break;
    }
    case 1: {
      const auto p = parsePoint(text, "--julia");
      if (!std::isfinite(p[0]) || !std::isfinite(p[1])) fuzz::fail("parsePoint returned a non-finite value");
      break;
    }
    case 2: {
      const DeepWidth w = DeepWidth::parse(text);
      if (!(w.decimal() > DecimalNumber()) || DeepWidth::parse(w.toString()) != w)
        fuzz::fail("a width is not positive or does not print back to itself");
      break;
    }
    case 3: {
      const Palette p = parsePalette(text);
      if (Palette::parseGradient(p.gradientText()).stops() != p.stops())
        fuzz::fail("a palette's gradient text does not parse back to its stops");
      break;
    }
    case 4:
      if (const auto c = parseHexColour(text); c && parseHexColour(hexColour(*c)) != c)
        fuzz::fail("a colour does not print back to itself");
      break;
    case 5:
      for (const auto& point : lab::parseSizeList(text)) {
        if (point.empty() || point.size() > 3) fuzz::fail("a size point has no or more than three dimensions");
        for (const std::int64_t v : point)
          if (v < 1) fuzz::fail("a size below 1 passed");
      }
      break;
    case 6:
      cli::parseSize(s);
      break;
    case 7:
      if (const auto n = cli::parseIterations(s); n && (*n < -1 || *n > kMaxMandelbrotIterations + 1))
        fuzz::fail("--iters left its clamp");
      break;
    case 8:
      if (const double f = cli::parseNewtonFraction(s); !(f > 0 && f <= 1)) fuzz::fail("--newton left (0, 1]");
      break;
    case 9:
      if (const auto d = parseDouble(text); d && (!std::isfinite(*d) || parseDouble(formatNumber(*d)) != d))
        fuzz::fail("parseDouble gave a non-finite value or one that does not print back");
      if (const auto i = parseInt(text); i && parseInt(std::to_string(*i)) != i)
        fuzz::fail("parseInt gave a value that does not print back");
      break;
    case 10: {
      const DecimalNumber d = DecimalNumber::parse(text);
      if (DecimalNumber::parse(d.toString()) != d || DecimalNumber::parse(d.toScientific()) != d)
        fuzz::fail("a decimal number does not print back to itself");
      break;
    }
    case 11:
      enumRoundTrip<Precision>(text);
      enumRoundTrip<BorderMode>(text);
      enumRoundTrip<lab::Experiment>(text);
      enumRoundTrip<lab::DType>(text);
      break;
    default: {
      std::string fields[4] = {"-0.5,0", "3", "64x48", "auto"};
      std::size_t start = 0;
      for (std::string& field : fields) {
        if (start > text.size()) break;
        const std::size_t end = std::min(text.find('\n', start), text.size());
        field = std::string(text.substr(start, end - start));
        start = end + 1;
      }
      MandelbrotView v;
      const auto c = parseCenter(fields[0], "--center");
      v.centerX = c[0];
      v.centerY = c[1];
      v.width = DeepWidth::parse(fields[1]);
      std::tie(v.imageWidth, v.imageHeight) = cli::parseSize(fields[2]);
      const auto n = cli::parseIterations(fields[3]);
      v.maxIterations = n ? *n : autoIterations(v.width);
      choosePrecision(v);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  try {
    run(data[0] % 13, fuzz::asText(data + 1, size - 1));
  } catch (const std::invalid_argument&) {
  } catch (const gpulab::cli::UsageError&) {
  } catch (const gpulab::PrecisionLimitError&) {
  }
  return 0;
}
