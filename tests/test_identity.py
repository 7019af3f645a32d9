"""Task identity and trace placement (issue 4): summary.json's "task"
object as detected from inside real Nextflow-style, Snakemake-style,
Slurm, Airflow and Kubernetes tasks, --root DIR/HOST/KEY placement with
many tasks writing at once, and hostile identity input.

Nextflow cannot be installed here, so its work directory is reproduced as
Nextflow 24.04 (and 23.10, for the older header) writes it: .command.run
from nextflow/executor/command-run.txt rendered by BashWrapperBuilder for
the local executor, .command.sh with the shebang the `shell` directive
gives it, and .command.env written by the task's `env` output capture.
It is run the way the local executor runs it (`/bin/bash -ue .command.run`
in the work directory); nxf_launch runs `${interpreter} .command.sh`, the
interpreter being .command.sh's shebang, which is where the wrapper config
(shell = ['/path/iowrap', '--', '/bin/bash', '-euo', 'pipefail']) puts
iowrap."""
import concurrent.futures
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import IOWRAP

HASH = "3f/a2b4c6d8e9f0011223344556677889"  # 2 + 30 hex digits
HOST = "".join(c if c.isalnum() or c in "._-" else "_"
               for c in socket.gethostname().split(".")[0]) or "localhost"
if HOST.startswith("."):
    HOST = "_" + HOST[1:]
NOBODY = 65534
FASTQ = "@r1\nACGT\n+\nIIII\n"


def clean_env(**extra):
    """Only PATH, so that the CI's own Slurm/Kubernetes/Nextflow variables
    cannot leak into the identity under test."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env.update(extra)
    return env


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("timeout", 120)
    return subprocess.run([str(c) for c in cmd], **kw)


def task_of(trace_dir):
    return json.loads((Path(trace_dir) / "summary.json").read_text())["task"]


def sources(task):
    return {s["field"]: s["from"] for s in task["sources"]}


# ---------------------------------------------------------------- Nextflow

NF24_METADATA = """### ---
### name: '{name}'
### outputs:
### - '{output}'
### ...
"""
NF23_METADATA = "# NEXTFLOW TASK: {name}\n"

# command-run.txt (v24.04.4) as BashWrapperBuilder renders it for the local
# executor without container: `##` template comments and null placeholders
# dropped, the rest verbatim.
COMMAND_RUN = r"""#!/bin/bash
{metadata}set -e
set -u
NXF_DEBUG=${{NXF_DEBUG:=0}}; [[ $NXF_DEBUG > 1 ]] && set -x
NXF_ENTRY=${{1:-nxf_main}}


nxf_sleep() {{
  sleep $1 2>/dev/null || sleep 1;
}}

