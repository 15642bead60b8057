// Box blur: the window-taps algebra against brute force, the naive reference on hand-worked
// values, then every implementation against the reference over a table of sizes (1x1 to 640x480,
// prime ones wider than a fused tile), radii (0, 1, 7, the fused and tiled paths' limits, larger
// than the image), border modes (constant with a zero and a nonzero value) and types (u8
// gray/RGB/RGBA, u16 gray/RGBA, f32 gray/RGB): OpenCV (both methods), the GPU block and warp code
// run on the host (every path), and the GPU itself (every path; skipped without one). The fused
// kernel also on interleaved rows of 2, 3 and 4 channels (host and GPU).
//
// Tolerances: u8/u16 exact for the GPU code and +-1 for OpenCV; f32 1e-5 relative plus 1e-5 of the
// data's range absolute (means near 0 have no meaningful relative error).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/kernels/box_blur.cuh"
#include "gpulab/tiling/tiled_runner.hpp"
#include "internal/kernel_views.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using kernels::BoxBlurPath;

namespace {

// ---------------------------------------------------------------------------------------------
// Helpers

struct BoxCase : test::FilterCaseImage {
  int radius;

  Border border() const {
    if (type == PixelType::U16) return {mode, nonzeroValue ? 40000.4 : 0.0};
    return FilterCaseImage::border(37.6, 0.75);
  }
  std::string name() const { return imageName() + "_r" + std::to_string(radius); }
  Image input() const { return FilterCaseImage::input(7919, 31); }
};

int maxTiledRadius(PixelType type) {
  switch (type) {
    case PixelType::U8:
      return kernels::boxBlurMaxTiledRadius<std::uint8_t>();
    case PixelType::U16:
      return kernels::boxBlurMaxTiledRadius<std::uint16_t>();
    default:
      return kernels::boxBlurMaxTiledRadius<float>();
  }
}

int maxFusedRadius(PixelType type, int channels = 1) {
  switch (type) {
    case PixelType::U8:
      return kernels::boxBlurMaxFusedRadius<std::uint8_t>(channels);
    case PixelType::U16:
      return kernels::boxBlurMaxFusedRadius<std::uint16_t>(channels);
    default:
      return kernels::boxBlurMaxFusedRadius<float>(channels);
  }
}

int maxSweepRadius(PixelType type, int channels = 1) {
  switch (type) {
    case PixelType::U8:
      return kernels::boxBlurMaxSweepRadius<std::uint8_t>(channels);
    case PixelType::U16:
      return kernels::boxBlurMaxSweepRadius<std::uint16_t>(channels);
    default:
      return kernels::boxBlurMaxSweepRadius<float>(channels);
  }
}

/// The engine's name for a kernel path.
BoxGpuPath engineOf(BoxBlurPath path) {
  switch (path) {
    case BoxBlurPath::TiledRing:
      return BoxGpuPath::TiledRing;
    case BoxBlurPath::TiledStream:
      return BoxGpuPath::TiledStream;
    case BoxBlurPath::SummedArea:
      return BoxGpuPath::SummedArea;
    case BoxBlurPath::Fused:
      return BoxGpuPath::Fused;
    case BoxBlurPath::Sweep:
      return BoxGpuPath::Sweep;
    default:
      return BoxGpuPath::Auto;
  }
}

/// The constant border's value as samples of `type` hold it (integers rounded and saturated).
template <class T>
T fillOf(double value) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::clamp(std::nearbyint(value), 0.0, double(std::numeric_limits<T>::max())));
  else
    return static_cast<T>(value);
}

std::vector<BoxCase> boxCases() {
  struct Size {
    int w, h;
  };
  // 521x23 and 1031x11 (primes): several fused tiles across (f32/u16 tiles hold up to 248 columns, u8 up to 496).
  const Size sizes[] = {{1, 1}, {2, 3}, {13, 12}, {257, 131}, {521, 23}, {1031, 11}, {640, 480}};
  const BorderMode modes[] = {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                              BorderMode::Constant};
  struct Type {
    PixelType type;
    int channels;
  };
  const Type types[] = {{PixelType::U8, 1},  {PixelType::U8, 3},  {PixelType::U8, 4}, {PixelType::U16, 1},
                        {PixelType::U16, 4}, {PixelType::F32, 1}, {PixelType::F32, 3}};
  std::vector<BoxCase> cases;
  for (const Size& s : sizes) {
    const bool large = s.w * s.h > 100000;
    for (const Type& t : types) {
      const bool thin = s.w > 500 && s.h < 30;  // the prime sizes: one channel, to keep the table's time
      if (thin && t.channels != 1) continue;
      std::vector<int> radii = {0, 1, 7};
      if (thin) {
        radii.push_back(15);
        radii.push_back(maxFusedRadius(t.type));  // the largest radius the fused path takes
        radii.push_back(maxSweepRadius(t.type));  // and the sweep path
        radii.push_back(s.h + 2);                 // taller than the image
      } else if (!large) {
        radii.push_back(std::max(s.w, s.h) + 3);  // the window wraps around the image more than once
        if (s.w == 257) {                         // the largest radii the sweep, fused and tiled paths take
          radii.push_back(maxSweepRadius(t.type));
          radii.push_back(maxFusedRadius(t.type));
          radii.push_back(maxTiledRadius(t.type));
        }
      } else if (t.channels == 1) {
        radii.push_back(std::max(s.w, s.h) + 3);
      }
      for (int r : radii)
        for (BorderMode m : modes)
          for (bool nonzero : {false, true}) {
            if (nonzero && m != BorderMode::Constant) continue;
            if (large && r > 7 && m != BorderMode::Reflect101 && m != BorderMode::Wrap && !nonzero) continue;
            cases.push_back({{s.w, s.h, m, nonzero, t.type, t.channels}, r});
          }
    }
  }
  return cases;
}

// References are slow: computed once per case and shared by the CPU and GPU suites.
const Image& referenceFor(const BoxCase& c) {
  return test::cachedReference(c,
                               [](const BoxCase& k) { return BoxBlur(k.radius, k.border()).runReference(k.input()); });
}

::testing::AssertionResult matches(const BoxCase& c, const Image& expected, const Image& actual, bool exactU8) {
  if (c.type != PixelType::F32) return test::imagesNear(expected, actual, exactU8 ? 0.0 : 1.0);
  const double range = std::max(test::maxAbsSample(c.input()), std::abs(c.border().value));
  return test::imagesNear(expected, actual, 1e-5 * range, 1e-5);
}

Image emulate(const BoxCase& c, BoxBlurPath path, int residentBlocks);

