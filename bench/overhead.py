#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Overhead benchmark: what iowrap's tracing levels cost in wall time, on
the workloads of issue 3's "Performance" section, against the same
programs run natively, under strace with a seccomp-bpf filter and under a
plain PTRACE_SYSCALL tracer.

Workloads: (a) dd bs=4k of a 256 MiB page-cached file to /dev/null,
(b) gzip -1 of 128 MiB of text, (c) tar cf of a tree of 20,000 small
files, (d) make -j2 of a small C project (a clean out-of-tree build),
(e) 20 x python3 importing a dozen stdlib modules, (f) fio psync 4k random
reads of a page-cached file; plus /bin/true (the fixed cost per task) and
two stress rows: a shell loop of 1000 x /bin/true, and gzip -1 of the
128 MiB piped into wc.  Modes: native, `iowrap -l summary|files|full`
(under NO_NEW_PRIVS, as an unprivileged user runs it: `full` has the
descriptor-scoped filter), `iowrap -l full` with the plain filter (root's:
every descriptor stops), `iowrap -l full --tracer-threads 1` (iowrap's
default is a tracer thread per CPU), `iowrap -l full` run by nobody when
the bench runs as root (the same way of following as root's, without
root's privileges), `iowrap -l full --follow-cpu sched_idle` (the tracer
at SCHED_IDLE beside a tracee left free to move), `iowrap -l full
--no-follow-cpu`, `strace -f --seccomp-bpf` with the syscall sets of
iowrap's files and full filters, `strace -f` without the filter (stops at
every syscall's entry and exit), and pinned to one CPU with `taskset`
(native, iowrap full, strace full).  Every run's output is checked against
the native run's; every iowrap run's summary.json gives
its syscall stops.  Cells are medians over at least 5 runs (--quick: a
smoke test on tiny data, fewer runs).

Usage: bench/overhead.py [--runs N] [--quick] [--budget S] [--only W,...]
                         [--output FILE] [--no-doc] [--dir DIR]
(`make bench` runs it after bench/accuracy.py.)
"""

import argparse
import ctypes
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
FILTER_C = ROOT / "ptrace" / "filterrules.c"
DOC = ROOT / "docs" / "overhead.md"

MIN_RUNS = 5          # runs of every mode (issue 3: median of at least 5)
CHEAP_S = 1.0         # a mode whose first run is shorter always gets --runs
SHORT_S = 0.2         # ... and one shorter than this SHORT_FACTOR times as
SHORT_FACTOR = 3      # many: its median is the noisiest and runs are cheap
NOISE_FLOOR = 0.10    # per-stop costs only where stops add at least 10%
LEAVE_ON = 1.10       # a default level: at most +10% on every workload

# Issue 3's targets.
FULL_CLOSE = 1.05     # `full` within 5% of native on (b) and (d)
FULL_CLOSE_ON = ("gzip", "make")
STORM_LIMIT = 20.0    # (a) within 20x of native
STORM = "dd"
LESS_THAN_STRACE = 5.0   # at least 5x less overhead than strace
SUMMARY_CLOSE = 1.01  # `summary` within 1%

# iowrap's filter (ptrace/filterrules.c), used when that file cannot be parsed.
FILES_SET = """open openat openat2 creat close close_range dup dup2 dup3
fcntl fcntl64 execve execveat unlink unlinkat rmdir rename renameat
renameat2 link linkat symlink symlinkat mkdir mkdirat truncate truncate64
ftruncate ftruncate64 mmap mmap2 chdir fchdir stat stat64 lstat lstat64
fstat fstat64 newfstatat fstatat64 statx access faccessat faccessat2
io_uring_setup""".split()
FULL_EXTRA = """read write pread64 pwrite64 readv writev preadv pwritev
preadv2 pwritev2 sendfile sendfile64 copy_file_range splice fsync fdatasync
sync_file_range fallocate lseek _llseek io_uring_enter""".split()

# iowrap stops at these only for some arguments (ioctl: FIOCLEX and
# FIONCLEX); strace cannot select by argument and would stop at every call,
# so its set leaves them out.
ONLY_SOME_CALLS = ("ioctl",)

PY_MODULES = ("json, csv, re, sqlite3, decimal, datetime, argparse, logging, "
              "subprocess, tempfile, xml.etree.ElementTree, email.message")


class BenchError(Exception):
    pass


def die(msg):
    print(f"bench/overhead.py: {msg}", file=sys.stderr)
    sys.exit(1)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- modes

def keep_privileges():
    """Nothing: the plain mode's child as the others' but for the prctl."""


def set_no_new_privs():
    """prctl(PR_SET_NO_NEW_PRIVS), in the child before its exec."""
    if ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


@dataclass
class Mode:
    key: str
    label: str
    tracer: str = None      # None (native), "iowrap", "strace" or "ptrace"
    level: str = None       # iowrap level, or the strace set's level
    pinned: bool = False
    # Every mode runs under NO_NEW_PRIVS, as an unprivileged user's iowrap
    # runs the task (so --level full gets the descriptor-scoped filter),
    # except plain: root's, the filter that stops on every descriptor.
    plain: bool = False
    threads: int = None     # --tracer-threads; None: iowrap's default
    follow: str = None      # --follow-cpu HOW; None: iowrap's default
    # Run by nobody (when the bench runs as root): an unprivileged user's
    # tracer follows the tracee's CPU another way (docs/tracer.md).
    nobody: bool = False


MODES = [
    Mode("native", "native"),
    Mode("summary", "iowrap summary", "iowrap", "summary"),
    Mode("files", "iowrap files", "iowrap", "files"),
    Mode("full", "iowrap full", "iowrap", "full"),
    Mode("full-plain", "iowrap full, plain filter (root)", "iowrap", "full",
         plain=True),
    Mode("full-1thread", "iowrap full, 1 tracer thread", "iowrap", "full",
         threads=1),
    Mode("full-nobody", "iowrap full, unprivileged (nobody)", "iowrap",
         "full", nobody=True),
    Mode("full-idle", "iowrap full, tracee not pinned (SCHED_IDLE tracer)",
         "iowrap", "full", follow="sched_idle"),
    Mode("full-nofollow", "iowrap full, CPU not followed", "iowrap", "full",
         follow="off"),
    Mode("strace-procs", "strace -e trace=none", "strace", "none"),
    Mode("strace-files", "strace files", "strace", "files"),
    Mode("strace-full", "strace full", "strace", "full"),
    Mode("ptrace", "plain ptrace (strace, no filter)", "ptrace", "full"),
    Mode("native-pinned", "native, 1 CPU", None, None, True),
    Mode("full-pinned", "iowrap full, 1 CPU", "iowrap", "full", True),
    Mode("strace-full-pinned", "strace full, 1 CPU", "strace", "full", True),
]
MODE = {m.key: m for m in MODES}


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# Whether this user may leave SCHED_IDLE again, asked as iowrap asks it:
# where it may not, --follow-cpu sched_idle becomes pin_tracee.
IDLE_REVERSIBLE = subprocess.run(
    [sys.executable, "-c", "import os; p = os.sched_param(0); "
     "os.sched_setscheduler(0, os.SCHED_IDLE, p); "
     "os.sched_setscheduler(0, os.SCHED_OTHER, p)"],
    capture_output=True).returncode == 0


def filter_sets():
    """The syscall names of iowrap's files and full filters, read from
    ptrace/filterrules.c so that strace traces the same set."""
    sets = {"files": [], "full": []}
    try:
        src = FILTER_C.read_text()
        for name, level in re.findall(
                r"RULE(?:_ENTRY)?\(\s*SC_\w+\s*,\s*(\w+)\s*,\s*LEVEL_(\w+)",
                src):
            level = level.lower()
            if name in ONLY_SOME_CALLS:
                continue
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
    letter: str             # issue 3's (a)-(f); "" for the extra rows
    argv: list
    outputs: list = field(default_factory=list)   # files it writes
    stderr_filter: object = None
    stdout_fp: bool = True  # stdout is deterministic: compare it
    check: object = None    # rundir -> {what: value} to compare as well
    expect: dict = field(default_factory=dict)    # ... and their values
    stress: bool = False    # synthetic worst case, not a real task
    fixed: bool = False     # /bin/true: the fixed cost of a traced task

    @property
    def target(self):
        return bool(self.letter)


def dd_stderr(text):
    """dd's last line carries its own timing: keep the byte count."""
    return re.sub(rb"copied, .*", b"copied", text)


