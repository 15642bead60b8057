// Image I/O: round trips through every format on odd sizes, .npy bytes exactly as numpy.save writes
// them, and every kind of bad input (missing, empty, truncated, corrupt, unsupported, too large),
// each of which must fail with one sentence naming the file. CPU only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/image.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/gpu_test.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::imagesNear;
using test::randomImage;

// ---- helpers ------------------------------------------------------------------------------------

/// A fresh directory for one test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ =
        fs::temp_directory_path() / ("gpulab-test-io-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  /// The names of the files in the directory, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void writeFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// Passes when `action` throws ImageIoError whose message is one line, names `file` (unless empty)
/// and contains every one of `parts`.
::testing::AssertionResult failsWith(const std::function<void()>& action, const std::string& file,
                                     std::initializer_list<std::string_view> parts) {
  std::string message;
  try {
    action();
    return ::testing::AssertionFailure() << "no exception was thrown";
  } catch (const ImageIoError& e) {
    message = e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another type than ImageIoError: " << e.what();
  }
  if (message.find('\n') != std::string::npos)
    return ::testing::AssertionFailure() << "message is not one line: " << message;
  if (!file.empty() && message.find(file) == std::string::npos)
    return ::testing::AssertionFailure() << "message does not name " << file << ": " << message;
  for (std::string_view part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << part << "\": " << message;
  return ::testing::AssertionSuccess() << message;
}

::testing::AssertionResult loadFails(const fs::path& path, std::initializer_list<std::string_view> parts) {
  return failsWith([&] { loadImage(path); }, path.string(), parts);
}

std::uint32_t bigEndian32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | static_cast<std::uint8_t>(s[at + static_cast<std::size_t>(i)]);
  return v;
}
void putBigEndian32(std::string& s, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xFF);
}
void patchLittleEndian(std::string& s, std::size_t at, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

/// Bitwise CRC-32, written independently of the engine's table-driven one.
std::uint32_t referenceCrc32(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (char ch : bytes) {
    crc ^= static_cast<std::uint8_t>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string pngChunk(std::string_view type, std::string_view data) {
  std::string out;
  putBigEndian32(out, static_cast<std::uint32_t>(data.size()));
  std::string body = std::string(type) + std::string(data);
  out += body;
  putBigEndian32(out, referenceCrc32(body));
  return out;
}

/// zlib stream of stored (uncompressed) blocks: lets the tests build PNGs without any encoder.
std::string zlibStored(std::string_view raw) {
  std::string out = "\x78\x01";
  std::size_t pos = 0;
  do {
    const std::size_t n = std::min<std::size_t>(raw.size() - pos, 65535);
    out += static_cast<char>(pos + n == raw.size() ? 1 : 0);
    const std::size_t lengths = out.size();
    out.append(4, '\0');
    patchLittleEndian(out, lengths, static_cast<std::uint32_t>(n | (~n & 0xFFFF) << 16), 4);
    out.append(raw.substr(pos, n));
    pos += n;
  } while (pos < raw.size());
  std::uint32_t a = 1, b = 0;
  for (char ch : raw) {
    a = (a + static_cast<std::uint8_t>(ch)) % 65521;
    b = (b + a) % 65521;
  }
  putBigEndian32(out, b << 16 | a);
  return out;
}

/// A PNG built by hand: `rows` holds the raw samples of each row (no filter byte, it is added here).
std::string handmadePng(std::uint32_t width, std::uint32_t height, int bitDepth, int colorType,
                        const std::vector<std::string>& rows, const std::string& extraChunks = {}) {
  std::string ihdr;
  putBigEndian32(ihdr, width);
  putBigEndian32(ihdr, height);
  ihdr += {static_cast<char>(bitDepth), static_cast<char>(colorType), 0, 0, 0};
  std::string raw;
  for (const std::string& row : rows) raw += '\0' + row;
  return std::string("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", ihdr) + extraChunks +
         pngChunk("IDAT", zlibStored(raw)) + pngChunk("IEND", "");
}

/// What loading gives for `image` after a format that stores `loadedChannels`: gray expands to RGB,
/// RGBA loses its alpha.
Image expectedAfter(const Image& image, int loadedChannels) {
  if (loadedChannels == image.channels()) return image;
  Image out(image.width(), image.height(), loadedChannels, PixelType::U8);
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x)
      for (int c = 0; c < loadedChannels; ++c)
        out.at<std::uint8_t>(x, y, c) = image.at<std::uint8_t>(x, y, image.channels() == 1 ? 0 : c);
  return out;
}

// ---- 8-bit formats: exact round trips -----------------------------------------------------------

struct Size {
  int width, height;
};
constexpr Size kSizes[] = {{1, 1}, {2, 3}, {13, 12}, {257, 131}};

struct CodecCase {
  const char* file;
  int channels;
  int loadedChannels;
};
// What each format keeps: BMP has no gray (stb_image_write stores it as RGB), PGM/PPM/PNM have no alpha.
constexpr CodecCase kLosslessCases[] = {
    {"a.png", 1, 1}, {"a.png", 3, 3}, {"a.png", 4, 4}, {"UPPER.PNG", 3, 3}, {"a.bmp", 1, 3}, {"a.bmp", 3, 3},
    {"a.bmp", 4, 4}, {"a.tga", 1, 1}, {"a.tga", 3, 3}, {"a.tga", 4, 4},     {"a.pgm", 1, 1}, {"a.ppm", 1, 3},
    {"a.ppm", 3, 3}, {"a.ppm", 4, 3}, {"a.pnm", 1, 1}, {"a.pnm", 3, 3},     {"a.pnm", 4, 3}};

class LosslessRoundTrip : public ::testing::TestWithParam<std::tuple<CodecCase, Size>> {};

TEST_P(LosslessRoundTrip, LoadsExactlyWhatWasSaved) {
  const auto [codec, size] = GetParam();
  ScratchDir dir;
  Image image = randomImage(size.width, size.height, codec.channels, PixelType::U8,
                            static_cast<unsigned>(size.width * 31 + codec.channels));
  // stb_image reads a BMP whose alpha is zero everywhere as opaque; keep one pixel opaque so the
  // random alpha cannot be all zero on the 1x1 image.
  if (codec.channels == 4) image.at<std::uint8_t>(0, 0, 3) = 255;
  const fs::path file = dir / codec.file;
  saveImage(image, file);
  const Image loaded = loadImage(file);
  EXPECT_TRUE(imagesNear(expectedAfter(image, codec.loadedChannels), loaded, 0.0));
}

INSTANTIATE_TEST_SUITE_P(Formats, LosslessRoundTrip,
                         ::testing::Combine(::testing::ValuesIn(kLosslessCases), ::testing::ValuesIn(kSizes)),
                         [](const auto& p) {
                           const CodecCase codec = std::get<0>(p.param);
                           const Size size = std::get<1>(p.param);
                           std::string file = codec.file;
                           for (char& ch : file)
                             if (ch == '.') ch = '_';
                           return file + "_c" + std::to_string(codec.channels) + "_" + std::to_string(size.width) +
                                  "x" + std::to_string(size.height);
                         });

/// A smooth image, as photos are: JPEG is built for these and loses little.
Image smoothImage(int width, int height, int channels) {
  Image image(width, height, channels, PixelType::U8);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        image.at<std::uint8_t>(x, y, c) =
            static_cast<std::uint8_t>(std::lround(127.5 + 100.0 * std::sin(x / 17.0 + c) * std::cos(y / 13.0 - c)));
  return image;
}

double meanAbsoluteError(const Image& a, const Image& b) {
  double sum = 0;
  const auto sa = a.samples<std::uint8_t>(), sb = b.samples<std::uint8_t>();
  for (std::size_t i = 0; i < sa.size(); ++i) sum += std::abs(static_cast<double>(sa[i]) - static_cast<double>(sb[i]));
  return sum / static_cast<double>(sa.size());
}

TEST(ImageIo, JpegRoundTripIsCloseGrayStaysGray) {
  ScratchDir dir;
  for (const int channels : {1, 3, 4}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    const Image image = smoothImage(257, 131, channels);
    const int stored = channels == 1 ? 1 : 3;
    const Image expected = expectedAfter(image, stored);  // gray stays gray, alpha goes
    for (const char* name : {"a.jpg", "b.JPEG"}) {
      saveImage(image, dir / name, 95);
      const Image loaded = loadImage(dir / name);
      ASSERT_EQ(loaded.channels(), stored);
      ASSERT_EQ(loaded.width(), 257);
      ASSERT_EQ(loaded.height(), 131);
      EXPECT_LT(meanAbsoluteError(expected, loaded), 1.0);  // measured 0.19 gray, 0.61 RGB
      EXPECT_TRUE(imagesNear(expected, loaded, 8.0));       // measured at most 4
    }
  }
  // Lower quality loses more: the quality argument reaches the encoder.
  const Image image = smoothImage(257, 131, 3);
  saveImage(image, dir / "q10.jpg", 10);
  saveImage(image, dir / "q95.jpg", 95);
  EXPECT_LT(fs::file_size(dir / "q10.jpg"), fs::file_size(dir / "q95.jpg"));
  EXPECT_GT(meanAbsoluteError(image, loadImage(dir / "q10.jpg")), meanAbsoluteError(image, loadImage(dir / "q95.jpg")));
  for (const int quality : {0, 101, -5})
    EXPECT_TRUE(failsWith([&] { saveImage(image, dir / "bad.jpg", quality); }, (dir / "bad.jpg").string(),
                          {"quality", "1 to 100"}));
}

TEST(ImageIo, LoadsTheBundledPhoto) {
  const Image coffee = loadImage(fs::path(GPULAB_SOURCE_DIR) / "resources/photos/coffee.png");
  ASSERT_EQ(coffee.width(), 600);
  ASSERT_EQ(coffee.height(), 400);
  ASSERT_EQ(coffee.channels(), 3);
  ASSERT_EQ(coffee.type(), PixelType::U8);
  // A real photo: many distinct values, not a blank or constant image.
  std::vector<int> histogram(256);
  for (std::uint8_t v : coffee.samples<std::uint8_t>()) ++histogram[v];
  EXPECT_GT(std::count_if(histogram.begin(), histogram.end(), [](int n) { return n > 0; }), 200);
  ScratchDir dir;
  saveImage(coffee, dir / "coffee.png");
  EXPECT_EQ(loadImage(dir / "coffee.png"), coffee);
  saveImage(coffee, dir / "coffee.npy");
  EXPECT_EQ(loadImage(dir / "coffee.npy"), coffee);
}

TEST(ImageIo, HandmadePngsIndependentOfAnyEncoder) {
  ScratchDir dir;
  // 8-bit gray with every value, 16-bit gray (loaded as u16, every bit), gray + alpha (RGBA).
  std::vector<std::string> gray8(3), gray16(3), grayAlpha(3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) {
      const int v = (y * 5 + x) * 17;
      gray8[y] += static_cast<char>(v);
      gray16[y] += {static_cast<char>(v), static_cast<char>(255 - v)};
      grayAlpha[y] += {static_cast<char>(v), static_cast<char>(x * 60)};
    }
  writeFile(dir / "gray8.png", handmadePng(5, 3, 8, 0, gray8));
  writeFile(dir / "gray16.png", handmadePng(5, 3, 16, 0, gray16));
  writeFile(dir / "ga.png", handmadePng(5, 3, 8, 4, grayAlpha));
  const Image g8 = loadImage(dir / "gray8.png"), g16 = loadImage(dir / "gray16.png"), ga = loadImage(dir / "ga.png");
  ASSERT_EQ(g8.channels(), 1);
  ASSERT_EQ(g16.channels(), 1);
  ASSERT_EQ(g16.type(), PixelType::U16);
  ASSERT_EQ(ga.channels(), 4);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) {
      const int v = (y * 5 + x) * 17;
      EXPECT_EQ(g8.at<std::uint8_t>(x, y), v);
      EXPECT_EQ(g16.at<std::uint16_t>(x, y), v * 256 + 255 - v);
      for (int c = 0; c < 3; ++c) EXPECT_EQ(ga.at<std::uint8_t>(x, y, c), v);
      EXPECT_EQ(ga.at<std::uint8_t>(x, y, 3), x * 60);
    }
}

TEST(ImageIo, ReadsHandmadeTgaPnmAndTopDownBmp) {
  ScratchDir dir;
  const Image rgb = randomImage(7, 5, 3, PixelType::U8, 11);
  // Uncompressed TGA, 24-bit BGR, rows bottom-up (descriptor bit 5 clear).
  std::string tga(18, '\0');
  tga[2] = 2;
  patchLittleEndian(tga, 12, 7, 2);
  patchLittleEndian(tga, 14, 5, 2);
  tga[16] = 24;
  for (int y = 4; y >= 0; --y)
    for (int x = 0; x < 7; ++x)
      for (int c = 2; c >= 0; --c) tga += static_cast<char>(rgb.at<std::uint8_t>(x, y, c));
  writeFile(dir / "raw.tga", tga);
  EXPECT_TRUE(imagesNear(rgb, loadImage(dir / "raw.tga"), 0.0));
  writeFile(dir / "short.tga", tga.substr(0, tga.size() - 1));
  EXPECT_TRUE(loadFails(dir / "short.tga", {"is truncated"}));

  // 16-bit PGM (big-endian samples) with a comment in its header, and an 8-bit PGM with maxval 100:
  // samples are scaled from 0..maxval to 0..255.
  std::string pgm = "P5\n# made by hand\n3 2\n65535\n";
  std::vector<int> deepValues;
  for (int i = 0; i < 6; ++i) {
    deepValues.push_back(i * 12345 + 0x7F);
    pgm += {static_cast<char>(deepValues.back() >> 8), static_cast<char>(deepValues.back() & 0xFF)};
  }
  writeFile(dir / "deep.pgm", pgm);
  const Image deep = loadImage(dir / "deep.pgm");
  ASSERT_EQ(deep.channels(), 1);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(deep.at<std::uint8_t>(i % 3, i / 3), std::lround(deepValues[i] * 255.0 / 65535.0));
  writeFile(dir / "hundred.pgm", std::string("P5 3 1 100\n\x00\x32\x64", 14));
  const Image hundred = loadImage(dir / "hundred.pgm");
  ASSERT_EQ(hundred.width(), 3);
  EXPECT_EQ(hundred.at<std::uint8_t>(0, 0), 0);
  EXPECT_EQ(hundred.at<std::uint8_t>(1, 0), 128);
  EXPECT_EQ(hundred.at<std::uint8_t>(2, 0), 255);
  writeFile(dir / "deep_short.pgm", pgm.substr(0, pgm.size() - 1));
  EXPECT_TRUE(loadFails(dir / "deep_short.pgm", {"is truncated"}));

  // A BMP whose negative height stores the rows top-down.
  saveImage(rgb, dir / "up.bmp");
  std::string bmp = readFile(dir / "up.bmp");
  const std::size_t offset = static_cast<std::uint8_t>(bmp[10]);
  const std::size_t rowBytes = (7 * 3 + 3) / 4 * 4;
  std::string rows = bmp.substr(offset);
  for (int y = 0; y < 5; ++y)
    rows.replace(static_cast<std::size_t>(y) * rowBytes, rowBytes,
                 bmp.substr(offset + static_cast<std::size_t>(4 - y) * rowBytes, rowBytes));
  bmp.replace(offset, rows.size(), rows);
  patchLittleEndian(bmp, 22, static_cast<std::uint32_t>(-5), 4);
  writeFile(dir / "down.bmp", bmp);
  EXPECT_TRUE(imagesNear(rgb, loadImage(dir / "down.bmp"), 0.0));
}

// ---- .npy ---------------------------------------------------------------------------------------

class NpyRoundTrip : public ::testing::TestWithParam<std::tuple<PixelType, int, Size>> {};

TEST_P(NpyRoundTrip, BitExactThroughFileAndMemory) {
  const auto [type, channels, size] = GetParam();
  ScratchDir dir;
  const Image image =
      randomImage(size.width, size.height, channels, type, static_cast<unsigned>(size.height + channels), 1e3);
  saveImage(image, dir / "a.npy");
  EXPECT_EQ(loadImage(dir / "a.npy"), image);
  const std::string bytes = encodeNpy(image);
  EXPECT_EQ(bytes, readFile(dir / "a.npy"));
  EXPECT_EQ(bytes.size() % 64, image.sizeBytes() % 64) << "data must start at a multiple of 64 bytes";
  EXPECT_EQ(decodeNpy(bytes), image);
}

INSTANTIATE_TEST_SUITE_P(TypesChannelsSizes, NpyRoundTrip,
                         ::testing::Combine(::testing::Values(PixelType::U8, PixelType::F32, PixelType::F64),
                                            ::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kSizes)),
                         [](const auto& p) {
                           const Size size = std::get<2>(p.param);
                           return std::string(toString(std::get<0>(p.param))) + "_c" +
                                  std::to_string(std::get<1>(p.param)) + "_" + std::to_string(size.width) + "x" +
                                  std::to_string(size.height);
                         });

