// gpulab-cli lab matmul|transpose|transfer|elementwise|reduce [--sizes LIST] [--dtype f32|f64]
//   [--impl LIST] [--ops LIST] [--with-copies] [--check] [--reps N] [--warmup N] [--iterations N]
//   [--json FILE]
// Runs one lab experiment, prints a row per measurement as it comes, then the ceilings the rates
// are compared with (how each was measured), for transfers a table of pageable and pinned GB/s per
// size against the bus ceiling, and where the GPU starts to beat the CPU; --json writes the same
// records as `gpulab-cli bench` (op, params, sizes, dtype, impl, median_ms, min_ms, max_ms, reps,
// gflops or gbps) plus the lab's own fields and the ceilings.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/lab/lab.hpp"
#include "gpulab/lab/matmul.hpp"
#include "gpulab/lab/transfer.hpp"
#include "lab_course.hpp"
#include "lab_multi.hpp"
#include "lab_studies.hpp"

namespace gpulab::cli {

namespace {

struct LabOptions {
  std::string experiment;
  std::string sizes;
  std::string dtype = "f32";
  std::vector<std::string> impls;
  std::vector<std::string> ops;
  bool withCopies = false;
  bool check = false;
  int reps = 10;
  int warmup = 2;
  int iterations = 20;
  std::string gpus;
  std::string jsonPath;
};

void printHeader(bool check) {
  std::printf("%-9s %-20s %-4s %-16s %10s %10s %10s %9s %9s %10s %11s %7s%s  %s\n", "variant", "impl", "type", "size",
              "median_ms", "min_ms", "max_ms", "upload", "download", "end2end", "rate", "%ceil",
              check ? "   rel_error" : "", "note");
}

void printRow(const lab::Record& r, bool check) {
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f %s", r.rate(), r.experiment == "matmul" ? "GF/s" : "GB/s");
  std::string impl = r.impl + (r.withCopies && r.experiment != "transfer" ? "+copies" : "");
  char percent[16] = "-";
  if (r.ceiling > 0) std::snprintf(percent, sizeof percent, "%.0f%%", r.percentOfCeiling());
  char up[16] = "-", down[16] = "-", e2e[16] = "-";
  if (r.gpu && !r.withCopies) {
    std::snprintf(up, sizeof up, "%.4g", r.uploadMs);
    std::snprintf(down, sizeof down, "%.4g", r.downloadMs);
    std::snprintf(e2e, sizeof e2e, "%.4g", r.endToEndMs());
  }
  if (r.reps == 0)  // a row this machine cannot measure (the note says why)
    std::printf("%-9s %-20s %-4s %-16s %10s %10s %10s %9s %9s %10s %11s %7s", r.variant.c_str(), impl.c_str(),
                r.dtype.c_str(), lab::sizesText(r.sizes).c_str(), "-", "-", "-", "-", "-", "-", "-", "-");
  else
    std::printf("%-9s %-20s %-4s %-16s %10.4g %10.4g %10.4g %9s %9s %10s %11s %7s",
                r.variant.empty() ? "-" : r.variant.c_str(), impl.c_str(), r.dtype.c_str(),
                lab::sizesText(r.sizes).c_str(), r.medianMs, r.minMs, r.maxMs, up, down, e2e, r.rate() > 0 ? rate : "-",
                percent);
  if (check) {
    if (r.relativeError >= 0)
      std::printf(" %11.3g", r.relativeError);
    else
      std::printf(" %11s", "-");
  }
  if (!r.note.empty()) std::printf("  %s", r.note.c_str());
  if (r.experiment == "transfer" && r.variant.rfind("p2p_", 0) == 0) std::printf("  [%s]", r.params.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

nlohmann::json toJson(const lab::Record& r) {
  nlohmann::json j = {{"op", r.experiment},
                      {"variant", r.variant},
                      {"params", r.params},
                      {"sizes", r.sizes},
                      {"size", r.size},
                      {"dtype", r.dtype},
                      {"impl", r.impl},
                      {"gpu", r.gpu},
                      {"with_copies", r.withCopies},
                      {"median_ms", r.medianMs},
                      {"min_ms", r.minMs},
                      {"max_ms", r.maxMs},
                      {"reps", r.reps},
                      {"upload_ms", r.uploadMs},
                      {"download_ms", r.downloadMs},
                      {"end_to_end_ms", r.endToEndMs()},
                      {"ceiling", r.ceiling},
                      {"ceiling_name", r.ceilingName},
                      {"ceiling_how", r.ceilingHow},
                      {"percent_of_ceiling", r.percentOfCeiling()},
                      {"note", r.note},
                      {"device", r.device}};
  if (r.experiment == "matmul")
    j["gflops"] = r.gflops;
  else
    j["gbps"] = r.gbps;
  if (r.relativeError >= 0) j["relative_error"] = r.relativeError;
  return j;
}

/// One ceiling of a run as the rows saw it: its name, how it was measured, and its values (one
/// for the DRAM copy and the bus; one per shape for cuBLAS).
struct CeilingLine {
  std::string name;
  std::string how;
  std::string unit;
  double low = 0;
  double high = 0;
};

std::vector<CeilingLine> ceilingsOf(const std::vector<lab::Record>& records) {
  std::vector<CeilingLine> lines;
  for (const lab::Record& r : records) {
    if (r.ceiling <= 0) continue;
    auto it = std::find_if(lines.begin(), lines.end(),
                           [&](const CeilingLine& l) { return l.name == r.ceilingName && l.how == r.ceilingHow; });
    if (it == lines.end()) {
      lines.push_back({r.ceilingName, r.ceilingHow, r.rateUnit(), r.ceiling, r.ceiling});
      continue;
    }
    it->low = std::min(it->low, r.ceiling);
    it->high = std::max(it->high, r.ceiling);
  }
  return lines;
}

void printCeilings(const std::vector<CeilingLine>& ceilings) {
  if (ceilings.empty()) return;
  std::printf("\nceilings (the %%ceil column):\n");
  for (const CeilingLine& c : ceilings) {
    char value[64];
    if (c.low == c.high)
      std::snprintf(value, sizeof value, "%.1f %s", c.low, c.unit.c_str());
    else
      std::snprintf(value, sizeof value, "%.1f to %.1f %s", c.low, c.high, c.unit.c_str());
    std::printf("  %-10s %s: %s\n", c.name.c_str(), value, c.how.c_str());
  }
}

bool anyInL2(const std::vector<lab::Record>& records) {
  return std::any_of(records.begin(), records.end(), [](const lab::Record& r) { return r.note == lab::kInL2Note; });
}

/// Pageable and pinned, both directions, per size, against the bus ceiling of each direction.
void printTransferSummary(const std::vector<lab::TransferSummaryRow>& rows) {
  if (rows.empty()) return;
  bool peer = false;
  for (const lab::TransferSummaryRow& row : rows)
    for (int a : {0, 1})
      for (int d : {0, 1}) peer = peer || row.peerGbps[a][d] >= 0;
  std::printf("\nGB/s and %% of the bus ceiling per size%s:\n%-10s",
              peer ? " (p2p: GPU A -> B and B -> A, without and with peer access)" : "", "bytes");
  for (const char* column : {"pageable h2d", "pinned h2d", "pageable d2h", "pinned d2h"}) std::printf(" %19s", column);
  if (peer)
    for (const char* column : {"p2p A->B no peer", "p2p A->B peer", "p2p B->A no peer", "p2p B->A peer"})
      std::printf(" %17s", column);
  std::printf("\n");
  for (const lab::TransferSummaryRow& row : rows) {
    std::printf("%-10s", bytesText(row.bytes).c_str());
    for (int direction : {0, 1})
      for (int memory : {0, 1}) {
        char cell[48] = "-";
        if (row.gbps[memory][direction] >= 0) {
          if (row.percentOfBus[memory][direction] >= 0)
            std::snprintf(cell, sizeof cell, "%.2f GB/s %4.0f%%", row.gbps[memory][direction],
                          row.percentOfBus[memory][direction]);
          else
            std::snprintf(cell, sizeof cell, "%.2f GB/s", row.gbps[memory][direction]);
        }
        std::printf(" %19s", cell);
      }
    if (peer)
      for (int direction : {0, 1})
        for (int access : {0, 1}) {
          char cell[32] = "-";
          if (row.peerGbps[access][direction] >= 0)
            std::snprintf(cell, sizeof cell, "%.2f GB/s", row.peerGbps[access][direction]);
          std::printf(" %17s", cell);
        }
    std::printf("\n");
  }
}

nlohmann::json toJson(const lab::Crossover& c) {
  const char* outcome = c.outcome == lab::Crossover::Outcome::Always  ? "always"
                        : c.outcome == lab::Crossover::Outcome::Never ? "never"
                                                                      : "at";
  nlohmann::json j = {{"op", c.experiment},    {"variant", c.variant},    {"dtype", c.dtype},
                      {"cpu_impl", c.cpuImpl}, {"gpu_impl", c.gpuImpl},   {"end_to_end", c.endToEnd},
                      {"outcome", outcome},    {"sentence", c.sentence()}};
  if (c.outcome == lab::Crossover::Outcome::At) {
    j["first_winning_size"] = c.firstWinningSize;
    j["last_losing_size"] = c.lastLosingSize;
    j["estimated_size"] = c.estimatedSize;
  }
  return j;
}

void run(const LabOptions& o) {
  lab::LabRequest request;
  try {
    request = {.experiment = parseEnumOrThrow<lab::Experiment>(o.experiment),
               .points = o.sizes.empty() ? std::vector<lab::SizePoint>{} : lab::parseSizeList(o.sizes),
               .dtype = parseEnumOrThrow<lab::DType>(o.dtype),
               .impls = o.impls,
               .variants = o.ops,
               .withCopies = o.withCopies,
               .check = o.check,
               .reps = o.reps,
               .warmup = o.warmup,
               .iterations = o.iterations,
               .gpus = {}};
    if (!o.gpus.empty()) {
      if (request.experiment != lab::Experiment::Transfer)
        throw std::invalid_argument("--gpus applies to transfer (its peer-to-peer rows) and matmul-multi, not to " +
                                    o.experiment);
      request.gpus = parseGpuList(o.gpus, static_cast<int>(queryDevices().devices.size()));
      if (request.gpus.size() < 2)
        throw std::invalid_argument("--gpus " + o.gpus + ": the peer-to-peer rows need two GPUs");
    }
    lab::validate(request);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  std::ofstream file;  // opened first: a bad path fails before minutes of measuring
  if (!o.jsonPath.empty()) {
    file.open(o.jsonPath);
    if (!file) throw std::runtime_error("cannot write '" + o.jsonPath + "'");
  }

  const DeviceReport devices = queryDevices();
  std::printf("lab %s, %s, median of %d runs after %d warm-up, on %s; CPU side: %s\n", o.experiment.c_str(),
              std::string(toString(request.dtype)).c_str(), request.reps, request.warmup,
              devices.available()
                  ? (selectedDeviceLabel() + " (CUDA " + formatCudaVersion(devices.runtimeVersion) + ")").c_str()
                  : "the CPU",
              cpuLabel().c_str());
  if (!devices.available()) std::printf("note: %s; only the CPU implementations run\n", devices.status.c_str());
  if (request.experiment == lab::Experiment::Matmul)
    std::printf("cpu_blas: OpenBLAS, %d threads; cublas: CUBLAS_DEFAULT_MATH (float32 stays float32, no TF32)\n",
                lab::MatmulLab::blasThreads());
  printHeader(request.check);

  const std::vector<lab::Record> records =
      lab::runLab(request, {}, [&](const lab::Record& r) { printRow(r, request.check); });

  const std::vector<CeilingLine> ceilings = ceilingsOf(records);
  printCeilings(ceilings);
  // Records carry the L2 note only when a GPU ran, and the ceiling is cached by then.
  const CopyCeiling copyCeiling = anyInL2(records) ? deviceCopyCeiling() : CopyCeiling{};
  if (copyCeiling.l2Bytes > 0)
    std::printf(
        "  %s: the arrays of that size fit in the %s L2 cache together; the timed runs after the first "
        "read them from L2, so their rate can pass the DRAM ceiling\n",
        lab::kInL2Note, bytesText(copyCeiling.l2Bytes).c_str());
  const std::vector<lab::TransferSummaryRow> transfers = lab::summarizeTransfers(records);
  printTransferSummary(transfers);

  const std::vector<lab::Crossover> crossovers = lab::findCrossovers(records);
  if (!crossovers.empty()) std::printf("\n");
  for (const lab::Crossover& c : crossovers) std::printf("%s\n", c.sentence().c_str());

  if (!o.jsonPath.empty()) {
    nlohmann::json doc = {{"experiment", o.experiment},
                          {"dtype", std::string(toString(request.dtype))},
                          {"reps", request.reps},
                          {"warmup", request.warmup},
                          {"cuda_available", devices.available()},
                          {"cuda_runtime", formatCudaVersion(devices.runtimeVersion)},
                          {"blas_threads", lab::MatmulLab::blasThreads()}};
    doc["device"] =
        devices.available()
            ? nlohmann::json{{"index", selectedDevice()},
                             {"name", devices.devices.at(selectedDevice()).name},
                             {"label", selectedDeviceLabel()},
                             {"compute_capability", devices.devices.at(selectedDevice()).computeCapability()},
                             {"multiprocessors", devices.devices.at(selectedDevice()).multiprocessors}}
            : nlohmann::json(nullptr);
    doc["cpu"] = cpuLabel();
    doc["ceilings"] = nlohmann::json::array();
    for (const CeilingLine& c : ceilings)
      doc["ceilings"].push_back({{"name", c.name}, {"how", c.how}, {"unit", c.unit}, {"min", c.low}, {"max", c.high}});
    const bool copyBound =
        std::any_of(records.begin(), records.end(), [](const lab::Record& r) { return r.ceilingName == "DRAM copy"; });
    if (copyBound) {
      const CopyCeiling c = deviceCopyCeiling();  // measured during the run: cached
      doc["copy_ceiling"] = {{"gbps", c.gbps},        {"buffer_bytes", c.bufferBytes},
                             {"l2_bytes", c.l2Bytes}, {"copies", c.copies},
                             {"how", c.how()},        {"in_l2_note", lab::kInL2Note}};
    }
    if (request.experiment == lab::Experiment::Transfer) {
      nlohmann::json bus = {
          {"definition", "fastest of " + std::to_string(lab::kBusCeilingCopies) + " pinned copies of " +
                             bytesText(lab::kBusCeilingBytes) + " in each direction, measured at the start of the run"},
          {"bytes", lab::kBusCeilingBytes},
          {"copies", lab::kBusCeilingCopies}};
      for (const CeilingLine& c : ceilings) {
        if (c.name == "bus h2d") bus["h2d_gbps"] = c.high;
        if (c.name == "bus d2h") bus["d2h_gbps"] = c.high;
      }
      doc["bus_ceiling"] = bus;
      doc["transfer_summary"] = nlohmann::json::array();
      for (const lab::TransferSummaryRow& row : transfers) {
        nlohmann::json j = {{"bytes", row.bytes}};
        for (int memory : {0, 1})
          for (int direction : {0, 1}) {
            if (row.gbps[memory][direction] < 0) continue;
            const std::string key =
                std::string(memory == 0 ? "pageable_" : "pinned_") + (direction == 0 ? "h2d" : "d2h");
            j[key + "_gbps"] = row.gbps[memory][direction];
            if (row.percentOfBus[memory][direction] >= 0)
              j[key + "_percent_of_bus"] = row.percentOfBus[memory][direction];
          }
        for (int access : {0, 1})
          for (int direction : {0, 1})
            if (row.peerGbps[access][direction] >= 0)
              j[std::string("p2p_") + (direction == 0 ? "ab" : "ba") +
                (access == 0 ? "_no_peer_access" : "_peer_access") + "_gbps"] = row.peerGbps[access][direction];
        doc["transfer_summary"].push_back(j);
      }
    }
    doc["records"] = nlohmann::json::array();
    for (const lab::Record& r : records) doc["records"].push_back(toJson(r));
    doc["crossovers"] = nlohmann::json::array();
    for (const lab::Crossover& c : crossovers) doc["crossovers"].push_back(toJson(c));
    file << doc.dump(2) << "\n";
    if (!file) throw std::runtime_error("writing '" + o.jsonPath + "' failed");
  }
}

}  // namespace

void registerLab(CLI::App& app) {
  auto options = std::make_shared<LabOptions>();
  auto* cmd =
      app.add_subcommand("lab",
                         "GPU-computing lab: matrix product, transpose, transfers, elementwise and reductions, "
                         "CPU against GPU; the course's studies; custom kernels, memory pools and timing pitfalls");
  std::vector<std::string> experiments = labExperimentNames(enumNameList<lab::Experiment>());
  experiments.insert(experiments.end(), courseLabNames().begin(), courseLabNames().end());
  experiments.emplace_back("matmul-multi");
  cmd->add_option("experiment", options->experiment,
                  "matmul, transpose, transfer, elementwise or reduce (size sweeps); the course's studies: " +
                      courseExperimentList() +
                      "; custom (kernels compiled at run time with NVRTC), pool (cudaMalloc against the memory "
                      "pool), timing (timing pitfalls and the cold start); matmul-multi (one product split across "
                      "GPUs)")
      ->required()
      ->check(CLI::IsMember(experiments));
  cmd->add_option("--sizes", options->sizes,
                  "Sweep points: 32,64,100 or 32..4096 (doubling); 64K, 1M, 1G; matmul MxNxK, transpose RxC. "
                  "Transfer sizes are bytes, elementwise/reduce elements. Default: matmul 32..4096, "
                  "transpose 256..8192, transfer 4K..256M, elementwise/reduce 1K..64M");
  cmd->add_option("--dtype", options->dtype, "f32 or f64")->check(CLI::IsMember({"f32", "f64"}));
  cmd->add_option("--impl", options->impls,
                  "Comma-separated implementations (default: all this machine can run). matmul: cpu_blas, "
                  "gpu_naive, gpu_tiled, gpu_regblock, cublas; transpose: cpu, gpu_naive, gpu_tiled, "
                  "gpu_tiled_padded; transfer: pageable, pinned, copy_every_iteration, upload_once; "
                  "elementwise/reduce: cpu, gpu")
      ->delimiter(',');
  cmd->add_option("--ops", options->ops,
                  "Comma-separated variants (default all). elementwise: x*x+2*y, a*x+y; reduce: sum, mean, std, "
                  "min, max; transfer: h2d, d2h, pattern")
      ->delimiter(',');
  cmd->add_flag("--with-copies", options->withCopies,
                "Also time upload + compute + download as one region (extra rows marked +copies)");
  cmd->add_flag("--check", options->check,
                "matmul: relative error of every result against a float64 product (slow for large sizes)");
  cmd->add_option("--reps", options->reps, "Timed runs per measurement (median, min, max)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", options->warmup, "Untimed runs first")->check(CLI::Range(0, 1000));
  cmd->add_option("--iterations", options->iterations, "transfer pattern: compute steps")->check(CLI::Range(1, 100000));
  cmd->add_option("--json", options->jsonPath, "Write the records and crossovers as JSON to this file");
  cmd->add_option("--gpus", options->gpus,
                  "all | 0,1 | N. matmul-multi: the GPUs the product is split across (default all); transfer: "
                  "the first two are the peer-to-peer rows' GPUs (default 0 and 1)");
  auto studies = registerCourseOptions(*cmd);
  auto course = addCourseLabOptions(*cmd);
  cmd->callback([options, cmd, course, studies] {
    if (options->experiment == "matmul-multi")
      return runMatmulMulti({.gpus = options->gpus.empty() ? std::string("all") : options->gpus,
                             .sizes = options->sizes,
                             .dtype = options->dtype,
                             .reps = cmd->count("--reps") ? options->reps : 5,
                             .warmup = cmd->count("--warmup") ? options->warmup : 1,
                             .jsonPath = options->jsonPath});
    if (isCourseExperiment(options->experiment))
      return runCourseExperiment(*cmd,
                                 {options->experiment, options->sizes, options->dtype, options->ops, options->reps,
                                  options->warmup, options->jsonPath},
                                 *studies);
    const auto& names = courseLabNames();
    if (std::find(names.begin(), names.end(), options->experiment) == names.end()) return run(*options);
    course(options->experiment, {.dtype = cmd->count("--dtype") ? options->dtype : std::string(),
                                 .reps = cmd->count("--reps") ? options->reps : 0,
                                 .warmup = options->warmup,
                                 .jsonPath = options->jsonPath});
  });
}

}  // namespace gpulab::cli
