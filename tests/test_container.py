"""iowrap inside an unprivileged container: a bubblewrap user namespace
(with its own pid, ipc, uts and net namespaces) whose root filesystem
holds nothing but Debian's static busybox, so no libc, no loader and no
tool of the host.  iowrap itself is bind-mounted read-only from the
outside, as a user would drop the static binary into a container.

The container runs once as root (bwrap still creates a user namespace:
--unshare-user is explicit, and the test checks the uid map and that no
capability is left) and once launched by an unprivileged user
(uid 65534 through setpriv), the way a normal user would use it."""
import ast
import os
import re
import shlex
import shutil
import stat
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import IOWRAP, Trace

BUSYBOX = Path("/bin/busybox")
NOBODY = 65534
# What the container's processes see as their ids (--uid/--gid).
INNER_ID = "1000"
HOSTNAME = "iowrap-ct"

SCRIPT = "echo hello | wc -c; ls / | sort > /tmp/x; cat /tmp/x | wc -l"
# The rootfs's top level, which `ls /` lists inside the container.
TOP = ["bin", "dev", "opt", "out", "proc", "tmp"]
LS_BYTES = sum(len(n) + 1 for n in TOP)
APPLETS = ["sh", "cat", "wc", "sort", "echo", "ls", "kill", "id"]

# What busybox ash (Debian's busybox-static 1.35: FEATURE_SH_STANDALONE,
# applets preferred) forks for SCRIPT, in fork order.  `echo` is a
# builtin run in a forked subshell; `ls` and `sort` are NOEXEC applets:
# the forked shell runs them without an execve, so their command line is
# still the shell's; `wc` and `cat` are re-executed through
# /proc/self/exe, so they have their own argv.  Each entry: argv column,
# number of execs, bytes written.  The strace oracle below checks the
# first two against the kernel's view of the same pipeline.
SH_ARGV = shlex.join(["sh", "-c", SCRIPT])
CHILDREN = [
    (SH_ARGV, 0, len("hello\n")),      # echo hello
    ("wc -c", 1, len("6\n")),          # wc -c
    (SH_ARGV, 0, LS_BYTES),            # ls /
    (SH_ARGV, 0, LS_BYTES),            # sort > /tmp/x
    ("cat /tmp/x", 1, LS_BYTES),       # cat /tmp/x
    ("wc -l", 1, len(f"{len(TOP)}\n")),  # wc -l
]


def _run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    # The launching user may not be able to enter the test's cwd.
    kw.setdefault("cwd", "/")
    return subprocess.run(cmd, **kw)


def _as_nobody(cmd):
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
            "--clear-groups"] + cmd


def _require_userns(user):
    """Skips only when the kernel refuses an unprivileged user namespace."""
    probe = ["bwrap", "--unshare-user", "--ro-bind", "/", "/", "true"]
    if user == "nobody":
        probe = _as_nobody(probe)
    p = _run(probe)
    if p.returncode != 0:
        # Only bwrap's own refusal skips; setpriv failing is a failure.
        assert p.stderr.startswith("bwrap: "), p
        pytest.skip(f"no user namespace for {user}: {' '.join(probe)} "
                    f"exited {p.returncode}: {p.stderr.strip()}")


