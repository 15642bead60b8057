// Fuzz target: a Mandelbrot view and its colouring from a PNG's text fields (viewFromPngText,
// colouringFromPngText, then choosePrecision as the CLI and the GUI do when they reopen a PNG).
// Input: the values of the fields below, one a line in this order; input that ends early leaves the
// remaining fields out, and a line that is exactly "-" leaves its field out.
// Allowed: std::invalid_argument and PrecisionLimitError. Checked: a view and colouring that load
// write fields (pngTextFromView) that load back to the same view and colouring.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "../fuzz_support.hpp"
#include "gpulab/mandelbrot/png_view.hpp"

namespace {

const char* const kKeys[] = {"gpulab.center",   "gpulab.width",  "gpulab.iterations",  "gpulab.precision",
                             "gpulab.julia",    "gpulab.size",   "gpulab.supersample", "gpulab.palette",
                             "gpulab.gradient", "gpulab.offset", "gpulab.density",     "gpulab.interior",
                             "gpulab.kind",     "Software"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulab;
  const std::string_view input = fuzz::asText(data, size);
  std::map<std::string, std::string> text;
  std::size_t start = 0;
  for (const char* key : kKeys) {
    if (start > input.size()) break;
    const std::size_t end = std::min(input.find('\n', start), input.size());
    const std::string_view value = input.substr(start, end - start);
    if (value != "-") text[key] = std::string(value);
    start = end + 1;
  }
  MandelbrotView view;
  Colouring colouring;
  PrecisionChoice used;
  try {
    view = viewFromPngText(text);
    colouring = colouringFromPngText(text);
    used = choosePrecision(view);
  } catch (const std::invalid_argument&) {
    return 0;
  } catch (const PrecisionLimitError&) {
    return 0;
  }
  const auto written = pngTextFromView(view, colouring, used);
  if (viewFromPngText(written) != view) fuzz::fail("the view's fields do not load back to the same view");
  if (colouringFromPngText(written) != colouring)
    fuzz::fail("the colouring's fields do not load back to the same colouring");
  return 0;
}
