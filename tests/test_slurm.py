"""Slurm: real jobs on a single-node cluster (Debian's slurm-wlm + munge, started
by ci/slurm-start.sh) run under iowrap directly, through the shipped srun shim and
through the shipped sbatch example; each trace's task.slurm must name the job,
array and step ids that Slurm itself reports (scontrol show job)."""
import os
import re
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import IOWRAP, ROOT

SLURM_WRAPPERS = ROOT / "wrappers" / "slurm"
SLURM_DIR = ROOT / "build" / "slurm"
CONF = SLURM_DIR / "slurm.conf"


def _daemons_running():
    for name in ("munged", "slurmctld", "slurmd"):
        pidfile = SLURM_DIR / f"{name}.pid"
        try:
            os.kill(int(pidfile.read_text()), 0)
        except (OSError, ValueError):
            return False
    return True


@pytest.fixture(scope="module")
def slurm():
    """Starts the cluster once for this module, stops it at the end unless it
    was already running before."""
    if os.geteuid() != 0:
        pytest.skip("Slurm tests need root: slurmd runs jobs as their owner "
                    "(run the tests as root, as CI does)")
    for prog in ("munged", "slurmctld", "slurmd", "srun", "sbatch"):
        if shutil.which(prog) is None:
            pytest.skip(f"{prog} not installed: run ci/install-packages.sh")
    was_running = _daemons_running()
    subprocess.run([str(ROOT / "ci" / "slurm-start.sh")], check=True,
                   capture_output=True, text=True, timeout=60)
    yield
    if not was_running:
        subprocess.run([str(ROOT / "ci" / "slurm-stop.sh")], check=True,
                       capture_output=True, timeout=60)


def slurm_env(tmp_path, **extra):
    env = dict(os.environ)
    env.update(SLURM_CONF=str(CONF), IOWRAP=str(IOWRAP),
               IOWRAP_ROOT=str(tmp_path / "root"))
    for var in list(env):
        if var.startswith(("SLURM_", "IOWRAP_DIR")) and var != "SLURM_CONF":
            del env[var]
    env.update(extra)
    return env


def jobs_named(name, env):
    """scontrol's records of every job (array elements too) with this name."""
    out = subprocess.run(["scontrol", "-o", "show", "job"], env=env,
                         capture_output=True, text=True, check=True).stdout
    jobs = []
    for line in out.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if fields.get("JobName") == name:
            jobs.append(fields)
    return jobs


def wait_done(name, env, count, timeout=120):
    """Waits until COUNT records of jobs named NAME are all finished."""
    deadline = time.monotonic() + timeout
    while True:
        jobs = jobs_named(name, env)
        if (len(jobs) == count and
                all(j["JobState"] not in ("PENDING", "RUNNING", "CONFIGURING",
                                          "COMPLETING") for j in jobs)):
            return jobs
        assert time.monotonic() < deadline, jobs
        time.sleep(0.2)


def summaries(top):
    """Every trace's summary.json under top, read."""
    import json
    return [json.loads(p.read_text()) for p in sorted(top.rglob("summary.json"))]


def check_slurm_task(summary, expected, job_name):
    task = summary["task"]
    assert task["engine"] == "slurm", task
    slurm = task["slurm"]
    got = {k: slurm.get(k) for k in expected}
    assert got == expected, slurm
    if "array_job_id" not in expected:
        assert "array_job_id" not in slurm and "array_task_id" not in slurm
    assert all(isinstance(v, str) for v in slurm.values()), slurm
    assert job_name in task["name"], task
    sources = {s["field"]: s["from"] for s in task["sources"]}
    assert sources["slurm.job_id"] == "env SLURM_JOB_ID", sources


def run_two_task_step(tmp_path, env, argv_prefix, name):
    """srun -n2 of a command that writes one file per task; returns the traces
    (ordered by SLURM_PROCID) and Slurm's record of the job."""
    script = 'echo "$SLURM_PROCID" > "out.$SLURM_PROCID"'
    cmd = ["srun", "-n2", "-J", name, "--chdir", str(tmp_path)]
    cmd += argv_prefix + ["sh", "-c", script]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    for rank in ("0", "1"):
        assert (tmp_path / f"out.{rank}").read_text() == rank + "\n"
    (job,) = wait_done(name, env, 1)
    traces = sorted(summaries(tmp_path),
                    key=lambda s: s["task"]["slurm"]["procid"])
    assert len(traces) == 2, [s["task"] for s in traces]
    return traces, job


