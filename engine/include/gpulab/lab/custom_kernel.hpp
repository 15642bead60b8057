// Custom kernels compiled at run time with NVRTC: the C++ counterpart of CuPy's ElementwiseKernel
// and RawKernel.
//
//   gpulab::lab::CustomKernelLab lab;
//   ElementwiseRequest e{.expression = "y = sin(x)*2 + sqrt(abs(x))", .dtype = DType::F32, .size = 1 << 20};
//   KernelRun run = lab.runElementwise(e);   // parse, generate, compile (or cache), load, time, check
//   if (!run.passed) ...                     // GPU and CPU disagree beyond run.tolerance
//
// Elementwise: the expression (expression.hpp) becomes a self-contained CUDA source; its inputs are
// filled on the host (linspace or seeded random, InputSpec) and uploaded; the kernel's outputs are
// checked against the same program evaluated on the host in the same type, on all cores.
// Raw: a CUDA source with an extern "C" __global__ entry point, arguments bound from named arrays
// (in:/out:) and scalars (i32/i64/u32/u64/f32/f64, a value or n) in parameter order, a grid/block
// or "auto" (ceil(n / block) blocks) launch; checked where the request gives an expression for the
// outputs over the other arguments, otherwise timed only (KernelRun::checkNote says so).
//
// Compiling: NVRTC for the device's architecture (sm_XX from cudaGetDeviceProperties; compute_XX PTX
// for the newest architecture NVRTC knows when it does not know the device's), then loaded with the
// runtime's cudaLibraryLoadData and launched with cudaLaunchKernel (no driver API). Compiled binaries
// are cached by kernelCacheKey(source, options, architecture): in memory for the process, and on
// disk (kernelCacheDirectory()) across processes, so a second run reports CacheOutcome::Memory or
// Disk and no compile time. Timing: compile (NVRTC, host clock), module load (host clock), upload,
// kernel and download apart with CUDA events, warm-up excluded, median of reps.
//
// Errors: a bad expression throws ExpressionError, a source NVRTC rejects CompileError with the log
// parsed into (line, column, message) diagnostics, an unsafe launch or argument binding LaunchError
// (all std::invalid_argument, before anything runs on the GPU); a kernel that faults throws KernelFault
// (std::runtime_error) saying whether the GPU context is lost (a sticky error: restart the process).
// No GPU: an elementwise run evaluates the expression on the CPU alone (KernelRun::gpuRan false,
// checkNote says why); a raw run throws std::runtime_error naming why; compileKernel still works.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/timing.hpp"  // Stats
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

// ---------------------------------------------------------------------------------------------
// Compiling

/// One line of an NVRTC log: "kernel.cu(12): error: identifier "foo" is undefined", with the column
/// taken from the caret line under the echoed source when NVRTC prints one. Line and column are
/// 1-based; 0 when the log does not say.
struct CompileDiagnostic {
  int line = 0;
  int column = 0;
  std::string severity;  ///< "error", "warning", "remark" (or "" for a line with no position)
  std::string message;
  std::string text() const;  ///< "line 12, column 7: error: identifier "foo" is undefined"
};

/// Parses an NVRTC program log (any file name in front of "(line): ").
std::vector<CompileDiagnostic> parseCompileLog(std::string_view log);

class CompileError : public std::invalid_argument {
 public:
  CompileError(std::string sourceName, std::string log, std::vector<CompileDiagnostic> diagnostics);
  const std::string& sourceName() const noexcept { return sourceName_; }
  const std::string& log() const noexcept { return log_; }
  const std::vector<CompileDiagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  std::string sourceName_;
  std::string log_;
  std::vector<CompileDiagnostic> diagnostics_;
};

/// "sm_90": the target of a compute capability (major * 10 + minor) when NVRTC supports it, else
/// "compute_XX" (PTX) for the newest architecture NVRTC supports below it. Throws std::runtime_error
/// when NVRTC supports none at or below it.
std::string nvrtcTarget(int computeCapability);

/// The cache key of a compiled kernel: 16 hex digits of a 64-bit FNV-1a hash over the target, the
/// options in order and the source, each separated so that no two different triples run together.
std::string kernelCacheKey(std::string_view source, const std::vector<std::string>& options, std::string_view target);

/// Where compiled kernels are kept across processes: $GPULAB_KERNEL_CACHE, else
/// $XDG_CACHE_HOME/gpulab/kernels, else ~/.cache/gpulab/kernels; empty when none can be named.
std::filesystem::path kernelCacheDirectory();

