// gpulab-cli: the engine, headless. Subcommands are registered from cmd_*.cpp.
#include <cstdio>
#include <exception>
#include <string>

#include "commands.hpp"
#include "fault_restart.hpp"
#include "gpulab/core/errors.hpp"
#include "gpulab/core/relaunch.hpp"
#include "gpulab_build_version.hpp"

namespace {

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "gpulab-cli: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  gpulab::adoptFaultRestartState();  // restarted after a GPU fault: this process's, not its children's
  CLI::App app{"gpulab-cli: GPU image processing and GPU-computing lab, headless"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpulab-cli " GPULAB_VERSION_STRING);
  gpulab::cli::registerGlobalOptions(app);
  gpulab::cli::registerInfo(app);
  gpulab::cli::registerMandelbrot(app);
  gpulab::cli::registerLab(app);
  gpulab::cli::registerFft(app);
  gpulab::cli::registerFilter(app);
  gpulab::cli::registerBench(app);
  gpulab::cli::registerBatch(app);
  gpulab::cli::registerSoak(app);
  gpulab::cli::reportRestart();  // a process restarted after a GPU fault says so first

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line on stderr (CLI11's own message), and where to look for the rest.
    std::string message = e.what();
    if (auto* sub = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front())
      return fail(2, message + " (see 'gpulab-cli " + sub->get_name() + " --help')");
    return fail(2, message + " (see 'gpulab-cli --help')");
  } catch (const gpulab::cli::UsageError& e) {
    return fail(2, e.what());
  } catch (const gpulab::GpuFaultError& e) {  // a sticky fault: one sentence; filter and batch restart
    const auto commands = app.get_subcommands();
    return gpulab::cli::answerGpuFault(e, commands.empty() ? "" : commands.front()->get_name());
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
  return 0;
}
