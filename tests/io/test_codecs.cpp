// The codecs behind image I/O: libspng (PNG 8/16-bit), libtiff (TIFF 8/16-bit and float32),
// libjpeg-turbo (JPEG with quality and EXIF orientation), .npy uint16 and float64, the options
// (JPEG quality, compression level), and bad files of each (truncated, corrupt, a decompression
// bomb's header, an unsupported TIFF layout): one sentence each, nothing allocated for a bomb.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/core/image.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/gpu_test.hpp"
#include "support/io_test.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::randomImage;
using test::readBytes;
using test::ScratchDir;
using test::throwsIoError;
using test::writeBytes;

::testing::AssertionResult loadFails(const fs::path& path, std::initializer_list<std::string_view> parts) {
  return throwsIoError([&] { loadImage(path); }, path.string(), parts);
}

struct Shape {
  int width, height;
};
constexpr Shape kShapes[] = {{1, 1}, {2, 3}, {7, 1}, {1, 5}, {13, 17}, {131, 67}};

// ---- lossless round trips ---------------------------------------------------------------------

struct LosslessCase {
  const char* ext;
  PixelType type;
  int channels;
};
constexpr LosslessCase kLossless[] = {
    {".png", PixelType::U8, 1},  {".png", PixelType::U8, 3},  {".png", PixelType::U8, 4},  {".png", PixelType::U16, 1},
    {".png", PixelType::U16, 3}, {".png", PixelType::U16, 4}, {".tif", PixelType::U8, 1},  {".tif", PixelType::U8, 3},
    {".tiff", PixelType::U8, 4}, {".tif", PixelType::U16, 1}, {".tif", PixelType::U16, 3}, {".tif", PixelType::U16, 4},
    {".tif", PixelType::F32, 1}, {".tif", PixelType::F32, 3}, {".TIF", PixelType::F32, 4}, {".npy", PixelType::U16, 1},
    {".npy", PixelType::U16, 3}, {".npy", PixelType::F64, 3}};

TEST(Codecs, LosslessFormatsGiveBackEverySample) {
  ScratchDir dir("gpulab-test-codecs");
  int seed = 0;
  for (const LosslessCase& c : kLossless)
    for (const Shape& s : kShapes)
      for (const int level : {0, 1, 9}) {
        if (c.ext == std::string(".npy") && level != 1) continue;
        SCOPED_TRACE(std::string(c.ext) + " " + describeImage(s.width, s.height, c.channels, c.type) + " level " +
                     std::to_string(level));
        const Image image = randomImage(s.width, s.height, c.channels, c.type, static_cast<unsigned>(++seed), 1000.0);
        const fs::path file = dir / ("a" + std::to_string(seed) + c.ext);
        SaveOptions options;
        options.compressionLevel = level;
        saveImage(image, file, options);
        const Image loaded = loadImage(file);
        ASSERT_EQ(loaded.type(), c.type);
        EXPECT_TRUE(loaded == image);
      }
}

TEST(Codecs, SixteenBitPngKeepsTheLowByte) {
  // Values that differ only in their low byte: an 8-bit path would merge them.
  ScratchDir dir("gpulab-test-codecs");
  Image image(4, 1, 1, PixelType::U16);
  const std::uint16_t values[] = {0x0100, 0x0101, 0x01FF, 0xFFFF};
  for (int x = 0; x < 4; ++x) image.at<std::uint16_t>(x, 0) = values[x];
  saveImage(image, dir / "deep.png");
  const std::string bytes = readBytes(dir / "deep.png");
  ASSERT_GT(bytes.size(), 26u);
  EXPECT_EQ(bytes[24], 16) << "IHDR bit depth";
  const Image loaded = loadImage(dir / "deep.png");
  ASSERT_EQ(loaded.type(), PixelType::U16);
  for (int x = 0; x < 4; ++x) EXPECT_EQ(loaded.at<std::uint16_t>(x, 0), values[x]);
}

TEST(Codecs, CompressionLevelTradesSizeAndIsChecked) {
  ScratchDir dir("gpulab-test-codecs");
  Image image(300, 200, 3, PixelType::U8);  // smooth: compresses
  for (int y = 0; y < 200; ++y)
    for (int x = 0; x < 300; ++x)
      for (int c = 0; c < 3; ++c) image.at<std::uint8_t>(x, y, c) = static_cast<std::uint8_t>((x + 2 * y + 40 * c) / 3);
  for (const char* ext : {".png", ".tif"}) {
    saveImage(image, dir / (std::string("l0") + ext), SaveOptions{.compressionLevel = 0});
    saveImage(image, dir / (std::string("l9") + ext), SaveOptions{.compressionLevel = 9});
    EXPECT_LT(fs::file_size(dir / (std::string("l9") + ext)) * 4, fs::file_size(dir / (std::string("l0") + ext)))
        << ext;
    for (const int level : {-1, 10})
      EXPECT_TRUE(throwsIoError(
          [&] { saveImage(image, dir / (std::string("bad") + ext), SaveOptions{.compressionLevel = level}); }, "",
          {"compression level", "0 to 9"}));
  }
}

