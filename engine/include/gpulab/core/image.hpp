// Host images: 8- and 16-bit photos (gray, RGB, RGBA) and float32 / float64 data, interleaved, rows
// packed, in pageable or page-locked (pinned) host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/core/enum_names.hpp"

namespace gpulab {

/// U16 comes last so that the first three keep their numbers (JSON records, saved settings).
enum class PixelType : std::uint8_t { U8, F32, F64, U16 };

constexpr std::size_t bytesPerSample(PixelType type) noexcept {
  switch (type) {
    case PixelType::U8:
      return 1;
    case PixelType::F32:
      return 4;
    case PixelType::F64:
      return 8;
    case PixelType::U16:
      return 2;
  }
  return 0;
}

constexpr EnumText enumText(PixelType) { return {"sample type", "u8|f32|f64|u16"}; }

/// True for the integer sample types (u8, u16), whose values are rounded and saturated on store.
constexpr bool isIntegerType(PixelType type) noexcept { return type == PixelType::U8 || type == PixelType::U16; }

/// The largest image gpulab accepts, checked before any allocation or decode.
inline constexpr int kMaxImageDimension = 32768;
inline constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 28;  // 268 M pixels (16384 x 16384)
inline constexpr int kMaxChannels = 4;

template <class T>
constexpr PixelType pixelTypeOf();
template <>
constexpr PixelType pixelTypeOf<std::uint8_t>() {
  return PixelType::U8;
}
template <>
constexpr PixelType pixelTypeOf<std::uint16_t>() {
  return PixelType::U16;
}
template <>
constexpr PixelType pixelTypeOf<float>() {
  return PixelType::F32;
}
template <>
constexpr PixelType pixelTypeOf<double>() {
  return PixelType::F64;
}

/// Calls f with a value of the sample type `type` stands for (std::uint8_t{}, float{} or double{}):
/// the one switch for code templated on the sample type of the operations and kernels. They take
/// u8, f32 and f64; a u16 image reaching one throws std::invalid_argument (front ends filter 16-bit
/// photos as f32 through filters/sample_depth.hpp and store the result back as u16). The histogram,
/// auto-levels and the uploads take u16 as it is (visitAnySampleType).
template <class F>
void visitPixelType(PixelType type, F&& f) {
  switch (type) {
    case PixelType::U8:
      f(std::uint8_t{});
      return;
    case PixelType::F32:
      f(float{});
      return;
    case PixelType::F64:
      f(double{});
      return;
    case PixelType::U16:
      throw std::invalid_argument(
          "this step takes u8, f32 or f64 samples, not u16: convert the image to f32 first (16-bit photos are "
          "filtered as f32 and stored back as u16)");
  }
}

/// visitPixelType over every sample type, u16 (std::uint16_t{}) included: for code that only moves
/// and converts samples (host images, files).
template <class F>
void visitAnySampleType(PixelType type, F&& f) {
  if (type == PixelType::U16) {
    f(std::uint16_t{});
    return;
  }
  visitPixelType(type, std::forward<F>(f));
}

/// Throws std::invalid_argument with one sentence when width x height x channels is not an image
/// gpulab accepts (zero or negative sizes, beyond kMaxImageDimension / kMaxImagePixels, channels
/// outside 1..4).
void validateImageShape(int width, int height, int channels);

/// "640x480 RGB u8": an image's size, layout and type, for messages.
std::string describeImage(int width, int height, int channels, PixelType type);

/// Where an Image keeps its samples.
enum class HostMemory : std::uint8_t {
  Pageable,  ///< ordinary memory: uploads and downloads go through the context's pinned staging
  Pinned,    ///< page-locked (cudaHostRegister): the copy engines read and write it directly, at full
             ///< PCIe speed; for images that go to or come from the GPU
};
constexpr EnumText enumText(HostMemory) { return {"host memory", "pageable|pinned"}; }

/// Why the last request for pinned host memory in this process got pageable memory ("no CUDA
/// device: ...", "cudaHostRegister failed: ..."); empty while every request was met. Thread-safe.
std::string pinnedMemoryNote();

namespace detail {

/// The allocator of Image's samples. Every block carries a small header that says whether it is
/// registered with CUDA (page-locked) and in which device epoch, so any instance frees any block and
/// all compare equal. `memory` is only what new blocks ask for: pinning that fails (no GPU, the
/// locked-memory limit) gives a pageable block and a note (pinnedMemoryNote), never an exception.
/// Copy construction gives a pageable allocator (a copy of a pinned Image is pageable); moves and
/// swaps carry it along; copy assignment keeps the target's.
class HostAllocator {
 public:
  using value_type = std::byte;
  using propagate_on_container_copy_assignment = std::false_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::true_type;
  template <class U>
  struct rebind {  // std::vector<std::byte> rebinds to itself only
    static_assert(std::is_same_v<U, std::byte>, "HostAllocator allocates bytes");
    using other = HostAllocator;
  };

  HostAllocator() = default;
  explicit HostAllocator(HostMemory memory) noexcept : memory_(memory) {}
  HostAllocator select_on_container_copy_construction() const noexcept { return {}; }

  std::byte* allocate(std::size_t n);
  void deallocate(std::byte* p, std::size_t n) noexcept;
  HostMemory memory() const noexcept { return memory_; }

  /// Elements made without a value are left as they are (default-initialised, not zeroed):
  /// Image::uninitialized's resize writes no byte, so no page is touched until a sample is. Every
  /// other path passes a value (zero, or the bytes copied).
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  /// Whether the block that `data` (a pointer allocate returned) starts is page-locked now
  /// (registered in the current device epoch: a device reset drops registrations).
  static bool isPinned(const std::byte* data) noexcept;
  /// Registers the block in place when it is page-aligned (blocks of 64 KiB and more are) and not
  /// registered yet; true when it is page-locked afterwards.
  static bool pinInPlace(std::byte* data) noexcept;

