// The batch pipeline (pipeline/batch.hpp) and the 16-bit handling it shares with the filter
// command (filters/sample_depth.hpp): outputs byte for byte what the single-image path writes, on
// the CPU and (when there is one) the GPU; failures reported with their reason while the batch goes
// on; inputs never overwritten; shards disjoint, complete and stable; cancellation. Several
// compute pipelines (GPUs, or CPU stand-ins where there is no GPU): the images split among them,
// a pipeline that fails mid-run hands its image to another and nothing is lost, the limit named.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/pipeline/batch.hpp"
#include "support/gpu_test.hpp"
#include "support/io_test.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::randomImage;
using test::readBytes;
using test::ScratchDir;
using test::writeBytes;

std::unique_ptr<Operation> box(int radius) { return findOperation("box").make({{"radius", std::to_string(radius)}}); }

/// A smooth RGB photo with some noise, as JPEG and PNG are made for.
Image photo(int width, int height, int channels, unsigned seed) {
  Image image = randomImage(width, height, channels, PixelType::U8, seed);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        auto& v = image.at<std::uint8_t>(x, y, c);
        v = static_cast<std::uint8_t>((x * 3 + y * 2 + 50 * c) % 200 + v % 16);
      }
  return image;
}

/// The single-image path: what `gpulab-cli filter --device cpu` does for one file.
void filterOneOnCpu(const Operation& op, const fs::path& in, const fs::path& out) {
  const FilterInput input = prepareFilterInput(op, loadImage(in));
  saveImage(finishFilterResult(op.runCpu(input.image), input), out, SaveOptions{});
}

/// Inputs of every kind the pipeline meets: 8-bit JPEG/PNG/TIFF, 16-bit PNG/TIFF, RGBA, gray,
/// float TIFF and a float64 .npy (filtered as float32).
std::vector<fs::path> writeMixedInputs(const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<fs::path> files;
  const auto add = [&](const std::string& name, const Image& image) {
    saveImage(image, dir / name);
    files.push_back(dir / name);
  };
  add("a.jpg", photo(37, 23, 3, 1));
  add("b.png", photo(16, 9, 4, 2));
  add("c.tif", photo(5, 31, 1, 3));
  Image deep = photo(29, 17, 3, 4).convertedTo(PixelType::U16);
  for (auto& v : deep.samples<std::uint16_t>()) v = static_cast<std::uint16_t>(v * 257 + (v & 7));
  add("d16.png", deep);
  add("e16.tif", deep);
  add("f.tif", randomImage(11, 13, 1, PixelType::F32, 5, 100.0));
  add("g.npy", randomImage(9, 8, 3, PixelType::F64, 6));
  Image alpha = deep.convertedTo(PixelType::U16);
  Image rgba(alpha.width(), alpha.height(), 4, PixelType::U16);
  for (int y = 0; y < rgba.height(); ++y)
    for (int x = 0; x < rgba.width(); ++x)
      for (int c = 0; c < 4; ++c)
        rgba.at<std::uint16_t>(x, y, c) =
            c < 3 ? alpha.at<std::uint16_t>(x, y, c) : static_cast<std::uint16_t>(x * 2000 + y);
  add("h16.png", rgba);
  return files;
}

// ---- 16-bit through the filters -----------------------------------------------------------------

TEST(SampleDepth, SixteenBitBoxBlurRunsOnSixteenBitSamples) {
  // Box blur takes u16 itself (exact integer sums, rounded to nearest): no float32 round trip.
  const std::unique_ptr<Operation> op = box(2);
  const Image deep = randomImage(23, 11, 4, PixelType::U16, 7);
  const FilterInput input = prepareFilterInput(*op, deep);
  EXPECT_EQ(input.image.type(), PixelType::U16);
  EXPECT_TRUE(input.note.empty()) << input.note;
  EXPECT_EQ(filterResultShape(*op, shapeOf(deep)).type, PixelType::U16);
  const Image out = finishFilterResult(op->runCpu(input.image), input);
  ASSERT_EQ(out.type(), PixelType::U16);
  const Image reference = op->runReference(deep);  // rounded from double sums
  ASSERT_EQ(reference.type(), PixelType::U16);
  EXPECT_TRUE(test::imagesNear(reference, out, 1.0));  // OpenCV's cv::blur on CV_16U: within 1
  for (int y = 0; y < out.height(); ++y)
    for (int x = 0; x < out.width(); ++x)
      EXPECT_EQ(out.at<std::uint16_t>(x, y, 3), deep.at<std::uint16_t>(x, y, 3)) << "alpha passes through";
}

