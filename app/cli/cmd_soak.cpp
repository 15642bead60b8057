// gpulab-cli soak: what `gpulab-cli filter` does, many times in one process, with the process's
// memory watched. Each run loads a photo from disk, makes the next registered operation with its
// default parameters (a small value where one is required: radius 2, a 3x3 kernel), runs it on a fresh GPU context
// (upload, filter, download) or on the CPU, and saves the result; the host's resident set (/proc/self/statm) and the
// GPU's used memory (cudaMemGetInfo through deviceMemory) are sampled after every run.
//
//   gpulab-cli soak --runs 1000                      # the GPU when there is one
//   gpulab-cli soak --runs 50 --device cpu --size 160x120
//
// The report gives start, after warm-up, end and peak of both, and the verdict: memory is flat when
// neither grew by more than its bound (--max-host-growth-mib, --max-gpu-growth-mib) from the end of
// the warm-up (the first tenth of the runs, at least 5: allocator pools, cuFFT plans, OpenCV's
// thread pool and the copy ceiling settle there) to the end. Exit 1 when it is not flat.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli_parse.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/filters/kernel_file.hpp"
#include "gpulab/filters/registry.hpp"
#include "gpulab/filters/sample_depth.hpp"
#include "gpulab/io/image_io.hpp"
#include "gpulab/measure/harness.hpp"

namespace gpulab::cli {

namespace {

struct SoakArgs {
  int runs = 1000;
  std::string size = "512x384";
  std::string device;
  std::string ops;  // empty: every registered operation
  double maxHostGrowthMiB = 16;
  double maxGpuGrowthMiB = 8;
};

constexpr double kMiB = 1024.0 * 1024.0;

/// The resident set of this process, in bytes.
double residentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

/// A photo-like RGB test image: gradients, edges and a little deterministic noise.
Image testPhoto(int width, int height) {
  Image img(width, height, 3, PixelType::U8);
  auto* p = reinterpret_cast<unsigned char*>(img.data());
  unsigned state = 12345;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      state = state * 1664525u + 1013904223u;
      const int noise = static_cast<int>(state >> 28) - 8;
      const bool square = ((x / 17) + (y / 13)) % 2 == 0;
      const int base[3] = {x * 255 / std::max(1, width - 1), y * 255 / std::max(1, height - 1), square ? 200 : 40};
      for (int c = 0; c < 3; ++c)
        p[(static_cast<std::size_t>(y) * width + x) * 3 + c] =
            static_cast<unsigned char>(std::clamp(base[c] + noise, 0, 255));
    }
  return img;
}

/// One memory series: the value after warm-up, the end and the peak.
struct Series {
  std::vector<double> samples;
  double start() const { return samples.front(); }
  double end() const { return samples.back(); }
  double peak() const { return *std::max_element(samples.begin(), samples.end()); }
  double growthAfter(std::size_t warmup) const { return end() - samples[std::min(warmup, samples.size() - 1)]; }
};

bool report(const char* what, const Series& s, std::size_t warmup, double boundMiB) {
  const double growth = s.growthAfter(warmup) / kMiB;
  std::printf(
      "%s: start %.1f MiB, after warm-up %.1f MiB, end %.1f MiB, peak %.1f MiB; growth after warm-up %+.2f MiB "
      "(bound %.0f MiB)\n",
      what, s.start() / kMiB, s.samples[std::min(warmup, s.samples.size() - 1)] / kMiB, s.end() / kMiB, s.peak() / kMiB,
      growth, boundMiB);
  return growth <= boundMiB;
}

void run(const SoakArgs& a) {
  if (a.runs < 1) throw UsageError("--runs " + std::to_string(a.runs) + " is not allowed: use 1 or more");
  const auto [width, height] = asUsage([&] { return parseSize(a.size); });
  if (width < 8 || height < 8 || width > 8192 || height > 8192)
    throw UsageError("--size " + a.size + " is not allowed: use 8 to 8192 pixels a side");
  const bool gpuRun = useGpu(a.device);

  // The operations, each with its defaults; a required kernel gets a 3x3 smoothing kernel.
  std::vector<std::pair<const OperationInfo*, ParamValues>> ops;
  for (const OperationInfo& info : imageOperations()) {
    if (!a.ops.empty() && ("," + a.ops + ",").find("," + info.name + ",") == std::string::npos) continue;
    ParamValues values;
    for (const ParamInfo& p : info.params) {
      if (!p.defaultValue.empty()) continue;
      switch (p.kind) {  // a value the user must give: a small one in range
        case ParamInfo::Kind::Kernel:
          values[p.name] = formatKernelText(parseKernelText("1 2 1\n2 4 2\n1 2 1"));
          break;
        case ParamInfo::Kind::Integer:
          values[p.name] = std::to_string(static_cast<long long>(std::clamp(2.0, p.minimum, p.maximum)));
          break;
        case ParamInfo::Kind::Number:
          values[p.name] = std::to_string(std::clamp(1.0, p.minimum, p.maximum));
          break;
        case ParamInfo::Kind::Choice:
          values[p.name] = p.choices.front();
          break;
        case ParamInfo::Kind::Flag:
          values[p.name] = "false";
          break;
      }
    }
    ops.emplace_back(&info, values);
  }
  if (ops.empty()) throw UsageError("--ops '" + a.ops + "' names no operation (" + operationNames() + ")");

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpulab-soak-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir};
  const std::filesystem::path photo = dir / "photo.png";
  saveImage(testPhoto(width, height), photo);