::testing::AssertionResult alphaUnchanged(const Image& in, const Image& out) {
  if (in.type() == PixelType::F32 || in.channels() != 4) return ::testing::AssertionSuccess();
  return test::imagesNear(in.channel(3), out.channel(3), 0.0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The window-taps algebra (shared by the summed-area path) against brute force.

TEST(BoxWindowTaps, MatchBruteForceForEveryModeLengthAndOffset) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> sample(-50, 250);
  const long long fill = 17;
  for (BorderMode mode :
       {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap, BorderMode::Constant})
    for (int n = 1; n <= 9; ++n) {
      std::vector<long long> x(n), prefix(n + 1, 0);
      for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + (x[i] = sample(rng));
      for (int lo = -40; lo <= 40; ++lo)
        for (int len = 1; len <= 90; ++len) {
          const int hi = lo + len;
          long long expected = 0;
          for (int i = lo; i < hi; ++i) {
            const int m = borderIndex(i, n, mode);
            expected += m < 0 ? fill : x[m];
          }
          const kernels::WindowTaps taps = kernels::windowTaps(lo, hi, n, toKernel(mode));
          long long got = taps.outside * fill;
          for (int k = 0; k < kernels::WindowTaps::kCount; ++k) {
            ASSERT_GE(taps.index[k], 0);
            ASSERT_LE(taps.index[k], n);
            got += taps.weight[k] * prefix[taps.index[k]];
          }
          ASSERT_EQ(got, expected) << toString(mode) << " n=" << n << " window [" << lo << ", " << hi << ")";
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The reference on values worked out by hand: a 3x1 row [1 2 4], radius 1, at x = 0. The window
// is 3x3; with one row every mode but constant repeats that row three times vertically.

TEST(BoxReference, HandWorkedBorders) {
  Image img(3, 1, 1, PixelType::F32);
  img.at<float>(0, 0) = 1.f;
  img.at<float>(1, 0) = 2.f;
  img.at<float>(2, 0) = 4.f;
  auto at0 = [&](BorderMode mode, double value) {
    return double(BoxBlur(1, {mode, value}).runReference(img).at<float>(0, 0));
  };
  EXPECT_NEAR(at0(BorderMode::Reflect101, 0), 3 * (2 + 1 + 2) / 9.0, 1e-6);  // 2 | 1 2
  EXPECT_NEAR(at0(BorderMode::Reflect, 0), 3 * (1 + 1 + 2) / 9.0, 1e-6);     // 1 | 1 2
  EXPECT_NEAR(at0(BorderMode::Replicate, 0), 3 * (1 + 1 + 2) / 9.0, 1e-6);   // 1 | 1 2
  EXPECT_NEAR(at0(BorderMode::Wrap, 0), 3 * (4 + 1 + 2) / 9.0, 1e-6);        // 4 | 1 2
  EXPECT_NEAR(at0(BorderMode::Constant, 0), (0 + 1 + 2) / 9.0, 1e-6);        // the rows above and below are 0
  EXPECT_NEAR(at0(BorderMode::Constant, 3), (3 + 1 + 2 + 6 * 3) / 9.0, 1e-6);
}

TEST(BoxReference, ConstantImageStaysConstantAndRadiusZeroIsIdentity) {
  Image flat(13, 12, 1, PixelType::F32);
  for (float& v : flat.samples<float>()) v = 5.f;
  for (BorderMode mode : {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap})
    for (int r : {1, 7, 40}) EXPECT_TRUE(test::imagesNear(flat, BoxBlur(r, {mode}).runReference(flat), 1e-12));
  const Image photo = test::filterTestImage(13, 12, 3, PixelType::U8, 1);
  EXPECT_EQ(BoxBlur(0).runReference(photo), photo);
  EXPECT_EQ(BoxBlur(0).runCpu(photo), photo);
}

TEST(BoxBlurLimits, LargestRadiusOnASmallImage) {
  // A window of 65535 around a 7x5 image: thousands of periods of every border mode. OpenCV's
  // direct method would need gigabytes here, so Auto takes the separable one.
  for (BorderMode mode :
       {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap, BorderMode::Constant})
    for (PixelType type : {PixelType::U8, PixelType::U16, PixelType::F32}) {
      const BoxCase c{{7, 5, mode, true, type, 1}, kMaxBoxRadius};
      const Image ref = BoxBlur(c.radius, c.border()).runReference(c.input());
      EXPECT_TRUE(matches(c, ref, BoxBlur(c.radius, c.border()).runCpu(c.input()), false)) << c.name();
      EXPECT_TRUE(matches(c, ref, emulate(c, BoxBlurPath::SummedArea, 1), true)) << c.name();
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters, errors, bookkeeping

TEST(BoxBlurApi, RejectsBadParametersWithOneSentence) {
  EXPECT_THROW(BoxBlur(-1), std::invalid_argument);
  EXPECT_THROW(BoxBlur(kMaxBoxRadius + 1), std::invalid_argument);
  EXPECT_THROW(BoxBlur(1, {BorderMode::Constant, std::nan("")}), std::invalid_argument);
  EXPECT_NO_THROW(BoxBlur{kMaxBoxRadius});
  try {
    BoxBlur(-3);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("-3"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  FilterSpec spec;
  spec.op = FilterOp::Box;
  spec.radius = -2;
  EXPECT_THROW(makeFilter(spec), std::invalid_argument);
  const BoxBlur blur(2);
  EXPECT_THROW(blur.outputShape({4, 4, 1, PixelType::F64}), std::invalid_argument);
  EXPECT_THROW(blur.runCpu(Image(4, 4, 1, PixelType::F64)), std::invalid_argument);
}

TEST(BoxBlurApi, DescribeShapeAndBytes) {
  EXPECT_EQ(BoxBlur(7).describe(), "box r=7 reflect101");
  EXPECT_EQ(BoxBlur(3, {BorderMode::Constant, 0.5}).describe(), "box r=3 constant(0.5)");
  FilterSpec spec;
  spec.radius = 4;
  spec.border = {BorderMode::Wrap};
  EXPECT_EQ(makeFilter(spec)->describe(), "box r=4 wrap");
  const ImageShape in{4096, 4096, 1, PixelType::F32};
  const ImageShape out = BoxBlur(15).outputShape(in);
  EXPECT_EQ(out.width, 4096);
  EXPECT_EQ(out.channels, 1);
  EXPECT_EQ(BoxBlur(15).minimumBytesMoved(in), std::size_t{2} * 4096 * 4096 * 4);
  EXPECT_EQ(BoxBlur(1).minimumBytesMoved({10, 10, 4, PixelType::U8}), std::size_t{2} * 10 * 10 * 4);
}

TEST(BoxBlurApi, CpuRunReportsProgressAndCanBeCancelled) {
  const Image img = test::filterTestImage(64, 48, 3, PixelType::U8, 3);
  const std::vector<double> seen = test::cpuProgressAndCancel(BoxBlur(2), img);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The table: OpenCV and the host-run GPU code against the reference

class BoxBlurCase : public ::testing::TestWithParam<BoxCase> {};

namespace {
Image emulate(const BoxCase& c, BoxBlurPath path, int residentBlocks) {
  const Image in = c.input();
  Image out(c.width, c.height, c.channels, c.type);
  // Planes as the GPU holds them: pitched (rows padded to 64 bytes), one per channel.
  auto run = [&](auto sample) {
    using T = decltype(sample);
    const std::size_t pitch = (c.width * sizeof(T) + 63) / 64 * 64;
    std::vector<unsigned char> src(pitch * c.height + 64), dst(pitch * c.height + 64);
    auto* srcBase = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(src.data()) + 15) / 16 * 16);
    auto* dstBase = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(dst.data()) + 15) / 16 * 16);
    const kernels::Plane<T> inPlane{reinterpret_cast<T*>(srcBase), c.width, c.height, pitch};
    const kernels::Plane<T> outPlane{reinterpret_cast<T*>(dstBase), c.width, c.height, pitch};
    const T fill = fillOf<T>(c.border().value);
    for (int ch = 0; ch < c.channels; ++ch) {
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x) inPlane(x, y) = in.at<T>(x, y, ch);
      if (c.type != PixelType::F32 && ch == 3) {
        for (int y = 0; y < c.height; ++y)
          for (int x = 0; x < c.width; ++x) out.at<T>(x, y, ch) = in.at<T>(x, y, ch);
        continue;
      }
      kernels::runBoxBlurOnHost<T>({inPlane.data, c.width, c.height, pitch}, outPlane, c.radius, toKernel(c.mode), fill,
                                   path, residentBlocks);
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x) out.at<T>(x, y, ch) = outPlane(x, y);
    }
  };
  visitAnySampleType(c.type, [&](auto sample) {
    if constexpr (!std::is_same_v<decltype(sample), double>) run(sample);
  });
  return out;
}
}  // namespace

TEST_P(BoxBlurCase, OpenCvMatchesReference) {
  const BoxCase& c = GetParam();
  const Image in = c.input();
  BoxBlur blur(c.radius, c.border());
  for (BoxCpuMethod method : {BoxCpuMethod::Direct, BoxCpuMethod::Separable}) {
    blur.setCpuMethod(method);
    const Image got = blur.runCpu(in);
    const char* name = method == BoxCpuMethod::Direct ? "direct" : "separable";
    EXPECT_TRUE(matches(c, referenceFor(c), got, false)) << name;
    EXPECT_TRUE(alphaUnchanged(in, got)) << name;
  }
}

TEST_P(BoxBlurCase, GpuBlockCodeOnHostMatchesReference) {
  const BoxCase& c = GetParam();
  std::vector<BoxBlurPath> paths = {BoxBlurPath::SummedArea};
  if (c.radius <= maxFusedRadius(c.type)) paths.push_back(BoxBlurPath::Fused);
  if (c.radius <= maxSweepRadius(c.type)) paths.push_back(BoxBlurPath::Sweep);
  if (c.radius <= maxTiledRadius(c.type)) {
    paths.push_back(BoxBlurPath::TiledStream);
    if (c.radius <= 40) paths.push_back(BoxBlurPath::TiledRing);  // larger rings take host memory and time only
  }
  // 264 resident blocks (an H100's 132 SMs, two each): long row segments; 5: short ones, many per column.
  for (BoxBlurPath path : paths)
    for (int resident : {264, 5}) {
      if (path == BoxBlurPath::SummedArea && resident == 5) continue;
      const Image got = emulate(c, path, resident);
      EXPECT_TRUE(matches(c, referenceFor(c), got, true)) << toString(path) << ", " << resident << " resident blocks";
    }
}

// ---------------------------------------------------------------------------------------------
// The same table on the GPU, every path that takes the radius

TEST_P(BoxBlurCase, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const BoxCase& c = GetParam();
  const Image in = c.input();
  GpuContext gpu;
  const DeviceImage d = gpu.upload(in);
  int optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu.device()), cudaSuccess);
  for (BoxBlurPath path : {BoxBlurPath::Auto, BoxBlurPath::Fused, BoxBlurPath::Sweep, BoxBlurPath::TiledRing,
                           BoxBlurPath::TiledStream, BoxBlurPath::SummedArea}) {
    const bool tiled = path == BoxBlurPath::TiledRing || path == BoxBlurPath::TiledStream;
    if (tiled && c.radius > maxTiledRadius(c.type)) continue;
    if (path == BoxBlurPath::Fused && c.radius > maxFusedRadius(c.type)) continue;
    if (path == BoxBlurPath::Sweep && c.radius > maxSweepRadius(c.type)) continue;
    std::size_t shared = 0;
    visitAnySampleType(c.type, [&](auto sample) {
      using T = decltype(sample);
      if constexpr (!std::is_same_v<T, double>) shared = kernels::boxBlurSharedBytes<T>(path, c.radius);
    });
    if (shared > static_cast<std::size_t>(optin)) continue;
    BoxBlur blur(c.radius, c.border());
    blur.setGpuPath(engineOf(path));
    DeviceImage out;
    blur.runGpu(gpu, d, out);
    const Image got = gpu.download(out);
    EXPECT_TRUE(matches(c, referenceFor(c), got, true)) << toString(path);
    EXPECT_TRUE(alphaUnchanged(in, got)) << toString(path);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, BoxBlurCase, ::testing::ValuesIn(boxCases()),
                         [](const ::testing::TestParamInfo<BoxCase>& p) { return p.param.name(); });

// ---------------------------------------------------------------------------------------------
// The direct path (radius 1..kBoxBlurDirectMaxRadius): its thread code on the host

/// The direct kernel's thread code on the host on `in` (c's shape, radius and border): the filtered
/// channels as one stack of pitched planes (a u8 alpha copied). `aligned`: rows 16-byte aligned
/// (vector loads and stores on the GPU); else the stack starts one sample past an aligned address
/// and the pitch is not a multiple of 4 samples.
Image emulateDirectOf(const BoxCase& c, const Image& in, int residentBlocks, bool aligned = true) {
  Image out(c.width, c.height, c.channels, c.type);
  auto run = [&](auto sample) {
    using T = decltype(sample);
    const int planes = c.type != PixelType::F32 && c.channels == 4 ? 3 : c.channels;
    const std::size_t pitch = (c.width * sizeof(T) + 63) / 64 * 64 + (aligned ? 0 : sizeof(T));
    const std::size_t bytes = pitch * c.height * planes + 64;
    std::vector<unsigned char> src(bytes), dst(bytes);
    const auto base = [&](std::vector<unsigned char>& v) {
      const std::uintptr_t start = (reinterpret_cast<std::uintptr_t>(v.data()) + 15) / 16 * 16;
      return reinterpret_cast<T*>(start + (aligned ? 0 : sizeof(T)));
    };
    const kernels::Plane<T> inStack{base(src), c.width, c.height, pitch};
    const kernels::Plane<T> outStack{base(dst), c.width, c.height, pitch};
    for (int ch = 0; ch < planes; ++ch)
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x) inStack(x, ch * c.height + y) = in.at<T>(x, y, ch);
    kernels::runBoxBlurDirectOnHost<T>({inStack.data, c.width, c.height, pitch}, outStack, planes, c.radius,
                                       toKernel(c.mode), fillOf<T>(c.border().value), residentBlocks);
    for (int ch = 0; ch < c.channels; ++ch)
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x)
          out.at<T>(x, y, ch) = ch < planes ? outStack(x, ch * c.height + y) : in.at<T>(x, y, ch);
  };
  if (c.type == PixelType::U8)
    run(std::uint8_t{});
  else
    run(float{});
  return out;
}

