// Box blur: the mean over the (2r+1) x (2r+1) window centred on each pixel, any radius from 0
// (identity) up to kMaxBoxRadius (a window wider than any image gpulab accepts), every border mode,
// correct however far the window reaches past the image.
//
//   gpulab::BoxBlur blur(7, {gpulab::BorderMode::Reflect101});
//   blur.runGpu(gpu, in, out);           // async on gpu.stream(); not in place; out is (re)allocated
//                                        // only when its shape differs from in's; the launch plan is
//                                        // worked out on the first call and reused while the device,
//                                        // size and type stay the same
//   gpulab::Image cpu = blur.runCpu(photo);        // OpenCV cv::blur, strips on all cores; blocking
//   gpulab::Image ref = blur.runReference(photo);  // separable loops in double; blocking, slow
//
// Types: u8 and u16 with 1..4 channels -> the same type, rounded to nearest from exact integer
// sums (the window's area is odd, so a mean is never half-way: GPU and reference agree exactly;
// OpenCV may differ by 1). A 4-channel u8 or u16 image is RGBA: its alpha passes through
// unchanged. f32 with 1..4 channels -> f32, every channel filtered; the GPU sums in double (within
// 1e-5 relative of the reference, and of the input's range for means near 0). f64 is not
// supported (std::invalid_argument). NaN and infinities (f32) stay in their windows on every path:
// an output is NaN when its window holds a NaN or both +inf and -inf, +inf (-inf) when it holds
// only that infinity, and the mean otherwise (kernels/box_blur.cuh, "Non-finite samples").
// Constant border: the value in sample units, for u8/u16 rounded and saturated to 0..255/65535.
// GPU cost per pixel does not depend on the radius: a fused one-pass kernel (one warp per strip
// and row segment) from radius 7 up to 96 (f32, u16) or 192 (u8), a one-pass tiled kernel below
// and up to 192 (f32), 384 (u16) or 768 (u8), a summed-area table in gpu.scratch() beyond it.
#pragma once

#include <memory>
#include <string>

#include "gpulab/filters/filter.hpp"

namespace gpulab {

/// The largest radius BoxBlur takes: its window (65535 wide) is wider than any image gpulab accepts.
inline constexpr int kMaxBoxRadius = 32767;

/// How the CPU baseline runs cv::blur. Direct: one 2D cv::blur per row strip, what a user would
/// write (its buffers grow with radius x width). Separable: a 1-row cv::blur along rows, a
/// transpose, the same along columns, a transpose back, in float (memory bounded for any radius).
/// Auto: Direct unless its buffers would exceed a few hundred MiB.
enum class BoxCpuMethod { Auto, Direct, Separable };

/// The GPU kernel. Auto: for u8 and f32 planes of radius 1 and 2, Direct: the box's direct kernel
/// (kernels::launchBoxBlurDirect), one read and one write of the image (u8 exact; f32 the mean of
/// float row sums, each with at most 2r + 6 float roundings); a photo's interleaved rows take the
/// sweep at these radii too (6000x4000 RGB u8 r=2 on an H100: 0.113 ms interleaved, 0.159 planar
/// direct); otherwise the sweep kernel
/// up to its largest radius (kernels::boxBlurMaxSweepRadius: 240 on a plane, 127 for u16), then the
/// ring when its window fits in shared memory, the stream up to the tiled paths' largest radius, the
/// summed-area table beyond (a radius of 0 is a plain copy). Fused runs when named.
enum class BoxGpuPath { Auto, TiledRing, TiledStream, SummedArea, Fused, Direct, Sweep };
constexpr EnumText enumText(BoxGpuPath) { return {"box blur GPU path", "auto|ring|stream|sat|fused|direct|sweep"}; }

/// The largest radius BoxGpuPath::Direct takes (a 5x5 window). The direct kernel measured slower than
/// the sweep from radius 3 on (H100, 4096^2 f32: r=3 0.081 against 0.075 ms, r=4 0.097 against 0.077).
inline constexpr int kBoxDirectMaxRadius = 2;

class BoxBlur final : public Operation {
 public:
  /// Throws std::invalid_argument for a radius outside [0, kMaxBoxRadius] or a non-finite border value.
  explicit BoxBlur(int radius, Border border = {});
  ~BoxBlur() override;
  BoxBlur(BoxBlur&&) noexcept;
  BoxBlur& operator=(BoxBlur&&) noexcept;

  int radius() const noexcept { return radius_; }
  const Border& border() const noexcept { return border_; }

  /// The GPU path; Auto (the default) picks the fastest that fits. For benchmarks and tests.
  void setGpuPath(BoxGpuPath path) noexcept;
  BoxGpuPath gpuPath() const noexcept { return gpuPath_; }
  void setCpuMethod(BoxCpuMethod method) noexcept { cpuMethod_ = method; }
  BoxCpuMethod cpuMethod() const noexcept { return cpuMethod_; }

  std::string name() const override { return "box"; }
  /// A wrapping border reads the opposite edge: the whole image.
  int reach() const override { return border_.mode == BorderMode::Wrap ? -1 : radius_; }
  std::string describe() const override;
  ParamValues params() const override;
  /// "GPU path ring" on the GPU (the path the last run took); nothing on the CPU.
  std::string methodNote(Side side) const override;
  ImageShape outputShape(const ImageShape& in) const override;
  /// Interleaved for a photo the sweep or fused path filters in its own layout (2 or 3 channels, or
  /// 4 in f32; radius 1 up to kernels::boxBlurMaxInterleavedRadius; path auto, sweep or fused);
  /// planar otherwise.
  /// runGpu takes planar images too (then the output is planar).
  DeviceLayout gpuLayout(const ImageShape& in) const override;
  void runGpu(GpuContext& gpu, const DeviceImage& in, DeviceImage& out) override;
  Image runCpu(const Image& in, const CpuControl& control = {}) const override;
  Image runReference(const Image& in) const override;

 private:
  int radius_;
  Border border_;
  BoxGpuPath gpuPath_ = BoxGpuPath::Auto;
  BoxCpuMethod cpuMethod_ = BoxCpuMethod::Auto;
  struct GpuPlan;
  std::unique_ptr<GpuPlan> plan_;  // for the last device, size and sample type runGpu saw
};

struct OperationInfo;
/// Box blur as the registry lists it (filters/registry.hpp): radius, border, border-value.
OperationInfo boxBlurInfo();

}  // namespace gpulab