def _elf_segments(path):
    """The program header types of a 64-bit little-endian ELF file."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return [struct.unpack_from("<I", data, phoff + i * phentsize)[0]
            for i in range(phnum)]


def build_rootfs(rootfs):
    """A root holding only /bin/busybox and its applet links, plus empty
    mount points."""
    owner = _run(["dpkg-query", "-S", str(BUSYBOX)])
    assert owner.stdout == f"busybox-static: {BUSYBOX}\n", owner
    PT_INTERP, PT_DYNAMIC = 3, 2
    segs = _elf_segments(BUSYBOX)
    assert PT_INTERP not in segs and PT_DYNAMIC not in segs, segs
    (rootfs / "bin").mkdir(parents=True)
    for d in TOP[1:]:
        (rootfs / d).mkdir()
    (rootfs / "opt" / "iowrap").mkdir()
    shutil.copy2(BUSYBOX, rootfs / "bin" / "busybox")
    os.chmod(rootfs / "bin" / "busybox", 0o755)
    # busybox links itself in, running inside the libc-less root.
    p = _run(["bwrap", "--unshare-user", "--bind", str(rootfs), "/",
              "--proc", "/proc", "--dev", "/dev", "--clearenv",
              "/bin/busybox", "--install", "-s", "/bin"])
    assert p.returncode == 0, p
    for a in APPLETS:
        assert os.readlink(rootfs / "bin" / a) == "/bin/busybox"
    for d in [rootfs] + [rootfs / n for n in TOP]:
        os.chmod(d, 0o755)
    # Nothing but busybox: no libc, no dynamic loader.
    files = []
    for dirpath, dirnames, filenames in os.walk(rootfs):
        for n in dirnames + filenames:
            assert not re.match(r"(libc\.so|ld-.*\.so|ld-linux|ld-musl)",
                                n), n
            p = Path(dirpath) / n
            if stat.S_ISREG(p.lstat().st_mode):
                files.append(str(p.relative_to(rootfs)))
    assert files == ["bin/busybox"]
    assert sorted(os.listdir(rootfs)) == TOP


class Box:
    """One container setup: rootfs, the directory holding iowrap, the
    writable trace directory, and who launches bwrap."""

    def __init__(self, base, user):
        self.user = user
        self.rootfs = base / "rootfs"
        self.out = base / "out"
        build_rootfs(self.rootfs)
        self.out.mkdir()
        if user == "root":
            # The build's own bin/ directory, read-only.
            self.bindir = IOWRAP.parent
        else:
            # The checkout may sit where uid 65534 cannot enter: give it
            # a copy in a directory it can reach.
            self.bindir = base / "iowrap-bin"
            self.bindir.mkdir()
            shutil.copy2(IOWRAP, self.bindir / "iowrap")
            os.chmod(self.bindir, 0o755)
            os.chown(self.out, NOBODY, NOBODY)

    def cmd(self, *argv):
        cmd = ["bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc",
               "--unshare-uts", "--unshare-net", "--uid", INNER_ID,
               "--gid", INNER_ID, "--hostname", HOSTNAME,
               "--die-with-parent",
               "--ro-bind", str(self.rootfs), "/",
               "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
               "--ro-bind", str(self.bindir), "/opt/iowrap",
               "--bind", str(self.out), "/out",
               "--clearenv", "--setenv", "PATH", "/bin", "--chdir", "/",
               *argv]
        return _as_nobody(cmd) if self.user == "nobody" else cmd

    def run(self, *argv, **kw):
        return _run(self.cmd(*argv), **kw)

    def iowrap(self, name, *argv):
        """iowrap -o /out/NAME -- ARGV as the container's command."""
        p = self.run("/opt/iowrap/iowrap", "-o", f"/out/{name}", "--",
                     *argv)
        return Trace(p, self.out / name)


@pytest.fixture(params=["root", "nobody"])
def box(request, tmp_path):
    user = request.param
    _require_userns(user)
    if user == "root":
        yield Box(tmp_path, user)
        return
    # pytest's tmp_path is private to root (0700 parents): uid 65534
    # could not bind anything from it, so its files live in a directory
    # of their own that it can traverse.
    base = Path(tempfile.mkdtemp(prefix="iowrap-container-"))
    try:
        os.chmod(base, 0o755)
        yield Box(base, user)
    finally:
        shutil.rmtree(base)


def strace_oracle(box, tmp_path):
    """Runs SCRIPT in the same container under strace -ff from outside:
    the children of the script's shell in fork order, each as
    (argv, execs), with argv the last exec's or else the inherited one."""
    logs = tmp_path / "oracle"
    logs.mkdir()
    p = _run(["strace", "-ff", "-qq", "-s", "4096", "-e", "signal=none",
              "-e", "trace=execve,clone,clone3,fork,vfork",
              "--pidns-translation", "-o", str(logs / "t")]
             + box.cmd("sh", "-c", SCRIPT))
    assert p.returncode == 0, p
    assert p.stdout == f"6\n{len(TOP)}\n"
    forks, execs = {}, {}
    for f in logs.iterdir():
        pid = int(f.name.split(".")[1])
        for line in f.read_text().splitlines():
            assert "CLONE_THREAD" not in line, line
            m = re.match(r"(?:clone3?|v?fork)\(.* = (\d+)"
                         r"(?: /\* (\d+) in strace's PID NS \*/)?$", line)
            if m:
                forks.setdefault(pid, []).append(int(m.group(2) or
                                                     m.group(1)))
            m = re.match(r'execve\("[^"]*", (\[.*\]), .* = 0$', line)
            if m:
                argv = ast.literal_eval(m.group(1))
                execs.setdefault(pid, []).append(argv)
    shells = [pid for pid, e in execs.items()
              if e[0] == ["sh", "-c", SCRIPT]]
    assert len(shells) == 1, execs
    sh = shells[0]
    assert len(execs[sh]) == 1
    out = []
    for child in forks.get(sh, []):
        assert child not in forks, "the script's children fork nothing"
        e = execs.get(child, [])
        out.append((shlex.join(e[-1]) if e else SH_ARGV, len(e)))
    return out


