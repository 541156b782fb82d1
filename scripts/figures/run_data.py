"""The parts of a `cardiac run` output directory that the run's figures read: timeseries.csv,
summary.json, the frames of series.pvd, the cardiac phases and the cavities. Also Skip and log,
shared by the figure modules. Used by run_figures.py (docs/figures.md).
"""
from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

PHASES = ("filling", "isovolumic_contraction", "ejection", "isovolumic_relaxation")
SYSTOLE = ("isovolumic_contraction", "ejection")


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
# Phases and cavities
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


def cavity_summary(run: Run, cav: str) -> dict:
    for c in run.summary.get("cavities", []):
        if isinstance(c, dict) and c.get("name") == cav:
            return c
    return {}


def cavity_label(cav: str) -> str:
    return {"lv": "LV", "rv": "RV", "la": "LA", "ra": "RA"}.get(cav.lower(), cav)