Image emulateDirect(const BoxCase& c, int residentBlocks, bool aligned) {
  return emulateDirectOf(c, c.input(), residentBlocks, aligned);
}

/// The direct path's table: these sizes, u8 (gray, RGBA) and f32 (gray, RGB), radius 1 up to its
/// largest, every border (Constant with a zero and a nonzero value).
std::vector<BoxCase> directCases(std::initializer_list<std::pair<int, int>> sizes) {
  struct Type {
    PixelType type;
    int channels;
  };
  const Type types[] = {{PixelType::U8, 1}, {PixelType::U8, 4}, {PixelType::F32, 1}, {PixelType::F32, 3}};
  std::vector<BoxCase> cases;
  for (auto [w, h] : sizes)
    for (const Type& t : types)
      for (int r = 1; r <= kernels::kBoxBlurDirectMaxRadius; ++r)
        for (BorderMode m : {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                             BorderMode::Constant})
          for (bool nonzero : {false, true})
            if (!nonzero || m == BorderMode::Constant) cases.push_back({{w, h, m, nonzero, t.type, t.channels}, r});
  return cases;
}

TEST(BoxBlurDirect, HostThreadCodeMatchesTheReference) {
  // Around the 4-column threads (1..9 columns), several bands of rows (45 rows: 5 bands of 9 at 5
  // resident blocks), past one 512-column block and ending inside a vector (515, 1031).
  for (const BoxCase& c : directCases({{1, 1}, {3, 2}, {4, 9}, {9, 4}, {13, 12}, {37, 45}, {515, 7}, {1031, 11}})) {
    const Image ref = BoxBlur(c.radius, c.border()).runReference(c.input());
    for (bool aligned : {true, false})
      for (int resident : {264, 5})
        EXPECT_TRUE(matches(c, ref, emulateDirect(c, resident, aligned), true))
            << c.name() << (aligned ? ", aligned" : ", unaligned") << ", " << resident << " resident blocks";
  }
}

TEST(BoxBlurDirect, GpuMatchesTheReference) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  static_assert(kBoxDirectMaxRadius == kernels::kBoxBlurDirectMaxRadius, "the engine takes every radius it has");
  for (const BoxCase& c : directCases({{1, 1}, {3, 2}, {4, 9}, {13, 12}, {37, 45}, {515, 7}, {1031, 11}, {640, 480}})) {
    const Image in = c.input();
    BoxBlur blur(c.radius, c.border());
    blur.setGpuPath(BoxGpuPath::Direct);
    DeviceImage out;
    blur.runGpu(gpu, gpu.upload(in), out);
    EXPECT_EQ(blur.methodNote(Side::Gpu), "GPU path direct") << c.name();
    const Image got = gpu.download(out);
    EXPECT_TRUE(matches(c, BoxBlur(c.radius, c.border()).runReference(in), got, true)) << c.name();
    EXPECT_TRUE(alphaUnchanged(in, got)) << c.name();
  }
}

TEST(BoxBlurDirect, RefusesRadiiItDoesNotTakeAndMismatchedStacks) {
  std::vector<float> a(64), b(64);
  const kernels::Plane<const float> in{a.data(), 8, 8, 8 * sizeof(float)};
  const kernels::Plane<float> out{b.data(), 8, 8, 8 * sizeof(float)};
  for (int r : {0, kernels::kBoxBlurDirectMaxRadius + 1})
    EXPECT_THROW(kernels::runBoxBlurDirectOnHost<float>(in, out, 1, r, kernels::BorderMode::Reflect101, 0.f, 5),
                 std::invalid_argument)
        << "radius " << r;
  const kernels::Plane<float> shorter{b.data(), 8, 7, 8 * sizeof(float)};
  EXPECT_THROW(kernels::runBoxBlurDirectOnHost<float>(in, shorter, 1, 1, kernels::BorderMode::Reflect101, 0.f, 5),
               std::invalid_argument);
  const kernels::Plane<float> same{a.data(), 8, 8, 8 * sizeof(float)};
  EXPECT_THROW(kernels::runBoxBlurDirectOnHost<float>(in, same, 1, 1, kernels::BorderMode::Reflect101, 0.f, 5),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// GPU specifics

TEST(BoxBlurGpu, LargeImageEveryTiledPathAgainstReference) {
  GPULAB_REQUIRE_GPU();
  // Wide enough for several column tiles, tall enough for many row segments; odd sizes.
  const BoxCase c{{2053, 1031, BorderMode::Reflect101, false, PixelType::F32, 1}, 15};
  const Image in = c.input();
  const Image ref = BoxBlur(c.radius, c.border()).runReference(in);
  GpuContext gpu;
  const DeviceImage d = gpu.upload(in);
  for (BoxBlurPath path : {BoxBlurPath::Fused, BoxBlurPath::Sweep, BoxBlurPath::TiledRing, BoxBlurPath::TiledStream,
                           BoxBlurPath::SummedArea}) {
    BoxBlur blur(c.radius, c.border());
    blur.setGpuPath(engineOf(path));
    DeviceImage out;
    blur.runGpu(gpu, d, out);
    EXPECT_TRUE(matches(c, ref, gpu.download(out), true)) << toString(path);
  }
}

TEST(BoxBlurGpu, ReusesTheOutputAndRefusesToRunInPlace) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image in = test::filterTestImage(100, 60, 1, PixelType::F32, 9);
  DeviceImage d = gpu.upload(in);
  DeviceImage out;
  BoxBlur blur(3);
  blur.runGpu(gpu, d, out);
  const void* first = planeOf<float>(out, 0).data;
  blur.runGpu(gpu, d, out);
  EXPECT_EQ(planeOf<float>(out, 0).data, first);
  EXPECT_THROW(blur.runGpu(gpu, d, d), std::invalid_argument);
  const DeviceImage& src = d;
  EXPECT_THROW(
      kernels::launchBoxBlur<float>(planeOf<float>(src, 0), planeOf<float>(d, 0), 3, kernels::BorderMode::Reflect101,
                                    0.f, BoxBlurPath::TiledRing, nullptr, 0, gpu.stream()),
      std::invalid_argument);
  EXPECT_THROW(kernels::launchBoxBlur<float>(planeOf<float>(src, 0), planeOf<float>(out, 0), 300,
                                             kernels::BorderMode::Reflect101, 0.f, BoxBlurPath::TiledStream, nullptr, 0,
                                             gpu.stream()),
               std::invalid_argument);
}

// The CPU baseline blurs an RGB (or f32 multi-channel) image in one pass over its interleaved
// samples when every channel is filtered: the result must be what the plane-by-plane path gives.
// The engine path for photos: BoxBlur::gpuLayout asks for interleaved images where the fused path
// takes them, and runGpu filters them in one launch; the result equals the planar run (integer
// types bit for bit) and the reference, for every border and type, on odd and prime sizes.
TEST(BoxBlurGpu, InterleavedPhotosMatchThePlanarRunAndTheReference) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (PixelType type : {PixelType::U8, PixelType::U16, PixelType::F32})
    for (int channels : {2, 3, 4})
      for (auto [w, h, r] : {std::tuple{1, 1, 1}, std::tuple{7, 5, 2}, std::tuple{1, 1, 3}, std::tuple{6, 5, 4},
                             std::tuple{257, 131, 7}, std::tuple{521, 23, 15}})
        for (BorderMode mode : {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                                BorderMode::Constant}) {
          SCOPED_TRACE(std::string(toString(type)) + " x" + std::to_string(channels) + " " + std::to_string(w) + "x" +
                       std::to_string(h) + " r=" + std::to_string(r) + " " + std::string(toString(mode)));
          BoxBlur blur(r, {mode, 77.0});
          const Image img = test::filterTestImage(w, h, channels, type, w * 3 + channels);
          const bool alphaKept = channels == 4 && type != PixelType::F32;
          // The direct path's radii too: Auto keeps photos interleaved for the sweep.
          ASSERT_EQ(blur.gpuLayout(shapeOf(img)), alphaKept ? DeviceLayout::Planar : DeviceLayout::Interleaved);
          if (alphaKept) continue;
          DeviceImage interleavedOut, planarOut;
          const DeviceImage interleaved = gpu.upload(img, DeviceLayout::Interleaved);
          blur.runGpu(gpu, interleaved, interleavedOut);
          EXPECT_EQ(interleavedOut.layout(), DeviceLayout::Interleaved);
          EXPECT_EQ(blur.methodNote(Side::Gpu), "GPU path sweep, interleaved channels");
          const DeviceImage planar = gpu.upload(img);
          blur.runGpu(gpu, planar, planarOut);
          const Image a = gpu.download(interleavedOut), b = gpu.download(planarOut);
          if (type != PixelType::F32) {
            EXPECT_TRUE(test::imagesNear(b, a, 0.0));
            EXPECT_TRUE(test::imagesNear(blur.runReference(img), a, 0.0));
          } else {
            const double range = std::max(test::maxAbsSample(img), 77.0);
            EXPECT_TRUE(test::imagesNear(blur.runReference(img), a, 1e-5 * range, 1e-5));
          }
        }
  // Gray, radius 0, an explicit tiled path and radii beyond the fused path stay planar; an
  // interleaved image handed to a planar configuration is refused.
  EXPECT_EQ(BoxBlur(3).gpuLayout({64, 64, 1, PixelType::U8}), DeviceLayout::Planar);
  EXPECT_EQ(BoxBlur(0).gpuLayout({64, 64, 3, PixelType::U8}), DeviceLayout::Planar);
  BoxBlur ring(3);
  ring.setGpuPath(BoxGpuPath::TiledRing);
  EXPECT_EQ(ring.gpuLayout({64, 64, 3, PixelType::U8}), DeviceLayout::Planar);
  EXPECT_EQ(BoxBlur(500).gpuLayout({2000, 64, 3, PixelType::F32}), DeviceLayout::Planar);
  BoxBlur direct(2);  // the direct path named: planes
  direct.setGpuPath(BoxGpuPath::Direct);
  EXPECT_EQ(direct.gpuLayout({64, 64, 3, PixelType::U8}), DeviceLayout::Planar);
  const DeviceImage rgb = gpu.upload(test::filterTestImage(9, 9, 3, PixelType::U8, 1), DeviceLayout::Interleaved);
  DeviceImage out;
  EXPECT_THROW(ring.runGpu(gpu, rgb, out), std::logic_error);
}

