#!/usr/bin/env bash
# The Slurm executor of `cardiac batch` against a real single-node Slurm cluster started by
# tests/slurm/slurm_cluster.sh (docs/slurm.md, docs/cohorts.md): the example cohort
# (configs/cohort_example.yaml, 3 cases) is submitted as a job array with --submit --wait, every
# case must finish with exit code 0, and `cardiac collect` must write a row per case; then a
# cohort cancelled with scancel mid-run is resubmitted and its interrupted case resumes.
# Usage: batch_slurm_test.sh CARDIAC_EXE. Exit 0 on success, 77 (CTest skip) without root or the
# Slurm packages, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
cardiac=${1:?usage: batch_slurm_test.sh CARDIAC_EXE}
cardiac=$(cd "$(dirname "$cardiac")" && pwd)/$(basename "$cardiac")
# skip, fail, log, require_slurm, start_test_cluster
# shellcheck source=SCRIPTDIR/slurm/test_lib.sh
source "$here/slurm/test_lib.sh" batch_slurm_test

require_slurm
[ -x "$cardiac" ] || fail "$cardiac is not executable"
start_test_cluster batch_slurm

batch="$work/cohort"
t0=$SECONDS
set +e
"$cardiac" batch "$src/configs/cohort_example.yaml" -o "$batch" --executor slurm --submit --wait \
  >"$work/batch.out" 2>"$work/batch.err"
rc=$?
set -e
cat "$work/batch.out" "$work/batch.err" >&2
log "batch --submit --wait: exit $rc after $((SECONDS - t0)) s"
[ "$rc" -eq 0 ] || fail "cardiac batch --executor slurm --submit --wait exited with $rc"

job=$(cat "$batch/slurm/job_id")
[[ "$job" =~ ^[0-9]+$ ]] || fail "slurm/job_id holds '$job'"
grep -qx "$job" "$work/batch.out" || fail "the job id was not printed"
grep -q -- "--array=0-2" "$batch/batch.sbatch" || fail "no 3-task array in batch.sbatch"
for c in baseline weak_contraction high_afterload; do
  [ -f "$batch/$c/summary.json" ] || fail "case $c has no summary.json"
  [ "$(cat "$batch/$c/exit_code")" = 0 ] || fail "case $c: exit_code $(cat "$batch/$c/exit_code")"
  grep -q "slurm job $job" "$batch/$c/batch.log" || fail "case $c: batch.log does not name job $job"
done
# The tasks got their CPUs from the manifest (cpus_per_task: 1) through SLURM_CPUS_PER_TASK.
grep -q "1 thread(s)" "$batch/slurm/task_0.out" || fail "task 0 did not report 1 thread"
# The task ran with OMP threads from SLURM_CPUS_PER_TASK (the run records its thread count).
grep -q "threads 1" "$batch/baseline/config.resolved.yaml" || fail "baseline did not run with 1 thread"
python3 - "$batch/batch.json" <<'EOF' || fail "batch.json does not mark every case ok"
import json, sys
b = json.load(open(sys.argv[1]))
assert [c["status"] for c in b["cases"]] == ["ok"] * 3, b
EOF

"$cardiac" collect "$batch" --no-figures >&2 || fail "cardiac collect failed"
rows=$(tail -n +2 "$batch/cohort.csv" | wc -l)
[ "$rows" -eq 3 ] || fail "cohort.csv has $rows rows, expected 3"
[ "$(tail -n +2 "$batch/cohort.csv" | cut -d, -f2 | sort -u)" = ok ] || fail "cohort.csv: not every case ok"

# Submitting the finished cohort again: every task finds summary.json and does nothing.
t0=$SECONDS
"$cardiac" batch "$src/configs/cohort_example.yaml" -o "$batch" --executor slurm --submit --wait >&2 ||
  fail "resubmitting a finished cohort failed"
grep -q "already finished" "$batch/slurm/task_1.out" || fail "a finished case was run again"
log "resubmission of the finished cohort: $((SECONDS - t0)) s"
# A case cancelled with scancel mid-run and resubmitted resumes from its checkpoint: the task's
# trap forwards SIGTERM to cardiac, which writes checkpoint.bin and exits 75 (recorded in
# exit_code); the resubmitted task runs `cardiac run --resume`.
batch2="$work/cohort2"
t0=$SECONDS
"$cardiac" batch "$src/configs/cohort_example.yaml" -o "$batch2" --executor slurm --submit >"$work/submit2.out" 2>&1 ||
  fail "submit failed: $(cat "$work/submit2.out")"
job2=$(cat "$batch2/slurm/job_id")
ck=
while [ -z "$ck" ]; do
  for c in baseline weak_contraction high_afterload; do
    if [ -f "$batch2/$c/checkpoint.bin" ] && [ ! -f "$batch2/$c/summary.json" ]; then ck=$c; break; fi
  done
  [ $((SECONDS - t0)) -lt 120 ] || fail "no case wrote a checkpoint within 120 s"
  sleep 0.1
done
scancel "$job2"
while [ -n "$(squeue -h -j "$job2" 2>/dev/null)" ]; do
  [ $((SECONDS - t0)) -lt 180 ] || fail "job $job2 still queued after scancel"
  sleep 0.5
done
log "cancelled job $job2 while $ck was running ($((SECONDS - t0)) s)"
[ ! -f "$batch2/$ck/summary.json" ] || fail "$ck finished before it was cancelled; no resume to test"
[ "$(cat "$batch2/$ck/exit_code" 2>/dev/null)" = 75 ] ||
  fail "$ck: exit_code '$(cat "$batch2/$ck/exit_code" 2>/dev/null)' after scancel, expected 75; log: $(tail -3 "$batch2/$ck/batch.log")"
grep -q "checkpoint written" "$batch2/$ck/batch.log" || fail "$ck: no checkpoint written on SIGTERM"
"$cardiac" batch "$src/configs/cohort_example.yaml" -o "$batch2" --executor slurm --submit --wait >&2 ||
  fail "the resubmitted cohort failed"
grep -q -- "run --resume" "$batch2/$ck/batch.log" || fail "$ck was not resumed"
grep -q "resumed from" "$batch2/$ck/run.log" || fail "$ck: run.log does not say it resumed"
for c in baseline weak_contraction high_afterload; do
  [ "$(cat "$batch2/$c/exit_code")" = 0 ] || fail "case $c: exit_code $(cat "$batch2/$c/exit_code") after resubmission"
done
# The resumed case ends where the uninterrupted run of the first cohort did.
python3 - "$batch/$ck/summary.json" "$batch2/$ck/summary.json" <<'EOF' || fail "$ck: resumed results differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("EDV_mL", "ESV_mL", "EF"):
    assert a["cavities"][0][k] == b["cavities"][0][k], (k, a["cavities"][0][k], b["cavities"][0][k])
EOF
log "scancel + resubmission resumed $ck in $((SECONDS - t0)) s"
log "PASS in $((SECONDS - t_start)) s"