@dataclass
class Scale:
    dd_mib: int         # (a) and (f): the cached file
    gz_mib: int         # (b)
    nfiles: int         # (c)
    nsources: int       # (d): C files besides main.c
    nimports: int       # (e)
    fio_ios: int        # (f)
    nspawn: int         # stress row


SCALES = {
    "full": Scale(256, 128, 20000, 30, 20, 20000, 1000),
    "quick": Scale(8, 4, 300, 4, 2, 500, 50),
}


def python3():
    for p in ("/usr/bin/python3", shutil.which("python3")):
        if p and os.access(p, os.X_OK):
            return p
    return None


def c_value(i, x=1000):
    """What f<i>(x) of the generated C project returns."""
    s = i
    for k in range(x):
        s = (s * 31 + k + i) % 1000003
    return s


def prog_output(rundir):
    """(d): what the freshly built program prints (the binary itself is
    not compared: only its behaviour is meant to be reproducible)."""
    try:
        res = subprocess.run([str(rundir / "prog")], capture_output=True,
                             timeout=30)
        return {"./prog prints": res.stdout.decode(errors="replace")
                .strip() if res.returncode == 0
                else f"exit status {res.returncode}"}
    except (OSError, subprocess.SubprocessError) as e:
        return {"./prog prints": f"cannot run: {e}"}


def fio_bytes(rundir):
    """(f): the bytes fio says it read (its JSON report; the timings in it
    differ from run to run and are not compared)."""
    try:
        text = (rundir / "fio.json").read_text(errors="replace")
        rep = json.loads(text[text.index("{"):])
        return {"fio read io_bytes": rep["jobs"][0]["read"]["io_bytes"]}
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        return {"fio read io_bytes": f"no usable fio.json: {e}"}


