// Custom kernels: NVRTC compile with its caches and log parsing, inputs and arguments, launch checks,
// and the runs (load with cudaLibraryLoadData, launch with cudaLaunchKernel, time, check on the host).
#include "gpulab/lab/custom_kernel.hpp"

#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/lab/expression.hpp"
#include "internal/lab_detail.hpp"
#include "internal/memory_format.hpp"

namespace gpulab::lab {

// ---------------------------------------------------------------------------------------------
// NVRTC logs

std::string CompileDiagnostic::text() const {
  std::string s;
  if (line > 0) s = "line " + std::to_string(line) + (column > 0 ? ", column " + std::to_string(column) : "") + ": ";
  if (!severity.empty()) s += severity + ": ";
  return s + message;
}

namespace {

std::string_view trimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// "kernel.cu(12): error: message" -> line 12, "error", "message". False for other lines.
bool parseHeadline(std::string_view line, CompileDiagnostic& d) {
  // The file name may hold parentheses itself: the line number is in the last "(...)" before "): ".
  const std::size_t close = line.find("): ");
  if (close == std::string_view::npos) return false;
  const std::size_t open = line.rfind('(', close);
  if (open == std::string_view::npos || open == 0) return false;
  int number = 0;
  const auto [end, error] = std::from_chars(line.data() + open + 1, line.data() + close, number);
  if (error != std::errc() || end != line.data() + close || number < 1) return false;
  std::string_view rest = line.substr(close + 3);
  const std::size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return false;
  std::string_view severity = rest.substr(0, colon);
  // "warning #177-D" -> "warning"
  if (const std::size_t hash = severity.find(" #"); hash != std::string_view::npos) severity = severity.substr(0, hash);
  if (severity != "error" && severity != "warning" && severity != "remark" && severity != "catastrophic error")
    return false;
  d.line = number;
  d.severity = std::string(severity);
  d.message = std::string(trimView(rest.substr(colon + 2)));
  return true;
}

}  // namespace

std::vector<CompileDiagnostic> parseCompileLog(std::string_view log) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= log.size();) {
    const std::size_t end = std::min(log.find('\n', start), log.size());
    lines.push_back(log.substr(start, end - start));
    start = end + 1;
    if (end == log.size()) break;
  }
  std::vector<CompileDiagnostic> diagnostics;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    CompileDiagnostic d;
    if (!parseHeadline(lines[k], d)) continue;
    // NVRTC echoes the source line indented by two spaces and puts a caret under the column.
    if (k + 2 < lines.size()) {
      const std::string_view caretLine = lines[k + 2];
      const std::size_t caret = caretLine.find('^');
      if (caret != std::string_view::npos && trimView(caretLine) == "^" && caret >= 2) {
        d.column = static_cast<int>(caret) - 1;  // minus the two-space indent, 1-based
        k += 2;
      }
    }
    diagnostics.push_back(std::move(d));
  }
  return diagnostics;
}

namespace {
std::string compileErrorMessage(const std::string& sourceName, const std::string& log,
                                const std::vector<CompileDiagnostic>& diagnostics) {
  std::string message = "NVRTC could not compile " + sourceName + ":";
  int shown = 0;
  for (const CompileDiagnostic& d : diagnostics) {
    if (d.severity == "warning" || d.severity == "remark") continue;
    message += "\n  " + d.text();
    ++shown;
  }
  if (shown == 0) message += "\n" + log;
  return message;
}
}  // namespace

CompileError::CompileError(std::string sourceName, std::string log, std::vector<CompileDiagnostic> diagnostics)
    : std::invalid_argument(compileErrorMessage(sourceName, log, diagnostics)),
      sourceName_(std::move(sourceName)),
      log_(std::move(log)),
      diagnostics_(std::move(diagnostics)) {}

// ---------------------------------------------------------------------------------------------
// Targets, keys, caches

namespace {

void nvrtcCheck(nvrtcResult result, const char* call) {
  if (result != NVRTC_SUCCESS) throw std::runtime_error(std::string(call) + " failed: " + nvrtcGetErrorString(result));
}

std::string keyText(std::string_view source, const std::vector<std::string>& options, std::string_view target) {
  std::string text = "gpulab-nvrtc\n";
  text += target;
  text += '\0';
  text += std::to_string(options.size());
  text += '\0';
  for (const std::string& o : options) {
    text += std::to_string(o.size()) + ":" + o;
    text += '\0';
  }
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
    text += "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
  text += '\0';
  text += source;
  return text;
}

struct MemoryCache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const std::vector<char>>> binaries;  // key text -> binary
};
MemoryCache& memoryCache() {
  static MemoryCache cache;  // host memory only: no CUDA object lives here
  return cache;
}

constexpr std::string_view kDiskMagic = "gpulab-kernel-cache 1\n";

std::shared_ptr<const std::vector<char>> readDiskCache(const std::filesystem::path& file, const std::string& text) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  std::string magic(kDiskMagic.size(), '\0');
  std::uint64_t keySize = 0, binarySize = 0;
  if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) || magic != kDiskMagic) return nullptr;
  if (!in.read(reinterpret_cast<char*>(&keySize), sizeof keySize) || keySize != text.size()) return nullptr;
  std::string stored(keySize, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(keySize)) || stored != text) return nullptr;  // collision
  if (!in.read(reinterpret_cast<char*>(&binarySize), sizeof binarySize) || binarySize == 0 ||
      binarySize > (std::uint64_t{1} << 30))
    return nullptr;
  auto binary = std::make_shared<std::vector<char>>(binarySize);
  if (!in.read(binary->data(), static_cast<std::streamsize>(binarySize))) return nullptr;
  return binary;
}