def test_busybox_pipeline_in_container(box, tmp_path):
    # The container is a real user namespace without capabilities,
    # even when bwrap is launched by root.
    p = box.run("sh", "-c", "cat /proc/self/uid_map; id -u; id -g; "
                "grep CapEff /proc/self/status")
    assert p.returncode == 0, p
    assert p.stdout.split() == [INNER_ID, "0", "1", INNER_ID, INNER_ID,
                                "CapEff:", "0000000000000000"]
    # iowrap's directory is read-only in there.
    p = box.run("sh", "-c", "touch /opt/iowrap/x")
    assert p.returncode == 1
    assert p.stderr == "touch: /opt/iowrap/x: Read-only file system\n"

    t = box.iowrap("t", "sh", "-c", SCRIPT)
    assert t.returncode == 0, t.stderr
    assert t.stdout == f"6\n{len(TOP)}\n"
    assert t.stderr == ""

    s = t.summary
    assert s["exit"]["code"] == 0
    assert s["exit"]["signal"] is None
    assert s["exit"]["iowrap_status"] == 0
    assert s["tracing"]["mode"] == "ptrace"
    assert s["tracing"]["complete"] is True
    assert s["tracing"]["processes_unmeasured"] == 0
    assert s["tracing"]["problems"] == []
    assert s["command"] == ["sh", "-c", SCRIPT]
    assert s["cwd"] == "/"
    assert s["host"]["hostname"] == HOSTNAME
    assert s["totals"]["processes"] == 1 + len(CHILDREN)
    assert s["totals"]["threads"] == 1 + len(CHILDREN)
    assert s["totals"]["execs"] == 1 + sum(c[1] for c in CHILDREN)

    rows = t.procs
    assert len(rows) == 1 + len(CHILDREN)
    for r in rows:
        assert r["exe"] == "/bin/busybox"
        assert r["cwd"] == "/"
        assert r["end"] == "exited"
        assert r["exit_code"] == "0"
        assert r["exit_signal"] == ""
        assert r["core_dumped"] == "0"
        assert r["threads"] == "1"
        for col in ("cpu_s", "utime_s", "stime_s", "vmhwm_kib", "rchar",
                    "wchar", "minflt"):
            assert r[col] != "", (col, r)
        assert float(r["cpu_s"]) > 0

    # One tree: the script's shell, whose parent is iowrap (pid 2, after
    # bwrap's pid 1), and the shell's direct children.
    pids = {int(r["pid"]) for r in rows}
    roots = [r for r in rows if int(r["ppid"]) not in pids]
    assert len(roots) == 1
    root = roots[0]
    assert root["argv"] == SH_ARGV
    assert root["execs"] == "1"
    assert root["ppid"] == "2"
    kids = sorted((r for r in rows if r is not root),
                  key=lambda r: int(r["pid"]))
    assert [r["ppid"] for r in kids] == [root["pid"]] * len(CHILDREN)
    got = [(r["argv"], int(r["execs"]), int(r["wchar"])) for r in kids]
    assert got == CHILDREN
    # The kernel adds reaped children's I/O to the shell's /proc/PID/io;
    # procs.csv holds each process's own: the shell writes nothing.
    assert int(root["wchar"]) == 0

    # Oracle: strace, from outside, on the same pipeline in the same
    # container, with no iowrap.
    if box.user == "root":
        assert strace_oracle(box, tmp_path) == [c[:2] for c in CHILDREN]


def test_exit_status_and_sigkill_in_container(box):
    # Seen from a shell inside the container.
    p = box.run("sh", "-c",
                "/opt/iowrap/iowrap -o /out/e3 -- sh -c 'exit 3'; "
                "echo status=$?; "
                "/opt/iowrap/iowrap -o /out/k9 -- sh -c 'kill -9 $$'; "
                "echo status=$?")
    assert p.returncode == 0, p
    assert p.stdout == "status=3\nstatus=137\n"
    assert p.stderr == ""
    # And as the container's own command: bwrap passes the status on.
    assert box.iowrap("e3b", "sh", "-c", "exit 3").returncode == 3
    assert box.iowrap("k9b", "sh", "-c", "kill -9 $$").returncode == 137

    for name, code, sig in [("e3", 3, None), ("e3b", 3, None),
                            ("k9", None, 9), ("k9b", None, 9)]:
        t = Trace(p, box.out / name)
        s = t.summary
        assert s["exit"]["code"] == code
        assert s["exit"]["signal"] == sig
        assert s["exit"]["iowrap_status"] == (code if sig is None
                                              else 128 + sig)
        assert s["tracing"]["mode"] == "ptrace"
        assert s["tracing"]["complete"] is True
        assert s["totals"]["processes"] == 1
        rows = t.procs
        assert len(rows) == 1
        r = rows[0]
        assert r["exe"] == "/bin/busybox"
        assert r["end"] == "exited"
        assert r["exit_code"] == ("" if code is None else str(code))
        assert r["exit_signal"] == ("" if sig is None else str(sig))
        assert r["core_dumped"] == "0"
        assert r["cpu_s"] != ""
        if sig is None:
            assert r["argv"] == "sh -c 'exit 3'"
            assert "signal_name" not in s["exit"]
        else:
            assert r["argv"] == "sh -c 'kill -9 $$'"
            assert s["exit"]["signal_name"] == "SIGKILL"
