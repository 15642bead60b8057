// gpulab-cli --gpu-memory-limit as a user meets it (the real binary): the option's syntax and
// messages, the environment variable, and on a GPU the filter command in tiles giving the untiled
// output (bit for bit for box blur on float samples on a 2^-16 grid, Sobel and direct convolution;
// FFT convolution within 1e-5 of the peak), the "tiled:" line; the FFT filter out of core (within
// 1e-5 of the input's range), and its refusal when not even one row fits.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("gpulab-test-cli-tiling-" + std::to_string(::getpid()));
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

/// A 301x203 f32 image on a 2^-16 grid (box blur sums exactly in double), as .npy.
std::string gridInput() {
  const std::string path = file("grid.npy");
  if (!fs::exists(path)) {
    Image img = filterTestImage(301, 203, 1, PixelType::F32, 19);
    for (float& v : img.samples<float>()) v = std::round(v * 65536.f) / 65536.f;
    saveImage(img, path);
  }
  return path;
}

std::string lineStartingWith(const std::string& text, const std::string& prefix) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(prefix, 0) == 0) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

TEST(CliGpuMemoryLimit, HelpListsTheOption) {
  const Outcome o = runCli({"--help"});
  EXPECT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("--gpu-memory-limit"), std::string::npos) << describe(o);
}

TEST(CliGpuMemoryLimit, BadValuesAreUsageErrors) {
  for (const std::string value : {"12X", "-5M", "lots", "1.5"}) {
    const Outcome o = runCli({"--gpu-memory-limit", value, "info"});
    EXPECT_EQ(o.exitCode, 2) << value << "\n" << describe(o);
    EXPECT_NE(o.err.find("is not a memory size"), std::string::npos) << describe(o);
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << describe(o);
  }
  // After the subcommand's name too (a global option).
  const Outcome after = runCli({"info", "--gpu-memory-limit", "7 parsecs"});
  EXPECT_EQ(after.exitCode, 2) << describe(after);
}

TEST(CliGpuMemoryLimit, EnvironmentVariable) {
  ::setenv("GPULAB_GPU_MEMORY_LIMIT", "a lot", 1);
  const Outcome bad = runCli({"info"});
  ::unsetenv("GPULAB_GPU_MEMORY_LIMIT");
  EXPECT_EQ(bad.exitCode, 2) << describe(bad);
  EXPECT_NE(bad.err.find("GPULAB_GPU_MEMORY_LIMIT: 'a lot' is not a memory size"), std::string::npos) << describe(bad);
}

TEST(CliGpuMemoryLimit, TheCpuIsNotLimited) {
  const Outcome o = runCli({"filter", "--op", "box", "--radius", "3", "--device", "cpu", "--gpu-memory-limit", "64K",
                            "--in", gridInput(), "--out", file("cpu.npy")});
  EXPECT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_EQ(lineStartingWith(o.out, "tiled:"), "") << describe(o);
}

/// The filter with and without the limit: both succeed, the limited one prints its tiles.
void compareTiled(const std::vector<std::string>& opArgs, const std::string& limit, const std::string& name,
                  double tolerance) {
  const std::string whole = file(name + "-whole.npy"), tiled = file(name + "-tiled.npy");
  std::vector<std::string> args = {"filter"};
  args.insert(args.end(), opArgs.begin(), opArgs.end());
  args.insert(args.end(), {"--in", gridInput(), "--device", "gpu", "--reps", "1"});
  std::vector<std::string> plain = args, limited = args;
  plain.insert(plain.end(), {"--out", whole});
  limited.insert(limited.end(), {"--out", tiled, "--gpu-memory-limit", limit});
  const Outcome a = runCli(plain), b = runCli(limited);
  ASSERT_EQ(a.exitCode, 0) << describe(a);
  ASSERT_EQ(b.exitCode, 0) << describe(b);
  EXPECT_EQ(lineStartingWith(a.out, "tiled:"), "") << describe(a);
  const std::string line = lineStartingWith(b.out, "tiled:");
  EXPECT_NE(line.find(" tiles of "), std::string::npos) << describe(b);
  EXPECT_NE(line.find("limit " + limit.substr(0, limit.size() - 1) + " KiB"), std::string::npos) << describe(b);
  const Image x = loadImage(whole), y = loadImage(tiled);
  ASSERT_EQ(x.width(), y.width());
  ASSERT_EQ(x.height(), y.height());
  double worst = 0, peak = 0;
  for (std::size_t i = 0; i < x.pixelCount() * x.channels(); ++i) {
    worst = std::max(worst, std::abs(sampleAt(x, i) - sampleAt(y, i)));
    peak = std::max(peak, std::abs(sampleAt(x, i)));
  }
  EXPECT_LE(worst, tolerance * peak) << name << ": max |tiled - whole| " << worst << ", peak " << peak;
}