/// Best effort: a cache that cannot be written only costs a compile next time.
void writeDiskCache(const std::filesystem::path& dir, const std::string& key, const std::string& text,
                    const std::vector<char>& binary) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  const std::filesystem::path file = dir / (key + ".bin");
  const std::filesystem::path temp = dir / (key + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const std::uint64_t keySize = text.size(), binarySize = binary.size();
    out.write(kDiskMagic.data(), static_cast<std::streamsize>(kDiskMagic.size()));
    out.write(reinterpret_cast<const char*>(&keySize), sizeof keySize);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.write(reinterpret_cast<const char*>(&binarySize), sizeof binarySize);
    out.write(binary.data(), static_cast<std::streamsize>(binary.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(temp, ec);
      return;
    }
  }
  std::filesystem::rename(temp, file, ec);  // atomic: a reader sees the old file or the whole new one
  if (ec) std::filesystem::remove(temp, ec);
}

}  // namespace

std::string nvrtcTarget(int computeCapability) {
  int count = 0;
  nvrtcCheck(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(std::max(count, 0)));
  if (count > 0) nvrtcCheck(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  if (std::find(archs.begin(), archs.end(), computeCapability) != archs.end())
    return "sm_" + std::to_string(computeCapability);
  int best = 0;
  for (int a : archs)
    if (a < computeCapability) best = std::max(best, a);
  if (best == 0)
    throw std::runtime_error("NVRTC supports no architecture at or below compute capability " +
                             std::to_string(computeCapability / 10) + "." + std::to_string(computeCapability % 10));
  return "compute_" + std::to_string(best);  // PTX, compiled by the driver for the device
}

std::string kernelCacheKey(std::string_view source, const std::vector<std::string>& options, std::string_view target) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (const char c : keyText(source, options, target)) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::filesystem::path kernelCacheDirectory() {
  if (const char* dir = std::getenv("GPULAB_KERNEL_CACHE"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "gpulab" / "kernels";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "gpulab" / "kernels";
  return {};
}

void clearKernelMemoryCache() {
  MemoryCache& cache = memoryCache();
  const std::lock_guard lock(cache.mutex);
  cache.binaries.clear();
}

CompiledKernel compileKernel(const std::string& source, const std::string& sourceName,
                             const std::vector<std::string>& extraOptions, int computeCapability, bool useDiskCache) {
  CompiledKernel out;
  out.target = nvrtcTarget(computeCapability);
  out.options.push_back("--gpu-architecture=" + out.target);
  for (const std::string& o : extraOptions) {
    if (o.rfind("--gpu-architecture", 0) == 0 || o.rfind("-arch", 0) == 0)
      throw std::invalid_argument("the option '" + o + "' is not allowed: the architecture is the device's (" +
                                  out.target + ")");
    out.options.push_back(o);
  }
  out.key = kernelCacheKey(source, out.options, out.target);
  const std::string text = keyText(source, out.options, out.target);

  MemoryCache& cache = memoryCache();
  {
    const std::lock_guard lock(cache.mutex);
    if (auto it = cache.binaries.find(text); it != cache.binaries.end()) {
      out.cache = CacheOutcome::Memory;
      out.binary = it->second;
      return out;
    }
  }
  const std::filesystem::path dir = useDiskCache ? kernelCacheDirectory() : std::filesystem::path();
  if (!dir.empty()) {
    if (auto binary = readDiskCache(dir / (out.key + ".bin"), text)) {
      out.cache = CacheOutcome::Disk;
      out.binary = binary;
      const std::lock_guard lock(cache.mutex);
      cache.binaries.emplace(text, binary);
      return out;
    }
  }

  const Stopwatch watch;
  nvrtcProgram program = nullptr;
  nvrtcCheck(nvrtcCreateProgram(&program, source.c_str(), sourceName.c_str(), 0, nullptr, nullptr),
             "nvrtcCreateProgram");
  struct Destroy {
    nvrtcProgram& p;
    ~Destroy() { nvrtcDestroyProgram(&p); }
  } destroy{program};
  std::vector<const char*> optionPointers;
  for (const std::string& o : out.options) optionPointers.push_back(o.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(program, static_cast<int>(optionPointers.size()), optionPointers.data());
  std::size_t logSize = 0;
  nvrtcCheck(nvrtcGetProgramLogSize(program, &logSize), "nvrtcGetProgramLogSize");
  std::string log(logSize, '\0');
  if (logSize > 0) nvrtcCheck(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (compiled == NVRTC_ERROR_INVALID_OPTION)
    throw std::invalid_argument("NVRTC does not accept the options given (" + log + ")");
  if (compiled == NVRTC_ERROR_COMPILATION) throw CompileError(sourceName, log, parseCompileLog(log));
  nvrtcCheck(compiled, "nvrtcCompileProgram");

  auto binary = std::make_shared<std::vector<char>>();
  std::size_t size = 0;
  if (out.target.rfind("sm_", 0) == 0) {
    nvrtcCheck(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
    binary->resize(size);
    nvrtcCheck(nvrtcGetCUBIN(program, binary->data()), "nvrtcGetCUBIN");
  } else {
    nvrtcCheck(nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");  // counts the terminating NUL
    binary->resize(size);
    nvrtcCheck(nvrtcGetPTX(program, binary->data()), "nvrtcGetPTX");
  }
  out.compileMs = watch.elapsedMs();
  out.log = log;
  out.binary = binary;
  {
    const std::lock_guard lock(cache.mutex);
    cache.binaries.emplace(text, binary);
  }
  if (!dir.empty()) writeDiskCache(dir, out.key, text, *binary);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Inputs and arguments

namespace {

double parseNumber(std::string_view text, const std::string& what) {
  const std::string copy(trimView(text));
  char* end = nullptr;
  const double v = copy.empty() ? 0 : std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(v))
    throw std::invalid_argument(what + ": '" + copy + "' is not a number");
  return v;
}

bool validName(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void requireName(std::string_view name, std::string_view text) {
  if (!validName(name))
    throw std::invalid_argument("'" + std::string(name) + "' in '" + std::string(text) +
                                "' is not a name (letters, digits and _, not starting with a digit)");
}

std::vector<std::string_view> splitColons(std::string_view s) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = s.find(':', start);
    parts.push_back(s.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) return parts;
    start = colon + 1;
  }
}

}  // namespace

InputSpec parseInputSpec(std::string_view text) {
  InputSpec spec;
  const std::size_t eq = text.find('=');
  spec.name = std::string(trimView(text.substr(0, eq)));
  requireName(spec.name, text);
  if (eq == std::string_view::npos) return spec;
  const std::vector<std::string_view> parts = splitColons(trimView(text.substr(eq + 1)));
  const std::string what = "input '" + std::string(text) + "'";
  if (parts[0] == "linspace")
    spec.fill = InputSpec::Fill::Linspace;
  else if (parts[0] == "random") {
    spec.fill = InputSpec::Fill::Random;
    spec.low = -1;
    spec.high = 1;
  } else
    throw std::invalid_argument(what + ": the fill is linspace or random (x=linspace:-10:10, x=random:0:1), not '" +
                                std::string(parts[0]) + "'");
  if (parts.size() == 3) {
    spec.low = parseNumber(parts[1], what);
    spec.high = parseNumber(parts[2], what);
  } else if (parts.size() != 1) {
    throw std::invalid_argument(what + ": give both ends, as in " + std::string(parts[0]) + ":-1:1");
  }
  return spec;
}

template <class T>
void fillInput(const InputSpec& spec, T* data, std::size_t n) {
  if (spec.fill == InputSpec::Fill::Linspace) {
    const double step = n > 1 ? (spec.high - spec.low) / static_cast<double>(n - 1) : 0.0;
    detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) data[k] = static_cast<T>(spec.low + step * static_cast<double>(k));
    });
    return;
  }
  detail::fillRandom(data, n, spec.seed);  // [-1, 1)
  const double half = 0.5 * (spec.high - spec.low);
  detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k)
      data[k] = static_cast<T>(spec.low + half * (static_cast<double>(data[k]) + 1.0));
  });
}
template void fillInput<float>(const InputSpec&, float*, std::size_t);
template void fillInput<double>(const InputSpec&, double*, std::size_t);