TEST(Npy, SpecialFloatValuesSurviveBitExactly) {
  Image image(3, 2, 1, PixelType::F64);
  const double values[] = {std::numeric_limits<double>::quiet_NaN(),  std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),  -0.0,
                           std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()};
  std::copy(std::begin(values), std::end(values), image.samples<double>().begin());
  EXPECT_EQ(decodeNpy(encodeNpy(image)), image);
  EXPECT_EQ(decodeNpy(encodeNpy(image.convertedTo(PixelType::F32))), image.convertedTo(PixelType::F32));
}

/// The header numpy.save writes for a C-ordered array of this dtype and shape, padded to 128 bytes.
std::string numpyHeader(std::string_view descr, std::string_view shape) {
  std::string dict =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + std::string(shape) + ", }";
  return std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
}

template <class T>
std::string rawSamples(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

TEST(Npy, EncodesExactlyAsNumpySave) {
  // Byte for byte what numpy 1.24's np.save writes for np.arange(6, dtype=np.float32).reshape(2, 3):
  const std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') +
                               "\n" + rawSamples<float>({0, 1, 2, 3, 4, 5});
  ASSERT_EQ(expected.size(), 128u + 24u);
  Image image(3, 2, 1, PixelType::F32);
  for (int i = 0; i < 6; ++i) image.samples<float>()[static_cast<std::size_t>(i)] = static_cast<float>(i);
  EXPECT_EQ(encodeNpy(image), expected);
  EXPECT_EQ(decodeNpy(expected), image);

  // np.zeros((13, 12, 3), np.uint8) and np.ones((1, 1, 4)) (float64): only the header matters here.
  EXPECT_EQ(encodeNpy(Image(12, 13, 3, PixelType::U8)).substr(0, 128), numpyHeader("|u1", "(13, 12, 3)"));
  EXPECT_EQ(encodeNpy(Image(1, 1, 4, PixelType::F64)).substr(0, 128), numpyHeader("<f8", "(1, 1, 4)"));
  EXPECT_EQ(encodeNpy(Image(131, 257, 1, PixelType::F32)).substr(0, 128), numpyHeader("<f4", "(257, 131)"));
}

/// .npy bytes with a hand-written header dict, padded as NumPy pads, in format version 1, 2 or 3.
std::string npyWithHeader(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  header += std::string(63 - (prefix + header.size()) % 64, ' ') + "\n";
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  out.append(prefix - 8, '\0');
  patchLittleEndian(out, 8, static_cast<std::uint32_t>(header.size()), static_cast<int>(prefix - 8));
  return out + header + data;
}

TEST(Npy, ReadsEveryHeaderNumpyAccepts) {
  const std::string u8 = "\x01\x02\x03\x04\x05\x06";
  Image expected(3, 2, 1, PixelType::U8);
  std::memcpy(expected.data(), u8.data(), 6);
  // Versions 2.0 and 3.0, keys in another order, double quotes, extra spaces, no trailing comma,
  // Python 2 long literals, (H, W, 1) for one channel, a byte-order mark on a one-byte type, bytes
  // after the array (np.save twice into one file).
  const std::string variants[] = {
      npyWithHeader("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", u8),
      npyWithHeader("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", u8, 2),
      npyWithHeader("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", u8, 3),
      npyWithHeader("{'shape': (2, 3), 'fortran_order': False, 'descr': '|u1'}", u8),
      npyWithHeader("{\"descr\" : \"<u1\" ,  \"fortran_order\":False,\"shape\":( 2 ,3 ,1 , )}", u8),
      npyWithHeader("{'descr': '|u1', 'fortran_order': False, 'shape': (2L, 3L), }", u8),
      npyWithHeader("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", u8 + "trailing bytes"),
  };
  for (const std::string& bytes : variants) EXPECT_EQ(decodeNpy(bytes), expected) << bytes.substr(10, 70);

  const Image f64 = decodeNpy(npyWithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2), }",
                                            rawSamples<double>({-2.5, 1e300})));
  ASSERT_EQ(f64.channels(), 2);
  EXPECT_EQ(f64.at<double>(0, 0, 0), -2.5);
  EXPECT_EQ(f64.at<double>(0, 0, 1), 1e300);
}