nxf_date() {{
    local ts=$(date +%s%3N);
    if [[ ${{#ts}} == 10 ]]; then echo ${{ts}}000
    elif [[ $ts == *%3N ]]; then echo ${{ts/\%3N/000}}
    elif [[ $ts == *3N ]]; then echo ${{ts/3N/000}}
    elif [[ ${{#ts}} == 13 ]]; then echo $ts
    else echo "Unexpected timestamp value: $ts"; exit 1
    fi
}}

nxf_env() {{
    echo '============= task environment ============='
    env | sort | sed "s/\(.*\)AWS\(.*\)=\(.\{{6\}}\).*/\1AWS\2=\3xxxxxxxxxxxxx/"
    echo '============= task output =================='
}}

nxf_kill() {{
    declare -a children
    while read P PP;do
        children[$PP]+=" $P"
    done < <(ps -e -o pid= -o ppid=)

    kill_all() {{
        [[ $1 != $$ ]] && kill $1 2>/dev/null || true
        for i in ${{children[$1]:=}}; do kill_all $i; done
    }}

    kill_all $1
}}

nxf_mktemp() {{
    local base=${{1:-/tmp}}
    mkdir -p "$base"
    if [[ $(uname) = Darwin ]]; then mktemp -d $base/nxf.XXXXXXXXXX
    else TMPDIR="$base" mktemp -d -t nxf.XXXXXXXXXX
    fi
}}

nxf_fs_copy() {{
  local source=$1
  local target=$2
  local basedir=$(dirname $1)
  mkdir -p $target/$basedir
  cp -fRL $source $target/$basedir
}}

nxf_fs_move() {{
  local source=$1
  local target=$2
  local basedir=$(dirname $1)
  mkdir -p $target/$basedir
  mv -f $source $target/$basedir
}}

nxf_fs_rsync() {{
  rsync -rRl $1 $2
}}

nxf_fs_rclone() {{
  rclone copyto $1 $2/$1
}}

nxf_fs_fcp() {{
  fcp $1 $2/$1
}}

on_exit() {{
    exit_status=${{nxf_main_ret:=$?}}
    printf -- $exit_status > {workdir}/.exitcode
    set +u
{cleanup}    exit $exit_status
}}

on_term() {{
    set +e
    [[ "$pid" ]] && nxf_kill $pid
}}

nxf_launch() {{
    {interpreter} {workdir}/.command.sh
}}

nxf_stage() {{
    true
    # stage input files
    rm -f {input_name}
    ln -s {input} {input_name}
}}

nxf_unstage() {{
    true
{unstage}}}

nxf_main() {{
    trap on_exit EXIT
    trap on_term TERM INT USR2
    trap '' USR1

    [[ "${{NXF_CHDIR:-}}" ]] && cd "$NXF_CHDIR"
    {scratch_cmd}
    [[ $NXF_DEBUG > 0 ]] && nxf_env
    touch {workdir}/.command.begin
    set +u
    set -u
    [[ $NXF_SCRATCH ]] && cd $NXF_SCRATCH
    export NXF_TASK_WORKDIR="$PWD"
    nxf_stage

    set +e
    (set -o pipefail; (nxf_launch | tee .command.out) 3>&1 1>&2 2>&3 | tee .command.err) &
    pid=$!
    wait $pid || nxf_main_ret=$?
    nxf_unstage
}}

$NXF_ENTRY
"""

UNSTAGE_SCRATCH = """    cp .command.out {workdir}/.command.out || true
    cp .command.err {workdir}/.command.err || true
    cp .command.env {workdir}/.command.env || true
    [[ ${{nxf_main_ret:=0}} != 0 ]] && return
    IFS=$'\\n'
    for name in $(eval "ls -1d {output}" | sort | uniq); do
        nxf_fs_copy "$name" {workdir} || true
    done
    unset IFS
"""

# The task script, normalised by TaskProcessor.normalizeScript (shebang
# from the shell directive), then the `env FOO` output capture
# (command-env.txt and BashWrapperBuilder.appendOutEnv).
COMMAND_SH = """#!{interpreter}
wc -l < {input_name} > {output}
echo "FASTQC done"
FOO="bar baz"
# capture process environment
set +u
set +e
cd "$NXF_TASK_WORKDIR"

nxf_eval_cmd() {{
    {{
        IFS=$'\\n' read -r -d '' "${{1}}";
        IFS=$'\\n' read -r -d '' "${{2}}";
        (IFS=$'\\n' read -r -d '' _ERRNO_; return ${{_ERRNO_}});
    }} < <((printf '\\0%s\\0%d\\0' "$(((({{ shift 2; "${{@}}"; echo "${{?}}" 1>&3-; }} | tr -d '\\0' 1>&4-) 4>&2- 2>&1- | tr -d '\\0' 1>&4-) 3>&1- | exit "$(cat)") 4>&1-)" "${{?}}" 1>&2) 2>&1)
}}

echo '' > .command.env
#
echo FOO="${{FOO[@]}}" >> .command.env
echo /FOO/ >> .command.env
"""


def nextflow_workdir(base, version="24", scratch=None,
                     name="FASTQC (sample_1)", extra_iowrap_args=()):
    """Writes base/work/3f/<hash>/ as Nextflow would; returns it."""
    workdir = base / "work" / HASH
    workdir.mkdir(parents=True)
    data = base / "data"
    data.mkdir(exist_ok=True)
    (data / "sample_1.fastq").write_text(FASTQ)
    interpreter = " ".join([str(IOWRAP), *extra_iowrap_args, "--",
                            "/bin/bash", "-euo", "pipefail"])
    fields = dict(workdir=workdir, interpreter=interpreter,
                  input=data / "sample_1.fastq", input_name="sample_1.fastq",
                  output="sample_1_fastqc.txt", name=name)
    meta = NF24_METADATA if version == "24" else NF23_METADATA
    fields["metadata"] = meta.format(**fields)
    if scratch:
        fields["scratch_cmd"] = 'NXF_SCRATCH="$(set +u; nxf_mktemp $TMPDIR)"'
        fields["cleanup"] = "    rm -rf $NXF_SCRATCH || true\n"
        fields["unstage"] = UNSTAGE_SCRATCH.format(**fields)
    else:
        fields["scratch_cmd"] = "NXF_SCRATCH=''"
        fields["cleanup"] = ""
        fields["unstage"] = "    [[ ${nxf_main_ret:=0} != 0 ]] && return\n"
    (workdir / ".command.run").write_text(COMMAND_RUN.format(**fields))
    (workdir / ".command.sh").write_text(COMMAND_SH.format(**fields))
    return workdir


def stage_input(workdir):
    """What nxf_stage does, for tests that run .command.sh directly."""
    (workdir / "sample_1.fastq").symlink_to(
        workdir.parents[2] / "data" / "sample_1.fastq")


def run_nextflow_task(workdir, **env):
    """The local executor's launch: /bin/bash -ue .command.run in workdir."""
    return run(["/bin/bash", "-ue", ".command.run"], cwd=workdir,
               env=clean_env(**env))


@pytest.mark.parametrize("version", ["24", "23"])
def test_nextflow_work_directory(tmp_path, version):
    workdir = nextflow_workdir(tmp_path, version)
    proc = run_nextflow_task(workdir)
    assert proc.returncode == 0, proc
    assert (workdir / ".exitcode").read_text() == "0"
    assert (workdir / ".command.out").read_text() == "FASTQC done\n"
    # iowrap said nothing: .command.err is the task's stderr only.
    assert (workdir / ".command.err").read_text() == ""
    assert (workdir / ".command.env").read_text() == "\nFOO=bar baz\n/FOO/\n"
    assert (workdir / "sample_1_fastqc.txt").read_text() == "4\n"

    # Default placement: <workdir>/.iowrap
    trace = workdir / ".iowrap"
    summary = json.loads((trace / "summary.json").read_text())
    assert summary["command"] == ["/bin/bash", "-euo", "pipefail",
                                  f"{workdir}/.command.sh"]
    task = summary["task"]
    assert task["key"] == "nf-" + HASH.replace("/", "-")
    assert task["name"] == "FASTQC (sample_1)"
    assert task["engine"] == "nextflow"
    assert task["labels"] == {}
    assert task["nextflow"] == {
        "workdir": str(workdir),
        "hash": HASH,
        "name": "FASTQC (sample_1)",
        "process": "FASTQC",
    }
    assert sources(task) == {
        "nextflow.workdir": "argv[3] .command.sh path",
        "nextflow.hash": "nextflow.workdir's last two components",
        "nextflow.name": ".command.run header",
        "nextflow.process": 'nextflow.name before " ("',
        "name": "nextflow",
        "key": "nextflow",
    }
    assert task["warnings"] == []
    assert "slurm" not in task and "snakemake" not in task
    # The traced process tree is the task's: bash, wc, and the capture.
    exes = {r.split(",")[5] for r in
            (trace / "procs.csv").read_text().splitlines()[1:]}
    assert "/bin/bash" in exes or "/usr/bin/bash" in exes
    assert any(e.endswith("/wc") for e in exes)


def test_nextflow_scratch(tmp_path):
    """scratch true: the task runs in $TMPDIR/nxf.XXXXXXXXXX, which is
    NXF_TASK_WORKDIR; the trace still goes to the real work directory,
    which outlives the scratch directory."""
    tmpdir = tmp_path / "nodetmp"
    workdir = nextflow_workdir(tmp_path, scratch=True)
    proc = run_nextflow_task(workdir, TMPDIR=str(tmpdir))
    assert proc.returncode == 0, proc
    assert (workdir / ".command.out").read_text() == "FASTQC done\n"
    assert (workdir / "sample_1_fastqc.txt").read_text() == "4\n"
    assert list(tmpdir.iterdir()) == []  # the scratch dir was removed
    task = task_of(workdir / ".iowrap")
    nf = task["nextflow"]
    assert nf["workdir"] == str(workdir)
    assert nf["scratch_dir"].startswith(f"{tmpdir}/nxf.")
    assert len(nf["scratch_dir"]) == len(f"{tmpdir}/nxf.") + 10
    assert nf["hash"] == HASH
    assert nf["name"] == "FASTQC (sample_1)"
    assert sources(task)["nextflow.scratch_dir"] == "env NXF_TASK_WORKDIR"
    assert task["warnings"] == []


def test_nextflow_workdir_from_env_only(tmp_path):
    """No .command.sh among the arguments: NXF_TASK_WORKDIR names the work
    directory; a scratch directory (no .command.run) gives no hash, no
    warning, and no default placement in it."""
    scratch = tmp_path / "nxf.AbCdEfGhIj"
    scratch.mkdir()
    proc = run([IOWRAP, "--", "/bin/sh", "-c", "echo hi"], cwd=scratch,
               env=clean_env(NXF_TASK_WORKDIR=str(scratch)))
    assert proc.returncode == 0 and proc.stdout == b"hi\n", proc
    assert proc.stderr == b""
    [trace] = list(scratch.glob("iowrap.*"))
    task = task_of(trace)
    assert task["engine"] == "nextflow"
    assert task["nextflow"] == {"workdir": str(scratch)}
    assert sources(task)["nextflow.workdir"] == (
        "env NXF_TASK_WORKDIR (the scratch dir if scratch is on)")
    assert task["name"] == "sh" and task["warnings"] == []

    # The real work directory: its .command.run names the task and it
    # gets the default .iowrap placement.
    workdir = nextflow_workdir(tmp_path)
    proc = run([IOWRAP, "--", "/bin/true"], cwd=tmp_path,
               env=clean_env(NXF_TASK_WORKDIR=str(workdir)))
    assert proc.returncode == 0, proc
    task = task_of(workdir / ".iowrap")
    assert task["nextflow"]["name"] == "FASTQC (sample_1)"
    assert task["key"] == "nf-" + HASH.replace("/", "-")


def test_nextflow_rerun_gets_suffix(tmp_path):
    """Running the same .command.run twice (debugging, `bash .command.run`)
    keeps the first trace and writes the second to .iowrap-2."""
    workdir = nextflow_workdir(tmp_path)
    assert run_nextflow_task(workdir).returncode == 0
    proc = run_nextflow_task(workdir)
    assert proc.returncode == 0
    assert (workdir / ".command.err").read_text() == (
        f"iowrap: trace directory .iowrap was taken by another task; "
        f"writing to {workdir}/.iowrap-2\n")
    assert task_of(workdir / ".iowrap")["key"] == task_of(
        workdir / ".iowrap-2")["key"]


def test_nextflow_root_and_options(tmp_path):
    """With --root in the shell directive the trace goes to ROOT/HOST/KEY,
    the key being Nextflow's hash."""
    root = tmp_path / "traces"
    workdir = nextflow_workdir(tmp_path, extra_iowrap_args=[
        "--root", str(root), "--label", "run=tiny_euler", "--level",
        "full"])
    assert run_nextflow_task(workdir).returncode == 0
    key = "nf-" + HASH.replace("/", "-")
    summary = json.loads((root / HOST / key / "summary.json").read_text())
    files = {f["path"]: f for f in summary["files"]}
    # The task's input (through its staged link) and outputs.
    assert files[f"{workdir}/sample_1.fastq"]["read"]["bytes"] == len(FASTQ)
    assert files[f"{workdir}/sample_1_fastqc.txt"]["write"]["bytes"] == 2
    assert files[f"{workdir}/.command.env"]["write"]["bytes"] == len(
        "\nFOO=bar baz\n/FOO/\n")
    task = summary["task"]
    assert task["key"] == key
    assert task["labels"] == {"run": "tiny_euler"}
    assert not (workdir / ".iowrap").exists()


# --------------------------------------------------------------- Snakemake

def snakemake_properties(rule, jobid, wildcards, inputs, outputs):
    """What Snakemake 7.21 Job.properties() writes (json.dumps of this
    dict, in this order)."""
    return json.dumps({
        "type": "single", "rule": rule, "local": False, "input": inputs,
        "output": outputs, "wildcards": wildcards, "params": {},
        "log": [], "threads": 1,
        "resources": {"mem_mb": 1000, "disk_mb": 1000, "tmpdir": "/tmp"},
        "jobid": jobid, "cluster": {}})


def write_jobscript(path, props, body):
    # snakemake/executors/jobscript.sh: "#!/bin/sh\n# properties = ...\n"
    path.write_text(f"#!/bin/sh\n# properties = {props}\n{body}\n")
    path.chmod(0o755)


def test_snakemake_parent_jobscript(tmp_path):
    """The job script calls iowrap: iowrap reads the script its parent
    shell runs (/proc/PPID/cmdline)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("alpha\n")
    root = tmp_path / "R"
    props = snakemake_properties("map", 3, {"sample": "a", "n": "2"},
                                 ["data/a.txt"], ["out/a.txt"])
    script = tmp_path / ".snakemake" / "tmp.x" / "snakejob.map.3.sh"
    script.parent.mkdir(parents=True)
    write_jobscript(script, props,
                    f"mkdir -p out\n{IOWRAP} --root {root} -- "
                    "sh -c 'cat data/a.txt > out/a.txt'")
    # Relative script path: resolved against the parent's cwd.
    proc = run(["/bin/sh", script.relative_to(tmp_path)], cwd=tmp_path,
               env=clean_env())
    assert proc.returncode == 0 and proc.stderr == b"", proc
    assert (tmp_path / "out" / "a.txt").read_text() == "alpha\n"
    task = task_of(root / HOST / "smk-map-3")
    assert task["engine"] == "snakemake"
    assert task["name"] == "map[sample=a,n=2]"
    assert task["snakemake"] == {"rule": "map", "jobid": "3",
                                 "wildcards": {"sample": "a", "n": "2"}}
    src = sources(task)
    assert src["snakemake.rule"].startswith("parent pid ")
    assert src["snakemake.rule"].endswith(
        " argv[1] job script properties")
    assert task["warnings"] == []


def test_snakemake_argv_jobscript(tmp_path):
    props = snakemake_properties("merge", 7, {}, ["a", "b"], ["c"])
    script = tmp_path / "snakejob.merge.7.sh"
    write_jobscript(script, props, "echo merged")
    proc = run([IOWRAP, "--root", tmp_path / "R", "--", "/bin/sh", script],
               env=clean_env())
    assert proc.returncode == 0 and proc.stdout == b"merged\n", proc
    task = task_of(tmp_path / "R" / HOST / "smk-merge-7")
    assert task["snakemake"] == {"rule": "merge", "jobid": "7",
                                 "wildcards": {}}
    assert task["name"] == "merge"
    assert sources(task)["snakemake.jobid"] == (
        "argv[1] job script properties")


def test_snakemake_env_and_slurm_together(tmp_path):
    """The shipped profile's environment; Slurm around it: the workflow
    engine is the more specific identity, Slurm is kept too."""
    env = clean_env(IOWRAP_SNAKEMAKE_RULE="call", IOWRAP_SNAKEMAKE_JOBID="12",
                    IOWRAP_SNAKEMAKE_WILDCARDS="sample=b,chrom=2",
                    SLURM_JOB_ID="77", SLURM_JOB_NAME="snakejob")
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "true"], env=env)
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / "t")
    assert task["engine"] == "snakemake"
    assert task["key"] == "smk-call-12"
    assert task["name"] == "call[sample=b,chrom=2]"
    assert task["snakemake"] == {"rule": "call", "jobid": "12",
                                 "wildcards": {"sample": "b", "chrom": "2"}}
    assert task["slurm"] == {"job_id": "77", "job_name": "snakejob"}
    assert sources(task)["snakemake.wildcards"] == (
        "env IOWRAP_SNAKEMAKE_WILDCARDS")


def test_snakemake_group_jobscript_is_no_single_job(tmp_path):
    """A group job's script (Snakemake 7.21 GroupJob.properties(): type
    "group", its groupid, its own jobid, a UUID; no rule, no wildcards):
    the group and its job id, never the UUID as a job's jobid.  Before,
    the UUID was taken for snakemake.jobid and the task had no name."""
    props = json.dumps({
        "type": "group", "groupid": "g", "local": False,
        "input": ["a"], "output": ["b", "c"], "threads": 1,
        "resources": {"mem_mb": 1000},
        "jobid": "2b662ff2-97b2-5f8b-85c8-c8f90a05fff2", "cluster": {}})
    script = tmp_path / "snakejob.g.2b662ff2.sh"
    write_jobscript(script, props, "echo grouped")
    proc = run([IOWRAP, "--root", tmp_path / "R", "--", "/bin/sh", script],
               env=clean_env())
    assert proc.returncode == 0 and proc.stdout == b"grouped\n", proc
    key = "smk-group-2b662ff2-97b2-5f8b-85c8-c8f90a05fff2"
    task = task_of(tmp_path / "R" / HOST / key)
    assert task["snakemake"] == {
        "group": "g", "group_jobid": "2b662ff2-97b2-5f8b-85c8-c8f90a05fff2"}
    assert task["engine"] == "snakemake" and task["name"] == "group g"
    assert sources(task)["snakemake.group_jobid"] == (
        "argv[1] job script properties")


def test_snakemake_group_env(tmp_path):
    """What jobscript.sh and bin/bash export for a job of a group job: its
    rule and wildcards, the group, the group job's id and rules; no jobid
    (the main Snakemake process's job number is not known inside)."""
    env = clean_env(IOWRAP_SNAKEMAKE_RULE="consume",
                    IOWRAP_SNAKEMAKE_WILDCARDS="sample=a",
                    IOWRAP_SNAKEMAKE_GROUP="dc2f1c3e-pipe",
                    IOWRAP_SNAKEMAKE_GROUP_JOBID="5f0c",
                    IOWRAP_SNAKEMAKE_GROUP_RULES="consume,produce")
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "true"], env=env)
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / "t")
    assert task["snakemake"] == {
        "rule": "consume", "group": "dc2f1c3e-pipe", "group_jobid": "5f0c",
        "group_rules": "consume,produce", "wildcards": {"sample": "a"}}
    assert task["key"] == "smk-consume-5f0c"
    assert task["name"] == "consume[sample=a]"
    assert sources(task)["snakemake.group_rules"] == (
        "env IOWRAP_SNAKEMAKE_GROUP_RULES")
    # The rule not known: the group names the task.
    del env["IOWRAP_SNAKEMAKE_RULE"], env["IOWRAP_SNAKEMAKE_WILDCARDS"]
    proc = run([IOWRAP, "-o", tmp_path / "u", "--", "true"], env=env)
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / "u")
    assert task["snakemake"] == {
        "group": "dc2f1c3e-pipe", "group_jobid": "5f0c",
        "group_rules": "consume,produce"}
    assert (task["engine"], task["name"], task["key"]) == (
        "snakemake", "group dc2f1c3e-pipe", "smk-group-5f0c")


# ------------------------------------------------- Slurm, Airflow, Kubernetes

SLURM_ENV = {
    "SLURM_JOB_ID": "123", "SLURM_ARRAY_JOB_ID": "120",
    "SLURM_ARRAY_TASK_ID": "3", "SLURM_STEP_ID": "0", "SLURM_PROCID": "1",
    "SLURM_LOCALID": "1", "SLURM_NODEID": "0", "SLURMD_NODENAME": "n1",
    "SLURM_JOB_NAME": "map",
}


def test_slurm_identity(tmp_path):
    proc = run([IOWRAP, "--root", tmp_path, "--", "true"],
               env=clean_env(**SLURM_ENV))
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / HOST / "slurm-120_3.0.1")
    assert task["engine"] == "slurm"
    assert task["name"] == "map (job 120_3, step 0, task 1)"
    assert task["slurm"] == {
        "job_id": "123", "array_job_id": "120", "array_task_id": "3",
        "step_id": "0", "procid": "1", "localid": "1", "nodeid": "0",
        "nodename": "n1", "job_name": "map"}
    src = sources(task)
    assert src["slurm.job_id"] == "env SLURM_JOB_ID"
    assert src["slurm.nodename"] == "env SLURMD_NODENAME"


def test_airflow_identity(tmp_path):
    env = clean_env(AIRFLOW_CTX_DAG_ID="etl", AIRFLOW_CTX_TASK_ID="load",
                    AIRFLOW_CTX_DAG_RUN_ID="manual__2024-05-01T10:00:00+00:00",
                    AIRFLOW_CTX_TRY_NUMBER="2", SLURM_JOB_ID="9")
    proc = run([IOWRAP, "--root", tmp_path, "--", "true"], env=env)
    assert proc.returncode == 0, proc
    key = "af-etl-load-manual__2024-05-01T10_00_00_00_00-2"
    task = task_of(tmp_path / HOST / key)
    assert task["engine"] == "airflow"
    assert task["name"] == "etl.load"
    assert task["airflow"] == {
        "dag_id": "etl", "task_id": "load",
        "dag_run_id": "manual__2024-05-01T10:00:00+00:00",
        "try_number": "2"}
    assert task["slurm"] == {"job_id": "9"}


def test_kubernetes_identity(tmp_path):
    podinfo = tmp_path / "podinfo"
    podinfo.mkdir()
    # What the kubelet writes for a downward API volume item
    # fieldPath: metadata.labels (key=%q lines, sorted, no final newline).
    (podinfo / "labels").write_text(
        'app="nextflow"\n'
        'nextflow.io/processName="FASTQC"\n'
        'nextflow.io/taskName="FASTQC_sample_1"\n'
        'odd="a\\"b\\\\c\\u00e9"')
    env = clean_env(POD_NAME="nf-3fa2b4", POD_NAMESPACE="genomics",
                    POD_UID="6f1c-11ee", NODE_NAME="worker-2",
                    IOWRAP_K8S_PODINFO=str(podinfo))
    proc = run([IOWRAP, "--root", tmp_path / "R", "--", "true"], env=env)
    assert proc.returncode == 0 and proc.stderr == b"", proc
    task = task_of(tmp_path / "R" / HOST / "k8s-genomics-nf-3fa2b4")
    assert task["engine"] == "kubernetes"
    assert task["name"] == "nf-3fa2b4"
    assert task["kubernetes"] == {
        "pod_name": "nf-3fa2b4", "namespace": "genomics",
        "pod_uid": "6f1c-11ee", "node_name": "worker-2",
        "labels": {"app": "nextflow", "nextflow.io/processName": "FASTQC",
                   "nextflow.io/taskName": "FASTQC_sample_1",
                   "odd": 'a"b\\c\u00e9'}}
    src = sources(task)
    assert src["kubernetes.pod_name"] == "env POD_NAME"
    assert src["kubernetes.labels"] == f"{podinfo}/labels"

    # IOWRAP_K8S_* take precedence over the common names.
    env["IOWRAP_K8S_POD_NAME"] = "explicit"
    proc = run([IOWRAP, "-o", tmp_path / "t2", "--", "true"], env=env)
    assert task_of(tmp_path / "t2")["kubernetes"]["pod_name"] == "explicit"


def test_task_and_labels_override(tmp_path):
    env = clean_env(**SLURM_ENV)
    proc = run([IOWRAP, "--root", tmp_path, "--task", "align sample/1",
                "--label", "project=x", "--label", "sample=s1",
                "--label", "project=y", "--", "true"], env=env)
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / HOST / "align_sample_1")
    assert task["name"] == "align sample/1"
    assert task["key"] == "align_sample_1"
    assert task["engine"] == "slurm"
    assert list(task["labels"].items()) == [("project", "y"),
                                            ("sample", "s1")]
    src = sources(task)
    assert src["name"] == "option --task" and src["key"] == "option --task"
    assert src["labels"] == "option --label"


def test_no_identity(tmp_path):
    proc = run([IOWRAP, "--root", tmp_path, "--", "/bin/true"],
               env=clean_env())
    assert proc.returncode == 0, proc
    [d] = list((tmp_path / HOST).iterdir())
    task = task_of(d)
    assert task["engine"] == "none"
    assert task["name"] == "true"
    assert task["key"] == d.name
    # time+host+pid+random
    m = re.fullmatch(r"(\d{8}T\d{6}Z)-(.+)-(\d+)-([0-9a-f]{8})", d.name)
    assert m and m.group(2) == HOST, d.name
    assert sources(task)["key"] == "time+host+pid+random"


@pytest.mark.parametrize("args,message", [
    (["--label", "novalue"],
     "iowrap: --label takes KEY=VALUE with a KEY of 1 to 256 letters, "
     "digits, '.', '_', '-' or '/', not 'novalue'; see iowrap --help\n"),
    (["--label", "=v"],
     "iowrap: --label takes KEY=VALUE with a KEY of 1 to 256 letters, "
     "digits, '.', '_', '-' or '/', not '=v'; see iowrap --help\n"),
    (["--task", ""],
     "iowrap: --task takes a name of 1 to 4096 bytes, not ''; "
     "see iowrap --help\n"),
    (["--root", ""], "iowrap: --root needs a directory; see iowrap --help\n"),
    (["-f", "-o", ""], "iowrap: -o needs a directory; see iowrap --help\n"),
])
def test_bad_options(tmp_path, args, message):
    proc = run([IOWRAP, *args, "--", "touch", tmp_path / "ran"],
               env=clean_env(), text=True, cwd=tmp_path)
    assert proc.returncode == 125
    assert proc.stderr == message
    assert not (tmp_path / "ran").exists()


UNSET = "an unset or empty variable before"


@pytest.mark.parametrize("args,message", [
    # `-o $UNSET --`: getopt takes "--" as the value; the trace went to ./--
    (["-o", "--"], f"option '-o' has '--' as its value: {UNSET} '--'?"),
    (["-fo", "--"], f"option '-o' has '--' as its value: {UNSET} '--'?"),
    (["--root", "--"],
     f"option '--root' has '--' as its value: {UNSET} '--'?"),
    (["--task", "--"],
     f"option '--task' has '--' as its value: {UNSET} '--'?"),
    (["--output=--", "--"],
     f"option '--output' has '--' as its value: {UNSET} '--'?"),
    (["--level", "--"],
     f"option '--level' has '--' as its value: {UNSET} '--'?"),
    # `--root $UNSET --task x --`: the next option would be the value.
    (["--root", "--task", "x", "--"],
     f"option '--root' would take '--task' as its value: {UNSET} it? "
     "(a value starting with '-' is given attached: --root=--task)"),
    (["-o", "-f", "--"],
     f"option '-o' would take '-f' as its value: {UNSET} it? "
     "(a value starting with '-' is given attached: -o-f)"),
    (["--task", "-x", "--"],
     f"option '--task' would take '-x' as its value: {UNSET} it? "
     "(a value starting with '-' is given attached: --task=-x)"),
])
def test_a_value_an_unset_variable_gave_is_refused(tmp_path, args, message):
    proc = run([IOWRAP, *args, "touch", tmp_path / "ran"], env=clean_env(),
               text=True, cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (
        125, f"iowrap: {message}; see iowrap --help\n")
    assert os.listdir(tmp_path) == []


def test_a_value_starting_with_dash_attached_is_taken(tmp_path):
    """Only a value in its own word is suspect: a directory or task name
    that starts with '-' is given attached."""
    proc = run([IOWRAP, "--task=-t", "-o-d", "--", "true"], env=clean_env(),
               text=True, cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    summary = json.loads((tmp_path / "-d" / "summary.json").read_text())
    assert summary["task"]["name"] == "-t"


# --------------------------------------------------------------- Placement

def test_env_root_and_precedence(tmp_path):
    env = clean_env(IOWRAP_ROOT=str(tmp_path / "envroot"))
    assert run([IOWRAP, "--task", "t", "--", "true"],
               env=env).returncode == 0
    assert (tmp_path / "envroot" / HOST / "t" / "summary.json").exists()
    # --root beats IOWRAP_DIR beats IOWRAP_ROOT; -o beats --root.
    env["IOWRAP_DIR"] = str(tmp_path / "envdir")
    assert run([IOWRAP, "--task", "t", "--", "true"],
               env=env).returncode == 0
    assert (tmp_path / "envdir" / "summary.json").exists()
    assert run([IOWRAP, "--root", tmp_path / "opt", "--task", "t", "--",
                "true"], env=env).returncode == 0
    assert (tmp_path / "opt" / HOST / "t" / "summary.json").exists()
    assert run([IOWRAP, "-o", tmp_path / "o", "--root", tmp_path / "opt",
                "--task", "t", "--", "true"], env=env).returncode == 0
    assert task_of(tmp_path / "o")["key"] == "t"
    assert not (tmp_path / "opt" / HOST / "t-2").exists()


def runs_untraced(root, problem):
    """ROOT/HOST is refused with one line naming the problem and the fix;
    the task runs all the same."""
    proc = run([IOWRAP, "--root", root, "--task", "t", "--", "echo", "ok"],
               env=clean_env(), text=True)
    assert proc.returncode == 0 and proc.stdout == "ok\n"
    assert proc.stderr == (
        f"iowrap: {root}/{HOST} {problem} (remove it or choose another "
        "--root); the task runs untraced\n")


def test_symlink_at_host_is_refused(tmp_path):
    root = tmp_path / "R"
    elsewhere = tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / HOST).symlink_to(elsewhere)
    runs_untraced(root, "is a symlink or not a directory; refusing to "
                  "follow it")
    assert list(elsewhere.iterdir()) == []
    # --strict: the task does not run.
    proc = run([IOWRAP, "--strict", "--root", root, "--", "true"],
               env=clean_env())
    assert proc.returncode == 125


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_host_dir_of_another_user_is_refused(tmp_path):
    """A HOST directory planted in a shared root by another user: root
    could write into it (CAP_DAC_OVERRIDE), so only the owner check stops
    the traces from landing where that user can read or swap them."""
    root = tmp_path / "R"
    (root / HOST).mkdir(parents=True)
    os.chown(root / HOST, 65534, 65534)
    runs_untraced(root, "belongs to uid 65534, not to you (uid 0); "
                  "refusing to write traces there")
    assert list((root / HOST).iterdir()) == []


def test_symlink_at_key_is_skipped(tmp_path):
    root = tmp_path / "R"
    (root / HOST).mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / HOST / "t").symlink_to(elsewhere)
    (root / HOST / "t-2").symlink_to(tmp_path / "dangling")
    proc = run([IOWRAP, "--root", root, "--task", "t", "--", "true"],
               env=clean_env(), text=True)
    assert proc.returncode == 0
    assert proc.stderr == (
        "iowrap: trace directory t was taken by another task; writing to "
        f"{root}/{HOST}/t-3\n")
    assert task_of(root / HOST / "t-3")["key"] == "t-3"
    assert list(elsewhere.iterdir()) == []
    assert not (tmp_path / "dangling").exists()


def test_long_key_suffix_stays_bounded(tmp_path):
    name = "x" * 200
    for _ in range(2):
        assert run([IOWRAP, "--root", tmp_path, "--task", name, "--",
                    "true"], env=clean_env()).returncode == 0
    names = sorted(p.name for p in (tmp_path / HOST).iterdir())
    assert names == ["x" * 118 + "-2", "x" * 120]
    assert task_of(tmp_path / HOST / names[0])["name"] == name


def test_200_concurrent_tasks_one_root(tmp_path):
    """100 tasks claim the same key, 50 have their own, 50 have none:
    every one gets its own complete trace directory."""
    root = tmp_path / "R"
    jobs = ([["--task", "same"]] * 100 +
            [["--task", f"own{i}"] for i in range(50)] + [[]] * 50)

    def one(args):
        return run([IOWRAP, "--root", root, *args, "--", "sh", "-c",
                    "echo $$"], env=clean_env(), text=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        procs = list(pool.map(one, jobs))
    assert all(p.returncode == 0 for p in procs), [
        p.stderr for p in procs if p.returncode]
    dirs = list((root / HOST).iterdir())
    assert len(dirs) == 200
    keys = []
    for d in dirs:
        summary = json.loads((d / "summary.json").read_text())
        assert summary["exit"]["code"] == 0
        assert summary["task"]["key"] == d.name
        assert (d / "procs.csv").read_text().startswith("time,ppid,pid,")
        keys.append(d.name)
    assert len(set(keys)) == 200
    assert {k for k in keys if k.startswith("same")} == (
        {"same"} | {f"same-{n}" for n in range(2, 101)})
    assert {k for k in keys if k.startswith("own")} == {
        f"own{i}" for i in range(50)}
    warned = [p for p in procs if "was taken by another task" in p.stderr]
    assert len(warned) == 99
    assert all(p.stderr.count("\n") == 1 for p in warned)
    # Each task's own output reached it: a pid per task.
    assert all(p.stdout.strip().isdigit() for p in procs)


# --------------------------------------------------------------- Bad input

def test_huge_env_values(tmp_path):
    """A value is capped at 4096 bytes.  One environment string cannot
    exceed 128 KiB on Linux (MAX_ARG_STRLEN), so eight of them make the
    1 MiB of hostile environment."""
    big = "j" * (128 * 1024 - len("SLURM_JOB_NAME=") - 1)
    env = clean_env(SLURM_JOB_ID="1", SLURM_JOB_NAME=big,
                    AIRFLOW_CTX_DAG_ID="d" * 131000,
                    **{f"FILLER{i}": "f" * 131000 for i in range(6)})
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "sh", "-c",
                'printf %s "$SLURM_JOB_NAME" | wc -c'], env=env, text=True)
    assert proc.returncode == 0
    assert proc.stdout == f"{len(big)}\n"  # the task saw it whole
    task = task_of(tmp_path / "t")
    assert task["slurm"]["job_name"] == "j" * 4096
    assert task["airflow"]["dag_id"] == "d" * 4096
    assert len(task["name"].encode()) <= 4096
    assert f"env SLURM_JOB_NAME: {len(big)} bytes, cut to 4096" in (
        task["warnings"])
    assert len(task["key"]) <= 120
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("iowrap: task identity: ")



@pytest.mark.parametrize("version", ["24", "23"])
def test_long_nextflow_name_is_cut_with_a_warning(tmp_path, version):
    """A .command.run header's name over 4096 bytes is cut and said, as an
    environment value is (it was cut silently)."""
    name = "FASTQC (" + "s" * 5000 + ")"
    workdir = nextflow_workdir(tmp_path, version, name=name)
    proc = run_nextflow_task(workdir)
    assert proc.returncode == 0, proc
    task = task_of(workdir / ".iowrap")
    assert task["nextflow"]["name"] == name[:4096]
    assert task["nextflow"]["process"] == "FASTQC"
    assert task["warnings"] == [".command.run header: 5009 bytes, cut to 4096"]


def test_long_wildcard_and_label_values_are_cut_with_a_warning(tmp_path):
    podinfo = tmp_path / "podinfo"
    podinfo.mkdir()
    (podinfo / "labels").write_text('a="1"\nl="' + "v" * 5000 + '"\n')
    env = clean_env(IOWRAP_K8S_PODINFO=str(podinfo),
                    IOWRAP_SNAKEMAKE_WILDCARDS="a=1,w=" + "x" * 5000)
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "true"], env=env,
               text=True)
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / "t")
    assert task["snakemake"]["wildcards"] == {"a": "1", "w": "x" * 4096}
    assert task["kubernetes"]["labels"] == {"a": "1", "l": "v" * 4096}
    assert task["warnings"] == [
        "env IOWRAP_SNAKEMAKE_WILDCARDS: a value was cut to 4096 bytes",
        f"{podinfo}/labels: a value was cut to 4096 bytes"]
    assert proc.stderr == (
        "iowrap: task identity: env IOWRAP_SNAKEMAKE_WILDCARDS: a value was "
        "cut to 4096 bytes; 1 more warnings in summary.json task.warnings\n")

