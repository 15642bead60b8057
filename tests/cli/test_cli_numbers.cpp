// gpulab-cli with hostile numbers: FFT low-pass and FFT convolution of samples near FLT_MAX give
// finite results (exit 0, no NaN); a kernel coefficient beyond float for a float image is refused
// with one sentence naming its position, from a text or .npy kernel file (exit code 1, as every
// other bad kernel file and every image a filter cannot take: 2 is for usage errors); NaN and
// inf in the input or the output are said on the summary line and counted in the JSON record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gpulab/filters/box_blur.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("gpulab-test-cli-numbers-" + std::to_string(::getpid()));
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

/// ±2e38 noise: every float transform of it overflows without range scaling.
Image hugeImage(int w, int h, unsigned seed) { return randomImage(w, h, 1, PixelType::F32, seed, 2e38); }

std::size_t nonFinite(const Image& img) {
  std::size_t n = 0;
  for (float v : img.convertedTo(PixelType::F32).samples<float>()) n += !std::isfinite(v);
  return n;
}

/// The devices to run on: the CPU always, the GPU when there is one.
std::vector<std::string> devices() {
  std::vector<std::string> d{"cpu"};
  if (cudaAvailable()) d.push_back("gpu");
  return d;
}

}  // namespace

TEST(CliNumbers, FftLowpassOfHugeSamplesIsFinite) {
  const std::string in = file("huge.npy");
  saveImage(hugeImage(48, 40, 1), in);
  for (const std::string& device : devices()) {
    for (const char* padding : {"none", "mirror"}) {
      const std::string out = file("lowpass-" + device + "-" + padding + ".npy");
      const Outcome o = runCli({"fft", "--filter", "lowpass", "--shape", "gaussian", "--cutoff", "0.3", "--padding",
                                padding, "--in", in, "--out", out, "--device", device, "--reps", "1"});
      ASSERT_EQ(o.exitCode, 0) << describe(o);
      EXPECT_EQ(nonFinite(loadImage(out)), 0u) << device << " " << padding;
      EXPECT_EQ(o.out.find("non-finite"), std::string::npos) << o.out;
    }
  }
}

TEST(CliNumbers, FftConvolutionOfHugeSamplesIsFinite) {
  const std::string in = file("huge-conv.npy"), kernel = file("avg.txt");
  saveImage(hugeImage(33, 29, 2), in);
  writeText(kernel, "0.1 0.1 0.1\n0.1 0.2 0.1\n0.1 0.1 0.1\n");
  for (const std::string& device : devices()) {
    const std::string out = file("conv-" + device + ".npy");
    const Outcome o = runCli({"filter", "--op", "conv", "--kernel", kernel, "--method", "fft", "--in", in, "--out", out,
                              "--device", device});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_EQ(nonFinite(loadImage(out)), 0u) << device;
    EXPECT_EQ(o.out.find("non-finite"), std::string::npos) << o.out;
  }
}