namespace {
constexpr const char* kScalarNames[] = {"i32", "i64", "u32", "u64", "f32", "f64"};
}

KernelArg parseKernelArg(std::string_view text) {
  const std::size_t colon = text.find(':');
  const std::string usage =
      "an argument is in:NAME[=linspace:A:B|=random:A:B], out:NAME or TYPE:NAME=VALUE with TYPE i32, i64, u32, u64, "
      "f32 or f64 and VALUE a number or n";
  if (colon == std::string_view::npos) throw std::invalid_argument("'" + std::string(text) + "': " + usage);
  const std::string_view kind = trimView(text.substr(0, colon));
  const std::string_view rest = trimView(text.substr(colon + 1));
  KernelArg arg;
  if (kind == "in") {
    arg.kind = KernelArg::Kind::Input;
    arg.fill = parseInputSpec(rest);
    arg.name = arg.fill.name;
    return arg;
  }
  if (kind == "out") {
    arg.kind = KernelArg::Kind::Output;
    arg.name = std::string(rest);
    requireName(arg.name, text);
    return arg;
  }
  const auto type = std::find(std::begin(kScalarNames), std::end(kScalarNames), kind);
  if (type == std::end(kScalarNames)) throw std::invalid_argument("'" + std::string(text) + "': " + usage);
  arg.kind = KernelArg::Kind::Scalar;
  arg.scalar = static_cast<KernelArg::Scalar>(type - std::begin(kScalarNames));
  const std::size_t eq = rest.find('=');
  if (eq == std::string_view::npos)
    throw std::invalid_argument("'" + std::string(text) + "': a scalar needs a value, as in " + std::string(kind) +
                                ":" + std::string(rest) + "=n");
  arg.name = std::string(trimView(rest.substr(0, eq)));
  requireName(arg.name, text);
  const std::string_view value = trimView(rest.substr(eq + 1));
  if (value == "n")
    arg.valueIsCount = true;
  else
    arg.value = parseNumber(value, "argument '" + std::string(text) + "'");
  return arg;
}

std::size_t argumentBytes(const KernelArg& arg) {
  if (arg.kind != KernelArg::Kind::Scalar) return sizeof(void*);
  switch (arg.scalar) {
    case KernelArg::Scalar::I32:
    case KernelArg::Scalar::U32:
    case KernelArg::Scalar::F32:
      return 4;
    default:
      return 8;
  }
}

// ---------------------------------------------------------------------------------------------
// Launch shapes

std::array<unsigned, 3> parseDims(std::string_view text, const char* what) {
  std::array<unsigned, 3> dims{1, 1, 1};
  int count = 0;
  const std::string original(text);
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t x = std::min(text.find_first_of("xX,", start), text.size());
    const std::string_view part = trimView(text.substr(start, x - start));
    if (count == 3) throw std::invalid_argument(std::string(what) + " '" + original + "' has more than 3 dimensions");
    unsigned long long v = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || v > 0xFFFFFFFFull)
      throw std::invalid_argument(std::string(what) + " '" + original +
                                  "' is not a list of whole numbers like 256, 16x16 or 8x8x4");
    dims[static_cast<std::size_t>(count++)] = static_cast<unsigned>(v);
    if (x == text.size()) break;
    start = x + 1;
  }
  return dims;
}

