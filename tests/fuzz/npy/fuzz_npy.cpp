// Fuzz target: NumPy .npy from memory (decodeNpy), the parser behind .npy images and kernel files.
// Allowed: ImageIoError. Checked: what decodes encodes and decodes again to the same shape, type and
// bytes (encodeNpy writes what decodeNpy reads).
#include <cstdint>
#include <cstring>
#include <string>

#include "../fuzz_support.hpp"
#include "gpulab/io/image_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpulab;
  Image image;
  try {
    image = decodeNpy(std::string(fuzz::asText(data, size)), "the fuzz input");
  } catch (const ImageIoError&) {
    return 0;
  }
  if (image.sizeBytes() != image.rowBytes() * static_cast<std::size_t>(image.height()))
    fuzz::fail("the array's byte count does not match its shape");
  const Image again = decodeNpy(encodeNpy(image), "the re-encoded array");
  if (again.width() != image.width() || again.height() != image.height() || again.channels() != image.channels() ||
      again.type() != image.type() || again.sizeBytes() != image.sizeBytes() ||
      std::memcmp(again.data(), image.data(), image.sizeBytes()) != 0)
    fuzz::fail("decodeNpy(encodeNpy(a)) differs from a");
  return 0;
}