  const std::size_t warmup = static_cast<std::size_t>(std::max(5, a.runs / 10));
  std::printf(
      "soak: %d filter runs over %zu operations on the %s, a %dx%d RGB u8 photo loaded and the result saved "
      "each time; warm-up %zu runs\n",
      a.runs, ops.size(), gpuRun ? selectedDeviceLabel().c_str() : cpuLabel().c_str(), width, height,
      std::min<std::size_t>(warmup, static_cast<std::size_t>(a.runs)));
  Series host, gpuUsed;
  const auto sample = [&] {
    host.samples.push_back(residentBytes());
    if (gpuRun) {
      const MemoryUsage m = deviceMemory();
      gpuUsed.samples.push_back(static_cast<double>(m.total - m.free));
    }
  };
  sample();  // before the first run
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < a.runs; ++i) {
    const auto& [info, values] = ops[static_cast<std::size_t>(i) % ops.size()];
    const std::unique_ptr<Operation> op = info->make(values);
    const FilterInput input = prepareFilterInput(*op, loadImage(photo));
    const std::unique_ptr<GpuContext> gpu = gpuContextIf(gpuRun);  // one per run, as one CLI process has
    MeasureSetup setup;
    setup.wantGpu = gpuRun;
    setup.wantCpu = !gpuRun;
    setup.gpu = gpu.get();
    setup.withCeiling = false;
    MeasureResult result = measure(*op, input.image, setup, MeasurePolicy::once());
    Image out = finishFilterResult(std::move(gpuRun ? result.gpuOutput : result.cpuOutput), input);
    const bool png = out.type() == PixelType::U8 || out.type() == PixelType::U16;
    saveImage(out, dir / (png ? "out.png" : "out.npy"));
    sample();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("soak: %d runs in %.1f s (%.1f ms a run)\n", a.runs, seconds, 1000.0 * seconds / a.runs);
  bool flat = report("host RSS", host, warmup, a.maxHostGrowthMiB);
  if (gpuRun) flat = report("GPU memory used", gpuUsed, warmup, a.maxGpuGrowthMiB) && flat;
  std::printf("verdict: %s\n", flat ? "flat (no growth beyond the bounds after warm-up)"
                                    : "GROWING: memory grew beyond its bound after warm-up");
  std::fflush(stdout);
  if (!flat) throw std::runtime_error("memory grew during the soak (see the lines above)");
}

}  // namespace

void registerSoak(CLI::App& app) {
  auto a = std::make_shared<SoakArgs>();
  auto* cmd = app.add_subcommand("soak", "Many filter runs in one process, with host and GPU memory watched");
  cmd->add_option("--runs", a->runs, "Filter runs (default 1000)");
  cmd->add_option("--size", a->size, "The test photo's size, WxH (default 512x384)");
  cmd->add_option("--device", a->device, "gpu | cpu (default: the GPU when there is one)");
  cmd->add_option("--ops", a->ops, "Comma-separated operations (default: every registered one)");
  cmd->add_option("--max-host-growth-mib", a->maxHostGrowthMiB, "Allowed host RSS growth after warm-up (default 16)");
  cmd->add_option("--max-gpu-growth-mib", a->maxGpuGrowthMiB, "Allowed GPU memory growth after warm-up (default 8)");
  cmd->callback([a] { run(*a); });
}

}  // namespace gpulab::cli