TEST(SampleDepth, SixteenBitIsFilteredAtFullPrecisionAndStoredAsSixteenBit) {
  // An operation without u16 of its own (the Gaussian) filters a 16-bit photo as float32.
  const std::unique_ptr<Operation> op = findOperation("gaussian").make({{"sigma", "1.5"}});
  Image deep(23, 11, 4, PixelType::U16);
  deep = randomImage(23, 11, 4, PixelType::U16, 7);
  const FilterInput input = prepareFilterInput(*op, deep);
  EXPECT_EQ(input.image.type(), PixelType::F32);
  EXPECT_EQ(filterResultShape(*op, shapeOf(deep)).type, PixelType::U16);
  const Image out = finishFilterResult(op->runCpu(input.image), input);
  ASSERT_EQ(out.type(), PixelType::U16);
  // The oracle: the naive reference in double on the same samples, rounded to nearest.
  const Image reference = op->runReference(deep.convertedTo(PixelType::F64).convertedTo(PixelType::F32));
  int differ = 0;
  for (int y = 0; y < out.height(); ++y)
    for (int x = 0; x < out.width(); ++x) {
      for (int c = 0; c < 3; ++c)
        differ += std::abs(out.at<std::uint16_t>(x, y, c) - std::lround(reference.at<float>(x, y, c))) > 1;
      EXPECT_EQ(out.at<std::uint16_t>(x, y, 3), deep.at<std::uint16_t>(x, y, 3)) << "alpha passes through";
    }
  EXPECT_EQ(differ, 0);
  // Values an 8-bit path would lose survive: the result keeps distinct low bytes.
  std::set<int> lowBytes;
  for (std::uint16_t v : out.samples<std::uint16_t>()) lowBytes.insert(v & 0xFF);
  EXPECT_GT(lowBytes.size(), 200u);
}

constexpr const char* kSmoothKernel = "1 2 1\n2 4 2\n1 2 1";

TEST(SampleDepth, AutoLevelsTakesSixteenBitAsItIsAndEveryOtherOperationGetsFloat32) {
  const ImageShape deep{19, 7, 3, PixelType::U16};
  const std::unique_ptr<Operation> levels = findOperation("auto-levels").make({});
  EXPECT_EQ(filterWorkingType(*levels, deep), PixelType::U16);
  EXPECT_EQ(filterResultShape(*levels, deep).type, PixelType::U16);
  const FilterInput input = prepareFilterInput(*levels, randomImage(19, 7, 3, PixelType::U16, 9));
  EXPECT_EQ(input.image.type(), PixelType::U16);
  EXPECT_TRUE(input.note.empty());
  EXPECT_EQ(finishFilterResult(levels->runCpu(input.image), input).type(), PixelType::U16);
  EXPECT_EQ(filterWorkingType(*box(1), deep), PixelType::U16);  // box blur takes u16 too
  EXPECT_EQ(filterResultShape(*box(1), deep).type, PixelType::U16);
  // Every other registered operation refuses u16 in one sentence (so the front ends give it f32) and
  // its result is stored back as u16.
  for (const OperationInfo& info : imageOperations()) {
    if (info.name == "auto-levels" || info.name == "box") continue;
    ParamValues values;  // what the user must give: the smallest number, a 3x3 kernel
    for (const ParamInfo& p : info.params) {
      if (!p.defaultValue.empty()) continue;
      if (p.kind == ParamInfo::Kind::Kernel)
        values[p.name] = kSmoothKernel;
      else
        values[p.name] = std::to_string(static_cast<int>(p.minimum));
    }
    const std::unique_ptr<Operation> op = info.make(values);
    EXPECT_THROW(op->outputShape(deep), std::invalid_argument) << info.name;
    EXPECT_EQ(filterWorkingType(*op, deep), PixelType::F32) << info.name;
    bool takesF32 = true;
    try {
      op->outputShape({deep.width, deep.height, deep.channels, PixelType::F32});
    } catch (const std::invalid_argument&) {
      takesF32 = false;  // Canny: 8-bit only, so a 16-bit photo is refused in its sentence
    }
    if (takesF32)
      EXPECT_EQ(filterResultShape(*op, deep).type, PixelType::U16) << info.name;
    else
      EXPECT_THROW(filterResultShape(*op, deep), std::invalid_argument) << info.name;
  }
}