def test_non_utf8_and_injected_values(tmp_path):
    injected = 't"\n}, "injected": {"x": 1'
    env = clean_env()
    env = {k.encode(): v.encode() for k, v in env.items()}
    env[b"AIRFLOW_CTX_DAG_ID"] = b"dag\xff\xfe\xc3"
    env[b"AIRFLOW_CTX_TASK_ID"] = injected.encode()
    env[b"AIRFLOW_CTX_DAG_RUN_ID"] = b"r\x01\x7f\t"
    env[b"IOWRAP_SNAKEMAKE_WILDCARDS"] = b"s=\xff,q=\"x\\"
    env[b"IOWRAP_SNAKEMAKE_RULE"] = b"r\nule"
    proc = run([IOWRAP, "-o", tmp_path / "t", "--label",
                "note=a\"b\n\\c\xe9", "--", "sh", "-c", "echo ok; exit 3"],
               env=env)
    assert proc.returncode == 3 and proc.stdout == b"ok\n", proc
    raw = (tmp_path / "t" / "summary.json").read_text(encoding="utf-8")
    task = json.loads(raw)["task"]
    assert task["airflow"]["dag_id"] == "dag\ufffd\ufffd\ufffd"
    assert task["airflow"]["task_id"] == injected
    assert task["airflow"]["dag_run_id"] == "r\x01\x7f\t"
    assert "injected" not in task
    assert task["snakemake"]["rule"] == "r\nule"
    assert task["snakemake"]["wildcards"] == {"s": "\ufffd", "q": '"x\\'}
    assert task["labels"] == {"note": "a\"b\n\\c\u00e9"}
    assert task["key"] == "smk-r_ule"
    assert task["engine"] == "snakemake"


