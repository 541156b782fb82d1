#!/usr/bin/env bash
# The Slurm executor of `cardiac batch` against a real single-node Slurm cluster started by
# tests/slurm/slurm_cluster.sh (docs/slurm.md, docs/cohorts.md): the example cohort
# (configs/cohort_example.yaml, 3 cases) is submitted as a job array with --submit --wait, every
# case must finish with exit code 0, and `cardiac collect` must write a row per case.
# Usage: batch_slurm_test.sh CARDIAC_EXE. Exit 0 on success, 77 (CTest skip) without root or the
# Slurm packages, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
cluster="$here/slurm/slurm_cluster.sh"
cardiac=${1:?usage: batch_slurm_test.sh CARDIAC_EXE}
cardiac=$(cd "$(dirname "$cardiac")" && pwd)/$(basename "$cardiac")

skip() { echo "batch_slurm_test: SKIP: $*" >&2; exit 77; }
fail() {
  echo "batch_slurm_test: FAIL: $*" >&2
  [ -n "${SLURM_CONF:-}" ] && { squeue >&2 || true; }
  exit 1
}
log() { echo "batch_slurm_test: $*" >&2; }

[ "$(id -u)" -eq 0 ] || skip "needs root (runs slurmctld, slurmd and munged)"
for b in slurmctld slurmd sbatch squeue scontrol scancel sinfo munged munge; do
  command -v "$b" >/dev/null || skip "$b not found (packages: slurmctld slurmd slurm-client munge)"
done
[ -x "$cardiac" ] || fail "$cardiac is not executable"

t_start=$SECONDS
work=$(mktemp -d /tmp/batch_slurm.XXXXXX)
state="$work/cluster"
cleanup() {
  local rc=$?
  bash "$cluster" down "$state" || rc=1
  if [ "$rc" -eq 0 ]; then
    rm -rf -- "$work"
  else
    echo "batch_slurm_test: kept $work for inspection (cluster logs in $state/log)" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT

unset SLURM_JOB_ID SLURM_JOBID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_CPUS_PER_TASK
eval "$(bash "$cluster" up "$state")"
[ -n "${SLURM_CONF:-}" ] || fail "slurm_cluster.sh up printed no SLURM_CONF"
log "cluster up in $((SECONDS - t_start)) s"

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
log "PASS in $((SECONDS - t_start)) s"
