"""Snakemake (Debian's snakemake 7.21): a workflow with fan-out, merge and
wildcards runs with the shipped profile (wrappers/snakemake); every job must
yield one trace whose task object names its rule, jobid and wildcards as
Snakemake's own log does, and whose files in the workflow's directory are
exactly the rule's inputs and outputs."""
import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import IOWRAP, ROOT

WRAPPERS = ROOT / "wrappers" / "snakemake"

SNAKEFILE = """\
SAMPLES = ["a", "b", "c"]

rule all:
    input: "merged.txt"

rule extract:
    input: "samples.txt"
    output: "work/{sample}.txt"
    shell: "grep '^{wildcards.sample}' {input} > {output}"

rule upper:
    input: "work/{sample}.txt"
    output: "work/{sample}.upper"
    shell: "tr a-z A-Z < {input} > {output}"

rule merge:
    input: expand("work/{sample}.upper", sample=SAMPLES)
    output: "merged.txt"
    shell: "cat {input} > {output}"
"""


def snakemake_jobs(log):
    """Snakemake's own record of each job it ran: {jobid: fields}, from the
    blocks `rule NAME:` / `    input: ...` / `    jobid: N` of its output."""
    jobs = {}
    block = None
    for line in log.splitlines():
        m = re.match(r"^(local)?rule (\w+):$", line)
        if m:
            block = {"rule": m.group(2), "local": bool(m.group(1))}
            continue
        if block is None:
            continue
        m = re.match(r"^    (\w+): (.*)$", line)
        if not m:
            if "jobid" in block and not block["local"]:
                jobs[block["jobid"]] = block
            block = None
            continue
        block[m.group(1)] = m.group(2)
    return jobs


def traced_paths(trace_dir, top):
    """Every path under TOP (TOP itself, Snakemake's and iowrap's own
    directories excluded) that the task opened, stat'ed or created."""
    paths = set()
    with open(trace_dir / "files.csv", encoding="utf-8",
              errors="surrogateescape", newline="") as f:
        for row in csv.DictReader(f):
            paths.update(row["paths"].split(" ") if row["paths"] else [])
    with open(trace_dir / "io.csv", encoding="utf-8",
              errors="surrogateescape", newline="") as f:
        for row in csv.DictReader(f):
            paths.update(p for p in (row["path"], row["path2"]) if p)
    prefix = str(top) + "/"
    return {p[len(prefix):] for p in paths
            if p.startswith(prefix) and
            not p[len(prefix):].startswith((".snakemake", "iowrap."))}


@pytest.fixture
def iowrap_home(tmp_path):
    """An install as the README describes it: HOME/iowrap, HOME/snakemake/."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "iowrap").symlink_to(IOWRAP)
    (home / "snakemake").symlink_to(WRAPPERS)
    return home


def test_workflow_with_shipped_profile(tmp_path, iowrap_home):
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed: run ci/install-packages.sh")
    wf = tmp_path / "wf"
    wf.mkdir()
    (wf / "Snakefile").write_text(SNAKEFILE)
    (wf / "samples.txt").write_text("a1\nb1\nc1\na2\n")
    env = snakemake_env(iowrap_home, "files")
    proc = subprocess.run(
        ["snakemake", "--profile", str(iowrap_home / "snakemake")],
        cwd=wf, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (wf / "merged.txt").read_text() == "A1\nA2\nB1\nC1\n"

    # The main process's log: the jobs' own Snakemake processes print to the
    # same terminal (with their own job numbers), not to this file.
    (log,) = re.findall(r"^Complete log: (\S+)$", proc.stderr, re.M)
    jobs = snakemake_jobs((wf / log).read_text())
    assert sorted(j["rule"] for j in jobs.values()) == (
        ["extract"] * 3 + ["merge"] + ["upper"] * 3), jobs

    traces = {}
    for path in sorted(wf.rglob("summary.json")):
        summary = json.loads(path.read_text())
        jobid = summary["task"]["snakemake"]["jobid"]
        assert jobid not in traces, f"two traces for job {jobid}"
        traces[jobid] = (summary, path.parent)
    assert sorted(traces) == sorted(jobs)

    for jobid, job in jobs.items():
        summary, trace_dir = traces[jobid]
        task = summary["task"]
        assert task["engine"] == "snakemake", task
        wildcards = dict(kv.split("=", 1)
                         for kv in job.get("wildcards", "").split(", ") if kv)
        smk = task["snakemake"]
        assert smk["rule"] == job["rule"], smk
        assert smk.get("wildcards", {}) == wildcards, smk
        name = job["rule"]
        if wildcards:
            name += "[" + ",".join(f"{k}={v}" for k, v in wildcards.items()) + "]"
        assert task["name"] == name, task
        assert summary["exit"]["code"] == 0, summary["exit"]
        # The task touched exactly its rule's inputs and outputs.
        expected = set(job["input"].split(", ")) | set(job["output"].split(", "))
        assert traced_paths(trace_dir, wf) == expected, (jobid, job)


PIPE_SNAKEFILE = """\
rule all:
    input: "count.txt"

