// Hostile and damaged image files (issue 19): formats by content, never by the extension alone; the
// BMP compressions stb_image decodes correctly and nothing else; a decoded size plausible for the
// bytes present in every format (decompression bombs refused before any large allocation); the
// regressions found by fuzzing; and the user-settable size limits (ImageLimits), per format.
// Every file here is made in the test from a few bytes or from a small image gpulab saved.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
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

void putLe(std::string& s, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)  // bytes past the eighth are zero (a shift by 64 or more is undefined)
    s[at + static_cast<std::size_t>(i)] = i < 8 ? static_cast<char>((v >> (8 * i)) & 0xFF) : '\0';
}
std::string le(std::uint64_t v, int bytes) {
  std::string s(static_cast<std::size_t>(bytes), '\0');
  putLe(s, 0, v, bytes);
  return s;
}

/// A BMP with a 40-byte info header and `pixels` after it.
std::string bmp(std::int32_t width, std::int32_t height, int bits, std::uint32_t compression,
                const std::string& pixels) {
  return "BM" + le(54 + pixels.size(), 4) + le(0, 4) + le(54, 4) + le(40, 4) +
         le(static_cast<std::uint32_t>(width), 4) + le(static_cast<std::uint32_t>(height), 4) + le(1, 2) +
         le(static_cast<std::uint32_t>(bits), 2) + le(compression, 4) + le(pixels.size(), 4) + le(0, 16) + pixels;
}

/// An 18-byte TGA header.
std::string tgaHeader(int mapType, int imageType, int mapLength, int mapBits, int width, int height, int depth) {
  return std::string(1, '\0') + static_cast<char>(mapType) + static_cast<char>(imageType) + le(0, 2) +
         le(static_cast<std::uint32_t>(mapLength), 2) + static_cast<char>(mapBits) + le(0, 4) +
         le(static_cast<std::uint32_t>(width), 2) + le(static_cast<std::uint32_t>(height), 2) +
         static_cast<char>(depth) + '\0';
}

/// Restores the process-wide limits when a test ends, whatever it set.
class LimitsGuard {
 public:
  LimitsGuard() : saved_(imageLimits()) {}
  ~LimitsGuard() { setImageLimits(saved_); }
  LimitsGuard(const LimitsGuard&) = delete;
  LimitsGuard& operator=(const LimitsGuard&) = delete;

 private:
  ImageLimits saved_;
};

// ---- formats by content -------------------------------------------------------------------------

TEST(HostileFiles, OtherFormatsNamedTgaGoToTheirOwnDecoder) {
  ScratchDir dir;
  // The fuzzer's finding: a PNM header reached through a file named .tga (stb_image sniffed it and
  // overflowed a signed int). It is read by gpulab's own PNM reader now, or refused by it.
  writeBytes(dir / "pnm.tga", std::string("P6\n1 1\n255\n\x01\x02\x03", 14));
  const Image pnm = loadImage(dir / "pnm.tga");
  ASSERT_EQ(pnm.channels(), 3);
  EXPECT_EQ(pnm.at<std::uint8_t>(0, 0, 2), 3);
  writeBytes(dir / "overflow.tga", "P6\n4294967296 4294967296\n255\n\x01");
  EXPECT_TRUE(loadFails(dir / "overflow.tga", {"exceeds the limit"}));
  // PNG, JPEG and BMP named .tga load as what they are.
  const Image image = randomImage(5, 3, 3, PixelType::U8, 5);
  for (const char* ext : {".png", ".bmp", ".jpg"}) {
    saveImage(image, dir / (std::string("real") + ext));
    fs::copy_file(dir / (std::string("real") + ext), dir / (std::string("named") + ext + ".tga"));
    const Image got = loadImage(dir / (std::string("named") + ext + ".tga"));
    EXPECT_EQ(got.width(), 5) << ext;
    EXPECT_EQ(got.height(), 3) << ext;
  }
}