std::array<unsigned, 3> autoGrid(std::size_t n, const LaunchShape& shape) {
  const std::size_t threads = std::max<std::size_t>(1, shape.block[0]);
  const std::size_t blocks = std::max<std::size_t>(1, (n + threads - 1) / threads);
  return {static_cast<unsigned>(std::min<std::size_t>(blocks, 0xFFFFFFFFu)), 1, 1};
}

void checkLaunch(const std::array<unsigned, 3>& grid, const LaunchShape& shape, const LaunchLimits& limits,
                 const std::string& kernelName) {
  const char* axes = "xyz";
  for (int d = 0; d < 3; ++d) {
    if (grid[d] == 0)
      throw LaunchError("the grid of '" + kernelName + "' has 0 blocks along " + axes[d] + ": nothing would run");
    if (shape.block[d] == 0)
      throw LaunchError("the block of '" + kernelName + "' has 0 threads along " + axes[d] + ": nothing would run");
    if (shape.block[d] > static_cast<unsigned>(limits.maxBlockDims[d]))
      throw LaunchError("the block of '" + kernelName + "' has " + std::to_string(shape.block[d]) + " threads along " +
                        axes[d] + "; the device allows " + std::to_string(limits.maxBlockDims[d]));
    if (grid[d] > static_cast<unsigned>(limits.maxGridDims[d]))
      throw LaunchError("the grid of '" + kernelName + "' has " + std::to_string(grid[d]) + " blocks along " + axes[d] +
                        "; the device allows " + std::to_string(limits.maxGridDims[d]));
  }
  const unsigned long long threads = 1ull * shape.block[0] * shape.block[1] * shape.block[2];
  if (threads > static_cast<unsigned long long>(limits.maxThreadsPerBlock))
    throw LaunchError("a block of " + std::to_string(threads) + " threads is over the device's limit of " +
                      std::to_string(limits.maxThreadsPerBlock) + " threads per block");
  if (threads > static_cast<unsigned long long>(limits.kernelMaxThreads))
    throw LaunchError("'" + kernelName + "' uses " + std::to_string(limits.kernelRegisters) +
                      " registers per thread, so a block may have at most " + std::to_string(limits.kernelMaxThreads) +
                      " threads, not " + std::to_string(threads));
  const std::size_t shared = limits.kernelStaticShared + shape.dynamicSharedBytes;
  if (shared > limits.sharedPerBlockOptin)
    throw LaunchError("'" + kernelName + "' would need " + formatBytes(shared) + " of shared memory per block (" +
                      formatBytes(limits.kernelStaticShared) + " static + " + formatBytes(shape.dynamicSharedBytes) +
                      " dynamic); a block may have at most " + formatBytes(limits.sharedPerBlockOptin));
}

// ---------------------------------------------------------------------------------------------
// Records

std::string KernelRun::compileSummary() const {
  if (!gpuRan) return "not compiled: " + checkNote;
  char text[160];
  switch (compiled.cache) {
    case CacheOutcome::Compiled:
      std::snprintf(text, sizeof text, "compiled in %.1f ms (NVRTC, %s)", compiled.compileMs, compiled.target.c_str());
      break;
    case CacheOutcome::Memory:
    case CacheOutcome::Disk:
      std::snprintf(text, sizeof text, "%s (key %s, %s): no compile", std::string(toString(compiled.cache)).c_str(),
                    compiled.key.c_str(), compiled.target.c_str());
      break;
  }
  return text;
}

std::vector<Record> KernelRun::records() const {
  std::vector<Record> rows;
  const std::string variant = kind == "elementwise" ? expression : kernelName;
  Record g = detail::labRecord("custom", kind == "elementwise" ? "gpu_elementwise" : "gpu_raw", dtype,
                               {static_cast<std::int64_t>(size)}, static_cast<double>(size), true);
  g.variant = variant;
  char params[256];
  std::snprintf(params, sizeof params, "compile_ms=%.3f load_ms=%.3f grid=%ux%ux%u block=%ux%ux%u registers=%d",
                compiled.compileMs, loadMs, grid[0], grid[1], grid[2], block[0], block[1], block[2], registers);
  g.params = params;
  detail::setTimes(g, gpu);
  g.uploadMs = uploadMs;
  g.downloadMs = downloadMs;
  const double bytes = static_cast<double>((inputs.size() + outputs.size()) * size * dtypeSize(dtype));
  if (gpu.medianMs > 0) g.gbps = bytes / (gpu.medianMs * 1e6);
  g.note = std::string(toString(compiled.cache));
  if (checked) {
    double worst = 0;
    for (const OutputCheck& c : checks) worst = std::max(worst, c.maxError);
    g.relativeError = worst;
  }
  if (gpuRan) rows.push_back(g);
  if (checked || !gpuRan) {
    Record c =
        detail::labRecord("custom", "cpu", dtype, {static_cast<std::int64_t>(size)}, static_cast<double>(size), false);
    c.variant = variant;
    c.params = "threads=" + std::to_string(cpuThreads);
    detail::setTimes(c, cpu);
    if (cpu.medianMs > 0) c.gbps = bytes / (cpu.medianMs * 1e6);
    rows.push_back(c);
  }
  return rows;
}

double customTolerance(DType dtype) { return dtype == DType::F32 ? 1e-5 : 1e-12; }

// ---------------------------------------------------------------------------------------------
// Runs