  friend bool operator==(const HostAllocator&, const HostAllocator&) noexcept { return true; }

 private:
  HostMemory memory_ = HostMemory::Pageable;
};

}  // namespace detail

/// An axis-aligned rectangle of pixels: columns [x, x + width), rows [y, y + height).
struct PixelRect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

/// A host image: width x height pixels of `channels` interleaved samples of one PixelType.
/// Value type (copies deep-copy). Samples start zeroed.
///
/// Memory: pageable by default; HostMemory::Pinned (Image::pinned) page-locks the samples with
/// cudaHostRegister so that GpuContext copies them straight over PCIe (about 10x the pageable path).
/// Registration costs time (`gpulab-cli bench --ops pinning` measures it), so pin images that
/// travel to or from the GPU, and reuse them. Without a GPU, or when pinning fails, the image
/// is pageable and pinnedMemoryNote() says why; nothing throws for that. A device reset
/// (recoverDevice) drops the registration: the samples stay valid and pageable.
/// A copy (copy construction; convertedTo unless asked) is pageable; copy-assigning into an image keeps the
/// target's memory kind (a pinned image stays pinned); moves carry the kind along.
class Image {
 public:
  Image() = default;
  /// An empty image whose samples, once it is given a shape (reshape, a decoder's reuse), live in
  /// `memory`: loadImage(path, Image(HostMemory::Pinned)) decodes straight into pinned memory.
  explicit Image(HostMemory memory) : data_(detail::HostAllocator(memory)) {}
  Image(int width, int height, int channels, PixelType type, HostMemory memory = HostMemory::Pageable);
  /// An image whose samples are not zeroed: for an output every sample of which is written before
  /// it is read. Zeroing 805 MB (8192x8192 RGB f32) took 0.5 to 2.5 s on a 2-core machine, before
  /// any of the work and outside its cancel checks.
  static Image uninitialized(int width, int height, int channels, PixelType type);
  /// An image in page-locked memory (pageable, with a note, where pinning is not possible).
  static Image pinned(int width, int height, int channels, PixelType type) {
    return Image(width, height, channels, type, HostMemory::Pinned);
  }

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  int channels() const noexcept { return channels_; }
  PixelType type() const noexcept { return type_; }
  bool empty() const noexcept { return data_.empty(); }
  std::size_t pixelCount() const noexcept { return static_cast<std::size_t>(width_) * height_; }
  std::size_t rowBytes() const noexcept { return static_cast<std::size_t>(width_) * channels_ * bytesPerSample(type_); }
  std::size_t sizeBytes() const noexcept { return data_.size(); }
  /// "640x480 RGB u8" style summary for messages.
  std::string describe() const;

  /// The memory kind this image allocates in (what was asked for).
  HostMemory memory() const noexcept { return data_.get_allocator().memory(); }
  /// Whether the samples are page-locked now (false when empty, when pinning fell back, after a
  /// device reset).
  bool pinned() const noexcept { return !data_.empty() && detail::HostAllocator::isPinned(data_.data()); }
  /// Moves the samples into page-locked memory (registering them in place when the block allows,
  /// else into a new pinned block) and makes later allocations pinned. True when pinned afterwards;
  /// false, with pinnedMemoryNote() saying why, when the memory stays pageable.
  bool pin();

  std::byte* data() noexcept { return data_.data(); }
  const std::byte* data() const noexcept { return data_.data(); }

  template <class T>
  T* row(int y) noexcept {
    return reinterpret_cast<T*>(data_.data() + y * rowBytes());
  }
  template <class T>
  const T* row(int y) const noexcept {
    return reinterpret_cast<const T*>(data_.data() + y * rowBytes());
  }
  template <class T>
  T& at(int x, int y, int c = 0) noexcept {
    return row<T>(y)[static_cast<std::size_t>(x) * channels_ + c];
  }
  template <class T>
  const T& at(int x, int y, int c = 0) const noexcept {
    return row<T>(y)[static_cast<std::size_t>(x) * channels_ + c];
  }
  /// All samples as one span; T must match type().
  template <class T>
  std::span<T> samples() noexcept {
    return {reinterpret_cast<T*>(data_.data()), data_.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> samples() const noexcept {
    return {reinterpret_cast<const T*>(data_.data()), data_.size() / sizeof(T)};
  }

  /// Makes this a width x height x channels image of `type`, keeping the allocation when it is
  /// large enough (a decoder that refills it in a loop touches no fresh memory). The samples are
  /// left as they were in memory: the caller overwrites them all. Throws as the constructor does.
  void reshape(int width, int height, int channels, PixelType type);

  /// A copy converted to another sample type (u8/u16 -> float keeps the values; float -> u8/u16 and
  /// u16 -> u8 round and saturate, NaN becomes 0), in `memory` (pageable unless asked: a copy).
  Image convertedTo(PixelType type, HostMemory memory = HostMemory::Pageable) const;
  /// One channel extracted as a 1-channel image.
  Image channel(int c) const;

  friend bool operator==(const Image& a, const Image& b) = default;

 private:
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  PixelType type_ = PixelType::U8;
  std::vector<std::byte, detail::HostAllocator> data_;
};

/// Sample (x, y, c) of any host image as a double (slow and general: references, tests, tools).
double sampleAt(const Image& img, int x, int y, int c);
/// Stores v at (x, y, c): u8/u16 rounded to nearest (ties to even) and saturated, NaN as 0; floats cast.
void storeSample(Image& img, int x, int y, int c, double v);

}  // namespace gpulab
