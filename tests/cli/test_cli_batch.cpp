// gpulab-cli batch and the io items of `filter`, as a user runs them: exit codes, the summary and
// progress lines, outputs byte for byte what `filter` writes, the failure list, --shard, an
// unsupported output format refused before the filter runs, float64 .npy and 16-bit PNG in and out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"
#include "support/io_test.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::describe;
using test::readBytes;
using test::runCli;
using test::ScratchDir;
using test::writeBytes;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void writePhotos(const fs::path& dir, int count) {
  fs::create_directories(dir);
  for (int i = 0; i < count; ++i) {
    Image image = test::randomImage(40 + i, 30, 3, PixelType::U8, static_cast<unsigned>(i));
    for (auto& v : image.samples<std::uint8_t>()) v = static_cast<std::uint8_t>(v / 4 + 100);
    saveImage(image, dir / ("p" + std::to_string(i) + (i % 2 ? ".png" : ".jpg")));
  }
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(CliBatch, WritesWhatFilterWritesAndSummarises) {
  ScratchDir dir("gpulab-test-cli-batch");
  writePhotos(dir / "in", 4);
  const test::Outcome o = runCli({"batch", "--op", "box", "--radius", "3", "--in", (dir / "in").string(), "--out",
                                  (dir / "out").string(), "--device", "cpu", "--jobs", "2"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.out, "batch: 4 of 4 images written")) << o.out;
  EXPECT_TRUE(has(o.out, "images/s")) << o.out;
  EXPECT_TRUE(has(o.out, "MB/s of input files")) << o.out;
  EXPECT_TRUE(has(o.out, "time per stage, summed over threads: decode")) << o.out;
  EXPECT_TRUE(has(o.out, "compute")) << o.out;
  EXPECT_TRUE(has(o.out, "[1/4] ")) << "plain progress lines when not on a terminal: " << o.out;
  for (const std::string& name : names(dir / "in")) {
    SCOPED_TRACE(name);
    const test::Outcome single = runCli({"filter", "--op", "box", "--radius", "3", "--in", (dir / "in" / name).string(),
                                         "--out", (dir / ("single-" + name)).string(), "--device", "cpu"});
    ASSERT_EQ(single.exitCode, 0) << describe(single);
    EXPECT_EQ(readBytes(dir / "out" / name), readBytes(dir / ("single-" + name)));
  }
}

TEST(CliBatch, FailuresAreListedAndExitOne) {
  ScratchDir dir("gpulab-test-cli-batch");
  writePhotos(dir / "in", 3);
  writeBytes(dir / "in/broken.png", std::string("\x89PNG\r\n\x1a\n", 8) + "cut");
  const test::Outcome o = runCli({"batch", "--op", "box", "--radius", "1", "--in", (dir / "in/*").string(), "--out",
                                  (dir / "out").string(), "--device", "cpu", "--format", "png"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(has(o.out, "failed: 1 of 4 files")) << o.out;
  EXPECT_TRUE(has(o.out, "broken.png: ")) << o.out;
  EXPECT_TRUE(has(o.out, "truncated")) << o.out;
  EXPECT_TRUE(has(o.err, "1 of 4 files failed")) << o.err;
  EXPECT_EQ(names(dir / "out").size(), 3u);
}

TEST(CliBatch, ShardsSplitTheInputsWithoutOverlap) {
  ScratchDir dir("gpulab-test-cli-batch");
  writePhotos(dir / "in", 9);
  std::set<std::string> all;
  std::size_t total = 0;
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    const test::Outcome o =
        runCli({"batch", "--no-filter", "--in", (dir / "in").string(), "--out",
                (dir / "out" / std::string(1, shard[0])).string(), "--shard", shard, "--device", "cpu"});
    ASSERT_EQ(o.exitCode, 0) << describe(o);
    EXPECT_TRUE(has(o.out, std::string("shard ") + shard)) << o.out;
    const std::set<std::string> part = names(dir / "out" / std::string(1, shard[0]));
    total += part.size();
    all.insert(part.begin(), part.end());
  }
  EXPECT_EQ(total, 9u) << "disjoint";
  EXPECT_EQ(all, names(dir / "in")) << "complete";
  for (const char* bad : {"0/3", "4/3", "x", "1/0"}) {
    const test::Outcome o = runCli({"batch", "--no-filter", "--in", (dir / "in").string(), "--out",
                                    (dir / "bad").string(), "--shard", bad, "--device", "cpu"});
    EXPECT_EQ(o.exitCode, 2) << bad << " " << describe(o);
    EXPECT_TRUE(has(o.err, "K/N")) << o.err;
  }
}

TEST(CliBatch, UsageErrors) {
  ScratchDir dir("gpulab-test-cli-batch");
  writePhotos(dir / "in", 1);
  const std::string in = (dir / "in").string(), out = (dir / "out").string();
  EXPECT_EQ(
      runCli({"batch", "--op", "box", "--radius", "1", "--in", (dir / "nothing").string(), "--out", out}).exitCode, 2);
  EXPECT_EQ(runCli({"batch", "--op", "box", "--radius", "1", "--in", in, "--out", out, "--format", "webp"}).exitCode,
            2);
  EXPECT_EQ(runCli({"batch", "--op", "box", "--in", in, "--out", out}).exitCode, 2) << "box needs --radius";
  EXPECT_EQ(runCli({"batch", "--op", "blur", "--in", in, "--out", out}).exitCode, 2);
  EXPECT_EQ(runCli({"batch", "--op", "box", "--radius", "1", "--in", in, "--out", out, "--quality", "0"}).exitCode, 2);
}

TEST(CliBatch, GpusIsCheckedBeforeAnythingRuns) {
  ScratchDir dir("gpulab-test-cli-batch-gpus");
  writePhotos(dir / "in", 1);
  const std::string in = (dir / "in").string(), out = (dir / "out").string();
  test::Outcome o =
      runCli({"batch", "--op", "box", "--radius", "1", "--in", in, "--out", out, "--device", "cpu", "--gpus", "all"});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(has(o.err, "--gpus all needs the GPU")) << describe(o);
  // A list naming a GPU that does not exist (a lone number would be a count: "2" is the first two).
  o = runCli({"batch", "--op", "box", "--radius", "1", "--in", in, "--out", out, "--gpus", "0,99"});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one sentence: " << describe(o);
  EXPECT_FALSE(fs::exists(out)) << "nothing ran";
}

TEST(CliBatch, JsonNamesTheDevicesThePipelinesAndTheLimit) {
  ScratchDir dir("gpulab-test-cli-batch-json");
  writePhotos(dir / "in", 3);
  const bool gpu = cudaAvailable();
  std::vector<std::string> args = {"batch",
                                   "--op",
                                   "box",
                                   "--radius",
                                   "2",
                                   "--in",
                                   (dir / "in").string(),
                                   "--out",
                                   (dir / "out").string(),
                                   "--jobs",
                                   "2",
                                   "--json",
                                   (dir / "batch.json").string()};
  if (gpu) {
    args.insert(args.end(), {"--gpus", "all"});
  } else {
    args.insert(args.end(), {"--device", "cpu"});
  }
  const test::Outcome o = runCli(args);
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.out, "limit: ")) << o.out;
  const std::string json = readBytes(dir / "batch.json");
  EXPECT_TRUE(has(json, "\"devices\": ")) << json;
  EXPECT_TRUE(has(json, "\"pipelines\": [")) << json;
  EXPECT_TRUE(has(json, "\"limit\": ")) << json;
  EXPECT_TRUE(has(json, "\"written\": 3")) << json;
  if (gpu) {
    EXPECT_TRUE(has(json, deviceLabel(0))) << json;
  } else {
    EXPECT_TRUE(has(json, "CPU (OpenCV")) << json;
  }
}

