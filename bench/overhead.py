#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Overhead benchmark: what iowrap's tracing levels cost in wall time, on
real programs, against the same programs run natively and under strace
(the HTC paper's Table III question, asked of every level).

Seven workloads (dd from /dev/zero, dd of a 64 MiB file, gzip -1, tar of
2000 small files, sort of 20 MB, 1000 x /bin/true from a shell loop,
python3 startup) each run natively, under `iowrap -l summary|files|full`,
under `strace -f --seccomp-bpf` with the same syscall set as iowrap's
files and full filters, and pinned to one CPU with `taskset` (native,
iowrap full, strace full).  Every run's output is checked against the
native run's; every iowrap run's summary.json gives its syscall stops.
The cells are medians over the runs of one invocation of this script.

Usage: bench/overhead.py [--runs N] [--quick] [--budget S] [--only W,...]
                         [--output FILE] [--no-doc] [--dir DIR]
(`make bench` runs it after bench/accuracy.py.)
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mdreport import reflow, table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
IOWRAP = ROOT / "bin" / "iowrap"
FILTER_C = ROOT / "ptrace" / "filter.c"
DOC = ROOT / "docs" / "overhead.md"

MIN_RUNS = 3          # runs of an expensive mode, whatever the budget
CHEAP_S = 1.0         # a mode whose first run is shorter always gets --runs
SHORT_S = 0.2         # ... and one shorter than this SHORT_FACTOR times as
SHORT_FACTOR = 3      # many: its median is the noisiest and runs are cheap
NOISE_FLOOR = 0.10    # per-stop costs only where stops add at least 10%
LEAVE_ON = 1.10       # "cheap enough to leave on": at most +10% ...
STRESS_LIMIT = 2.0    # ... and at most 2x on the two synthetic stress cases

# iowrap's filter (ptrace/filter.c), used when that file cannot be parsed.
FILES_SET = """open openat openat2 creat close close_range dup dup2 dup3
fcntl fcntl64 execve execveat unlink unlinkat rmdir rename renameat
renameat2 link linkat symlink symlinkat mkdir mkdirat truncate truncate64
ftruncate ftruncate64 mmap mmap2 chdir fchdir stat stat64 lstat lstat64
newfstatat fstatat64 statx access faccessat faccessat2""".split()
FULL_EXTRA = """read write pread64 pwrite64 readv writev preadv pwritev
preadv2 pwritev2 sendfile sendfile64 copy_file_range splice fsync fdatasync
sync_file_range fallocate lseek _llseek io_uring_setup
io_uring_enter""".split()


class BenchError(Exception):
    pass


def die(msg):
    print(f"bench/overhead.py: {msg}", file=sys.stderr)
    sys.exit(1)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- modes

@dataclass
class Mode:
    key: str
    label: str
    tracer: str = None      # None (native), "iowrap" or "strace"
    level: str = None       # iowrap level, or the strace set's level
    pinned: bool = False


MODES = [
    Mode("native", "native"),
    Mode("summary", "iowrap summary", "iowrap", "summary"),
    Mode("files", "iowrap files", "iowrap", "files"),
    Mode("full", "iowrap full", "iowrap", "full"),
    Mode("strace-files", "strace files", "strace", "files"),
    Mode("strace-full", "strace full", "strace", "full"),
    Mode("native-pinned", "native, 1 CPU", None, None, True),
    Mode("full-pinned", "iowrap full, 1 CPU", "iowrap", "full", True),
    Mode("strace-full-pinned", "strace full, 1 CPU", "strace", "full", True),
]
MODE = {m.key: m for m in MODES}


def filter_sets():
    """The syscall names of iowrap's files and full filters, read from
    ptrace/filter.c so that strace traces the same set."""
    sets = {"files": [], "full": []}
    try:
        src = FILTER_C.read_text()
        for name, level in re.findall(
                r"RULE(?:_ENTRY)?\(\s*SC_\w+\s*,\s*(\w+)\s*,\s*LEVEL_(\w+)",
                src):
            level = level.lower()
            if level in sets and name not in sets[level]:
                sets[level].append(name)
    except OSError:
        pass
    if not sets["files"] or not sets["full"]:
        log(f"warning: no rules found in {FILTER_C.relative_to(ROOT)}; "
            "using the syscall list built into this script")
        sets = {"files": FILES_SET, "full": FULL_EXTRA}
    return {"files": sets["files"], "full": sets["files"] + sets["full"]}


# ---------------------------------------------------------------- workloads

@dataclass
class Workload:
    key: str
    title: str
    what: str               # what it stresses
    argv: list
    outputs: list = field(default_factory=list)   # files it writes
    stderr_filter: object = None
    stress: bool = False    # synthetic worst case, not a real task
    fixed: bool = False     # /bin/true: the fixed cost of a traced task


def dd_stderr(text):
    """dd's last line carries its own timing: keep the byte count."""
    return re.sub(rb"copied, .*", b"copied", text)


SCALES = {
    # name: (dd-zero count, big file MiB, sort MB, small files, spawns)
    "full": (20000, 64, 20, 2000, 1000),
    "quick": (2000, 8, 2, 200, 100),
}


def python3():
    for p in ("/usr/bin/python3", shutil.which("python3")):
        if p and os.access(p, os.X_OK):
            return p
    return None


def workloads(data, scale):
    dd_count, big_mib, sort_mb, nfiles, nspawn = SCALES[scale]
    py = python3()
    return [
        Workload("true", "/bin/true (fixed cost per task)",
                 "start-up and end of tracing", ["/bin/true"], fixed=True),
        Workload("dd-zero", f"dd /dev/zero → /dev/null, bs=4k ×{dd_count}",
                 "syscalls (the BRIEF's case)",
                 ["dd", "if=/dev/zero", "of=/dev/null", "bs=4k",
                  f"count={dd_count}"],
                 stderr_filter=dd_stderr, stress=True),
        Workload("dd-file", f"dd {big_mib} MiB file → file, bs=4k",
                 "file I/O syscalls",
                 ["dd", f"if={data}/big.txt", "of=out.bin", "bs=4k"],
                 outputs=["out.bin"], stderr_filter=dd_stderr),
        Workload("gzip", f"gzip -1 of {big_mib} MiB text",
                 "compute, big reads",
                 ["gzip", "-1", "-c", f"{data}/big.txt"]),
        Workload("tar", f"tar -cf of {nfiles} small files", "metadata",
                 ["tar", "-cf", "out.tar", "-C", str(data), "tree"],
                 outputs=["out.tar"]),
        Workload("sort", f"sort of {sort_mb} MB text", "compute, threads",
                 ["sort", f"{data}/sort.txt"]),
        Workload("spawn", f"sh loop: {nspawn} × /bin/true", "processes",
                 ["/bin/sh", "-c", "i=0; while [ $i -lt %d ]; do /bin/true;"
                  " i=$((i+1)); done" % nspawn], stress=True),
        Workload("python", "python3 -c 'import json, sqlite3, email'",
                 "startup: opens, stats",
                 [py or "python3", "-c", "import json, sqlite3, email"]),
    ]


def make_text(rng, vocab, nbytes):
    """Deterministic text: lines of 4-16 pseudo-words."""
    out, size = [], 0
    while size < nbytes:
        words = rng.choices(vocab, k=20000)
        pos = 0
        lines = []
        while pos < len(words):
            n = rng.randint(4, 16)
            lines.append(" ".join(words[pos:pos + n]))
            pos += n
        chunk = ("\n".join(lines) + "\n").encode()
        out.append(chunk)
        size += len(chunk)
    return b"".join(out)[:nbytes]


def make_data(data, scale):
    _, big_mib, sort_mb, nfiles, _ = SCALES[scale]
    rng = random.Random(20240601)
    syl = ["ka", "to", "ri", "sen", "mo", "la", "vi", "dor", "qu", "ex",
           "an", "bel", "cor", "pho", "ty", "gra", "nu", "ost", "pel", "zi"]
    vocab = ["".join(rng.choices(syl, k=rng.randint(1, 4)))
             for _ in range(6000)]
    big = make_text(rng, vocab, big_mib << 20)
    big = big[:-1] + b"\n"
    (data / "big.txt").write_bytes(big)
    # sort input: a key in front of each line so that lines differ early.
    text = make_text(rng, vocab, sort_mb * 10**6).split(b"\n")[:-1]
    lines = [b"%08x %s" % (rng.getrandbits(32), t) for t in text]
    (data / "sort.txt").write_bytes(b"\n".join(lines) + b"\n")
    tree = data / "tree"
    per_dir = 100
    for i in range(nfiles):
        d = tree / f"d{i // per_dir:02d}"
        if i % per_dir == 0:
            d.mkdir(parents=True)
        start = rng.randrange(0, len(big) - 16384)
        (d / f"f{i:04d}.txt").write_bytes(
            big[start:start + rng.randint(0, 8192)])
    # A fixed mtime, so that the tar is the same whatever the date.
    for p in sorted(tree.rglob("*"), reverse=True) + [tree]:
        os.utime(p, (1700000000, 1700000000))


# ---------------------------------------------------------------- one run

@dataclass
class Run:
    wall_s: float
    cpu_s: float
    ok: bool = True
    stops: int = None
    processes: int = None


def digest(path):
    try:
        h = hashlib.sha256()
        size = 0
        with open(path, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                h.update(b)
                size += len(b)
        return (size, h.hexdigest()[:16])
    except FileNotFoundError:
        return None


def fingerprint(w, rundir, status):
    err = (rundir / "stderr").read_bytes()
    if w.stderr_filter:
        err = w.stderr_filter(err)
    fp = {"exit status": status, "stdout": digest(rundir / "stdout"),
          "stderr": err}
    for name in w.outputs:
        fp[name] = digest(rundir / name)
    return fp


def describe_diff(ref, fp):
    out = []
    for k in ref:
        if ref[k] == fp[k]:
            continue
        if k == "stderr":
            a = ref[k].decode(errors="replace").strip()
            b = fp[k].decode(errors="replace").strip()
            out.append(f"stderr {b[:300]!r} (native: {a[:300]!r})")
        elif k == "exit status":
            out.append(f"exit status {fp[k]} (native: {ref[k]})")
        else:
            def fmt(d):
                return "missing" if d is None else \
                    f"{d[0]} B sha256 {d[1]}"
            out.append(f"{k}: {fmt(fp[k])} (native: {fmt(ref[k])})")
    return out


class Bench:
    def __init__(self, workdir, iowrap, strace_sets, seccomp_bpf, cpu0):
        self.workdir = workdir
        self.iowrap = iowrap
        self.sets = strace_sets
        self.seccomp_bpf = seccomp_bpf
        self.cpu0 = cpu0
        self.env = dict(os.environ, LC_ALL="C")
        self.failures = []

    def strace_argv(self, level, extra=("-o", "/dev/null")):
        argv = ["strace", "-f", "-qq", *extra]
        if self.seccomp_bpf:
            argv.append("--seccomp-bpf")
        return argv + ["-e", "trace=" + ",".join(self.sets[level])]

    def argv(self, mode, w, trace):
        prefix = []
        if mode.pinned:
            prefix = ["taskset", "-c", str(self.cpu0)]
        if mode.tracer == "iowrap":
            prefix += [str(self.iowrap), "--strict", "-l", mode.level,
                       "-o", str(trace), "--"]
        elif mode.tracer == "strace":
            prefix += self.strace_argv(mode.level)
        return prefix + w.argv

    def execute(self, argv, rundir):
        """Runs argv in rundir (empty); returns (wall, cpu, status)."""
        with open(rundir / "stdout", "wb") as out, \
                open(rundir / "stderr", "wb") as err:
            t0 = time.perf_counter()
            child = subprocess.Popen(argv, cwd=rundir, env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=err)
            _, status, ru = os.wait4(child.pid, 0)
            wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        return wall, ru.ru_utime + ru.ru_stime, child.returncode

    def fresh_rundir(self):
        rundir = self.workdir / "run"
        shutil.rmtree(rundir, ignore_errors=True)
        rundir.mkdir()
        return rundir

    def reference(self, w):
        """One native run, untimed: warms the caches, gives the output
        that every other run must reproduce."""
        rundir = self.fresh_rundir()
        _, _, status = self.execute(w.argv, rundir)
        ref = fingerprint(w, rundir, status)
        if status != 0:
            raise BenchError(
                f"{w.key}: native run failed with exit status {status}: "
                f"{(rundir / 'stderr').read_bytes()[:500]!r}")
        return ref

    def run(self, mode, w, ref, index):
        rundir = self.fresh_rundir()
        trace = self.workdir / "trace"
        shutil.rmtree(trace, ignore_errors=True)
        wall, cpu, status = self.execute(self.argv(mode, w, trace), rundir)
        rec = Run(wall, cpu)
        problems = describe_diff(ref, fingerprint(w, rundir, status))
        if mode.tracer == "iowrap":
            try:
                s = json.loads((trace / "summary.json").read_text())
                t = s["tracing"]
                rec.stops = t["syscall_stops"]
                rec.processes = s["totals"]["processes"]
                if t["mode"] != "ptrace":
                    problems.append(f"tracing.mode {t['mode']!r}: "
                                    f"{t.get('untraced_reason')}")
                if t["level"] != mode.level:
                    problems.append(f"tracing.level {t['level']!r}")
                if not t.get("complete", False):
                    problems.append("tracing.complete is false")
                for p in t.get("problems") or []:
                    problems.append(f"tracing.problems: {p}")
            except (OSError, ValueError, KeyError, TypeError) as e:
                problems.append(f"no usable summary.json: {e}")
        if problems:
            rec.ok = False
            self.failures.append({"workload": w.key, "mode": mode.key,
                                  "run": index + 1,
                                  "argv": self.argv(mode, w, trace),
                                  "problems": problems})
            log(f"  FAILED: {w.key} under {mode.label} (run {index + 1}): "
                + "; ".join(problems))
        shutil.rmtree(trace, ignore_errors=True)
        shutil.rmtree(rundir, ignore_errors=True)
        return rec

    def strace_calls(self, w, level, ref):
        """Syscalls strace traced (strace -c, one untimed run): strace stops
        about twice per traced syscall (entry and exit)."""
        rundir = self.fresh_rundir()
        counts = self.workdir / "strace-c.txt"
        argv = self.strace_argv(level, ("-c", "-o", str(counts))) + w.argv
        _, _, status = self.execute(argv, rundir)
        problems = describe_diff(ref, fingerprint(w, rundir, status))
        calls = None
        try:
            for line in counts.read_text().splitlines():
                f = line.split()
                if f and f[-1] == "total":
                    calls = int(f[3])
        except (OSError, ValueError, IndexError):
            pass
        if problems or calls is None:
            self.failures.append({"workload": w.key,
                                  "mode": f"strace -c ({level})", "run": 1,
                                  "argv": argv,
                                  "problems": problems or
                                  ["no total line in strace -c output"]})
        return calls


def rotate(seq, r):
    r %= len(seq)
    return seq[r:] + seq[:r]


def run_workload(bench, w, runs, share, count_strace):
    """All modes, interleaved: in round r the mode order is rotated by r.
    A mode whose first run took less than CHEAP_S gets `runs` runs (less
    than SHORT_S: SHORT_FACTOR times as many); the others as many as fit
    into `share` seconds (at least MIN_RUNS)."""
    t0 = time.monotonic()
    ref = bench.reference(w)
    cell = {"runs": {m.key: [] for m in MODES}, "strace_calls": {}}
    cost = {}
    for m in rotate(MODES, 0):
        t = time.monotonic()
        cell["runs"][m.key].append(bench.run(m, w, ref, 0))
        cost[m.key] = time.monotonic() - t
    if count_strace:
        for level in ("files", "full"):
            cell["strace_calls"][level] = bench.strace_calls(w, level, ref)
    cheap = {k for k in cost if cell["runs"][k][0].wall_s < CHEAP_S}
    short = {k for k in cost if cell["runs"][k][0].wall_s < SHORT_S}
    target = {k: runs * (SHORT_FACTOR if k in short else 1) for k in cheap}
    cheap_cost = sum(cost[k] * (target[k] - 1) for k in cheap)
    dear_round = sum(cost[k] for k in cost if k not in cheap)
    left = share - (time.monotonic() - t0) - cheap_cost
    more = int(left // dear_round) if dear_round > 0 else runs
    dear_runs = max(min(MIN_RUNS, runs), min(runs, 1 + more))
    for k in cost:
        target.setdefault(k, dear_runs)
    for r in range(1, max(target.values())):
        for m in rotate(MODES, r):
            if len(cell["runs"][m.key]) < target[m.key]:
                cell["runs"][m.key].append(bench.run(m, w, ref, r))
    cell["elapsed_s"] = time.monotonic() - t0
    cell["n"] = {k: len(v) for k, v in cell["runs"].items()}
    return cell


# ---------------------------------------------------------------- figures

def med(cell, mode, what="wall_s"):
    vals = [getattr(r, what) for r in cell["runs"][mode] if r.ok]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def failed(cell, mode):
    return sum(1 for r in cell["runs"][mode] if not r.ok)


def fmt_time(s):
    if s is None:
        return "—"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 100:
        return f"{s:.3g} s"
    return f"{s:.0f} s"


def fmt_ratio(r):
    if r is None:
        return "—"
    if r < 10:
        return f"{r:.2f}x"
    if r < 100:
        return f"{r:.1f}x"
    return f"{r:.0f}x"


def fmt_us(s):
    if s is None:
        return "—"
    us = s * 1e6
    if abs(us) < 10:
        return f"{us:.1f} µs"
    return f"{us:.0f} µs"


def ratio(a, b):
    return a / b if a is not None and b else None


def per_stop(cell, mode, base, stops):
    """Extra wall time per stop over the `base` mode, when there are enough
    stops to tell."""
    a, b = med(cell, mode), med(cell, base)
    if a is None or b is None or not stops or stops < 1000 or \
            a - b < NOISE_FLOOR * b:
        return None
    return (a - b) / stops


def mark(cell, mode, text):
    n = failed(cell, mode)
    return f"{text} ⚠{n}" if n else text


def wall_table(results, wl):
    modes = [m for m in MODES]
    header = ["Workload"] + [m.label for m in modes]
    rows = []
    for w in wl:
        c = results[w.key]
        nat = med(c, "native")
        row = [w.title]
        for m in modes:
            t = med(c, m.key)
            text = fmt_time(t)
            if m.key != "native" and t is not None:
                text += f" ({fmt_ratio(ratio(t, nat))})"
            row.append(mark(c, m.key, text))
        rows.append(row)
    return table(header, rows)


def strace_table(results, wl):
    header = ["Workload", "files ÷ strace files", "full ÷ strace full",
              "1 CPU: full ÷ strace full", "strace's stops, files (≈)",
              "strace's stops, full (≈)"]
    rows = []
    for w in wl:
        c = results[w.key]
        sc = c["strace_calls"]

        def st(level):
            n = sc.get(level)
            return f"{2 * n:,}" if n is not None else "—"
        rows.append([
            w.title,
            fmt_ratio(ratio(med(c, "files"), med(c, "strace-files"))),
            fmt_ratio(ratio(med(c, "full"), med(c, "strace-full"))),
            fmt_ratio(ratio(med(c, "full-pinned"),
                            med(c, "strace-full-pinned"))),
            st("files"), st("full")])
    return table(header, rows)


def stops(cell, mode):
    s = med(cell, mode, "stops")
    return int(round(s)) if s is not None else None


def stop_table(results, wl):
    header = ["Workload", "processes", "summary: per process",
              "stops, files", "per stop, files", "stops, full",
              "per stop, full", "per stop, full 1 CPU",
              "per stop, strace full"]
    rows = []
    for w in wl:
        c = results[w.key]
        procs = med(c, "summary", "processes")
        per_proc = None
        if procs and med(c, "summary") is not None and procs >= 100:
            per_proc = (med(c, "summary") - med(c, "native")) / procs
        sf, su = stops(c, "files"), stops(c, "full")
        sfull = c["strace_calls"].get("full")
        rows.append([
            w.title,
            f"{procs:.0f}" if procs is not None else "—",
            fmt_us(per_proc),
            f"{sf:,}" if sf is not None else "—",
            fmt_us(per_stop(c, "files", "summary", sf)),
            f"{su:,}" if su is not None else "—",
            fmt_us(per_stop(c, "full", "summary", su)),
            fmt_us(per_stop(c, "full-pinned", "native-pinned", su)),
            fmt_us(per_stop(c, "strace-full", "native",
                            2 * sfull if sfull else None)),
        ])
    return table(header, rows)


def cpu_table(results, wl):
    keys = ["native", "summary", "files", "full", "strace-full",
            "full-pinned"]
    header = ["Workload"] + [MODE[k].label for k in keys]
    rows = []
    for w in wl:
        c = results[w.key]
        nat = med(c, "native", "cpu_s")
        row = [w.title]
        for k in keys:
            t = med(c, k, "cpu_s")
            text = fmt_time(t)
            if k != "native" and t is not None:
                text += f" ({fmt_ratio(ratio(t, nat))})"
            row.append(text)
        rows.append(row)
    return table(header, rows)


def runs_table(results, wl):
    header = ["Workload", "time spent"] + [m.label for m in MODES]
    rows = []
    for w in wl:
        c = results[w.key]
        row = [w.title, f"{c['elapsed_s']:.0f} s"]
        for m in MODES:
            vals = [r.wall_s for r in c["runs"][m.key] if r.ok]
            if len(vals) > 1:
                row.append(f"{c['n'][m.key]}: {fmt_time(min(vals))}–"
                           f"{fmt_time(max(vals))}")
            else:
                row.append(f"{c['n'][m.key]}")
        rows.append(row)
    return table(header, rows)


# ---------------------------------------------------------------- report

def machine_info(where):
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(ROOT), *args],
                                  capture_output=True, text=True,
                                  timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
    head = git("rev-parse", "--short", "HEAD")
    commit = head.stdout.strip() if head and head.returncode == 0 else ""
    if commit:
        dirty = git("diff", "--quiet", "HEAD", "--")
        if dirty is None or dirty.returncode != 0:
            commit += "-dirty"
    fs = subprocess.run(["df", "-PT", str(where)],
                        capture_output=True, text=True).stdout.split("\n")
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": model,
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or "unknown",
        "fs": fs[1].split()[1] if len(fs) > 1 and fs[1] else "?",
    }


def tool_version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True,
                             timeout=10).stdout
        return out.splitlines()[0].strip() if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def level_ratios(results, wl, key):
    return {w.key: ratio(med(results[w.key], key),
                         med(results[w.key], "native")) for w in wl}