namespace {

bool stickyError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void throwFault(cudaError_t e, const std::string& kernelName) {
  const bool sticky = stickyError(e);
  cudaGetLastError();
  std::string message = "the kernel '" + kernelName + "' failed while running: " + cudaGetErrorName(e) + " (" +
                        cudaGetErrorString(e) + ")";
  if (sticky)
    message +=
        ". This error is sticky: the GPU context of this process is lost and every later CUDA call fails; restart "
        "the program (gpulab-cli, or the gpulab app) to use the GPU again";
  throw KernelFault(message, sticky);
}

/// A loaded library, unloaded when the run ends.
struct Library {
  cudaLibrary_t handle = nullptr;
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (handle) cudaLibraryUnload(handle);
  }
};

/// Everything a run needs, elementwise or raw alike.
struct Plan {
  std::string kind;
  std::string source;
  std::string sourceName;
  std::string kernelName;
  std::vector<std::string> options;
  bool useDiskCache = true;
  std::vector<KernelArg> args;
  LaunchShape launch;
  DType dtype = DType::F32;
  std::size_t n = 0;
  std::optional<ElementwiseProgram> check;  ///< its names are argument names
  std::string expression;
  std::string checkNote;
  int reps = 10;
  int warmup = 2;
};

void checkRepetitions(int reps, int warmup) {
  if (reps < 1 || reps > 100000)
    throw std::invalid_argument("repetitions must be 1 to 100000, got " + std::to_string(reps));
  if (warmup < 0 || warmup > 1000)
    throw std::invalid_argument("warm-up runs must be 0 to 1000, got " + std::to_string(warmup));
}

/// The 8 bytes a scalar argument passes, checked against its type's range.
std::array<unsigned char, 8> scalarBytes(const KernelArg& arg, std::size_t n) {
  const double v = arg.valueIsCount ? static_cast<double>(n) : arg.value;
  std::array<unsigned char, 8> bytes{};
  auto integral = [&](double lo, double hi, const char* type) {
    if (v != std::floor(v) || v < lo || v > hi) {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", v);
      throw LaunchError("argument '" + arg.name + "' is " + type + " but its value " + text +
                        (v != std::floor(v) ? " is not a whole number" : " does not fit in it") +
                        (arg.valueIsCount ? " (n, the element count): use i64 or u64" : ""));
    }
  };
  auto put = [&](auto value) { std::memcpy(bytes.data(), &value, sizeof value); };
  switch (arg.scalar) {
    case KernelArg::Scalar::I32:
      integral(-2147483648.0, 2147483647.0, "i32");
      put(static_cast<std::int32_t>(v));
      break;
    case KernelArg::Scalar::I64:
      integral(-9.2233720368547758e18, 9.2233720368547748e18, "i64");
      put(static_cast<std::int64_t>(v));
      break;
    case KernelArg::Scalar::U32:
      integral(0, 4294967295.0, "u32");
      put(static_cast<std::uint32_t>(v));
      break;
    case KernelArg::Scalar::U64:
      integral(0, 1.8446744073709550e19, "u64");
      put(static_cast<std::uint64_t>(v));
      break;
    case KernelArg::Scalar::F32:
      put(static_cast<float>(v));
      break;
    case KernelArg::Scalar::F64:
      put(v);
      break;
  }
  return bytes;
}

template <class T>
bool sameValue(T gpu, T cpu) {
  if (std::isnan(gpu) && std::isnan(cpu)) return true;
  if (std::isinf(gpu) || std::isinf(cpu)) return gpu == cpu;
  return false;
}

}  // namespace

struct CustomKernelLab::State : detail::LabState {
  using LabState::LabState;
  std::vector<DeviceBuffer> arrays;
  std::vector<detail::HostArray> hostArrays;
  std::vector<detail::HostArray> checkArrays;

  template <class T>
  KernelRun run(const Plan& plan);
  template <class T>
  KernelRun cpuOnly(const Plan& plan);
};

CustomKernelLab::CustomKernelLab() : state_(std::make_unique<State>(hasGpu())) {}
CustomKernelLab::~CustomKernelLab() = default;

template <class T>
KernelRun CustomKernelLab::State::cpuOnly(const Plan& plan) {
  KernelRun run;
  run.kind = plan.kind;
  run.kernelName = plan.kernelName;
  run.source = plan.source;
  run.expression = plan.expression;
  run.dtype = plan.dtype;
  run.size = plan.n;
  run.gpuRan = false;
  run.checkNote = "no CUDA device (" + detail::gpuUnavailableReason() +
                  "): the expression was evaluated on the CPU alone, nothing was compiled or checked";
  const ElementwiseProgram& program = *plan.check;
  const std::size_t bytes = plan.n * sizeof(T);
  detail::requireHostMemory((program.inputs.size() + program.outputs.size()) * bytes, "the expression's arrays");
  hostArrays.resize(std::max(hostArrays.size(), program.inputs.size() + program.outputs.size()));
  std::vector<Operand<T>> operands;
  std::vector<T*> results;
  for (std::size_t a = 0; a < plan.args.size(); ++a) {
    const KernelArg& arg = plan.args[a];
    if (arg.kind == KernelArg::Kind::Scalar) continue;
    detail::HostArray& host = hostArrays[operands.size() + results.size()];
    host.reserve(bytes, false);
    if (arg.kind == KernelArg::Kind::Input) {
      fillInput(arg.fill, host.as<T>(), plan.n);
      operands.push_back({host.as<T>(), T(0)});
      run.inputs.push_back(arg.name);
    } else {
      results.push_back(host.as<T>());
      run.outputs.push_back(arg.name);
    }
  }
  run.cpu = timeHost([&] { evaluateElementwise<T>(program, operands, results, plan.n); },
                     TimingOptions{plan.warmup > 0 ? 1 : 0, std::clamp(plan.reps, 1, 5)});
  run.cpuThreads = detail::cpuThreadCount();
  return run;
}