// ---- the io items of `filter` -------------------------------------------------------------------

TEST(CliFilterIo, AnUnsupportedOutputFormatFailsBeforeTheFilterRuns) {
  ScratchDir dir("gpulab-test-cli-batch");
  writePhotos(dir / "in", 1);
  const test::Outcome o = runCli({"filter", "--op", "box", "--radius", "2", "--in", (dir / "in/p0.jpg").string(),
                                  "--out", (dir / "x.webp").string(), "--device", "cpu"});
  EXPECT_EQ(o.exitCode, 2) << describe(o);
  EXPECT_TRUE(test::isOneLine(o.err)) << o.err;
  EXPECT_TRUE(has(o.err, "'.webp'")) << o.err;
  EXPECT_TRUE(has(o.err, "png, jpg, jpeg, tif, tiff, bmp, tga, pgm, ppm, pnm, npy")) << o.err;
  EXPECT_FALSE(has(o.out, "cpu (")) << "the filter ran: " << o.out;
  // A type the format cannot hold fails before the filter too, saying what the result is.
  saveImage(test::randomImage(8, 8, 3, PixelType::U16, 1), dir / "deep.png");
  const test::Outcome deep = runCli({"filter", "--op", "box", "--radius", "1", "--in", (dir / "deep.png").string(),
                                     "--out", (dir / "deep.jpg").string(), "--device", "cpu"});
  EXPECT_EQ(deep.exitCode, 2) << describe(deep);
  EXPECT_TRUE(has(deep.err, ".png, .tif or .npy")) << deep.err;
  EXPECT_FALSE(has(deep.out, "cpu (")) << deep.out;
}

TEST(CliFilterIo, Float64NpyIsFilteredAsFloat32WithANote) {
  ScratchDir dir("gpulab-test-cli-batch");
  saveImage(test::randomImage(12, 9, 1, PixelType::F64, 3), dir / "f64.npy");
  const test::Outcome o = runCli({"filter", "--op", "box", "--radius", "1", "--in", (dir / "f64.npy").string(), "--out",
                                  (dir / "out.npy").string(), "--device", "cpu"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.out, "note: the float64 image is filtered as float32")) << o.out;
  EXPECT_EQ(loadImage(dir / "out.npy").type(), PixelType::F32);
}

TEST(CliFilterIo, SixteenBitPngInSixteenBitPngOut) {
  ScratchDir dir("gpulab-test-cli-batch");
  Image deep = test::randomImage(20, 14, 3, PixelType::U16, 4);
  saveImage(deep, dir / "deep.png");
  const test::Outcome o = runCli({"filter", "--op", "box", "--radius", "2", "--in", (dir / "deep.png").string(),
                                  "--out", (dir / "out.png").string(), "--device", "cpu"});
  ASSERT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(has(o.out, "RGB u16")) << o.out;
  const Image out = loadImage(dir / "out.png");
  EXPECT_EQ(out.type(), PixelType::U16);
  EXPECT_EQ(readBytes(dir / "out.png").at(24), 16) << "IHDR bit depth";
}

}  // namespace
}  // namespace gpulab