TEST(Npy, RejectsWhatGpulabCannotRepresent) {
  const std::string data(4096, '\0');
  const auto dict = [](std::string_view descr, std::string_view order, std::string_view shape) {
    return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(order) +
           ", 'shape': " + std::string(shape) + ", }";
  };
  struct Bad {
    std::string bytes;
    std::vector<std::string_view> says;
  };
  const Bad cases[] = {
      {npyWithHeader(dict("<i4", "False", "(2, 3)"), data), {"'<i4'", "uint8", "float32", "float64"}},
      {npyWithHeader(dict("<f2", "False", "(2, 3)"), data), {"'<f2'"}},
      {npyWithHeader(dict("|b1", "False", "(2, 3)"), data), {"'|b1'"}},
      {npyWithHeader(dict("<c8", "False", "(2, 3)"), data), {"'<c8'"}},
      {npyWithHeader(dict(">f4", "False", "(2, 3)"), data), {"big-endian", "'<f4'"}},
      {npyWithHeader(dict(">f8", "False", "(2, 3)"), data), {"big-endian", "'<f8'"}},
      {npyWithHeader("{'descr': [('r', '<f4'), ('g', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", data),
       {"structured"}},
      {npyWithHeader(dict("<f4", "True", "(2, 3)"), data), {"Fortran"}},
      {npyWithHeader(dict("<f4", "False", "()"), data), {"shape ()", "(H, W)"}},
      {npyWithHeader(dict("<f4", "False", "(6,)"), data), {"shape (6,)", "(H, W)"}},
      {npyWithHeader(dict("<f4", "False", "(1, 2, 3, 1)"), data), {"shape (1, 2, 3, 1)"}},
      {npyWithHeader(dict("<f4", "False", "(0, 3)"), data), {"shape (0, 3)", "empty"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3, 0)"), data), {"empty"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3, 5)"), data), {"shape (2, 3, 5)", "C from 1 to 4"}},
      {npyWithHeader(dict("<f4", "False", "(40000, 3)"), data), {"exceeds the limit of 32768 pixels a side"}},
      {npyWithHeader(dict("<f4", "False", "(99999999999999999999999, 3)"), data), {"exceeds the limit"}},
      {npyWithHeader(dict("|u1", "False", "(20000, 20000)"), data), {"megapixels"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3)"), data.substr(0, 23)), {"is truncated", "24 bytes", "23 follow"}},
      {npyWithHeader(dict("<f8", "False", "(2, 3)"), ""), {"is truncated"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3)"), data).substr(0, 9), {"is truncated"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3)"), data).substr(0, 70), {"is truncated", "header"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3)"), data, 4), {"version 4.0"}},
      {std::string("\x93NUMPY\x01\x01\x10\x00", 10) + std::string(16, ' '), {"version 1.1"}},
      {npyWithHeader(dict("<f4", "False", "(2, 3)") + std::string(12000, ' '), data), {"10000"}},
      {npyWithHeader("{'descr': '<f4', 'shape': (2, 3), }", data), {"malformed", "required"}},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", data),
       {"malformed", "'extra'"}},
      {npyWithHeader("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}", data), {"malformed"}},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}", data),
       {"malformed", "True or False"}},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", data), {"malformed"}},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk", data), {"malformed"}},
      {npyWithHeader("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}", data), {"malformed"}},
      {npyWithHeader("['descr', '<f4']", data), {"malformed"}},
      {"not numpy at all", {"not .npy data"}},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.bytes.substr(0, std::min<std::size_t>(bad.bytes.size(), 90)));
    auto result = failsWith([&] { decodeNpy(bad.bytes, "sample.npy"); }, "sample.npy", {});
    ASSERT_TRUE(result);
    const std::string message = result.message();
    for (std::string_view part : bad.says) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
  // The default name in messages.
  EXPECT_TRUE(failsWith([] { decodeNpy("\x93NUMPY"); }, "the .npy data", {"is truncated"}));
}

