// Lab experiment: reductions of n elements of float or double to one double.
//   sum, mean, std (population standard deviation, ddof 0, two passes: mean, then the mean of the
//   squared deviations), min, max
// cpu: stripes on all cores (OpenCV's TBB pool), four double accumulators per stripe, stripes
// combined in order; gpu: grid-stride blocks reduced with warp shuffles into per-block partials,
// then one block over the partials (reduce.cuh), no atomics. Both accumulate in double and give
// the same result on every run. GB/s counts n elements read once (std reads them twice); the
// ceiling is the DRAM copy bandwidth (deviceCopyCeiling); sizes whose input fits in L2 are noted.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

enum class ReduceOp { Sum, Mean, Std, Min, Max };

constexpr EnumText enumText(ReduceOp) { return {"reduction", "sum|mean|std|min|max"}; }

/// Plain loops in double on one core: the tests' oracle. Throws std::invalid_argument for n == 0.
template <class T>
double reduceReference(ReduceOp op, const T* x, std::size_t n);

class ReduceLab : public LabBase {
 public:
  ReduceLab();  ///< GPU resources only when a CUDA device exists
  ~ReduceLab();

  /// Blocking, host pointer; on the GPU: upload x, reduce, download the result. `maxBlocks` > 0
  /// caps the GPU grid (tests use it to force several grid-stride rounds). Throws
  /// std::invalid_argument for n == 0 or above kMaxVectorElements.
  template <class T>
  double reduce(Target target, ReduceOp op, const T* x, std::size_t n, int maxBlocks = 0);

  std::vector<Record> measure(Target target, ReduceOp op, DType dtype, std::size_t n, const MeasureOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