TEST(SampleDepth, Float64GoesToFloat32WithANote) {
  const std::unique_ptr<Operation> op = box(1);
  const FilterInput input = prepareFilterInput(*op, randomImage(6, 5, 1, PixelType::F64, 8));
  EXPECT_EQ(input.image.type(), PixelType::F32);
  EXPECT_NE(input.note.find("float64"), std::string::npos);
  EXPECT_TRUE(prepareFilterInput(*op, randomImage(6, 5, 1, PixelType::U8, 8)).note.empty());
}

// ---- inputs and shards --------------------------------------------------------------------------

TEST(BatchInputs, FolderGlobAndShards) {
  ScratchDir dir("gpulab-test-batch");
  const std::vector<fs::path> files = writeMixedInputs(dir / "in");
  writeBytes(dir / "in/notes.txt", "not an image");
  const std::vector<fs::path> listed = listBatchInputs((dir / "in").string());
  EXPECT_EQ(listed.size(), files.size()) << "the .txt is no image";
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_EQ(listBatchInputs((dir / "in/*16.*").string()).size(), 3u);
  EXPECT_THROW(listBatchInputs((dir / "none/*.jpg").string()), std::invalid_argument);
  EXPECT_THROW(listBatchInputs((dir / "missing").string()), std::invalid_argument);

  std::vector<fs::path> many;
  for (int i = 0; i < 500; ++i) many.push_back("photos/img_" + std::to_string(i) + ".jpg");
  for (const int n : {1, 2, 3, 7}) {
    std::multiset<fs::path> all;
    for (int k = 1; k <= n; ++k) {
      const std::vector<fs::path> part = shardOf(many, k, n);
      if (n > 1) {
        EXPECT_GT(part.size(), many.size() / n / 2) << "parts are about even";
      }
      all.insert(part.begin(), part.end());
      // Stable: a file's part does not depend on the others.
      const std::vector<fs::path> fewer(many.begin() + 100, many.end());
      for (const fs::path& p : shardOf(fewer, k, n)) EXPECT_TRUE(std::find(part.begin(), part.end(), p) != part.end());
    }
    EXPECT_EQ(all, std::multiset<fs::path>(many.begin(), many.end())) << "disjoint and complete for n = " << n;
  }
  EXPECT_THROW(shardOf(many, 0, 3), std::invalid_argument);
  EXPECT_THROW(shardOf(many, 4, 3), std::invalid_argument);
}

// ---- the pipeline -------------------------------------------------------------------------------

TEST(Batch, CpuOutputsEqualTheSingleImagePathByteForByte) {
  ScratchDir dir("gpulab-test-batch");
  const std::vector<fs::path> files = writeMixedInputs(dir / "in");
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(2); };
  options.useGpu = false;
  options.jobs = 3;
  std::atomic<int> calls{0};
  options.onProgress = [&](const BatchProgress& p) {
    ++calls;
    EXPECT_LE(p.done, p.total);
  };
  const BatchSummary summary = runBatch(options);
  EXPECT_EQ(summary.written, static_cast<int>(files.size()));
  EXPECT_TRUE(summary.failures.empty()) << summary.failures.front().input << ": " << summary.failures.front().reason;
  EXPECT_EQ(calls.load(), static_cast<int>(files.size()));
  EXPECT_GT(summary.stages.decodeMs, 0.0);
  EXPECT_EQ(summary.gpuBusy, -1.0);
  const std::unique_ptr<Operation> op = box(2);
  fs::create_directories(dir / "single");
  for (const fs::path& in : files) {
    SCOPED_TRACE(in.filename().string());
    filterOneOnCpu(*op, in, dir / "single" / in.filename());
    EXPECT_EQ(readBytes(dir / "out" / in.filename()), readBytes(dir / "single" / in.filename()));
  }
  EXPECT_EQ(loadImage(dir / "out/d16.png").type(), PixelType::U16) << "16-bit in, 16-bit out";
  EXPECT_EQ(loadImage(dir / "out/e16.tif").type(), PixelType::U16);
}