enum class CacheOutcome { Compiled, Memory, Disk };
constexpr EnumText enumText(CacheOutcome) { return {"cache outcome", "compiled|cached in memory|cached on disk"}; }

struct CompiledKernel {
  std::string target;                ///< "sm_90" or "compute_90"
  std::vector<std::string> options;  ///< every NVRTC option used, the target included
  std::string key;                   ///< kernelCacheKey
  CacheOutcome cache = CacheOutcome::Compiled;
  double compileMs = 0;                             ///< NVRTC wall time; 0 when cached
  std::string log;                                  ///< NVRTC's log (warnings) of the compile, "" when cached
  std::shared_ptr<const std::vector<char>> binary;  ///< CUBIN (sm_) or PTX (compute_)
};

/// Compiles `source` (named `sourceName` in diagnostics) for `computeCapability` (e.g. 90) with
/// `extraOptions`, or takes it from the caches (memory, then disk when `useDiskCache`). Needs no GPU.
/// Throws CompileError when NVRTC rejects the source, std::runtime_error when NVRTC itself fails.
CompiledKernel compileKernel(const std::string& source, const std::string& sourceName,
                             const std::vector<std::string>& extraOptions, int computeCapability, bool useDiskCache);

/// Empties the process's in-memory cache (tests, and "compile again" in the GUI).
void clearKernelMemoryCache();

// ---------------------------------------------------------------------------------------------
// Inputs, arguments and launch shapes

/// How an input array is filled: `low + (high - low) * k / (n - 1)` (linspace) or seeded uniform
/// values in [low, high).
struct InputSpec {
  enum class Fill { Linspace, Random };
  std::string name;
  Fill fill = Fill::Linspace;
  double low = -10;
  double high = 10;
  std::uint64_t seed = 1;
};
/// "x", "x=linspace", "x=linspace:-1:1", "x=random", "x=random:0:1". Throws std::invalid_argument.
InputSpec parseInputSpec(std::string_view text);
/// Fills `data` (n elements of T) as `spec` says.
template <class T>
void fillInput(const InputSpec& spec, T* data, std::size_t n);

/// One argument of a raw kernel, in parameter order.
struct KernelArg {
  enum class Kind { Input, Output, Scalar };
  enum class Scalar { I32, I64, U32, U64, F32, F64 };
  Kind kind = Kind::Input;
  std::string name;
  InputSpec fill;               ///< Input: how it is filled (fill.name == name)
  Scalar scalar = Scalar::I64;  ///< Scalar: its type
  double value = 0;             ///< Scalar: its value (unless valueIsCount)
  bool valueIsCount = false;    ///< Scalar: the element count n
};
/// "in:x", "in:x=random:-1:1", "out:y", "i32:n=n", "i64:count=1000", "f32:a=2.5". Throws
/// std::invalid_argument naming what is allowed.
KernelArg parseKernelArg(std::string_view text);
/// Bytes of the argument as the kernel receives it (8 for arrays: a device pointer).
std::size_t argumentBytes(const KernelArg& arg);

/// A launch: grid and block dimensions, or "auto" (a 1-D grid of ceil(n / block.x) blocks).
struct LaunchShape {
  bool autoGrid = true;
  std::array<unsigned, 3> grid{0, 1, 1};
  std::array<unsigned, 3> block{256, 1, 1};
  std::size_t dynamicSharedBytes = 0;
};
/// "auto", "1024", "64x64", "8x8x4" for a grid; "256", "16x16" for a block. Throws std::invalid_argument.
std::array<unsigned, 3> parseDims(std::string_view text, const char* what);
/// The grid "auto" means for n elements and the shape's block (at least 1 block).
std::array<unsigned, 3> autoGrid(std::size_t n, const LaunchShape& shape);

/// What the device and the compiled kernel allow (cudaDeviceProp, cudaFuncAttributes).
struct LaunchLimits {
  int maxThreadsPerBlock = 1024;  ///< the device's
  std::array<int, 3> maxBlockDims{1024, 1024, 64};
  std::array<int, 3> maxGridDims{2147483647, 65535, 65535};
  std::size_t sharedPerBlock = 48 << 10;       ///< without opting in
  std::size_t sharedPerBlockOptin = 48 << 10;  ///< the most a block may have
  int kernelMaxThreads = 1024;                 ///< cudaFuncAttributes::maxThreadsPerBlock (registers)
  std::size_t kernelStaticShared = 0;          ///< cudaFuncAttributes::sharedSizeBytes
  int kernelRegisters = 0;
};
/// Throws LaunchError when the launch cannot run: a zero grid or block dimension, more threads per
/// block than the device or the kernel allows (with its registers), a dimension over its limit, more
/// shared memory (static + dynamic) than a block may have.
void checkLaunch(const std::array<unsigned, 3>& grid, const LaunchShape& shape, const LaunchLimits& limits,
                 const std::string& kernelName);

