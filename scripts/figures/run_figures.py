#!/usr/bin/python3
"""Paper-ready figures of one `cardiac run` output directory.

    /usr/bin/python3 scripts/figures/run_figures.py RUN_DIR      (or: cardiac figures RUN_DIR)

Writes RUN_DIR/figures/<name>.png (600 dpi) and <name>.pdf (vector), each atomically:

  pv_loop_<cavity>            pressure-volume loop per cavity (earlier beats faint, last beat bold)
  pv_time_<cavity>            pressure and volume against time, cardiac phases shaded
  strain_regional             AHA segment E_cc and E_ll over the last beat (regional_strain.csv)
  bullseye_peak_strain        AHA 17-segment bull's-eyes of peak E_cc, E_ll, E_ff (last beat)
  clinical_ranges             each quantity of summary.json clinical_comparison against its normal band
  j_histogram_end_systole     histogram of J = det F of all elements at end-systole
  view3d_end_systole_E_ff     3-D view of the deformed mesh at end-systole coloured by E_ff
  klotz_fit                   the passive calibration's inflation against the Klotz EDPVR (klotz_fit.csv)

A figure whose inputs are absent is skipped with a message. Exit status: 0 when RUN_DIR is usable
(even if some figures were skipped; a quasi-static run with only klotz_fit.csv gets that figure),
1 when RUN_DIR lacks timeseries.csv or summary.json (and klotz_fit.csv), 2 on bad usage. See
docs/figures.md.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import style  # noqa: E402  (selects the Agg backend before pyplot)
import clinical_figure  # noqa: E402
import klotz_fit  # noqa: E402
from run_data import Run, Skip, log  # noqa: E402
from pv_figures import fig_pv_loop, fig_pv_time  # noqa: E402
from strain_figures import fig_bullseye, fig_strain_regional  # noqa: E402
from frame_figures import fig_j_histogram, fig_view3d  # noqa: E402

# Where the figures are drawn: pv_figures.py (pv_loop_*, pv_time_*), strain_figures.py (strain_regional,
# bullseye_peak_strain), clinical_figure.py (clinical_ranges), frame_figures.py (j_histogram_*, view3d_*),
# klotz_fit.py (klotz_fit); the run directory's inputs are read by run_data.py.


def fig_clinical(run: Run, out: Path) -> list[Path]:
    try:
        return clinical_figure.fig_clinical_ranges(run.summary, out)
    except clinical_figure.Skip as e:
        raise Skip(str(e))


# The figure tasks of draw_run_figures: set before the workers fork, so that they inherit them
# (nothing is pickled but an index and the result).
_TASKS: list[tuple] = []


def _draw(index: int) -> tuple[str, list[str], str, str]:
    """Draw task `index`: (name, files written, "ok" / "skipped" / "failed", its log lines)."""
    name, fn, args = _TASKS[index]
    lines = io.StringIO()
    t = time.time()
    with contextlib.redirect_stdout(lines):
        try:
            paths = [str(p) for p in fn(*args)]
            print(f"  {name}: {time.time() - t:.1f} s")
            status = "ok"
        except Skip as e:
            paths, status = [], "skipped"
            print(f"  {name}: skipped: {e}")
        except Exception as e:  # a bug or a malformed input: report, go on with the others
            paths, status = [], "failed"
            print(f"  {name}: FAILED: {type(e).__name__}: {e}")
    return name, paths, status, lines.getvalue()


def _workers(tasks: int) -> int:
    """One process per CPU this process may run on (a Slurm allocation's, too), at most one per task."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, tasks))


def _draw_all(tasks: int) -> list[tuple[str, list[str], str, str]]:
    """Every task, on a pool of forked processes where there is more than one CPU (the figures are
    independent; on 2 cores the default case's 16 s of figures take about half). Results in task
    order, so the log reads the same at any number of processes."""
    workers = _workers(tasks)
    if workers == 1:
        return [_draw(i) for i in range(tasks)]
    context = multiprocessing.get_context("fork")  # the workers inherit _TASKS and the imports
    results: list[tuple[str, list[str], str, str]] = []
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = [pool.submit(_draw, i) for i in range(tasks)]
        for i, future in enumerate(futures):
            try:
                results.append(future.result())
            except Exception as e:  # a worker that died (a crash in a library) ends the pool
                name = _TASKS[i][0]
                results.append((name, [], "failed", f"  {name}: FAILED: its process ended: {type(e).__name__}: {e}\n"))
    return results


def draw_run_figures(run: Run, out: Path) -> tuple[list[Path], list[str], list[str]]:
    """Draw every beat figure of the run into out: (files written, figures skipped, figures failed)."""
    skipped: list[str] = []
    tasks: list[tuple] = []
    if not run.cavities:
        log("  PV figures: skipped: no <cavity>_volume_mL column in timeseries.csv")
    for cav in run.cavities:
        tasks.append((f"pv_loop_{cav}", fig_pv_loop, (run, cav, out)))
        tasks.append((f"pv_time_{cav}", fig_pv_time, (run, cav, out)))
    tasks.append(("strain_regional", fig_strain_regional, (run, out)))
    tasks.append(("bullseye_peak_strain", fig_bullseye, (run, out)))
    tasks.append(("clinical_ranges", fig_clinical, (run, out)))
    try:
        es = run.end_systolic_frame()
        # The slowest (the 3-D view renders through a virtual X server) first, so it overlaps the rest.
        tasks.insert(0, ("view3d_end_systole_E_ff", fig_view3d, (run, out, es)))
        tasks.append(("j_histogram_end_systole", fig_j_histogram, (run, out, es)))
    except Skip as e:
        skipped += ["j_histogram_end_systole", "view3d_end_systole_E_ff"]
        log(f"  j_histogram_end_systole, view3d_end_systole_E_ff: skipped: {e}")
    _TASKS[:] = tasks
    written: list[Path] = []
    failed: list[str] = []
    for name, paths, status, lines in _draw_all(len(tasks)):
        print(lines, end="", flush=True)
        written += [Path(p) for p in paths]
        if status == "skipped":
            skipped.append(name)
        elif status == "failed":
            failed.append(name)
    return written, skipped, failed


# ---------------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    run_dir = Path(argv[1])
    if not run_dir.is_dir():
        print(f"run_figures: RUN_DIR {run_dir} is not a directory", file=sys.stderr)
        return 1
    # The passive calibration's figure needs only its CSV (a quasi-static run has no time series).
    klotz = klotz_fit.draw(run_dir) if (run_dir / "klotz_fit.csv").is_file() else []
    for p in klotz:
        log(f"  {p}")
    try:
        run = Run(run_dir)
    except FileNotFoundError as e:
        if klotz:
            log(f"no beat figures: {run_dir} has no {e}")
            return 0
        print(f"run_figures: {run_dir} is not a usable run directory: missing {e}", file=sys.stderr)
        return 1
    except (ValueError, json.JSONDecodeError) as e:
        print(f"run_figures: {run_dir} is not a usable run directory: {e}", file=sys.stderr)
        return 1
    out = style.figures_dir(run_dir)
    t0 = time.time()
    log(f"figures of {run_dir} -> {out}")
    written, skipped, failed = draw_run_figures(run, out)
    log(f"wrote {len(written)} files in {time.time() - t0:.1f} s:")
    for p in written:
        log(f"  {p}")
    if skipped:
        log(f"skipped: {', '.join(skipped)}")
    if failed:
        log(f"failed: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