TEST(Npy, TruncatedFileIsRejected) {
  ScratchDir dir;
  saveImage(randomImage(13, 12, 3, PixelType::F32, 5), dir / "full.npy");
  const std::string bytes = readFile(dir / "full.npy");
  for (const std::size_t keep : {std::size_t{5}, std::size_t{11}, std::size_t{100}, bytes.size() - 1}) {
    writeFile(dir / "cut.npy", bytes.substr(0, keep));
    EXPECT_TRUE(loadFails(dir / "cut.npy", {"is truncated"})) << "kept " << keep << " bytes";
  }
  EXPECT_TRUE(failsWith([] { encodeNpy(Image()); }, "", {"empty"}));
}

// ---- bad files ----------------------------------------------------------------------------------

TEST(ImageIoBadInput, MissingEmptyDirectoryAndUnsupported) {
  ScratchDir dir;
  EXPECT_TRUE(loadFails(dir / "missing.png", {"does not exist"}));
  EXPECT_TRUE(loadFails(dir.path(), {"is a directory"}));
  writeFile(dir / "empty.png", "");
  EXPECT_TRUE(loadFails(dir / "empty.png", {"is empty"}));
  const std::string notAnImage = "is not an image gpulab reads (PNG, JPEG, TIFF, BMP, TGA, PNM or .npy)";
  writeFile(dir / "notes.png", "These are notes, not pixels.\n");
  EXPECT_TRUE(loadFails(dir / "notes.png", {notAnImage}));
  writeFile(dir / "anim.gif", std::string("GIF89a\x01\x00\x01\x00\x00\x00\x00;", 14));
  EXPECT_TRUE(loadFails(dir / "anim.gif", {notAnImage}));
  writeFile(dir / "scan.tif", std::string("II*\0\x08\0\0\0\0\0\0\0", 12));  // a TIFF with an empty directory
  EXPECT_TRUE(loadFails(dir / "scan.tif", {"TIFF"}));
  writeFile(dir / "bm.txt", "BMW and Audi\n");
  EXPECT_TRUE(loadFails(dir / "bm.txt", {notAnImage}));
  writeFile(dir / "bm2.txt", "BMW, Audi and Mercedes-Benz are German car makers.\n");
  EXPECT_TRUE(loadFails(dir / "bm2.txt", {notAnImage}));
  writeFile(dir / "ascii.ppm", "P3\n1 1\n255\n0 0 0\n");
  EXPECT_TRUE(loadFails(dir / "ascii.ppm", {"P1 to P4", "P5, P6"}));
  writeFile(dir / "sig.png", "\x89PNG");
  EXPECT_TRUE(loadFails(dir / "sig.png", {"is truncated"}));
  writeFile(dir / "text.tga", "A text file that calls itself a TGA, with enough bytes for a header.\n");
  EXPECT_TRUE(loadFails(dir / "text.tga", {}));
  EXPECT_TRUE(failsWith([&] { readPngText(dir / "missing.png"); }, (dir / "missing.png").string(), {"does not exist"}));
}

