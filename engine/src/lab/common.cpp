// The lab's public parts: names, size lists, records as CSV, crossovers, validation and dispatch.
// The experiments' shared toolkit (lab_detail.hpp) is in lab_state.cpp.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "gpulab/core/device.hpp"
#include "gpulab/lab/elementwise.hpp"  // kMaxVectorElements
#include "gpulab/lab/matmul.hpp"
#include "gpulab/lab/reduce.hpp"
#include "gpulab/lab/transfer.hpp"
#include "gpulab/lab/transpose.hpp"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

// ---------------------------------------------------------------------------------------------
// Names

std::size_t dtypeSize(DType type) { return type == DType::F32 ? 4 : 8; }

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) {
    if (!text.empty()) text += ", ";
    text += n;
  }
  return text;
}
}  // namespace

namespace {
/// The names of `First`, then of `Rest`.
template <class First, class... Rest>
std::vector<std::string> namesOf() {
  std::vector<std::string> names = enumNameList<First>();
  (std::ranges::copy(enumNameList<Rest>(), std::back_inserter(names)), ...);
  return names;
}
}  // namespace

std::vector<std::string> implNames(Experiment experiment) {
  switch (experiment) {
    case Experiment::Matmul:
      return enumNameList<MatmulImpl>();
    case Experiment::Transpose:
      return enumNameList<TransposeImpl>();
    case Experiment::Transfer:
      return namesOf<HostMemory, CopyPattern, PeerAccess>();
    case Experiment::Elementwise:
    case Experiment::Reduce:
      return enumNameList<Target>();
  }
  return {};
}

bool isGpuImpl(Experiment experiment, std::string_view impl) {
  if (experiment == Experiment::Transfer) return true;
  return impl.substr(0, 3) != "cpu";
}

std::vector<std::string> variantNames(Experiment experiment) {
  switch (experiment) {
    case Experiment::Elementwise:
      return enumNameList<ElementwiseOp>();
    case Experiment::Reduce:
      return enumNameList<ReduceOp>();
    case Experiment::Transfer: {
      std::vector<std::string> names = enumNameList<Direction>();
      names.emplace_back("pattern");
      names.emplace_back("p2p_ab");
      names.emplace_back("p2p_ba");
      return names;
    }
    case Experiment::Matmul:
    case Experiment::Transpose:
      return {};
  }
  return {};
}

namespace {
std::vector<SizePoint> doubling(std::int64_t from, std::int64_t to, std::int64_t factor) {
  std::vector<SizePoint> points;
  for (std::int64_t v = from; v <= to; v *= factor) points.push_back({v});
  return points;
}
}  // namespace

std::vector<SizePoint> defaultSizes(Experiment experiment) {
  switch (experiment) {
    case Experiment::Matmul:
      return doubling(32, 4096, 2);
    case Experiment::Transpose:
      return doubling(256, 8192, 2);
    case Experiment::Transfer:
      return doubling(std::int64_t{4} << 10, std::int64_t{256} << 20, 4);
    case Experiment::Elementwise:
    case Experiment::Reduce:
      return doubling(std::int64_t{1} << 10, std::int64_t{64} << 20, 4);
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Size lists

namespace {

constexpr std::int64_t kLargestSize = std::int64_t{1} << 50;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void badSize(std::string_view token, const std::string& why) {
  throw std::invalid_argument("size '" + std::string(token) + "' " + why);
}

/// "4096", "64K", "1M", "2G" (powers of 1024).
std::int64_t parseScalar(std::string_view token) {
  std::string_view digits = trim(token);
  if (digits.empty()) badSize(token, "is empty");
  if (digits.front() == '-') badSize(token, "is negative: sizes start at 1");
  std::int64_t multiplier = 1;
  switch (digits.back()) {
    case 'k':
    case 'K':
      multiplier = std::int64_t{1} << 10;
      break;
    case 'm':
    case 'M':
      multiplier = std::int64_t{1} << 20;
      break;
    case 'g':
    case 'G':
      multiplier = std::int64_t{1} << 30;
      break;
    default:
      break;
  }
  if (multiplier != 1) digits.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range) badSize(token, "is too large");
  if (error != std::errc() || end != digits.data() + digits.size() || digits.empty())
    badSize(token, "is not a whole number (sizes look like 4096, 64K, 1M, 33x100x7 or 32..4096)");
  if (value < 1) badSize(token, "is zero: sizes start at 1");
  if (value > kLargestSize / multiplier) badSize(token, "is too large");
  return value * multiplier;
}

}  // namespace

std::vector<SizePoint> parseSizeList(std::string_view text) {
  std::vector<SizePoint> points;
  if (trim(text).empty()) throw std::invalid_argument("the size list is empty");
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view token = trim(text.substr(start, comma - start));
    start = comma + 1;
    if (token.empty()) throw std::invalid_argument("the size list '" + std::string(text) + "' has an empty entry");
    if (const std::size_t dots = token.find(".."); dots != std::string_view::npos) {
      const std::int64_t from = parseScalar(token.substr(0, dots));
      const std::int64_t to = parseScalar(token.substr(dots + 2));
      if (from > to) badSize(token, "runs backwards: write the smaller size first");
      int count = 0;
      for (std::int64_t v = from; v <= to; v *= 2) {
        if (++count > 64) badSize(token, "has more than 64 points");
        points.push_back({v});
        if (v > to / 2) break;
      }
    } else if (token.find_first_of("xX") != std::string_view::npos) {
      SizePoint dims;
      std::size_t partStart = 0;
      while (partStart <= token.size()) {
        const std::size_t x = std::min(token.find_first_of("xX", partStart), token.size());
        dims.push_back(parseScalar(token.substr(partStart, x - partStart)));
        partStart = x + 1;
      }
      if (dims.size() > 3) badSize(token, "has more than three dimensions");
      points.push_back(std::move(dims));
    } else {
      points.push_back({parseScalar(token)});
    }
    if (comma == text.size()) break;
  }
  return points;
}

