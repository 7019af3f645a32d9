"""The launcher: options, exit statuses, the trace directory."""
import csv
import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import IOWRAP, helper, run_iowrap


def test_binary_is_fully_static():
    out = subprocess.run(["file", str(IOWRAP)], capture_output=True,
                         text=True, check=True).stdout
    assert "statically linked" in out
    headers = subprocess.run(["readelf", "-lW", str(IOWRAP)],
                             capture_output=True, text=True,
                             check=True).stdout
    assert "INTERP" not in headers
    assert "DYNAMIC" not in headers


def test_version_and_help():
    v = subprocess.run([str(IOWRAP), "--version"], capture_output=True,
                       text=True)
    assert v.returncode == 0
    assert v.stdout == "iowrap 0.1.0\n"
    h = subprocess.run([str(IOWRAP), "--help"], capture_output=True,
                       text=True)
    assert h.returncode == 0
    assert h.stdout.startswith("usage: iowrap [OPTIONS] -- COMMAND")
    assert "--no-wait-orphans" in h.stdout


@pytest.mark.parametrize("args, message", [
    ([], "iowrap: no command given: iowrap [OPTIONS] -- COMMAND [ARGS...]; "
         "see iowrap --help\n"),
    (["--"], "iowrap: no command given: iowrap [OPTIONS] -- COMMAND "
             "[ARGS...]; see iowrap --help\n"),
    (["--bogus", "--", "true"], "iowrap: unknown option '--bogus'; "
                                "see iowrap --help\n"),
    (["-o"], "iowrap: option '-o' needs an argument; see iowrap --help\n"),
    (["-fo"], "iowrap: option '-o' needs an argument; see iowrap --help\n"),
    (["--level"], "iowrap: option '--level' needs an argument; "
                  "see iowrap --help\n"),
    (["-fz", "--", "true"], "iowrap: unknown option '-z'; "
                            "see iowrap --help\n"),
    (["--force=1", "--", "true"], "iowrap: option '--force' takes no value; "
                                  "see iowrap --help\n"),
])
def test_usage_errors_exit_125(tmp_path, args, message):
    p = subprocess.run([str(IOWRAP)] + args, capture_output=True, text=True,
                       cwd=tmp_path)
    assert p.returncode == 125
    assert p.stderr == message
    assert os.listdir(tmp_path) == []


def test_exit_status_is_the_tasks(iowrap):
    for code in (0, 1, 3, 255):
        t = iowrap("sh", "-c", f"exit {code}")
        assert t.returncode == code
        assert t.summary["exit"]["code"] == code
        assert t.summary["exit"]["signal"] is None


@pytest.mark.parametrize("sig", [9, 11, 15])
def test_exit_status_of_a_signalled_task(iowrap, sig):
    t = iowrap("sh", "-c", f"kill -{sig} $$")
    assert t.returncode == 128 + sig
    ex = t.summary["exit"]
    assert ex["code"] is None
    assert ex["signal"] == sig
    assert ex["iowrap_status"] == 128 + sig
    (row,) = t.procs
    assert row["exit_signal"] == str(sig)
    assert row["exit_code"] == ""


def test_command_not_found_is_127(iowrap):
    t = iowrap("no-such-command-xyz")
    assert t.returncode == 127
    assert t.stderr == ("iowrap: no-such-command-xyz: command not found on "
                        "PATH; check its name or give its full path\n")
    assert t.summary["exit"]["iowrap_status"] == 127
    assert t.summary["tracing"]["mode"] == "not-started"


def test_command_not_executable_is_126(iowrap, tmp_path):
    f = tmp_path / "data.txt"
    f.write_text("not a program\n")
    f.chmod(0o644)
    t = iowrap(str(f))
    assert t.returncode == 126
    assert t.stderr == (f"iowrap: {f}: not executable; check the path and "
                        "its permissions\n")
    d = iowrap(str(tmp_path))
    assert d.returncode == 126
    assert d.stderr == (f"iowrap: {tmp_path}: Is a directory; check the path "
                        "and its permissions\n")


