#!/usr/bin/python3
"""Writes the example inputs of configs/inputs/ from the real biventricular surface in data/.

data/inputs/biv_patches/: the surface cut into its four patches (base, epicardium, LV and RV
  endocardium) as binary PLY files without shared vertices. The seam triangles between patches
  (those whose points carry different classes) are left out, so the rims are 1-2 mm apart: what
  patch exporters of segmentation tools typically leave.
data/inputs/biv_open/: only the epicardium and the two endocardia, as legacy VTK files: open at the
  base, as surfaces fitted to cardiac MR are.

Run from the repository root: /usr/bin/python3 scripts/make_input_examples.py
"""
import os
import sys

import numpy as np
import vtk
from vtk.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy

SOURCE = "data/biv_meanshape_surface.vtp"
PATCHES = {1: "base", 2: "epicardium", 3: "lv_endocardium", 4: "rv_endocardium"}


def read_surface(path):
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(path)
    reader.Update()
    surface = reader.GetOutput()
    if surface.GetNumberOfPolys() == 0:
        sys.exit(f"{path}: no triangles")
    points = vtk_to_numpy(surface.GetPoints().GetData()).astype(np.float64)
    cells = vtk_to_numpy(surface.GetPolys().GetData()).reshape(-1, 4)
    if not np.all(cells[:, 0] == 3):
        sys.exit(f"{path}: expected triangles only")
    classes = vtk_to_numpy(surface.GetPointData().GetArray("class")).astype(int)
    return points, cells[:, 1:], classes


def patch(points, triangles, keep):
    """The kept triangles on their own copy of the points they use."""
    tris = triangles[keep]
    used, inverse = np.unique(tris.ravel(), return_inverse=True)
    poly = vtk.vtkPolyData()
    vtk_points = vtk.vtkPoints()
    vtk_points.SetData(numpy_to_vtk(points[used].astype(np.float32), deep=True))
    poly.SetPoints(vtk_points)
    connectivity = np.column_stack([np.full(len(tris), 3), inverse.reshape(-1, 3)]).ravel()
    cells = vtk.vtkCellArray()
    cells.SetCells(len(tris), numpy_to_vtkIdTypeArray(connectivity.astype(np.int64), deep=True))
    poly.SetPolys(cells)
    return poly


def write(poly, path, writer):
    writer.SetFileName(path)
    writer.SetInputData(poly)
    writer.SetFileTypeToBinary()
    if writer.Write() != 1:
        sys.exit(f"cannot write {path}")
    print(f"wrote {path}: {poly.GetNumberOfPoints()} points, {poly.GetNumberOfPolys()} triangles")


def main():
    points, triangles, classes = read_surface(SOURCE)
    tri_classes = classes[triangles]
    uniform = (tri_classes[:, 0] == tri_classes[:, 1]) & (tri_classes[:, 0] == tri_classes[:, 2])
    os.makedirs("data/inputs/biv_patches", exist_ok=True)
    os.makedirs("data/inputs/biv_open", exist_ok=True)
    for c, name in PATCHES.items():
        poly = patch(points, triangles, uniform & (tri_classes[:, 0] == c))
        write(poly, f"data/inputs/biv_patches/{name}.ply", vtk.vtkPLYWriter())
        if c != 1:
            write(poly, f"data/inputs/biv_open/{name}.vtk", vtk.vtkPolyDataWriter())


if __name__ == "__main__":
    main()
