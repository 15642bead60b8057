// Measurements as JSON, the one format the CLI writes (bench, filter, fft, mandelbrot): a report
// header with what the run ran on, and one row per side of each record. Every row names the gpulab
// version; a value that was not measured is null.
//
//   row fields: version, op, params {name: text}, width, height, channels, dtype, impl ("gpu" or
//   "cpu"), method, chosen (the method that side used), prepare_ms, median_ms, min_ms, max_ms, reps,
//   upload_ms, download_ms (GPU; null on the CPU), device (GPU) or threads (CPU), the rate named by
//   the work unit (gbps, gflops or giter_per_s), pct_of_copy / pct_of_ceiling (GPU), and
//   max_abs_diff_vs_cpu (GPU, when compared).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "gpulab/core/device.hpp"
#include "gpulab/measure/ceiling.hpp"
#include "gpulab/measure/record.hpp"

namespace gpulab {

/// The rows of one record: the CPU's first when it ran, then the GPU's.
nlohmann::json toJsonRows(const Measurement& m);

/// {"version", "device": {name, compute_capability, multiprocessors, total_memory_bytes} or null,
///  "copy_bandwidth_gbps": number or null, "cpu_threads", "records": []}.
nlohmann::json jsonReport(const std::optional<DeviceInfo>& device, const std::optional<CopyCeiling>& ceiling);

/// Writes `report` to `path` (pretty-printed); throws std::runtime_error naming the file on failure.
void writeJson(const nlohmann::json& report, const std::string& path);

}  // namespace gpulab
