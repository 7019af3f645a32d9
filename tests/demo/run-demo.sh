#!/usr/bin/env bash
# make demo: runs iowrap on the bundled example pipeline.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build/demo
rm -rf "$out"
mkdir -p "$out"
echo "Running: bin/iowrap --level full -o $out/trace -- sh tests/demo/pipeline.sh $out/work"
bin/iowrap --level full -o "$out/trace" -- sh tests/demo/pipeline.sh "$out/work"
echo
echo "Trace directory: $PWD/$out/trace"
echo "  procs.csv    one row per process ($(($(wc -l < "$out/trace/procs.csv") - 1)) processes)"
echo "  io.csv       one row per file operation ($(($(wc -l < "$out/trace/io.csv") - 1)) operations)"
echo "  files.csv    one row per file, with Darshan-style counters ($(($(wc -l < "$out/trace/files.csv") - 1)) files)"
echo "  summary.json the task's summary:"
/usr/bin/python3 - "$out/trace/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["totals"]
print(f"    exit {s['exit']['code']}, wall {s['wall_time_s']:.3f} s, "
      f"cpu {t['cpu_total_s']:.3f} s, peak RSS {t['peak_rss_kib']} KiB, "
      f"processes {t['processes']} (at most {t['processes_max_concurrent']} at once)")
print(f"    read {t['rchar_bytes']} B, wrote {t['wchar_bytes']} B "
      f"(storage: {t['read_bytes']} B in, {t['write_bytes']} B out)")
work = [f for f in s["files"] if "/demo/work/" in f["path"]]
for f in sorted(work, key=lambda f: f["path"]):
    print(f"    {f['path'].split('/demo/')[1]:22} opens {f['opens']}, "
          f"reads {f['read']['ops']} ({f['read']['bytes']} B), "
          f"writes {f['write']['ops']} ({f['write']['bytes']} B)")
PY
echo
bin/iowrap report -o "$out/report" "$out/trace"
echo "Report: $PWD/$out/report/report.html (open it in a browser; the data is in"
echo "        report.json next to it; iowrap report DIR... takes many tasks' traces)"
