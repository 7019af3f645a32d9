"""wrappers/nextflow: the process shell of iowrap.config, run the way Nextflow's
.command.run runs it (Nextflow itself cannot be installed here), in a work
directory laid out as Nextflow lays it out."""
import json
import os
import subprocess

from conftest import IOWRAP, ROOT

NF = ROOT / "wrappers" / "nextflow"
SHELL = [str(NF / "iowrap-nf"), "--", "/bin/bash", "-euo", "pipefail"]

# The parts of Nextflow 24's command-run.txt that launch the task: the metadata
# header, nxf_trace's background run of the script (reduced: no /proc polling),
# nxf_launch and nxf_main's tee plumbing.
COMMAND_RUN = """\
#!/bin/bash
### ---
### name: 'FASTQC (sample_1)'
### outputs:
### - 'out.txt'
### ...
set -e
set -u
NXF_ENTRY=${{1:-nxf_main}}

nxf_trace() {{
    local pid
    {shell} {workdir}/.command.sh &
    pid=$!
    wait $pid
}}

nxf_launch() {{
    {launch}
}}

nxf_main() {{
    export NXF_TASK_WORKDIR="$PWD"
    set +e
    (set -o pipefail; (nxf_launch | tee .command.out) 3>&1 1>&2 2>&3 | tee .command.err) 3>&1 1>&2 2>&3 &
    pid=$!
    wait $pid || nxf_main_ret=$?
    printf -- "${{nxf_main_ret:=0}}" > .exitcode
    exit $nxf_main_ret
}}

$NXF_ENTRY
"""

SCRIPT = """\
#!{shebang}
echo "$-" > flags
shopt -o pipefail > pipefail
tr a-z A-Z < ../../input.txt > out.txt
"""


def nextflow_task(tmp_path, with_trace):
    workdir = tmp_path / "work" / "3f" / "a2b4c6d8e9f0011223344556677889"
    workdir.mkdir(parents=True)
    (tmp_path / "work" / "input.txt").write_text("hello\n")
    shell = " ".join(SHELL)
    (workdir / ".command.sh").write_text(SCRIPT.format(shebang=shell))
    if with_trace:
        launch = f"{shell} {workdir}/.command.run nxf_trace"
    else:
        launch = f"{shell} {workdir}/.command.sh"
    (workdir / ".command.run").write_text(
        COMMAND_RUN.format(shell=shell, workdir=workdir, launch=launch))
    return workdir, run_command_run(workdir)


def run_command_run(workdir):
    env = dict(os.environ, IOWRAP=str(IOWRAP))
    for var in ("IOWRAP_DIR", "IOWRAP_ROOT"):
        env.pop(var, None)
    # Nextflow's executors run the wrapper with plain bash in the work dir.
    return subprocess.run(["/bin/bash", ".command.run"], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=120)


def check_one_trace_of_the_script(workdir, proc):
    assert proc.returncode == 0, proc.stderr
    # No second iowrap complained about being traced itself.
    assert "iowrap" not in (workdir / ".command.err").read_text()
    assert (workdir / "out.txt").read_text() == "HELLO\n"
    # nf-core's bash flags reached the task script.
    assert set("eu") <= set((workdir / "flags").read_text().strip())
    assert (workdir / "pipefail").read_text().split() == ["pipefail", "on"]
    summaries = list(workdir.rglob("summary.json"))
    assert len(summaries) == 1, summaries
    summary = json.loads(summaries[0].read_text())
    assert summary["command"] == ["/bin/bash", "-euo", "pipefail",
                                  f"{workdir}/.command.sh"]
    assert summary["exit"]["code"] == 0
    return summary


def test_nextflow_shell_traces_the_task_script(tmp_path):
    workdir, proc = nextflow_task(tmp_path, with_trace=False)
    check_one_trace_of_the_script(workdir, proc)


def test_nextflow_shell_with_trace_on_traces_the_task_once(tmp_path):
    """With trace/timeline/report on, .command.run re-runs itself with the
    process shell (`... .command.run nxf_trace`): that run is not traced, the
    task script it starts is, once."""
    workdir, proc = nextflow_task(tmp_path, with_trace=True)
    check_one_trace_of_the_script(workdir, proc)


def test_nextflow_trace_in_work_dir_with_task_identity(tmp_path):
    workdir, proc = nextflow_task(tmp_path, with_trace=True)
    summary = check_one_trace_of_the_script(workdir, proc)
    assert (workdir / ".iowrap" / "summary.json").exists()
    task = summary["task"]
    assert task["engine"] == "nextflow"
    assert task["name"] == "FASTQC (sample_1)"
    assert task["nextflow"]["workdir"] == str(workdir)
    # The work directory's last two components (Nextflow's trace shows the
    # first 9 characters: 3f/a2b4c6).
    assert task["nextflow"]["hash"] == "3f/a2b4c6d8e9f0011223344556677889"


def staged_task(work, hash_, name, script, inputs):
    """A task of a two-step pipeline in work/HASH: nxf_stage links its
    inputs (name -> the file an earlier task wrote) as .command.run does,
    outside the trace; then the script runs under --level full."""
    workdir = work / hash_
    workdir.mkdir(parents=True)
    shell = " ".join([SHELL[0], "--level", "full"] + SHELL[1:])
    (workdir / ".command.sh").write_text(f"#!{shell}\n{script}\n")
    stage = "".join(f"    rm -f {n}\n    ln -s {t} {n}\n"
                    for n, t in inputs.items())
    run = COMMAND_RUN.format(shell=shell, workdir=workdir,
                             launch=f"{shell} {workdir}/.command.sh")
    run = run.replace("### name: 'FASTQC (sample_1)'", f"### name: '{name}'")
    run = run.replace("nxf_main() {\n",
                      f"nxf_stage() {{\n{stage}    true\n}}\n\n"
                      "nxf_main() {\n    nxf_stage\n")
    (workdir / ".command.run").write_text(run)
    proc = run_command_run(workdir)
    assert proc.returncode == 0, proc.stderr
    return workdir


