"""The 3-D view's sheet splitting (scripts/figures/render3d.py, split_sheets) on voxel meshes whose
cubes touch only along an edge or at a corner, as the voxels of a thin wall do: afterwards no edge
has more than two triangles, and exactly the shared points are doubled.

    /usr/bin/python3 render3d_sheets_test.py SCRIPTS_FIGURES_DIR
"""
import sys
from collections import Counter

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import VTK_HEXAHEDRON, vtkUnstructuredGrid
from vtkmodules.vtkFiltersCore import vtkTriangleFilter
from vtkmodules.vtkFiltersGeometry import vtkDataSetSurfaceFilter

sys.path.insert(0, sys.argv[1])
from render3d import split_sheets  # noqa: E402


def voxels(corners):
    """Unit cubes at the given integer corners, sharing the points they have in common."""
    ids, points, grid = {}, vtkPoints(), vtkUnstructuredGrid()
    offsets = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
    hexes = []
    for c in corners:
        hexes.append([])
        for o in offsets:
            p = tuple(int(a + b) for a, b in zip(c, o))
            if p not in ids:
                ids[p] = points.InsertNextPoint(*p)
            hexes[-1].append(ids[p])
    grid.SetPoints(points)
    for h in hexes:
        grid.InsertNextCell(VTK_HEXAHEDRON, 8, h)
    return grid


def surface_triangles(grid):
    surf = vtkDataSetSurfaceFilter()
    surf.SetInputData(grid)
    tri = vtkTriangleFilter()
    tri.SetInputConnection(surf.GetOutputPort())
    tri.Update()
    return tri.GetOutput()


def edge_counts(poly):
    triangles = vtk_to_numpy(poly.GetPolys().GetData()).reshape(-1, 4)[:, 1:]
    count = Counter()
    for t in triangles:
        for k in range(3):
            a, b = int(t[k]), int(t[(k + 1) % 3])
            count[(min(a, b), max(a, b))] += 1
    return count


def check(name, corners, doubled):
    before = surface_triangles(voxels(corners))
    after = split_sheets(before)
    worst_before = max(edge_counts(before).values())
    worst_after = max(edge_counts(after).values())
    added = after.GetNumberOfPoints() - before.GetNumberOfPoints()
    moved = np.abs(vtk_to_numpy(after.GetPoints().GetData())).max() - np.abs(
        vtk_to_numpy(before.GetPoints().GetData())).max()
    ok = worst_after <= 2 and added == doubled and after.GetNumberOfCells() == before.GetNumberOfCells() and moved == 0
    print(f"{name}: triangles per edge at most {worst_before} -> {worst_after}, points +{added} "
          f"(expected +{doubled}): {'ok' if ok else 'FAIL'}")
    return ok


results = [
    check("one cube", [(0, 0, 0)], 0),
    check("two cubes sharing a face", [(0, 0, 0), (1, 0, 0)], 0),
    check("two cubes sharing only an edge", [(0, 0, 0), (1, 1, 0)], 2),
    check("two cubes sharing only a corner", [(0, 0, 0), (1, 1, 1)], 1),
    # A fourth cube on an L of three, touching it along two edges that meet at (1, 1, 1): the far
    # ends of the edges are doubled; at (1, 1, 1) the two non-manifold edges cut both the L's fan and
    # the cube's fan in two, four sheets: +1 +1 +3.
    check("a cube on an L of three, along two edges", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 1)], 5),
]
sys.exit(0 if all(results) else 1)
