#!/usr/bin/python3
"""Figures across the cases of a batch (one `cardiac run` per case, collected in cohort.csv).

    /usr/bin/python3 scripts/figures/cohort_figures.py BATCH_DIR

Reads BATCH_DIR/cohort.csv (one row per case: case, status, then any of <cavity>_EF,
<cavity>_EDV_mL, <cavity>_ESV_mL, <cavity>_SV_mL and peak strain columns such as peak_E_cc,
peak_E_ll, peak_E_ff, lv_peak_E_cc, ...; columns may be absent) and writes to BATCH_DIR/figures/
(PNG 600 dpi + vector PDF, atomically):

  cohort_ef             ejection fraction per case (one bar per cavity with an _EF column)
  cohort_volumes        EDV and ESV per case (when the columns exist)
  cohort_peak_strain    peak strains per case (one bar per peak strain column)

Rows whose status is not `ok` (or whose values are missing) are drawn as a hatched grey
"failed"/"n/a" marker, so that absent cases stay visible. Exit status 1 when BATCH_DIR/cohort.csv
is absent or has no `case` column, 0 otherwise (a figure without data is skipped with a message).
"""
from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import style  # noqa: E402

import numpy as np  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

STRAIN_SYMBOLS = {"E_cc": r"$E_{cc}$", "E_ll": r"$E_{ll}$", "E_ff": r"$E_{ff}$", "E_rr": r"$E_{rr}$"}


def num(s: str) -> float:
    try:
        v = float(s)
        return v if math.isfinite(v) else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def read_cohort(path: Path):
    with open(path, newline="") as f:
        rows = [{(k or "").strip(): (v or "").strip() for k, v in r.items()} for r in csv.DictReader(f)]
    return rows


def bars(ax, cases, series, ok, failed_label_y=0.0):
    """Grouped bars: series = [(label, values)]; cases not ok or nan drawn hatched."""
    n = len(series)
    x = np.arange(len(cases))
    width = 0.8 / max(n, 1)
    for j, (label, vals) in enumerate(series):
        xs = x - 0.4 + width * (j + 0.5)
        good = np.array([ok[i] and math.isfinite(vals[i]) for i in range(len(cases))])
        ax.bar(xs[good], np.asarray(vals)[good], width * 0.92, color=style.PALETTE[j % len(style.PALETTE)],
               label=label, zorder=2)
    ax.set_xticks(x)
    ax.set_xticklabels(cases, rotation=45 if len(cases) > 4 else 0, ha="right" if len(cases) > 4 else "center")
    ax.set_xlim(-0.6, len(cases) - 0.4)
    return x


def mark_missing(ax, x, cases, ok, anyvalue):
    """Hatched grey band + text where a case failed (status != ok) or has no value."""
    lo, hi = ax.get_ylim()
    for i in range(len(cases)):
        if not ok[i] or not anyvalue[i]:
            ax.axvspan(x[i] - 0.4, x[i] + 0.4, facecolor="none", edgecolor=style.FAINT, hatch="////", lw=0, zorder=1)
            ax.text(x[i], lo + 0.5 * (hi - lo), "failed" if not ok[i] else "n/a", rotation=90, ha="center",
                    va="center", fontsize=6, color=style.GREY,
                    bbox=dict(facecolor="white", edgecolor="none", pad=1.0))


def fig_width(ncases: int) -> float:
    return style.COLUMN_WIDTH if ncases <= 12 else style.DOUBLE_WIDTH



def bar_figure(out, name, cases, series, ok, ylabel, legend=True, zero_line=False):
    """One grouped bar chart across the cases (failed or missing cases marked); returns the files."""
    fig, ax = style.figure(width=fig_width(len(cases)), height=2.4)
    x = bars(ax, cases, series, ok)
    if zero_line:
        ax.axhline(0, color=style.GREY, lw=0.5, zorder=1)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("Case")
    anyv = [any(math.isfinite(s[1][i]) for s in series) for i in range(len(cases))]
    mark_missing(ax, x, cases, ok, anyv)
    if legend:
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(series), 4))
    return style.save(fig, out, name)

def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    batch = Path(argv[1])
    path = batch / "cohort.csv"
    if not path.is_file():
        print(f"cohort_figures: missing {path}", file=sys.stderr)
        return 1
    rows = read_cohort(path)
    if rows and "case" not in rows[0]:
        print(f"cohort_figures: {path} has no `case` column", file=sys.stderr)
        return 1
    if not rows:
        print(f"cohort_figures: {path} has no case; nothing to draw")
        return 0
    cols = list(rows[0].keys())
    cases = [r["case"] for r in rows]
    ok = [r.get("status", "ok").lower() == "ok" for r in rows]
    out = style.figures_dir(batch)
    written, skipped = [], []

    # EF per cavity (fraction in summary.json -> %; values > 1.5 are taken as already in %).
    ef_cols = [c for c in cols if re.fullmatch(r"(?:[A-Za-z0-9]+_)?EF(?:_percent|_pct)?", c)]
    if ef_cols:
        series = []
        for c in ef_cols:
            v = np.array([num(r.get(c)) for r in rows])
            finite = v[np.isfinite(v)]
            if finite.size and np.nanmax(np.abs(finite)) <= 1.5 and "percent" not in c and "pct" not in c:
                v = 100 * v
            cav = c.split("_")[0] if "_" in c and not c.startswith("EF") else ""
            series.append((cav.upper() if cav else "EF", list(v)))
        written += bar_figure(out, "cohort_ef", cases, series, ok, "Ejection fraction (%)",
                              legend=len(series) > 1)
    else:
        skipped.append("cohort_ef (no *_EF column)")

    # EDV / ESV
    vol_cols = [c for c in cols if re.fullmatch(r"(?:[A-Za-z0-9]+_)?(EDV|ESV)_mL", c)]
    if vol_cols:
        series = [(c.replace("_mL", "").replace("_", " ").upper().replace("EDV", "EDV").strip(),
                   [num(r.get(c)) for r in rows]) for c in vol_cols]
        written += bar_figure(out, "cohort_volumes", cases, series, ok, "Volume (mL)")
    else:
        skipped.append("cohort_volumes (no *_EDV_mL / *_ESV_mL column)")

    # Peak strains (dimensionless Green-Lagrange -> %)
    strain_cols = [c for c in cols if re.search(r"peak_E_(cc|ll|ff|rr)\b", c)]
    if strain_cols:
        series = []
        for c in strain_cols:
            m = re.search(r"peak_(E_(?:cc|ll|ff|rr))", c)
            prefix = c[: m.start()].rstrip("_")
            label = STRAIN_SYMBOLS[m.group(1)] + (f" ({prefix.upper()})" if prefix else "")
            series.append((label, [100 * num(r.get(c)) for r in rows]))
        written += bar_figure(out, "cohort_peak_strain", cases, series, ok, "Peak strain (%)", zero_line=True)
    else:
        skipped.append("cohort_peak_strain (no peak_E_* column)")

    nfail = sum(not o for o in ok)
    print(f"cohort figures of {batch}: {len(cases)} cases ({nfail} not ok)")
    for s in skipped:
        print(f"  skipped: {s}")
    print(f"wrote {len(written)} files:")
    for p in written:
        print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
