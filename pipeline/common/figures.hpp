// Figures of a run or a batch: runs the matplotlib/VTK scripts of scripts/figures/ with Debian's
// /usr/bin/python3 (docs/figures.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "cardio/core/process.hpp"

namespace cardio::figures {

/// The interpreter the figure scripts are run with (Debian's, which has python3-matplotlib and
/// python3-vtk9; never the `python3` first on PATH).
inline constexpr const char* kPython = "/usr/bin/python3";

/// The project's scripts/ directory: $CARDIAC_SCRIPTS_DIR when set and non-empty, else the
/// compile-time CARDIO_SCRIPTS_DIR (the source tree's scripts/).
std::filesystem::path scripts_dir();

/// scripts_dir()/figures/<script>.
std::filesystem::path script_path(const std::string& script);

/// The one launch of a figure script: runs `/usr/bin/python3 <script_path(script)> <dir>` (unbuffered)
/// to its end. Its stdout lines go to `on_out` and its stderr lines to `on_err`, or to `on_out` in the
/// order written when `on_err` is empty. Checks nothing; throws cardio::Error when it cannot start.
ProcessStatus launch_figure_script(const std::string& script, const std::filesystem::path& dir, const LineSink& on_out,
                                   const LineSink& on_err = {});

/// Checks /usr/bin/python3, the script and matplotlib, then runs
/// `/usr/bin/python3 <scripts_dir()>/figures/<script> <dir>` (e.g. script = "run_figures.py"
/// with dir = RUN_DIR, or "cohort_figures.py" with dir = BATCH_DIR). The script's stdout and
/// stderr are copied to `log` line by line as they come. Returns the script's exit status; 1 (with
/// a message on `log`) when /usr/bin/python3, matplotlib or the script is missing, or the script
/// was killed by a signal.
int run_figure_script(const std::string& script, const std::filesystem::path& dir, std::ostream& log);

}  // namespace cardio::figures
