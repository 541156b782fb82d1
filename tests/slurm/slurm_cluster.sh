#!/usr/bin/env bash
# Start and stop a real single-node Slurm cluster on localhost for tests (no systemd needed).
#
#   eval "$(bash tests/slurm/slurm_cluster.sh up STATE_DIR)"   # prints: export SLURM_CONF=...
#   bash tests/slurm/slurm_cluster.sh status STATE_DIR
#   bash tests/slurm/slurm_cluster.sh down STATE_DIR
#
# `up` writes STATE_DIR/slurm.conf (every pid/state/spool/log path inside STATE_DIR, a unique
# ClusterName, free ports), starts munged if it is not running, then slurmctld and slurmd, and
# waits until the node is idle. Only the `export` line goes to stdout; messages go to stderr.
# If `up` fails it shows the daemon logs, stops what it started and exits non-zero.
# `down` cancels all jobs, waits for an empty queue, stops the daemons by the PIDs in their pid
# files (never by name) and checks that they are gone. Both are idempotent; STATE_DIR is kept
# (logs, jobcomp.txt) for the caller to inspect or delete.
# Requires root and the Debian packages slurmctld slurmd slurm-client munge (scripts/setup.sh).
# See docs/slurm.md. Environment: SLURM_CLUSTER_TIMEOUT (seconds per wait, default 60).
set -euo pipefail

TIMEOUT=${SLURM_CLUSTER_TIMEOUT:-60}
MARKER=.slurm_cluster   # marks a directory as ours, so that `up` may clean it

log() { echo "slurm_cluster: $*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
  echo "usage: $0 {up|down|status} STATE_DIR" >&2
  exit 2
}

# ---------------------------------------------------------------------------------------------
# Process helpers. A process counts as alive unless it is gone or a zombie (`ps -o stat=`).
alive() {
  local st
  st=$(ps -o stat= -p "$1" 2>/dev/null | tr -d ' ') || return 1
  [ -n "$st" ] && [[ $st != Z* ]]
}

# PID from a pid file, only if that process is alive and its command name is the expected one
# (protects against a stale pid file whose PID has been reused).
pid_of() {  # pid_of PIDFILE COMM
  local f=$1 comm=$2 pid
  [ -s "$f" ] || return 1
  pid=$(tr -dc '0-9' <"$f")
  [ -n "$pid" ] || return 1
  alive "$pid" || return 1
  [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = "$comm" ] || return 1
  echo "$pid"
}

# stop_pid PID NAME: SIGTERM, wait up to 20 s, then SIGKILL and wait again.
stop_pid() {
  local pid=$1 name=$2 i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do
    alive "$pid" || return 0
    sleep 0.1
  done
  log "$name (pid $pid) ignored SIGTERM for 20 s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    alive "$pid" || return 0
    sleep 0.1
  done
  log "$name (pid $pid) is still alive: $(ps -o pid=,stat=,comm= -p "$pid" 2>/dev/null)"
  return 1
}

port_free() {  # no TCP socket (any state) uses local port $1
  local hex
  hex=$(printf ':%04X' "$1")
  ! awk -v p="$hex" 'FNR > 1 && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# Live (non-zombie) Slurm daemons or job steps anywhere on the machine, e.g. another cluster.
other_slurm_processes() {
  ps -eo stat=,comm= | awk '$1 !~ /^Z/ && ($2 == "slurmctld" || $2 == "slurmd" || $2 == "slurmstepd") { f = 1 } END { exit !f }'
}

munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

show_logs() {
  local f
  for f in "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log"; do
    [ -f "$f" ] || continue
    echo "----- last lines of $f -----" >&2
    tail -n 40 "$f" >&2
  done
}

# ---------------------------------------------------------------------------------------------
setup_paths() {
  [ -n "${1:-}" ] || usage
  DIR=$(realpath -m -- "$1")
  CONF=$DIR/slurm.conf
  CTLD_PID=$DIR/run/slurmctld.pid
  SLURMD_PID=$DIR/run/slurmd.pid
}

check_prereqs() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (SlurmUser=root, munged is started as munge)"
  local b
  for b in slurmctld slurmd scontrol sinfo squeue scancel sbatch munged munge unmunge runuser; do
    command -v "$b" >/dev/null || die "$b not found (install: slurmctld slurmd slurm-client munge)"
  done
  # SlurmctldHost=localhost: without a resolvable localhost every Slurm command retries for ~10 s.
  getent hosts localhost >/dev/null || die "the host name localhost does not resolve (add '127.0.0.1 localhost' to /etc/hosts)"
}

