// Lab experiment: moving data between host and GPU.
//   h2d / d2h   cudaMemcpyAsync of n bytes from/to pageable memory (the driver stages it through
//               its own pinned buffer) and from/to pinned memory (the copy engine reads it
//               directly); the ceiling is the bus bandwidth of that direction, measured at the
//               start of the run as the fastest of kBusCeilingCopies pinned copies of
//               kBusCeilingBytes (BusCeiling)
//   p2p_ab /    cudaMemcpyPeerAsync of n bytes from GPU A to GPU B / from B to A (A and B: the first
//   p2p_ba      two GPUs of LabRequest::gpus, by default GPU 0 and GPU 1), with peer access disabled
//               (no_peer_access: the driver picks the path, staged through the host where the GPUs
//               cannot reach each other) and enabled (peer_access: cudaDeviceEnablePeerAccess both
//               ways, where cudaDeviceCanAccessPeer allows it); timed with events on a stream of the
//               source GPU. On a machine with one GPU these rows are still there, unmeasured, with
//               the note "needs two GPUs"
//   pattern     x*x+2*y repeated `iterations` times on n elements, "copy every iteration" (upload
//               x and y, compute, download, each time) against "upload once, compute many,
//               download once"; both from pinned memory, the whole sequence timed
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/core/image.hpp"  // HostMemory
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

using gpulab::HostMemory;  // Pageable, Pinned: the same kinds Image's samples live in
enum class Direction { HostToDevice, DeviceToHost };
enum class CopyPattern { CopyEveryIteration, UploadOnce };
enum class PeerAccess { Disabled, Enabled };

constexpr EnumText enumText(Direction) { return {"direction", "h2d|d2h"}; }
constexpr EnumText enumText(CopyPattern) { return {"copy pattern", "copy_every_iteration|upload_once"}; }
constexpr EnumText enumText(PeerAccess) { return {"peer access", "no_peer_access|peer_access"}; }

/// Record::note of a peer-to-peer row that a machine with fewer than two GPUs cannot measure.
inline constexpr const char* kNeedsTwoGpusNote = "needs two GPUs";

constexpr std::size_t kMaxTransferBytes = std::size_t{1} << 36;
constexpr std::size_t kBusCeilingBytes = std::size_t{256} << 20;
constexpr int kBusCeilingCopies = 10;

/// The bus ceiling of one direction: the fastest of `copies` pinned copies of `bytes` each (after
/// two warm-up copies), in GB/s = bytes / time (1 GB = 1e9 B).
struct BusCeiling {
  Direction direction = Direction::HostToDevice;
  double gbps = 0;
  std::size_t bytes = 0;
  int copies = 0;
  /// "fastest of 10 pinned copies of 256.0 MiB, host to device, at the start of this run".
  std::string how() const;
};

/// One size of a transfer sweep: GB/s and percent of the bus ceiling for pageable and pinned
/// memory in each direction, indexed [HostMemory][Direction]; -1 where the run did not measure it.
struct TransferSummaryRow {
  std::size_t bytes = 0;
  double gbps[2][2] = {{-1, -1}, {-1, -1}};
  double percentOfBus[2][2] = {{-1, -1}, {-1, -1}};
  /// Peer-to-peer GB/s indexed [PeerAccess][0: GPU A to B, 1: B to A]; -1 where not measured.
  double peerGbps[2][2] = {{-1, -1}, {-1, -1}};
};

/// The h2d/d2h and measured peer-to-peer copy records of a run as one row per size, sizes
/// ascending (pattern records and other experiments are ignored).
std::vector<TransferSummaryRow> summarizeTransfers(const std::vector<Record>& records);

/// Needs a CUDA device: the constructor throws std::runtime_error without one.
class TransferLab : public LabBase {
 public:
  TransferLab();
  ~TransferLab();

  /// Copies `bytes` from `in` to the GPU through `memory` and back into `out` (blocking).
  void roundTrip(HostMemory memory, const void* in, void* out, std::size_t bytes);

  /// Runs a pattern once (blocking): out = x*x + 2*y computed `iterations` times.
  template <class T>
  void runPattern(CopyPattern pattern, const T* x, const T* y, T* out, std::size_t n, int iterations);

  /// Times one copy of `bytes`; GB/s = bytes / median.
  Record measureCopy(HostMemory memory, Direction direction, std::size_t bytes, const MeasureOptions& options);
  /// Measures the bus ceiling of `direction` (blocking). Throws std::invalid_argument for bytes
  /// out of 1..kMaxTransferBytes or copies < 1.
  BusCeiling measureBusCeiling(Direction direction, std::size_t bytes = kBusCeilingBytes,
                               int copies = kBusCeilingCopies);
  /// Whether GPU `from` can map the memory of GPU `to` (cudaDeviceCanAccessPeer); false for the
  /// same device or a device that does not exist.
  static bool canAccessPeer(int from, int to);
  /// Times one cudaMemcpyPeerAsync of `bytes` from GPU `src` to GPU `dst` with peer access
  /// disabled or enabled (both ways; left as found afterwards); GB/s = bytes / median. Throws
  /// std::invalid_argument for src == dst or a device that does not exist, std::runtime_error for
  /// Enabled where cudaDeviceCanAccessPeer says no.
  Record measurePeerCopy(int src, int dst, PeerAccess access, std::size_t bytes, const MeasureOptions& options);
  /// Times a whole pattern on n elements; the record's median is the time of all iterations.
  Record measurePattern(CopyPattern pattern, DType dtype, std::size_t n, int iterations, const MeasureOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
