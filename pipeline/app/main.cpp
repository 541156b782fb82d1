// cardiac: the command-line entry point. Arguments -> a command (commands.hpp) -> an exit code:
// 0 success, 1 the run failed, 2 bad usage, config or input (nothing was computed), 75 stopped by
// a signal after a checkpoint (common/exit_codes.hpp).
#include <iostream>
#include <new>
#include <stdexcept>

#include "app/args.hpp"
#include "app/commands.hpp"
#include "app/run_dir.hpp"
#include "app/runtime_env.hpp"
#include "cardio/core/dir_lock.hpp"
#include "cardio/core/error.hpp"
#include "common/exit_codes.hpp"
#include "common/run_log.hpp"

namespace {

using namespace cardio;

int dispatch(const app::Args& a, app::Stage& stage) {
  if (a.command == "validate") return app::validate(a, stage);
  if (a.command == "batch") return app::batch(a);
  if (a.command == "collect") return app::collect(a);
  if (a.command == "phantom") return app::phantom(a, stage);
  if (a.command == "figures") return app::figures(a);
  if (a.command == "bench") return app::bench(a);
  return app::run(a, stage);  // run, mesh
}

/// An error that reached main: one line on stderr and its exit code.
int report(const std::string& what, int code) {
  std::cerr << "cardiac: " << what << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  pipeline::choose_runtime_settings(argv);
  const app::Args a = app::parse_args(argc, argv);
  app::Stage stage;
  try {
    return dispatch(a, stage);
  } catch (const app::UsageError& e) {
    return report(e.what(), pipeline::kExitUsage);
  } catch (const DirectoryBusy& e) {  // another run holds OUTDIR: a usage error, nothing was touched
    return report(e.what(), pipeline::kExitUsage);
  } catch (const pipeline::UnusableOutput& e) {  // OUTDIR cannot be created or written: nothing was touched
    return report(e.what(), pipeline::kExitUsage);
  } catch (const Error& e) {
    return report(e.what(), a.command == "validate" ? pipeline::kExitUsage : pipeline::kExitFailed);
  } catch (const std::bad_alloc& e) {
    return app::out_of_memory(stage, e);
  } catch (const std::length_error& e) {
    return app::out_of_memory(stage, e);
  } catch (const std::exception& e) {
    return report(a.command + " failed: " + pipeline::describe(e), pipeline::kExitFailed);
  }
}
