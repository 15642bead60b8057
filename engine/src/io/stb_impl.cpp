// The stb_image and stb_image_write implementations, compiled once with gpulab's limits: only the
// formats gpulab reads through stb (BMP, TGA; PNG, JPEG and TIFF go through libspng, libjpeg-turbo and
// libtiff, binary PNM through image_io.cpp, so stb never sniffs a file's content as PNM), no stdio
// (image_io.cpp reads and writes the files itself), and STBI_MAX_DIMENSIONS = kMaxImageDimension as
// the hard upper bound: the limits a user sets (ImageLimits, at most that) are enforced from
// gpulab's own reading of the header before stb sees the file, and stb sees only files whose
// compression, size and bytes present inspect.cpp has checked. Debian's libstb.so is not linked: its
// build has other limits.
#include "gpulab/core/image.hpp"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_BMP
#define STBI_ONLY_TGA
#define STBI_NO_STDIO
#define STBI_MAX_DIMENSIONS gpulab::kMaxImageDimension
#include <stb/stb_image.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