def fixed_cost(results, level):
    """What tracing /bin/true at `level` adds: iowrap's start-up and end,
    paid once per task whatever the task does."""
    c = results.get("true")
    if not c or med(c, level) is None or med(c, "native") is None:
        return 0.0
    return max(med(c, level) - med(c, "native"), 0.0)


def verdicts(results, wl, level):
    """Per workload: None (not judged), True (within the rule) or False.
    Real workloads: at most +10% over native, plus the level's fixed cost
    per task; stress cases: at most STRESS_LIMIT times native.  A median
    no slower than the slowest native run is within the noise: passed."""
    fixed = fixed_cost(results, level)
    out = {}
    for w in wl:
        t, n = med(results[w.key], level), med(results[w.key], "native")
        if w.fixed or t is None or n is None:
            out[w.key] = None
        elif t <= spread(results[w.key], "native")[1]:
            out[w.key] = True
        elif w.stress:
            out[w.key] = t <= STRESS_LIMIT * n
        else:
            out[w.key] = t - n <= (LEAVE_ON - 1) * n + fixed
    return out


def spread(cell, mode):
    vals = [r.wall_s for r in cell["runs"][mode] if r.ok]
    return (min(vals), max(vals)) if vals else (None, None)


def noise(results, wl):
    """How far native runs strayed from their median: (max − min) ÷
    median, per real workload."""
    out = {}
    for w in wl:
        c = results[w.key]
        lo, hi = spread(c, "native")
        if not w.fixed and lo is not None and len(c["runs"]["native"]) > 1:
            out[w.key] = (hi - lo) / med(c, "native")
    return out


