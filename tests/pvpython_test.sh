#!/usr/bin/env bash
# ParaView round trip (issue 5): if ParaView's pvpython is installed, open a real run's series.pvd
# with ParaView's own reader, go to the last time step and check the fields of the last frame.
# Skipped (exit 77) when pvpython is not installed: the VTK-reader round trip in
# tests/heart_beat_test.cpp covers the files then.
# usage: pvpython_test.sh CARDIAC_EXE SOURCE_DIR
set -euo pipefail
PV=$(command -v pvpython || true)
if [ -z "$PV" ]; then echo "pvpython not installed: skipped"; exit 77; fi
EXE=$1
SRC=$2
DIR=$(mktemp -d /tmp/cardio_pvpython_XXXXXX)
trap 'rm -rf "$DIR"' EXIT
"$EXE" run "$SRC/configs/lv_phantom.yaml" -o "$DIR/run" --set "geometry.phantom.voxel_size=2 mm" \
  --set simulation.beats=1 --no-figures > "$DIR/run.log" 2>&1 || { cat "$DIR/run.log"; exit 1; }
cat > "$DIR/check.py" <<'PY'
import sys
from paraview.simple import OpenDataFile, UpdatePipeline
reader = OpenDataFile(sys.argv[1])
times = reader.TimestepValues
assert len(times) > 10, f"only {len(times)} time steps"
UpdatePipeline(time=times[-1], proxy=reader)
info = reader.GetDataInformation()
cells = reader.CellData.keys()
points = reader.PointData.keys()
need_cells = ["activation_time", "active_tension", "label", "E", "E_ff", "E_cc", "E_rr", "E_ll", "J", "aha_segment"]
need_points = ["displacement", "velocity"]
missing = [c for c in need_cells if c not in cells] + [p for p in need_points if p not in points]
assert not missing, f"missing arrays in the last frame: {missing}"
print(f"pvpython: {len(times)} steps, last t = {times[-1]} ms, {info.GetNumberOfCells()} cells, arrays ok")
PY
"$PV" "$DIR/check.py" "$DIR/run/series.pvd"
