// Writes a photo-like test image: a smooth sky-to-ground gradient, soft blobs of colour, hard-edged
// shapes and sensor-like noise, so codecs and filters see what a camera's file holds (a constant or
// random image would flatter or punish them). No dependencies:
//   g++ -O2 -std=c++20 -o make-test-photo scripts/make-test-photo.cpp
//   ./make-test-photo 6000 4000 1 photo.ppm        # 8-bit binary PPM (gpulab reads it)
//   ./make-test-photo 6000 4000 1 photo16.npy      # uint16 (H, W, 3) .npy
// then e.g. `gpulab-cli batch --op none --in photo.ppm --out dir --format jpg` for a JPEG.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: make-test-photo WIDTH HEIGHT SEED OUT.ppm|OUT.npy\n");
    return 2;
  }
  const int w = std::atoi(argv[1]), h = std::atoi(argv[2]);
  const unsigned seed = static_cast<unsigned>(std::atoi(argv[3]));
  const std::string out = argv[4];
  const bool npy = out.size() > 4 && out.substr(out.size() - 4) == ".npy";
  const double top = npy ? 65535.0 : 255.0;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  struct Blob {
    double x, y, r, c[3];
  };
  std::vector<Blob> blobs(12);
  for (Blob& b : blobs)
    b = {u(rng) * w, u(rng) * h, (0.05 + 0.2 * u(rng)) * w, {u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5}};
  struct Shape {
    double x0, y0, x1, y1, c[3];
    bool round;
  };
  std::vector<Shape> shapes(25);
  for (Shape& s : shapes) {
    const double cx = u(rng) * w, cy = u(rng) * h, sx = (0.02 + 0.08 * u(rng)) * w, sy = (0.02 + 0.08 * u(rng)) * h;
    s = {cx - sx, cy - sy, cx + sx, cy + sy, {u(rng), u(rng), u(rng)}, u(rng) < 0.5};
  }
  std::normal_distribution<double> noise(0.0, 2.5 / 255.0);
  std::vector<std::uint8_t> bytes8;
  std::vector<std::uint16_t> bytes16;
  if (npy)
    bytes16.resize(std::size_t(w) * h * 3);
  else
    bytes8.resize(std::size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double t = double(y) / h;
      double c[3] = {0.35 + 0.3 * t, 0.5 + 0.1 * t, 0.85 - 0.5 * t};  // sky to ground
      for (const Blob& b : blobs) {
        const double d2 = ((x - b.x) * (x - b.x) + (y - b.y) * (y - b.y)) / (b.r * b.r);
        const double g = std::exp(-d2);
        for (int k = 0; k < 3; ++k) c[k] += 0.4 * b.c[k] * g;
      }
      for (const Shape& s : shapes) {
        bool inside = x >= s.x0 && x < s.x1 && y >= s.y0 && y < s.y1;
        if (inside && s.round) {
          const double nx = (x - (s.x0 + s.x1) / 2) / ((s.x1 - s.x0) / 2),
                       ny = (y - (s.y0 + s.y1) / 2) / ((s.y1 - s.y0) / 2);
          inside = nx * nx + ny * ny < 1;
        }
        if (inside)
          for (int k = 0; k < 3; ++k) c[k] = 0.3 * c[k] + 0.7 * s.c[k] * (0.8 + 0.2 * std::sin(x * 0.05 + y * 0.03));
      }
      for (int k = 0; k < 3; ++k) {
        const double v = std::clamp(c[k] + noise(rng), 0.0, 1.0) * top;
        const std::size_t i = (std::size_t(y) * w + x) * 3 + k;
        if (npy)
          bytes16[i] = static_cast<std::uint16_t>(std::lround(v));
        else
          bytes8[i] = static_cast<std::uint8_t>(std::lround(v));
      }
    }
  FILE* f = std::fopen(out.c_str(), "wb");
  if (!f) {
    std::perror(out.c_str());
    return 1;
  }
  if (npy) {
    std::string dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (" + std::to_string(h) + ", " +
                       std::to_string(w) + ", 3), }";
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    std::fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    const unsigned char len[2] = {static_cast<unsigned char>(dict.size() & 0xFF),
                                  static_cast<unsigned char>(dict.size() >> 8)};
    std::fwrite(len, 1, 2, f);
    std::fwrite(dict.data(), 1, dict.size(), f);
    std::fwrite(bytes16.data(), 2, bytes16.size(), f);
  } else {
    std::fprintf(f, "P6\n%d %d\n255\n", w, h);
    std::fwrite(bytes8.data(), 1, bytes8.size(), f);
  }
  return std::fclose(f) == 0 ? 0 : 1;
}
