#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/ (small valid and near-valid inputs). Needs only Python;
JPEG and TIFF seeds come from ImageMagick's `convert` when it is there. Run from anywhere; it
rewrites the seed_* files and leaves files the fuzzer merged in (--merge) alone."""
import os, struct, subprocess, tempfile, zlib

here = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    path = os.path.join(here, target, "corpus", "seed_" + name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# -- images: one byte choosing the extension (see fuzz_image.cpp), then the file
EXT = {".png": 0, ".jpg": 1, ".bmp": 2, ".tga": 3, ".pgm": 4, ".ppm": 5, ".pnm": 6, ".npy": 7, ".bin": 8}


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png(w, h, colour, depth, rows, text=None, palette=None):
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0))
    if palette:
        out += chunk(b"PLTE", palette)
    for k, v in (text or {}).items():
        out += chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("latin-1"))
    raw = b"".join(b"\0" + r for r in rows)
    return out + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def image(name, ext, data):
    put("image", name, bytes([EXT[ext]]) + data)


view = {"gpulab.center": "-0.743643887037151,0.13182590420533", "gpulab.width": "0.005",
        "gpulab.iterations": "1348", "gpulab.size": "3x2", "gpulab.palette": "classic"}
image("png_gray", ".png", png(3, 2, 0, 8, [b"\x00\x80\xff", b"\x10\x20\x30"]))
image("png_rgb_text", ".png", png(2, 2, 2, 8, [bytes(range(6)), bytes(range(6, 12))], view))
image("png_rgba", ".png", png(2, 1, 6, 8, [bytes(range(8))]))
image("png_gray_alpha16", ".png", png(1, 2, 4, 16, [bytes(4), bytes([255] * 4)]))
image("png_palette", ".png", png(4, 1, 3, 2, [b"\x1b"], palette=b"\x00\x00\x00\xff\x00\x00\x00\xff\x00\x00\x00\xff"))
# BMP 24-bit, 2x2 (rows padded to 4 bytes)
pix = b"\x00\x00\xff\x00\xff\x00\x00\x00" + b"\xff\x00\x00\xff\xff\xff\x00\x00"
bmp = b"BM" + struct.pack("<IHHI", 54 + len(pix), 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 2, 2, 1, 24, 0, len(pix), 0, 0, 0, 0) + pix
image("bmp24", ".bmp", bmp)
# BMP 8-bit with a 2-entry palette (1x2), 16-bit 5-5-5 (2x1), 32-bit bit fields in a V4 header (1x1), OS/2 1 header 24-bit
pal = b"\x00\x00\x00\x00\xff\xff\xff\x00"
image("bmp8_palette", ".bmp", b"BM" + struct.pack("<IHHI", 62 + 8, 0, 0, 62) + struct.pack("<IiiHHIIiiII", 40, 1, 2, 1, 8, 0, 8, 0, 0, 2, 0) + pal + b"\x01\0\0\0\x00\0\0\0")
image("bmp16", ".bmp", b"BM" + struct.pack("<IHHI", 58, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 2, 1, 1, 16, 0, 4, 0, 0, 0, 0) + b"\x1f\x00\xe0\x7f")
v4 = struct.pack("<IiiHHIIiiII", 108, 1, -1, 1, 32, 3, 4, 0, 0, 0, 0) + struct.pack("<IIII", 0xff0000, 0xff00, 0xff, 0xff000000) + bytes(52)
image("bmp32_bitfields_v4", ".bmp", b"BM" + struct.pack("<IHHI", 14 + len(v4) + 4, 0, 0, 14 + len(v4)) + v4 + b"\x10\x20\x30\x80")
image("bmp_os2", ".bmp", b"BM" + struct.pack("<IHHI", 26 + 4, 0, 0, 26) + struct.pack("<IHHHH", 12, 1, 1, 1, 24) + b"\x01\x02\x03\x00")
image("tga_palette", ".tga", struct.pack("<BBBHHBHHHHBB", 0, 1, 1, 0, 2, 24, 0, 0, 2, 1, 8, 0) + b"\x00\x00\xff\xff\x00\x00" + b"\x00\x01")
image("tga_rle_rgba_top", ".tga", struct.pack("<BBBHHBHHHHBB", 0, 0, 10, 0, 0, 0, 0, 0, 3, 2, 32, 0x28) + b"\x82\x01\x02\x03\x04\x02" + bytes(12))
image("tga_rgb", ".tga", struct.pack("<BBBHHBHHHHBB", 0, 0, 2, 0, 0, 0, 0, 0, 2, 2, 24, 0) + bytes(range(12)))
image("tga_rle_gray", ".tga", struct.pack("<BBBHHBHHHHBB", 0, 0, 11, 0, 0, 0, 0, 0, 3, 1, 8, 0) + b"\x82\x7f")
image("pgm_p5", ".pgm", b"P5\n3 2\n255\n" + bytes(range(6)))
image("pgm_p5_16", ".pgm", b"P5 2 1 65535 " + b"\x12\x34\xff\xff")
image("ppm_p6", ".ppm", b"P6\n# comment\n2 1\n255\n" + bytes(range(6)))
image("pnm_unnamed", ".bin", b"P5\n1 1\n255\n\x42")
image("ppm_p6_16_maxval1000", ".ppm", b"P6\n1 1\n1000\n" + b"\x03\xe8\x01\xf4\x00\x00")
image("png_rgb16", ".png", png(3, 1, 2, 16, [bytes(range(18))]))
# Adam7-interlaced 1x1 gray: only the first pass holds a (filter byte, pixel) row
image("png_interlaced", ".png", b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 1))
      + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))
image("tga_named_other", ".tga", b"P6\n1 1\n255\n\x01\x02\x03")

# -- .npy
def npy(descr, shape, body, version=1):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode()


put("npy", "u8_2x3", npy("|u1", "(2, 3)", None) + bytes(range(6)))
put("npy", "f4_2x2x3", npy("<f4", "(2, 2, 3)", None) + struct.pack("<12f", *range(12)))
put("npy", "f8_1x1", npy("<f8", "(1, 1)", None) + struct.pack("<d", 3.5))
put("npy", "f4_v2", npy("<f4", "(1, 2)", None, 2) + struct.pack("<2f", 1, 2))
put("npy", "u8_trailing", npy("|u1", "(1, 2, 1)", None) + b"\x01\x02extra")
image("npy_f4", ".npy", npy("<f4", "(2, 2)", None) + struct.pack("<4f", 0, 0.5, 1, -1))

# -- kernel files
put("kernel_text", "box3", "1 1 1\n1 1 1\n1 1 1\n")
put("kernel_text", "sobel_commas", "# Sobel x\n-1, 0, +1\n-2,0,2\t# row two\r\n-1 0 1\n")
put("kernel_text", "exponents", "1e-3 2.5E+2\n-0.0 .5\n")
put("kernel_text", "npy_f8", npy("<f8", "(2, 2)", None) + struct.pack("<4d", 1, 2, 3, 4))
put("kernel_text", "npy_u8", npy("|u1", "(1, 1)", None) + b"\x01")

# -- PNG view fields, one a line (see fuzz_png_view.cpp)
keys = ["center", "width", "iterations", "precision", "julia", "size", "supersample", "palette",
        "gradient", "offset", "density", "interior", "kind", "Software"]
def fields(**kw):
    return "\n".join(kw.get(k, "-") for k in keys)
put("png_view", "minimal", fields(center="-0.5,0", width="3", iterations="256"))
put("png_view", "full", fields(center="-0.743643887037151,0.13182590420533", width="0.005", iterations="1348",
                                precision="auto", julia="off", size="640x360", supersample="2", palette="custom",
                                gradient="0:#000000,0.5:#ff8000,1:#ffffff", offset="0.25", density="1.5",
                                interior="#102030", kind="mandelbrot", Software="gpulab"))
put("png_view", "julia_deep", fields(center="0.1,-0.2", width="1e-20", iterations="5000", precision="perturbation",
                                      julia="-0.8,0.156", size="64x48"))
put("png_view", "deep", fields(center="-1.7499999999999999999999999999999999999,0", width="3.2e-1000",
                                iterations="100000", precision="auto", size="32x32"))

# -- CLI parsers: one byte choosing the parser (see fuzz_cli_numbers.cpp), then the text
cli = [(0, "-0.743643887037151,0.13182590420533"), (0, " 1e-5 , -2E+3"), (1, "-0.8,0.156"),
       (2, "1e-500"), (2, "0.005"), (3, "classic"), (3, "0:#000000,0.5:#ff8000,1:#ffffff"),
       (4, "#a0b1c2"), (5, "32..4096"), (5, "64K,1M,33x100x7"), (6, "1920x1080"), (7, "auto"),
       (7, "100000"), (8, "half"), (8, "0.25"), (9, "+1.5e300"), (9, "-42"), (10, "-000123.4500e-7"),
       (11, "reflect101"), (11, "float32"), (12, "-0.5,0\n3\n64x48\nauto"), (12, "0,0\n1e-300\n8x8\n500")]
for i, (which, text) in enumerate(cli):
    put("cli_numbers", "%02d" % i, bytes([which]) + text.encode())

# -- JPEG and TIFF through ImageMagick, when present
with tempfile.TemporaryDirectory() as tmp:
    for name, ext, args in [("jpg_baseline", ".jpg", ["-quality", "50"]),
                            ("jpg_progressive_gray", ".jpg", ["-colorspace", "gray", "-interlace", "JPEG"]),
                            ("tiff", ".bin", ["-compress", "lzw"]),
                            ("jpg_restart_444", ".jpg", ["-define", "jpeg:restart-interval=1", "-sampling-factor", "1x1"]),
                            ("tiff_u16_deflate", ".bin", ["-depth", "16", "-compress", "zip"]),
                            ("tiff_packbits_gray", ".bin", ["-colorspace", "gray", "-compress", "rle"])]:
        out = os.path.join(tmp, name + (".tif" if name.startswith("tiff") else ".jpg"))
        try:
            subprocess.run(["convert", "-size", "8x6", "gradient:red-blue"] + args + [out], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            image(name, ext, open(out, "rb").read())
        except (OSError, subprocess.CalledProcessError):
            pass
