// gpulab-cli lab matmul-multi: one matrix product split across several GPUs (lab/matmul_multi.hpp),
// against the first of them alone: times with and without copies, TFLOP/s, speedup, parallel
// efficiency, each GPU's upload rate while all upload at once, and the check against one GPU.
#pragma once

#include <string>

namespace gpulab::cli {

struct MatmulMultiOptions {
  std::string gpus = "all";  ///< --gpus: all | 0,1 | N
  std::string sizes;         ///< --sizes: N or MxNxK points; default 16384
  std::string dtype = "f32";
  int reps = 5;
  int warmup = 1;
  std::string jsonPath;
};

void runMatmulMulti(const MatmulMultiOptions& options);

}  // namespace gpulab::cli
