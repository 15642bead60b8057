// Lab: host<->device transfers, pageable against pinned, and two ways to feed a GPU computation.
#include "gpulab/lab/transfer.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/elementwise.cuh"
#include "gpulab/lab/elementwise.hpp"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

namespace {

void validateBytes(std::size_t bytes) { detail::checkSize("transfer", bytes, kMaxTransferBytes, "bytes"); }

void validatePattern(std::size_t n, int iterations) {
  detail::checkSize("pattern", n, kMaxVectorElements, "elements");
  if (iterations < 1) throw std::invalid_argument("a pattern needs at least 1 iteration");
}

}  // namespace

std::string BusCeiling::how() const {
  return "fastest of " + std::to_string(copies) + " pinned copies of " + bytesText(bytes) + ", " +
         (direction == Direction::HostToDevice ? "host to device" : "device to host") + ", at the start of this run";
}

std::vector<TransferSummaryRow> summarizeTransfers(const std::vector<Record>& records) {
  std::vector<TransferSummaryRow> rows;
  for (const Record& r : records) {
    const bool host = (r.variant == "h2d" || r.variant == "d2h") && (r.impl == "pageable" || r.impl == "pinned");
    const bool peer = (r.variant == "p2p_ab" || r.variant == "p2p_ba") && r.reps > 0 &&
                      (r.impl == "peer_access" || r.impl == "no_peer_access");
    if (r.experiment != "transfer" || (!host && !peer) || r.sizes.size() != 1) continue;
    const std::size_t bytes = static_cast<std::size_t>(r.sizes[0]);
    auto row = std::find_if(rows.begin(), rows.end(), [&](const TransferSummaryRow& x) { return x.bytes == bytes; });
    if (row == rows.end()) {
      rows.push_back({});
      row = rows.end() - 1;
      row->bytes = bytes;
    }
    if (peer) {
      row->peerGbps[r.impl == "peer_access" ? 1 : 0][r.variant == "p2p_ba" ? 1 : 0] = r.gbps;
      continue;
    }
    const int memory = r.impl == "pinned" ? 1 : 0;
    const int direction = r.variant == "d2h" ? 1 : 0;
    row->gbps[memory][direction] = r.gbps;
    row->percentOfBus[memory][direction] = r.ceiling > 0 ? r.percentOfCeiling() : -1;
  }
  std::sort(rows.begin(), rows.end(),
            [](const TransferSummaryRow& a, const TransferSummaryRow& b) { return a.bytes < b.bytes; });
  return rows;
}

// ---------------------------------------------------------------------------------------------
// TransferLab

struct TransferLab::State {
  Stream stream;
  DeviceBuffer device;  // copies land here / come from here; pattern: x
  DeviceBuffer deviceY, deviceOut;
  detail::HostArray pageable;  // plain host memory
  detail::HostArray pinned;    // copies; pattern: x
  detail::HostArray pinnedY, pinnedOut;
  std::size_t touchedPageable = 0;
  std::size_t touchedPinned = 0;
  // Peer-to-peer: a buffer and a stream on each GPU involved, made with that device current.
  struct PeerSide {
    DeviceBuffer buffer;
    Stream stream;
  };
  std::map<int, std::unique_ptr<PeerSide>> peers;
  std::map<std::pair<int, int>, bool> enabledByUs;  // (from, to) peer access this lab turned on

  ~State() {
    // Leave the devices as found: peer access off again, each side freed with its device current.
    for (const auto& [pair, on] : enabledByUs)
      if (on && cudaSetDevice(pair.first) == cudaSuccess) cudaDeviceDisablePeerAccess(pair.second);
    for (auto& [ordinal, side] : peers)
      if (cudaSetDevice(ordinal) == cudaSuccess) side.reset();
    activateSelectedDevice();
  }

  PeerSide& peer(int ordinal, std::size_t bytes) {
    GPULAB_CUDA_CHECK(cudaSetDevice(ordinal));
    std::unique_ptr<PeerSide>& side = peers[ordinal];
    if (!side) side = std::make_unique<PeerSide>();
    side->buffer.reserve(bytes);
    return *side;
  }