TEST(CliNumbers, KernelBeyondFloatIsRefusedForFloatImages) {
  const std::string f32 = file("small-f32.npy"), u8 = file("small-u8.png"), f64 = file("small-f64.npy");
  saveImage(randomImage(9, 7, 1, PixelType::F32, 3), f32);
  saveImage(randomImage(9, 7, 3, PixelType::U8, 4), u8);
  saveImage(randomImage(9, 7, 1, PixelType::F64, 5), f64);
  const std::string text = file("huge-kernel.txt"), npy = file("huge-kernel.npy");
  writeText(text, "0 1 0\n1 1e308 1\n0 1 0\n");
  Image npyKernel(2, 2, 1, PixelType::F64);
  npyKernel.samples<double>()[0] = 0.5;
  npyKernel.samples<double>()[1] = -0.5;
  npyKernel.samples<double>()[2] = 0.25;
  npyKernel.samples<double>()[3] = -1e300;
  saveImage(npyKernel, npy);
  struct Case {
    std::string kernel, position;
  };
  for (const Case& c : {Case{text, "row 1, column 1"}, Case{npy, "row 1, column 1"}})
    for (const std::string& in : {f32, u8})
      for (const char* method : {"direct", "fft"}) {
        const std::string out = file("refused") + (in == u8 ? ".png" : ".npy");
        const Outcome o = runCli({"filter", "--op", "conv", "--kernel", c.kernel, "--method", method, "--in", in,
                                  "--out", out, "--device", "cpu"});
        EXPECT_EQ(o.exitCode, 1) << describe(o);
        EXPECT_TRUE(isOneLine(o.err)) << o.err;
        EXPECT_NE(o.err.find(c.position), std::string::npos) << o.err;
        EXPECT_NE(o.err.find("float32"), std::string::npos) << o.err;
        EXPECT_NE(o.err.find("3.40282e+38"), std::string::npos) << o.err;
        EXPECT_FALSE(fs::exists(out)) << out;
      }
  // In double the coefficient is finite, and so is the result of an f64 image with values in [-1, 1).
  const Outcome o = runCli({"filter", "--op", "conv", "--kernel", file("huge-kernel.txt"), "--in", f64, "--out",
                            file("f64-out.npy"), "--device", "cpu"});
  EXPECT_EQ(o.exitCode, 0) << describe(o);
}

TEST(CliNumbers, NonFiniteInputAndOutputAreSaidAndCounted) {
  Image img = randomImage(10, 8, 1, PixelType::F32, 6);
  img.samples<float>()[5] = NAN;
  img.samples<float>()[17] = INFINITY;
  img.samples<float>()[40] = -INFINITY;
  const std::string in = file("holes.npy"), json = file("holes.json");
  saveImage(img, in);
  for (const std::string& device : devices()) {
    // Sobel reads a 3x3 window directly, so each hole spoils only its neighbours on every device (the
    // box blur, whose running sums once carried a NaN along its row and column, is checked below).
    const std::string out = file("holes-sobel-" + device + ".npy");
    const Outcome o = runCli({"filter", "--op", "sobel", "--in", in, "--out", out, "--device", device, "--json", json});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    const Image result = loadImage(out);
    const std::size_t bad = nonFinite(result);
    ASSERT_GT(bad, 0u);
    const std::string line = "non-finite: input holds 1 NaN and 2 inf samples; output holds ";
    EXPECT_NE(o.out.find(line), std::string::npos) << o.out;
    const nlohmann::json report = nlohmann::json::parse(slurp(json));
    ASSERT_FALSE(report["records"].empty());
    for (const auto& record : report["records"]) {
      EXPECT_EQ(record["nonfinite"]["input"]["nan"], 1) << record.dump();
      EXPECT_EQ(record["nonfinite"]["input"]["inf"], 2) << record.dump();
      EXPECT_EQ(record["nonfinite"]["output"]["nan"].get<std::size_t>() +
                    record["nonfinite"]["output"]["inf"].get<std::size_t>(),
                bad)
          << record.dump() << "\n"
          << o.out;
    }
    const Outcome f = runCli(
        {"fft", "--cutoff", "0.5", "--in", in, "--out", file("holes-fft.npy"), "--device", device, "--reps", "1"});
    ASSERT_EQ(f.exitCode, 0) << describe(f);
    EXPECT_NE(f.out.find("non-finite: input holds 1 NaN and 2 inf samples; output holds"), std::string::npos) << f.out;
  }
  // A clean input says nothing and counts zeros.
  const std::string clean = file("clean.npy");
  saveImage(randomImage(10, 8, 1, PixelType::F32, 7), clean);
  const Outcome o = runCli({"filter", "--op", "box", "--radius", "1", "--in", clean, "--out", file("clean-out.npy"),
                            "--device", "cpu", "--json", json});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_EQ(o.out.find("non-finite"), std::string::npos) << o.out;
  const nlohmann::json report = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(report["records"][0]["nonfinite"]["output"]["nan"], 0);
  EXPECT_EQ(report["records"][0]["nonfinite"]["input"]["inf"], 0);
}