def nobody_dir(base):
    """A directory uid 65534 can write, under a path it can reach."""
    d = Path(tempfile.mkdtemp(prefix="iowrap-id-", dir="/tmp"))
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    return d


def test_unreadable_command_run(tmp_path):
    base = nobody_dir(tmp_path)
    try:
        workdir = nextflow_workdir(base)
        for d in [base / "work", base / "work" / "3f", workdir,
                  base / "data"]:
            os.chown(d, NOBODY, NOBODY)
        os.chmod(workdir / ".command.sh", 0o644)
        os.chmod(workdir / ".command.run", 0o000)  # root's, unreadable
        stage_input(workdir)
        proc = run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                    "--clear-groups", IOWRAP, "--", "/bin/bash", "-euo",
                    "pipefail", workdir / ".command.sh"], cwd=workdir,
                   env=clean_env(NXF_TASK_WORKDIR=str(workdir)), text=True)
        assert proc.returncode == 0, proc
        assert proc.stdout == "FASTQC done\n"
        assert proc.stderr == (
            f"iowrap: task identity: .command.run: cannot read "
            f"{workdir}/.command.run: Permission denied; no task name\n")
        task = task_of(workdir / ".iowrap")
        assert task["nextflow"] == {"workdir": str(workdir), "hash": HASH}
        assert task["name"] == "bash" and task["engine"] == "nextflow"
        assert task["warnings"] == [
            f".command.run: cannot read {workdir}/.command.run: "
            "Permission denied; no task name"]
    finally:
        shutil.rmtree(base)


