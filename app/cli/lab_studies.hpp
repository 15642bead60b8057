// The course's studies under `gpulab-cli lab` (cmd_lab_studies.cpp):
//   matmul-table   the Numba lab's table: naive, tiled, cuBLAS and OpenBLAS, f32 and f64, copies
//                  excluded and included, speedups, f64/f32 ratios, errors and allclose verdicts
//   tensor-cores   cuBLAS in f64, f32, tf32, bf16 and f16: TFLOP/s against relative error
//   linspace       the study guide's x = linspace(0, 1, N), z = x**2 + 2*y, sum/mean/max against exact
//                  values, and transcendental expressions
//   axis           sums along rows and columns and row normalisations, GPU against CPU, checked
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"

namespace gpulab::cli {

/// What the course studies read from `gpulab-cli lab`'s own options.
struct CourseCommon {
  std::string experiment;
  std::string sizes;
  std::string dtype;
  std::vector<std::string> ops;
  int reps = 0;
  int warmup = 0;
  std::string jsonPath;
};

/// Options only the course studies take.
struct CourseOptions {
  double cpuLimitSeconds = 60;
};

/// Adds --cpu-limit to `lab`.
std::shared_ptr<CourseOptions> registerCourseOptions(CLI::App& lab);
/// `base` followed by the course studies' names.
std::vector<std::string> labExperimentNames(std::vector<std::string> base);
/// "matmul-table, tensor-cores, linspace or axis".
std::string courseExperimentList();
bool isCourseExperiment(const std::string& name);
/// Runs one study; `lab` says which options were given (defaults differ per study).
void runCourseExperiment(const CLI::App& lab, const CourseCommon& common, const CourseOptions& options);

}  // namespace gpulab::cli