rule produce:
    output: pipe("stream.txt")
    shell: "seq 1 1000 > {output}"

rule consume:
    input: "stream.txt"
    output: "count.txt"
    shell: "wc -c < {input} > {output}"
"""


def snakemake_env(iowrap_home, level):
    """The environment of a Snakemake run under the shipped profile, none
    of the caller's iowrap or Slurm variables leaking into it."""
    env = dict(os.environ, IOWRAP_HOME=str(iowrap_home),
               IOWRAP_SNAKEMAKE_ARGS=f"--level {level}",
               # Snakemake 7 polls running jobs every 10 s, every 1 s on CI.
               CI="true")
    for var in list(env):
        if var.startswith(("IOWRAP_SNAKEMAKE_RULE", "IOWRAP_SNAKEMAKE_JOB",
                           "IOWRAP_SNAKEMAKE_WILD", "IOWRAP_DIR",
                           "IOWRAP_ROOT", "SLURM_")):
            del env[var]
    return env


def test_a_pipe_output_is_a_data_flow_edge(tmp_path, iowrap_home):
    """A pipe() output: Snakemake makes it a FIFO and runs its writer and
    its reader at once, each under iowrap.  The report has the edge from
    the producer's task to the consumer's on stream.txt, all 3893 bytes,
    and no input state for it.  Before, a FIFO was in no trace."""
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed: run ci/install-packages.sh")
    wf = tmp_path / "wf"
    wf.mkdir()
    (wf / "Snakefile").write_text(PIPE_SNAKEFILE)
    proc = subprocess.run(
        ["snakemake", "--profile", str(iowrap_home / "snakemake")],
        cwd=wf, env=snakemake_env(iowrap_home, "full"), capture_output=True,
        text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (wf / "count.txt").read_text() == "3893\n"
    out = tmp_path / "out"
    subprocess.run([str(IOWRAP), "report", "-o", str(out),
                    str(wf / ".snakemake" / "iowrap")], check=True,
                   capture_output=True, timeout=120)
    rep = json.loads((out / "report.json").read_text())
    paths = {f["id"]: f["path"] for f in rep["files"]}
    stream = str(wf / "stream.txt")
    (edge,) = [e for e in rep["data_flow"]["edges"]
               if paths[e["file"]] == stream]
    assert edge["bytes"] == 3893
    dirs = {t["id"]: Path(t["dir"]) for t in rep["tasks"]}
    # the writer's trace wrote the FIFO, the reader's read it: by io.csv
    for task, kind in ((edge["writer"], "W"), (edge["reader"], "R")):
        with open(dirs[task] / "io.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        (inode,) = {r["inode"] for r in rows if r["path"] == stream}
        assert sum(int(r["result"]) for r in rows
                   if r["inode"] == inode and r["type"] == kind) == 3893
    assert not [v for v in rep["wcp"]["vertices"]
                if v["kind"] == "input" and v["path"] == stream]


def test_shell_shim_runs_bash_under_iowrap(tmp_path, iowrap_home):
    """bin/bash: takes its own directory off PATH (the task's bash is the real
    one), runs the command under iowrap, keeps its exit status."""
    shim_dir = iowrap_home / "snakemake" / "bin"
    env = dict(os.environ, IOWRAP_HOME=str(iowrap_home),
               IOWRAP_ROOT=str(tmp_path / "root"),
               PATH=f"{shim_dir}:{os.environ['PATH']}")
    env.pop("IOWRAP", None)
    env.pop("IOWRAP_DIR", None)
    proc = subprocess.run(
        ["bash", "-c", 'echo "$PATH"; type -P bash; exit 3'], cwd=tmp_path,
        env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    path, bash = proc.stdout.splitlines()
    assert str(shim_dir) not in path.split(":")
    assert Path(bash).resolve() != (WRAPPERS / "bin" / "bash").resolve()
    (summary,) = [json.loads(p.read_text()) for p in tmp_path.rglob("summary.json")]
    assert summary["command"][1:3] == ["-c", 'echo "$PATH"; type -P bash; exit 3']
    assert summary["exit"]["code"] == 3


def test_shell_shim_without_iowrap_runs_untraced(tmp_path):
    env = dict(os.environ, IOWRAP_HOME=str(tmp_path / "nowhere"),
               PATH="/usr/bin:/bin")
    env.pop("IOWRAP", None)
    proc = subprocess.run(
        [str(WRAPPERS / "bin" / "bash"), "-c", "exit 4"], cwd=tmp_path,
        env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4
    assert "iowrap not found" in proc.stderr and "running untraced" in proc.stderr
    assert not list(tmp_path.rglob("summary.json"))
