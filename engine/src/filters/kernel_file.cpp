// Convolution kernels from files: text (rows of numbers) or NumPy .npy.
#include "gpulab/filters/kernel_file.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/io/image_io.hpp"

namespace gpulab {

namespace {

bool isSeparator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\f' || c == '\v'; }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

Kernel2D parseKernelText(const std::string& text, const std::string& nameForErrors) {
  std::vector<std::vector<double>> rows;
  std::vector<int> lineOfRow;
  std::istringstream lines(text);
  std::string line;
  for (int lineNumber = 1; std::getline(lines, line); ++lineNumber) {
    std::string_view rest(line);
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
    std::vector<double> row;
    std::size_t i = 0;
    while (i < rest.size()) {
      while (i < rest.size() && isSeparator(rest[i])) ++i;
      std::size_t end = i;
      while (end < rest.size() && !isSeparator(rest[end])) ++end;
      if (end == i) break;
      const std::string_view token = rest.substr(i, end - i);
      // from_chars takes no leading '+'; accept it as people write it, but not before a sign ("+-1").
      const std::string_view digits =
          token.front() == '+' && !token.substr(1).starts_with('-') ? token.substr(1) : token;
      double value = 0;
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() || !std::isfinite(value))
        throw KernelFileError(nameForErrors + " line " + std::to_string(lineNumber) + ": " +
                              quoted(std::string(token)) + " is not a finite number");
      row.push_back(value);
      i = end;
    }
    if (row.empty()) continue;
    if (!rows.empty() && row.size() != rows.front().size())
      throw KernelFileError(nameForErrors + " is ragged: line " + std::to_string(lineNumber) + " has " +
                            std::to_string(row.size()) + " numbers but line " + std::to_string(lineOfRow.front()) +
                            " has " + std::to_string(rows.front().size()) + "; every row needs the same count");
    rows.push_back(std::move(row));
    lineOfRow.push_back(lineNumber);
  }
  if (rows.empty())
    throw KernelFileError(nameForErrors + " holds no kernel coefficients: write one row of numbers per line");
  if (rows.size() > static_cast<std::size_t>(kMaxImageDimension) ||
      rows.front().size() > static_cast<std::size_t>(kMaxImageDimension))
    throw KernelFileError(nameForErrors + " holds a " + std::to_string(rows.front().size()) + "x" +
                          std::to_string(rows.size()) + " kernel, beyond " + std::to_string(kMaxImageDimension) +
                          " a side");
  Kernel2D kernel;
  kernel.width = static_cast<int>(rows.front().size());
  kernel.height = static_cast<int>(rows.size());
  kernel.values.reserve(static_cast<std::size_t>(kernel.width) * kernel.height);
  for (const auto& row : rows) kernel.values.insert(kernel.values.end(), row.begin(), row.end());
  return kernel;
}

Kernel2D loadKernelFile(const std::filesystem::path& path) {
  const std::string name = "kernel file " + quoted(path.string());
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw KernelFileError("cannot read " + name + ": " +
                          (std::filesystem::exists(path, ec) ? "it is not a regular file" : "no such file"));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw KernelFileError("cannot open " + name);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw KernelFileError("cannot read " + name);

  if (bytes.starts_with("\x93NUMPY")) {
    Image image;
    try {
      image = decodeNpy(bytes, name);
    } catch (const std::exception& e) {
      throw KernelFileError(e.what());
    }
    if (image.channels() != 1)
      throw KernelFileError(name + " holds an array with " + std::to_string(image.channels()) +
                            " channels; a kernel is a 2-D array (HxW)");
    if (image.type() == PixelType::U8)
      throw KernelFileError(name + " holds uint8 values; save the kernel as float32 or float64");
    Kernel2D kernel;
    kernel.width = image.width();
    kernel.height = image.height();
    const Image values = image.convertedTo(PixelType::F64);
    kernel.values.assign(values.samples<double>().begin(), values.samples<double>().end());
    for (double v : kernel.values)
      if (!std::isfinite(v)) throw KernelFileError(name + " holds a value that is not a finite number");
    return kernel;
  }
  return parseKernelText(bytes, name);
}

std::string formatKernelText(const Kernel2D& kernel) {
  std::string text;
  for (int y = 0; y < kernel.height; ++y) {
    for (int x = 0; x < kernel.width; ++x) {
      char value[32];
      std::snprintf(value, sizeof value, x == 0 ? "%.17g" : " %.17g", kernel.at(x, y));
      text += value;
    }
    text += '\n';
  }
  return text;
}

}  // namespace gpulab
