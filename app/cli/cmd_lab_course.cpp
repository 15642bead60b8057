// gpulab-cli lab custom|pool|timing: the labs that are not size sweeps.
//
//   lab custom --expr "y = sin(x)*2 + sqrt(abs(x))" [--size N] [--dtype f32|f64] [--input x=linspace:-10:10]
//   lab custom --source FILE --kernel NAME --arg in:x --arg out:y --arg i64:n=n [--grid auto|G] [--block B]
//              [--shared BYTES] [--expect "y = 2*x + 1"]
//   lab custom ... --compile-only [--arch 90]      compile (no GPU needed with --arch) and report
//   lab pool [--allocations 10000] [--min-bytes 1K] [--max-bytes 64M] [--live 16] [--seed 42] [--reps 3]
//   lab timing [--work 100,1000,10000,100000] [--elements 1M] [--reps 20] [--no-cold-start]
// Every one takes --json FILE. Exit codes: 0 ok; 1 verification failed, a GPU fault, no GPU; 2 bad
// input or a compile error (the compiler's lines on stderr).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/custom_kernel.hpp"
#include "gpulab/lab/expression.hpp"
#include "gpulab/lab/memory_pool.hpp"
#include "gpulab/lab/timing_pitfalls.hpp"
#include "lab_course.hpp"

