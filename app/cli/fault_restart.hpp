// gpulab-cli after a sticky GPU fault (gpulab::GpuFaultError): the CUDA context is lost and the driver
// gives the process no new one, so a command whose work can simply run again (filter, batch) restarts
// gpulab-cli as a new process image (core/relaunch.hpp), at most kMaxFaultRestarts times in a row; the
// others stop with exit code 1. Either way the fault is one sentence on stderr:
//   gpulab-cli: the GPU faulted (an illegal memory access was encountered, seen by cudaStreamSynchronize);
//   gpulab-cli restarts itself to get a new CUDA context (restart 1 of 2)
//   gpulab-cli: running again after a GPU fault (restart 1 of 2)
// A batch restarted so skips the images it wrote before the fault (kBatchWrittenVariable).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/errors.hpp"

namespace gpulab::cli {

/// Whether `command` (a subcommand's name) restarts gpulab-cli after a GPU fault: its work can run
/// again from its inputs (filter writes its output once, at the end; batch skips what it wrote).
inline bool restartsAfterGpuFault(std::string_view command) { return command == "filter" || command == "batch"; }

/// Set by gpulab-cli for the process it restarts into after a GPU fault in `batch`: a file that lists
/// the inputs already written, one path a line. Internal: not a user setting.
inline constexpr const char* kBatchWrittenVariable = "GPULAB_BATCH_WRITTEN";

/// An environment entry the restarted process gets on top of this one's (the batch's written list).
void setRestartEnvironment(std::string name, std::string value);

/// main's answer to a GpuFaultError in `command`: prints the sentence and restarts gpulab-cli when
/// the command may and the limit allows (never returns then), else returns exit code 1 after the
/// sentence that says why it stops.
int answerGpuFault(const GpuFaultError& fault, std::string_view command);

/// For the restarted process: one line on stderr saying that it runs again and why; nothing in a
/// first start.
void reportRestart();

/// `inputs` without those listed in the file `writtenList` names (kBatchWrittenVariable's format).
std::vector<std::filesystem::path> withoutWritten(const std::vector<std::filesystem::path>& inputs,
                                                  const std::vector<std::filesystem::path>& written);
/// The paths listed in `file`, one a line; empty when it cannot be read.
std::vector<std::filesystem::path> readPathList(const std::filesystem::path& file);
/// Writes `paths` one a line to `file`; false when it cannot be written.
bool writePathList(const std::filesystem::path& file, const std::vector<std::filesystem::path>& paths);

}  // namespace gpulab::cli
