#!/bin/bash
# The symbolic-link workflow of docs/report-scale.md, "Versions written
# through symbolic links": N/2 writer tasks each write 50 files through
# links (made before, outside the trace) to real/f1 .. real/f50, renaming
# each link after its write (so its version is no longer under real/fJ);
# then N/2 reader tasks each read real/f1 .. real/f50.  Traces the N tasks
# into DIR/traces once; DIR/wfM (M <= N) holds the first M/2 writers' and
# readers' traces (hard links), each timed with `iowrap report` (elapsed
# s, peak RSS KiB).
#   bench/report_reached.sh DIR N [M ...]   (default M: N)
# IOWRAP: the binary (default bin/iowrap).
set -euo pipefail
IOW=$(realpath "${IOWRAP:-bin/iowrap}")
ROOT=$(realpath -m "$1")
N=$2
shift 2
SIZES=${*:-$N}

writer() {
	"$IOW" --level full -o "$ROOT/traces/w$1" -- /usr/bin/python3 -S -I -c "import os
for j in range(1, 51):
    open(f'w$1/l{j}', 'w').write('$1')
    os.rename(f'w$1/l{j}', f'w$1/m{j}')" >/dev/null
}

reader() {
	"$IOW" --level full -o "$ROOT/traces/r$1" -- /usr/bin/python3 -S -I -c "
for j in range(1, 51):
    open(f'real/f{j}').read()" >/dev/null
}

if [ ! -d "$ROOT/traces" ]; then
	mkdir -p "$ROOT/data/real" "$ROOT/traces"
	cd "$ROOT/data"
	for i in $(seq $((N / 2))); do
		mkdir "w$i"
		for j in $(seq 50); do ln -s "../real/f$j" "w$i/l$j"; done
	done
	for i in $(seq $((N / 2))); do writer "$i"; done
	for i in $(seq $((N / 2))); do reader "$i"; done
fi
for m in $SIZES; do
	W=$ROOT/wf$m
	if [ ! -d "$W" ]; then
		mkdir -p "$W"
		for i in $(seq $((m / 2))); do
			cp -al "$ROOT/traces/w$i" "$ROOT/traces/r$i" "$W/"
		done
	fi
	rm -rf "$W.out"
	/usr/bin/time -f "$m tasks: %e s %M KiB" "$IOW" report -o "$W.out" \
		"$W" >/dev/null
done
