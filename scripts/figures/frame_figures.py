"""The figures of a run's end-systolic frame (a VTU of series.pvd): j_histogram_end_systole (the
histogram of J = det F of all elements) and view3d_end_systole_E_ff (the deformed mesh coloured
by E_ff, rendered off-screen by render3d.py in its own process). Used by run_figures.py
(docs/figures.md).
"""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import style  # (selects the Agg backend before pyplot)
from run_data import Run, Skip, cavity_label, log

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.colors import Normalize
from matplotlib.cm import ScalarMappable

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
