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

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import style  # noqa: E402  (selects the Agg backend before pyplot)
import clinical_figure  # noqa: E402
import klotz_fit  # noqa: E402
from bullseye import LENGTHENING_THRESHOLD, bullseye, lengthening_segments  # noqa: E402

import numpy as np  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402

PHASES = ("filling", "isovolumic_contraction", "ejection", "isovolumic_relaxation")
SYSTOLE = ("isovolumic_contraction", "ejection")
STRAIN_NAMES = {"E_cc": "circumferential", "E_ll": "longitudinal", "E_ff": "fibre", "E_rr": "radial"}
STRAIN_SYMBOLS = {"E_cc": r"$E_{cc}$", "E_ll": r"$E_{ll}$", "E_ff": r"$E_{ff}$", "E_rr": r"$E_{rr}$"}


class Skip(Exception):
    """A figure cannot be drawn from this run (inputs absent): reported, not fatal."""


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def read_csv_columns(path: Path) -> dict[str, list[str]]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path} is empty")
    header = [h.strip() for h in rows[0]]
    cols: dict[str, list[str]] = {h: [] for h in header}
    for r in rows[1:]:
        if not r:
            continue
        for h, v in zip(header, r):
            cols[h].append(v.strip())
    return cols


def as_float(values: list[str]) -> np.ndarray:
    out = np.empty(len(values))
    for i, v in enumerate(values):
        try:
            out[i] = float(v)
        except ValueError:
            out[i] = np.nan
    return out


class Run:
    """The parts of a run directory the figures use."""

    def __init__(self, run_dir: Path):
        self.dir = run_dir
        ts_path = run_dir / "timeseries.csv"
        sm_path = run_dir / "summary.json"
        missing = [p.name for p in (ts_path, sm_path) if not p.is_file()]
        if missing:
            raise FileNotFoundError(", ".join(str(run_dir / m) for m in missing))
        with open(sm_path) as f:
            self.summary = json.load(f)
        self.ts = read_csv_columns(ts_path)
        if "time_ms" not in self.ts:
            raise ValueError(f"{ts_path}: no time_ms column")
        self.t = as_float(self.ts["time_ms"])
        names = [c.get("name") for c in self.summary.get("cavities", []) if isinstance(c, dict)]
        if not names:  # fall back on the columns <name>_volume_mL
            names = [h[: -len("_volume_mL")] for h in self.ts if h.endswith("_volume_mL") and h != "tissue_volume_mL"]
        self.cavities = [n for n in names if n and f"{n}_volume_mL" in self.ts]
        self.ref_cavity = "lv" if "lv" in self.cavities else (self.cavities[0] if self.cavities else None)
        self.beat_starts = self._beat_starts()

    def volume(self, cav):
        return as_float(self.ts[f"{cav}_volume_mL"])

    def pressure(self, cav):
        col = f"{cav}_pressure_mmHg"
        return as_float(self.ts[col]) if col in self.ts else None

    def phase(self, cav):
        col = f"{cav}_phase"
        return self.ts.get(col)

    def _beat_starts(self) -> list[int]:
        """Sample indices where systole starts (end-diastole) in the reference cavity."""
        if self.ref_cavity is None:
            return []
        ph = self.phase(self.ref_cavity)
        if ph is None:
            return []
        starts = []
        for i in range(1, len(ph)):
            if ph[i] in SYSTOLE and ph[i - 1] not in SYSTOLE:
                starts.append(i)
        return starts

    def last_beat_window(self) -> tuple[float, float] | None:
        """[t_ED, t_end] of the last beat (end-diastole of the last beat to the last sample)."""
        if not self.beat_starts:
            return None
        return float(self.t[self.beat_starts[-1]]), float(self.t[-1])

    def frames(self) -> list[tuple[float, Path]]:
        pvd = self.dir / "series.pvd"
        if not pvd.is_file():
            return []
        out = []
        for ds in ET.parse(pvd).getroot().iter("DataSet"):
            p = self.dir / ds.get("file", "")
            if p.is_file():
                out.append((float(ds.get("timestep", "nan")), p))
        return sorted(out, key=lambda x: x[0])

    def end_systolic_frame(self) -> tuple[float, Path, float]:
        """(time, path, volume) of the frame with the minimum reference-cavity volume (last beat)."""
        frames = self.frames()
        if not frames:
            raise Skip("no frames (series.pvd + frames/*.vtu absent)")
        if self.ref_cavity is None:
            raise Skip("no cavity volume in timeseries.csv to find end-systole")
        ft = np.array([f[0] for f in frames])
        fv = np.interp(ft, self.t, self.volume(self.ref_cavity))
        win = self.last_beat_window()
        mask = np.ones(len(ft), bool) if win is None else (ft >= win[0] - 1e-9) & (ft <= win[1] + 1e-9)
        if not mask.any():
            mask[:] = True
        idx = np.flatnonzero(mask)[np.argmin(fv[mask])]
        return frames[idx][0], frames[idx][1], float(fv[idx])


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