def workloads(data, scale):
    sc = SCALES[scale]
    py = python3() or "python3"
    proj = data / "proj"
    expected = str(sum(c_value(i) for i in range(sc.nsources)))
    return [
        Workload("true", "/bin/true (fixed cost per task)", "",
                 ["/bin/true"], fixed=True),
        Workload("dd", f"(a) dd bs=4k, {sc.dd_mib} MiB cached file → "
                 "/dev/null", "a",
                 ["dd", f"if={data}/dd.bin", "of=/dev/null", "bs=4k"],
                 stderr_filter=dd_stderr),
        Workload("gzip", f"(b) gzip -1 of {sc.gz_mib} MiB text", "b",
                 ["gzip", "-1", "-c", f"{data}/gz.txt"]),
        Workload("tar", f"(c) tar cf of {sc.nfiles:,} small files", "c",
                 ["tar", "-cf", "out.tar", "-C", str(data), "tree"],
                 outputs=["out.tar"]),
        Workload("make", f"(d) make -j2, C project of {sc.nsources + 1} "
                 "files", "d",
                 ["make", "-s", "-j2", "-f", f"{proj}/Makefile",
                  f"SRC={proj}", "CC=gcc"],
                 check=prog_output, expect={"./prog prints": expected}),
        Workload("python", f"(e) {sc.nimports} × python3 importing 12 "
                 "stdlib modules", "e",
                 ["/bin/sh", "-c", f"i=0; while [ $i -lt {sc.nimports} ]; "
                  f"do {py} -c 'import {PY_MODULES}' || exit 1; "
                  "i=$((i+1)); done"]),
        Workload("fio", f"(f) fio psync 4k random reads × {sc.fio_ios:,}, "
                 "cached file", "f",
                 ["fio", "--name=randread", f"--filename={data}/dd.bin",
                  "--readonly", "--ioengine=psync", "--rw=randread",
                  "--bs=4k", f"--size={sc.dd_mib}m",
                  f"--number_ios={sc.fio_ios}", "--invalidate=0",
                  "--randrepeat=1", "--randseed=20240601",
                  "--disk_util=0", "--output-format=json",
                  "--output=fio.json"],
                 stdout_fp=False, check=fio_bytes,
                 expect={"fio read io_bytes": sc.fio_ios * 4096}),
        Workload("pipe", f"stress: gzip -1 -c of {sc.gz_mib} MiB \\| wc -c "
                 "(a pipe)", "",
                 ["/bin/sh", "-c", f"gzip -1 -c {data}/gz.txt | wc -c"],
                 stress=True),
        Workload("spawn", f"stress: sh loop, {sc.nspawn:,} × /bin/true", "",
                 ["/bin/sh", "-c", "i=0; while [ $i -lt %d ]; do /bin/true;"
                  " i=$((i+1)); done" % sc.nspawn], stress=True),
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


def make_project(proj, nsources):
    """(d): nsources small C files, a header, main.c and a Makefile that
    builds out of tree (`make -f SRC/Makefile SRC=SRC` in an empty
    directory), so that every run is a clean build."""
    proj.mkdir()
    names = [f"f{i:02d}" for i in range(nsources)]
    (proj / "proj.h").write_text(
        "#ifndef PROJ_H\n#define PROJ_H\n" +
        "".join(f"long {n}(long x);\n" for n in names) + "#endif\n")
    for i, n in enumerate(names):
        (proj / f"{n}.c").write_text(
            f'#include "proj.h"\n\nlong {n}(long x)\n{{\n'
            f"\tlong s = {i};\n\n\tfor (long k = 0; k < x; k++)\n"
            f"\t\ts = (s * 31 + k + {i}) % 1000003;\n\treturn s;\n}}\n")
    (proj / "main.c").write_text(
        '#include <stdio.h>\n#include "proj.h"\n\nint main(void)\n{\n'
        "\tlong t = 0;\n\n" +
        "".join(f"\tt += {n}(1000);\n" for n in names) +
        '\tprintf("%ld\\n", t);\n\treturn 0;\n}\n')
    objs = " ".join(f"{n}.o" for n in names + ["main"])
    (proj / "Makefile").write_text(
        "# Generated by bench/overhead.py.  Build out of tree:\n"
        "#   make -f SRC/Makefile SRC=SRC\n"
        "SRC ?= .\nCFLAGS = -O2 -Wall\n"
        f"OBJS = {objs}\n"
        "vpath %.c $(SRC)\nvpath %.h $(SRC)\n\n"
        "prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n"
        "%.o: %.c proj.h\n\t$(CC) $(CFLAGS) -I$(SRC) -c -o $@ $<\n")


def make_data(data, scale):
    sc = SCALES[scale]
    rng = random.Random(20240601)
    syl = ["ka", "to", "ri", "sen", "mo", "la", "vi", "dor", "qu", "ex",
           "an", "bel", "cor", "pho", "ty", "gra", "nu", "ost", "pel", "zi"]
    vocab = ["".join(rng.choices(syl, k=rng.randint(1, 4)))
             for _ in range(6000)]
    text = make_text(rng, vocab, sc.gz_mib << 20)
    text = text[:-1] + b"\n"
    (data / "gz.txt").write_bytes(text)
    # (a) and (f): the same text over and over; dd and fio do not care.
    with open(data / "dd.bin", "wb") as f:
        left = sc.dd_mib << 20
        while left > 0:
            f.write(text[:left])
            left -= len(text[:left])
    tree = data / "tree"
    per_dir = 100
    for i in range(sc.nfiles):
        d = tree / f"d{i // per_dir:03d}"
        if i % per_dir == 0:
            d.mkdir(parents=True)
        start = rng.randrange(0, len(text) - 16384)
        (d / f"f{i:05d}.txt").write_bytes(
            text[start:start + rng.randint(0, 8192)])
    # A fixed mtime, so that the tar is the same whatever the date.
    for p in sorted(tree.rglob("*"), reverse=True) + [tree]:
        os.utime(p, (1700000000, 1700000000))
    make_project(data / "proj", sc.nsources)


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
    fp = {"exit status": status, "stderr": err}
    if w.stdout_fp:
        fp["stdout"] = digest(rundir / "stdout")
    for name in w.outputs:
        fp[name] = digest(rundir / name)
    if w.check:
        fp.update(w.check(rundir))
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
        elif k == "stdout" or isinstance(ref[k], tuple) or ref[k] is None:
            def fmt(d):
                return "missing" if d is None else \
                    f"{d[0]} B sha256 {d[1]}"
            out.append(f"{k}: {fmt(fp[k])} (native: {fmt(ref[k])})")
        else:
            out.append(f"{k}: {fp[k]!r} (native: {ref[k]!r})")
    return out


# The outer make's jobserver and flags must not reach workload (d).
MAKE_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES",
            "GNUMAKEFLAGS", "MAKEFILES")