def check_two_task_step(traces, job, name):
    host = socket.gethostname().split(".")[0]
    for rank, summary in enumerate(traces):
        check_slurm_task(summary, {
            "job_id": job["JobId"], "step_id": "0", "procid": str(rank),
            "localid": str(rank), "nodeid": "0", "nodename": host,
            "job_name": name}, name)
        assert summary["exit"]["code"] == 0, summary["exit"]


def test_srun_iowrap_directly(slurm, tmp_path):
    name = "direct-" + uuid.uuid4().hex[:8]
    env = slurm_env(tmp_path)
    traces, job = run_two_task_step(tmp_path, env, [str(IOWRAP), "--"], name)
    check_two_task_step(traces, job, name)


def test_srun_shim_wraps_the_step(slurm, tmp_path):
    name = "shim-" + uuid.uuid4().hex[:8]
    env = slurm_env(tmp_path)
    env["PATH"] = f"{SLURM_WRAPPERS}:{env['PATH']}"
    traces, job = run_two_task_step(tmp_path, env, [], name)
    check_two_task_step(traces, job, name)
    # The task's own command was traced, not srun.
    for summary in traces:
        assert summary["command"][:2] == ["sh", "-c"], summary["command"]


@pytest.fixture
def shim(tmp_path):
    """Runs the shim, its directory twice on PATH, before a fake srun that
    prints its arguments as [a][b]... (no cluster needed)."""
    if shutil.which("srun") is None:
        pytest.skip("srun not installed: run ci/install-packages.sh")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "srun").write_text('#!/bin/sh\nprintf "[%s]" "$@"\n')
    (fake / "srun").chmod(0o755)
    env = dict(os.environ, SLURM_CONF=str(CONF), IOWRAP="/opt/iowrap/iowrap",
               IOWRAP_SRUN_ARGS="--level files",
               PATH=f"{SLURM_WRAPPERS}:{SLURM_WRAPPERS}:{fake}:"
                    f"{os.environ['PATH']}")

    def run(*args):
        return subprocess.run(["srun", *args], env=env, capture_output=True,
                              text=True, check=True, timeout=30).stdout
    return run


def test_srun_shim_finds_the_real_srun_and_passes_help_through(shim):
    """No recursion when the shim's directory is on PATH twice; --help goes to
    the real srun untouched."""
    assert shim("-n", "2", "-J", "x", "--mem=1", "app", "-n", "3") == (
        "[-n][2][-J][x][--mem=1][/opt/iowrap/iowrap][--level][files][--]"
        "[app][-n][3]")
    assert shim("-ln2", "--", "app") == (
        "[-ln2][/opt/iowrap/iowrap][--level][files][--][app]")
    assert shim("--help") == "[--help]"
    assert shim("-N1") == "[-N1]"
    assert shim("--multi-prog", "tasks.conf") == "[--multi-prog][tasks.conf]"
    assert shim("-n1", "/opt/iowrap/iowrap", "--", "app") == (
        "[-n1][/opt/iowrap/iowrap][--][app]")


WRAP = "[/opt/iowrap/iowrap][--level][files][--]"


def test_srun_shim_skips_the_values_of_every_option(shim):
    """srun 22.05's options whose value may be the next word (--hint, -F...)
    are skipped with it; --bcast's value is optional, so the word after it
    is the command."""
    for opt in ("--hint", "--container", "--prefer", "--msg-timeout", "-F",
                "--nodefile", "--accel-bind", "-m", "-B"):
        assert shim(opt, "v", "app", "x") == f"[{opt}][v]{WRAP}[app][x]", opt
    assert shim("-lF", "nodes.txt", "app") == f"[-lF][nodes.txt]{WRAP}[app]"
    assert shim("-lFnodes.txt", "app") == f"[-lFnodes.txt]{WRAP}[app]"
    assert shim("--bcast", "app", "x") == f"[--bcast]{WRAP}[app][x]"
    assert shim("--bcast=/tmp/app", "app") == f"[--bcast=/tmp/app]{WRAP}[app]"


def _man_srun():
    try:
        return subprocess.run(["man", "-P", "cat", "srun"], capture_output=True,
                              text=True, timeout=60,
                              env=dict(os.environ, MANWIDTH="200")).stdout
    except OSError:
        return ""


def test_srun_shim_skips_every_value_man_srun_lists(shim):
    """Every option `man srun` lists with a mandatory value (`--opt=<v>`,
    `-o, --opt=<v>`) has its next word skipped, in both spellings; one with
    an optional value (`--opt[=<v>]`) does not."""
    page = _man_srun()
    opts = re.findall(r"^ {7}(?:-([A-Za-z]), +)?--([a-z0-9-]+)(\[?=)", page,
                      re.M)
    if len(opts) < 50:
        pytest.skip("man srun not installed (slurm-client's man page)")
    for short, name, eq in opts:
        for opt in [f"--{name}"] + ([f"-{short}"] if short else []):
            if eq == "=":
                expected = f"[{opt}][v]{WRAP}[app]"
            else:
                expected = f"[{opt}]{WRAP}[v][app]"
            assert shim(opt, "v", "app") == expected, opt


