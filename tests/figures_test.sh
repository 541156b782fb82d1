#!/usr/bin/env bash
# Figures from a real run (issue 5): a short LV phantom run (2 mm voxels, one beat) draws its
# figures at the end (output.figures defaults to true); then `cardiac figures RUN_DIR` draws them
# again from the outputs alone. Every expected figure must exist in RUN_DIR/figures/ as a PNG (PNG
# signature, > 20 KB, pHYs resolution >= 200 dpi) and a PDF (%PDF header, > 2 KB).
#
# usage: figures_test.sh CARDIAC_EXE PROJECT_SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
py=/usr/bin/python3
if [ ! -x "$py" ] || ! "$py" -c 'import matplotlib, vtkmodules' 2>/dev/null; then
  echo "figures_test: FAIL: $py with matplotlib and vtk (python3-matplotlib python3-vtk9) is required" >&2
  exit 1
fi
work=$(mktemp -d /tmp/cardiac-figures-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
export CARDIAC_SCRIPTS_DIR="$src/scripts"
export OMP_WAIT_POLICY=PASSIVE

t0=$(date +%s)
"$exe" run "$src/configs/lv_phantom.yaml" -o "$work/run" --threads 2 \
  --set geometry.phantom.voxel_size="2 mm" --set simulation.beats=1 > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; echo "figures_test: FAIL: cardiac run failed" >&2; exit 1; }
t1=$(date +%s)
echo "run (with its figures): $((t1 - t0)) s"
grep -q "figures" "$work/run.log" || { cat "$work/run.log"; echo "figures_test: FAIL: the run drew no figures" >&2; exit 1; }
[ -d "$work/run/figures" ] || { cat "$work/run.log"; echo "figures_test: FAIL: no figures/ after cardiac run" >&2; exit 1; }
run_figures=$(ls "$work/run/figures" | sort)
rm -rf "$work/run/figures"

"$exe" figures "$work/run" | tee "$work/figures.log"
t2=$(date +%s)
echo "figures: $((t2 - t1)) s"

check_figures() {  # check_figures RUN_DIR NAME...
  "$py" - "$@" <<'EOF'
import struct, sys
from pathlib import Path
run, names = Path(sys.argv[1]), sys.argv[2:]
bad = []
for n in names:
    png, pdf = run / "figures" / f"{n}.png", run / "figures" / f"{n}.pdf"
    if not png.is_file():
        bad.append(f"{png} missing"); continue
    data = png.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        bad.append(f"{png}: not a PNG"); continue
    if len(data) < 20_000:
        bad.append(f"{png}: only {len(data)} bytes")
    dpi, pos = None, 8
    while pos + 8 <= len(data):  # walk the chunks to pHYs (pixels per unit, unit 1 = metre)
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"pHYs":
            ppx, ppy, unit = struct.unpack(">IIB", data[pos + 8:pos + 17])
            dpi = min(ppx, ppy) * 0.0254 if unit == 1 else None
            break
        if kind == b"IDAT":
            break
        pos += 12 + length
    if dpi is None or dpi < 200 - 0.5:
        bad.append(f"{png}: resolution {dpi} dpi (< 200 or no pHYs)")
    if not pdf.is_file():
        bad.append(f"{pdf} missing"); continue
    head = pdf.read_bytes()
    if head[:5] != b"%PDF-" or len(head) < 2000:
        bad.append(f"{pdf}: not a PDF or only {len(head)} bytes")
    else:
        print(f"  ok {n}: png {len(data) // 1024} KB at {dpi:.0f} dpi, pdf {len(head) // 1024} KB")
if bad:
    print("figures_test: FAIL:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
EOF
}

always=(pv_loop_lv pv_time_lv j_histogram_end_systole view3d_end_systole_E_ff)
strain=(strain_regional bullseye_peak_strain clinical_ranges)
[ -f "$work/run/regional_strain.csv" ] || { echo "figures_test: FAIL: the run wrote no regional_strain.csv" >&2; exit 1; }
check_figures "$work/run" "${always[@]}" "${strain[@]}"
[ "$(ls "$work/run/figures" | sort)" == "$run_figures" ] ||
  { echo "figures_test: FAIL: cardiac run and cardiac figures drew different files" >&2; exit 1; }

# A directory that is not a run: exit 1, naming the missing file.
mkdir -p "$work/empty"
set +e
"$exe" figures "$work/empty" > "$work/empty.log" 2>&1
rc=$?
set -e
if [ $rc -ne 1 ] || ! grep -q "timeseries.csv" "$work/empty.log"; then
  cat "$work/empty.log"
  echo "figures_test: FAIL: figures of an empty directory: exit $rc (expected 1 naming timeseries.csv)" >&2
  exit 1
fi
# A passive calibration's output (a quasi-static run: no time series): `cardiac figures` draws its
# Klotz figure alone and exits 0. The CSV is the Klotz curve P = A (V - V0)^B, A = 2.5, B = 2.8, V0 = 40.
mkdir -p "$work/calibration"
"$py" -c '
print("pressure_mmHg,volume_klotz_mL,volume_model_mL")
for k in range(1, 7):
    p = 8.0 * k / 6
    v = 40 + (p / 2.5) ** (1 / 2.8)
    print(f"{p},{v},{v + 0.5 * (1 - k / 6)}")' > "$work/calibration/klotz_fit.csv"
"$exe" figures "$work/calibration" > "$work/calibration.log" 2>&1 ||
  { cat "$work/calibration.log"; echo "figures_test: FAIL: figures of a calibration-only run" >&2; exit 1; }
check_figures "$work/calibration" klotz_fit
echo "figures_test: all checks passed ($(( $(date +%s) - t0 )) s)"
