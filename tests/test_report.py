"""iowrap report: report.json against the traces it was computed from, the
Workflow Critical Path of the WCP paper's five patterns built as real shell
workflows, and hostile input."""
import csv
import io
import json
import os
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import HELPERS, IOWRAP

SYSTEM = ("/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/", "/bin/",
          "/sbin/", "/etc/", "/proc/", "/sys/", "/dev/", "/run/")


def task(traces, name, script):
    """Starts one task of a workflow under iowrap --level full."""
    return subprocess.Popen(
        [str(IOWRAP), "--level", "full", "-o", str(traces / name), "--",
         "sh", "-c", script],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def run_tasks(traces, steps):
    """steps: a list of stages run one after the other; a stage is a dict
    name -> script, its tasks run in parallel."""
    for stage in steps:
        procs = [task(traces, n, s) for n, s in stage.items()]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err


def report(*dirs, out, text=False, check=0):
    cmd = [str(IOWRAP), "report", "-o", str(out)]
    if text:
        cmd.append("--text")
    proc = subprocess.run(cmd + [str(d) for d in dirs], capture_output=True,
                          timeout=120)
    stderr = proc.stderr.decode("utf-8", "surrogateescape")
    assert proc.returncode == check, stderr
    rep = None
    if (Path(out) / "report.json").exists():
        rep = json.loads((Path(out) / "report.json").read_text())
    return proc, stderr, rep


def csv_rows(path):
    data = Path(path).read_bytes().decode("utf-8", "surrogateescape")
    return list(csv.DictReader(io.StringIO(data, newline="")))


def us(text):
    """An io.csv time ("1714067937.744123") as integer microseconds."""
    return int(Decimal(text) * 1000000)


def task_by_dir(rep, name):
    return next(t for t in rep["tasks"] if Path(t["dir"]).name == name)


# ---- numbers against the traces ----

def data_workflow(tmp_path, steps):
    """Runs steps(data_dir) (see run_tasks) into tmp_path/traces."""
    d = tmp_path / "data"
    d.mkdir()
    traces = tmp_path / "traces"
    run_tasks(traces, steps(d))
    return d, traces


def make_numbers_workflow(tmp_path):
    return data_workflow(tmp_path, lambda d: [
        {"t1": f"head -c 10000 /dev/zero > {d}/a"},
        {"t2": f"cat {d}/a {d}/a > {d}/b"},
        {"t3": f"head -c 5000 {d}/b > {d}/c; cat {d}/a > /dev/null"},
    ])


def expected_task_files(trace):
    """Per inode: bytes, ops and the first/last R or W of io.csv."""
    files = {}
    for r in csv_rows(trace / "io.csv"):
        if r["type"] not in "RW" or r["inode"] == "0":
            continue
        if int(r["result"]) < 0:
            continue
        f = files.setdefault(int(r["inode"]), {
            "R": 0, "W": 0, "first": None, "last": None})
        f[r["type"]] += int(r["result"])
        start, end = us(r["time_start"]), us(r["time_end"])
        f["first"] = start if f["first"] is None else min(f["first"], start)
        f["last"] = end if f["last"] is None else max(f["last"], end)
    return files


def test_numbers_match_the_traces(tmp_path):
    d, traces = make_numbers_workflow(tmp_path)
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert stderr == ""
    assert rep["schema"] == "iowrap-report/1"
    assert len(rep["tasks"]) == 3
    total_read = total_written = 0
    for name in ("t1", "t2", "t3"):
        t = task_by_dir(rep, name)
        want = expected_task_files(traces / name)
        summary = json.loads((traces / name / "summary.json").read_text())
        wall = us(repr(summary["end_time_s"])) - us(
            repr(summary["start_time_s"]))
        assert us(str(t["wall_time_s"])) == wall
        assert t["file_read_bytes"] == sum(f["R"] for f in want.values())
        assert t["file_write_bytes"] == sum(f["W"] for f in want.values())
        assert t["untraced_read_bytes"] == sum(
            int(p["untraced_read_bytes"])
            for p in csv_rows(traces / name / "procs.csv"))
        # Per mount: the summary's counters and log2 size histograms.
        for m, sm in zip(t["mounts"], summary["mounts"]):
            assert m["bytes_read"] == sm["bytes_read"]
            assert m["read_sizes"] == sm["read_sizes"]
            assert m["write_sizes"] == sm["write_sizes"]
        assert len(t["mounts"]) == len(summary["mounts"])
        total_read += t["file_read_bytes"]
        total_written += t["file_write_bytes"]
        by_inode = {f["inode"]: f for f in t["files"]}
        darshan = {int(r["inode"]): r
                   for r in csv_rows(traces / name / "files.csv")}
        for inode, w in want.items():
            f = by_inode[inode]
            assert f["read"]["bytes"] == w["R"]
            assert f["write"]["bytes"] == w["W"]
            # Fig. 4: first to last access over the task's runtime.
            span = w["last"] - w["first"]
            assert us(str(f["access_span_s"])) == span
            # Written with 6 decimals: half a unit of the last, and the
            # binary error of a tie such as 382 / 6400 = 0.0596875.
            assert abs(f["access_span_fraction"] - span / wall) <= \
                5e-7 + 1e-12
            # Darshan's counters agree with the tracer's own files.csv.
            assert f["read"]["consecutive"] == int(
                darshan[inode]["consec_reads"])
            assert f["read"]["sequential"] == int(darshan[inode]["seq_reads"])
            assert f["write"]["sequential"] == int(
                darshan[inode]["seq_writes"])
    assert rep["workflow"]["file_read_bytes"] == total_read
    assert rep["workflow"]["file_write_bytes"] == total_written
    assert [(g["name"], g["tasks"]) for g in rep["logical_tasks"]] == [
        ("t1", 1), ("t2", 1), ("t3", 1)]

    files = {f["path"]: f for f in rep["files"]}
    a, b, c = files[f"{d}/a"], files[f"{d}/b"], files[f"{d}/c"]
    assert (a["bytes_written"], a["bytes_read"]) == (10000, 20000 + 10000)
    assert (b["bytes_written"], b["bytes_read"]) == (20000, 5000)
    assert (c["bytes_written"], c["bytes_read"]) == (5000, 0)
    assert (a["readers"], a["writers"]) == (2, 1)
    # t2 read a twice: 10000 bytes re-read within the task.
    t2 = task_by_dir(rep, "t2")
    t2a = next(f for f in t2["files"] if f["path"] == f"{d}/a")
    assert t2a["reread_bytes"] == 10000
    assert t2a["read"]["pattern"] == "random"   # the second pass seeks back
    t1 = task_by_dir(rep, "t1")
    t1a = next(f for f in t1["files"] if f["path"] == f"{d}/a")
    assert t1a["write"]["pattern"] in ("single", "consecutive")

    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    paths = {f["id"]: f["path"] for f in rep["files"]}
    flow = {(names[e["writer"]], names[e["reader"]], paths[e["file"]],
             e["bytes"]) for e in rep["data_flow"]["edges"]}
    assert flow == {("t1", "t2", f"{d}/a", 20000),
                    ("t2", "t3", f"{d}/b", 5000),
                    ("t1", "t3", f"{d}/a", 10000)}
    never = {paths[i] for i in rep["data_flow"]["written_never_read"]}
    assert never == {f"{d}/c"}
    assert [paths[i] for i in rep["data_flow"]["read_by_many"]] == [f"{d}/a"]
    for f in rep["files"]:
        assert f["system"] == f["path"].startswith(SYSTEM) or f["system"]


def test_text_tables(tmp_path):
    d, traces = make_numbers_workflow(tmp_path)
    proc, _, _ = report(traces, out=tmp_path / "out", text=True)
    out = proc.stdout.decode()
    assert out.startswith("Workflow: 3 tasks")
    assert "Slowest tasks" in out and "Most I/O-heavy tasks" in out
    assert f"t1 -> t2: {d}/a (20000 B)" in out
    assert "Workflow Critical Path" in out


# ---- the Workflow Critical Path on the paper's five patterns ----

def wcp_edges(rep):
    """The WCP's edges by id as (from, to, mutation, cost_s) with vertices
    labelled by kind, path and the writing task's directory name."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}

    def label(v):
        if v["kind"] == "start":
            return "start"
        name = Path(v["path"]).name
        if v["kind"] == "written":
            return f"{name}@{names[v['task']]}"
        return f"{name}({v['kind']})"

    return {e["id"]: (label(vs[e["from"]]), label(vs[e["to"]]),
                      e["mutation"], e["cost_s"])
            for e in rep["wcp"]["edges"]}


def wcp_steps(rep):
    """The critical path as (from, to, mutation), labelled as wcp_edges."""
    es = wcp_edges(rep)
    return [es[i][:3] for i in rep["wcp"]["path"]]


def source(tmp_path, name="src", size=1000):
    p = tmp_path / name
    p.write_bytes(b"x" * size)
    return p


def test_wcp_generic(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    src = source(tmp_path)
    traces = tmp_path / "traces"
    # rank1 is the longest by far more than a loaded machine's delay in
    # starting a task (0.3 s over 0.2 failed once, beside busy loops).
    ranks = {f"rank{i}": f"sleep {s}; head -c 200 {d}/pre > {d}/r{i}"
             for i, s in enumerate((0.2, 1.5, 0.3, 0.2))}
    run_tasks(traces, [
        {"stagein": f"cp {src} {d}/stage"},
        {"pre": f"sleep 0.2; head -c 500 {d}/stage > {d}/pre"},
        ranks,
        {"post": f"sleep 0.2; cat {d}/r0 {d}/r1 {d}/r2 {d}/r3 > {d}/post"},
        {"viz": f"head -c 100 {d}/post > {d}/viz"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert wcp_steps(rep) == [
        ("start", "src(input)", "TRANSFER"),
        ("src(input)", "stage@stagein", "TRANSFER"),
        ("stage@stagein", "pre@pre", "CONVERT"),
        ("pre@pre", "r1@rank1", "CONVERT"),
        ("r1@rank1", "post@post", "MERGE"),
        ("post@post", "viz@viz", "CONVERT"),
    ]
    path_edges = [e for e in rep["wcp"]["edges"]
                  if e["id"] in rep["wcp"]["path"]]
    assert us(str(rep["wcp"]["length_s"])) == sum(
        us(str(e["cost_s"])) for e in path_edges)
    # Every rank's output merges into post.
    assert sum(e["mutation"] == "MERGE" for e in rep["wcp"]["edges"]) == 4


def test_wcp_data_splits(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    src = source(tmp_path)
    traces = tmp_path / "traces"
    split = "; ".join(f"head -c 250 {d}/stage > {d}/part{i}"
                      for i in range(4))
    mpi = {f"mpi{i}": f"sleep {s}; head -c 100 {d}/part{i} > {d}/out{i}"
           for i, s in enumerate((0.2, 0.2, 1.5, 0.3))}  # as in wcp_generic
    run_tasks(traces, [
        {"stagein": f"cp {src} {d}/stage"},
        {"split": f"sleep 0.2; {split}"},
        mpi,
        {"post": f"cat {d}/out0 {d}/out1 {d}/out2 {d}/out3 > {d}/post"},
        {"viz": f"sleep 0.2; head -c 50 {d}/post > {d}/viz"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert wcp_steps(rep) == [
        ("start", "src(input)", "TRANSFER"),
        ("src(input)", "stage@stagein", "TRANSFER"),
        ("stage@stagein", "part2@split", "SPLIT"),
        ("part2@split", "out2@mpi2", "CONVERT"),
        ("out2@mpi2", "post@post", "MERGE"),
        ("post@post", "viz@viz", "CONVERT"),
    ]


def test_wcp_checkpoint(tmp_path):
    d, d2 = tmp_path / "d", tmp_path / "store"
    d.mkdir()
    d2.mkdir()
    src = source(tmp_path)
    traces = tmp_path / "traces"
    run_tasks(traces, [
        {"stagein": f"cp {src} {d}/stage"},
        {"pre": f"head -c 500 {d}/stage > {d}/pre"},
        {"mpi": f"sleep 0.3; head -c 300 {d}/pre > {d}/ckpt"},
        {"ckptout": f"sleep 0.2; cp {d}/ckpt {d2}/ckpt"},
        {"ckptin": f"sleep 0.2; cp {d2}/ckpt {d}/restored"},
        {"mpi2": f"sleep 0.3; head -c 200 {d}/restored > {d}/mpi2"},
        {"post2": f"head -c 100 {d}/mpi2 > {d}/post2"},
        {"viz": f"head -c 50 {d}/post2 > {d}/viz"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert wcp_steps(rep) == [
        ("start", "src(input)", "TRANSFER"),
        ("src(input)", "stage@stagein", "TRANSFER"),
        ("stage@stagein", "pre@pre", "CONVERT"),
        ("pre@pre", "ckpt@mpi", "CONVERT"),
        ("ckpt@mpi", "ckpt@ckptout", "TRANSFER"),
        ("ckpt@ckptout", "restored@ckptin", "TRANSFER"),
        ("restored@ckptin", "mpi2@mpi2", "CONVERT"),
        ("mpi2@mpi2", "post2@post2", "CONVERT"),
        ("post2@post2", "viz@viz", "CONVERT"),
    ]


def test_wcp_multiple_sources(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    src = source(tmp_path)
    src2 = source(tmp_path, "src2", 700)
    traces = tmp_path / "traces"
    run_tasks(traces, [
        {"stagein": f"cp {src} {d}/stage"},
        {"pre": f"sleep 0.2; head -c 500 {d}/stage > {d}/pre"},
        {"mpi": f"sleep 0.4; head -c 300 {d}/pre > {d}/mpi"},
        {"post": f"sleep 0.2; head -c 200 {d}/mpi > {d}/post"},
        {"load": f"sleep 0.2; cp {src2} {d}/load"},
        {"mpi2": f"sleep 0.3; cat {d}/post {d}/load > {d}/mpi2"},
        {"post2": f"head -c 100 {d}/mpi2 > {d}/post2"},
        {"viz": f"head -c 50 {d}/post2 > {d}/viz"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert wcp_steps(rep) == [
        ("start", "src(input)", "TRANSFER"),
        ("src(input)", "stage@stagein", "TRANSFER"),
        ("stage@stagein", "pre@pre", "CONVERT"),
        ("pre@pre", "mpi@mpi", "CONVERT"),
        ("mpi@mpi", "post@post", "CONVERT"),
        ("post@post", "mpi2@mpi2", "MERGE"),
        ("mpi2@mpi2", "post2@post2", "CONVERT"),
        ("post2@post2", "viz@viz", "CONVERT"),
    ]
    inputs = {Path(v["path"]).name for v in rep["wcp"]["vertices"]
              if v["kind"] == "input"}
    assert inputs == {"src", "src2"}


def test_wcp_create_delete(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    src = source(tmp_path)
    traces = tmp_path / "traces"
    run_tasks(traces, [
        {"stagein": f"cp {src} {d}/stage"},
        {"pre": f"head -c 500 {d}/stage > {d}/pre"},
        {"mpi": f"sleep 0.3; head -c 300 {d}/pre > {d}/mpi"},
        {"create": f"sleep 0.2; head -c 100 {d}/mpi > {d}/tmp1; "
                   f"head -c 100 {d}/mpi > {d}/tmp2"},
        {"post": f"sleep 0.2; cat {d}/tmp1 {d}/tmp2 > {d}/post; "
                 f"rm {d}/tmp1 {d}/tmp2"},
        {"mpi2": f"sleep 0.3; head -c 100 {d}/post > {d}/mpi2"},
        {"post2": f"head -c 50 {d}/mpi2 > {d}/post2"},
        {"viz": f"head -c 20 {d}/post2 > {d}/viz"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert wcp_steps(rep) == [
        ("start", "src(input)", "TRANSFER"),
        ("src(input)", "stage@stagein", "TRANSFER"),
        ("stage@stagein", "pre@pre", "CONVERT"),
        ("pre@pre", "mpi@mpi", "CONVERT"),
        ("mpi@mpi", "tmp2@create", "SPLIT"),
        ("tmp2@create", "post@post", "MERGE"),
        ("post@post", "mpi2@mpi2", "CONVERT"),
        ("mpi2@mpi2", "post2@post2", "CONVERT"),
        ("post2@post2", "viz@viz", "CONVERT"),
    ]
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}
    deletes = sorted((Path(vs[e["from"]]["path"]).name, vs[e["to"]]["kind"])
                     for e in rep["wcp"]["edges"]
                     if e["mutation"] == "DELETE")
    assert deletes == [("tmp1", "deleted"), ("tmp2", "deleted")]


# ---- hostile input ----

def one_trace(tmp_path, name="t", script=None):
    d = tmp_path / "data"
    d.mkdir(exist_ok=True)
    traces = tmp_path / "traces"
    run_tasks(traces, [{name: script or f"head -c 3000 /dev/zero > {d}/a; "
                                         f"cat {d}/a > {d}/b"}])
    return traces


def test_empty_directory(tmp_path):
    (tmp_path / "empty").mkdir()
    _, stderr, rep = report(tmp_path / "empty", out=tmp_path / "out",
                            check=3)
    assert "no trace directory (summary.json or procs.csv)" in stderr
    assert "no readable trace found" in stderr
    assert rep is None


def test_usage_errors(tmp_path):
    proc = subprocess.run([str(IOWRAP), "report"], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert "no trace directory given" in proc.stderr


def test_truncated_io_csv(tmp_path):
    traces = one_trace(tmp_path)
    io_csv = traces / "t" / "io.csv"
    data = io_csv.read_bytes()
    lines = data.split(b"\n")
    keep = 10                       # header + 9 rows, then half a line
    io_csv.write_bytes(b"\n".join(lines[:keep]) + b"\n" +
                       lines[keep][:len(lines[keep]) // 2])
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert f"{traces}/t/io.csv:{keep + 1}: truncated last line ignored" \
        in stderr
    prob = rep["tasks"][0]["problems"]["io_csv"]
    assert prob == {"missing": False, "rows": keep - 1, "rows_skipped": 0,
                    "truncated": True}
    assert rep["tasks"][0]["events"] == keep - 1
    assert rep["warnings"]["count"] == 1


@pytest.mark.parametrize("name", ["io.csv", "summary.json"])
def test_a_trace_file_cut_shorter_while_read_is_read_up_to_the_cut(
        tmp_path, name):
    """A trace file cut shorter while the report has it mapped (or a
    shared file system failing the read of a page) raised SIGBUS and the
    report died with every task (found: exit 135).  cutmap truncates the
    file the moment the report has mapped it: the report reads it up to
    the cut (io.csv: every whole line before it), says so once, and goes
    on; at a page boundary, so that summary.json's parser reaches the
    page past the end instead of stopping at a zero byte."""
    traces = one_trace(tmp_path, script=f"dd if=/dev/zero of={tmp_path}/f "
                                        "bs=1 count=30000")
    path = traces / "t" / name
    cut = 200000 if name == "io.csv" else 2 * os.sysconf("SC_PAGE_SIZE")
    whole_lines = path.read_bytes()[:cut].count(b"\n")
    out = tmp_path / "out"
    proc = subprocess.run([str(HELPERS / "cutmap"), str(path), str(cut),
                           str(IOWRAP), "report", "-o", str(out),
                           str(traces)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "cut shorter" in line]
    where = f":{whole_lines + 1}" if name == "io.csv" else ""
    instead = ("the rest of it is ignored" if name == "io.csv" else
               "task times and totals taken from procs.csv")
    assert said == [f"iowrap: report: {path}{where}: the file was cut "
                    "shorter, or could not be read, while the report read "
                    f"it; {instead}"]
    rep = json.loads((out / "report.json").read_text())
    task = rep["tasks"][0]
    if name == "io.csv":
        assert task["problems"]["io_csv"] == {
            "missing": False, "rows": whole_lines - 1, "rows_skipped": 0,
            "truncated": True}
    else:
        assert task["summary_read"] is False and task["complete"] is False
        assert task["file_write_bytes"] == 30000


def test_a_sigbus_sent_to_the_report_still_ends_it(tmp_path):
    """The report's SIGBUS handler takes only faults in its mappings: a
    SIGBUS sent with kill() (cutmap sends it the moment io.csv is mapped)
    ends the report with that signal, as before the handler (found: the
    report went on and exited 0)."""
    traces = one_trace(tmp_path)
    proc = subprocess.run([str(HELPERS / "cutmap"),
                           str(traces / "t" / "io.csv"), "sigbus",
                           str(IOWRAP), "report", "-o", str(tmp_path / "out"),
                           str(traces)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 128 + 7, proc.stderr


def test_trace_files_without_a_header_leave_the_others_readable(tmp_path):
    """export --format chrome kept each io.csv with no header mapped: with
    a guard slot per mapping (16), the 17th and later trace files could
    not be read (found: a good trace after 18 bad ones lost all its
    events, "No file descriptors available")."""
    traces = one_trace(tmp_path)
    scan = tmp_path / "scan"
    for i in range(18):
        shutil.copytree(traces / "t", scan / f"a{i:02}")
        (scan / f"a{i:02}" / "io.csv").write_text("not,a,header")
    shutil.copytree(traces / "t", scan / "z")

    def chrome(d):
        proc = subprocess.run([str(IOWRAP), "export", "--format", "chrome",
                               str(d)], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stderr, json.loads(proc.stdout)["traceEvents"]
    alone = chrome(traces / "t")[1]
    stderr, events = chrome(scan)
    assert "cannot read" not in stderr
    z = [e["pid"] for e in events if e["name"] == "process_name"
         and e["args"]["name"] == "z"]
    assert len(z) == 1
    assert len([e for e in events if e["pid"] == z[0]]) == len(alone) > 4


def test_bad_rows_are_skipped_with_file_and_line(tmp_path):
    traces = one_trace(tmp_path)
    io_csv = traces / "t" / "io.csv"
    lines = io_csv.read_bytes().split(b"\n")
    nrows = len(lines) - 2          # header, trailing empty
    lines[3] = b"xyz" + lines[3][lines[3].index(b","):]
    lines[5] = b"1,2,3"
    io_csv.write_bytes(b"\n".join(lines))
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert f"{traces}/t/io.csv:4: bad value in column time_start/time_end;" \
        " row skipped" in stderr
    assert f"{traces}/t/io.csv:6: 3 fields, the header has 16; row skipped" \
        in stderr
    prob = rep["tasks"][0]["problems"]["io_csv"]
    assert (prob["rows"], prob["rows_skipped"]) == (nrows - 2, 2)
    assert len(rep["warnings"]["messages"]) == 2


def test_corrupt_summary_gives_partial_report(tmp_path):
    traces = one_trace(tmp_path)
    procs = csv_rows(traces / "t" / "procs.csv")
    (traces / "t" / "summary.json").write_text('{\n  "schema": "iowrap-su')
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert f"{traces}/t/summary.json:2: not valid JSON" in stderr
    t = rep["tasks"][0]
    assert t["summary_read"] is False and t["complete"] is False
    assert t["name"] == "t"
    assert us(t["start_time_s"] and str(t["start_time_s"])) == min(
        us(p["time"]) for p in procs)
    assert t["processes"] == len(procs)
    assert t["file_write_bytes"] == 6000


def test_another_tools_summary_hides_no_trace(tmp_path):
    """A summary.json of another tool (MultiQC's) above the traces made its
    directory the only trace: one empty task, the real ones dropped, in
    report and export alike.  Now it is one warning and the walk goes on;
    next to procs.csv it is not read as a summary."""
    traces = one_trace(tmp_path)
    (traces / "summary.json").write_text('{"config_title": "MultiQC"}')
    warning = (f"iowrap: report: {traces}/summary.json: not an iowrap"
               ' summary (no "schema": "iowrap-summary/N"), no procs.csv;'
               " not a trace, searched below\n")
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert stderr == warning
    assert [t["dir"] for t in rep["tasks"]] == [str(traces / "t")]
    assert rep["tasks"][0]["summary_read"] is True
    assert rep["warnings"]["count"] == 1
    proc = subprocess.run([str(IOWRAP), "export", "--format", "csv",
                           "--table", "procs", str(traces)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == warning
    procs = csv_rows(traces / "t" / "procs.csv")
    assert len(proc.stdout.splitlines()) == 1 + len(procs)

    summary = traces / "t" / "summary.json"
    summary.write_text('{"schema": "multiqc/1", "command": ["x"]}')
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert stderr == warning + (
        f"iowrap: report: {summary}: not an iowrap summary (no"
        ' "schema": "iowrap-summary/N"); task times and totals taken from'
        " procs.csv\n")
    t = rep["tasks"][0]
    assert (t["dir"], t["summary_read"], t["command"]) == (
        str(traces / "t"), False, None)


def test_trace_with_no_events(tmp_path):
    traces = tmp_path / "traces"
    subprocess.run([str(IOWRAP), "-o", str(traces / "s"), "--", "true"],
                   check=True)
    t2 = traces / "h"
    shutil.copytree(traces / "s", t2)
    (t2 / "io.csv").write_text(
        "time_start,time_end,pid,utime_start,utime_end,stime_start,"
        "stime_end,inode,type,result,handle,offset,size,flags,path,path2\n")
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert stderr == ""
    s, h = task_by_dir(rep, "s"), task_by_dir(rep, "h")
    assert s["problems"]["io_csv"]["missing"] is True
    assert (s["events"], s["files_touched"], h["events"]) == (0, 0, 0)
    assert rep["wcp"]["path"] == []


def test_newline_and_invalid_utf8_paths(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    traces = tmp_path / "traces"
    name = b"a\nb\xff.dat"
    script = (b"head -c 77 /dev/zero > '" + bytes(d) + b"/" + name + b"'")
    p = subprocess.run([bytes(IOWRAP), b"--level", b"full", b"-o",
                        bytes(traces / "t"), b"--", b"sh", b"-c", script])
    assert p.returncode == 0
    proc, stderr, rep = report(traces, out=tmp_path / "out", text=True)
    assert stderr == ""
    want = f"{d}/a\nb\ufffd.dat"
    f = next(f for f in rep["files"] if f["path"] == want)
    assert f["bytes_written"] == 77
    assert f"{d}/a\\x0ab".encode() in proc.stdout


def test_symlinks_are_not_followed(tmp_path):
    traces = one_trace(tmp_path)
    scan = tmp_path / "scan"
    scan.mkdir()
    (scan / "link").symlink_to(traces / "t")
    shutil.copytree(traces / "t", scan / "real" / "deep" / "t")
    _, _, rep = report(scan, out=tmp_path / "out")
    assert [Path(t["dir"]).relative_to(scan).as_posix()
            for t in rep["tasks"]] == ["real/deep/t"]


def test_a_fifo_for_a_trace_file_is_refused_not_waited_on(tmp_path):
    """The task owns its trace directory: a FIFO in the place of each
    trace file (a reader opening it blocked until a writer came) is a file
    the report cannot read, said on stderr, and the report goes on (its
    times and totals from procs.csv where summary.json is the FIFO);
    export's Chrome JSON too."""
    traces = one_trace(tmp_path)
    for name in ("summary.json", "io.csv", "procs.csv", "files.csv"):
        trace = tmp_path / name / "t"
        shutil.copytree(traces / "t", trace)
        (trace / name).unlink()
        os.mkfifo(trace / name)
        _, stderr, rep = report(trace, out=tmp_path / name / "out")
        assert f"{trace}/{name}: " in stderr
        assert len(rep["tasks"]) == 1
        chrome = subprocess.run([str(IOWRAP), "export", "--format",
                                 "chrome", str(trace)], capture_output=True,
                                timeout=60)
        assert chrome.returncode == 0, chrome.stderr
        json.loads(chrome.stdout)


def test_trace_text_reaches_the_terminal_escaped(tmp_path):
    """A task names itself, and says why it was untraced, with escape
    sequences, a newline and a bidi override: --text's tables and the
    warnings on stderr show them escaped, so a trace cannot clear the
    screen nor forge a line."""
    traces = one_trace(tmp_path)
    summary = traces / "t" / "summary.json"
    s = json.loads(summary.read_text())
    hostile = "x\x1b[2J\niowrap: fake\u202e"
    s["task"]["name"] = hostile
    s["task"]["sources"] = []
    s["tracing"]["untraced_reason"] = hostile
    s["tracing"]["complete"] = False
    summary.write_text(json.dumps(s))
    proc, stderr, rep = report(traces, out=tmp_path / "out", text=True)
    out = proc.stdout.decode()
    for text in (out, stderr):
        assert "\x1b" not in text and "\u202e" not in text
        assert "\niowrap: fake" not in text
    assert "x\\x1b[2J\\x0aiowrap: fake\\u{202e}" in out
    assert "x\\x1b[2J\\x0aiowrap: fake\\u{202e}" in stderr
    assert rep["tasks"][0]["name"] == hostile


def test_a_summary_with_too_many_mounts_is_read_in_part(tmp_path):
    """A hostile summary.json with 5,000 mounts (memory: 2.3 KiB each in
    the report) has its first 4,096 read, and says so."""
    traces = one_trace(tmp_path)
    summary = traces / "t" / "summary.json"
    s = json.loads(summary.read_text())
    s["mounts"] = [{"mount_point": f"/m{i}", "fstype": "ext4"}
                   for i in range(5000)]
    summary.write_text(json.dumps(s))
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert (f"iowrap: report: {traces}/t/summary.json: 5000 mounts; only "
            "the first 4096 are read\n") in stderr
    assert len(rep["tasks"][0]["mounts"]) == 4096


def test_an_oversized_summary_string_is_cut_not_fatal(tmp_path):
    """A 65 MiB hostname in one task's summary.json overflowed the 64 MiB
    output buffer: no report at all, exit 1, and a message blaming -o.
    Strings read from summary.json are cut to 4,096 bytes, the tracer's
    own cap on a label, with one warning naming the trace and the field
    (a mount point cut is said once per trace)."""
    traces = one_trace(tmp_path)
    shutil.copytree(traces / "t", traces / "u")
    summary = traces / "u" / "summary.json"
    s = json.loads(summary.read_text())
    s["host"]["hostname"] = "A" * (65 << 20)
    s["task"]["key"] = "\u00e9" * 2049  # cut at a character: 4,096 bytes
    s["mounts"] = [dict(s["mounts"][0], mount_point="/" + "M" * 5000),
                   dict(s["mounts"][0], mount_point="/" + "m" * 5000)]
    summary.write_text(json.dumps(s))
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert stderr == (
        f"iowrap: report: {summary}: task.key is 4098 bytes; its first"
        " 4096 kept\n"
        f"iowrap: report: {summary}: host.hostname is {65 << 20} bytes;"
        " its first 4096 kept\n"
        f"iowrap: report: {summary}: mounts[].mount_point is 5001 bytes;"
        " its first 4096 kept\n")
    assert [t["dir"] for t in rep["tasks"]] == [str(traces / "t"),
                                                str(traces / "u")]
    u = rep["tasks"][1]
    assert (u["host"], u["key"]) == ("A" * 4096, "\u00e9" * 2048)


def test_an_oversized_task_name_is_cut_in_the_chrome_export(tmp_path):
    """A 17 MiB task name overflowed the Chrome export's 16 MiB buffer:
    exit 1, nothing written.  It is cut to 4,096 bytes with a warning."""
    traces = one_trace(tmp_path)
    summary = traces / "t" / "summary.json"
    s = json.loads(summary.read_text())
    s["task"]["name"] = "N" * (17 << 20)
    s["task"]["sources"] = []
    summary.write_text(json.dumps(s))
    out = tmp_path / "trace.json"
    p = subprocess.run([str(IOWRAP), "export", "--format", "chrome", "-o",
                        str(out), str(traces)], capture_output=True,
                       text=True, timeout=120)
    assert (p.returncode, p.stderr) == (
        0, f"iowrap: report: {summary}: task.name is {17 << 20} bytes;"
        " its first 4096 kept\n")
    events = json.loads(out.read_text())["traceEvents"]
    assert {e["args"]["name"] for e in events
            if e.get("name") == "process_name"} == {"N" * 4096}


def test_same_walk_as_tasks_depth_and_duplicates(tmp_path):
    # The walk iowrap tasks uses: 8 levels below DIR, a trace reached twice
    # (DIR and DIR/sub given) read once, traces in path order.
    traces = one_trace(tmp_path)
    scan = tmp_path / "scan"
    deep = scan / "1/2/3/4/5/6/7/8"
    shutil.copytree(traces / "t", deep / "t9")  # depth 9: not searched
    shutil.copytree(traces / "t", deep.parent / "t8")  # depth 8
    shutil.copytree(traces / "t", scan / "a" / "t")
    _, stderr, rep = report(scan / "a", scan, out=tmp_path / "out")
    assert stderr == ""
    assert [Path(t["dir"]).relative_to(scan).as_posix()
            for t in rep["tasks"]] == ["1/2/3/4/5/6/7/t8", "a/t"]


def test_output_is_replaced_atomically_not_through_a_symlink(tmp_path):
    traces = one_trace(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (out / "report.json").symlink_to(victim)
    report(traces, out=out)
    assert victim.read_text() == "keep"
    assert not (out / "report.json").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json"]


def test_wcp_append_and_memory_state(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    src = source(tmp_path)
    traces = tmp_path / "traces"
    many = "; ".join(f"head -c {10 + i} {d}/in{i} > {d}/out{i}"
                     for i in range(9))
    run_tasks(traces, [
        {"log": f"echo first > {d}/log",
         "gen": "; ".join(f"head -c 100 {src} > {d}/in{i}"
                          for i in range(9))},
        {"more": f"sleep 0.2; echo more >> {d}/log"},
        {"many": f"sleep 0.2; {many}"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}
    appends = [(names[vs[e["from"]]["task"]], names[vs[e["to"]]["task"]])
               for e in rep["wcp"]["edges"] if e["mutation"] == "APPEND"]
    assert appends == [("log", "more")]
    # 9 inputs x 9 outputs > 64 pairs: one memory state in between.
    mem = [v for v in rep["wcp"]["vertices"] if v["kind"] == "memory"]
    assert len(mem) == 1 and names[mem[0]["task"]] == "many"
    assert mem[0]["location"].endswith(":memory")
    into = [e for e in rep["wcp"]["edges"] if e["to"] == mem[0]["id"]]
    out = [e for e in rep["wcp"]["edges"] if e["from"] == mem[0]["id"]]
    assert {e["mutation"] for e in into} == {"MERGE"} and len(into) == 9
    assert {e["mutation"] for e in out} == {"SPLIT"} and len(out) == 9
    assert rep["wcp"]["edges_dropped"] == 0


def append_steps(rep):
    """APPEND edges as (task of the version before, appending task)."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}
    return [(names[vs[e["from"]]["task"]], names[vs[e["to"]]["task"]])
            for e in rep["wcp"]["edges"] if e["mutation"] == "APPEND"]


def flow_edges(rep):
    """Data flow as (writer, reader, file name, bytes), tasks by dir."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    paths = {f["id"]: Path(f["path"]).name for f in rep["files"]}
    return {(names[e["writer"]], names[e["reader"]], paths[e["file"]],
             e["bytes"]) for e in rep["data_flow"]["edges"]}


def test_a_name_reused_across_renames_finds_the_file_it_named(tmp_path):
    """io.csv's renames carry no inode: the name is the file that had it
    at that moment of the task, not the last file files.csv lists."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"T1": f"cd {d} && echo one > tmp && mv tmp out1 && "
               f"echo two2 > tmp && mv tmp out2"},
        {"T2": f"cat {d}/out1 {d}/out2 > {d}/both"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    t1 = task_by_dir(rep, "T1")
    assert sorted((Path(f["path"]).name, f["write"]["bytes"])
                  for f in t1["files"] if f["path"].startswith(f"{d}/")) == [
        ("out1", 4), ("out2", 5)]
    files = {Path(f["path"]).name: f for f in rep["files"]
             if f["path"].startswith(f"{d}/")}
    assert sorted(files) == ["both", "out1", "out2"]
    for name in ("out1", "out2"):
        f = files[name]
        assert (f["tasks"], f["readers"], f["writers"]) == (2, 1, 1)
    assert flow_edges(rep) == {("T1", "T2", "out1", 4),
                               ("T1", "T2", "out2", 5)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def test_unlink_of_a_reused_name_marks_the_removed_file(tmp_path):
    """The unlink goes to the first f, not to the f made after it."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"RE": f"cd {d}; echo aaaa > f; rm f; echo bbbbbbbb > f"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    recs = [f for f in task_by_dir(rep, "RE")["files"]
            if f["path"] == f"{d}/f"]
    assert sorted((f["write"]["bytes"], f["size_last_close"],
                   f["unlinked_s"] is not None) for f in recs) == [
        (5, 5, True), (9, 9, False)]


def test_a_path_counts_tasks_not_records(tmp_path):
    """One task, two files named f (an inode id each): one task, one
    reader, one writer of the path, two task x file records."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"RE": f"cd {d}; echo aaaa > f; cat f; rm f; echo bb > f; cat f"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    f = next(f for f in rep["files"] if f["path"] == f"{d}/f")
    assert (f["tasks"], f["readers"], f["writers"]) == (1, 1, 1)
    assert len(f["task_files"]) == 2


def test_input_size_is_the_earliest_open_in_time(tmp_path):
    """a_late, first in path order, rewrote the input after z_early read
    half of its 3000 bytes: the input is 3000 bytes, and z_early's step
    a CONVERT, not a TRANSFER of the whole file."""
    d = tmp_path / "data"
    d.mkdir()
    (d / "in.txt").write_bytes(b"\0" * 3000)
    traces = tmp_path / "traces"
    run_tasks(traces, [
        {"z_early": f"head -c 1500 {d}/in.txt > {d}/out.txt"},
        {"a_late": f"echo new > {d}/in.txt"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    inputs = [(Path(v["path"]).name, v["size"])
              for v in rep["wcp"]["vertices"] if v["kind"] == "input"]
    assert inputs == [("in.txt", 3000)]
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}
    steps = [(vs[e["from"]]["kind"], Path(vs[e["to"]]["path"]).name,
              e["mutation"]) for e in rep["wcp"]["edges"]
             if vs[e["from"]]["kind"] == "input"]
    assert steps == [("input", "out.txt", "CONVERT")]


def test_a_file_created_then_appended_is_one_convert(tmp_path):
    """The task made the file itself before appending: no input version
    of it, one CONVERT from the start."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"LOG": f"cd {d}; echo start > log; sleep 0.1; echo end >> log"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    log = task_by_dir(rep, "LOG")["files"]
    assert [f["appended"] for f in log if f["path"] == f"{d}/log"] == [True]
    assert [(v["kind"], v["size"]) for v in rep["wcp"]["vertices"]] == [
        ("start", -1), ("written", 10)]
    assert wcp_steps(rep) == [("start", "log@LOG", "CONVERT")]


def test_an_append_alone_is_no_data_flow(tmp_path):
    """P2 only appends to P1's x.txt: an APPEND in the WCP, but it read
    nothing, so no data-flow edge; P3 read P2's version."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"P1": f"printf 'line3\\nline1\\n' > {d}/x.txt; "
               f"printf 'line2\\n' >> {d}/x.txt"},
        {"P2": f"sleep 0.05; printf 'line0\\n' >> {d}/x.txt"},
        {"P3": f"sleep 0.05; cat {d}/x.txt > {d}/y.txt"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("P2", "P3", "x.txt", 24)}
    assert append_steps(rep) == [("P1", "P2")]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]
    x = next(f for f in rep["files"] if f["path"] == f"{d}/x.txt")
    assert (x["tasks"], x["readers"], x["writers"]) == (3, 1, 2)


def test_output_and_option_errors_name_what_is_wrong(tmp_path):
    traces = one_trace(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("")
    proc, stderr, _ = report(traces, out=afile, check=1)
    assert stderr == (f"iowrap: report: output directory {afile} is not a "
                      "directory; choose another -o OUTDIR\n")
    for args, msg in ((["-f", "x"], "unknown option '-f'"),
                      (["-o"], "option '-o' needs an argument")):
        proc = subprocess.run([str(IOWRAP), "report"] + args,
                              capture_output=True, text=True)
        assert proc.returncode == 2
        assert proc.stderr.startswith(f"iowrap: report: {msg}\n"
                                      "usage: iowrap report "), proc.stderr


def test_export_csv_merges_tasks(tmp_path):
    d, traces = make_numbers_workflow(tmp_path)
    out = tmp_path / "all.csv"
    p = subprocess.run([str(IOWRAP), "export", "--format", "csv", "-o",
                        str(out), str(traces)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    merged = csv_rows(out)
    for name in ("t1", "t2", "t3"):
        own = csv_rows(traces / name / "io.csv")
        mine = [r for r in merged if r["task_name"] == name]
        assert len(mine) == len(own)
        assert {r["trace_dir"] for r in mine} == {str(traces / name)}
        strip = [{k: v for k, v in r.items()
                  if k not in ("task_id", "task_name", "task_key", "host",
                               "trace_dir")} for r in mine]
        assert strip == own
    procs = subprocess.run([str(IOWRAP), "export", "--format", "csv",
                            "--table", "procs", str(traces)],
                           capture_output=True, text=True, check=True)
    rows = csv_rows_text(procs.stdout)
    assert len(rows) == sum(len(csv_rows(traces / n / "procs.csv"))
                            for n in ("t1", "t2", "t3"))
    bad = subprocess.run([str(IOWRAP), "export", "--format", "xml",
                          str(traces)], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "--format must be csv or chrome" in bad.stderr


def csv_rows_text(text):
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_columns_by_name_reordered_and_extra(tmp_path):
    """Another format version: columns reordered and one added."""
    traces = one_trace(tmp_path)
    _, _, before = report(traces, out=tmp_path / "out1")
    io_csv = traces / "t" / "io.csv"
    rows = csv_rows(io_csv)
    cols = ["extra"] + list(reversed(list(rows[0].keys())))
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(dict(r, extra="x,y"))
    io_csv.write_bytes(buf.getvalue().encode("utf-8", "surrogateescape"))
    _, stderr, after = report(traces, out=tmp_path / "out2")
    assert stderr == ""
    assert after["tasks"][0]["files"] == before["tasks"][0]["files"]
    assert after["workflow"] == before["workflow"]


def test_random_damage_never_crashes(tmp_path):
    """Cut and flip bytes of every trace file: a report or a clean
    refusal, never a crash."""
    import random
    traces = one_trace(tmp_path)
    pristine = {p.name: p.read_bytes() for p in (traces / "t").iterdir()}
    rnd = random.Random(5)
    for i in range(40):
        for name, data in pristine.items():
            b = bytearray(data)
            for _ in range(rnd.randrange(0, 6)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            if rnd.random() < 0.5:
                b = b[:rnd.randrange(len(b) + 1)]
            (traces / "t" / name).write_bytes(bytes(b))
        out = tmp_path / f"out{i}"
        p = subprocess.run([str(IOWRAP), "report", "-o", str(out),
                            str(traces)], capture_output=True, timeout=60)
        assert p.returncode in (0, 3), (i, p.returncode, p.stderr)
        if p.returncode == 0:
            json.loads((out / "report.json").read_text())


# ---- Fig. 5: per-access points ----

def placed_accesses(rep, traces):
    """Per path, io.csv's successful reads and writes with a known offset,
    in the report's task order then row order, as the report writes them:
    [task, start, end, offset, size, type]."""
    out = {}
    for t in rep["tasks"]:
        paths = {f["inode"]: f["path"] for f in t["files"]}
        for r in csv_rows(Path(t["dir"]) / "io.csv"):
            if r["type"] not in ("R", "W") or r["inode"] == "0":
                continue
            if int(r["result"]) < 0 or r["offset"] in ("", "-1"):
                continue
            out.setdefault(paths[int(r["inode"])], []).append(
                [t["id"], Decimal(r["time_start"]), Decimal(r["time_end"]),
                 int(r["offset"]), int(r["result"]), r["type"]])
    return out


def test_fig5_accesses_match_io_csv_and_sample_evenly(tmp_path):
    """Three real tasks on one file: a writer, `dd bs=64` (5,001 reads,
    more than the 3,000 points a file keeps) and `cat`.  Every file's points
    are exactly its io.csv rows; the big one's are access k = floor(j * N /
    3000), j = 0..2999, in task order then row order."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"a_write": f"head -c 320000 /dev/zero > {d}/big"},
        {"b_dd": f"dd if={d}/big of=/dev/null bs=64 status=none"},
        {"c_cat": f"cat {d}/big > /dev/null"},
    ])
    _, stderr, _ = report(traces, out=tmp_path / "out")
    assert stderr == ""
    rep = json.loads((tmp_path / "out" / "report.json").read_text(),
                     parse_float=Decimal)
    want = placed_accesses(rep, traces)
    files = rep["files"]
    got = {files[a["file"]]["path"]: a for a in rep["accesses"]}
    assert set(got) == set(want)
    big = got[f"{d}/big"]
    rows = want[f"{d}/big"]
    n = len(rows)
    assert n >= 5000 + 1 + 1   # dd's reads and EOF read, cat, the writes
    assert big["total"] == n
    assert big["reads"] == sum(r[5] == "R" for r in rows)
    assert big["writes"] == sum(r[5] == "W" for r in rows) >= 1
    assert big["sampled"] is True
    assert big["points"] == [rows[j * n // 3000] for j in range(3000)]
    # All three tasks are in the sample, the writer first.
    assert [p[0] for p in big["points"]][0] == task_by_dir(rep, "a_write")["id"]
    assert {p[0] for p in big["points"]} == {t["id"] for t in rep["tasks"]}
    for path, a in got.items():
        if path != f"{d}/big":
            assert a["sampled"] is False and a["points"] == want[path], path
            assert a["total"] == len(want[path])
    # Data files first, then system files, each by id.
    order = [(files[a["file"]]["system"], a["file"]) for a in rep["accesses"]]
    assert order == sorted(order)
    assert rep["access_sampling"] == {
        "max_per_file": 3000, "max_total": 200000, "files": len(want),
        "accesses": sum(len(v) for v in want.values()),
        "points": sum(min(len(v), 3000) for v in want.values()),
        "sampled_files": 1, "sampled": True}


def test_partial_traces_are_warned(tmp_path):
    """A task whose trace is not complete (here a process left running
    with --no-wait-orphans; a summary's own problem, of any length), or
    that used io_uring or Linux AIO, is named in the report's warnings:
    its figures are short.  The report said nothing before."""
    traces = tmp_path / "traces"
    data = tmp_path / "data.txt"
    data.write_text("hello\n")
    for mode in ("aio", "uring"):
        subprocess.run([str(IOWRAP), "--level", "full", "-o",
                        str(traces / mode), "--", str(HELPERS / "kernelaio"),
                        mode, str(data)], check=True, capture_output=True)
    subprocess.run([str(IOWRAP), "--no-wait-orphans", "-o",
                    str(traces / "orphan"), "--", "sh", "-c",
                    "sleep 3 & exit 0"], check=True, capture_output=True)
    t = one_trace(tmp_path, name="long")
    summary = json.loads((t / "long" / "summary.json").read_text())
    summary["tracing"]["problems"] = ["x" * 5000]
    summary["tracing"]["complete"] = False
    (t / "long" / "summary.json").write_text(json.dumps(summary))
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert sorted(rep["warnings"]["messages"]) == [
        f"{traces}/aio: the task used Linux AIO (io_submit), whose reads "
        "and writes are not traced",
        f"{traces}/long: trace incomplete ({'x' * 300}); its figures may "
        "be short",
        f"{traces}/orphan: trace incomplete (processes left untraced: 1); "
        "its figures may be short",
        f"{traces}/uring: the task used io_uring, whose operations (opens, "
        "reads, writes) are not traced"]
    assert {t["name"]: t["complete"] for t in rep["tasks"]} == {
        "aio": True, "uring": True, "orphan": False, "long": False}


def mount_of(path):
    """The mount point holding path, as the task saw it."""
    p = Path(path).resolve()
    while not os.path.ismount(p):
        p = p.parent
    return str(p)


def test_reading_after_an_append_is_a_data_flow_read(tmp_path):
    """T2 appended to T1's log and then read all of it: a reader of T1's
    version (7 B read), and its own version appends to it."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"T1": f"echo aaaa > {d}/log"},
        {"T2": f"echo b >> {d}/log; cat {d}/log > {d}/out"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("T1", "T2", "log", 7)}
    assert append_steps(rep) == [("T1", "T2")]


FIFO_WRITERS = {
    # O_TRUNC: the version begins at the open
    "shell": "{{ sleep 0.3; seq 1 1000; }} > {fifo}",
    # no O_TRUNC: the version begins at the write, after the read began
    "plain_open": "/usr/bin/python3 -c \"import os, time; "
                  "fd = os.open('{fifo}', os.O_WRONLY); time.sleep(0.3); "
                  "os.write(fd, b'x' * 3893)\"",
}


@pytest.mark.parametrize("writer", sorted(FIFO_WRITERS))
def test_a_named_fifo_between_two_tasks_is_a_data_flow(tmp_path, writer):
    """A writer and a reader running at once, joined by a FIFO (mkfifo; a
    Snakemake pipe() output): the reader's read waits for the writer's
    write, which comes 0.3 s after both opened.  The edge writer -> reader
    on the FIFO, no input state for it (the version a read at no position
    read is the one begun by the read's end), nothing read twice (its
    reads have no offset, and each byte of a FIFO is read once).  Before,
    the FIFO was in no trace; with the FIFO traced, the reader of a writer
    that opened without O_TRUNC read the input state, and the 3893 bytes
    counted as read twice."""
    d = tmp_path / "data"
    d.mkdir()
    os.mkfifo(d / "fifo")
    traces = tmp_path / "traces"
    run_tasks(traces, [{
        "writer": FIFO_WRITERS[writer].format(fifo=d / "fifo"),
        "reader": f"wc -c < {d}/fifo > {d}/n",
    }])
    assert (d / "n").read_text() == "3893\n"
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("writer", "reader", "fifo", 3893)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]
    (fifo,) = [f for f in rep["files"] if f["path"] == f"{d}/fifo"]
    assert (fifo["tasks"], fifo["readers"], fifo["writers"],
            fifo["bytes_read"], fifo["bytes_written"],
            fifo["reread_bytes"]) == (2, 1, 1, 3893, 3893, 0)
    assert rep["data_flow"]["reread_bytes"] == 0
    assert rep["data_flow"]["written_never_read"] == [
        f["id"] for f in rep["files"] if f["path"] == f"{d}/n"]
    assert wcp_steps(rep) == [("start", "fifo@writer", "CONVERT"),
                              ("fifo@writer", "n@reader", "CONVERT")]
    assert rep["wcp"]["edges_dropped"] == 0


NONBLOCK_READER = (
    "/usr/bin/python3 -c \"import os, select; "
    "fd = os.open('{fifo}', os.O_RDONLY | os.O_NONBLOCK); "
    "n = len(os.read(fd, 65536)); p = select.poll(); "
    "p.register(fd, select.POLLIN)\n"
    "while p.poll():\n"
    "    b = os.read(fd, 65536)\n"
    "    if not b: break\n"
    "    n += len(b)\n"
    "open('{out}', 'w').write(str(n))\"")


def test_a_fifo_read_of_nothing_before_its_writer_came_reads_no_input(
        tmp_path):
    """A poll-driven reader (O_NONBLOCK) whose first read returns 0 bytes:
    no writer has opened the FIFO yet (the shell's O_TRUNC open comes 1 s
    later).  That empty read dates nothing: the version the reader read is
    the one its first read of bytes saw, the writer's.  Before, the empty
    read's end dated it, and the reader read the input state."""
    d = tmp_path / "data"
    d.mkdir()
    os.mkfifo(d / "fifo")
    traces = tmp_path / "traces"
    run_tasks(traces, [{
        "writer": f"sleep 1; seq 1 1000 > {d}/fifo",
        "reader": NONBLOCK_READER.format(fifo=d / "fifo", out=d / "n"),
    }])
    assert (d / "n").read_text() == "3893"
    rows = [r for r in csv_rows(next(traces.glob("reader*/io.csv")))
            if (r["type"], r["offset"], r["result"]) == ("R", "-1", "0")]
    assert len(rows) == 2  # before the writer came, and at its close
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("writer", "reader", "fifo", 3893)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def test_a_vertex_location_is_its_records_mount(tmp_path):
    """f was removed and made again, then renamed away: the name leads
    nowhere, but each version's location still has its mount point."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"T": f"cd {d}; echo a > f; rm f; echo bb > f; mv f g"},
    ])
    _, _, rep = report(traces, out=tmp_path / "out")
    host = rep["tasks"][0]["host"]
    where = f"{host}:{mount_of(d)}"
    assert sorted((v["kind"], Path(v["path"]).name, v["location"])
                  for v in rep["wcp"]["vertices"]
                  if v["kind"] in ("written", "deleted")) == [
        ("deleted", "f", where), ("written", "f", where),
        ("written", "g", where)]


def test_report_options_are_checked_as_in_every_subcommand(tmp_path):
    traces = one_trace(tmp_path)
    for args, msg in (
            (["-zt", str(traces)], "unknown option '-z'"),
            (["--output"], "option '--output' needs an argument"),
            (["--text=1", str(traces)], "option '--text' takes no value"),
            (["-o", "--", str(traces)],
             "option '-o' has '--' as its value: an unset or empty "
             "variable before '--'?"),
            (["-o", "--text", str(traces)],
             "option '-o' would take '--text' as its value")):
        proc = subprocess.run([str(IOWRAP), "report"] + args,
                              capture_output=True, text=True,
                              cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        first = proc.stderr.splitlines()[0]
        assert first.startswith(f"iowrap: report: {msg}"), first
    assert not (tmp_path / "--").exists()


def staged_report(tmp_path, *scripts):
    """Tasks T1, T2 ... run one after the other in the data directory;
    returns it and the report."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {f"T{i}": f"cd {d}; {s}"} for i, s in enumerate(scripts, 1)])
    return d, report(traces, out=tmp_path / "out")[2]


def data_records(rep, name, d):
    """A task's records of files in d: (name, write bytes, read bytes,
    unlinked), sorted."""
    return sorted((Path(f["path"]).name, f["write"]["bytes"],
                   f["read"]["bytes"], f["unlinked_s"] is not None)
                  for f in task_by_dir(rep, name)["files"]
                  if f["path"] and f["path"].startswith(f"{d}/"))


@pytest.mark.parametrize("then", ["rm g", "mv g h"])
def test_one_name_of_a_hard_linked_file_goes_not_the_file(tmp_path, then):
    """T2 read f by both of its names, then removed or renamed g: f is
    still there, so T2's record is f, not unlinked, and read what T1
    wrote; no deleted state."""
    d, rep = staged_report(tmp_path, "echo data > f",
                           f"ln f g; cat f g > out; {then}", "cat f")
    assert data_records(rep, "T2", d) == [("f", 0, 10, False),
                                          ("out", 10, 0, False)]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "deleted"]
    assert flow_edges(rep) == {("T1", "T2", "f", 10), ("T1", "T3", "f", 5)}


def test_a_name_stat_ed_before_its_unlink_is_the_file_removed(tmp_path):
    """rm only stats f before unlinking it: the unlink is the old f's
    (T1's), not the f T2 made after, the one files.csv lists last."""
    d, rep = staged_report(tmp_path, "echo hello > f",
                           "rm f; echo new > f")
    assert data_records(rep, "T2", d) == [("f", 0, 0, True),
                                          ("f", 4, 0, False)]


def test_a_name_renamed_before_its_reuse_is_not_the_new_file(tmp_path):
    """T2 renamed T1's tmp away before making a new tmp: the new tmp keeps
    its name, and T3 read tmp from T2, out1 from T1 (which wrote it as
    tmp): no input."""
    d, rep = staged_report(tmp_path, "echo one > tmp",
                           "mv tmp out1; echo two2 > tmp", "cat out1 tmp")
    assert data_records(rep, "T2", d) == [("out1", 0, 0, False),
                                          ("tmp", 5, 0, False)]
    assert flow_edges(rep) == {("T2", "T3", "tmp", 5),
                               ("T1", "T3", "out1", 4)}
    assert written_as(rep) == {("T1", "T3", "out1", "tmp")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def written_as(rep):
    """Data-flow edges whose writer wrote the file by another name:
    (writer, reader, the reader's name, the writer's)."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    paths = {f["id"]: Path(f["path"]).name for f in rep["files"]}
    return {(names[e["writer"]], names[e["reader"]], paths[e["file"]],
             paths[e["written_as"]])
            for e in rep["data_flow"]["edges"] if "written_as" in e}


def file_counts(rep, d):
    """Data files in d as (name, readers, writers), sorted."""
    return sorted((Path(f["path"]).name, f["readers"], f["writers"])
                  for f in rep["files"] if f["path"].startswith(f"{d}/"))


def never_read(rep):
    paths = {f["id"]: Path(f["path"]).name for f in rep["files"]}
    return sorted(paths[g] for g in rep["data_flow"]["written_never_read"])


def test_a_file_renamed_by_another_task_is_the_writers(tmp_path):
    """T2 renamed what T1 wrote (tmp -> out1), T3 read out1: the file T1
    wrote, named by the reader's name; no input, and the critical path
    goes T1 -> T3."""
    d, rep = staged_report(tmp_path, "echo one > tmp", "mv tmp out1",
                           "cat out1 > final")
    assert flow_edges(rep) == {("T1", "T3", "out1", 4)}
    assert written_as(rep) == {("T1", "T3", "out1", "tmp")}
    assert file_counts(rep, d) == [("final", 0, 1), ("out1", 1, 0),
                                   ("tmp", 0, 1)]
    assert never_read(rep) == ["final"]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]
    assert wcp_steps(rep) == [("start", "tmp@T1", "CONVERT"),
                              ("tmp@T1", "final@T3", "TRANSFER")]
    proc, _, _ = report(tmp_path / "traces", out=tmp_path / "out2",
                        text=True)
    assert (f"  T1 -> T3: {d}/out1 (written as {d}/tmp) (4 B)\n"
            in proc.stdout.decode())


def test_inputs_staged_as_links_are_the_writers_files(tmp_path):
    """Nextflow's staging: links in a task's work directory, made outside
    the traces (.command.run does it), to the files earlier tasks wrote.
    T2 reads T1's a/out.txt through b/in.txt (absolute) and b/rel.txt
    (relative), T3 T2's b/res.txt through a link to b: no task wrote by
    the reader's name, so the kernel's name for the file its open reached
    (io.csv's path2) finds the writer's: an edge on the reader's name
    written as the writer's; no input, and the critical path goes T1 ->
    T2 -> T3."""
    d = tmp_path / "data"
    (d / "a").mkdir(parents=True)
    (d / "b").mkdir()
    traces = tmp_path / "traces"
    run_tasks(traces, [{"T1": f"printf 'hello\\n' > {d}/a/out.txt"}])
    os.symlink(d / "a" / "out.txt", d / "b" / "in.txt")
    os.symlink("../a/out.txt", d / "b" / "rel.txt")
    run_tasks(traces, [{"T2": f"cd {d}/b; cat in.txt rel.txt > res.txt"}])
    os.symlink(d / "b", d / "c")
    run_tasks(traces, [{"T3": f"cat {d}/c/res.txt > {d}/final"}])
    rep = report(traces, out=tmp_path / "out")[2]
    assert flow_edges(rep) == {("T1", "T2", "in.txt", 12),
                               ("T2", "T3", "res.txt", 12)}
    assert {(e["file"], e["written_as"])
            for e in rep["data_flow"]["edges"]} == {
        (file_id(rep, d / "b" / "in.txt"), file_id(rep, d / "a" / "out.txt")),
        (file_id(rep, d / "c" / "res.txt"),
         file_id(rep, d / "b" / "res.txt"))}
    assert data_records(rep, "T2", d) == [("in.txt", 0, 12, False),
                                          ("res.txt", 12, 0, False)]
    assert never_read(rep) == ["final"]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]
    assert wcp_steps(rep) == [("start", "out.txt@T1", "CONVERT"),
                              ("out.txt@T1", "res.txt@T2", "TRANSFER"),
                              ("res.txt@T2", "final@T3", "TRANSFER")]


def file_id(rep, path):
    (i,) = [f["id"] for f in rep["files"] if f["path"] == str(path)]
    return i


def linked_workflow(tmp_path, files, steps):
    """A directory real holding files (name -> text) and a link L to it;
    runs steps(real, L) (see run_tasks); returns real and the report."""
    real = tmp_path / "real"
    real.mkdir()
    for name, text in files.items():
        (real / name).write_text(text)
    os.symlink(real, tmp_path / "L")
    run_tasks(tmp_path / "traces", steps(real, tmp_path / "L"))
    return real, report(tmp_path / "traces", out=tmp_path / "out")[2]


def test_names_through_a_linked_directory_join_as_written(tmp_path):
    """A workflow under a linked directory (HPC sites link /home or
    /scratch to the file system's mount), named by it: T1 writes tmp, T2
    renames it out, T3 reads out, all by the link's names. Joined by those
    names, as they were written: T1 -> T3 on out, no input."""
    _, rep = linked_workflow(tmp_path, {}, lambda real, d: [
        {"T1": f"echo one > {d}/tmp"}, {"T2": f"mv {d}/tmp {d}/out"},
        {"T3": f"cat {d}/out > {d}/final"}])
    assert flow_edges(rep) == {("T1", "T3", "out", 4)}
    assert written_as(rep) == {("T1", "T3", "out", "tmp")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def test_touching_a_file_with_data_makes_no_version(tmp_path):
    """T2's `touch f` (O_CREAT, no O_TRUNC) of the f T1 wrote changes no
    byte: T3 reads T1's f, and T2 is no writer of it; a `touch` that makes
    a file (T2's flag file, read by T3 as Snakemake's touch() outputs are)
    is its writer, of an empty version."""
    d, rep = staged_report(tmp_path, "echo data > f", "touch f flag",
                           "cat f flag > out")
    assert flow_edges(rep) == {("T1", "T3", "f", 5), ("T2", "T3", "flag", 0)}
    assert file_counts(rep, d) == [("f", 1, 1), ("flag", 1, 1),
                                   ("out", 0, 1)]
    # Both ways into out cost the same from T3's start: the longer of
    # T1's and T2's work before their versions wins, T2 on a tie (the
    # later state); which one is longer depends on the run.
    cost = {e[1]: e[3] for e in wcp_edges(rep).values() if e[0] == "start"}
    first = "flag@T2" if cost["flag@T2"] >= cost["f@T1"] else "f@T1"
    assert set(cost) == {"flag@T2", "f@T1"}
    assert wcp_steps(rep) == [("start", first, "CONVERT"),
                              (first, "out@T3", "MERGE")]


@pytest.mark.parametrize("level, change, read", [
    ("full", "truncate -s 2 f", 2),
    ("full", "/usr/bin/python3 -c 'import os, mmap; "
             "m = mmap.mmap(os.open(\"f\", os.O_RDWR | os.O_CREAT), 5); "
             "m[0:1] = b\"X\"; m.flush()'", 5),
    ("files", "echo more >> f", None),
    ("files", "touch f", None)])
def test_an_open_with_o_creat_that_changed_the_data_makes_a_version(
        tmp_path, level, change, read):
    """O_CREAT without O_TRUNC of a file with data, then a truncate or a
    write through a mapping: T2 is f's writer, T3 reads its version; at
    --level files, with no reads or writes to tell by, any such open makes
    its task a writer (a touch too)."""
    d = tmp_path / "data"
    d.mkdir()
    traces = tmp_path / "traces"
    for name, script in [("T1", "echo data > f"), ("T2", change),
                         ("T3", "cat f > out")]:
        proc = subprocess.run(
            [str(IOWRAP), "--level", level, "-o", str(traces / name), "--",
             "sh", "-c", script], cwd=d, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    rep = report(traces, out=tmp_path / "out")[2]
    assert file_counts(rep, d)[0] == ("f", 1 if read else 0, 2)
    if read:
        assert flow_edges(rep) == {("T2", "T3", "f", read)}


def test_an_o_creat_open_written_by_linux_aio_makes_a_version(tmp_path):
    """io_submit's write is no W row: a task that used Linux AIO (its
    summary says so) may have changed what it opened with O_CREAT, so it
    is the writer T3 reads."""
    d, rep = staged_report(tmp_path, "printf 12345 > f",
                           f"{HELPERS / 'kernelaio'} aio-write f",
                           "cat f > out")
    assert (d / "f").read_text() == "ABCDE"
    assert flow_edges(rep) == {("T2", "T3", "f", 5)}


def test_a_link_made_where_a_file_was_leads_to_its_target(tmp_path):
    """T3 replaced T1's in by a link to T2's out: T4's name in still finds
    T1's version (an unlink by another task ends no name), but the kernel's
    name for what T4's open reached, out, holds a later one: T4 read T2's."""
    d, rep = staged_report(tmp_path, "echo old > in", "echo new > out",
                           "rm in; ln -s out in", "cat in > r")
    assert flow_edges(rep) == {("T2", "T4", "in", 4)}
    assert written_as(rep) == {("T2", "T4", "in", "out")}


def test_a_directory_renamed_past_the_cap_warns(tmp_path):
    """27 files in a directory its task renames 10,000 times: 270,000
    records renamed with it, past the cap of 262,144 (TASK_MOVED_BELOW_MAX,
    docs/report-format.md): a warning, and the rest of T1's records keep
    their names; the names moved for other tasks (270,000 of at most
    1,048,576) still lead T2 to T1's version."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"T1": f"cd {d} && /usr/bin/python3 -c 'import os\n"
               "os.mkdir(\"d0\")\n"
               "for i in range(27): open(f\"d0/f{i}\", \"w\").write(\"x\")\n"
               "for i in range(10000): os.rename(f\"d{i}\", f\"d{i + 1}\")'"},
        {"T2": f"cat {d}/d10000/f26 > {d}/out"}])
    _, stderr, rep = report(traces, out=tmp_path / "out")
    assert (f"{traces}/T1: over 262144 records renamed with their "
            "directories: the rest keep the names they had") in stderr
    assert flow_edges(rep) == {("T1", "T2", "f26", 1)}
    assert "over 1048576 names" not in stderr


def test_a_name_moved_into_is_not_read_by_the_kernels_name(tmp_path):
    """Under a linked directory L, T2 renames a file from outside the
    workflow onto out by L's names; T3 reads L/out. The kernel's name
    (real/out) last held T1's version, which T2's rename replaced: T3's
    name has moves, so it is not looked up by the kernel's name, and T3
    reads an input."""
    real, rep = linked_workflow(
        tmp_path, {"ext": "external\n"}, lambda real, link: [
            {"T1": f"echo one > {real}/out"},
            {"T2": f"mv {link}/ext {link}/out"},
            {"T3": f"cat {link}/out > {real}/res"}])
    assert (real / "res").read_text() == "external\n"
    assert flow_edges(rep) == set()
    assert [(Path(v["path"]).name, v["size"])
            for v in rep["wcp"]["vertices"] if v["kind"] == "input"] == [
        ("out", 9)]


def test_renames_by_several_tasks_chain(tmp_path):
    """tmp -> mid by T2 (which read it first), mid -> out by T3, appended
    to by T4 and read by T5: each is T1's file."""
    d, rep = staged_report(tmp_path, "echo one > tmp",
                           "cat tmp > copy; mv tmp mid", "mv mid out",
                           "echo two >> out", "cat out")
    assert flow_edges(rep) == {("T1", "T2", "mid", 4),
                               ("T4", "T5", "out", 8)}
    assert written_as(rep) == {("T1", "T2", "mid", "tmp")}
    assert append_steps(rep) == [("T1", "T4")]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def dir_flows(rep, d):
    """Data flow as (writer, reader, the reader's name, the writer's name
    if another, bytes), names relative to d."""
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    paths = {f["id"]: Path(f["path"]).relative_to(d).as_posix()
             for f in rep["files"] if f["path"].startswith(f"{d}/")}
    return {(names[e["writer"]], names[e["reader"]], paths[e["file"]],
             paths.get(e.get("written_as")), e["bytes"])
            for e in rep["data_flow"]["edges"]}


def inputs(rep, d):
    """The input states of files in d, by name relative to d."""
    return sorted(Path(v["path"]).relative_to(d).as_posix()
                  for v in rep["wcp"]["vertices"]
                  if v["kind"] == "input" and v["path"].startswith(f"{d}/"))


def test_a_directory_renamed_by_another_task_moves_the_names_below(tmp_path):
    """T2 renamed the directory T1 wrote into: T3's d2/f is T1's d1/f, as
    for a file renamed by another task; no input state of d2/f."""
    d, rep = staged_report(tmp_path, "mkdir d1; echo x > d1/f", "mv d1 d2",
                           "cat d2/f > out")
    assert dir_flows(rep, d) == {("T1", "T3", "d2/f", "d1/f", 2)}
    assert inputs(rep, d) == []
    assert wcp_steps(rep) == [("start", "f@T1", "CONVERT"),
                              ("f@T1", "out@T3", "TRANSFER")]


def test_a_directory_renamed_into_place_by_its_writer(tmp_path):
    """T1 wrote out.tmp/f and renamed out.tmp to out: its record is
    out/f, the version T2 read by that name (no written_as)."""
    d, rep = staged_report(tmp_path,
                           "mkdir out.tmp; echo x > out.tmp/f; mv out.tmp out",
                           "cat out/f > g")
    assert sorted(f["path"] for f in task_by_dir(rep, "T1")["files"]
                  if f["path"].startswith(f"{d}/")) == [f"{d}/out",
                                                        f"{d}/out/f"]
    assert dir_flows(rep, d) == {("T1", "T2", "out/f", None, 2)}
    assert inputs(rep, d) == []
    assert wcp_steps(rep) == [("start", "f@T1", "CONVERT"),
                              ("f@T1", "g@T2", "TRANSFER")]


def test_a_directory_renamed_into_place_again_and_again(tmp_path):
    """Each round's out.tmp/f_i goes to out/f_i with out.tmp (files.csv
    names f_2 before the first rename, which must not lose it): T2 reads
    T1's out/f_2 by the name T1's record has."""
    d, rep = staged_report(
        tmp_path, "for i in 1 2; do mkdir out.tmp; echo $i > out.tmp/f_$i; "
                  "rm -rf out; mv out.tmp out; done", "cat out/f_2 > g")
    assert sorted(f["path"] for f in task_by_dir(rep, "T1")["files"]
                  if f["path"].startswith(f"{d}/out/")) == [
        f"{d}/out/f_1", f"{d}/out/f_2"]
    assert dir_flows(rep, d) == {("T1", "T2", "out/f_2", None, 2)}
    assert inputs(rep, d) == ["out"]  # the directory rm -rf read


def test_a_renamed_directory_moves_nested_names(tmp_path):
    """d1/sub/f goes to d2/sub/f with d1, and on through a second rename
    of a name no task used before (d2 -> d3)."""
    d, rep = staged_report(tmp_path, "mkdir -p d1/sub; echo x > d1/sub/f",
                           "mv d1 d2", "cat d2/sub/f > a", "mv d2 d3",
                           "cat d3/sub/f > b")
    assert dir_flows(rep, d) == {("T1", "T3", "d2/sub/f", "d1/sub/f", 2),
                                 ("T1", "T5", "d3/sub/f", "d1/sub/f", 2)}
    assert inputs(rep, d) == []


def test_a_directory_renamed_and_back(tmp_path):
    """d1 -> d2 (T2), d2 -> d1 (T4): T3 read T1's file as d2/f, T5 as
    d1/f again; T6 renamed it there and back itself before reading."""
    d, rep = staged_report(tmp_path, "mkdir d1; echo x > d1/f", "mv d1 d2",
                           "cat d2/f > a", "mv d2 d1", "cat d1/f > b",
                           "mv d1 d3; mv d3 d1; cat d1/f > c")
    assert dir_flows(rep, d) == {("T1", "T3", "d2/f", "d1/f", 2),
                                 ("T1", "T5", "d1/f", None, 2),
                                 ("T1", "T6", "d1/f", None, 2)}
    assert inputs(rep, d) == []


@pytest.mark.parametrize("mv, name", [("mv -T d1 d2", "d2/f"),
                                      ("mv d1 d2", "d2/d1/f")])
def test_a_directory_renamed_onto_or_into_an_empty_one(tmp_path, mv, name):
    """mv -T replaces the empty d2; plain mv moves d1 into it."""
    d, rep = staged_report(tmp_path, "mkdir d1 d2; echo x > d1/f", mv,
                           f"cat {name} > out")
    assert dir_flows(rep, d) == {("T1", "T3", name, "d1/f", 2)}
    assert inputs(rep, d) == []


def test_a_file_written_below_a_renamed_directory_wins(tmp_path):
    """T3 rewrote d2/f after the rename: T4 reads it from T3, and d2/g,
    which T3 did not touch, from T1 (written as d1/g)."""
    d, rep = staged_report(tmp_path, "mkdir d1; echo x > d1/f; echo yy > d1/g",
                           "mv d1 d2", "echo new > d2/f",
                           "cat d2/f d2/g > out")
    assert dir_flows(rep, d) == {("T3", "T4", "d2/f", None, 4),
                                 ("T1", "T4", "d2/g", "d1/g", 3)}
    assert inputs(rep, d) == []


def test_a_file_open_across_its_directory_s_rename(tmp_path):
    """T2 opened d1/f, renamed d1 to d2 and then read: its record is
    d2/f, and it read T1's version (written as d1/f)."""
    d, rep = staged_report(
        tmp_path, "mkdir d1; echo x > d1/f",
        "/usr/bin/python3 -c 'import os; f = open(\"d1/f\"); "
        "os.rename(\"d1\", \"d2\"); open(\"out\", \"w\").write(f.read())'")
    assert dir_flows(rep, d) == {("T1", "T2", "d2/f", "d1/f", 2)}
    assert inputs(rep, d) == []


def test_a_name_renamed_away_holds_nothing(tmp_path):
    """A log rotated by T2 (log -> log.1): T3's `>>` makes a new log, no
    APPEND to T1's; T4 reads log from T3 and log.1 from T1."""
    d, rep = staged_report(tmp_path, "echo one > log", "mv log log.1",
                           "echo two >> log", "cat log log.1 > out")
    assert append_steps(rep) == []
    assert flow_edges(rep) == {("T3", "T4", "log", 4),
                               ("T1", "T4", "log.1", 4)}
    assert written_as(rep) == {("T1", "T4", "log.1", "log")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


EXCHANGE = ("/usr/bin/python3 -c 'import ctypes, sys; "
            "c = ctypes.CDLL(None, use_errno=True); "
            "sys.exit(c.renameat2(-100, b\"x\", -100, b\"y\", 2))'")


def test_rename_exchange_swaps_the_names(tmp_path):
    """renameat2(x, y, RENAME_EXCHANGE) swaps the files: in T1's own
    records (its x is what it wrote as y), so T2 reads T1's x; T3 swaps
    them back, so T4 reads as x what T1 wrote as x (named y since)."""
    d, rep = staged_report(tmp_path, f"echo a > x; echo bb > y; {EXCHANGE}",
                           "cat x > o1", EXCHANGE, "cat x y > o3")
    assert data_records(rep, "T1", d) == [("x", 3, 0, False),
                                          ("y", 2, 0, False)]
    assert flow_edges(rep) == {("T1", "T2", "x", 3), ("T1", "T4", "x", 2),
                               ("T1", "T4", "y", 3)}
    assert written_as(rep) == {("T1", "T4", "x", "y"),
                               ("T1", "T4", "y", "x")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def test_rename_exchange_of_directories_swaps_the_names_below(tmp_path):
    """T2 swapped the directories x and y: T3's x/f is what T1 wrote as
    y/f, and its y/f T1's x/f."""
    d, rep = staged_report(tmp_path,
                           "mkdir x y; echo a > x/f; echo bb > y/f",
                           EXCHANGE, "cat x/f y/f > o")
    assert dir_flows(rep, d) == {("T1", "T3", "x/f", "y/f", 3),
                                 ("T1", "T3", "y/f", "x/f", 2)}
    assert inputs(rep, d) == []


def test_a_hard_link_made_by_another_task_names_the_file(tmp_path):
    """`ln f g` alone in T2 (an H row with no inode): g is T1's f for T3;
    in T4, which stat'ed f, the link is a name of f's record: removing f
    deletes nothing."""
    d, rep = staged_report(tmp_path, "echo data > f", "ln f g", "cat g",
                           "ls f > /dev/null; ln f h; rm f")
    assert flow_edges(rep) == {("T1", "T3", "g", 5)}
    assert written_as(rep) == {("T1", "T3", "g", "f")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]
    assert data_records(rep, "T4", d) == [("f", 0, 0, False)]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "deleted"]


def test_a_symlink_is_no_name_of_its_target(tmp_path):
    """A symlink's H row (flags 1) is no link: in T1 s is deleted though
    sl leads to it; T3's fl names no version of f: T5, which read through
    it what T4 wrote (as f2, renamed f), read that, found by the kernel's
    name of the file its open reached (f), not T2's stale f."""
    d, rep = staged_report(tmp_path,
                           "echo q > s; ls s > /dev/null; ln -s $PWD/s sl; "
                           "rm s",
                           "echo a > f", "ln -s $PWD/f fl",
                           "echo bbbbbbbb > f2; mv f2 f", "cat fl > o5")
    assert data_records(rep, "T1", d) == [("s", 2, 0, True)]
    assert [(v["task"], Path(v["path"]).name) for v in rep["wcp"]["vertices"]
            if v["kind"] == "deleted"] == [(task_by_dir(rep, "T1")["id"],
                                            "s")]
    assert data_records(rep, "T5", d) == [("fl", 0, 9, False),
                                          ("o5", 9, 0, False)]
    assert flow_edges(rep) == {("T4", "T5", "fl", 9)}
    assert written_as(rep) == {("T4", "T5", "fl", "f")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


LINK_OUT = "mkdir real; ln -s $PWD/real/out out"


@pytest.mark.parametrize("writer, reader, name, written", [
    (f"{LINK_OUT}; echo x > out", "cat real/out > r", "out", "out"),
    ("mkdir real; ln -s real L; echo x > L/f", "cat real/f > r", "f", "f"),
    (f"{LINK_OUT}; echo x > out", "ln -s $PWD/real/out o2; cat o2 > r",
     "o2", "out"),
    ("mkdir real; ln -s real L; echo x > L/f",
     "mv real real2; cat real2/f > r", "f", "f")])
def test_a_file_written_through_a_link_is_found_by_its_own_name(
        tmp_path, writer, reader, name, written):
    """T1 wrote through a symbolic link (to the file, or to its directory):
    its version is under its name, the link's, and under the kernel's name
    of the file its open reached (io.csv's path2), so T2 reading that file
    by its own name, through another link to it, or after renaming its
    directory, reads T1's: an edge on T2's name written as T1's, no
    input."""
    d, rep = staged_report(tmp_path, writer, reader)
    assert flow_edges(rep) == {("T1", "T2", name, 2)}
    assert written_as(rep) == {("T1", "T2", name, written)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def test_a_file_written_through_a_link_removed_by_its_name_is_deleted(
        tmp_path):
    """T2 removed real/out, which T1 wrote through the link out: the
    deletion is of T1's version (not of an input state)."""
    d, rep = staged_report(tmp_path, f"{LINK_OUT}; echo x > out",
                           "rm real/out")
    vs = {v["id"]: v for v in rep["wcp"]["vertices"]}
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    assert [(vs[e["from"]]["kind"], Path(vs[e["from"]]["path"]).name,
             names.get(vs[e["from"]]["task"]), vs[e["to"]]["path"],
             names[e["task"]])
            for e in rep["wcp"]["edges"] if e["mutation"] == "DELETE"] == [
        ("written", "out", "T1", str(d / "real" / "out"), "T2")]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def test_a_direct_write_after_one_through_a_link_is_read(tmp_path):
    """The later version wins either way: T2 wrote real/out through the
    link out after T1 wrote it by name, T3 read T2's; T4 rewrote it by
    name, T5 (through out) and T6 (by name) read T4's."""
    d, rep = staged_report(tmp_path, "mkdir real; echo x > real/out",
                           "ln -s $PWD/real/out out; echo yy > out",
                           "cat real/out > r3", "echo zzz > real/out",
                           "cat out > r5", "cat real/out > r6")
    assert flow_edges(rep) == {("T2", "T3", "out", 3),
                               ("T4", "T5", "out", 4),
                               ("T4", "T6", "out", 4)}
    assert written_as(rep) == {("T2", "T3", "out", "out"),
                               ("T4", "T5", "out", "out")}


def test_a_file_written_through_a_link_moves_with_its_renames(tmp_path):
    """After T1 wrote real/out through the link out, T2 renamed the file
    (T3 reads it as real/moved), T4 the file back and the link (T5 reads
    the file by its own name, T6 through the link), T7 the directory (T8
    reads real2/out): each read is T1's."""
    d, rep = staged_report(tmp_path, f"{LINK_OUT}; echo x > out",
                           "mv real/out real/moved", "cat real/moved > r3",
                           "mv real/moved real/out; mv out out2",
                           "cat real/out > r5", "cat out2 > r6",
                           "mv real real2", "cat real2/out > r8")
    assert flow_edges(rep) == {("T1", "T3", "moved", 2),
                               ("T1", "T5", "out", 2),
                               ("T1", "T6", "out2", 2),
                               ("T1", "T8", "out", 2)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


@pytest.mark.parametrize("scripts, edges, content", [
    (("sed -i s/a/b/ L/f", "cat real/f > out"),
     {("T1", "T2", "f", 2), ("T2", "T3", "f", 2)}, "b\n"),
    (("echo b > L/f.tmp; mv L/f.tmp L/f", "cat real/f > out"),
     {("T2", "T3", "f", 2)}, "b\n"),
    (("echo G > L/g", "mv L/g L/f", "cat real/f > out"),
     {("T2", "T4", "f", 2)}, "G\n"),
    (("mkdir -p L/x L/sub; echo X > L/x/f", "echo S > L/sub/f",
      "mv L/sub L/old; mv L/x L/sub", "cat real/sub/f > out"),
     {("T2", "T5", "f", 2)}, "X\n")],
    ids=["sed-i", "mv-tmp", "mv-over", "dir-swap"])
def test_a_rename_through_a_linked_directory_replaces_what_was_written(
        tmp_path, scripts, edges, content):
    """T1 wrote real/f through the linked directory L; a rename onto L/f
    (sed -i, mv of a temporary file or of another file, a directory
    swapped in) replaced it: a reader of real/f reads what was moved
    there, not T1's version (found: an edge from T1, or from the writer
    of the file the rename moved away)."""
    d, rep = staged_report(
        tmp_path, "mkdir real; ln -s real L; echo a > L/f", *scripts)
    assert (d / "out").read_text() == content
    assert flow_edges(rep) == edges


def test_a_link_replaced_by_a_rename_keeps_the_file_written_through_it(
        tmp_path):
    """T2 wrote real/a through the link out; T3's sed -i out renamed a
    file onto the link (GNU sed replaces a link by a file): real/a still
    holds T2's version, which T4 reads (the last names differ, so out was
    the link itself, not a directory on the way)."""
    d, rep = staged_report(tmp_path,
                           "mkdir real; echo R > real/a; ln -s real/a out",
                           "echo A > out", "sed -i s/A/Z/ out",
                           "cat real/a > r4")
    assert (d / "r4").read_text() == "A\n" and not (d / "out").is_symlink()
    assert flow_edges(rep) == {("T2", "T3", "out", 2), ("T2", "T4", "a", 2)}


def test_a_link_retargeted_after_a_write_keeps_the_written_file(tmp_path):
    """T1 wrote real/a through out, T2 pointed out at real/b: T3 reading
    real/a reads T1's version; T4 writes real/b through out."""
    d, rep = staged_report(tmp_path,
                           "mkdir real; ln -s $PWD/real/a out; echo x > out",
                           "ln -sfn $PWD/real/b out", "cat real/a > r3",
                           "echo yy > out", "cat real/b > r5")
    assert flow_edges(rep) == {("T1", "T3", "a", 2), ("T4", "T5", "b", 3)}
    assert written_as(rep) == {("T1", "T3", "a", "out"),
                               ("T4", "T5", "b", "out")}


@pytest.mark.parametrize("retarget", [
    "ln -sfn $PWD/real/b out", "rm out; ln -s $PWD/real/b out"])
@pytest.mark.parametrize("target, edges", [
    ("echo yy > real/b; ", {("T2", "T3", "out", 3)}), ("", set())])
def test_a_read_through_a_retargeted_link_reads_its_new_target(
        tmp_path, retarget, target, edges):
    """T1 wrote real/a through out; T2 pointed out at real/b, by a new
    link renamed onto it (`ln -sfn`: the rename moved a link, not a file)
    or made after removing it: T3 reading through out reads what real/b
    held, T2's version or an input (real/b from outside), not T1's
    real/a."""
    d = tmp_path / "data"
    (d / "real").mkdir(parents=True)
    (d / "real" / "b").write_text("ext\n")
    traces = tmp_path / "traces"
    run_tasks(traces, [
        {"T1": f"cd {d}; ln -s $PWD/real/a out; echo x > out"},
        {"T2": f"cd {d}; {target}{retarget}"},
        {"T3": f"cd {d}; cat out > r3"}])
    rep = report(traces, out=tmp_path / "out")[2]
    assert flow_edges(rep) == edges
    assert [Path(v["path"]).name for v in rep["wcp"]["vertices"]
            if v["kind"] == "input"] == ([] if edges else ["out"])


def test_a_name_below_a_renamed_link_is_read_where_it_leads(tmp_path):
    """T2 made the link L to real, read real/f (T1's) through it and
    renamed the link L2: the names below L moved to L2, but they lead to
    the same files, so T3 reading L2/f reads T1's version."""
    d, rep = staged_report(tmp_path, "mkdir real; echo x > real/f",
                           "ln -s real L; cat L/f > r2; mv L L2",
                           "cat L2/f > r3")
    assert flow_edges(rep) == {("T1", "T2", "f", 2), ("T1", "T3", "f", 2)}
    assert written_as(rep) == {("T1", "T2", "f", "f"),
                               ("T1", "T3", "f", "f")}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def rewrite_csv(path, rows):
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_bytes(buf.getvalue().encode("utf-8", "surrogateescape"))


def on_hosts_apart(traces):
    """Gives each task's trace a boot id of its own, as if each task had
    run on a host of its own over a shared file system: no file's identity
    is then known across tasks (docs/report-format.md, "File identity"),
    and names alone join them.  (Where it is known, the file's latest
    version by identity is what a read finds, whatever the names say.)"""
    for i, path in enumerate(sorted(traces.glob("*/summary.json"))):
        summary = json.loads(path.read_text())
        boot = summary["host"]["boot_id"]
        summary["host"]["boot_id"] = f"{i:08x}{boot[8:]}"
        path.write_text(json.dumps(summary))


@pytest.mark.parametrize("relink", [
    "ln -sfn $PWD/real/out.txt out.txt",
    "rm out.txt; ln -s $PWD/real/out.txt out.txt; mv out.txt old.txt"],
    ids=["onto", "away"])
def test_a_link_renamed_onto_or_from_the_name_written_keeps_the_version(
        tmp_path, relink):
    """out.txt is a link to real/out.txt, made outside the traces (the
    same last name, as Nextflow stages an input): T1 wrote real/out.txt
    by name, T2 through the link; T3 renamed a link it made onto out.txt
    (ln -sfn) or away from it.  That moved a link, not the file (a rename
    of a file there ends T2's version under real/out.txt), so T4 reading
    real/out.txt reads T2's version, not T1's.  Each task on a host of its
    own: no file identity hides what the names find."""
    d = tmp_path / "data"
    (d / "real").mkdir(parents=True)
    (d / "out.txt").symlink_to(d / "real" / "out.txt")
    traces = tmp_path / "traces"
    run_tasks(traces, [{f"T{i}": f"cd {d}; {s}"} for i, s in enumerate([
        "echo first > real/out.txt", "echo x > out.txt", relink,
        "cat real/out.txt > r4"], 1)])
    on_hosts_apart(traces)
    rep = report(traces, out=tmp_path / "out")[2]
    assert (d / "r4").read_text() == "x\n"
    assert flow_edges(rep) == {("T2", "T4", "out.txt", 2)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def io_row_times_moved(trace, path, first_read_us):
    """Moves every row of the trace's io.csv by one amount, so that the
    first read of the file it opened by path starts at first_read_us."""
    rows = csv_rows(trace / "io.csv")
    (ino,) = {r["inode"] for r in rows
              if r["type"] == "O" and r["path"] == str(path)}
    first = next(us(r["time_start"]) for r in rows
                 if r["inode"] == ino and r["type"] == "R")
    for r in rows:
        for col in ("time_start", "time_end"):
            t = us(r[col]) + first_read_us - first
            r[col] = f"{t // 1000000}.{t % 1000000:06d}"
    rewrite_csv(trace / "io.csv", rows)


def test_a_version_written_through_a_linked_directory_ends_at_the_rename(
        tmp_path):
    """T1 wrote real/f through the linked directory L; T2's mv of a file
    onto L/f replaced real/f at R, its N row's end.  T3 read real/f at
    R - 1 and T4 at R (their io.csv moved there: a real run cannot pin
    the microsecond): T3 read T1's version, T4 no longer (an input: each
    task on a host of its own, no identity finds T2's file)."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"T1": f"cd {d}; mkdir real; ln -s real L; echo a > L/f"},
        {"T2": f"cd {d}; echo bb > L/f.tmp; mv L/f.tmp L/f"},
        {"T3": f"cd {d}; cat real/f > r3"},
        {"T4": f"cd {d}; cat real/f > r4"}])
    (rename,) = [us(r["time_end"]) for r in csv_rows(traces / "T2" / "io.csv")
                 if r["type"] == "N" and r["result"] == "0"]
    io_row_times_moved(traces / "T3", d / "real" / "f", rename - 1)
    io_row_times_moved(traces / "T4", d / "real" / "f", rename)
    on_hosts_apart(traces)
    rep = report(traces, out=tmp_path / "out")[2]
    assert flow_edges(rep) == {("T1", "T3", "f", 3)}
    assert [Path(v["path"]).name for v in rep["wcp"]["vertices"]
            if v["kind"] == "input"] == ["f"]


def test_a_record_named_after_its_first_read_reads_by_that_name(tmp_path):
    """A record first known by an R row (files.csv, lost here, gives no
    name) takes its name from the open after: it read f, not the empty
    name, so T2 read T1's f."""
    d, traces = data_workflow(tmp_path, lambda d: [
        {"T1": f"cd {d}; echo one > f"},
        {"T2": f"cd {d}; cat f > o2; cat f > /dev/null"}])
    rows = csv_rows(traces / "T2" / "io.csv")
    (ino,) = {r["inode"] for r in rows
              if r["type"] == "O" and r["path"] == f"{d}/f"}
    first = next(r for r in rows if r["inode"] == ino and r["type"] == "R")
    rows.remove(first)
    rewrite_csv(traces / "T2" / "io.csv", [first] + rows)
    files = csv_rows(traces / "T2" / "files.csv")
    for r in files:
        if r["inode"] == ino:
            r["paths"], r["npaths"] = "", "0"
    rewrite_csv(traces / "T2" / "files.csv", files)
    _, _, rep = report(traces, out=tmp_path / "out")
    assert data_records(rep, "T2", d) == [("f", 0, 8, False),
                                          ("o2", 4, 0, False)]
    assert flow_edges(rep) == {("T1", "T2", "f", 8)}
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"]


def staged_with_a_pair(tmp_path, first, pair, *after):
    """T1 runs first in the data directory, then T2 and T3 together, then
    T4 ... one after the other.  pair(signal, wait) gives T2's and T3's
    scripts: signal(name) makes name in a directory outside the data,
    wait(name) waits for it, to order their steps.  Returns the data
    directory and the traces."""
    sync = tmp_path / "sync"
    sync.mkdir()
    t2, t3 = pair(
        lambda name: f": > {sync}/{name}",
        lambda name: f"while [ ! -e {sync}/{name} ]; do sleep 0.02; done")
    return data_workflow(tmp_path, lambda d: [
        {"T1": f"cd {d}; {first}"},
        {"T2": f"cd {d}; {t2}", "T3": f"cd {d}; {t3}"}] + [
        {f"T{i}": f"cd {d}; {script}"} for i, script in enumerate(after, 4)])

def test_a_file_renamed_after_the_readers_open_is_still_read(tmp_path):
    """T2 opens in and log (to append), T3 renames both and makes a new
    in, then T2 reads in and appends to log through its descriptors: they
    are T1's files, found by their names at T2's open (the renames came
    before T2's read and write), and T3's in, begun after the rename, is
    another file: an edge T1 -> T2 on in and an APPEND to T1's log."""
    d, traces = staged_with_a_pair(
        tmp_path, "echo data > in; echo 1 > log", lambda signal, wait: (
            f"exec 3<in 4>>log; {signal('opened')}; {wait('moved')}; "
            "cat <&3 > o2; echo 2 >&4",
            f"{wait('opened')}; mv in in.old; echo new > in; "
            f"mv log log.1; {signal('moved')}"))
    assert (d / "log.1").read_text() == "1\n2\n"
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("T1", "T2", "in", 5)}
    assert append_steps(rep) == [("T1", "T2")]
    assert not [v for v in rep["wcp"]["vertices"] if v["kind"] == "input"
                and v["path"].startswith(f"{d}/")]


@pytest.mark.parametrize("writes, name, read, other_names", [
    ("echo newnew > tmp; {written}; {read}; mv tmp out", "out",
     ("T1", "T3", "out", 4), set()),
    ("echo newnew > tmp; {written}; {read}; mv tmp out", "tmp",
     ("T2", "T3", "tmp", 7), {("T2", "T3", "tmp", "out")}),
    ("echo newnew > out; {written}; {read}; mv out out.bak; mv out.bak out",
     "out", ("T2", "T3", "out", 7), set()),
    ("echo newnew > out; {written}; {read}; mv out out.bak; ln out.bak out",
     "out", ("T2", "T3", "out", 7), {("T2", "T3", "out", "out.bak"),
                                     ("T2", "T4", "out", "out.bak")})])
def test_a_version_is_under_its_name_while_its_writer_had_it_there(
        tmp_path, writes, name, read, other_names):
    """T2 writes tmp and, after T3 read out, renames it over out: T3 read
    T1's out, not T2's version (filed under out, its record's last name,
    but there only from the rename); a T3 that read tmp read T2's.  T2
    rewrites out in place and, after T3 read it, renames it away and
    back: T3 read T2's version, under out from its first write to the
    first rename and from the second on; or renames it away for good (and
    links it back, for T4): T3 read T2's version, under out.bak only
    after.  T4, after all, reads T2's."""
    d, traces = staged_with_a_pair(
        tmp_path, "echo old > out", lambda signal, wait: (
            writes.format(written=signal("written"), read=wait("read")),
            f"{wait('written')}; cat {name} > o3; {signal('read')}"),
        "cat out > o4")
    assert (d / "o3").read_text() == ("old\n" if read[0] == "T1" else
                                      "newnew\n")
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {read, ("T2", "T4", "out", 7)}
    assert written_as(rep) == other_names


TMPFILE_LINKED = ("/usr/bin/python3 -c 'import os, ctypes; "
                  "c = ctypes.CDLL(None, use_errno=True); "
                  "f = os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o644); "
                  "os.write(f, b\"tmpfile-data\\n\"); "
                  "assert c.linkat(-100, b\"/proc/self/fd/%d\" % f, -100, "
                  "b\"out\", 0x400) == 0'")


def test_a_tmpfile_is_named_by_its_link(tmp_path):
    """An O_TMPFILE file linked as out: T1's record is out, not the
    kernel's DIR/#INO (deleted), so T2 read out as T1 wrote it (no
    written_as) and nothing is written and never read but T2's copy."""
    d, rep = staged_report(tmp_path, TMPFILE_LINKED, "cat out > o2")
    assert data_records(rep, "T1", d) == [("out", 13, 0, False)]
    assert flow_edges(rep) == {("T1", "T2", "out", 13)}
    assert written_as(rep) == set()
    assert never_read(rep) == ["o2"]


def test_appending_to_a_file_that_was_not_there_invents_no_input(tmp_path):
    """T1's `>>` made newlog (O_APPEND|O_CREAT, empty at its open, no task
    had written it): its version comes from the start, no input of size
    0; T2 appends to T1's."""
    _, rep = staged_report(tmp_path, "echo x >> newlog", "echo y >> newlog")
    names = {t["id"]: Path(t["dir"]).name for t in rep["tasks"]}
    assert [(v["kind"], names.get(v["task"]), v["size"])
            for v in rep["wcp"]["vertices"]] == [
        ("start", None, -1), ("written", "T1", 2), ("written", "T2", 4)]
    assert wcp_steps(rep) == [("start", "newlog@T1", "CONVERT"),
                              ("newlog@T1", "newlog@T2", "APPEND")]
    assert flow_edges(rep) == set()


def test_a_file_renamed_away_and_back_is_followed(tmp_path):
    """T2 opens A (no read), T3 renames it to A.lock, appends and renames
    it back, then T2 reads A: the file T2 opened, with T3's append (the
    move away was not the file leaving the name for good)."""
    d, traces = staged_with_a_pair(
        tmp_path, "echo one > A", lambda signal, wait: (
            f"wc -c < A > /dev/null; {signal('opened')}; "
            f"{wait('moved')}; cat A > o2",
            f"{wait('opened')}; mv A A.lock; echo edit >> A.lock; "
            f"mv A.lock A; {signal('moved')}"))
    assert (d / "o2").read_text() == "one\nedit\n"
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("T3", "T2", "A", 9)}
    assert append_steps(rep) == [("T1", "T3")]


def test_a_file_renamed_by_its_reader_is_followed(tmp_path):
    """T2 opens A (no read) and renames it B itself, T3 appends to B, T2
    reads B: T3's version, the file T2 opened under its new name."""
    d, traces = staged_with_a_pair(
        tmp_path, "echo one > A", lambda signal, wait: (
            f"wc -c < A > /dev/null; mv A B; {signal('moved')}; "
            f"{wait('appended')}; cat B > o2",
            f"{wait('moved')}; echo more >> B; {signal('appended')}"))
    assert (d / "o2").read_text() == "one\nmore\n"
    _, _, rep = report(traces, out=tmp_path / "out")
    assert flow_edges(rep) == {("T3", "T2", "B", 9)}
    assert append_steps(rep) == [("T1", "T3")]


def test_a_record_stat_ed_first_is_named_by_its_open(tmp_path):
    """T2 stats A (ls -l: the record's first row), T3 renames A to B, T2
    opens and reads B: the record is B, looked up by that name at the
    open, and read T1's A."""
    d, traces = staged_with_a_pair(
        tmp_path, "echo one > A", lambda signal, wait: (
            f"ls -l A > /dev/null; {signal('stat')}; {wait('moved')}; "
            "cat B > o2",
            f"{wait('stat')}; mv A B; {signal('moved')}"))
    _, _, rep = report(traces, out=tmp_path / "out")
    assert data_records(rep, "T2", d) == [("B", 0, 4, False),
                                          ("o2", 4, 0, False)]
    assert flow_edges(rep) == {("T1", "T2", "B", 4)}
    assert written_as(rep) == {("T1", "T2", "B", "A")}


def test_a_name_like_a_tmpfiles_is_a_real_file(tmp_path):
    """T1 makes a real file named `#5 (deleted)` and links its descriptor's
    file as g: no O_TMPFILE in its open's flags, so it keeps its name and
    T2 read it from T1."""
    d, rep = staged_report(
        tmp_path, "/usr/bin/python3 -c 'import os, ctypes; "
        "c = ctypes.CDLL(None, use_errno=True); "
        "f = os.open(\"#5 (deleted)\", os.O_CREAT | os.O_WRONLY, 0o644); "
        "os.write(f, b\"real-file\\n\"); "
        "assert c.linkat(-100, b\"/proc/self/fd/%d\" % f, -100, "
        "b\"g\", 0x400) == 0'", "cat '#5 (deleted)' > o2")
    assert data_records(rep, "T1", d) == [("#5 (deleted)", 10, 0, False)]
    assert flow_edges(rep) == {("T1", "T2", "#5 (deleted)", 10)}
    assert never_read(rep) == ["o2"]


def test_a_tmpfile_linked_then_removed_is_deleted(tmp_path):
    """An O_TMPFILE file linked as out, then `rm out`: out was its only
    name (the kernel's is none), so the record is unlinked and the file
    ends in a deleted state."""
    d, rep = staged_report(tmp_path, TMPFILE_LINKED + "; rm out")
    assert data_records(rep, "T1", d) == [("out", 13, 0, True)]
    assert [Path(v["path"]).name for v in rep["wcp"]["vertices"]
            if v["kind"] == "deleted"] == ["out"]
