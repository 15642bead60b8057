#include "gpulab/measure/json.hpp"

#include <fstream>
#include <stdexcept>

#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/version.hpp"

namespace gpulab {

namespace {

nlohmann::json orNull(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json median(const std::optional<Stats>& s) {
  return s ? nlohmann::json(s->medianMs) : nlohmann::json(nullptr);
}

/// The JSON key of a rate: gbps, gflops, giter_per_s.
const char* rateKey(WorkUnit unit) {
  constexpr const char* kKeys[] = {"gbps", "gflops", "giter_per_s"};  // in the order of WorkUnit
  return kKeys[static_cast<int>(unit)];
}

nlohmann::json baseRow(const Measurement& m, const char* impl, const std::string& chosen, double prepareMs,
                       const Stats& time) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [key, value] : m.params) params[key] = value;
  return {{"version", m.version},
          {"op", m.operation},
          {"description", m.description},
          {"params", params},
          {"width", m.output.width},
          {"height", m.output.height},
          {"channels", m.input ? m.input->channels : m.output.channels},
          {"dtype", std::string(toString(m.input ? m.input->type : m.output.type))},
          {"impl", impl},
          {"method", m.method},
          {"chosen", chosen},
          {"prepare_ms", prepareMs},
          {"median_ms", time.medianMs},
          {"min_ms", time.minMs},
          {"max_ms", time.maxMs},
          {"reps", time.reps},
          {"upload_ms", nullptr},
          {"download_ms", nullptr}};
}

}  // namespace

nlohmann::json toJsonRows(const Measurement& m) {
  nlohmann::json rows = nlohmann::json::array();
  if (m.cpu) {
    nlohmann::json r = baseRow(m, "cpu", m.cpu->methodUsed, m.cpu->prepareMs, m.cpu->time);
    r["method_note"] = m.cpu->methodNote.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.cpu->methodNote);
    r["threads"] = m.cpu->threads;
    r["device"] = cpuLabel(m.cpu->threads);
    r[rateKey(m.workUnit)] = orNull(m.cpuRate());
    r[m.ceiling && m.ceiling->name != "DRAM copy" ? "pct_of_ceiling" : "pct_of_copy"] = nullptr;
    rows.push_back(std::move(r));
  }
  if (m.gpu) {
    nlohmann::json r = baseRow(m, "gpu", m.gpu->methodUsed, m.gpu->prepareMs, m.gpu->compute);
    if (m.gpu->compute.reps == 0)  // not measured (an upload-only record): no compute figures
      for (const char* key : {"median_ms", "min_ms", "max_ms"}) r[key] = nullptr;
    r["method_note"] = m.gpu->methodNote.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.gpu->methodNote);
    r["upload_ms"] = median(m.gpu->upload);
    r["download_ms"] = median(m.gpu->download);
    r["device"] = m.gpu->deviceName;
    r["device_index"] = m.gpu->device;
    r[rateKey(m.workUnit)] = orNull(m.gpuRate());
    const bool copyCeiling = m.ceiling && m.ceiling->name == "DRAM copy";
    r[copyCeiling ? "pct_of_copy" : "pct_of_ceiling"] = orNull(m.percentOfCeiling());
    r["max_abs_diff_vs_cpu"] = orNull(m.maxAbsDiff);
    r["host_memory"] = m.gpu->hostMemory.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.gpu->hostMemory);
    r["upload_gbps"] = orNull(m.uploadRate());
    r["download_gbps"] = orNull(m.downloadRate());
    r["pct_of_pinned_upload"] = orNull(m.uploadPercentOfCeiling());
    r["pct_of_pinned_download"] = orNull(m.downloadPercentOfCeiling());
    rows.push_back(std::move(r));
  }
  return rows;
}

nlohmann::json jsonReport(const std::optional<DeviceInfo>& device, const std::optional<CopyCeiling>& ceiling) {
  nlohmann::json report = {{"version", std::string(gpulabVersion())},
                           {"device", nullptr},
                           {"copy_bandwidth_gbps", nullptr},
                           {"cpu_threads", cpuThreads()},
                           {"records", nlohmann::json::array()}};
  if (device)
    report["device"] = {{"index", device->index},
                        {"name", device->name},
                        {"compute_capability", device->computeCapability()},
                        {"multiprocessors", device->multiprocessors},
                        {"total_memory_bytes", device->totalMemory}};
  if (ceiling) {
    report["copy_bandwidth_gbps"] = ceiling->gbps;
    report["copy_bandwidth_how"] = ceiling->how();
  }
  return report;
}

void writeJson(const nlohmann::json& report, const std::string& path) {
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write '" + path + "'");
  file << report.dump(2) << "\n";
  if (!file) throw std::runtime_error("writing '" + path + "' failed");
}

}  // namespace gpulab