def test_missing_interpreter_is_said(iowrap, tmp_path):
    """A script whose #! interpreter is missing fails its exec with ENOENT,
    though the script is there: say what is missing (was "cannot execute
    ./badint.sh: No such file or directory")."""
    script = tmp_path / "badint.sh"
    script.write_text("#!  /nonexistent/interp -x\necho ran\n")
    script.chmod(0o755)
    bad = ("bad interpreter /nonexistent/interp (its #! line): No such file "
           "or directory; fix the script's first line or install "
           "/nonexistent/interp\n")
    t = iowrap("--level", "full", "--", "./badint.sh", cwd=tmp_path)
    assert (t.returncode, t.stdout) == (127, "")
    assert t.stderr == f"iowrap: cannot execute ./badint.sh: {bad}"
    assert t.summary["exit"]["exec_error"] == "No such file or directory"
    # iowrap reads the #! line, not the task: its trace has the failed
    # exec alone.
    rows = list(csv.DictReader(open(t.dir / "io.csv")))
    assert [(r["type"], r["result"], r["path"]) for r in rows] == [
        ("X", "-2", str(script))]
    # Found on PATH: named by the path it was found at.
    env = dict(os.environ, PATH=f"{tmp_path}:/usr/bin:/bin")
    t = iowrap("badint.sh", env=env)
    assert t.returncode == 127
    assert t.stderr == f"iowrap: cannot execute {script}: {bad}"
    # Nested under another iowrap, which runs it itself.
    t = iowrap("sh", "-c", f"{IOWRAP} -- ./badint.sh", cwd=tmp_path)
    assert t.returncode == 127
    assert t.stderr == f"iowrap: cannot execute ./badint.sh: {bad}"


def test_path_lookup_like_execvp(iowrap, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "hello-iowrap"
    script.write_text("echo from-script \"$@\"\n")  # no #!: run by sh
    script.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")
    t = iowrap("hello-iowrap", "a b", env=env)
    assert t.returncode == 0
    assert t.stdout == "from-script a b\n"
    assert t.summary["command"] == ["hello-iowrap", "a b"]


def test_options_after_the_command_are_the_commands(iowrap):
    t = iowrap("echo", "-o", "--force")
    assert t.returncode == 0
    assert t.stdout == "-o --force\n"


@pytest.mark.parametrize("umask", [0o022, 0o222, 0o777])
def test_trace_directory_is_0700_with_parents(tmp_path, umask):
    """Whatever the umask (0222 once made a parent iowrap could not
    write in); the task keeps its own (0777: its file has no bits)."""
    out = tmp_path / "a" / "b" / "trace"
    t = run_iowrap(["sh", "-c", "umask; touch own"], outdir=out,
                   cwd=tmp_path, preexec_fn=lambda: os.umask(umask))
    assert (t.returncode, t.stdout) == (0, f"{umask:04o}\n"), t.stderr
    assert stat.S_IMODE((tmp_path / "own").stat().st_mode) == \
        0o666 & ~umask
    for d in (tmp_path / "a", tmp_path / "a" / "b", out):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert sorted(os.listdir(out)) == ["procs.csv", "summary.json"]
    for f in out.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600


def test_default_directory_names(tmp_path):
    p = subprocess.Popen([str(IOWRAP), "--", "true"], cwd=tmp_path,
                         stderr=subprocess.PIPE, text=True)
    assert p.wait() == 0
    assert os.listdir(tmp_path) == [f"iowrap.{socket.gethostname()}.{p.pid}"]
    env = dict(os.environ, IOWRAP_DIR=str(tmp_path / "from-env"))
    subprocess.run([str(IOWRAP), "--", "true"], env=env, check=True)
    assert (tmp_path / "from-env" / "summary.json").exists()


def test_non_empty_directory_refused_unless_force(tmp_path):
    out = tmp_path / "t"
    out.mkdir()
    (out / "keep").write_text("x")
    marker = tmp_path / "ran"
    t = run_iowrap(["touch", str(marker)], outdir=out)
    assert t.returncode == 125
    assert t.stderr == (f"iowrap: trace directory {out} is not empty; use "
                        "--force to overwrite it or choose another -o DIR\n")
    assert not marker.exists()
    run_iowrap(["true"], outdir=out / "sub", check=0)
    t = run_iowrap(["--force", "touch", str(marker)], outdir=out)
    assert t.returncode == 0
    assert marker.exists()
    assert (out / "keep").read_text() == "x"
    # --force twice over a previous trace replaces its files
    sub = out / "sub"
    t = run_iowrap(["--force", "sh", "-c", "exit 4"], outdir=sub)
    assert t.returncode == 4
    assert t.summary["exit"]["code"] == 4


def test_symlink_planted_as_trace_directory(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "trace"
    link.symlink_to(elsewhere)
    t = run_iowrap(["sh", "-c", "echo task-output; exit 7"], outdir=link)
    assert t.returncode == 7
    assert t.stdout == "task-output\n"
    assert t.stderr == (f"iowrap: trace directory {link} is a symlink; "
                        "refusing to follow it (remove it or choose another "
                        "-o DIR); the task runs untraced\n")
    assert os.listdir(elsewhere) == []


def test_symlink_strict_is_125(tmp_path):
    link = tmp_path / "trace"
    link.symlink_to(tmp_path)
    t = run_iowrap(["--strict", "true"], outdir=link)
    assert t.returncode == 125


def nobody(cmd, **kw):
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                           "--clear-groups"] + cmd, capture_output=True,
                          text=True, timeout=120, **kw)