template <class T>
KernelRun CustomKernelLab::State::run(const Plan& plan) {
  if (!gpu() && plan.kind == "elementwise") return cpuOnly<T>(plan);
  requireGpu("a custom kernel");
  KernelRun run;
  run.kind = plan.kind;
  run.kernelName = plan.kernelName;
  run.source = plan.source;
  run.expression = plan.expression;
  run.dtype = plan.dtype;
  run.size = plan.n;
  run.dynamicSharedBytes = plan.launch.dynamicSharedBytes;
  const std::size_t n = plan.n;

  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  run.deviceName = prop.name;

  // Arrays: every in: and out: argument, n elements each.
  std::vector<std::size_t> arrayOf(plan.args.size(), SIZE_MAX);
  std::size_t arrayCount = 0;
  for (std::size_t a = 0; a < plan.args.size(); ++a) {
    const KernelArg& arg = plan.args[a];
    if (arg.kind == KernelArg::Kind::Scalar) continue;
    arrayOf[a] = arrayCount++;
    (arg.kind == KernelArg::Kind::Input ? run.inputs : run.outputs).push_back(arg.name);
  }
  const std::size_t bytes = n * sizeof(T);
  detail::requireDeviceMemory(arrayCount * bytes, "the custom kernel's " + std::to_string(arrayCount) + " arrays");
  detail::requireHostMemory(arrayCount * bytes * (plan.check ? 2 : 1), "the custom kernel's host arrays");

  // Compile (or take from the cache) and load before touching memory: compile errors come first.
  run.compiled =
      compileKernel(plan.source, plan.sourceName, plan.options, prop.major * 10 + prop.minor, plan.useDiskCache);
  Library library;
  {
    const Stopwatch watch;
    GPULAB_CUDA_CHECK(
        cudaLibraryLoadData(&library.handle, run.compiled.binary->data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    run.loadMs = watch.elapsedMs();
  }
  cudaKernel_t kernel = nullptr;
  if (const cudaError_t e = cudaLibraryGetKernel(&kernel, library.handle, plan.kernelName.c_str()); e != cudaSuccess) {
    cudaGetLastError();
    throw LaunchError("no kernel named '" + plan.kernelName + "' in " + plan.sourceName +
                      ": the entry point must be declared extern \"C\" __global__ (C++ names are mangled)");
  }
  const void* function = reinterpret_cast<const void*>(kernel);
  cudaFuncAttributes attributes{};
  GPULAB_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));
  run.registers = attributes.numRegs;
  run.staticSharedBytes = attributes.sharedSizeBytes;

  // The kernel's parameters against the arguments: count and size of each.
  {
    std::vector<std::size_t> sizes;
    for (std::size_t index = 0; index < 1024; ++index) {
      std::size_t offset = 0, size = 0;
      if (cudaFuncGetParamInfo(function, index, &offset, &size) != cudaSuccess) {
        cudaGetLastError();
        break;
      }
      sizes.push_back(size);
    }
    if (sizes.size() != plan.args.size())
      throw LaunchError("'" + plan.kernelName + "' takes " + std::to_string(sizes.size()) + " parameters; " +
                        std::to_string(plan.args.size()) + " arguments were given");
    for (std::size_t a = 0; a < sizes.size(); ++a)
      if (sizes[a] != argumentBytes(plan.args[a]))
        throw LaunchError("parameter " + std::to_string(a + 1) + " of '" + plan.kernelName + "' is " +
                          std::to_string(sizes[a]) + " bytes but the argument '" + plan.args[a].name + "' passes " +
                          std::to_string(argumentBytes(plan.args[a])) + " (" +
                          (plan.args[a].kind == KernelArg::Kind::Scalar
                               ? std::string(kScalarNames[static_cast<int>(plan.args[a].scalar)])
                               : std::string("a device pointer")) +
                          ")");
  }

  // The launch shape against the device's and the kernel's limits.
  const std::array<unsigned, 3> grid = plan.launch.autoGrid ? autoGrid(n, plan.launch) : plan.launch.grid;
  LaunchLimits limits;
  limits.maxThreadsPerBlock = prop.maxThreadsPerBlock;
  limits.maxBlockDims = {prop.maxThreadsDim[0], prop.maxThreadsDim[1], prop.maxThreadsDim[2]};
  limits.maxGridDims = {prop.maxGridSize[0], prop.maxGridSize[1], prop.maxGridSize[2]};
  limits.sharedPerBlock = prop.sharedMemPerBlock;
  limits.sharedPerBlockOptin = prop.sharedMemPerBlockOptin;
  limits.kernelMaxThreads = attributes.maxThreadsPerBlock;
  limits.kernelStaticShared = attributes.sharedSizeBytes;
  limits.kernelRegisters = attributes.numRegs;
  checkLaunch(grid, plan.launch, limits, plan.kernelName);
  run.grid = grid;
  run.block = plan.launch.block;
  if (attributes.sharedSizeBytes + plan.launch.dynamicSharedBytes > prop.sharedMemPerBlock)
    GPULAB_CUDA_CHECK(cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(plan.launch.dynamicSharedBytes)));

  // Host and device arrays; inputs filled, outputs zeroed.
  arrays.resize(std::max(arrays.size(), arrayCount));
  hostArrays.resize(std::max(hostArrays.size(), arrayCount));
  for (std::size_t k = 0; k < arrayCount; ++k) {
    arrays[k].reserve(bytes);
    hostArrays[k].reserve(bytes, true);
  }
  for (std::size_t a = 0; a < plan.args.size(); ++a)
    if (plan.args[a].kind == KernelArg::Kind::Input) fillInput(plan.args[a].fill, hostArrays[arrayOf[a]].as<T>(), n);

  std::vector<std::array<unsigned char, 8>> storage(plan.args.size());
  std::vector<void*> argPointers(plan.args.size());
  for (std::size_t a = 0; a < plan.args.size(); ++a) {
    if (plan.args[a].kind == KernelArg::Kind::Scalar) {
      storage[a] = scalarBytes(plan.args[a], n);
    } else {
      void* pointer = arrays[arrayOf[a]].data();
      std::memcpy(storage[a].data(), &pointer, sizeof pointer);
    }
    argPointers[a] = storage[a].data();
  }

  const cudaStream_t s = cuStream();
  auto upload = [&] {
    for (std::size_t a = 0; a < plan.args.size(); ++a)
      if (plan.args[a].kind == KernelArg::Kind::Input)
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(arrays[arrayOf[a]].data(), hostArrays[arrayOf[a]].data(), bytes,
                                          cudaMemcpyHostToDevice, s));
  };
  auto clearOutputs = [&] {
    for (std::size_t a = 0; a < plan.args.size(); ++a)
      if (plan.args[a].kind == KernelArg::Kind::Output)
        GPULAB_CUDA_CHECK(cudaMemsetAsync(arrays[arrayOf[a]].data(), 0, bytes, s));
  };
  auto download = [&] {
    for (std::size_t a = 0; a < plan.args.size(); ++a)
      if (plan.args[a].kind == KernelArg::Kind::Output)
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(hostArrays[arrayOf[a]].data(), arrays[arrayOf[a]].data(), bytes,
                                          cudaMemcpyDeviceToHost, s));
  };
  auto launch = [&] {
    const cudaError_t e =
        cudaLaunchKernel(function, dim3(grid[0], grid[1], grid[2]), dim3(run.block[0], run.block[1], run.block[2]),
                         argPointers.data(), plan.launch.dynamicSharedBytes, s);
    if (e != cudaSuccess) {
      if (stickyError(e)) throwFault(e, plan.kernelName);
      gpulab::detail::throwCudaError("cudaLaunchKernel", __FILE__, __LINE__, e);
    }
  };
  auto synchronize = [&] {
    if (const cudaError_t e = cudaStreamSynchronize(s); e != cudaSuccess) throwFault(e, plan.kernelName);
  };

  // One launch from fresh inputs and zeroed outputs: the result that is checked (a kernel that
  // accumulates into its outputs would drift over the timed repetitions).
  upload();
  clearOutputs();
  launch();
  synchronize();
  download();
  synchronize();

  // Check on the host, in T, before the timed runs overwrite the host outputs.
  if (plan.check) {
    const ElementwiseProgram& program = *plan.check;
    checkArrays.resize(std::max(checkArrays.size(), program.outputs.size()));
    std::vector<Operand<T>> operands;
    for (const std::string& name : program.inputs) {
      const auto it =
          std::find_if(plan.args.begin(), plan.args.end(), [&](const KernelArg& a) { return a.name == name; });
      const std::size_t a = static_cast<std::size_t>(it - plan.args.begin());
      if (it->kind == KernelArg::Kind::Scalar)
        operands.push_back({nullptr, static_cast<T>(it->valueIsCount ? static_cast<double>(n) : it->value)});
      else
        operands.push_back({hostArrays[arrayOf[a]].as<T>(), T(0)});
    }
    std::vector<T*> results;
    for (std::size_t k = 0; k < program.outputs.size(); ++k) {
      checkArrays[k].reserve(bytes, false);
      results.push_back(checkArrays[k].as<T>());
    }
    const int cpuReps = std::clamp(plan.reps, 1, 5);
    run.cpu = timeHost([&] { evaluateElementwise<T>(program, operands, results, n); },
                       TimingOptions{plan.warmup > 0 ? 1 : 0, cpuReps});
    run.cpuThreads = detail::cpuThreadCount();
    run.tolerance = customTolerance(plan.dtype);
    run.checked = true;
    for (std::size_t k = 0; k < program.outputs.size(); ++k) {
      const auto it = std::find_if(plan.args.begin(), plan.args.end(),
                                   [&](const KernelArg& a) { return a.name == program.outputs[k]; });
      const T* gpuValues = hostArrays[arrayOf[static_cast<std::size_t>(it - plan.args.begin())]].as<T>();
      const T* cpuValues = results[k];
      OutputCheck c;
      c.name = program.outputs[k];
      for (std::size_t j = 0; j < n; ++j) {
        const T g = gpuValues[j], h = cpuValues[j];
        double error = 0, absError = 0;
        if (!sameValue(g, h)) {
          if (std::isfinite(g) && std::isfinite(h)) {
            absError = std::fabs(static_cast<double>(g) - static_cast<double>(h));
            error = absError / std::max(1.0, std::fabs(static_cast<double>(h)));
          } else {
            absError = error = std::numeric_limits<double>::infinity();
          }
        }
        c.maxAbsError = std::max(c.maxAbsError, absError);
        c.maxError = std::max(c.maxError, error);
        if (error > run.tolerance) {
          if (c.mismatches == 0) {
            c.firstMismatch = j;
            c.gpuValue = g;
            c.cpuValue = h;
          }
          ++c.mismatches;
        }
      }
      if (c.mismatches > 0) run.passed = false;
      run.checks.push_back(c);
    }
  } else {
    run.checkNote = plan.checkNote;
  }

  // Timed: upload, kernel, download apart, CUDA events on the lab's stream, warm-up excluded.
  const TimingOptions timing{plan.warmup, plan.reps};
  run.uploadMs = timeStream(s, upload, timing).medianMs;
  try {
    run.gpu = timeStream(s, launch, timing);
  } catch (const CudaError& e) {
    throwFault(static_cast<cudaError_t>(e.code()), plan.kernelName);
  }
  run.downloadMs = timeStream(s, download, timing).medianMs;
  synchronize();
  return run;
}