TEST(HostileFiles, TgaNeedsAHeaderThatHoldsTogether) {
  ScratchDir dir;
  const std::string pixels(12, '\x40');
  writeBytes(dir / "good.tga", tgaHeader(0, 2, 0, 0, 2, 2, 24) + pixels);
  EXPECT_EQ(loadImage(dir / "good.tga").at<std::uint8_t>(1, 1, 0), 0x40);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"maptype2.tga", tgaHeader(2, 2, 0, 0, 2, 2, 24)},     // colour-map type beyond 1
      {"type4.tga", tgaHeader(0, 4, 0, 0, 2, 2, 24)},        // no image type 4
      {"type0.tga", tgaHeader(0, 0, 0, 0, 2, 2, 24)},        // type 0: no image data
      {"depth7.tga", tgaHeader(0, 2, 0, 0, 2, 2, 7)},        // no 7-bit true colour
      {"graydepth24.tga", tgaHeader(0, 3, 0, 0, 2, 2, 24)},  // gray is 8 or 16 bits
      {"maplength.tga", tgaHeader(0, 2, 5, 24, 2, 2, 24)},   // a palette length without a palette
      {"nopalette.tga", tgaHeader(1, 1, 0, 24, 2, 2, 8)},    // colour-mapped with no entries
      {"mappedrgb.tga", tgaHeader(1, 2, 4, 24, 2, 2, 24)},   // a palette on a true-colour image
      {"zerowidth.tga", tgaHeader(0, 2, 0, 0, 0, 2, 24)},    // no pixels
      {"short.tga", tgaHeader(0, 2, 0, 0, 2, 2, 24).substr(0, 12)}};
  for (const auto& [name, header] : bad) {
    writeBytes(dir / name, header + pixels);
    EXPECT_TRUE(loadFails(dir / name, {"is named .tga but its header is not a TGA header gpulab reads",
                                       "PNG, JPEG, TIFF, BMP, TGA, PNM or .npy"}))
        << name;
  }
  writeBytes(dir / "short.tga", tgaHeader(0, 2, 0, 0, 2, 2, 24).substr(0, 12));
  EXPECT_TRUE(loadFails(dir / "short.tga", {"is truncated", "TGA header"}));
  // Colour-mapped: a 2-entry palette of 24-bit colours, 8-bit indexes; an index beyond it is corrupt.
  const std::string palette = tgaHeader(1, 1, 2, 24, 2, 1, 8) + std::string("\x00\x00\xff\xff\x00\x00", 6);
  writeBytes(dir / "mapped.tga", palette + std::string("\x01\x00", 2));
  const Image mapped = loadImage(dir / "mapped.tga");
  EXPECT_EQ(mapped.at<std::uint8_t>(0, 0, 2), 0xFF);  // entry 1 is BGR (255, 0, 0): blue
  EXPECT_EQ(mapped.at<std::uint8_t>(1, 0, 0), 0xFF);  // entry 0 is BGR (0, 0, 255): red
  writeBytes(dir / "index.tga", palette + std::string("\x01\x02", 2));
  EXPECT_TRUE(loadFails(dir / "index.tga", {"is corrupt", "beyond its 2-entry TGA palette"}));
  // Without the name, a TGA is not recognised: TGA has no signature to go by.
  writeBytes(dir / "good.bin", tgaHeader(0, 2, 0, 0, 2, 2, 24) + pixels);
  EXPECT_TRUE(loadFails(dir / "good.bin", {"is not an image gpulab reads (PNG, JPEG, TIFF, BMP, TGA, PNM or .npy)"}));
}