TEST(Batch, AutoLevelsKeepsSixteenBitsAndTheirAlpha) {
  ScratchDir dir("gpulab-test-batch-levels");
  const std::vector<fs::path> files = writeMixedInputs(dir / "in");
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return findOperation("auto-levels").make({}); };
  options.useGpu = false;
  options.jobs = 2;
  const BatchSummary summary = runBatch(options);
  EXPECT_EQ(summary.written, static_cast<int>(files.size()));
  EXPECT_TRUE(summary.failures.empty()) << summary.failures.front().input << ": " << summary.failures.front().reason;
  const std::unique_ptr<Operation> op = findOperation("auto-levels").make({});
  fs::create_directories(dir / "single");
  for (const fs::path& in : files) {
    SCOPED_TRACE(in.filename().string());
    filterOneOnCpu(*op, in, dir / "single" / in.filename());
    EXPECT_EQ(readBytes(dir / "out" / in.filename()), readBytes(dir / "single" / in.filename()));
  }
  const Image in = loadImage(dir / "in/h16.png"), out = loadImage(dir / "out/h16.png");
  ASSERT_EQ(out.type(), PixelType::U16);
  EXPECT_TRUE(out == op->runReference(in)) << "u16 RGBA stretched as u16, alpha kept";
  for (int x = 0; x < out.width(); ++x) EXPECT_EQ(out.at<std::uint16_t>(x, 3, 3), in.at<std::uint16_t>(x, 3, 3));
}

TEST(Batch, GpuOutputsEqualTheSingleImageGpuPath) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-batch");
  const std::vector<fs::path> files = writeMixedInputs(dir / "in");
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(3); };
  options.useGpu = true;
  options.streams = 3;
  const BatchSummary summary = runBatch(options);
  ASSERT_TRUE(summary.failures.empty()) << summary.failures.front().reason;
  EXPECT_TRUE(summary.onGpu);
  EXPECT_GT(summary.gpuBusy, 0.0);
  EXPECT_LE(summary.gpuBusy, 1.0);
  GpuContext gpu;
  const std::unique_ptr<Operation> op = box(3);
  fs::create_directories(dir / "single");
  for (const fs::path& in : files) {
    SCOPED_TRACE(in.filename().string());
    const FilterInput input = prepareFilterInput(*op, loadImage(in));
    DeviceImage d = gpu.upload(input.image), result;
    op->runGpu(gpu, d, result);
    saveImage(finishFilterResult(gpu.download(result), input), dir / "single" / in.filename(), SaveOptions{});
    EXPECT_EQ(readBytes(dir / "out" / in.filename()), readBytes(dir / "single" / in.filename()));
  }
}

