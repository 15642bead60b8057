// Reading and writing images: PNG, JPEG, BMP, TGA and PNM (PGM/PPM) through stb_image, and NumPy
// .npy (uint8, float32, float64; HxW or HxWxC) both ways, so results compare exactly with NumPy,
// SciPy and CuPy. The format follows the file's content when reading and its extension when writing.
//
// Every failure throws ImageIoError with one sentence naming the file: missing, empty, truncated,
// corrupt, unsupported format, or dimensions beyond kMaxImageDimension / kMaxImagePixels (checked
// from the header before anything is decoded; stb_image is not hardened against hostile files).
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "gpulab/core/image.hpp"

namespace gpulab {

class ImageIoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Loads PNG/JPEG/BMP/TGA/PNM as u8 with 1, 3 or 4 channels (gray+alpha becomes RGBA), or .npy as stored.
/// 16-bit PNG keeps the high byte of each sample; PGM/PPM samples are scaled from 0..maxval to 0..255
/// (16-bit ones too). The format comes from the content (TGA, which has no signature, from the
/// extension). A .npy may have bytes after the array, as numpy.load allows. Thread-safe.
Image loadImage(const std::filesystem::path& path);

/// Writes by extension: .png .jpg/.jpeg .bmp .tga .ppm/.pnm need u8 with 1, 3 or 4 channels and .pgm
/// u8 gray (.jpg/.ppm/.pnm drop alpha); .npy takes every type. Float images to an 8-bit format are an error
/// naming .npy as the way out. Writes to a temporary file and renames, so a failure never leaves
/// half a file where a good one was.
/// What reads back: .png, .tga, .pgm and .npy exactly; .bmp exactly, gray read back as RGB; .ppm/.pnm
/// exactly without alpha (.pnm writes gray as PGM); .jpg approximately, always as RGB. The extension
/// is case-insensitive; jpegQuality is 1..100.
void saveImage(const Image& image, const std::filesystem::path& path, int jpegQuality = 95);

/// PNG with tEXt chunks (key -> value, Latin-1 keys of 1..79 characters), e.g. a Mandelbrot view.
void savePngWithText(const Image& image, const std::filesystem::path& path,
                     const std::map<std::string, std::string>& text);
/// The tEXt chunks of a PNG file (empty when it has none). Throws ImageIoError if it is no PNG.
std::map<std::string, std::string> readPngText(const std::filesystem::path& path);

/// NumPy .npy in memory: for tests and for callers that hold bytes rather than files.
Image decodeNpy(const std::string& bytes, const std::string& nameForErrors = "the .npy data");
std::string encodeNpy(const Image& image);

/// "png, jpg, jpeg, bmp, tga, pgm, ppm, pnm, npy", for help texts and file dialogs.
std::string supportedImageExtensions();

}  // namespace gpulab
