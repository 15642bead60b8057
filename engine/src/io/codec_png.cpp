// PNG through libspng: every PNG layout read (1..16-bit gray, RGB, palette, gray + alpha, RGBA;
// transparency chunks become alpha), 8-bit files as u8 and 16-bit files as u16; written from u8 or
// u16 gray, RGB or RGBA at a level from 0 to 9 (0 stored; 1-3 fast: the UP filter and run-length
// deflate; 4-9 zlib's level with the filter chosen per row).
// The structural walk (inspect.cpp) has checked the chunks and their CRCs when decodePng runs, so
// libspng is told not to check the CRCs a second time.

#include <spng.h>
#include <zlib.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "internal/image_files.hpp"

namespace gpulab::io_detail {

namespace {

struct SpngDeleter {
  void operator()(spng_ctx* ctx) const noexcept { spng_ctx_free(ctx); }
};
using SpngContext = std::unique_ptr<spng_ctx, SpngDeleter>;

}  // namespace

Image decodePng(Bytes bytes, const std::string& name, Image reuse) {
  SpngContext ctx(spng_ctx_new(0));
  if (!ctx) throw ImageIoError("libspng could not make a decoder for " + name + " (out of memory)");
  spng_set_crc_action(ctx.get(), SPNG_CRC_USE, SPNG_CRC_USE);  // inspect.cpp checked every CRC
  spng_set_image_limits(ctx.get(), kMaxImageDimension, kMaxImageDimension);
  spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size());
  spng_ihdr ihdr{};
  if (const int err = spng_get_ihdr(ctx.get(), &ihdr); err != 0)
    throw ImageIoError(name + " is corrupt (libspng cannot read its PNG header: " + spng_strerror(err) + ")");
  checkShape(ihdr.width, ihdr.height, 1, name);
  spng_trns trns{};
  const bool hasTrns = spng_get_trns(ctx.get(), &trns) == 0;
  const bool alpha = hasTrns || ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                     ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  const bool gray = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && !alpha;
  const bool deep = ihdr.bit_depth == 16;
  const int channels = alpha ? 4 : gray ? 1 : 3;
  // libspng converts to RGBA8, RGBA16, RGB8 and G8; 16-bit gray and RGB without alpha come in
  // their own layout (SPNG_FMT_PNG, host-endian samples).
  int format = SPNG_FMT_PNG;
  if (alpha)
    format = deep ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
  else if (!deep)
    format = gray ? SPNG_FMT_G8 : SPNG_FMT_RGB8;
  Image image = std::move(reuse);
  image.reshape(static_cast<int>(ihdr.width), static_cast<int>(ihdr.height), channels,
                deep ? PixelType::U16 : PixelType::U8);
  std::size_t expected = 0;
  if (const int err = spng_decoded_image_size(ctx.get(), format, &expected); err != 0 || expected != image.sizeBytes())
    throw ImageIoError(name + " has a PNG layout gpulab cannot read (" +
                       (err != 0 ? std::string(spng_strerror(err)) : "unexpected decoded size") + ")");
  if (const int err =
          spng_decode_image(ctx.get(), image.data(), image.sizeBytes(), format, alpha ? SPNG_DECODE_TRNS : 0);
      err != 0)
    throw ImageIoError(name + " is truncated or corrupt (libspng: " + spng_strerror(err) + ")");
  return image;
}

std::string encodePng(const Image& image, int level, const std::string& name) {
  if (level < 0 || level > 9)
    throw ImageIoError("cannot save " + name + ": PNG compression level " + std::to_string(level) +
                       " is outside 0 to 9");
  SpngContext ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) throw ImageIoError("cannot save " + name + ": libspng could not make an encoder (out of memory)");
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_LEVEL, level);
  // Levels 1-3: the UP filter and zlib's run-length strategy, the fastest pair that still
  // compresses a photo well (6000x4000 blurred photo: 0.33 s, 6.6 MB; the default strategy with SUB
  // took 0.37 s for 8.4 MB, level 6 with every filter 3 s for 5.5 MB). 4-9: zlib's full search at
  // that level and libspng's adaptive choice among the five filters.
  const bool fast = level <= 3;
  spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_STRATEGY, fast && level > 0 ? Z_RLE : Z_DEFAULT_STRATEGY);
  spng_set_option(ctx.get(), SPNG_FILTER_CHOICE,
                  level == 0 ? SPNG_FILTER_CHOICE_NONE
                  : fast     ? SPNG_FILTER_CHOICE_UP
                             : SPNG_FILTER_CHOICE_ALL);
  const bool deep = image.type() == PixelType::U16;
  spng_ihdr ihdr{};
  ihdr.width = static_cast<std::uint32_t>(image.width());
  ihdr.height = static_cast<std::uint32_t>(image.height());
  ihdr.bit_depth = deep ? 16 : 8;
  ihdr.color_type = image.channels() == 1   ? SPNG_COLOR_TYPE_GRAYSCALE
                    : image.channels() == 3 ? SPNG_COLOR_TYPE_TRUECOLOR
                                            : SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  if (const int err = spng_set_ihdr(ctx.get(), &ihdr); err != 0)
    throw ImageIoError("cannot save " + name + ": PNG encoding failed (libspng: " + spng_strerror(err) + ")");
  // SPNG_FMT_PNG takes host-endian samples; libspng writes 16-bit ones big-endian, as PNG stores them.
  int err = spng_encode_image(ctx.get(), image.data(), image.sizeBytes(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
  if (err != 0)
    throw ImageIoError("cannot save " + name + ": PNG encoding failed (libspng: " + spng_strerror(err) + ")");
  std::size_t length = 0;
  const std::unique_ptr<void, decltype(&std::free)> buffer(spng_get_png_buffer(ctx.get(), &length, &err), &std::free);
  if (!buffer || err != 0)
    throw ImageIoError("cannot save " + name + ": PNG encoding failed (libspng: " + spng_strerror(err) + ")");
  return std::string(static_cast<const char*>(buffer.get()), length);
}

}  // namespace gpulab::io_detail
