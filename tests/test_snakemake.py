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
import sys
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


def run_workflow(tmp_path, iowrap_home, snakefile, level, *args, env=None):
    """Runs SNAKEFILE in TMP/wf with the shipped profile and ARGS, iowrap at
    LEVEL, ENV added to its environment; the workflow directory and the
    log's path in it."""
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed: run ci/install-packages.sh")
    wf = tmp_path / "wf"
    wf.mkdir()
    (wf / "Snakefile").write_text(snakefile)
    proc = subprocess.run(
        ["snakemake", "--profile", str(iowrap_home / "snakemake"), *args],
        cwd=wf, env=dict(snakemake_env(iowrap_home, level), **(env or {})),
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (log,) = re.findall(r"^Complete log: (\S+)$", proc.stderr, re.M)
    return wf, wf / log


def test_a_pipe_output_is_a_data_flow_edge(tmp_path, iowrap_home):
    """A pipe() output: Snakemake makes it a FIFO and runs its writer and
    its reader at once, each under iowrap.  The report has the edge from
    the producer's task to the consumer's on stream.txt, all 3893 bytes,
    and no input state for it.  Before, a FIFO was in no trace."""
    wf, _ = run_workflow(tmp_path, iowrap_home, PIPE_SNAKEFILE, "full")
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


RECORD_JOBS = """\
import importlib.util, json, sys
from snakemake.shell import shell
shell.executable("/bin/bash")  # as Snakemake does: "set -euo pipefail; "
spec = importlib.util.spec_from_file_location("group_jobs", sys.argv[1])
handler = importlib.util.module_from_spec(spec)
spec.loader.exec_module(handler)
for cmd, rule, wildcards in json.loads(sys.argv[2]):
    handler.log_handler({"level": "job_info", "name": rule,
                         "wildcards": wildcards})
    handler.log_handler({"level": "shellcmd", "msg": cmd})
"""


def record_group_jobs(jobs_dir, jobs):
    """group_jobs.py's records of JOBS, (command, rule, wildcards) each,
    logged as a group's Snakemake process logs them, in JOBS_DIR."""
    pytest.importorskip("snakemake")
    subprocess.run([sys.executable, "-c", RECORD_JOBS,
                    str(WRAPPERS / "group_jobs.py"), json.dumps(jobs)],
                   env=dict(os.environ, IOWRAP_SNAKEMAKE_JOBS_DIR=str(jobs_dir)),
                   check=True, timeout=60)


def test_shell_shim_picks_the_group_job_of_its_command(tmp_path, iowrap_home):
    """bin/bash in a group job: the job recorded (by group_jobs.py) whose
    command is exactly the one it runs, also after a conda activation; none
    when two recorded jobs run that same command, and none for a command
    that only contains a job's (a run: block's shell() call, which no job
    records, is not that job)."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    record_group_jobs(jobs, [("sleep 0", "short", {"n": "1"}),
                             ("sleep 0; echo x\n", "long", {"n": "2", "m": "3"}),
                             ("true", "stamp", {"s": "a"}),
                             ("true", "stamp", {"s": "b"}),
                             ("echo 'it'", "quote", {})])
    env = dict(os.environ, IOWRAP_HOME=str(iowrap_home),
               IOWRAP_SNAKEMAKE_JOBS_DIR=str(jobs),
               IOWRAP_SNAKEMAKE_GROUP="g")
    for var in ("IOWRAP", "IOWRAP_DIR", "IOWRAP_SNAKEMAKE_RULE",
                "IOWRAP_SNAKEMAKE_JOBID", "IOWRAP_SNAKEMAKE_WILDCARDS"):
        env.pop(var, None)
    # as Snakemake 7.21's conda and singularity modules wrap a command
    conda = "source /opt/conda/bin/activate '/wf/.snakemake/conda/3f1e_'; "
    container = (" singularity  exec --home /wf  /wf/img.sif bash -c "
                 r"'set -euo pipefail;  echo '\''it'\'''")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "singularity").write_text("#!/bin/sh\nexit 0\n")
    (stub / "singularity").chmod(0o755)
    env["PATH"] = f"{stub}:{env['PATH']}"
    got = {}
    for i, cmd in enumerate(("sleep 0", "sleep 0; echo x",
                             conda + "set -euo pipefail;  sleep 0; echo x",
                             "true", "echo other", "sleep 0; echo y",
                             "echo sleep 0", container)):
        out = tmp_path / str(i)
        if not cmd.startswith((conda, container)):
            cmd = f"set -euo pipefail;  {cmd}"
        proc = subprocess.run(
            [str(WRAPPERS / "bin" / "bash"), "-c", cmd], cwd=tmp_path,
            env=dict(env, IOWRAP_ROOT=str(out)), capture_output=True,
            timeout=60)
        assert proc.returncode == 0, proc.stderr
        (summary,) = [json.loads(p.read_text()) for p in out.rglob("summary.json")]
        smk = summary["task"]["snakemake"]
        got[i] = (smk.get("rule"), smk.get("wildcards"))
    assert got == {0: ("short", {"n": "1"}),
                   1: ("long", {"n": "2", "m": "3"}),
                   2: ("long", {"n": "2", "m": "3"}),
                   3: (None, None), 4: (None, None), 5: (None, None),
                   6: (None, None), 7: ("quote", {})}


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


def snakemake_group_jobs(log):
    """The jobs of the group jobs in the main process's log, each
    {"group", "rule", "jobid", "wildcards", "input", "output"}: the blocks
    `group job G (jobs in lexicogr. order):` / `    rule NAME:` /
    `        jobid: N` of its output."""
    jobs = []
    group = None
    for line in log.splitlines():
        m = re.match(r"^group job (\S+) \(jobs in lexicogr\. order\):$", line)
        if m:
            group = m.group(1)
            continue
        if group is None:
            continue
        m = re.match(r"^    (?:local)?rule (\w+):$", line)
        if m:
            jobs.append({"group": group, "rule": m.group(1),
                         "wildcards": "", "input": "", "output": ""})
            continue
        m = re.match(r"^        (\w+): (.*)$", line)
        if m and jobs and jobs[-1]["group"] == group:
            jobs[-1][m.group(1)] = m.group(2)
        elif line and not line.startswith(" "):
            group = None
    return jobs


def job_uuid(rule, wildcards):
    """Snakemake 7's Job.uuid(): the last job's names its group job."""
    from snakemake.common import UUID_NAMESPACE
    import uuid
    name = ",".join(sorted(f"{k}:{v}" for k, v in wildcards.items()))
    return str(uuid.uuid5(UUID_NAMESPACE, f"{rule}:{name}"))


def log_wildcards(job):
    return dict(kv.split("=", 1) for kv in job["wildcards"].split(", ") if kv)


def run_group_workflow(tmp_path, iowrap_home, snakefile, *args, env=None):
    """Runs SNAKEFILE with the shipped profile; the group jobs of its log,
    every trace's summary and directory, and `iowrap tasks --json` of the
    traces joined with the log."""
    wf, log = run_workflow(tmp_path, iowrap_home, snakefile, "files", *args,
                           env=env)
    jobs = snakemake_group_jobs(log.read_text())
    traces = [(json.loads(p.read_text()), p.parent)
              for p in sorted(wf.rglob("summary.json"))]
    proc = subprocess.run(
        [str(IOWRAP), "tasks", "--json", "--snakemake-log", str(log),
         str(wf / ".snakemake" / "iowrap")], capture_output=True, text=True,
        timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return wf, jobs, traces, json.loads(proc.stdout)


def assert_joined(rows, jobs):
    """`tasks --snakemake-log`: each group's job's trace row has its job's
    block of the main log (found by rule and wildcards: the trace has no
    jobid), finished; the one log-only row is the local rule all."""
    by_trace = {}
    for row in rows:
        if row["trace"] is None:
            assert row["task"] == "all", row
            continue
        smk = row["identity"]["snakemake"]
        by_trace[(smk["rule"], ", ".join(
            f"{k}={v}" for k, v in smk.get("wildcards", {}).items()))] = row
    for job in jobs:
        entry = by_trace[(job["rule"], job["wildcards"])]["snakemake_log"]
        assert (entry["rule"], entry["jobid"], entry["status"]) == (
            job["rule"], job["jobid"], "finished"), entry


def report_tasks(wf, tmp_path):
    """report.json's tasks by directory: (name, key, logical_task)."""
    out = tmp_path / "report"
    subprocess.run([str(IOWRAP), "report", "-o", str(out),
                    str(wf / ".snakemake" / "iowrap")], check=True,
                   capture_output=True, timeout=120)
    rep = json.loads((out / "report.json").read_text())
    return {Path(t["dir"]).resolve(): (t["name"], t["key"], t["logical_task"])
            for t in rep["tasks"]}


PIPE_GROUP_SNAKEFILE = """\
SAMPLES = ["a", "b"]

rule all:
    input: expand("count/{sample}.txt", sample=SAMPLES)

rule produce:
    output: pipe("stream/{sample}.txt")
    shell: "seq 1 1000 | sed 's/^/{wildcards.sample}/' > {output}"

rule consume:
    input: "stream/{sample}.txt"
    output: "count/{sample}.txt"
    shell: "wc -c < {input} > {output}"
"""


def test_pipe_group_jobs_have_their_rule_and_wildcards(tmp_path, iowrap_home):
    """Each pipe() makes its producer and its consumer one group job: one
    Snakemake process runs both at once, in threads sharing one
    environment.  Each job's trace still names its rule and wildcards (the
    command matched to the job the group's log handler recorded), its group
    as the main log calls it, the group job's own id (the uuid of its last
    job, Snakemake's Job.uuid()) and the group's rules; no jobid, which the
    main process alone knows.  Before, both traces had no rule: same name,
    no wildcards, nothing to tell the sample."""
    wf, jobs, traces, rows = run_group_workflow(tmp_path, iowrap_home,
                                                PIPE_GROUP_SNAKEFILE)
    assert (wf / "count" / "a.txt").read_text() == "4893\n"
    assert sorted((j["rule"], j["wildcards"]) for j in jobs) == [
        ("consume", "sample=a"), ("consume", "sample=b"),
        ("produce", "sample=a"), ("produce", "sample=b")]
    by_job = {(j["rule"], j["wildcards"]): j for j in jobs}
    assert len(traces) == 4
    reported = report_tasks(wf, tmp_path)
    seen = set()
    for summary, trace_dir in traces:
        task = summary["task"]
        smk = task["snakemake"]
        sample = smk["wildcards"]["sample"]
        job = by_job[(smk["rule"], f"sample={sample}")]
        seen.add((smk["rule"], sample))
        assert smk == {"rule": job["rule"], "wildcards": {"sample": sample},
                       "group": job["group"],
                       "group_jobid": job_uuid("consume", {"sample": sample}),
                       "group_rules": "consume,produce"}, smk
        assert task["engine"] == "snakemake"
        assert task["name"] == f"{job['rule']}[sample={sample}]"
        assert task["key"] == f"smk-{job['rule']}-{smk['group_jobid']}"
        assert summary["exit"]["code"] == 0
        # the trace is that job's: it touched its own files, no others
        files = {f.replace(" (pipe)", "")
                 for f in (job["input"], job["output"]) if f}
        assert traced_paths(trace_dir, wf) == files, (job, trace_dir)
        assert reported[trace_dir.resolve()] == (
            task["name"], task["key"], job["rule"])
    assert len(seen) == 4
    assert_joined(rows, jobs)


NAMED_GROUP_SNAKEFILE = """\
SAMPLES = ["a", "b"]

rule all:
    input:
        expand("out/{sample}.txt", sample=SAMPLES),
        expand("stamp/{sample}", sample=SAMPLES)

rule first:
    output: "mid/{sample}.txt"
    group: "g"
    shell: "echo {wildcards.sample} > {output}"

rule second:
    input: "mid/{sample}.txt"
    output: "out/{sample}.txt"
    group: "g"
    shell: "tr a-z A-Z < {input} > {output}"

# b's stamp waits for a's: a's command runs while it is the only one
# recorded, b's when both are.
rule stamp:
    input: lambda w: ["out/b.txt", "stamp/a"] if w.sample == "b" else "out/a.txt"
    output: touch("stamp/{sample}")
    group: "g"
    shell: "true"
"""


def test_named_group_jobs_have_their_rule_and_no_guess(tmp_path, iowrap_home):
    """`group: "g"` with --group-components g=2: all six jobs are one group
    job, run by one Snakemake process.  first and second get their rule and
    wildcards.  The two stamp jobs run the same command ("true"): a's runs
    while no other job with that command has started, and is a's; b's runs
    when both have, so which one it is cannot be told: its trace names only
    the group, its job id and rules (name "group g"), never a guess."""
    wf, jobs, traces, rows = run_group_workflow(
        tmp_path, iowrap_home, NAMED_GROUP_SNAKEFILE,
        "--group-components", "g=2")
    assert (wf / "out" / "b.txt").read_text() == "B\n"
    assert sorted((j["group"], j["rule"], j["wildcards"]) for j in jobs) == [
        ("g", rule, f"sample={s}") for rule in ("first", "second", "stamp")
        for s in "ab"]
    group_jobids = {t["task"]["snakemake"]["group_jobid"] for t, _ in traces}
    assert len(traces) == 6 and len(group_jobids) == 1
    (group_jobid,) = group_jobids
    assert group_jobid in {job_uuid(j["rule"], log_wildcards(j))
                           for j in jobs}
    reported = report_tasks(wf, tmp_path)
    named = []
    for summary, trace_dir in traces:
        task = summary["task"]
        smk = task["snakemake"]
        group = {"group": "g", "group_jobid": group_jobid,
                 "group_rules": "first,second,stamp"}
        if "rule" not in smk:
            assert smk == group, smk
            assert task["name"] == "group g"
            assert task["key"].startswith(f"smk-group-{group_jobid}")
            assert reported[trace_dir.resolve()] == (
                "group g", task["key"], "group g")
            assert summary["command"][-1] == "set -euo pipefail;  true"
            continue
        named.append((smk["rule"], smk["wildcards"]))
        assert smk == dict(group, rule=smk["rule"],
                           wildcards=smk["wildcards"]), smk
        (job,) = [j for j in jobs if j["rule"] == smk["rule"] and
                  log_wildcards(j) == smk["wildcards"]]
        # "true" touches nothing: Snakemake creates touch() outputs
        expected = {f for f in (job["input"], job["output"])
                    if f and job["rule"] != "stamp"}
        assert traced_paths(trace_dir, wf) == expected, (job, trace_dir)
        assert reported[trace_dir.resolve()] == (
            task["name"], task["key"], smk["rule"])
    assert sorted(named, key=repr) == [
        ("first", {"sample": "a"}), ("first", {"sample": "b"}),
        ("second", {"sample": "a"}), ("second", {"sample": "b"}),
        ("stamp", {"sample": "a"})]
    # the trace with no rule cannot be joined: its job is a log-only row
    (unjoined,) = [r for r in rows if r["trace"] and
                   "rule" not in r["identity"]["snakemake"]]
    assert unjoined["snakemake_log"] is None
    (stamp_b,) = [r for r in rows if r["trace"] is None and
                  r["task"] == "stamp[sample=b]"]
    assert stamp_b["snakemake_log"]["status"] == "finished"
    assert_joined([r for r in rows if r is not stamp_b and r is not unjoined],
                  [j for j in jobs if j["wildcards"] != "sample=b" or
                   j["rule"] != "stamp"])


RUN_BLOCK_GROUP_SNAKEFILE = """\
shell.prefix("set -o pipefail; ")

rule all:
    input: "b.txt"

rule a:
    output: "a.txt"
    group: "g"
    shell: "echo a > a.txt"

rule b:
    input: "a.txt"
    output: "b.txt"
    group: "g"
    run:
        shell("cat {input} > b.tmp; echo a > a.txt.bak")
        shell("mv b.tmp {output}")
"""


def test_run_block_in_a_group_is_not_another_job(tmp_path, iowrap_home):
    """A run: block logs no command, so its shell() calls have no job
    recorded: the first one's text holds job a's whole command, and it was
    a's (a's rule, files it never touched); now it is named by its group
    alone, as is the second.  a itself is found under the Snakefile's own
    shell.prefix()."""
    wf, jobs, traces, _ = run_group_workflow(
        tmp_path, iowrap_home, RUN_BLOCK_GROUP_SNAKEFILE,
        "--group-components", "g=2")
    assert (wf / "b.txt").read_text() == "a\n"
    assert sorted(j["rule"] for j in jobs) == ["a", "b"]
    got = sorted((summary["command"][-1], summary["task"]["name"],
                  summary["task"]["snakemake"].get("rule"))
                 for summary, _ in traces)
    assert got == [
        ("set -o pipefail;  cat a.txt > b.tmp; echo a > a.txt.bak",
         "group g", None),
        ("set -o pipefail;  echo a > a.txt", "a", "a"),
        ("set -o pipefail;  mv b.tmp b.txt", "group g", None)]


NESTED_SNAKEFILE = """\
rule all:
    input: "count/a.txt", "single.txt"

rule produce:
    output: pipe("stream/{sample}.txt")
    shell: "seq 1 100 > {output}"

rule consume:
    input: "stream/{sample}.txt"
    output: "count/{sample}.txt"
    shell: "wc -c < {input} > {output}"

rule single:
    output: "single.txt"
    shell: "echo single > {output}"
"""


def test_nested_workflow_jobs_are_not_the_outer_job(tmp_path, iowrap_home):
    """A workflow run from within a traced job (a nested snakemake) inherits
    that job's IOWRAP_SNAKEMAKE_* variables.  A group job exported no rule
    of its own, so both pipe jobs were the outer job (its rule, jobid and
    wildcards) and never looked up; a single job kept the outer group's
    fields.  Each job script now starts from none."""
    outer = {"IOWRAP_SNAKEMAKE_RULE": "outer", "IOWRAP_SNAKEMAKE_JOBID": "9",
             "IOWRAP_SNAKEMAKE_WILDCARDS": "x=1",
             "IOWRAP_SNAKEMAKE_GROUP": "og",
             "IOWRAP_SNAKEMAKE_GROUP_JOBID": "ogj",
             "IOWRAP_SNAKEMAKE_GROUP_RULES": "o",
             "IOWRAP_SNAKEMAKE_JOBS_DIR": str(tmp_path / "outer-jobs")}
    wf, jobs, traces, _ = run_group_workflow(
        tmp_path, iowrap_home, NESTED_SNAKEFILE, env=outer)
    (group,) = {j["group"] for j in jobs}
    got = sorted((s["task"]["name"], s["task"]["snakemake"].get("jobid"),
                  s["task"]["snakemake"].get("group")) for s, _ in traces)
    # single's jobid: this run's own number for it, not the outer 9
    assert got == [("consume[sample=a]", None, group),
                   ("produce[sample=a]", None, group),
                   ("single", got[2][1], None)], got
    assert got[2][1] in {str(n) for n in range(1, 4)}, got


def test_group_job_runs_where_iowrap_home_is_not(tmp_path):
    """IOWRAP_HOME not there (not mounted on the node that runs the job):
    the jobs run untraced, as single jobs always did.  The group job gave
    Snakemake a log handler script that did not exist, so it failed the
    job ("Error: no log handler script found") and the workflow."""
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed: run ci/install-packages.sh")
    wf = tmp_path / "wf"
    wf.mkdir()
    (wf / "Snakefile").write_text(NESTED_SNAKEFILE)
    env = snakemake_env(tmp_path / "nowhere", "files")
    proc = subprocess.run(["snakemake", "--profile", str(WRAPPERS)], cwd=wf,
                          env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (wf / "count" / "a.txt").read_text() == "292\n"
    assert not list(wf.rglob("summary.json"))
