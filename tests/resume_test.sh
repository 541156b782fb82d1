#!/usr/bin/env bash
# Checkpoint and resume (issue 6): a real beat run is stopped at a random time, by SIGTERM (it writes
# a checkpoint and exits 75) and by SIGKILL (it loses at most one checkpoint interval), resumed
# with `cardiac run --resume OUTDIR` at another thread count, and must end bit-identical to an
# uninterrupted run: summary.json numbers (timing fields aside), final.vtu, every frame,
# series.pvd, timeseries.csv, regional_strain.csv. A resume against a changed config is refused.
# With CASE closed_loop, the real biventricle in the closed-loop circulation (configs/biv_closed_loop.yaml
# at 3 mm, two beats, with the blood fill and the afterload calibration): the loop's state and the
# calibrations' are in the checkpoint too.
# usage: resume_test.sh CARDIAC_EXE SOURCE_DIR [CASE]
set -uo pipefail
EXE=$1
SRC=$2
CASE=${3:-lv_phantom}
DIR=$(mktemp -d /tmp/cardio_resume_XXXXXX)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
fail() { echo "FAIL: $*"; exit 1; }
if [ "$CASE" == closed_loop ]; then
  # Two beats with the blood fill and the afterload calibration, which both act at the second onset
  # (t = 1000 ms): a stop on either side of it must resume to the same numbers.
  ARGS=(--set "geometry.surface.voxel_size=3 mm" --set simulation.beats=2 --set "simulation.checkpoint_interval=40 ms"
        --set "circulation.closed_loop.fill.lv_end_diastolic_pressure=9 mmHg"
        --set "circulation.closed_loop.afterload.aortic_systolic_pressure=120 mmHg"
        --set "circulation.closed_loop.afterload.aortic_diastolic_pressure=80 mmHg" --no-figures)
  CFG="$SRC/configs/biv_closed_loop.yaml"
else
  ARGS=(--set "geometry.phantom.voxel_size=2 mm" --set simulation.beats=1 --set "simulation.checkpoint_interval=40 ms" --no-figures)
  CFG="$SRC/configs/lv_phantom.yaml"
fi

start=$(date +%s%N)
"$EXE" run "$CFG" -o ref "${ARGS[@]}" --threads 1 > ref.log 2>&1 || { cat ref.log; fail "reference run"; }
ref_s=$(/usr/bin/python3 -c "print(($(date +%s%N) - $start) / 1e9)")
echo "reference run: ${ref_s} s"

compare() {  # compare ref with $1
  /usr/bin/python3 - "$1" <<'PY' || exit 1
import json, sys
a = json.load(open('ref/summary.json')); b = json.load(open(sys.argv[1] + '/summary.json'))
timing = {'simulate_time_s', 'finished_utc', 'threads', 'resumed', 'run_time_s', 'config'}
diffs, n = [], 0
def cmp(x, y, path):
    global n
    if isinstance(x, dict):
        for k in x:
            if k not in timing: cmp(x[k], y.get(k) if isinstance(y, dict) else None, path + '.' + k)
    elif isinstance(x, list):
        if not isinstance(y, list) or len(x) != len(y): diffs.append(path); return
        for i, (u, v) in enumerate(zip(x, y)): cmp(u, v, f'{path}[{i}]')
    else:
        n += 1
        if x != y: diffs.append(f'{path}: {x} != {y}')
cmp(a, b, '')
print(f'{sys.argv[1]}: {n} summary values compared, {len(diffs)} differ')
for d in diffs[:10]: print('  ', d)
sys.exit(1 if diffs or n < 50 else 0)
PY
  for f in final.vtu series.pvd timeseries.csv regional_strain.csv label_strain.csv lv_global_strain.csv; do
    cmp -s "ref/$f" "$1/$f" || fail "$1/$f differs from the uninterrupted run"
  done
  [ "$(ls ref/frames)" == "$(ls "$1"/frames)" ] || fail "$1: other frame files"
  for f in ref/frames/*.vtu; do cmp -s "$f" "$1/frames/$(basename "$f")" || fail "$1: $(basename "$f") differs"; done
  [ -e "$1/checkpoint.bin" ] && fail "$1: checkpoint.bin left after the run finished"
  echo "$1: bit-identical to the uninterrupted run ($(ls ref/frames | wc -l) frames)"
}

# A random moment within the run (the delay is printed to reproduce a failure).
random_delay() { /usr/bin/python3 -c "import random; print(round(random.uniform(0.2, 0.8) * $ref_s, 2))"; }

# 1. SIGTERM at a random time: checkpoint + exit 75, then resume (2 threads).
d=$(random_delay)
"$EXE" run "$CFG" -o term "${ARGS[@]}" --threads 1 > term.log 2>&1 &
pid=$!
sleep "$d"
kill -TERM $pid
wait $pid
code=$?
echo "SIGTERM after ${d} s: exit $code"
if [ $code -eq 0 ]; then
  echo "(the run finished before the signal: nothing to resume)"
else
  [ $code -eq 75 ] || { cat term.log; fail "SIGTERM: expected exit 75, got $code"; }
  [ -f term/checkpoint.bin ] || fail "SIGTERM: no checkpoint written"
  [ -f term/summary.json ] && fail "SIGTERM: an interrupted run must not leave summary.json"
  grep -q "resume with: cardiac run --resume" term.log || fail "SIGTERM: the message does not say how to resume"
  "$EXE" run --resume term --threads 2 --no-figures > term_resume.log 2>&1 || { cat term_resume.log; fail "resume after SIGTERM"; }
  grep -q "resumed from" term_resume.log || fail "resume did not start from the checkpoint"
fi
compare term

# 2. SIGKILL at a random time after the first checkpoint: resume from the last periodic checkpoint.
"$EXE" run "$CFG" -o kill "${ARGS[@]}" --threads 2 > kill.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -f kill/checkpoint.bin ] && break; sleep 0.1; done
d=$(/usr/bin/python3 -c "import random; print(round(random.uniform(0.0, 0.4) * $ref_s, 2))")
sleep "$d"
kill -KILL $pid
wait $pid
echo "SIGKILL ${d} s after the first checkpoint: exit $?"
if [ -f kill/summary.json ]; then
  echo "(the run finished before the signal)"
else
  "$EXE" run --resume kill --threads 1 --no-figures > kill_resume.log 2>&1 || { cat kill_resume.log; fail "resume after SIGKILL"; }
  grep "resumed from" kill_resume.log
fi
compare kill

# 3. A resume whose config changed since the checkpoint is refused (exit 1, names the mismatch).
"$EXE" run "$CFG" -o changed "${ARGS[@]}" --threads 1 > changed.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -f changed/checkpoint.bin ] && break; sleep 0.1; done
kill -TERM $pid
wait $pid
[ -f changed/checkpoint.bin ] || fail "no checkpoint to test the config check"
/usr/bin/python3 - <<'PY'
import json
p = 'changed/invocation.json'; j = json.load(open(p))
j['overrides'].append('simulation.damping_time=25 ms'); json.dump(j, open(p, 'w'))
PY
"$EXE" run --resume changed > changed_resume.log 2>&1
code=$?
[ $code -eq 1 ] || { cat changed_resume.log; fail "resume with a changed config: expected exit 1, got $code"; }
grep -q "another config" changed_resume.log || fail "the error does not name the config mismatch"
[ -f changed/summary.json ] && fail "a refused resume must not write summary.json"
echo "changed config: refused"
echo PASS
