// Engine core: device discovery, RAII handles, images, upload/download round trips, timing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/core/roi.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "internal/kernel_views.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

// ---------------------------------------------------------------------------------------------
// Device discovery: works with and without a GPU.

TEST(DeviceDiscovery, ReportIsConsistentWithAvailability) {
  const DeviceReport report = queryDevices();
  EXPECT_EQ(report.available(), cudaAvailable());
  EXPECT_GT(report.runtimeVersion, 0);
  if (report.available()) {
    EXPECT_TRUE(report.status.empty());
    for (const DeviceInfo& d : report.devices) {
      EXPECT_FALSE(d.name.empty());
      EXPECT_GE(d.computeMajor, 3);
      EXPECT_GT(d.multiprocessors, 0);
      EXPECT_GT(d.totalMemory, 0u);
      EXPECT_LE(d.freeMemory, d.totalMemory);
    }
  } else {
    EXPECT_TRUE(report.devices.empty());
    EXPECT_NE(report.status.find("CPU only"), std::string::npos) << report.status;
  }
}

TEST(DeviceDiscovery, VersionFormatting) {
  EXPECT_EQ(formatCudaVersion(13000), "13.0");
  EXPECT_EQ(formatCudaVersion(12040), "12.4");
  EXPECT_EQ(formatCudaVersion(0), "none");
}

// ---------------------------------------------------------------------------------------------
// Errors carry the call, the place and CUDA's words.

