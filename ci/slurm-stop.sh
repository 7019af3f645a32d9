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

# Each daemon takes about 2 s to exit: signal all of them, then wait.
pids=()
for name in slurmd slurmctld munged; do
    file=$dir/$name.pid
    [ -s "$file" ] || continue
    pid=$(cat "$file")
    rm -f "$file"
    case "$pid" in '' | *[!0-9]*) continue ;; esac
    # A stale pid file may name another process by now: only ours is stopped.
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$(command -v "$name")")" ] || continue
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
done
for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
done
if [ "$keep" -eq 0 ] && [ -d "$dir" ]; then
    rm -rf "$dir/ctld" "$dir/d"
fi
echo "slurm-stop.sh: stopped"