@pytest.mark.parametrize("there", [False, True])
def test_unwritable_directory_never_changes_the_exit_status(there):
    """-o names a directory nobody cannot make, or one that is there,
    empty, and read-only to nobody: the task runs untraced with one line
    (--strict: 125, not run).  Before, one that was there was taken: the
    task ran traced, a line for each trace file failing to be made."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o555)
        out = locked if there else locked / "t"
        problem = (f"cannot write in trace directory {out}" if there else
                   f"cannot create trace directory {out}")
        p = nobody([str(IOWRAP), "-o", str(out), "--", "sh", "-c",
                    "echo ok; exit 9"])
        assert p.returncode == 9
        assert p.stdout == "ok\n"
        assert p.stderr == (f"iowrap: {problem}: Permission denied; choose "
                            "a writable place with -o DIR; the task runs "
                            "untraced\n")
        p = nobody([str(IOWRAP), "--strict", "-o", str(out), "--", "sh",
                    "-c", "echo ok; exit 9"])
        assert (p.returncode, p.stdout) == (125, "")
    finally:
        shutil.rmtree(base)


def test_a_removed_working_directory_is_null_in_the_summary(tmp_path):
    """getcwd fails in a directory removed: summary.json's cwd is null,
    "not known" (was "")."""
    gone = tmp_path / "gone"
    gone.mkdir()
    out = tmp_path / "t"
    p = subprocess.run(["sh", "-c", f"cd {gone} && rmdir {gone} && "
                        f"{IOWRAP} -o {out} -- true"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "summary.json").read_text())["cwd"] is None


def test_a_writable_directory_is_taken_where_faccessat2_is_refused(tmp_path):
    """An old container profile refuses faccessat2 (439), which musl's
    faccessat(AT_EACCESS) asks, with EPERM: the trace directory that is
    there and writable is taken all the same (only EACCES and EROFS say
    it is not)."""
    out = tmp_path / "t"
    out.mkdir()
    p = subprocess.run([helper("denycall"), "439", str(IOWRAP), "-o",
                        str(out), "--", "sh", "-c", "echo ok"],
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "ok\n", "")
    s = json.loads((out / "summary.json").read_text())
    assert (s["tracing"]["mode"], s["tracing"]["complete"]) == \
        ("ptrace", True)


def limited_to_one_process():
    """As nobody, with RLIMIT_NPROC 1: the process itself is its one, so
    fork(2) fails with EAGAIN (root is exempt from the limit)."""
    import resource
    resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))


def no_process_of_nobody(seconds=10):
    """RLIMIT_NPROC counts every process of the uid: a container of an
    earlier test, whose pid namespace the kernel tears down after its
    init ended, may still hold some of nobody's for a moment."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        owners = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                owners.append(os.stat(f"/proc/{pid}").st_uid)
            except FileNotFoundError:
                pass
        if 65534 not in owners:
            return
        time.sleep(0.05)
    pytest.fail("processes of nobody are still running")