def test_nextflow_staged_inputs_join_the_tasks_that_wrote_them(tmp_path):
    """Nextflow links a task's inputs into its work directory: the report
    over the work directory has the edge from the task that wrote the
    file, on the reader's name, written as the writer's; the workflow's
    inputs are the first task's (by the name it read it by) and the
    scripts."""
    work = tmp_path / "work"
    (tmp_path / "reads.txt").write_text("acgt\n" * 100)
    first = staged_task(work, "3f/a2b4c6d8e9f0011223344556677889",
                        "TRIM (s1)", "head -c 200 reads.txt > trimmed.txt",
                        {"reads.txt": tmp_path / "reads.txt"})
    second = staged_task(work, "9c/0d1e2f30415263748596a7b8c9d0e1",
                "COUNT (s1)", "grep -c a trimmed.txt > count.txt",
                {"trimmed.txt": first / "trimmed.txt"})
    proc = subprocess.run([str(IOWRAP), "report", "-o", str(tmp_path / "r"),
                           str(work)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    names = {t["id"]: t["name"] for t in rep["tasks"]}
    paths = {f["id"]: f["path"] for f in rep["files"]}
    assert [(names[e["writer"]], names[e["reader"]], paths[e["file"]],
             paths[e["written_as"]], e["bytes"])
            for e in rep["data_flow"]["edges"]] == [
        ("TRIM (s1)", "COUNT (s1)", str(second / "trimmed.txt"),
         str(first / "trimmed.txt"), 200)]
    assert sorted(paths[v["file"]] for v in rep["wcp"]["vertices"]
                  if v["kind"] == "input") == sorted(
        [str(first / "reads.txt"), str(first / ".command.sh"),
         str(second / ".command.sh")])


def test_nextflow_shell_passes_iowrap_options(tmp_path):
    workdir = tmp_path / "w"
    workdir.mkdir()
    script = workdir / ".command.sh"
    script.write_text("cat /etc/hostname > /dev/null\n")
    env = dict(os.environ, IOWRAP=str(IOWRAP))
    proc = subprocess.run(
        [str(NF / "iowrap-nf"), "--level", "files", "-o", str(tmp_path / "t"),
         "--", "/bin/bash", "-euo", "pipefail", str(script)],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "t" / "io.csv").exists()
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["command"] == ["/bin/bash", "-euo", "pipefail", str(script)]


def test_nextflow_shell_without_iowrap_runs_untraced(tmp_path):
    env = dict(os.environ, IOWRAP=str(tmp_path / "missing"))
    proc = subprocess.run(
        [str(NF / "iowrap-nf"), "--", "/bin/bash", "-euo", "pipefail", "-c",
         "false | true"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1  # pipefail kept
    assert "running untraced" in proc.stderr
    assert not list(tmp_path.rglob("summary.json"))


def test_kubernetes_fragment_as_a_pod_would_run_it(tmp_path):
    """Runs the fragment's container command the way the kubelet would: the
    downward API env and labels file filled in, $(VAR) expanded; iowrap must
    find every identity field the fragment passes."""
    import re
    import yaml
    spec = yaml.safe_load((ROOT / "wrappers" / "kubernetes" /
                           "pod-fragment.yaml").read_text())
    meta = spec["metadata"]
    (container,) = spec["spec"]["containers"]
    downward = {
        "metadata.name": meta["name"], "metadata.namespace": "genomics",
        "metadata.uid": "0d6f3c4e-1b2a-4c5d-8e9f-a0b1c2d3e4f5",
        "spec.nodeName": "node-7",
    }
    env = {}
    for var in container["env"]:
        path = var["valueFrom"]["fieldRef"]["fieldPath"]
        m = re.fullmatch(r"metadata\.labels\['(.+)'\]", path)
        env[var["name"]] = meta["labels"][m.group(1)] if m else downward[path]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    podinfo = tmp_path / "podinfo"
    podinfo.mkdir()
    # The downward API writes labels as key="value" lines, sorted.
    (podinfo / "labels").write_text("".join(
        f'{k}="{v}"\n' for k, v in sorted(meta["labels"].items())))
    traces = tmp_path / "traces"

    def kubelet(word):
        word = re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], word)
        word = word.replace(mounts["iowrap"] + "/iowrap", str(IOWRAP))
        return word.replace(mounts["traces"], str(traces))

    argv = [kubelet(w) for w in container["command"]]
    argv += ["sh", "-c", "exit 0"]  # the image's samtools is not here
    run_env = dict(env, PATH=os.environ["PATH"],
                   IOWRAP_K8S_PODINFO=str(podinfo),
                   KUBERNETES_SERVICE_HOST="10.0.0.1")
    proc = subprocess.run(argv, env=run_env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    (path,) = traces.rglob("summary.json")
    task = json.loads(path.read_text())["task"]
    assert task["engine"] == "kubernetes", task
    assert task["kubernetes"] == {
        "pod_name": "align-sample-1", "namespace": "genomics",
        "pod_uid": "0d6f3c4e-1b2a-4c5d-8e9f-a0b1c2d3e4f5",
        "node_name": "node-7", "labels": {"app": "align", "sample": "s1"}}
    assert task["labels"] == {"sample": "s1"}
    assert mounts["iowrap"] == "/opt/iowrap"
    assert spec["spec"]["volumes"][1]["downwardAPI"]["items"] == [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]
