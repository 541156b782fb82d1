"""Off-screen VTK rendering of one cell array on a mesh, to a PNG (no colour bar, no text).

    /usr/bin/python3 render3d.py IN.vtu ARRAY VMIN VMAX CMAP OUT.png [--size PX] [--cut]

Run by run_figures.py in its own process, because on Debian 12 the `vtk` Python module
(python3-vtk9, VTK 9.1) renders only through GLX (vtkXOpenGLRenderWindow: no EGL or OSMesa render
window is built in) and aborts the whole process when there is no X display. run_figures.py starts
this script under `xvfb-run -a` (a private virtual X server, Mesa software rendering) when DISPLAY
is unset. IN.vtu holds the deformed geometry (points already moved) and the cell array ARRAY; the
colour map CMAP is a matplotlib colour map name, so the colour bar drawn later by matplotlib matches.
--cut removes the half y > centre so that the cut face shows the transmural distribution.
"""
import sys

from vtkmodules.vtkCommonCore import vtkLookupTable
from vtkmodules.vtkCommonDataModel import vtkPlane
from vtkmodules.vtkFiltersExtraction import vtkExtractGeometry
from vtkmodules.vtkFiltersGeometry import vtkDataSetSurfaceFilter
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
from vtkmodules.vtkRenderingCore import (vtkActor, vtkPolyDataMapper, vtkRenderer, vtkRenderWindow,
                                         vtkWindowToImageFilter)
import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (registers the OpenGL render window)


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

    source = reader
    if cut:
        plane = vtkPlane()
        plane.SetOrigin(centre)
        plane.SetNormal(0.0, 1.0, 0.0)  # ... the half y < centre
        clip = vtkExtractGeometry()  # whole elements (a clean element-wise cut face), not cut cells
        clip.SetInputConnection(reader.GetOutputPort())
        clip.SetImplicitFunction(plane)
        clip.ExtractInsideOn()         # keeps the cells with n.(x - o) <= 0 ...
        clip.ExtractBoundaryCellsOff()
        source = clip
    surf = vtkDataSetSurfaceFilter()
    surf.SetInputConnection(source.GetOutputPort())

    lut = vtkLookupTable()
    n = 256
    lut.SetNumberOfTableValues(n)
    for i in range(n):
        r, g, bl, _ = cmap(i / (n - 1))
        lut.SetTableValue(i, r, g, bl, 1.0)
    lut.SetTableRange(vmin, vmax)
    lut.Build()

    mapper = vtkPolyDataMapper()
    mapper.SetInputConnection(surf.GetOutputPort())
    mapper.SetScalarModeToUseCellData()
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
    prop.SetInterpolationToFlat()  # element-wise values: flat facets, no smoothed normals across elements

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