TEST(Batch, FailuresAreReportedWithTheirReasonAndTheBatchGoesOn) {
  ScratchDir dir("gpulab-test-batch");
  fs::create_directories(dir / "in");
  saveImage(photo(20, 10, 3, 1), dir / "in/good1.png");
  saveImage(photo(21, 11, 3, 2), dir / "in/good2.jpg");
  const std::string png = readBytes(dir / "in/good1.png");
  writeBytes(dir / "in/cut.png", png.substr(0, png.size() / 2));
  writeBytes(dir / "in/text.jpg", "\xFF\xD8\xFF this is no JPEG at all");
  writeBytes(dir / "in/empty.tif", "");
  BatchOptions options;
  options.inputs = listBatchInputs((dir / "in").string());
  options.outDir = dir / "out";
  options.format = BatchFormat::Jpg;
  options.makeOperation = [] { return box(1); };
  options.useGpu = false;
  const BatchSummary summary = runBatch(options);
  EXPECT_EQ(summary.written, 2);
  ASSERT_EQ(summary.failures.size(), 3u);
  for (const BatchFailure& f : summary.failures) {
    EXPECT_NE(f.reason.find(f.input.string()), std::string::npos) << "the reason names the file: " << f.reason;
    EXPECT_EQ(f.reason.find('\n'), std::string::npos);
  }
  EXPECT_NE(summary.failures[0].reason.find("truncated"), std::string::npos) << summary.failures[0].reason;
  EXPECT_NE(summary.failures[1].reason.find("is empty"), std::string::npos) << summary.failures[1].reason;
  std::vector<std::string> written;
  for (const auto& entry : fs::directory_iterator(dir / "out")) written.push_back(entry.path().filename().string());
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, (std::vector<std::string>{"good1.jpg", "good2.jpg"})) << "no half-written or temporary files";
}

TEST(Batch, ResultsAFormatCannotHoldFailWithTheFormatsThatCan) {
  ScratchDir dir("gpulab-test-batch");
  fs::create_directories(dir / "in");
  Image deep = randomImage(8, 8, 3, PixelType::U16, 3);
  saveImage(deep, dir / "in/deep.png");
  BatchOptions options;
  options.inputs = {dir / "in/deep.png"};
  options.outDir = dir / "out";
  options.format = BatchFormat::Jpg;
  options.makeOperation = [] { return box(1); };
  options.useGpu = false;
  const BatchSummary summary = runBatch(options);
  ASSERT_EQ(summary.failures.size(), 1u);
  EXPECT_NE(summary.failures[0].reason.find(".png, .tif or .npy"), std::string::npos) << summary.failures[0].reason;
}

TEST(Batch, InputsAreNeverOverwritten) {
  ScratchDir dir("gpulab-test-batch");
  fs::create_directories(dir / "in");
  saveImage(photo(12, 8, 3, 1), dir / "in/a.png");
  saveImage(photo(12, 8, 3, 2), dir / "in/a.jpg");
  const std::string before = readBytes(dir / "in/a.png");
  BatchOptions options;
  options.inputs = listBatchInputs((dir / "in").string());
  options.outDir = dir / "in";  // the inputs' own folder
  options.makeOperation = [] { return box(1); };
  options.useGpu = false;
  BatchSummary summary = runBatch(options);
  EXPECT_EQ(summary.written, 0);
  ASSERT_EQ(summary.failures.size(), 2u);
  EXPECT_NE(summary.failures[0].reason.find("would overwrite an input"), std::string::npos);
  EXPECT_EQ(readBytes(dir / "in/a.png"), before);
  // Two inputs with one output name: the first keeps it.
  options.outDir = dir / "out";
  options.format = BatchFormat::Png;
  summary = runBatch(options);
  EXPECT_EQ(summary.written, 1);
  ASSERT_EQ(summary.failures.size(), 1u);
  EXPECT_NE(summary.failures[0].reason.find("is also the output of"), std::string::npos) << summary.failures[0].reason;
}

TEST(Batch, AnOutputFolderThatCannotBeMadeIsOneSentence) {
  ScratchDir dir("gpulab-test-batch");
  saveImage(photo(4, 4, 3, 1), dir / "a.png");
  writeBytes(dir / "blocker", "a file where the folder should go");
  BatchOptions options;
  options.inputs = {dir / "a.png"};
  options.outDir = dir / "blocker/out";
  options.useGpu = false;
  EXPECT_TRUE(test::throwsIoError([&] { runBatch(options); }, (dir / "blocker/out").string(),
                                  {"cannot make the output folder"}));
}