def worst(ratios, wl, stress):
    pick = [(ratios[w.key], w) for w in wl if ratios.get(w.key) is not None
            and not w.fixed and w.stress == stress]
    return max(pick, key=lambda p: p[0]) if pick else (None, None)


def recommendation(results, wl):
    """The default --level this run supports, and why, from its numbers."""
    levels = ("summary", "files", "full")
    rs = {k: level_ratios(results, wl, k) for k in levels}
    vs = {k: verdicts(results, wl, k) for k in levels}
    ok = {k: all(v is not False for v in vs[k].values()) for k in levels}
    choice = "full" if ok["full"] else "files" if ok["files"] else "summary"
    name = {w.key: w.title for w in wl}

    def cite(level, stress):
        r, w = worst(rs[level], wl, stress)
        return f"{fmt_ratio(r)} ({w.title})" if w else "—"

    def listing(level, verdict):
        return ", ".join(f"{name[k]} ({fmt_ratio(rs[level][k])})"
                         for k, v in vs[level].items() if v is verdict)

    def ms(s):
        return f"{s * 1000:.1f} ms"
    paras = [f"**Default: `--level {choice}`.**"]
    paras.append(
        f"The rule applied: a level is cheap enough to leave on if, "
        f"unpinned (as iowrap runs), it adds at most "
        f"{(LEAVE_ON - 1) * 100:.0f}% to the native wall time of every real "
        f"workload here, on top of its fixed cost per task (tracing "
        f"/bin/true: {ms(fixed_cost(results, 'summary'))} at `summary`, "
        f"{ms(fixed_cost(results, 'files'))} at `files`, "
        f"{ms(fixed_cost(results, 'full'))} at `full`, nothing next to a "
        f"workflow task's seconds or hours), and at most "
        f"{STRESS_LIMIT:.0f}x on the two synthetic stress cases (dd of "
        f"/dev/zero, the /bin/true loop).")
    nz = noise(results, wl)
    if nz:
        k = max(nz, key=nz.get)
        paras.append(
            f"Run-to-run noise on this VM: the native runs of a workload "
            f"spread over {statistics.median(nz.values()) * 100:.0f}% of "
            f"their median (median over the workloads; up to "
            f"{nz[k] * 100:.0f}%, {name[k]}), so ratios within about "
            f"±{statistics.median(nz.values()) * 50:.0f}% are no "
            f"difference; a median no slower than the slowest native run "
            f"passes the rule.")
    items = []
    text = (f"`summary` costs at most {cite('summary', False)} on the real "
            f"workloads and {cite('summary', True)} on the stress cases")
    spawn = results.get("spawn")
    if spawn:
        procs = med(spawn, "summary", "processes")
        a, b = med(spawn, "summary"), med(spawn, "native")
        if procs and a is not None and b is not None:
            text += (f".  Its price is per process, not per syscall: about "
                     f"{fmt_us((a - b) / procs)} of wall time per process "
                     f"in the spawn loop (the fork, exec and exit stops "
                     f"and the /proc reads at each exit)")
    if ok["summary"]:
        text += ".  It meets the rule."
    else:
        text += (".  Even it breaks the rule here, on " +
                 listing("summary", False) + ".")
    items.append(text)
    text = (f"`files` costs at most {cite('files', False)} on the real "
            f"workloads and {cite('files', True)} on the stress cases")
    if ok["files"]:
        text += ".  It meets the rule."
    else:
        good = listing("files", True)
        text += (".  It breaks the rule on " + listing("files", False) +
                 ": every open, stat, file mmap, close and exec is a ptrace "
                 "stop (two for most), so a task pays per file and per "
                 "program started, not per byte")
        text += (f"; it stays within the rule on {good}." if good
                 else ".")
    items.append(text)
    text = (f"`full` costs up to {cite('full', False)} on the real "
            f"workloads and {cite('full', True)} on the stress cases: two "
            f"stops per read and write, so its cost follows the number of "
            f"I/O syscalls, not the bytes")
    dz = results.get("dd-zero")
    if dz and med(dz, "full-pinned") is not None:
        n_dz = med(dz, "native")
        text += (f".  Pinning tracer and task to one CPU cuts dd's "
                 f"{fmt_ratio(ratio(med(dz, 'full'), med(dz, 'native')))} "
                 f"to "
                 f"{fmt_ratio(ratio(med(dz, 'full-pinned'), n_dz))}"
                 f" (cheaper stops), but it also takes every other CPU away "
                 f"from the task")
    text += (".  It meets the rule." if ok["full"] else
             ".  It is a diagnostic level, not a default.")
    items.append(text)
    paras.append("\n".join("- " + i for i in items))
    if choice == "summary":
        paras.append(
            "So `summary` should stay the default: it is the one level that "
            "can be put in front of every task of a workflow without "
            "knowing what the task does.  `files` is for the workflows and "
            "tasks whose file list is wanted and that open few files "
            "(then it costs about what `summary` does); `full` for the one "
            "task whose access pattern is the question, pinned to one CPU "
            "if that task is single-threaded.")
    elif choice == "files":
        paras.append(
            "So `files` can be the default: the file list comes within the "
            "rule on every workload here; `full` stays opt-in.")
    return "\n\n".join(paras), choice, rs


