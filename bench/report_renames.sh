#!/bin/bash
# The tasks' scripts expand their own $i and $(seq ...):
# shellcheck disable=SC2016
#
# The workflows of docs/report-scale.md, "Renames" and "File identity"
# (chain: 300 tasks, each reading the 40 files the one before wrote, so
# every read's name finds a version and the file's identity is checked
# against it; appenders: 1,000 tasks, each reading the 100 files all the
# tasks before appended to and appending a line, so each read's file has
# a version of every task before by identity): traces them
# into DIR/NAME/traces, then times `iowrap report` on them three times
# (user s, elapsed s, peak RSS KiB).
#   bench/report_renames.sh DIR [NAME ...]   (default: all)
# IOWRAP: the binary (default bin/iowrap).
set -euo pipefail
IOW=$(realpath "${IOWRAP:-bin/iowrap}")
ROOT=$1
shift
NAMES=${*:-replace acc state dirloop files100k dirs100k chain appenders}

task() { "$IOW" --level full -o "$B/traces/$1" -- sh -c "$2" >/dev/null; }

trace() {
	case $1 in
	replace) task T1 "python3 -c 'import os
for i in range(3000):
    open(\"status.json.tmp\", \"w\").write(str(i))
    os.replace(\"status.json.tmp\", \"status.json\")'" ;;
	acc)
		echo x >x
		task T1 'touch acc; for i in $(seq 2000); do
			cat acc x > acc.tmp && mv acc.tmp acc; done' ;;
	state)
		for t in T1 T2; do
			task $t 'for i in $(seq 3000); do
				echo $i > state.tmp; mv state.tmp state; done'
		done ;;
	dirloop)
		task T1 'for i in $(seq 3000); do mkdir out.tmp
			echo $i > out.tmp/f_$i; rm -rf out; mv out.tmp out; done'
		task T2 'cat out/*' ;;
	files100k)
		task T1 "python3 -c 'import os
for i in range(100000):
    open(f\"t{i}\", \"w\").write(\"x\"); os.rename(f\"t{i}\", f\"o{i}\")'"
		task T2 "python3 -c 'for i in range(100000): open(f\"o{i}\").read()'" ;;
	dirs100k)
		task T1 "python3 -c 'import os
for i in range(100000):
    os.mkdir(f\"t{i}\"); open(f\"t{i}/f\", \"w\").write(\"x\")
    os.rename(f\"t{i}\", f\"o{i}\")'"
		task T2 "python3 -c 'for i in range(100000): open(f\"o{i}/f\").read()'" ;;
	chain)
		for i in $(seq 0 299); do
			task "T$i" "python3 -c 'import sys
i = int(sys.argv[1])
for j in range(40):
    data = open(f\"f{i - 1}_{j}\").read() if i else \"x\"
    open(f\"f{i}_{j}\", \"w\").write(data[-1000:] + \"y\")' $i"
		done ;;
	appenders)
		# Only the data files traced: the python start's own opens
		# would make most of the report's time.
		for i in $(seq 0 999); do
			"$IOW" --level full --include "$PWD" -o "$B/traces/T$i" -- \
				python3 -c 'import sys
for j in range(100):
    data = open(f"log{j}").read() if sys.argv[1] != "0" else ""
    open(f"log{j}", "a").write(f"{len(data)}\n")' "$i" >/dev/null
		done ;;
	*) echo "unknown workflow $1" >&2; exit 2 ;;
	esac
}

for name in $NAMES; do
	B=$ROOT/$name
	if [ ! -d "$B/traces" ]; then
		mkdir -p "$B/data"
		(cd "$B/data" && trace "$name")
	fi
	line=$name
	for _ in 1 2 3; do
		rm -rf "$B/out"
		/usr/bin/time -f "%U %e %M" -o "$B/time" \
			"$IOW" report -o "$B/out" "$B/traces" >/dev/null
		line="$line | $(cat "$B/time")"
	done
	echo "$line"
done