TEST(Batch, CodecsAloneConvertFormatsAndKeepSixteenBits) {
  ScratchDir dir("gpulab-test-batch");
  const std::vector<fs::path> files = writeMixedInputs(dir / "in");
  BatchOptions options;
  options.inputs = {dir / "in/d16.png", dir / "in/c.tif"};
  options.outDir = dir / "out";
  options.format = BatchFormat::Tiff;
  options.useGpu = false;
  const BatchSummary summary = runBatch(options);
  EXPECT_EQ(summary.written, 2);
  EXPECT_FALSE(summary.filtered);
  EXPECT_EQ(loadImage(dir / "out/d16.tif"), loadImage(dir / "in/d16.png"));
  EXPECT_EQ(loadImage(dir / "out/c.tif"), loadImage(dir / "in/c.tif"));
}

TEST(Batch, CancelStopsStartingNewInputs) {
  ScratchDir dir("gpulab-test-batch");
  fs::create_directories(dir / "in");
  for (int i = 0; i < 30; ++i) {
    saveImage(photo(64, 48, 3, static_cast<unsigned>(i)), dir / "in" / ("p" + std::to_string(i) + ".png"));
  }
  std::atomic<bool> cancel{false};
  BatchOptions options;
  options.inputs = listBatchInputs((dir / "in").string());
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(1); };
  options.useGpu = false;
  options.jobs = 1;
  options.cancel = &cancel;
  options.onProgress = [&](const BatchProgress& p) {
    if (p.done == 2) cancel = true;
  };
  const BatchSummary summary = runBatch(options);
  EXPECT_TRUE(summary.cancelled);
  EXPECT_LT(summary.written, 30);
  EXPECT_GE(summary.written, 2);
}

// ---- several pipelines -------------------------------------------------------------------------

std::vector<fs::path> writeSmallPhotos(const fs::path& dir, int count) {
  fs::create_directories(dir);
  std::vector<fs::path> files;
  for (int i = 0; i < count; ++i) {
    files.push_back(dir / ("p" + std::to_string(100 + i) + ".png"));
    saveImage(photo(23 + i, 17 + (i % 5), 3, static_cast<unsigned>(40 + i)), files.back());
  }
  return files;
}

/// The outputs equal what the single-image CPU path writes for each input.
void expectSameAsSingle(const ScratchDir& dir, const std::vector<fs::path>& files, int radius) {
  const std::unique_ptr<Operation> op = box(radius);
  fs::create_directories(dir / "single");
  for (const fs::path& in : files) {
    SCOPED_TRACE(in.filename().string());
    filterOneOnCpu(*op, in, dir / "single" / in.filename());
    EXPECT_EQ(readBytes(dir / "out" / in.filename()), readBytes(dir / "single" / in.filename()));
  }
}

TEST(BatchPipelines, ImagesSplitAmongCpuPipelinesAndEveryOutputIsTheSingleImagePath) {
  ScratchDir dir("gpulab-test-batch-split");
  const std::vector<fs::path> files = writeSmallPhotos(dir / "in", 12);
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(2); };
  options.useGpu = false;
  options.cpuPipelines = 3;
  options.jobs = 2;
  // Pipeline 0 is slow, so the others must take images for the batch to finish.
  options.beforeCompute = [](int p) {
    if (p == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
  };
  const BatchSummary summary = runBatch(options);
  ASSERT_TRUE(summary.failures.empty()) << summary.failures.front().reason;
  EXPECT_EQ(summary.written, 12);
  ASSERT_EQ(summary.pipelines.size(), 3u);
  int images = 0;
  for (const BatchPipeline& p : summary.pipelines) {
    images += p.images;
    EXPECT_FALSE(p.failed);
    EXPECT_EQ(p.device, -1);
    EXPECT_EQ(p.busy, -1.0) << "busy fractions are a GPU's";
  }
  EXPECT_EQ(images, 12) << "each image computed exactly once";
  EXPECT_GT(summary.pipelines[1].images + summary.pipelines[2].images, 0);
  EXPECT_EQ(summary.pipelines[1].label, "CPU pipeline 2");
  EXPECT_EQ(summary.retried, 0);
  EXPECT_TRUE(summary.notes.empty());
  expectSameAsSingle(dir, files, 2);
}

