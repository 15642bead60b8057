// gpulab-cli lab matmul-table|tensor-cores|linspace|axis: the course's studies (lab_course.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/course_arrays.hpp"
#include "gpulab/lab/matmul.hpp"
#include "gpulab/lab/matmul_table.hpp"
#include "lab_studies.hpp"

namespace gpulab::cli {

namespace {

constexpr const char* kStudies[] = {"matmul-table", "tensor-cores", "linspace", "axis"};

/// The common JSON header: which study, on which GPU (index, name) and CPU setting.
nlohmann::json documentFor(const std::string& study) {
  const DeviceReport devices = queryDevices();
  nlohmann::json doc = {{"study", study},
                        {"cuda_available", devices.available()},
                        {"cpu", cpuLabel()},
                        {"cpu_threads", cpuThreadSetting()},
                        {"blas_threads", lab::MatmulLab::blasThreads()}};
  if (devices.available()) {
    const DeviceInfo& d = devices.devices.at(selectedDevice());
    doc["device"] = {{"index", d.index},
                     {"name", d.name},
                     {"label", selectedDeviceLabel()},
                     {"compute_capability", d.computeCapability()}};
  } else {
    doc["device"] = nullptr;
    doc["device_status"] = devices.status;
  }
  return doc;
}

std::ofstream openJson(const std::string& path) {
  std::ofstream file;
  if (path.empty()) return file;
  file.open(path);
  if (!file) throw std::runtime_error("cannot write '" + path + "'");
  return file;
}

void writeJson(std::ofstream& file, const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return;
  file << doc.dump(2) << "\n";
  if (!file) throw std::runtime_error("writing '" + path + "' failed");
}

std::vector<lab::DType> dtypesOf(const CLI::App& cmd, const CourseCommon& c) {
  if (cmd.count("--dtype") == 0) return {lab::DType::F32, lab::DType::F64};
  return {asUsage([&] { return parseEnumOrThrow<lab::DType>(c.dtype); })};
}

void printPlace() {
  const DeviceReport devices = queryDevices();
  std::printf("GPU: %s; CPU: %s\n", devices.available() ? selectedDeviceLabel().c_str() : devices.status.c_str(),
              cpuLabel().c_str());
}

std::string orDash(double v, const char* format) {
  if (!(v > 0) && !(v < 0)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// ---------------------------------------------------------------------------------------------
// matmul-table

void matmulTable(const CLI::App& cmd, const CourseCommon& c, const CourseOptions& course) {
  lab::MatmulTableOptions o;
  o.dtypes = dtypesOf(cmd, c);
  if (cmd.count("--reps")) o.reps = c.reps;
  if (cmd.count("--warmup")) o.warmup = c.warmup;
  o.cpuLimitMs = course.cpuLimitSeconds * 1000;
  if (!c.sizes.empty()) {
    o.sizes.clear();
    for (const lab::SizePoint& p : asUsage([&] { return lab::parseSizeList(c.sizes); })) {
      if (p.size() != 1) throw UsageError("matmul-table sizes are single numbers N (N x N matrices)");
      if (p[0] > lab::kMaxMatmulDim) throw UsageError("matmul-table size " + std::to_string(p[0]) + " is too large");
      o.sizes.push_back(static_cast<int>(p[0]));
    }
  }
  asUsage([&] {
    lab::validate(o);
    return 0;
  });
  std::ofstream file = openJson(c.jsonPath);

  std::printf("matmul table (the Numba lab): C = A B, N x N, inputs uniform in [0, 1) like np.random.random\n");
  printPlace();
  std::printf(
      "GPU: median of %d after %d warm-up (CUDA events); with copies = upload A, B + compute + download C, "
      "each timed apart, pinned memory. CPU: OpenBLAS (what numpy.dot calls), %s; skipped where one run is "
      "estimated above %g s\n",
      o.reps, o.warmup, cpuLabel(lab::MatmulLab::blasThreads()).c_str(), course.cpuLimitSeconds);
  std::printf(
      "rel_err = ||C - C_cublas||_F / ||C_cublas||_F against cuBLAS of the same type; allclose = "
      "numpy.allclose(C, C_cublas) (rtol 1e-05, atol 1e-08); speedups = CPU time / this time\n\n");
  std::printf("%6s %-4s %-10s %11s %10s %10s %12s %9s %8s %10s %8s %10s %9s  %s\n", "N", "type", "impl", "compute_s",
              "upload_s", "download_s", "w/copies_s", "GFLOP/s", "speedup", "speedup_wc", "f64/f32", "rel_err",
              "allclose", "note");
  std::fflush(stdout);
  auto line = [](const lab::MatmulTableRow& r) {
    const char* type = r.dtype == lab::DType::F32 ? "f32" : "f64";
    if (!r.measured) {
      std::printf("%6d %-4s %-10s %11s %10s %10s %12s %9s %8s %10s %8s %10s %9s  %s\n", r.n, type, r.impl.c_str(), "-",
                  "-", "-", "-", "-", "-", "-", "-", "-", "-", r.note.c_str());
      return;
    }
    std::string speed = orDash(r.speedupCompute, "%.2fx");
    std::string speedWc = orDash(r.speedupWithCopies, "%.2fx");
    if (r.speedupEstimated) {
      speed += "*";
      speedWc += "*";
    }
    std::string allclose = r.allclose < 0 ? (r.isReference ? "ref" : "-") : (r.allclose ? "True" : "False");
    std::printf("%6d %-4s %-10s %11.4g %10.4g %10.4g %12.4g %9.1f %8s %10s %8s %10s %9s  %s\n", r.n, type,
                r.impl.c_str(), r.computeMs / 1000, r.uploadMs / 1000, r.downloadMs / 1000, r.withCopiesMs / 1000,
                r.gflops, speed.c_str(), speedWc.c_str(), orDash(r.f64OverF32, "%.2f").c_str(),
                r.relativeError >= 0 ? orDash(r.relativeError, "%.3e").c_str() : (r.isReference ? "ref" : "-"),
                allclose.c_str(), r.note.c_str());
  };
  std::vector<lab::MatmulTableRow> progress;
  const std::vector<lab::MatmulTableRow> rows = lab::runMatmulTable(o, {}, [&](const lab::MatmulTableRow& r) {
    // Speedups need the CPU row, which comes last in each point: print a point when it is whole.
    progress.push_back(r);
    if (!r.gpu) {
      lab::finishMatmulTable(progress);
      for (const lab::MatmulTableRow& p : progress)
        if (p.n == r.n && p.dtype == r.dtype) line(p);
      std::fflush(stdout);
    }
  });
  if (std::any_of(rows.begin(), rows.end(), [](const lab::MatmulTableRow& r) { return r.speedupEstimated; }))
    std::printf("\n(* the CPU time in that speedup is the estimate of a skipped run)\n");
  std::printf("devices: GPU rows ran on %s, CPU rows on %s\n",
              rows.empty() || !rows.front().gpu ? "-" : rows.front().device.c_str(),
              cpuLabel(lab::MatmulLab::blasThreads()).c_str());

  nlohmann::json doc = documentFor("matmul-table");
  doc["reps"] = o.reps;
  doc["warmup"] = o.warmup;
  doc["cpu_limit_s"] = course.cpuLimitSeconds;
  doc["inputs"] = "uniform in [0, 1), seeded";
  doc["relative_error"] = "||C - C_cublas||_F / ||C_cublas||_F, cuBLAS of the same type";
  doc["allclose"] = {{"rtol", lab::kAllcloseRtol}, {"atol", lab::kAllcloseAtol}};
  doc["rows"] = nlohmann::json::array();
  for (const lab::MatmulTableRow& r : rows) {
    nlohmann::json j = {{"n", r.n},       {"dtype", r.dtype == lab::DType::F32 ? "f32" : "f64"},
                        {"impl", r.impl}, {"device", r.device},
                        {"gpu", r.gpu},   {"measured", r.measured},
                        {"note", r.note}, {"reference", r.isReference}};
    if (r.measured) {
      j["compute_ms"] = r.computeMs;
      j["upload_ms"] = r.uploadMs;
      j["download_ms"] = r.downloadMs;
      j["with_copies_ms"] = r.withCopiesMs;
      j["gflops"] = r.gflops;
      j["reps"] = r.reps;
      j["speedup_compute"] = r.speedupCompute > 0 ? nlohmann::json(r.speedupCompute) : nlohmann::json(nullptr);
      j["speedup_with_copies"] =
          r.speedupWithCopies > 0 ? nlohmann::json(r.speedupWithCopies) : nlohmann::json(nullptr);
      j["speedup_estimated"] = r.speedupEstimated;
      j["f64_over_f32"] = r.f64OverF32 > 0 ? nlohmann::json(r.f64OverF32) : nlohmann::json(nullptr);
    }
    if (!r.gpu) j["estimated_ms"] = r.estimatedMs;
    j["relative_error"] = r.relativeError >= 0 ? nlohmann::json(r.relativeError) : nlohmann::json(nullptr);
    j["max_abs_difference"] = r.maxAbsDifference >= 0 ? nlohmann::json(r.maxAbsDifference) : nlohmann::json(nullptr);
    j["allclose"] = r.allclose < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.allclose == 1);
    doc["rows"].push_back(j);
  }
  writeJson(file, c.jsonPath, doc);
}

// ---------------------------------------------------------------------------------------------
// tensor-cores

void tensorCores(const CLI::App& cmd, const CourseCommon& c) {
  if (!cudaAvailable())
    throw std::runtime_error("the tensor-core study runs on the GPU only: " + queryDevices().status);
  std::vector<lab::GemmPrecision> precisions = enumValues<lab::GemmPrecision>();
  if (!c.ops.empty()) {
    precisions.clear();
    for (const std::string& name : c.ops)
      precisions.push_back(asUsage([&] { return parseEnumOrThrow<lab::GemmPrecision>(name); }));
  }
  std::vector<int> sizes{4096, 8192};
  if (!c.sizes.empty()) {
    sizes.clear();
    for (const lab::SizePoint& p : asUsage([&] { return lab::parseSizeList(c.sizes); })) {
      if (p.size() != 1 || p[0] > lab::kMaxMatmulDim)
        throw UsageError("tensor-cores sizes are single numbers N up to " + std::to_string(lab::kMaxMatmulDim));
      sizes.push_back(static_cast<int>(p[0]));
    }
  }
  const lab::MeasureOptions options{cmd.count("--reps") ? c.reps : 10, cmd.count("--warmup") ? c.warmup : 2, false,
                                    false};
  std::ofstream file = openJson(c.jsonPath);
  std::printf(
      "tensor cores: the same float32 inputs (uniform in [-1, 1)) multiplied by cuBLAS in each precision; "
      "rel_err = ||C - C_f64||_F / ||C_f64||_F against cuBLAS float64 of those inputs (it includes rounding "
      "the inputs to the precision)\n");
  printPlace();
  std::printf("median of %d after %d warm-up, CUDA events, data on the GPU\n\n", options.reps, options.warmup);
  std::printf("%6s %-5s %11s %9s %11s  %s\n", "N", "prec", "compute_ms", "TFLOP/s", "rel_err", "how");
  nlohmann::json doc = documentFor("tensor-cores");
  doc["reps"] = options.reps;
  doc["warmup"] = options.warmup;
  doc["rows"] = nlohmann::json::array();
  lab::MatmulLab matmul;
  for (int n : sizes) {
    const std::vector<lab::Record> records = asUsage([&] {
      return matmul.measurePrecisions(precisions, {n, n, n}, options);
    });
    for (const lab::Record& r : records) {
      char error[32] = "reference";
      if (r.note != "reference") std::snprintf(error, sizeof error, "%.3e", r.relativeError);
      std::printf("%6d %-5s %11.3f %9.1f %11s  %s\n", n, r.dtype.c_str(), r.medianMs, r.gflops / 1000, error,
                  r.params.c_str());
      std::fflush(stdout);
      doc["rows"].push_back({{"n", n},
                             {"precision", r.dtype},
                             {"how", r.params},
                             {"device", r.device},
                             {"compute_ms", r.medianMs},
                             {"min_ms", r.minMs},
                             {"max_ms", r.maxMs},
                             {"upload_ms", r.uploadMs},
                             {"download_ms", r.downloadMs},
                             {"tflops", r.gflops / 1000},
                             {"relative_error", r.relativeError},
                             {"reference", r.note == "reference"}});
    }
  }
  writeJson(file, c.jsonPath, doc);
}

// ---------------------------------------------------------------------------------------------
// linspace

void linspace(const CLI::App& cmd, const CourseCommon& c) {
  lab::CourseReduceOptions o;
  o.dtypes = dtypesOf(cmd, c);
  if (cmd.count("--reps")) o.reps = c.reps;
  if (cmd.count("--warmup")) o.warmup = c.warmup;
  if (!c.sizes.empty()) {
    const std::vector<lab::SizePoint> points = asUsage([&] { return lab::parseSizeList(c.sizes); });
    if (points.size() != 1 || points[0].size() != 1)
      throw UsageError("linspace takes one size N, e.g. --sizes 10000000");
    o.n = static_cast<std::size_t>(points[0][0]);
  }
  asUsage([&] {
    lab::validate(o);
    return 0;
  });
  std::ofstream file = openJson(c.jsonPath);
  const lab::CourseExact exact = lab::courseExact(o.n);
  std::printf(
      "x = linspace(0, 1, N), y = linspace(1, 2, N) made where they are used (the GPU: no upload), "
      "z = x**2 + 2*y, N = %zu\n",
      o.n);
  printPlace();
  std::printf("exact: sum = 3N + N(2N-1)/(6(N-1)) = %s, mean = 3 + 1/3 + 1/(6(N-1)) = %s, max = 5\n",
              lab::exactText(exact.sum).c_str(), lab::exactText(exact.mean).c_str());
  std::printf("errors are |value - exact| / exact; times are medians of %d after %d warm-up\n\n", o.reps, o.warmup);
  std::printf("%-4s %-15s %-30s %22s %20s %6s %10s %10s %10s %10s %10s\n", "type", "accumulate", "device", "sum",
              "mean", "max", "sum_err", "mean_err", "create_ms", "z_ms", "reduce_ms");
  const std::vector<lab::CourseReduceRow> rows = lab::runCourseReduce(o);
  nlohmann::json doc = documentFor("linspace");
  doc["n"] = o.n;
  doc["exact"] = {{"sum", lab::exactText(exact.sum)}, {"mean", lab::exactText(exact.mean)}, {"max", 5}};
  doc["rows"] = nlohmann::json::array();
  for (const lab::CourseReduceRow& r : rows) {
    const std::string type(toString(r.dtype));
    const std::string acc(toString(r.accumulation));
    std::printf("%-4s %-15s %-30s %22.10f %20.15f %6g %10.3e %10.3e %10.4f %10.4f %10.4f\n", type.c_str(), acc.c_str(),
                r.device.c_str(), r.sum, r.mean, r.max, r.sumError, r.meanError, r.createMs, r.elementwiseMs,
                r.reduceMs);
    doc["rows"].push_back({{"dtype", type},
                           {"accumulation", acc},
                           {"how", lab::accumulationHow(r.accumulation)},
                           {"device", r.device},
                           {"gpu", r.gpu},
                           {"sum", r.sum},
                           {"mean", r.mean},
                           {"max", r.max},
                           {"sum_relative_error", r.sumError},
                           {"mean_relative_error", r.meanError},
                           {"max_relative_error", r.maxError},
                           {"create_ms", r.createMs},
                           {"elementwise_ms", r.elementwiseMs},
                           {"reduce_ms", r.reduceMs},
                           {"reps", r.reps}});
  }
  std::printf("\naccumulate: ");
  for (lab::Accumulation a : enumValues<lab::Accumulation>())
    std::printf("%s%s = %s", a == lab::Accumulation::GpuTree ? "" : "; ", std::string(toString(a)).c_str(),
                lab::accumulationHow(a).c_str());
  std::printf("\n\ntranscendental expressions (max relative error against the same inputs in long double):\n");
  std::printf("%-22s %-4s %-30s %10s %9s %11s\n", "expression", "type", "device", "median_ms", "GB/s", "max_rel_err");
  const std::vector<lab::ExpressionRow> expressions = lab::runCourseExpressions(o);
  doc["expressions"] = nlohmann::json::array();
  for (const lab::ExpressionRow& r : expressions) {
    const std::string name(toString(r.expression));
    std::printf("%-22s %-4s %-30s %10.4f %9.1f %11.3e\n", name.c_str(), std::string(toString(r.dtype)).c_str(),
                r.device.c_str(), r.medianMs, r.gbps, r.maxRelativeError);
    doc["expressions"].push_back({{"expression", name},
                                  {"dtype", std::string(toString(r.dtype))},
                                  {"device", r.device},
                                  {"gpu", r.gpu},
                                  {"median_ms", r.medianMs},
                                  {"gbps", r.gbps},
                                  {"max_relative_error", r.maxRelativeError}});
  }
  writeJson(file, c.jsonPath, doc);
}

// ---------------------------------------------------------------------------------------------
// axis

void axis(const CLI::App& cmd, const CourseCommon& c) {
  lab::AxisOptions o;
  o.dtypes = dtypesOf(cmd, c);
  if (cmd.count("--reps")) o.reps = c.reps;
  if (cmd.count("--warmup")) o.warmup = c.warmup;
  if (!c.sizes.empty()) {
    const std::vector<lab::SizePoint> points = asUsage([&] { return lab::parseSizeList(c.sizes); });
    if (points.size() != 1 || points[0].size() > 2) throw UsageError("axis takes one matrix size, RxC or N");
    const std::int64_t r = points[0][0];
    const std::int64_t k = points[0].size() == 2 ? points[0][1] : r;
    if (r > 1'000'000'000 || k > 1'000'000'000) throw UsageError("axis: the matrix is too large");
    o.rows = static_cast<int>(r);
    o.cols = static_cast<int>(k);
  }
  asUsage([&] {
    lab::validate(o);
    return 0;
  });
  std::ofstream file = openJson(c.jsonPath);
  std::printf(
      "reductions along an axis and row normalisations of a %d x %d row-major matrix (values in [0, 1)), "
      "sums in float64, results in the type; checked against plain loops in float64\n",
      o.rows, o.cols);
  printPlace();
  std::printf("median of %d after %d warm-up\n\n", o.reps, o.warmup);
  std::printf("%-13s %-42s %-4s %-30s %10s %9s %11s %s\n", "op", "numpy", "type", "device", "median_ms", "GB/s",
              "max_rel_err", "check");
  const std::vector<lab::AxisRow> rows = lab::runAxisStudy(o);
  nlohmann::json doc = documentFor("axis");
  doc["rows_count"] = o.rows;
  doc["cols_count"] = o.cols;
  doc["rows"] = nlohmann::json::array();
  int failed = 0;
  for (const lab::AxisRow& r : rows) {
    const std::string op(toString(r.op));
    const std::string type(toString(r.dtype));
    std::printf("%-13s %-42s %-4s %-30s %10.4f %9.1f %11.3e %s\n", op.c_str(), lab::axisOpPython(r.op).c_str(),
                type.c_str(), r.device.c_str(), r.medianMs, r.gbps, r.maxRelativeError, r.ok ? "ok" : "FAILED");
    failed += r.ok ? 0 : 1;
    doc["rows"].push_back({{"op", op},
                           {"numpy", lab::axisOpPython(r.op)},
                           {"dtype", type},
                           {"device", r.device},
                           {"gpu", r.gpu},
                           {"rows", r.rows},
                           {"cols", r.cols},
                           {"median_ms", r.medianMs},
                           {"gbps", r.gbps},
                           {"max_relative_error", r.maxRelativeError},
                           {"tolerance", lab::axisTolerance(r.dtype)},
                           {"ok", r.ok}});
  }
  writeJson(file, c.jsonPath, doc);
  if (failed > 0) throw std::runtime_error(std::to_string(failed) + " axis results are outside their tolerance");
}

}  // namespace

std::shared_ptr<CourseOptions> registerCourseOptions(CLI::App& lab) {
  auto options = std::make_shared<CourseOptions>();
  lab.add_option("--cpu-limit", options->cpuLimitSeconds,
                 "matmul-table: skip the CPU where one run is estimated to take longer than this many seconds "
                 "(default 60)")
      ->check(CLI::Range(0.001, 1e6));
  return options;
}

std::vector<std::string> labExperimentNames(std::vector<std::string> base) {
  for (const char* name : kStudies) base.emplace_back(name);
  return base;
}

std::string courseExperimentList() { return "matmul-table, tensor-cores, linspace or axis"; }

bool isCourseExperiment(const std::string& name) {
  return std::find(std::begin(kStudies), std::end(kStudies), name) != std::end(kStudies);
}

void runCourseExperiment(const CLI::App& lab, const CourseCommon& common, const CourseOptions& options) {
  if (common.experiment == "matmul-table") return matmulTable(lab, common, options);
  if (common.experiment == "tensor-cores") return tensorCores(lab, common);
  if (common.experiment == "linspace") return linspace(lab, common);
  if (common.experiment == "axis") return axis(lab, common);
  throw UsageError("unknown study '" + common.experiment + "'");
}

}  // namespace gpulab::cli