class Bench:
    def __init__(self, workdir, iowrap, strace_sets, seccomp_bpf, cpu0):
        self.workdir = workdir
        self.iowrap = iowrap
        self.sets = strace_sets
        self.seccomp_bpf = seccomp_bpf
        self.cpu0 = cpu0
        self.env = {k: v for k, v in os.environ.items()
                    if k not in MAKE_ENV}
        self.env["LC_ALL"] = "C"
        self.failures = []

    def strace_argv(self, level, seccomp=True, extra=("-o", "/dev/null")):
        argv = ["strace", "-f", "-qq", *extra]
        if seccomp and self.seccomp_bpf:
            argv.append("--seccomp-bpf")
        names = ["none"] if level == "none" else self.sets[level]
        return argv + ["-e", "trace=" + ",".join(names)]

    def argv(self, mode, w, trace):
        prefix = []
        if mode.pinned:
            prefix = ["taskset", "-c", str(self.cpu0)]
        if mode.nobody and os.geteuid() == 0:
            prefix += NOBODY
        if mode.tracer == "iowrap":
            prefix += [str(self.iowrap), "--strict", "-l", mode.level,
                       "-o", str(trace)]
            if mode.threads:
                prefix += ["--tracer-threads", str(mode.threads)]
            if mode.follow:
                prefix += ["--follow-cpu", mode.follow]
            prefix.append("--")
        elif mode.tracer == "strace":
            prefix += self.strace_argv(mode.level)
        elif mode.tracer == "ptrace":
            prefix += self.strace_argv(mode.level, seccomp=False)
        return prefix + w.argv

    def execute(self, argv, rundir, nnp=True):
        """Runs argv in rundir (empty); returns (wall, cpu, status)."""
        # Either way through a preexec function: subprocess then forks
        # (without one it may vfork, which starts a child sooner).
        preexec = set_no_new_privs if nnp else keep_privileges
        with open(rundir / "stdout", "wb") as out, \
                open(rundir / "stderr", "wb") as err:
            t0 = time.perf_counter()
            child = subprocess.Popen(argv, cwd=rundir, env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=err, preexec_fn=preexec)
            _, status, ru = os.wait4(child.pid, 0)
            wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        return wall, ru.ru_utime + ru.ru_stime, child.returncode

    def fresh_rundir(self):
        rundir = self.workdir / "run"
        shutil.rmtree(rundir, ignore_errors=True)
        rundir.mkdir()
        rundir.chmod(0o777)  # the nobody mode's, as the others'
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
        for k, want in w.expect.items():
            if ref.get(k) != want:
                raise BenchError(f"{w.key}: native run: {k} "
                                 f"{ref.get(k)!r}, expected {want!r}")
        return ref

    def run(self, mode, w, ref, index):
        rundir = self.fresh_rundir()
        trace = self.workdir / "trace"
        shutil.rmtree(trace, ignore_errors=True)
        wall, cpu, status = self.execute(self.argv(mode, w, trace), rundir,
                                         nnp=not mode.plain)
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
                if mode.level == "full" and t["fd_scoped"] == mode.plain:
                    problems.append(f"tracing.fd_scoped {t['fd_scoped']}")
                if mode.follow == "off" and t["cpu_follow"]["phases"]:
                    problems.append(f"tracing.cpu_follow {t['cpu_follow']}")
                if (mode.follow == "sched_idle" and IDLE_REVERSIBLE and
                        t["cpu_follow"]["how"] != "sched_idle"):
                    problems.append(f"tracing.cpu_follow {t['cpu_follow']}")
                if mode.threads and t["tracer_threads"] != mode.threads:
                    problems.append(
                        f"tracing.tracer_threads {t['tracer_threads']}")
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

    def syscall_counts(self, w, ref):
        """Syscalls per name, counted by `strace -f -c` (no filter, every
        syscall) in one untimed run: strace stops twice per syscall it
        traces (entry and exit), so its stops with the files and full sets
        and without a filter follow from these counts."""
        rundir = self.fresh_rundir()
        counts = self.workdir / "strace-c.txt"
        argv = ["strace", "-f", "-qq", "-c", "-o", str(counts)] + w.argv
        _, _, status = self.execute(argv, rundir)
        problems = describe_diff(ref, fingerprint(w, rundir, status))
        calls = {}
        try:
            for line in counts.read_text().splitlines():
                f = line.split()
                if len(f) >= 5 and f[3].isdigit() and \
                        re.fullmatch(r"[a-z_0-9]+", f[-1]):
                    calls[f[-1]] = calls.get(f[-1], 0) + int(f[3])
        except OSError:
            pass
        if "total" not in calls:
            problems.append("no total line in strace -c output")
        shutil.rmtree(rundir, ignore_errors=True)
        if problems:
            self.failures.append({"workload": w.key, "mode": "strace -c",
                                  "run": 1, "argv": argv,
                                  "problems": problems})
            return None
        return calls


def rotate(seq, r):
    r %= len(seq)
    return seq[r:] + seq[:r]