def overall_stop_cost(results):
    """Per-stop cost in the purest case: dd of /dev/zero, where nearly all
    of the traced run is stops."""
    c = results.get("dd-zero")
    if not c:
        return None
    n = stops(c, "full")
    return {
        "stops": n,
        "unpinned": per_stop(c, "full", "summary", n),
        "pinned": per_stop(c, "full-pinned", "native-pinned", n),
        "strace": per_stop(c, "strace-full", "native",
                           2 * c["strace_calls"]["full"]
                           if c["strace_calls"].get("full") else None),
        "strace_pinned": per_stop(c, "strace-full-pinned", "native-pinned",
                                  2 * c["strace_calls"]["full"]
                                  if c["strace_calls"].get("full")
                                  else None),
    }


def bimodal_note(results, wl):
    """Unpinned, a stop costs what the scheduler makes of it: cite the
    workload whose `full` runs varied most."""
    best = None
    for w in wl:
        c = results[w.key]
        n = stops(c, "full")
        lo, hi = spread(c, "full")
        if not n or n < 10000 or lo is None or len(c["runs"]["full"]) < 2:
            continue
        if best is None or hi / lo > best[0]:
            best = (hi / lo, w, c, n)
    if best is None:
        return ""
    _, w, c, n = best
    base = med(c, "summary")
    lo, hi = spread(c, "full")
    slo, shi = spread(c, "strace-full")
    plo, phi = spread(c, "full-pinned")
    text = (f"Unpinned, the cost of a stop is not one number: it depends on "
            f"where the scheduler runs the tracer, on the task's CPU or on "
            f"the other one, and that can change from run to run and within "
            f"a run.  The widest spread in this invocation: {w.title} at "
            f"`full` took {fmt_time(lo)} to {fmt_time(hi)} over its runs "
            f"({fmt_us((lo - base) / n)} to {fmt_us((hi - base) / n)} per "
            f"stop)")
    if slo is not None:
        text += f", under strace {fmt_time(slo)} to {fmt_time(shi)}"
    if plo is not None:
        text += f"; pinned to one CPU {fmt_time(plo)} to {fmt_time(phi)}"
    text += (".  So the unpinned medians, and the iowrap ÷ strace ratios "
             "made from them, carry that spread (the Runs table below has "
             "every range); the 1-CPU columns are the steady comparison.")
    return text