/// An unsafe launch or an argument that cannot be bound, found before launching.
class LaunchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A kernel that failed while running. `sticky()`: the CUDA context is unusable for the rest of
/// the process (illegal address, trap, ...) and the message says to restart it.
class KernelFault : public std::runtime_error {
 public:
  KernelFault(const std::string& message, bool sticky) : std::runtime_error(message), sticky_(sticky) {}
  bool sticky() const noexcept { return sticky_; }

 private:
  bool sticky_;
};

// ---------------------------------------------------------------------------------------------
// Runs

struct ElementwiseRequest {
  std::string expression;
  DType dtype = DType::F32;
  std::size_t size = std::size_t{1} << 20;  ///< elements
  std::vector<InputSpec> inputs;            ///< by name; inputs not named: the first linspace(-10, 10), others random
  std::vector<std::string> options;         ///< extra NVRTC options
  int reps = 10;
  int warmup = 2;
  bool useDiskCache = true;
};

struct RawKernelRequest {
  std::string source;
  std::string sourceName = "kernel.cu";
  std::string kernel;  ///< the extern "C" __global__ entry point
  std::vector<KernelArg> args;
  LaunchShape launch;
  DType dtype = DType::F32;  ///< of every array argument
  std::size_t size = std::size_t{1} << 20;
  std::string check;  ///< expression computing output arrays from input arrays and scalars; "" = timed only
  std::vector<std::string> options;
  int reps = 10;
  int warmup = 2;
  bool useDiskCache = true;
};

/// The largest element count a custom run accepts (per array).
inline constexpr std::size_t kMaxCustomElements = std::size_t{1} << 31;

/// One output's comparison with the host.
struct OutputCheck {
  std::string name;
  double maxAbsError = 0;
  double maxError = 0;  ///< max |gpu - cpu| / max(1, |cpu|): relative for large values, absolute near 0
  std::size_t mismatches = 0;
  std::size_t firstMismatch = 0;  ///< index, when mismatches > 0
  double gpuValue = 0;            ///< at firstMismatch
  double cpuValue = 0;
};

struct KernelRun {
  std::string kind;  ///< "elementwise" or "raw"
  std::string kernelName;
  std::string source;      ///< what NVRTC compiled
  std::string expression;  ///< elementwise: the expression; raw: the check expression ("" = none)
  std::string deviceName;
  bool gpuRan = true;  ///< false: no CUDA device, an elementwise expression evaluated on the CPU alone
  CompiledKernel compiled;
  double loadMs = 0;  ///< cudaLibraryLoadData: module load, host clock
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  std::size_t dynamicSharedBytes = 0;
  int registers = 0;
  std::size_t staticSharedBytes = 0;
  DType dtype = DType::F32;
  std::size_t size = 0;
  std::vector<std::string> inputs;   ///< the arrays uploaded
  std::vector<std::string> outputs;  ///< the arrays downloaded
  Stats gpu;                         ///< the kernel alone, CUDA events
  double uploadMs = 0;               ///< median, every input
  double downloadMs = 0;             ///< median, every output
  bool checked = false;
  std::string checkNote;  ///< why not checked, when !checked
  Stats cpu;              ///< the host evaluation, when checked
  int cpuThreads = 0;
  double tolerance = 0;  ///< on OutputCheck::maxError
  std::vector<OutputCheck> checks;
  bool passed = true;  ///< checked and within tolerance, or not checked

  /// Rows for the lab's table, CSV and JSON: the GPU kernel (params: compile, load, cache) and, when
  /// checked or without a GPU, the CPU evaluation.
  std::vector<Record> records() const;
  /// "compiled in 812.3 ms (NVRTC, sm_90)" / "cached in memory (key 1a2b..., no compile)".
  std::string compileSummary() const;
};

/// The tolerance on OutputCheck::maxError for a type: f32 1e-5, f64 1e-12 (a few ulp of the result,
/// or of 1 near 0: CUDA's math functions are within 1-4 ulp of the host's, and the compiler fuses
/// multiply-adds that the host rounds twice).
double customTolerance(DType dtype);

class CustomKernelLab : public LabBase {
 public:
  CustomKernelLab();
  ~CustomKernelLab();

  KernelRun runElementwise(const ElementwiseRequest& request);
  KernelRun runRaw(const RawKernelRequest& request);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