def run_workload(bench, w, runs, share, count_syscalls):
    """All modes, interleaved: in round r the mode order is rotated by r.
    A mode whose first run took less than CHEAP_S gets `runs` runs (less
    than SHORT_S: SHORT_FACTOR times as many); the others `runs` too, or
    more if they fit into `share` seconds -- never fewer than MIN_RUNS
    (but for --quick)."""
    t0 = time.monotonic()
    ref = bench.reference(w)
    cell = {"runs": {m.key: [] for m in MODES}, "syscalls": None}
    cost = {}
    for m in rotate(MODES, 0):
        t = time.monotonic()
        cell["runs"][m.key].append(bench.run(m, w, ref, 0))
        cost[m.key] = time.monotonic() - t
    if count_syscalls:
        cell["syscalls"] = bench.syscall_counts(w, ref)
    cheap = {k for k in cost if cell["runs"][k][0].wall_s < CHEAP_S}
    short = {k for k in cost if cell["runs"][k][0].wall_s < SHORT_S}
    target = {k: runs * (SHORT_FACTOR if k in short else 1) for k in cheap}
    cheap_cost = sum(cost[k] * (target[k] - 1) for k in cheap)
    dear_round = sum(cost[k] for k in cost if k not in cheap)
    left = share - (time.monotonic() - t0) - cheap_cost
    more = int(left // dear_round) if dear_round > 0 else 0
    dear_runs = max(runs, 1 + more) if dear_round > 0 else runs
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


def spread(cell, mode):
    vals = [r.wall_s for r in cell["runs"][mode] if r.ok]
    return (min(vals), max(vals)) if vals else (None, None)


def fmt_time(s):
    if s is None:
        return "—"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 100:
        return f"{s:.3g} s"
    return f"{s:.0f} s"


def fmt_delta(s):
    if s is None:
        return "—"
    return ("+" if s >= 0 else "−") + fmt_time(abs(s))


def fmt_ratio(r):
    if r is None:
        return "—"
    if r == float("inf"):
        return "∞"
    if r < 10:
        return f"{r:.2f}x"
    if r < 100:
        return f"{r:.1f}x"
    return f"{r:.0f}x"


def fmt_pct(r):
    return "—" if r is None else \
        f"{(r - 1) * 100:+.1f}%".replace("-", "−")


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


def within_noise(cell, mode):
    """The mode's median is no slower than the slowest native run: no
    overhead this benchmark can tell from noise."""
    t, hi = med(cell, mode), spread(cell, "native")[1]
    return t is not None and hi is not None and t <= hi


def less_overhead(cell, level, base="native", strace=None):
    """How many times less overhead iowrap at `level` adds than strace
    tracing the same syscalls: (strace − native) ÷ (iowrap − native);
    infinite when iowrap adds none, 0 when only iowrap adds some."""
    n, i = med(cell, base), med(cell, level)
    s = med(cell, strace or f"strace-{level}")
    if n is None or i is None or s is None:
        return None
    if i - n <= 0:
        return float("inf")
    return max(s - n, 0.0) / (i - n)


def wall_table(results, wl):
    header = ["Workload"] + [m.label for m in MODES]
    rows = []
    for w in wl:
        c = results[w.key]
        nat = med(c, "native")
        row = [w.title]
        for m in MODES:
            t = med(c, m.key)
            text = fmt_time(t)
            if m.key != "native" and t is not None:
                text += f" ({fmt_ratio(ratio(t, nat))})"
            row.append(mark(c, m.key, text))
        rows.append(row)
    return table(header, rows)


def strace_table(results, wl):
    header = ["Workload", "files: iowrap / strace", "files: x less",
              "full: iowrap / strace", "full: x less", "plain ptrace",
              "1 CPU full: iowrap / strace", "1 CPU full: x less"]
    rows = []
    for w in wl:
        c = results[w.key]
        n, np_ = med(c, "native"), med(c, "native-pinned")

        def over(mode, base=n):
            t = med(c, mode)
            return fmt_delta(t - base if t is not None and base is not None
                             else None)
        rows.append([
            w.title,
            f"{over('files')} / {over('strace-files')}",
            fmt_ratio(less_overhead(c, "files")),
            f"{over('full')} / {over('strace-full')}",
            fmt_ratio(less_overhead(c, "full")),
            over("ptrace"),
            f"{over('full-pinned', np_)} / {over('strace-full-pinned', np_)}",
            fmt_ratio(less_overhead(c, "full-pinned", "native-pinned",
                                    "strace-full-pinned"))])
    return table(header, rows)


def stops(cell, mode):
    s = med(cell, mode, "stops")
    return int(round(s)) if s is not None else None


def strace_stops(cell, names):
    """Stops of strace tracing `names` (None: all syscalls): two per
    syscall, from the one counting run."""
    calls = cell.get("syscalls")
    if not calls:
        return None
    if names is None:
        return 2 * calls["total"]
    return 2 * sum(calls.get(n, 0) for n in set(names))


def stop_table(results, wl, sets):
    header = ["Workload", "processes", "summary: per process",
              "stops, files", "per stop, files", "stops, full",
              "per stop, full", "per stop, full 1 CPU",
              "strace stops, full (≈)", "per stop, strace full",
              "plain ptrace stops (≈)", "per stop, plain ptrace"]
    rows = []
    for w in wl:
        c = results[w.key]
        procs = med(c, "summary", "processes")
        per_proc = None
        if procs and med(c, "summary") is not None and procs >= 100:
            per_proc = (med(c, "summary") - med(c, "native")) / procs
        sf, su = stops(c, "files"), stops(c, "full")
        st, sp = strace_stops(c, sets["full"]), strace_stops(c, None)
        rows.append([
            w.title,
            f"{procs:.0f}" if procs is not None else "—",
            fmt_us(per_proc),
            f"{sf:,}" if sf is not None else "—",
            fmt_us(per_stop(c, "files", "summary", sf)),
            f"{su:,}" if su is not None else "—",
            fmt_us(per_stop(c, "full", "summary", su)),
            fmt_us(per_stop(c, "full-pinned", "native-pinned", su)),
            f"{st:,}" if st is not None else "—",
            fmt_us(per_stop(c, "strace-full", "native", st)),
            f"{sp:,}" if sp is not None else "—",
            fmt_us(per_stop(c, "ptrace", "native", sp)),
        ])
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


# ---------------------------------------------------------------- targets

NOISE_MARK = " (‡)"


def target_rows(results, wl):
    """Issue 3's targets, each met or not, with the numbers."""
    by = {w.key: w for w in wl}
    targets = [w for w in wl if w.target]
    rows = []

    def short(w):
        return f"({w.letter}) {w.key}"

    def verdict(ok, measured, of):
        if not measured:
            return "not measured"
        text = "**met**" if ok else "**not met**"
        return text if measured == of else \
            f"{text} ({measured} of {of} workloads measured)"

    # `full` within 5% of native on (b) and (d).
    nums, ok = [], True
    for k in FULL_CLOSE_ON:
        c = results.get(k)
        r = ratio(med(c, "full"), med(c, "native")) if c else None
        if r is None:
            continue
        good = r <= FULL_CLOSE
        ok = ok and good
        nums.append(f"{short(by[k])} {fmt_pct(r)}" +
                    (NOISE_MARK if not good and within_noise(c, "full")
                     else ""))
    rows.append([f"`full` within {(FULL_CLOSE - 1) * 100:.0f}% of native "
                 "on (b) and (d)",
                 verdict(ok, len(nums), len(FULL_CLOSE_ON)),
                 "; ".join(nums) or "—"])
    # (a) within 20x.
    c = results.get(STORM)
    r = ratio(med(c, "full"), med(c, "native")) if c else None
    rows.append([f"`full` within {STORM_LIMIT:.0f}x of native on (a)",
                 verdict(r is not None and r <= STORM_LIMIT, int(r is not None), 1),
                 f"{short(by[STORM])} {fmt_ratio(r)} (strace full "
                 f"{fmt_ratio(ratio(med(c, 'strace-full'), med(c, 'native')))}"
                 f", plain ptrace "
                 f"{fmt_ratio(ratio(med(c, 'ptrace'), med(c, 'native')))})"
                 if r is not None else "—"])
    # At least 5x less overhead than strace, per level.
    for level in ("files", "full"):
        nums, ok, n = [], True, 0
        for w in targets:
            c = results[w.key]
            x = less_overhead(c, level)
            if x is None:
                continue
            n += 1
            good = x >= LESS_THAN_STRACE
            ok = ok and good
            nums.append(f"{short(w)} {fmt_ratio(x)}" +
                        (NOISE_MARK if not good and
                         within_noise(c, f"strace-{level}") else ""))
        rows.append([f"`{level}`: at least {LESS_THAN_STRACE:.0f}x less "
                     f"overhead than strace {level}, every workload",
                     verdict(ok, n, 6), "; ".join(nums) or "—"])
    # `summary` within 1%.
    nums, ok, n = [], True, 0
    for w in targets:
        c = results[w.key]
        r = ratio(med(c, "summary"), med(c, "native"))
        if r is None:
            continue
        n += 1
        good = r <= SUMMARY_CLOSE
        ok = ok and good
        nums.append(f"{short(w)} {fmt_pct(r)}" +
                    (NOISE_MARK if not good and within_noise(c, "summary")
                     else ""))
    strace_procs = []
    for w in targets:
        r = ratio(med(results[w.key], "strace-procs"),
                  med(results[w.key], "native"))
        if r is not None:
            strace_procs.append(f"{short(w)} {fmt_pct(r)}")
    rows.append([f"`summary` within {(SUMMARY_CLOSE - 1) * 100:.0f}% of "
                 "native, every workload",
                 verdict(ok, n, 6), "; ".join(filter(None, [
                     "; ".join(nums),
                     "for comparison, `strace -f -e trace=none` (following "
                     "the processes, with stops at fork and exec syscalls): " +
                     "; ".join(strace_procs) if strace_procs else ""])) or "—"])
    return rows


def targets_table(results, wl):
    return table(["Target (issue 3)", "Verdict", "Measured"],
                 target_rows(results, wl), ["---", "---", "---"])


def noise_note(results, wl):
    """How far native runs strayed from their median."""
    nz = {}
    for w in wl:
        c = results[w.key]
        lo, hi = spread(c, "native")
        if w.target and lo is not None and len(c["runs"]["native"]) > 1:
            nz[w.key] = (hi - lo) / med(c, "native")
    text = ""
    if nz:
        k = max(nz, key=nz.get)
        text = (f"Noise: the native runs of a workload spread over "
                f"{statistics.median(nz.values()) * 100:.0f}% of their "
                f"median (median over (a)–(f); up to {nz[k] * 100:.0f}% on "
                f"{k}).  ")
    return text + (f"The verdicts take the medians as they are; a miss "
                   f"marked {NOISE_MARK.strip()} is one where the traced "
                   f"median (for x less: strace's) is no slower than the "
                   f"slowest native run, i.e. within the noise.")


def default_level(results, wl):
    """The highest level within LEAVE_ON of native on every workload
    (a)-(f), or `summary`."""
    worst = {}
    for level in ("summary", "files", "full"):
        rs = [(ratio(med(results[w.key], level),
                     med(results[w.key], "native")), w)
              for w in wl if w.target]
        rs = [p for p in rs if p[0] is not None]
        worst[level] = max(rs, key=lambda p: p[0]) if rs else (None, None)
    choice = "summary"
    for level in ("files", "full"):
        r = worst[level][0]
        if r is not None and r <= LEAVE_ON:
            choice = level

    def cite(level):
        r, w = worst[level]
        return f"{fmt_ratio(r)} on {w.key}" if w else "—"
    return (f"**Default level this run supports: `{choice}`** (the highest "
            f"level within {(LEAVE_ON - 1) * 100:.0f}% of native on every "
            f"workload (a)–(f)).  Worst case per level: `summary` "
            f"{cite('summary')}, `files` {cite('files')}, `full` "
            f"{cite('full')}.  `files` and `full` pay per stop (an open, a "
            f"stat, an exec; at `full` every read and write too), so their "
            f"cost follows the task's syscalls, not its bytes.")


def overall_stop_cost(results, sets):
    """Per-stop cost in the purest case: (a), where nearly all of the
    traced run is stops."""
    c = results.get(STORM)
    if not c:
        return None
    n = stops(c, "full")
    st = strace_stops(c, sets["full"])
    return {
        "stops": n,
        "unpinned": per_stop(c, "full", "summary", n),
        "pinned": per_stop(c, "full-pinned", "native-pinned", n),
        "strace": per_stop(c, "strace-full", "native", st),
        "strace_pinned": per_stop(c, "strace-full-pinned", "native-pinned",
                                  st),
        "ptrace": per_stop(c, "ptrace", "native",
                           strace_stops(c, None)),
    }


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


def stop_text(results, sets):
    sc = overall_stop_cost(results, sets)
    if not sc or sc["unpinned"] is None:
        return ""
    text = (f"In the purest case, (a) at `full` ({sc['stops']:,} stops, "
            f"almost all of the traced run), a stop costs "
            f"{fmt_us(sc['unpinned'])} of wall time with tracer and task "
            f"free to run on any CPU and {fmt_us(sc['pinned'])} with both "
            f"pinned to one CPU")
    if sc["strace"] is not None:
        text += (f"; strace {fmt_us(sc['strace'])} and "
                 f"{fmt_us(sc['strace_pinned'])} (two stops per syscall)")
    if sc["ptrace"] is not None:
        text += f", plain ptrace {fmt_us(sc['ptrace'])}"
    return text + ".\n\n"


def render(results, wl, info, args, elapsed, versions, bench):
    sets = bench.sets
    parts = []
    ns = [n for w in wl for n in results[w.key]["n"].values()]
    runs_note = (f"{min(ns)}–{max(ns)} runs per workload and mode "
                 f"(at least {args.runs}; {args.runs * SHORT_FACTOR} for a "
                 f"mode whose first run took less than "
                 f"{SHORT_S * 1000:.0f} ms)")
    quick = ("\n**`--quick`: tiny data and fewer runs, a smoke test of the "
             "benchmark, not a measurement.**\n" if args.quick else "")
    parts.append(f"""# Overhead: iowrap's levels against native runs and strace

Generated by `bench/overhead.py` (`make bench`); do not edit by hand.
{quick}
The wall time iowrap adds to a task at each `--level`, on the workloads of
issue 3's "Performance" section, against the same programs run natively,
under `strace -f --seccomp-bpf` tracing the same syscalls or none (what
following the processes costs strace), and under a plain
`PTRACE_SYSCALL` tracer (strace without the filter: what the filter buys),
all in one invocation.  Machine: {info['nproc']} CPUs ({info['cpu']}),
Linux {info['kernel']}; run {info['date']} at commit `{info['commit']}`
({versions['iowrap']}, `bin/iowrap` of {versions['iowrap_built']}, sha256
{versions['iowrap_sha']}; {versions['strace']}; {versions['fio']});
{runs_note}; {elapsed:.0f} s in all.  Data, outputs and traces on
{info['fs']} (`{bench.workdir.parent}`).

Cells are median wall times and their ratio to the native median (unpinned
native, also for the 1-CPU columns).
""")
    if bench.failures:
        parts.append(f"""## ⚠ Failed runs

{len(bench.failures)} run(s) exited differently from the native run, wrote
different output, or left an incomplete trace.  They are left out of the
medians; a cell with ⚠N had N of them.

""" + failure_list(bench) + "\n")
    parts.append("## Targets\n\n"
                 "Issue 3's targets, judged on the medians below; "
                 "\"x less overhead\" is (strace − native) ÷ (iowrap − "
                 "native), strace tracing the same syscalls with "
                 "`--seccomp-bpf`.  The /bin/true and stress rows are not "
                 "judged.  " + noise_note(results, wl) + "\n\n" +
                 targets_table(results, wl) + "\n")
    parts.append("## Wall time\n\n" + wall_table(results, wl) + "\n")
    parts.append("## iowrap against strace\n\n"
                 "Overhead is a mode's median minus the native median "
                 "(1 CPU: minus native on 1 CPU); x less is strace's "
                 "overhead divided by iowrap's (∞: iowrap's median is no "
                 "slower than native's).\n\n" +
                 strace_table(results, wl) + "\n")
    parts.append("## Default level\n\n" + default_level(results, wl) + "\n")
    parts.append(
        "## Stops and cost per stop\n\n" + stop_text(results, sets) +
        "iowrap's stops are `tracing.syscall_stops` of each run's "
        "summary.json (seccomp and syscall-exit stops; fork, exec and exit "
        "events are not counted), median over the runs; processes are "
        "`totals.processes`.  strace's stops (≈) are twice the syscalls "
        "that one untimed `strace -f -c` run counted: those in the full "
        "set with the filter, all of them without.  Per stop: (median "
        "traced − median of the mode without those stops) ÷ stops: iowrap "
        "files and full against iowrap summary, iowrap full on 1 CPU "
        "against native on 1 CPU, strace against native; shown from 1,000 "
        f"stops on and where they add at least {NOISE_FLOOR * 100:.0f}% "
        "to the run.  Per process: (median summary − median native) ÷ "
        "processes, from 100 processes on.\n\n" +
        stop_table(results, wl, sets) + "\n")
    parts.append("## Runs\n\n"
                 "Runs per mode and the range of their wall times; time "
                 "spent on each workload, reference and counting runs "
                 "included.\n\n" + runs_table(results, wl) + "\n")
    data = str(bench.workdir / "data")
    cmdlines = "\n".join(
        "  `" + shlex.join(w.argv).replace(data, "$DATA") + "`" +
        (";" if i < len(wl) - 1 else ".") for i, w in enumerate(wl))
    sc = SCALES[args.scale]
    fset = sets["files"]
    fullx = [s for s in sets["full"] if s not in fset]
    parts.append(f"""## Method

- **Workloads.**  Data generated under a temporary directory from a fixed
  seed: `gz.txt`, {sc.gz_mib} MiB of pseudo-words (b); `dd.bin`,
  {sc.dd_mib} MiB of the same text repeated (a, f); `tree/`,
  {sc.nfiles:,} files of 0–8 KiB in directories of 100 with a fixed mtime
  (c); `proj/`, {sc.nsources} C files, `main.c`, a header and a Makefile
  that builds out of tree into the empty run directory, so that every run
  is a clean build (d).  Each run starts in a fresh empty directory
  (stdout to a file there, stdin `/dev/null`, `LC_ALL=C`, no `MAKEFLAGS`).
  The command lines (`$DATA` is the data directory):
{cmdlines}
- **Modes.**  `iowrap --strict -l LEVEL -o DIR -- CMD` (a copy of
  `bin/iowrap` taken at the start); `strace -f -qq -o /dev/null
  {'--seccomp-bpf ' if bench.seccomp_bpf else ''}-e trace=SET CMD`, SET
  being the syscall names of iowrap's filter in `ptrace/filterrules.c`:
  files = {', '.join(fset)}; full = files + {', '.join(fullx)}.  strace
  cannot filter on arguments, so it also stops at anonymous mmaps, which
  iowrap's filter lets through, and its set leaves out ioctl, at which
  iowrap stops for FIOCLEX and FIONCLEX only.  iowrap's modes run under
  `NO_NEW_PRIVS` (set in the child before its exec, for every mode alike),
  as an unprivileged user's iowrap runs a task: `full` then has the
  descriptor-scoped filter (docs/tracer.md), which also stops at recvmsg,
  recvmmsg, pidfd_getfd, memfd_create, open_by_handle_at, clone3, and
  clone with CLONE_FILES, to learn of new descriptors; "plain filter
  (root)" runs without it, as root with CAP_SYS_ADMIN does, every
  descriptor stopping.  iowrap runs a tracer thread per CPU (at most 8;
  new processes are handed to the least busy one, docs/tracer.md); "1
  tracer thread" is `--tracer-threads 1`, as every iowrap before it.
  The tracer moves next to a tracee that stops often (CPU following,
  docs/tracer.md): it pins the tracee and itself to one CPU for the
  phase, and yields that CPU while it polls for the next stop
  (`pin_tracee`); "unprivileged (nobody)" is `iowrap -l full` run by
  nobody (`setpriv`; as the bench's own user when it does not run as
  root), "tracee not pinned" is `--follow-cpu sched_idle` (root's way
  before: the tracer alone pinned, at `SCHED_IDLE`, the task's mask left
  alone), "CPU not followed" is `--no-follow-cpu`.  Plain ptrace: the same strace command
  with the full set and without `--seccomp-bpf`, which stops at the entry
  and exit of every syscall.  strace -e trace=none: the same strace
  command tracing no syscall by name; to follow the tree it still stops
  at the entry and exit of every fork, clone and exec syscall, at the
  fork, clone and exec events, at a child's first stop, at signals and
  at each exit.  It is a reference, not a floor: `summary` stops at the
  events, the first stops and the exits, never at a syscall.  strace's
  filter (6.1 here) takes hold in a forked child only at the child's first
  traced syscall; until then the child stops at the entry and exit of every
  syscall (`perf stat`: 86,688 context switches for a python child's 20,000
  preads under `-e trace=none`, 82 natively; not so once the child opens a
  file under `-e trace=openat`).  Under `-e trace=none` that is for good in
  a child that does not exec, as fio's job process: on (f) that column is
  in effect plain ptrace.  The 1-CPU
  modes prefix the command with
  `taskset -c {bench.cpu0}`, pinning tracer and task to one CPU.
- **Order and checks.**  Per workload, one untimed native run first
  (warms the page cache; its results are the reference), then round after
  round of all modes, the order rotated by one each round.  Every run's
  exit status, stderr (dd's own timing removed), stdout (sha256; not
  fio's), output files (tar's archive), what the built program prints (d)
  and the bytes fio read by its JSON report (f) must equal the
  reference, and every iowrap run's summary.json must say `mode: ptrace`,
  the level asked for, `complete: true` and no problems; a failed run is
  listed above and left out of the medians.
- **Timing.**  Wall time from just before `fork` to `wait4()` returning in
  this script.  Medians, not means: this is a shared VM.  Ratios of
  medians.
- **Not measured.**  Writing io.csv to a slow or remote filesystem (the
  trace directory is on the same local disk here) and the tracer's memory.
""")
    return "\n".join(reflow(p) for p in parts)


# ---------------------------------------------------------------- main

TOOLS = ("taskset", "dd", "gzip", "tar", "make", "gcc", "fio")


def check_prerequisites():
    missing = []
    if not os.access(IOWRAP, os.X_OK):
        missing.append(f"{IOWRAP.relative_to(ROOT)} (build it with "
                       "`make bin/iowrap`)")
    if not shutil.which("strace"):
        missing.append("strace (`apt-get install strace`)")
    for tool in TOOLS:
        if not shutil.which(tool):
            missing.append(f"{tool} (ci/install-packages.sh installs it)")
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


def parse_args():
    keys = "true, dd, gzip, tar, make, python, fio, pipe, spawn"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=None,
                    help=f"runs per workload and mode (default and minimum "
                         f"{MIN_RUNS}); modes whose first run takes less "
                         f"than {SHORT_S:g} s get {SHORT_FACTOR} times as "
                         f"many, and --budget may add more")
    ap.add_argument("--quick", action="store_true",
                    help="tiny data, one run per mode unless --runs (three "
                         "for very short ones): a smoke test (prints the "
                         "doc, writes it only with --output)")
    ap.add_argument("--budget", type=float, default=400,
                    help="seconds the measured runs may take (default "
                         "400): modes get more than --runs runs where they "
                         "fit, never fewer")
    ap.add_argument("--only", default="",
                    help=f"comma-separated workloads to run (of {keys})")
    ap.add_argument("--output", type=Path, default=None,
                    help=f"markdown file to write (default "
                         f"{DOC.relative_to(ROOT)})")
    ap.add_argument("--no-doc", action="store_true",
                    help="print the tables only")
    ap.add_argument("--no-strace-counts", action="store_true",
                    help="skip the untimed `strace -f -c` run per workload "
                         "that counts strace's stops")
    ap.add_argument("--dir", type=Path, default=None,
                    help="where to put the data and the runs (default: "
                         "a new directory under $TMPDIR or /tmp)")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 1 if args.quick else MIN_RUNS
    if args.runs < 1 or (args.runs < MIN_RUNS and not args.quick):
        ap.error(f"--runs must be at least {MIN_RUNS} (issue 3: medians of "
                 f"at least {MIN_RUNS} runs); fewer only with --quick")
    args.scale = "quick" if args.quick else "full"
    return ap, args


def main():
    ap, args = parse_args()
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
    # The nobody mode writes its trace here and reads the data.
    workdir.chmod(0o1777)
    info = machine_info(workdir)
    try:
        iowrap = workdir / "iowrap"
        shutil.copy2(IOWRAP, iowrap)
        probe_iowrap(iowrap, workdir)
        versions = {"iowrap": tool_version([str(iowrap), "-V"]),
                    "strace": tool_version(["strace", "-V"]),
                    "fio": tool_version(["fio", "--version"]),
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
            f"{info['kernel']}, at least {args.runs} run(s) per mode, "
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

            def r(k):
                return fmt_ratio(ratio(med(c, k), med(c, "native")))
            log(f"  {w.key:<8} {c['elapsed_s']:6.1f} s  native "
                f"{fmt_time(med(c, 'native'))}, summary {r('summary')}, "
                f"files {r('files')}, full {r('full')}, strace full "
                f"{r('strace-full')}, plain ptrace {r('ptrace')}  (runs: "
                f"{min(c['n'].values())}–{max(c['n'].values())})")
    except BenchError as e:
        die(str(e))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    doc = render(results, wl, info, args, elapsed, versions, bench)
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