def failure_list(bench):
    """The failed runs, grouped by workload and mode, each group with the
    command line that failed (`$WORK`: this run's temporary directory)."""
    groups = {}
    for f in bench.failures:
        groups.setdefault((f["workload"], f["mode"]), []).append(f)
    lines = []
    for (wk, mk), fs in groups.items():
        label = MODE[mk].label if mk in MODE else mk
        cmd = shlex.join(fs[0]["argv"]).replace(str(bench.workdir), "$WORK")
        lines.append(f"- {wk}, {label}: `{cmd}`")
        for f in fs:
            lines.append(f"  - run {f['run']}: " + "; ".join(f["problems"]))
    return "\n".join(lines)


def render(results, wl, info, args, elapsed, versions, bench):
    rec_text, choice, _ = recommendation(results, wl)
    sc = overall_stop_cost(results)
    parts = []
    runs_note = (f"{args.runs} run{'s' if args.runs > 1 else ''} per "
                 f"workload and mode, {args.runs * SHORT_FACTOR} for a "
                 f"mode whose run takes less than {SHORT_S * 1000:.0f} ms, "
                 f"and as few as {min(MIN_RUNS, args.runs)} for one that "
                 f"takes {CHEAP_S:.0f} s or more, so that the benchmark "
                 f"keeps within its {args.budget:.0f} s budget")
    parts.append(f"""# Overhead: iowrap's levels against native runs and strace

Generated by `bench/overhead.py` (`make bench`); do not edit by hand.

How much wall time iowrap adds to a task at each `--level`, on real
programs, measured against the same programs run natively and under
strace in the same invocation (the question of Table III of *Practical
Resource Monitoring for Robust High Throughput Computing*, asked of each
level).  Machine: {info['nproc']} CPUs ({info['cpu']}), Linux
{info['kernel']}; run {info['date']} at commit `{info['commit']}`
({versions['iowrap']}, `bin/iowrap` of {versions['iowrap_built']}, sha256
{versions['iowrap_sha']}; {versions['strace']}); {runs_note};
{elapsed:.0f} s in all.  Data, outputs and traces on {info['fs']}
(`{bench.workdir.parent}`).

Cells are the median wall time over the runs, and in brackets its ratio
to the native median (unpinned native, also for the 1-CPU columns).
""")
    if bench.failures:
        parts.append(f"""## ⚠ Failed runs

{len(bench.failures)} run(s) exited differently from the native run, wrote
different output, or left an incomplete trace.  They are left out of the
medians; a cell with ⚠N had N of them.

""" + failure_list(bench) + "\n")
    parts.append("## Wall time\n\n" + wall_table(results, wl) + "\n")
    parts.append("## Recommendation\n\n" + rec_text + "\n")
    parts.append("## iowrap against strace\n\n"
                 "Ratios of iowrap's median to strace's for the same "
                 "syscall set (below 1: iowrap is faster).  strace's stops "
                 "are twice the syscalls `strace -c` counted in one extra, "
                 "untimed run (an entry and an exit stop each).\n\n" +
                 strace_table(results, wl) + "\n")
    stop_text = ""
    stop_text2 = bimodal_note(results, wl)
    if sc and sc["unpinned"] is not None:
        stop_text = (
            f"In the purest case, dd of /dev/zero at `full` "
            f"({sc['stops']:,} stops, almost all of the traced run), a stop "
            f"costs {fmt_us(sc['unpinned'])} of wall time with tracer and "
            f"task free to run on different CPUs and "
            f"{fmt_us(sc['pinned'])} with both pinned to one CPU"
            + (f"; strace {fmt_us(sc['strace'])} and "
               f"{fmt_us(sc['strace_pinned'])}" if sc["strace"] else "") +
            ".  "
            f"The BRIEF measured ~158 µs and ~11 µs for a bare "
            f"`PTRACE_SYSCALL` loop on these VMs: a stop is a round trip "
            f"tracee → tracer → tracee, and when the two are on different "
            f"CPUs each leg is a cross-CPU wake-up (an IPI, which on a VM "
            f"goes through the hypervisor).\n\n")
    if stop_text2:
        stop_text += stop_text2 + "\n\n"
    parts.append("## Stops and cost per stop\n\n" + stop_text +
                 "Stops are `tracing.syscall_stops` of each run's "
                 "summary.json (seccomp and syscall-exit stops; process "
                 "events such as fork, exec and exit are not counted in "
                 "it), median over the runs; processes are "
                 "`totals.processes`.  Per stop: (median traced − median "
                 "of the mode without those stops) ÷ stops: iowrap files "
                 "and full against iowrap summary (which has the same "
                 "per-process and per-task costs), iowrap full on 1 CPU "
                 "against native on 1 CPU, strace against native; shown "
                 "from 1,000 stops on and where the stops add at least "
                 f"{NOISE_FLOOR * 100:.0f}% to the run (below that the "
                 "difference is noise).  Per process: "
                 "(median summary − median native) ÷ processes, from 100 "
                 "processes on.\n\n" + stop_table(results, wl) + "\n")
    parts.append("## CPU time\n\n"
                 "User + system time of the whole run, tracer included "
                 "(`wait4()` rusage of the command started: iowrap or "
                 "strace and the task tree they reaped), median over the "
                 "runs.\n\n" + cpu_table(results, wl) + "\n")
    parts.append("## Runs\n\n"
                 "Runs per mode and the range of their wall times; time "
                 "spent on each workload, reference and `strace -c` runs "
                 "included.\n\n" + runs_table(results, wl) + "\n")
    data = str(bench.workdir / "data")
    cmdlines = "\n".join(
        "  `" + shlex.join(w.argv).replace(data, "$DATA") + "`" +
        (";" if i < len(wl) - 1 else ".") for i, w in enumerate(wl))
    fset = bench.sets["files"]
    fullx = [s for s in bench.sets["full"] if s not in fset]
    parts.append(f"""## Method

- **Workloads.**  Real programs on data generated under a temporary
  directory from a fixed seed: `big.txt`, {SCALES[args.scale][1]} MiB of
  pseudo-words (dd and gzip), `sort.txt`, lines with a random hex key
  ({SCALES[args.scale][2]} MB), and `tree/`, {SCALES[args.scale][3]} files
  of 0–8 KiB in directories of 100 (tar), with a fixed mtime.  Outputs go
  to a fresh empty directory per run (stdout to a file there, stdin
  `/dev/null`, `LC_ALL=C`).  The command lines (`$DATA` is the data
  directory):
{cmdlines}
- **Modes.**  `iowrap --strict -l LEVEL -o DIR -- CMD` (a copy of
  `bin/iowrap` taken at the start, so that a rebuild during the run
  cannot mix versions); `strace -f -qq -o /dev/null
  {'--seccomp-bpf ' if bench.seccomp_bpf else ''}-e trace=SET CMD`, SET
  being the syscall names of iowrap's filter in `ptrace/filter.c`:
  files = {', '.join(fset)}; full = files + {', '.join(fullx)}.  strace
  cannot filter on arguments, so it also stops at anonymous mmaps, which
  iowrap's filter lets through; and it stops at the exit of close, which
  iowrap does not.  The 1-CPU modes prefix the command with `taskset -c
  {bench.cpu0}`, which pins tracer and task (all its processes and
  threads) to one CPU.
- **Order and checks.**  Per workload, one untimed native run first
  (warms the page cache; its exit status, stdout, stderr and output files
  are the reference), then round after round of all modes, the order
  rotated by one each round so that no mode always follows the same one.
  Every run's exit status, stdout (sha256), stderr (dd's own timing
  removed) and output files must equal the reference, and every iowrap
  run's summary.json must say `mode: ptrace`, the level asked for,
  `complete: true` and no problems; a run that fails any of this is
  reported above and left out of the medians.
- **Timing.**  Wall time from just before `fork` to `wait4()` returning
  in this script (about a millisecond of Python process start-up is in
  every mode alike), CPU time from that `wait4()`.  Medians, not means:
  this is a shared VM.  Ratios of medians.
- **What is not measured.**  The cost of writing io.csv to a slow or
  remote filesystem (the trace directory is on the same local disk
  here), memory use of the tracer, and long-running tasks whose
  processes outlive one run.
""")
    return "\n".join(reflow(p) for p in parts), choice