  /// Peer access from `from` to `to` on or off (cudaDeviceEnablePeerAccess acts on the current device).
  void setPeerAccess(int from, int to, bool on) {
    bool& mine = enabledByUs[{from, to}];
    GPULAB_CUDA_CHECK(cudaSetDevice(from));
    if (on) {
      const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();  // on already: fine
      else
        GPULAB_CUDA_CHECK(status);
      mine = true;
    } else {
      const cudaError_t status = cudaDeviceDisablePeerAccess(to);
      if (status == cudaErrorPeerAccessNotEnabled)
        cudaGetLastError();  // off already: fine
      else
        GPULAB_CUDA_CHECK(status);
      mine = false;
    }
  }

  template <class T>
  void enqueuePattern(CopyPattern pattern, const T* x, const T* y, T* out, std::size_t n, int iterations) {
    const std::size_t bytes = n * sizeof(T);
    const cudaStream_t s = stream;
    T* dx = device.as<T>();
    T* dy = deviceY.as<T>();
    T* dout = deviceOut.as<T>();
    auto upload = [&] {
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, s));
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(dy, y, bytes, cudaMemcpyHostToDevice, s));
    };
    auto compute = [&] {
      kernels::launchElementwise(kernels::ElementwiseOp::SquarePlusTwice, T(0), dx, dy, dout, n, s);
    };
    auto download = [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, dout, bytes, cudaMemcpyDeviceToHost, s)); };
    if (pattern == CopyPattern::CopyEveryIteration) {
      for (int i = 0; i < iterations; ++i) {
        upload();
        compute();
        download();
      }
    } else {
      upload();
      for (int i = 0; i < iterations; ++i) compute();
      download();
    }
  }

  void reservePattern(std::size_t bytes) {
    device.reserve(bytes);
    deviceY.reserve(bytes);
    deviceOut.reserve(bytes);
  }
};

TransferLab::TransferLab() {
  if (!hasGpu())
    throw std::runtime_error("the transfer experiment needs a CUDA device: " + detail::gpuUnavailableReason());
  state_ = std::make_unique<State>();
}

TransferLab::~TransferLab() = default;

void TransferLab::roundTrip(HostMemory memory, const void* in, void* out, std::size_t bytes) {
  validateBytes(bytes);
  State& s = *state_;
  s.device.reserve(bytes);
  const cudaStream_t stream = s.stream;
  if (memory == HostMemory::Pageable) {
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.device.data(), in, bytes, cudaMemcpyHostToDevice, stream));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, s.device.data(), bytes, cudaMemcpyDeviceToHost, stream));
  } else {
    s.pinned.reserve(bytes, true);
    std::memcpy(s.pinned.data(), in, bytes);
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.device.data(), s.pinned.data(), bytes, cudaMemcpyHostToDevice, stream));
    s.stream.synchronize();
    std::memset(s.pinned.data(), 0, bytes);  // the download must really bring the data back
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.pinned.data(), s.device.data(), bytes, cudaMemcpyDeviceToHost, stream));
    s.stream.synchronize();
    std::memcpy(out, s.pinned.data(), bytes);
    return;
  }
  s.stream.synchronize();
}

template <class T>
void TransferLab::runPattern(CopyPattern pattern, const T* x, const T* y, T* out, std::size_t n, int iterations) {
  validatePattern(n, iterations);
  State& s = *state_;
  s.reservePattern(n * sizeof(T));
  s.enqueuePattern(pattern, x, y, out, n, iterations);
  s.stream.synchronize();
}
template void TransferLab::runPattern<float>(CopyPattern, const float*, const float*, float*, std::size_t, int);
template void TransferLab::runPattern<double>(CopyPattern, const double*, const double*, double*, std::size_t, int);

Record TransferLab::measureCopy(HostMemory memory, Direction direction, std::size_t bytes,
                                const MeasureOptions& options) {
  validateBytes(bytes);
  State& s = *state_;
  s.device.reserve(bytes);
  detail::HostArray& host = memory == HostMemory::Pinned ? s.pinned : s.pageable;
  host.reserve(bytes, memory == HostMemory::Pinned);
  // Touch every page once, so the first timed copy does not pay for page faults.
  std::size_t& touched = memory == HostMemory::Pinned ? s.touchedPinned : s.touchedPageable;
  if (touched < bytes) {
    std::memset(host.data(), 1, bytes);
    touched = bytes;
  }
  const cudaStream_t stream = s.stream;
  void* hostPtr = host.data();
  void* devPtr = s.device.data();
  const Stats stats =
      timeStream(stream,
                 [&] {
                   if (direction == Direction::HostToDevice)
                     GPULAB_CUDA_CHECK(cudaMemcpyAsync(devPtr, hostPtr, bytes, cudaMemcpyHostToDevice, stream));
                   else
                     GPULAB_CUDA_CHECK(cudaMemcpyAsync(hostPtr, devPtr, bytes, cudaMemcpyDeviceToHost, stream));
                 },
                 {options.warmup, options.reps});
  Record r;
  r.experiment = "transfer";
  r.variant = toString(direction);
  r.impl = toString(memory);
  r.dtype = "u8";
  r.sizes = {static_cast<std::int64_t>(bytes)};
  r.size = static_cast<double>(bytes);
  r.gpu = true;
  r.device = selectedDeviceLabel();
  r.params = memory == HostMemory::Pageable ? "staged by the driver" : "direct DMA";
  detail::setTimes(r, stats);
  r.gbps = static_cast<double>(bytes) / (r.medianMs * 1e6);
  return r;
}

