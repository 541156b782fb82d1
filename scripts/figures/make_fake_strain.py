#!/usr/bin/python3
"""Development stand-in for the strain outputs of a run (until the pipeline writes them).

    /usr/bin/python3 scripts/figures/make_fake_strain.py RUN_DIR

Adds to every frames/frame_NNNNN.vtu the cell arrays of the planned contract (docs/analysis.md):
E (9 components, row-major), E_ff, E_cc, E_rr, E_ll, J and aha_segment (0 = not LV, 1..17), and
writes RUN_DIR/regional_strain.csv (time_ms, segment, E_cc, E_ll, E_rr, E_ff; segment 0 = the whole
LV mean). The values are real Green-Lagrange strains relative to rest, computed from the frame
displacement at element centres, but the AHA segmentation and the cardiac directions are a crude
stand-in: long axis = z (the LV phantom's), base at the top of the mesh, sector 0 deg on +y,
no RV insertion. Only for developing and testing the figure scripts: it overwrites the frames.
"""
import csv
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_figures import Frame, Run  # noqa: E402


def aha_segments(centres, labels, lv_labels=(1,)):
    z = centres[:, 2]
    top, bottom = z.max(), z.min()
    h = top - bottom
    seg = np.zeros(len(centres), int)
    theta = (np.degrees(np.arctan2(centres[:, 0], centres[:, 1])) + 360.0) % 360.0  # counter-clockwise from +y
    rxy = np.hypot(centres[:, 0], centres[:, 1])
    lv = np.isin(labels, lv_labels) if labels is not None else np.ones(len(centres), bool)
    base = z >= bottom + 2 * h / 3
    mid = (z >= bottom + h / 3) & ~base
    apical = ~base & ~mid
    apex = apical & (rxy < 0.35 * rxy.max())
    seg[base] = 1 + (((theta[base] + 30) % 360) // 60).astype(int)
    seg[mid] = 7 + (((theta[mid] + 30) % 360) // 60).astype(int)
    ap = apical & ~apex
    seg[ap] = 13 + (((theta[ap] + 45) % 360) // 90).astype(int)
    seg[apex] = 17
    seg[~lv] = 0
    return seg


def main(argv):
    run = Run(Path(argv[1]))
    frames = run.frames()
    if not frames:
        print("make_fake_strain: no frames", file=sys.stderr)
        return 1
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridWriter
    rows = []
    for t, path in frames:
        fr = Frame(path)
        F = fr.F()
        E = 0.5 * (np.einsum("nki,nkj->nij", F, F) - np.eye(3))
        conn = fr.hex_connectivity()
        c = fr.X[conn].mean(axis=1)
        labels = fr.cell.get("label")
        seg = aha_segments(c, None if labels is None else np.asarray(labels).ravel())
        ez = np.array([0.0, 0.0, 1.0])
        r = c.copy()
        r[:, 2] = 0.0
        r /= np.maximum(np.linalg.norm(r, axis=1, keepdims=True), 1e-12)
        circ = np.cross(ez, r)
        def proj(d):
            return np.einsum("ni,nij,nj->n", d, E, d)
        fib = np.asarray(fr.cell["fibre"], float).reshape(-1, 3)
        fib /= np.linalg.norm(fib, axis=1, keepdims=True)
        arrays = {"E": E.reshape(-1, 9), "E_ff": proj(fib), "E_cc": proj(circ), "E_rr": proj(r),
                  "E_ll": proj(np.broadcast_to(ez, r.shape)), "J": np.linalg.det(F), "aha_segment": seg}
        cd = fr.grid.GetCellData()
        for name, a in arrays.items():
            v = numpy_to_vtk(np.ascontiguousarray(a), deep=True)
            v.SetName(name)
            cd.RemoveArray(name)
            cd.AddArray(v)
        w = vtkXMLUnstructuredGridWriter()
        w.SetFileName(str(path))
        w.SetInputData(fr.grid)
        w.SetDataModeToBinary()
        w.Write()
        vol = np.ones(len(seg))
        for s in range(0, 18):
            m = seg > 0 if s == 0 else seg == s
            if not m.any():
                continue
            rows.append([t, s] + [float(np.average(arrays[n][m], weights=vol[m]))
                                  for n in ("E_cc", "E_ll", "E_rr", "E_ff")])
    out = run.dir / "regional_strain.csv"
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_ms", "segment", "E_cc", "E_ll", "E_rr", "E_ff"])
        w.writerows(rows)
    print(f"make_fake_strain: {len(frames)} frames updated, wrote {out} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
