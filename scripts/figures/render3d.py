"""Off-screen VTK rendering of one cell array on a mesh, to a PNG (no colour bar, no text).

    /usr/bin/python3 render3d.py IN.vtu ARRAY VMIN VMAX CMAP OUT.png [--size PX] [--cut]

Run by frame_figures.py in its own process, because on Debian 12 the `vtk` Python module
(python3-vtk9, VTK 9.1) renders only through GLX (vtkXOpenGLRenderWindow: no EGL or OSMesa render
window is built in) and aborts the whole process when there is no X display. frame_figures.py starts
this script under `xvfb-run -a` (a private virtual X server, Mesa software rendering) when DISPLAY
is unset. IN.vtu holds the deformed geometry (points already moved) and the cell array ARRAY; the
colour map CMAP is a matplotlib colour map name, so the colour bar drawn later by matplotlib matches.
--cut clips away the half y > centre (through the elements, interpolating the point values) so that
the flat cut face shows the transmural distribution.

The surface is smooth, not the voxel facets: the cell array is averaged to the points
(vtkCellDataToPointData), the mesh clipped, its outer surface extracted, triangulated and smoothed
by a windowed-sinc filter (Taubin et al. 1996; vtkWindowedSincPolyDataFilter, which moves the
points without shrinking the shape), shaded with point normals. Before smoothing, every surface
vertex is split into one vertex per sheet (split_sheets): where a thin wall's voxels touch only
along an edge or at a corner, the surface is not a manifold there, and a smoothing filter pulls such
a vertex towards both sheets at once, which drew the RV free wall of the real biventricle as spikes. A small x/y/z axes triad in the
lower left corner turns with the camera (orientation cue); the long axis is z, base up.
"""
import sys

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkLookupTable, vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPlane, vtkPolyData
from vtkmodules.vtkFiltersCore import (vtkCellDataToPointData, vtkPolyDataNormals, vtkTriangleFilter,
                                       vtkWindowedSincPolyDataFilter)
from vtkmodules.vtkFiltersGeneral import vtkTableBasedClipDataSet
from vtkmodules.vtkFiltersGeometry import vtkDataSetSurfaceFilter
from vtkmodules.vtkRenderingAnnotation import vtkAxesActor
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
from vtkmodules.vtkRenderingCore import (vtkActor, vtkPolyDataMapper, vtkRenderer, vtkRenderWindow,
                                         vtkWindowToImageFilter)
import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (registers the OpenGL render window)


