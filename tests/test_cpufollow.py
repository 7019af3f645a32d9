"""Following the tracee's CPU (ptrace/cpufollow.c): the trace stays exact
whether the tracer follows, does not, or starves behind other work on the
tracee's CPU, and summary.json says what happened."""
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import IOWRAP, helper

READS = 20000
BLOCK = 1024

MULTI_CPU = len(os.sched_getaffinity(0)) >= 2
NEVER = {"how": "off", "phases": 0, "starved": 0, "moves": 0}


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(READS * BLOCK))
    return path


def reads_of(trace, path):
    """(number of R rows, bytes) on path, from io.csv."""
    text = (trace.dir / "io.csv").read_bytes().decode("utf-8",
                                                     "surrogateescape")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    handles = {r["handle"] for r in rows
               if r["type"] == "O" and r["path"] == str(path)}
    reads = [r for r in rows if r["type"] == "R" and r["handle"] in handles]
    return len(reads), sum(int(r["result"]) for r in reads)


def follow(trace):
    t = trace.summary["tracing"]
    assert t["complete"] is True
    assert t["problems"] == []
    return t["cpu_follow"]


def following(trace, data):
    """cpu_follow of a run that read all of data and followed at least
    once."""
    assert reads_of(trace, data) == (READS, READS * BLOCK)
    phases = follow(trace)
    assert phases["phases"] >= 1
    return phases


def dd(path, count):
    return ["dd", f"if={path}", "of=/dev/null", f"bs={BLOCK}",
            f"count={count}", "status=none"]


# What each --follow-cpu comes to: the tracer at SCHED_IDLE needs a way
# back from it (CAP_SYS_NICE, or an RLIMIT_NICE that allows it), which an
# unprivileged user and root in a container by default lack.  Asked of
# the kernel as iowrap asks it, by a process that goes there and back.
IDLE_PROBE = ("import os; p = os.sched_param(0); "
              "os.sched_setscheduler(0, os.SCHED_IDLE, p); "
              "os.sched_setscheduler(0, os.SCHED_OTHER, p)")
IDLE_REVERSIBLE = subprocess.run(["python3", "-c", IDLE_PROBE],
                                 capture_output=True).returncode == 0
WAYS = {"auto": "pin_tracee",
        "sched_idle": "sched_idle" if IDLE_REVERSIBLE else "pin_tracee",
        "pin_tracee": "pin_tracee"}


@pytest.mark.parametrize("asked", sorted(WAYS))
def test_follows_a_syscall_heavy_tracee(iowrap, data, asked):
    trace = iowrap("-l", "full", "--follow-cpu", asked, "--",
                   *dd(data, READS), check=0)
    # dd reads once more to see the end of the file only past count.
    assert reads_of(trace, data) == (READS, READS * BLOCK)
    phases = follow(trace)
    if MULTI_CPU:
        assert phases["how"] == WAYS[asked]
        assert phases["phases"] >= 1
    else:
        assert phases == NEVER


@pytest.mark.parametrize("option", [["--no-follow-cpu"],
                                    ["--follow-cpu", "off"]])
def test_follow_cpu_off_never_follows(iowrap, data, option):
    trace = iowrap("-l", "full", *option, "--", *dd(data, READS), check=0)
    assert reads_of(trace, data) == (READS, READS * BLOCK)
    assert follow(trace) == NEVER