TEST(ImageIoBadInput, TruncatedFilesOfEveryFormat) {
  ScratchDir dir;
  const Image image = smoothImage(37, 29, 3);
  for (const char* name : {"t.png", "t.jpg", "t.bmp", "t.tga", "t.ppm"}) {
    saveImage(image, dir / name);
    const std::string bytes = readFile(dir / name);
    std::vector<std::size_t> keeps = {bytes.size() / 2, bytes.size() - 1};
    if (std::string_view(name) == "t.png") keeps.insert(keeps.end(), {8, 20, 33, bytes.size() - 12});
    if (std::string_view(name) == "t.jpg") keeps.insert(keeps.end(), {3, 20, bytes.size() - 2});
    if (std::string_view(name) == "t.bmp") keeps.insert(keeps.end(), {20, 30, 60});
    if (std::string_view(name) == "t.tga") keeps.insert(keeps.end(), {10, 20});
    if (std::string_view(name) == "t.ppm") keeps.insert(keeps.end(), {4, 9, 12});
    for (const std::size_t keep : keeps) {
      const fs::path cut = dir / (std::to_string(keep) + "_" + name);
      writeFile(cut, bytes.substr(0, keep));
      EXPECT_TRUE(loadFails(cut, {"truncated"})) << "kept " << keep << " of " << bytes.size() << " bytes";
    }
  }
}

