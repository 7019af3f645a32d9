#!/usr/bin/env bash
# Start a single-node Slurm cluster on this machine (Debian 12's slurm-wlm and
# munge): munged, slurmctld and slurmd with every file under build/slurm/ (config,
# key, sockets, state, logs), nothing under /etc touched. Idempotent: a cluster
# that is already up is left as it is. Needs root (slurmd starts jobs as their
# user). Prints `export SLURM_CONF=...`; stop it with ci/slurm-stop.sh.
#
#   eval "$(ci/slurm-start.sh)" && srun hostname
#
# Environment: IOWRAP_SLURM_DIR (default build/slurm), IOWRAP_SLURM_PORT
# (slurmctld's port, default 6817; slurmd uses the next one).
set -euo pipefail

die() { echo "slurm-start.sh: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${IOWRAP_SLURM_DIR:-$top/build/slurm}
port=${IOWRAP_SLURM_PORT:-6817}
conf=$dir/slurm.conf

[ "$(id -u)" -eq 0 ] || die "needs root (slurmd runs jobs as their owner); fix: run as root"
for prog in munged slurmctld slurmd sinfo scontrol; do
    command -v "$prog" >/dev/null 2>&1 ||
        die "$prog not found; fix: apt-get install slurm-wlm munge (ci/install-packages.sh)"
done

# running NAME: the daemon NAME's pid file names a live NAME (not a reused pid).
running() {
    local file=$dir/$1.pid
    [ -s "$file" ] && [ "$(readlink "/proc/$(cat "$file")/exe" 2>/dev/null)" = "$(readlink -f "$(command -v "$1")")" ]
}

node_idle() {
    local state
    state=$(SLURM_CONF=$conf sinfo -h -N -o '%T' 2>/dev/null | head -n 1) || return 1
    case "$state" in idle | mixed | allocated) return 0 ;; esac
    return 1
}

mkdir -p "$dir/munge" "$dir/ctld" "$dir/d" "$dir/log"
chmod 0700 "$dir/munge"

# slurmd -C reports this machine as Slurm sees it: real CPUs, sockets, memory.
node=$(slurmd -C 2>/dev/null | head -n 1)
case "$node" in NodeName=*) ;; *) die "slurmd -C printed '$node'; expected NodeName=..." ;; esac
host=$(hostname -s)

cat >"$conf.new" <<EOF
# Written by ci/slurm-start.sh: a single-node test cluster.
ClusterName=iowrap
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
# slurmd reads cgroup.conf next to slurm.conf even with cgroups unused: keep ours.
echo "CgroupPlugin=autodetect" >"$dir/cgroup.conf"
if ! cmp -s "$conf.new" "$conf"; then
    mv "$conf.new" "$conf"
    changed=1
else
    rm -f "$conf.new"
    changed=0
fi

if [ "$changed" -eq 0 ] && running munged && running slurmctld &&
    running slurmd && node_idle; then
    echo "export SLURM_CONF=$conf"
    exit 0
fi
# A changed configuration needs fresh daemons.
[ "$changed" -eq 0 ] || "$top/ci/slurm-stop.sh" --keep-config >/dev/null 2>&1 || true

if [ ! -s "$dir/munge/munge.key" ]; then
    head -c 1024 /dev/urandom >"$dir/munge/munge.key.new"
    chmod 0400 "$dir/munge/munge.key.new"
    mv "$dir/munge/munge.key.new" "$dir/munge/munge.key"
fi

if ! running munged; then
    munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/munged.seed" --force ||
        die "munged failed to start; see $dir/log/munged.log"
fi

export SLURM_CONF=$conf
if ! running slurmctld; then
    slurmctld -f "$conf" || die "slurmctld failed to start; see $dir/log/slurmctld.log"
fi
if ! running slurmd; then
    slurmd -f "$conf" || die "slurmd failed to start; see $dir/log/slurmd.log"
fi

# Wait (at most 20 s) until the node is up and idle.
for _ in $(seq 1 100); do
    if node_idle; then
        echo "export SLURM_CONF=$conf"
        exit 0
    fi
    sleep 0.2
done
sinfo -N >&2 || true
tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
die "the node did not become idle within 20 s; see $dir/log/"
