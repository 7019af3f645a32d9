#!/usr/bin/python3
"""`iowrap report` at scale: synthesizes traces of TASKS tasks and EVENTS
io.csv rows in all (build/gen-traces: a few files per task, sequential and
random offsets, a reference every task reads, each task reading the previous
one's output), then runs `iowrap report` RUNS times and takes the median of
its elapsed time and of its peak RSS (wait4's ru_maxrss), and the sizes of
report.json and report.html.  Then it loads report.html once in headless
Chromium (tests/cdp.py) and times the load until the page says it is ready.
Writes the table to docs/report-scale.md (--quick: 100 tasks, 1 million
events, table on stdout only).

Usage: bench/report_scale.py [--quick] [--tasks N] [--events N] [--runs N]
                             [--keep DIR] [--no-write]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mdreport import reflow, table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
IOWRAP = ROOT / "bin" / "iowrap"
GEN = ROOT / "build" / "gen-traces"
DOC = ROOT / "docs" / "report-scale.md"
TARGET_S = 60
TARGET_BYTES = 2 << 30


def die(msg):
    sys.exit(f"report_scale: {msg}")


def log(msg):
    print(f"report_scale: {msg}", file=sys.stderr, flush=True)


def run_measured(argv):
    """Runs argv; returns (elapsed s, peak RSS in KiB, exit status)."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    return time.monotonic() - start, ru.ru_maxrss, os.waitstatus_to_exitcode(
        status)


def page_load(page):
    """Seconds from navigation to data-ready, or a reason it was not
    measured."""
    try:
        import cdp
    except ImportError as e:
        return None, f"tests/cdp.py not importable: {e}"
    if cdp.CHROMIUM is None:
        return None, "chromium is not installed"
    try:
        with cdp.Browser(timeout=300) as b:
            p = b.open_page()
            start = time.monotonic()
            p.navigate(page.as_uri())
            ready = p.evaluate("document.body.getAttribute('data-ready')")
            took = time.monotonic() - start
            errors = p.console_errors
    except Exception as e:  # the page or the browser failed: say so
        return None, f"chromium failed: {e}"
    if ready != "1" or errors:
        return None, f"page not ready ({ready!r}), console errors: {errors}"
    return took, None


def mib(n):
    return f"{n / (1 << 20):,.1f} MiB"


def measure(args, work):
    traces = work / "traces"
    per_task = args.events // args.tasks
    log(f"generating {args.tasks} tasks x {per_task} events in {traces}")
    start = time.monotonic()
    subprocess.run([str(GEN), str(traces), str(args.tasks), str(per_task)],
                   check=True)
    gen_s = time.monotonic() - start
    io_bytes = sum(p.stat().st_size for p in traces.glob("*/io.csv"))
    log(f"generated {mib(io_bytes)} of io.csv in {gen_s:.1f} s")
    runs = []
    out = work / "out"
    for i in range(args.runs):
        t, rss, rc = run_measured([str(IOWRAP), "report", "-o", str(out),
                                   str(traces)])
        if rc != 0:
            die(f"iowrap report exited {rc}")
        log(f"run {i + 1}: {t:.2f} s, {mib(rss * 1024)} peak RSS")
        runs.append((t, rss))
    rep = json.loads((out / "report.json").read_text())
    load_s, why = page_load(out / "report.html")
    return {
        "tasks": len(rep["tasks"]), "events": rep["workflow"]["events"],
        "io_bytes": io_bytes, "gen_s": gen_s,
        "times": [r[0] for r in runs], "rss_kib": [r[1] for r in runs],
        "json_bytes": (out / "report.json").stat().st_size,
        "html_bytes": (out / "report.html").stat().st_size,
        "sampling": rep["access_sampling"], "files": len(rep["files"]),
        "load_s": load_s, "load_why": why,
    }


def render(m, args):
    t = statistics.median(m["times"])
    rss = statistics.median(m["rss_kib"]) * 1024
    s = m["sampling"]
    rows = [
        ["tasks / io.csv events", f"{m['tasks']:,} / {m['events']:,}"],
        ["io.csv bytes (all tasks)", mib(m["io_bytes"])],
        ["files (paths)", f"{m['files']:,}"],
        [f"`iowrap report` elapsed, median of {len(m['times'])}",
         f"{t:.2f} s (runs: " + ", ".join(f"{x:.2f}" for x in m["times"]) +
         f"; target < {TARGET_S} s: {'met' if t < TARGET_S else 'MISSED'})"],
        [f"peak RSS (wait4 ru_maxrss), median of {len(m['rss_kib'])}",
         f"{mib(rss)} (target < 2 GiB: "
         f"{'met' if rss < TARGET_BYTES else 'MISSED'})"],
        ["report.json", mib(m["json_bytes"])],
        ["report.html", mib(m["html_bytes"])],
        ["Fig. 5 points kept / accesses",
         f"{s['points']:,} / {s['accesses']:,} ({s['sampled_files']:,} of "
         f"{s['files']:,} files sampled)"],
        ["report.html load in headless Chromium (to data-ready)",
         f"{m['load_s']:.1f} s" if m["load_s"] is not None
         else f"not measured: {m['load_why']}"],
    ]
    cpus = os.cpu_count()
    return reflow(f"""# `iowrap report` at scale

Measured by `bench/report_scale.py` (run by `make bench`) on this machine
({cpus} CPUs, shared with other work while it ran; page cache warm: the
traces were just written). Traces are synthetic (`build/gen-traces`,
tests/tools/gen_traces.c): per task a reference file every task reads
sequentially in 64 KiB, its input (the previous task's output) read
sequentially in 4 KiB, an index read at random 512-byte offsets, its output
written sequentially in 4 KiB, and a stat now and then.

{table(["what", "measured"], rows, ["---", "---"])}

Generating the traces took {m['gen_s']:.1f} s. The report reads io.csv
twice: once for every counter, once for Fig. 5's points, which are sampled
to at most {s['max_per_file']:,} per file and {s['max_total']:,} in all
(docs/report-format.md); memory grows with tasks, files and those caps,
never with events. What is left of report.json's size is the per task x
file records (`tasks[].files[]`) and `files[].task_files`, which grow with
tasks x files.
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="100 tasks, 1 million events, no docs written")
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="generate into DIR and keep it")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.tasks, args.events, args.no_write = 100, 1_000_000, True
    for f, fix in ((IOWRAP, "make"), (GEN, "make build/gen-traces")):
        if not f.exists():
            die(f"{f} missing; fix: {fix}")
    if args.keep:
        work = Path(args.keep)
        work.mkdir(parents=True)
        m = measure(args, work)
    else:
        work = Path(tempfile.mkdtemp(prefix="iowrap-report-scale."))
        try:
            m = measure(args, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    text = render(m, args)
    print(text)
    if not args.no_write:
        DOC.write_text(text)
        log(f"wrote {DOC}")


if __name__ == "__main__":
    main()
