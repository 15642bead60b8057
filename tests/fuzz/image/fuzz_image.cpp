// Fuzz target: image loading through the public API, whatever decoders the engine uses.
// Input: one byte choosing the file's extension (byte % 10: png jpg bmp tga pgm ppm pnm npy bin,
// or none), then the file's bytes. The loader tells the format from the content (TGA: the extension
// and a header that holds together), so one target reaches every decoder (libspng, libjpeg-turbo,
// libtiff, stb_image's BMP and TGA, gpulab's PNM and .npy readers; seeds for each in corpus/); the
// extension byte reaches the by-name paths.
// The file also goes through readPngText (the tEXt fields that carry a Mandelbrot view).
// Allowed: ImageIoError. Checked: a loaded image is non-empty, within the documented limits, and its
// bytes are exactly width x height x channels x sample size.
#include <cstdint>
#include <string>

#include "../fuzz_support.hpp"
#include "gpulab/io/image_io.hpp"

namespace {

const char* const kSuffixes[] = {".png", ".jpg", ".bmp", ".tga", ".pgm", ".ppm", ".pnm", ".npy", ".bin", ""};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulab;
  if (size < 1) return 0;
  const std::string suffix = kSuffixes[data[0] % (sizeof kSuffixes / sizeof kSuffixes[0])];
  const auto path = fuzz::writeScratchFile(fuzz::asText(data + 1, size - 1), suffix);
  try {
    const Image image = loadImage(path);
    if (image.empty() || image.width() < 1 || image.height() < 1)
      fuzz::fail("loadImage returned an empty image without an error");
    const ImageLimits limits = imageLimits();
    if (image.width() > limits.maxSide || image.height() > limits.maxSide ||
        image.pixelCount() > static_cast<std::size_t>(limits.maxPixels))
      fuzz::fail("loadImage returned " + std::to_string(image.width()) + "x" + std::to_string(image.height()) +
                 ", beyond the limits");
    if (image.sizeBytes() != image.rowBytes() * static_cast<std::size_t>(image.height()))
      fuzz::fail("the image's byte count does not match its shape");
  } catch (const ImageIoError&) {
  }
  try {
    const auto text = readPngText(path);
    for (const auto& [key, value] : text)
      if (key.empty()) fuzz::fail("readPngText returned an empty key");
  } catch (const ImageIoError&) {
  }
  return 0;
}