// --gpus: every form against simulated device counts (no GPU needed).
TEST(GpuList, ReadsAllListsAndCounts) {
  EXPECT_EQ(parseGpuList("all", 1), (std::vector<int>{0}));
  EXPECT_EQ(parseGpuList("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parseGpuList("2", 4), (std::vector<int>{0, 1}));
  EXPECT_EQ(parseGpuList("1", 2), (std::vector<int>{0}));
  EXPECT_EQ(parseGpuList("0,1", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parseGpuList("3,1", 4), (std::vector<int>{1, 3}));
}

TEST(GpuList, RefusesWithOneSentence) {
  auto message = [](std::string_view text, int count) {
    try {
      parseGpuList(text, count);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("3", 2), "--gpus 3: cannot use 3 GPUs; this machine has GPU 0 and GPU 1");
  EXPECT_EQ(message("0,2", 2), "--gpus 0,2: there is no GPU 2; this machine has GPU 0 and GPU 1");
  EXPECT_EQ(message("0,2", 3), "accepted");
  EXPECT_EQ(message("1,1", 3), "--gpus 1,1: GPU 1 is listed twice");
  EXPECT_EQ(message("0", 2), "--gpus 0: cannot use 0 GPUs; this machine has GPU 0 and GPU 1");
  EXPECT_EQ(message("all", 0), "--gpus all: this machine has no CUDA device");
  EXPECT_EQ(message("1", 0), "--gpus 1: this machine has no CUDA device");
  EXPECT_EQ(message("2", 1), "--gpus 2: cannot use 2 GPUs; this machine has only GPU 0");
  EXPECT_EQ(message("4,0", 4), "--gpus 4,0: there is no GPU 4; this machine has GPU 0, GPU 1, GPU 2 and GPU 3");
  for (const char* bad : {"", "x", "-1", "1.5", " 1", "0,,1", "0,-1", "7,", ",1", "ALL", "99999999999"})
    EXPECT_NE(message(bad, 2), "accepted") << '"' << bad << '"';
  EXPECT_EQ(message("0,x", 2), "--gpus 0,x: \"x\" is not a GPU index (expected a list such as 0,1)");
}

TEST(CudaErrors, CheckThrowsWithCallFileAndMessage) {
  try {
    GPULAB_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "cudaErrorInvalidValue");
    EXPECT_NE(std::string(e.what()).find("test_core.cpp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaErrorInvalidValue"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorInvalidValue));
  }
}

// ---------------------------------------------------------------------------------------------
// Host images

TEST(Image, ShapeAndZeroFill) {
  Image img(3, 2, 3, PixelType::F32);
  EXPECT_EQ(img.rowBytes(), 3u * 3 * 4);
  EXPECT_EQ(img.sizeBytes(), 2u * 3 * 3 * 4);
  for (float v : img.samples<float>()) EXPECT_EQ(v, 0.f);
  img.at<float>(2, 1, 2) = 7.f;
  EXPECT_EQ(img.samples<float>().back(), 7.f);
  EXPECT_EQ(img.describe(), "3x2 RGB f32");
}

TEST(Image, UninitializedHasTheShapeAndTheOthersStillZero) {
  const Image u = Image::uninitialized(5, 4, 3, PixelType::F32);
  EXPECT_EQ(u.sizeBytes(), 5u * 4 * 3 * 4);
  EXPECT_EQ(u.describe(), "5x4 RGB f32");
  EXPECT_THROW(Image::uninitialized(0, 4, 1, PixelType::U8), std::invalid_argument);
  // The allocator leaves bytes made without a value as they are: every other way to a shape must
  // still zero them. A freed block full of 0xAB is what the next allocation of its size gets back.
  for (int round = 0; round < 3; ++round) {
    {
      Image dirty = Image::uninitialized(64, 64, 1, PixelType::U8);
      std::memset(dirty.data(), 0xAB, dirty.sizeBytes());
    }
    const Image fresh(64, 64, 1, PixelType::U8);
    for (std::uint8_t v : fresh.samples<std::uint8_t>()) ASSERT_EQ(v, 0) << "round " << round;
    Image grown(8, 8, 1, PixelType::U8);
    std::memset(grown.data(), 0xAB, grown.sizeBytes());
    grown.reshape(64, 64, 1, PixelType::U8);
    for (std::uint8_t v : grown.samples<std::uint8_t>()) ASSERT_EQ(v, 0) << "reshaped, round " << round;
  }
}

TEST(Image, RejectsBadShapesWithOneSentence) {
  EXPECT_THROW(Image(0, 5, 1, PixelType::U8), std::invalid_argument);
  EXPECT_THROW(Image(5, -1, 1, PixelType::U8), std::invalid_argument);
  EXPECT_THROW(Image(kMaxImageDimension + 1, 1, 1, PixelType::U8), std::invalid_argument);
  EXPECT_THROW(Image(20000, 20000, 1, PixelType::U8), std::invalid_argument);  // > 256 MP
  EXPECT_THROW(Image(4, 4, 5, PixelType::U8), std::invalid_argument);
  try {
    Image(0, 5, 1, PixelType::U8);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "image size 0x5 is empty: both sides must be at least 1 pixel");
  }
}

TEST(Image, ConversionRoundsAndSaturates) {
  Image f(4, 1, 1, PixelType::F32);
  auto s = f.samples<float>();
  s[0] = -3.f;
  s[1] = 1.5f;
  s[2] = 254.6f;
  s[3] = 900.f;
  const Image u = f.convertedTo(PixelType::U8);
  auto r = u.samples<std::uint8_t>();
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 2);  // round half to even
  EXPECT_EQ(r[2], 255);
  EXPECT_EQ(r[3], 255);
  const Image back = u.convertedTo(PixelType::F64);
  EXPECT_EQ(back.samples<double>()[2], 255.0);
}

TEST(Image, ChannelExtraction) {
  const Image rgb = test::randomImage(5, 3, 3, PixelType::U8, 1);
  const Image g = rgb.channel(1);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(g.at<std::uint8_t>(x, y), rgb.at<std::uint8_t>(x, y, 1));
  EXPECT_THROW(rgb.channel(3), std::out_of_range);
}

// ---------------------------------------------------------------------------------------------
// Timing harness

TEST(Timing, StatsMedianMinMax) {
  const Stats odd = Stats::of({5, 1, 3});
  EXPECT_DOUBLE_EQ(odd.medianMs, 3);
  EXPECT_DOUBLE_EQ(odd.minMs, 1);
  EXPECT_DOUBLE_EQ(odd.maxMs, 5);
  EXPECT_EQ(odd.reps, 3);
  EXPECT_DOUBLE_EQ(Stats::of({4, 1, 3, 2}).medianMs, 2.5);
  EXPECT_THROW(Stats::of({}), std::invalid_argument);
}

TEST(Timing, HostHarnessExcludesWarmup) {
  int calls = 0;
  const Stats s = timeHost([&] { ++calls; }, {.warmup = 3, .reps = 7});
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(s.reps, 7);
  EXPECT_LE(s.minMs, s.medianMs);
  EXPECT_LE(s.medianMs, s.maxMs);
  EXPECT_THROW(timeHost([] {}, {.warmup = 0, .reps = 0}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// RAII handles (GPU)

static_assert(!std::is_copy_constructible_v<DeviceBuffer> && std::is_nothrow_move_constructible_v<DeviceBuffer>);
static_assert(!std::is_copy_constructible_v<PinnedBuffer> && std::is_nothrow_move_constructible_v<PinnedBuffer>);
static_assert(!std::is_copy_constructible_v<DeviceImage> && std::is_nothrow_move_constructible_v<DeviceImage>);
static_assert(!std::is_copy_constructible_v<Stream> && std::is_nothrow_move_constructible_v<Stream>);

TEST(Buffers, MoveTransfersOwnership) {
  GPULAB_REQUIRE_GPU();
  DeviceBuffer a(1024);
  void* p = a.data();
  ASSERT_NE(p, nullptr);
  DeviceBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 1024u);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  DeviceBuffer c(16);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  c.reserve(512);  // smaller: keeps the buffer
  EXPECT_EQ(c.data(), p);
  c.reserve(4096);
  EXPECT_GE(c.size(), 4096u);
}

TEST(Buffers, PinnedAndStreamAndEvent) {
  GPULAB_REQUIRE_GPU();
  PinnedBuffer host(256);
  DeviceBuffer dev(256);
  for (int i = 0; i < 64; ++i) host.as<int>()[i] = i * 3;
  Stream s;
  Event start, stop;
  start.record(s);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(dev.data(), host.data(), 256, cudaMemcpyHostToDevice, s));
  GPULAB_CUDA_CHECK(cudaMemsetAsync(host.data(), 0, 256, s));
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(host.data(), dev.data(), 256, cudaMemcpyDeviceToHost, s));
  stop.record(s);
  s.synchronize();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(host.as<int>()[i], i * 3);
  EXPECT_GE(stop.elapsedSince(start), 0.f);
}

TEST(Buffers, ImpossibleAllocationThrowsOutOfDeviceMemory) {
  GPULAB_REQUIRE_GPU();
  const std::size_t huge = std::size_t{1} << 50;  // 1 PiB
  try {
    DeviceBuffer b(huge);
    FAIL() << "allocated 1 PiB";
  } catch (const OutOfDeviceMemory& e) {
    EXPECT_NE(std::string(e.what()).find("needs 1024.0 TiB of GPU memory"), std::string::npos) << e.what();
  }
  DeviceBuffer ok(64);  // the failure did not poison the context
  EXPECT_FALSE(ok.empty());
}

TEST(Buffers, ImageLargerThanFreeMemoryIsAClearError) {
  GPULAB_REQUIRE_GPU();
  // 16384 x 16384 RGBA f64 = 8 GiB per... beyond a GPU only if it is small; use many images.
  const MemoryUsage mem = deviceMemory();
  std::vector<DeviceImage> held;
  try {
    for (int i = 0; i < 64; ++i) held.emplace_back(16384, 16384, 4, PixelType::F64);  // 8 GiB each
    GTEST_SKIP() << "the GPU holds 512 GiB (" << mem.total << " bytes): nothing to exhaust";
  } catch (const OutOfDeviceMemory& e) {
    EXPECT_NE(std::string(e.what()).find("16384x16384 RGBA f64 image does not fit on the GPU"), std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Upload / download round trips on odd sizes, every type and layout.

struct RoundTripCase {
  int width, height, channels;
  PixelType type;
};

class UploadDownload : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(UploadDownload, RoundTripIsExactAndPlanar) {
  GPULAB_REQUIRE_GPU();
  const auto [w, h, c, type] = GetParam();
  const Image src = test::randomImage(w, h, c, type, 42u + w * 7 + h);
  GpuContext gpu;
  DeviceImage d = gpu.upload(src);
  EXPECT_EQ(d.width(), w);
  EXPECT_EQ(d.height(), h);
  EXPECT_EQ(d.channels(), c);
  EXPECT_GE(d.pitch(), static_cast<std::size_t>(w) * bytesPerSample(type));
  EXPECT_GE(gpu.lastUpload().deviceMs, 0.0);

  // Planar on the device: plane c, pixel (x, y) holds the interleaved sample c of pixel (x, y).
  const int x = w - 1, y = h - 1, ch = c - 1;
  std::vector<std::byte> sample(bytesPerSample(type));
  GPULAB_CUDA_CHECK(cudaMemcpy(
      sample.data(), reinterpret_cast<const std::byte*>(planeOf<std::uint8_t>(d, ch).row(y)) + x * bytesPerSample(type),
      sample.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, std::memcmp(sample.data(),
                           src.data() + (static_cast<std::size_t>(y) * w + x) * c * bytesPerSample(type) +
                               ch * bytesPerSample(type),
                           sample.size()));

  const Image back = gpu.download(d);
  EXPECT_TRUE(test::imagesNear(src, back, 0.0));
  EXPECT_TRUE(back == src);

  // Reuse: a second upload of the same shape keeps the allocation.
  const void* before = planeOf<std::uint8_t>(d, 0).data;
  gpu.upload(test::randomImage(w, h, c, type, 7), d);
  EXPECT_EQ(planeOf<std::uint8_t>(d, 0).data, before);
}

// Interleaved on the device (DeviceLayout::Interleaved): the host rows as they are; a one-channel
// image is planar whatever was asked. inLayout converts both ways, bit for bit; plane views refuse an
// interleaved image.
TEST_P(UploadDownload, InterleavedRoundTripAndLayoutConversions) {
  GPULAB_REQUIRE_GPU();
  const auto [w, h, c, type] = GetParam();
  const Image src = test::randomImage(w, h, c, type, 99u + w * 5 + h);
  GpuContext gpu;
  DeviceImage d = gpu.upload(src, DeviceLayout::Interleaved);
  EXPECT_EQ(d.layout(), c == 1 ? DeviceLayout::Planar : DeviceLayout::Interleaved);
  EXPECT_GE(d.pitch(), src.rowBytes());
  EXPECT_EQ(d.sizeBytes(), d.pitch() * static_cast<std::size_t>(h));  // one plane of whole pixels

  // Pixel (x, y) sample ch sits at byte (x * c + ch) * sample of row y.
  const int x = w - 1, y = h - 1, ch = c - 1;
  const std::size_t bytes = bytesPerSample(type);
  std::vector<std::byte> sample(bytes);
  GPULAB_CUDA_CHECK(cudaMemcpy(sample.data(),
                               d.planeData(0) + y * d.pitch() + (static_cast<std::size_t>(x) * c + ch) * bytes, bytes,
                               cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, std::memcmp(sample.data(), src.data() + (static_cast<std::size_t>(y) * w + x) * c * bytes + ch * bytes,
                           bytes));
  EXPECT_TRUE(gpu.download(d) == src);
  if (c > 1) {
    EXPECT_THROW((void)planeOf<std::uint8_t>(d, 0), std::logic_error);
  }

  // Interleaved -> planar -> interleaved, and planar -> interleaved from a planar upload.
  DeviceImage planar, back;
  const DeviceImage& p = gpu.inLayout(d, DeviceLayout::Planar, planar);
  EXPECT_EQ(p.layout(), DeviceLayout::Planar);
  EXPECT_EQ(&gpu.inLayout(p, DeviceLayout::Planar, back), &p);  // already planar: itself
  EXPECT_TRUE(gpu.download(p) == src);
  const DeviceImage& i = gpu.inLayout(p, DeviceLayout::Interleaved, back);
  EXPECT_TRUE(gpu.download(i) == src);
  EXPECT_EQ(i.layout(), c == 1 ? DeviceLayout::Planar : DeviceLayout::Interleaved);

  // A crop keeps the layout and the pixels.
  const PixelRect rect{w / 3, h / 4, std::max(1, w / 2), std::max(1, h / 2)};
  DeviceImage cropped;
  crop(gpu, d, rect, cropped);
  EXPECT_EQ(cropped.layout(), d.layout());
  EXPECT_TRUE(gpu.download(cropped) == crop(src, rect));

  // Reuse: same shape and layout keeps the allocation; the other layout reallocates.
  const std::byte* before = d.planeData(0);
  gpu.upload(test::randomImage(w, h, c, type, 3), d, DeviceLayout::Interleaved);
  EXPECT_EQ(d.planeData(0), before);
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, UploadDownload,
    ::testing::Values(RoundTripCase{1, 1, 1, PixelType::U8}, RoundTripCase{2, 3, 3, PixelType::U8},
                      RoundTripCase{13, 12, 4, PixelType::U8}, RoundTripCase{257, 131, 1, PixelType::F32},
                      RoundTripCase{257, 131, 3, PixelType::F32}, RoundTripCase{641, 479, 4, PixelType::F64},
                      RoundTripCase{1, 997, 2, PixelType::F64}, RoundTripCase{997, 1, 3, PixelType::U8},
                      RoundTripCase{1, 1, 1, PixelType::U16}, RoundTripCase{31, 17, 3, PixelType::U16},
                      RoundTripCase{131, 7, 4, PixelType::U16}),
    [](const auto& tc) {
      const RoundTripCase& p = tc.param;
      return std::to_string(p.width) + "x" + std::to_string(p.height) + "x" + std::to_string(p.channels) + "_" +
             std::string(toString(p.type));
    });

TEST(GpuTiming, StreamHarnessTimesDeviceWork) {
  GPULAB_REQUIRE_GPU();
  Stream s;
  DeviceBuffer a(64 << 20), b(64 << 20);
  GPULAB_CUDA_CHECK(cudaMemsetAsync(a.data(), 0, a.size(), s));  // copied below: initcheck wants it written
  const Stats st = timeStream(
      s, [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.size(), cudaMemcpyDeviceToDevice, s)); },
      {.warmup = 1, .reps = 5});
  EXPECT_EQ(st.reps, 5);
  EXPECT_GT(st.minMs, 0.0);
}