// Radius 1 and 2 on u8 and f32 planes: the direct convolution kernels (path direct, what auto
// takes): u8 equals the exact integer mean, f32 the reference within 1e-6 of the range, on every
// border, odd and prime sizes, gray, RGB and RGBA (alpha passing through).
TEST(BoxBlurGpu, DirectSmallWindowsMatchTheReference) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (PixelType type : {PixelType::U8, PixelType::F32})
    for (int channels : {1, 3, 4})
      for (auto [w, h] : {std::pair{1, 1}, std::pair{2, 7}, std::pair{131, 67}, std::pair{1031, 11}})
        for (int r : {1, 2})
          for (BorderMode mode : {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                                  BorderMode::Constant}) {
            SCOPED_TRACE(std::string(toString(type)) + " x" + std::to_string(channels) + " " + std::to_string(w) + "x" +
                         std::to_string(h) + " r=" + std::to_string(r) + " " + std::string(toString(mode)));
            for (BoxGpuPath path : {BoxGpuPath::Auto, BoxGpuPath::Direct}) {
              BoxBlur blur(r, {mode, 200.0});
              blur.setGpuPath(path);
              const Image img = test::filterTestImage(w, h, channels, type, w + 5 * h + channels);
              // Auto keeps a photo's interleaved rows (for the sweep); its planes take the direct path.
              const bool photo =
                  path == BoxGpuPath::Auto && (channels == 3 || (channels == 4 && type == PixelType::F32));
              ASSERT_EQ(blur.gpuLayout(shapeOf(img)), photo ? DeviceLayout::Interleaved : DeviceLayout::Planar);
              const DeviceImage d = gpu.upload(img);
              DeviceImage out;
              blur.runGpu(gpu, d, out);
              EXPECT_EQ(blur.methodNote(Side::Gpu), "GPU path direct");
              const Image got = gpu.download(out), want = blur.runReference(img);
              if (type == PixelType::U8) {
                EXPECT_TRUE(test::imagesNear(want, got, 0.0));
              } else {
                const double range = std::max(test::maxAbsSample(img), 200.0);
                EXPECT_TRUE(test::imagesNear(want, got, 1e-6 * range, 1e-6));
              }
            }
          }
  // u16, larger radii and radius 0 are not the direct path's: auto takes another, direct refuses.
  const DeviceImage u16 = gpu.upload(test::filterTestImage(9, 9, 1, PixelType::U16, 3));
  DeviceImage out;
  BoxBlur small(1);
  small.runGpu(gpu, u16, out);
  EXPECT_NE(small.methodNote(Side::Gpu), "GPU path direct");
  for (int r : {0, 3}) {
    BoxBlur direct(r);
    direct.setGpuPath(BoxGpuPath::Direct);
    const DeviceImage f32 = gpu.upload(test::filterTestImage(9, 9, 1, PixelType::F32, 4));
    EXPECT_THROW(direct.runGpu(gpu, f32, out), std::invalid_argument);
  }
  small.setGpuPath(BoxGpuPath::Direct);
  EXPECT_THROW(small.runGpu(gpu, u16, out), std::invalid_argument);
}

TEST(BoxBlurCpu, InterleavedPassEqualsPlaneByPlane) {
  for (const PixelType type : {PixelType::U8, PixelType::F32})
    for (const int channels : {2, 3, 4})
      for (const BorderMode mode :
           {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Constant}) {
        if (type == PixelType::U8 && channels == 4) continue;  // RGBA u8: alpha passes through, planes path
        SCOPED_TRACE(std::string(toString(type)) + " c" + std::to_string(channels) + " " + std::string(toString(mode)));
        const Image in = test::randomImage(37, 23, channels, type, 17, 100.0);
        for (const int radius : {1, 4, 30}) {
          const BoxBlur blur(radius, {mode});
          const Image whole = blur.runCpu(in);
          for (int c = 0; c < channels; ++c) EXPECT_EQ(whole.channel(c), blur.runCpu(in.channel(c))) << "r " << radius;
        }
      }
}

// ---------------------------------------------------------------------------------------------
// The fused kernel on interleaved rows (sample (x, c) at row[x * C + c]), every channel filtered:
// each channel must equal the reference of that channel alone. On the host (the warp code lane by
// lane) and on the GPU.

namespace {

struct InterleavedCase {
  int width, height, channels, radius;
  BorderMode mode;
  PixelType type;
  BoxBlurPath path;  ///< Fused or Sweep
  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) + "c" + std::to_string(channels) + "_r" +
           std::to_string(radius) + "_" + std::string(toString(mode)) + "_" + std::string(toString(type)) + "_" +
           toString(path);
  }
  Border border() const {
    return {mode, mode != BorderMode::Constant ? 0.0 : (type == PixelType::U16 ? 40000.4 : 37.6)};
  }
};

std::vector<InterleavedCase> interleavedCases() {
  std::vector<InterleavedCase> cases;
  for (PixelType type : {PixelType::U8, PixelType::U16, PixelType::F32})
    for (int channels : {2, 3, 4})
      for (BorderMode mode :
           {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap, BorderMode::Constant})
        for (BoxBlurPath path : {BoxBlurPath::Fused, BoxBlurPath::Sweep}) {
          const int largest =
              path == BoxBlurPath::Fused ? maxFusedRadius(type, channels) : maxSweepRadius(type, channels);
          cases.push_back({1, 1, channels, 1, mode, type, path});
          cases.push_back({13, 7, channels, 4, mode, type, path});
          cases.push_back({211, 19, channels, 5, mode, type, path});  // several tiles across (prime width)
          cases.push_back({97, 29, channels, largest, mode, type, path});
        }
  return cases;
}