TEST(CliNumbers, BoxBlurHolesSpoilOnlyTheirOwnWindows) {
  // A box blur's running sums carried a NaN or inf along its row and down its column (issue 19): a
  // 240x160 image with 3 holes came out with 31875 NaN. Now every output is its own window's mean
  // (NaN where the window holds a NaN or both infinities, inf of the one sign it holds), on every
  // device, path and border, and the summary line counts exactly those.
  Image img = randomImage(23, 17, 1, PixelType::F32, 6);
  img.at<float>(3, 2) = NAN;
  img.at<float>(15, 9) = INFINITY;
  img.at<float>(17, 10) = -INFINITY;
  const std::string in = file("box-holes.npy");
  saveImage(img, in);
  const std::pair<const char*, BorderMode> borders[] = {
      {"reflect101", BorderMode::Reflect101}, {"wrap", BorderMode::Wrap}, {"constant", BorderMode::Constant}};
  for (const auto& [border, mode] : borders)
    for (const char* radius : {"1", "2", "7"}) {
      const Image want = BoxBlur(std::stoi(radius), {mode}).runReference(img);
      const std::size_t wantBad = nonFinite(want);
      ASSERT_GT(wantBad, 0u);
      ASSERT_LT(wantBad, 3u * 15 * 15 + 1);  // at most the three windows' outputs
      for (const std::string& device : devices())
        for (const char* path : {"auto", "fused", "ring", "sat"}) {
          if (device == "cpu" && std::string(path) != "auto") continue;
          SCOPED_TRACE(device + " " + border + " r=" + radius + " path " + path);
          const std::string out = file("box-holes-out.npy");
          const Outcome o = runCli({"filter", "--op", "box", "--radius", radius, "--border", border, "--path", path,
                                    "--in", in, "--out", out, "--device", device});
          ASSERT_EQ(o.exitCode, 0) << describe(o);
          const Image got = loadImage(out);
          ASSERT_EQ(nonFinite(got), wantBad);
          for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x) {
              const float a = got.at<float>(x, y), e = want.at<float>(x, y);
              if (std::isnan(e))
                EXPECT_TRUE(std::isnan(a)) << x << ", " << y;
              else if (std::isinf(e))
                EXPECT_EQ(a, e) << x << ", " << y;
              else
                EXPECT_NEAR(a, e, 1e-5) << x << ", " << y;
            }
          EXPECT_NE(o.out.find("output holds"), std::string::npos) << o.out;
        }
    }
}

TEST(CliNumbers, VanishingCutoffIsRefusedNotAnAllNanResult) {
  // A cutoff of 1e-320 made c^2 zero and the gain at DC 0/0: every output sample NaN, exit 0.
  const std::string in = file("cutoff.npy");
  saveImage(randomImage(12, 10, 1, PixelType::F32, 8), in);
  for (const char* cutoff : {"1e-320", "1e-40", "1e-7"}) {
    const Outcome o =
        runCli({"fft", "--cutoff", cutoff, "--in", in, "--out", file("cutoff-out.npy"), "--device", "cpu"});
    EXPECT_EQ(o.exitCode, 2) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << o.err;
    EXPECT_NE(o.err.find("from 1e-06"), std::string::npos) << o.err;
  }
  const Outcome o = runCli({"fft", "--cutoff", "1e-6", "--shape", "butterworth", "--order", "100", "--in", in, "--out",
                            file("cutoff-ok.npy"), "--device", "cpu"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_EQ(nonFinite(loadImage(file("cutoff-ok.npy"))), 0u);
  EXPECT_EQ(o.out.find("non-finite"), std::string::npos) << o.out;
}
