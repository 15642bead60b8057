// gpulab-cli filter and bench with the Gaussian blur, median, unsharp mask, morphology and Canny, as
// a user runs them (the real binary): round trips through .npy and PNG against the in-process
// reference on the CPU (always) and the GPU (when there is one), bad parameters (one line on
// stderr, exit 2; an image the filter cannot take, exit 1), and their bench rows on an RGB u8 image.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gpulab/filters/canny.hpp"
#include "gpulab/filters/gaussian.hpp"
#include "gpulab/filters/median.hpp"
#include "gpulab/filters/morphology.hpp"
#include "gpulab/filters/unsharp.hpp"
#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using gpulab::test::describe;
using gpulab::test::isOneLine;
using gpulab::test::Outcome;
using gpulab::test::runCli;

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("gpulab-test-cli-filter-ops-" + std::to_string(::getpid()));
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

std::vector<std::string> devices() {
  std::vector<std::string> d = {"cpu"};
  if (cudaAvailable()) d.push_back("gpu");
  return d;
}

struct RoundTrip {
  std::string name;
  std::vector<std::string> args;  // after --op
  std::function<Image(const Image&)> reference;
  double tolerance;
};

}  // namespace

TEST(CliFilterOps, RoundTripsThroughNpyMatchTheReference) {
  const Image in = test::filterTestImage(41, 29, 1, PixelType::F32, 12);
  const std::string inPath = file("ops-in.npy");
  saveImage(in, inPath);
  const std::vector<RoundTrip> trips = {
      {"gaussian",
       {"gaussian", "--sigma", "1.7", "--border", "wrap"},
       [](const Image& i) { return GaussianBlur(1.7, 0, {BorderMode::Wrap}).runReference(i); },
       1e-4},
      {"median",
       {"median", "--size", "9", "--border", "constant", "--border-value", "2.5"},
       [](const Image& i) {
         return Median(9, {BorderMode::Constant, 2.5}).runReference(i);
       },
       0.0},
      {"unsharp",
       {"unsharp", "--amount", "2", "--sigma", "1", "--threshold", "0.5"},
       [](const Image& i) { return UnsharpMask(2.0, 1.0, 0.5).runReference(i); },
       1e-4},
      {"morph",
       {"morph", "--morph", "close", "--shape", "ellipse", "--size", "7"},
       [](const Image& i) { return Morphology(MorphOp::Close, MorphShape::Ellipse, 7).runReference(i); },
       0.0},
  };
  for (const RoundTrip& t : trips)
    for (const std::string& device : devices()) {
      const std::string outPath = file(t.name + "-" + device + ".npy");
      std::vector<std::string> args = {"filter", "--op"};
      args.insert(args.end(), t.args.begin(), t.args.end());
      for (const std::string& s : {std::string("--in"), inPath, std::string("--out"), outPath, std::string("--device"),
                                   device, std::string("--reps"), std::string("1")})
        args.push_back(s);
      const Outcome o = runCli(args);
      ASSERT_EQ(o.exitCode, 0) << t.name << " " << describe(o);
      EXPECT_TRUE(o.err.empty()) << describe(o);
      EXPECT_TRUE(test::imagesNear(t.reference(in), loadImage(outPath), t.tolerance, 1e-5)) << t.name << " " << device;
    }
}

TEST(CliFilterOps, CannyOnAPhotoWritesEdgesAsOpenCv) {
  const std::string photo = std::string(GPULAB_SOURCE_DIR) + "/resources/photos/coffee.png";
  const Image img = loadImage(photo);
  const Image ref = Canny(30, 90, CannyGradient::L2).runReference(img);
  for (const std::string& device : devices()) {
    const std::string outPath = file("canny-" + device + ".png");
    const Outcome o = runCli({"filter", "--op", "canny", "--low", "30", "--high", "90", "--gradient", "l2", "--in",
                              photo, "--out", outPath, "--device", device, "--reps", "1"});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    const Image got = loadImage(outPath);
    EXPECT_EQ(got.channels(), 1);
    EXPECT_TRUE(test::imagesNear(ref, got, 0.0)) << device;
  }
}