TEST(ImageIoBadInput, CorruptData) {
  ScratchDir dir;
  const Image image = randomImage(20, 10, 3, PixelType::U8, 3);
  saveImage(image, dir / "good.png");
  const std::string png = readFile(dir / "good.png");
  // A flipped bit inside IDAT: the chunk's CRC no longer matches.
  std::string flipped = png;
  const std::size_t idat = flipped.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  flipped[idat + 10] = static_cast<char>(flipped[idat + 10] ^ 0x10);
  writeFile(dir / "flipped.png", flipped);
  EXPECT_TRUE(loadFails(dir / "flipped.png", {"is corrupt", "CRC", "IDAT"}));
  // Valid chunk structure and CRCs around data that is not zlib at all: libspng says so.
  writeFile(dir / "garbage.png", std::string("\x89PNG\r\n\x1a\n", 8) + png.substr(8, 25) +
                                     pngChunk("IDAT", "this is not deflate data") + pngChunk("IEND", ""));
  EXPECT_TRUE(loadFails(dir / "garbage.png", {"is truncated or corrupt", "libspng"}));
  // A chunk length far beyond the file.
  std::string huge = png;
  huge[idat - 4] = '\x70';
  writeFile(dir / "length.png", huge);
  EXPECT_TRUE(loadFails(dir / "length.png", {"truncated"}));
  // JPEG markers followed by noise.
  std::string noise = "\xFF\xD8\xFF\xE0";
  for (int i = 0; i < 300; ++i) noise += static_cast<char>((i * 7919) % 251);
  writeFile(dir / "noise.jpg", noise);
  EXPECT_TRUE(loadFails(dir / "noise.jpg", {}));
}

