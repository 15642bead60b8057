// The custom-kernel lab: the expression parser and host evaluator (precedence, unary minus,
// functions, errors with their line and column), the CUDA source it generates (compiled here by the
// real NVRTC, which needs no GPU), the cache key and the caches, NVRTC logs parsed into diagnostics
// (logs captured from NVRTC 13.0 as text, and live), argument and launch parsing, the launch checks,
// and on a GPU: elementwise and raw kernels compiled, run and checked against the CPU, cached
// second runs, and every refusal before launch. The fault path runs in tests/cli (a faulting kernel
// loses the process's CUDA context, so it gets a process of its own).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "gpulab/lab/custom_kernel.hpp"
#include "gpulab/lab/expression.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::lab;

namespace {

double eval1(const std::string& text, std::vector<double> inputs = {}, double index = 0, double count = 1) {
  const ElementwiseProgram p = parseElementwise(text);
  return evaluateAt(p, inputs, index, count).at(0);
}

// ---------------------------------------------------------------------------------------------
// Parser and evaluator

struct ValueCase {
  const char* text;
  std::vector<double> inputs;
  double expected;
};

class ExpressionValue : public ::testing::TestWithParam<ValueCase> {};

TEST_P(ExpressionValue, EvaluatesAsWritten) {
  const ValueCase& c = GetParam();
  EXPECT_NEAR(eval1(c.text, c.inputs, 4, 10), c.expected, 1e-12 * std::max(1.0, std::fabs(c.expected))) << c.text;
}

INSTANTIATE_TEST_SUITE_P(Precedence, ExpressionValue,
                         ::testing::Values(ValueCase{"y = 1 + 2*3", {}, 7}, ValueCase{"y = (1 + 2)*3", {}, 9},
                                           ValueCase{"y = 8 - 3 - 2", {}, 3}, ValueCase{"y = 10/4/5", {}, 0.5},
                                           ValueCase{"y = 2**3**2", {}, 512}, ValueCase{"y = 2^3^2", {}, 512},
                                           ValueCase{"y = -2**2", {}, -4}, ValueCase{"y = (-2)**2", {}, 4},
                                           ValueCase{"y = 2**-1", {}, 0.5}, ValueCase{"y = 2*-3", {}, -6},
                                           ValueCase{"y = --x", {3}, 3}, ValueCase{"y = -x", {3}, -3},
                                           ValueCase{"y = +x - -x", {3}, 6}, ValueCase{"y = 1 - x*x/2", {2}, -1},
                                           ValueCase{"y = 6/2*3", {}, 9}, ValueCase{"y = 2*3**2", {}, 18}));

INSTANTIATE_TEST_SUITE_P(
    Functions, ExpressionValue,
    ::testing::Values(ValueCase{"y = sin(0) + cos(0)", {}, 1}, ValueCase{"y = atan2(1, 1)", {}, std::numbers::pi / 4},
                      ValueCase{"y = hypot(3, 4)", {}, 5}, ValueCase{"y = pow(2, 10)", {}, 1024},
                      ValueCase{"y = fmod(7, 3)", {}, 1}, ValueCase{"y = min(2, x) + max(2, x)", {5}, 7},
                      ValueCase{"y = abs(-2.5)", {}, 2.5}, ValueCase{"y = round(2.5) + round(-2.5)", {}, 0},
                      ValueCase{"y = floor(-1.5) + ceil(-1.5) + trunc(-1.5)", {}, -4},
                      ValueCase{"y = sqrt(16) + cbrt(27)", {}, 7}, ValueCase{"y = exp(0) + log(1) + exp2(3)", {}, 9},
                      ValueCase{"y = log2(8) + log10(1000)", {}, 6},
                      ValueCase{"y = sin(x)*2 + sqrt(abs(x))", {-4}, std::sin(-4.0) * 2 + 2},
                      ValueCase{"y = pi", {}, std::numbers::pi}, ValueCase{"y = i + n", {}, 14},
                      ValueCase{"y = .5 + 1e3 + 2.5E-1", {}, 1000.75}, ValueCase{"y = tanh(atanh(0.5))", {}, 0.5},
                      ValueCase{"y = erf(0) + erfc(0)", {}, 1}));

TEST(Expression, StatementsInputsAndOutputs) {
  const ElementwiseProgram p = parseElementwise("a = x + 1; b = a * c\n\nd = (x +\n  b)");
  EXPECT_EQ(p.inputs, (std::vector<std::string>{"x", "c"}));
  EXPECT_EQ(p.outputs, (std::vector<std::string>{"a", "b", "d"}));
  const std::vector<double> out = evaluateAt(p, {3, 2});
  EXPECT_EQ(out, (std::vector<double>{4, 8, 11}));
  EXPECT_EQ(parseElementwise("y = b + a*c").inputs, (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(parseElementwise("y = 1;").outputs, (std::vector<std::string>{"y"}));  // a trailing ';'
}

struct ErrorCase {
  const char* text;
  int line;
  int column;
  const char* says;
};

class ExpressionErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ExpressionErrors, NameTheLineAndColumn) {
  const ErrorCase& c = GetParam();
  try {
    parseElementwise(c.text);
    FAIL() << "no error for '" << c.text << "'";
  } catch (const ExpressionError& e) {
    EXPECT_EQ(e.line(), c.line) << c.text << ": " << e.what();
    EXPECT_EQ(e.column(), c.column) << c.text << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.text << ": " << e.what();
    const std::string prefix = c.line > 1 || std::string(c.text).find('\n') != std::string::npos
                                   ? "line " + std::to_string(c.line) + ", column " + std::to_string(c.column) + ": "
                                   : "column " + std::to_string(c.column) + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ExpressionErrors,
    ::testing::Values(
        ErrorCase{"y = sin(x", 1, 10, "expected ',' or ')'"},
        ErrorCase{"y = (x + 1", 1, 11, "to close the '(' at column 5"}, ErrorCase{"y = 2x", 1, 6, "write 2*x"},
        ErrorCase{"y = x +", 1, 8, "statement ends here"}, ErrorCase{"y = sinn(x)", 1, 5, "unknown function 'sinn'"},
        ErrorCase{"y = pow(x)", 1, 5, "pow takes 2 arguments, not 1"},
        ErrorCase{"y = sin(x, 2)", 1, 5, "sin takes 1 argument, not 2"},
        ErrorCase{"y = x $ 2", 1, 7, "unexpected character '$'"}, ErrorCase{"sin(x)", 1, 4, "expected '=' after 'sin'"},
        ErrorCase{"", 1, 1, "empty"}, ErrorCase{"  ;  ", 1, 1, "empty"},
        ErrorCase{"y = x; y = 2", 1, 8, "assigned twice"}, ErrorCase{"i = x", 1, 1, "reserved"},
        ErrorCase{"pi = 3", 1, 1, "reserved"}, ErrorCase{"sqrt = 3", 1, 1, "is a function"},
        ErrorCase{"y = x + z; z = 1", 1, 12, "'z' is read as an input before"},
        ErrorCase{"y = y + 1", 1, 1, "read as an input by its own statement"}, ErrorCase{"y = 1e+", 1, 6, "exponent"},
        ErrorCase{"y = x == 2", 1, 7, "'==' is not supported"}, ErrorCase{"y = sin", 1, 5, "is a function"},
        ErrorCase{"y = 1 2", 1, 7, "expected an operator"}, ErrorCase{"y = )", 1, 5, "found ')'"},
        ErrorCase{"2 = x", 1, 1, "starts with the name"}, ErrorCase{"a = 1\nb = (2 +", 2, 9, "statement ends here"},
        ErrorCase{"a = 1\n  b = a + q(1)", 2, 11, "unknown function 'q'"}));

template <class T>
void checkEvaluatorAgainstLoop(std::size_t n) {
  const ElementwiseProgram p = parseElementwise("y = sin(x)*2 + sqrt(abs(x)); z = y - a*i");
  std::vector<T> x(n), y(n), z(n);
  for (std::size_t k = 0; k < n; ++k) x[k] = static_cast<T>(-10.0 + 20.0 * static_cast<double>(k) / 997.0);
  const T a = static_cast<T>(0.25);
  evaluateElementwise<T>(p, {{x.data(), T(0)}, {nullptr, a}}, {y.data(), z.data()}, n);
  for (std::size_t k = 0; k < n; ++k) {
    const T yk = static_cast<T>(std::sin(x[k]) * T(2)) + static_cast<T>(std::sqrt(std::fabs(x[k])));
    const T zk = yk - static_cast<T>(a * static_cast<T>(k));
    ASSERT_EQ(y[k], yk) << "n " << n << " at " << k;
    ASSERT_EQ(z[k], zk) << "n " << n << " at " << k;
  }
}

TEST(Expression, HostEvaluatorMatchesTheLoopAtOddSizes) {
  for (std::size_t n : {1u, 2u, 7u, 255u, 256u, 257u, 1000u, 65537u}) {
    checkEvaluatorAgainstLoop<float>(n);
    checkEvaluatorAgainstLoop<double>(n);
  }
}

TEST(Expression, EvaluatorChecksItsOperands) {
  const ElementwiseProgram p = parseElementwise("y = x + w");
  std::vector<float> out(4);
  EXPECT_THROW(evaluateElementwise<float>(p, {{nullptr, 1.f}}, {out.data()}, 4), std::invalid_argument);
  EXPECT_THROW(evaluateElementwise<float>(p, {{nullptr, 1.f}, {nullptr, 2.f}}, {}, 4), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Source generation, compiled by NVRTC (no GPU needed)

TEST(ElementwiseSource, FloatAndDoubleFlavours) {
  const ElementwiseProgram p = parseElementwise("y = sin(x)*2 + sqrt(abs(x)) + 0.1 + min(x, q)");
  const std::string f32 = elementwiseSource(p, DType::F32);
  EXPECT_NE(f32.find("extern \"C\" __global__ void gpulab_elementwise(const float* __restrict__ in_x, const float* "
                     "__restrict__ in_q, float* __restrict__ out_y, unsigned long long n)"),
            std::string::npos)
      << f32;
  for (const char* piece : {"sinf(v_x)", "2.0f", "sqrtf(fabsf(v_x))", "0.100000001f", "fminf(v_x, v_q)"})
    EXPECT_NE(f32.find(piece), std::string::npos) << piece << "\n" << f32;
  const std::string f64 = elementwiseSource(p, DType::F64);
  for (const char* piece :
       {"const double* __restrict__ in_x", "sin(v_x)", "sqrt(fabs(v_x))", "0.10000000000000001", "fmin(v_x, v_q)"})
    EXPECT_NE(f64.find(piece), std::string::npos) << piece << "\n" << f64;
  EXPECT_EQ(f64.find("sinf"), std::string::npos);
}

TEST(ElementwiseSource, EveryFunctionCompilesWithNvrtcInBothTypes) {
  std::string text;
  int k = 0;
  for (std::size_t f = 0; f < functionNames().size(); ++f) {
    const std::string& name = functionNames()[f];
    text += 'y';
    text += std::to_string(k++);
    text += " = " + name + (functionArity(static_cast<int>(f)) == 2 ? "(x, z)" : "(x)") + "\n";
  }
  text += "w = x**z + -x^2 + i/n + pi";
  const ElementwiseProgram p = parseElementwise(text);
  for (DType dtype : {DType::F32, DType::F64}) {
    const CompiledKernel c = compileKernel(elementwiseSource(p, dtype), "elementwise.cu", {}, 90, false);
    EXPECT_EQ(c.target, "sm_90");
    ASSERT_TRUE(c.binary);
    EXPECT_GT(c.binary->size(), 1000u);
  }
}

// ---------------------------------------------------------------------------------------------
// Cache keys and caches

TEST(KernelCache, KeyDependsOnSourceOptionsAndTarget) {
  const std::string key = kernelCacheKey("src", {"-a"}, "sm_90");
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(key, kernelCacheKey("src", {"-a"}, "sm_90"));
  EXPECT_NE(key, kernelCacheKey("src ", {"-a"}, "sm_90"));
  EXPECT_NE(key, kernelCacheKey("src", {"-b"}, "sm_90"));
  EXPECT_NE(key, kernelCacheKey("src", {"-a"}, "sm_80"));
  EXPECT_NE(key, kernelCacheKey("src", {}, "sm_90"));
  EXPECT_NE(kernelCacheKey("s", {"-a", "-b"}, "sm_90"), kernelCacheKey("s", {"-b", "-a"}, "sm_90"));
  // Fields cannot run into each other.
  EXPECT_NE(kernelCacheKey("ab", {"c"}, "sm_90"), kernelCacheKey("b", {"c", "a"}, "sm_90"));
  EXPECT_NE(kernelCacheKey("x", {"a b"}, "sm_90"), kernelCacheKey("x", {"a", "b"}, "sm_90"));
}

TEST(KernelCache, SecondCompileComesFromMemoryThenFromDisk) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpulab-kernel-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("GPULAB_KERNEL_CACHE", dir.c_str(), 1);
  EXPECT_EQ(kernelCacheDirectory(), dir);
  const std::string source =
      "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 2.0f; } // " + std::to_string(::getpid());
  clearKernelMemoryCache();
  const CompiledKernel first = compileKernel(source, "k.cu", {"-lineinfo"}, 90, true);
  EXPECT_EQ(first.cache, CacheOutcome::Compiled);
  EXPECT_GT(first.compileMs, 0);
  EXPECT_TRUE(std::filesystem::exists(dir / (first.key + ".bin")));
  const CompiledKernel second = compileKernel(source, "k.cu", {"-lineinfo"}, 90, true);
  EXPECT_EQ(second.cache, CacheOutcome::Memory);
  EXPECT_EQ(second.compileMs, 0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(*second.binary, *first.binary);
  clearKernelMemoryCache();
  const CompiledKernel third = compileKernel(source, "k.cu", {"-lineinfo"}, 90, true);
  EXPECT_EQ(third.cache, CacheOutcome::Disk);
  EXPECT_EQ(*third.binary, *first.binary);
  const CompiledKernel other = compileKernel(source, "k.cu", {}, 90, true);  // other options: another key
  EXPECT_EQ(other.cache, CacheOutcome::Compiled);
  EXPECT_NE(other.key, first.key);
  // A damaged cache file is compiled again, not trusted.
  clearKernelMemoryCache();
  { std::ofstream(dir / (first.key + ".bin"), std::ios::trunc) << "gpulab-kernel-cache 1\ngarbage"; }
  EXPECT_EQ(compileKernel(source, "k.cu", {"-lineinfo"}, 90, true).cache, CacheOutcome::Compiled);
  // Without the disk cache a cleared memory cache compiles again.
  clearKernelMemoryCache();
  EXPECT_EQ(compileKernel(source, "k.cu", {"-lineinfo"}, 90, false).cache, CacheOutcome::Compiled);
  ::unsetenv("GPULAB_KERNEL_CACHE");
  std::filesystem::remove_all(dir);
}

TEST(KernelCache, TargetsFollowWhatNvrtcSupports) {
  EXPECT_EQ(nvrtcTarget(90), "sm_90");
  EXPECT_EQ(nvrtcTarget(80), "sm_80");
  EXPECT_EQ(nvrtcTarget(95), "compute_90");  // an architecture NVRTC does not know: PTX for the one below
  EXPECT_THROW(nvrtcTarget(20), std::runtime_error);
  EXPECT_THROW(compileKernel("x", "k.cu", {"--gpu-architecture=sm_80"}, 90, false), std::invalid_argument);
  EXPECT_THROW(compileKernel("extern \"C\" __global__ void k() {}", "k.cu", {"--no-such-option"}, 90, false),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Compile errors

// Captured from NVRTC 13.0 (nvrtcGetProgramLog) for a source with an undefined function at line 3,
// a missing ';' before line 5 and an unused variable at line 4.
constexpr const char* kCapturedLog = R"(kernel.cu(3): error: identifier "foo" is undefined
    y[i] = foo(y[i]);
           ^

kernel.cu(5): error: expected a ";"
  }
  ^

kernel.cu(4): warning #177-D: variable "z" was declared but never referenced
    float z = 1
          ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

2 errors detected in the compilation of "kernel.cu".)";

TEST(CompileLog, CapturedNvrtcLogBecomesDiagnostics) {
  const std::vector<CompileDiagnostic> d = parseCompileLog(kCapturedLog);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].line, 3);
  EXPECT_EQ(d[0].column, 10);
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[0].message, "identifier \"foo\" is undefined");
  EXPECT_EQ(d[0].text(), "line 3, column 10: error: identifier \"foo\" is undefined");
  EXPECT_EQ(d[1].line, 5);
  EXPECT_EQ(d[1].column, 1);
  EXPECT_EQ(d[1].message, "expected a \";\"");
  EXPECT_EQ(d[2].line, 4);
  EXPECT_EQ(d[2].column, 9);
  EXPECT_EQ(d[2].severity, "warning");
}

TEST(CompileLog, LinesWithoutCaretsOrPositions) {
  const auto d = parseCompileLog("my file (v2).cu(12): error: something odd\nnot a diagnostic\nx.cu(0): error: no\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 12);
  EXPECT_EQ(d[0].column, 0);
  EXPECT_EQ(d[0].text(), "line 12: error: something odd");
  EXPECT_TRUE(parseCompileLog("").empty());
}

TEST(CompileLog, LiveNvrtcErrorsCarryLineAndColumn) {
  const std::string source =
      "extern \"C\" __global__ void k(float* y, long n) {\n"
      "  int i = threadIdx.x;\n"
      "  y[i] = foo(y[i]);\n"
      "}\n";
  try {
    compileKernel(source, "mine.cu", {}, 90, false);
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    ASSERT_FALSE(e.diagnostics().empty()) << e.log();
    EXPECT_EQ(e.diagnostics()[0].line, 3);
    EXPECT_EQ(e.diagnostics()[0].column, 10);
    EXPECT_EQ(e.sourceName(), "mine.cu");
    EXPECT_NE(std::string(e.what()).find("line 3, column 10: error: identifier \"foo\" is undefined"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs, arguments, shapes, launch checks

TEST(CustomArgs, InputSpecs) {
  InputSpec s = parseInputSpec("x");
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.fill, InputSpec::Fill::Linspace);
  s = parseInputSpec("x2=random:0:4");
  EXPECT_EQ(s.fill, InputSpec::Fill::Random);
  EXPECT_EQ(s.low, 0);
  EXPECT_EQ(s.high, 4);
  s = parseInputSpec("a=linspace:-1:1");
  EXPECT_EQ(s.low, -1);
  for (const char* bad : {"", "2x", "x=zeros", "x=linspace:1", "x=random:a:b", "x y"})
    EXPECT_THROW(parseInputSpec(bad), std::invalid_argument) << bad;

  std::vector<float> v(5);
  fillInput(parseInputSpec("x=linspace:-1:1"), v.data(), v.size());
  EXPECT_EQ(v, (std::vector<float>{-1, -0.5f, 0, 0.5f, 1}));
  std::vector<double> r(10000);
  fillInput(parseInputSpec("x=random:2:3"), r.data(), r.size());
  EXPECT_GE(*std::min_element(r.begin(), r.end()), 2.0);
  EXPECT_LT(*std::max_element(r.begin(), r.end()), 3.0);
  EXPECT_NE(r[0], r[1]);
}

TEST(CustomArgs, KernelArguments) {
  KernelArg a = parseKernelArg("in:x=random:-1:1");
  EXPECT_EQ(a.kind, KernelArg::Kind::Input);
  EXPECT_EQ(a.name, "x");
  EXPECT_EQ(a.fill.fill, InputSpec::Fill::Random);
  EXPECT_EQ(argumentBytes(a), 8u);
  a = parseKernelArg("out:y");
  EXPECT_EQ(a.kind, KernelArg::Kind::Output);
  a = parseKernelArg("i32:n=n");
  EXPECT_EQ(a.kind, KernelArg::Kind::Scalar);
  EXPECT_TRUE(a.valueIsCount);
  EXPECT_EQ(argumentBytes(a), 4u);
  a = parseKernelArg("f64:alpha=2.5");
  EXPECT_EQ(a.value, 2.5);
  EXPECT_EQ(argumentBytes(a), 8u);
  EXPECT_EQ(argumentBytes(parseKernelArg("f32:a=1")), 4u);
  EXPECT_EQ(argumentBytes(parseKernelArg("u64:a=1")), 8u);
  for (const char* bad : {"x", "inout:x", "i32:n", "i16:n=1", "f32:a=abc", "out:1y", "in:"})
    EXPECT_THROW(parseKernelArg(bad), std::invalid_argument) << bad;
}

TEST(CustomArgs, DimsAndAutoGrid) {
  EXPECT_EQ(parseDims("256", "block"), (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(parseDims("16x16", "block"), (std::array<unsigned, 3>{16, 16, 1}));
  EXPECT_EQ(parseDims("8x8x4", "block"), (std::array<unsigned, 3>{8, 8, 4}));
  for (const char* bad : {"", "x", "1x2x3x4", "-1", "1.5", "99999999999"})
    EXPECT_THROW(parseDims(bad, "grid"), std::invalid_argument) << bad;
  LaunchShape shape;
  EXPECT_EQ(autoGrid(1, shape)[0], 1u);
  EXPECT_EQ(autoGrid(256, shape)[0], 1u);
  EXPECT_EQ(autoGrid(257, shape)[0], 2u);
  EXPECT_EQ(autoGrid(0, shape)[0], 1u);
  shape.block = {97, 1, 1};
  EXPECT_EQ(autoGrid(1000, shape)[0], 11u);
}

TEST(CustomArgs, UnsafeLaunchesAreRefusedWithAReason) {
  const LaunchLimits limits;  // an H100-like device: 1024 threads, 48 KiB shared (optin 48 KiB here)
  LaunchShape shape;
  EXPECT_NO_THROW(checkLaunch({4, 1, 1}, shape, limits, "k"));
  auto refused = [&](std::array<unsigned, 3> grid, const LaunchShape& s, const LaunchLimits& l, const char* says) {
    try {
      checkLaunch(grid, s, l, "k");
      ADD_FAILURE() << "accepted: " << says;
    } catch (const LaunchError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({0, 1, 1}, shape, limits, "0 blocks along x");
  LaunchShape zeroBlock;
  zeroBlock.block = {32, 0, 1};
  refused({1, 1, 1}, zeroBlock, limits, "0 threads along y");
  LaunchShape big;
  big.block = {2048, 1, 1};
  refused({1, 1, 1}, big, limits, "has 2048 threads along x; the device allows 1024");
  big.block = {64, 32, 1};
  refused({1, 1, 1}, big, limits, "2048 threads is over the device's limit of 1024");
  big.block = {1, 1, 65};
  refused({1, 1, 1}, big, limits, "65 threads along z");
  LaunchLimits registers = limits;
  registers.kernelMaxThreads = 512;
  registers.kernelRegisters = 128;
  LaunchShape b1024;
  b1024.block = {1024, 1, 1};
  refused({1, 1, 1}, b1024, registers, "uses 128 registers per thread, so a block may have at most 512");
  LaunchShape shared;
  shared.dynamicSharedBytes = 40 << 10;
  LaunchLimits staticShared = limits;
  staticShared.kernelStaticShared = 16 << 10;
  refused({1, 1, 1}, shared, staticShared, "would need 56.0 KiB of shared memory");
  refused({1, 70000, 1}, shape, limits, "70000 blocks along y; the device allows 65535");
}

// ---------------------------------------------------------------------------------------------
// On a GPU

TEST(CustomKernelGpu, ElementwiseMatchesTheCpuInBothTypesAndCachesTheSecondRun) {
  GPULAB_REQUIRE_GPU();
  clearKernelMemoryCache();
  CustomKernelLab lab;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, (std::size_t{1} << 20) + 3}) {
      ElementwiseRequest r;
      r.expression = "y = sin(x)*2 + sqrt(abs(x)); z = hypot(x, w) - y / (1 + x*x) + i";
      r.dtype = dtype;
      r.size = n;
      r.reps = 3;
      r.useDiskCache = false;
      const KernelRun run = lab.runElementwise(r);
      EXPECT_TRUE(run.checked);
      EXPECT_TRUE(run.passed) << toString(dtype) << " n " << n << ": max error " << run.checks.at(0).maxError << ", "
                              << run.checks.at(1).maxError;
      ASSERT_EQ(run.checks.size(), 2u);
      EXPECT_EQ(run.inputs, (std::vector<std::string>{"x", "w"}));
      EXPECT_GT(run.gpu.medianMs, 0);
      EXPECT_EQ(run.grid[0], (n + 255) / 256);
      // The first size of each type compiles; every later one (the same source) comes from memory.
      if (n == 1) {
        EXPECT_EQ(run.compiled.cache, CacheOutcome::Compiled);
        EXPECT_GT(run.compiled.compileMs, 0);
      } else {
        EXPECT_EQ(run.compiled.cache, CacheOutcome::Memory);
        EXPECT_EQ(run.compiled.compileMs, 0);
      }
      const std::vector<Record> rows = run.records();
      ASSERT_EQ(rows.size(), 2u);
      EXPECT_EQ(rows[0].impl, "gpu_elementwise");
      EXPECT_EQ(rows[0].note, toString(run.compiled.cache));
      EXPECT_EQ(rows[1].impl, "cpu");
    }
  }
}

TEST(CustomKernelGpu, LinspaceInputsAreWhatTheKernelSees) {
  GPULAB_REQUIRE_GPU();
  CustomKernelLab lab;
  ElementwiseRequest r;
  r.expression = "y = x";
  r.inputs = {parseInputSpec("x=linspace:0:1")};
  r.size = 5;
  r.reps = 1;
  r.useDiskCache = false;
  const KernelRun run = lab.runElementwise(r);
  EXPECT_TRUE(run.passed);
  EXPECT_EQ(run.checks.at(0).maxAbsError, 0);
}

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float a, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + 1.0f;
}
extern "C" __global__ void tiled(const double* x, double* y, int n) {
  extern __shared__ double tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0;
  __syncthreads();
  if (i < n) y[i] = tile[blockDim.x - 1 - threadIdx.x] + tile[threadIdx.x];
}
)";

RawKernelRequest saxpy(std::size_t n) {
  RawKernelRequest r;
  r.source = kSaxpy;
  r.sourceName = "saxpy.cu";
  r.kernel = "saxpy";
  r.args = {parseKernelArg("in:x=random:-2:2"), parseKernelArg("out:y"), parseKernelArg("f32:a=2.5"),
            parseKernelArg("i64:n=n")};
  r.size = n;
  r.reps = 3;
  r.check = "y = a*x + 1";
  r.useDiskCache = false;
  return r;
}

TEST(CustomKernelGpu, RawKernelCheckedAgainstItsExpression) {
  GPULAB_REQUIRE_GPU();
  CustomKernelLab lab;
  for (std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{100003}}) {
    const KernelRun run = lab.runRaw(saxpy(n));
    EXPECT_TRUE(run.checked);
    EXPECT_TRUE(run.passed) << "n " << n;
    EXPECT_EQ(run.outputs, (std::vector<std::string>{"y"}));
  }
  RawKernelRequest wrong = saxpy(1000);
  wrong.check = "y = a*x + 2";
  const KernelRun bad = lab.runRaw(wrong);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.checks.at(0).mismatches, 1000u);
  EXPECT_EQ(bad.checks.at(0).firstMismatch, 0u);

  RawKernelRequest unchecked = saxpy(1000);
  unchecked.check = "";
  const KernelRun timed = lab.runRaw(unchecked);
  EXPECT_FALSE(timed.checked);
  EXPECT_TRUE(timed.passed);
  EXPECT_NE(timed.checkNote.find("timed only"), std::string::npos);
  EXPECT_EQ(timed.records().size(), 1u);
}

TEST(CustomKernelGpu, DynamicSharedMemoryAndAGivenGrid) {
  GPULAB_REQUIRE_GPU();
  CustomKernelLab lab;
  RawKernelRequest r;
  r.source = kSaxpy;
  r.kernel = "tiled";
  r.dtype = DType::F64;
  r.args = {parseKernelArg("in:x"), parseKernelArg("out:y"), parseKernelArg("i32:n=n")};
  r.size = 64 * 128;
  r.launch.autoGrid = false;
  r.launch.grid = {64, 1, 1};
  r.launch.block = {128, 1, 1};
  r.launch.dynamicSharedBytes = 128 * sizeof(double);
  r.reps = 2;
  r.useDiskCache = false;
  const KernelRun run = lab.runRaw(r);
  EXPECT_FALSE(run.checked);
  EXPECT_EQ(run.grid[0], 64u);
  EXPECT_EQ(run.dynamicSharedBytes, 1024u);
}

TEST(CustomKernelGpu, RefusalsBeforeLaunch) {
  GPULAB_REQUIRE_GPU();
  CustomKernelLab lab;
  auto refused = [&](RawKernelRequest r, const char* says) {
    try {
      lab.runRaw(r);
      ADD_FAILURE() << "ran: " << says;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  RawKernelRequest r = saxpy(100);
  r.args.pop_back();
  refused(r, "'saxpy' takes 4 parameters; 3 arguments were given");
  r = saxpy(100);
  r.args[3] = parseKernelArg("i32:n=n");
  refused(r, "parameter 4 of 'saxpy' is 8 bytes but the argument 'n' passes 4 (i32)");
  r = saxpy(100);
  r.args[2] = parseKernelArg("f64:a=2.5");
  refused(r, "parameter 3 of 'saxpy' is 4 bytes");
  r = saxpy(100);
  r.args[3] = parseKernelArg("i64:n=1.5");
  refused(r, "is not a whole number");
  r = saxpy(100);
  r.kernel = "nosuch";
  refused(r, "no kernel named 'nosuch'");
  r = saxpy(100);
  r.launch.block = {2048, 1, 1};
  refused(r, "2048 threads along x");
  r = saxpy(100);
  r.launch.autoGrid = false;
  r.launch.grid = {0, 1, 1};
  refused(r, "0 blocks along x");
  r = saxpy(100);
  r.launch.dynamicSharedBytes = std::size_t{1} << 30;
  refused(r, "of shared memory per block");
  r = saxpy(100);
  r.check = "y = a*x + q";
  refused(r, "the check reads 'q', which is not an argument of the kernel (arguments: x, y, a, n)");
  r = saxpy(100);
  r.check = "x = y";
  refused(r, "an output of the kernel");
  r = saxpy(100);
  r.check = "q = x";
  refused(r, "the check assigns 'q'");
  r = saxpy(100);
  r.source = "extern \"C\" __global__ void saxpy(float* x) { x[0] = undefined_thing; }";
  refused(r, "line 1, column");
  r = saxpy(100);
  r.args[1].name = "x";
  refused(r, "two arguments are named 'x'");
}

}  // namespace