def test_sbatch_array_with_shipped_script(slurm, tmp_path):
    name = "array-" + uuid.uuid4().hex[:8]
    env = slurm_env(tmp_path)
    script = 'echo "$SLURM_ARRAY_TASK_ID" > "out.$SLURM_ARRAY_TASK_ID"'
    proc = subprocess.run(
        ["sbatch", "--parsable", "--array=1-3", "-J", name,
         "--chdir", str(tmp_path), "-o", str(tmp_path / "slurm-%A_%a.out"),
         str(SLURM_WRAPPERS / "job.sbatch"), "sh", "-c", script],
        env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    array_id = proc.stdout.strip().split(";")[0]
    assert array_id.isdigit(), proc.stdout
    jobs = wait_done(name, env, 3)
    assert {j["ArrayJobId"] for j in jobs} == {array_id}
    assert all(j["JobState"] == "COMPLETED" for j in jobs), jobs
    by_task = {j["ArrayTaskId"]: j for j in jobs}
    assert sorted(by_task) == ["1", "2", "3"]
    for k in ("1", "2", "3"):
        assert (tmp_path / f"out.{k}").read_text() == k + "\n"

    traces = summaries(tmp_path)
    assert len(traces) == 3, [s.get("task") for s in traces]
    host = socket.gethostname().split(".")[0]
    seen = set()
    for summary in traces:
        k = summary["task"]["slurm"]["array_task_id"]
        seen.add(k)
        check_slurm_task(summary, {
            "job_id": by_task[k]["JobId"], "array_job_id": array_id,
            "array_task_id": k, "step_id": "0", "procid": "0",
            "nodename": host, "job_name": name}, name)
    assert seen == {"1", "2", "3"}
    # Array element ids are distinct jobs of one array.
    assert len({j["JobId"] for j in jobs}) == 3
    assert Path(tmp_path / f"slurm-{array_id}_1.out").exists()


def test_snakemake_jobs_through_slurm(slurm, tmp_path):
    """The shipped Snakemake job script on a real cluster: each job is a Slurm
    job (`srun` as Snakemake's synchronous submit command); its trace names
    both the Snakemake job and the Slurm job it ran in."""
    from test_snakemake import SNAKEFILE, snakemake_jobs
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed: run ci/install-packages.sh")
    home = tmp_path / "home"
    home.mkdir()
    (home / "iowrap").symlink_to(IOWRAP)
    (home / "snakemake").symlink_to(ROOT / "wrappers" / "snakemake")
    tag = uuid.uuid4().hex[:6]
    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "config.yaml").write_text(
        f'cluster-sync: "srun -J smk{tag}-{{rule}}-{{jobid}}"\n'
        f"jobscript: {ROOT / 'wrappers' / 'snakemake' / 'jobscript.sh'}\n"
        "jobs: 2\nlatency-wait: 5\n")
    wf = tmp_path / "wf"
    wf.mkdir()
    (wf / "Snakefile").write_text(SNAKEFILE)
    (wf / "samples.txt").write_text("a1\nb1\nc1\na2\n")
    env = slurm_env(tmp_path, IOWRAP_HOME=str(home), CI="true")
    del env["IOWRAP_ROOT"]
    env.pop("IOWRAP", None)
    proc = subprocess.run(["snakemake", "--profile", str(profile)], cwd=wf,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (wf / "merged.txt").read_text() == "A1\nA2\nB1\nC1\n"
    (log,) = re.findall(r"^Complete log: (\S+)$", proc.stderr, re.M)
    jobs = snakemake_jobs((wf / log).read_text())
    assert len(jobs) == 7, jobs

    import json
    traces = [json.loads(p.read_text()) for p in wf.rglob("summary.json")]
    assert len(traces) == 7, [t.get("task") for t in traces]
    for summary in traces:
        task = summary["task"]
        assert task["engine"] == "snakemake", task
        smk = task["snakemake"]
        job = jobs[smk["jobid"]]
        assert smk["rule"] == job["rule"]
        (record,) = jobs_named(f"smk{tag}-{job['rule']}-{smk['jobid']}", env)
        assert task["slurm"]["job_id"] == record["JobId"], task
        assert task["slurm"]["step_id"] == "0", task
