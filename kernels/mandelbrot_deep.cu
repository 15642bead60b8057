#include <stdexcept>
#include <string>

#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/mandelbrot_deep.cuh"

namespace gpulab::kernels {
namespace {

// 8x16-pixel blocks as the escape-time kernel: a warp covers 8x4 neighbours, whose counts and whose
// split between BLA and full steps are alike, so few lanes idle while the slowest one finishes (ncu on
// the 1e-100 view: 26 of 32 lanes active on average). Without a minimum of blocks per SM ptxas squeezes
// the kernel into 32 registers for full occupancy and spills; 8 blocks (up to 64 registers) keep it
// spill-free.
//
// Tried and dropped (H200, the 1e-100 view): lanes that take the next pixel of their warp's tile when
// theirs ends, from a tile queue, cut the idle lanes' share but ran 1.7-2.2x slower than this
// kernel, because neighbouring lanes then sit in different phases (BLA search against full steps)
// and diverge on every step.
constexpr int kBlockWidth = 8;
constexpr int kBlockHeight = 16;
constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------------------------------------
// Kernel

template <bool kExtended>
__global__ void __launch_bounds__(kBlockWidth* kBlockHeight, 8)
    perturbationKernel(PerturbationParams p, ReferenceView ref, BlaView bla, Plane<float> raw, int firstRow,
                       int rowCount, unsigned long long* stepCounter) {
  const int i = static_cast<int>(blockIdx.x) * kBlockWidth + static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y) * kBlockHeight + static_cast<int>(threadIdx.y);
  int steps = 0;
  if (i < p.width && row < rowCount)
    raw(i, firstRow + row) = perturbationValue<kExtended>(p, ref, bla, i, firstRow + row, &steps);
  if (stepCounter != nullptr) {  // one atomic per warp
    unsigned long long sum = static_cast<unsigned long long>(steps);
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(kFullMask, sum, offset);
    if (((threadIdx.y * blockDim.x + threadIdx.x) & 31) == 0) atomicAdd(stepCounter, sum);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launcher

void launchPerturbation(const PerturbationParams& p, const ReferenceView& ref, const BlaView& bla, Plane<float> raw,
                        const PerturbationLaunch& launch, cudaStream_t stream) {
  const int rows = launch.rowCount < 0 ? p.height - launch.firstRow : launch.rowCount;
  if (launch.firstRow < 0 || rows < 0 || launch.firstRow + rows > p.height)
    throw std::invalid_argument("rows " + std::to_string(launch.firstRow) + " to " +
                                std::to_string(launch.firstRow + rows) + " are outside the frame's " +
                                std::to_string(p.height) + " rows");
  if (raw.width < p.width || raw.height < p.height)
    throw std::invalid_argument("the raw plane " + std::to_string(raw.width) + "x" + std::to_string(raw.height) +
                                " is smaller than the frame " + std::to_string(p.width) + "x" +
                                std::to_string(p.height));
  if (ref.length < 2) throw std::invalid_argument("the reference orbit needs at least 2 points");
  if (p.width <= 0 || rows == 0) return;
  const dim3 block(kBlockWidth, kBlockHeight);
  const dim3 grid(divUp(p.width, kBlockWidth), divUp(rows, kBlockHeight));
  if (p.format == DeltaFormat::FloatExp)
    perturbationKernel<true><<<grid, block, 0, stream>>>(p, ref, bla, raw, launch.firstRow, rows, launch.stepCounter);
  else
    perturbationKernel<false><<<grid, block, 0, stream>>>(p, ref, bla, raw, launch.firstRow, rows, launch.stepCounter);
  GPULAB_CHECK_LAUNCH("mandelbrot deep perturbation");
}

}  // namespace gpulab::kernels