TEST(HostileFiles, RleTgaBombIsRefusedByItsPackets) {
  ScratchDir dir;
  // 30000 x 8000 gray claimed by two run packets of 128 pixels: the packets do not cover the image.
  writeBytes(dir / "bomb.tga", tgaHeader(0, 11, 0, 0, 30000, 8000, 8) + "\xFF\x10\xFF\x20");
  EXPECT_TRUE(loadFails(dir / "bomb.tga", {"is truncated", "TGA"}));
  // The same packets cover a 16 x 16 image exactly.
  writeBytes(dir / "fine.tga", tgaHeader(0, 11, 0, 0, 16, 16, 8) + "\xFF\x10\xFF\x20");
  const Image fine = loadImage(dir / "fine.tga");
  EXPECT_EQ(fine.at<std::uint8_t>(0, 0), 0x20);  // bottom-up rows: the last packet is the top
  EXPECT_EQ(fine.at<std::uint8_t>(0, 15), 0x10);
}

// ---- BMP: the compressions stb_image reads -----------------------------------------------------

TEST(HostileFiles, BmpWithAnUndefinedCompressionIsRefusedFast) {
  ScratchDir dir;
  // The regression: 70 bytes, compression 2^31 (stb compared it signed and took it for
  // uncompressed), 16384 x 16384 claimed. It loaded as a black photo in 35 s and 3 GB.
  const std::string bomb = bmp(16384, 16384, 24, 0x80000000u, std::string(16, '\0'));
  ASSERT_EQ(bomb.size(), 70u);
  writeBytes(dir / "bomb.bmp", bomb);
  EXPECT_TRUE(loadFails(dir / "bomb.bmp", {"is a BMP gpulab does not read", "compression 2147483648"}));
  for (std::uint32_t compression : {1u, 2u, 4u, 5u, 6u, 11u, 0xFFFFFFFFu}) {
    const std::string number = std::to_string(compression);
    const fs::path path = dir / (number + ".bmp");
    writeBytes(path, bmp(2, 2, 8, compression, std::string(1024 + 8, '\0')));
    EXPECT_TRUE(loadFails(path, {"is a BMP gpulab does not read", std::string("compression ").append(number)}));
  }
  // Bit fields need 16 or 32 bits a pixel.
  writeBytes(dir / "fields24.bmp", bmp(2, 2, 24, 3, std::string(16, '\0')));
  EXPECT_TRUE(loadFails(dir / "fields24.bmp", {"compression 3", "bit fields"}));
  // Depths BMP does not have.
  writeBytes(dir / "depth7.bmp", bmp(2, 2, 7, 0, std::string(16, '\0')));
  EXPECT_TRUE(loadFails(dir / "depth7.bmp", {"is corrupt", "7 bits a pixel"}));
  // Uncompressed and claiming more rows than the file holds: truncated, before any allocation.
  writeBytes(dir / "short.bmp", bmp(16384, 16384, 24, 0, std::string(16, '\0')));
  EXPECT_TRUE(loadFails(dir / "short.bmp", {"is truncated", "promises"}));
  // What stb decodes correctly still loads: 24-bit uncompressed, bottom-up.
  writeBytes(dir / "fine.bmp", bmp(1, 2, 24, 0, std::string("\x01\x02\x03\0\x04\x05\x06\0", 8)));
  const Image fine = loadImage(dir / "fine.bmp");
  EXPECT_EQ(fine.at<std::uint8_t>(0, 1, 0), 3);  // BGR stored; the first row stored is the bottom one
  EXPECT_EQ(fine.at<std::uint8_t>(0, 0, 2), 4);
}

// ---- JPEG: warnings about the data are errors, and the size is bounded by the data ------------------

/// Where the entropy-coded data of the first scan starts and ends (the EOI marker) in a file
/// gpulab's encoder wrote (one scan, no restart markers).
std::pair<std::size_t, std::size_t> scanData(const std::string& jpg) {
  const std::size_t sos = jpg.find("\xFF\xDA");
  const std::size_t start =
      sos + 2 + (static_cast<std::uint8_t>(jpg[sos + 2]) << 8 | static_cast<std::uint8_t>(jpg[sos + 3]));
  return {start, jpg.size() - 2};
}