TEST(CliFilterOps, MedianSaysWhichMethodRan) {
  const std::string inPath = file("median-method.npy");
  saveImage(test::filterTestImage(30, 20, 1, PixelType::F32, 3), inPath);
  const Outcome o = runCli({"filter", "--op", "median", "--size", "7", "--in", inPath, "--out",
                            file("median-method-out.npy"), "--device", "cpu", "--reps", "1"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("method: auto -> nth_element"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("f32 up to 5x5"), std::string::npos) << describe(o);
}

TEST(CliFilterOps, BadParametersGiveOneSentenceAndExitTwo) {
  const std::string f32 = file("bad-in.npy");
  saveImage(test::filterTestImage(8, 8, 1, PixelType::F32, 4), f32);
  const std::string out = file("bad-out.npy");
  struct Case {
    std::vector<std::string> args;
    int exitCode;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{"filter", "--op", "median", "--size", "4", "--in", f32, "--out", out}, 2, "median size 4 is even"},
      {{"filter", "--op", "median", "--size", "65", "--in", f32, "--out", out}, 2, "65"},
      {{"filter", "--op", "median", "--morph", "open", "--in", f32, "--out", out}, 2, "--morph"},
      {{"filter", "--op", "gaussian", "--ksize", "8", "--in", f32, "--out", out}, 2, "even"},
      {{"filter", "--op", "gaussian", "--sigma", "0", "--in", f32, "--out", out}, 2, "sigma"},
      {{"filter", "--op", "gaussian", "--sigma", "abc", "--in", f32, "--out", out}, 2, "abc"},
      {{"filter", "--op", "unsharp", "--amount", "-1", "--in", f32, "--out", out}, 2, "amount"},
      {{"filter", "--op", "morph", "--shape", "cross", "--in", f32, "--out", out}, 2, "cross"},
      {{"filter", "--op", "morph", "--size", "0", "--in", f32, "--out", out}, 2, "size"},
      {{"filter", "--op", "canny", "--low", "-2", "--in", f32, "--out", out}, 2, "low"},
      {{"filter", "--op", "canny", "--gradient", "l3", "--in", f32, "--out", out}, 2, "l3"},
      {{"filter", "--op", "canny", "--in", f32, "--out", file("edges.png")}, 1, "8-bit"},
      {{"bench", "--ops", "median4"}, 2, "median4"},
      {{"bench", "--rgb8", "6000by4000"}, 2, "6000by4000"},
  };
  for (const Case& c : cases) {
    const Outcome o = runCli(c.args);
    EXPECT_EQ(o.exitCode, c.exitCode) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_EQ(o.err.rfind("gpulab-cli: ", 0), 0u) << describe(o);
    EXPECT_NE(o.err.find(c.mentions), std::string::npos) << describe(o);
  }
}

TEST(CliFilterOps, BenchRowsOnAnRgbImage) {
  const std::string jsonPath = file("bench-rgb8.json");
  const Outcome o = runCli({"bench", "--rgb8", "96x64", "--reps", "1", "--ops",
                            "gaussian,median3,median9,unsharp,erode5,open7-ellipse,canny", "--json", jsonPath});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_NE(o.out.find("image 96x64 RGB u8"), std::string::npos) << describe(o);
  for (const char* row : {"gaussian ", "median3 ", "median9 ", "unsharp ", "erode5 ", "open7-ellipse ", "canny "})
    EXPECT_NE(o.out.find(std::string("\n") + row), std::string::npos) << row << "\n" << describe(o);
  EXPECT_EQ(o.out.find("FAIL"), std::string::npos) << describe(o);
  const nlohmann::json report = nlohmann::json::parse(test::slurp(jsonPath));
  EXPECT_EQ(report["image"]["channels"], 3);
  EXPECT_EQ(report["image"]["dtype"], "u8");
}
