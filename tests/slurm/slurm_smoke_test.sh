#!/usr/bin/env bash
# Smoke test of a real single-node Slurm cluster (tests/slurm/slurm_cluster.sh): a 3-task job
# array with one failing task, and a requeued job. Exit 0 on success, 77 (CTest skip) without
# root or the Slurm packages, 1 otherwise. See docs/slurm.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# skip, fail, log, require_slurm, start_test_cluster (sets work, state, t_start, t_up)
# shellcheck source=SCRIPTDIR/test_lib.sh
source "$here/test_lib.sh" slurm_smoke_test

require_slurm
start_test_cluster slurm_smoke

# wait_gone JOBID SECONDS: poll squeue until the job (all its tasks) has left the queue.
wait_gone() {
  local job=$1 limit=$2 t0=$SECONDS out
  while :; do
    if out=$(squeue -h -j "$job" 2>&1); then
      [ -z "$out" ] && return 0
    elif grep -q 'Invalid job id' <<<"$out"; then
      return 0  # already purged
    fi
    ((SECONDS - t0 < limit)) || fail "job $job still queued after $limit s: $out"
    sleep 0.5
  done
}

# wait_state JOBID STATE SECONDS: poll until squeue shows the job in STATE.
wait_state() {
  local job=$1 want=$2 limit=$3 t0=$SECONDS st
  while :; do
    st=$(squeue -h -j "$job" -o %T 2>/dev/null || true)
    [ "$st" = "$want" ] && return 0
    ((SECONDS - t0 < limit)) || fail "job $job not $want after $limit s (state: ${st:-none})"
    sleep 0.2
  done
}

# ---- 1. A 3-task array; task 1 fails with exit code 3. -------------------------------------
out="$work/out"
mkdir -p "$out"
cat >"$work/array.sh" <<'EOF'
#!/bin/bash
echo "task=${SLURM_ARRAY_TASK_ID} cpus=${SLURM_CPUS_PER_TASK:-unset}" >"$OUT_DIR/task_${SLURM_ARRAY_TASK_ID}.txt"
if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then exit 3; fi
exit 0
EOF
job=$(OUT_DIR=$out sbatch --parsable --array=0-2 --cpus-per-task=1 --job-name=smoke_array \
        --chdir="$work" --output="$work/slurm-%A_%a.out" --export=ALL "$work/array.sh") \
  || fail "sbatch of the array failed"
job=${job%%;*}
log "submitted array job $job"
wait_gone "$job" 120
t_array=$SECONDS
log "array finished in $((t_array - t_up)) s"

for i in 0 1 2; do
  f="$out/task_$i.txt"
  [ -f "$f" ] || fail "task $i wrote no output file $f"
  [ "$(cat "$f")" = "task=$i cpus=1" ] || fail "task $i wrote '$(cat "$f")', expected 'task=$i cpus=1'"
done

# Exit codes from the jobcomp file (one line per finished task, written at completion) ...
comp="$state/jobcomp.txt"
[ -f "$comp" ] || fail "no jobcomp file $comp"
exit_of_task() {  # exit_of_task TASK: ExitCode (code:signal) of array task TASK in jobcomp.txt
  awk -v j="ArrayJobId=$job" -v t="ArrayTaskId=$1" '
    { a = 0; b = 0; e = "" }
    { for (k = 1; k <= NF; k++) { if ($k == j) a = 1; if ($k == t) b = 1; if ($k ~ /^ExitCode=/) e = substr($k, 10) } }
    a && b { print e }' "$comp" | tail -n 1
}
for i in 0 1 2; do
  want="0:0"
  [ "$i" = 1 ] && want="3:0"
  got=$(exit_of_task "$i")
  [ "$got" = "$want" ] || fail "jobcomp: task $i ExitCode='$got', expected $want ($(cat "$comp"))"
done
# ... and from scontrol show job (kept MinJobAge = 300 s after the end).
sc=$(scontrol -o show job "$job") || fail "scontrol show job $job failed"
grep -q 'ArrayTaskId=1 .*JobState=FAILED .*ExitCode=3:0' <<<"$sc" \
  || fail "scontrol show job does not report task 1 FAILED with ExitCode=3:0: $sc"
[ "$(grep -c 'JobState=COMPLETED .*ExitCode=0:0' <<<"$sc")" -eq 2 ] \
  || fail "scontrol show job does not report tasks 0 and 2 COMPLETED: $sc"
log "array: 3 output files, task 1 exit code 3 detected (jobcomp and scontrol)"

# ---- 2. Requeue: the restarted job sees SLURM_RESTART_COUNT=1. -----------------------------
cat >"$work/requeue.sh" <<'EOF'
#!/bin/bash
echo "restart=${SLURM_RESTART_COUNT:-0}" >>"$OUT_DIR/requeue.txt"
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then exec sleep 300; fi
exit 0
EOF
rjob=$(OUT_DIR=$out sbatch --parsable --cpus-per-task=1 --job-name=smoke_requeue \
         --chdir="$work" --output="$work/slurm-%j.out" --export=ALL "$work/requeue.sh") \
  || fail "sbatch of the requeue job failed"
rjob=${rjob%%;*}
log "submitted job $rjob to requeue"
wait_state "$rjob" RUNNING 60
t0=$SECONDS
until grep -q '^restart=0$' "$out/requeue.txt" 2>/dev/null; do
  ((SECONDS - t0 < 30)) || fail "job $rjob runs but wrote nothing to $out/requeue.txt"
  sleep 0.2
done
scontrol requeue "$rjob" || fail "scontrol requeue $rjob failed"
# The requeued job is held (Reason=BeginTime, about 2 minutes); release it.
wait_state "$rjob" PENDING 60
# slurmd remembers the kill of the old run with a 1-second resolution: a restart in the same
# second is refused ("Job N already killed, do not launch batch job") and the job ends FAILED.
sleep 2
scontrol update JobId="$rjob" StartTime=now || fail "scontrol update JobId=$rjob StartTime=now failed"
wait_gone "$rjob" 120
grep -qx 'restart=1' "$out/requeue.txt" \
  || fail "restarted job did not see SLURM_RESTART_COUNT=1: $(tr '\n' ' ' <"$out/requeue.txt")"
t_requeue=$SECONDS
log "requeue: restarted job saw SLURM_RESTART_COUNT=1 ($((t_requeue - t_array)) s)"

log "PASS (bring-up $((t_up - t_start)) s, array $((t_array - t_up)) s, requeue $((t_requeue - t_array)) s, total before teardown $((SECONDS - t_start)) s)"