BusCeiling TransferLab::measureBusCeiling(Direction direction, std::size_t bytes, int copies) {
  validateBytes(bytes);
  if (copies < 1) throw std::invalid_argument("the bus ceiling needs at least 1 copy, got " + std::to_string(copies));
  const Record fastest = measureCopy(HostMemory::Pinned, direction, bytes, {copies, 2, false, false});
  BusCeiling ceiling;
  ceiling.direction = direction;
  ceiling.bytes = bytes;
  ceiling.copies = copies;
  ceiling.gbps = static_cast<double>(bytes) / (fastest.minMs * 1e6);
  return ceiling;
}

bool TransferLab::canAccessPeer(int from, int to) {
  const int count = static_cast<int>(queryDevices().devices.size());
  if (from == to || from < 0 || to < 0 || from >= count || to >= count) return false;
  int can = 0;
  GPULAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  return can != 0;
}

Record TransferLab::measurePeerCopy(int src, int dst, PeerAccess access, std::size_t bytes,
                                    const MeasureOptions& options) {
  validateBytes(bytes);
  const DeviceReport report = queryDevices();
  const int count = static_cast<int>(report.devices.size());
  for (int d : {src, dst})
    if (d < 0 || d >= count)
      throw std::invalid_argument("there is no GPU " + std::to_string(d) + ": this machine has " +
                                  deviceListText(report));
  if (src == dst)
    throw std::invalid_argument("a peer-to-peer copy needs two different GPUs, got GPU " + std::to_string(src) +
                                " twice");
  const bool forward = canAccessPeer(src, dst), backward = canAccessPeer(dst, src);
  if (access == PeerAccess::Enabled && !(forward && backward))
    throw std::runtime_error("peer access between GPU " + std::to_string(src) + " and GPU " + std::to_string(dst) +
                             " is not possible: cudaDeviceCanAccessPeer says no");
  State& s = *state_;
  State::PeerSide& to = s.peer(dst, bytes);
  State::PeerSide& from = s.peer(src, bytes);  // leaves src current: the stream and events are its
  if (forward && backward) {
    s.setPeerAccess(src, dst, access == PeerAccess::Enabled);
    s.setPeerAccess(dst, src, access == PeerAccess::Enabled);
  }
  GPULAB_CUDA_CHECK(cudaSetDevice(src));
  const cudaStream_t stream = from.stream;
  void* dstPtr = to.buffer.data();
  const void* srcPtr = from.buffer.data();
  GPULAB_CUDA_CHECK(cudaMemsetAsync(from.buffer.data(), 1, bytes, stream));
  Stats stats;
  try {
    stats = timeStream(stream, [&] { GPULAB_CUDA_CHECK(cudaMemcpyPeerAsync(dstPtr, dst, srcPtr, src, bytes, stream)); },
                       {options.warmup, options.reps});
  } catch (...) {
    activateSelectedDevice();
    throw;
  }
  activateSelectedDevice();
  Record r;
  r.experiment = "transfer";
  r.variant = "p2p_" + std::string(src < dst ? "ab" : "ba");
  r.impl = toString(access);
  r.dtype = "u8";
  r.sizes = {static_cast<std::int64_t>(bytes)};
  r.size = static_cast<double>(bytes);
  r.gpu = true;
  r.device = deviceLabel(src) + " -> " + deviceLabel(dst);
  r.params = "GPU " + std::to_string(src) + " -> GPU " + std::to_string(dst) +
             ", cudaMemcpyPeerAsync; cudaDeviceCanAccessPeer " + (forward ? "yes" : "no") + " / " +
             (backward ? "yes" : "no") + " (" + std::to_string(src) + "->" + std::to_string(dst) + " / " +
             std::to_string(dst) + "->" + std::to_string(src) + "); peer access " +
             (access == PeerAccess::Enabled ? "enabled both ways" : "disabled");
  detail::setTimes(r, stats);
  r.gbps = static_cast<double>(bytes) / (r.medianMs * 1e6);
  return r;
}