def phase_runs(t: np.ndarray, phase: list[str]):
    """Contiguous (t0, t1, phase) intervals; boundaries half-way between samples."""
    runs = []
    if not phase:
        return runs
    start = 0
    edges = np.concatenate(([t[0]], 0.5 * (t[1:] + t[:-1]), [t[-1]]))
    for i in range(1, len(phase) + 1):
        if i == len(phase) or phase[i] != phase[start]:
            runs.append((edges[start], edges[i], phase[start]))
            start = i
    return runs


def shade_phases(ax, t, phase):
    for t0, t1, ph in phase_runs(t, phase):
        if ph in style.PHASE_COLOURS:
            ax.axvspan(t0, t1, color=style.PHASE_COLOURS[ph], alpha=style.PHASE_ALPHA, lw=0, zorder=0)


def phase_legend_handles(phases_present):
    return [Patch(facecolor=style.PHASE_COLOURS[p], alpha=min(1.0, style.PHASE_ALPHA * 2.5), lw=0,
                  label=style.PHASE_LABELS[p]) for p in PHASES if p in phases_present]


def cavity_summary(run: Run, cav: str) -> dict:
    for c in run.summary.get("cavities", []):
        if isinstance(c, dict) and c.get("name") == cav:
            return c
    return {}


def cavity_label(cav: str) -> str:
    return {"lv": "LV", "rv": "RV", "la": "LA", "ra": "RA"}.get(cav.lower(), cav)


# ---------------------------------------------------------------------------------------------
# PV loop, pressure and volume against time
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# Regional strain
# ---------------------------------------------------------------------------------------------

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


def fig_clinical(run: Run, out: Path) -> list[Path]:
    try:
        return clinical_figure.fig_clinical_ranges(run.summary, out)
    except clinical_figure.Skip as e:
        raise Skip(str(e))


# ---------------------------------------------------------------------------------------------
# End-systolic frame: J histogram and the 3-D view
# ---------------------------------------------------------------------------------------------

# VTK hexahedron node order: (xi, eta, zeta) signs of nodes 0..7.
_HEX_SIGNS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                       [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], float)


class Frame:
    """One VTU frame read with VTK (no rendering): reference points, displacement, cell arrays."""

    def __init__(self, path: Path):
        from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
        from vtkmodules.util.numpy_support import vtk_to_numpy
        r = vtkXMLUnstructuredGridReader()
        r.SetFileName(str(path))
        r.Update()
        self.grid = g = r.GetOutput()
        if g is None or g.GetNumberOfCells() == 0:
            raise Skip(f"{path} has no cells")
        self.path = path
        self.X = vtk_to_numpy(g.GetPoints().GetData()).astype(float)
        pd, cd = g.GetPointData(), g.GetCellData()
        u = pd.GetArray("displacement")
        self.u = vtk_to_numpy(u).astype(float) if u is not None else None
        self.cell = {cd.GetArrayName(i): vtk_to_numpy(cd.GetArray(i)) for i in range(cd.GetNumberOfArrays())}
        self._F = None

    def hex_connectivity(self):
        from vtkmodules.util.numpy_support import vtk_to_numpy
        g = self.grid
        types = vtk_to_numpy(g.GetCellTypesArray())
        if not np.all(types == 12):
            return None
        conn = vtk_to_numpy(g.GetCells().GetConnectivityArray())
        return conn.reshape(-1, 8)

    def F(self):
        """Deformation gradient at each hexahedron centre (trilinear shape functions)."""
        if self._F is None:
            if self.u is None:
                raise Skip(f"{self.path.name} has no point displacement")
            conn = self.hex_connectivity()
            if conn is None:
                raise Skip(f"{self.path.name}: not all cells are hexahedra")
            dN = _HEX_SIGNS / 8.0                       # dN_a/dxi at the centre, (8, 3)
            Xe = self.X[conn]                            # (n, 8, 3)
            xe = Xe + self.u[conn]
            dXdxi = np.einsum("nai,aj->nij", Xe, dN)     # (n, 3, 3)
            dxdxi = np.einsum("nai,aj->nij", xe, dN)
            self._F = dxdxi @ np.linalg.inv(dXdxi)
        return self._F

    def J(self) -> tuple[np.ndarray, str]:
        if "J" in self.cell:
            return np.asarray(self.cell["J"], float).ravel(), "frame cell data J"
        return np.linalg.det(self.F()), "computed here from the displacement (element centre)"

    def E_ff(self) -> tuple[np.ndarray, str]:
        if "E_ff" in self.cell:
            return np.asarray(self.cell["E_ff"], float).ravel(), "frame cell data E_ff"
        f = self.cell.get("fibre")
        if f is None:
            raise Skip(f"{self.path.name} has neither E_ff nor fibre cell data")
        F = self.F()
        f = np.asarray(f, float).reshape(-1, 3)
        f = f / np.linalg.norm(f, axis=1, keepdims=True)
        Ff = np.einsum("nij,nj->ni", F, f)
        return 0.5 * (np.einsum("ni,ni->n", Ff, Ff) - 1.0), \
            "computed here from the displacement, relative to rest (frames carry no E_ff yet)"