TEST(ImageIoBadInput, DimensionsBeyondTheLimitAreRejectedFromTheHeader) {
  ScratchDir dir;
  const std::vector<std::string> oneRow = {std::string(3, '\x40')};
  // Tiny files whose headers claim huge images: decoding them would need gigabytes.
  writeFile(dir / "wide.png", handmadePng(100000, 100000, 8, 2, oneRow));
  EXPECT_TRUE(loadFails(dir / "wide.png", {"100000x100000", "exceeds the limit of 32768 pixels a side"}));
  writeFile(dir / "many.png", handmadePng(20000, 20000, 8, 2, oneRow));
  EXPECT_TRUE(loadFails(dir / "many.png", {"20000x20000", "megapixels"}));
  writeFile(dir / "zero.png", handmadePng(0, 5, 8, 2, oneRow));
  EXPECT_TRUE(loadFails(dir / "zero.png", {}));

  saveImage(randomImage(2, 2, 3, PixelType::U8, 1), dir / "small.bmp");
  std::string bmp = readFile(dir / "small.bmp");
  patchLittleEndian(bmp, 18, 100000, 4);
  patchLittleEndian(bmp, 22, 100000, 4);
  writeFile(dir / "wide.bmp", bmp);
  EXPECT_TRUE(loadFails(dir / "wide.bmp", {"100000x100000", "exceeds the limit"}));
  patchLittleEndian(bmp, 22, static_cast<std::uint32_t>(-40000), 4);
  writeFile(dir / "tall.bmp", bmp);
  EXPECT_TRUE(loadFails(dir / "tall.bmp", {"100000x40000", "exceeds the limit"}));

  writeFile(dir / "wide.pgm", "P5\n100000 100000\n255\nabc");
  EXPECT_TRUE(loadFails(dir / "wide.pgm", {"100000x100000", "exceeds the limit"}));

  std::string tga(18, '\0');
  tga[2] = 2;
  patchLittleEndian(tga, 12, 40000, 2);
  patchLittleEndian(tga, 14, 40000, 2);
  tga[16] = 24;
  writeFile(dir / "wide.tga", tga + "abc");
  EXPECT_TRUE(loadFails(dir / "wide.tga", {"40000x40000", "exceeds the limit"}));

  saveImage(smoothImage(16, 16, 3), dir / "small.jpg");
  std::string jpg = readFile(dir / "small.jpg");
  const std::size_t sof = jpg.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  jpg[sof + 5] = '\x9C';  // height 0x9C40 = 40000
  jpg[sof + 6] = '\x40';
  jpg[sof + 7] = '\x9C';  // width 40000
  jpg[sof + 8] = '\x40';
  writeFile(dir / "wide.jpg", jpg);
  EXPECT_TRUE(loadFails(dir / "wide.jpg", {"40000x40000", "exceeds the limit"}));
}

// ---- saving -------------------------------------------------------------------------------------

TEST(ImageIoSave, RefusesWhatAFormatCannotHold) {
  ScratchDir dir;
  const Image rgb = randomImage(4, 3, 3, PixelType::U8, 2);
  const std::string list = supportedImageExtensions();
  EXPECT_EQ(list, "png, jpg, jpeg, tif, tiff, bmp, tga, pgm, ppm, pnm, npy");
  EXPECT_TRUE(failsWith([&] { saveImage(rgb, dir / "a.gif"); }, (dir / "a.gif").string(), {"'.gif'", list}));
  EXPECT_TRUE(failsWith([&] { saveImage(rgb, dir / "noext"); }, (dir / "noext").string(), {"no extension", list}));
  const Image f32 = randomImage(4, 3, 1, PixelType::F32, 2);
  for (const char* name : {"f.png", "f.jpg", "f.bmp", "f.tga", "f.pgm"})
    EXPECT_TRUE(
        failsWith([&] { saveImage(f32, dir / name); }, (dir / name).string(), {"cannot hold f32", ".tif or .npy"}));
  EXPECT_TRUE(failsWith([&] { saveImage(randomImage(4, 3, 2, PixelType::U8, 2), dir / "two.png"); },
                        (dir / "two.png").string(), {"2 channels", ".npy"}));
  EXPECT_TRUE(failsWith([&] { saveImage(rgb, dir / "rgb.pgm"); }, (dir / "rgb.pgm").string(), {".pgm", ".ppm"}));
  EXPECT_TRUE(failsWith([&] { saveImage(Image(), dir / "empty.png"); }, (dir / "empty.png").string(), {"empty"}));
  EXPECT_TRUE(failsWith([&] { saveImage(Image(), dir / "empty.npy"); }, (dir / "empty.npy").string(), {"empty"}));
  EXPECT_TRUE(failsWith([&] { saveImage(rgb, dir / "no/such/dir/a.png"); }, (dir / "no/such/dir/a.png").string(),
                        {"does not exist"}));
  fs::create_directory(dir / "taken.png");
  EXPECT_TRUE(failsWith([&] { saveImage(rgb, dir / "taken.png"); }, (dir / "taken.png").string(), {"is a directory"}));
  EXPECT_TRUE(dir.listing() == std::vector<std::string>{"taken.png"}) << "a failed save left files behind";
}

TEST(ImageIoSave, FailedSaveLeavesThePreviousFileIntact) {
  ScratchDir dir;
  const Image first = randomImage(9, 7, 3, PixelType::U8, 1);
  saveImage(first, dir / "keep.png");
  saveImage(first, dir / "keep.npy");
  const std::string pngBefore = readFile(dir / "keep.png"), npyBefore = readFile(dir / "keep.npy");
  EXPECT_THROW(saveImage(randomImage(9, 7, 3, PixelType::F32, 2), dir / "keep.png"), ImageIoError);
  EXPECT_THROW(saveImage(randomImage(9, 7, 2, PixelType::U8, 2), dir / "keep.png"), ImageIoError);
  EXPECT_THROW(savePngWithText(first, dir / "keep.png", {{"", "empty key"}}), ImageIoError);
  EXPECT_THROW(saveImage(Image(), dir / "keep.npy"), ImageIoError);
  EXPECT_EQ(readFile(dir / "keep.png"), pngBefore);
  EXPECT_EQ(readFile(dir / "keep.npy"), npyBefore);
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"keep.npy", "keep.png"}));
  // A successful save replaces the file whole and leaves no temporary file.
  const Image second = randomImage(3, 2, 1, PixelType::U8, 7);
  saveImage(second, dir / "keep.png");
  EXPECT_EQ(loadImage(dir / "keep.png"), second);
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"keep.npy", "keep.png"}));
}