KernelRun CustomKernelLab::runElementwise(const ElementwiseRequest& request) {
  checkRepetitions(request.reps, request.warmup);
  detail::checkSize("custom kernel", request.size, kMaxCustomElements, "elements");
  Plan plan;
  plan.kind = "elementwise";
  plan.expression = request.expression;
  ElementwiseProgram program = parseElementwise(request.expression);
  for (const InputSpec& spec : request.inputs)
    if (std::find(program.inputs.begin(), program.inputs.end(), spec.name) == program.inputs.end())
      throw std::invalid_argument("--input names '" + spec.name + "', which the expression does not read" +
                                  (program.inputs.empty() ? std::string(" (it reads no input)") : ""));
  plan.source = elementwiseSource(program, request.dtype);
  plan.sourceName = "elementwise.cu";
  plan.kernelName = kElementwiseKernelName;
  plan.options = request.options;
  plan.useDiskCache = request.useDiskCache;
  for (std::size_t k = 0; k < program.inputs.size(); ++k) {
    KernelArg arg;
    arg.kind = KernelArg::Kind::Input;
    arg.name = program.inputs[k];
    const auto given = std::find_if(request.inputs.begin(), request.inputs.end(),
                                    [&](const InputSpec& s) { return s.name == arg.name; });
    if (given != request.inputs.end()) {
      arg.fill = *given;
    } else {
      arg.fill.name = arg.name;
      if (k > 0) {
        arg.fill.fill = InputSpec::Fill::Random;
        arg.fill.low = -1;
        arg.fill.high = 1;
      }
    }
    arg.fill.seed = k + 1;
    plan.args.push_back(arg);
  }
  for (const std::string& out : program.outputs) {
    KernelArg arg;
    arg.kind = KernelArg::Kind::Output;
    arg.name = out;
    plan.args.push_back(arg);
  }
  KernelArg count;
  count.kind = KernelArg::Kind::Scalar;
  count.scalar = KernelArg::Scalar::U64;
  count.name = "n";
  count.valueIsCount = true;
  plan.args.push_back(count);
  plan.dtype = request.dtype;
  plan.n = request.size;
  plan.check = std::move(program);
  plan.reps = request.reps;
  plan.warmup = request.warmup;
  return detail::byDType(request.dtype, [&](auto t) { return state_->run<decltype(t)>(plan); });
}

