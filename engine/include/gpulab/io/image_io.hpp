// Reading and writing images: JPEG (libjpeg-turbo), PNG (libspng), TIFF (libtiff), BMP and TGA
// (stb_image), binary PGM/PPM, and NumPy .npy (uint8, uint16, float32, float64; HxW or HxWxC) both
// ways, so results compare exactly with NumPy, SciPy and CuPy. The format follows the file's
// content when reading and its extension when writing.
//
// Every failure throws ImageIoError with one sentence naming the file: missing, empty, truncated,
// corrupt, unsupported format or layout, or dimensions beyond imageLimits() (checked from the header
// before anything is allocated or decoded). A decoded size must also be plausible for the bytes
// present (each format's largest compression ratio), so a tiny file cannot claim a huge image.
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

/// The largest image loadImage accepts, for every format: pixels a side and pixels in all.
/// Process-wide. The defaults are gpulab's hard maximum (kMaxImageDimension = 32768 a side,
/// kMaxImagePixels = 268435456, 256 megapixels), which a limit can lower but not raise; the
/// environment variables GPULAB_MAX_IMAGE_SIDE and GPULAB_MAX_IMAGE_PIXELS set the starting values
/// (read once, at the first use), gpulab-cli's --max-image-side / --max-image-pixels and the GUI's
/// setting override them.
struct ImageLimits {
  int maxSide = kMaxImageDimension;
  std::int64_t maxPixels = kMaxImagePixels;
  bool operator==(const ImageLimits&) const = default;
};

/// The limits in force: set by setImageLimits, else from the environment, else the defaults.
/// Throws std::invalid_argument naming the variable when an environment variable is malformed.
ImageLimits imageLimits();
/// Sets the limits for every later load in this process (thread-safe). Throws std::invalid_argument
/// with one sentence when a value is outside 1..kMaxImageDimension or 1..kMaxImagePixels.
void setImageLimits(const ImageLimits& limits);
/// The limits the environment variables set on top of the defaults (each variable optional).
/// Throws std::invalid_argument naming the variable when one is not a whole number in range.
ImageLimits imageLimitsFromEnvironment();
/// Reads a limit's value: a whole number from 1 to `maximum` (digits only). `what` names the option
/// or variable in the std::invalid_argument sentence thrown otherwise.
std::int64_t parseImageLimit(const std::string& text, std::int64_t maximum, const std::string& what);

/// Loads an image with 1, 3 or 4 channels (gray + alpha becomes RGBA): 8-bit PNG/JPEG/TIFF/BMP/TGA/
/// PNM as u8, 16-bit PNG and TIFF as u16, float TIFF as f32, .npy as stored (float64 stays f64).
/// A JPEG is turned as its EXIF orientation says; gray JPEGs load as gray. PGM/PPM samples are
/// scaled from 0..maxval to 0..255. The format comes from the content, never from the name alone:
/// TGA, which has no signature, needs a .tga name and a header that holds together. A .npy may have
/// bytes after the array, as numpy.load allows; a PGM/PPM only white space or a next image.
/// Thread-safe.
Image loadImage(const std::filesystem::path& path);
/// The same, decoding into `reuse`'s memory when it is large enough (Image::reshape): a loop over
/// many files of one size allocates once. What `reuse` held is gone either way.
Image loadImage(const std::filesystem::path& path, Image reuse);

/// How saveImage encodes.
struct SaveOptions {
  int jpegQuality = 95;  ///< 1..100
  /// PNG and TIFF (deflate) compression, 0 (none) to 9 (smallest). 1 by default, the fast end:
  /// for PNG levels 1-3 are the UP filter with run-length deflate (a 6000x4000 photo in a third of
  /// a second, about 1.2x the size of level 6, which takes ten times as long).
  int compressionLevel = 1;
};

/// Writes by extension: .png takes u8 and u16; .tif/.tiff u8, u16 and f32; .jpg/.jpeg .bmp .tga
/// .ppm/.pnm u8 (.pgm u8 gray); all with 1, 3 or 4 channels (.jpg/.ppm/.pnm drop alpha); .npy takes
/// every type. A type a format cannot hold is an error naming the formats that can. Writes to a
/// temporary file and renames, so a failure never leaves half a file where a good one was.
/// What reads back: .png, .tif, .tga, .pgm and .npy exactly; .bmp exactly, gray read back as RGB;
/// .ppm/.pnm exactly without alpha (.pnm writes gray as PGM); .jpg approximately (4:2:0 chroma).
/// The extension is case-insensitive.
void saveImage(const Image& image, const std::filesystem::path& path, const SaveOptions& options);
void saveImage(const Image& image, const std::filesystem::path& path, int jpegQuality = 95);

/// Throws the ImageIoError saveImage would for a `type` image of `channels` channels to `path`
/// because of its extension (unknown, or a format that cannot hold the type or channels), without
/// touching the disk: front ends check the output before they spend time on a filter.
void checkSaveFormat(const std::filesystem::path& path, PixelType type, int channels);

/// PNG with tEXt chunks (key -> value, Latin-1 keys of 1..79 characters), e.g. a Mandelbrot view.
void savePngWithText(const Image& image, const std::filesystem::path& path,
                     const std::map<std::string, std::string>& text);
/// The tEXt chunks of a PNG file (empty when it has none). Throws ImageIoError if it is no PNG.
std::map<std::string, std::string> readPngText(const std::filesystem::path& path);

/// NumPy .npy in memory: for tests and for callers that hold bytes rather than files.
Image decodeNpy(const std::string& bytes, const std::string& nameForErrors = "the .npy data");
std::string encodeNpy(const Image& image);

/// "png, jpg, jpeg, tif, tiff, bmp, tga, pgm, ppm, pnm, npy", for help texts and file dialogs.
std::string supportedImageExtensions();

}  // namespace gpulab