namespace gpulab::cli {

namespace {

struct CourseOptions {
  // custom
  std::string expr;
  std::string sourcePath;
  std::string kernel;
  std::string grid = "auto";
  std::string block = "256";
  std::string shared = "0";
  std::vector<std::string> args;
  std::vector<std::string> inputs;
  std::string size = "1M";
  std::string expect;
  std::vector<std::string> nvrtcOptions;
  bool noDiskCache = false;
  bool printSource = false;
  bool compileOnly = false;
  int arch = 0;
  // pool
  int allocations = 10000;
  std::string minBytes = "1K";
  std::string maxBytes = "64M";
  int live = 16;
  unsigned long long seed = 42;
  // timing
  std::vector<int> work;
  std::string elements = "1M";
  bool noColdStart = false;
  bool coldProbe = false;
};

/// "4096", "64K", "1M" as one number (lab::parseSizeList's spelling).
std::size_t oneSize(const std::string& text, const char* option) {
  try {
    const std::vector<lab::SizePoint> points = lab::parseSizeList(text);
    if (points.size() != 1 || points[0].size() != 1)
      throw std::invalid_argument("give one number, like 4096, 64K or 1M");
    return static_cast<std::size_t>(points[0][0]);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(option) + " '" + text + "': " + e.what());
  }
}

std::ofstream openJson(const std::string& path) {
  std::ofstream file;
  if (!path.empty()) {
    file.open(path);
    if (!file) throw std::runtime_error("cannot write '" + path + "'");
  }
  return file;
}

void writeJson(std::ofstream& file, const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return;
  file << doc.dump(2) << "\n";
  if (!file) throw std::runtime_error("writing '" + path + "' failed");
}

nlohmann::json statsJson(const Stats& s) {
  return {{"median_ms", s.medianMs}, {"min_ms", s.minMs}, {"max_ms", s.maxMs}, {"reps", s.reps}};
}

nlohmann::json recordJson(const lab::Record& r) {
  nlohmann::json j = {{"op", r.experiment},
                      {"variant", r.variant},
                      {"impl", r.impl},
                      {"dtype", r.dtype},
                      {"sizes", r.sizes},
                      {"params", r.params},
                      {"gpu", r.gpu},
                      {"median_ms", r.medianMs},
                      {"min_ms", r.minMs},
                      {"max_ms", r.maxMs},
                      {"reps", r.reps},
                      {"upload_ms", r.uploadMs},
                      {"download_ms", r.downloadMs},
                      {"gbps", r.gbps},
                      {"note", r.note}};
  if (r.relativeError >= 0) j["max_error"] = r.relativeError;
  return j;
}

std::string dims(const std::array<unsigned, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

std::string deviceLine() {
  const DeviceReport devices = queryDevices();
  return devices.available()
             ? devices.devices.front().name + " (CUDA " + formatCudaVersion(devices.runtimeVersion) + ")"
             : "no GPU: " + devices.status;
}

// ---------------------------------------------------------------------------------------------
// custom

std::string readSource(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the kernel source '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void printCompileLog(const std::string& log) {
  if (log.empty()) return;
  std::printf("compiler log:\n");
  for (const lab::CompileDiagnostic& d : lab::parseCompileLog(log)) std::printf("  %s\n", d.text().c_str());
}

void printRun(const lab::KernelRun& run) {
  if (!run.gpuRan) {
    std::printf("note: %s\n", run.checkNote.c_str());
    for (const lab::Record& r : run.records())
      std::printf("cpu (%d threads): %.4g ms (min %.4g, max %.4g, median of %d)\n", run.cpuThreads, r.medianMs, r.minMs,
                  r.maxMs, r.reps);
    return;
  }
  std::printf("compile: %s; module load %.3f ms (cudaLibraryLoadData)\n", run.compileSummary().c_str(), run.loadMs);
  printCompileLog(run.compiled.log);
  std::printf("launch: grid %s, block %s, %d registers/thread, %zu B static + %zu B dynamic shared\n",
              dims(run.grid).c_str(), dims(run.block).c_str(), run.registers, run.staticSharedBytes,
              run.dynamicSharedBytes);
  std::printf("%-16s %-4s %10s %10s %10s %9s %9s %10s  %s\n", "impl", "type", "median_ms", "min_ms", "max_ms", "upload",
              "download", "rate", "note");
  for (const lab::Record& r : run.records()) {
    char up[16] = "-", down[16] = "-", rate[32] = "-";
    if (r.gpu) {
      std::snprintf(up, sizeof up, "%.4g", r.uploadMs);
      std::snprintf(down, sizeof down, "%.4g", r.downloadMs);
    }
    if (r.gbps > 0) std::snprintf(rate, sizeof rate, "%.1f GB/s", r.gbps);
    std::printf("%-16s %-4s %10.4g %10.4g %10.4g %9s %9s %10s  %s%s\n", r.impl.c_str(), r.dtype.c_str(), r.medianMs,
                r.minMs, r.maxMs, up, down, rate, r.note.c_str(), r.gpu ? "" : (" (" + r.params + ")").c_str());
  }
  if (!run.checked) {
    std::printf("check: %s\n", run.checkNote.c_str());
    return;
  }
  for (const lab::OutputCheck& c : run.checks) {
    std::printf("check %s: max error %.3g (|gpu - cpu| / max(1, |cpu|); max |gpu - cpu| %.3g), tolerance %.0e: %s\n",
                c.name.c_str(), c.maxError, c.maxAbsError, run.tolerance, c.mismatches == 0 ? "ok" : "FAILED");
    if (c.mismatches > 0)
      std::printf("  %zu of %zu elements differ; first at index %zu: gpu %.9g, cpu %.9g\n", c.mismatches, run.size,
                  c.firstMismatch, c.gpuValue, c.cpuValue);
  }
}

nlohmann::json runJson(const lab::KernelRun& run) {
  nlohmann::json j = {{"experiment", "custom"},
                      {"kind", run.kind},
                      {"kernel", run.kernelName},
                      {"expression", run.expression},
                      {"device", run.deviceName},
                      {"dtype", std::string(toString(run.dtype))},
                      {"size", run.size},
                      {"inputs", run.inputs},
                      {"outputs", run.outputs},
                      {"target", run.compiled.target},
                      {"options", run.compiled.options},
                      {"cache_key", run.compiled.key},
                      {"cache", std::string(toString(run.compiled.cache))},
                      {"compile_ms", run.compiled.compileMs},
                      {"load_ms", run.loadMs},
                      {"compile_log", run.compiled.log},
                      {"grid", run.grid},
                      {"block", run.block},
                      {"registers", run.registers},
                      {"static_shared_bytes", run.staticSharedBytes},
                      {"dynamic_shared_bytes", run.dynamicSharedBytes},
                      {"kernel_time", statsJson(run.gpu)},
                      {"upload_ms", run.uploadMs},
                      {"download_ms", run.downloadMs},
                      {"gpu_ran", run.gpuRan},
                      {"checked", run.checked},
                      {"passed", run.passed},
                      {"source", run.source}};
  if (run.checked) {
    j["cpu_time"] = statsJson(run.cpu);
    j["cpu_threads"] = run.cpuThreads;
    j["tolerance"] = run.tolerance;
    j["checks"] = nlohmann::json::array();
    for (const lab::OutputCheck& c : run.checks)
      j["checks"].push_back({{"output", c.name},
                             {"max_error", c.maxError},
                             {"max_abs_error", c.maxAbsError},
                             {"mismatches", c.mismatches}});
  } else {
    j["check_note"] = run.checkNote;
  }
  j["records"] = nlohmann::json::array();
  for (const lab::Record& r : run.records()) j["records"].push_back(recordJson(r));
  return j;
}

void runCustom(const CourseOptions& o, const CourseLabCommon& common) {
  const bool expression = !o.expr.empty();
  if (expression == !o.sourcePath.empty())
    throw UsageError(
        "lab custom needs --expr \"y = ...\" (an elementwise kernel) or --source FILE --kernel NAME "
        "(a raw kernel), one of the two");
  if (!expression && o.kernel.empty())
    throw UsageError("--source needs --kernel NAME, its extern \"C\" __global__ entry point");
  if (expression && (!o.kernel.empty() || !o.args.empty() || !o.expect.empty()))
    throw UsageError("--kernel, --arg and --expect go with --source; an --expr kernel takes --input");
  const lab::DType dtype = parseEnumOrThrow<lab::DType>(common.dtype.empty() ? "f32" : common.dtype);
  const int reps = common.reps > 0 ? common.reps : 10;
  const std::size_t size = oneSize(o.size, "--size");

  std::string source, sourceName;
  try {
    if (expression) {
      source = lab::elementwiseSource(lab::parseElementwise(o.expr), dtype);
      sourceName = "elementwise.cu";
    } else {
      source = readSource(o.sourcePath);
      sourceName = std::filesystem::path(o.sourcePath).filename().string();
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (o.printSource) std::printf("%s\n", source.c_str());

  if (o.compileOnly) {
    int arch = o.arch;
    if (arch == 0) {
      const DeviceReport devices = queryDevices();
      if (!devices.available())
        throw UsageError("no GPU to compile for (" + devices.status + "): give --arch, e.g. --arch 90");
      arch = devices.devices.front().computeMajor * 10 + devices.devices.front().computeMinor;
    }
    lab::CompiledKernel compiled;
    try {
      compiled = lab::compileKernel(source, sourceName, o.nvrtcOptions, arch, !o.noDiskCache);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::printf("%s: %s for %s, key %s, %zu bytes", sourceName.c_str(), std::string(toString(compiled.cache)).c_str(),
                compiled.target.c_str(), compiled.key.c_str(), compiled.binary->size());
    if (compiled.cache == lab::CacheOutcome::Compiled) std::printf(", %.1f ms", compiled.compileMs);
    std::printf("\n");
    printCompileLog(compiled.log);
    return;
  }

  std::ofstream file = openJson(common.jsonPath);
  lab::KernelRun run;
  lab::CustomKernelLab customLab;
  try {
    if (expression) {
      lab::ElementwiseRequest request;
      request.expression = o.expr;
      request.dtype = dtype;
      request.size = size;
      for (const std::string& spec : o.inputs) request.inputs.push_back(lab::parseInputSpec(spec));
      request.options = o.nvrtcOptions;
      request.reps = reps;
      request.warmup = common.warmup;
      request.useDiskCache = !o.noDiskCache;
      std::printf("lab custom (elementwise), %s, n = %zu, median of %d runs after %d warm-up, on %s\n",
                  std::string(toString(dtype)).c_str(), size, reps, common.warmup, deviceLine().c_str());
      std::printf("expression: %s\n", o.expr.c_str());
      run = customLab.runElementwise(request);
    } else {
      lab::RawKernelRequest request;
      request.source = source;
      request.sourceName = sourceName;
      request.kernel = o.kernel;
      for (const std::string& a : o.args) request.args.push_back(lab::parseKernelArg(a));
      if (o.grid != "auto") {
        request.launch.autoGrid = false;
        request.launch.grid = lab::parseDims(o.grid, "--grid");
      }
      request.launch.block = lab::parseDims(o.block, "--block");
      request.launch.dynamicSharedBytes = o.shared == "0" ? 0 : oneSize(o.shared, "--shared");
      request.dtype = dtype;
      request.size = size;
      request.check = o.expect;
      request.options = o.nvrtcOptions;
      request.reps = reps;
      request.warmup = common.warmup;
      request.useDiskCache = !o.noDiskCache;
      std::printf("lab custom (raw kernel %s from %s), %s arrays, n = %zu, median of %d runs after %d warm-up, on %s\n",
                  o.kernel.c_str(), sourceName.c_str(), std::string(toString(dtype)).c_str(), size, reps, common.warmup,
                  deviceLine().c_str());
      run = customLab.runRaw(request);
    }
  } catch (const std::invalid_argument& e) {  // ExpressionError, CompileError, LaunchError, bad specs
    throw UsageError(e.what());
  }
  printRun(run);
  writeJson(file, common.jsonPath, runJson(run));
  if (!run.passed) {
    std::string failed;
    for (const lab::OutputCheck& c : run.checks)
      if (c.mismatches > 0) failed += (failed.empty() ? "" : ", ") + c.name;
    throw std::runtime_error("verification failed: " + failed + " differ from the CPU beyond the tolerance");
  }
}

// ---------------------------------------------------------------------------------------------
// pool

void runPool(const CourseOptions& o, const CourseLabCommon& common) {
  lab::PoolRequest request;
  request.allocations = o.allocations;
  request.minBytes = oneSize(o.minBytes, "--min-bytes");
  request.maxBytes = oneSize(o.maxBytes, "--max-bytes");
  request.live = o.live;
  request.seed = o.seed;
  request.rounds = common.reps > 0 ? common.reps : 3;
  try {
    lab::validate(request);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::ofstream file = openJson(common.jsonPath);
  std::printf(
      "lab pool: %d allocations of %s to %s (log-uniform, seed %llu), %d alive at a time, median of %d "
      "rounds after one, on %s\n",
      request.allocations, bytesText(request.minBytes).c_str(), bytesText(request.maxBytes).c_str(),
      static_cast<unsigned long long>(request.seed), request.live, request.rounds, deviceLine().c_str());
  lab::MemoryPoolLab poolLab;
  const lab::PoolReport report = poolLab.run(request);
  std::printf("requested %s in all, at most %s alive at once\n", bytesText(report.requestedBytes).c_str(),
              bytesText(report.peakLive).c_str());
  std::printf("%-16s %12s %12s %12s %14s %16s\n", "impl", "round_ms", "min_ms", "max_ms", "us_per_pair",
              "first_round_ms");
  for (const lab::PoolSide* side : {&report.malloc, &report.async})
    std::printf("%-16s %12.3f %12.3f %12.3f %14.3f %16.3f\n", side->name.c_str(), side->round.medianMs,
                side->round.minMs, side->round.maxMs, report.perPairUs(*side), side->firstRoundMs);
  std::printf("%s\n", report.sentence().c_str());
  std::printf("default pool after the run (release threshold raised; everything freed): %s\n",
              report.afterRun.text().c_str());
  std::printf("after cudaMemPoolTrimTo(pool, 0) (%.3f ms, CuPy's free_all_blocks): %s\n", report.trimMs,
              report.afterTrim.text().c_str());
  std::printf("the pool's own release threshold (%llu bytes) is restored\n",
              static_cast<unsigned long long>(report.releaseThreshold));

  auto statsOf = [](const lab::PoolStats& s) {
    return nlohmann::json{{"used_bytes", s.used},
                          {"reserved_bytes", s.reserved},
                          {"used_high_bytes", s.usedHigh},
                          {"reserved_high_bytes", s.reservedHigh}};
  };
  nlohmann::json doc = {{"experiment", "pool"},
                        {"device", report.deviceName},
                        {"allocations", request.allocations},
                        {"min_bytes", request.minBytes},
                        {"max_bytes", request.maxBytes},
                        {"seed", request.seed},
                        {"live", request.live},
                        {"rounds", request.rounds},
                        {"requested_bytes", report.requestedBytes},
                        {"peak_live_bytes", report.peakLive},
                        {"after_run", statsOf(report.afterRun)},
                        {"after_trim", statsOf(report.afterTrim)},
                        {"trim_ms", report.trimMs},
                        {"sentence", report.sentence()}};
  for (const lab::PoolSide* side : {&report.malloc, &report.async})
    doc["sides"].push_back({{"impl", side->name},
                            {"round", statsJson(side->round)},
                            {"us_per_pair", report.perPairUs(*side)},
                            {"first_round_ms", side->firstRoundMs}});
  for (const lab::Record& r : report.records()) doc["records"].push_back(recordJson(r));
  writeJson(file, common.jsonPath, doc);
}

// ---------------------------------------------------------------------------------------------
// timing

void runTiming(const CourseOptions& o, const CourseLabCommon& common) {
  if (o.coldProbe) {  // the first CUDA work of this process: nothing above touched CUDA
    std::printf("%s\n", lab::toJson(lab::measureColdStart(true)).c_str());
    return;
  }
  lab::TimingRequest request;
  if (!o.work.empty()) request.work = o.work;
  request.elements = oneSize(o.elements, "--elements");
  if (common.reps > 0) request.reps = common.reps;
  request.warmup = common.warmup;
  try {
    lab::validate(request);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::ofstream file = openJson(common.jsonPath);
  // The cold start first, in a fresh child process (this one has not used CUDA yet either, but the
  // experiment below must not be what the child measures).
  lab::ColdStart cold;
  if (!o.noColdStart && cudaAvailable()) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    cold = ec ? lab::ColdStart{} : lab::measureColdStartInChild({self.string(), "lab", "timing", "--cold-probe"});
    if (ec) cold.error = "cannot find this program's path to start a fresh process";
  }
  std::printf("lab timing: busy kernel over %zu floats, median of %d runs after %d warm-up, on %s\n", request.elements,
              request.reps, request.warmup, deviceLine().c_str());
  lab::TimingLab timingLab;
  lab::TimingReport report = timingLab.run(request);
  report.cold = cold;
  std::printf("%-10s %-20s %12s %12s %12s  %s\n", "work", "method", "median_ms", "min_ms", "max_ms", "note");
  for (const lab::Record& r : report.records())
    std::printf("%-10s %-20s %12.4f %12.4f %12.4f  %s\n", r.impl.c_str(), r.variant.c_str(), r.medianMs, r.minMs,
                r.maxMs, r.note.c_str());
  std::printf("\n");
  for (const std::string& line : report.lessons()) std::printf("%s\n", line.c_str());

  nlohmann::json doc = {{"experiment", "timing"},     {"device", report.deviceName}, {"elements", request.elements},
                        {"work", request.work},       {"reps", request.reps},        {"warmup", request.warmup},
                        {"lessons", report.lessons()}};
  doc["cold_start"] = nlohmann::json::parse(lab::toJson(report.cold));
  for (const lab::Record& r : report.records()) doc["records"].push_back(recordJson(r));
  writeJson(file, common.jsonPath, doc);
}

}  // namespace

const std::vector<std::string>& courseLabNames() {
  static const std::vector<std::string> names = {"custom", "pool", "timing"};
  return names;
}

std::function<void(const std::string&, const CourseLabCommon&)> addCourseLabOptions(CLI::App& lab) {
  auto o = std::make_shared<CourseOptions>();
  const char* custom = "custom kernel";
  lab.add_option("--expr", o->expr,
                 "custom: an elementwise kernel, 'y = sin(x)*2 + sqrt(abs(x))' (statements split by ';'; functions "
                 "sin..erfc, pow, atan2, fmod, hypot, min, max; i = index, n = count)")
      ->group(custom);
  lab.add_option("--source", o->sourcePath, "custom: a CUDA source file with an extern \"C\" __global__ kernel")
      ->group(custom);
  lab.add_option("--kernel", o->kernel, "custom: the entry point's name in --source")->group(custom);
  lab.add_option("--arg", o->args,
                 "custom: the kernel's arguments in order: in:x[=linspace:A:B|=random:A:B], out:y, "
                 "i32|i64|u32|u64|f32|f64:NAME=VALUE|n")
      ->group(custom);
  lab.add_option("--input", o->inputs, "custom --expr: how an input is filled, x=linspace:-10:10 or x=random:0:1")
      ->group(custom);
  lab.add_option("--size", o->size, "custom: elements per array (default 1M)")->group(custom);
  lab.add_option("--grid", o->grid, "custom --source: grid, auto (ceil(size / block)) or 1024, 64x64")->group(custom);
  lab.add_option("--block", o->block, "custom --source: block, 256 or 16x16 (default 256)")->group(custom);
  lab.add_option("--shared", o->shared, "custom --source: dynamic shared memory bytes per block (default 0)")
      ->group(custom);
  lab.add_option("--expect", o->expect,
                 "custom --source: the outputs as an expression of the inputs and scalars, for the CPU check "
                 "(without it the kernel is timed only)")
      ->group(custom);
  lab.add_option("--nvrtc-option", o->nvrtcOptions, "custom: an extra NVRTC option, e.g. --use_fast_math")
      ->group(custom);
  lab.add_flag("--no-disk-cache", o->noDiskCache, "custom: neither read nor write the on-disk kernel cache")
      ->group(custom);
  lab.add_flag("--print-source", o->printSource, "custom: print the CUDA source that is compiled")->group(custom);
  lab.add_flag("--compile-only", o->compileOnly, "custom: compile and report, do not run")->group(custom);
  lab.add_option("--arch", o->arch, "custom --compile-only: compute capability to compile for, e.g. 90")
      ->check(CLI::Range(10, 200))
      ->group(custom);
  const char* pool = "memory pool";
  lab.add_option("--allocations", o->allocations, "pool: allocations per round (default 10000)")->group(pool);
  lab.add_option("--min-bytes", o->minBytes, "pool: smallest allocation (default 1K)")->group(pool);
  lab.add_option("--max-bytes", o->maxBytes, "pool: largest allocation (default 64M)")->group(pool);
  lab.add_option("--live", o->live, "pool: allocations alive at a time (default 16)")->group(pool);
  lab.add_option("--seed", o->seed, "pool: seed of the sizes (default 42)")->group(pool);
  const char* timing = "timing pitfalls";
  lab.add_option("--work", o->work, "timing: multiply-adds per element, e.g. 100,1000,10000,100000")
      ->delimiter(',')
      ->group(timing);
  lab.add_option("--elements", o->elements, "timing: floats the busy kernel updates (default 1M)")->group(timing);
  lab.add_flag("--no-cold-start", o->noColdStart, "timing: skip the cold start (a fresh child process)")->group(timing);
  lab.add_flag("--cold-probe", o->coldProbe, "timing: measure the cold start in this process and print it as JSON")
      ->group("");  // internal: what the fresh child runs
  return [o](const std::string& name, const CourseLabCommon& common) {
    if (name == "custom")
      runCustom(*o, common);
    else if (name == "pool")
      runPool(*o, common);
    else
      runTiming(*o, common);
  };
}

}  // namespace gpulab::cli
