"""The pressure-volume figures of a run: pv_loop_<cavity> (the PV loop, earlier beats faint, the
last beat bold) and pv_time_<cavity> (pressure and volume against time, the cardiac phases
shaded). Used by run_figures.py (docs/figures.md).
"""
from __future__ import annotations

from pathlib import Path

import style  # (selects the Agg backend before pyplot)
from run_data import PHASES, Run, Skip, cavity_label, cavity_summary, phase_runs

import numpy as np
from matplotlib.patches import Patch


def shade_phases(ax, t, phase):
    for t0, t1, ph in phase_runs(t, phase):
        if ph in style.PHASE_COLOURS:
            ax.axvspan(t0, t1, color=style.PHASE_COLOURS[ph], alpha=style.PHASE_ALPHA, lw=0, zorder=0)


def phase_legend_handles(phases_present):
    return [Patch(facecolor=style.PHASE_COLOURS[p], alpha=min(1.0, style.PHASE_ALPHA * 2.5), lw=0,
                  label=style.PHASE_LABELS[p]) for p in PHASES if p in phases_present]


def fig_pv_loop(run: Run, cav: str, out: Path) -> list[Path]:
    p = run.pressure(cav)
    if p is None:
        raise Skip(f"timeseries.csv has no {cav}_pressure_mmHg")
    v = run.volume(cav)
    starts = run.beat_starts
    fig, ax = style.figure(height=2.8)
    if not starts:
        ax.plot(v, p, color=style.PALETTE[0], lw=1.4, label="whole run (no beat found)")
    else:
        ax.plot(v[: starts[0] + 1], p[: starts[0] + 1], color=style.FAINT, lw=0.7, ls=":", label="initial filling")
        bounds = starts + [len(v) - 1]
        for k in range(len(starts)):
            a, b = bounds[k], bounds[k + 1]
            last = k == len(starts) - 1
            if last:
                ax.plot(v[a:b + 1], p[a:b + 1], color=style.PALETTE[0], lw=1.6, zorder=3,
                        label=f"beat {k + 1} (last)")
                ed = a
                es = a + int(np.argmin(v[a:b + 1]))
                ax.plot(v[ed], p[ed], "o", ms=3.5, color=style.PALETTE[1], zorder=4, label="end-diastole")
                ax.plot(v[es], p[es], "s", ms=3.5, color=style.PALETTE[2], zorder=4, label="end-systole")
            else:
                ax.plot(v[a:b + 1], p[a:b + 1], color=style.FAINT, lw=0.8, zorder=2,
                        label="earlier beats" if k == 0 else None)
    s = cavity_summary(run, cav)
    lb = s.get("last_beat", s)
    txt = []
    if isinstance(lb.get("EF"), (int, float)):
        txt.append(f"EF {100 * lb['EF']:.0f} %")
    if isinstance(lb.get("SV_mL"), (int, float)):
        txt.append(f"SV {lb['SV_mL']:.2f} mL")
    if txt:
        ax.text(0.03, 0.97, "\n".join(txt), transform=ax.transAxes, va="top", ha="left")
    ax.set_xlabel(f"{cavity_label(cav)} volume (mL)")
    ax.set_ylabel(f"{cavity_label(cav)} pressure (mmHg)")
    ax.legend(loc="upper right", handlelength=1.6)
    ax.set_ylim(bottom=min(0.0, float(np.nanmin(p))))
    return style.save(fig, out, f"pv_loop_{cav}")


def fig_pv_time(run: Run, cav: str, out: Path) -> list[Path]:
    v = run.volume(cav)
    p = run.pressure(cav)
    ph = run.phase(cav)
    nrows = 2 if p is not None else 1
    fig, axes = style.figure(height=3.2 if nrows == 2 else 1.9, nrows=nrows, sharex=True)
    axes = np.atleast_1d(axes)
    series = ([(p, f"{cavity_label(cav)} pressure (mmHg)")] if p is not None else []) + \
             [(v, f"{cavity_label(cav)} volume (mL)")]
    for ax, (y, label) in zip(axes, series):
        if ph:
            shade_phases(ax, run.t, ph)
        ax.plot(run.t, y, color="k", lw=1.0)
        ax.set_ylabel(label)
        ax.set_xlim(run.t[0], run.t[-1])
    axes[-1].set_xlabel("Time (ms)")
    if ph:
        handles = phase_legend_handles(set(ph))
        if handles:
            axes[0].legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=2,
                           handlelength=1.2, columnspacing=1.0, borderaxespad=0.0)
    return style.save(fig, out, f"pv_time_{cav}")
