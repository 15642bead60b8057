// The labs of `gpulab-cli lab` that are not size sweeps: custom (kernels compiled at run time with
// NVRTC, CuPy's ElementwiseKernel and RawKernel), pool (cudaMalloc against the stream-ordered memory
// pool) and timing (timing pitfalls and the cold start). cmd_lab.cpp adds their options to the lab
// command and hands them the run when the experiment is one of theirs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace gpulab::cli {

/// "custom", "pool", "timing".
const std::vector<std::string>& courseLabNames();

/// What the sweep labs' options already hold that these labs read too.
struct CourseLabCommon {
  std::string dtype;
  int reps = 0;  ///< 0: not given, the lab's own default
  int warmup = 2;
  std::string jsonPath;
};

/// Adds the course labs' options to `lab` and returns the runner: it runs experiment `name` (one of
/// courseLabNames()) with them. Exit codes through the exceptions main.cpp maps: 2 for bad input or a
/// compile error (UsageError, with the compiler's lines), 1 for a failed verification or a GPU fault.
std::function<void(const std::string& name, const CourseLabCommon& common)> addCourseLabOptions(CLI::App& lab);

}  // namespace gpulab::cli
