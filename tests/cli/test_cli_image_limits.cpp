// gpulab-cli's image size limits as a user meets them: --max-image-side / --max-image-pixels (global
// options, before or after the subcommand), the environment variables GPULAB_MAX_IMAGE_SIDE /
// GPULAB_MAX_IMAGE_PIXELS, the option beating the variable, one-sentence refusals that name the limit
// and how to raise it (exit 1), and malformed values as usage errors (exit 2). CPU only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "support/cli_runner.hpp"
#include "support/gpu_test.hpp"
#include "support/io_test.hpp"

using namespace gpulab::test;  // runCli, describe, ...

namespace {

namespace fs = std::filesystem;

/// Sets an environment variable for the child processes of one test, and removes it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

class CliImageLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("GPULAB_MAX_IMAGE_SIDE");
    ::unsetenv("GPULAB_MAX_IMAGE_PIXELS");
    input_ = (dir_ / "in.png").string();
    output_ = (dir_ / "out.png").string();
    gpulab::saveImage(randomImage(40, 30, 3, gpulab::PixelType::U8, 31), input_);
  }
  /// A CPU box filter of the 40 x 30 input, with `global` options before the subcommand.
  Outcome filter(const std::vector<std::string>& global) {
    std::vector<std::string> args = global;
    for (const char* a : {"filter", "--op", "box", "--radius", "1", "--device", "cpu", "--reps", "1"})
      args.push_back(a);
    args.insert(args.end(), {"--in", input_, "--out", output_});
    return runCli(args);
  }

  ScratchDir dir_{"gpulab-test-cli-limits"};
  std::string input_, output_;
};

TEST_F(CliImageLimits, DefaultsLoadTheImage) {
  const Outcome o = filter({});
  EXPECT_EQ(o.exitCode, 0) << describe(o);
  EXPECT_TRUE(fs::exists(output_));
}

TEST_F(CliImageLimits, OptionsLowerTheLimitsAndTheRefusalSaysHowToRaiseThem) {
  Outcome o = filter({"--max-image-side", "32"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  EXPECT_TRUE(isOneLine(o.err)) << describe(o);
  for (const char* part : {"gpulab-cli: ", "in.png", "40x30", "exceeds the limit of 32 pixels a side",
                           "--max-image-side", "GPULAB_MAX_IMAGE_SIDE"})
    EXPECT_NE(o.err.find(part), std::string::npos) << part << "\n" << describe(o);
  EXPECT_FALSE(fs::exists(output_));

  o = filter({"--max-image-pixels", "1199"});
  EXPECT_EQ(o.exitCode, 1) << describe(o);
  for (const char* part : {"exceeds the limit of 1199 pixels", "--max-image-pixels", "GPULAB_MAX_IMAGE_PIXELS"})
    EXPECT_NE(o.err.find(part), std::string::npos) << part << "\n" << describe(o);

  // Exactly at the limits, and the options after the subcommand: loads.
  const std::vector<std::string> args = {
      "filter", "--op",  "box",   "--radius",         "1",  "--device",           "cpu", "--reps", "1", "--in",
      input_,   "--out", output_, "--max-image-side", "40", "--max-image-pixels", "1200"};
  o = runCli(args);
  EXPECT_EQ(o.exitCode, 0) << describe(o);
}

TEST_F(CliImageLimits, EnvironmentVariablesAndTheOptionBeatsThem) {
  {
    ScopedEnv side("GPULAB_MAX_IMAGE_SIDE", "32");
    Outcome o = filter({});
    EXPECT_EQ(o.exitCode, 1) << describe(o);
    EXPECT_NE(o.err.find("exceeds the limit of 32 pixels a side"), std::string::npos) << describe(o);
    o = filter({"--max-image-side", "64"});
    EXPECT_EQ(o.exitCode, 0) << describe(o);
  }
  {
    ScopedEnv pixels("GPULAB_MAX_IMAGE_PIXELS", "1000");
    Outcome o = filter({});
    EXPECT_EQ(o.exitCode, 1) << describe(o);
    EXPECT_NE(o.err.find("exceeds the limit of 1000 pixels"), std::string::npos) << describe(o);
    o = filter({"--max-image-pixels", "268435456"});
    EXPECT_EQ(o.exitCode, 0) << describe(o);
  }
}

TEST_F(CliImageLimits, MalformedValuesAreUsageErrors) {
  for (const char* bad : {"0", "abc", "32769", "12.5", "1e4", "99999999999999999999"}) {
    const Outcome o = runCli({"--max-image-side", bad, "info"});
    EXPECT_EQ(o.exitCode, 2) << bad << "\n" << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_NE(o.err.find("--max-image-side"), std::string::npos) << describe(o);
    EXPECT_NE(o.err.find("whole number from 1 to 32768"), std::string::npos) << describe(o);
  }
  for (const char* bad : {"0", "268435457", "-"}) {
    const Outcome o = runCli({"info", "--max-image-pixels", bad});
    EXPECT_EQ(o.exitCode, 2) << bad << "\n" << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_NE(o.err.find("--max-image-pixels"), std::string::npos) << describe(o);
  }
  {
    ScopedEnv env("GPULAB_MAX_IMAGE_PIXELS", "lots");
    Outcome o = runCli({"info"});
    EXPECT_EQ(o.exitCode, 2) << describe(o);
    EXPECT_TRUE(isOneLine(o.err)) << describe(o);
    EXPECT_NE(o.err.find("the environment variable GPULAB_MAX_IMAGE_PIXELS 'lots'"), std::string::npos) << describe(o);
    // The option replaces the variable, so its malformed value no longer matters.
    o = filter({"--max-image-pixels", "5000"});
    EXPECT_EQ(o.exitCode, 0) << describe(o);
  }
}

TEST_F(CliImageLimits, HelpListsTheOptions) {
  const Outcome o = runCli({"--help"});
  EXPECT_EQ(o.exitCode, 0) << describe(o);
  for (const char* part :
       {"--max-image-side", "--max-image-pixels", "GPULAB_MAX_IMAGE_SIDE", "GPULAB_MAX_IMAGE_PIXELS"})
    EXPECT_NE(o.out.find(part), std::string::npos) << part;
}

}  // namespace