# ---------------------------------------------------------------- main

def check_prerequisites():
    missing = []
    if not os.access(IOWRAP, os.X_OK):
        missing.append(f"{IOWRAP.relative_to(ROOT)} (build it with "
                       "`make bin/iowrap`)")
    if not shutil.which("strace"):
        missing.append("strace (`apt-get install strace`)")
    for tool in ("taskset", "dd", "gzip", "tar", "sort"):
        if not shutil.which(tool):
            missing.append(tool)
    if not os.access("/bin/sh", os.X_OK) or not os.access("/bin/true",
                                                          os.X_OK):
        missing.append("/bin/sh or /bin/true")
    if not python3():
        missing.append("python3")
    if missing:
        die("missing: " + "; ".join(missing) + ".")


def probe_strace():
    """Whether strace has --seccomp-bpf and uses it here (it falls back to
    tracing every syscall, with a warning, when the kernel refuses)."""
    helptext = subprocess.run(["strace", "-h"], capture_output=True,
                              text=True).stdout
    if "--seccomp-bpf" not in helptext:
        return False, "this strace has no --seccomp-bpf"
    res = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null",
                          "--seccomp-bpf", "-e", "trace=openat", "/bin/true"],
                         capture_output=True, text=True)
    if res.returncode != 0 or res.stderr.strip():
        return False, f"strace --seccomp-bpf does not work here: " \
                      f"{res.stderr.strip()[:200]}"
    return True, None


