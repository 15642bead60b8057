// gpulab-cli lab matmul-multi [--gpus all|0,1|N] [--sizes 16384] [--dtype f32|f64] [--reps N]
//   [--warmup N] [--json FILE]
// The rows of A split across the GPUs, B copied to each, cuBLAS per GPU in its own thread, C
// gathered; the first GPU alone is the baseline. Prints one row per configuration, the speedup and
// efficiency with and without copies, what the bus allowed (each GPU's upload rate while all upload
// at once, against one GPU alone) and whether the split product equals the one-GPU product.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/matmul_multi.hpp"
#include "lab_multi.hpp"

namespace gpulab::cli {

namespace {

std::string rowsText(const std::vector<int>& rows) {
  std::string text;
  for (int r : rows) text += (text.empty() ? "" : "+") + std::to_string(r);
  return text;
}

std::string gbpsText(const std::vector<double>& gbps) {
  std::string text;
  char cell[32];
  for (double g : gbps) {
    std::snprintf(cell, sizeof cell, "%s%.1f", text.empty() ? "" : ", ", g);
    text += cell;
  }
  return text;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

void printRun(const char* name, const lab::MultiGpuMatmulRun& r) {
  std::string devices;
  for (int d : r.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  std::printf("%-8s %-8s %-12s %10.2f %8.2f %9.2f %9.2f %9.2f %11.2f %8.2f  %s\n", name, devices.c_str(),
              rowsText(r.rows).c_str(), r.computeMs, r.tflops(), r.hostComputeMs, r.uploadMs, r.downloadMs,
              r.withCopiesMs, r.tflopsWithCopies(), gbpsText(r.uploadGbps).c_str());
}

nlohmann::json toJson(const lab::MultiGpuMatmulRun& r) {
  return {{"devices", r.devices},
          {"label", r.label},
          {"rows", r.rows},
          {"reps", r.reps},
          {"compute_ms", r.computeMs},
          {"compute_min_ms", r.computeMinMs},
          {"compute_max_ms", r.computeMaxMs},
          {"host_compute_ms", r.hostComputeMs},
          {"with_copies_ms", r.withCopiesMs},
          {"upload_ms", r.uploadMs},
          {"download_ms", r.downloadMs},
          {"upload_gbps_per_gpu_concurrent", r.uploadGbps},
          {"tflops", r.tflops()},
          {"tflops_with_copies", r.tflopsWithCopies()}};
}

}  // namespace

void runMatmulMulti(const MatmulMultiOptions& o) {
  const DeviceReport report = queryDevices();
  if (!report.available()) throw std::runtime_error("lab matmul-multi needs a CUDA device: " + report.status);
  const std::vector<int> devices =
      asUsage([&] { return parseGpuList(o.gpus, static_cast<int>(report.devices.size())); });
  const lab::DType dtype = asUsage([&] { return parseEnumOrThrow<lab::DType>(o.dtype); });
  const std::vector<lab::SizePoint> points =
      asUsage([&] { return lab::parseSizeList(o.sizes.empty() ? std::string("16384") : o.sizes); });
  std::vector<lab::MatmulShape> shapes;
  for (const lab::SizePoint& p : points) shapes.push_back(asUsage([&] { return lab::matmulShape(p); }));

  std::ofstream file;  // opened first: a bad path fails before minutes of measuring
  if (!o.jsonPath.empty()) {
    file.open(o.jsonPath);
    if (!file) throw std::runtime_error("cannot write '" + o.jsonPath + "'");
  }
  std::printf(
      "lab matmul-multi, %s, median of %d runs after %d warm-up; cuBLAS %s, CUBLAS_DEFAULT_MATH (no TF32); rows of A "
      "split across %s, B copied to each, C gathered\n",
      o.dtype.c_str(), o.reps, o.warmup, dtype == lab::DType::F32 ? "SGEMM" : "DGEMM", deviceLabels(devices).c_str());
  if (devices.size() == 1) std::printf("note: one GPU chosen: the split is the baseline itself\n");

  nlohmann::json doc = {{"experiment", "matmul-multi"},
                        {"dtype", o.dtype},
                        {"reps", o.reps},
                        {"warmup", o.warmup},
                        {"devices", devices},
                        {"device_labels", deviceLabels(devices)},
                        {"cuda_runtime", formatCudaVersion(report.runtimeVersion)}};
  doc["runs"] = nlohmann::json::array();
  doc["records"] = nlohmann::json::array();
  std::string mismatch;
  for (const lab::MatmulShape& shape : shapes) {
    const lab::MultiGpuMatmulReport r =
        lab::runMultiGpuMatmul(devices, shape, dtype, {.reps = o.reps, .warmup = o.warmup});
    std::printf("\n%dx%dx%d (MxNxK), %.3g TFLOP per product\n", shape.m, shape.n, shape.k, shape.flops() / 1e12);
    std::printf("%-8s %-8s %-12s %10s %8s %9s %9s %9s %11s %8s  %s\n", "config", "gpus", "rows", "compute_ms",
                "TFLOP/s", "host_ms", "upload", "download", "w/copies_ms", "TFLOP/s",
                "upload GB/s per GPU (all at once)");
    printRun("one", r.one);
    printRun("split", r.split);
    const std::size_t n = devices.size();
    std::printf(
        "speedup over one GPU: %.2fx compute only (parallel efficiency %.0f%% on %zu GPUs), %.2fx with copies "
        "(efficiency %.0f%%)\n",
        r.speedup, 100.0 * r.efficiency, n, r.speedupWithCopies, 100.0 * r.efficiencyWithCopies);
    std::printf(
        "bus: uploads of A's rows and B ran at %s GB/s per GPU while %s uploaded at once (%.1f GB/s in all); "
        "one GPU alone: %s GB/s\n",
        gbpsText(r.split.uploadGbps).c_str(), n == 1 ? "one GPU" : "all the GPUs", sum(r.split.uploadGbps),
        gbpsText(r.one.uploadGbps).c_str());
    std::printf("check: %s: %s (max |split - one| = %.3g; %zu of %zu elements outside, %zu not bit-identical)\n",
                r.toleranceText().c_str(), r.allclose ? "yes" : "NO", r.maxAbsDiff, r.mismatches,
                static_cast<std::size_t>(shape.m) * shape.n, r.differing);
    nlohmann::json run = {{"m", shape.m},
                          {"n", shape.n},
                          {"k", shape.k},
                          {"one", toJson(r.one)},
                          {"split", toJson(r.split)},
                          {"speedup", r.speedup},
                          {"speedup_with_copies", r.speedupWithCopies},
                          {"efficiency", r.efficiency},
                          {"efficiency_with_copies", r.efficiencyWithCopies},
                          {"check",
                           {{"tolerance", r.toleranceText()},
                            {"rtol", r.rtol},
                            {"atol", r.atol},
                            {"allclose", r.allclose},
                            {"max_abs_diff", r.maxAbsDiff},
                            {"mismatches", r.mismatches},
                            {"not_bit_identical", r.differing}}}};
    doc["runs"].push_back(run);
    for (const lab::Record& rec : r.records())
      doc["records"].push_back({{"op", rec.experiment},
                                {"variant", rec.variant},
                                {"impl", rec.impl},
                                {"dtype", rec.dtype},
                                {"sizes", rec.sizes},
                                {"with_copies", rec.withCopies},
                                {"median_ms", rec.medianMs},
                                {"min_ms", rec.minMs},
                                {"max_ms", rec.maxMs},
                                {"reps", rec.reps},
                                {"upload_ms", rec.uploadMs},
                                {"download_ms", rec.downloadMs},
                                {"gflops", rec.gflops},
                                {"params", rec.params},
                                {"device", rec.device}});
    if (!r.allclose && mismatch.empty())
      mismatch = "the split product differs from the one-GPU product beyond " + r.toleranceText();
  }
  if (!o.jsonPath.empty()) {
    file << doc.dump(2) << "\n";
    if (!file) throw std::runtime_error("writing '" + o.jsonPath + "' failed");
  }
  if (!mismatch.empty()) throw std::runtime_error(mismatch);
}

}  // namespace gpulab::cli