start_munge() {
  if munge_works; then
    return 0
  fi
  log "starting munged"
  mkdir -p /run/munge
  chown munge:munge /run/munge
  chmod 0755 /run/munge
  [ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (reinstall the munge package)"
  runuser -u munge -- munged || die "munged failed to start (see /var/log/munge/munged.log)"
  local i
  for ((i = 0; i < 10 * TIMEOUT; i++)); do
    if munge_works; then
      # Remember that this run started munged, so that `down` may stop it again.
      cat /run/munge/munged.pid >"$DIR/run/munged.started" 2>/dev/null || true
      return 0
    fi
    sleep 0.1
  done
  die "munged does not answer after ${TIMEOUT} s (see /var/log/munge/munged.log)"
}

write_conf() {
  local node cluster ctld_port slurmd_port base i
  # The node line from slurmd -C, renamed to localhost. Its RealMemory is what slurmd detects,
  # which is the maximum allowed (a larger value makes the node "inval").
  node=$(slurmd -C | head -n 1)
  [[ $node == NodeName=* ]] || die "unexpected output of slurmd -C: $node"
  node="NodeName=localhost ${node#NodeName=* }"
  # A fresh ClusterName per run: leftover state from another cluster name stops slurmctld.
  cluster="t$(date +%s)p$$r$((RANDOM % 1000))"
  # Two consecutive free TCP ports, so that a leftover cluster cannot capture our commands
  # (below 32768, the start of Linux's ephemeral port range).
  ctld_port=
  for ((i = 0; i < 50; i++)); do
    base=$((20000 + RANDOM % 12000))
    if port_free "$base" && port_free "$((base + 1))"; then
      ctld_port=$base
      slurmd_port=$((base + 1))
      break
    fi
  done
  [ -n "$ctld_port" ] || die "no free TCP port pair found"

  cat >"$CONF" <<EOF
# Written by tests/slurm/slurm_cluster.sh: a private single-node test cluster. See docs/slurm.md.
ClusterName=$cluster
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MailProg=/bin/true
# No cgroup.conf needed: track processes through /proc, no task confinement, no accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Allocate cores only (not memory), so that array tasks run side by side.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# No 3 s gaps between waves of array tasks.
SchedulerParameters=batch_sched_delay=0
# Finished jobs (and array tasks) with their exit codes, one line each.
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.txt
# Short kill grace period, so that cancelling jobs at teardown is quick.
KillWait=5
ReturnToService=2
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
$node State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

wait_for() {  # wait_for DESCRIPTION COMMAND...: poll every 0.2 s until COMMAND succeeds, TIMEOUT s at most
  local what=$1 deadline=$((SECONDS + TIMEOUT))
  shift
  while ((SECONDS < deadline)); do
    "$@" && return 0
    sleep 0.2
  done
  log "timed out after ${TIMEOUT} s waiting for $what"
  return 1
}

ctld_up() { timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'; }
node_idle() { [ "$(timeout 10 sinfo -h -o %T 2>/dev/null)" = idle ]; }

print_env() { printf 'export SLURM_CONF=%q\n' "$CONF"; }

bring_up() {
  local t0=$SECONDS
  start_munge
  write_conf
  slurmctld || die "slurmctld failed to start"
  wait_for "slurmctld (scontrol ping UP)" ctld_up
  slurmd -N localhost || die "slurmd failed to start"
  wait_for "the node to be idle" node_idle || die "node state: $(sinfo -h -o %T 2>&1 | tr '\n' ' ')"
  log "cluster $(sed -n 's/^ClusterName=//p' "$CONF") up in $((SECONDS - t0)) s (state in $DIR)"
}

up_failed() {
  log "bring-up failed in $DIR"
  show_logs
  cmd_down >/dev/null || true
  exit 1
}

cmd_up() {
  check_prereqs
  export SLURM_CONF=$CONF
  # Already running (a second `up` on the same directory): nothing to do, jobs are kept.
  if pid_of "$CTLD_PID" slurmctld >/dev/null && pid_of "$SLURMD_PID" slurmd >/dev/null \
     && ctld_up; then
    log "cluster in $DIR is already up"
    print_env
    return 0
  fi
  # A fresh state directory: an empty or new one, or one of ours from an earlier run.
  if [ -e "$DIR" ]; then
    [ -d "$DIR" ] || die "$DIR exists and is not a directory"
    if [ -e "$DIR/$MARKER" ]; then
      cmd_down >/dev/null || die "could not stop the earlier cluster in $DIR"
      rm -rf -- "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run" "$DIR/slurm.conf" "$DIR/jobcomp.txt"
    elif [ -n "$(ls -A -- "$DIR")" ]; then
      die "$DIR is not empty and was not made by this script; use a new directory"
    fi
  fi
  mkdir -p "$DIR"/{state,spool,log,run}
  touch "$DIR/$MARKER"

  # Bring-up in a subshell with errexit, so that every failure (die or a failed command)
  # ends up in up_failed, which shows the logs and stops whatever was started.
  local rc
  set +e
  (set -e; bring_up)
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || up_failed
  print_env
}

# Cancel every job and wait for an empty queue.
drain_jobs() {
  local i ids
  for ((i = 0; i < 5 * TIMEOUT; i++)); do
    ids=$(squeue -h -o %A 2>/dev/null) || return 1
    [ -z "$ids" ] && return 0
    # Repeat the cancel: requeued or completing jobs may need more than one.
    if ((i % 10 == 0)); then
      # shellcheck disable=SC2086
      scancel $ids 2>/dev/null || true
    fi
    sleep 0.2
  done
  log "jobs still queued after ${TIMEOUT} s:"
  squeue >&2 || true
  return 1
}

cmd_down() {
  local rc=0 ctld slurmd_pid munged_pid started
  if [ ! -e "$DIR/$MARKER" ] && [ ! -e "$CONF" ]; then
    return 0  # nothing of ours here
  fi
  export SLURM_CONF=$CONF
  if ctld=$(pid_of "$CTLD_PID" slurmctld) && [ -e "$CONF" ]; then
    drain_jobs || rc=1
  fi
  if slurmd_pid=$(pid_of "$SLURMD_PID" slurmd); then
    stop_pid "$slurmd_pid" slurmd || rc=1
  fi
  if ctld=$(pid_of "$CTLD_PID" slurmctld); then
    stop_pid "$ctld" slurmctld || rc=1
  fi
  # munged: only if this run started it and no other Slurm daemon on the machine still needs it.
  # (This only looks at names; nothing is ever killed by name.)
  if [ -s "$DIR/run/munged.started" ]; then
    started=$(tr -dc '0-9' <"$DIR/run/munged.started")
    if munged_pid=$(pid_of /run/munge/munged.pid munged) && [ "$munged_pid" = "$started" ]; then
      if other_slurm_processes; then
        log "leaving munged (pid $munged_pid) running: other Slurm daemons use it"
      else
        stop_pid "$munged_pid" munged || rc=1
      fi
    fi
    rm -f "$DIR/run/munged.started"
  fi
  if [ "$rc" -eq 0 ]; then
    log "cluster in $DIR is down"
  else
    log "cluster in $DIR: teardown had problems (see above)"
  fi
  return "$rc"
}

cmd_status() {
  local ok=0 p
  if p=$(pid_of "$CTLD_PID" slurmctld); then echo "slurmctld: running (pid $p)"; else echo "slurmctld: stopped"; ok=1; fi
  if p=$(pid_of "$SLURMD_PID" slurmd); then echo "slurmd: running (pid $p)"; else echo "slurmd: stopped"; ok=1; fi
  if munge_works; then echo "munged: running"; else echo "munged: not answering"; ok=1; fi
  if [ "$ok" -eq 0 ]; then
    export SLURM_CONF=$CONF
    scontrol ping || ok=1
    sinfo || ok=1
    squeue || ok=1
  fi
  return "$ok"
}

[ $# -eq 2 ] || usage
case $1 in
  up) setup_paths "$2"; cmd_up ;;
  down) setup_paths "$2"; cmd_down ;;
  status) setup_paths "$2"; cmd_status ;;
  *) usage ;;
esac
