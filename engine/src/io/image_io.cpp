// Image files: the format from the content, the structural walk (inspect.cpp), then the codec:
// libjpeg-turbo, libspng and libtiff (codec_*.cpp) for JPEG, PNG and TIFF, stb_image /
// stb_image_write for BMP and TGA; binary PGM/PPM are read and written here, .npy in npy.cpp, and
// PNG tEXt chunks carry the Mandelbrot views' fields.

#include "gpulab/io/image_io.hpp"

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "internal/image_files.hpp"

namespace gpulab {

using namespace io_detail;
namespace fs = std::filesystem;

namespace {

// ---- decoding with stb_image --------------------------------------------------------------------

/// Binary PGM/PPM samples scaled from 0..maxval to 0..255; 16-bit samples are big-endian. (stb_image
/// 2.27 ignores maxval and reads 16-bit PNM in the wrong byte order.)
Image decodePnm(Bytes b, const Inspection& found, bool rgb) {
  Image image(static_cast<int>(found.width), static_cast<int>(found.height), rgb ? 3 : 1, PixelType::U8);
  const std::uint8_t* in = b.data() + found.pnmDataOffset;
  const std::uint32_t maxValue = found.pnmMaxValue;
  auto samples = image.samples<std::uint8_t>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::uint32_t v = maxValue > 255 ? readBe16(in + 2 * i) : in[i];
    samples[i] = maxValue == 255 ? static_cast<std::uint8_t>(v)
                                 : static_cast<std::uint8_t>((std::min(v, maxValue) * 255 + maxValue / 2) / maxValue);
  }
  return image;
}

Image decodeFile(const std::vector<std::uint8_t>& bytes, FileFormat format, const std::string& name, Image reuse) {
  if (format == FileFormat::Tiff) return decodeTiff(bytes, name, std::move(reuse));
  const Inspection found = inspect(format, bytes);
  // A header cut short or broken says nothing trustworthy about the size: report that first. Then
  // the limits, from our own reading of the header, then what the walk found (a truncated file, a
  // size the bytes present cannot hold, a layout stb_image would misread): all before any decoder
  // allocates.
  if (!found.problem.empty() && found.width < 0) throw ImageIoError(name + " " + found.problem);
  if (found.width >= 0) checkShape(found.width, found.height, 1, name);
  if (!found.problem.empty()) throw ImageIoError(name + " " + found.problem);
  if (format == FileFormat::Png) return decodePng(bytes, name, std::move(reuse));
  if (format == FileFormat::Jpeg) return decodeJpeg(bytes, name, std::move(reuse));
  if (format == FileFormat::Pnm) return decodePnm(bytes, found, bytes[1] == '6');  // stb has no PNM reader
  // BMP and TGA through stb_image, which sees only files the walk passed; its own reading of the
  // header must agree with ours.
  const int length = static_cast<int>(bytes.size());
  int width = 0, height = 0, components = 0;
  if (!stbi_info_from_memory(bytes.data(), length, &width, &height, &components))
    throw ImageIoError(name + " is corrupt (stb_image cannot read its " + std::string(formatName(format)) + " header)");
  if (format == FileFormat::Bmp) height = static_cast<int>(std::abs(std::int64_t{height}));  // top-down BMP
  if (width != found.width || height != found.height)
    throw ImageIoError(name + " is corrupt (its " + std::string(formatName(format)) + " header reads as " +
                       std::to_string(found.width) + "x" + std::to_string(found.height) + " and as " +
                       std::to_string(width) + "x" + std::to_string(height) + ")");

  std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(bytes.data(), length, &width, &height, &components, 0), &stbi_image_free);
  if (!pixels) {
    const char* why = stbi_failure_reason();
    throw ImageIoError(name + " is truncated or corrupt (stb_image: " + (why ? why : "unknown error") + ")");
  }
  checkShape(width, height, components, name);
  Image image(width, height, components == 2 ? 4 : components, PixelType::U8);
  const std::size_t count = image.pixelCount();
  auto* out = reinterpret_cast<std::uint8_t*>(image.data());
  if (components == 2) {  // gray + alpha becomes RGBA
    for (std::size_t i = 0; i < count; ++i) {
      out[4 * i] = out[4 * i + 1] = out[4 * i + 2] = pixels.get()[2 * i];
      out[4 * i + 3] = pixels.get()[2 * i + 1];
    }
  } else {
    std::memcpy(out, pixels.get(), image.sizeBytes());
  }
  return image;
}

// ---- encoding -----------------------------------------------------------------------------------

