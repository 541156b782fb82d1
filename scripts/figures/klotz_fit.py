#!/usr/bin/python3
"""The passive calibration's figure: the model's passive inflation curve against the Klotz EDPVR.

    /usr/bin/python3 scripts/figures/klotz_fit.py RUN_DIR

Reads RUN_DIR/klotz_fit.csv (pressure_mmHg, volume_klotz_mL, volume_model_mL) and, if present,
RUN_DIR/passive_calibration.json (fitted C, EDV, EDP), and writes RUN_DIR/figures/klotz_fit.png
(600 dpi) and .pdf, atomically. Exit status 1 when klotz_fit.csv is absent or lacks a column.
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import style  # noqa: E402

import numpy as np  # noqa: E402

COLUMNS = ("pressure_mmHg", "volume_klotz_mL", "volume_model_mL")


def draw(run_dir: Path) -> list[Path]:
    """The figure's files; FileNotFoundError or ValueError (with the reason) when the CSV is unusable."""
    path = run_dir / "klotz_fit.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or any(c not in rows[0] for c in COLUMNS):
        raise ValueError(f"{path}: expected the columns {', '.join(COLUMNS)}")
    p, vk, vm = ([float(r[c]) for r in rows] for c in COLUMNS)
    info = {}
    report = run_dir / "passive_calibration.json"
    if report.is_file():
        info = json.loads(report.read_text())
    fig, ax = style.figure()
    klotz = info.get("klotz", {})
    if "A_mmHg" in klotz and "B" in klotz and "unloaded_volume_mL" in info:
        # The smooth curve P = A (V - V0)^B; the CSV has it at the model's pressures only.
        ps = np.linspace(0.0, max(p), 200)
        vk_smooth = info["unloaded_volume_mL"] + (ps / klotz["A_mmHg"]) ** (1.0 / klotz["B"])
        ax.plot(vk_smooth, ps, color=style.GREY, linestyle="--", label="Klotz et al. 2006 EDPVR")
    else:
        ax.plot(vk, p, color=style.GREY, linestyle="--", label="Klotz et al. 2006 EDPVR")
    ax.plot(vm, p, color=style.PALETTE[0], marker="o", markersize=3, label="model (passive inflation)")
    if "end_diastolic_volume_mL" in info:
        ax.plot([info["end_diastolic_volume_mL"]], [info["end_diastolic_pressure_mmHg"]], "k*", markersize=6,
                label="image (EDV, EDP)")
    ax.set_xlabel("cavity volume [mL]")
    ax.set_ylabel("pressure [mmHg]")
    if "guccione_C_kPa" in info:
        ax.set_title(f"{info.get('cavity', '')}: fitted Guccione C = {info['guccione_C_kPa']:.3g} kPa")
    ax.legend(loc="upper left")
    return style.save(fig, style.figures_dir(run_dir), "klotz_fit")


def main(run_dir: Path) -> int:
    try:
        written = draw(run_dir)
    except (FileNotFoundError, ValueError) as e:
        print(f"klotz_fit.py: {e}", file=sys.stderr)
        return 1
    for out in written:
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