def fig_j_histogram(run: Run, out: Path, es) -> list[Path]:
    t_es, path, v_es = es
    fr = Frame(path)
    J, source = fr.J()
    J = J[np.isfinite(J)]
    if J.size == 0:
        raise Skip("no finite J")
    fig, ax = style.figure(height=2.3)
    lo, hi = float(J.min()), float(J.max())
    span = max(hi - lo, 1e-6)
    ax.hist(J, bins=min(60, max(10, int(math.sqrt(J.size)))), range=(lo - 0.02 * span, hi + 0.02 * span),
            color=style.PALETTE[0], edgecolor="white", linewidth=0.3)
    ax.axvline(1.0, color=style.PALETTE[1], lw=1.0, ls="--", label="J = 1 (incompressible)")
    ax.set_xlabel("J = det F (–)")
    ax.set_ylabel("Elements")
    ax.text(0.98, 0.97, f"end-systole, t = {t_es:.0f} ms\nn = {J.size}\nmean {J.mean():.3f}\n"
            f"range {lo:.3f}–{hi:.3f}", transform=ax.transAxes, ha="right", va="top")
    ax.legend(loc="upper left")
    log(f"  J from {source}; end-systolic frame {path.name} (t = {t_es:.1f} ms, "
        f"{cavity_label(run.ref_cavity)} volume {v_es:.3f} mL)")
    return style.save(fig, out, "j_histogram_end_systole")


def render_command(args: list[str]) -> tuple[list[str], str]:
    """How to run render3d.py here: directly with a display, else under xvfb-run."""
    py = sys.executable or "/usr/bin/python3"
    base = [py, str(Path(__file__).resolve().parent / "render3d.py")] + args
    if os.environ.get("DISPLAY"):
        return base, f"X display {os.environ['DISPLAY']}"
    xvfb = shutil.which("xvfb-run")
    if xvfb:
        return [xvfb, "-a", "-s", "-screen 0 1600x1600x24 -nolisten tcp"] + base, "xvfb-run (virtual X server)"
    return base, "no display and no xvfb-run: trying VTK's own off-screen context"


