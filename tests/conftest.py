"""Shared fixtures for the end-to-end tests: they drive the real static
binary on real programs and read its trace back."""
import csv
import ctypes
import errno
import functools
import io
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# IOWRAP_TEST_BINARY: the same tests on another build (a sanitizer's).
IOWRAP = Path(os.environ.get("IOWRAP_TEST_BINARY",
                            ROOT / "bin" / "iowrap")).resolve()
HELPERS = ROOT / "build" / "helpers"


class Trace:
    """A finished iowrap run: its exit status, output and trace files."""

    def __init__(self, proc, outdir):
        self.proc = proc
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.dir = Path(outdir)

    @property
    def summary(self):
        return json.loads((self.dir / "summary.json").read_text())

    @property
    def procs(self):
        """procs.csv rows as dicts; the raw bytes are decoded with
        surrogateescape so that any path round-trips."""
        data = (self.dir / "procs.csv").read_bytes().decode(
            "utf-8", "surrogateescape")
        return list(csv.DictReader(io.StringIO(data, newline="")))

    def procs_by_exe(self, exe):
        return [r for r in self.procs if r["exe"] == exe]


def set_no_new_privs():
    """NO_NEW_PRIVS, as an unprivileged user's iowrap sets it: the task
    then gets the descriptor-scoped filter (ptrace/fdfilter.h)."""
    if ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


# Set by the filter_mode fixture of the tests that run in every mode.
FILTER_MODE = {"nnp": False, "one_thread": False}


def run_iowrap(args, outdir=None, check=None, **kw):
    """Runs bin/iowrap ARGS; with outdir, passes -o outdir first."""
    if FILTER_MODE["nnp"]:
        kw.setdefault("preexec_fn", set_no_new_privs)
    cmd = [str(IOWRAP)]
    if FILTER_MODE["one_thread"] and args and str(args[0]).startswith("-"):
        cmd += ["--tracer-threads", "1"]
    if outdir is not None:
        cmd += ["-o", str(outdir)]
    cmd += list(args)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    proc = subprocess.run(cmd, **kw)
    if check is not None:
        assert proc.returncode == check, (proc.returncode, proc.stderr)
    return Trace(proc, outdir or ".")


@pytest.fixture(params=["default", "nnp", "one-thread"])
def filter_mode(request):
    """Runs a test as iowrap's user is (as root: the plain filter), under
    NO_NEW_PRIVS (the descriptor-scoped one), both with the default
    tracer threads (one per CPU: new processes change thread), and with
    the plain filter and one tracer thread."""
    FILTER_MODE["nnp"] = request.param == "nnp"
    FILTER_MODE["one_thread"] = request.param == "one-thread"
    yield request.param
    FILTER_MODE["nnp"] = False
    FILTER_MODE["one_thread"] = False


@pytest.fixture
def iowrap(tmp_path):
    """iowrap(args..., **kw) -> Trace, writing to a fresh directory."""
    counter = [0]

    def run(*args, **kw):
        counter[0] += 1
        outdir = kw.pop("outdir", tmp_path / f"trace{counter[0]}")
        return run_iowrap(args, outdir=outdir, **kw)

    return run


@functools.cache
def kernel_runs_i386():
    """Whether this kernel execs i386 binaries: a kernel built without
    IA32_EMULATION, or with it switched off (ia32_emulation=0), refuses
    them with ENOEXEC.  Asked of the kernel itself, with a harmless one."""
    try:
        subprocess.run([str(HELPERS / "nosuchsyscall32")], capture_output=True,
                       check=False)
    except OSError as e:
        if e.errno == errno.ENOEXEC:
            return False
        raise
    return True


def helper(name):
    """build/helpers/NAME; a NAME ending in 32 is an i386 program, and a
    test of one is skipped on a kernel that cannot run it."""
    path = HELPERS / name
    assert path.exists(), f"{path} missing: run make"
    if name.endswith("32") and not kernel_runs_i386():
        pytest.skip("this kernel does not run i386 programs "
                    "(exec: Exec format error; no IA32_EMULATION)")
    return str(path)


def chrome_events(out, *traces):
    """`iowrap export --format chrome -o OUT TRACES...`: its events."""
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome", "-o",
                        str(out)] + [str(t) for t in traces],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(Path(out).read_text())["traceEvents"]


def die_with(parent, prctl):
    """In a child before its exec: SIGKILL when pytest ends, however it
    ends (a timeout's kill included), so that no busy loop outlives the
    tests; if pytest has already gone, at once.  prctl is looked up in
    the parent: no dlopen between fork and exec."""
    if prctl(1, 9, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG, SIGKILL
        os._exit(1)
    if os.getppid() != parent:
        os._exit(1)


class BusyCPUs:
    """A busy loop on every CPU for the duration: the task's processes
    wait for a CPU, as on a loaded node, and the order in which the kernel
    reports their stops varies most."""

    def __enter__(self):
        parent = os.getpid()
        prctl = ctypes.CDLL(None).prctl
        loop = ["/bin/sh", "-c", "while :; do :; done"]
        self.loops = [subprocess.Popen(
                          loop, preexec_fn=lambda: die_with(parent, prctl))
                      for _ in range(max(2, os.cpu_count() or 1))]
        time.sleep(0.2)  # until they all spin
        return self

    def __exit__(self, *exc):
        for loop in self.loops:
            loop.kill()
            loop.wait()
