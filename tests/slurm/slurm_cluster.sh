#!/usr/bin/env bash
# A private single-node Slurm cluster for the tests labelled `slurm`: munged, slurmctld and slurmd of this machine's
# Debian packages (slurm-wlm, munge), started directly (no systemd) with everything of theirs in one fresh directory.
#
#   slurm_cluster.sh start DIR   start the cluster (first stopping one that DIR still holds); write DIR/slurm.env
#                                (SLURM_CONF, PATH) for the tests to source; return once `sinfo` shows the node idle,
#                                or fail, printing the daemons' logs, after MESHLOOM_SLURM_START_TIMEOUT s (default 30)
#   slurm_cluster.sh stop DIR    kill the daemons by their pid files and remove DIR and the cluster's state
#
# Nothing is shared with another cluster on the same machine (a second checkout, a system Slurm): munged listens on
# its own socket with a fresh key, slurmctld and slurmd on free TCP ports of their own, and the state, spool and log
# directories sit in a `mktemp -d` directory under /tmp (short paths: munge's and slurmstepd's Unix sockets must fit
# in 108 bytes), named in DIR/state_dir. Its daemons run as the user who starts it, root or not (SlurmUser and
# SlurmdUser: a slurmd that is not root runs that user's jobs only, which are the tests'); no cgroups:
# proctrack/linuxproc, task/none, select/cons_tres over this machine's cores (at least 2).
set -euo pipefail

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action=$1
dir=$2

# Ends the processes whose ids are in the pid files given, those that still run: TERM to all, then KILL to those
# left after 10 s (each daemon takes a second or two to exit).
kill_pidfiles() {
  local file pid pids=()
  for file in "$@"; do
    [ -s "$file" ] || continue
    pid=$(cat "$file")
    # Only one of this cluster's daemons: a pid file left from before a reboot may name a process that reused the pid.
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || continue
    case $(cat "/proc/$pid/comm" 2>/dev/null) in
      munged | slurmctld | slurmd) pids+=("$pid") ;;
    esac
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local alive
  for _ in $(seq 100); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 1 ] || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

# Kills process $1 and every process below it (KILL; children found by their parent pid in /proc).
kill_tree() {
  local stat child
  for stat in /proc/[0-9]*/stat; do
    # Field 4 of /proc/PID/stat is the parent pid; field 2, the name in parentheses, holds no spaces for these.
    [ "$(awk '{print $4}' "$stat" 2>/dev/null)" = "$1" ] || continue
    child=${stat#/proc/}
    kill_tree "${child%/stat}"
  done
  kill -KILL "$1" 2>/dev/null || true
}

stop_cluster() {
  local state=""
  [ -f "$dir/state_dir" ] && state=$(cat "$dir/state_dir")
  if [ -n "$state" ] && [ -d "$state" ]; then
    # Jobs first (their slurmstepd and tasks), while slurmctld can still be asked; at most 15 s until they are gone.
    if [ -f "$state/slurm.conf" ] && [ -s "$state/slurmctld.pid" ] && kill -0 "$(cat "$state/slurmctld.pid")" 2>/dev/null; then
      export SLURM_CONF=$state/slurm.conf
      if [ -n "$(timeout 10 squeue --noheader --format=%i 2>/dev/null)" ]; then
        timeout 10 scancel --full --quiet --user="$(id -un)" >/dev/null 2>&1 || true
        for _ in $(seq 30); do
          [ -n "$(timeout 10 squeue --noheader --format=%i 2>/dev/null)" ] || break
          sleep 0.5
        done
      fi
    fi
    kill_pidfiles "$state/slurmd.pid" "$state/slurmctld.pid" "$state/slurmd.daemon.pid" "$state/slurmctld.daemon.pid"
    # A slurmstepd that outlived its slurmd (its job could not be cancelled) and the job's processes below it.
    local proc
    for proc in /proc/[0-9]*; do
      [ "$(cat "$proc/comm" 2>/dev/null)" = slurmstepd ] || continue
      if tr '\0' '\n' <"$proc/environ" 2>/dev/null | grep -qx "SLURM_CONF=$state/slurm.conf"; then
        kill_tree "${proc#/proc/}"
      fi
    done
    kill_pidfiles "$state/munged.pid"
    case $state in
      /tmp/meshloom-slurm.* | "${TMPDIR:-/tmp}"/meshloom-slurm.*) rm -rf -- "$state" ;;
      *) echo "slurm_cluster: not removing $state (not a meshloom-slurm temporary directory)" >&2 ;;
    esac
  fi
  rm -rf -- "$dir"
}

if [ "$action" = stop ]; then
  stop_cluster
  echo "slurm_cluster: stopped the cluster of $dir"
  exit 0
fi
[ "$action" = start ] || usage

for tool in munged mungekey slurmctld slurmd sinfo scontrol; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "slurm_cluster: $tool not found; install Slurm and munge (scripts/install-deps.sh installs slurm-wlm, munge)" >&2
    exit 1
  }
done
if [ -e "$dir" ]; then
  # A run that was killed before its cleanup (ctest interrupted) left its cluster: stop it first.
  echo "slurm_cluster: $dir exists: stopping the cluster left there"
  stop_cluster
fi