@pytest.mark.parametrize("strict,script", [(False, False), (True, False),
                                           (False, True)])
def test_a_task_that_cannot_be_started_beside_iowrap_runs_in_its_place(
        strict, script):
    """No process left for iowrap's fork (or no descriptor for its pipes):
    the task runs in iowrap's place, untraced, with its own exit status and
    output (a script without #! with the shell, as execvp runs it); the
    summary says why, with no iowrap status (iowrap is gone when the task
    ends).  --strict: 125, the task not run."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o777)
        task = ["sh", "-c", "echo ok; exit 9"]
        if script:
            (base / "s").write_text("echo ok; exit 9\n")
            (base / "s").chmod(0o755)
            task = [str(base / "s")]
        no_process_of_nobody()
        p = nobody([str(IOWRAP), "-o", str(base / "t")] +
                   (["--strict"] if strict else []) + ["--"] + task,
                   preexec_fn=limited_to_one_process)
        why = ("cannot start the task beside iowrap (Resource temporarily "
               "unavailable); it runs in iowrap's place, untraced")
        assert (p.returncode, p.stdout, p.stderr) == (
            (125, "", f"iowrap: {why}\n") if strict else
            (9, "ok\n", f"iowrap: {why}\n"))
        s = json.loads((base / "t" / "summary.json").read_text())
        assert (s["tracing"]["mode"], s["tracing"]["untraced_reason"],
                s["tracing"]["complete"], s["exit"]["code"],
                s["exit"]["iowrap_status"]) == (
            "untraced", why, False, None, 125 if strict else None)
    finally:
        shutil.rmtree(base)


NOT_DUMPABLE = """import ctypes, os
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
os.write(1, b'x' * 1000)
"""


def test_io_of_a_process_an_unprivileged_tracer_cannot_read_is_unknown():
    """As nobody, a process that makes itself non-dumpable has a
    /proc/PID/io its tracer may not read: its rchar ... columns are empty
    (unknown), not zero, left out of the totals and counted in
    tracing.processes_io_unknown, and the trace is not complete; its CPU
    time and exit are still there."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o777)
        p = nobody([str(IOWRAP), "-o", str(base / "t"), "--",
                    "/usr/bin/python3", "-c", NOT_DUMPABLE])
        assert (p.returncode, p.stdout, p.stderr) == (0, "x" * 1000, "")
        (row,) = list(csv.DictReader(open(base / "t" / "procs.csv")))
        io = ("rchar", "wchar", "syscr", "syscw", "read_bytes",
              "write_bytes", "cancelled_write_bytes")
        assert [row[c] for c in io] == [""] * len(io)
        assert row["exit_code"] == "0" and row["cpu_s"] != ""
        s = json.loads((base / "t" / "summary.json").read_text())
        assert (s["tracing"]["processes_io_unknown"],
                s["tracing"]["complete"], s["totals"]["wchar_bytes"]) == \
            (1, False, 0)
    finally:
        shutil.rmtree(base)


def test_a_trace_directory_the_task_removes(tmp_path):
    """The task owns its trace directory and may remove it: its exit
    status stands, and stderr says the trace is lost (not that the summary
    is left in a file that is gone with it)."""
    out = tmp_path / "t"
    t = run_iowrap(["sh", "-c", f"rm -rf {out}; exit 7"], outdir=out)
    assert (t.returncode, t.stderr) == (
        7, f"iowrap: the trace directory {out} was removed during the run "
        "(by the task?): its trace is lost\n")
    assert not out.exists()