Record TransferLab::measurePattern(CopyPattern pattern, DType dtype, std::size_t n, int iterations,
                                   const MeasureOptions& options) {
  validatePattern(n, iterations);
  State& s = *state_;
  const std::size_t bytes = n * dtypeSize(dtype);
  s.reservePattern(bytes);
  s.pinned.reserve(bytes, true);
  s.pinnedY.reserve(bytes, true);
  s.pinnedOut.reserve(bytes, true);
  s.touchedPinned = 0;  // contents replaced below
  Stats stats;
  if (dtype == DType::F32) {
    detail::fillRandom(s.pinned.as<float>(), n, 7);
    detail::fillRandom(s.pinnedY.as<float>(), n, 8);
    stats = timeStream(s.stream,
                       [&] {
                         s.enqueuePattern(pattern, s.pinned.as<float>(), s.pinnedY.as<float>(), s.pinnedOut.as<float>(),
                                          n, iterations);
                       },
                       {options.warmup, options.reps});
  } else {
    detail::fillRandom(s.pinned.as<double>(), n, 7);
    detail::fillRandom(s.pinnedY.as<double>(), n, 8);
    stats = timeStream(s.stream,
                       [&] {
                         s.enqueuePattern(pattern, s.pinned.as<double>(), s.pinnedY.as<double>(),
                                          s.pinnedOut.as<double>(), n, iterations);
                       },
                       {options.warmup, options.reps});
  }
  Record r;
  r.experiment = "transfer";
  r.variant = "pattern";
  r.impl = toString(pattern);
  r.dtype = toString(dtype);
  r.sizes = {static_cast<std::int64_t>(bytes)};
  r.size = static_cast<double>(bytes);
  r.gpu = true;
  r.device = selectedDeviceLabel();
  r.withCopies = true;
  r.params = "x*x+2*y on " + std::to_string(n) + " elements, " + std::to_string(iterations) + " iterations";
  detail::setTimes(r, stats);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Sweep

namespace detail {

void validateTransfer(const LabRequest& request) {
  vectorSizes(request, static_cast<std::int64_t>(kMaxTransferBytes), "bytes");
}

MemoryNeed transferMemory(const LabRequest& request) {
  MemoryNeed need;
  for (std::size_t bytes : vectorSizes(request, static_cast<std::int64_t>(kMaxTransferBytes), "bytes")) {
    const std::size_t largest = std::max(bytes, kBusCeilingBytes);
    need.hostBytes = std::max(need.hostBytes, 4 * largest);  // pageable + three pinned arrays
    need.deviceBytes = std::max(need.deviceBytes, 3 * largest);
  }
  return need;
}

void runTransfer(const LabRequest& request, Sweep& sweep) {
  const std::vector<std::string> impls = selectedImpls(request);
  const std::vector<std::string> variants = selectedVariants(request);
  const std::vector<std::size_t> sizes = vectorSizes(request, static_cast<std::int64_t>(kMaxTransferBytes), "bytes");
  auto chosen = [&](const char* name) { return std::find(impls.begin(), impls.end(), name) != impls.end(); };
  std::vector<HostMemory> memories;
  if (chosen("pageable")) memories.push_back(HostMemory::Pageable);
  if (chosen("pinned")) memories.push_back(HostMemory::Pinned);
  std::vector<CopyPattern> patterns;
  if (chosen("copy_every_iteration")) patterns.push_back(CopyPattern::CopyEveryIteration);
  if (chosen("upload_once")) patterns.push_back(CopyPattern::UploadOnce);

  std::vector<PeerAccess> peerAccesses;
  if (chosen("no_peer_access")) peerAccesses.push_back(PeerAccess::Disabled);
  if (chosen("peer_access")) peerAccesses.push_back(PeerAccess::Enabled);
  const int deviceCount = static_cast<int>(queryDevices().devices.size());
  const int peerA = request.gpus.size() >= 2 ? request.gpus[0] : 0;
  const int peerB = request.gpus.size() >= 2 ? request.gpus[1] : 1;
  const bool twoGpus = deviceCount >= 2 && peerA != peerB && std::max(peerA, peerB) < deviceCount;
  auto isPeer = [](const std::string& v) { return v == "p2p_ab" || v == "p2p_ba"; };

  int steps = 0;
  for (const std::string& v : variants)
    steps += static_cast<int>((v == "pattern" ? patterns.size()
                               : isPeer(v)    ? peerAccesses.size()
                                              : memories.size()) *
                              (isPeer(v) && !twoGpus ? 1 : sizes.size()));
  sweep.setTotalSteps(steps);

  TransferLab lab;
  const MeasureOptions options{request.reps, request.warmup, true, false};
  // The bus ceiling of each direction asked for, measured before anything else.
  std::vector<BusCeiling> ceilings;
  if (!memories.empty())
    for (const std::string& variant : variants)
      if (variant != "pattern" && !isPeer(variant)) {
        const Direction direction = variant == "h2d" ? Direction::HostToDevice : Direction::DeviceToHost;
        ceilings.push_back(lab.measureBusCeiling(direction));
        sweep.checkCancel();
      }
  for (const std::string& variant : variants) {
    if (isPeer(variant)) {
      const bool ab = variant == "p2p_ab";
      const int src = ab ? peerA : peerB, dst = ab ? peerB : peerA;
      for (PeerAccess access : peerAccesses) {
        if (!twoGpus) {
          // Still a row, so the table says what this machine cannot show.
          Record r;
          r.experiment = "transfer";
          r.variant = variant;
          r.impl = toString(access);
          r.dtype = "u8";
          r.sizes = {static_cast<std::int64_t>(sizes.back())};
          r.size = static_cast<double>(sizes.back());
          r.gpu = true;
          r.device = deviceCount >= 1 ? deviceLabel(0) : "no GPU";
          r.note = kNeedsTwoGpusNote;
          r.params = "cudaMemcpyPeerAsync between two GPUs: this machine has " + std::to_string(deviceCount) +
                     (deviceCount == 1 ? " GPU" : " GPUs") +
                     (deviceCount >= 2 ? " and --gpus named only one" : std::string());
          sweep.emit(r);
          sweep.stepDone();
          continue;
        }
        const bool possible = TransferLab::canAccessPeer(src, dst) && TransferLab::canAccessPeer(dst, src);
        for (std::size_t bytes : sizes) {
          if (access == PeerAccess::Enabled && !possible) {
            Record r;
            r.experiment = "transfer";
            r.variant = variant;
            r.impl = toString(access);
            r.dtype = "u8";
            r.sizes = {static_cast<std::int64_t>(bytes)};
            r.size = static_cast<double>(bytes);
            r.gpu = true;
            r.device = deviceLabel(src) + " -> " + deviceLabel(dst);
            r.note = "no peer access";
            r.params = "cudaDeviceCanAccessPeer says GPU " + std::to_string(src) + " and GPU " + std::to_string(dst) +
                       " cannot map each other's memory";
            sweep.emit(r);
          } else {
            sweep.emit(lab.measurePeerCopy(src, dst, access, bytes, options));
          }
          sweep.stepDone();
        }
      }
      continue;
    }
    if (variant == "pattern") {
      for (std::size_t bytes : sizes) {
        const std::size_t n = std::max<std::size_t>(1, bytes / dtypeSize(request.dtype));
        for (CopyPattern pattern : patterns) {
          sweep.emit(lab.measurePattern(pattern, request.dtype, n, request.iterations, options));
          sweep.stepDone();
        }
      }
      continue;
    }
    const Direction direction = variant == "h2d" ? Direction::HostToDevice : Direction::DeviceToHost;
    for (const BusCeiling& ceiling : ceilings) {
      if (ceiling.direction != direction) continue;
      for (std::size_t bytes : sizes) {
        for (HostMemory memory : memories) {
          Record r = lab.measureCopy(memory, direction, bytes, options);
          r.ceiling = ceiling.gbps;
          r.ceilingName = std::string("bus ") + std::string(toString(direction));
          r.ceilingHow = ceiling.how();
          sweep.emit(r);
          sweep.stepDone();
        }
      }
    }
  }
}

}  // namespace detail
}  // namespace gpulab::lab
