#!/bin/sh
# A small bundled pipeline: make data, compress it, sort it, count it.
set -e
work=${1:-.}
mkdir -p "$work"
seq 1 200000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' > "$work/data.txt"
gzip -1 -c "$work/data.txt" > "$work/data.txt.gz"
gzip -dc "$work/data.txt.gz" | sort -n -k1,1 > "$work/sorted.txt"
python3 -c 'import sys; print(sum(1 for _ in open(sys.argv[1])))' "$work/sorted.txt" > "$work/count.txt"
tar -cf "$work/bundle.tar" -C "$work" sorted.txt count.txt
( sleep 0.2; echo "background done" > "$work/bg.txt" ) &
wc -l < "$work/sorted.txt"
