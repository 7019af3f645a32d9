"""`iowrap tasks`: the listing of traced tasks, on traces that real iowrap
runs wrote (a --root with several tasks, Nextflow-style work directories),
joined with .nextflow.log lines in the exact format Nextflow writes them
(TaskHandler.toString(), GridTaskHandler.toStringBuilder()) and with a
Snakemake 7.21 log, and on bad and hostile input."""
import json
import os
import re
import shutil
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import IOWRAP, helper

COPY = "copyfile-static"  # reads and writes nothing but its two files


def clean_env(**extra):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env.update(extra)
    return env


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    kw.setdefault("env", clean_env())
    return subprocess.run([str(c) for c in cmd], **kw)


def tasks(*args, **kw):
    return run([IOWRAP, "tasks", *args], **kw)


def tasks_json(*args):
    proc = tasks("--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def table(stdout):
    """The table's rows as lists of cells (cells hold no two spaces)."""
    lines = stdout.splitlines()
    header = re.split(r"  +", lines[0].strip())
    rows = [dict(zip(header, re.split(r"  +", line.strip())))
            for line in lines[1:] if line and not line.startswith("*")]
    return header, rows


def iso(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A trace root with four tasks run one after the other: two copies of
    known sizes (exit 0 and 3) at --level full, an exit 7 and a SIGKILL
    at --level summary."""
    base = tmp_path_factory.mktemp("tasks")
    root = base / "root"
    data = base / "data"
    data.mkdir()
    (data / "in1").write_bytes(os.urandom(12345))
    (data / "in2").write_bytes(os.urandom(100000))
    runs = [
        (["--task", "copy small", "--level", "full"],
         [helper(COPY), data / "in1", data / "out1"], 0),
        (["--task", "copy big", "--level", "full"],
         [helper(COPY), data / "in2", data / "out2", "3"], 3),
        (["--task", "exit seven"], ["sh", "-c", "exit 7"], 7),
        ([], ["sh", "-c", "kill -9 $$"], 137),
    ]
    for opts, cmd, status in runs:
        proc = run([IOWRAP, "--root", root, *opts, "--", *cmd])
        assert proc.returncode == status, proc.stderr
    traces = [(json.loads(p.read_text()), p.parent)
              for p in root.rglob("summary.json")]
    traces.sort(key=lambda st: st[0]["start_time_s"])
    assert len(traces) == 4
    return base, root, traces


def test_root_listing_json(root):
    base, top, traces = root
    rows, stderr = tasks_json(top)
    assert stderr == ""
    assert [r["task"] for r in rows] == [
        "copy small", "copy big", "exit seven", "sh"]
    host = socket.gethostname().split(".")[0]
    assert [Path(r["trace"]).parent.name for r in rows] == [host] * 4
    for row, (summary, trace_dir) in zip(rows, traces):
        assert row["host"] == summary["host"]["hostname"]
        assert row["trace"] == str(trace_dir)
        assert Path(row["trace"]).parent.parent == top
        assert row["start_time_s"] == pytest.approx(
            summary["start_time_s"], abs=1e-6)
        assert row["start"].startswith(iso(summary["start_time_s"])[:-1])
        assert row["wall_time_s"] == pytest.approx(
            summary["wall_time_s"], abs=1e-6)
        assert row["identity"] == summary["task"]
        assert row["error"] is None
        assert row["nextflow_log"] is None and row["snakemake_log"] is None
    small, big, seven, killed = rows
    # Exact bytes of the files, from the static copier's own files only.
    assert (small["read_bytes"], small["written_bytes"]) == (12345, 12345)
    assert (big["read_bytes"], big["written_bytes"]) == (100000, 100000)
    assert small["io_source"] == big["io_source"] == "files"
    assert (small["exit_code"], big["exit_code"]) == (0, 3)
    assert seven["exit_code"] == 7 and seven["signal"] is None
    assert seven["io_source"] == "rchar"
    assert seven["read_bytes"] == traces[2][0]["totals"]["rchar_bytes"]
    assert seven["written_bytes"] == traces[2][0]["totals"]["wchar_bytes"]
    assert killed["exit_code"] is None and killed["signal"] == "SIGKILL"
    assert (base / "data" / "out2").stat().st_size == 100000


def test_same_trace_given_twice_is_listed_once(root):
    base, top, traces = root
    host_dir = traces[0][1].parent
    rows, _ = tasks_json(top, host_dir, traces[0][1])
    assert sorted(r["trace"] for r in rows) == sorted(
        str(d) for _, d in traces)


def test_root_listing_table(root):
    base, top, traces = root
    proc = tasks(top)
    assert proc.returncode == 0 and proc.stderr == ""
    header, rows = table(proc.stdout)
    assert header == ["TASK", "HOST", "START", "WALL", "EXIT", "READ",
                      "WRITTEN", "TRACE"]
    assert [r["TASK"] for r in rows] == [
        "copy small", "copy big", "exit seven", "sh"]
    assert [r["EXIT"] for r in rows] == ["0", "3", "7", "SIGKILL"]
    assert [(r["READ"], r["WRITTEN"]) for r in rows[:2]] == [
        ("12345", "12345"), ("100000", "100000")]
    rchar = traces[2][0]["totals"]["rchar_bytes"]
    assert rows[2]["READ"] == f"{rchar}*"
    assert proc.stdout.splitlines()[-1].startswith("* rchar/wchar")
    for row, (summary, trace_dir) in zip(rows, traces):
        assert row["START"] == iso(summary["start_time_s"])
        assert row["TRACE"] == str(trace_dir)
        assert row["HOST"] == summary["host"]["hostname"]
        assert row["WALL"].endswith("s")


# --- Nextflow ---------------------------------------------------------------

HASHES = {
    "local": "3f/a2b4c6d8e9f0011223344556677889",
    "grid": "ab/cd0123456789abcdef0123456789ab",
    "weird": "0e/ffeeddccbbaa99887766554433221a",
    "notrace": "77/00112233445566778899aabbccddee",
    "nolog": "c4/1234567890abcdef1234567890abcd",
}
NAMES = {
    "local": "sayHello (1)",
    "grid": "ALIGN (sample_1)",
    "weird": "MERGE (a;b] c; status: x)",
    "nolog": "orphan",
}
PREFIX = ("Nov-22 10:01:02.{ms} [Task monitor] DEBUG "
          "n.processor.TaskPollingMonitor - Task completed > ")


def nf_task(work, key, status):
    """A work directory as Nextflow writes it (.command.run's header names
    the task), its .command.sh run the way the wrapper config runs it:
    iowrap -- /bin/bash -euo pipefail WORKDIR/.command.sh."""
    workdir = work / HASHES[key]
    workdir.mkdir(parents=True)
    (workdir / ".command.run").write_text(
        "#!/bin/bash\n### ---\n### name: '%s'\n### ...\nset -e\n"
        % NAMES[key])
    (workdir / ".command.sh").write_text(
        f"#!/bin/bash -ue\necho {key} > out.txt\nexit {status}\n")
    proc = run([IOWRAP, "--", "/bin/bash", "-euo", "pipefail",
                workdir / ".command.sh"], cwd=workdir)
    assert proc.returncode == status, proc.stderr
    assert (workdir / ".iowrap" / "summary.json").exists()
    return workdir


def nextflow_log(work):
    lines = [
        "Nov-22 10:00:59.001 [main] DEBUG nextflow.cli.Launcher - $> "
        "nextflow run main.nf",
        PREFIX.format(ms="100") + "TaskHandler[id: 1; name: sayHello (1); "
        "status: COMPLETED; exit: 0; error: -; workDir: "
        f"{work}/{HASHES['local']}]",
        PREFIX.format(ms="200") + "TaskHandler[jobId: 12345; id: 2; name: "
        "ALIGN (sample_1); status: COMPLETED; exit: 2; error: -; workDir: "
        f"{work}/{HASHES['grid']} started: 1700000000000; exited: "
        "2023-11-14T22:13:25.123456Z; ]",
        PREFIX.format(ms="300") + "TaskHandler[jobId: 12346_1; id: 3; name: "
        "MERGE (a;b] c; status: x); status: COMPLETED; exit: 0; error: -; "
        f"workDir: {work}/{HASHES['weird']} started: -; exited: -; ]",
        PREFIX.format(ms="400") + "TaskHandler[id: 4; name: LOST (9); "
        "status: COMPLETED; exit: 1; error: nextflow.exception."
        "ProcessFailedException: boom; workDir: "
        f"{work}/{HASHES['notrace']}]",
        # Cut mid-write: the process died while writing this line.
        PREFIX.format(ms="500") + "TaskHandler[id: 5; name: CUT (1); "
        "status: COMPLETED; exit: 0; error: -; workDir: " f"{work}/9a/12",
        "Nov-22 10:01:03.000 [main] DEBUG nextflow.Session - Session await "
        "> all processes finished",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def nextflow(tmp_path_factory):
    base = tmp_path_factory.mktemp("nf")
    work = base / "work"
    dirs = {key: nf_task(work, key, status) for key, status in
            [("local", 0), ("grid", 2), ("weird", 0), ("nolog", 5)]}
    # The same task run again in its work directory: .iowrap-2.
    proc = run([IOWRAP, "--", "/bin/bash", "-euo", "pipefail",
                dirs["local"] / ".command.sh"], cwd=dirs["local"])
    assert proc.returncode == 0, proc.stderr
    assert (dirs["local"] / ".iowrap-2" / "summary.json").exists()
    log = base / ".nextflow.log"
    log.write_text(nextflow_log(work))
    return base, work, dirs, log


def test_nextflow_log_join(nextflow):
    base, work, dirs, log = nextflow
    rows, stderr = tasks_json("--nextflow-log", log, work)
    # One warning: the line cut mid-write, counted.
    assert stderr.splitlines() == [
        f"iowrap: tasks: {log}: 1 task lines cut mid-write or malformed; "
        "skipped"]
    by_trace = {r["trace"]: r for r in rows}
    assert sorted(by_trace, key=str) == sorted(
        [str(dirs[k] / ".iowrap") for k in dirs] +
        [str(dirs["local"] / ".iowrap-2"), None], key=str)
    for key in ("local", "grid", "weird", "nolog"):
        row = by_trace[str(dirs[key] / ".iowrap")]
        assert row["task"] == NAMES[key]
        assert row["identity"]["nextflow"]["hash"] == HASHES[key]
        if key == "nolog":
            assert row["nextflow_log"] is None
            continue
        nf = row["nextflow_log"]
        assert nf["hash"] == HASHES[key]
        assert nf["workdir"] == str(dirs[key])
        assert nf["name"] == NAMES[key]
        assert nf["status"] == "COMPLETED"
        assert nf["exit"] == str(row["exit_code"])
    assert by_trace[str(dirs["local"] / ".iowrap-2")]["nextflow_log"][
        "id"] == "1"
    grid = by_trace[str(dirs["grid"] / ".iowrap")]["nextflow_log"]
    assert (grid["job_id"], grid["id"], grid["started_ms"], grid["exited"]) \
        == ("12345", "2", "1700000000000", "2023-11-14T22:13:25.123456Z")
    assert grid["time"] == "Nov-22 10:01:02.200"
    weird = by_trace[str(dirs["weird"] / ".iowrap")]["nextflow_log"]
    assert (weird["job_id"], weird["started_ms"]) == ("12346_1", "-")
    lost = by_trace[None]
    assert lost["task"] == "LOST (9)" and lost["host"] is None
    assert lost["exit_code"] is None and lost["identity"] is None
    assert lost["nextflow_log"]["error"] == (
        "nextflow.exception.ProcessFailedException: boom")
    assert lost["nextflow_log"]["exit"] == "1"
    # Sorted by start; the task without a trace or a start time last.
    starts = [r["start_time_s"] for r in rows[:-1]]
    assert starts == sorted(starts) and rows[-1] is lost


def test_nextflow_hashes_alike_in_their_short_form(tmp_path):
    """Two work directories whose hashes share Nextflow's short form
    ("5e/1234567", the log's index key) each join their own log line,
    and the later of two lines of one directory wins."""
    work = tmp_path / "work"
    hashes = {"a": "5e/1234567aaaaaaaaaaaaaaaaaaaaaaa",
              "b": "5e/1234567bbbbbbbbbbbbbbbbbbbbbbb"}
    for key, h in hashes.items():
        d = work / h
        d.mkdir(parents=True)
        (d / ".command.sh").write_text("#!/bin/bash -ue\ntrue\n")
        proc = run([IOWRAP, "--", "/bin/bash", "-euo", "pipefail",
                    d / ".command.sh"], cwd=d)
        assert proc.returncode == 0, proc.stderr
    log = tmp_path / ".nextflow.log"
    log.write_text("".join(
        PREFIX.format(ms=ms) + f"TaskHandler[id: {i}; name: T ({i}); status: "
        f"COMPLETED; exit: 0; error: -; workDir: {work}/{hashes[key]}]\n"
        for ms, i, key in [("100", 1, "b"), ("200", 2, "a"),
                           ("300", 3, "b")]))
    rows, stderr = tasks_json("--nextflow-log", log, work)
    assert stderr == ""
    assert sorted((r["identity"]["nextflow"]["hash"],
                   r["nextflow_log"]["id"]) for r in rows if r["trace"]) == [
        (hashes["a"], "2"), (hashes["b"], "3")]
    assert [r["nextflow_log"]["id"] for r in rows if not r["trace"]] == ["1"]


def test_nextflow_table(nextflow):
    base, work, dirs, log = nextflow
    proc = tasks("--nextflow-log", log, work)
    assert proc.returncode == 0
    header, rows = table(proc.stdout)
    assert header == ["TASK", "HOST", "START", "WALL", "EXIT", "READ",
                      "WRITTEN", "LOG", "TRACE"]
    by_task = {}
    for r in rows:
        by_task.setdefault(r["TASK"], []).append(r)
    assert sorted(by_task) == sorted(
        [NAMES[k] for k in ("local", "grid", "weird", "nolog")] +
        ["LOST (9)"])
    assert len(by_task["sayHello (1)"]) == 2
    assert by_task["orphan"][0]["LOG"] == "not in log"
    assert by_task["orphan"][0]["EXIT"] == "5"
    assert by_task[NAMES["grid"]][0]["LOG"] == "COMPLETED"
    lost = by_task["LOST (9)"][0]
    assert (lost["HOST"], lost["START"], lost["EXIT"], lost["TRACE"]) == (
        "-", "-", "1", "no trace")


# --- Snakemake ----------------------------------------------------------------

SNAKEMAKE_LOG = """\
Building DAG of jobs...
Using shell: /usr/bin/bash
Provided cluster nodes: 2
Select jobs to execute...

[Sun Nov 22 10:53:11 2026]
rule extract:
    input: samples.txt
    output: work/b.txt
    jobid: 5
    reason: Missing output files: work/b.txt
    wildcards: sample=b
    resources: mem_mb=1000, mem_mib=954, disk_mb=1000, disk_mib=954, tmpdir=<TBD>

grep '^b' samples.txt > work/b.txt

[Sun Nov 22 10:53:11 2026]
rule upper:
    input: work/b.txt
    output: work/b.upper
    jobid: 4
    reason: Missing output files: work/b.upper
    wildcards: sample=b
    resources: mem_mb=1000, mem_mib=954, disk_mb=1000, disk_mib=954, tmpdir=<TBD>

tr a-z A-Z < work/b.txt > work/b.upper
[Sun Nov 22 10:53:12 2026]
Finished job 5.
1 of 3 steps (33%) done
[Sun Nov 22 10:53:13 2026]
Error in rule upper:
    jobid: 4
    input: work/b.txt
    output: work/b.upper
    shell:
        tr a-z A-Z < work/b.txt > work/b.upper
        (one of the commands exited with non-zero exit code; note that snakemake uses bash strict mode!)

[Sun Nov 22 10:53:15 2026]
localrule all:
    input: merged.txt
    jobid: 0
    reason: Input files updated by another job: merged.txt
    resources: mem_mb=1000, mem_mib=954, disk_mb=1000, disk_mib=954, tmpdir=/tmp

[Sun Nov 22 10:53:16 2026]
rule merge:
    input: work/a.upper, work/b.upper
    outp"""


GROUP_LOG = """\
Select jobs to execute...
[Sat Nov 28 21:22:35 2026]

group job ac1a5262-3ec6-4259-868e-5068485853c0 (jobs in lexicogr. order):

    [Sat Nov 28 21:22:35 2026]
    rule consume:
        input: stream/a.txt
        output: count/a.txt
        jobid: 1
        wildcards: sample=a, n=2
        resources: mem_mb=<TBD>, disk_mb=<TBD>, tmpdir=<TBD>

    wc -c < stream/a.txt > count/a.txt

    [Sat Nov 28 21:22:35 2026]
    rule produce:
        output: stream/a.txt (pipe)
        jobid: 2
        wildcards: sample=a, n=2
        resources: mem_mb=1000, mem_mib=954, disk_mb=1000, disk_mib=954, tmpdir=<TBD>

    seq 1 1000 > stream/a.txt
[Sat Nov 28 21:22:38 2026]
Finished job 2.
[Sat Nov 28 21:22:38 2026]
Finished job 1.
"""


def test_snakemake_log_join_group_jobs(tmp_path):
    """A group job's jobs: their traces have no jobid (the shipped profile
    cannot know it), so they are joined to the log's blocks by rule and
    wildcards, in the log's order and form ("sample=a, n=2").  Not a
    trace without a group (a rule set by hand), nor one whose wildcards
    differ.  Before, both blocks were log-only rows."""
    root = tmp_path / "root"
    group = dict(IOWRAP_SNAKEMAKE_GROUP="ac1a5262",
                 IOWRAP_SNAKEMAKE_GROUP_JOBID="bd1270f4",
                 IOWRAP_SNAKEMAKE_GROUP_RULES="consume,produce")
    for rule, wildcards, extra in (("consume", "sample=a,n=2", group),
                                   ("produce", "sample=a,n=2", group),
                                   ("produce", "n=2,sample=a", group),
                                   ("consume", "sample=a,n=2", {})):
        proc = run([IOWRAP, "--root", root, "--", "true"],
                   env=clean_env(IOWRAP_SNAKEMAKE_RULE=rule,
                                 IOWRAP_SNAKEMAKE_WILDCARDS=wildcards,
                                 **extra))
        assert proc.returncode == 0, proc.stderr
    log = tmp_path / "group.snakemake.log"
    log.write_text(GROUP_LOG)
    rows, stderr = tasks_json("--snakemake-log", log, root)
    assert stderr == ""
    joined = sorted((r["trace"].rsplit("/", 1)[-1],
                     (r["snakemake_log"] or {}).get("jobid"),
                     (r["snakemake_log"] or {}).get("status"))
                    for r in rows)
    assert joined == [("smk-consume", None, None),
                      ("smk-consume-bd1270f4", "1", "finished"),
                      ("smk-produce-bd1270f4", "2", "finished"),
                      ("smk-produce-bd1270f4-2", None, None)]


def test_snakemake_log_join(tmp_path):
    root = tmp_path / "root"
    for rule, jobid, status in (("extract", "5", 0), ("upper", "4", 1),
                                ("extract", "9", 0)):
        proc = run([IOWRAP, "--root", root, "--", "sh", "-c",
                    f"exit {status}"],
                   env=clean_env(IOWRAP_SNAKEMAKE_RULE=rule,
                                 IOWRAP_SNAKEMAKE_JOBID=jobid,
                                 IOWRAP_SNAKEMAKE_WILDCARDS="sample=b"))
        assert proc.returncode == status, proc.stderr
    log = tmp_path / "2026-11-22T105311.330338.snakemake.log"
    log.write_text(SNAKEMAKE_LOG)
    rows, stderr = tasks_json("--snakemake-log", log, root)
    assert stderr.splitlines() == [
        f"iowrap: tasks: {log}: 1 job blocks cut mid-write or malformed; "
        "skipped"]
    by = {(r["identity"] or {}).get("snakemake", {}).get("jobid"): r
          for r in rows}
    assert sorted(by, key=str) == sorted(["5", "4", "9", None], key=str)
    extract = by["5"]
    assert extract["task"] == "extract[sample=b]"
    assert extract["snakemake_log"] == {
        "rule": "extract", "jobid": "5", "wildcards": "sample=b",
        "input": "samples.txt", "output": "work/b.txt", "local": False,
        "status": "finished", "start": "Sun Nov 22 10:53:11 2026",
        "end": "Sun Nov 22 10:53:12 2026"}
    assert by["4"]["snakemake_log"]["status"] == "failed"
    assert by["4"]["exit_code"] == 1
    assert by["9"]["snakemake_log"] is None
    assert by[None]["task"] == "all" and by[None]["trace"] is None
    assert by[None]["snakemake_log"]["local"] is True

    proc = tasks("--snakemake-log", log, root)
    header, trows = table(proc.stdout)
    logs = {r["TASK"] + "/" + r["TRACE"].rsplit("/", 1)[-1]: r["LOG"]
            for r in trows}
    assert logs == {"extract[sample=b]/smk-extract-5": "finished",
                    "upper[sample=b]/smk-upper-4": "failed",
                    "extract[sample=b]/smk-extract-9": "not in log",
                    "all/no trace": "started"}


# --- Bad and hostile input --------------------------------------------------

def test_missing_dir_and_nothing_found(tmp_path):
    proc = tasks(tmp_path / "nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"iowrap: tasks: {tmp_path}/nope: No such file "
                           "or directory; give a directory holding traces\n")
    proc = tasks(tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "no traces found" in proc.stderr
    proc = tasks("--json", tmp_path)
    assert proc.returncode == 1 and json.loads(proc.stdout) == []
    proc = tasks("--nextflow-log", tmp_path / "no.log", tmp_path)
    assert proc.returncode == 2 and "no.log: No such file" in proc.stderr
    proc = tasks()
    assert proc.returncode == 2 and "no DIR given" in proc.stderr


TASKS_HELP = "; see iowrap tasks --help\n"


@pytest.mark.parametrize("args,message", [
    (["--bogus", "x"], "unknown option '--bogus'"),
    (["-x", "d"], "unknown option '-x'"),
    (["--snakemake-log"], "option '--snakemake-log' needs an argument"),
    (["--json=1", "d"], "option '--json' takes no value"),
    (["--nextflow-log", "--", "d"],
     "option '--nextflow-log' has '--' as its value: an unset or empty "
     "variable before '--'?"),
])
def test_tasks_names_the_bad_option(args, message):
    proc = tasks(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2, "", f"iowrap: tasks: {message}{TASKS_HELP}")


@pytest.mark.parametrize("args,message", [
    (["--bogus", "x"], "unknown option '--bogus'"),
    (["-o"], "option '-o' needs an argument"),
    (["--format"], "option '--format' needs an argument"),
    (["-o", "--format", "csv", "d"],
     "option '-o' would take '--format' as its value: an unset or empty "
     "variable before it? (a value starting with '-' is given attached: "
     "-o--format)"),
])
def test_export_names_the_bad_option(tmp_path, args, message):
    proc = run([IOWRAP, "export", *args], cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.split("\n")[:2] == [
        f"iowrap: export: {message}",
        "usage: iowrap export --format csv [--table io|procs|files] "
        "[-o FILE] TRACE_DIR..."]
    assert os.listdir(tmp_path) == []


def make_trace(dest, **task):
    """A trace directory from a real run, its task object replaced."""
    proc = run([IOWRAP, "-o", dest, "--", "true"])
    assert proc.returncode == 0, proc.stderr
    path = dest / "summary.json"
    summary = json.loads(path.read_text())
    summary["task"].update(task)
    path.write_text(json.dumps(summary))
    return summary


def test_hostile_and_broken_summaries(tmp_path):
    top = tmp_path / "top"
    top.mkdir()
    evil = "x\x1b[2J\nFAKE  ROW  \u202e\x07\\"
    make_trace(top / "evil", name=evil)
    good = make_trace(top / "good", name="good")
    # Cut mid-write: half of a real summary.json.
    cut = top / "cut"
    shutil.copytree(top / "good", cut)
    text = (cut / "summary.json").read_text()
    (cut / "summary.json").write_text(text[:len(text) // 2])
    # A tracer killed before it wrote summary.json: procs.csv only.
    killed = top / "killed"
    killed.mkdir()
    shutil.copy(top / "good" / "procs.csv", killed / "procs.csv")
    # Another tool's summary.json, a symlink to a trace, a deep trace.
    (top / "other").mkdir()
    (top / "other" / "summary.json").write_text('{"schema": "x"}')
    (top / "link").symlink_to(top / "good")
    deep = top / "1/2/3/4/5/6/7/8"
    shutil.copytree(top / "good", deep / "ok")  # depth 9: not searched
    shutil.copytree(top / "good", deep.parent / "ok")  # depth 8

    proc = tasks(top)
    assert proc.returncode == 0
    assert proc.stderr == (
        f"iowrap: tasks: {cut}/summary.json: summary.json"
        " is not valid JSON (cut mid-write?); skipped\n"
        f"iowrap: tasks: {top}/other/summary.json: not an iowrap summary"
        ' (no "schema": "iowrap-summary/N"), no procs.csv; not a trace,'
        " searched below\n")
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert "\x07" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 + 5 + 1, lines
    assert lines.pop().startswith("* rchar/wchar")
    assert any(line.startswith(
        "x\\x1b[2J\\x0aFAKE  ROW  \\u{202e}\\x07\\\\  ") for line in lines)
    traces = sorted(line.rsplit("  ", 1)[-1] for line in lines[1:])
    assert traces == sorted([str(top / "evil"), str(top / "good"),
                             str(cut), str(killed), str(deep.parent / "ok")])
    assert any("(bad summary.json)" in line and str(cut) in line
               for line in lines)

    rows, _ = tasks_json(top)
    by = {r["trace"]: r for r in rows}
    assert by[str(top / "evil")]["task"] == evil
    assert by[str(cut)]["error"] == "summary.json is not valid JSON " \
        "(cut mid-write?)"
    assert by[str(cut)]["task"] is None
    assert by[str(top / "good")]["identity"] == good["task"]
    assert by[str(killed)]["error"] == (
        "no summary.json (iowrap killed, or the task still running)")
    assert by[str(killed)]["start"] is None
    # No start time: last, in path order.
    assert [r["trace"] for r in rows[-2:]] == [str(cut), str(killed)]


def test_another_tools_summary_hides_no_trace_and_a_damaged_one_is_named(
        tmp_path):
    """A summary.json of another tool (MultiQC's) above the traces is one
    warning and the walk goes on below it; an iowrap summary.json damaged
    in its schema line, next to procs.csv, is a trace listed with error
    set and one warning naming the file (it was dropped in silence)."""
    wf = tmp_path / "wf"
    make_trace(wf / "results" / "t1", name="real1")
    make_trace(wf / "results" / "t2", name="real2")
    (wf / "summary.json").write_text('{"config_title": "MultiQC"}')
    proc = tasks(wf)
    assert proc.returncode == 0
    assert proc.stderr == (
        f"iowrap: tasks: {wf}/summary.json: not an iowrap summary"
        ' (no "schema": "iowrap-summary/N"), no procs.csv; not a trace,'
        " searched below\n")
    _, rows = table(proc.stdout)
    assert [(r["TASK"], r["TRACE"]) for r in rows] == [
        ("real1", f"{wf}/results/t1"), ("real2", f"{wf}/results/t2")]

    damaged = tmp_path / "wf2" / "t"
    make_trace(damaged, name="damaged")
    path = damaged / "summary.json"
    path.write_text(path.read_text().replace("iowrap-summary/", "iowrap-x/")
                    + "}")
    proc = tasks(tmp_path / "wf2")
    assert proc.returncode == 0
    assert proc.stderr == (
        f"iowrap: tasks: {damaged}/summary.json: not an iowrap summary"
        ' (no "schema": "iowrap-summary/N"); skipped\n')
    rows, _ = tasks_json(tmp_path / "wf2")
    assert [(r["trace"], r["task"], r["error"]) for r in rows] == [
        (str(damaged), None,
         "summary.json is not an iowrap summary (damaged?)")]


def test_invisible_characters_in_a_name_are_escaped(tmp_path):
    """A word joiner, a tag character or a Hangul filler printed as
    nothing: "al\u2060ign" looked like "align" in the table."""
    make_trace(tmp_path / "t", name="al\u2060ign\U000e0041\u3164\u00ad")
    proc = tasks(tmp_path)
    assert proc.returncode == 0, proc.stderr
    _, rows = table(proc.stdout)
    assert [r["TASK"] for r in rows] == [
        "al\\u{2060}ign\\u{e0041}\\u{3164}\\u{00ad}"]


def test_unreadable_directory_warns_once(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any directory")
    make_trace(tmp_path / "t", name="t")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        proc = tasks(tmp_path)
    finally:
        locked.chmod(0o700)
    assert proc.returncode == 0
    assert proc.stderr == (f"iowrap: tasks: {locked}: Permission denied; "
                           "skipped\n")


@pytest.mark.parametrize("start", [1e300, -1.0, 1e12])
def test_a_start_time_no_calendar_shows(tmp_path, start):
    """A start_time_s no calendar shows is no start: null, listed last.
    Before, 1e300 went to time_t unchecked (undefined) and --json gave
    "start": "-" where the docs promise null."""
    make_trace(tmp_path / "t", name="far")
    path = tmp_path / "t" / "summary.json"
    summary = json.loads(path.read_text())
    summary["start_time_s"] = start
    path.write_text(json.dumps(summary))
    (row,), _ = tasks_json(tmp_path / "t")
    assert (row["start"], row["start_time_s"]) == (None, None)