def test_binary_and_fifo_command_run(tmp_path):
    workdir = nextflow_workdir(tmp_path)
    (workdir / ".command.run").write_bytes(b"#!/bin/bash\n# \x00\x01\xff\n")
    stage_input(workdir)
    proc = run([IOWRAP, "--", "/bin/bash", workdir / ".command.sh"],
               cwd=workdir, env=clean_env(NXF_TASK_WORKDIR=str(workdir)),
               text=True)
    assert proc.returncode == 0 and proc.stdout == "FASTQC done\n"
    msg = (f".command.run: {workdir}/.command.run is not a text file; "
           "no task name")
    assert proc.stderr == f"iowrap: task identity: {msg}\n"
    assert task_of(workdir / ".iowrap")["warnings"] == [msg]
    # A FIFO must not hang the task.
    (workdir / ".command.run").unlink()
    os.mkfifo(workdir / ".command.run")
    proc = run([IOWRAP, "--", "/bin/bash", workdir / ".command.sh"],
               cwd=workdir, env=clean_env(NXF_TASK_WORKDIR=str(workdir)),
               text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "FASTQC done\n"
    assert task_of(workdir / ".iowrap-2")["warnings"] == [msg]


def test_properties_cut_mid_line(tmp_path):
    props = snakemake_properties("map", 3, {"sample": "a"}, [], [])
    script = tmp_path / "snakejob.map.3.sh"
    script.write_text("#!/bin/sh\n# properties = " + props[:40])
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "/bin/sh", script],
               env=clean_env(IOWRAP_SNAKEMAKE_RULE="fromenv"), text=True)
    assert proc.returncode == 0, proc
    msg = ("argv[1] job script properties: the properties are not a JSON "
           f"object (malformed or cut) in {script}; ignored")
    assert proc.stderr == f"iowrap: task identity: {msg}\n"
    task = task_of(tmp_path / "t")
    assert task["warnings"] == [msg]
    assert task["snakemake"] == {"rule": "fromenv"}


