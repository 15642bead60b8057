#include "gpulab/core/image.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <type_traits>

#include "gpulab/core/device.hpp"

namespace gpulab {

// ---------------------------------------------------------------------------------------------
// Host memory: every block of Image samples starts with a header (kHeaderBytes before the samples)
// that says how the block was made, so any allocator frees any block.

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHeaderBytes = 64;             // keeps the samples 64-byte aligned
constexpr std::size_t kPageAlignedFrom = 64 * 1024;  // blocks this large are whole pages: registrable in place

struct BlockHeader {
  std::size_t blockBytes = 0;  // the whole block, header included
  std::size_t alignment = 0;
  std::uint64_t epoch = 0;  // the device epoch of the registration
  bool registered = false;
};
static_assert(sizeof(BlockHeader) <= kHeaderBytes);

BlockHeader* headerOf(const std::byte* data) noexcept {
  return reinterpret_cast<BlockHeader*>(const_cast<std::byte*>(data) - kHeaderBytes);
}

std::mutex gNoteMutex;
std::string gNote;

void setPinnedNote(std::string note) {
  const std::lock_guard<std::mutex> lock(gNoteMutex);
  gNote = std::move(note);
}

/// Registers the block of `header` with CUDA; on failure it stays pageable and the note says why.
bool registerBlock(BlockHeader* header) noexcept {
  if (header->registered && header->epoch == deviceEpoch()) return true;
  try {
    if (!cudaAvailable()) {
      setPinnedNote("no CUDA device (" + queryDevices().status + "): images stay in pageable memory");
      return false;
    }
    const std::uint64_t epoch = deviceEpoch();
    const cudaError_t status = cudaHostRegister(header, header->blockBytes, cudaHostRegisterPortable);
    if (status != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it
      setPinnedNote(std::string("cudaHostRegister of ") + std::to_string(header->blockBytes >> 20) + " MiB failed (" +
                    cudaGetErrorString(status) + "): the image stays in pageable memory");
      return false;
    }
    header->registered = true;
    header->epoch = epoch;
    return true;
  } catch (...) {  // queryDevices' strings: out of memory at worst
    return false;
  }
}

}  // namespace

std::string pinnedMemoryNote() {
  const std::lock_guard<std::mutex> lock(gNoteMutex);
  return gNote;
}

namespace detail {

std::byte* HostAllocator::allocate(std::size_t n) {
  const bool pageAligned = memory_ == HostMemory::Pinned || n + kHeaderBytes >= kPageAlignedFrom;
  const std::size_t alignment = pageAligned ? kPage : kHeaderBytes;
  std::size_t blockBytes = n + kHeaderBytes;
  if (pageAligned) blockBytes = (blockBytes + kPage - 1) / kPage * kPage;  // no page shared with another block
  auto* block = static_cast<std::byte*>(::operator new (blockBytes, std::align_val_t{alignment}));
  auto* header = new (block) BlockHeader{blockBytes, alignment, 0, false};
  if (memory_ == HostMemory::Pinned) registerBlock(header);
  return block + kHeaderBytes;
}

void HostAllocator::deallocate(std::byte* p, std::size_t) noexcept {
  if (p == nullptr) return;
  BlockHeader* header = headerOf(p);
  const std::size_t alignment = header->alignment;
  // After a device reset the registration is gone with the context: nothing to undo.
  if (header->registered && header->epoch == deviceEpoch()) cudaHostUnregister(header);
  header->~BlockHeader();
  ::operator delete (static_cast<void*>(header), std::align_val_t{alignment});
}

bool HostAllocator::isPinned(const std::byte* data) noexcept {
  if (data == nullptr) return false;
  const BlockHeader* header = headerOf(data);
  return header->registered && header->epoch == deviceEpoch();
}

bool HostAllocator::pinInPlace(std::byte* data) noexcept {
  if (data == nullptr) return false;
  BlockHeader* header = headerOf(data);
  if (header->alignment != kPage) return false;
  return registerBlock(header);
}

}  // namespace detail

bool Image::pin() {
  if (pinned()) return true;
  if (!data_.empty() && detail::HostAllocator::pinInPlace(data_.data())) {
    // Keep the block; later allocations ask for pinned memory too.
    data_ = std::vector<std::byte, detail::HostAllocator>(std::move(data_), detail::HostAllocator(HostMemory::Pinned));
    return true;
  }
  auto fresh = std::vector<std::byte, detail::HostAllocator>(detail::HostAllocator(HostMemory::Pinned));
  if (!data_.empty()) fresh.assign(data_.begin(), data_.end());
  data_ = std::move(fresh);
  return data_.empty() ? memory() == HostMemory::Pinned : pinned();
}

void validateImageShape(int width, int height, int channels) {
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                " is empty: both sides must be at least 1 pixel");
  if (width > kMaxImageDimension || height > kMaxImageDimension)
    throw std::invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                " exceeds the limit of " + std::to_string(kMaxImageDimension) + " pixels a side");
  if (std::int64_t{width} * height > kMaxImagePixels)
    throw std::invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                " exceeds the limit of " + std::to_string(kMaxImagePixels / (1 << 20)) + " megapixels");
  if (channels < 1 || channels > kMaxChannels)
    throw std::invalid_argument(std::to_string(channels) + " channels are not supported: use 1 to " +
                                std::to_string(kMaxChannels));
}