TEST(BatchPipelines, APipelineThatFailsMidRunHandsItsImageToAnotherAndNothingIsLost) {
  ScratchDir dir("gpulab-test-batch-fail");
  const std::vector<fs::path> files = writeSmallPhotos(dir / "in", 10);
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(1); };
  options.useGpu = false;
  options.cpuPipelines = 2;
  options.jobs = 2;
  std::atomic<int> calls{0};
  options.beforeCompute = [&](int p) {
    if (p == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // pipeline 1 takes images
    if (p == 1 && ++calls == 2) throw OutOfDeviceMemory("simulated: out of memory on device 1");
  };
  const BatchSummary summary = runBatch(options);
  EXPECT_TRUE(summary.failures.empty()) << summary.failures.front().reason;
  EXPECT_EQ(summary.written, 10) << "nothing lost";
  ASSERT_EQ(summary.pipelines.size(), 2u);
  EXPECT_FALSE(summary.pipelines[0].failed);
  EXPECT_TRUE(summary.pipelines[1].failed);
  EXPECT_EQ(summary.pipelines[1].images, 1) << "its first image was done before it failed";
  EXPECT_EQ(summary.pipelines[1].failure, "simulated: out of memory on device 1");
  EXPECT_EQ(summary.pipelines[0].images, 9);
  EXPECT_EQ(summary.retried, 1);
  ASSERT_EQ(summary.notes.size(), 1u);
  const std::string& note = summary.notes.front();
  EXPECT_NE(note.find("CPU pipeline 2 failed mid-run after 1 images"), std::string::npos) << note;
  EXPECT_NE(note.find("went to another pipeline and the others went on"), std::string::npos) << note;
  EXPECT_EQ(note.find('\n'), std::string::npos);
  expectSameAsSingle(dir, files, 1);
}

TEST(BatchPipelines, WhenEveryPipelineFailsEachImageFailsWithOneSentenceAndTheRunEnds) {
  ScratchDir dir("gpulab-test-batch-allfail");
  const std::vector<fs::path> files = writeSmallPhotos(dir / "in", 7);
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(1); };
  options.useGpu = false;
  options.cpuPipelines = 2;
  options.jobs = 2;
  options.beforeCompute = [](int p) { throw std::runtime_error("simulated failure of pipeline " + std::to_string(p)); };
  const BatchSummary summary = runBatch(options);  // must not hang
  EXPECT_EQ(summary.written, 0);
  ASSERT_EQ(summary.failures.size(), 7u) << "every input accounted for";
  EXPECT_FALSE(summary.cancelled);
  for (const BatchFailure& f : summary.failures) {
    EXPECT_EQ(f.reason.find('\n'), std::string::npos);
    EXPECT_TRUE(f.reason.find("every compute pipeline of the batch failed") != std::string::npos ||
                f.reason.find("it failed on two GPUs") != std::string::npos)
        << f.reason;
  }
  EXPECT_TRUE(summary.pipelines[0].failed || summary.pipelines[1].failed);
  EXPECT_FALSE(summary.notes.empty());
}

TEST(BatchPipelines, TheSummaryNamesTheStageThatBoundTheRate) {
  ScratchDir dir("gpulab-test-batch-limit");
  const std::vector<fs::path> files = writeSmallPhotos(dir / "in", 6);
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.useGpu = false;
  options.jobs = 2;
  const BatchSummary codecs = runBatch(options);  // no operation: the codecs alone
  EXPECT_TRUE(codecs.limit == BatchLimit::Decode || codecs.limit == BatchLimit::Encode) << limitName(codecs);
  EXPECT_GT(codecs.codecShare, 0.0);
  EXPECT_NE(codecs.limitSentence().find("the 2 decode/encode threads were busy"), std::string::npos)
      << codecs.limitSentence();

  // A slow compute stage (the hook sleeps) is the limit.
  options.outDir = dir / "out2";
  options.makeOperation = [] { return box(1); };
  options.beforeCompute = [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(40)); };
  const BatchSummary slow = runBatch(options);
  EXPECT_EQ(slow.limit, BatchLimit::Compute) << slow.limitSentence();
  EXPECT_EQ(limitName(slow), "CPU compute");
  EXPECT_GT(slow.computeShare, slow.codecShare);
  EXPECT_EQ(slow.limitSentence().rfind("CPU compute: the CPU baseline computed", 0), 0u) << slow.limitSentence();
}