TEST(Codecs, LoadingIntoAReusedImageKeepsItsMemory) {
  ScratchDir dir("gpulab-test-codecs");
  for (const char* ext : {".png", ".jpg", ".tif", ".npy"}) {
    SCOPED_TRACE(ext);
    const fs::path a = dir / (std::string("a") + ext), b = dir / (std::string("b") + ext),
                   small = dir / (std::string("small") + ext), large = dir / (std::string("large") + ext);
    saveImage(randomImage(40, 30, 3, PixelType::U8, 1), a);
    saveImage(randomImage(40, 30, 3, PixelType::U8, 2), b);
    saveImage(randomImage(20, 10, 1, PixelType::U8, 3), small);
    saveImage(randomImage(64, 64, 3, PixelType::U8, 4), large);
    Image image = loadImage(a);
    const std::byte* memory = image.data();
    image = loadImage(b, std::move(image));
    EXPECT_EQ(image.data(), memory) << "same size: the same memory";
    EXPECT_EQ(image, loadImage(b));
    image = loadImage(small, std::move(image));
    EXPECT_EQ(image.data(), memory) << "smaller: the same memory";
    EXPECT_EQ(image, loadImage(small));
    image = loadImage(large, std::move(image));
    EXPECT_EQ(image, loadImage(large)) << "larger: a new allocation, the right samples";
  }
}

// ---- JPEG ---------------------------------------------------------------------------------------

/// Four flat quadrants of distinct gray levels, sized in whole 8x8 blocks so JPEG keeps them.
Image quadrants() {
  Image image(32, 16, 1, PixelType::U8);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 32; ++x)
      image.at<std::uint8_t>(x, y) = static_cast<std::uint8_t>((x < 16 ? 20 : 90) + (y < 8 ? 0 : 140));
  return image;
}

/// The JPEG `jpeg` with an EXIF APP1 segment holding orientation `o` right after SOI (big-endian
/// TIFF, as many cameras write).
std::string withExifOrientation(const std::string& jpeg, int o) {
  std::string tiff = std::string("MM\0*\0\0\0\x08", 8);
  tiff += std::string("\0\x01", 2);                    // one entry
  tiff += std::string("\x01\x12\0\x03\0\0\0\x01", 8);  // orientation, SHORT, count 1
  tiff += {0, static_cast<char>(o), 0, 0};
  tiff += std::string(4, '\0');  // no next IFD
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const std::size_t length = payload.size() + 2;
  std::string app1 = {'\xFF', '\xE1', static_cast<char>(length >> 8), static_cast<char>(length & 0xFF)};
  return jpeg.substr(0, 2) + app1 + payload + jpeg.substr(2);
}

TEST(Codecs, JpegOrientationIsAppliedOnLoad) {
  ScratchDir dir("gpulab-test-codecs");
  saveImage(quadrants(), dir / "plain.jpg", 100);
  const std::string plain = readBytes(dir / "plain.jpg");
  // Stored corners TL=20, TR=90, BL=160, BR=230; what a viewer shows at TL, TR, BL, BR for each
  // EXIF orientation (the tag's definition, from the TIFF/EP and EXIF 2.3 tables).
  const int stored[4] = {20, 90, 160, 230};
  enum { TL, TR, BL, BR };
  const int shown[9][4] = {{},
                           {TL, TR, BL, BR},
                           {TR, TL, BR, BL},
                           {BR, BL, TR, TL},
                           {BL, BR, TL, TR},
                           {TL, BL, TR, BR},
                           {BL, TL, BR, TR},
                           {BR, TR, BL, TL},
                           {TR, BR, TL, BL}};
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const fs::path file = dir / ("o" + std::to_string(o) + ".jpg");
    writeBytes(file, withExifOrientation(plain, o));
    const Image loaded = loadImage(file);
    ASSERT_EQ(loaded.channels(), 1) << "a gray JPEG loads as gray";
    const bool turned = o >= 5;
    ASSERT_EQ(loaded.width(), turned ? 16 : 32);
    ASSERT_EQ(loaded.height(), turned ? 32 : 16);
    const int w = loaded.width(), h = loaded.height();
    const int at[4][2] = {{w / 4, h / 4}, {3 * w / 4, h / 4}, {w / 4, 3 * h / 4}, {3 * w / 4, 3 * h / 4}};
    for (int corner = 0; corner < 4; ++corner)
      EXPECT_NEAR(loaded.at<std::uint8_t>(at[corner][0], at[corner][1]), stored[shown[o][corner]], 3)
          << "corner " << corner;
  }
}