def fig_view3d(run: Run, out: Path, es) -> list[Path]:
    from vtkmodules.vtkCommonCore import vtkDoubleArray, vtkPoints
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridWriter
    from vtkmodules.util.numpy_support import numpy_to_vtk
    t_es, path, _ = es
    fr = Frame(path)
    eff, source = fr.E_ff()
    g = fr.grid
    if fr.u is not None:  # move the points: render the deformed (end-systolic) shape
        pts = vtkPoints()
        pts.SetData(numpy_to_vtk(np.ascontiguousarray(fr.X + fr.u), deep=True))
        g.SetPoints(pts)
    arr = numpy_to_vtk(np.ascontiguousarray(eff.astype(float)), deep=True, array_type=vtkDoubleArray().GetDataType())
    arr.SetName("E_ff_view")
    g.GetCellData().AddArray(arr)
    finite = eff[np.isfinite(eff)]
    if finite.size == 0:
        raise Skip("E_ff has no finite value")
    lim = float(np.percentile(np.abs(finite), 99)) or 1e-3
    cmap = style.DIVERGING_CMAP
    with tempfile.TemporaryDirectory(prefix="cardiac-fig-") as tmp:
        vtu = Path(tmp) / "es.vtu"
        png = Path(tmp) / "view.png"
        w = vtkXMLUnstructuredGridWriter()
        w.SetFileName(str(vtu))
        w.SetInputData(g)
        w.SetDataModeToBinary()
        w.Write()
        cmd, how = render_command([str(vtu), "E_ff_view", repr(-lim), repr(lim), cmap, str(png), "--size", "1400",
                                   "--cut"])
        t0 = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            raise Skip(f"3-D rendering timed out ({how})")
        if r.returncode != 0 or not png.is_file():
            text = re.sub(r"\x1b\[[0-9;]*m", "", r.stderr or r.stdout or "")
            tail = [ln.strip() for ln in text.strip().splitlines()[-2:]]
            hint = "" if os.environ.get("DISPLAY") or shutil.which("xvfb-run") else \
                "; install xvfb and xauth (Debian's VTK renders only through an X server)"
            raise Skip(f"3-D rendering failed ({how}, exit {r.returncode}): " + " | ".join(tail) + hint)
        log(f"  3-D view rendered off-screen via {how} in {time.time() - t0:.1f} s; E_ff {source}")
        img = plt.imread(str(png))
    # crop the white margin
    nonwhite = np.where(img[..., :3].min(axis=2) < 0.98)
    if nonwhite[0].size:
        r0, r1 = max(nonwhite[0].min() - 10, 0), min(nonwhite[0].max() + 10, img.shape[0])
        c0, c1 = max(nonwhite[1].min() - 10, 0), min(nonwhite[1].max() + 10, img.shape[1])
        img = img[r0:r1, c0:c1]
    aspect = img.shape[0] / img.shape[1]
    fig, ax = style.figure(height=min(4.5, 2.9 * aspect + 0.6))
    ax.imshow(img, interpolation="none")
    ax.set_axis_off()
    cb = fig.colorbar(ScalarMappable(norm=Normalize(-100 * lim, 100 * lim), cmap=style.cmap(cmap)), ax=ax,
                      fraction=0.05, pad=0.02, aspect=25, shrink=0.8)
    cb.set_label(r"Fibre strain $E_{ff}$ (%)")
    cb.outline.set_linewidth(0.5)
    ax.set_title(f"End-systole (t = {t_es:.0f} ms), cut-away view", fontsize=style.FONT_SIZE)
    return style.save(fig, out, "view3d_end_systole_E_ff")


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
    written: list[Path] = []
    skipped: list[str] = []
    failed: list[str] = []

    def attempt(name, fn, *args):
        t = time.time()
        try:
            paths = fn(*args)
            written.extend(paths)
            log(f"  {name}: {time.time() - t:.1f} s")
        except Skip as e:
            skipped.append(name)
            log(f"  {name}: skipped: {e}")
        except Exception as e:  # a bug or a malformed input: report, go on with the others
            failed.append(name)
            log(f"  {name}: FAILED: {type(e).__name__}: {e}")

    log(f"figures of {run_dir} -> {out}")
    if not run.cavities:
        log("  PV figures: skipped: no <cavity>_volume_mL column in timeseries.csv")
    for cav in run.cavities:
        attempt(f"pv_loop_{cav}", fig_pv_loop, run, cav, out)
        attempt(f"pv_time_{cav}", fig_pv_time, run, cav, out)
    attempt("strain_regional", fig_strain_regional, run, out)
    attempt("bullseye_peak_strain", fig_bullseye, run, out)
    attempt("clinical_ranges", fig_clinical, run, out)
    try:
        es = run.end_systolic_frame()
    except Skip as e:
        es = None
        skipped += ["j_histogram_end_systole", "view3d_end_systole_E_ff"]
        log(f"  j_histogram_end_systole, view3d_end_systole_E_ff: skipped: {e}")
    if es is not None:
        attempt("j_histogram_end_systole", fig_j_histogram, run, out, es)
        attempt("view3d_end_systole_E_ff", fig_view3d, run, out, es)
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