TEST(HostileFiles, JpegBombIsRefusedBeforeDecoding) {
  ScratchDir dir;
  // The regression: a JPEG of a few hundred bytes whose frame header claims 16000 x 16000.
  // libjpeg-turbo used to decode 34 s of garbage from it (exit 0, 2.9 GB).
  saveImage(randomImage(16, 16, 3, PixelType::U8, 21), dir / "small.jpg");
  std::string jpg = readBytes(dir / "small.jpg");
  const std::size_t sof = jpg.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  jpg[sof + 5] = '\x3E';  // height 0x3E80 = 16000
  jpg[sof + 6] = '\x80';
  jpg[sof + 7] = '\x3E';  // width 16000
  jpg[sof + 8] = '\x80';
  writeBytes(dir / "bomb.jpg", jpg);
  EXPECT_LT(jpg.size(), 1500u);
  EXPECT_TRUE(loadFails(dir / "bomb.jpg", {"16000x16000", "bytes of compressed image data can hold"}));
  // 100 x 100 from the same data passes the bound, and the decoder finds the data too short.
  jpg[sof + 5] = '\0';
  jpg[sof + 6] = 'd';
  jpg[sof + 7] = '\0';
  jpg[sof + 8] = 'd';
  writeBytes(dir / "short.jpg", jpg);
  EXPECT_TRUE(loadFails(dir / "short.jpg", {"is truncated or corrupt", "libjpeg-turbo", "Corrupt JPEG data"}));
}

TEST(HostileFiles, JpegDataDamageIsAnErrorNotAGreyImage) {
  ScratchDir dir;
  const Image image = randomImage(64, 48, 3, PixelType::U8, 22);
  saveImage(image, dir / "good.jpg");
  const std::string jpg = readBytes(dir / "good.jpg");
  const auto [start, end] = scanData(jpg);
  ASSERT_LT(start + 100, end);
  // Half the scan, then EOI: every marker is in place, the data runs out.
  writeBytes(dir / "half.jpg", jpg.substr(0, start + (end - start) / 2) + "\xFF\xD9");
  EXPECT_TRUE(loadFails(dir / "half.jpg", {"is truncated or corrupt", "libjpeg-turbo"}));
  // A restart marker where none belongs: "premature end of data segment".
  std::string marker = jpg;
  marker.insert(start + (end - start) / 3, "\xFF\xD0");
  writeBytes(dir / "marker.jpg", marker);
  EXPECT_TRUE(loadFails(dir / "marker.jpg", {"is truncated or corrupt", "Corrupt JPEG data"}));
  // Bytes between two header segments (cameras write such): a warning libjpeg-turbo reads past, and
  // the image is whole, so it loads exactly as the file without them.
  std::string extraneous = jpg;
  const std::size_t dqt = extraneous.find("\xFF\xDB");
  ASSERT_NE(dqt, std::string::npos);
  extraneous.insert(dqt, "\x12\x34\x56");
  writeBytes(dir / "extraneous.jpg", extraneous);
  const Image a = loadImage(dir / "good.jpg"), b = loadImage(dir / "extraneous.jpg");
  ASSERT_EQ(a.sizeBytes(), b.sizeBytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.sizeBytes()), 0);
}

TEST(HostileFiles, JpegHuffmanCountsPast256AreAnError) {
  ScratchDir dir;
  // The fuzzer's stb_image finding: a Huffman table whose 16 code counts sum past 256 (stb wrote
  // beyond a 257-byte array). libjpeg-turbo decodes JPEG now and must refuse such a table cleanly.
  saveImage(randomImage(16, 16, 1, PixelType::U8, 23), dir / "good.jpg");
  std::string jpg = readBytes(dir / "good.jpg");
  std::string counts(16, '\0');
  counts[7] = static_cast<char>(200);  // 200 codes of 8 bits and 100 of 9: 300 codes
  counts[8] = static_cast<char>(100);
  std::string symbols;
  for (int i = 0; i < 300; ++i) symbols += static_cast<char>(i & 0xFF);
  const std::string body = std::string(1, '\x10') + counts + symbols;  // AC table 0
  const std::string dht = std::string("\xFF\xC4", 2) + static_cast<char>((body.size() + 2) >> 8) +
                          static_cast<char>((body.size() + 2) & 0xFF) + body;
  const std::size_t firstDht = jpg.find("\xFF\xC4");
  ASSERT_NE(firstDht, std::string::npos);
  jpg.insert(firstDht, dht);
  writeBytes(dir / "huffman.jpg", jpg);
  EXPECT_TRUE(loadFails(dir / "huffman.jpg", {"is corrupt", "libjpeg-turbo", "Huffman"}));
}