// The image's channel c blurred alone by the reference, then interleaved back.
Image interleavedReference(const InterleavedCase& c, const Image& in) {
  Image ref(c.width, c.height, c.channels, c.type);
  for (int ch = 0; ch < c.channels; ++ch) {
    const Image one = BoxBlur(c.radius, c.border()).runReference(in.channel(ch));
    visitAnySampleType(c.type, [&](auto sample) {
      using T = decltype(sample);
      if constexpr (!std::is_same_v<T, double>)
        for (int y = 0; y < c.height; ++y)
          for (int x = 0; x < c.width; ++x) ref.at<T>(x, y, ch) = one.at<T>(x, y);
    });
  }
  return ref;
}

::testing::AssertionResult interleavedMatches(const InterleavedCase& c, const Image& in, const Image& expected,
                                              const Image& actual) {
  if (c.type != PixelType::F32) return test::imagesNear(expected, actual, 0.0);
  const double range = std::max(test::maxAbsSample(in), std::abs(c.border().value));
  return test::imagesNear(expected, actual, 1e-5 * range, 1e-5);
}

// Runs `blur(inPlane, outPlane, fill)` on 16-byte aligned pitched host copies of the image.
template <class T, class F>
Image runPitched(const InterleavedCase& c, const Image& in, F&& blur) {
  const std::size_t rowBytes = in.rowBytes();
  const std::size_t pitch = (rowBytes + 63) / 64 * 64;
  std::vector<unsigned char> src(pitch * c.height + 64), dst(pitch * c.height + 64, 0xab);
  auto* srcBase = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(src.data()) + 15) / 16 * 16);
  auto* dstBase = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(dst.data()) + 15) / 16 * 16);
  for (int y = 0; y < c.height; ++y) std::memcpy(srcBase + y * pitch, in.row<T>(y), rowBytes);
  blur(kernels::Plane<const T>{reinterpret_cast<const T*>(srcBase), c.width, c.height, pitch},
       kernels::Plane<T>{reinterpret_cast<T*>(dstBase), c.width, c.height, pitch}, fillOf<T>(c.border().value), pitch);
  Image out(c.width, c.height, c.channels, c.type);
  for (int y = 0; y < c.height; ++y) std::memcpy(out.row<T>(y), dstBase + y * pitch, rowBytes);
  return out;
}

}  // namespace

class BoxBlurInterleaved : public ::testing::TestWithParam<InterleavedCase> {};

TEST_P(BoxBlurInterleaved, HostWarpCodeMatchesEachChannelsReference) {
  const InterleavedCase& c = GetParam();
  const Image in = test::filterTestImage(c.width, c.height, c.channels, c.type, 101u * c.width + c.channels);
  const Image ref = interleavedReference(c, in);
  visitAnySampleType(c.type, [&](auto sample) {
    using T = decltype(sample);
    if constexpr (!std::is_same_v<T, double>)
      for (int resident : {2112, 7}) {  // one long segment per tile; many short ones
        const Image got = runPitched<T>(c, in, [&](auto src, auto dst, T fill, std::size_t) {
          kernels::runBoxBlurInterleavedOnHost<T>(src, dst, c.channels, c.radius, toKernel(c.mode), fill, resident,
                                                  c.path);
        });
        EXPECT_TRUE(interleavedMatches(c, in, ref, got)) << resident << " resident warps";
      }
  });
}