KernelRun CustomKernelLab::runRaw(const RawKernelRequest& request) {
  checkRepetitions(request.reps, request.warmup);
  detail::checkSize("custom kernel", request.size, kMaxCustomElements, "elements");
  if (request.source.find_first_not_of(" \t\r\n") == std::string::npos)
    throw std::invalid_argument("the kernel source is empty");
  if (!validName(request.kernel))
    throw std::invalid_argument("the kernel name '" + request.kernel +
                                "' is not a C identifier: name the extern \"C\" __global__ function");
  for (std::size_t a = 0; a < request.args.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (request.args[a].name == request.args[b].name)
        throw LaunchError("two arguments are named '" + request.args[a].name + "'");
  // A 2-D or 3-D block with an automatic grid would cover n only along x: the grid must be given.
  if (request.launch.autoGrid && (request.launch.block[1] != 1 || request.launch.block[2] != 1))
    throw LaunchError("an automatic grid covers n elements with 1-D blocks; give the grid too for a " +
                      std::to_string(request.launch.block[0]) + "x" + std::to_string(request.launch.block[1]) + "x" +
                      std::to_string(request.launch.block[2]) + " block");
  Plan plan;
  plan.kind = "raw";
  plan.source = request.source;
  plan.sourceName = request.sourceName.empty() ? "kernel.cu" : request.sourceName;
  plan.kernelName = request.kernel;
  plan.options = request.options;
  plan.useDiskCache = request.useDiskCache;
  plan.args = request.args;
  for (std::size_t a = 0; a < plan.args.size(); ++a) plan.args[a].fill.seed = a + 1;
  plan.launch = request.launch;
  plan.dtype = request.dtype;
  plan.n = request.size;
  plan.reps = request.reps;
  plan.warmup = request.warmup;
  plan.expression = request.check;
  std::string argNames;
  for (const KernelArg& a : request.args) argNames += (argNames.empty() ? "" : ", ") + a.name;
  if (request.check.find_first_not_of(" \t\r\n;") == std::string::npos) {
    plan.checkNote = "no check expression was given: the kernel is timed only, its results are not verified";
  } else {
    ElementwiseProgram program = parseElementwise(request.check);
    auto find = [&](const std::string& name) {
      return std::find_if(request.args.begin(), request.args.end(), [&](const KernelArg& a) { return a.name == name; });
    };
    for (const std::string& name : program.inputs) {
      const auto it = find(name);
      if (it == request.args.end())
        throw LaunchError("the check reads '" + name + "', which is not an argument of the kernel (arguments: " +
                          (argNames.empty() ? std::string("none") : argNames) + ")");
      if (it->kind == KernelArg::Kind::Output)
        throw LaunchError("the check reads '" + name +
                          "', an output of the kernel: it computes the outputs from the inputs and scalars");
    }
    for (const std::string& name : program.outputs) {
      const auto it = find(name);
      if (it == request.args.end() || it->kind != KernelArg::Kind::Output)
        throw LaunchError("the check assigns '" + name + "', which is not an out: argument of the kernel (arguments: " +
                          (argNames.empty() ? std::string("none") : argNames) + ")");
    }
    plan.check = std::move(program);
  }
  return detail::byDType(request.dtype, [&](auto t) { return state_->run<decltype(t)>(plan); });
}

}  // namespace gpulab::lab
