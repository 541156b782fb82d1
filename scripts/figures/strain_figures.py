"""The strain figures of a run: strain_regional (AHA segment E_cc and E_ll over the last beat) and
bullseye_peak_strain (AHA 17-segment bull's-eyes of peak E_cc, E_ll, E_ff), from
regional_strain.csv or else summary.json analysis.peak_strain. Used by run_figures.py
(docs/figures.md).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import style  # (selects the Agg backend before pyplot)
from bullseye import LENGTHENING_THRESHOLD, bullseye, lengthening_segments
from run_data import Run, Skip, as_float, log, read_csv_columns

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.colors import Normalize
from matplotlib.cm import ScalarMappable

STRAIN_NAMES = {"E_cc": "circumferential", "E_ll": "longitudinal", "E_ff": "fibre", "E_rr": "radial"}
STRAIN_SYMBOLS = {"E_cc": r"$E_{cc}$", "E_ll": r"$E_{ll}$", "E_ff": r"$E_{ff}$", "E_rr": r"$E_{rr}$"}

AHA_RING = {**{s: "basal" for s in range(1, 7)}, **{s: "mid" for s in range(7, 13)},
            **{s: "apical" for s in range(13, 17)}, 17: "apex"}
AHA_NAMES = {1: "basal anterior", 2: "basal anteroseptal", 3: "basal inferoseptal", 4: "basal inferior",
             5: "basal inferolateral", 6: "basal anterolateral", 7: "mid anterior", 8: "mid anteroseptal",
             9: "mid inferoseptal", 10: "mid inferior", 11: "mid inferolateral", 12: "mid anterolateral",
             13: "apical anterior", 14: "apical septal", 15: "apical inferior", 16: "apical lateral", 17: "apex"}


class RegionalStrain:
    """regional_strain.csv: time_ms, segment (0 = whole LV, 1..17 AHA), E_cc, E_ll, E_rr, E_ff."""

    def __init__(self, path: Path):
        cols = read_csv_columns(path)
        tcol = next((c for c in cols if c == "time_ms" or c.startswith("time")), None)
        scol = next((c for c in cols if c.startswith("segment")), None)
        if tcol is None or scol is None:
            raise Skip(f"{path.name}: expected columns time_ms and segment, got {', '.join(cols)}")
        self.t = as_float(cols[tcol])
        self.seg = as_float(cols[scol]).astype(int)
        self.values = {}
        for name in STRAIN_NAMES:  # tolerate unit suffixes, e.g. E_cc_1 or "E_cc [-]"
            c = next((c for c in cols if c == name or re.match(re.escape(name) + r"\b", c)), None)
            if c is not None:
                self.values[name] = as_float(cols[c])

    def curve(self, name, segment):
        m = self.seg == segment
        t = self.t[m]
        o = np.argsort(t, kind="stable")
        return t[o], self.values[name][m][o]

    def segments(self):
        return sorted(set(int(s) for s in self.seg))

    def peaks(self, name, window):
        """Most negative value per segment 1..17 within the window (nan where absent)."""
        return self.extremes(name, window)[0]

    def extremes(self, name, window):
        """(most negative, most positive) value per segment 1..17 within the window (nan where absent)."""
        lo, hi = {}, {}
        for s in range(1, 18):
            t, y = self.curve(name, s)
            if window is not None:
                m = (t >= window[0] - 1e-9) & (t <= window[1] + 1e-9)
                t, y = t[m], y[m]
            y = y[np.isfinite(y)]
            lo[s] = float(y.min()) if y.size else float("nan")
            hi[s] = float(y.max()) if y.size else float("nan")
        return lo, hi


def load_regional(run: Run) -> RegionalStrain:
    path = run.dir / "regional_strain.csv"
    if not path.is_file():
        raise Skip("regional_strain.csv absent (the run wrote no regional strain)")
    rs = RegionalStrain(path)
    if not rs.values:
        raise Skip("regional_strain.csv has none of the columns E_cc, E_ll, E_rr, E_ff")
    return rs


def fig_strain_regional(run: Run, out: Path) -> list[Path]:
    rs = load_regional(run)
    names = [n for n in ("E_cc", "E_ll") if n in rs.values]
    if not names:
        raise Skip("regional_strain.csv has neither E_cc nor E_ll")
    win = run.last_beat_window()
    fig, axes = style.figure(height=1.75 * len(names) + 0.5, nrows=len(names), sharex=True)
    axes = np.atleast_1d(axes)
    segs = rs.segments()
    for ax, name in zip(axes, names):
        for s in segs:
            if not 1 <= s <= 17:
                continue
            t, y = rs.curve(name, s)
            if win is not None:
                m = (t >= win[0] - 1e-9) & (t <= win[1] + 1e-9)
                t, y = t[m] - win[0], y[m]
            ax.plot(t, 100 * y, color=style.RING_COLOURS[AHA_RING[s]], lw=0.6, alpha=0.85)
        if 0 in segs:
            t, y = rs.curve(name, 0)
            if win is not None:
                m = (t >= win[0] - 1e-9) & (t <= win[1] + 1e-9)
                t, y = t[m] - win[0], y[m]
            ax.plot(t, 100 * y, color="k", lw=1.6)
        ax.axhline(0, color=style.GREY, lw=0.5, zorder=0)
        ax.set_ylabel(f"{STRAIN_SYMBOLS[name]} (%)")
    axes[-1].set_xlabel("Time from end-diastole (ms)" if win is not None else "Time (ms)")
    handles = [Line2D([], [], color=style.RING_COLOURS[r], lw=0.9, label=lbl) for r, lbl in
               (("basal", "basal 1-6"), ("mid", "mid 7-12"), ("apical", "apical 13-16"), ("apex", "apex 17"))]
    if 0 in segs:
        handles.append(Line2D([], [], color="k", lw=1.6, label="LV mean"))
    axes[0].legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=3, handlelength=1.5,
                   columnspacing=1.0, borderaxespad=0.0)
    return style.save(fig, out, "strain_regional")


def peak_strains(run: Run) -> tuple[dict[str, dict[int, float]], dict[str, dict[int, float]], str]:
    """Peak shortening (most negative over the last beat) of E_cc, E_ll, E_ff per AHA segment, and
    per strain the segments that lengthen instead ({segment: peak lengthening}).

    From regional_strain.csv; else from summary.json analysis.peak_strain when it has per-segment
    values (which hold only the peak shortening: no lengthening marks then)."""
    win = run.last_beat_window()
    try:
        rs = load_regional(run)
        peaks, lengthening = {}, {}
        for n in ("E_cc", "E_ll", "E_ff"):
            if n in rs.values:
                lo, hi = rs.extremes(n, win)
                peaks[n], lengthening[n] = lo, lengthening_segments(lo, hi)
        return peaks, lengthening, "regional_strain.csv"
    except Skip as e:
        reason = str(e)
    peaks = peaks_from_summary(run.summary)
    if peaks:
        return peaks, {}, "summary.json analysis.peak_strain"
    raise Skip(reason + "; summary.json has no per-segment analysis.peak_strain")


def peaks_from_summary(summary: dict) -> dict[str, dict[int, float]]:
    """Tolerant reader of summary["analysis"]["peak_strain"] in the shapes a writer may choose:
    {"E_cc": {"1": v, ...}} / {"E_cc": [v1..v17]} / {"E_cc": {"1": {"value"|"peak": v, ...}}} /
    {"segments": [{"segment": s, "E_cc": v | {"value": v}}, ...]} / [{"segment": s, ...}]."""
    ps = (summary.get("analysis") or {}).get("peak_strain") if isinstance(summary, dict) else None
    if not ps:
        return {}

    def num(x):
        if isinstance(x, (int, float)):
            return float(x)
        if isinstance(x, dict):
            for k in ("value", "peak", "min", "E"):
                if isinstance(x.get(k), (int, float)):
                    return float(x[k])
        return float("nan")

    out: dict[str, dict[int, float]] = {}
    rows = ps if isinstance(ps, list) else ps.get("segments") if isinstance(ps, dict) else None
    if isinstance(rows, list):
        for r in rows:
            if isinstance(r, dict) and "segment" in r:
                for n in ("E_cc", "E_ll", "E_ff"):
                    if n in r:
                        out.setdefault(n, {})[int(r["segment"])] = num(r[n])
    elif isinstance(ps, dict):
        for n in ("E_cc", "E_ll", "E_ff"):
            v = ps.get(n)
            if isinstance(v, list) and len(v) >= 17:
                off = 1 if len(v) == 18 else 0  # [whole LV, 1..17] or [1..17]
                out[n] = {s: num(v[s - 1 + off]) for s in range(1, 18)}
            elif isinstance(v, dict):
                d = {}
                for k, x in v.items():
                    if str(k).isdigit() and 1 <= int(k) <= 17:
                        d[int(k)] = num(x)
                if d:
                    out[n] = d
    return {n: d for n, d in out.items() if any(math.isfinite(x) for x in d.values())}


def fig_bullseye(run: Run, out: Path) -> list[Path]:
    peaks, lengthening, source = peak_strains(run)
    names = [n for n in ("E_cc", "E_ll", "E_ff") if n in peaks]
    if not names:
        raise Skip("no peak E_cc, E_ll or E_ff per segment")
    cmap = style.cmap(style.PEAK_STRAIN_CMAP)
    fig, axes = style.figure(width=style.DOUBLE_WIDTH * len(names) / 3, height=2.95, ncols=len(names))
    axes = np.atleast_1d(axes)
    marked = False
    for ax, n in zip(axes, names):
        longer = lengthening.get(n, {})
        vals = np.array([v for s, v in peaks[n].items() if math.isfinite(v) and s not in longer]) * 100
        lo = float(vals.min()) if vals.size else -1.0
        hi = float(vals.max()) if vals.size else 0.0
        if hi - lo < 1e-9:
            lo, hi = lo - 0.5, hi + 0.5
        norm = Normalize(vmin=lo, vmax=hi)
        bullseye(ax, peaks[n], cmap, norm, lengthening=longer)
        marked = marked or bool(longer)
        ax.set_title(f"Peak {STRAIN_NAMES[n]} shortening {STRAIN_SYMBOLS[n]}")
        cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, orientation="horizontal",
                          fraction=0.06, pad=0.02, aspect=25)
        cb.set_label(f"{STRAIN_SYMBOLS[n]} (%)")
        cb.outline.set_linewidth(0.5)
        if longer:
            log(f"  {n}: segments {sorted(longer)} lengthen without shortening (peak lengthening "
                + ", ".join(f"{s}: +{100 * v:.0f} %" for s, v in sorted(longer.items())) + ")")
    if marked:  # room for the note under the colour bars
        fig.get_layout_engine().set(rect=(0, 0.07, 1, 0.93))
        fig.text(0.5, 0.01, f"Dotted: the segment lengthens (above +{100 * LENGTHENING_THRESHOLD:.0f} %) and never "
                 f"shortens below -{100 * LENGTHENING_THRESHOLD:.0f} %; its peak lengthening is shown (+).",
                 ha="center", va="bottom", fontsize=style.TICK_SIZE)
    log(f"  bull's-eye values from {source}")
    return style.save(fig, out, "bullseye_peak_strain")