TEST_P(BoxBlurInterleaved, GpuMatchesEachChannelsReference) {
  GPULAB_REQUIRE_GPU();
  const InterleavedCase& c = GetParam();
  const Image in = test::filterTestImage(c.width, c.height, c.channels, c.type, 101u * c.width + c.channels);
  const Image ref = interleavedReference(c, in);
  GpuContext gpu;
  visitAnySampleType(c.type, [&](auto sample) {
    using T = decltype(sample);
    if constexpr (!std::is_same_v<T, double>) {
      const Image got = runPitched<T>(c, in, [&](auto src, auto dst, T fill, std::size_t pitch) {
        const std::size_t bytes = pitch * c.height;
        void* dIn = nullptr;
        void* dOut = nullptr;
        ASSERT_EQ(cudaMalloc(&dIn, bytes), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&dOut, bytes), cudaSuccess);
        // On the kernel's stream: a plain cudaMemcpy from pageable memory may return before its DMA
        // lands, and cudaMemset runs on the legacy default stream, which gpu.stream() does not wait
        // for (seen on 4 H200s beside the sanitizer sweep: 7 cases read a partly copied input).
        ASSERT_EQ(cudaMemcpyAsync(dIn, src.data, bytes, cudaMemcpyHostToDevice, gpu.stream()), cudaSuccess);
        ASSERT_EQ(cudaMemsetAsync(dOut, 0xab, bytes, gpu.stream()), cudaSuccess);
        kernels::launchBoxBlurInterleaved<T>({static_cast<const T*>(dIn), c.width, c.height, pitch},
                                             {static_cast<T*>(dOut), c.width, c.height, pitch}, c.channels, c.radius,
                                             toKernel(c.mode), fill, gpu.stream(), c.path);
        ASSERT_EQ(cudaStreamSynchronize(gpu.stream()), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(dst.data, dOut, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        cudaFree(dIn);
        cudaFree(dOut);
      });
      EXPECT_TRUE(interleavedMatches(c, in, ref, got));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Table, BoxBlurInterleaved, ::testing::ValuesIn(interleavedCases()),
                         [](const ::testing::TestParamInfo<InterleavedCase>& p) { return p.param.name(); });

TEST(BoxBlurInterleaved, RejectsBadChannelsAndRadius) {
  std::vector<float> buf(64 * 4, 0.f);
  const kernels::Plane<const float> in{buf.data(), 4, 4, 64};
  std::vector<float> obuf(64 * 4, 0.f);
  const kernels::Plane<float> out{obuf.data(), 4, 4, 64};
  EXPECT_THROW(kernels::boxBlurMaxFusedRadius<float>(5), std::invalid_argument);
  EXPECT_THROW(kernels::runBoxBlurInterleavedOnHost<float>(in, out, 3, kernels::boxBlurMaxFusedRadius<float>(3) + 1,
                                                           kernels::BorderMode::Wrap, 0.f, 8, BoxBlurPath::Fused),
               std::invalid_argument);
  EXPECT_THROW(kernels::runBoxBlurInterleavedOnHost<float>(
                   in, out, 3, kernels::boxBlurMaxInterleavedRadius<float>(3, BoxBlurPath::Auto) + 1,
                   kernels::BorderMode::Wrap, 0.f, 8),
               std::invalid_argument);
  EXPECT_THROW(kernels::runBoxBlurInterleavedOnHost<float>(in, out, 5, 1, kernels::BorderMode::Wrap, 0.f, 8),
               std::invalid_argument);
  EXPECT_THROW(kernels::boxBlurMaxSweepRadius<float>(0), std::invalid_argument);
  EXPECT_THROW(kernels::runBoxBlurInterleavedOnHost<float>(in, out, 3, kernels::boxBlurMaxSweepRadius<float>(3) + 1,
                                                           kernels::BorderMode::Wrap, 0.f, 8, BoxBlurPath::Sweep),
               std::invalid_argument);
  EXPECT_THROW(kernels::runBoxBlurInterleavedOnHost<float>(in, out, 3, 1, kernels::BorderMode::Wrap, 0.f, 8,
                                                           BoxBlurPath::TiledRing),
               std::invalid_argument);
  // Auto: the sweep path where it fits, the fused path beyond.
  EXPECT_EQ(kernels::boxBlurResolveInterleavedPath<float>(BoxBlurPath::Auto, 3, 15), BoxBlurPath::Sweep);
  EXPECT_EQ(kernels::boxBlurResolveInterleavedPath<float>(BoxBlurPath::Auto, 4, 49), BoxBlurPath::Fused);
}

// ---------------------------------------------------------------------------------------------
// The sweep path's u8 rounding and its word loads and 16-byte stores on planes at any alignment

TEST(BoxDivide, MatchesIntegerDivisionForEveryU8WindowSum) {
  for (int radius : {1, 2, 3, 5, 7, 15, 31, 63, 127, 128, 200, 240}) {
    const kernels::BoxArea area = kernels::boxAreaOf(radius);
    const unsigned largest = 255u * area.count + area.count / 2;
    int bits = 1;
    while ((largest >> bits) != 0) ++bits;
    const kernels::BoxDivide divide = kernels::boxDivideOf(area.count, bits);
    // Up to radius 31 the quotient is the product's high word, with no shift (the sweep kernel's
    // one-instruction mean).
    EXPECT_EQ(divide.shift == 0, radius <= 31) << "radius " << radius << ", shift " << divide.shift;
    unsigned wrong = 0, first = 0;
    for (unsigned n = 0; n <= largest; ++n) {
      const unsigned q = divide.shift == 0 ? divide.high(n) : divide(n);
      if ((divide(n) != n / area.count || q != n / area.count) && wrong++ == 0) first = n;
    }
    EXPECT_EQ(wrong, 0u) << "radius " << radius << ", first at " << first;
  }
}

namespace {

// A plane of `width` x `height` samples of T starting `shift` samples past a 16-byte boundary, rows
// `pitch` bytes apart, filled from `values` (row-major, width a row).
template <class T>
struct ShiftedPlane {
  std::vector<unsigned char> bytes;
  kernels::Plane<T> plane;
  ShiftedPlane(int width, int height, std::size_t pitch, int shift) : bytes(pitch * height + 64) {
    auto base = (reinterpret_cast<std::uintptr_t>(bytes.data()) + 15) / 16 * 16 + shift * sizeof(T);
    plane = {reinterpret_cast<T*>(base), width, height, pitch};
  }
  kernels::Plane<const T> input() const { return {plane.data, plane.width, plane.height, plane.pitch}; }
};

template <class T>
std::vector<T> randomSamples(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = std::uniform_real_distribution<float>(-3.f, 5.f)(rng);
    else
      x = static_cast<T>(rng() % (std::numeric_limits<T>::max() + 1u));
  }
  return v;
}

// The sweep on the host, from a plane shifted by inShift samples with an odd or aligned pitch, into
// one shifted by outShift: the same bits as on aligned planes.
template <class T>
void expectSweepAlignmentFree(int width, int height, int radius, BorderMode mode) {
  const std::vector<T> values = randomSamples<T>(static_cast<std::size_t>(width) * height, 977u * width + radius);
  const T fill = fillOf<T>(37.6);
  const auto kmode = toKernel(mode);
  const std::size_t aligned = (width * sizeof(T) + 63) / 64 * 64;
  auto fillPlane = [&](kernels::Plane<T> p) {
    for (int y = 0; y < height; ++y) std::memcpy(p.row(y), values.data() + std::size_t(y) * width, width * sizeof(T));
  };
  ShiftedPlane<T> refIn(width, height, aligned, 0), refOut(width, height, aligned, 0);
  fillPlane(refIn.plane);
  kernels::runBoxBlurOnHost<T>(refIn.input(), refOut.plane, radius, kmode, fill, BoxBlurPath::Sweep, 264);
  for (std::size_t pitch : {aligned, width * sizeof(T) + sizeof(T)})
    for (int inShift = 0; inShift < 4; ++inShift)
      for (int outShift : {0, 1, 3}) {
        ShiftedPlane<T> in(width, height, pitch, inShift), out(width, height, pitch, outShift);
        fillPlane(in.plane);
        kernels::runBoxBlurOnHost<T>(in.input(), out.plane, radius, kmode, fill, BoxBlurPath::Sweep, 264);
        int differ = 0;
        for (int y = 0; y < height; ++y)
          differ += std::memcmp(out.plane.row(y), refOut.plane.row(y), width * sizeof(T)) != 0;
        EXPECT_EQ(differ, 0) << "rows differ; pitch " << pitch << ", input " << inShift << " and output " << outShift
                             << " samples past 16 bytes, radius " << radius;
      }
}

}  // namespace

TEST(BoxBlurSweep, HostPlanesAtAnyAlignmentGiveTheAlignedBits) {
  for (BorderMode mode : {BorderMode::Reflect101, BorderMode::Wrap, BorderMode::Constant}) {
    expectSweepAlignmentFree<std::uint8_t>(67, 19, 7, mode);
    expectSweepAlignmentFree<std::uint8_t>(301, 9, 130, mode);  // u8 beyond 127: a register a sample
    expectSweepAlignmentFree<std::uint16_t>(45, 17, 3, mode);
    expectSweepAlignmentFree<float>(53, 21, 5, mode);
  }
}

TEST(BoxBlurSweep, GpuPlanesAtAnyAlignmentGiveTheHostBits) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const int width = 397, height = 41, radius = 9;
  using T = std::uint8_t;
  const std::vector<T> values = randomSamples<T>(std::size_t(width) * height, 4242);
  const std::size_t aligned = (width + 63) / 64 * 64;
  for (std::size_t pitch : {aligned, std::size_t(width + 1)})
    for (int inShift = 0; inShift < 4; ++inShift)
      for (int outShift : {0, 2}) {
        ShiftedPlane<T> in(width, height, pitch, inShift), expected(width, height, pitch, outShift);
        for (int y = 0; y < height; ++y) std::memcpy(in.plane.row(y), values.data() + std::size_t(y) * width, width);
        kernels::runBoxBlurOnHost<T>(in.input(), expected.plane, radius, kernels::BorderMode::Reflect101, T(0),
                                     BoxBlurPath::Sweep, 264);
        const std::size_t bytes = pitch * height + 64;
        void* dInAlloc = nullptr;
        void* dOutAlloc = nullptr;
        ASSERT_EQ(cudaMalloc(&dInAlloc, bytes), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&dOutAlloc, bytes), cudaSuccess);
        auto* dIn = static_cast<unsigned char*>(dInAlloc);
        auto* dOut = static_cast<unsigned char*>(dOutAlloc);
        const kernels::Plane<const T> din{dIn + inShift, width, height, pitch};
        const kernels::Plane<T> dout{dOut + outShift, width, height, pitch};
        ASSERT_EQ(cudaMemcpy2DAsync(dIn + inShift, pitch, in.plane.data, pitch, width, height, cudaMemcpyHostToDevice,
                                    gpu.stream()),
                  cudaSuccess);
        ASSERT_EQ(cudaMemsetAsync(dOut, 0xab, bytes, gpu.stream()), cudaSuccess);
        kernels::launchBoxBlur<T>(din, dout, radius, kernels::BorderMode::Reflect101, T(0), BoxBlurPath::Sweep, nullptr,
                                  0, gpu.stream());
        std::vector<T> got(std::size_t(width) * height);
        ASSERT_EQ(cudaMemcpy2DAsync(got.data(), width, dOut + outShift, pitch, width, height, cudaMemcpyDeviceToHost,
                                    gpu.stream()),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(gpu.stream()), cudaSuccess);
        cudaFree(dIn);
        cudaFree(dOut);
        int differ = 0;
        for (int y = 0; y < height; ++y)
          differ += std::memcmp(got.data() + std::size_t(y) * width, expected.plane.row(y), width) != 0;
        EXPECT_EQ(differ, 0) << "rows differ; pitch " << pitch << ", input " << inShift << " and output " << outShift
                             << " bytes past the allocation";
      }
}

// ---------------------------------------------------------------------------------------------
// The sweep path's stream kernel (f32 planes, radius 1..15: a template a radius): every radius and
// border mode on a plane of three strips of 128 columns (the last 44 wide) and a prime height, so
// that the segments run batches in their middle (no test a row) and wrap their ring of row sums.

namespace {

constexpr int kStreamWidth = 300, kStreamHeight = 157;

/// The reference means (BoxBlur::runReference: sums in double) of a row-major plane.
std::vector<float> referenceMeans(const std::vector<float>& v, int radius, BorderMode mode, float fill) {
  Image in(kStreamWidth, kStreamHeight, 1, PixelType::F32);
  std::copy(v.begin(), v.end(), in.samples<float>().begin());
  const Image out = BoxBlur(radius, Border{mode, fill}).runReference(in);
  return {out.samples<float>().begin(), out.samples<float>().end()};
}

/// How many of `got` differ from `expected` by more than the f32 tolerance (1e-5 of the data's
/// range of 8, and 1e-5 relative).
int boxMeansOff(const std::vector<float>& expected, const float* got, std::size_t pitchFloats) {
  int off = 0;
  for (int y = 0; y < kStreamHeight; ++y)
    for (int x = 0; x < kStreamWidth; ++x) {
      const double e = expected[static_cast<std::size_t>(y) * kStreamWidth + x];
      const double a = got[static_cast<std::size_t>(y) * pitchFloats + x];
      off += !(std::abs(e - a) <= 8e-5 + 1e-5 * std::abs(e));
    }
  return off;
}

const BorderMode kStreamModes[] = {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                                   BorderMode::Constant};

}  // namespace

TEST(BoxBlurStream, EveryRadiusAndBorderOnHost) {
  const std::vector<float> values = randomSamples<float>(std::size_t(kStreamWidth) * kStreamHeight, 31337);
  const kernels::Plane<const float> in{values.data(), kStreamWidth, kStreamHeight, kStreamWidth * sizeof(float)};
  std::vector<float> got(values.size());
  const kernels::Plane<float> out{got.data(), kStreamWidth, kStreamHeight, kStreamWidth * sizeof(float)};
  for (int radius = 1; radius <= 15; ++radius)
    for (BorderMode mode : kStreamModes) {
      const std::vector<float> expected = referenceMeans(values, radius, mode, 2.5f);
      // 6 resident blocks: two segments a strip (80 and 77 rows); 264: a batch a segment, fewer rows
      // than the window.
      for (int resident : {6, 264}) {
        std::fill(got.begin(), got.end(), std::nanf(""));
        kernels::runBoxBlurOnHost<float>(in, out, radius, toKernel(mode), 2.5f, BoxBlurPath::Sweep, resident);
        EXPECT_EQ(boxMeansOff(expected, got.data(), kStreamWidth), 0)
            << "radius " << radius << ", border " << static_cast<int>(mode) << ", " << resident << " resident blocks";
      }
    }
}

TEST(BoxBlurStream, GpuEveryRadiusAndBorder) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const std::vector<float> values = randomSamples<float>(std::size_t(kStreamWidth) * kStreamHeight, 31337);
  const std::size_t pitch = 320 * sizeof(float);
  void* dIn = nullptr;
  void* dOut = nullptr;
  ASSERT_EQ(cudaMalloc(&dIn, pitch * kStreamHeight), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dOut, pitch * kStreamHeight), cudaSuccess);
  ASSERT_EQ(cudaMemcpy2D(dIn, pitch, values.data(), kStreamWidth * sizeof(float), kStreamWidth * sizeof(float),
                         kStreamHeight, cudaMemcpyHostToDevice),
            cudaSuccess);
  const kernels::Plane<const float> din{static_cast<const float*>(dIn), kStreamWidth, kStreamHeight, pitch};
  const kernels::Plane<float> dout{static_cast<float*>(dOut), kStreamWidth, kStreamHeight, pitch};
  std::vector<float> got(pitch / sizeof(float) * kStreamHeight);
  for (int radius = 1; radius <= 15; ++radius)
    for (BorderMode mode : kStreamModes) {
      ASSERT_EQ(cudaMemsetAsync(dOut, 0xff, pitch * kStreamHeight, gpu.stream()), cudaSuccess);  // NaN
      kernels::launchBoxBlur<float>(din, dout, radius, toKernel(mode), 2.5f, BoxBlurPath::Sweep, nullptr, 0,
                                    gpu.stream());
      ASSERT_EQ(cudaMemcpyAsync(got.data(), dOut, pitch * kStreamHeight, cudaMemcpyDeviceToHost, gpu.stream()),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(gpu.stream()), cudaSuccess);
      const std::vector<float> expected = referenceMeans(values, radius, mode, 2.5f);
      EXPECT_EQ(boxMeansOff(expected, got.data(), pitch / sizeof(float)), 0)
          << "radius " << radius << ", border " << static_cast<int>(mode);
    }
  cudaFree(dIn);
  cudaFree(dOut);
}