def probe_iowrap(iowrap, workdir):
    trace = workdir / "probe"
    res = subprocess.run([str(iowrap), "--strict", "-l", "files", "-o",
                          str(trace), "--", "/bin/true"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        die(f"`bin/iowrap --strict -l files -- /bin/true` failed with exit "
            f"status {res.returncode}: {res.stderr.strip()[:500]}")
    shutil.rmtree(trace, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5,
                    help="runs per workload and mode (default 5); modes "
                         f"whose run takes less than {SHORT_S:g} s get "
                         f"{SHORT_FACTOR} times as many, modes whose run "
                         f"takes {CHEAP_S:g} s or more may get fewer, down "
                         f"to {MIN_RUNS}, to keep within --budget")
    ap.add_argument("--quick", action="store_true",
                    help="small data, one run per mode (three for "
                         "very short ones): a smoke test "
                         "(prints the tables, writes no doc unless "
                         "--output is given)")
    ap.add_argument("--budget", type=float, default=400,
                    help="seconds the measured runs should take "
                         "(default 400); data generation comes on top")
    ap.add_argument("--only", default="",
                    help="comma-separated workloads to run (of true, "
                         "dd-zero, dd-file, gzip, tar, sort, spawn, "
                         "python)")
    ap.add_argument("--output", type=Path, default=None,
                    help=f"markdown file to write (default "
                         f"{DOC.relative_to(ROOT)})")
    ap.add_argument("--no-doc", action="store_true",
                    help="print the tables only")
    ap.add_argument("--no-strace-counts", action="store_true",
                    help="skip the untimed `strace -c` runs that count "
                         "strace's stops")
    ap.add_argument("--dir", type=Path, default=None,
                    help="where to put the data and the runs (default: "
                         "a new directory under $TMPDIR or /tmp)")
    args = ap.parse_args()
    if args.quick:
        args.runs = 1
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    args.scale = "quick" if args.quick else "full"
    write_doc = not args.no_doc and (args.output is not None or
                                     not args.quick)
    output = args.output or DOC
    check_prerequisites()
    seccomp_bpf, why = probe_strace()
    if not seccomp_bpf:
        log(f"warning: {why}; strace will stop at every syscall")

    t_start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="iowrap-overhead.",
                                    dir=args.dir))
    info = machine_info(workdir)
    try:
        iowrap = workdir / "iowrap"
        shutil.copy2(IOWRAP, iowrap)
        probe_iowrap(iowrap, workdir)
        versions = {"iowrap": tool_version([str(iowrap), "-V"]),
                    "strace": tool_version(["strace", "-V"]),
                    "iowrap_sha": digest(iowrap)[1][:12],
                    "iowrap_built": datetime.datetime.fromtimestamp(
                        IOWRAP.stat().st_mtime, datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M UTC")}
        data = workdir / "data"
        data.mkdir()
        wl = workloads(data, args.scale)
        if args.only:
            keep = args.only.split(",")
            unknown = set(keep) - {w.key for w in wl}
            if unknown:
                ap.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
            wl = [w for w in wl if w.key in keep]
        log(f"overhead benchmark: {info['nproc']} CPUs, Linux "
            f"{info['kernel']}, up to {args.runs} run(s) per mode, "
            f"budget {args.budget:.0f} s; generating data in {data}")
        make_data(data, args.scale)
        log(f"  data ready ({time.monotonic() - t_start:.1f} s)")
        bench = Bench(workdir, iowrap, filter_sets(), seccomp_bpf,
                      min(os.sched_getaffinity(0)))
        results = {}
        t0 = time.monotonic()
        for i, w in enumerate(wl):
            left = max(args.budget - (time.monotonic() - t0), 0)
            share = left / (len(wl) - i)
            results[w.key] = run_workload(bench, w, args.runs, share,
                                          not args.no_strace_counts)
            c = results[w.key]
            log(f"  {w.key:<8} {c['elapsed_s']:6.1f} s  native "
                f"{fmt_time(med(c, 'native'))}, summary "
                f"{fmt_ratio(ratio(med(c, 'summary'), med(c, 'native')))}, "
                f"files "
                f"{fmt_ratio(ratio(med(c, 'files'), med(c, 'native')))}, "
                f"full {fmt_ratio(ratio(med(c, 'full'), med(c, 'native')))}"
                f", strace full "
                f"{fmt_ratio(ratio(med(c, 'strace-full'), med(c, 'native')))}"
                f"  (runs: {min(c['n'].values())}–{max(c['n'].values())})")
    except BenchError as e:
        die(str(e))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    doc, choice = render(results, wl, info, args, elapsed, versions, bench)
    print(doc)
    if write_doc:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(doc)
        log(f"wrote {output} ({elapsed:.0f} s)")
    else:
        log(f"done ({elapsed:.0f} s)")
    if bench.failures:
        log(f"{len(bench.failures)} run(s) FAILED: see the table above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