mkdir -p "$dir"
state=$(mktemp -d "${TMPDIR:-/tmp}/meshloom-slurm.XXXXXX")
chmod 0755 "$state" # munged wants its socket's directory searchable by every user
echo "$state" >"$dir/state_dir"
mkdir -p "$state/ctld" "$state/spool" "$state/log" "$state/tmp" "$state/pmix"

failed=0
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
    local log
    for log in "$state/log/munged.log" "$state/log/slurmctld.log" "$state/log/slurmd.log" \
      "$state/log/slurmctld.out" "$state/log/slurmd.out"; do
      [ -s "$log" ] || continue
      echo "----- $log (last 40 lines) -----" >&2
      tail -n 40 "$log" >&2
    done
    stop_cluster
    echo "slurm_cluster: FAILED to start the Slurm cluster (logs above)" >&2
    exit 1
  fi
}
trap on_exit EXIT

# Two free TCP ports, chosen at random in 20000-59999 so that two clusters on one machine are unlikely to pick the
# same; a port already listening (ss, where iproute2 is installed) is skipped.
listening=$( (ss -Htln 2>/dev/null || true) | awk '{print $4}' | sed 's/.*://' | sort -u)
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    grep -qx "$p" <<<"$listening" && continue
    [ "$p" = "${ctld_port:-}" ] && continue
    echo "$p"
    return 0
  done
  echo "slurm_cluster: no free TCP port found" >&2
  return 1
}
ctld_port=$(free_port)
slurmd_port=$(free_port)

node=$(hostname -s)
cpus=$(nproc)
[ "$cpus" -ge 2 ] || cpus=2 # two ranks must fit; slurmd accepts it with config_overrides
user=$(id -un)
first_job_id=$((1000 + (RANDOM * 32768 + RANDOM) % 60000000))

# munge: a fresh key and a socket of its own.
mungekey --create --keyfile="$state/munge.key" --bits=1024 >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$state/munge.key" bs=1 count=1024 status=none
chmod 0400 "$state/munge.key"
munged --socket="$state/munge.socket" --key-file="$state/munge.key" --pid-file="$state/munged.pid" \
  --log-file="$state/log/munged.log" --seed-file="$state/munged.seed" --force >"$state/log/munged.out" 2>&1 || {
  echo "slurm_cluster: munged failed to start" >&2
  cat "$state/log/munged.out" >&2
  exit 1
}

cat >"$state/slurm.conf" <<EOF
# Written by tests/slurm/slurm_cluster.sh: a private single-node cluster for Meshloom's tests.
ClusterName=meshloom
SlurmctldHost=$node(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.daemon.pid
SlurmdPidFile=$state/slurmd.daemon.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
MailProg=/bin/true
MinJobAge=600
# Job ids that another cluster on this machine is unlikely to use too: Open MPI and PMIx name their session
# directories and shared memory after the job and step.
FirstJobId=$first_job_id
TmpFS=$state/tmp
KillWait=5
InactiveLimit=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

# The PMIx plugin's directories (by default /tmp/spmix_appdir_<uid>_<job>.<step>): in the cluster's own directory.
echo "PMIxCliTmpDirBase=$state/pmix" >"$state/mpi.conf"

export SLURM_CONF=$state/slurm.conf
# Started in sessions of their own (setsid) with no terminal and stdio in files: the caller (ctest) neither waits
# for them nor kills them with its own process group.
# setsid runs them in place (a background job of a script leads no process group), so $! is the daemon itself: its
# pid file exists at once, before the daemon writes its own (*.daemon.pid), and stop finds it even then.
setsid slurmctld -D -c -i -f "$SLURM_CONF" </dev/null >"$state/log/slurmctld.out" 2>&1 &
echo $! >"$state/slurmctld.pid"
setsid slurmd -D -N "$node" -f "$SLURM_CONF" </dev/null >"$state/log/slurmd.out" 2>&1 &
echo $! >"$state/slurmd.pid"

cat >"$dir/slurm.env" <<EOF
# Source this file to use the private cluster started by tests/slurm/slurm_cluster.sh.
export SLURM_CONF=$SLURM_CONF
export PATH=/usr/sbin:/usr/bin:\$PATH
export MESHLOOM_SLURM_STATE=$state
export MESHLOOM_SLURM_PARTITION=debug
export TMPDIR=$state/tmp
EOF

deadline=$((SECONDS + ${MESHLOOM_SLURM_START_TIMEOUT:-30}))
node_state=""
while [ "$SECONDS" -lt "$deadline" ]; do
  for daemon in slurmctld slurmd; do
    if ! kill -0 "$(cat "$state/$daemon.pid")" 2>/dev/null; then
      echo "slurm_cluster: $daemon exited during start-up (its log follows)" >&2
      failed=1
      exit 1
    fi
  done
  node_state=$(timeout 5 sinfo --noheader --nodes="$node" --format=%T 2>/dev/null || true)
  case $node_state in
    idle) break ;;
  esac
  sleep 0.5
done
if [ "$node_state" != idle ]; then
  echo "slurm_cluster: node $node is not idle after ${MESHLOOM_SLURM_START_TIMEOUT:-30} s (sinfo says: '${node_state:-no answer}')" >&2
  failed=1
  exit 1
fi
echo "slurm_cluster: node $node idle ($cpus CPUs, slurmctld port $ctld_port, slurmd port $slurmd_port)"
echo "slurm_cluster: state in $state; source $dir/slurm.env"