// ---------------------------------------------------------------------------------------------
// Non-finite samples (issue 19): each output is the mean of its own window. A window holding a
// NaN, or both +inf and -inf, gives NaN; +inf alone +inf; -inf alone -inf; otherwise the finite
// mean. Running sums must not carry a NaN or inf past the windows holding it. Every path (CPU both
// methods, the GPU block and warp code on the host, the GPU itself: auto, fused, ring, stream, sat,
// direct, planar and interleaved, and tiled runs) against the reference, non-finite positions and
// signs exactly, finite values within the table's tolerances.

namespace {

enum class Specials { NanCorner, PlusInfEdge, MinusInfInterior, Mixed, EveryRowNan, AllNan };

const char* specialsName(Specials s) {
  switch (s) {
    case Specials::NanCorner:
      return "NanCorner";
    case Specials::PlusInfEdge:
      return "PlusInfEdge";
    case Specials::MinusInfInterior:
      return "MinusInfInterior";
    case Specials::Mixed:
      return "Mixed";
    case Specials::EveryRowNan:
      return "EveryRowNan";
    case Specials::AllNan:
      return "AllNan";
  }
  return "?";
}

struct NonFiniteCase {
  int width, height, channels, radius;
  BorderMode mode;
  Specials specials;
  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) + "c" + std::to_string(channels) + "_r" +
           std::to_string(radius) + "_" + std::string(toString(mode)) + "_" + specialsName(specials);
  }
  Border border() const { return {mode, mode == BorderMode::Constant ? 0.75 : 0.0}; }
  /// f32 test data (3..7) with NaN / inf placed by the pattern, in every channel at shifted places.
  Image input() const {
    Image img = test::filterTestImage(width, height, channels, PixelType::F32, 131u * width + 7u * height + channels);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    auto put = [&](int x, int y, int c, float v) {
      img.at<float>(std::clamp(x, 0, width - 1), std::clamp(y, 0, height - 1), c) = v;
    };
    for (int c = 0; c < channels; ++c) {
      const int cx = width / 2 + c, cy = height / 2;
      switch (specials) {
        case Specials::NanCorner:
          put(c, 0, c, nan);
          break;
        case Specials::PlusInfEdge:
          put(width - 1, cy, c, inf);
          break;
        case Specials::MinusInfInterior:
          put(cx, cy, c, -inf);
          break;
        case Specials::Mixed:  // windows with NaN, +inf, -inf, and +inf with -inf
          put(0, height - 1, c, nan);
          put(cx, cy, c, inf);
          put(cx + 2, cy + 1, c, -inf);
          put(width - 1, 0, c, inf);
          put(width / 3, height / 4 + c, c, -inf);
          break;
        case Specials::EveryRowNan:  // one NaN per row, on a diagonal
          for (int y = 0; y < height; ++y) put((y * 7 + c) % width, y, c, y % 3 == 2 ? -inf : nan);
          break;
        case Specials::AllNan:
          for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) put(x, y, c, nan);
          break;
      }
    }
    return img;
  }
};

std::vector<NonFiniteCase> nonFiniteCases() {
  struct Size {
    int w, h;
  };
  // 257 and 521 columns: several fused and tiled tiles across (f32 tiles hold up to 248 / 512 columns).
  const Size sizes[] = {{1, 1}, {2, 3}, {13, 12}, {37, 29}, {257, 31}, {521, 23}};
  const BorderMode modes[] = {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap,
                              BorderMode::Constant};
  std::vector<NonFiniteCase> cases;
  for (const Size& s : sizes)
    for (int channels : {1, 3})
      for (int r : {1, 2, 3, 7, 15, 40})
        for (BorderMode m : modes)
          for (Specials sp : {Specials::NanCorner, Specials::PlusInfEdge, Specials::MinusInfInterior, Specials::Mixed,
                              Specials::EveryRowNan, Specials::AllNan}) {
            const bool wide = s.w > 200;
            if (wide && (channels != 1 || r == 40)) continue;  // the table's time
            if (sp == Specials::AllNan && s.w * s.h > 200) continue;
            if ((s.w <= 2 || sp == Specials::AllNan) && r > 3 && r != 40) continue;
            cases.push_back({s.w, s.h, channels, r, m, sp});
          }
  return cases;
}

/// Non-finite samples equal (NaN where NaN, inf of the same sign), finite ones within the table's
/// f32 tolerance of the finite data's range.
::testing::AssertionResult sameNonFinite(const Image& expected, const Image& actual, double range) {
  if (expected.width() != actual.width() || expected.height() != actual.height() ||
      expected.channels() != actual.channels() || actual.type() != PixelType::F32)
    return ::testing::AssertionFailure() << "shape differs";
  std::size_t bad = 0, nonFinite = 0;
  std::string first;
  for (int y = 0; y < expected.height(); ++y)
    for (int x = 0; x < expected.width(); ++x)
      for (int c = 0; c < expected.channels(); ++c) {
        const float e = expected.at<float>(x, y, c), a = actual.at<float>(x, y, c);
        bool ok;
        if (std::isnan(e))
          ok = std::isnan(a);
        else if (std::isinf(e))
          ok = a == e;
        else
          ok = std::isfinite(a) && std::abs(double(e) - a) <= 1e-5 * range + 1e-5 * std::abs(double(e));
        nonFinite += std::isfinite(e) ? 0 : 1;
        if (!ok && bad++ == 0)
          first = "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(c) + "): expected " +
                  std::to_string(e) + ", got " + std::to_string(a);
      }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " samples differ (" << nonFinite << " non-finite expected); first at "
                                       << first;
}

double finiteRange(const NonFiniteCase& c) { return std::max(8.0, std::abs(c.border().value)); }

const Image& nonFiniteReference(const NonFiniteCase& c) {
  static std::mutex lock;
  static std::map<std::string, Image> cache;
  const std::lock_guard<std::mutex> guard(lock);
  auto it = cache.find(c.name());
  if (it == cache.end()) it = cache.emplace(c.name(), BoxBlur(c.radius, c.border()).runReference(c.input())).first;
  return it->second;
}

/// The planar GPU code of `path` on the host, channel by channel, on pitched 16-byte aligned planes.
Image emulatePlanes(const NonFiniteCase& c, const Image& in, BoxBlurPath path, int residentBlocks) {
  Image out(c.width, c.height, c.channels, PixelType::F32);
  const std::size_t pitch = (c.width * sizeof(float) + 63) / 64 * 64;
  std::vector<float> src(pitch / sizeof(float) * c.height + 16), dst(src.size());
  auto* srcBase = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(src.data()) + 15) / 16 * 16);
  auto* dstBase = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(dst.data()) + 15) / 16 * 16);
  const kernels::Plane<float> inPlane{srcBase, c.width, c.height, pitch};
  const kernels::Plane<float> outPlane{dstBase, c.width, c.height, pitch};
  for (int ch = 0; ch < c.channels; ++ch) {
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x) inPlane(x, y) = in.at<float>(x, y, ch);
    kernels::runBoxBlurOnHost<float>({srcBase, c.width, c.height, pitch}, outPlane, c.radius, toKernel(c.mode),
                                     static_cast<float>(c.border().value), path, residentBlocks);
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x) out.at<float>(x, y, ch) = outPlane(x, y);
  }
  return out;
}