void appendToString(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

/// The formats that hold `type` samples, for messages.
std::string formatsHolding(PixelType type) {
  switch (type) {
    case PixelType::U8:
      return "every format";
    case PixelType::U16:
      return ".png, .tif or .npy";
    case PixelType::F32:
      return ".tif or .npy";
    case PixelType::F64:
      break;
  }
  return ".npy";
}

/// Whether `ext` (lowercase, with the dot) is a format gpulab writes, and which sample types it holds.
bool isWritableExtension(const std::string& ext) {
  for (std::string_view known :
       {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".tga", ".pgm", ".ppm", ".pnm", ".npy"})
    if (ext == known) return true;
  return false;
}
bool holdsType(const std::string& ext, PixelType type) {
  if (ext == ".npy" || type == PixelType::U8) return true;
  if (ext == ".png") return type == PixelType::U16;
  if (ext == ".tif" || ext == ".tiff") return type == PixelType::U16 || type == PixelType::F32;
  return false;
}

void checkFormat(const std::string& ext, PixelType type, int channels, const std::string& name) {
  if (!isWritableExtension(ext))
    throw ImageIoError("cannot save " + name + ": " +
                       (ext.empty() ? std::string("it has no extension") : "unknown extension '" + ext + "'") +
                       "; gpulab writes " + supportedImageExtensions());
  if (ext == ".npy") return;
  if (!holdsType(ext, type))
    throw ImageIoError("cannot save " + name + ": " + ext + " cannot hold " + std::string(toString(type)) +
                       " samples; save it as " + formatsHolding(type) + " to keep the values, or convert it first");
  if (channels == 2)
    throw ImageIoError("cannot save " + name + ": " + ext +
                       " takes gray, RGB or RGBA images and this one has 2 channels; save it as .npy");
  if (ext == ".pgm" && channels != 1)
    throw ImageIoError("cannot save " + name + ": .pgm holds gray images and this one has " + std::to_string(channels) +
                       " channels; use .ppm or .png");
}

void requireSavable(const Image& image, const std::string& ext, const std::string& name) {
  if (image.empty()) throw ImageIoError("cannot save " + name + ": the image is empty");
  checkFormat(ext, image.type(), image.channels(), name);
}

std::string encodePnm(const Image& image, const std::string& ext, const std::string& name) {
  if (ext == ".pgm" && image.channels() != 1)
    throw ImageIoError("cannot save " + name + ": .pgm holds gray images and this one has " +
                       std::to_string(image.channels()) + " channels; use .ppm or .png");
  const bool gray = ext == ".pgm" || (ext == ".pnm" && image.channels() == 1);
  const int outChannels = gray ? 1 : 3;
  std::string out =
      (gray ? "P5\n" : "P6\n") + std::to_string(image.width()) + " " + std::to_string(image.height()) + "\n255\n";
  const std::size_t header = out.size();
  out.resize(header + image.pixelCount() * static_cast<std::size_t>(outChannels));
  const auto* in = reinterpret_cast<const std::uint8_t*>(image.data());
  char* dst = out.data() + header;
  const std::size_t c = static_cast<std::size_t>(image.channels());
  for (std::size_t i = 0; i < image.pixelCount(); ++i)
    for (int k = 0; k < outChannels; ++k)  // gray expands to RGB, alpha is dropped
      *dst++ = static_cast<char>(in[i * c + (c == 1 ? 0 : static_cast<std::size_t>(k))]);
  return out;
}

std::string encodeFile(const Image& image, const std::string& ext, const SaveOptions& options,
                       const std::string& name) {
  requireSavable(image, ext, name);
  if (ext == ".npy") return npyHeader(image) + std::string(samplesOf(image));
  if (ext == ".png") return encodePng(image, options.compressionLevel, name);
  if (ext == ".jpg" || ext == ".jpeg") return encodeJpeg(image, options.jpegQuality, name);
  if (ext == ".tif" || ext == ".tiff") return encodeTiff(image, options.compressionLevel, name);
  std::string out;
  const int w = image.width(), h = image.height(), c = image.channels();
  int ok = 1;
  if (ext == ".bmp") {
    ok = stbi_write_bmp_to_func(appendToString, &out, w, h, c, image.data());
  } else if (ext == ".tga") {
    ok = stbi_write_tga_to_func(appendToString, &out, w, h, c, image.data());
  } else {
    return encodePnm(image, ext, name);
  }
  if (!ok) throw ImageIoError("cannot save " + name + ": encoding as " + ext + " failed");
  return out;
}

void appendPngChunk(std::string& out, std::string_view type, std::string_view data) {
  const auto length = static_cast<std::uint32_t>(data.size());
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((length >> shift) & 0xFF);
  const std::size_t typeAt = out.size();
  out += type;
  out += data;
  const std::uint32_t crc = crc32(asBytes(std::string_view(out).substr(typeAt)));
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((crc >> shift) & 0xFF);
}

/// PNG keywords: 1 to 79 printable Latin-1 characters, no leading, trailing or doubled spaces.
void checkPngText(const std::string& key, const std::string& value, const std::string& name) {
  const auto printable = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 32 && u <= 126) || u >= 161;
  };
  std::string shown = key.substr(0, 100);  // the key as the message can show it, on one line
  std::replace_if(
      shown.begin(), shown.end(), [&](char c) { return !printable(c); }, '?');
  const bool keyOk = !key.empty() && key.size() <= 79 && std::all_of(key.begin(), key.end(), printable) &&
                     key.front() != ' ' && key.back() != ' ' && key.find("  ") == std::string::npos;
  if (!keyOk)
    throw ImageIoError("cannot save " + name + ": PNG text key '" + shown +
                       "' must be 1 to 79 printable Latin-1 characters without leading, trailing or double spaces");
  if (value.find('\0') != std::string::npos || value.size() > 0x7FFFFFFFu - 80)
    throw ImageIoError("cannot save " + name + ": the PNG text for key '" + shown +
                       "' contains a NUL byte or is too long");
}

}  // namespace

