// Lab experiment: matrix transpose, out (cols x rows) = in^T (rows x cols), row-major, float and
// double, any sizes from 1 up, in four implementations:
//   cpu               32x32 cache blocks, rows of blocks spread over all cores (OpenCV's TBB pool)
//   gpu_naive         coalesced reads, writes strided by a whole column
//   gpu_tiled         through a 32x32 shared-memory tile: both sides coalesced, bank conflicts
//   gpu_tiled_padded  the same tile padded to 33 columns: no bank conflicts
// A transpose moves every byte once in and once out, like a copy; the DRAM copy bandwidth
// (deviceCopyCeiling) is its ceiling, and sizes whose input and output fit in L2 are noted.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

enum class TransposeImpl { Cpu, GpuNaive, GpuTiled, GpuTiledPadded };

constexpr EnumText enumText(TransposeImpl) {
  return {"transpose implementation", "cpu|gpu_naive|gpu_tiled|gpu_tiled_padded"};
}
bool isGpu(TransposeImpl impl);

constexpr int kMaxTransposeDim = 1 << 20;

struct TransposeShape {
  int rows = 0;  ///< of the input
  int cols = 0;
};

/// Throws std::invalid_argument unless rows and cols are in 1..kMaxTransposeDim.
void validate(const TransposeShape& shape);
/// {N} -> N x N; {R, C} -> R rows x C columns. Throws std::invalid_argument otherwise.
TransposeShape transposeShape(const SizePoint& point);

/// out[c * rows + r] = in[r * cols + c], one loop: the tests' oracle.
template <class T>
void transposeReference(const T* in, T* out, const TransposeShape& shape);

class TransposeLab : public LabBase {
 public:
  TransposeLab();  ///< GPU resources only when a CUDA device exists
  ~TransposeLab();

  /// Blocking, host pointers; GPU implementations upload, transpose and download. `out` must not
  /// overlap `in`. Throws std::invalid_argument for a bad shape, std::runtime_error for a GPU
  /// implementation without a GPU.
  template <class T>
  void transpose(TransposeImpl impl, const TransposeShape& shape, const T* in, T* out);

  /// Times `impl` on seeded random input: one record (GB/s counting bytes read + written), plus an
  /// end-to-end one when options.withCopies on the GPU.
  std::vector<Record> measure(TransposeImpl impl, DType dtype, const TransposeShape& shape,
                              const MeasureOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