/// The fused warp code on interleaved rows on the host.
Image emulateInterleaved(const NonFiniteCase& c, const Image& in, int residentWarps, BoxBlurPath path) {
  Image out(c.width, c.height, c.channels, PixelType::F32);
  const std::size_t pitch = (in.rowBytes() + 63) / 64 * 64;
  std::vector<float> src(pitch / sizeof(float) * c.height + 16), dst(src.size());
  auto* srcBase = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(src.data()) + 15) / 16 * 16);
  auto* dstBase = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(dst.data()) + 15) / 16 * 16);
  for (int y = 0; y < c.height; ++y)
    std::memcpy(reinterpret_cast<unsigned char*>(srcBase) + y * pitch, in.row<float>(y), in.rowBytes());
  kernels::runBoxBlurInterleavedOnHost<float>({srcBase, c.width, c.height, pitch}, {dstBase, c.width, c.height, pitch},
                                              c.channels, c.radius, toKernel(c.mode),
                                              static_cast<float>(c.border().value), residentWarps, path);
  for (int y = 0; y < c.height; ++y)
    std::memcpy(out.row<float>(y), reinterpret_cast<unsigned char*>(dstBase) + y * pitch, in.rowBytes());
  return out;
}

}  // namespace

class BoxBlurNonFinite : public ::testing::TestWithParam<NonFiniteCase> {};

TEST(BoxBlurNonFiniteReference, FollowsTheDefinitionOnHandWorkedWindows) {
  // One row, radius 1, Replicate: every window is three copies of a row window [x-1, x+1].
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float values[] = {1, inf, 2, 3, -inf, 4, inf, 5, 6, 7, nan, 8};
  const float want[] = {inf, inf, inf, -inf, -inf, nan, inf, inf, 6, nan, nan, nan};
  Image row(12, 1, 1, PixelType::F32);
  for (int x = 0; x < 12; ++x) row.at<float>(x, 0) = values[x];
  Image expected(12, 1, 1, PixelType::F32);
  for (int x = 0; x < 12; ++x) expected.at<float>(x, 0) = want[x];
  BoxBlur blur(1, {BorderMode::Replicate});
  EXPECT_TRUE(sameNonFinite(expected, blur.runReference(row), 8.0));
  for (BoxCpuMethod method : {BoxCpuMethod::Direct, BoxCpuMethod::Separable}) {
    blur.setCpuMethod(method);
    EXPECT_TRUE(sameNonFinite(expected, blur.runCpu(row), 8.0));
  }
  // The same row as a column: the window runs down the running sums.
  Image column(1, 12, 1, PixelType::F32), expectedColumn(1, 12, 1, PixelType::F32);
  for (int y = 0; y < 12; ++y) {
    column.at<float>(0, y) = values[y];
    expectedColumn.at<float>(0, y) = want[y];
  }
  EXPECT_TRUE(sameNonFinite(expectedColumn, blur.runReference(column), 8.0));
  EXPECT_TRUE(sameNonFinite(expectedColumn, blur.runCpu(column), 8.0));
  // A single NaN in a 40x30 image at radius 2 spoils exactly the 5x5 windows around it.
  Image img = test::filterTestImage(40, 30, 1, PixelType::F32, 3);
  img.at<float>(20, 10) = nan;
  for (BoxCpuMethod method : {BoxCpuMethod::Direct, BoxCpuMethod::Separable}) {
    BoxBlur box(2, {BorderMode::Reflect101});
    box.setCpuMethod(method);
    const Image out = box.runCpu(img);
    int nans = 0;
    for (int y = 0; y < 30; ++y)
      for (int x = 0; x < 40; ++x) nans += std::isnan(out.at<float>(x, y)) ? 1 : 0;
    EXPECT_EQ(nans, 25);
    EXPECT_TRUE(std::isnan(out.at<float>(18, 12)) && std::isnan(out.at<float>(22, 8)));
  }
}

TEST_P(BoxBlurNonFinite, CpuMatchesReference) {
  const NonFiniteCase& c = GetParam();
  const Image in = c.input();
  BoxBlur blur(c.radius, c.border());
  for (BoxCpuMethod method : {BoxCpuMethod::Direct, BoxCpuMethod::Separable}) {
    blur.setCpuMethod(method);
    EXPECT_TRUE(sameNonFinite(nonFiniteReference(c), blur.runCpu(in), finiteRange(c)))
        << (method == BoxCpuMethod::Direct ? "direct" : "separable");
  }
}

TEST_P(BoxBlurNonFinite, GpuBlockCodeOnHostMatchesReference) {
  const NonFiniteCase& c = GetParam();
  const Image in = c.input();
  std::vector<BoxBlurPath> paths = {BoxBlurPath::SummedArea, BoxBlurPath::TiledStream, BoxBlurPath::TiledRing};
  if (c.radius <= maxFusedRadius(PixelType::F32)) paths.push_back(BoxBlurPath::Fused);
  if (c.radius <= maxSweepRadius(PixelType::F32)) paths.push_back(BoxBlurPath::Sweep);
  for (BoxBlurPath path : paths)
    for (int resident : {264, 5}) {
      if (path == BoxBlurPath::SummedArea && resident == 5) continue;
      EXPECT_TRUE(sameNonFinite(nonFiniteReference(c), emulatePlanes(c, in, path, resident), finiteRange(c)))
          << toString(path) << ", " << resident << " resident blocks";
    }
  if (c.radius <= kernels::kBoxBlurDirectMaxRadius) {
    const BoxCase direct{{c.width, c.height, c.mode, c.mode == BorderMode::Constant, PixelType::F32, c.channels},
                         c.radius};
    for (int resident : {264, 5})
      EXPECT_TRUE(sameNonFinite(nonFiniteReference(c), emulateDirectOf(direct, in, resident), finiteRange(c)))
          << "direct, " << resident << " resident blocks";
  }
  for (BoxBlurPath path : {BoxBlurPath::Fused, BoxBlurPath::Sweep}) {
    const int largest = path == BoxBlurPath::Fused ? maxFusedRadius(PixelType::F32, c.channels)
                                                   : maxSweepRadius(PixelType::F32, c.channels);
    if (c.channels == 1 || c.radius > largest) continue;
    for (int resident : {264 * 4, 20})
      EXPECT_TRUE(sameNonFinite(nonFiniteReference(c), emulateInterleaved(c, in, resident, path), finiteRange(c)))
          << toString(path) << ", interleaved, " << resident << " resident warps";
  }
}

TEST_P(BoxBlurNonFinite, GpuMatchesReference) {
  GPULAB_REQUIRE_GPU();
  const NonFiniteCase& c = GetParam();
  const Image in = c.input();
  const Image& ref = nonFiniteReference(c);
  GpuContext gpu;
  const DeviceImage planar = gpu.upload(in);
  for (BoxGpuPath path : {BoxGpuPath::Auto, BoxGpuPath::Fused, BoxGpuPath::Sweep, BoxGpuPath::TiledRing,
                          BoxGpuPath::TiledStream, BoxGpuPath::SummedArea, BoxGpuPath::Direct}) {
    if (path == BoxGpuPath::Fused && c.radius > maxFusedRadius(PixelType::F32)) continue;
    if (path == BoxGpuPath::Sweep && c.radius > maxSweepRadius(PixelType::F32)) continue;
    if (path == BoxGpuPath::Direct && c.radius > kBoxDirectMaxRadius) continue;
    BoxBlur blur(c.radius, c.border());
    blur.setGpuPath(path);
    DeviceImage out;
    blur.runGpu(gpu, planar, out);
    EXPECT_TRUE(sameNonFinite(ref, gpu.download(out), finiteRange(c)))
        << "planar, path " << toString(path) << " (" << blur.methodNote(Side::Gpu) << ")";
    if (blur.gpuLayout(shapeOf(in)) != DeviceLayout::Interleaved) continue;
    DeviceImage interleavedOut;
    blur.runGpu(gpu, gpu.upload(in, DeviceLayout::Interleaved), interleavedOut);
    EXPECT_TRUE(sameNonFinite(ref, gpu.download(interleavedOut), finiteRange(c)))
        << "interleaved, path " << toString(path) << " (" << blur.methodNote(Side::Gpu) << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Table, BoxBlurNonFinite, ::testing::ValuesIn(nonFiniteCases()),
                         [](const ::testing::TestParamInfo<NonFiniteCase>& p) { return p.param.name(); });

// Tiled runs (engine/src/tiling): the image in tiles with halos under a small GPU memory budget
// gives the reference's non-finite positions too, every border mode, fused and ring radii, gray
// and RGB (interleaved photos and planes).
TEST(BoxBlurNonFiniteGpu, TiledRunsMatchTheReference) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (BorderMode mode :
       {BorderMode::Reflect101, BorderMode::Reflect, BorderMode::Replicate, BorderMode::Wrap, BorderMode::Constant})
    for (int radius : {2, 4, 9})
      for (int channels : {1, 3})
        for (Specials sp : {Specials::Mixed, Specials::EveryRowNan}) {
          const NonFiniteCase c{61, 47, channels, radius, mode, sp};
          SCOPED_TRACE(c.name());
          BoxBlur blur(c.radius, c.border());
          const Image in = c.input();
          const int halo = tileHalo(blur, shapeOf(in));
          ASSERT_GE(halo, 0);
          const std::size_t budget = gpuBytesEstimate(blur, {9 + 2 * halo, 7 + 2 * halo, channels, PixelType::F32});
          const TilePlan plan = planTiles(blur, shapeOf(in), budget);
          EXPECT_TRUE(plan.tiled()) << plan.describe();
          const TiledRun run = runTiled(gpu, blur, in, plan);
          EXPECT_TRUE(sameNonFinite(nonFiniteReference(c), run.output, finiteRange(c))) << plan.describe();
        }
}
