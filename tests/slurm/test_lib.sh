# shellcheck shell=bash
# Shared preamble of the shell tests that need a real single-node Slurm cluster
# (tests/slurm/slurm_smoke_test.sh, tests/batch_slurm_test.sh); see docs/slurm.md. Sourced, after
# `set -euo pipefail`, as
#   source tests/slurm/test_lib.sh NAME     # NAME prefixes every message
# It defines:
#   cluster                  path of tests/slurm/slurm_cluster.sh
#   skip MSG...              exit 77 (CTest skip)
#   fail MSG...              show the queue (once a cluster is up) and exit 1
#   log MSG...               a message on stderr
#   require_slurm            skip without root or the Slurm and munge programs
#   start_test_cluster PREFIX
#       sets t_start, work (a new /tmp/PREFIX.XXXXXX), state ($work/cluster) and t_up; installs an
#       EXIT trap that always brings the cluster down and removes $work on success but keeps it
#       (with the cluster logs) on failure; clears inherited SLURM_* job variables; brings the
#       cluster up and exports its SLURM_CONF.

slurm_test_name=${1:?usage: source test_lib.sh NAME}
cluster="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/slurm_cluster.sh"

skip() { echo "$slurm_test_name: SKIP: $*" >&2; exit 77; }
fail() {
  echo "$slurm_test_name: FAIL: $*" >&2
  if [ -n "${SLURM_CONF:-}" ]; then
    squeue >&2 || true
  fi
  exit 1
}
log() { echo "$slurm_test_name: $*" >&2; }

require_slurm() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (runs slurmctld, slurmd and munged)"
  local b
  for b in slurmctld slurmd sbatch squeue scontrol scancel sinfo munged munge; do
    command -v "$b" >/dev/null || skip "$b not found (packages: slurmctld slurmd slurm-client munge)"
  done
}

# The EXIT trap of start_test_cluster.
stop_test_cluster() {
  local rc=$?
  bash "$cluster" down "$state" || rc=1
  if [ "$rc" -eq 0 ]; then
    rm -rf -- "$work"
  else
    echo "$slurm_test_name: kept $work for inspection (cluster logs in $state/log)" >&2
  fi
  exit "$rc"
}

start_test_cluster() {
  local prefix=${1:?usage: start_test_cluster PREFIX}
  t_start=$SECONDS
  work=$(mktemp -d "/tmp/$prefix.XXXXXX")
  state="$work/cluster"
  trap stop_test_cluster EXIT
  # Unrelated SLURM_* variables of a surrounding job would change sbatch's behaviour.
  unset SLURM_JOB_ID SLURM_JOBID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_CPUS_PER_TASK
  eval "$(bash "$cluster" up "$state")"
  [ -n "${SLURM_CONF:-}" ] || fail "slurm_cluster.sh up printed no SLURM_CONF"
  t_up=$SECONDS
  log "cluster up in $((t_up - t_start)) s"
}
