#!/usr/bin/env bash
# Stop the single-node Slurm cluster that ci/slurm-start.sh started: slurmd,
# slurmctld and munged, each by the pid in its own pid file under build/slurm/
# (never by name). Idempotent. With --keep-config the files stay; otherwise the
# daemons' state (job records, spool) is removed too so the next start is fresh.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${IOWRAP_SLURM_DIR:-$top/build/slurm}
keep=0
[ "${1:-}" = "--keep-config" ] && keep=1

stop_pidfile() {
    local file=$1 pid
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    case "$pid" in '' | *[!0-9]*) rm -f "$file"; return 0 ;; esac
    if kill -TERM "$pid" 2>/dev/null; then
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

stop_pidfile "$dir/slurmd.pid"
stop_pidfile "$dir/slurmctld.pid"
stop_pidfile "$dir/munged.pid"
if [ "$keep" -eq 0 ] && [ -d "$dir" ]; then
    rm -rf "$dir/ctld" "$dir/d"
fi
echo "slurm-stop.sh: stopped"
