// gpulab-cli filter and bench as a user runs them (the real binary, GPULAB_CLI_PATH): .npy round
// trips against the in-process reference on the CPU (always) and the GPU (when there is one), u8
// photos staying u8, one timing line, exit codes (2 usage, 1 bad file) with one line on stderr;
// and the kernel-file reader behind --kernel.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/filters/auto_levels.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "gpulab/filters/sobel.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab::test;  // runCli, describe, slurp, ...

using namespace gpulab;

namespace {

namespace fs = std::filesystem;

/// A scratch directory per test process, removed at exit.
const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("gpulab-test-cli-filter-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

std::string file(const std::string& name) { return (scratch() / name).string(); }

void writeText(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// The first stdout line starting with `prefix` ("" when none).
std::string lineStartingWith(const std::string& out, const std::string& prefix) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

Image floatInput(int width, int height, unsigned seed) {
  Image img = test::randomImage(width, height, 1, PixelType::F32, seed);
  for (float& v : img.samples<float>()) v = v * 50.f + 60.f;
  return img;
}

double rangeOf(const Image& img) {
  double m = 0;
  for (float v : img.samples<float>()) m = std::max(m, double(std::abs(v)));
  return m;
}

double peakOf(const Image& img) {
  double m = 0;
  for (float v : img.samples<float>()) m = std::max(m, double(std::abs(v)));
  return m;
}

/// A kernel file of kw x kh random coefficients in [-1, 1), written with 17 digits (read back exactly).
void writeRandomKernel(const std::string& path, int kw, int kh, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::ostringstream text;
  text.precision(17);
  for (int y = 0; y < kh; ++y) {
    for (int x = 0; x < kw; ++x) text << (x ? " " : "") << d(rng);
    text << "\n";
  }
  writeText(path, text.str());
}

/// A float input and a random kernel written where the CLI reads them, and the convolution spec
/// with that kernel and `border` (the test sets mode and method).
struct ConvFiles {
  Image in;
  std::string inPath, kernelPath;
  FilterSpec spec;
};

ConvFiles convFiles(const std::string& name, int width, int height, int kernelWidth, int kernelHeight, unsigned seed,
                    Border border) {
  ConvFiles f{floatInput(width, height, seed), file(name + "-in.npy"), file(name + "-kernel.txt"), {}};
  saveImage(f.in, f.inPath);
  writeRandomKernel(f.kernelPath, kernelWidth, kernelHeight, seed + 1);
  f.spec.op = FilterOp::Conv;
  f.spec.kernel = loadKernelFile(f.kernelPath);
  f.spec.border = border;
  return f;
}

std::vector<std::string> devices() {
  std::vector<std::string> d = {"cpu"};
  if (cudaAvailable()) d.push_back("gpu");
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Round trips through .npy

TEST(CliFilter, BoxRoundTripThroughNpyMatchesTheReference) {
  const Image in = floatInput(53, 37, 1);
  const std::string inPath = file("box-in.npy");
  saveImage(in, inPath);
  const Image ref = BoxBlur(3, {BorderMode::Constant, 7.5}).runReference(in);
  for (const std::string& device : devices()) {
    const std::string outPath = file("box-out-" + device + ".npy");
    const Outcome o = runCli({"filter", "--op", "box", "--radius", "3", "--border", "constant", "--border-value", "7.5",
                              "--in", inPath, "--out", outPath, "--device", device, "--reps", "2"});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_TRUE(o.err.empty()) << describe(o);
    const std::string timing = lineStartingWith(o.out, device + " (");
    EXPECT_NE(timing.find("(median of 2)"), std::string::npos) << describe(o);
    if (device == "gpu") {
      for (const char* part : {"upload ", "compute ", "download ", "; host memory pinned"})
        EXPECT_NE(timing.find(part), std::string::npos) << describe(o);
    } else {
      EXPECT_NE(timing.find("OpenCV, "), std::string::npos) << describe(o);
    }
    const Image got = loadImage(outPath);
    EXPECT_EQ(got.type(), PixelType::F32) << device;
    EXPECT_TRUE(test::imagesNear(ref, got, 1e-5 * rangeOf(in), 1e-5)) << device;
  }
}

TEST(CliFilter, SobelRoundTripThroughNpyMatchesTheReference) {
  const Image in = floatInput(40, 29, 2);
  const std::string inPath = file("sobel-in.npy");
  saveImage(in, inPath);
  const Image ref = Sobel(SobelComponent::X, {BorderMode::Wrap}).runReference(in);
  for (const std::string& device : devices()) {
    const std::string outPath = file("sobel-out-" + device + ".npy");
    const Outcome o = runCli({"filter", "--op", "sobel", "--component", "x", "--border", "wrap", "--in", inPath,
                              "--out", outPath, "--device", device});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_TRUE(test::imagesNear(ref, loadImage(outPath), 8e-5 * rangeOf(in), 1e-5)) << device;
  }
}

TEST(CliFilter, ConvolutionWithATextKernelMatchesTheReference) {
  FilterSpec spec;
  spec.op = FilterOp::Conv;
  spec.kernel = parseKernelText("1 2 0\n0, -1, 3  # comment\n\n0.5 0 -2\n");
  std::unique_ptr<Operation> conv;
  try {
    conv = makeFilter(spec);
  } catch (const std::invalid_argument& e) {
    GTEST_SKIP() << e.what();
  }
  const Image in = floatInput(31, 23, 3);
  const std::string inPath = file("conv-in.npy"), kernelPath = file("kernel.txt");
  saveImage(in, inPath);
  writeText(kernelPath, "1 2 0\n0, -1, 3  # comment\n\n0.5 0 -2\n");
  const Image ref = conv->runReference(in);
  for (const std::string& device : devices()) {
    const std::string outPath = file("conv-out-" + device + ".npy");
    const Outcome o = runCli(
        {"filter", "--op", "conv", "--kernel", kernelPath, "--in", inPath, "--out", outPath, "--device", device});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_TRUE(test::imagesNear(ref, loadImage(outPath), 1e-5 * 9.5 * rangeOf(in), 1e-5)) << device;
  }
}

TEST(CliFilter, ConvolutionMethodsAgreeAndSayWhatRan) {
  const ConvFiles f = convFiles("method", 47, 31, 9, 6, 5, {BorderMode::Reflect, 0});
  const std::string& inPath = f.inPath;
  const std::string& kernelPath = f.kernelPath;
  FilterSpec spec = f.spec;
  spec.mode = ConvMode::Full;
  const Image ref = Conv2D(spec).runReference(f.in);
  const double tolerance = 1e-4 * peakOf(ref);  // float32, relative to the result's peak
  for (const std::string& device : devices()) {
    std::vector<Image> outputs;
    for (const std::string method : {"direct", "fft", "auto"}) {
      const std::string outPath = file("method-out-" + device + "-" + method + ".npy");
      const Outcome o =
          runCli({"filter", "--op", "conv", "--kernel", kernelPath, "--mode", "full", "--border", "reflect", "--method",
                  method, "--in", inPath, "--out", outPath, "--device", device, "--reps", "2"});
      ASSERT_EQ(o.exitCode, 0) << describe(o);
      EXPECT_TRUE(o.err.empty()) << describe(o);
      EXPECT_NE(lineStartingWith(o.out, device + " ("), "") << describe(o);
      const std::string said = lineStartingWith(o.out, "method: ");
      if (method == std::string("direct")) {
        EXPECT_EQ(said, "") << describe(o);
      } else if (method == std::string("fft")) {
        EXPECT_EQ(said.rfind("method: fft", 0), 0u) << describe(o);
      } else {
        const bool named = said.rfind("method: auto -> direct (cost model: direct ", 0) == 0 ||
                           said.rfind("method: auto -> fft (cost model: direct ", 0) == 0;
        EXPECT_TRUE(named) << describe(o);
      }
      EXPECT_NE(lineStartingWith(o.out, "wrote ").find(method == std::string("direct") ? "reflect of" : method),
                std::string::npos)
          << describe(o);
      const Image got = loadImage(outPath);
      EXPECT_TRUE(test::imagesNear(ref, got, tolerance)) << device << " " << method;
      outputs.push_back(got);
    }
    // The methods agree with one another within the same tolerance.
    EXPECT_TRUE(test::imagesNear(outputs[0], outputs[1], tolerance)) << device << " direct vs fft";
    EXPECT_TRUE(test::imagesNear(outputs[0], outputs[2], tolerance)) << device << " direct vs auto";
  }
}

TEST(CliFilter, KernelsAbove127TakeTheFftOrAutoMethod) {
  const ConvFiles f = convFiles("large", 23, 19, 129, 129, 7, {BorderMode::Wrap, 0});
  const std::string& inPath = f.inPath;
  const std::string& kernelPath = f.kernelPath;
  FilterSpec spec = f.spec;
  spec.method = ConvMethod::Fft;
  const Image ref = ConvMethodFilter(spec).runReference(f.in);  // the naive definition
  const double tolerance = 1e-4 * peakOf(ref);
  for (const std::string& device : devices())
    for (const std::string method : {"fft", "auto"}) {
      const std::string outPath = file("large-out-" + device + "-" + method + ".npy");
      const Outcome o = runCli({"filter", "--op", "conv", "--kernel", kernelPath, "--border", "wrap", "--method",
                                method, "--in", inPath, "--out", outPath, "--device", device, "--reps", "1"});
      ASSERT_EQ(o.exitCode, 0) << describe(o);
      if (method == std::string("auto")) {
        EXPECT_EQ(
            lineStartingWith(o.out, "method: ").rfind("method: auto -> fft (kernels above 127 always take the fft", 0),
            0u)
            << describe(o);
      }
      EXPECT_TRUE(test::imagesNear(ref, loadImage(outPath), tolerance)) << device << " " << method;
    }
  const Outcome o =
      runCli({"filter", "--op", "conv", "--kernel", kernelPath, "--in", inPath, "--out", file("large-direct.npy")});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  EXPECT_NE(o.err.find("127x127"), std::string::npos) << describe(o);
  EXPECT_NE(o.err.find("--method fft|auto"), std::string::npos) << describe(o);
  EXPECT_FALSE(fs::exists(file("large-direct.npy")));
}

TEST(CliFilter, SeparableMethodTakesLowRankKernelsAndRefusesOthers) {
  const ConvFiles f = convFiles("separable", 41, 29, 7, 5, 21, {BorderMode::Reflect101, 0});
  // A rank-1 kernel (an outer product), written with 17 digits.
  std::ostringstream text;
  text.precision(17);
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 7; ++x) text << (x ? " " : "") << (1.0 + 0.25 * x) * (0.5 - 0.1 * y * y);
    text << "\n";
  }
  const std::string rankOne = file("separable-rank1.txt");
  writeText(rankOne, text.str());
  FilterSpec spec = f.spec;
  spec.kernel = loadKernelFile(rankOne);
  const Image ref = Conv2D(spec).runReference(f.in);
  const double tolerance = 1e-4 * peakOf(ref);
  for (const std::string& device : devices())
    for (const std::string method : {"separable", "auto"}) {
      const std::string outPath = file("separable-out-" + device + "-" + method + ".npy");
      const Outcome o = runCli({"filter", "--op", "conv", "--kernel", rankOne, "--method", method, "--in", f.inPath,
                                "--out", outPath, "--device", device, "--reps", "2"});
      ASSERT_EQ(o.exitCode, 0) << describe(o);
      const std::string said = lineStartingWith(o.out, "method: ");
      if (method == std::string("separable")) {
        EXPECT_EQ(said.rfind("method: separable (kernel of rank 1 by SVD", 0), 0u) << describe(o);
      } else {
        const bool named = said.rfind("method: auto -> direct (", 0) == 0 ||
                           said.rfind("method: auto -> fft (", 0) == 0 ||
                           said.rfind("method: auto -> separable (", 0) == 0;
        EXPECT_TRUE(named) << describe(o);
        EXPECT_NE(said.find("separable "), std::string::npos) << describe(o);  // the model's separable line
      }
      EXPECT_TRUE(test::imagesNear(ref, loadImage(outPath), tolerance)) << device << " " << method;
    }
  // A random kernel is not separable: one sentence, exit 2, no output.
  const Outcome o = runCli({"filter", "--op", "conv", "--kernel", f.kernelPath, "--method", "separable", "--in",
                            f.inPath, "--out", file("separable-random.npy")});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  EXPECT_NE(o.err.find("7x5 kernel is not separable"), std::string::npos) << describe(o);
  EXPECT_NE(o.err.find("--method direct, fft or auto"), std::string::npos) << describe(o);
  EXPECT_FALSE(fs::exists(file("separable-random.npy")));
}

TEST(CliBench, SeparableRowsSayWhatRan) {
  const std::string jsonPath = file("bench-separable.json");
  const Outcome o = runCli({"bench", "--size", "80", "--reps", "2", "--ops",
                            "conv15-sep,conv15-sep-auto,conv15-sep-direct", "--json", jsonPath});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(slurp(jsonPath))) << slurp(jsonPath);
  ASSERT_EQ(report["records"].size(), 3 * (cudaAvailable() ? 2u : 1u)) << report.dump(2);
  for (const auto& r : report["records"]) {
    const std::string op = r["op"], method = r["method"], chosen = r["chosen"];
    if (op == "conv15-sep") {
      EXPECT_EQ(method, "separable");
      EXPECT_EQ(chosen, "separable");
    } else if (op == "conv15-sep-direct") {
      EXPECT_EQ(method, "direct");
    } else {
      EXPECT_EQ(method, "auto");
      EXPECT_TRUE(chosen == "direct" || chosen == "fft" || chosen == "separable") << r.dump();
    }
    if (r["impl"] == "gpu") {
      EXPECT_LE(r["max_abs_diff_vs_cpu"].get<double>(), 1e-4) << r.dump();
    }
  }
  EXPECT_NE(lineStartingWith(o.out, "conv15-sep ").find("separable"), std::string::npos) << describe(o);
  EXPECT_NE(lineStartingWith(o.out, "conv15-sep-auto").find("auto -> "), std::string::npos) << describe(o);
}

TEST(CliFilter, PhotoStaysEightBitAndDefaultsToTheGpuWhenThereIsOne) {
  const std::string photo = std::string(GPULAB_SOURCE_DIR) + "/resources/photos/coffee.png";
  const std::string outPath = file("coffee-box.png");
  const Outcome o = runCli({"filter", "--op", "box", "--radius", "2", "--in", photo, "--out", outPath, "--reps", "1"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(lineStartingWith(o.out, cudaAvailable() ? "gpu (" : "cpu (OpenCV, "), "") << describe(o);
  const Image in = loadImage(photo), got = loadImage(outPath);
  EXPECT_EQ(got.type(), PixelType::U8);
  EXPECT_EQ(got.channels(), in.channels());
  // GPU exact; OpenCV within 1.
  EXPECT_TRUE(test::imagesNear(BoxBlur(2).runReference(in), got, 1.0));
}

TEST(CliFilter, SixteenBitAutoLevelsStretchesToTheFull16BitRange) {
  // A dim 16-bit RGB PNG (20000..23999) and a gray uint16 .npy (12-bit data, 100..4195).
  Image rgb = test::randomImage(37, 23, 3, PixelType::U16, 41);
  for (auto& v : rgb.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(20000 + v % 4000);
  Image gray = test::randomImage(31, 17, 1, PixelType::U16, 43);
  for (auto& v : gray.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(100 + (v >> 4));
  for (const auto& [name, in] : std::vector<std::pair<std::string, Image>>{{"png", rgb}, {"npy", gray}}) {
    const std::string inPath = file("deep-in." + name);
    saveImage(in, inPath);
    const Image ref = AutoLevels(0, 100).runReference(in);
    for (const std::string& device : devices()) {
      const std::string outPath = file("deep-levels-" + device + "." + name);
      const Outcome o = runCli({"filter", "--op", "auto-levels", "--low", "0", "--high", "100", "--in", inPath, "--out",
                                outPath, "--device", device, "--reps", "1"});
      ASSERT_EQ(o.exitCode, 0) << describe(o);
      const Image got = loadImage(outPath);
      ASSERT_EQ(got.type(), PixelType::U16) << name << " " << device;
      EXPECT_TRUE(test::imagesNear(ref, got, 0)) << name << " " << device;
      for (int c = 0; c < got.channels(); ++c) {
        int lo = 65535, hi = 0;
        std::set<int> values;
        for (int y = 0; y < got.height(); ++y)
          for (int x = 0; x < got.width(); ++x) {
            const int v = got.at<std::uint16_t>(x, y, c);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            values.insert(v);
          }
        EXPECT_EQ(lo, 0) << name << " " << device << " channel " << c;
        EXPECT_EQ(hi, 65535) << name << " " << device << " channel " << c;
        EXPECT_GT(values.size(), 300u) << "a full-range 16-bit result, not 0s and 1s: " << name << " " << device;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Mistakes: exit 2 for usage, 1 for files that cannot be used; one line on stderr

TEST(CliFilter, BadParametersAndFilesGiveOneLineAndTheRightExitCode) {
  const std::string inPath = file("errors-in.npy");
  saveImage(floatInput(8, 8, 4), inPath);
  const std::string emptyKernel = file("empty.txt"), raggedKernel = file("ragged.txt"), wordKernel = file("word.txt");
  const std::string goodKernel = file("good.txt");
  writeText(goodKernel, "1 2 1\n");
  writeText(emptyKernel, "# only a comment\n\n");
  writeText(raggedKernel, "1 2 3\n4 5\n");
  writeText(wordKernel, "1 two 3\n");
  const std::string out = file("errors-out.npy");
  struct Case {
    std::vector<std::string> args;
    int exitCode;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{"filter", "--op", "box", "--radius", "-3", "--in", inPath, "--out", out}, 2, "-3"},
      {{"filter", "--op", "box", "--in", inPath, "--out", out}, 2, "--radius"},
      {{"filter", "--op", "box", "--radius", "2", "--border", "mirror", "--in", inPath, "--out", out}, 2, "mirror"},
      {{"filter", "--op", "box", "--radius", "2", "--border-value", "3", "--in", inPath, "--out", out}, 2, "constant"},
      {{"filter", "--op", "box", "--radius", "2", "--out", out}, 2, "--in"},
      {{"filter", "--op", "box", "--radius", "2", "--in", inPath}, 2, "--out"},
      {{"filter", "--op", "blur", "--in", inPath, "--out", out}, 2, "blur"},
      {{"filter", "--op", "sobel", "--radius", "2", "--in", inPath, "--out", out}, 2, "--radius"},
      {{"filter", "--op", "sobel", "--component", "angle", "--in", inPath, "--out", out}, 2, "angle"},
      {{"filter", "--op", "box", "--radius", "2", "--in", inPath, "--out", file("f.png")}, 2, ".npy"},
      {{"filter", "--op", "box", "--radius", "2", "--in", inPath, "--out", out, "--device", "tpu"}, 2, "tpu"},
      {{"filter", "--op", "conv", "--in", inPath, "--out", out}, 2, "--kernel"},
      {{"filter", "--op", "conv", "--kernel", emptyKernel, "--in", inPath, "--out", out}, 1, "no kernel coefficients"},
      {{"filter", "--op", "conv", "--kernel", raggedKernel, "--in", inPath, "--out", out}, 1, "ragged"},
      {{"filter", "--op", "conv", "--kernel", wordKernel, "--in", inPath, "--out", out}, 1, "two"},
      {{"filter", "--op", "conv", "--kernel", file("absent.txt"), "--in", inPath, "--out", out}, 1, "absent.txt"},
      {{"filter", "--op", "box", "--radius", "2", "--in", file("absent.npy"), "--out", out}, 1, "absent.npy"},
      {{"filter", "--op", "conv", "--kernel", goodKernel, "--method", "fastest", "--in", inPath, "--out", out},
       2,
       "fastest"},
      {{"filter", "--op", "box", "--radius", "2", "--method", "fft", "--in", inPath, "--out", out}, 2, "--method"},
      {{"bench", "--ops", "box4"}, 2, "box4"},
      {{"bench", "--ops", "conv31-direct"}, 2, "conv31-direct"},
      {{"bench", "--ops", "conv31-fast"}, 2, "conv31-fast"},
      {{"bench", "--ops", "conv2000-fft"}, 2, "1024x1024"},
      {{"bench", "--size", "3"}, 2, "--size"},
  };
  for (const Case& c : cases) {
    const Outcome o = runCli(c.args);
    EXPECT_EQ(o.exitCode, c.exitCode) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_EQ(o.err.rfind("gpulab-cli: ", 0), 0u) << describe(o);
    EXPECT_NE(o.err.find(c.mentions), std::string::npos) << describe(o);
  }
  if (!cudaAvailable()) {
    const Outcome o =
        runCli({"filter", "--op", "box", "--radius", "2", "--in", inPath, "--out", out, "--device", "gpu"});
    EXPECT_EQ(o.exitCode, 1) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  }
}

// ---------------------------------------------------------------------------------------------
// bench: a small run, its table and JSON

TEST(CliBench, SmallRunWritesTheJsonTheIssueAsksFor) {
  const std::string jsonPath = file("bench.json");
  const Outcome o = runCli({"bench", "--size", "96", "--reps", "2", "--ops", "box3,box31,sobel", "--json", jsonPath});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(slurp(jsonPath))) << slurp(jsonPath);
  ASSERT_TRUE(report.contains("device"));
  ASSERT_TRUE(report.contains("copy_bandwidth_gbps"));
  ASSERT_TRUE(report["records"].is_array());
  const std::size_t perOp = cudaAvailable() ? 2 : 1;
  ASSERT_EQ(report["records"].size(), 3 * perOp) << report.dump(2);
  for (const auto& r : report["records"]) {
    for (const char* key : {"op", "params", "width", "height", "channels", "dtype", "impl", "median_ms", "min_ms",
                            "max_ms", "reps", "upload_ms", "download_ms", "gbps", "pct_of_copy"})
      EXPECT_TRUE(r.contains(key)) << key << " in " << r.dump();
    EXPECT_EQ(r["width"], 96);
    EXPECT_EQ(r["dtype"], "f32");
    EXPECT_LE(r["min_ms"].get<double>(), r["median_ms"].get<double>());
    EXPECT_LE(r["median_ms"].get<double>(), r["max_ms"].get<double>());
    if (r["impl"] == "gpu") {
      EXPECT_GT(r["pct_of_copy"].get<double>(), 0.0);
      EXPECT_LE(r["max_abs_diff_vs_cpu"].get<double>(), 1e-3) << r.dump();
    }
  }
  EXPECT_NE(o.out.find("box31"), std::string::npos) << describe(o);
}

TEST(CliBench, ConvolutionMethodsAndTheFftLowpassHaveTheirRows) {
  const std::string jsonPath = file("bench-methods.json");
  const Outcome o = runCli({"bench", "--size", "80", "--reps", "2", "--ops",
                            "conv15-auto,conv31,conv31-fft,conv31-auto,fft-lowpass", "--json", jsonPath});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(slurp(jsonPath))) << slurp(jsonPath);
  const std::size_t perOp = cudaAvailable() ? 2 : 1;
  ASSERT_EQ(report["records"].size(), 5 * perOp) << report.dump(2);
  for (const auto& r : report["records"]) {
    for (const char* key : {"op", "params", "impl", "method", "chosen", "prepare_ms", "median_ms", "reps", "gbps"})
      ASSERT_TRUE(r.contains(key)) << key << " in " << r.dump();
    const std::string op = r["op"], method = r["method"], chosen = r["chosen"];
    if (op == "conv31") {
      EXPECT_EQ(method, "direct");
      EXPECT_EQ(chosen, "direct");
    } else if (op == "conv31-fft" || op == "fft-lowpass") {
      EXPECT_EQ(method, "fft");
      EXPECT_EQ(chosen, "fft");
    } else {
      EXPECT_EQ(method, "auto");
      EXPECT_TRUE(chosen == "direct" || chosen == "fft") << r.dump();
    }
    if (op.rfind("conv", 0) == 0) {
      EXPECT_EQ(r["params"]["method"], method);
    } else {
      EXPECT_EQ(r["params"]["filter"], "lowpass");
    }
    EXPECT_GE(r["prepare_ms"].get<double>(), 0.0);
    EXPECT_GE(r["reps"].get<int>(), 1);
    EXPECT_LE(r["reps"].get<int>(), 2);
    if (r["impl"] == "gpu") {
      const double weightSum = op == "fft-lowpass" ? 1.0 : (op.rfind("conv15", 0) == 0 ? 15.0 * 15 : 31.0 * 31);
      EXPECT_LE(r["max_abs_diff_vs_cpu"].get<double>(), 1e-4 * weightSum) << r.dump();
    }
  }
  for (const char* row : {"conv15-auto", "conv31-fft", "fft-lowpass"})
    EXPECT_NE(lineStartingWith(o.out, row), "") << describe(o);
  EXPECT_NE(lineStartingWith(o.out, "conv31-auto").find("auto -> "), std::string::npos) << describe(o);
}

TEST(CliBench, TheFftLowpassHasAFusedAndACufftRow) {
  // 64x64: a power of two, so fft-lowpass takes the fused passes on a GPU and fft-lowpass-cufft does
  // not; both match the CPU's cv::dft.
  const std::string jsonPath = file("bench-fft.json");
  const Outcome o =
      runCli({"bench", "--size", "64", "--reps", "2", "--ops", "fft-lowpass,fft-lowpass-cufft", "--json", jsonPath});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(slurp(jsonPath))) << slurp(jsonPath);
  ASSERT_EQ(report["records"].size(), cudaAvailable() ? 4u : 2u) << report.dump(2);
  for (const auto& r : report["records"]) {
    EXPECT_EQ(r["method"], "fft") << r.dump();
    EXPECT_EQ(r["params"]["filter"], "lowpass") << r.dump();
    if (r["impl"] == "gpu") {
      EXPECT_LE(r["max_abs_diff_vs_cpu"].get<double>(), 1e-4) << r.dump();
    }
  }
  for (const char* row : {"fft-lowpass ", "fft-lowpass-cufft"})
    EXPECT_NE(lineStartingWith(o.out, row), "") << describe(o);
}

// ---------------------------------------------------------------------------------------------
// The kernel-file reader behind --kernel

TEST(KernelFile, TextRowsWithCommasCommentsAndBlankLines) {
  const Kernel2D k = parseKernelText("# a 2x3 kernel\n 1, 2.5  -3\n\n4\t5e-1 +6 # tail\n");
  EXPECT_EQ(k.width, 3);
  EXPECT_EQ(k.height, 2);
  EXPECT_EQ(k.values, (std::vector<double>{1, 2.5, -3, 4, 0.5, 6}));
  EXPECT_DOUBLE_EQ(k.at(2, 1), 6);
  const Kernel2D one = parseKernelText("7");
  EXPECT_EQ(one.width, 1);
  EXPECT_EQ(one.height, 1);
}

TEST(KernelFile, RejectsEmptyRaggedAndNonNumbersNamingTheLine) {
  EXPECT_THROW(parseKernelText(""), KernelFileError);
  EXPECT_THROW(parseKernelText("# nothing\n  \n"), KernelFileError);
  EXPECT_THROW(parseKernelText("nan 1"), KernelFileError);
  EXPECT_THROW(parseKernelText("1e999"), KernelFileError);
  EXPECT_THROW(parseKernelText("1 +-2"), KernelFileError);  // the '+' took any sign after it
  EXPECT_THROW(parseKernelText("++1"), KernelFileError);
  try {
    parseKernelText("1 2\n3 4\n5 6 7\n", "k.txt");
    FAIL() << "no exception";
  } catch (const KernelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("k.txt"), std::string::npos) << e.what();
  }
  try {
    parseKernelText("1 2\n3 x4\n", "k.txt");
    FAIL() << "no exception";
  } catch (const KernelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x4"), std::string::npos) << e.what();
  }
}

TEST(KernelFile, ReadsNpyFloatArraysAndRejectsOthers) {
  Image f(3, 2, 1, PixelType::F64);
  for (int i = 0; i < 6; ++i) f.samples<double>()[i] = 0.25 * i - 1;
  const std::string path = file("kernel.npy");
  saveImage(f, path);
  const Kernel2D k = loadKernelFile(path);
  EXPECT_EQ(k.width, 3);
  EXPECT_EQ(k.height, 2);
  EXPECT_EQ(k.values, (std::vector<double>{-1, -0.75, -0.5, -0.25, 0, 0.25}));

  saveImage(Image(3, 3, 1, PixelType::U8), file("u8.npy"));
  EXPECT_THROW(loadKernelFile(file("u8.npy")), KernelFileError);
  saveImage(Image(3, 3, 3, PixelType::F32), file("rgb.npy"));
  EXPECT_THROW(loadKernelFile(file("rgb.npy")), KernelFileError);
  writeText(file("broken.npy"), "\x93NUMPY garbage");
  EXPECT_THROW(loadKernelFile(file("broken.npy")), KernelFileError);
  EXPECT_THROW(loadKernelFile(file("absent.npy")), KernelFileError);
  EXPECT_THROW(loadKernelFile(scratch()), KernelFileError);  // a directory
}
