// NumPy .npy arrays both ways: versions 1.0 to 3.0 read (u8, little-endian u16, f32 and f64; (H, W)
// or (H, W, C), C order), version 1.0 written as numpy.save writes it.

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "internal/image_files.hpp"

namespace gpulab {
namespace io_detail {

namespace {

// NumPy refuses longer headers too (numpy.lib.format, max_header_size).
constexpr std::size_t kMaxNpyHeaderBytes = 10000;

struct NpyLayout {
  PixelType type = PixelType::U8;
  int height = 0;
  int width = 0;
  int channels = 0;
  std::uint64_t dataBytes = 0;
};

/// The size of the magic, version, length field and header together, from the first bytes (at
/// least 12 where the file has them) and the total size.
std::size_t npyPrefixLength(Bytes head, std::uint64_t totalSize, const std::string& name) {
  if (head.size() < 8) throw ImageIoError(name + " is truncated (it ends inside the .npy preamble)");
  const unsigned major = head[6], minor = head[7];
  if (major < 1 || major > 3 || minor != 0)
    throw ImageIoError(name + " has .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                       "; gpulab reads versions 1.0, 2.0 and 3.0");
  const std::size_t fieldBytes = major == 1 ? 2 : 4;
  if (head.size() < 8 + fieldBytes) throw ImageIoError(name + " is truncated (it ends inside the .npy preamble)");
  const std::uint64_t headerBytes = major == 1 ? readLe16(&head[8]) : readLe32(&head[8]);
  if (headerBytes > kMaxNpyHeaderBytes)
    throw ImageIoError(name + " has a .npy header of " + std::to_string(headerBytes) + " bytes, more than the " +
                       std::to_string(kMaxNpyHeaderBytes) + " that NumPy itself reads");
  const std::size_t prefix = 8 + fieldBytes + static_cast<std::size_t>(headerBytes);
  if (prefix > totalSize)
    throw ImageIoError(name + " is truncated (its .npy header needs " + std::to_string(prefix) +
                       " bytes, the data has " + std::to_string(totalSize) + ")");
  return prefix;
}

/// Parses the Python dict literal of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<std::vector<std::uint64_t>> shape;
  };

  Fields parse() {
    Fields fields;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') break;
      const std::string key = parseString();
      expect(':');
      skipSpace();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          throw ImageIoError(name_ +
                             " holds a structured NumPy dtype, which gpulab does not read: use uint8 ('|u1'), "
                             "uint16 ('<u2'), float32 ('<f4') or float64 ('<f8')");
        fields.descr = parseString();
      } else if (key == "fortran_order") {
        fields.fortranOrder = parseBool();
      } else if (key == "shape") {
        fields.shape = parseTuple();
      } else {
        throw malformed("an unexpected key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') throw malformed("',' or '}' expected at position " + std::to_string(pos_));
    }
    ++pos_;
    skipSpace();
    if (pos_ != text_.size()) throw malformed("text after the closing '}'");
    if (!fields.descr || !fields.fortranOrder || !fields.shape)
      throw malformed("the keys 'descr', 'fortran_order' and 'shape' are required");
    return fields;
  }

