// How many threads the CPU baselines use: one choice for the whole process (the CLI's
// --cpu-threads 1|all|N, the GUI's choice), all cores until chosen. It is applied to the three
// thread pools the engine's CPU code runs on: OpenCV's (cv::setNumThreads: filters, the lab's
// stripes), OpenBLAS's (openblas_set_num_threads: the lab's cpu_blas matrix products) and the
// engine's own parallelRows (the Mandelbrot renderers, when they are not told a count).
//
//   gpulab::setCpuThreads(gpulab::parseCpuThreads("1"));   // throws std::invalid_argument
//   gpulab::cpuLabel();                                    // "CPU (1 thread)"
#pragma once

#include <string>
#include <string_view>

namespace gpulab {

/// Hardware threads of this machine (at least 1).
int cpuCores() noexcept;

/// "all" -> 0 (every core), "1", "8" -> that count. Throws std::invalid_argument with one sentence
/// for anything else, for 0 or a negative count, and for more than 4096 threads.
int parseCpuThreads(std::string_view text);

/// 0: every core (the default); n > 0: n threads (capped at 4096). Applies it to OpenCV, OpenBLAS
/// and parallelRows at once.
void setCpuThreads(int threads);
/// The count in force: cpuCores() when set to all.
int cpuThreadSetting() noexcept;
/// "CPU (1 thread)", "CPU (16 threads)": how every CPU record and figure names its side.
std::string cpuLabel();
std::string cpuLabel(int threads);

}  // namespace gpulab