// ---- PNG, TIFF, PNM: the size the header claims against the bytes present -------------------------

std::string pngChunk(const std::string& type, const std::string& data) {
  std::string crcInput = type + data;
  std::uint32_t crc = 0xFFFFFFFFu;
  for (char ch : crcInput) {
    crc ^= static_cast<std::uint8_t>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc = ~crc;
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((data.size() >> shift) & 0xFF);
  out += crcInput;
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((crc >> shift) & 0xFF);
  return out;
}

TEST(HostileFiles, PngSizeMustFitItsCompressedData) {
  ScratchDir dir;
  saveImage(randomImage(40, 30, 3, PixelType::U8, 24), dir / "good.png");
  const std::string png = readBytes(dir / "good.png");
  const std::size_t idat = png.find("IDAT") - 4;
  const std::size_t length = static_cast<std::uint8_t>(png[idat + 2]) << 8 | static_cast<std::uint8_t>(png[idat + 3]);
  const std::string head = png.substr(0, idat), idatData = png.substr(idat + 8, length);
  // IDAT cut short inside valid chunks with valid CRCs: libspng finds the stream incomplete.
  writeBytes(dir / "cut.png", head + pngChunk("IDAT", idatData.substr(0, idatData.size() / 2)) + pngChunk("IEND", ""));
  EXPECT_TRUE(loadFails(dir / "cut.png", {"is truncated or corrupt", "libspng"}));
  // A header claiming 16000 x 16000 RGB over the same data: 768 MB cannot come from a few KB of deflate.
  std::string bomb = head;
  const std::size_t ihdr = bomb.find("IHDR");
  std::string ihdrData = bomb.substr(ihdr + 4, 13);
  ihdrData[0] = ihdrData[4] = 0;
  ihdrData[1] = ihdrData[5] = 0;
  ihdrData[2] = ihdrData[6] = 0x3E;
  ihdrData[3] = ihdrData[7] = static_cast<char>(0x80);
  bomb = bomb.substr(0, ihdr - 4) + pngChunk("IHDR", ihdrData) + bomb.substr(ihdr + 4 + 13 + 4);
  writeBytes(dir / "bomb.png", bomb + pngChunk("IDAT", idatData) + pngChunk("IEND", ""));
  EXPECT_TRUE(loadFails(dir / "bomb.png", {"16000x16000", "bytes of compressed image data can hold"}));
}

/// A little-endian TIFF: one uncompressed (or `compression`) strip of `stripBytes` claimed at
/// `stripOffset`, the data following the header.
std::string tiff(std::uint32_t width, std::uint32_t height, std::uint16_t compression, std::uint32_t stripOffset,
                 std::uint32_t stripBytes, const std::string& data) {
  struct Entry {
    std::uint16_t tag, type;
    std::uint32_t value;
  };
  const std::vector<Entry> entries = {{256, 4, width},       {257, 4, height}, {258, 3, 8},
                                      {259, 3, compression}, {262, 3, 1},      {273, 4, stripOffset},
                                      {277, 3, 1},           {278, 4, height}, {279, 4, stripBytes}};
  std::string out = std::string("II*\0", 4) + le(8 + data.size(), 4) + data + le(entries.size(), 2);
  for (const Entry& e : entries) out += le(e.tag, 2) + le(e.type, 2) + le(1, 4) + le(e.value, 4);
  return out + le(0, 4);
}

TEST(HostileFiles, TiffStripsMustHoldTheImage) {
  ScratchDir dir;
  const std::string data(64, '\x33');
  writeBytes(dir / "fine.tif", tiff(8, 8, 1, 8, 64, data));
  EXPECT_EQ(loadImage(dir / "fine.tif").at<std::uint8_t>(7, 7), 0x33);
  // Uncompressed: the strip holds 64 bytes, the header claims 4000 x 4000.
  writeBytes(dir / "short.tif", tiff(4000, 4000, 1, 8, 64, data));
  EXPECT_TRUE(loadFails(dir / "short.tif", {"is truncated"}));
  // Deflate: 64 bytes can become at most ~66 KB, not 16 MB.
  writeBytes(dir / "deflate.tif", tiff(4000, 4000, 8, 8, 64, data));
  EXPECT_TRUE(loadFails(dir / "deflate.tif", {"is truncated or corrupt", "bytes of strips can hold"}));
  // A strip beyond the end of the file (libtiff replaces the count by the image's size, 256 bytes,
  // which the file does not hold either).
  writeBytes(dir / "beyond.tif", tiff(16, 16, 1, 8, 6400, data));
  EXPECT_TRUE(loadFails(dir / "beyond.tif", {"is truncated", "strip 0"}));
}

TEST(HostileFiles, BinaryPnmHasExactlyTheBytesItsHeaderStates) {
  ScratchDir dir;
  writeBytes(dir / "exact.pgm", "P5\n2 1\n255\nab");
  EXPECT_EQ(loadImage(dir / "exact.pgm").at<std::uint8_t>(1, 0), 'b');
  writeBytes(dir / "newline.pgm", "P5\n2 1\n255\nab\n");  // trailing white space is harmless
  EXPECT_EQ(loadImage(dir / "newline.pgm").at<std::uint8_t>(1, 0), 'b');
  writeBytes(dir / "two.pgm", "P5\n2 1\n255\nabP5\n1 1\n255\nc");  // a multi-image file: the first image
  EXPECT_EQ(loadImage(dir / "two.pgm").width(), 2);
  writeBytes(dir / "junk.pgm", "P5\n2 1\n255\nabcdef");
  EXPECT_TRUE(loadFails(dir / "junk.pgm", {"is corrupt", "4 bytes follow"}));
  writeBytes(dir / "short.pgm", "P5\n2 2\n255\nabc");
  EXPECT_TRUE(loadFails(dir / "short.pgm", {"is truncated"}));
}

// ---- user-settable limits --------------------------------------------------------------------------

TEST(ImageLimits, DefaultsAreTheHardMaximum) {
  if (std::getenv("GPULAB_MAX_IMAGE_SIDE") != nullptr || std::getenv("GPULAB_MAX_IMAGE_PIXELS") != nullptr)
    GTEST_SKIP() << "a GPULAB_MAX_IMAGE_* variable is set in this environment";
  EXPECT_EQ(imageLimitsFromEnvironment(), ImageLimits{});
  EXPECT_EQ(ImageLimits{}.maxSide, kMaxImageDimension);
  EXPECT_EQ(ImageLimits{}.maxPixels, kMaxImagePixels);
}

TEST(ImageLimits, OutOfRangeValuesAreRefusedInOneSentence) {
  LimitsGuard guard;
  for (const ImageLimits& bad : {ImageLimits{0, 100}, ImageLimits{kMaxImageDimension + 1, 100}, ImageLimits{100, 0},
                                 ImageLimits{100, kMaxImagePixels + 1}, ImageLimits{-5, 100}}) {
    EXPECT_THROW(setImageLimits(bad), std::invalid_argument) << bad.maxSide << " " << bad.maxPixels;
  }
  for (const char* text : {"", "0", "-3", "12a", "1e3", " 5", "32769", "99999999999999999999"}) {
    try {
      parseImageLimit(text, kMaxImageDimension, "--max-image-side");
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--max-image-side"), std::string::npos) << message;
      EXPECT_NE(message.find("whole number from 1 to 32768"), std::string::npos) << message;
    }
  }
  EXPECT_EQ(parseImageLimit("32768", kMaxImageDimension, "x"), 32768);
  EXPECT_EQ(parseImageLimit("007", kMaxImageDimension, "x"), 7);
}

TEST(ImageLimits, EnvironmentVariablesSetTheStartingValues) {
  ::setenv("GPULAB_MAX_IMAGE_SIDE", "640", 1);
  ::setenv("GPULAB_MAX_IMAGE_PIXELS", "100000", 1);
  const ImageLimits fromEnvironment = imageLimitsFromEnvironment();
  EXPECT_EQ(fromEnvironment.maxSide, 640);
  EXPECT_EQ(fromEnvironment.maxPixels, 100000);
  ::setenv("GPULAB_MAX_IMAGE_PIXELS", "lots", 1);
  try {
    imageLimitsFromEnvironment();
    ADD_FAILURE() << "a malformed variable was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("GPULAB_MAX_IMAGE_PIXELS"), std::string::npos) << e.what();
  }
  ::unsetenv("GPULAB_MAX_IMAGE_SIDE");
  ::unsetenv("GPULAB_MAX_IMAGE_PIXELS");
  EXPECT_EQ(imageLimitsFromEnvironment(), ImageLimits{});
}

TEST(ImageLimits, EveryFormatIsRefusedFromItsHeaderNamingTheLimit) {
  LimitsGuard guard;
  ScratchDir dir;
  const Image rgb = randomImage(40, 30, 3, PixelType::U8, 25);
  for (const char* name : {"a.png", "a.jpg", "a.tif", "a.bmp", "a.tga", "a.ppm", "a.npy"}) {
    saveImage(rgb, dir / name);
    setImageLimits({32, kMaxImagePixels});
    EXPECT_TRUE(loadFails(dir / name, {"40x30", "exceeds the limit of 32 pixels a side", "--max-image-side",
                                       "GPULAB_MAX_IMAGE_SIDE", "up to 32768"}))
        << name;
    setImageLimits({kMaxImageDimension, 1000});
    EXPECT_TRUE(loadFails(
        dir / name, {"40x30", "exceeds the limit of 1000 pixels", "--max-image-pixels", "GPULAB_MAX_IMAGE_PIXELS"}))
        << name;
    setImageLimits({40, 1200});  // exactly at both limits: loads
    EXPECT_EQ(loadImage(dir / name).width(), 40) << name;
  }
  // At the defaults, the refusal says the limit is gpulab's largest.
  setImageLimits({});
  saveImage(rgb, dir / "b.png");
  std::string png = readBytes(dir / "b.png");
  const std::size_t ihdr = png.find("IHDR");
  std::string ihdrData = png.substr(ihdr + 4, 13);
  ihdrData[1] = 1;  // width 0x00010028 = 65576
  writeBytes(dir / "wide.png", png.substr(0, ihdr - 4) + pngChunk("IHDR", ihdrData) + png.substr(ihdr + 4 + 13 + 4));
  EXPECT_TRUE(loadFails(dir / "wide.png", {"exceeds the limit of 32768 pixels a side", "gpulab's largest"}));
}

TEST(ImageLimits, LoweredLimitsLeaveSmallerImagesAlone) {
  LimitsGuard guard;
  ScratchDir dir;
  setImageLimits({64, 64 * 64});
  const Image image = randomImage(64, 64, 1, PixelType::U8, 26);
  saveImage(image, dir / "ok.png");
  const Image got = loadImage(dir / "ok.png");
  ASSERT_EQ(got.sizeBytes(), image.sizeBytes());
  EXPECT_EQ(std::memcmp(got.data(), image.data(), image.sizeBytes()), 0);
  EXPECT_EQ(imageLimits(), (ImageLimits{64, 64 * 64}));
}

}  // namespace
}  // namespace gpulab