// ---- public API ---------------------------------------------------------------------------------

Image loadImage(const fs::path& path) { return loadImage(path, Image()); }

Image loadImage(const fs::path& path, Image reuse) {
  const std::string name = path.string();
  const InputFile in = openForReading(path, name);
  std::array<std::uint8_t, 18> head{};
  const std::size_t headLength = readAt(in, 0, head.data(), head.size(), name);
  const Bytes headBytes(head.data(), headLength);
  const FileFormat format = detectFormat(headBytes, path, name);
  if (format == FileFormat::Npy) return loadNpy(in, headBytes, name, std::move(reuse));
  return decodeFile(readWhole(in, name), format, name, std::move(reuse));
}

void saveImage(const Image& image, const fs::path& path, const SaveOptions& options) {
  const std::string name = path.string();
  if (options.jpegQuality < 1 || options.jpegQuality > 100)
    throw ImageIoError("cannot save " + name + ": JPEG quality " + std::to_string(options.jpegQuality) +
                       " is outside 1 to 100");
  if (options.compressionLevel < 0 || options.compressionLevel > 9)
    throw ImageIoError("cannot save " + name + ": compression level " + std::to_string(options.compressionLevel) +
                       " is outside 0 to 9");
  const std::string ext = lowercaseExtension(path);
  if (ext == ".npy") {
    requireSavable(image, ext, name);
    const std::string header = npyHeader(image);
    writeFileAtomically(path, name, {header, samplesOf(image)});
    return;
  }
  const std::string encoded = encodeFile(image, ext, options, name);
  writeFileAtomically(path, name, {encoded});
}

void saveImage(const Image& image, const fs::path& path, int jpegQuality) {
  saveImage(image, path, SaveOptions{.jpegQuality = jpegQuality});
}

void checkSaveFormat(const fs::path& path, PixelType type, int channels) {
  checkFormat(lowercaseExtension(path), type, channels, path.string());
}

void savePngWithText(const Image& image, const fs::path& path, const std::map<std::string, std::string>& text) {
  const std::string name = path.string();
  if (lowercaseExtension(path) != ".png")
    throw ImageIoError("cannot save " + name + ": PNG text needs a .png file name");
  requireSavable(image, ".png", name);
  for (const auto& [key, value] : text) checkPngText(key, value, name);
  std::string png = encodePng(image, SaveOptions{}.compressionLevel, name);
  // The encoder ends the stream with the 12-byte IEND chunk; the text goes just before it.
  const std::size_t iend = png.size() - 12;
  if (png.size() < kPngSignature.size() + 12 || png.compare(iend + 4, 4, "IEND") != 0)
    throw ImageIoError("cannot save " + name + ": the PNG encoder produced no IEND chunk");
  std::string chunks;
  for (const auto& [key, value] : text) appendPngChunk(chunks, "tEXt", key + '\0' + value);
  png.insert(iend, chunks);
  writeFileAtomically(path, name, {png});
}

std::map<std::string, std::string> readPngText(const fs::path& path) {
  const std::string name = path.string();
  const InputFile in = openForReading(path, name);
  const std::vector<std::uint8_t> bytes = readWhole(in, name);
  if (!startsWith(bytes, kPngSignature)) throw ImageIoError(name + " is not a PNG file");
  std::map<std::string, std::string> text;
  const std::string problem = walkPngChunks(bytes, [&](std::string_view type, Bytes data) {
    if (type != "tEXt") return;
    const std::string_view chunk(reinterpret_cast<const char*>(data.data()), data.size());
    const std::size_t nul = chunk.find('\0');
    if (nul == std::string_view::npos) throw ImageIoError(name + " is corrupt (a tEXt chunk has no keyword)");
    text.insert_or_assign(std::string(chunk.substr(0, nul)), std::string(chunk.substr(nul + 1)));
  });
  if (!problem.empty()) throw ImageIoError(name + " " + problem);
  return text;
}

std::string supportedImageExtensions() { return "png, jpg, jpeg, tif, tiff, bmp, tga, pgm, ppm, pnm, npy"; }

}  // namespace gpulab
