#include "gpulab/measure/record.hpp"

#include <cstdio>

#include "gpulab/core/version.hpp"

namespace gpulab {

std::string_view rateUnit(WorkUnit unit) noexcept {
  constexpr std::string_view kUnits[] = {"GB/s", "GFLOP/s", "Giter/s"};  // in the order of WorkUnit
  return kUnits[static_cast<int>(unit)];
}

double GpuMeasurement::endToEndMs() const {
  return (upload ? upload->medianMs : 0.0) + compute.medianMs + (download ? download->medianMs : 0.0);
}

namespace {

std::optional<double> rateOf(double work, double ms) {
  if (!(work > 0) || !(ms > 0)) return std::nullopt;
  return work / (ms * 1e6);  // per ms -> per s, and 1e9 a unit
}

std::optional<double> ratio(double a, double b) {
  if (!(a > 0) || !(b > 0)) return std::nullopt;
  return a / b;
}

}  // namespace

std::optional<double> Measurement::gpuRate() const {
  return gpu && gpu->compute.reps > 0 ? rateOf(work, gpu->compute.medianMs) : std::nullopt;
}

std::optional<double> Measurement::cpuRate() const { return cpu ? rateOf(work, cpu->time.medianMs) : std::nullopt; }

std::optional<double> Measurement::percentOfCeiling() const {
  const std::optional<double> rate = gpuRate();
  if (!rate || !ceiling || !(ceiling->value > 0)) return std::nullopt;
  return 100.0 * *rate / ceiling->value;
}

std::optional<double> Measurement::uploadRate() const {
  return gpu && gpu->upload ? rateOf(uploadBytes, gpu->upload->medianMs) : std::nullopt;
}

std::optional<double> Measurement::downloadRate() const {
  return gpu && gpu->download ? rateOf(downloadBytes, gpu->download->medianMs) : std::nullopt;
}

std::optional<double> Measurement::uploadPercentOfCeiling() const {
  const std::optional<double> rate = uploadRate();
  if (!rate || !transferCeiling || !(transferCeiling->uploadGbps > 0)) return std::nullopt;
  return 100.0 * *rate / transferCeiling->uploadGbps;
}

std::optional<double> Measurement::downloadPercentOfCeiling() const {
  const std::optional<double> rate = downloadRate();
  if (!rate || !transferCeiling || !(transferCeiling->downloadGbps > 0)) return std::nullopt;
  return 100.0 * *rate / transferCeiling->downloadGbps;
}

std::optional<double> Measurement::speedup() const {
  if (!gpu || !cpu || gpu->compute.reps == 0) return std::nullopt;
  return ratio(cpu->time.medianMs, gpu->compute.medianMs);
}

std::optional<double> Measurement::speedupEndToEnd() const {
  if (!gpu || !cpu) return std::nullopt;
  return ratio(cpu->time.medianMs, gpu->endToEndMs());
}

Measurement describeOperation(const Operation& op) {
  Measurement m;
  m.version = gpulabVersion();
  m.operation = op.name();
  m.description = op.describe();
  m.params = op.params();
  m.method = op.method();
  return m;
}

// ---------------------------------------------------------------------------------------------
// CSV

namespace {

std::string csvNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

std::string csvNumber(const std::optional<double>& v) { return v ? csvNumber(*v) : std::string(); }

std::string csvText(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csvMedian(const std::optional<Stats>& s) { return s ? csvNumber(s->medianMs) : std::string(); }

}  // namespace

std::string csvHeader() {
  return "version,operation,description,method,gpu_method,cpu_method,input,output,device,cpu_threads,cpu_ms,"
         "upload_ms,compute_ms,download_ms,gpu_total_ms,speedup_compute,speedup_end_to_end,rate,rate_unit,"
         "percent_of_ceiling,max_abs_diff";
}

std::string toCsvRow(const Measurement& m) {
  const std::string fields[] = {
      csvText(m.version),
      csvText(m.operation),
      csvText(m.description),
      csvText(m.method),
      csvText(m.gpu ? m.gpu->methodUsed : std::string()),
      csvText(m.cpu ? m.cpu->methodUsed : std::string()),
      csvText(m.input ? describe(*m.input) : std::string()),
      csvText(describe(m.output)),
      csvText(m.gpu ? m.gpu->deviceName : std::string()),
      m.cpu ? std::to_string(m.cpu->threads) : std::string(),
      m.cpu ? csvNumber(m.cpu->time.medianMs) : std::string(),
      m.gpu ? csvMedian(m.gpu->upload) : std::string(),
      m.gpu && m.gpu->compute.reps > 0 ? csvNumber(m.gpu->compute.medianMs) : std::string(),
      m.gpu ? csvMedian(m.gpu->download) : std::string(),
      m.gpu ? csvNumber(m.gpu->endToEndMs()) : std::string(),
      csvNumber(m.speedup()),
      csvNumber(m.speedupEndToEnd()),
      csvNumber(m.gpuRate()),
      m.gpuRate() ? std::string(rateUnit(m.workUnit)) : std::string(),
      csvNumber(m.percentOfCeiling()),
      csvNumber(m.maxAbsDiff),
  };
  std::string row;
  for (const std::string& f : fields) {
    if (&f != &fields[0]) row += ',';
    row += f;
  }
  return row;
}

}  // namespace gpulab