TEST(Codecs, JpegQualityReachesTheEncoder) {
  ScratchDir dir("gpulab-test-codecs");
  const Image image = randomImage(64, 48, 3, PixelType::U8, 5);
  saveImage(image, dir / "q20.jpg", SaveOptions{.jpegQuality = 20});
  saveImage(image, dir / "q95.jpg", SaveOptions{.jpegQuality = 95});
  EXPECT_LT(fs::file_size(dir / "q20.jpg"), fs::file_size(dir / "q95.jpg"));
  EXPECT_EQ(loadImage(dir / "q95.jpg").channels(), 3);
  saveImage(randomImage(9, 7, 4, PixelType::U8, 6), dir / "rgba.jpg");
  EXPECT_EQ(loadImage(dir / "rgba.jpg").channels(), 3) << "JPEG drops alpha";
}

// ---- .npy ---------------------------------------------------------------------------------------

TEST(Codecs, NpyUint16AndFloat64) {
  const Image u16 = randomImage(5, 3, 3, PixelType::U16, 9);
  const std::string bytes = encodeNpy(u16);
  EXPECT_NE(bytes.find("'descr': '<u2'"), std::string::npos);
  EXPECT_EQ(decodeNpy(bytes), u16);
  const Image f64 = randomImage(4, 4, 1, PixelType::F64, 10);
  EXPECT_EQ(decodeNpy(encodeNpy(f64)), f64) << "float64, NumPy's default, loads as it is";
}

// ---- what formats hold --------------------------------------------------------------------------

TEST(Codecs, CheckSaveFormatNamesTheFormatsThatHoldTheType) {
  EXPECT_NO_THROW(checkSaveFormat("a.png", PixelType::U16, 3));
  EXPECT_NO_THROW(checkSaveFormat("a.tif", PixelType::F32, 1));
  EXPECT_NO_THROW(checkSaveFormat("a.npy", PixelType::F64, 2));
  EXPECT_TRUE(throwsIoError([] { checkSaveFormat("x.webp", PixelType::U8, 3); }, "x.webp",
                            {"'.webp'", "png, jpg, jpeg, tif, tiff, bmp, tga, pgm, ppm, pnm, npy"}));
  EXPECT_TRUE(
      throwsIoError([] { checkSaveFormat("x.jpg", PixelType::U16, 3); }, "x.jpg", {"u16", ".png, .tif or .npy"}));
  EXPECT_TRUE(throwsIoError([] { checkSaveFormat("x.png", PixelType::F32, 3); }, "x.png", {"f32", ".tif or .npy"}));
  EXPECT_TRUE(throwsIoError([] { checkSaveFormat("x.tif", PixelType::F64, 1); }, "x.tif", {"f64", ".npy"}));
}

// ---- bad files ----------------------------------------------------------------------------------

TEST(CodecsBadInput, TruncatedJpegPngAndTiff) {
  ScratchDir dir("gpulab-test-codecs");
  const Image image = randomImage(61, 43, 3, PixelType::U8, 11);
  for (const char* name : {"t.jpg", "t.png", "t.tif", "t16.png", "t16.tif"}) {
    const bool deep = std::string(name).find("16") != std::string::npos;
    saveImage(deep ? image.convertedTo(PixelType::U16) : image, dir / name, SaveOptions{.compressionLevel = 0});
    const std::string bytes = readBytes(dir / name);
    for (const std::size_t keep : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
      const fs::path cut = dir / ("cut" + std::to_string(keep) + name);
      writeBytes(cut, bytes.substr(0, keep));
      EXPECT_TRUE(loadFails(cut, {"truncated"})) << "kept " << keep << " of " << bytes.size();
    }
  }
}

TEST(CodecsBadInput, CorruptJpegAndTiff) {
  ScratchDir dir("gpulab-test-codecs");
  saveImage(randomImage(40, 24, 3, PixelType::U8, 12), dir / "good.jpg");
  std::string jpg = readBytes(dir / "good.jpg");
  // The first component names quantization table 3, which the file never defines.
  const std::size_t sof = jpg.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  jpg[sof + 12] = '\x03';
  writeBytes(dir / "tables.jpg", jpg);
  EXPECT_TRUE(loadFails(dir / "tables.jpg", {"corrupt"}));
  writeBytes(dir / "noise.tif", std::string("II*\0\x08\0\0\0\xFF\xFF garbage that is no directory", 40));
  EXPECT_TRUE(loadFails(dir / "noise.tif", {"TIFF"}));
}

