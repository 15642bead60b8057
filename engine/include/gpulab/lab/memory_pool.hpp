// Lab experiment: why CuPy keeps a memory pool. Many allocations of mixed sizes (10,000 of 1 KiB to
// 64 MiB, log-uniform, a fixed seed) made and freed in the same order twice: with cudaMalloc/cudaFree,
// and with cudaMallocAsync/cudaFreeAsync on the device's default memory pool, whose release
// threshold is raised for the run so that freed memory stays reserved for reuse (CuPy's pool keeps
// it the same way). At most `live` allocations are alive at a time (each new one frees the oldest).
// Reports the time per allocation + free pair of each (host clock: both calls return to the host;
// the async side includes the final stream synchronisation), the first round apart (an empty pool),
// then the pool's statistics like CuPy's used_bytes / total_bytes (cudaMemPoolAttrUsedMemCurrent,
// ReservedMemCurrent and their high-water marks) before and after cudaMemPoolTrimTo(pool, 0), CuPy's
// free_all_blocks. The default pool's release threshold is restored afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/core/operation.hpp"  // CpuControl
#include "gpulab/core/timing.hpp"     // Stats
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

struct PoolRequest {
  int allocations = 10000;
  std::size_t minBytes = std::size_t{1} << 10;
  std::size_t maxBytes = std::size_t{64} << 20;
  std::uint64_t seed = 42;
  int live = 16;   ///< allocations alive at once
  int rounds = 3;  ///< timed rounds per side (median), after one untimed first round
};

/// Throws std::invalid_argument naming the bad field: allocations 1..1,000,000, 1 <= minBytes <=
/// maxBytes <= 4 GiB, live 1..allocations, rounds 1..1000.
void validate(const PoolRequest& request);

/// The sizes of the allocations, log-uniform in [minBytes, maxBytes], from the seed (the same on
/// every machine).
std::vector<std::size_t> poolAllocationSizes(const PoolRequest& request);

/// The most bytes alive at once when the sizes are allocated in order with `live` alive at most.
std::size_t peakLiveBytes(const std::vector<std::size_t>& sizes, int live);

/// The default pool's figures (cudaMemPoolGetAttribute), bytes.
struct PoolStats {
  std::size_t used = 0;          ///< UsedMemCurrent: handed out to allocations now
  std::size_t reserved = 0;      ///< ReservedMemCurrent: held by the pool from the driver
  std::size_t usedHigh = 0;      ///< UsedMemHigh since the run began
  std::size_t reservedHigh = 0;  ///< ReservedMemHigh since the run began
  /// "used 0 B, reserved 512.0 MiB (high: used 700.1 MiB, reserved 768.0 MiB)".
  std::string text() const;
};

struct PoolSide {
  std::string name;         ///< "cudaMalloc" or "cudaMallocAsync"
  Stats round;              ///< ms per round of all pairs
  double firstRoundMs = 0;  ///< the first (untimed) round: for the pool, an empty one
};

struct PoolReport {
  PoolRequest request;
  std::string deviceName;
  std::size_t requestedBytes = 0;  ///< sum of all sizes
  std::size_t peakLive = 0;        ///< peakLiveBytes
  PoolSide malloc;
  PoolSide async;
  PoolStats afterRun;   ///< the pool after the async rounds, every allocation freed
  PoolStats afterTrim;  ///< after cudaMemPoolTrimTo(pool, 0)
  double trimMs = 0;
  std::uint64_t releaseThreshold = 0;  ///< the default pool's own, restored at the end

  /// A side's round median per allocation + free pair, in microseconds.
  double perPairUs(const PoolSide& side) const { return side.round.medianMs * 1000.0 / request.allocations; }
  /// "cudaMallocAsync is 85.3x faster per allocation + free pair (2.1 us against 180.4 us)".
  std::string sentence() const;
  /// One row per side for the lab table (experiment "pool", variant "alloc+free", median ms per
  /// round, params with the per-pair time and counts).
  std::vector<Record> records() const;
};

class MemoryPoolLab : public LabBase {
 public:
  MemoryPoolLab();
  ~MemoryPoolLab();
  /// Blocking. Throws std::invalid_argument for a bad request, std::runtime_error without a GPU or
  /// when the device cannot hold `live` allocations of maxBytes, OperationCancelled when asked to stop.
  PoolReport run(const PoolRequest& request, const CpuControl& control = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