TEST(BatchPipelines, ADeviceThatDoesNotExistIsOneSentence) {
  ScratchDir dir("gpulab-test-batch-nodevice");
  BatchOptions options;
  options.inputs = writeSmallPhotos(dir / "in", 1);
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(1); };
  options.useGpu = true;
  options.devices = {0, 99};
  try {
    runBatch(options);
    FAIL() << "ran on GPU 99";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (cudaAvailable())
      EXPECT_NE(what.find("there is no GPU 99: this machine has GPU 0"), std::string::npos) << what;
    else
      EXPECT_NE(what.find("there is none"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir / "out")) << "refused before anything was made";
}

TEST(BatchPipelines, TwoPipelinesOnOneGpuWriteWhatTheSingleImageGpuPathWrites) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-batch-gpus");
  const std::vector<fs::path> files = writeMixedInputs(dir / "in");
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(3); };
  options.devices = {0, 0};  // the several-GPU path on one GPU
  options.streams = 2;
  const BatchSummary summary = runBatch(options);
  ASSERT_TRUE(summary.failures.empty()) << summary.failures.front().reason;
  ASSERT_EQ(summary.pipelines.size(), 2u);
  EXPECT_EQ(summary.pipelines[0].images + summary.pipelines[1].images, summary.written);
  for (const BatchPipeline& p : summary.pipelines) {
    EXPECT_EQ(p.device, 0);
    EXPECT_EQ(p.label, deviceLabel(0));
    EXPECT_GE(p.busy, 0.0);
    EXPECT_LE(p.busy, 1.0);
  }
  EXPECT_EQ(summary.devices, deviceLabel(0)) << "each device named once";
  EXPECT_GT(summary.gpuBusy, 0.0);
  GpuContext gpu;
  const std::unique_ptr<Operation> op = box(3);
  fs::create_directories(dir / "single");
  for (const fs::path& in : files) {
    SCOPED_TRACE(in.filename().string());
    const FilterInput input = prepareFilterInput(*op, loadImage(in));
    DeviceImage d = gpu.upload(input.image), result;
    op->runGpu(gpu, d, result);
    saveImage(finishFilterResult(gpu.download(result), input), dir / "single" / in.filename(), SaveOptions{});
    EXPECT_EQ(readBytes(dir / "out" / in.filename()), readBytes(dir / "single" / in.filename()));
  }
}

TEST(BatchPipelines, AGpuThatFailsMidRunLosesNothing) {
  GPULAB_REQUIRE_GPU();
  ScratchDir dir("gpulab-test-batch-gpufail");
  const std::vector<fs::path> files = writeSmallPhotos(dir / "in", 9);
  BatchOptions options;
  options.inputs = files;
  options.outDir = dir / "out";
  options.makeOperation = [] { return box(2); };
  options.devices = {0, 0};
  options.streams = 1;
  options.beforeCompute = [](int p) {
    if (p == 1) throw OutOfDeviceMemory("simulated: GPU of pipeline 2 out of memory");
  };
  const BatchSummary summary = runBatch(options);
  EXPECT_TRUE(summary.failures.empty()) << summary.failures.front().reason;
  EXPECT_EQ(summary.written, 9);
  EXPECT_FALSE(summary.pipelines[0].failed);
  EXPECT_EQ(summary.pipelines[0].images, 9);
  EXPECT_TRUE(summary.pipelines[1].failed);
  ASSERT_EQ(summary.notes.size(), 1u);
  EXPECT_NE(summary.notes[0].find("failed mid-run after 0 images (simulated: GPU of pipeline 2 out of memory)"),
            std::string::npos)
      << summary.notes[0];
}

}  // namespace
}  // namespace gpulab
