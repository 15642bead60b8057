// Convolution by method (ConvMethodFilter, makeFilter's Conv with method Fft or Auto): names and
// parsing; the factory's choices and errors; the fft and auto methods against Conv2D's naive
// reference on odd, prime and tiny sizes, every border and output mode, odd and even kernels,
// convolution and correlation, u8 / f32 / f64, on the CPU here and on the GPU where there is one;
// auto dispatching exactly as its model says and taking the FFT above 127; kernels of 129 and 255
// against an independent naive definition; the process-wide cost models calibrated once.
//
// Tolerances (the issue's): f32 1e-4 relative to the result's peak, f64 1e-10 relative, u8 +-1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gpulab/core/device_image.hpp"
#include "gpulab/filters/box_blur.hpp"
#include "gpulab/filters/conv2d.hpp"
#include "gpulab/filters/conv_method.hpp"
#include "gpulab/filters/filter.hpp"
#include "gpulab/kernels/border.cuh"
#include "internal/kernel_views.hpp"
#include "support/conv_reference.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
using namespace gpulab::test;

namespace {

/// A mean kernel of the same size (u8 results stay in range, so +-1 is a fair tolerance).
FilterSpec meanOf(FilterSpec spec) {
  const double n = static_cast<double>(spec.kernel.values.size());
  spec.kernel.values.assign(spec.kernel.values.size(), 1.0 / n);
  spec.border.value = 199.6;  // 200 once converted to u8
  return spec;
}

/// Models that always choose one method: a line of 0 ms is never beaten; a tie goes to direct.
ConvCostModel alwaysDirect() { return ConvCostModel({0.0, 0.0}, {1.0, 1.0}); }
ConvCostModel alwaysFft() { return ConvCostModel({1.0, 1.0}, {0.0, 0.0}); }

/// The ways the table runs each case: fft; auto pinned to direct; auto pinned to fft; auto with the
/// process-wide model of the device (whatever it picks, the result must match).
enum class Way { Fft, AutoDirect, AutoFft, AutoCalibrated };
constexpr Way kWays[] = {Way::Fft, Way::AutoDirect, Way::AutoFft, Way::AutoCalibrated};

const char* wayName(Way way) {
  switch (way) {
    case Way::Fft:
      return "fft";
    case Way::AutoDirect:
      return "auto pinned direct";
    case Way::AutoFft:
      return "auto pinned fft";
    case Way::AutoCalibrated:
      return "auto calibrated";
  }
  return "?";
}

std::unique_ptr<ConvMethodFilter> filterFor(FilterSpec spec, Way way, bool gpu) {
  spec.method = way == Way::Fft ? ConvMethod::Fft : ConvMethod::Auto;
  auto filter = std::make_unique<ConvMethodFilter>(spec);
  if (way == Way::AutoDirect || way == Way::AutoFft) {
    const ConvCostModel model = way == Way::AutoDirect ? alwaysDirect() : alwaysFft();
    if (gpu)
      filter->pinGpuModel(model);
    else
      filter->pinCpuModel(model);
  }
  return filter;
}

/// Under racecheck, the GPU model's calibration (it times 2048^2 and 4096^2 direct convolutions up to
/// 31x31) takes longer than a GPU-machine call: one run passed 457 s without ending. Its kernels are
/// racechecked in test_conv2d, test_separable_conv and test_fft_conv, and the calibration itself ran
/// clean under memcheck, synccheck and initcheck; racecheck here covers the other ways.
bool calibrationTooSlowHere() { return test::computeSanitizerStep() == "racecheck"; }

/// What the run must have taken for `way` (the calibrated model: whatever it chose, as it says).
void expectChoice(Way way, const std::optional<ConvAlgorithm>& choice, const std::string& name) {
  ASSERT_TRUE(choice.has_value()) << name;
  if (way == Way::Fft || way == Way::AutoFft) {
    EXPECT_EQ(*choice, ConvAlgorithm::Fft) << name;
  } else if (way == Way::AutoDirect) {
    EXPECT_EQ(*choice, ConvAlgorithm::Direct) << name;
  }
}

using TableParam = std::tuple<std::tuple<int, int>, std::tuple<int, int>>;

class ConvMethodTable : public ::testing::TestWithParam<TableParam> {
 protected:
  /// Every border (constant with a non-zero value) and output mode; correlation on every other case.
  void forEachCase(const std::function<void(const FilterSpec&)>& check) {
    const auto [w, h] = std::get<0>(GetParam());
    const auto [kw, kh] = std::get<1>(GetParam());
    int n = 0;
    for (BorderMode border : kBorders)
      for (ConvMode mode : kModes) {
        if (!fits(mode, w, h, kw, kh)) continue;
        check(convSpec(randomKernel(kw, kh, 31u + kw * 7u + kh), border, mode, (n++ % 2) == 1, ConvMethod::Auto,
                       border == BorderMode::Constant ? -2.5 : 0.0));
      }
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names and the factory

TEST(ConvMethod, NamesRoundTrip) {
  for (ConvMethod m : {ConvMethod::Direct, ConvMethod::Fft, ConvMethod::Auto})
    EXPECT_EQ(parseEnum<ConvMethod>(toString(m)), m) << toString(m);
  EXPECT_EQ(toString(ConvMethod::Direct), "direct");
  EXPECT_EQ(toString(ConvMethod::Fft), "fft");
  EXPECT_EQ(toString(ConvMethod::Auto), "auto");
  EXPECT_EQ(enumNames<ConvMethod>(), "direct|fft|auto|separable");
  EXPECT_FALSE(parseEnum<ConvMethod>("FFT").has_value());
  EXPECT_FALSE(parseEnum<ConvMethod>("").has_value());
  EXPECT_FALSE(parseEnum<ConvMethod>("fastest").has_value());
  EXPECT_EQ(FilterSpec{}.method, ConvMethod::Direct);
}

TEST(ConvMethod, FactoryBuildsTheMethodAsked) {
  FilterSpec spec = convSpec(randomKernel(5, 3, 1), BorderMode::Reflect, ConvMode::Full, false, ConvMethod::Direct);
  EXPECT_NE(dynamic_cast<Conv2D*>(makeFilter(spec).get()), nullptr);
  for (ConvMethod m : {ConvMethod::Fft, ConvMethod::Auto}) {
    spec.method = m;
    const std::unique_ptr<Operation> f = makeFilter(spec);
    const auto* byMethod = dynamic_cast<const ConvMethodFilter*>(f.get());
    ASSERT_NE(byMethod, nullptr) << toString(m);
    EXPECT_EQ(byMethod->convMethod(), m);
    EXPECT_TRUE(byMethod->directPossible());
    EXPECT_EQ(f->describe(), "conv 5x3 full reflect " + std::string(toString(m)));
    EXPECT_FALSE(byMethod->lastCpuChoice().has_value());
    EXPECT_FALSE(byMethod->lastGpuChoice().has_value());
    // The same shapes and bytes as the direct method.
    const Conv2D direct(spec);
    for (ImageShape in : {ImageShape{13, 12, 1, PixelType::F32}, ImageShape{2, 3, 4, PixelType::U8}}) {
      const ImageShape a = f->outputShape(in), b = direct.outputShape(in);
      EXPECT_EQ(std::tie(a.width, a.height, a.channels, a.type), std::tie(b.width, b.height, b.channels, b.type));
      EXPECT_EQ(f->minimumBytesMoved(in), direct.minimumBytesMoved(in));
    }
  }
  spec.correlate = true;
  spec.mode = ConvMode::Valid;
  spec.border = {BorderMode::Constant, 2};
  EXPECT_EQ(makeFilter(spec)->describe(), "conv 5x3 correlate valid constant(2) auto");
}

TEST(ConvMethod, DirectAbove127NamesTheOtherMethods) {
  const FilterSpec spec =
      convSpec(randomKernel(128, 3, 2), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Direct);
  try {
    makeFilter(spec);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("127x127"), std::string::npos) << what;
    EXPECT_NE(what.find("128x3"), std::string::npos) << what;
    EXPECT_NE(what.find("--method fft|auto"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  for (ConvMethod m : {ConvMethod::Fft, ConvMethod::Auto}) {
    FilterSpec other = spec;
    other.method = m;
    const std::unique_ptr<Operation> f = makeFilter(other);
    EXPECT_FALSE(dynamic_cast<const ConvMethodFilter&>(*f).directPossible());
  }
}

TEST(ConvMethod, BadSpecsThrowOneSentence) {
  auto throwsMentioning = [](const FilterSpec& spec, const std::string& part) {
    try {
      makeFilter(spec);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      return what.find(part) != std::string::npos && what.find('\n') == std::string::npos
                 ? ::testing::AssertionSuccess()
                 : ::testing::AssertionFailure() << what;
    }
    return ::testing::AssertionFailure() << "no exception";
  };
  FilterSpec box;
  box.op = FilterOp::Box;
  box.radius = 2;
  box.method = ConvMethod::Fft;
  EXPECT_TRUE(throwsMentioning(box, "convolution only"));
  box.method = ConvMethod::Direct;
  EXPECT_NO_THROW(makeFilter(box));

  FilterSpec huge = convSpec(randomKernel(1025, 1, 3), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Fft);
  EXPECT_THROW(makeFilter(huge), std::invalid_argument);
  FilterSpec empty = convSpec({}, BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Auto);
  EXPECT_THROW(makeFilter(empty), std::invalid_argument);
  FilterSpec ragged = convSpec(randomKernel(3, 3, 4), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Auto);
  ragged.kernel.values.pop_back();
  EXPECT_THROW(makeFilter(ragged), std::invalid_argument);
  FilterSpec nan = convSpec(randomKernel(3, 3, 5), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Fft);
  nan.kernel.values[4] = NAN;
  EXPECT_THROW(makeFilter(nan), std::invalid_argument);
  FilterSpec direct = convSpec(randomKernel(3, 3, 6), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Direct);
  EXPECT_THROW(ConvMethodFilter{direct}, std::invalid_argument);

  // Shapes the filter cannot take, as the direct method says.
  const std::unique_ptr<Operation> valid =
      makeFilter(convSpec(randomKernel(9, 9, 7), BorderMode::Wrap, ConvMode::Valid, false, ConvMethod::Auto));
  EXPECT_THROW(valid->outputShape({8, 20, 1, PixelType::F32}), std::invalid_argument);
  EXPECT_THROW(valid->outputShape({20, 20, 2, PixelType::U8}), std::invalid_argument);
  EXPECT_THROW(valid->prepareCpu({8, 20, 1, PixelType::F32}), std::invalid_argument);
  EXPECT_THROW(valid->runCpu(Image{}), std::invalid_argument);

  auto filter = std::make_unique<ConvMethodFilter>(
      convSpec(randomKernel(3, 3, 8), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Auto));
  EXPECT_THROW(filter->pinCpuModel(ConvCostModel{}), std::invalid_argument);
  EXPECT_THROW(filter->pinGpuModel(ConvCostModel{}), std::invalid_argument);
}

TEST(ConvMethod, OtherFiltersPrepareNothing) {
  BoxBlur box(3);
  EXPECT_EQ(box.prepareCpu({10, 10, 1, PixelType::F32}), 0.0);
  Conv2D conv(convSpec(randomKernel(3, 3, 9), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Direct));
  EXPECT_EQ(conv.prepareCpu({10, 10, 1, PixelType::F32}), 0.0);
}

// ---------------------------------------------------------------------------------------------
// The table: fft and auto equal Conv2D's reference

TEST_P(ConvMethodTable, CpuMatchesConv2DReference) {
  const auto [w, h] = std::get<0>(GetParam());
  const Image f32 = test::randomImage(w, h, 1, PixelType::F32, 101u + w * h, 3.0);
  const Image f64 = test::randomImage(w, h, 2, PixelType::F64, 102u + w * h);
  const Image rgba = test::randomImage(w, h, 4, PixelType::U8, 103u + w * h);
  const Image rgb = test::randomImage(w, h, 3, PixelType::U8, 104u + w * h);
  forEachCase([&](const FilterSpec& spec) {
    const Conv2D reference(spec);
    const Conv2D meanReference(meanOf(spec));
    const Image ref32 = reference.runReference(f32), ref64 = reference.runReference(f64);
    const Image refRgba = meanReference.runReference(rgba), refRgb = meanReference.runReference(rgb);
    for (Way way : kWays) {
      const std::string name = caseName(spec) + ", " + wayName(way);
      const auto filter = filterFor(spec, way, false);
      filter->prepareCpu(shapeOf(f32));
      EXPECT_TRUE(convNear(ref32, filter->runCpu(f32))) << name << " f32";
      expectChoice(way, filter->lastCpuChoice(), name);
      EXPECT_TRUE(convNear(ref64, filter->runCpu(f64))) << name << " f64";
      const auto mean = filterFor(meanOf(spec), way, false);
      EXPECT_TRUE(convNear(refRgba, mean->runCpu(rgba))) << name << " rgba";
      EXPECT_TRUE(convNear(refRgb, mean->runCpu(rgb))) << name << " rgb";
      // runReference is Conv2D's, exactly.
      EXPECT_TRUE(test::imagesNear(ref32, filter->runReference(f32), 0)) << name;
    }
  });
}

TEST_P(ConvMethodTable, GpuMatchesConv2DReference) {
  GPULAB_REQUIRE_GPU();
  const auto [w, h] = std::get<0>(GetParam());
  GpuContext gpu;
  const Image f32 = test::randomImage(w, h, 3, PixelType::F32, 111u + w * h, 3.0);
  const Image f64 = test::randomImage(w, h, 1, PixelType::F64, 112u + w * h);
  const Image rgba = test::randomImage(w, h, 4, PixelType::U8, 113u + w * h);
  const DeviceImage d32 = gpu.upload(f32), d64 = gpu.upload(f64), drgba = gpu.upload(rgba);
  forEachCase([&](const FilterSpec& spec) {
    const Conv2D reference(spec);
    const Image ref32 = reference.runReference(f32), ref64 = reference.runReference(f64);
    const Image refRgba = Conv2D(meanOf(spec)).runReference(rgba);
    for (Way way : kWays) {
      if (way == Way::AutoCalibrated && calibrationTooSlowHere()) continue;
      const std::string name = caseName(spec) + ", " + wayName(way);
      const auto filter = filterFor(spec, way, true);
      DeviceImage out;
      filter->prepareGpu(gpu, d32, out);
      filter->runGpu(gpu, d32, out);
      EXPECT_TRUE(convNear(ref32, gpu.download(out))) << name << " f32";
      expectChoice(way, filter->lastGpuChoice(), name);
      filter->runGpu(gpu, d64, out);  // another type into the same output: reallocated
      EXPECT_TRUE(convNear(ref64, gpu.download(out))) << name << " f64";
      const auto mean = filterFor(meanOf(spec), way, true);
      mean->runGpu(gpu, drgba, out);
      EXPECT_TRUE(convNear(refRgba, gpu.download(out))) << name << " rgba";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvMethodTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(1, 1), std::make_tuple(2, 3),
                                                              std::make_tuple(13, 12), std::make_tuple(31, 17)),
                                            ::testing::Values(std::make_tuple(1, 1), std::make_tuple(3, 3),
                                                              std::make_tuple(4, 2), std::make_tuple(6, 5),
                                                              std::make_tuple(8, 8), std::make_tuple(15, 15))),
                         convTableName<::testing::TestParamInfo<TableParam>>);

INSTANTIATE_TEST_SUITE_P(Photo, ConvMethodTable,
                         ::testing::Combine(::testing::Values(std::make_tuple(257, 131)),
                                            ::testing::Values(std::make_tuple(2, 2), std::make_tuple(7, 9))),
                         convTableName<::testing::TestParamInfo<TableParam>>);

// ---------------------------------------------------------------------------------------------
// Auto: dispatches as the model says, exactly

TEST(ConvMethodAuto, CpuRunsExactlyTheMethodTheModelPicks) {
  const Image img = test::randomImage(67, 43, 3, PixelType::F32, 121);
  const FilterSpec spec =
      convSpec(randomKernel(9, 6, 122), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Auto);
  ConvMethodFilter filter(spec);
  filter.pinCpuModel(alwaysDirect());
  EXPECT_EQ(filter.chooseCpu(shapeOf(img)), ConvAlgorithm::Direct);
  EXPECT_TRUE(filter.runCpu(img) == Conv2D(spec).runCpu(img));  // the same code: bit for bit
  EXPECT_EQ(filter.lastCpuChoice(), ConvAlgorithm::Direct);
  ASSERT_TRUE(filter.cpuModel().has_value());
  EXPECT_EQ(filter.cpuModel()->direct().msPerUnit, 0.0);

  filter.pinCpuModel(alwaysFft());
  EXPECT_TRUE(filter.runCpu(img) == FftConvolver(spec).runCpu(img));
  EXPECT_EQ(filter.lastCpuChoice(), ConvAlgorithm::Fft);

  // A model that prefers direct for a small kernel and the FFT for a large one, on the same filter
  // class: 10 units of fixed cost against 1e-6 ms per MAC.
  const ConvCostModel crossover({1e-6, 0.0}, {0.0, 10.0});
  ConvMethodFilter small(convSpec(randomKernel(3, 3, 123), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Auto));
  small.pinCpuModel(crossover);
  EXPECT_EQ(small.chooseCpu({1000, 1000, 1, PixelType::F32}), ConvAlgorithm::Direct);
  ConvMethodFilter large(convSpec(randomKernel(9, 9, 124), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Auto));
  large.pinCpuModel(crossover);
  EXPECT_EQ(large.chooseCpu({1000, 1000, 1, PixelType::F32}), ConvAlgorithm::Fft);
  // Direct costs per channel; u8 RGBA in 'same' mode convolves three channels, not four.
  const ConvCostModel perChannel({1e-6, 0.0}, {0.0, 30.0});  // direct: 3x3 on 1000^2 = 9 ms a channel
  small.pinCpuModel(perChannel);
  EXPECT_EQ(small.chooseCpu({1000, 1000, 3, PixelType::F32}), ConvAlgorithm::Direct);  // 27 < 30
  EXPECT_EQ(small.chooseCpu({1000, 1000, 4, PixelType::F32}), ConvAlgorithm::Fft);     // 36 > 30
  EXPECT_EQ(small.chooseCpu({1000, 1000, 4, PixelType::U8}), ConvAlgorithm::Direct);   // alpha passes: 27

  // The fft method never asks a model.
  ConvMethodFilter fft(convSpec(randomKernel(3, 3, 125), BorderMode::Wrap, ConvMode::Same, false, ConvMethod::Fft));
  EXPECT_EQ(fft.chooseCpu(shapeOf(img)), ConvAlgorithm::Fft);
  EXPECT_FALSE(fft.cpuModel().has_value());
}

TEST(ConvMethodAuto, GpuRunsExactlyTheMethodTheModelPicks) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image img = test::randomImage(67, 43, 3, PixelType::F32, 131);
  const DeviceImage in = gpu.upload(img);
  const FilterSpec spec =
      convSpec(randomKernel(9, 6, 132), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Auto);
  DeviceImage a, b;
  ConvMethodFilter filter(spec);
  filter.pinGpuModel(alwaysDirect());
  filter.runGpu(gpu, in, a);
  Conv2D direct(spec);
  direct.runGpu(gpu, in, b);
  EXPECT_TRUE(gpu.download(a) == gpu.download(b));
  EXPECT_EQ(filter.lastGpuChoice(), ConvAlgorithm::Direct);
  filter.pinGpuModel(alwaysFft());
  filter.runGpu(gpu, in, a);
  FftConvolver fft(spec);
  fft.runGpu(gpu, in, b);
  EXPECT_TRUE(gpu.download(a) == gpu.download(b));
  EXPECT_EQ(filter.lastGpuChoice(), ConvAlgorithm::Fft);
  EXPECT_FALSE(filter.lastCpuChoice().has_value());  // the sides are kept apart
}

TEST(ConvMethodAuto, GpuInPlaceOnlyForTheFftMethod) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  const Image img = test::randomImage(40, 30, 1, PixelType::F32, 141);
  FilterSpec spec = convSpec(randomKernel(5, 5, 142), BorderMode::Reflect, ConvMode::Same, false, ConvMethod::Auto);
  DeviceImage d = gpu.upload(img);
  ConvMethodFilter autoFilter(spec);
  autoFilter.pinGpuModel(alwaysFft());
  EXPECT_THROW(autoFilter.runGpu(gpu, d, d), std::invalid_argument);
  spec.method = ConvMethod::Fft;
  ConvMethodFilter fftFilter(spec);
  fftFilter.runGpu(gpu, d, d);
  EXPECT_TRUE(convNear(Conv2D(spec).runReference(img), gpu.download(d)));
}

// ---------------------------------------------------------------------------------------------
// Kernels the direct method cannot take

TEST(ConvMethodLarge, KernelsOf129And255MatchTheDefinitionOnTheCpu) {
  struct Case {
    int kw, kh;
    int w, h;
    ConvMode mode;
    BorderMode border;
    bool correlate;
  };
  for (const Case& c : {Case{129, 129, 37, 29, ConvMode::Same, BorderMode::Reflect101, false},
                        Case{255, 255, 23, 19, ConvMode::Same, BorderMode::Wrap, true},
                        Case{255, 130, 300, 140, ConvMode::Valid, BorderMode::Reflect, false},
                        Case{200, 2, 9, 7, ConvMode::Full, BorderMode::Constant, true}}) {
    const Image f32 = test::randomImage(c.w, c.h, 1, PixelType::F32, 151u + c.kw, 2.0);
    const Image rgba = test::randomImage(c.w, c.h, 4, PixelType::U8, 152u + c.kw);
    const FilterSpec base =
        convSpec(randomKernel(c.kw, c.kh, 153u + c.kh), c.border, c.mode, c.correlate, ConvMethod::Fft, 0.75);
    const Image expected = naiveConv(f32, base);
    const Image expectedRgba = naiveConv(rgba, meanOf(base));
    for (ConvMethod m : {ConvMethod::Fft, ConvMethod::Auto}) {
      FilterSpec spec = base;
      spec.method = m;
      const std::string name = caseName(spec);
      ConvMethodFilter filter(spec);
      filter.pinCpuModel(alwaysDirect());  // above 127 the FFT all the same
      EXPECT_TRUE(convNear(expected, filter.runCpu(f32))) << name;
      EXPECT_EQ(filter.lastCpuChoice(), ConvAlgorithm::Fft) << name;
      ConvMethodFilter meanFilter(meanOf(spec));
      EXPECT_TRUE(convNear(expectedRgba, meanFilter.runCpu(rgba))) << name << " rgba";
      if (m == ConvMethod::Fft) {  // the naive reference for kernels Conv2D cannot take: exact
        EXPECT_TRUE(convNear(expected, filter.runReference(f32))) << name << " reference";
        EXPECT_TRUE(test::imagesNear(expectedRgba, meanFilter.runReference(rgba), 0)) << name << " rgba reference";
      }
    }
  }
}

TEST(ConvMethodLarge, KernelsOf129And255MatchTheDefinitionOnTheGpu) {
  GPULAB_REQUIRE_GPU();
  GpuContext gpu;
  for (auto [k, w, h, mode, border] : {std::tuple{129, 37, 29, ConvMode::Same, BorderMode::Reflect101},
                                       std::tuple{255, 300, 200, ConvMode::Same, BorderMode::Replicate},
                                       std::tuple{255, 61, 47, ConvMode::Full, BorderMode::Wrap},
                                       std::tuple{200, 257, 211, ConvMode::Valid, BorderMode::Constant}}) {
    const Image f32 = test::randomImage(w, h, 2, PixelType::F32, 161u + k, 2.0);
    const DeviceImage in = gpu.upload(f32);
    for (ConvMethod m : {ConvMethod::Fft, ConvMethod::Auto}) {
      const FilterSpec spec = convSpec(randomKernel(k, k, 162u + k), border, mode, false, m, -1.25);
      ConvMethodFilter filter(spec);
      filter.pinGpuModel(alwaysDirect());
      DeviceImage out;
      filter.prepareGpu(gpu, in, out);
      filter.runGpu(gpu, in, out);
      // The naive definition where it is quick; elsewhere the CPU's FFT path, itself checked above.
      const ImageShape os = filter.outputShape(shapeOf(f32));
      const bool quick = static_cast<double>(os.width) * os.height * k * k <= 1e8;
      const Image expected = quick ? naiveConv(f32, spec) : filter.runCpu(f32);
      EXPECT_TRUE(convNear(expected, gpu.download(out))) << caseName(spec);
      EXPECT_EQ(filter.lastGpuChoice(), ConvAlgorithm::Fft) << caseName(spec);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The process-wide cost models

TEST(ConvMethodModels, CpuModelIsCalibratedOnceAndUsedByAuto) {
  const ConvCostModel first = cpuConvCostModel();
  ASSERT_TRUE(first.calibrated());
  EXPECT_GT(first.direct().msPerUnit, 0.0);
  EXPECT_GT(first.fft().msPerUnit, 0.0);
  const ConvCostModel again = cpuConvCostModel();
  EXPECT_EQ(again.direct().msPerUnit, first.direct().msPerUnit);  // kept, not measured again
  EXPECT_EQ(again.fft().fixedMs, first.fft().fixedMs);
  ASSERT_TRUE(cachedCpuConvCostModel().has_value());
  EXPECT_EQ(cachedCpuConvCostModel()->describe(), first.describe());

  const Image img = test::randomImage(96, 80, 1, PixelType::F32, 171);
  for (int k : {3, 31}) {
    const FilterSpec spec =
        convSpec(randomKernel(k, k, 172u + k), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Auto);
    ConvMethodFilter filter(spec);
    filter.prepareCpu(shapeOf(img));
    ASSERT_TRUE(filter.cpuModel().has_value());
    const Image got = filter.runCpu(img);
    // A 3x3 kernel has rank 3 at most: the separable method is a candidate too.
    EXPECT_EQ(filter.lastCpuChoice(), first.choose(96, 80, k, k, 1, filter.separableRank()));
    EXPECT_TRUE(convNear(Conv2D(spec).runReference(img), got)) << k;
  }
}

TEST(ConvMethodModels, ConcurrentCpuRunsAgree) {
  const Image img = test::randomImage(120, 90, 1, PixelType::F32, 181);
  const FilterSpec spec =
      convSpec(randomKernel(11, 11, 182), BorderMode::Reflect, ConvMode::Same, false, ConvMethod::Auto);
  ConvMethodFilter filter(spec);
  filter.prepareCpu(shapeOf(img));  // calibrated before the threads start
  const Image expected = filter.runCpu(img);
  std::vector<Image> results(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) threads.emplace_back([&, i] { results[i] = filter.runCpu(img); });
  for (std::thread& t : threads) t.join();
  for (const Image& r : results) EXPECT_TRUE(r == expected);
}

TEST(ConvMethodModels, GpuModelIsCalibratedOncePerDeviceAndUsedByAuto) {
  GPULAB_REQUIRE_GPU();
  if (calibrationTooSlowHere()) GTEST_SKIP() << "racecheck makes the calibration outlast a call (see above)";
  GpuContext gpu;
  const ConvCostModel first = gpuConvCostModel(gpu);
  ASSERT_TRUE(first.calibrated());
  EXPECT_GT(first.direct().msPerUnit, 0.0);
  EXPECT_GT(first.fft().msPerUnit, 0.0);
  EXPECT_EQ(gpuConvCostModel(gpu).direct().msPerUnit, first.direct().msPerUnit);
  ASSERT_TRUE(cachedGpuConvCostModel(gpu.device()).has_value());
  EXPECT_FALSE(cachedGpuConvCostModel(gpu.device() + 1000).has_value());
  // The model picks direct for a 3x3 kernel and the FFT for 127x127 on a 2048^2 image (timings:
  // not under compute-sanitizer, whose slowdown calibrates a different machine).
  if (!test::underComputeSanitizer()) {
    EXPECT_EQ(first.choose(2048, 2048, 3, 3), ConvAlgorithm::Direct);
    EXPECT_EQ(first.choose(2048, 2048, 127, 127), ConvAlgorithm::Fft);
  }

  const Image img = test::randomImage(512, 384, 1, PixelType::F32, 191);
  const DeviceImage in = gpu.upload(img);
  for (int k : {3, 63}) {
    const FilterSpec spec =
        convSpec(randomKernel(k, k, 192u + k), BorderMode::Reflect101, ConvMode::Same, false, ConvMethod::Auto);
    ConvMethodFilter filter(spec);
    DeviceImage out;
    filter.prepareGpu(gpu, in, out);
    ASSERT_TRUE(filter.gpuModel(gpu.device()).has_value());
    filter.runGpu(gpu, in, out);
    EXPECT_EQ(filter.lastGpuChoice(), first.choose(512, 384, k, k, 1, filter.separableRank()));
    EXPECT_TRUE(convNear(Conv2D(spec).runReference(img), gpu.download(out))) << k;
  }
}