def test_full_filesystem_is_reported_once(tmp_path):
    """A 64 KiB tmpfs fills up mid-trace: the task goes on and keeps its
    exit status; the loss is said on stderr when it happens, once.  The
    room taken for summary.json as the trace started (all of it here:
    procs.csv's header was still in its buffer) holds the summary, which
    says so."""
    script = (f"mount -t tmpfs -o size=64k none {tmp_path} && "
              f"{IOWRAP} -o {tmp_path}/t -- sh -c "
              "'for i in $(seq 600); do /bin/true; done; exit 6'; "
              f"echo status=$?; cat {tmp_path}/t/summary.json")
    p = subprocess.run(["unshare", "-Urm", "sh", "-c", script],
                       capture_output=True, text=True, timeout=300)
    assert p.stdout.startswith("status=6\n")
    summary = json.loads(p.stdout[len("status=6\n"):])
    problem = (f"writing {tmp_path}/t/procs.csv failed: No space left on "
               "device; the task goes on, its trace is incomplete")
    assert p.stderr == f"iowrap: {problem}\n"
    assert summary["tracing"]["complete"] is False
    assert summary["tracing"]["problems"][0] == problem
    assert summary["tracing"]["problems"][1].startswith("procs.csv: ")
    assert summary["tracing"]["problems"][1].endswith(" bytes of trace lost")
    assert summary["exit"]["code"] == 6
    assert summary["totals"]["processes"] == 602


def run_on_tmpfs(tmp_path, size, task, level="summary", fill=False,
                 args=""):
    """iowrap -o FS/t running TASK (a script given ARGS, shell words),
    then (with fill) filling FS, a SIZE tmpfs of its own mount namespace,
    and exiting 5; from a user namespace (no root needed).  Returns
    iowrap's stderr, and what the task and then the shell saw: FS/t's
    files with their sizes and blocks while the task ran, and after."""
    fs, out = tmp_path / "fs", tmp_path / "out"
    fs.mkdir()
    out.mkdir()
    blocks = "stat -c '%n %s %b' * .[!.]* 2>/dev/null"
    fill = f"head -c 1M /dev/zero 2>/dev/null > {fs}/fill" if fill else ""
    (out / "task.sh").write_text(
        f"{task}\n{fill}\n"
        f"cd {fs}/t && {blocks} > {out}/during\nexit 5\n")
    script = (f"mount -t tmpfs -o size={size} none {fs} && "
              f"{IOWRAP} -o {fs}/t --level {level} -- sh {out}/task.sh {args}; "
              f"echo $? > {out}/status; cd {fs}/t; {blocks} > {out}/after; "
              f"cp summary.json {out}/ 2>/dev/null")
    p = subprocess.run(["unshare", "-Urm", "sh", "-c", script],
                       capture_output=True, text=True, timeout=300)
    assert (out / "status").read_text() == "5\n", p.stderr
    return p.stderr, out


def listing(path):
    """NAME SIZE BLOCKS lines of stat -c: {name: (size, 512-byte blocks)}."""
    rows = [line.split() for line in path.read_text().splitlines()]
    return {name: (int(size), int(blocks)) for name, size, blocks in rows}