 private:
  ImageIoError malformed(const std::string& what) const {
    return ImageIoError(name_ + " has a malformed .npy header (" + what + ")");
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && isSpace(static_cast<std::uint8_t>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c) throw malformed(std::string("'") + c + "' expected at position " + std::to_string(pos_));
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    const char quote = peek();
    if (quote != '\'' && quote != '"') throw malformed("a quoted string expected at position " + std::to_string(pos_));
    std::string out;
    for (++pos_; pos_ < text_.size() && text_[pos_] != quote; ++pos_) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_];
    }
    if (pos_ >= text_.size()) throw malformed("an unterminated string");
    ++pos_;
    return out;
  }
  bool parseBool() {
    for (std::string_view word : {"True", "False"})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return word == "True";
      }
    throw malformed("True or False expected at position " + std::to_string(pos_));
  }
  std::vector<std::uint64_t> parseTuple() {
    std::vector<std::uint64_t> dims;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') throw malformed("a dimension expected at position " + std::to_string(pos_));
      std::uint64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        value = std::min<std::uint64_t>(value * 10 + static_cast<std::uint64_t>(peek() - '0'), std::uint64_t{1} << 62);
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literals, as NumPy itself accepts in versions 1.0 and 2.0
      dims.push_back(value);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') throw malformed("',' or ')' expected at position " + std::to_string(pos_));
    }
    ++pos_;
    return dims;
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::string shapeText(const std::vector<std::uint64_t>& dims) {
  std::string out = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

NpyLayout parseNpyHeader(std::string_view prefix, const std::string& name) {
  const std::size_t fieldBytes = prefix[6] == 1 ? 2 : 4;
  const NpyHeaderParser::Fields fields = NpyHeaderParser(prefix.substr(8 + fieldBytes), name).parse();
  NpyLayout layout;
  const std::string& descr = *fields.descr;
  if (descr == "|u1" || descr == "<u1" || descr == ">u1" || descr == "=u1") {
    layout.type = PixelType::U8;
  } else if (descr == "<u2" || descr == "=u2") {
    layout.type = PixelType::U16;
  } else if (descr == "<f4") {
    layout.type = PixelType::F32;
  } else if (descr == "<f8") {
    layout.type = PixelType::F64;
  } else if (descr == ">f4" || descr == ">f8" || descr == ">u2") {
    throw ImageIoError(name + " holds big-endian data ('" + descr + "'); gpulab reads little-endian: save a.astype('<" +
                       descr.substr(1) + "')");
  } else {
    throw ImageIoError(
        name + " holds NumPy dtype '" + descr +
        "', which gpulab does not read: use uint8 ('|u1'), uint16 ('<u2'), float32 ('<f4') or float64 ('<f8')");
  }
  if (*fields.fortranOrder)
    throw ImageIoError(name + " is stored in Fortran (column-major) order; save np.ascontiguousarray(a) instead");
  const std::vector<std::uint64_t>& dims = *fields.shape;
  const std::string allowed =
      "gpulab reads (H, W) or (H, W, C) arrays with C from 1 to " + std::to_string(kMaxChannels);
  if (dims.size() != 2 && dims.size() != 3) throw ImageIoError(name + " has shape " + shapeText(dims) + "; " + allowed);
  if (std::find(dims.begin(), dims.end(), 0) != dims.end())
    throw ImageIoError(name + " has shape " + shapeText(dims) + ", an empty array; " + allowed);
  const std::uint64_t channels = dims.size() == 3 ? dims[2] : 1;
  if (channels > static_cast<std::uint64_t>(kMaxChannels))
    throw ImageIoError(name + " has shape " + shapeText(dims) + "; " + allowed);
  checkShape(static_cast<std::int64_t>(dims[1]), static_cast<std::int64_t>(dims[0]), static_cast<int>(channels), name);
  layout.height = static_cast<int>(dims[0]);
  layout.width = static_cast<int>(dims[1]);
  layout.channels = static_cast<int>(channels);
  layout.dataBytes = static_cast<std::uint64_t>(layout.height) * static_cast<std::uint64_t>(layout.width) *
                     static_cast<std::uint64_t>(layout.channels) * bytesPerSample(layout.type);
  return layout;
}

ImageIoError npyTruncated(const std::string& name, const NpyLayout& layout, std::uint64_t available) {
  return ImageIoError(name + " is truncated (its .npy header promises " + std::to_string(layout.dataBytes) +
                      " bytes of data, " + std::to_string(available) + " follow)");
}

}  // namespace

Image loadNpy(const InputFile& in, Bytes head, const std::string& name, Image reuse) {
  const std::size_t prefixLength = npyPrefixLength(head, in.size, name);
  std::string prefix(prefixLength, '\0');
  if (readAt(in, 0, prefix.data(), prefixLength, name) != prefixLength)
    throw ImageIoError(name + " became shorter while it was being read");
  const NpyLayout layout = parseNpyHeader(prefix, name);
  // Bytes after the array are allowed, as numpy.load allows them (np.save called twice on one file).
  if (in.size - prefixLength < layout.dataBytes) throw npyTruncated(name, layout, in.size - prefixLength);
  Image image = std::move(reuse);
  image.reshape(layout.width, layout.height, layout.channels, layout.type);
  if (readAt(in, prefixLength, image.data(), image.sizeBytes(), name) != image.sizeBytes())
    throw ImageIoError(name + " became shorter while it was being read");
  return image;
}

std::string npyHeader(const Image& image) {
  const char* descr = image.type() == PixelType::U8    ? "|u1"
                      : image.type() == PixelType::U16 ? "<u2"
                      : image.type() == PixelType::F32 ? "<f4"
                                                       : "<f8";
  const std::string height = std::to_string(image.height());
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + height + ", " +
                     std::to_string(image.width()) +
                     (image.channels() == 1 ? std::string() : ", " + std::to_string(image.channels())) + "), }";
  // As numpy.save (1.23 and later): room for the first axis to grow to 21 digits, then spaces and a
  // newline so the data start at a multiple of 64 bytes (a full 64 when already aligned).
  dict.append(21 - height.size(), ' ');
  const std::size_t padding = 64 - (10 + dict.size() + 1) % 64;
  dict.append(padding, ' ');
  dict += '\n';
  std::string out(kNpyMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

}  // namespace io_detail

using namespace io_detail;

Image decodeNpy(const std::string& bytes, const std::string& nameForErrors) {
  const std::string& name = nameForErrors;
  const Bytes all = asBytes(bytes);
  if (!startsWith(all, kNpyMagic)) throw ImageIoError(name + " is not .npy data (no \\x93NUMPY magic)");
  const std::size_t prefixLength = npyPrefixLength(all, bytes.size(), name);
  const NpyLayout layout = parseNpyHeader(std::string_view(bytes).substr(0, prefixLength), name);
  const std::uint64_t available = bytes.size() - prefixLength;
  if (available < layout.dataBytes) throw npyTruncated(name, layout, available);
  Image image(layout.width, layout.height, layout.channels, layout.type);
  std::memcpy(image.data(), bytes.data() + prefixLength, image.sizeBytes());
  return image;
}

std::string encodeNpy(const Image& image) {
  if (image.empty()) throw ImageIoError("cannot encode an empty image as .npy");
  return npyHeader(image) + std::string(samplesOf(image));
}

}  // namespace gpulab