def test_follow_cpu_takes_only_its_names(iowrap):
    p = subprocess.run([str(IOWRAP), "--follow-cpu", "idle", "--", "true"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 125
    assert p.stderr == ("iowrap: --follow-cpu takes auto, pin_tracee, "
                        "sched_idle or off, not 'idle'; see iowrap --help\n")


def test_summary_level_never_follows(iowrap, data):
    trace = iowrap("--", *dd(data, READS), check=0)
    assert follow(trace) == NEVER


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
def test_exec_starts_a_phase(iowrap):
    """A new program's loader stops next: the exec stop starts a phase at
    once.  A static program that exits at once (fdops without arguments,
    status 2) stops 4 times in all, short of a run of 8."""
    trace = iowrap("-l", "files", "--", helper("fdops-musl"), check=2)
    assert trace.summary["tracing"]["syscall_stops"] == 2
    # Under load the watchdog may end it, or the tracee move: one phase.
    assert follow(trace)["phases"] == 1


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
def test_tracer_follows_a_tracee_that_moves(iowrap, data):
    """The tracee moves itself to the other CPU every 20 reads (what the
    load balancer does to a tracee that computes between stops).  The
    tracer, left behind on the old CPU, runs while no stop is pending,
    reads the tracee's CPU again and follows it at once.  The periodic
    re-read alone (every 256 stops or 10 ms) catches about one move in ten
    here; following at once catches more than one per move."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    per_move = 20
    moves = READS // per_move
    script = (f"import os\n"
              f"fd = os.open({str(data)!r}, os.O_RDONLY)\n"
              f"for i in range({moves}):\n"
              f"    os.sched_setaffinity(0, {{{cpus!r}[i % 2]}})\n"
              f"    for j in range({per_move}):\n"
              f"        os.read(fd, {BLOCK})\n")
    trace = iowrap("-l", "full", "--follow-cpu", "sched_idle", "--",
                   "python3", "-c", script, check=0)
    phases = following(trace, data)
    if phases["how"] != "sched_idle":
        pytest.skip("the tracer may not leave SCHED_IDLE here")
    assert phases["moves"] >= 1, phases
    # Other load on the machine can starve the SCHED_IDLE tracer: the
    # watchdog ends its phases and holds off the next ones (20 ms,
    # doubling), and moves in between are not followed (seen: 296 and 7
    # moves with 6 and 8 starved phases while the test suite ran
    # alongside).  Unstarved, every move is followed.
    if phases["starved"] == 0:
        assert phases["moves"] >= moves // 2, phases


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.skipif(not IDLE_REVERSIBLE, reason="needs CAP_SYS_NICE")
def test_starved_tracer_gives_up_its_cpu(iowrap, data):
    """A busy loop shares the CPU dd runs on (the task pins both there):
    a tracer following dd at SCHED_IDLE would wait behind the loop while
    dd waits for it.  The watchdog must end such phases (without it this
    run takes about 30 times as long)."""
    cpu = min(os.sched_getaffinity(0))
    # The loop runs before dd starts; dd's 20000 stops give the tracer
    # many chances to follow it there (and starve).
    script = (f"taskset -c {cpu} sh -c 'while :; do :; done' & loop=$!; "
              f"sleep 0.2; taskset -c {cpu} dd if={data} of=/dev/null "
              f"bs={BLOCK} count={READS} status=none; st=$?; kill $loop; "
              f"exit $st")
    trace = iowrap("-l", "full", "--follow-cpu", "sched_idle", "--", "sh",
                   "-c", script, check=0)
    phases = following(trace, data)
    assert phases["how"] == "sched_idle"
    assert phases["starved"] >= 1


# Storms of reads, each followed by a look at the task's own CPU mask (in
# /proc, which shows the pin) and at the tracer threads' policies.
LOOK_TASK = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
tracer = os.getppid()
for attempt in range(10):
    for i in range(2000):
        os.pread(fd, 1024, 0)
    for line in open("/proc/self/status"):
        if line.startswith("Cpus_allowed_list:"):
            mask = line.split()[1]
    policies = set()
    for tid in os.listdir(f"/proc/{tracer}/task"):
        with open(f"/proc/{tracer}/task/{tid}/stat") as stat:
            policies.add(int(stat.read().rsplit(")", 1)[1].split()[38]))
    print(mask, 5 in policies, flush=True)
"""


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.parametrize("asked", ["sched_idle", "pin_tracee"])
def test_a_phase_pins_and_idles_as_asked(iowrap, data, asked):
    """During a phase the tracee is pinned (pin_tracee: its mask in /proc
    is one CPU) or never (sched_idle), and the tracer thread is at
    SCHED_IDLE (sched_idle) or never (pin_tracee).  Ten storms: under load
    the watchdog may end a phase or hold off the next ones, but not all
    ten."""
    if WAYS[asked] != asked:
        pytest.skip("the tracer may not leave SCHED_IDLE here")
    trace = iowrap("-l", "full", "--follow-cpu", asked, "--", "python3",
                   "-c", LOOK_TASK, str(data), check=0)
    looks = [line.split() for line in trace.stdout.splitlines()]
    assert len(looks) == 10
    full = allowed_list()
    masks = {mask for mask, _ in looks}
    idle = {flag == "True" for _, flag in looks}
    if asked == "sched_idle":
        assert masks == {full}
    else:
        assert any(mask != full and mask.isdigit() for mask in masks), looks
        assert masks <= {full} | {str(cpu) for cpu in
                                  os.sched_getaffinity(0)}, looks
    assert (True in idle) == (asked != "pin_tracee"), looks
    assert follow(trace)["how"] == asked


def sched_policies(stat_lines):
    """Field 41 (policy) of each /proc/PID/task/TID/stat line."""
    return [int(line.rsplit(")", 1)[1].split()[38]) for line in stat_lines]


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def run_as(user, base, args, **kw):
    """iowrap run by nobody (uid 65534), or by this test's root, its trace
    in base/t."""
    prefix = NOBODY if user == "nobody" else []
    p = subprocess.run([*prefix, str(IOWRAP), "-o", str(base / "t"), *args],
                       capture_output=True, text=True, timeout=120, **kw)
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads((base / "t" / "summary.json").read_text())


def pinned_phases(summary):
    """Phases of a complete trace whose tracer followed by pinning."""
    t = summary["tracing"]
    assert t["complete"] is True and t["problems"] == []
    assert t["cpu_follow"]["how"] == "pin_tracee"
    return t["cpu_follow"]["phases"]


@pytest.fixture
def nobody_dir():
    """A directory nobody may write, with data.bin for it to read."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become nobody")
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o777)
        data = base / "data.bin"
        data.write_bytes(os.urandom(READS * BLOCK))
        data.chmod(0o644)
        yield base
    finally:
        shutil.rmtree(base)


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
def test_unprivileged_tracer_pins_the_tracee(nobody_dir):
    """An unprivileged user may not leave SCHED_IDLE (RLIMIT_NICE is 0),
    so its tracer threads never go there (one left there starved behind
    any busy process: dd beside two busy loops waited for them to end, 60
    s against root's 0.9 s).  It follows by pinning the tracee and itself
    to one CPU for the phase: after dd's storm of stops every tracer
    thread is at SCHED_OTHER, as the task reads in /proc, and dd's reads
    were followed."""
    data = nobody_dir / "data.bin"
    script = (f"dd if={data} of=/dev/null bs={BLOCK} count={READS} "
              "status=none && cat /proc/$PPID/task/*/stat")
    out, summary = run_as("nobody", nobody_dir,
                          ["--level", "full", "--", "sh", "-c", script])
    policies = sched_policies(out.splitlines())
    assert len(policies) >= 2  # the main thread and a tracer thread
    assert set(policies) == {0}  # SCHED_OTHER
    assert pinned_phases(summary) >= 1


# Each step reads in a storm (a phase pins the process), then looks at
# its CPU mask: itself, a child and a thread made while pinned, and its
# own change of it to the CPU it is pinned to, which the end of a phase
# (the watchdog's, after a quiet spell) must not undo.
PINNED_TASK = """
import os, sys, threading, time
fd = os.open(sys.argv[1], os.O_RDONLY)
def storm():
    for i in range(2000):
        os.pread(fd, 1024, 0)
storm()
print("self", sorted(os.sched_getaffinity(0)))
storm()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, repr(sorted(os.sched_getaffinity(0))).encode())
    os._exit(0)
os.waitpid(pid, 0)
print("child", os.read(r, 100).decode())
storm()
seen = []
t = threading.Thread(target=lambda: seen.append(sorted(os.sched_getaffinity(0))))
t.start()
t.join()
print("thread", seen[0])
storm()
cpu = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[36])
os.sched_setaffinity(0, {cpu})
storm()
until = time.monotonic() + 0.3
while time.monotonic() < until:
    pass
for line in open("/proc/self/status"):
    if line.startswith("Cpus_allowed_list:"):
        print("set", line.split()[1] == str(cpu))
"""


def allowed_list(pid="self"):
    """Cpus_allowed_list of a process, as /proc shows it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split()[1]


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.parametrize("user", ["nobody", "root"])
def test_a_pinned_tracee_sees_its_own_mask(nobody_dir, user):
    """A tracee pinned for a phase, by root's tracer or nobody's, never
    sees the pin: sched_getaffinity ends the phase at its entry, a child or thread
    made while pinned gets the tracee's own mask at its creator's event,
    and the tracee's own sched_setaffinity is not undone when the phase
    ends.  Without the filter's stop at sched_getaffinity it saw one CPU,
    without the fix at the creator's event so did the child, and without
    the stop at sched_setaffinity the end of the phase put back the mask
    from before the call."""
    cpus = sorted(os.sched_getaffinity(0))
    script = nobody_dir / "pinned.py"
    script.write_text(PINNED_TASK)
    script.chmod(0o644)
    out, summary = run_as(user, nobody_dir, [
        "--level", "full", "--", "python3", str(script),
        str(nobody_dir / "data.bin")])
    assert out.splitlines() == [f"self {cpus}", f"child {cpus}",
                                f"thread {cpus}", "set True"]
    # Under load the watchdog may end phases and hold off the next ones.
    assert pinned_phases(summary) >= 1


QUIET_TASK = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(2000):
    os.pread(fd, 1024, 0)
print(os.getpid(), flush=True)
until = time.monotonic() + 0.6
while time.monotonic() < until:
    pass
"""


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.parametrize("user", ["nobody", "root"])
def test_a_quiet_pinned_tracee_is_put_back(nobody_dir, user):
    """A pinned tracee that stops making syscalls (it computes) is put back
    within the watchdog's quiet time (60 ms): the watchdog wakes the
    tracer, asleep in waitpid, which puts back the mask.  Read here, from
    outside the task, while it computes: any syscall of its own would stop
    it and let the tracer do so anyway."""
    prefix = NOBODY if user == "nobody" else []
    p = subprocess.Popen([*prefix, str(IOWRAP), "-o", str(nobody_dir / "t"),
                          "--level", "full", "--", "python3", "-c",
                          QUIET_TASK, str(nobody_dir / "data.bin")],
                         stdout=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline())
        time.sleep(0.3)
        mask = allowed_list(pid)
    finally:
        assert p.wait(timeout=60) == 0
    assert mask == allowed_list()
    summary = json.loads((nobody_dir / "t" / "summary.json").read_text())
    assert pinned_phases(summary) >= 1


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.parametrize("user", ["nobody", "root"])
def test_a_thread_made_while_pinned_sees_its_own_mask(nobody_dir, user):
    """A C thread made right after its creator's storm asks for its mask
    at once: new threads of a process with a pin wait at their first stop
    for the creator's clone event, where their mask is put back.  A thread
    let go at its first stop could see the pin if its sched_getaffinity
    ran before the tracer came to the creator's event; that took a rare
    order of events on the shared CPU, and this test passed on the build
    without the wait (20 runs): it guards the result, not the race."""
    out, summary = run_as(user, nobody_dir, [
        "--level", "full", "--", helper("affinity"), "thread",
        str(nobody_dir / "data.bin")])
    assert out == f"thread {len(os.sched_getaffinity(0))}\n"
    assert pinned_phases(summary) >= 1


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("user", ["nobody", "root"])
def test_exec_by_a_pinned_thread_leaves_no_pin(nobody_dir, threads, user):
    """A second thread reads in a storm (pinned), then execs nproc: the
    exec gives it the leader's tid, and its pin goes with it, so nproc
    counts the task's CPUs.  Before, the exec stop took the tid for a new
    tracee's, and the pin was left on for good: nproc said 1 (every run
    with one tracer thread; with two, when the exec stop reached the
    thread that pinned it through its own wait)."""
    out, summary = run_as(user, nobody_dir, [
        "--level", "full", "--tracer-threads", threads, "--",
        helper("affinity"), "exec", str(nobody_dir / "data.bin"),
        "/usr/bin/nproc"])
    assert out == f"{len(os.sched_getaffinity(0))}\n"
    assert pinned_phases(summary) >= 1


SETUID_TASK = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(2000):
    os.pread(fd, 1024, 0)
os.setuid(65534)
for i in range(2000):
    os.pread(fd, 1024, 0)
until = time.monotonic() + 0.3
while time.monotonic() < until:
    pass
for line in open("/proc/self/status"):
    if line.startswith("Cpus_allowed_list:"):
        print(line.split()[1])
"""


@pytest.mark.skipif(not MULTI_CPU, reason="needs two CPUs")
@pytest.mark.parametrize("sys_nice", [False, True])
def test_a_pinned_tracee_that_changes_uid_is_put_back(nobody_dir, sys_nice):
    """Root, with CAP_SYS_NICE or without it (a container's default), and
    a tracee that becomes nobody (gosu, su-exec): the pinned tracee is put
    back at the entry of its setuid.  After it a tracer without
    CAP_SYS_NICE may no longer change its mask (EPERM), and it stayed on
    one CPU."""
    drop = ["setpriv", "--inh-caps=-sys_nice", "--bounding-set=-sys_nice"]
    p = subprocess.run(
        [*([] if sys_nice else drop), str(IOWRAP), "-o",
         str(nobody_dir / "t"), "--level", "full", "--", "python3", "-c",
         SETUID_TASK, str(nobody_dir / "data.bin")],
        capture_output=True, text=True, timeout=120)
    if p.stderr.startswith("setpriv:"):
        pytest.skip(f"cannot drop CAP_SYS_NICE here: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    assert p.stdout == allowed_list() + "\n"
    summary = json.loads((nobody_dir / "t" / "summary.json").read_text())
    assert pinned_phases(summary) >= 1