def test_summary_room_is_taken_at_the_start_and_given_back(tmp_path):
    """summary.json is written as .summary.json.part, with 64 KiB taken
    for it (fallocate, the size kept at 0) as the trace starts, and is
    renamed when whole: while the task runs there is no summary.json (a
    missing one means that iowrap did not finish), and at the end the
    summary holds no block beyond its size."""
    stderr, out = run_on_tmpfs(tmp_path, "1m", "true")
    assert stderr == ""
    during = listing(out / "during")
    assert sorted(during) == [".summary.json.part", "procs.csv"]
    assert during[".summary.json.part"] == (0, 128)
    after = listing(out / "after")
    assert sorted(after) == ["procs.csv", "summary.json"]
    size, blocks = after["summary.json"]
    page = os.sysconf("SC_PAGE_SIZE")
    assert blocks == -(-size // page) * page // 512
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tracing"]["complete"] is True
    assert summary["exit"]["code"] == 5


def test_summary_without_its_file_list_when_the_filesystem_is_full(tmp_path):
    """The task touches 400 files and fills the filesystem: summary.json
    with its per-file list (some 400 KB) no longer fits, so it is written
    again without it, into the room taken at the start.  Every problem
    said on stderr is in it, and it says the trace is incomplete."""
    work = tmp_path / "w"
    work.mkdir()
    make = f"for i in range(400): open('{work}/f%d' % i, 'w').close()"
    stderr, out = run_on_tmpfs(tmp_path, "256k", f'python3 -S -c "{make}"',
                               "full", fill=True)
    assert sorted(listing(out / "after")) == \
        ["files.csv", "io.csv", "procs.csv", "summary.json", "threads.csv"]
    summary = json.loads((out / "summary.json").read_text())
    problems = summary["tracing"]["problems"]
    last = (f"writing {tmp_path}/fs/t/summary.json failed: No space left on "
            "device; it is written again without its per-file list")
    assert problems[-1] == last
    said = [line[len("iowrap: "):] for line in stderr.splitlines()]
    assert said[-1] == last
    assert set(said) <= set(problems)
    # Said once on stderr, however many trace files the full filesystem
    # failed; each one in the summary.
    assert len([line for line in said if ".csv failed" in line]) == 1
    assert summary["tracing"]["complete"] is False
    assert summary["exit"]["code"] == 5
    assert (summary["files_listed"], summary["files"]) == (0, [])
    assert summary["files_total"] >= 400


def test_a_summary_larger_than_its_room_is_missing(tmp_path):
    """At --level summary there is no per-file list to leave out: a
    summary with a 109 KB command line, more than the room kept for it,
    on a filesystem that the task fills up is not written at all (half of
    one would be none, and the trace reads as unfinished); stderr says
    so, once."""
    stderr, out = run_on_tmpfs(tmp_path, "256k", "", fill=True,
                               args="$(seq 20000)")
    assert sorted(listing(out / "after")) == ["procs.csv"]
    fs = tmp_path / "fs"
    assert stderr.splitlines() == [
        f"iowrap: writing {fs}/t/procs.csv failed: No space left on device; "
        "the task goes on, its trace is incomplete",
        f"iowrap: writing {fs}/t/summary.json failed: No space left on "
        "device"]


def test_a_summary_json_already_there_stays(tmp_path):
    """A task that writes summary.json into its own trace directory keeps
    it (summary.json is never replaced, as O_EXCL would have it); iowrap's
    summary is left in .summary.json.part, as stderr says."""
    out = tmp_path / "t"
    t = run_iowrap(["sh", "-c", f"echo mine > {out}/summary.json; exit 3"],
                   outdir=out)
    assert t.returncode == 3
    assert t.stderr == (f"iowrap: cannot create {out}/summary.json: File "
                        f"exists; the summary is left in {out}/"
                        ".summary.json.part\n")
    assert (out / "summary.json").read_text() == "mine\n"
    summary = json.loads((out / ".summary.json.part").read_text())
    assert summary["exit"]["code"] == 3


def test_environment_cwd_umask_and_rlimits_untouched(iowrap, tmp_path):
    script = ("umask; ulimit -n; ulimit -s; pwd; echo $IOWRAP_TEST_VAR; "
              "trap -p; cat /proc/self/status | grep -E '^Sig(Ign|Blk)'")
    env = dict(os.environ, IOWRAP_TEST_VAR="a=b c")
    shell = ["bash", "-c", f"umask 027; ulimit -n 123; cd {tmp_path}; "
             f"exec \"$@\"", "x"]
    native = subprocess.run(shell + ["bash", "-c", script], env=env,
                            capture_output=True, text=True)
    traced = subprocess.run(shell + [str(IOWRAP), "-o", str(tmp_path / "t"),
                                     "--", "bash", "-c", script],
                            env=env, capture_output=True, text=True)
    assert traced.returncode == 0
    assert traced.stdout == native.stdout
    assert "0027\n123\n" in traced.stdout


def test_closed_stderr_pipe_does_not_kill_the_task(tmp_path):
    """iowrap's warning goes to a pipe nobody reads any more: SIGPIPE must
    not kill iowrap (and the task with it)."""
    marker = tmp_path / "done"
    script = (f"{IOWRAP} -o /proc/iowrap-cannot-write -- sh -c "
              f"'sleep 0.3; echo ok > {marker}; exit 5' 2>&1 | true; "
              "echo ${PIPESTATUS[0]}")
    p = subprocess.run(["bash", "-c", script], capture_output=True,
                       text=True, timeout=60)
    assert p.stdout == "5\n"
    assert marker.read_text() == "ok\n"


@pytest.mark.parametrize("value", ["-1", "abc", "100001", ""])
def test_bad_spin_us_is_refused(tmp_path, value):
    p = subprocess.run([str(IOWRAP), "--spin-us", value, "--", "true"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 125
    assert p.stderr == (f"iowrap: --spin-us takes microseconds from 0 to "
                        f"100000, not '{value}'; see iowrap --help\n")


@pytest.mark.parametrize("value", ["0", "17", "abc", ""])
def test_bad_tracer_threads_is_refused(tmp_path, value):
    p = subprocess.run([str(IOWRAP), "--tracer-threads", value, "--",
                        "true"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 125
    assert p.stderr == (f"iowrap: --tracer-threads takes 1 to 16, not "
                        f"'{value}'; see iowrap --help\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become nobody")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_tracer_threads_that_cannot_start():
    """Under a limit on processes (a container's or a job's pids limit,
    here nobody's RLIMIT_NPROC) a tracer thread may not start.  The run
    goes on with those that did, to the end.  Before, worker 0's doorbell
    (a tracee) outlived the task when none had started, and iowrap waited
    for it for ever; a thread never made would also have been joined."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    base.chmod(0o777)
    try:
        threads = tracer_threads_by_limit(base, range(2, 9))
    finally:
        shutil.rmtree(base)
    # Some limit left room for the task and iowrap but not for a second
    # tracer thread, and a higher one for both.
    assert threads == {1, 2}


def tracer_threads_by_limit(base, limits):
    """tracer_threads of runs by nobody under each RLIMIT_NPROC, each of
    which must run the task to its end, traced."""
    threads = set()
    for limit in limits:
        trace = base / f"t{limit}"
        p = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             "prlimit", f"--nproc={limit}", str(IOWRAP), "-o", str(trace),
             "--level", "full", "--", "/bin/echo", "hi"],
            capture_output=True, text=True, timeout=60)
        assert (p.returncode, p.stdout, p.stderr) == (0, "hi\n", ""), limit
        t = json.loads((trace / "summary.json").read_text())["tracing"]
        assert t["complete"] is True and t["problems"] == []
        threads.add(t["tracer_threads"])
    return threads


@pytest.mark.parametrize("value", ["0", "50", "100000"])
def test_spin_us_values_trace_the_same(iowrap, value):
    t = iowrap("--spin-us", value, "--level", "full", "sh", "-c",
               "cat /etc/hostname > /dev/null; exit 2")
    assert t.returncode == 2
    assert t.summary["tracing"]["complete"] is True
    assert t.summary["totals"]["processes"] == 2


def test_nested_iowrap_runs_the_command_as_is(tmp_path):
    """An iowrap started inside a task another iowrap traces (a wrapped
    Slurm step running a wrapped Snakemake job) cannot trace: the outer one
    already follows every process.  It runs the command as if it were not
    there: no second trace directory, no warning, the same exit status;
    the outer trace has the command's I/O."""
    data = tmp_path / "data.txt"
    data.write_text("x" * 1000)
    inner = tmp_path / "inner"
    t = run_iowrap(["-l", "full", "--", str(IOWRAP), "-o", str(inner), "--",
                    "sh", "-c", f"cat {data}; exit 7"],
                   outdir=tmp_path / "outer")
    assert t.returncode == 7
    assert t.stdout == "x" * 1000
    assert t.stderr == ""
    assert not inner.exists()
    rows = list(csv.DictReader(open(t.dir / "io.csv")))
    handles = {r["handle"] for r in rows
               if r["type"] == "O" and r["path"] == str(data)}
    assert sum(int(r["result"]) for r in rows
               if r["type"] == "R" and r["handle"] in handles) == 1000
    missing = run_iowrap(["--", str(IOWRAP), "-o", str(inner), "--",
                          "no-such-command-xyz"], outdir=tmp_path / "o2")
    assert missing.returncode == 127
    assert "no-such-command-xyz: command not found" in missing.stderr
    assert not inner.exists()