def triangle_sheets(triangles):
    """For each corner (triangle t, slot k) of an (n, 3) array of point ids, the index of its sheet
    vertex: corners at the same point share one when their triangles are joined around that point
    through manifold edges (edges of exactly two triangles), by union-find over the corners."""
    edges = {}
    for t, tri in enumerate(triangles):
        for k in range(3):
            a, b = int(tri[k]), int(tri[(k + 1) % 3])
            edges.setdefault((min(a, b), max(a, b)), []).append((t, k, (k + 1) % 3))
    parent = list(range(3 * len(triangles)))

    def root(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for (a, b), sides in edges.items():
        if len(sides) != 2:
            continue  # a boundary or non-manifold edge joins nothing
        (t0, k0, l0), (t1, k1, l1) = sides
        for c0 in (3 * t0 + k0, 3 * t0 + l0):  # each of the edge's two points, matched by id
            c1 = 3 * t1 + (k1 if triangles[t1][k1] == triangles[c0 // 3][c0 % 3] else l1)
            r0, r1 = root(c0), root(c1)
            if r0 != r1:
                parent[r0] = r1
    roots = np.array([root(c) for c in range(3 * len(triangles))], dtype=np.int64)
    return np.unique(roots, return_inverse=True)[1]


def split_sheets(poly):
    """A copy of the triangle surface poly (with its point data) whose points are split per sheet
    (triangle_sheets): a manifold surface, open where the sheets touched."""
    triangles = vtk_to_numpy(poly.GetPolys().GetData()).reshape(-1, 4)[:, 1:]
    sheet = triangle_sheets(triangles)
    source = np.zeros(sheet.max() + 1 if len(sheet) else 0, dtype=np.int64)
    source[sheet] = triangles.reshape(-1)  # the original point of each sheet vertex
    out = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(vtk_to_numpy(poly.GetPoints().GetData())[source], deep=True))
    out.SetPoints(points)
    cells = np.hstack([np.full((len(triangles), 1), 3), sheet.reshape(-1, 3)]).astype(np.int64).ravel()
    polys = vtkCellArray()
    polys.SetCells(len(triangles), numpy_to_vtkIdTypeArray(cells, deep=True))
    out.SetPolys(polys)
    data = poly.GetPointData()
    for i in range(data.GetNumberOfArrays()):
        values = numpy_to_vtk(vtk_to_numpy(data.GetArray(i))[source], deep=True)
        values.SetName(data.GetArrayName(i))
        out.GetPointData().AddArray(values)
    return out


def smooth_surface(source):
    """Outer surface, triangles split into manifold sheets, windowed-sinc smoothing (sharp edges
    such as the rim of the cut face are kept as feature edges), point normals."""
    surf = vtkDataSetSurfaceFilter()
    surf.SetInputConnection(source.GetOutputPort())
    tri = vtkTriangleFilter()
    tri.SetInputConnection(surf.GetOutputPort())
    tri.Update()
    smooth = vtkWindowedSincPolyDataFilter()
    smooth.SetInputData(split_sheets(tri.GetOutput()))
    smooth.SetNumberOfIterations(30)
    smooth.SetPassBand(0.05)           # lower: smoother (removes the voxel staircase)
    smooth.BoundarySmoothingOn()       # the only open edges are where sheets were split apart
    smooth.FeatureEdgeSmoothingOff()   # vertices on feature edges move only along them
    smooth.SetFeatureAngle(50.0)       # the cut face meets the walls at about 90 deg: a feature edge
    smooth.NonManifoldSmoothingOn()
    smooth.NormalizeCoordinatesOn()    # numerically stable for any coordinate range
    normals = vtkPolyDataNormals()
    normals.SetInputConnection(smooth.GetOutputPort())
    normals.SetFeatureAngle(50.0)      # keeps the rim of the cut face and the base sharp
    normals.SplittingOn()
    return normals


def axes_triad(main_camera):
    """A renderer in the lower left corner with an x/y/z axes actor whose camera follows the main one."""
    axes = vtkAxesActor()
    axes.SetShaftTypeToCylinder()
    axes.SetTotalLength(1.0, 1.0, 1.0)
    axes.SetCylinderRadius(0.03)
    axes.SetConeRadius(0.12)
    for label in (axes.GetXAxisCaptionActor2D(), axes.GetYAxisCaptionActor2D(), axes.GetZAxisCaptionActor2D()):
        text = label.GetCaptionTextProperty()
        text.SetColor(0.1, 0.1, 0.1)
        text.ShadowOff()
        text.ItalicOff()
        text.BoldOff()
        text.SetFontSize(36)
    ren = vtkRenderer()
    ren.SetViewport(0.0, 0.0, 0.25, 0.25)
    ren.SetLayer(1)  # drawn over the mesh's layer without clearing it
    ren.AddActor(axes)
    cam = ren.GetActiveCamera()
    d = [p - f for p, f in zip(main_camera.GetPosition(), main_camera.GetFocalPoint())]
    norm = sum(c * c for c in d) ** 0.5 or 1.0
    cam.SetFocalPoint(0.0, 0.0, 0.0)
    cam.SetPosition(*[5.0 * c / norm for c in d])
    cam.SetViewUp(main_camera.GetViewUp())
    ren.ResetCamera()
    ren.InteractiveOff()
    return ren


def main(argv):
    if len(argv) < 7:
        print(__doc__, file=sys.stderr)
        return 2
    src, array, vmin, vmax, cmap_name, out = argv[1], argv[2], float(argv[3]), float(argv[4]), argv[5], argv[6]
    size = 1400
    if "--size" in argv:
        size = int(argv[argv.index("--size") + 1])
    cut = "--cut" in argv

    import matplotlib
    matplotlib.use("Agg")
    cmap = matplotlib.colormaps[cmap_name]

    reader = vtkXMLUnstructuredGridReader()
    reader.SetFileName(src)
    reader.Update()
    grid = reader.GetOutput()
    if grid.GetCellData().GetArray(array) is None:
        print(f"render3d: {src} has no cell array {array}", file=sys.stderr)
        return 1
    grid.GetCellData().SetActiveScalars(array)
    b = grid.GetBounds()
    centre = [(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2]

    # Cell values to points first, so that the clip below interpolates them onto its cut face.
    to_points = vtkCellDataToPointData()
    to_points.SetInputConnection(reader.GetOutputPort())
    to_points.PassCellDataOff()
    source = to_points
    if cut:
        plane = vtkPlane()
        plane.SetOrigin(centre)
        plane.SetNormal(0.0, 1.0, 0.0)
        clip = vtkTableBasedClipDataSet()  # cuts the elements along the plane: a flat, clean cut face
        clip.SetInputConnection(to_points.GetOutputPort())
        clip.SetClipFunction(plane)
        clip.InsideOutOn()                 # keeps n.(x - o) <= 0: the half y < centre
        source = clip
    mapper_input = smooth_surface(source)
    lut = vtkLookupTable()
    n = 256
    lut.SetNumberOfTableValues(n)
    for i in range(n):
        r, g, bl, _ = cmap(i / (n - 1))
        lut.SetTableValue(i, r, g, bl, 1.0)
    lut.SetTableRange(vmin, vmax)
    lut.Build()

    mapper = vtkPolyDataMapper()
    mapper.SetInputConnection(mapper_input.GetOutputPort())
    mapper.SetScalarModeToUsePointFieldData()
    mapper.SelectColorArray(array)
    mapper.SetLookupTable(lut)
    mapper.SetScalarRange(vmin, vmax)
    mapper.SetColorModeToMapScalars()
    mapper.ScalarVisibilityOn()

    actor = vtkActor()
    actor.SetMapper(mapper)
    prop = actor.GetProperty()
    prop.SetAmbient(0.35)
    prop.SetDiffuse(0.65)
    prop.SetSpecular(0.05)
    prop.SetInterpolationToGouraud()  # smooth shading with the point normals of the smoothed surface

    ren = vtkRenderer()
    ren.SetBackground(1.0, 1.0, 1.0)
    ren.AddActor(actor)
    win = vtkRenderWindow()
    win.SetOffScreenRendering(1)
    win.SetMultiSamples(8)
    win.AddRenderer(ren)
    win.SetSize(size, size)

    # Long axis (z) vertical, base up; look at the cut face (from +y), a little from above and aside.
    cam = ren.GetActiveCamera()
    cam.SetFocalPoint(centre)
    cam.SetPosition(centre[0] - 0.6 * (b[1] - b[0]) - 1e-3, centre[1] + 3.0 * max(b[3] - b[2], 1.0),
                    centre[2] + 0.6 * (b[5] - b[4]))
    cam.SetViewUp(0.0, 0.0, 1.0)
    ren.ResetCamera()
    cam.Zoom(1.25)
    win.SetNumberOfLayers(2)
    win.AddRenderer(axes_triad(cam))
    win.Render()

    grab = vtkWindowToImageFilter()
    grab.SetInput(win)
    grab.ReadFrontBufferOff()
    grab.Update()
    writer = vtkPNGWriter()
    writer.SetFileName(out)
    writer.SetInputConnection(grab.GetOutputPort())
    writer.Write()
    print(f"render3d: wrote {out} ({size}x{size}, renderer: {win.GetClassName()})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