// ---------------------------------------------------------------------------------------------
// CSV

namespace {
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

std::string sizesText(const std::vector<std::int64_t>& sizes) {
  std::string text;
  for (std::int64_t s : sizes) {
    if (!text.empty()) text += 'x';
    text += std::to_string(s);
  }
  return text;
}

std::string csvHeader() {
  return "op,variant,impl,dtype,sizes,size,params,gpu,with_copies,median_ms,min_ms,max_ms,reps,upload_ms,"
         "download_ms,end_to_end_ms,gflops,gbps,ceiling,ceiling_name,ceiling_how,percent_of_ceiling,relative_error,"
         "note,device";
}

std::string toCsvRow(const Record& r) {
  std::string row;
  auto add = [&row](const std::string& field) {
    if (!row.empty()) row += ',';
    row += field;
  };
  add(csvField(r.experiment));
  add(csvField(r.variant));
  add(csvField(r.impl));
  add(csvField(r.dtype));
  add(sizesText(r.sizes));
  add(number(r.size));
  add(csvField(r.params));
  add(r.gpu ? "1" : "0");
  add(r.withCopies ? "1" : "0");
  for (double v : {r.medianMs, r.minMs, r.maxMs}) add(number(v));
  add(std::to_string(r.reps));
  for (double v : {r.uploadMs, r.downloadMs, r.endToEndMs(), r.gflops, r.gbps, r.ceiling}) add(number(v));
  add(csvField(r.ceilingName));
  add(csvField(r.ceilingHow));
  add(number(r.percentOfCeiling()));
  add(r.relativeError >= 0 ? number(r.relativeError) : "");
  add(csvField(r.note));
  add(csvField(r.device));
  return row;
}

// ---------------------------------------------------------------------------------------------
// Crossovers

namespace {

std::string sizeWords(double size, const std::string& experiment) {
  if (experiment == "transfer") return bytesText(static_cast<std::size_t>(size));
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", size);
  return text;
}

}  // namespace

std::string Crossover::sentence() const {
  std::string subject = dtype + " " + experiment + (variant.empty() ? "" : " " + variant) + ": " + gpuImpl +
                        (endToEnd ? " (with copies)" : " (compute only)");
  const std::string from = sizeWords(smallestSize, experiment);
  const std::string to = sizeWords(largestSize, experiment);
  switch (outcome) {
    case Outcome::Always:
      return subject + " is faster than " + cpuImpl + " at every size measured, " + from + " to " + to + ".";
    case Outcome::Never:
      return subject + " does not beat " + cpuImpl + " up to the largest size measured, " + to + ".";
    case Outcome::At:
      return subject + " beats " + cpuImpl + " from size " + sizeWords(firstWinningSize, experiment) +
             " on; the curves cross near " + sizeWords(estimatedSize, experiment) + " (between " +
             sizeWords(lastLosingSize, experiment) + " and " + sizeWords(firstWinningSize, experiment) + ").";
  }
  return subject;
}

std::vector<Crossover> findCrossovers(const std::vector<Record>& records) {
  using Group = std::tuple<std::string, std::string, std::string>;  // experiment, variant, dtype
  // group -> impl -> size -> time
  std::map<Group, std::map<std::string, std::map<double, double>>> cpu, gpuCompute, gpuEnd, gpuWithCopies;
  std::vector<Group> order;
  for (const Record& r : records) {
    const Group g{r.experiment, r.variant, r.dtype};
    if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
    if (!r.gpu)
      cpu[g][r.impl][r.size] = r.medianMs;
    else if (r.withCopies)
      gpuWithCopies[g][r.impl][r.size] = r.medianMs;
    else {
      gpuCompute[g][r.impl][r.size] = r.medianMs;
      gpuEnd[g][r.impl][r.size] = r.endToEndMs();
    }
  }

  std::vector<Crossover> result;
  for (const Group& g : order) {
    if (!cpu.count(g) || !gpuCompute.count(g)) continue;
    for (const auto& [gpuImpl, computeTimes] : gpuCompute[g]) {
      for (bool endToEnd : {false, true}) {
        std::map<double, double> gpuTimes = endToEnd ? gpuEnd[g][gpuImpl] : computeTimes;
        if (endToEnd)
          for (const auto& [size, ms] : gpuWithCopies[g][gpuImpl]) gpuTimes[size] = ms;  // measured whole: better
        for (const auto& [cpuImpl, cpuTimes] : cpu[g]) {
          std::vector<std::tuple<double, double, double>> common;  // size, gpu, cpu
          for (const auto& [size, ms] : gpuTimes)
            if (auto it = cpuTimes.find(size); it != cpuTimes.end()) common.emplace_back(size, ms, it->second);
          if (common.empty()) continue;
          Crossover c;
          std::tie(c.experiment, c.variant, c.dtype) = g;
          c.cpuImpl = cpuImpl;
          c.gpuImpl = gpuImpl;
          c.endToEnd = endToEnd;
          c.smallestSize = std::get<0>(common.front());
          c.largestSize = std::get<0>(common.back());
          // The first index from which the GPU wins at every larger size.
          std::size_t first = common.size();
          while (first > 0 && std::get<1>(common[first - 1]) < std::get<2>(common[first - 1])) --first;
          if (first == common.size()) {
            c.outcome = Crossover::Outcome::Never;
          } else if (first == 0) {
            c.outcome = Crossover::Outcome::Always;
          } else {
            c.outcome = Crossover::Outcome::At;
            const auto [x0, g0, c0] = common[first - 1];
            const auto [x1, g1, c1] = common[first];
            c.lastLosingSize = x0;
            c.firstWinningSize = x1;
            // log(gpu/cpu) is >= 0 at x0 and < 0 at x1; find its zero on log-log axes.
            const double r0 = std::log(std::max(g0, 1e-12) / std::max(c0, 1e-12));
            const double r1 = std::log(std::max(g1, 1e-12) / std::max(c1, 1e-12));
            const double t = r0 - r1 > 0 ? r0 / (r0 - r1) : 1.0;
            c.estimatedSize = std::exp(std::log(x0) + t * (std::log(x1) - std::log(x0)));
          }
          result.push_back(c);
        }
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Requests: validation and dispatch

namespace detail {

std::vector<std::string> selectedImpls(const LabRequest& request) {
  const std::vector<std::string> all = implNames(request.experiment);
  std::vector<std::string> chosen;
  if (request.impls.empty()) {
    const bool gpu = cudaAvailable();
    for (const std::string& name : all)
      if (gpu || !isGpuImpl(request.experiment, name)) chosen.push_back(name);
    return chosen;
  }
  for (const std::string& name : request.impls)
    if (std::find(all.begin(), all.end(), name) == all.end())
      throw std::invalid_argument("unknown implementation '" + name + "' for " +
                                  std::string(toString(request.experiment)) + ": choose from " + joined(all));
  for (const std::string& name : all)
    if (std::find(request.impls.begin(), request.impls.end(), name) != request.impls.end()) chosen.push_back(name);
  return chosen;
}

std::vector<std::string> selectedVariants(const LabRequest& request) {
  const std::vector<std::string> all = variantNames(request.experiment);
  if (request.variants.empty()) return all;
  if (all.empty())
    throw std::invalid_argument(std::string(toString(request.experiment)) + " has no variants to choose");
  for (const std::string& name : request.variants)
    if (std::find(all.begin(), all.end(), name) == all.end())
      throw std::invalid_argument("unknown " + std::string(toString(request.experiment)) + " variant '" + name +
                                  "': choose from " + joined(all));
  std::vector<std::string> chosen;
  for (const std::string& name : all)
    if (std::find(request.variants.begin(), request.variants.end(), name) != request.variants.end())
      chosen.push_back(name);
  return chosen;
}

std::vector<SizePoint> pointsOf(const LabRequest& request) {
  return request.points.empty() ? defaultSizes(request.experiment) : request.points;
}

std::vector<std::size_t> vectorSizes(const LabRequest& request, std::int64_t limit, const char* unit) {
  std::vector<std::size_t> sizes;
  for (const SizePoint& p : pointsOf(request)) {
    if (p.size() != 1)
      throw std::invalid_argument(std::string(toString(request.experiment)) + " sizes are single numbers of " + unit +
                                  ", not " + std::to_string(p.size()) + " dimensions");
    if (p[0] < 1 || p[0] > limit)
      throw std::invalid_argument(std::string(toString(request.experiment)) + " size " + std::to_string(p[0]) +
                                  " is out of range: 1 to " + std::to_string(limit) + " " + unit);
    sizes.push_back(static_cast<std::size_t>(p[0]));
  }
  return sizes;
}

MemoryNeed vectorMemory(const LabRequest& request, std::size_t arrays) {
  MemoryNeed need;
  for (std::size_t n : vectorSizes(request, static_cast<std::int64_t>(kMaxVectorElements), "elements")) {
    const std::size_t bytes = arrays * n * dtypeSize(request.dtype);
    need.hostBytes = std::max(need.hostBytes, bytes);
    need.deviceBytes = std::max(need.deviceBytes, bytes);
  }
  return need;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Public entry points

namespace {

/// What each experiment brings: size checks, the memory of its largest point, and its sweep.
struct ExperimentEntry {
  void (*validate)(const LabRequest&);
  MemoryNeed (*memory)(const LabRequest&);
  void (*run)(const LabRequest&, detail::Sweep&);
};

void validateVector(const LabRequest& request) {
  detail::vectorSizes(request, static_cast<std::int64_t>(kMaxVectorElements), "elements");
}

const ExperimentEntry& entryOf(Experiment experiment) {
  // In the order of the enum: matmul, transpose, transfer, elementwise (3 arrays), reduce (1 array).
  static const ExperimentEntry entries[] = {
      {detail::validateMatmul, detail::matmulMemory, detail::runMatmul},
      {detail::validateTranspose, detail::transposeMemory, detail::runTranspose},
      {detail::validateTransfer, detail::transferMemory, detail::runTransfer},
      {validateVector, [](const LabRequest& r) { return detail::vectorMemory(r, 3); }, detail::runElementwise},
      {validateVector, [](const LabRequest& r) { return detail::vectorMemory(r, 1); }, detail::runReduce},
  };
  return entries[static_cast<int>(experiment)];
}

}  // namespace

MemoryNeed memoryNeed(const LabRequest& request) { return entryOf(request.experiment).memory(request); }

void validate(const LabRequest& request) {
  if (request.reps < 1 || request.reps > 100000)
    throw std::invalid_argument("repetitions must be 1 to 100000, got " + std::to_string(request.reps));
  if (request.warmup < 0 || request.warmup > 1000)
    throw std::invalid_argument("warm-up runs must be 0 to 1000, got " + std::to_string(request.warmup));
  if (request.iterations < 1 || request.iterations > 100000)
    throw std::invalid_argument("iterations must be 1 to 100000, got " + std::to_string(request.iterations));
  const std::vector<std::string> impls = detail::selectedImpls(request);
  detail::selectedVariants(request);
  entryOf(request.experiment).validate(request);

  const std::string experiment(toString(request.experiment));
  if (impls.empty())
    throw std::runtime_error("the " + experiment +
                             " experiment runs on the GPU only: " + detail::gpuUnavailableReason());
  bool anyGpu = false;
  for (const std::string& impl : impls) {
    const bool gpu = isGpuImpl(request.experiment, impl);
    anyGpu = anyGpu || gpu;
    if (gpu && !cudaAvailable())
      throw std::runtime_error(impl + " needs a CUDA device: " + detail::gpuUnavailableReason());
  }
  const MemoryNeed need = memoryNeed(request);
  detail::requireHostMemory(need.hostBytes, "the largest " + experiment + " point");
  if (anyGpu) detail::requireDeviceMemory(need.deviceBytes, "the largest " + experiment + " point");
}

std::vector<Record> runLab(const LabRequest& request, const CpuControl& control, const RecordSink& sink) {
  validate(request);
  const std::size_t variants = std::max<std::size_t>(1, detail::selectedVariants(request).size());
  const std::size_t steps = detail::pointsOf(request).size() * detail::selectedImpls(request).size() * variants;
  detail::Sweep sweep(control, sink, static_cast<int>(steps));
  sweep.checkCancel();
  entryOf(request.experiment).run(request, sweep);
  control.report(1.0);
  return std::move(sweep.records());
}

}  // namespace gpulab::lab