TEST(CliGpuMemoryLimit, FilterInTilesGivesTheWholeImagesResult) {
  GPULAB_REQUIRE_GPU();
  compareTiled({"--op", "box", "--radius", "7"}, "256K", "box", 0.0);
  compareTiled({"--op", "sobel", "--border", "wrap"}, "256K", "sobel", 0.0);
  const std::string kernel = file("kernel.txt");
  std::ofstream(kernel) << "1 2 0 -1 0.5\n0 -1 3 2 1\n0.5 0 -2 0.25 1\n";
  compareTiled({"--op", "conv", "--kernel", kernel, "--border", "reflect"}, "256K", "conv", 0.0);
  compareTiled({"--op", "conv", "--kernel", kernel, "--method", "fft", "--border", "constant", "--border-value", "0.5"},
               "512K", "fftconv", 1e-5);
}

TEST(CliGpuMemoryLimit, WholeImageOperationsRefuseInOneSentence) {
  GPULAB_REQUIRE_GPU();
  // The FFT filter runs out of core under a limit (below); one where not even a row fits refuses.
  const Outcome fft =
      runCli({"fft", "--cutoff", "0.2", "--in", gridInput(), "--out", file("fft.npy"), "--gpu-memory-limit", "1K"});
  EXPECT_EQ(fft.exitCode, 1) << describe(fft);
  EXPECT_NE(fft.err.find("out of core not even one row of the 301x203 transform fits in 1 KiB"), std::string::npos)
      << describe(fft);
  EXPECT_NE(fft.err.find("raise --gpu-memory-limit or use --device cpu"), std::string::npos) << describe(fft);
  EXPECT_EQ(std::count(fft.err.begin(), fft.err.end(), '\n'), 1) << describe(fft);
  const std::string kernel = file("kernel3.txt");
  std::ofstream(kernel) << "1 2 1\n0 1 0\n1 0 1\n";
  const Outcome full = runCli({"filter", "--op", "conv", "--kernel", kernel, "--mode", "full", "--in", gridInput(),
                               "--out", file("full.npy"), "--gpu-memory-limit", "64K"});
  EXPECT_EQ(full.exitCode, 1) << describe(full);
  EXPECT_NE(full.err.find("only operations that keep the image's size"), std::string::npos) << describe(full);
  // The FFT filter under a limit it fits runs as before.
  const Outcome fits =
      runCli({"fft", "--cutoff", "0.2", "--in", gridInput(), "--out", file("fft-ok.npy"), "--gpu-memory-limit", "1G"});
  EXPECT_EQ(fits.exitCode, 0) << describe(fits);
}

/// gpulab-cli fft under a small limit: out of core (row, column, row passes), the uncapped result
/// within 1e-5 of the input's range, the passes in the "tiled:" line and in --json.
TEST(CliGpuMemoryLimit, FftFilterRunsOutOfCore) {
  GPULAB_REQUIRE_GPU();
  for (const std::vector<std::string>& filterArgs :
       {std::vector<std::string>{"--cutoff", "0.2"},
        std::vector<std::string>{"--filter", "bandpass", "--shape", "butterworth", "--order", "3", "--cutoff", "0.1",
                                 "--cutoff2", "0.4", "--padding", "mirror"}}) {
    const std::string name = filterArgs.size() == 2 ? "lowpass" : "bandpass";
    const std::string whole = file("fft-" + name + "-whole.npy"), ooc = file("fft-" + name + "-ooc.npy"),
                      json = file("fft-" + name + ".json");
    std::vector<std::string> args = {"fft", "--in", gridInput(), "--device", "gpu", "--reps", "1"};
    args.insert(args.end(), filterArgs.begin(), filterArgs.end());
    std::vector<std::string> plain = args, limited = args;
    plain.insert(plain.end(), {"--out", whole});
    limited.insert(limited.end(), {"--out", ooc, "--gpu-memory-limit", "64K", "--json", json});
    const Outcome a = runCli(plain), b = runCli(limited);
    ASSERT_EQ(a.exitCode, 0) << describe(a);
    ASSERT_EQ(b.exitCode, 0) << describe(b);
    EXPECT_EQ(lineStartingWith(a.out, "tiled:"), "") << describe(a);
    const std::string line = lineStartingWith(b.out, "tiled:");
    EXPECT_NE(line.find("FFT filter out of core, 3 passes over the "), std::string::npos) << describe(b);
    EXPECT_NE(line.find(" chunks of "), std::string::npos) << describe(b);
    EXPECT_NE(line.find("(C2C, mask, C2C)"), std::string::npos) << describe(b);
    EXPECT_NE(line.find("limit 64 KiB"), std::string::npos) << describe(b);
    EXPECT_NE(line.find("peak GPU use"), std::string::npos) << describe(b);
    std::ifstream report(json);
    const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"column_chunks\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"peak_gpu_bytes\""), std::string::npos) << text;
    const Image x = loadImage(whole), y = loadImage(ooc), in = loadImage(gridInput());
    ASSERT_EQ(x.width(), y.width());
    ASSERT_EQ(x.height(), y.height());
    double worst = 0, lo = 1e300, hi = -1e300;
    for (std::size_t i = 0; i < x.pixelCount() * x.channels(); ++i) {
      worst = std::max(worst, std::abs(sampleAt(x, i) - sampleAt(y, i)));
      lo = std::min(lo, sampleAt(in, i));
      hi = std::max(hi, sampleAt(in, i));
    }
    EXPECT_LE(worst, 1e-5 * (hi - lo)) << name << ": max |out of core - whole| " << worst << ", range " << hi - lo;
  }
}

}  // namespace