TEST(ImageIoSave, UnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions do not stop root from writing";
  ScratchDir dir;
  fs::create_directory(dir / "locked");
  const Image image = randomImage(3, 3, 3, PixelType::U8, 4);
  saveImage(image, dir / "locked/old.png");
  fs::permissions(dir / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_TRUE(failsWith([&] { saveImage(randomImage(3, 3, 3, PixelType::U8, 5), dir / "locked/old.png"); },
                        (dir / "locked/old.png").string(), {"cannot create a file", "Permission denied"}));
  EXPECT_EQ(loadImage(dir / "locked/old.png"), image);
  fs::permissions(dir / "locked", fs::perms::owner_all);
}

// ---- PNG text -----------------------------------------------------------------------------------

TEST(PngText, RoundTripsKeysAndValues) {
  ScratchDir dir;
  const Image image = randomImage(31, 17, 4, PixelType::U8, 9);
  const std::map<std::string, std::string> text = {
      {"gpulab.center_x", "-0.743643887037151"},
      {"Title", "Mandelbrot view"},
      {"Comment", std::string("line one\nline two, Latin-1 \xE9\xE8")},
      {"empty", ""},
      {std::string(79, 'k'), std::string(5000, 'v')},
  };
  savePngWithText(image, dir / "view.png", text);
  EXPECT_EQ(readPngText(dir / "view.png"), text);
  EXPECT_EQ(loadImage(dir / "view.png"), image);
  // The chunks sit between IDAT and IEND and the file ends with IEND.
  const std::string bytes = readFile(dir / "view.png");
  EXPECT_LT(bytes.rfind("IDAT"), bytes.find("tEXt"));
  EXPECT_EQ(bytes.substr(bytes.size() - 8, 4), "IEND");
  for (std::size_t at = bytes.find("tEXt"); at != std::string::npos; at = bytes.find("tEXt", at + 1)) {
    const std::uint32_t length = bigEndian32(bytes, at - 4);
    ASSERT_LE(at + 8 + length, bytes.size());
    EXPECT_EQ(bigEndian32(bytes, at + 4 + length), referenceCrc32(std::string_view(bytes).substr(at, 4 + length)));
  }
  EXPECT_EQ(bigEndian32(bytes, bytes.size() - 4), referenceCrc32("IEND"));

  saveImage(image, dir / "plain.png");
  EXPECT_TRUE(readPngText(dir / "plain.png").empty());
  savePngWithText(image, dir / "none.png", {});
  EXPECT_TRUE(readPngText(dir / "none.png").empty());
}

TEST(PngText, RejectsBadKeysAndNonPngFiles) {
  ScratchDir dir;
  const Image image = randomImage(4, 4, 3, PixelType::U8, 9);
  const fs::path file = dir / "t.png";
  for (const std::string& key : {std::string(), std::string(80, 'k'), std::string(" lead"), std::string("trail "),
                                 std::string("two  spaces"), std::string("new\nline"), std::string("nul\0key", 7)})
    EXPECT_TRUE(failsWith([&] { savePngWithText(image, file, {{key, "v"}}); }, file.string(), {"PNG text key"})) << key;
  EXPECT_TRUE(failsWith(
      [&] {
        savePngWithText(image, file, {{"key", std::string("a\0b", 3)}});
      },
      file.string(), {"NUL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        savePngWithText(image, dir / "t.jpg", {{"key", "v"}});
      },
      (dir / "t.jpg").string(), {".png"}));
  EXPECT_TRUE(failsWith(
      [&] {
        savePngWithText(image.convertedTo(PixelType::F32), file, {{"key", "v"}});
      },
      file.string(), {".npy"}));
  EXPECT_FALSE(fs::exists(file));

  saveImage(image, dir / "t.jpg");
  EXPECT_TRUE(failsWith([&] { readPngText(dir / "t.jpg"); }, (dir / "t.jpg").string(), {"is not a PNG"}));
  // A damaged text chunk is caught by its CRC; a cut file by the missing IEND.
  savePngWithText(image, file, {{"key", "value"}});
  std::string bytes = readFile(file);
  bytes[bytes.find("value")] = 'V';
  writeFile(dir / "crc.png", bytes);
  EXPECT_TRUE(failsWith([&] { readPngText(dir / "crc.png"); }, (dir / "crc.png").string(), {"CRC", "tEXt"}));
  const std::string intact = readFile(file);
  writeFile(dir / "cut.png", intact.substr(0, intact.size() - 12));
  EXPECT_TRUE(failsWith([&] { readPngText(dir / "cut.png"); }, (dir / "cut.png").string(), {"truncated"}));
  // A tEXt chunk without the NUL that separates keyword and text.
  const std::string rows = std::string(3, '\0');
  writeFile(dir / "nokey.png", handmadePng(1, 1, 8, 2, {rows}, pngChunk("tEXt", "no separator")));
  EXPECT_TRUE(failsWith([&] { readPngText(dir / "nokey.png"); }, (dir / "nokey.png").string(), {"keyword"}));
}

}  // namespace
}  // namespace gpulab