def test_malformed_labels_file(tmp_path):
    podinfo = tmp_path / "podinfo"
    podinfo.mkdir()
    (podinfo / "labels").write_bytes(b'good="1"\nbad="unterminated\n\xff\n')
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "true"],
               env=clean_env(IOWRAP_K8S_PODINFO=str(podinfo)), text=True)
    assert proc.returncode == 0
    task = task_of(tmp_path / "t")
    assert task["kubernetes"] == {"labels": {"good": "1"}}
    assert task["warnings"] == [
        f"{podinfo}/labels: 2 malformed lines skipped "
        "(line 2 is not key=\"value\")"]


def test_huge_maps_are_bounded(tmp_path):
    """A 1 MiB labels file and a job script with 5000 wildcards keep the
    first 1024 entries of each (an unbounded map made parsing quadratic:
    13 s for the labels file before the task started)."""
    podinfo = tmp_path / "podinfo"
    podinfo.mkdir()
    lines = [f'k{i}="{i}"\n' for i in range(110000)]
    (podinfo / "labels").write_text("".join(lines)[:1 << 20])
    wildcards = {f"w{i}": str(i) for i in range(5000)}
    script = tmp_path / "snakejob.map.3.sh"
    write_jobscript(script, snakemake_properties("map", 3, wildcards, [],
                                                 []), "true\n")
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "/bin/sh", script],
               env=clean_env(IOWRAP_K8S_PODINFO=str(podinfo)), text=True)
    assert proc.returncode == 0, proc
    task = task_of(tmp_path / "t")
    labels = task["kubernetes"]["labels"]
    assert list(labels) == [f"k{i}" for i in range(1024)]
    assert labels["k1023"] == "1023"
    got = task["snakemake"]["wildcards"]
    assert list(got) == [f"w{i}" for i in range(1024)]
    nlines = (podinfo / "labels").read_text().count("\n") + 1
    assert task["warnings"] == [
        "argv[1] job script properties: more than 1024 wildcards; the rest "
        "are ignored",
        f"{podinfo}/labels: {nlines - 1024} malformed lines skipped "
        "(line 1025 is past 1024 labels)"]


