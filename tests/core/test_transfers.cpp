// Host memory (Image in pageable or pinned memory) and GpuContext's pipelined transfers: round trips
// bit-exact for every type and channel count, odd, prime and tiny sizes, bands of one row and bands
// that do not divide the height, pinned and pageable images, reuse of the destination; without a GPU,
// pinned requests fall back to pageable memory with a note.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "gpulab/core/device.hpp"
#include "gpulab/core/device_image.hpp"
#include "gpulab/core/image.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/measure/harness.hpp"
#include "internal/kernel_views.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;

namespace {

Image filled(int w, int h, int c, PixelType type, HostMemory memory, unsigned seed) {
  const Image noise = test::randomImage(w, h, c, type, seed);
  Image img(w, h, c, type, memory);
  std::memcpy(img.data(), noise.data(), noise.sizeBytes());
  return img;
}

std::string caseName(int w, int h, int c, PixelType type, HostMemory memory, std::size_t band) {
  return std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(c) + " " + std::string(toString(type)) +
         " " + std::string(toString(memory)) + " band " +
         (band == std::numeric_limits<std::size_t>::max() ? std::string("whole") : std::to_string(band) + " B");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host memory: works with and without a GPU.

TEST(HostMemory, PinnedImageIsPinnedWithAGpuAndFallsBackWithoutOne) {
  const Image img = Image::pinned(33, 7, 3, PixelType::U16);
  EXPECT_EQ(img.memory(), HostMemory::Pinned);
  EXPECT_EQ(img.sizeBytes(), 33u * 7 * 3 * 2);
  for (std::uint16_t v : img.samples<std::uint16_t>()) ASSERT_EQ(v, 0);  // zeroed, as every image
  if (cudaAvailable()) {
    EXPECT_TRUE(img.pinned());
  } else {
    EXPECT_FALSE(img.pinned());
    EXPECT_NE(pinnedMemoryNote().find("no CUDA device"), std::string::npos) << pinnedMemoryNote();
  }
  const Image pageable(33, 7, 3, PixelType::U16);
  EXPECT_EQ(pageable.memory(), HostMemory::Pageable);
  EXPECT_FALSE(pageable.pinned());
  EXPECT_FALSE(Image(HostMemory::Pinned).pinned());  // empty: nothing to pin yet
}

TEST(HostMemory, CopiesArePageableAssignmentsKeepTheTargetsKindMovesCarryIt) {
  Image pinned = filled(300, 200, 3, PixelType::U8, HostMemory::Pinned, 5);
  const Image copy = pinned;  // NOLINT: the copy is the point
  EXPECT_EQ(copy.memory(), HostMemory::Pageable);
  EXPECT_FALSE(copy.pinned());
  EXPECT_TRUE(copy == pinned);

  Image target = Image::pinned(300, 200, 3, PixelType::U8);
  const std::byte* storage = target.data();
  target = copy;  // same size: the pinned storage is reused
  EXPECT_EQ(target.memory(), HostMemory::Pinned);
  EXPECT_EQ(target.data(), storage);
  EXPECT_EQ(target.pinned(), cudaAvailable());
  EXPECT_TRUE(target == copy);

  Image moved = std::move(pinned);
  EXPECT_EQ(moved.memory(), HostMemory::Pinned);
  EXPECT_EQ(moved.pinned(), cudaAvailable());
  EXPECT_TRUE(moved == copy);

  // Growing keeps the kind; so does a conversion that asks for it.
  moved.reshape(1000, 900, 4, PixelType::F32);
  EXPECT_EQ(moved.memory(), HostMemory::Pinned);
  EXPECT_EQ(moved.pinned(), cudaAvailable());
  const Image converted = copy.convertedTo(PixelType::F32, HostMemory::Pinned);
  EXPECT_EQ(converted.pinned(), cudaAvailable());
  EXPECT_EQ(converted.at<float>(299, 199, 2), static_cast<float>(copy.at<std::uint8_t>(299, 199, 2)));
  EXPECT_FALSE(copy.convertedTo(PixelType::F32).pinned());
}

TEST(HostMemory, PinKeepsTheSamplesInPlaceWhenLargeAndCopiesWhenSmall) {
  for (const int side : {5, 400}) {  // 75 B: a new pinned block; 480 KB: registered in place
    Image img = filled(side, side, 3, PixelType::U8, HostMemory::Pageable, 9);
    const Image expected = img;
    const std::byte* before = img.data();
    const bool pinned = img.pin();
    EXPECT_EQ(pinned, cudaAvailable()) << side << ": " << pinnedMemoryNote();
    EXPECT_EQ(img.pinned(), pinned);
    EXPECT_EQ(img.memory(), HostMemory::Pinned);
    if (side == 400 && pinned) {
      EXPECT_EQ(img.data(), before);
    }
    EXPECT_TRUE(img == expected);
    EXPECT_EQ(img.pin(), pinned);  // twice: nothing more
  }
}

TEST(HostMemory, DecodersFillAPinnedReuseImage) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "gpulab-pinned-decode.npy";
  const Image src = test::randomImage(61, 47, 3, PixelType::F32, 3);
  saveImage(src, path);
  const Image decoded = loadImage(path, Image(HostMemory::Pinned));
  std::filesystem::remove(path);
  EXPECT_TRUE(decoded == src);
  EXPECT_EQ(decoded.memory(), HostMemory::Pinned);
  EXPECT_EQ(decoded.pinned(), cudaAvailable());
}

// ---------------------------------------------------------------------------------------------
// Round trips through GpuContext, every type x channels, sizes, memory kinds and band sizes.

class TransfersGpu : public ::testing::TestWithParam<PixelType> {};

TEST_P(TransfersGpu, RoundTripsAreBitExactInEveryBandingAndMemory) {
  GPULAB_REQUIRE_GPU();
  const PixelType type = GetParam();
  GpuContext gpu;
  struct Size {
    int w, h;
  };
  // Tiny, prime, a column, a row, and one larger than a 4 MiB band with a partial last band.
  const Size sizes[] = {{1, 1}, {2, 3}, {7, 5}, {13, 11}, {1, 97}, {131, 1}, {257, 131}};
  for (int c = 1; c <= 4; ++c) {
    for (const Size s : sizes) {
      const std::size_t rowBytes = static_cast<std::size_t>(s.w) * c * bytesPerSample(type);
      // One row a band; 3 rows a band (no divisor of the prime heights); the whole image at once.
      for (const std::size_t band : {std::size_t{1}, 3 * rowBytes + 1, std::numeric_limits<std::size_t>::max()}) {
        for (const HostMemory memory : {HostMemory::Pinned, HostMemory::Pageable}) {
          SCOPED_TRACE(caseName(s.w, s.h, c, type, memory, band));
          gpu.setTransferBandBytes(band);
          const Image src = filled(s.w, s.h, c, type, memory, 11u * s.w + 5u * s.h + c);
          ASSERT_EQ(src.pinned(), memory == HostMemory::Pinned);
          DeviceImage d = gpu.upload(src);
          EXPECT_EQ(gpu.lastUpload().pinned, memory == HostMemory::Pinned);
          EXPECT_GE(gpu.lastUpload().deviceMs, 0.0);
          if (memory == HostMemory::Pinned) {
            EXPECT_EQ(gpu.lastUpload().stagingMs, 0.0);
          }
          const int rowsPerBand =
              static_cast<int>(std::min<std::size_t>(std::max<std::size_t>(band / rowBytes, 1), s.h));
          if (memory == HostMemory::Pageable || c > 1) {
            EXPECT_EQ(gpu.lastUpload().bands, (s.h + rowsPerBand - 1) / rowsPerBand);
          }

          // Planar on the device: the last sample of the last pixel sits in the last plane.
          const std::size_t bytes = bytesPerSample(type);
          std::vector<std::byte> sample(bytes);
          GPULAB_CUDA_CHECK(cudaMemcpy(
              sample.data(),
              reinterpret_cast<const std::byte*>(planeOf<std::uint8_t>(d, c - 1).row(s.h - 1)) + (s.w - 1) * bytes,
              bytes, cudaMemcpyDeviceToHost));
          EXPECT_EQ(0, std::memcmp(sample.data(), src.data() + src.sizeBytes() - bytes, bytes));

          Image back(memory);
          gpu.download(d, back);
          EXPECT_EQ(gpu.lastDownload().pinned, memory == HostMemory::Pinned);
          EXPECT_GE(gpu.lastDownload().elapsedMs, gpu.lastDownload().deviceMs);
          ASSERT_TRUE(back == src);
          EXPECT_EQ(back.memory(), memory);

          // Reuse: the same shape keeps both allocations; the new samples come back.
          const void* devicePlanes = planeOf<std::uint8_t>(d, 0).data;
          const std::byte* hostSamples = back.data();
          const Image next = filled(s.w, s.h, c, type, memory, 77u + c);
          gpu.upload(next, d);
          EXPECT_EQ(planeOf<std::uint8_t>(d, 0).data, devicePlanes);
          gpu.download(d, back);
          EXPECT_EQ(back.data(), hostSamples);
          ASSERT_TRUE(back == next);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryType, TransfersGpu,
                         ::testing::Values(PixelType::U8, PixelType::U16, PixelType::F32, PixelType::F64),
                         [](const auto& tc) { return std::string(toString(tc.param)); });

TEST(TransfersGpuLarge, DefaultBandsOfAPhotoWithAPartialLastBand) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  // 1531 x 1021 RGB f32: 18.8 MB in bands of 228 rows (4 MiB), the fifth one partial.
  for (const HostMemory memory : {HostMemory::Pinned, HostMemory::Pageable}) {
    SCOPED_TRACE(toString(memory));
    const Image src = filled(1531, 1021, 3, PixelType::F32, memory, 21);
    const DeviceImage d = gpu.upload(src);
    EXPECT_EQ(gpu.lastUpload().bands, 5);
    const Image back = gpu.download(d);  // the first form: into pinned memory
    EXPECT_TRUE(back.pinned());
    EXPECT_EQ(gpu.lastDownload().bands, 5);
    ASSERT_TRUE(back == src);
    const Image gray = filled(1531, 1021, 1, PixelType::U8, memory, 22);
    const DeviceImage g = gpu.upload(gray);
    Image grayBack(memory);
    gpu.download(g, grayBack);
    ASSERT_TRUE(grayBack == gray);
  }
}

TEST(TransfersGpuLarge, DownloadWaitsForTheWorkQueuedBeforeIt) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (const int channels : {1, 3}) {
    for (const HostMemory memory : {HostMemory::Pinned, HostMemory::Pageable}) {
      SCOPED_TRACE(std::to_string(channels) + " " + std::string(toString(memory)));
      const Image src = filled(2048, 1500, channels, PixelType::U8, memory, 4);
      DeviceImage d = gpu.upload(src);
      // A slow-ish fill queued on the stream: the download must see all of it.
      for (int i = 0; i < 20; ++i)
        GPULAB_CUDA_CHECK(cudaMemsetAsync(planeOf<std::uint8_t>(d, 0).data, i == 19 ? 0x5A : i,
                                          d.pitch() * d.height() * d.channels(), gpu.stream()));
      Image back(memory);
      gpu.download(d, back);
      for (std::uint8_t v : back.samples<std::uint8_t>()) ASSERT_EQ(v, 0x5A);
    }
  }
}

TEST(TransfersGpuLarge, TheHarnessSaysWhichMemoryItMovedAndItsShareOfThePinnedCeiling) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const std::unique_ptr<Operation> box = findOperation("box").make({{"radius", "2"}});
  for (const HostMemory memory : {HostMemory::Pinned, HostMemory::Pageable}) {
    const Image src = filled(640, 480, 3, PixelType::U8, memory, 8);
    MeasureSetup setup;
    setup.wantCpu = false;
    setup.gpu = &gpu;
    setup.outputMemory = memory;
    const MeasureResult r = measure(*box, src, setup, MeasurePolicy::benchmark(3));
    ASSERT_TRUE(r.record.gpu);
    EXPECT_EQ(r.record.gpu->hostMemory, std::string(toString(memory)));
    EXPECT_EQ(r.gpuOutput.pinned(), memory == HostMemory::Pinned);
    ASSERT_TRUE(r.record.transferCeiling);
    EXPECT_GT(r.record.transferCeiling->uploadGbps, 0.0);
    EXPECT_GT(*r.record.uploadRate(), 0.0);
    EXPECT_GT(*r.record.downloadPercentOfCeiling(), 0.0);
    EXPECT_DOUBLE_EQ(r.record.uploadBytes, static_cast<double>(src.sizeBytes()));
  }
}