Image::Image(int width, int height, int channels, PixelType type, HostMemory memory)
    : width_(width), height_(height), channels_(channels), type_(type), data_(detail::HostAllocator(memory)) {
  validateImageShape(width, height, channels);
  data_.resize(static_cast<std::size_t>(width) * height * channels * bytesPerSample(type), std::byte{0});
}

Image Image::uninitialized(int width, int height, int channels, PixelType type) {
  validateImageShape(width, height, channels);
  Image image;
  image.data_.resize(static_cast<std::size_t>(width) * height * channels * bytesPerSample(type));  // not zeroed
  image.width_ = width;
  image.height_ = height;
  image.channels_ = channels;
  image.type_ = type;
  return image;
}

void Image::reshape(int width, int height, int channels, PixelType type) {
  validateImageShape(width, height, channels);
  const std::size_t bytes = static_cast<std::size_t>(width) * height * channels * bytesPerSample(type);
  if (bytes > data_.capacity())  // no copy of samples about to be overwritten; the memory kind stays
    data_ = std::vector<std::byte, detail::HostAllocator>(data_.get_allocator());
  data_.resize(bytes, std::byte{0});
  width_ = width;
  height_ = height;
  channels_ = channels;
  type_ = type;
}

std::string describeImage(int width, int height, int channels, PixelType type) {
  static constexpr const char* kLayouts[] = {"", "gray", "2-channel", "RGB", "RGBA"};
  return std::to_string(width) + "x" + std::to_string(height) + " " +
         (channels >= 1 && channels <= 4 ? kLayouts[channels] : "?") + " " + std::string(toString(type));
}

std::string Image::describe() const { return describeImage(width_, height_, channels_, type_); }

namespace {

template <class Src, class Dst>
void convertSamples(std::span<const Src> src, std::span<Dst> dst) {
  constexpr bool narrowing = std::is_integral_v<Dst> && (std::is_floating_point_v<Src> || sizeof(Src) > sizeof(Dst));
  if constexpr (narrowing && std::is_integral_v<Src>) {  // u16 -> u8
    std::transform(src.begin(), src.end(), dst.begin(), [](Src v) { return static_cast<Dst>(std::min<Src>(v, 255)); });
  } else if constexpr (narrowing) {
    std::transform(src.begin(), src.end(), dst.begin(), [](Src v) {
      constexpr double top = static_cast<double>(std::numeric_limits<Dst>::max());
      if (!(v == v)) return Dst{0};  // NaN
      return static_cast<Dst>(std::clamp<double>(std::nearbyint(static_cast<double>(v)), 0.0, top));
    });
  } else {
    std::transform(src.begin(), src.end(), dst.begin(), [](Src v) { return static_cast<Dst>(v); });
  }
}

}  // namespace

Image Image::convertedTo(PixelType type, HostMemory memory) const {
  if (type == type_) {
    Image same(width_, height_, channels_, type_, memory);
    std::copy(data_.begin(), data_.end(), same.data_.begin());
    return same;
  }
  Image out(width_, height_, channels_, type, memory);
  visitAnySampleType(type_, [&](auto src) {
    visitAnySampleType(type, [&](auto dst) {
      using S = decltype(src);
      using D = decltype(dst);
      convertSamples<S, D>(samples<S>(), out.samples<D>());
    });
  });
  return out;
}

Image Image::channel(int c) const {
  if (c < 0 || c >= channels_)
    throw std::out_of_range("channel " + std::to_string(c) + " of a " + std::to_string(channels_) + "-channel image");
  Image out(width_, height_, 1, type_);
  const std::size_t bytes = bytesPerSample(type_);
  for (std::size_t i = 0; i < pixelCount(); ++i)
    std::copy_n(data_.data() + (i * channels_ + c) * bytes, bytes, out.data_.data() + i * bytes);
  return out;
}

/// Sample (x, y, c) of any host image as a double.
double sampleAt(const Image& img, int x, int y, int c) {
  switch (img.type()) {
    case PixelType::U8:
      return img.at<std::uint8_t>(x, y, c);
    case PixelType::F32:
      return img.at<float>(x, y, c);
    case PixelType::F64:
      return img.at<double>(x, y, c);
    case PixelType::U16:
      return img.at<std::uint16_t>(x, y, c);
  }
  return 0;
}

/// Stores v at (x, y, c): u8 rounded to nearest (ties to even) and saturated, NaN as 0.
void storeSample(Image& img, int x, int y, int c, double v) {
  switch (img.type()) {
    case PixelType::U8:
      img.at<std::uint8_t>(x, y, c) =
          static_cast<std::uint8_t>(std::isnan(v) ? 0.0 : std::clamp(std::nearbyint(v), 0.0, 255.0));
      return;
    case PixelType::F32:
      img.at<float>(x, y, c) = static_cast<float>(v);
      return;
    case PixelType::F64:
      img.at<double>(x, y, c) = v;
      return;
    case PixelType::U16:
      img.at<std::uint16_t>(x, y, c) =
          static_cast<std::uint16_t>(std::isnan(v) ? 0.0 : std::clamp(std::nearbyint(v), 0.0, 65535.0));
      return;
  }
}

}  // namespace gpulab