def test_made_up_command_sh_is_no_workdir(tmp_path):
    """A .command.sh word that is not a file (here an argument of echo)
    names no Nextflow work directory: nothing is created there."""
    made_up = tmp_path / "made" / "up" / ".command.sh"
    proc = run([IOWRAP, "--", "echo", made_up], cwd=tmp_path,
               env=clean_env(), text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc
    assert not (tmp_path / "made").exists()
    [trace] = tmp_path.glob("iowrap.*")
    assert task_of(trace)["engine"] == "none"


def test_warning_on_stderr_has_no_control_bytes(tmp_path):
    script = tmp_path / "a\n\x1b[31mFAKE.sh"
    script.write_text("#!/bin/sh\n# properties = {bad\ntrue\n")
    proc = run([IOWRAP, "-o", tmp_path / "t", "--", "/bin/sh", script],
               env=clean_env())
    assert proc.returncode == 0, proc
    assert proc.stderr == (
        b"iowrap: task identity: argv[1] job script properties: the "
        b"properties are not a JSON object (malformed or cut) in "
        + str(tmp_path).encode() + b"/a??[31mFAKE.sh; ignored\n")
    # summary.json keeps the path exactly (JSON escapes it).
    assert task_of(tmp_path / "t")["warnings"] == [
        "argv[1] job script properties: the properties are not a JSON "
        f"object (malformed or cut) in {script}; ignored"]


def test_argv_words_on_pseudo_filesystems_are_not_read(tmp_path):
    """The task's arguments are searched for a job script, but a file of
    /proc or /sys is not iowrap's to open (reading /proc/kmsg consumes the
    kernel's messages): strace of iowrap's own process shows it never
    opens them for reading, while a real script among the same words is
    still read.  (Both iowrap's argv and its parent's, strace's, name
    them.)"""
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\ntrue\n")
    log = tmp_path / "strace.log"
    words = ["/proc/version", "/sys/kernel/uevent_seqnum",
             str(script)]
    proc = run(["strace", "-qq", "-o", log, "-e", "trace=open,openat",
                IOWRAP, "-o", tmp_path / "t", "--", "/bin/true", *words],
               env=clean_env(), text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc
    # O_PATH opens read nothing: they ask which filesystem it is, and the
    # script is then reopened for reading through /proc/self/fd/N.
    opened, o_path = [], {}
    for path, flags, fd in re.findall(
            r'open(?:at)?\((?:AT_FDCWD, )?"([^"]*)", ([A-Z_|]+)[^=]*= (-?\d+)',
            log.read_text()):
        if "O_PATH" in flags:
            o_path[fd] = path
            continue
        m = re.fullmatch(r"/proc/self/fd/(\d+)", path)
        opened.append(o_path.get(m.group(1), path) if m else path)
    assert str(script) in opened
    assert not [p for p in opened if p in words[:2]], opened