/// A little-endian TIFF with one gray strip of `data`, and the tags given (sorted, as TIFF wants).
std::string handmadeTiff(std::uint32_t width, std::uint32_t height, std::uint16_t bits, std::uint16_t sampleFormat,
                         std::uint16_t photometric, const std::string& data) {
  struct Entry {
    std::uint16_t tag, type;
    std::uint32_t value;
  };
  const std::uint32_t dataOffset = 8;
  const std::vector<Entry> entries = {
      {256, 4, width},       {257, 4, height},      {258, 3, bits},
      {259, 3, 1},           {262, 3, photometric}, {273, 4, dataOffset},
      {277, 3, 1},           {278, 4, height},      {279, 4, static_cast<std::uint32_t>(data.size())},
      {339, 3, sampleFormat}};
  std::string out = std::string("II*\0", 4);
  const std::uint32_t ifd = dataOffset + static_cast<std::uint32_t>(data.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((ifd >> (8 * i)) & 0xFF);
  out += data;
  const auto put = [&](std::uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  };
  put(static_cast<std::uint32_t>(entries.size()), 2);
  for (const Entry& e : entries) {
    put(e.tag, 2);
    put(e.type, 2);
    put(1, 4);
    put(e.value, 4);  // SHORT values sit in the low bytes (little-endian)
  }
  put(0, 4);
  return out;
}

TEST(CodecsBadInput, DecompressionBombsAreRefusedFromTheHeader) {
  ScratchDir dir("gpulab-test-codecs");
  // Each file is a few hundred bytes and claims 100000 x 100000 pixels (10 GB): refused before
  // any allocation, by the size the header states.
  writeBytes(dir / "bomb.tif", handmadeTiff(100000, 100000, 8, 1, 1, std::string(16, '\x40')));
  EXPECT_TRUE(loadFails(dir / "bomb.tif", {"100000x100000", "exceeds the limit of 32768 pixels a side"}));
  writeBytes(dir / "many.tif", handmadeTiff(20000, 20000, 8, 1, 1, std::string(16, '\x40')));
  EXPECT_TRUE(loadFails(dir / "many.tif", {"20000x20000", "megapixels"}));
  // JPEG frames hold at most 65535 a side.
  saveImage(randomImage(16, 16, 3, PixelType::U8, 13), dir / "small.jpg");
  std::string jpg = readBytes(dir / "small.jpg");
  const std::size_t sof = jpg.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  jpg[sof + 5] = jpg[sof + 6] = jpg[sof + 7] = jpg[sof + 8] = '\xFF';
  writeBytes(dir / "bomb.jpg", jpg);
  EXPECT_TRUE(loadFails(dir / "bomb.jpg", {"65535x65535", "exceeds the limit"}));
  // A well-formed small TIFF of the same layout loads.
  writeBytes(dir / "fine.tif", handmadeTiff(4, 4, 8, 1, 1, std::string(16, '\x40')));
  EXPECT_EQ(loadImage(dir / "fine.tif").at<std::uint8_t>(3, 3), 0x40);
}

TEST(CodecsBadInput, UnsupportedTiffLayoutsAreNamed) {
  ScratchDir dir("gpulab-test-codecs");
  writeBytes(dir / "bits1.tif", handmadeTiff(8, 2, 1, 1, 1, std::string(2, '\x55')));
  EXPECT_TRUE(loadFails(dir / "bits1.tif", {"TIFF layout gpulab does not read", "1-bit"}));
  writeBytes(dir / "signed.tif", handmadeTiff(2, 2, 16, 2, 1, std::string(8, '\x01')));
  EXPECT_TRUE(loadFails(dir / "signed.tif", {"TIFF layout gpulab does not read", "16-bit signed"}));
  writeBytes(dir / "double.tif", handmadeTiff(2, 2, 64, 3, 1, std::string(32, '\0')));
  EXPECT_TRUE(loadFails(dir / "double.tif", {"TIFF layout gpulab does not read", "64-bit float"}));
  writeBytes(dir / "white.tif", handmadeTiff(4, 4, 8, 1, 0, std::string(16, '\x10')));
  EXPECT_TRUE(loadFails(dir / "white.tif", {"TIFF layout gpulab does not read", "white is zero"}));
}

}  // namespace
}  // namespace gpulab
